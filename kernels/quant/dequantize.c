/* dequantize.c - Dequantize: qint8/quint8/qint16/quint16/qint32 to float or
 * bfloat16 in TF's three modes, per tensor or per slice along `axis`
 * (MIN_FIRST only per tensor). Layout as in quantize.c: [outer, slices,
 * inner]. bfloat16 output is the float result rounded to nearest even. */
#include <math.h>

#include "qutil.h"

/* The float value of every quantized level for one slice's range, by mode. */
typedef struct deq {
  float mul, add; /* v = (float)q * mul + add, computed as TF orders it */
  int mode;
  float half;     /* MIN_COMBINED: (float)q + half first */
} deq;

static deq deq_params(const qattrs *a, qlimits l, float lo, float hi) {
  deq d = {.mode = a->mode};
  if (a->mode == QMODE_MIN_COMBINED) {
    d.half = l.is_signed ? ((float)l.hi - (float)l.lo + 1.0f) / 2.0f : 0.0f;
    d.mul = (hi - lo) / ((float)l.hi - (float)l.lo);
    d.add = lo;
  } else if (a->mode == QMODE_MIN_FIRST) {
    double steps = (double)((int64_t)1 << l.bits);
    float scale = (float)((double)(hi - lo) / (steps - 1.0));
    float min_rounded = hi == lo ? lo : roundf(lo / scale) * scale;
    d.mul = scale;
    d.add = min_rounded - (float)l.lo * scale;
  } else { /* SCALED */
    float min_out = (float)(l.lo + (a->narrow_range ? 1 : 0));
    d.mul = l.lo == 0 ? hi / (float)l.hi : fmaxf(lo / min_out, hi / (float)l.hi);
  }
  return d;
}

static inline float deq_one(const deq *d, int64_t q) {
  float f = (float)q;
  switch (d->mode) {
  case QMODE_MIN_COMBINED: return (f + d->half) * d->mul + d->add;
  case QMODE_MIN_FIRST: return d->add + f * d->mul;
  default: return f * d->mul;
  }
}

static dfx_code dequantize(dfx_kctx *ctx) {
  const qattrs *a = ctx->state;
  const dfx_tensor *x = ctx->in[0], *mn = ctx->in[1], *mx = ctx->in[2];
  dfx_dtype t = x->dtype, out_t = dfx__attr_type(ctx->node, "dtype", DFX_F32);
  int64_t slices, outer, inner;
  dfx_code c = dfx__quant_layout(ctx, a, "input_min_tensor", "input_max_tensor", &slices, &outer, &inner);
  if (c != DFX_OK) return c;
  dfx_tensor *y = dfx__kctx_alloc(ctx, 0, out_t, x->ndims, x->dims);
  if (!y) return DFX_ENOMEM;
  qlimits l = q_limits(t);
  const float *mnv = mn->data, *mxv = mx->data;
  int64_t stride = slices * inner;
  for (int64_t s = 0; s < slices; s++) {
    deq d = deq_params(a, l, mnv[s], mxv[s]);
    for (int64_t o = 0; o < outer; o++)
      for (int64_t i = 0; i < inner; i++) {
        int64_t k = o * stride + s * inner + i;
        float v = deq_one(&d, q_load(t, x->data, k));
        if (out_t == DFX_BF16) ((uint16_t *)y->data)[k] = dfx__f32_to_bf16(v);
        else ((float *)y->data)[k] = v;
      }
    if ((s & 255) == 255 && (c = dfx__kctx_poll(ctx)) != DFX_OK) return c;
  }
  return DFX_OK;
}

static dfx_code dequantize_init(const dfx_node *n, void **state, dfx_status *st) {
  return dfx__quant_attrs(n, 0, state, st);
}

static const dfx_kernel_def kernels[] = {
    {"Dequantize", "T: {qint8, quint8, qint16, quint16, qint32}; dtype: {float, bfloat16}", dequantize, 0,
     dequantize_init, dfx__quant_attrs_free},
    {NULL}};

void dfx__kernels_quant_dequantize(dfx_registry *r);
void dfx__kernels_quant_dequantize(dfx_registry *r) { dfx__kernels_add(r, kernels); }
