/* random_dist.c - RandomGamma, RandomPoisson(V2) and Multinomial. Samples use
 * the per-node Philox stream (philox.h) with standard algorithms: Marsaglia-
 * Tsang for gamma, Knuth / PTRS (Hormann) for Poisson, inverse CDF for
 * Multinomial. Output layout: sample shape ++ parameter shape, row-major. */
#include <float.h>
#include <string.h>

#include "alloc.h"
#include "misc.h"
#include "philox.h"

static double std_normal(philox *g) {
  double u1 = philox_unit(g), u2 = philox_unit(g);
  if (u1 < 1e-300) u1 = 1e-300;
  return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

static double gamma_sample(philox *g, double alpha) {
  if (isnan(alpha) || alpha < 0) return NAN;
  if (alpha == 0) return 0;
  /* Gamma(1) is exponential; u < 1, so log1p(-u) never sees log(0). */
  if (alpha == 1) return -log1p(-philox_unit(g));
  /* Marsaglia-Tsang needs alpha >= 1: below it, draw Gamma(alpha + 1) and
   * scale by U^(1/alpha) at the end. The first test (u < 1 - 0.0331 x^4) is
   * the cheap squeeze that accepts most draws without a log. */
  double a = alpha < 1 ? alpha + 1 : alpha, d = a - 1.0 / 3.0, c = 1.0 / sqrt(9.0 * d), res;
  for (;;) {
    double x = std_normal(g), v = 1 + c * x;
    if (v <= 0) continue;
    v = v * v * v;
    double u = philox_unit(g);
    if (u < 1 - 0.0331 * x * x * x * x || log(u) < 0.5 * x * x + d * (1 - v + log(v))) {
      res = d * v;
      break;
    }
  }
  if (alpha < 1) res *= pow(philox_unit(g), 1.0 / alpha);
  return res;
}

static double poisson_sample(philox *g, double rate) {
  if (isnan(rate)) return NAN;
  if (rate <= 0) return 0;
  if (rate < 12) { /* Knuth: count uniforms until their product drops below e^-rate */
    double lim = exp(-rate), prod = 1;
    int64_t k = 0;
    for (;;) {
      prod *= philox_unit(g);
      if (prod <= lim) return (double)k;
      k++;
    }
  }
  /* PTRS, transformed rejection with squeeze (Hormann 1993). */
  /* The constants are Hormann's, fitted for rate >= 10; Knuth's product of
   * uniforms above needs about rate draws, so it is kept to small rates. */
  double smu = sqrt(rate), b = 0.931 + 2.53 * smu, a = -0.059 + 0.02483 * b, inv_alpha = 1.1239 + 1.1328 / (b - 3.4),
         vr = 0.9277 - 3.6224 / (b - 2), log_rate = log(rate);
  for (;;) {
    double u = philox_unit(g) - 0.5, v = philox_unit(g), us = 0.5 - fabs(u);
    double k = floor((2 * a / us + b) * u + rate + 0.43);
    if (us >= 0.07 && v <= vr) return k;
    if (k < 0 || (us < 0.013 && v > us)) continue;
    if (log(v) + log(inv_alpha) - log(a / (us * us) + b) <= -rate + k * log_rate - lgamma(k + 1)) return k;
  }
}

static void store(dfx_tensor *t, int64_t i, double v) {
  switch ((dfx_dtype)t->dtype) {
    case DFX_F32: ((float *)t->data)[i] = (float)v; break;
    case DFX_F64: ((double *)t->data)[i] = v; break;
    case DFX_F16: ((uint16_t *)t->data)[i] = dfx__f32_to_f16((float)v); break;
    case DFX_BF16: ((uint16_t *)t->data)[i] = dfx__f32_to_bf16((float)v); break;
    /* Integer outputs clamp a huge sample instead of an undefined cast. */
    case DFX_I32: ((int32_t *)t->data)[i] = isnan(v) ? 0 : v > INT32_MAX ? INT32_MAX : (int32_t)v; break;
    case DFX_I64: ((int64_t *)t->data)[i] = isnan(v) ? 0 : v > 9.2e18 ? INT64_MAX : (int64_t)v; break;
    default: break;
  }
}

/* Output = shape ++ param.shape; each sample s uses param[p] at s * np + p. */
static dfx_code param_random(dfx_kctx *ctx, dfx_dtype out_dt, bool poisson) {
  int64_t dims[DFX_MAX_DIMS];
  int nd;
  dfx_code c = dfx__rng_shape(ctx, 0, dims, &nd);
  if (c != DFX_OK) return c;
  const dfx_tensor *p = ctx->in[1];
  if (nd + p->ndims > DFX_MAX_DIMS) return dfx__kctx_fail(ctx, DFX_EINVAL, "output has too many dimensions");
  memcpy(dims + nd, p->dims, sizeof(int64_t) * p->ndims);
  dfx_tensor *out = dfx__kctx_alloc(ctx, 0, out_dt, nd + p->ndims, dims);
  if (!out) return ctx->st->code;
  int64_t np = p->count;
  if (out->count == 0) return DFX_OK;
  /* Each sample consumes a variable number of counters; reserve generously so
   * later runs never overlap this one in practice. */
  philox g = dfx__rng_reserve(ctx->state, (uint64_t)out->count * 256);
  for (int64_t i = 0; i < out->count; i++) { /* sample i / np of parameter i % np */
    if ((c = misc_poll(ctx, i)) != DFX_OK) return c;
    double prm = dfx__tensor_get_f64(p, i % np);
    store(out, i, poisson ? poisson_sample(&g, prm) : gamma_sample(&g, prm));
  }
  return DFX_OK;
}

static dfx_code gamma_kernel(dfx_kctx *ctx) { return param_random(ctx, (dfx_dtype)ctx->in[1]->dtype, false); }
static dfx_code poisson_kernel(dfx_kctx *ctx) { return param_random(ctx, (dfx_dtype)ctx->in[1]->dtype, true); }
static dfx_code poisson_v2_kernel(dfx_kctx *ctx) {
  return param_random(ctx, dfx__attr_type(ctx->node, "dtype", DFX_I64), true);
}

static dfx_code multinomial_kernel(dfx_kctx *ctx) {
  const dfx_tensor *lg = ctx->in[0], *ns_t = ctx->in[1];
  char b[64];
  if (lg->ndims != 2)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "logits should be a matrix, got shape %s", DFX_SHAPE_STR(lg, b));
  if (ns_t->ndims != 0)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "num_samples should be a scalar, got shape %s", DFX_SHAPE_STR(ns_t, b));
  int64_t ns = dfx__tensor_get_i64(ns_t, 0);
  if (ns < 0) return dfx__kctx_fail(ctx, DFX_EINVAL, "num_samples should be nonnegative, got %lld", (long long)ns);
  int64_t batch = lg->dims[0], nc = lg->dims[1];
  if (nc <= 0) return dfx__kctx_fail(ctx, DFX_EINVAL, "num_classes should be positive, got %lld", (long long)nc);
  int64_t od[2] = {batch, ns};
  dfx_dtype odt = dfx__attr_type(ctx->node, "output_dtype", DFX_I64);
  dfx_tensor *out = dfx__kctx_alloc(ctx, 0, odt, 2, od);
  if (!out) return ctx->st->code;
  if (out->count == 0) return DFX_OK;
  double *cdf = dfx__malloc(sizeof(double) * (size_t)nc);
  if (!cdf) return dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory");
  /* Each draw uses two uint32 (one double) and a counter yields four, so
   * this block is more than the draws need: runs stay disjoint. */
  philox g = dfx__rng_reserve(ctx->state, (uint64_t)(batch * ns) * 2);
  dfx_code c = DFX_OK;
  for (int64_t r = 0; r < batch && c == DFX_OK; r++) {
    if ((c = dfx__kctx_poll(ctx)) != DFX_OK) break; /* a row's work is bounded by its output and logits */
    double mx = -DBL_MAX, total = 0;
    for (int64_t j = 0; j < nc; j++) {
      double v = dfx__tensor_get_f64(lg, r * nc + j);
      /* Weights are exp(logit - max), so the largest is 1 and none overflows;
       * a non-finite logit gets weight 0 and is never drawn. */
      if (isfinite(v) && v > mx) mx = v;
    }
    for (int64_t j = 0; j < nc; j++) {
      double v = dfx__tensor_get_f64(lg, r * nc + j);
      if (isfinite(v)) total += exp(v - mx);
      cdf[j] = total;
    }
    for (int64_t s = 0; s < ns; s++) {
      double x = philox_unit(&g) * total;
      /* The first class whose cumulative weight exceeds x: a class of weight 0
       * repeats its predecessor's sum and so can never be that class. */
      int64_t lo = 0, hi = nc; /* upper_bound */
      while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (cdf[mid] <= x)
          lo = mid + 1;
        else
          hi = mid;
      }
      if (odt == DFX_I32)
        ((int32_t *)out->data)[r * ns + s] = (int32_t)lo;
      else
        ((int64_t *)out->data)[r * ns + s] = lo;
    }
  }
  dfx__free(cdf);
  return c;
}

#define HFD "{half, float, double}"
#define HFD_INT "{half, float, double, int32, int64}"

static const dfx_kernel_def kernels[] = {
    {"RandomGamma", "S: " MISC_SHAPE_TYPES "; T: " HFD, gamma_kernel, DFX_KERNEL_STATEFUL, dfx__rng_init, dfx__rng_fini},
    {"RandomPoisson", "S: " MISC_SHAPE_TYPES "; dtype: " HFD, poisson_kernel, DFX_KERNEL_STATEFUL, dfx__rng_init,
     dfx__rng_fini},
    {"RandomPoissonV2", "S: " MISC_SHAPE_TYPES "; R: " HFD_INT "; dtype: " HFD_INT, poisson_v2_kernel,
     DFX_KERNEL_STATEFUL, dfx__rng_init, dfx__rng_fini},
    /* Logits of any real dtype are read as double, as TF reads its float ones. */
    {"Multinomial",
     "T: {float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, uint64}; "
     "output_dtype: {int32, int64}",
     multinomial_kernel, DFX_KERNEL_STATEFUL, dfx__rng_init, dfx__rng_fini},
    {NULL}};

void dfx__kernels_misc_random_dist(dfx_registry *r);
void dfx__kernels_misc_random_dist(dfx_registry *r) { dfx__kernels_add(r, kernels); }
