/* fused_matmul.c - _FusedMatMul: MatMul followed by BiasAdd and optionally
 * Relu, Relu6, Elu or LeakyRelu (TF's CPU patterns, fused_epilogue.h), as
 * Grappler's remapper and dfexec's remap pass write it. One sgemm, as
 * MatMul makes it, then the epilogue over the product's rows (the
 * channels are its columns). float32. */
#include <cblas.h>

#include "fused_epilogue.h"
#include "nn_util.h"

typedef struct fused_mm {
  bool ta, tb;
  fe_spec fe;
} fused_mm;

static dfx_code fused_mm_init(const dfx_node *n, void **state, dfx_status *st) {
  fused_mm s = {.ta = dfx__attr_bool(n, "transpose_a", false), .tb = dfx__attr_bool(n, "transpose_b", false)};
  dfx_code c = fe_parse(n, "MatMul", 0, &s.fe, st);
  if (c != DFX_OK) return c;
  fused_mm *p = dfx__malloc(sizeof *p);
  if (!p) return dfx__status_set(st, DFX_ENOMEM, "out of memory");
  *p = s;
  *state = p;
  return DFX_OK;
}

static dfx_code fused_mm_k(dfx_kctx *ctx) {
  const fused_mm *s = ctx->state;
  const dfx_tensor *a = ctx->in[0], *b = ctx->in[1];
  char b1[96], b2[96];
  if (a->ndims != 2)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "In[0] is not a matrix. Instead it has shape %s", DFX_SHAPE_STR(a, b1));
  if (b->ndims != 2)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "In[1] is not a matrix. Instead it has shape %s", DFX_SHAPE_STR(b, b1));
  int64_t m = a->dims[s->ta], k = a->dims[!s->ta], k2 = b->dims[s->tb], n = b->dims[!s->tb];
  if (k != k2)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Matrix size-incompatible: In[0]: %s, In[1]: %s", DFX_SHAPE_STR(a, b1),
                          DFX_SHAPE_STR(b, b2));
  if (m > INT32_MAX || n > INT32_MAX || k > INT32_MAX)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "matrix dimensions too large for BLAS");
  fe_args args;
  dfx_code c = fe_args_init(ctx, &s->fe, 2, n, &args);
  if (c != DFX_OK) return c;
  int64_t dims[2] = {m, n};
  dfx_tensor *z = dfx__kctx_alloc(ctx, 0, DFX_F32, 2, dims);
  if (!z) c = DFX_ENOMEM;
  else if (z->count > 0) {
    if (k == 0)
      memset(z->data, 0, sizeof(float) * (size_t)z->count);
    else
      cblas_sgemm(CblasRowMajor, s->ta ? CblasTrans : CblasNoTrans, s->tb ? CblasTrans : CblasNoTrans, (int)m, (int)n,
                  (int)k, 1.0f, a->data, (int)(s->ta ? m : k), b->data, (int)(s->tb ? k : n), 0.0f, z->data, (int)n);
    fe_rows_float(&args, z->data, m, n);
  }
  fe_args_free(&args);
  return c;
}

static const dfx_kernel_def kernels[] = {
    {"_FusedMatMul", "T: {float}", fused_mm_k, 0, fused_mm_init, dfx__free}, {NULL}};

void dfx__kernels_nn_fused_matmul(dfx_registry *r);
void dfx__kernels_nn_fused_matmul(dfx_registry *r) { dfx__kernels_add(r, kernels); }
