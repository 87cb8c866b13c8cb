/* list_ops.c - TensorList kernels on single elements: creation (Empty,
 * Reserve), Length, ElementShape, SetItem, GetItem, PushBack, PopBack,
 * Resize. Unset elements read as zeros of the element shape, which must
 * then be fully known (TF's rule). */
#include <string.h>

#include "list.h"

static dfx_code empty_list(dfx_kctx *ctx) {
  int rank;
  int64_t dims[DFX_MAX_DIMS], max;
  dfx_code c = dfx__list_shape_in(ctx, 0, &rank, dims);
  if (c == DFX_OK) c = dfx__kctx_scalar_i64(ctx, 1, "max_num_elements", &max);
  if (c != DFX_OK) return c;
  if (max < -1) return dfx__kctx_fail(ctx, DFX_EINVAL, "max_num_elements must be -1 or >= 0, got %lld", (long long)max);
  dfx_tlist *l = dfx__list_out(ctx, 0, dfx__attr_type(ctx->node, "element_dtype", DFX_INVALID), rank, dims);
  if (!l) return ctx->st ? ctx->st->code : DFX_ENOMEM;
  l->max = max;
  return DFX_OK;
}

static dfx_code reserve(dfx_kctx *ctx) {
  int rank;
  int64_t dims[DFX_MAX_DIMS], n;
  dfx_code c = dfx__list_shape_in(ctx, 0, &rank, dims);
  if (c == DFX_OK) c = dfx__kctx_scalar_i64(ctx, 1, "num_elements", &n);
  if (c != DFX_OK) return c;
  /* TF reads -1 as an empty list of unknown size. */
  if (n < -1) return dfx__kctx_fail(ctx, DFX_EINVAL, "The num_elements to reserve must be a non negative number, but got %lld", (long long)n);
  dfx_tlist *l = dfx__list_out(ctx, 0, dfx__attr_type(ctx->node, "element_dtype", DFX_INVALID), rank, dims);
  if (!l) return DFX_ENOMEM;
  return dfx__list_resize(ctx, l, n < 0 ? 0 : n);
}

static dfx_code length(dfx_kctx *ctx) {
  const dfx_tlist *l = dfx__list_in(ctx, 0);
  if (!l) return DFX_EINVAL;
  dfx_tensor *t = dfx__kctx_alloc(ctx, 0, DFX_I32, 0, NULL);
  if (!t) return DFX_ENOMEM;
  *(int32_t *)t->data = (int32_t)l->n;
  return DFX_OK;
}

static dfx_code element_shape(dfx_kctx *ctx) {
  const dfx_tlist *l = dfx__list_in(ctx, 0);
  if (!l) return DFX_EINVAL;
  dfx_dtype st = dfx__attr_type(ctx->node, "shape_type", DFX_I32);
  int64_t n = l->rank;
  dfx_tensor *t = l->rank < 0 ? dfx__kctx_alloc(ctx, 0, st, 0, NULL) : dfx__kctx_alloc(ctx, 0, st, 1, &n);
  if (!t) return DFX_ENOMEM;
  for (int k = 0; k < (l->rank < 0 ? 1 : l->rank); k++) {
    int64_t v = l->rank < 0 ? -1 : l->dims[k];
    if (st == DFX_I32) ((int32_t *)t->data)[k] = (int32_t)v;
    else ((int64_t *)t->data)[k] = v;
  }
  return DFX_OK;
}

static dfx_code set_item(dfx_kctx *ctx) {
  int64_t idx;
  dfx_code c = dfx__kctx_scalar_i64(ctx, 1, "index", &idx);
  if (c != DFX_OK) return c;
  const dfx_tlist *in = dfx__list_in(ctx, 0);
  if (!in) return DFX_EINVAL;
  if ((c = dfx__list_check_item(ctx, in, ctx->in[2])) != DFX_OK) return c;
  bool grow = dfx__attr_bool(ctx->node, "resize_if_index_out_of_bounds", false);
  if (idx < 0 || (idx >= in->n && !grow))
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Trying to modify element %lld in a list with %lld elements.", (long long)idx,
                          (long long)in->n);
  dfx_tlist *l = dfx__list_mutable(ctx, 0, 0);
  if (!l) return DFX_ENOMEM;
  if (idx >= l->n && (c = dfx__list_resize(ctx, l, idx + 1)) != DFX_OK) return c;
  dfx__tensor_unref(l->elems[idx]);
  l->elems[idx] = dfx__tensor_ref(ctx->in[2]);
  return DFX_OK;
}

/* The element, or zeros of the list's shape merged with element_shape input `si`. */
static dfx_code read_elem(dfx_kctx *ctx, const dfx_tlist *l, int64_t idx, int si, int k, const char *why) {
  if (l->elems[idx]) {
    ctx->out[k] = dfx__tensor_ref(l->elems[idx]);
    return DFX_OK;
  }
  int rank = l->rank, brank;
  int64_t dims[DFX_MAX_DIMS], bdims[DFX_MAX_DIMS];
  memcpy(dims, l->dims, sizeof dims);
  dfx_code c = dfx__list_shape_in(ctx, si, &brank, bdims);
  if (c == DFX_OK) c = dfx__list_shape_merge(ctx, &rank, dims, brank, bdims, why);
  if (c != DFX_OK) return c;
  return (ctx->out[k] = dfx__list_zeros(ctx, l->dtype, rank, dims, why)) ? DFX_OK : DFX_EINVAL;
}

static dfx_code get_item(dfx_kctx *ctx) {
  int64_t idx;
  dfx_code c = dfx__kctx_scalar_i64(ctx, 1, "index", &idx);
  if (c != DFX_OK) return c;
  const dfx_tlist *l = dfx__list_in(ctx, 0);
  if (!l) return DFX_EINVAL;
  if (l->dtype != dfx__attr_type(ctx->node, "element_dtype", DFX_INVALID))
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Invalid data types; op elements %s but list elements %s",
                          dfx_dtype_name(dfx__attr_type(ctx->node, "element_dtype", DFX_INVALID)), dfx_dtype_name(l->dtype));
  if (idx < 0 || idx >= l->n)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Trying to access element %lld in a list with %lld elements.", (long long)idx,
                          (long long)l->n);
  return read_elem(ctx, l, idx, 2, 0, "TensorListGetItem");
}

static dfx_code push_back(dfx_kctx *ctx) {
  const dfx_tlist *in = dfx__list_in(ctx, 0);
  if (!in) return DFX_EINVAL;
  dfx_code c = dfx__list_check_item(ctx, in, ctx->in[1]);
  if (c != DFX_OK) return c;
  if (in->max >= 0 && in->n >= in->max)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Tried to push item into a full list; list size: %lld, max_num_elements: %lld",
                          (long long)in->n, (long long)in->max);
  dfx_tlist *l = dfx__list_mutable(ctx, 0, 0);
  if (!l) return DFX_ENOMEM;
  if ((c = dfx__list_resize(ctx, l, l->n + 1)) != DFX_OK) return c;
  l->elems[l->n - 1] = dfx__tensor_ref(ctx->in[1]);
  return DFX_OK;
}

static dfx_code pop_back(dfx_kctx *ctx) {
  const dfx_tlist *in = dfx__list_in(ctx, 0);
  if (!in) return DFX_EINVAL;
  if (in->n == 0) return dfx__kctx_fail(ctx, DFX_EINVAL, "Trying to pop from an empty list.");
  dfx_code c = read_elem(ctx, in, in->n - 1, 1, 1, "TensorListPopBack");
  if (c != DFX_OK) return c;
  dfx_tlist *l = dfx__list_mutable(ctx, 0, 0);
  if (!l) return DFX_ENOMEM;
  return dfx__list_resize(ctx, l, l->n - 1);
}

static dfx_code resize(dfx_kctx *ctx) {
  int64_t n;
  dfx_code c = dfx__kctx_scalar_i64(ctx, 1, "size", &n);
  if (c != DFX_OK) return c;
  if (n < 0) return dfx__kctx_fail(ctx, DFX_EINVAL, "TensorListSlice expects size to be non-negative. Got: %lld", (long long)n);
  if (!dfx__list_in(ctx, 0)) return DFX_EINVAL;
  dfx_tlist *l = dfx__list_mutable(ctx, 0, 0);
  if (!l) return DFX_ENOMEM;
  return dfx__list_resize(ctx, l, n);
}

static const dfx_kernel_def kernels[] = {
    {"EmptyTensorList", LIST_ELEM, empty_list, DFX_KERNEL_CHEAP},
    {"TensorListReserve", LIST_ELEM, reserve, DFX_KERNEL_CHEAP},
    {"TensorListLength", NULL, length, DFX_KERNEL_CHEAP},
    {"TensorListElementShape", NULL, element_shape, DFX_KERNEL_CHEAP},
    {"TensorListSetItem", LIST_ELEM, set_item, DFX_KERNEL_CHEAP},
    {"TensorListGetItem", LIST_ELEM, get_item, DFX_KERNEL_CHEAP},
    {"TensorListPushBack", LIST_ELEM, push_back, DFX_KERNEL_CHEAP},
    {"TensorListPopBack", LIST_ELEM, pop_back, DFX_KERNEL_CHEAP},
    {"TensorListResize", NULL, resize, DFX_KERNEL_CHEAP},
    {NULL}};

void dfx__kernels_list_ops(dfx_registry *r);
void dfx__kernels_list_ops(dfx_registry *r) { dfx__kernels_add(r, kernels); }
