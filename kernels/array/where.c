/* where.c - Where (coordinates of true/nonzero elements, row-major order,
 * int64 [num_true, rank]) and OneHot (off_value fill, then on_value at each
 * in-range index; out-of-range indices leave their row all off). */
#include <stdio.h>
#include <string.h>

#include "autil.h"


static bool nonzero(const dfx_tensor *x, int64_t i) {
  switch ((dfx_dtype)x->dtype) {
    case DFX_C64: return ((const float *)x->data)[2 * i] != 0 || ((const float *)x->data)[2 * i + 1] != 0;
    case DFX_C128: return ((const double *)x->data)[2 * i] != 0 || ((const double *)x->data)[2 * i + 1] != 0;
    case DFX_F16: case DFX_BF16: case DFX_F32: case DFX_F64: return dfx__tensor_get_f64(x, i) != 0;
    default: return dfx__tensor_get_i64(x, i) != 0;
  }
}

static dfx_code where_kernel(dfx_kctx *ctx) {
  const dfx_tensor *x = ctx->in[0];
  if (x->dtype == DFX_STRING || x->dtype == DFX_RESOURCE || x->dtype == DFX_VARIANT)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Where does not support %s inputs", dfx_dtype_name((dfx_dtype)x->dtype));
  int r = x->ndims;
  int64_t n = 0;
  for (int64_t i = 0; i < x->count; i++) n += nonzero(x, i);
  int64_t od[2] = {n, r};
  dfx_tensor *y = dfx__kctx_alloc(ctx, 0, DFX_I64, 2, od);
  if (!y) return DFX_ENOMEM;
  int64_t *o = y->data, c[DFX_MAX_DIMS] = {0};
  for (int64_t i = 0; i < x->count; i++) {
    if (nonzero(x, i)) {
      memcpy(o, c, sizeof(int64_t) * (size_t)r);
      o += r;
    }
    for (int k = r - 1; k >= 0 && ++c[k] == x->dims[k]; k--) c[k] = 0;
  }
  return DFX_OK;
}

static dfx_code one_hot_kernel(dfx_kctx *ctx) {
  const dfx_tensor *ix = ctx->in[0], *td = ctx->in[1], *on = ctx->in[2], *off = ctx->in[3];
  char b[64];
  int r = ix->ndims;
  int64_t axis = dfx__attr_int(ctx->node, "axis", -1);
  if (axis != -1 && (axis < 0 || axis > r))
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Expected axis to be -1 or between [0, %d).  But received: %lld", r + 1,
                          (long long)axis);
  if (td->ndims != 0) return dfx__kctx_fail(ctx, DFX_EINVAL, "depth must be a scalar, but got: %s", DFX_SHAPE_STR(td, b));
  if (on->ndims != 0) return dfx__kctx_fail(ctx, DFX_EINVAL, "on_value must be a scalar, but got: %s", DFX_SHAPE_STR(on, b));
  if (off->ndims != 0)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "off_value must be a scalar, but got: %s", DFX_SHAPE_STR(off, b));
  int64_t depth = dfx__tensor_get_i64(td, 0);
  if (depth < 0) return dfx__kctx_fail(ctx, DFX_EINVAL, "depth must be non-negative, got: %lld", (long long)depth);
  if (r + 1 > DFX_MAX_DIMS) return dfx__kctx_fail(ctx, DFX_EINVAL, "OneHot output rank too large");
  int a = axis == -1 ? r : (int)axis;
  int64_t od[DFX_MAX_DIMS];
  for (int i = 0, j = 0; i <= r; i++) od[i] = i == a ? depth : ix->dims[j++];
  dfx_tensor *y = dfx__kctx_alloc(ctx, 0, (dfx_dtype)on->dtype, r + 1, od);
  if (!y) return DFX_ENOMEM;
  if (dfx__arr_fill(y, 0, y->count, off, 0)) return dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory");
  int64_t suffix = dfx__arr_prod(ix->dims, a, r), prefix = dfx__arr_prod(ix->dims, 0, a);
  for (int64_t p = 0; p < prefix; p++)
    for (int64_t s = 0; s < suffix; s++) {
      int64_t v = dfx__tensor_get_i64(ix, p * suffix + s);
      if (v < 0 || v >= depth) continue;
      if (dfx__arr_copy(y, (p * depth + v) * suffix + s, on, 0, 1))
        return dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory");
    }
  return DFX_OK;
}

static const dfx_kernel_def kernels[] = {
    {"Where", NULL, where_kernel, DFX_KERNEL_CHEAP, NULL, NULL},
    {"OneHot", NULL, one_hot_kernel, DFX_KERNEL_CHEAP, NULL, NULL},
    {NULL}};

void dfx__kernels_array_where(dfx_registry *r);
void dfx__kernels_array_where(dfx_registry *r) { dfx__kernels_add(r, kernels); }
