/* batchnorm.c - FusedBatchNorm, FusedBatchNormV2, FusedBatchNormV3 (forward).
 * x is viewed as [n, C, inner] (NHWC/NDHWC: inner 1; NCHW/NCDHW: spatial
 * size); statistics are per channel in double. Training mode reports the
 * Bessel-corrected variance in batch_variance and the biased one in
 * reserve_space_2, like TF's CPU kernel. */
#include <math.h>
#include <string.h>

#include "alloc.h"
#include "kernel.h"
#include "nn_util.h"

/* Attrs, parsed once per node. */
typedef struct bn_attrs {
  double eps, fac;
  bool train, cfirst; /* cfirst: NCHW / NCDHW */
  int rank;           /* 4, or 5 for the 3-D formats */
} bn_attrs;

static dfx_code fbn_init(const dfx_node *n, void **state, dfx_status *st) {
  const char *fmt = dfx__attr_str(n, "data_format", "NHWC");
  bool cfirst = !strcmp(fmt, "NCHW") || !strcmp(fmt, "NCDHW");
  if (!cfirst && strcmp(fmt, "NHWC") && strcmp(fmt, "NDHWC"))
    return dfx__status_set(st, DFX_EINVAL, "Invalid data format: data_format = '%s'", fmt);
  bn_attrs *a = dfx__malloc(sizeof *a);
  if (!a) return dfx__status_set(st, DFX_ENOMEM, "out of memory");
  *a = (bn_attrs){.eps = dfx__attr_float(n, "epsilon", 1e-4f),
                  .fac = dfx__attr_float(n, "exponential_avg_factor", 1),
                  .train = dfx__attr_bool(n, "is_training", true),
                  .cfirst = cfirst,
                  .rank = strchr(fmt, 'D') ? 5 : 4};
  *state = a;
  return DFX_OK;
}

static void fbn_fini(void *state) { dfx__free(state); }

static dfx_code vec_out(dfx_kctx *ctx, int k, dfx_dtype u, int64_t c, const double *v) {
  dfx_tensor *t = dfx__kctx_alloc(ctx, k, u, 1, &c);
  if (!t) return DFX_ENOMEM;
  for (int64_t i = 0; i < c; i++) dfx__nn_store(t->data, u, i, v[i]);
  return DFX_OK;
}

static dfx_code fbn_k(dfx_kctx *ctx) {
  const dfx_tensor *x = ctx->in[0];
  const bn_attrs *a = ctx->state;
  double eps = a->eps, fac = a->fac;
  bool train = a->train, v3 = strcmp(ctx->node->op, "FusedBatchNormV3") == 0;
  int want = a->rank;
  char b1[96];
  if (x->ndims != want)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "input must be %d-dimensional, got shape %s", want, DFX_SHAPE_STR(x, b1));
  const char *names[] = {"", "scale", "offset", "mean", "variance"};
  for (int i = 1; i < 5; i++)
    if (ctx->in[i]->ndims != 1)
      return dfx__kctx_fail(ctx, DFX_EINVAL, "%s must be 1-dimensional, got shape %s", names[i], DFX_SHAPE_STR(ctx->in[i], b1));
  int cd = a->cfirst ? 1 : want - 1;
  /* Empty x: outer = inner = 0 (the other dims' product may overflow). */
  int64_t c = x->dims[cd], outer = x->count > 0, inner = x->count > 0;
  for (int d = 0; d < cd && x->count > 0; d++) outer *= x->dims[d];
  for (int d = cd + 1; d < want && x->count > 0; d++) inner *= x->dims[d];
  for (int i = 1; i < 5; i++) {
    int64_t m = ctx->in[i]->dims[0];
    if (i >= 3 && train && m == 0 && fac == 1) continue; /* running stats unused */
    if (m != c)
      return dfx__kctx_fail(ctx, DFX_EINVAL, "%s must have the same number of elements as the channels of x, got %lld and %lld",
                            names[i], (long long)m, (long long)c);
  }
  dfx_dtype t = (dfx_dtype)x->dtype, u = (dfx_dtype)ctx->in[1]->dtype;
  dfx_tensor *y = dfx__kctx_alloc(ctx, 0, t, x->ndims, x->dims);
  if (!y) return DFX_ENOMEM;
  double *w = dfx__calloc((size_t)(c ? c : 1) * 6, sizeof(double));
  if (!w) return dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory");
  double *mean = w, *var = w + c, *bmean = w + 2 * c, *bvar = w + 3 * c, *scale = w + 4 * c, *offs = w + 5 * c;
  for (int64_t j = 0; j < c; j++) {
    scale[j] = dfx__nn_load(ctx->in[1]->data, u, j);
    offs[j] = dfx__nn_load(ctx->in[2]->data, u, j);
  }
  int64_t rest = outer * inner, done = 0;
  dfx_code rc = DFX_OK;
  if (train) {
    for (int64_t o = 0; o < outer && rc == DFX_OK; o++) {
      for (int64_t j = 0; j < c; j++)
        for (int64_t i = 0; i < inner; i++) mean[j] += dfx__nn_load(x->data, t, (o * c + j) * inner + i);
      rc = dfx__nn_progress(ctx, &done, c * inner);
    }
    for (int64_t j = 0; j < c; j++) mean[j] = rest ? mean[j] / (double)rest : NAN;
    for (int64_t o = 0; o < outer && rc == DFX_OK; o++) {
      for (int64_t j = 0; j < c; j++)
        for (int64_t i = 0; i < inner; i++) {
          double d = dfx__nn_load(x->data, t, (o * c + j) * inner + i) - mean[j];
          var[j] += d * d;
        }
      rc = dfx__nn_progress(ctx, &done, c * inner);
    }
    for (int64_t j = 0; j < c; j++) var[j] = rest ? var[j] / (double)rest : NAN;
    double adj = rest > 1 ? (double)rest / (double)(rest - 1) : 1;
    for (int64_t j = 0; j < c; j++) {
      double cv = var[j] * adj;
      if (fac == 1) {
        bmean[j] = mean[j];
        bvar[j] = cv;
      } else {
        double om = dfx__nn_load(ctx->in[3]->data, u, j), ov = dfx__nn_load(ctx->in[4]->data, u, j);
        bmean[j] = (1 - fac) * om + fac * mean[j];
        bvar[j] = (1 - fac) * ov + fac * cv;
      }
    }
  } else {
    for (int64_t j = 0; j < c; j++) {
      mean[j] = bmean[j] = dfx__nn_load(ctx->in[3]->data, u, j);
      var[j] = bvar[j] = dfx__nn_load(ctx->in[4]->data, u, j);
    }
  }
  /* y = (x - mean) * scale / sqrt(var + eps) + offset */
  for (int64_t o = 0; o < outer && rc == DFX_OK; o++) {
    for (int64_t j = 0; j < c; j++) {
      double k = scale[j] / sqrt(var[j] + eps), b = offs[j] - mean[j] * k;
      for (int64_t i = 0; i < inner; i++) {
        int64_t e = (o * c + j) * inner + i;
        dfx__nn_store(y->data, t, e, dfx__nn_load(x->data, t, e) * k + b);
      }
    }
    rc = dfx__nn_progress(ctx, &done, c * inner);
  }
  if (rc == DFX_OK) rc = vec_out(ctx, 1, u, c, bmean);
  if (rc == DFX_OK) rc = vec_out(ctx, 2, u, c, bvar);
  if (rc == DFX_OK) rc = vec_out(ctx, 3, u, c, mean);
  if (rc == DFX_OK) rc = vec_out(ctx, 4, u, c, var);
  dfx__free(w);
  if (rc == DFX_OK && v3) {
    dfx_tensor *r3 = dfx__kctx_alloc(ctx, 5, u, 0, NULL);
    if (!r3) return DFX_ENOMEM;
    dfx__nn_store(r3->data, u, 0, 0);
  }
  return rc;
}

static const dfx_kernel_def kernels[] = {
    {"FusedBatchNorm", "T: {float}", fbn_k, 0, fbn_init, fbn_fini},
    {"FusedBatchNormV2", "T: {half, bfloat16, float}; U: {float}", fbn_k, 0, fbn_init, fbn_fini},
    {"FusedBatchNormV3", "T: {half, bfloat16, float}; U: {bfloat16, float}", fbn_k, 0, fbn_init, fbn_fini},
    {NULL}};

void dfx__kernels_nn_batchnorm(dfx_registry *r);
void dfx__kernels_nn_batchnorm(dfx_registry *r) { dfx__kernels_add(r, kernels); }
