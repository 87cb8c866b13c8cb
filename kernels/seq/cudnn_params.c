/* cudnn_params.c - CudnnRNNParamsSize, CudnnRNNCanonicalToParams(V2) and
 * CudnnRNNParamsToCanonical(V2): the size of, the packing into and the
 * unpacking of the params buffer cudnn_rnn.c reads:
 * every weight matrix (per layer and direction: W per gate [units, in],
 * then R per gate [units, units]) flattened in order, then every bias. */
#include <string.h>

#include "kernel.h"

typedef struct shape_in {
  int64_t L, U, I;
  int gates, dirs;
} shape_in;

static dfx_code read_shape(dfx_kctx *ctx, shape_in *s) {
  dfx_code c;
  if ((c = dfx__kctx_scalar_i64(ctx, 0, "num_layers", &s->L)) != DFX_OK ||
      (c = dfx__kctx_scalar_i64(ctx, 1, "num_units", &s->U)) != DFX_OK ||
      (c = dfx__kctx_scalar_i64(ctx, 2, "input_size", &s->I)) != DFX_OK)
    return c;
  if (s->L < 1 || s->U < 1 || s->I < 0 || s->L > (1 << 16) || s->U > (1 << 20) || s->I > (1 << 30))
    return dfx__kctx_fail(ctx, DFX_EINVAL, "num_layers (%lld) and num_units (%lld) must be positive and input_size (%lld) "
                                           "non-negative, within this kernel's limits",
                          (long long)s->L, (long long)s->U, (long long)s->I);
  const char *mode = dfx__attr_str(ctx->node, "rnn_mode", "lstm");
  s->gates = !strcmp(mode, "lstm") ? 4 : !strcmp(mode, "gru") ? 3 : 1;
  s->dirs = !strcmp(dfx__attr_str(ctx->node, "direction", "unidirectional"), "bidirectional") ? 2 : 1;
  if (strcmp(dfx__attr_str(ctx->node, "input_mode", "linear_input"), "linear_input") != 0)
    return dfx__kctx_fail(ctx, DFX_EUNIMPL, "only input_mode 'linear_input' is implemented");
  if (dfx__attr_int(ctx->node, "num_proj", 0) != 0)
    return dfx__kctx_fail(ctx, DFX_EUNIMPL, "num_proj (LSTM projection) is not implemented");
  return DFX_OK;
}

/* Elements of matrix m (0 .. 2 gates - 1) of layer l. */
static int64_t matrix_size(const shape_in *s, int64_t l, int m) {
  int64_t in = l == 0 ? s->I : s->dirs * s->U;
  return s->U * (m < s->gates ? in : s->U);
}

static int64_t total(const shape_in *s) {
  int64_t n = 0;
  for (int64_t l = 0; l < s->L; l++)
    for (int m = 0; m < 2 * s->gates; m++) n += s->dirs * (matrix_size(s, l, m) + s->U);
  return n;
}

static dfx_code params_size(dfx_kctx *ctx) {
  shape_in s;
  dfx_code c = read_shape(ctx, &s);
  if (c != DFX_OK) return c;
  dfx_dtype st = dfx__attr_type(ctx->node, "S", DFX_I32);
  int64_t n = total(&s);
  if (st == DFX_I32 && n > INT32_MAX) return dfx__kctx_fail(ctx, DFX_ELIMIT, "params size %lld overflows int32", (long long)n);
  const int64_t d[1] = {1};
  dfx_tensor *o = dfx__kctx_alloc(ctx, 0, st, 1, d);
  if (!o) return DFX_ENOMEM;
  if (st == DFX_I32) *(int32_t *)o->data = (int32_t)n;
  else *(int64_t *)o->data = n;
  return DFX_OK;
}

static dfx_code canonical_to_params(dfx_kctx *ctx) {
  shape_in s;
  dfx_code c = read_shape(ctx, &s);
  if (c != DFX_OK) return c;
  int64_t nm = s.L * s.dirs * 2 * s.gates, nw = (ctx->n_in - 3) / 2;
  if (ctx->n_in - 3 != 2 * nm || nw != nm)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "expected %lld weight and %lld bias tensors for this RNN, got %d tensors in all",
                          (long long)nm, (long long)nm, ctx->n_in - 3);
  for (int64_t k = 0; k < nm; k++) {
    int64_t l = k / (s.dirs * 2 * s.gates);
    int m = (int)(k % (2 * s.gates));
    if (ctx->in[3 + k]->count != matrix_size(&s, l, m))
      return dfx__kctx_fail(ctx, DFX_EINVAL, "weights[%lld] has %lld elements, expected %lld", (long long)k,
                            (long long)ctx->in[3 + k]->count, (long long)matrix_size(&s, l, m));
    if (ctx->in[3 + nm + k]->count != s.U)
      return dfx__kctx_fail(ctx, DFX_EINVAL, "biases[%lld] has %lld elements, expected %lld", (long long)k,
                            (long long)ctx->in[3 + nm + k]->count, (long long)s.U);
  }
  dfx_dtype t = ctx->in[3]->dtype;
  const int64_t d[1] = {total(&s)};
  dfx_tensor *o = dfx__kctx_alloc(ctx, 0, t, 1, d);
  if (!o) return DFX_ENOMEM;
  size_t es = dfx__dtype_storage(t), off = 0;
  for (int64_t k = 0; k < 2 * nm; k++) {
    const dfx_tensor *w = ctx->in[3 + k];
    if (w->count) memcpy((char *)o->data + off, w->data, (size_t)w->count * es);
    off += (size_t)w->count * es;
  }
  return DFX_OK;
}

/* The inverse: weights as [units, in] matrices, biases as [units] vectors. */
static dfx_code params_to_canonical(dfx_kctx *ctx) {
  shape_in s;
  dfx_code c = read_shape(ctx, &s);
  if (c != DFX_OK) return c;
  int64_t nm = s.L * s.dirs * 2 * s.gates;
  if (ctx->n_out != 2 * nm)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "this RNN has %lld weight and %lld bias tensors, but the op has %d outputs",
                          (long long)nm, (long long)nm, ctx->n_out);
  const dfx_tensor *p = ctx->in[3];
  char b[64];
  if (p->ndims != 1 || p->count != total(&s))
    return dfx__kctx_fail(ctx, DFX_EINVAL, "params must be a vector of %lld elements for this RNN, got %s",
                          (long long)total(&s), DFX_SHAPE_STR(p, b));
  dfx_dtype t = p->dtype;
  size_t es = dfx__dtype_storage(t), off = 0;
  for (int64_t k = 0; k < 2 * nm; k++) {
    int64_t l = k < nm ? k / (s.dirs * 2 * s.gates) : 0;
    int m = (int)(k % (2 * s.gates));
    int64_t d[2] = {s.U, k < nm ? matrix_size(&s, l, m) / s.U : 0};
    dfx_tensor *o = dfx__kctx_alloc(ctx, (int)k, t, k < nm ? 2 : 1, d);
    if (!o) return DFX_ENOMEM;
    if (o->count) memcpy(o->data, (const char *)p->data + off, (size_t)o->count * es);
    off += (size_t)o->count * es;
  }
  return DFX_OK;
}

#define CP_T "T: {half, bfloat16, float, double}"

static const dfx_kernel_def kernels[] = {
    {"CudnnRNNParamsSize", CP_T "; S: {int32, int64}", params_size, DFX_KERNEL_CHEAP, NULL, NULL},
    {"CudnnRNNCanonicalToParams", CP_T, canonical_to_params, 0, NULL, NULL},
    {"CudnnRNNCanonicalToParamsV2", CP_T, canonical_to_params, 0, NULL, NULL},
    {"CudnnRNNParamsToCanonical", CP_T, params_to_canonical, 0, NULL, NULL},
    {"CudnnRNNParamsToCanonicalV2", CP_T, params_to_canonical, 0, NULL, NULL},
    {NULL}};

void dfx__kernels_seq_cudnn_params(dfx_registry *r);
void dfx__kernels_seq_cudnn_params(dfx_registry *r) { dfx__kernels_add(r, kernels); }
