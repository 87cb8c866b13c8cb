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

static dfx_code range_float(dfx_kctx *ctx, dfx_dtype t) {
  double s = dfx__tensor_get_f64(ctx->in[0], 0), l = dfx__tensor_get_f64(ctx->in[1], 0),
         d = dfx__tensor_get_f64(ctx->in[2], 0);
  if (d == 0) return dfx__kctx_fail(ctx, DFX_EINVAL, "Requires delta != 0: %g", d);
  /* TF's checks and messages: the sequence must head toward the limit. */
  if (d > 0 && s > l) return dfx__kctx_fail(ctx, DFX_EINVAL, "Requires start <= limit when delta > 0: %g/%g", s, l);
  if (d < 0 && s < l) return dfx__kctx_fail(ctx, DFX_EINVAL, "Requires start >= limit when delta < 0: %g/%g", s, l);
  /* TF computes the size in T: rounding the difference and the quotient to T
   * decides the count when (limit - start) / delta is near an integer.
   * The test below is written negated so that a NaN fails it too. */
  double n = ceil(fabs(round_to(t, round_to(t, l - s) / d)));
  if (!(n <= 9.2e18)) return dfx__kctx_fail(ctx, DFX_EINVAL, "Requires ((limit - start) / delta) <= 9223372036854775807");
  int64_t size = (int64_t)n;
  char what[128];
  snprintf(what, sizeof what, "Range start %g, limit %g, delta %g", s, l, d);
  dfx_tensor *y = dfx__arr_alloc(ctx, 0, t, 1, &size, what);
  if (!y) return ctx->st->code;
  double v = s;
  for (int64_t i0 = 0; i0 < size; i0 += DFX_ARR_POLL_EVERY) {
    dfx_code c = i0 ? dfx__kctx_poll(ctx) : DFX_OK;
    if (c) return c;
    for (int64_t i = i0; i < size && i < i0 + DFX_ARR_POLL_EVERY; i++) {
      store_f(y, i, v);
      /* Accumulated, not start + i * delta: TF adds delta in T at every step, and
       * the rounding errors it collects are part of its output. */
      v = round_to(t, v + d);
    }
  }
  return DFX_OK;
}

/* Integers work in uint64 (wrapping) so that every int64 and uint64 start,
 * limit and delta is exact; only uint64 reads its values unsigned. */
static dfx_code range_int(dfx_kctx *ctx, dfx_dtype t) {
  bool u = t == DFX_U64;
  uint64_t v[3];
  /* Formatted up front in the input's own signedness, so every message
   * prints a uint64 as unsigned and the rest as signed. */
  char sv[3][24];
  for (int k = 0; k < 3; k++) {
    v[k] = u ? ((const uint64_t *)ctx->in[k]->data)[0] : (uint64_t)dfx__tensor_get_i64(ctx->in[k], 0);
    if (u) snprintf(sv[k], sizeof sv[k], "%llu", (unsigned long long)v[k]);
    else snprintf(sv[k], sizeof sv[k], "%lld", (long long)(int64_t)v[k]);
  }
  uint64_t s = v[0], l = v[1], d = v[2];
  bool neg = !u && (int64_t)d < 0;
  if (d == 0) return dfx__kctx_fail(ctx, DFX_EINVAL, "Requires delta != 0: %s", sv[2]);
  if (!neg && (u ? s > l : (int64_t)s > (int64_t)l))
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Requires start <= limit when delta > 0: %s/%s", sv[0], sv[1]);
  if (neg && (int64_t)s < (int64_t)l)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Requires start >= limit when delta < 0: %s/%s", sv[0], sv[1]);
  /* The checks above ordered s and l, so span is the exact distance even when
   * it exceeds INT64_MAX; n is its ceiling division by |delta|. */
  uint64_t span = neg ? s - l : l - s, ad = neg ? 0 - d : d;
  uint64_t n = span / ad + (span % ad != 0);
  if (n > INT64_MAX) return dfx__kctx_fail(ctx, DFX_EINVAL, "Requires ((limit - start) / delta) <= 9223372036854775807");
  int64_t size = (int64_t)n;
  char what[128];
  snprintf(what, sizeof what, "Range start %s, limit %s, delta %s", sv[0], sv[1], sv[2]);
  dfx_tensor *y = dfx__arr_alloc(ctx, 0, t, 1, &size, what);
  if (!y) return ctx->st->code;
  for (int64_t i0 = 0; i0 < size; i0 += DFX_ARR_POLL_EVERY) {
    dfx_code c = i0 ? dfx__kctx_poll(ctx) : DFX_OK;
    if (c) return c;
    int64_t i1 = size - i0 > DFX_ARR_POLL_EVERY ? i0 + DFX_ARR_POLL_EVERY : size;
/* start + i * delta mod 2^64 is exact in two's complement, and the cast to T
 * keeps the low bits, TF's wrapping. */
#define FILL(DT, T)                                                                    \
  case DT:                                                                             \
    for (int64_t i = i0; i < i1; i++) ((T *)y->data)[i] = (T)(s + (uint64_t)i * d);    \
    break;
    switch (t) {
      DFX_INT_TYPES(FILL)
      default: return dfx__kctx_fail(ctx, DFX_EINTERNAL, "Range has no %s loop", dfx_dtype_name(t));
    }
#undef FILL
  }
  return DFX_OK;
}

static dfx_code range_kernel(dfx_kctx *ctx) {
  if (need_scalar(ctx, 0, "start") || need_scalar(ctx, 1, "limit") || need_scalar(ctx, 2, "delta")) return DFX_EINVAL;
  dfx_dtype t = (dfx_dtype)ctx->in[0]->dtype;
  /* Floats and integers differ in more than type: floats accumulate in T,
   * integers compute each element exactly. */
  return dfx__dtype_is_float(t) ? range_float(ctx, t) : range_int(ctx, t);
}

static dfx_code linspace_kernel(dfx_kctx *ctx) {
  if (need_scalar(ctx, 0, "start") || need_scalar(ctx, 1, "stop") || need_scalar(ctx, 2, "num")) return DFX_EINVAL;
  dfx_dtype t = (dfx_dtype)ctx->in[0]->dtype;
  int64_t num = dfx__tensor_get_i64(ctx->in[2], 0);
  if (num <= 0) return dfx__kctx_fail(ctx, DFX_EINVAL, "Requires num > 0: %lld", (long long)num);
  double s = dfx__tensor_get_f64(ctx->in[0], 0), e = dfx__tensor_get_f64(ctx->in[1], 0);
  char what[64];
  snprintf(what, sizeof what, "LinSpace num %lld", (long long)num);
  dfx_tensor *y = dfx__arr_alloc(ctx, 0, t, 1, &num, what);
  if (!y) return ctx->st->code;
  /* One value is start alone (TF), and num - 1 would divide by zero below. */
  if (num == 1) {
    store_f(y, 0, s);
    return DFX_OK;
  }
  /* The step and each product are rounded to T like TF's kernel; the last
   * element is set to stop itself, so rounding never misses it. */
  double step = round_to(t, round_to(t, e - s) / (double)(num - 1));
  for (int64_t i0 = 0; i0 < num - 1; i0 += DFX_ARR_POLL_EVERY) {
    dfx_code c = i0 ? dfx__kctx_poll(ctx) : DFX_OK;
    if (c) return c;
    for (int64_t i = i0; i < num - 1 && i < i0 + DFX_ARR_POLL_EVERY; i++)
      store_f(y, i, round_to(t, s + round_to(t, step * (double)i)));
  }
  store_f(y, num - 1, e);
  return DFX_OK;
}

static const dfx_kernel_def kernels[] = {
    {"Range", "Tidx: {bfloat16, half, float, double, int8, int16, int32, int64, uint16, uint32, uint64}", range_kernel,
     DFX_KERNEL_CHEAP, NULL, NULL},
    {"LinSpace", "T: {bfloat16, half, float, double}; Tidx: {int32, int64}", linspace_kernel, DFX_KERNEL_CHEAP, NULL,
     NULL},
    {NULL}};

void dfx__kernels_array_range(dfx_registry *r);
void dfx__kernels_array_range(dfx_registry *r) { dfx__kernels_add(r, kernels); }
