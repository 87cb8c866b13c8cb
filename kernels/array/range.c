/* range.c - Range and LinSpace: 1-D sequences from scalar inputs, with
 * TensorFlow's size formulas and its accumulation order (Range adds delta
 * repeatedly; LinSpace multiplies a rounded step and pins the last value). */
#include <math.h>
#include <stdio.h>

#include "autil.h"
#include "kdispatch.h"


static dfx_code need_scalar(dfx_kctx *ctx, int i, const char *what) {
  if (ctx->in[i]->ndims == 0) return DFX_OK;
  char b[128];
  return dfx__kctx_fail(ctx, DFX_EINVAL, "%s must be a scalar, not shape %s", what, DFX_SHAPE_STR(ctx->in[i], b));
}

/* Rounds v to dtype t's precision (identity for float/double). */
static double round_to(dfx_dtype t, double v) {
  if (t == DFX_F16) return dfx__f16_to_f32(dfx__f32_to_f16((float)v));
  if (t == DFX_BF16) return dfx__bf16_to_f32(dfx__f32_to_bf16((float)v));
  if (t == DFX_F32) return (float)v;
  return v;
}

static void store_f(dfx_tensor *y, int64_t i, double v) {
  switch ((dfx_dtype)y->dtype) {
    case DFX_F16: ((uint16_t *)y->data)[i] = dfx__f32_to_f16((float)v); break;
    case DFX_BF16: ((uint16_t *)y->data)[i] = dfx__f32_to_bf16((float)v); break;
    case DFX_F32: ((float *)y->data)[i] = (float)v; break;
    default: ((double *)y->data)[i] = v; break;
  }
}

static dfx_code range_kernel(dfx_kctx *ctx) {
  if (need_scalar(ctx, 0, "start") || need_scalar(ctx, 1, "limit") || need_scalar(ctx, 2, "delta")) return DFX_EINVAL;
  dfx_dtype t = (dfx_dtype)ctx->in[0]->dtype;
  int64_t size;
  if (dfx__dtype_is_float(t)) {
    double s = dfx__tensor_get_f64(ctx->in[0], 0), l = dfx__tensor_get_f64(ctx->in[1], 0),
           d = dfx__tensor_get_f64(ctx->in[2], 0);
    if (d == 0) return dfx__kctx_fail(ctx, DFX_EINVAL, "Requires delta != 0: %g", d);
    if (d > 0 && s > l) return dfx__kctx_fail(ctx, DFX_EINVAL, "Requires start <= limit when delta > 0: %g/%g", s, l);
    if (d < 0 && s < l) return dfx__kctx_fail(ctx, DFX_EINVAL, "Requires start >= limit when delta < 0: %g/%g", s, l);
    double n = ceil(fabs(round_to(t, round_to(t, l - s) / d)));
    if (!(n <= 9.2e18)) return dfx__kctx_fail(ctx, DFX_EINVAL, "Requires ((limit - start) / delta) <= 9223372036854775807");
    size = (int64_t)n;
    dfx_tensor *y = dfx__kctx_alloc(ctx, 0, t, 1, &size);
    if (!y) return DFX_ENOMEM;
    double v = s;
    for (int64_t i = 0; i < size; i++) {
      store_f(y, i, v);
      v = round_to(t, v + d);
    }
    return DFX_OK;
  }
  int64_t s = dfx__tensor_get_i64(ctx->in[0], 0), l = dfx__tensor_get_i64(ctx->in[1], 0),
          d = dfx__tensor_get_i64(ctx->in[2], 0);
  if (d == 0) return dfx__kctx_fail(ctx, DFX_EINVAL, "Requires delta != 0: %lld", (long long)d);
  if (d > 0 && s > l)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Requires start <= limit when delta > 0: %lld/%lld", (long long)s, (long long)l);
  if (d < 0 && s < l)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Requires start >= limit when delta < 0: %lld/%lld", (long long)s, (long long)l);
  /* |limit - start| fits in uint64 even for extreme int64 values. */
  uint64_t span = d > 0 ? (uint64_t)l - (uint64_t)s : (uint64_t)s - (uint64_t)l;
  uint64_t ad = d > 0 ? (uint64_t)d : 0 - (uint64_t)d;
  uint64_t n = span / ad + (span % ad != 0);
  if (n > INT64_MAX) return dfx__kctx_fail(ctx, DFX_EINVAL, "Requires ((limit - start) / delta) <= 9223372036854775807");
  size = (int64_t)n;
  dfx_tensor *y = dfx__kctx_alloc(ctx, 0, t, 1, &size);
  if (!y) return DFX_ENOMEM;
#define FILL(DT, T)                                                              \
  case DT:                                                                       \
    for (int64_t i = 0; i < size; i++) ((T *)y->data)[i] = (T)((uint64_t)s + (uint64_t)i * (uint64_t)d);       \
    break;
  switch (t) {
    DFX_INT_TYPES(FILL)
    default: return dfx__kctx_fail(ctx, DFX_EINVAL, "Range does not support %s", dfx_dtype_name(t));
  }
#undef FILL
  return DFX_OK;
}

static dfx_code linspace_kernel(dfx_kctx *ctx) {
  if (need_scalar(ctx, 0, "start") || need_scalar(ctx, 1, "stop") || need_scalar(ctx, 2, "num")) return DFX_EINVAL;
  dfx_dtype t = (dfx_dtype)ctx->in[0]->dtype;
  if (!dfx__dtype_is_float(t)) return dfx__kctx_fail(ctx, DFX_EINVAL, "LinSpace does not support %s", dfx_dtype_name(t));
  int64_t num = dfx__tensor_get_i64(ctx->in[2], 0);
  if (num <= 0) return dfx__kctx_fail(ctx, DFX_EINVAL, "Requires num > 0: %lld", (long long)num);
  double s = dfx__tensor_get_f64(ctx->in[0], 0), e = dfx__tensor_get_f64(ctx->in[1], 0);
  dfx_tensor *y = dfx__kctx_alloc(ctx, 0, t, 1, &num);
  if (!y) return DFX_ENOMEM;
  if (num == 1) {
    store_f(y, 0, s);
    return DFX_OK;
  }
  double step = round_to(t, round_to(t, e - s) / (double)(num - 1));
  for (int64_t i = 0; i < num - 1; i++) store_f(y, i, round_to(t, s + round_to(t, step * (double)i)));
  store_f(y, num - 1, e);
  return DFX_OK;
}

static const dfx_kernel_def kernels[] = {
    {"Range", NULL, range_kernel, DFX_KERNEL_CHEAP, NULL, NULL},
    {"LinSpace", NULL, linspace_kernel, DFX_KERNEL_CHEAP, NULL, NULL},
    {NULL}};

void dfx__kernels_array_range(dfx_registry *r);
void dfx__kernels_array_range(dfx_registry *r) { dfx__kernels_add(r, kernels); }
