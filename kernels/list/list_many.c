/* list_many.c - TensorList kernels over many elements: Stack, Gather,
 * Concat(V2) build one tensor from elements; FromTensor, Scatter(V2),
 * ScatterIntoExistingList and Split build elements from one tensor. A
 * stacked tensor is [n] + element shape, every element of one shape; unset
 * elements count as zeros of the element shape, which must then be known. */
#include <string.h>

#include "alloc.h"
#include "list.h"

static dfx_code oom(dfx_kctx *ctx) { return dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory"); }

/* Stacks elements idx[0..n) (all of l when idx is NULL) into output k;
 * `si` is the element_shape input (-1: none). */
static dfx_code stack(dfx_kctx *ctx, const dfx_tlist *l, const int64_t *idx, int64_t n, int si, const char *why) {
  int rank = l->rank, brank;
  int64_t dims[DFX_MAX_DIMS] = {0}, bdims[DFX_MAX_DIMS];
  memcpy(dims, l->dims, sizeof dims);
  dfx_code c;
  if (si >= 0 && ((c = dfx__list_shape_in(ctx, si, &brank, bdims)) != DFX_OK ||
                  (c = dfx__list_shape_merge(ctx, &rank, dims, brank, bdims, why)) != DFX_OK))
    return c;
  for (int64_t j = 0; j < n; j++) {
    int64_t e = idx ? idx[j] : j;
    if (e < 0 || e >= l->n)
      return dfx__kctx_fail(ctx, DFX_EINVAL, "%s: index %lld is out of range for a list of %lld elements", why,
                            (long long)e, (long long)l->n);
    const dfx_tensor *t = l->elems[e];
    if (!t) continue;
    if ((c = dfx__list_shape_merge(ctx, &rank, dims, t->ndims, t->dims, why)) != DFX_OK) return c;
  }
  if (!dfx__list_shape_full(rank, dims)) {
    char a[160];
    return dfx__kctx_fail(ctx, DFX_EINVAL, "%s: cannot stack a list of element shape %s with %s", why,
                          dfx__list_shape_str(rank, dims, a, sizeof a),
                          n ? "unset elements" : "no elements (the shape of the result is unknown)");
  }
  if (rank + 1 > DFX_MAX_DIMS) return dfx__kctx_fail(ctx, DFX_EINVAL, "%s: element rank %d is too large", why, rank);
  int64_t odims[DFX_MAX_DIMS];
  odims[0] = n;
  memcpy(odims + 1, dims, sizeof(int64_t) * (size_t)rank);
  dfx_tensor *out = dfx__kctx_alloc(ctx, 0, l->dtype, rank + 1, odims);
  if (!out) return DFX_ENOMEM;
  int64_t inner = dfx__shape_count(rank, dims);
  if (l->dtype != DFX_STRING) memset(out->data, 0, out->nbytes);
  for (int64_t j = 0; j < n; j++) {
    const dfx_tensor *t = l->elems[idx ? idx[j] : j];
    if (t && !dfx__list_copy(out, j * inner, t, 0, inner)) return oom(ctx);
  }
  return DFX_OK;
}

static dfx_code list_stack(dfx_kctx *ctx) {
  const dfx_tlist *l = dfx__list_in(ctx, 0);
  if (!l) return DFX_EINVAL;
  int64_t want = dfx__attr_int(ctx->node, "num_elements", -1);
  if (want != -1 && want != l->n)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Operation expected a list with %lld elements but got a list with %lld elements.",
                          (long long)want, (long long)l->n);
  if (l->dtype != dfx__attr_type(ctx->node, "element_dtype", DFX_INVALID))
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Invalid data types; op elements %s but list elements %s",
                          dfx_dtype_name(dfx__attr_type(ctx->node, "element_dtype", DFX_INVALID)), dfx_dtype_name(l->dtype));
  return stack(ctx, l, NULL, l->n, 1, "TensorListStack");
}

static dfx_code list_gather(dfx_kctx *ctx) {
  const dfx_tlist *l = dfx__list_in(ctx, 0);
  if (!l) return DFX_EINVAL;
  const dfx_tensor *it = ctx->in[1];
  if (it->ndims > 1) return dfx__kctx_fail(ctx, DFX_EINVAL, "TensorListGather: indices must be a vector");
  int64_t *idx = dfx__malloc(sizeof(int64_t) * (size_t)(it->count + 1));
  if (!idx) return oom(ctx);
  for (int64_t j = 0; j < it->count; j++) idx[j] = dfx__tensor_get_i64(it, j);
  dfx_code c = stack(ctx, l, idx, it->count, 2, "TensorListGather");
  dfx__free(idx);
  return c;
}

/* Element j of tensor t sliced along dim 0 (rows [r0, r0 + rows)). */
static dfx_tensor *slice_rows(dfx_kctx *ctx, const dfx_tensor *t, int64_t r0, int64_t rows, bool keep_dim) {
  int64_t dims[DFX_MAX_DIMS];
  int rank = keep_dim ? t->ndims : t->ndims - 1;
  if (keep_dim) {
    memcpy(dims, t->dims, sizeof(int64_t) * (size_t)t->ndims);
    dims[0] = rows;
  } else {
    memcpy(dims, t->dims + 1, sizeof(int64_t) * (size_t)rank);
  }
  int64_t inner = t->dims[0] ? t->count / t->dims[0] : dfx__shape_count(t->ndims - 1, t->dims + 1);
  dfx_code c;
  dfx_tensor *e = dfx__tensor_alloc((dfx_dtype)t->dtype, rank, dims, &c);
  if (!e) {
    dfx__kctx_fail(ctx, c, "cannot allocate a list element");
    return NULL;
  }
  if (!dfx__list_copy(e, 0, t, r0 * inner, rows * inner)) {
    dfx__tensor_unref(e);
    oom(ctx);
    return NULL;
  }
  return e;
}

/* A new list (output 0) of t's dtype with element_shape input si, checked against t's rows. */
static dfx_tlist *list_for(dfx_kctx *ctx, const dfx_tensor *t, int si, const char *why) {
  int rank;
  int64_t dims[DFX_MAX_DIMS];
  if (t->ndims < 1) {
    dfx__kctx_fail(ctx, DFX_EINVAL, "%s: the tensor must be at least a vector", why);
    return NULL;
  }
  if (dfx__list_shape_in(ctx, si, &rank, dims) != DFX_OK) return NULL;
  int brank = t->ndims - 1;
  int64_t bdims[DFX_MAX_DIMS], mdims[DFX_MAX_DIMS];
  memcpy(bdims, t->dims + 1, sizeof(int64_t) * (size_t)brank);
  int mrank = rank;
  memcpy(mdims, dims, sizeof dims);
  if (dfx__list_shape_merge(ctx, &mrank, mdims, brank, bdims, why) != DFX_OK) return NULL;
  return dfx__list_out(ctx, 0, (dfx_dtype)t->dtype, rank, dims);
}

static dfx_code from_tensor(dfx_kctx *ctx) {
  const dfx_tensor *t = ctx->in[0];
  dfx_tlist *l = list_for(ctx, t, 1, "TensorListFromTensor");
  if (!l) return DFX_EINVAL;
  dfx_code c = dfx__list_resize(ctx, l, t->dims[0]);
  for (int64_t j = 0; c == DFX_OK && j < t->dims[0]; j++)
    if (!(l->elems[j] = slice_rows(ctx, t, j, 1, false))) c = DFX_ENOMEM;
  return c;
}

/* Writes rows of t to l at indices input ii (growing l when needed). */
static dfx_code scatter_into(dfx_kctx *ctx, dfx_tlist *l, const dfx_tensor *t, int ii, int64_t min_size, const char *why) {
  const dfx_tensor *it = ctx->in[ii];
  if (it->ndims > 1 || it->count != t->dims[0])
    return dfx__kctx_fail(ctx, DFX_EINVAL, "%s: %lld indices for a tensor of %lld rows", why, (long long)it->count,
                          (long long)t->dims[0]);
  int64_t size = min_size > l->n ? min_size : l->n;
  for (int64_t j = 0; j < it->count; j++) {
    int64_t e = dfx__tensor_get_i64(it, j);
    if (e < 0) return dfx__kctx_fail(ctx, DFX_EINVAL, "%s: negative index %lld", why, (long long)e);
    if (e + 1 > size) size = e + 1;
  }
  dfx_code c = dfx__list_resize(ctx, l, size);
  for (int64_t j = 0; c == DFX_OK && j < it->count; j++) {
    int64_t e = dfx__tensor_get_i64(it, j);
    dfx_tensor *row = slice_rows(ctx, t, j, 1, false);
    if (!row) return DFX_ENOMEM;
    dfx__tensor_unref(l->elems[e]);
    l->elems[e] = row;
  }
  return c;
}

static dfx_code scatter(dfx_kctx *ctx) {
  dfx_tlist *l = list_for(ctx, ctx->in[0], 2, "TensorListScatter");
  return l ? scatter_into(ctx, l, ctx->in[0], 1, 0, "TensorListScatter") : DFX_EINVAL;
}

static dfx_code scatter_v2(dfx_kctx *ctx) {
  int64_t n;
  dfx_code c = dfx__kctx_scalar_i64(ctx, 3, "num_elements", &n);
  if (c != DFX_OK) return c;
  dfx_tlist *l = list_for(ctx, ctx->in[0], 2, "TensorListScatterV2");
  if (!l) return DFX_EINVAL;
  if (n >= 0) {
    const dfx_tensor *it = ctx->in[1];
    for (int64_t j = 0; j < it->count; j++)
      if (dfx__tensor_get_i64(it, j) >= n)
        return dfx__kctx_fail(ctx, DFX_EINVAL, "TensorListScatterV2: index %lld is not below num_elements %lld",
                              (long long)dfx__tensor_get_i64(it, j), (long long)n);
  }
  return scatter_into(ctx, l, ctx->in[0], 1, n < 0 ? 0 : n, "TensorListScatterV2");
}

static dfx_code scatter_existing(dfx_kctx *ctx) {
  const dfx_tlist *in = dfx__list_in(ctx, 0);
  if (!in) return DFX_EINVAL;
  const dfx_tensor *t = ctx->in[1];
  if (t->ndims < 1) return dfx__kctx_fail(ctx, DFX_EINVAL, "TensorListScatterIntoExistingList: the tensor must be at least a vector");
  if (t->dtype != in->dtype)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Invalid data types; list elements %s but tried to add %s",
                          dfx_dtype_name(in->dtype), dfx_dtype_name((dfx_dtype)t->dtype));
  bool fits = in->rank < 0 || in->rank == t->ndims - 1;
  for (int k = 0; fits && in->rank > 0 && k < in->rank; k++) fits = in->dims[k] < 0 || in->dims[k] == t->dims[k + 1];
  if (!fits) {
    char a[160], b[160];
    return dfx__kctx_fail(ctx, DFX_EINVAL, "TensorListScatterIntoExistingList: rows of %s do not fit element shape %s",
                          dfx__shape_str(t->ndims, t->dims, b, sizeof b), dfx__list_shape_str(in->rank, in->dims, a, sizeof a));
  }
  dfx_tlist *l = dfx__list_mutable(ctx, 0, 0);
  return l ? scatter_into(ctx, l, t, 2, 0, "TensorListScatterIntoExistingList") : DFX_ENOMEM;
}

/* Concatenates every element along dim 0 (output 0) with their lengths (output 1). */
static dfx_code concat(dfx_kctx *ctx, int rank, int64_t *dims, const int64_t *leading, int n_leading) {
  const dfx_tlist *l = dfx__list_in(ctx, 0);
  if (!l) return DFX_EINVAL;
  dfx_code c = dfx__list_shape_merge(ctx, &rank, dims, l->rank, l->dims, "TensorListConcat");
  if (c != DFX_OK) return c;
  for (int64_t j = 0; j < l->n; j++) {
    const dfx_tensor *t = l->elems[j];
    if (!t) continue;
    if (t->ndims < 1) return dfx__kctx_fail(ctx, DFX_EINVAL, "TensorListConcat: element %lld is a scalar", (long long)j);
    int64_t d[DFX_MAX_DIMS];
    memcpy(d, t->dims, sizeof(int64_t) * t->ndims);
    d[0] = -1; /* lengths may differ */
    int r = rank;
    int64_t save0 = rank > 0 ? dims[0] : 0;
    if (rank > 0) dims[0] = -1;
    if ((c = dfx__list_shape_merge(ctx, &r, dims, t->ndims, d, "TensorListConcat")) != DFX_OK) return c;
    rank = r;
    dims[0] = save0;
  }
  if (rank < 1) return dfx__kctx_fail(ctx, DFX_EINVAL, "TensorListConcat: the element rank is unknown (or 0)");
  for (int k = 1; k < rank; k++)
    if (dims[k] < 0) return dfx__kctx_fail(ctx, DFX_EINVAL, "TensorListConcat: element dim %d is unknown", k);
  int64_t total = 0, n = l->n;
  dfx_tensor *lens = dfx__kctx_alloc(ctx, 1, DFX_I64, 1, &n);
  if (!lens) return DFX_ENOMEM;
  for (int64_t j = 0; j < n; j++) {
    int64_t len;
    if (l->elems[j]) len = l->elems[j]->dims[0];
    else if (j < n_leading) len = leading[j];
    else if (dims[0] >= 0) len = dims[0];
    else return dfx__kctx_fail(ctx, DFX_EINVAL, "TensorListConcat: element %lld is unset and its length unknown", (long long)j);
    ((int64_t *)lens->data)[j] = len;
    total += len;
  }
  int64_t odims[DFX_MAX_DIMS];
  memcpy(odims, dims, sizeof(int64_t) * (size_t)rank);
  odims[0] = total;
  dfx_tensor *out = dfx__kctx_alloc(ctx, 0, l->dtype, rank, odims);
  if (!out) return DFX_ENOMEM;
  if (l->dtype != DFX_STRING) memset(out->data, 0, out->nbytes);
  int64_t inner = dfx__shape_count(rank - 1, dims + 1), at = 0;
  for (int64_t j = 0; j < n; j++) {
    int64_t len = ((int64_t *)lens->data)[j];
    if (l->elems[j] && !dfx__list_copy(out, at * inner, l->elems[j], 0, len * inner)) return oom(ctx);
    at += len;
  }
  return DFX_OK;
}

static dfx_code concat_v1(dfx_kctx *ctx) {
  const dfx_shape *s = dfx__attr_shape(ctx->node, "element_shape");
  int64_t dims[DFX_MAX_DIMS] = {0};
  int rank = s ? s->rank : -1;
  if (rank > DFX_MAX_DIMS) return dfx__kctx_fail(ctx, DFX_EINVAL, "element_shape has too many dims");
  for (int k = 0; k < rank; k++) dims[k] = s->dims[k];
  return concat(ctx, rank, dims, NULL, 0);
}

static dfx_code concat_v2(dfx_kctx *ctx) {
  int rank;
  int64_t dims[DFX_MAX_DIMS] = {0};
  dfx_code c = dfx__list_shape_in(ctx, 1, &rank, dims);
  if (c != DFX_OK) return c;
  const dfx_tensor *lt = ctx->in[2];
  int64_t *lead = dfx__malloc(sizeof(int64_t) * (size_t)(lt->count + 1));
  if (!lead) return oom(ctx);
  for (int64_t j = 0; j < lt->count; j++) lead[j] = dfx__tensor_get_i64(lt, j);
  c = concat(ctx, rank, dims, lead, (int)lt->count);
  dfx__free(lead);
  return c;
}

static dfx_code split(dfx_kctx *ctx) {
  const dfx_tensor *t = ctx->in[0], *lt = ctx->in[2];
  if (t->ndims < 1) return dfx__kctx_fail(ctx, DFX_EINVAL, "TensorListSplit: the tensor must be at least a vector");
  int rank;
  int64_t dims[DFX_MAX_DIMS];
  dfx_code c = dfx__list_shape_in(ctx, 1, &rank, dims);
  if (c != DFX_OK) return c;
  int64_t sum = 0;
  for (int64_t j = 0; j < lt->count; j++) {
    int64_t v = dfx__tensor_get_i64(lt, j);
    if (v < 0) return dfx__kctx_fail(ctx, DFX_EINVAL, "TensorListSplit: negative length %lld", (long long)v);
    sum += v;
  }
  if (lt->ndims != 1 || sum != t->dims[0])
    return dfx__kctx_fail(ctx, DFX_EINVAL, "TensorListSplit: lengths sum to %lld but the tensor has %lld rows",
                          (long long)sum, (long long)t->dims[0]);
  dfx_tlist *l = dfx__list_out(ctx, 0, (dfx_dtype)t->dtype, rank, dims);
  if (!l) return DFX_ENOMEM;
  if ((c = dfx__list_resize(ctx, l, lt->count)) != DFX_OK) return c;
  int64_t at = 0;
  for (int64_t j = 0; j < lt->count; j++) {
    int64_t len = dfx__tensor_get_i64(lt, j);
    if (!(l->elems[j] = slice_rows(ctx, t, at, len, true))) return DFX_ENOMEM;
    at += len;
  }
  return DFX_OK;
}

static const dfx_kernel_def kernels[] = {
    {"TensorListStack", LIST_ELEM, list_stack, 0},
    {"TensorListGather", LIST_ELEM, list_gather, 0},
    {"TensorListFromTensor", LIST_ELEM, from_tensor, 0},
    {"TensorListScatter", LIST_ELEM, scatter, 0},
    {"TensorListScatterV2", LIST_ELEM, scatter_v2, 0},
    {"TensorListScatterIntoExistingList", LIST_ELEM, scatter_existing, 0},
    {"TensorListConcat", LIST_ELEM, concat_v1, 0},
    {"TensorListConcatV2", LIST_ELEM, concat_v2, 0},
    {"TensorListSplit", LIST_ELEM, split, 0},
    {NULL}};

void dfx__kernels_list_many(dfx_registry *r);
void dfx__kernels_list_many(dfx_registry *r) { dfx__kernels_add(r, kernels); }
