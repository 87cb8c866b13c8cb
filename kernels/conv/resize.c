/* resize.c - ResizeBilinear, ResizeNearestNeighbor, ResizeBicubic, ResizeArea
 * and CropAndResize, with TensorFlow's coordinate formulas (align_corners,
 * half_pixel_centers and the legacy mappings) computed in float like TF.
 * Inputs are NHWC; outputs are float32 except nearest-neighbour (keeps T).
 * Output sizes are input values: empty outputs return before any loop, and
 * per-row scratch is checked against the tensor limit. */
#include <limits.h>

#include "convutil.h"

typedef struct rstate {
  int64_t B, H, W, C, oh, ow;
  float hs, ws; /* scales */
  int align, half;
} rstate;

static float resize_scale(int64_t in, int64_t out, int align) {
  return (align && out > 1) ? (float)(in - 1) / (float)(out - 1) : (float)in / (float)out;
}

static dfx_code resize_init(const dfx_node *n, void **state, dfx_status *st) {
  (void)state;
  if (dfx__attr_bool(n, "half_pixel_centers", false) && dfx__attr_bool(n, "align_corners", false))
    return dfx__status_set(st, DFX_EINVAL,
                           "align_corners = true: if half_pixel_centers is true, align_corners must be false");
  return DFX_OK;
}

static dfx_code validate(dfx_kctx *ctx, rstate *s) {
  const dfx_tensor *x = ctx->in[0], *sz = ctx->in[1];
  char b[96];
  s->align = dfx__attr_bool(ctx->node, "align_corners", false);
  s->half = dfx__attr_bool(ctx->node, "half_pixel_centers", false); /* ResizeArea has none */
  if (x->ndims != 4)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "input must be 4-dimensional%s", DFX_SHAPE_STR(x, b));
  if (sz->ndims != 1) return dfx__kctx_fail(ctx, DFX_EINVAL, "shape_t must be 1-dimensional%s", DFX_SHAPE_STR(sz, b));
  if (sz->count != 2)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "shape_t must have two elements%s", DFX_SHAPE_STR(sz, b));
  s->B = x->dims[0], s->H = x->dims[1], s->W = x->dims[2], s->C = x->dims[3];
  s->oh = dfx__tensor_get_i64(sz, 0), s->ow = dfx__tensor_get_i64(sz, 1);
  if (s->H >= INT_MAX || s->W >= INT_MAX)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "input sizes must be between 0 and max int32");
  if (s->oh <= 0 || s->ow <= 0) return dfx__kctx_fail(ctx, DFX_EINVAL, "output dimensions must be positive");
  if ((s->H == 0 || s->W == 0) && s->B > 0 && s->C > 0)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "input image must be of non-zero size");
  s->hs = resize_scale(s->H, s->oh, s->align);
  s->ws = resize_scale(s->W, s->ow, s->align);
  return DFX_OK;
}

/* Allocates the float output and loads the input as float; NULL on failure
 * or, with *code DFX_OK, when the output is empty (nothing to compute). */
static float *begin(dfx_kctx *ctx, const rstate *s, dfx_tensor **y, dfx_code *code) {
  int64_t yd[4] = {s->B, s->oh, s->ow, s->C};
  *code = DFX_ENOMEM;
  *y = dfx__kctx_alloc(ctx, 0, DFX_F32, 4, yd);
  if (!*y) return NULL;
  *code = DFX_OK;
  if ((*y)->count == 0) return NULL;
  float *x = cu_load(ctx->in[0], 0);
  if (!x) *code = dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory");
  return x;
}

typedef struct lerpw {
  int64_t lo, hi;
  float t;
} lerpw;

static void bilinear_weights(int64_t out, int64_t in, float scale, int half, lerpw *w) {
  for (int64_t i = 0; i < out; i++) {
    float v = half ? ((float)i + 0.5f) * scale - 0.5f : (float)i * scale;
    float f = floorf(v);
    w[i].lo = (int64_t)f > 0 ? (int64_t)f : 0;
    w[i].hi = (int64_t)ceilf(v) < in - 1 ? (int64_t)ceilf(v) : in - 1;
    w[i].t = v - f;
  }
}

static dfx_code resize_bilinear(dfx_kctx *ctx) {
  rstate s;
  dfx_tensor *y;
  dfx_code code;
  if (validate(ctx, &s) != DFX_OK) return DFX_EINVAL;
  float *x = begin(ctx, &s, &y, &code);
  if (!x) return code;
  lerpw *wy = cu_scratch(ctx, s.oh, sizeof(lerpw), "output height");
  lerpw *wx = wy ? cu_scratch(ctx, s.ow, sizeof(lerpw), "output width") : NULL;
  if (!wx) {
    code = ctx->st->code;
    goto done;
  }
  bilinear_weights(s.oh, s.H, s.hs, s.half, wy);
  bilinear_weights(s.ow, s.W, s.ws, s.half, wx);
  float *o = y->data;
  int64_t work = 0;
  for (int64_t b = 0; b < s.B; b++)
    for (int64_t i = 0; i < s.oh; i++) {
      if ((code = cu_tick(ctx, &work, s.ow * s.C)) != DFX_OK) goto done;
      const float *top = x + (b * s.H + wy[i].lo) * s.W * s.C, *bot = x + (b * s.H + wy[i].hi) * s.W * s.C;
      for (int64_t j = 0; j < s.ow; j++) {
        int64_t l = wx[j].lo * s.C, r = wx[j].hi * s.C;
        for (int64_t c = 0; c < s.C; c++) {
          float tl = top[l + c], tr = top[r + c], bl = bot[l + c], br = bot[r + c];
          float t = tl + (tr - tl) * wx[j].t, bo = bl + (br - bl) * wx[j].t;
          *o++ = t + (bo - t) * wy[i].t;
        }
      }
    }
done:
  dfx__free(x), dfx__free(wy), dfx__free(wx);
  return code;
}

static int64_t nn_index(int64_t i, float scale, int64_t in, int align, int half) {
  float v = half ? ((float)i + 0.5f) * scale : (float)i * scale;
  int64_t k = align ? (int64_t)roundf(v) : (int64_t)floorf(v);
  if (k > in - 1) k = in - 1;
  if (half && k < 0) k = 0;
  return k;
}

static dfx_code resize_nearest(dfx_kctx *ctx) {
  rstate s;
  if (validate(ctx, &s) != DFX_OK) return DFX_EINVAL;
  const dfx_tensor *x = ctx->in[0];
  int64_t yd[4] = {s.B, s.oh, s.ow, s.C};
  dfx_tensor *y = dfx__kctx_alloc(ctx, 0, (dfx_dtype)x->dtype, 4, yd);
  if (!y) return DFX_ENOMEM;
  if (y->count == 0) return DFX_OK;
  int64_t di = 0, work = 0;
  dfx_code c;
  for (int64_t b = 0; b < s.B; b++)
    for (int64_t i = 0; i < s.oh; i++) {
      if ((c = cu_tick(ctx, &work, s.ow * s.C)) != DFX_OK) return c;
      int64_t iy = nn_index(i, s.hs, s.H, s.align, s.half);
      for (int64_t j = 0; j < s.ow; j++, di += s.C) {
        int64_t ix = nn_index(j, s.ws, s.W, s.align, s.half);
        cu_copy(y, di, x, ((b * s.H + iy) * s.W + ix) * s.C, s.C);
      }
    }
  return DFX_OK;
}

/* ---- bicubic ---- */

#define TABLE 1024
typedef struct cubw {
  int64_t idx[4];
  float w[4];
} cubw;

static void cubic_table(float a, float *t) {
  for (int i = 0; i <= TABLE; i++) {
    float x = (float)(i * 1.0 / TABLE);
    t[i * 2] = ((a + 2) * x - (a + 3)) * x * x + 1;
    x += 1.0f;
    t[i * 2 + 1] = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
  }
}

static int64_t bound(int64_t v, int64_t limit) { return v < 0 ? 0 : v > limit - 1 ? limit - 1 : v; }

static void cubic_weights(int64_t out, int64_t limit, float scale, int half, const float *t, cubw *w) {
  for (int64_t i = 0; i < out; i++) {
    float f = half ? ((float)i + 0.5f) * scale - 0.5f : (float)i * scale;
    int64_t loc = (int64_t)floorf(f);
    float delta = f - (float)loc;
    int64_t off = lrintf(delta * TABLE);
    float ws[4] = {t[off * 2 + 1], t[off * 2], t[(TABLE - off) * 2], t[(TABLE - off) * 2 + 1]};
    float sum = 0;
    for (int k = 0; k < 4; k++) {
      w[i].idx[k] = bound(loc - 1 + k, limit);
      w[i].w[k] = ws[k];
      if (half && w[i].idx[k] != loc - 1 + k) w[i].w[k] = 0;
      sum += w[i].w[k];
    }
    if (half && fabsf(sum) >= 1000.0f * 1.17549435e-38f)
      for (int k = 0; k < 4; k++) w[i].w[k] *= 1.0f / sum;
  }
}

static dfx_code resize_bicubic(dfx_kctx *ctx) {
  rstate s;
  dfx_tensor *y;
  dfx_code code;
  if (validate(ctx, &s) != DFX_OK) return DFX_EINVAL;
  float *x = begin(ctx, &s, &y, &code);
  if (!x) return code;
  float t[(TABLE + 1) * 2];
  cubw *wy = cu_scratch(ctx, s.oh, sizeof(cubw), "output height");
  cubw *wx = wy ? cu_scratch(ctx, s.ow, sizeof(cubw), "output width") : NULL;
  if (!wx) {
    code = ctx->st->code;
    goto done;
  }
  cubic_table(s.half ? -0.5f : -0.75f, t);
  cubic_weights(s.oh, s.H, s.hs, s.half, t, wy);
  cubic_weights(s.ow, s.W, s.ws, s.half, t, wx);
  float *o = y->data;
  int64_t work = 0;
  for (int64_t b = 0; b < s.B; b++)
    for (int64_t i = 0; i < s.oh; i++) {
      if ((code = cu_tick(ctx, &work, 16 * s.ow * s.C)) != DFX_OK) goto done;
      const float *rows[4];
      for (int k = 0; k < 4; k++) rows[k] = x + (b * s.H + wy[i].idx[k]) * s.W * s.C;
      const float *yw = wy[i].w;
      for (int64_t j = 0; j < s.ow; j++) {
        const cubw *xw = &wx[j];
        for (int64_t c = 0; c < s.C; c++) {
          float col[4];
          for (int k = 0; k < 4; k++) {
            int64_t xi = xw->idx[k] * s.C + c;
            col[k] = yw[0] * rows[0][xi] + yw[1] * rows[1][xi] + yw[2] * rows[2][xi] + yw[3] * rows[3][xi];
          }
          *o++ = xw->w[0] * col[0] + xw->w[1] * col[1] + xw->w[2] * col[2] + xw->w[3] * col[3];
        }
      }
    }
done:
  dfx__free(x), dfx__free(wy), dfx__free(wx);
  return code;
}

/* ---- area ---- */

static float area_scale(int64_t v, float a, float a1, float scale) {
  return (float)v < a ? ((float)(v + 1) > a1 ? scale : (float)(v + 1) - a) : ((float)(v + 1) > a1 ? a1 - (float)v : 1.0f);
}

static dfx_code resize_area(dfx_kctx *ctx) {
  rstate s;
  dfx_tensor *y;
  dfx_code code;
  if (validate(ctx, &s) != DFX_OK) return DFX_EINVAL;
  float *x = begin(ctx, &s, &y, &code);
  if (!x) return code;
  float *o = y->data, inv = 1.0f / (s.hs * s.ws);
  int64_t work = 0;
  for (int64_t b = 0; b < s.B; b++)
    for (int64_t i = 0; i < s.oh; i++) {
      float iy = (float)i * s.hs, iy1 = (float)(i + 1) * s.hs;
      int64_t y0 = (int64_t)floorf(iy), y1 = (int64_t)ceilf(iy1);
      if ((code = cu_tick(ctx, &work, (y1 - y0) * (int64_t)(s.ws + 2) * s.ow * s.C)) != DFX_OK) {
        dfx__free(x);
        return code;
      }
      for (int64_t j = 0; j < s.ow; j++) {
        float ix = (float)j * s.ws, ix1 = (float)(j + 1) * s.ws;
        int64_t x0 = (int64_t)floorf(ix), x1 = (int64_t)ceilf(ix1);
        float sx0 = area_scale(x0, ix, ix1, s.ws), sx1 = area_scale(x1 - 1, ix, ix1, s.ws);
        for (int64_t c = 0; c < s.C; c++) {
          float sum = 0;
          for (int64_t r = y0; r < y1; r++) {
            const float *row = x + (b * s.H + (r < s.H - 1 ? r : s.H - 1)) * s.W * s.C + c;
            float sy = area_scale(r, iy, iy1, s.hs);
            float sr = row[(x0 < s.W - 1 ? x0 : s.W - 1) * s.C] * sx0;
            if (x0 + 1 != x1) {
              for (int64_t q = x0 + 1; q < x1 - 1; q++) sr += row[(q < s.W - 1 ? q : s.W - 1) * s.C];
              sr += row[(x1 - 1 < s.W - 1 ? x1 - 1 : s.W - 1) * s.C] * sx1;
            }
            sum += sr * sy;
          }
          *o++ = sum * inv;
        }
      }
    }
  dfx__free(x);
  return DFX_OK;
}

/* ---- crop and resize ---- */

static dfx_code crop_and_resize(dfx_kctx *ctx) {
  const dfx_tensor *img = ctx->in[0], *boxes = ctx->in[1], *bi = ctx->in[2], *cs = ctx->in[3];
  char b1[96];
  if (img->ndims != 4)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "input image must be 4-D%s", DFX_SHAPE_STR(img, b1));
  int64_t B = img->dims[0], H = img->dims[1], W = img->dims[2], C = img->dims[3];
  if (H <= 0 || W <= 0) return dfx__kctx_fail(ctx, DFX_EINVAL, "image dimensions must be positive");
  if (boxes->ndims != 2 || boxes->dims[1] != 4)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "boxes must be 2-D with 4 columns%s", DFX_SHAPE_STR(boxes, b1));
  int64_t nb = boxes->dims[0];
  if (bi->ndims != 1 || bi->dims[0] != nb)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "box_index has incompatible shape");
  if (cs->ndims != 1 || cs->count != 2)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "crop_size must be 1-D with 2 elements%s", DFX_SHAPE_STR(cs, b1));
  int64_t ch = dfx__tensor_get_i64(cs, 0), cw = dfx__tensor_get_i64(cs, 1);
  if (ch <= 0 || cw <= 0) return dfx__kctx_fail(ctx, DFX_EINVAL, "crop dimensions must be positive");
  const char *method = dfx__attr_str(ctx->node, "method", "bilinear");
  int nearest = !strcmp(method, "nearest");
  if (!nearest && strcmp(method, "bilinear"))
    return dfx__kctx_fail(ctx, DFX_EINVAL, "method must be 'bilinear' or 'nearest'");
  float ext = dfx__attr_float(ctx->node, "extrapolation_value", 0);
  for (int64_t k = 0; k < nb; k++) {
    int64_t v = dfx__tensor_get_i64(bi, k);
    if (v < 0 || v >= B) return dfx__kctx_fail(ctx, DFX_ERANGE, "box_index has values outside [0, batch_size)");
  }
  int64_t yd[4] = {nb, ch, cw, C};
  dfx_tensor *y = dfx__kctx_alloc(ctx, 0, DFX_F32, 4, yd);
  if (!y) return DFX_ENOMEM;
  if (y->count == 0) return DFX_OK;
  float *x = cu_load(img, 0);
  if (!x) return dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory");
  const float *bx = boxes->data;
  float *o = y->data;
  int64_t work = 0;
  for (int64_t k = 0; k < nb; k++) {
    float y1 = bx[4 * k], x1 = bx[4 * k + 1], y2 = bx[4 * k + 2], x2 = bx[4 * k + 3];
    const float *im = x + dfx__tensor_get_i64(bi, k) * H * W * C;
    float hsc = ch > 1 ? (y2 - y1) * (float)(H - 1) / (float)(ch - 1) : 0;
    float wsc = cw > 1 ? (x2 - x1) * (float)(W - 1) / (float)(cw - 1) : 0;
    for (int64_t i = 0; i < ch; i++) {
      dfx_code code = cu_tick(ctx, &work, cw * C);
      if (code != DFX_OK) {
        dfx__free(x);
        return code;
      }
      float iy = ch > 1 ? y1 * (float)(H - 1) + (float)i * hsc : (float)(0.5 * (y1 + y2) * (double)(H - 1));
      for (int64_t j = 0; j < cw; j++, o += C) {
        float ix = cw > 1 ? x1 * (float)(W - 1) + (float)j * wsc : (float)(0.5 * (x1 + x2) * (double)(W - 1));
        if (!(iy >= 0 && iy <= (float)(H - 1) && ix >= 0 && ix <= (float)(W - 1))) {
          for (int64_t c = 0; c < C; c++) o[c] = ext;
          continue;
        }
        if (nearest) {
          const float *p = im + ((int64_t)roundf(iy) * W + (int64_t)roundf(ix)) * C;
          for (int64_t c = 0; c < C; c++) o[c] = p[c];
          continue;
        }
        int64_t ty = (int64_t)floorf(iy), by = (int64_t)ceilf(iy), lx = (int64_t)floorf(ix), rx = (int64_t)ceilf(ix);
        float yl = iy - (float)ty, xl = ix - (float)lx;
        const float *tl = im + (ty * W + lx) * C, *tr = im + (ty * W + rx) * C;
        const float *bl = im + (by * W + lx) * C, *br = im + (by * W + rx) * C;
        for (int64_t c = 0; c < C; c++) {
          float top = tl[c] + (tr[c] - tl[c]) * xl, bot = bl[c] + (br[c] - bl[c]) * xl;
          o[c] = top + (bot - top) * yl;
        }
      }
    }
  }
  dfx__free(x);
  return DFX_OK;
}

#define RESIZE_T "T: {int8, uint8, int16, uint16, int32, int64, bfloat16, half, float, double}"

static const dfx_kernel_def kernels[] = {
    {"ResizeBilinear", RESIZE_T, resize_bilinear, 0, resize_init, NULL},
    {"ResizeNearestNeighbor", RESIZE_T, resize_nearest, 0, resize_init, NULL},
    {"ResizeBicubic", RESIZE_T, resize_bicubic, 0, resize_init, NULL},
    {"ResizeArea", RESIZE_T, resize_area, 0, NULL, NULL},
    {"CropAndResize", "T: {uint8, uint16, int8, int16, int32, int64, half, float, double}", crop_and_resize, 0, NULL,
     NULL},
    {NULL}};

void dfx__kernels_conv_resize(dfx_registry *r);
void dfx__kernels_conv_resize(dfx_registry *r) { dfx__kernels_add(r, kernels); }
