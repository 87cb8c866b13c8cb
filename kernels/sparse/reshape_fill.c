/* reshape_fill.c - SparseReshape (re-index a SparseTensor [nnz, rank] for a
 * new dense shape with at most one -1; row-major linear positions are kept)
 * and SparseFillEmptyRows (a default value at [row, 0, ...] for each empty
 * row of dim 0; entries keep their relative order within a row, rows come
 * out in order). */
#include <string.h>

#include "gather/gutil.h"
#include "sutil.h"

static dfx_code sparse_reshape(dfx_kctx *ctx) {
  const dfx_tensor *ind = ctx->in[0], *ishape = ctx->in[1], *tshape = ctx->in[2];
  char b1[256], b2[256];
  if (ind->ndims != 2)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Input indices should be a matrix but received shape %s",
                          DFX_SHAPE_STR(ind, b1));
  if (ishape->ndims != 1)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Input shape should be a vector but received shape %s",
                          DFX_SHAPE_STR(ishape, b1));
  if (tshape->ndims != 1)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Target shape should be a vector but received shape %s",
                          DFX_SHAPE_STR(tshape, b1));
  if (ind->dims[1] != ishape->dims[0])
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Input tensor rank must match input shape length.");
  int64_t irank = ishape->count, orank = tshape->count, nnz = ind->dims[0];
  const int64_t *is = ishape->data, *ts = tshape->data;
  if (irank > DFX_MAX_DIMS * 8 || orank > DFX_MAX_DIMS * 8)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "SparseReshape supports ranks up to %d", DFX_MAX_DIMS * 8);
  int64_t dense = 1, product = 1, od[DFX_MAX_DIMS * 8];
  bool over = false, zero = false;
  for (int64_t d = 0; d < irank; d++) {
    if (is[d] < 0) return dfx__kctx_fail(ctx, DFX_EINVAL, "Expected shape dimensions to be non-negative, got %lld", (long long)is[d]);
    zero = zero || is[d] == 0;
    if (!over && __builtin_mul_overflow(dense, is[d], &dense)) over = true;
  }
  if (zero) dense = 0;
  else if (over) return dfx__kctx_fail(ctx, DFX_EINVAL, "Input shape has more than 2**63 - 1 elements");
  int64_t unknown = -1;
  for (int64_t d = 0; d < orank; d++) {
    int64_t s = ts[d];
    if (s == -1) {
      if (unknown != -1)
        return dfx__kctx_fail(ctx, DFX_EINVAL, "only one output dimension may be -1, not both %lld and %lld",
                              (long long)unknown, (long long)d);
      unknown = d;
      od[d] = 1;
    } else {
      if (s < 0)
        return dfx__kctx_fail(ctx, DFX_EINVAL, "size %lld must be non-negative, not %lld", (long long)d, (long long)s);
      if (__builtin_mul_overflow(product, s, &product))
        return dfx__kctx_fail(ctx, DFX_EINVAL, "Encountered overflow when multiplying shape dimensions");
      od[d] = s;
    }
  }
  if (unknown != -1) {
    if (product <= 0)
      return dfx__kctx_fail(ctx, DFX_EINVAL,
                            "reshape cannot infer the missing input size for an empty tensor unless all specified "
                            "input sizes are non-zero");
    int64_t missing = dense / product;
    if (product * missing != dense)
      return dfx__kctx_fail(ctx, DFX_EINVAL,
                            "Input to reshape is a SparseTensor with %lld dense values, but the requested shape "
                            "requires a multiple of %lld. input_shape=%s output_shape=%s",
                            (long long)dense, (long long)product, dfx__shape_str((int)irank, is, b1, sizeof b1),
                            dfx__shape_str((int)orank, od, b2, sizeof b2));
    od[unknown] = missing;
  }
  int64_t ocount = unknown != -1 ? product * od[unknown] : product;
  if (ocount != dense)
    return dfx__kctx_fail(ctx, DFX_EINVAL,
                          "Input to reshape is a tensor with %lld dense values, but the requested shape has %lld. "
                          "input_shape=%s output_shape=%s",
                          (long long)dense, (long long)ocount, dfx__shape_str((int)irank, is, b1, sizeof b1),
                          dfx__shape_str((int)orank, od, b2, sizeof b2));
  if (irank == orank && (irank == 0 || memcmp(is, od, (size_t)irank * sizeof(int64_t)) == 0)) {
    dfx__kctx_forward(ctx, 0, 0);
    dfx__kctx_forward(ctx, 1, 1);
    return DFX_OK;
  }
  int64_t sd[1] = {orank}, idims[2] = {nnz, orank};
  dfx_tensor *so = dfx__kctx_alloc(ctx, 1, DFX_I64, 1, sd);
  if (!so) return ctx->st->code;
  if (orank) memcpy(so->data, od, (size_t)orank * sizeof(int64_t));
  if (dfx__s_check_count(ctx, "SparseReshape", nnz < 0 || orank == 0 ? 0 : (nnz > INT64_MAX / orank ? -1 : nnz * orank),
                         DFX_I64))
    return ctx->st->code;
  dfx_tensor *oi = dfx__kctx_alloc(ctx, 0, DFX_I64, 2, idims);
  if (!oi) return ctx->st->code;
  if (nnz == 0) return DFX_OK;
  if (!(dense > 0 && product > 0))
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Input tensor has %lld non zero elements but input shape (%s) or output "
                          "shape (%s) is empty",
                          (long long)nnz, dfx__shape_str((int)irank, is, b1, sizeof b1),
                          dfx__shape_str((int)orank, od, b2, sizeof b2));
  uint64_t istr[DFX_MAX_DIMS * 8], ostr[DFX_MAX_DIMS * 8];
  for (int64_t d = irank - 1, s = 1; d >= 0; s *= is[d], d--) istr[d] = (uint64_t)s;
  for (int64_t d = orank - 1, s = 1; d >= 0; s *= od[d], d--) ostr[d] = (uint64_t)s;
  const int64_t *iv = ind->data;
  int64_t *ov = oi->data, left = DFX_S_POLL_EVERY;
  for (int64_t i = 0; i < nnz; i++) {
    /* Out-of-range indices are not checked (as in TF); wrapping unsigned
     * arithmetic keeps them defined. */
    uint64_t id = 0;
    for (int64_t j = 0; j < irank; j++) id += (uint64_t)iv[i * irank + j] * istr[j];
    int64_t sid = (int64_t)id;
    for (int64_t j = 0; j < orank; j++) {
      ov[i * orank + j] = sid / (int64_t)ostr[j];
      sid %= (int64_t)ostr[j];
    }
    if (stick(ctx, &left, irank + orank)) return ctx->st->code;
  }
  return DFX_OK;
}

static dfx_code fill_empty_rows(dfx_kctx *ctx) {
  const dfx_tensor *ind = ctx->in[0], *vals = ctx->in[1], *dshape = ctx->in[2], *def = ctx->in[3];
  char b1[128];
  if (dshape->ndims != 1)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "dense_shape must be a vector, saw: %s", DFX_SHAPE_STR(dshape, b1));
  if (ind->ndims != 2)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "indices must be a matrix, saw: %s", DFX_SHAPE_STR(ind, b1));
  if (vals->ndims != 1)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "values must be a vector, saw: %s", DFX_SHAPE_STR(vals, b1));
  if (ind->dims[0] != vals->dims[0])
    return dfx__kctx_fail(ctx, DFX_EINVAL,
                          "The length of `values` (%lld) must match the first dimension of `indices` (%lld).",
                          (long long)vals->dims[0], (long long)ind->dims[0]);
  if (def->ndims != 0)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "default_value must be a scalar, saw: %s", DFX_SHAPE_STR(def, b1));
  if (dshape->count == 0) return dfx__kctx_fail(ctx, DFX_EINVAL, "Dense shape cannot be empty.");
  dfx_dtype dt = (dfx_dtype)vals->dtype;
  const int64_t *iv = ind->data;
  int64_t n = ind->dims[0], rank = ind->dims[1], rows = ((const int64_t *)dshape->data)[0];
  if (rows < 0)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Expected shape dimensions to be non-negative, got %lld", (long long)rows);
  if (dfx__s_check_count(ctx, "empty_row_indicator", rows, DFX_I64)) return ctx->st->code;
  dfx_tensor *eri = dfx__kctx_alloc(ctx, 2, DFX_BOOL, 1, &rows);
  dfx_tensor *rim = eri ? dfx__kctx_alloc(ctx, 3, DFX_I64, 1, &n) : NULL;
  if (!rim) return ctx->st->code;
  if (rows == 0) {
    if (n != 0)
      return dfx__kctx_fail(ctx, DFX_EINVAL, "Received SparseTensor with dense_shape[0] = 0 but indices.shape[0] = %lld",
                            (long long)n);
    int64_t id[2] = {0, rank}, z = 0;
    if (!dfx__kctx_alloc(ctx, 0, DFX_I64, 2, id) || !dfx__kctx_alloc(ctx, 1, dt, 1, &z)) return ctx->st->code;
    return DFX_OK;
  }
  int64_t *csr = dfx__calloc((size_t)rows, sizeof(int64_t)), *filled = NULL;
  if (!csr) return dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory");
  dfx_code code = DFX_OK;
  bool ordered = true, full = true;
  int64_t last = 0;
  if (n > 0 && rank == 0) {
    code = dfx__kctx_fail(ctx, DFX_EINVAL, "indices(0, 0) is invalid: indices have no columns");
    goto done;
  }
  for (int64_t i = 0; i < n; i++) {
    int64_t row = iv[i * rank];
    if (row < 0 || row >= rows) {
      code = dfx__kctx_fail(ctx, DFX_EINVAL, "indices(%lld, 0) is invalid: %lld >= %lld", (long long)i, (long long)row,
                            (long long)rows);
      goto done;
    }
    csr[row]++;
    ordered = ordered && row >= last;
    last = row;
  }
  uint8_t *e = eri->data;
  for (int64_t r = 0; r < rows; r++) {
    e[r] = csr[r] == 0;
    full = full && csr[r] != 0;
    if (csr[r] == 0) csr[r] = 1;
    if (r > 0) csr[r] += csr[r - 1];
  }
  int64_t *rm = rim->data;
  if (full && ordered) {
    dfx__kctx_forward(ctx, 0, 0);
    dfx__kctx_forward(ctx, 1, 1);
    for (int64_t i = 0; i < n; i++) rm[i] = i;
    goto done;
  }
  int64_t nfull = csr[rows - 1], od[2] = {nfull, rank};
  if ((code = dfx__s_check_count(ctx, "SparseFillEmptyRows", rank && nfull > INT64_MAX / rank ? -1 : nfull * rank, DFX_I64)))
    goto done;
  dfx_tensor *oi = dfx__kctx_alloc(ctx, 0, DFX_I64, 2, od);
  dfx_tensor *ov = oi ? dfx__kctx_alloc(ctx, 1, dt, 1, &nfull) : NULL;
  filled = dfx__calloc((size_t)rows, sizeof(int64_t));
  if (!ov || !filled) {
    code = ov ? dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory") : ctx->st->code;
    goto done;
  }
  size_t es = dfx__dtype_storage(dt);
  int64_t *oiv = oi->data;
  for (int64_t i = 0; i < n; i++) {
    int64_t row = iv[i * rank], at = (row == 0 ? 0 : csr[row - 1]) + filled[row]++;
    if (rank) memcpy(oiv + at * rank, iv + i * rank, (size_t)rank * sizeof(int64_t));
    if ((code = dfx__g_copy(ctx, dt, (char *)ov->data + (size_t)at * es, (const char *)vals->data + (size_t)i * es, 1)))
      goto done;
    rm[i] = at;
  }
  for (int64_t r = 0; r < rows; r++) {
    if (filled[r]) continue;
    int64_t at = r == 0 ? 0 : csr[r - 1];
    if (rank) {
      memset(oiv + at * rank, 0, (size_t)rank * sizeof(int64_t));
      oiv[at * rank] = r;
    }
    if ((code = dfx__g_copy(ctx, dt, (char *)ov->data + (size_t)at * es, def->data, 1))) goto done;
    if ((r & 0xfffff) == 0xfffff && (code = dfx__kctx_poll(ctx))) goto done;
  }
done:
  dfx__free(csr);
  dfx__free(filled);
  return code;
}

static const dfx_kernel_def kernels[] = {
    {"SparseReshape", NULL, sparse_reshape, DFX_KERNEL_CHEAP, NULL, NULL},
    {"SparseFillEmptyRows", "T: " DFX_G_COPY, fill_empty_rows, DFX_KERNEL_CHEAP, NULL, NULL},
    {NULL}};

void dfx__kernels_sparse_reshape_fill(dfx_registry *r);
void dfx__kernels_sparse_reshape_fill(dfx_registry *r) { dfx__kernels_add(r, kernels); }
