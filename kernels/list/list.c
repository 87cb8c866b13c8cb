/* list.c - the TensorList object (list.h): handles, copy-on-write, shapes. */
#include "list.h"

#include <stdio.h>
#include <string.h>

#include "alloc.h"

static void list_free(void *data, void *ud) {
  (void)data;
  dfx_tlist *l = ud;
  if (!l) return;
  for (int64_t i = 0; i < l->n; i++) dfx__tensor_unref(l->elems[i]);
  dfx__free(l->elems);
  dfx__free(l);
}

const dfx_tlist *dfx__list_in(dfx_kctx *ctx, int i) {
  const dfx_tensor *t = ctx->in[i];
  if (!t || t->dtype != DFX_VARIANT || t->count != 1 || t->dealloc != list_free || !t->dealloc_ud) {
    dfx__kctx_fail(ctx, DFX_EINVAL, "input %d is not a TensorList (a variant scalar made by a TensorList op)", i);
    return NULL;
  }
  return t->dealloc_ud;
}

static dfx_tlist *attach(dfx_kctx *ctx, int k, dfx_tlist *l) {
  dfx_tensor *t = dfx__kctx_alloc(ctx, k, DFX_VARIANT, 0, NULL);
  if (!t) {
    list_free(NULL, l);
    return NULL;
  }
  ((void **)t->data)[0] = l;
  t->dealloc = list_free;
  t->dealloc_ud = l;
  return l;
}

dfx_tlist *dfx__list_out(dfx_kctx *ctx, int k, dfx_dtype dtype, int rank, const int64_t *dims) {
  dfx_tlist *l = dfx__calloc(1, sizeof *l);
  if (!l) {
    dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory");
    return NULL;
  }
  l->dtype = dtype;
  l->rank = rank;
  l->max = -1;
  if (rank > 0) memcpy(l->dims, dims, sizeof(int64_t) * (size_t)rank);
  return attach(ctx, k, l);
}

dfx_tlist *dfx__list_mutable(dfx_kctx *ctx, int i, int k) {
  const dfx_tlist *src = dfx__list_in(ctx, i);
  if (!src) return NULL;
  dfx_tensor *own = dfx__kctx_take_unique(ctx, i);
  if (own) { /* nobody else sees it: change it in place */
    ctx->out[k] = own;
    return own->dealloc_ud;
  }
  dfx_tlist *l = dfx__list_out(ctx, k, src->dtype, src->rank, src->dims);
  if (!l) return NULL;
  l->max = src->max;
  if (dfx__list_resize(ctx, l, src->n) != DFX_OK) return NULL;
  for (int64_t j = 0; j < src->n; j++) l->elems[j] = dfx__tensor_ref(src->elems[j]);
  return l;
}

dfx_code dfx__list_resize(dfx_kctx *ctx, dfx_tlist *l, int64_t n) {
  if (n < 0) return dfx__kctx_fail(ctx, DFX_EINVAL, "a TensorList size must be >= 0, got %lld", (long long)n);
  for (int64_t j = n; j < l->n; j++) {
    dfx__tensor_unref(l->elems[j]);
    l->elems[j] = NULL;
  }
  if (n > l->cap) {
    int64_t cap = l->cap ? l->cap : 4;
    while (cap < n) cap *= 2;
    if ((size_t)cap > dfx__tensor_limit() / sizeof(void *))
      return dfx__kctx_fail(ctx, DFX_ELIMIT, "a TensorList of %lld elements is too large", (long long)n);
    dfx_tensor **e = dfx__realloc(l->elems, sizeof *e * (size_t)cap);
    if (!e) return dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory");
    memset(e + l->cap, 0, sizeof *e * (size_t)(cap - l->cap));
    l->elems = e;
    l->cap = cap;
  }
  l->n = n;
  return DFX_OK;
}

dfx_code dfx__list_shape_in(dfx_kctx *ctx, int i, int *rank, int64_t *dims) {
  const dfx_tensor *t = ctx->in[i];
  if (t->ndims == 0) {
    int64_t v = dfx__tensor_get_i64(t, 0);
    if (v != -1) return dfx__kctx_fail(ctx, DFX_EINVAL, "element_shape scalar must be -1 (unknown rank), got %lld", (long long)v);
    *rank = -1;
    return DFX_OK;
  }
  if (t->ndims != 1 || t->count > DFX_MAX_DIMS)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "element_shape must be a vector of at most %d dims", DFX_MAX_DIMS);
  *rank = (int)t->count;
  for (int k = 0; k < *rank; k++) {
    dims[k] = dfx__tensor_get_i64(t, k);
    if (dims[k] < -1) return dfx__kctx_fail(ctx, DFX_EINVAL, "element_shape dim %d is %lld", k, (long long)dims[k]);
  }
  return DFX_OK;
}

const char *dfx__list_shape_str(int rank, const int64_t *dims, char *buf, size_t n) {
  if (rank < 0) {
    snprintf(buf, n, "<unknown>");
    return buf;
  }
  size_t o = (size_t)snprintf(buf, n, "[");
  for (int k = 0; k < rank && o < n; k++) {
    if (dims[k] < 0) o += (size_t)snprintf(buf + o, n - o, k ? ",?" : "?");
    else o += (size_t)snprintf(buf + o, n - o, k ? ",%lld" : "%lld", (long long)dims[k]);
  }
  if (o < n) snprintf(buf + o, n - o, "]");
  return buf;
}

dfx_code dfx__list_shape_merge(dfx_kctx *ctx, int *rank, int64_t *dims, int brank, const int64_t *bdims,
                               const char *what) {
  if (brank < 0) return DFX_OK;
  if (*rank < 0) {
    *rank = brank;
    memcpy(dims, bdims, sizeof(int64_t) * (size_t)brank);
    return DFX_OK;
  }
  bool ok = *rank == brank;
  for (int k = 0; ok && k < brank; k++) {
    if (dims[k] >= 0 && bdims[k] >= 0 && dims[k] != bdims[k]) ok = false;
    else if (dims[k] < 0) dims[k] = bdims[k];
  }
  if (!ok) {
    char a[160], b[160];
    return dfx__kctx_fail(ctx, DFX_EINVAL, "%s: shapes %s and %s are incompatible", what,
                          dfx__list_shape_str(*rank, dims, a, sizeof a), dfx__list_shape_str(brank, bdims, b, sizeof b));
  }
  return DFX_OK;
}

bool dfx__list_shape_full(int rank, const int64_t *dims) {
  if (rank < 0) return false;
  for (int k = 0; k < rank; k++)
    if (dims[k] < 0) return false;
  return true;
}

bool dfx__list_fits(int rank, const int64_t *dims, const dfx_tensor *t) {
  if (rank < 0) return true;
  if (rank != t->ndims) return false;
  for (int k = 0; k < rank; k++)
    if (dims[k] >= 0 && dims[k] != t->dims[k]) return false;
  return true;
}

dfx_code dfx__list_check_item(dfx_kctx *ctx, const dfx_tlist *l, const dfx_tensor *t) {
  if (t->dtype != l->dtype)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Invalid data types; list elements %s but tried to add %s",
                          dfx_dtype_name(l->dtype), dfx_dtype_name((dfx_dtype)t->dtype));
  if (!dfx__list_fits(l->rank, l->dims, t)) {
    char a[160], b[160];
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Tried to add an element of shape %s to a list of element shape %s",
                          dfx__shape_str(t->ndims, t->dims, b, sizeof b), dfx__list_shape_str(l->rank, l->dims, a, sizeof a));
  }
  return DFX_OK;
}

dfx_tensor *dfx__list_zeros(dfx_kctx *ctx, dfx_dtype dtype, int rank, const int64_t *dims, const char *why) {
  if (!dfx__list_shape_full(rank, dims)) {
    char a[160];
    dfx__kctx_fail(ctx, DFX_EINVAL, "%s: the element shape %s is not fully defined, so the unset element cannot be "
                   "made of zeros", why, dfx__list_shape_str(rank, dims, a, sizeof a));
    return NULL;
  }
  dfx_code c;
  dfx_tensor *t = dfx__tensor_zeros(dtype, rank, dims, &c);
  if (!t) dfx__kctx_fail(ctx, c, "cannot allocate a zero element");
  return t;
}

bool dfx__list_copy(dfx_tensor *dst, int64_t d0, const dfx_tensor *src, int64_t s0, int64_t n) {
  if (n <= 0) return true;
  if (src->dtype != DFX_STRING) {
    size_t es = dfx__dtype_storage((dfx_dtype)src->dtype);
    memcpy((char *)dst->data + (size_t)d0 * es, (const char *)src->data + (size_t)s0 * es, (size_t)n * es);
    return true;
  }
  dfx_str *d = (dfx_str *)dst->data + d0;
  const dfx_str *s = (const dfx_str *)src->data + s0;
  for (int64_t k = 0; k < n; k++) {
    dfx__free(d[k].ptr);
    d[k] = (dfx_str){NULL, 0};
    if (!s[k].len) continue;
    if (!(d[k].ptr = dfx__malloc(s[k].len))) return false;
    memcpy(d[k].ptr, s[k].ptr, s[k].len);
    d[k].len = s[k].len;
  }
  return true;
}
