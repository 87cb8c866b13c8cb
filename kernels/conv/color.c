/* color.c - colour adjustments: AdjustContrastv2, AdjustHue, AdjustSaturation,
 * RGBToHSV, HSVToRGB and DrawBoundingBoxes(V2). Each follows TensorFlow's CPU
 * kernel formula (AdjustHue uses the hue/value-range form, AdjustSaturation
 * its own HSV helpers, RGBToHSV/HSVToRGB the Eigen expressions). Half types
 * are computed in float and rounded back. */
#include "convutil.h"

/* Loads input 0 as float or double (double only for f64 when dbl_ok). */
static void *load_in(dfx_kctx *ctx, int dbl_ok, int *dbl, dfx_tensor **y) {
  const dfx_tensor *x = ctx->in[0];
  *dbl = dbl_ok && x->dtype == DFX_F64;
  *y = dfx__kctx_alloc(ctx, 0, (dfx_dtype)x->dtype, x->ndims, x->dims);
  if (!*y) return NULL;
  void *b = cu_load(x, *dbl);
  if (!b) dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory");
  return b;
}

static dfx_code need_rgb(dfx_kctx *ctx, int min_rank) {
  const dfx_tensor *x = ctx->in[0];
  char b[96];
  if (x->ndims < min_rank)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "input must be at least %s%s", min_rank == 3 ? "3-D" : "1-D",
                          DFX_SHAPE_STR(x, b));
  if (x->dims[x->ndims - 1] != 3)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "input must have 3 channels but instead has %lld channels.",
                          (long long)x->dims[x->ndims - 1]);
  return DFX_OK;
}

static dfx_code scalar_f(dfx_kctx *ctx, int i, const char *what, float *v) {
  const dfx_tensor *t = ctx->in[i];
  if (t->ndims != 0) return dfx__kctx_fail(ctx, DFX_EINVAL, "%s must be scalar", what);
  *v = cu_get_f(t, 0);
  return DFX_OK;
}

static dfx_code adjust_contrast(dfx_kctx *ctx) {
  const dfx_tensor *x = ctx->in[0];
  char b[96];
  if (x->ndims < 3) return dfx__kctx_fail(ctx, DFX_EINVAL, "input must be at least 3-D, got shape%s", DFX_SHAPE_STR(x, b));
  float factor = 0;
  if (scalar_f(ctx, 1, "contrast_factor", &factor)) return DFX_EINVAL;
  int dbl;
  dfx_tensor *y;
  float *v = load_in(ctx, 0, &dbl, &y);
  if (!v) return DFX_ENOMEM;
  if (x->count == 0) { /* the dims' products below could overflow */
    dfx__free(v);
    return DFX_OK;
  }
  int r = x->ndims;
  int64_t H = x->dims[r - 3], W = x->dims[r - 2], C = x->dims[r - 1], HW = H * W;
  int64_t batches = (HW * C != 0) ? x->count / (HW * C) : 0;
  for (int64_t bi = 0; bi < batches; bi++) {
    float *p = v + bi * HW * C;
    for (int64_t c = 0; c < C; c++) {
      double s = 0;
      for (int64_t i = 0; i < HW; i++) s += p[i * C + c];
      float mean = (float)(s / (double)HW);
      for (int64_t i = 0; i < HW; i++) p[i * C + c] = (p[i * C + c] - mean) * factor + mean;
    }
  }
  cu_store(y, v, 0);
  dfx__free(v);
  return DFX_OK;
}

static void rgb_to_hv_range(float r, float g, float b, float *h, float *vmin, float *vmax) {
  float vmid;
  int cat;
  if (r < g) {
    if (b < r) *vmax = g, vmid = r, *vmin = b, cat = 1;
    else if (b > g) *vmax = b, vmid = g, *vmin = r, cat = 3;
    else *vmax = g, vmid = b, *vmin = r, cat = 2;
  } else {
    if (b < g) *vmax = r, vmid = g, *vmin = b, cat = 0;
    else if (b > r) *vmax = b, vmid = r, *vmin = g, cat = 4;
    else *vmax = r, vmid = b, *vmin = g, cat = 5;
  }
  if (*vmax == *vmin) {
    *h = 0;
    return;
  }
  float ratio = (vmid - *vmin) / (*vmax - *vmin);
  *h = (float)cat + ((cat & 1) == 0 ? ratio : 1 - ratio);
}

static void hv_range_to_rgb(float h, float vmin, float vmax, float *q) {
  /* A NaN hue (NaN pixel or delta) must not reach the int conversion (UB). */
  int cat = h >= 0 && h < 6 ? (int)h : 5;
  float ratio = h - (float)cat;
  if (cat & 1) ratio = 1 - ratio;
  float vmid = vmin + ratio * (vmax - vmin);
  switch (cat) {
  case 0: q[0] = vmax, q[1] = vmid, q[2] = vmin; break;
  case 1: q[0] = vmid, q[1] = vmax, q[2] = vmin; break;
  case 2: q[0] = vmin, q[1] = vmax, q[2] = vmid; break;
  case 3: q[0] = vmin, q[1] = vmid, q[2] = vmax; break;
  case 4: q[0] = vmid, q[1] = vmin, q[2] = vmax; break;
  default: q[0] = vmax, q[1] = vmin, q[2] = vmid;
  }
}

static dfx_code adjust_hue(dfx_kctx *ctx) {
  float delta = 0;
  if (need_rgb(ctx, 3) || scalar_f(ctx, 1, "delta", &delta)) return DFX_EINVAL;
  int dbl;
  dfx_tensor *y;
  float *v = load_in(ctx, 0, &dbl, &y);
  if (!v) return DFX_ENOMEM;
  for (int64_t i = 0; i < y->count / 3; i++) {
    float *p = v + 3 * i, h, lo, hi;
    rgb_to_hv_range(p[0], p[1], p[2], &h, &lo, &hi);
    h += delta * 6;
    /* TF loops by whole turns; fmod gives the same for finite values and
     * cannot spin on huge deltas. */
    if (h < 0 || h >= 6) {
      h = fmodf(h, 6.0f);
      if (h < 0) h += 6;
      if (h >= 6) h -= 6;
    }
    hv_range_to_rgb(h, lo, hi, p);
  }
  cu_store(y, v, 0);
  dfx__free(v);
  return DFX_OK;
}

static void rgb_to_hsv_f(float r, float g, float b, float *h, float *s, float *v) {
  float vv = fmaxf(r, fmaxf(g, b)), range = vv - fminf(r, fminf(g, b));
  *s = vv > 0 ? range / vv : 0;
  float norm = 1.0f / (6.0f * range), hh;
  if (r == vv) hh = norm * (g - b);
  else if (g == vv) hh = (float)(norm * (b - r) + 2.0 / 6.0);
  else hh = (float)(norm * (r - g) + 4.0 / 6.0);
  if (range <= 0.0) hh = 0;
  if (hh < 0.0) hh = hh + 1;
  *v = vv;
  *h = hh;
}

static void hsv_to_rgb_f(float h, float s, float v, float *q) {
  float c = s * v, m = v - c, dh = h * 6, rr, gg, bb;
  int cat = dh >= 0 && dh < 6 ? (int)dh : 6; /* a NaN hue must not reach the int conversion (UB) */
  float fm = dh;
  if (fm <= 0 || fm >= 2.0f) fm = fm - 2.0f * floorf(fm / 2.0f); /* into [0, 2) */
  if (fm <= 0) fm += 2.0f;
  if (fm >= 2.0f) fm -= 2.0f;
  float x = c * (1 - fabsf(fm - 1));
  switch (cat) {
  case 0: rr = c, gg = x, bb = 0; break;
  case 1: rr = x, gg = c, bb = 0; break;
  case 2: rr = 0, gg = c, bb = x; break;
  case 3: rr = 0, gg = x, bb = c; break;
  case 4: rr = x, gg = 0, bb = c; break;
  case 5: rr = c, gg = 0, bb = x; break;
  default: rr = gg = bb = 0;
  }
  q[0] = rr + m, q[1] = gg + m, q[2] = bb + m;
}

static dfx_code adjust_saturation(dfx_kctx *ctx) {
  float scale = 0;
  if (need_rgb(ctx, 3) || scalar_f(ctx, 1, "scale", &scale)) return DFX_EINVAL;
  int dbl;
  dfx_tensor *y;
  float *v = load_in(ctx, 0, &dbl, &y);
  if (!v) return DFX_ENOMEM;
  for (int64_t i = 0; i < y->count / 3; i++) {
    float *p = v + 3 * i, h, s, vv;
    rgb_to_hsv_f(p[0], p[1], p[2], &h, &s, &vv);
    s = fminf(1.0f, fmaxf(0.0f, s * scale));
    hsv_to_rgb_f(h, s, vv, p);
  }
  cu_store(y, v, 0);
  dfx__free(v);
  return DFX_OK;
}

/* The Eigen forms of RGBToHSV / HSVToRGB, in float or double. */
#define DEFINE_HSV(W, ABS)                                                                                \
  static void rgb2hsv_##W(W *p, int64_t n) {                                                              \
    for (int64_t i = 0; i < n; i++, p += 3) {                                                             \
      W r = p[0], g = p[1], b = p[2];                                                                     \
      W v = r > g ? r : g;                                                                                \
      v = v > b ? v : b;                                                                                  \
      W mn = r < g ? r : g;                                                                               \
      mn = mn < b ? mn : b;                                                                               \
      W range = v - mn, s = v > 0 ? range / v : 0;                                                        \
      W norm = ((W)1 / range) * ((W)1 / (W)6), h;                                                         \
      if (r == v) h = norm * (g - b);                                                                     \
      else if (g == v) h = norm * (b - r) + (W)2 / (W)6;                                                  \
      else h = norm * (r - g) + (W)4 / (W)6;                                                              \
      if (!(range > 0)) h = 0;                                                                            \
      if (h < 0) h = h + 1;                                                                               \
      p[0] = h, p[1] = s, p[2] = v;                                                                       \
    }                                                                                                     \
  }                                                                                                       \
  static W clamp01_##W(W x) { return x < 0 ? 0 : x > 1 ? 1 : x; }                                         \
  static void hsv2rgb_##W(W *p, int64_t n) {                                                              \
    for (int64_t i = 0; i < n; i++, p += 3) {                                                             \
      W h = p[0], s = p[1], v = p[2], dh = h * 6;                                                         \
      W dr = clamp01_##W(ABS(dh - 3) - 1), dg = clamp01_##W(-ABS(dh - 2) + 2);                            \
      W db = clamp01_##W(-ABS(dh - 4) + 2), oms = 1 - s;                                                  \
      p[0] = (oms + s * dr) * v, p[1] = (oms + s * dg) * v, p[2] = (oms + s * db) * v;                    \
    }                                                                                                     \
  }
DEFINE_HSV(float, fabsf)
DEFINE_HSV(double, fabs)

static dfx_code hsv_common(dfx_kctx *ctx, int to_hsv) {
  const dfx_tensor *x = ctx->in[0];
  if (x->ndims < 1) return dfx__kctx_fail(ctx, DFX_EINVAL, "input must be at least 1D");
  if (x->dims[x->ndims - 1] != 3)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "input must have 3 channels but input only has %lld channels.",
                          (long long)x->dims[x->ndims - 1]);
  int dbl;
  dfx_tensor *y;
  void *v = load_in(ctx, 1, &dbl, &y);
  if (!v) return DFX_ENOMEM;
  int64_t n = x->count / 3;
  if (dbl)
    to_hsv ? rgb2hsv_double(v, n) : hsv2rgb_double(v, n);
  else
    to_hsv ? rgb2hsv_float(v, n) : hsv2rgb_float(v, n);
  cu_store(y, v, dbl);
  dfx__free(v);
  return DFX_OK;
}
static dfx_code rgb_to_hsv(dfx_kctx *ctx) { return hsv_common(ctx, 1); }
static dfx_code hsv_to_rgb(dfx_kctx *ctx) { return hsv_common(ctx, 0); }

static const float default_colors[10][4] = {{1, 1, 0, 1}, {0, 0, 1, 1},   {1, 0, 0, 1},   {0, 1, 0, 1},
                                            {0.5f, 0, 0.5f, 1}, {0.5f, 0.5f, 0, 1}, {0.5f, 0, 0, 1},
                                            {0, 0, 0.5f, 1}, {0, 1, 1, 1}, {1, 0, 1, 1}};

/* A box coordinate in pixels, truncated like TF's cast, saturated so that no
 * float is converted out of int64 range (UB). */
static int64_t box_px(float v, int64_t size) {
  float p = v * (float)(size - 1);
  return p >= 4e18f ? INT64_MAX / 2 : p <= -4e18f ? INT64_MIN / 2 : (int64_t)p;
}

static dfx_code draw_boxes(dfx_kctx *ctx) {
  const dfx_tensor *im = ctx->in[0], *bx = ctx->in[1];
  if (im->ndims != 4) return dfx__kctx_fail(ctx, DFX_EINVAL, "The rank of the images should be 4");
  if (bx->ndims != 3) return dfx__kctx_fail(ctx, DFX_EINVAL, "The rank of the boxes tensor should be 3");
  if (im->dims[0] != bx->dims[0]) return dfx__kctx_fail(ctx, DFX_EINVAL, "The batch sizes should be the same");
  int64_t B = im->dims[0], H = im->dims[1], W = im->dims[2], D = im->dims[3];
  if (D != 1 && D != 3 && D != 4)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Channel depth should be either 1 (GRY), 3 (RGB), or 4 (RGBA)");
  if (bx->dims[2] != 4)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "The size of the third dimension of the box must be 4. Received: %lld",
                          (long long)bx->dims[2]);
  const float *colors = NULL;
  int64_t ncol = 0, cstride = 4;
  float deflt[10][4];
  if (ctx->n_in == 3) {
    const dfx_tensor *ct = ctx->in[2];
    if (ct->ndims != 2) return dfx__kctx_fail(ctx, DFX_EINVAL, "colors must be a 2-D matrix");
    if (ct->dims[1] < D)
      return dfx__kctx_fail(ctx, DFX_EINVAL, "colors must have equal or more channels than the image provided");
    if (ct->count) colors = ct->data, ncol = ct->dims[0], cstride = ct->dims[1];
  }
  if (!colors) {
    memcpy(deflt, default_colors, sizeof deflt);
    if (D == 1)
      for (int i = 0; i < 10; i++) deflt[i][0] = 1;
    colors = &deflt[0][0], ncol = 10, cstride = 4;
  }
  dfx_tensor *y = dfx__kctx_alloc(ctx, 0, (dfx_dtype)im->dtype, 4, im->dims);
  if (!y) return DFX_ENOMEM;
  if (im->count) memcpy(y->data, im->data, im->nbytes);
  const float *b = bx->data;
  int half = y->dtype == DFX_F16;
  int64_t work = 0;
  for (int64_t bi = 0; bi < B; bi++)
    for (int64_t k = 0; k < bx->dims[1]; k++) {
      dfx_code code = cu_tick(ctx, &work, 2 * (H + W) * D + 1);
      if (code != DFX_OK) return code;
      const float *box = b + (bi * bx->dims[1] + k) * 4, *col = colors + (k % ncol) * cstride;
      if (isnan(box[0] + box[1] + box[2] + box[3])) continue; /* no pixel: TF's int cast of NaN is UB */
      int64_t r0 = box_px(box[0], H), r1 = box_px(box[2], H), c0 = box_px(box[1], W), c1 = box_px(box[3], W);
      int64_t r0c = r0 > 0 ? r0 : 0, r1c = r1 < H - 1 ? r1 : H - 1, c0c = c0 > 0 ? c0 : 0, c1c = c1 < W - 1 ? c1 : W - 1;
      if (r0 > r1 || c0 > c1 || r0 >= H || r1 < 0 || c0 >= W || c1 < 0) continue;
#define PUT(i, j)                                                                          \
  for (int64_t c = 0; c < D; c++) {                                                        \
    int64_t o = ((bi * H + (i)) * W + (j)) * D + c;                                        \
    if (half)                                                                              \
      ((uint16_t *)y->data)[o] = dfx__f32_to_f16(col[c]);                                  \
    else                                                                                   \
      ((float *)y->data)[o] = col[c];                                                      \
  }
      if (r0 >= 0)
        for (int64_t j = c0c; j <= c1c; j++) PUT(r0, j)
      if (r1 < H)
        for (int64_t j = c0c; j <= c1c; j++) PUT(r1, j)
      if (c0 >= 0)
        for (int64_t i = r0c; i <= r1c; i++) PUT(i, c0)
      if (c1 < W)
        for (int64_t i = r0c; i <= r1c; i++) PUT(i, c1)
#undef PUT
    }
  return DFX_OK;
}


static const dfx_kernel_def kernels[] = {
    {"AdjustContrastv2", "T: {half, float}", adjust_contrast, 0, NULL, NULL},
    {"AdjustHue", "T: {half, float}", adjust_hue, 0, NULL, NULL},
    {"AdjustSaturation", "T: {half, float}", adjust_saturation, 0, NULL, NULL},
    {"RGBToHSV", "T: {half, bfloat16, float, double}", rgb_to_hsv, 0, NULL, NULL},
    {"HSVToRGB", "T: {half, bfloat16, float, double}", hsv_to_rgb, 0, NULL, NULL},
    {"DrawBoundingBoxes", "T: {half, float}", draw_boxes, 0, NULL, NULL},
    {"DrawBoundingBoxesV2", "T: {half, float}", draw_boxes, 0, NULL, NULL},
    {NULL}};

void dfx__kernels_conv_color(dfx_registry *r);
void dfx__kernels_conv_color(dfx_registry *r) { dfx__kernels_add(r, kernels); }
