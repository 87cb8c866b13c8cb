/* bmm3.c - BatchMatMulV3: x [..., m, k] (or [..., k, m] with adj_x) times
 * y [..., k, n] (or [..., n, k] with adj_y) with numpy-broadcast batch dims,
 * Ta / Tb / Tout possibly different. Operands are converted to Tout's work
 * dtype (xmm.h); integer products wrap; adj conjugates complex operands.
 * grad_x / grad_y are hints only. */
#include "xmm.h"

static dfx_code bmm3(dfx_kctx *ctx) {
  dfx_tensor *x = ctx->in[0], *y = ctx->in[1];
  bool adj_x = dfx__attr_bool(ctx->node, "adj_x", false), adj_y = dfx__attr_bool(ctx->node, "adj_y", false);
  dfx_dtype tout = dfx__attr_type(ctx->node, "Tout", DFX_F32), w = dfx__x_work_type(tout);
  dfx_dtype ta = (dfx_dtype)x->dtype, tb = (dfx_dtype)y->dtype;
  bool cin = dfx__dtype_is_complex(ta) || dfx__dtype_is_complex(tb);
  bool fin = dfx__dtype_is_float(ta) || dfx__dtype_is_float(tb);
  if (!w || (cin && !dfx__dtype_is_complex(tout)) || (fin && w == DFX_I64))
    return dfx__kctx_fail(ctx, DFX_EUNIMPL, "BatchMatMulV3 has no kernel for Ta=%s, Tb=%s, Tout=%s",
                          dfx__dtype_tf_name(ta), dfx__dtype_tf_name(tb), dfx__dtype_tf_name(tout));
  char b1[128], b2[128];
  if (x->ndims < 2) return dfx__kctx_fail(ctx, DFX_EINVAL, "In[0] ndims must be >= 2: %d", x->ndims);
  if (y->ndims < 2) return dfx__kctx_fail(ctx, DFX_EINVAL, "In[1] ndims must be >= 2: %d", y->ndims);
  int64_t d0 = x->dims[x->ndims - 2], d1 = x->dims[x->ndims - 1], d2 = y->dims[y->ndims - 2],
          d3 = y->dims[y->ndims - 1];
  if (adj_x) d0 = x->dims[x->ndims - 1], d1 = x->dims[x->ndims - 2];
  if (adj_y) d2 = y->dims[y->ndims - 1], d3 = y->dims[y->ndims - 2];
  if (d1 != d2)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "In[0] mismatch In[1] shape: %lld vs. %lld: %s %s %d %d", (long long)d1,
                          (long long)d2, DFX_SHAPE_STR(x, b1), DFX_SHAPE_STR(y, b2), adj_x, adj_y);
  dfx_xmm p = {.m = d0, .n = d3, .k = d1, .ta = adj_x, .tb = adj_y, .conj = true};
  if (dfx__x_bcast(ctx, x->ndims, x->dims, y->ndims, y->dims, &p)) return ctx->st->code;
  int64_t od[DFX_MAX_DIMS + 2];
  for (int i = 0; i < p.nb; i++) od[i] = p.bdims[i];
  od[p.nb] = d0;
  od[p.nb + 1] = d3;
  if (p.nb + 2 > DFX_MAX_DIMS) return dfx__kctx_fail(ctx, DFX_EINVAL, "output rank exceeds %d", DFX_MAX_DIMS);
  dfx_tensor *out = dfx__kctx_alloc(ctx, 0, tout, p.nb + 2, od);
  if (!out) return ctx->st->code;
  if (out->count == 0) return DFX_OK;
  dfx_tensor *a = dfx__x_to_work(ctx, x, w), *b = a ? dfx__x_to_work(ctx, y, w) : NULL, *c = NULL;
  dfx_code code = DFX_OK;
  if (!b) {
    code = ctx->st->code;
    goto done;
  }
  if (tout != w && !(c = dfx__tensor_alloc(w, p.nb + 2, od, &code))) {
    code = dfx__kctx_fail(ctx, code, "out of memory");
    goto done;
  }
  code = dfx__x_bmm(ctx, &p, w, a->data, b->data, c ? c->data : out->data);
  if (!code && c) dfx__x_from_work(c->data, w, out->data, tout, out->count);
done:
  dfx__tensor_unref(a);
  dfx__tensor_unref(b);
  dfx__tensor_unref(c);
  return code;
}

#define BMM_IN "{bfloat16, half, float, double, uint8, int8, int16, int32, int64, complex64, complex128}"
static const dfx_kernel_def kernels[] = {
    {"BatchMatMulV3",
     "Ta: " BMM_IN "; Tb: " BMM_IN "; Tout: {bfloat16, half, float, double, int16, int32, int64, complex64, complex128}",
     bmm3, 0, NULL, NULL},
    {NULL}};

void dfx__kernels_extra_bmm3(dfx_registry *r);
void dfx__kernels_extra_bmm3(dfx_registry *r) { dfx__kernels_add(r, kernels); }
