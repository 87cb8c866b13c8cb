/* quantize.c - QuantizeV2: float to qint8/quint8/qint16/quint16/qint32 in
 * TF's three modes, per tensor or per slice along `axis`. Layout: the input
 * viewed as [outer, slices, inner]; slice s uses min_range[s], max_range[s].
 * Every range first gets TF's nudge: min <= 0 <= max and max - min at least
 * ensure_minimum_range * max(1, |min|, |max|). */
#include <float.h>
#include <math.h>

#include "qutil.h"

/* The range TF actually quantizes to, after the nudge. */
static void nudge(float in_min, float in_max, float ensure_min, float *lo, float *hi) {
  float mn = fminf(0.0f, in_min);
  float eps = fmaxf(1.0f, fmaxf(fabsf(in_min), fabsf(in_max))) * ensure_min;
  *lo = mn;
  *hi = fmaxf(0.0f, fmaxf(in_max, mn + eps));
}

/* Eigen's cwiseMin(hi).cwiseMax(lo): NaN passes through. */
static inline float clampf(float x, float lo, float hi) {
  x = hi < x ? hi : x;
  return x < lo ? lo : x;
}

/* MIN_COMBINED and SCALED, one slice: x[o * stride + i] for o < outer,
 * i < inner. Writes the range actually used to *omin / *omax. */
static void quantize_slice(const qattrs *a, dfx_dtype t, const float *x, void *y, int64_t outer, int64_t stride,
                           int64_t inner, float in_min, float in_max, float *omin, float *omax) {
  qlimits l = q_limits(t);
  float lo, hi;
  nudge(in_min, in_max, a->ensure_min, &lo, &hi);
  if (a->mode == QMODE_MIN_COMBINED) {
    float scale = (float)(((double)l.hi - (double)l.lo) / (double)(hi - lo));
    float half = l.is_signed ? (float)(((double)l.hi - (double)l.lo + 1) / 2.0f) : 0.0f;
    for (int64_t o = 0; o < outer; o++)
      for (int64_t i = 0; i < inner; i++) {
        int64_t k = o * stride + i;
        float v = (clampf(x[k], lo, hi) - lo) * scale;
        /* TF: signed types round half away from zero, unsigned add 0.5 and truncate. */
        q_store(t, y, k, q_saturate(l.is_signed ? roundf(v - half) : v + 0.5f, l));
      }
  } else { /* SCALED */
    int64_t min_out = l.lo + (a->narrow_range ? 1 : 0), max_out = l.hi;
    float fmin_out = (float)min_out, fmax_out = (float)max_out;
    float from_min = fmin_out * lo > 0 ? fmin_out / lo : FLT_MAX;
    float from_max = fmax_out * hi > 0 ? fmax_out / hi : FLT_MAX;
    float scale = fminf(from_min, from_max);
    lo = fmin_out / scale;
    hi = fmax_out / scale;
    for (int64_t o = 0; o < outer; o++)
      for (int64_t i = 0; i < inner; i++) {
        int64_t k = o * stride + i;
        float v = clampf(x[k], lo, hi) * scale;
        q_store(t, y, k, q_saturate(a->half_to_even ? nearbyintf(v) : roundf(v), l));
      }
  }
  *omin = lo;
  *omax = hi;
}

/* MIN_FIRST, whole tensor: round(x * scale) - round(min * scale) + lowest,
 * clamped to the type (qint32 to floats that convert back to int32). */
static void quantize_min_first(dfx_dtype t, const float *x, void *y, int64_t n, float lo, float hi) {
  qlimits l = q_limits(t);
  double steps = (double)((int64_t)1 << l.bits);
  float scale = hi == lo ? 0.0f : (float)((steps - 1.0) / (double)(hi - lo));
  float min_scaled = roundf(lo * scale);
  float lowest = (float)l.lo;
  float lower = fmaxf((float)l.lo, -2.147483648e+09f), upper = fminf((float)l.hi, 2.147483520e+09f);
  float offset = min_scaled - lowest;
  for (int64_t i = 0; i < n; i++) {
    float v = roundf(x[i] * scale) - offset;
    v = v < lower ? lower : v; /* Eigen cwiseMax/cwiseMin */
    v = upper < v ? upper : v;
    q_store(t, y, i, q_saturate(v, l));
  }
}

static dfx_code quantize_v2(dfx_kctx *ctx) {
  const qattrs *a = ctx->state;
  const dfx_tensor *x = ctx->in[0], *mn = ctx->in[1], *mx = ctx->in[2];
  dfx_dtype t = dfx__attr_type(ctx->node, "T", DFX_QU8);
  int64_t slices, outer, inner;
  dfx_code c = dfx__quant_layout(ctx, a, "input_min_range", "input_max_range", &slices, &outer, &inner);
  if (c != DFX_OK) return c;
  const float *mnv = mn->data, *mxv = mx->data;
  for (int64_t s = 0; s < slices; s++)
    if (mxv[s] < mnv[s])
      return dfx__kctx_fail(ctx, DFX_EINVAL, "input_max_range must be larger than input_min_range.");
  dfx_tensor *y = dfx__kctx_alloc(ctx, 0, t, x->ndims, x->dims);
  if (!y) return DFX_ENOMEM;
  /* One slice: scalar ranges out, as TF allocates them; else min's shape. */
  int rn = slices == 1 ? 0 : mn->ndims;
  dfx_tensor *omin = dfx__kctx_alloc(ctx, 1, DFX_F32, rn, mn->dims);
  dfx_tensor *omax = omin ? dfx__kctx_alloc(ctx, 2, DFX_F32, rn, mn->dims) : NULL;
  if (!omax) return DFX_ENOMEM;
  float *pmin = omin->data, *pmax = omax->data;
  const float *xv = x->data;
  if (slices == 1 && a->mode == QMODE_MIN_FIRST) {
    nudge(mnv[0], mxv[0], a->ensure_min, pmin, pmax);
    quantize_min_first(t, xv, y->data, x->count, *pmin, *pmax);
    return DFX_OK;
  }
  size_t esz = dfx__dtype_storage(t);
  for (int64_t s = 0; s < slices; s++) {
    quantize_slice(a, t, xv + s * inner, (char *)y->data + (size_t)(s * inner) * esz, outer, slices * inner, inner,
                   mnv[s], mxv[s], &pmin[s], &pmax[s]);
    if ((s & 255) == 255 && (c = dfx__kctx_poll(ctx)) != DFX_OK) return c;
  }
  return DFX_OK;
}

static dfx_code quantize_init(const dfx_node *n, void **state, dfx_status *st) {
  return dfx__quant_attrs(n, 1, state, st);
}

static const dfx_kernel_def kernels[] = {
    {"QuantizeV2", "T: {qint8, quint8, qint16, quint16, qint32}", quantize_v2, 0, quantize_init,
     dfx__quant_attrs_free},
    {NULL}};

void dfx__kernels_quant_quantize(dfx_registry *r);
void dfx__kernels_quant_quantize(dfx_registry *r) { dfx__kernels_add(r, kernels); }
