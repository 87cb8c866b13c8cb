/* fake_quant.c - FakeQuantWithMinMaxArgs / Vars / VarsPerChannel (float only,
 * so the rows declare no types). The range is nudged so zero is exactly
 * representable (TF's Nudge), then inputs are clamped and rounded to the
 * grid. PerChannel's last dimension is the channel. Attrs are checked once,
 * at init, as TF's constructors do. */
#include <math.h>
#include <string.h>

#include "misc.h"

static void nudge(float min, float max, int qmin, int qmax, float *nmin, float *nmax, float *scale) {
  const float qminf = (float)qmin, qmaxf = (float)qmax;
  *scale = (max - min) / (qmaxf - qminf);
  /* The zero point is the grid value that stands for real 0. Rounding it to
   * an integer and rebuilding min and max from it makes 0.0 exactly
   * representable, TF's Nudge. qmax <= 65535 (num_bits <= 16), so it fits
   * a uint16. */
  const float zp_from_min = qminf - min / *scale;
  uint16_t zp;
  if (!(zp_from_min >= qminf)) /* also a NaN range (min or max NaN/inf): no UB cast */
    zp = (uint16_t)qmin;
  else if (zp_from_min > qmaxf)
    zp = (uint16_t)qmax;
  else
    zp = (uint16_t)roundf(zp_from_min);
  *nmin = (qminf - zp) * *scale;
  *nmax = (qmaxf - zp) * *scale;
}

/* Quantizes n elements at stride `stride` starting at x[off]. */
static void fq(const float *x, float *y, int64_t off, int64_t n, int64_t stride, float min, float max, int qmin,
               int qmax) {
  /* A [0, 0] range has scale 0 (and 1 / scale inf): everything maps to 0. */
  if (min == 0.0f && max == 0.0f) {
    for (int64_t k = 0; k < n; k++) y[off + k * stride] = 0.0f;
    return;
  }
  float nmin, nmax, scale;
  nudge(min, max, qmin, qmax, &nmin, &nmax, &scale);
  const float inv = 1.0f / scale;
  for (int64_t k = 0; k < n; k++) {
    float v = x[off + k * stride];
    float c = v < nmin ? nmin : v > nmax ? nmax : v;
    if (isnan(v)) c = v;
    /* Round half up with floor(v + 0.5), as TF's functor does (not rint's
     * half to even); a NaN input stays NaN. */
    y[off + k * stride] = floorf((c - nmin) * inv + 0.5f) * scale + nmin;
  }
}

/* Quantizes all of x into y with one range, a poll grain at a time. */
static dfx_code fq_all(dfx_kctx *ctx, const dfx_tensor *x, dfx_tensor *y, float min, float max) {
  /* The grid is [0, 2^num_bits - 1]; narrow_range drops 0 so it is symmetric. */
  int qmin = dfx__attr_bool(ctx->node, "narrow_range", false) ? 1 : 0;
  int qmax = (1 << dfx__attr_int(ctx->node, "num_bits", 8)) - 1;
  for (int64_t k = 0; k < x->count; k += MISC_POLL_MASK + 1) {
    dfx_code c = dfx__kctx_poll(ctx);
    if (c != DFX_OK) return c;
    int64_t n = x->count - k > MISC_POLL_MASK ? MISC_POLL_MASK + 1 : x->count - k;
    fq(x->data, y->data, k, n, 1, min, max, qmin, qmax);
  }
  return DFX_OK;
}

/* TF's constructors: num_bits in [2, 16], and for Args min < max. */
static dfx_code fq_init(const dfx_node *n, void **state, dfx_status *st) {
  (void)state;
  int64_t nb = dfx__attr_int(n, "num_bits", 8);
  if (nb < 2 || nb > 16)
    return dfx__status_set(st, DFX_EINVAL, "num_bits must be between 2 and 16, inclusive, was %lld", (long long)nb);
  /* Only Args has its range in attrs; Vars and PerChannel get theirs as
   * inputs, so their kernels take them as they come. */
  if (strcmp(n->op, "FakeQuantWithMinMaxArgs") != 0) return DFX_OK;
  float mn = dfx__attr_float(n, "min", -6.0f), mx = dfx__attr_float(n, "max", 6.0f);
  if (!(mn < mx)) return dfx__status_set(st, DFX_EINVAL, "min has to be smaller than max, was: %g >= %g", mn, mx);
  return DFX_OK;
}

static dfx_code fq_args_kernel(dfx_kctx *ctx) {
  const dfx_tensor *x = ctx->in[0];
  dfx_tensor *y = dfx__kctx_alloc(ctx, 0, DFX_F32, x->ndims, x->dims);
  if (!y) return ctx->st->code;
  return fq_all(ctx, x, y, dfx__attr_float(ctx->node, "min", -6.0f), dfx__attr_float(ctx->node, "max", 6.0f));
}

static dfx_code fq_vars_kernel(dfx_kctx *ctx) {
  const dfx_tensor *x = ctx->in[0], *mn = ctx->in[1], *mx = ctx->in[2];
  char b[64];
  if (mn->ndims != 0 || mx->ndims != 0)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "min and max must be scalars, got %s",
                          mn->ndims ? DFX_SHAPE_STR(mn, b) : DFX_SHAPE_STR(mx, b));
  dfx_tensor *y = dfx__kctx_alloc(ctx, 0, DFX_F32, x->ndims, x->dims);
  if (!y) return ctx->st->code;
  return fq_all(ctx, x, y, ((float *)mn->data)[0], ((float *)mx->data)[0]);
}

static dfx_code fq_channel_kernel(dfx_kctx *ctx) {
  const dfx_tensor *x = ctx->in[0], *mn = ctx->in[1], *mx = ctx->in[2];
  if (x->ndims < 1) return dfx__kctx_fail(ctx, DFX_EINVAL, "inputs must be at least a vector");
  int64_t d = x->dims[x->ndims - 1];
  if (mn->ndims != 1 || mn->dims[0] != d)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "min has incorrect size, expected %lld was %lld", (long long)d,
                          (long long)(mn->ndims ? mn->dims[0] : -1));
  if (mx->ndims != 1 || mx->dims[0] != d)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "max has incorrect size, expected %lld was %lld", (long long)d,
                          (long long)(mx->ndims ? mx->dims[0] : -1));
  dfx_tensor *y = dfx__kctx_alloc(ctx, 0, DFX_F32, x->ndims, x->dims);
  if (!y) return ctx->st->code;
  int qmin = dfx__attr_bool(ctx->node, "narrow_range", false) ? 1 : 0;
  int qmax = (1 << dfx__attr_int(ctx->node, "num_bits", 8)) - 1;
  int64_t rows = d ? x->count / d : 0, done = MISC_POLL_MASK + 1;
  for (int64_t ch = 0; ch < d; ch++) {
    if (done > MISC_POLL_MASK) { /* a poll per grain of elements, not per channel */
      dfx_code c = dfx__kctx_poll(ctx);
      if (c != DFX_OK) return c;
      done = 0;
    }
    /* The channel is the last dim, so channel ch's elements are d apart. */
    fq(x->data, y->data, ch, rows, d, ((float *)mn->data)[ch], ((float *)mx->data)[ch], qmin, qmax);
    done += rows + 1;
  }
  return DFX_OK;
}

static const dfx_kernel_def kernels[] = {
    {"FakeQuantWithMinMaxArgs", NULL, fq_args_kernel, DFX_KERNEL_CHEAP, fq_init, NULL},
    {"FakeQuantWithMinMaxVars", NULL, fq_vars_kernel, DFX_KERNEL_CHEAP, fq_init, NULL},
    {"FakeQuantWithMinMaxVarsPerChannel", NULL, fq_channel_kernel, DFX_KERNEL_CHEAP, fq_init, NULL},
    {NULL}};

void dfx__kernels_misc_fake_quant(dfx_registry *r);
void dfx__kernels_misc_fake_quant(dfx_registry *r) { dfx__kernels_add(r, kernels); }
