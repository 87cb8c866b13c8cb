/* projective.c - ImageProjectiveTransformV2/V3: each output pixel (x, y) of
 * image b samples the input at ((a0 x + a1 y + a2) / k, (b0 x + b1 y + b2) / k)
 * with k = c0 x + c1 y + 1 (transforms [1 or batch, 8]), NHWC. Points outside
 * are mapped by fill_mode (REFLECT, WRAP, NEAREST clamp into the image,
 * CONSTANT leaves them out, where they read fill_value). Interpolation
 * NEAREST copies the element; BILINEAR weighs four in float, as TF does for
 * every dtype (double included), and converts back (integers truncate,
 * saturating; half types round to nearest even). */
#include <math.h>
#include <string.h>

#include "alloc.h"
#include "kernel.h"

enum { FILL_REFLECT, FILL_WRAP, FILL_CONSTANT, FILL_NEAREST };

typedef struct pt_state {
  int bilinear;
  int fill;
} pt_state;

static float load_f(dfx_dtype t, const void *p, int64_t i) {
  switch (t) {
  case DFX_U8: return ((const uint8_t *)p)[i];
  case DFX_I32: return (float)((const int32_t *)p)[i];
  case DFX_I64: return (float)((const int64_t *)p)[i];
  case DFX_F16: return dfx__f16_to_f32(((const uint16_t *)p)[i]);
  case DFX_BF16: return dfx__bf16_to_f32(((const uint16_t *)p)[i]);
  case DFX_F64: return (float)((const double *)p)[i];
  default: return ((const float *)p)[i];
  }
}

/* T(v): C++'s float-to-integer conversion truncates; out-of-range values
 * (undefined there) saturate here, NaN becomes 0. */
static double sat(float v, double lo, double hi) {
  if (v != v) return 0;
  double d = trunc((double)v);
  return d < lo ? lo : d > hi ? hi : d;
}

static void store_f(dfx_dtype t, void *p, int64_t i, float v) {
  switch (t) {
  case DFX_U8: ((uint8_t *)p)[i] = (uint8_t)sat(v, 0, 255); break;
  case DFX_I32: ((int32_t *)p)[i] = (int32_t)sat(v, INT32_MIN, INT32_MAX); break;
  case DFX_I64: {
    double d = sat(v, -9223372036854775808.0, 9223372036854774784.0);
    ((int64_t *)p)[i] = (int64_t)d;
    break;
  }
  case DFX_F16: ((uint16_t *)p)[i] = dfx__f32_to_f16(v); break;
  case DFX_BF16: ((uint16_t *)p)[i] = dfx__f32_to_bf16(v); break;
  case DFX_F64: ((double *)p)[i] = v; break;
  default: ((float *)p)[i] = v; break;
  }
}

/* TF's MapCoordinate (scipy's rules): c is finite; len the extent. */
static float map_coord(int mode, float c, int64_t len) {
  float lim = (float)(len - 1);
  switch (mode) {
  case FILL_REFLECT:
    if (c < 0) {
      if (len <= 1) c = 0;
      else {
        int64_t sz2 = 2 * len;
        c = (float)((double)sz2 * trunc(-c / (float)sz2)) + c;
        c = c < (float)-len ? c + (float)sz2 : -c - 1;
      }
    } else if (c > lim) {
      if (len <= 1) c = 0;
      else {
        int64_t sz2 = 2 * len;
        c -= (float)((double)sz2 * trunc(c / (float)sz2));
        if (c >= (float)len) c = (float)sz2 - c - 1;
      }
    }
    break;
  case FILL_WRAP:
    if (c < 0) {
      if (len <= 1) c = 0;
      else c += (float)((double)len * (trunc(-c / (float)(len - 1)) + 1));
    } else if (c > lim) {
      if (len <= 1) c = 0;
      else c -= (float)((double)len * trunc(c / (float)(len - 1)));
    }
    break;
  case FILL_CONSTANT: return c;
  default: break;
  }
  return c < 0 ? 0 : c > lim ? lim : c;
}

/* An integer pixel index from a float coordinate, or -1 when it cannot be
 * one (NaN, far outside): such reads take the fill value. */
static int64_t to_index(float v) { return v == v && fabsf(v) < 4.0e18f ? (int64_t)v : -1; }

static dfx_code transform(dfx_kctx *ctx, int v3) {
  const pt_state *s = ctx->state;
  const dfx_tensor *img = ctx->in[0], *tr = ctx->in[1], *shp = ctx->in[2];
  char b[96];
  if (img->ndims != 4) return dfx__kctx_fail(ctx, DFX_EINVAL, "Input images must have rank 4");
  int64_t batch = img->dims[0], ih = img->dims[1], iw = img->dims[2], ch = img->dims[3];
  if (tr->ndims != 2 || (tr->dims[0] != batch && tr->dims[0] != 1) || tr->dims[1] != 8)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Input transform should be num_images x 8 or 1 x 8, got %s",
                          DFX_SHAPE_STR(tr, b));
  if (shp->ndims != 1)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "output shape must be 1-dimensional, got %s", DFX_SHAPE_STR(shp, b));
  if (shp->count != 2)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "output shape must have two elements, got %s", DFX_SHAPE_STR(shp, b));
  const int32_t *sv = shp->data;
  int64_t oh = sv[0], ow = sv[1];
  if (oh <= 0 || ow <= 0) return dfx__kctx_fail(ctx, DFX_EINVAL, "output dimensions must be positive");
  float fill = 0;
  if (v3) {
    const dfx_tensor *fv = ctx->in[3];
    if (fv->ndims != 0)
      return dfx__kctx_fail(ctx, DFX_EINVAL, "fill_value must be a scalar, got %s", DFX_SHAPE_STR(fv, b));
    fill = *(const float *)fv->data;
  }
  dfx_dtype t = img->dtype;
  int64_t od[4] = {batch, oh, ow, ch};
  dfx_tensor *out = dfx__kctx_alloc(ctx, 0, t, 4, od);
  if (!out) return DFX_ENOMEM;
  size_t es = dfx__dtype_storage(t);
  /* The fill value as an element of T (for NEAREST's plain copies). */
  unsigned char fill_elem[8];
  store_f(t, fill_elem, 0, fill);
  const float *tf = tr->data;
  const unsigned char *in = img->data;
  unsigned char *o = out->data;
  int64_t work = 0;
  for (int64_t bi = 0; bi < batch; bi++) {
    const float *m = tr->dims[0] == 1 ? tf : tf + 8 * bi;
    const unsigned char *base = in + (size_t)(bi * ih * iw * ch) * es;
    for (int64_t y = 0; y < oh; y++) {
      for (int64_t x = 0; x < ow; x++) {
        unsigned char *dst = o + (size_t)(((bi * oh + y) * ow + x) * ch) * es;
        float k = m[6] * (float)x + m[7] * (float)y + 1.f;
        float fx = 0, fy = 0;
        int outside = k == 0;
        if (!outside) {
          fx = (m[0] * (float)x + m[1] * (float)y + m[2]) / k;
          fy = (m[3] * (float)x + m[4] * (float)y + m[5]) / k;
          if (!isfinite(fx) || !isfinite(fy)) outside = 1; /* no pixel: the fill value */
          else fx = map_coord(s->fill, fx, iw), fy = map_coord(s->fill, fy, ih);
        }
        if (outside) {
          for (int64_t c = 0; c < ch; c++) memcpy(dst + (size_t)c * es, fill_elem, es);
          continue;
        }
        if (!s->bilinear) {
          int64_t ry = to_index(roundf(fy)), rx = to_index(roundf(fx));
          int in_img = ry >= 0 && ry < ih && rx >= 0 && rx < iw;
          for (int64_t c = 0; c < ch; c++)
            memcpy(dst + (size_t)c * es, in_img ? base + (size_t)((ry * iw + rx) * ch + c) * es : fill_elem, es);
          continue;
        }
        float y0 = floorf(fy), x0 = floorf(fx), y1 = y0 + 1, x1 = x0 + 1;
        int64_t iy0 = to_index(y0), ix0 = to_index(x0), iy1 = to_index(y1), ix1 = to_index(x1);
        int ok00 = iy0 >= 0 && iy0 < ih && ix0 >= 0 && ix0 < iw, ok01 = iy0 >= 0 && iy0 < ih && ix1 >= 0 && ix1 < iw;
        int ok10 = iy1 >= 0 && iy1 < ih && ix0 >= 0 && ix0 < iw, ok11 = iy1 >= 0 && iy1 < ih && ix1 >= 0 && ix1 < iw;
        float fillf = load_f(t, fill_elem, 0);
        for (int64_t c = 0; c < ch; c++) {
          float v00 = ok00 ? load_f(t, base, (iy0 * iw + ix0) * ch + c) : fillf;
          float v01 = ok01 ? load_f(t, base, (iy0 * iw + ix1) * ch + c) : fillf;
          float v10 = ok10 ? load_f(t, base, (iy1 * iw + ix0) * ch + c) : fillf;
          float v11 = ok11 ? load_f(t, base, (iy1 * iw + ix1) * ch + c) : fillf;
          float top = (x1 - fx) * v00 + (fx - x0) * v01;
          float bot = (x1 - fx) * v10 + (fx - x0) * v11;
          store_f(t, dst, c, (y1 - fy) * top + (fy - y0) * bot);
        }
      }
      work += ow * (ch ? ch : 1);
      if (work >= (1 << 20)) {
        work = 0;
        dfx_code c = dfx__kctx_poll(ctx);
        if (c != DFX_OK) return c;
      }
    }
  }
  return DFX_OK;
}

static dfx_code transform_v2(dfx_kctx *ctx) { return transform(ctx, 0); }
static dfx_code transform_v3(dfx_kctx *ctx) { return transform(ctx, 1); }

static dfx_code pt_init(const dfx_node *n, void **state, dfx_status *st) {
  pt_state p;
  const char *ip = dfx__attr_str(n, "interpolation", "");
  const char *fm = dfx__attr_str(n, "fill_mode", "CONSTANT");
  if (!strcmp(ip, "NEAREST")) p.bilinear = 0;
  else if (!strcmp(ip, "BILINEAR")) p.bilinear = 1;
  else return dfx__status_set(st, DFX_EINVAL, "Invalid interpolation %s", ip);
  if (!strcmp(fm, "REFLECT")) p.fill = FILL_REFLECT;
  else if (!strcmp(fm, "WRAP")) p.fill = FILL_WRAP;
  else if (!strcmp(fm, "CONSTANT")) p.fill = FILL_CONSTANT;
  else if (!strcmp(fm, "NEAREST")) p.fill = FILL_NEAREST;
  else return dfx__status_set(st, DFX_EINVAL, "Invalid mode %s", fm);
  pt_state *s = dfx__malloc(sizeof *s);
  if (!s) return dfx__status_set(st, DFX_ENOMEM, "out of memory");
  *s = p;
  *state = s;
  return DFX_OK;
}

static void pt_fini(void *state) { dfx__free(state); }

#define PT_TYPES "dtype: {uint8, int32, int64, half, bfloat16, float, double}"

static const dfx_kernel_def kernels[] = {
    {"ImageProjectiveTransformV2", PT_TYPES, transform_v2, 0, pt_init, pt_fini},
    {"ImageProjectiveTransformV3", PT_TYPES, transform_v3, 0, pt_init, pt_fini},
    {NULL}};

void dfx__kernels_vision_projective(dfx_registry *r);
void dfx__kernels_vision_projective(dfx_registry *r) { dfx__kernels_add(r, kernels); }
