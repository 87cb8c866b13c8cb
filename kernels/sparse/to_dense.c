/* to_dense.c - SparseToDense: scatter sparse_values (a vector, or a scalar
 * for every index) at sparse_indices (scalar, [n] or [n, ndims]) into a
 * dense tensor of output_shape filled with default_value. validate_indices
 * checks TF's SparseTensor::IndicesValid (in bounds, lexicographically
 * increasing, no repeats) first; without it a repeated index keeps its last
 * value, and an out-of-bounds one still fails. */
#include <stdio.h>
#include <string.h>

#include "gather/gutil.h"
#include "sutil.h"

/* "[1,2]" (TF's index string) into buf. */
static const char *index_str(const dfx_tensor *ind, int64_t row, int64_t nd, char *buf, size_t n) {
  size_t k = 0;
  k += (size_t)snprintf(buf + k, n - k, "[");
  for (int64_t d = 0; d < nd && k < n; d++)
    k += (size_t)snprintf(buf + k, n - k, "%lld%s", (long long)sidx(ind, row * nd + d), d + 1 < nd ? "," : "");
  if (k < n) snprintf(buf + k, n - k, "]");
  return buf;
}

/* "2,3" (absl::StrJoin of the shape). */
static const char *dims_join(int nd, const int64_t *dims, char *buf, size_t n) {
  size_t k = 0;
  buf[0] = 0;
  for (int d = 0; d < nd && k < n; d++) k += (size_t)snprintf(buf + k, n - k, "%s%lld", d ? "," : "", (long long)dims[d]);
  return buf;
}

static dfx_code indices_valid(dfx_kctx *ctx, const dfx_tensor *ind, int64_t rows, int64_t nd, const int64_t *shape) {
  char b1[256], b2[256];
  for (int64_t r = 0; r < rows; r++) {
    bool valid = true, different = r == 0, increasing = true;
    for (int64_t d = 0; d < nd; d++) {
      int64_t v = sidx(ind, r * nd + d);
      if (v < 0 || v >= shape[d]) valid = false;
      if (r > 0) {
        int64_t p = sidx(ind, (r - 1) * nd + d);
        if (v > p) different = true;
        if (!different && v < p) increasing = false;
      }
    }
    if (!valid)
      return dfx__kctx_fail(ctx, DFX_EINVAL, "indices[%lld] = %s is out of bounds: need 0 <= index < [%s]", (long long)r,
                            index_str(ind, r, nd, b1, sizeof b1), dims_join((int)nd, shape, b2, sizeof b2));
    if (!increasing)
      return dfx__kctx_fail(ctx, DFX_EINVAL,
                            "indices[%lld] = %s is out of order. Many sparse ops require sorted indices.\n"
                            "    Use `tf.sparse.reorder` to create a correctly ordered copy.\n\n",
                            (long long)r, index_str(ind, r, nd, b1, sizeof b1));
    if (!different)
      return dfx__kctx_fail(ctx, DFX_EINVAL, "indices[%lld] = %s is repeated", (long long)r,
                            index_str(ind, r, nd, b1, sizeof b1));
    if ((r & 0xfffff) == 0xfffff && dfx__kctx_poll(ctx)) return ctx->st->code;
  }
  return DFX_OK;
}

static dfx_code to_dense(dfx_kctx *ctx) {
  const dfx_tensor *ind = ctx->in[0], *oshape = ctx->in[1], *vals = ctx->in[2], *def = ctx->in[3];
  char b1[128];
  if (ind->ndims > 2)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "sparse_indices should be a scalar, vector, or matrix, got shape %s",
                          DFX_SHAPE_STR(ind, b1));
  int64_t rows = ind->ndims > 0 ? ind->dims[0] : 1, nd = ind->ndims > 1 ? ind->dims[1] : 1;
  if (oshape->ndims != 1)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "output_shape must be rank 1, got shape %s", DFX_SHAPE_STR(oshape, b1));
  if (oshape->count != nd)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "output_shape has incorrect number of elements: %lld should be: %lld",
                          (long long)oshape->count, (long long)nd);
  if (vals->ndims != 0 && (vals->ndims != 1 || vals->count != rows))
    return dfx__kctx_fail(ctx, DFX_EINVAL, "sparse_values has incorrect shape %s, should be [] or [%lld]",
                          DFX_SHAPE_STR(vals, b1), (long long)rows);
  if (def->ndims != 0) return dfx__kctx_fail(ctx, DFX_EINVAL, "default_value should be a scalar.");
  if (nd > DFX_MAX_DIMS) return dfx__kctx_fail(ctx, DFX_EINVAL, "output rank %lld exceeds %d", (long long)nd, DFX_MAX_DIMS);
  int64_t od[DFX_MAX_DIMS];
  for (int64_t d = 0; d < nd; d++) {
    od[d] = sidx(oshape, d);
    if (od[d] < 0) return dfx__kctx_fail(ctx, DFX_EINVAL, "Dimension %lld must be >= 0", (long long)od[d]);
  }
  if (dfx__shape_count((int)nd, od) < 0)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Shape %s would have more than 2**63 - 1 elements",
                          dfx__shape_str((int)nd, od, b1, sizeof b1));
  dfx_dtype dt = (dfx_dtype)def->dtype;
  if (dfx__s_check_count(ctx, "SparseToDense", dfx__shape_count((int)nd, od), dt)) return ctx->st->code;
  if (dfx__attr_bool(ctx->node, "validate_indices", true) && indices_valid(ctx, ind, rows, nd, od))
    return ctx->st->code;
  dfx_tensor *out = dfx__kctx_alloc(ctx, 0, dt, (int)nd, od);
  if (!out) return ctx->st->code;
  if (out->count && dfx__g_apply(ctx, dt, DFX_GOP_SET, out->data, def->data, out->count, 0)) return ctx->st->code;
  size_t es = dfx__dtype_storage(dt);
  bool str = dt == DFX_STRING;
  int64_t vstride = vals->ndims == 0 ? 0 : 1;
  for (int64_t r = 0; r < rows; r++) {
    int64_t flat = 0;
    for (int64_t d = 0; d < nd; d++) {
      int64_t v = sidx(ind, r * nd + d);
      if (v < 0 || v >= od[d])
        return dfx__kctx_fail(ctx, DFX_EINVAL, "Indices are not valid (out of bounds).  Shape: %s",
                              DFX_SHAPE_STR(out, b1));
      flat = flat * od[d] + v;
    }
    char *dst = (char *)out->data + (size_t)flat * es;
    const char *src = (const char *)vals->data + (size_t)(r * vstride) * es;
    if (str) {
      if (dfx__g_copy(ctx, dt, dst, src, 1)) return ctx->st->code;
    } else {
      memcpy(dst, src, es);
    }
    if ((r & 0xfffff) == 0xfffff && dfx__kctx_poll(ctx)) return ctx->st->code;
  }
  return DFX_OK;
}

static const dfx_kernel_def kernels[] = {
    {"SparseToDense", "T: {" DFX_G_REAL_LIST ", bool, string}; Tindices: {int32, int64}", to_dense, DFX_KERNEL_CHEAP,
     NULL, NULL},
    {NULL}};

void dfx__kernels_sparse_to_dense(dfx_registry *r);
void dfx__kernels_sparse_to_dense(dfx_registry *r) { dfx__kernels_add(r, kernels); }
