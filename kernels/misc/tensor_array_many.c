/* tensor_array_many.c - TensorArray Gather/Scatter/Concat/Split (V3 and V2).
 * Each op holds the array's mutex across all its element reads or writes, as
 * TF's ReadMany/WriteOrAggregateMany do, so a partial failure stops where TF
 * would. Outputs are packed row-major copies; inputs are sliced into new
 * tensors before they are stored. Reads stop once their bytes pass the
 * tensor byte limit, since the packed output would have to hold them all. */
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "resource.h"
#include "tensor_array.h"

static dfx_code check_read_dtype(dfx_kctx *ctx, dfx_tarray *ta) {
  dfx_dtype want = dfx__attr_type(ctx->node, "dtype", DFX_INVALID);
  if (want != ta->dtype)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "TensorArray dtype is %s but Op requested dtype %s.",
                          dfx_dtype_name(ta->dtype), dfx_dtype_name(want));
  return DFX_OK;
}

static dfx_code check_write_dtype(dfx_kctx *ctx, dfx_tarray *ta, const dfx_tensor *v) {
  if (v->dtype != ta->dtype)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "TensorArray dtype is %s but Op is trying to write dtype %s.",
                          dfx_dtype_name(ta->dtype), dfx_dtype_name((dfx_dtype)v->dtype));
  return DFX_OK;
}

/* Reads indices into vals[] (new references) under the lock. */
static dfx_code read_many(dfx_kctx *ctx, dfx_tarray *ta, const int32_t *idx, int64_t n, dfx_tensor **vals) {
  /* vals[] starts zeroed (calloc), so after a failure unref_all releases just
   * the elements read so far. */
  size_t bytes = 0, limit = dfx__tensor_limit();
  uv_mutex_lock(&ta->mu);
  dfx_code c = check_read_dtype(ctx, ta);
  for (int64_t i = 0; c == DFX_OK && i < n; i++) {
    c = dfx__ta_read(ctx, ta, idx[i], &vals[i]);
    if (c == DFX_OK && (bytes += vals[i]->nbytes) > limit)
      c = dfx__kctx_fail(ctx, DFX_ELIMIT, "TensorArray %s: reading %lld elements needs over %zu bytes, over the tensor "
                         "byte limit", ta->name, (long long)n, bytes);
  }
  uv_mutex_unlock(&ta->mu);
  return c;
}

static void unref_all(dfx_tensor **v, int64_t n) {
  for (int64_t i = 0; i < n; i++) dfx__tensor_unref(v[i]);
  dfx__free(v);
}

/* Output k = [0] + shape, where shape must be fully defined. */
static dfx_code empty_out(dfx_kctx *ctx, int k, dfx_dtype dt, const dfx_shape *s) {
  int64_t dims[DFX_MAX_DIMS];
  if (s->rank + 1 > DFX_MAX_DIMS) return dfx__kctx_fail(ctx, DFX_EINVAL, "element shape has too many dimensions");
  dims[0] = 0;
  if (s->rank > 0) memcpy(dims + 1, s->dims, sizeof(int64_t) * (size_t)s->rank);
  return dfx__kctx_alloc(ctx, k, dt, s->rank + 1, dims) ? DFX_OK : ctx->st->code;
}

static dfx_code ta_gather_kernel(dfx_kctx *ctx) {
  char b1[256], b2[256];
  dfx_tarray *ta = dfx__ta_get(ctx, 0);
  if (!ta) return ctx->st->code;
  const dfx_tensor *it = ctx->in[1];
  if (it->ndims != 1 || it->dtype != DFX_I32)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Expected indices to be a vector, but received shape: %s",
                          DFX_SHAPE_STR(it, b1));
  const dfx_shape *es = dfx__attr_shape(ctx->node, "element_shape");
  dfx_shape unknown = {-1, NULL};
  if (!es) es = &unknown;
  int64_t n = it->count;
  /* No element to take a shape from: the output [0] + element_shape needs a
   * fully defined element_shape, TF's rule. */
  if (n == 0) {
    if (!dfx__ta_fully_defined(es)) {
      /* Beyond TF: fall back to the array's own (possibly inferred) element shape. */
      uv_mutex_lock(&ta->mu);
      dfx_code c = check_read_dtype(ctx, ta);
      int64_t dims[DFX_MAX_DIMS];
      /* A copy of the shape, taken under the lock: a write may replace
       * ta->eshape.dims once the lock is released. */
      dfx_shape own = {ta->eshape.rank, dims};
      if (own.rank > 0) memcpy(dims, ta->eshape.dims, sizeof(int64_t) * (size_t)own.rank);
      uv_mutex_unlock(&ta->mu);
      if (c != DFX_OK) return c;
      if (!dfx__ta_fully_defined(&own))
        return dfx__kctx_fail(ctx, DFX_EUNIMPL,
                              "TensorArray has size zero, but element shape %s is not fully defined. Currently only "
                              "static shapes are supported when packing zero-size TensorArrays.",
                              dfx__ta_pshape_str(es, b1, sizeof b1));
      return empty_out(ctx, 0, ta->dtype, &own);
    }
    return empty_out(ctx, 0, dfx__attr_type(ctx->node, "dtype", DFX_INVALID), es);
  }
  dfx_tensor **vals = dfx__calloc((size_t)n, sizeof *vals);
  if (!vals) return dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory");
  dfx_code c = read_many(ctx, ta, it->data, n, vals);
  if (c != DFX_OK) {
    unref_all(vals, n);
    return c;
  }
  const dfx_tensor *v0 = vals[0];
  if (!dfx__ta_compatible(es, v0->ndims, v0->dims)) {
    c = dfx__kctx_fail(ctx, DFX_EINVAL, "TensorArray was passed element_shape %s which does not match the Tensor at index 0: %s",
                       dfx__ta_pshape_str(es, b1, sizeof b1), DFX_SHAPE_STR(v0, b2));
  } else if (v0->ndims + 1 > DFX_MAX_DIMS) {
    c = dfx__kctx_fail(ctx, DFX_EINVAL, "TensorArray elements have too many dimensions to stack");
  }
  for (int64_t i = 1; c == DFX_OK && i < n; i++)
    if (!dfx__tensor_same_shape(v0, vals[i]))
      c = dfx__kctx_fail(ctx, DFX_EINVAL,
                         "TensorArray has inconsistent shapes.  Index 0 has shape: %s but index %lld has shape: %s",
                         DFX_SHAPE_STR(v0, b1), (long long)i, DFX_SHAPE_STR(vals[i], b2));
  dfx_tensor *out = NULL;
  if (c == DFX_OK) {
    int64_t dims[DFX_MAX_DIMS];
    dims[0] = n;
    memcpy(dims + 1, v0->dims, sizeof(int64_t) * v0->ndims);
    out = dfx__kctx_alloc(ctx, 0, (dfx_dtype)v0->dtype, v0->ndims + 1, dims);
    if (!out) c = ctx->st->code;
  }
  for (int64_t i = 0; c == DFX_OK && i < n; i++)
    if ((c = dfx__kctx_poll(ctx)) == DFX_OK && !dfx__misc_copy_elems(out, i * v0->count, vals[i], 0, v0->count))
      c = dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory");
  unref_all(vals, n);
  return c;
}

/* Slice rows [r0, r0 + nrows) of v (dim 0) into a new tensor. */
static dfx_tensor *slice_rows(const dfx_tensor *v, int64_t r0, int64_t nrows) {
  int64_t dims[DFX_MAX_DIMS];
  memcpy(dims, v->dims, sizeof(int64_t) * v->ndims);
  dims[0] = nrows;
  dfx_tensor *t = dfx__tensor_alloc((dfx_dtype)v->dtype, v->ndims, dims, NULL);
  if (!t) return NULL;
  /* Elements per row of dim 0; an empty dim 0 has no rows to copy. */
  int64_t row = v->dims[0] ? v->count / v->dims[0] : 0;
  if (!dfx__misc_copy_elems(t, 0, v, r0 * row, nrows * row)) {
    dfx__tensor_unref(t);
    return NULL;
  }
  return t;
}

/* Writes slices of v: element idx[i] gets rows [starts[i], starts[i] + lens[i]),
 * reshaped to drop dim 0 when drop0. */
static dfx_code write_slices(dfx_kctx *ctx, dfx_tarray *ta, const dfx_tensor *v, int64_t n, const int32_t *idx,
                             const int64_t *starts, const int64_t *lens, bool drop0) {
  dfx_code c = DFX_OK;
  uv_mutex_lock(&ta->mu);
  for (int64_t i = 0; c == DFX_OK && i < n; i++) {
    dfx_tensor *s = slice_rows(v, starts[i], lens[i]);
    if (s && drop0) {
      s->ndims--;
      memmove(s->dims, s->dims + 1, sizeof(int64_t) * s->ndims);
    }
    if (!s)
      c = dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory slicing a TensorArray value");
    else
      c = dfx__ta_write(ctx, ta, idx ? idx[i] : i, s);
    /* dfx__ta_write took its own reference; this one was only the slice's. */
    dfx__tensor_unref(s);
  }
  uv_mutex_unlock(&ta->mu);
  return c;
}

static dfx_code ta_scatter_kernel(dfx_kctx *ctx) {
  char b1[256];
  dfx_tarray *ta = dfx__ta_get(ctx, 0);
  if (!ta) return ctx->st->code;
  const dfx_tensor *it = ctx->in[1], *v = ctx->in[2];
  uv_mutex_lock(&ta->mu);
  dfx_code c = check_write_dtype(ctx, ta, v);
  uv_mutex_unlock(&ta->mu);
  if (c != DFX_OK) return c;
  if (v->ndims < 1)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Input value for unpack must be at least a vector but received shape: %s",
                          DFX_SHAPE_STR(v, b1));
  if (it->ndims != 1 || it->dtype != DFX_I32)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Expected indices to be a vector, but received shape: %s",
                          DFX_SHAPE_STR(it, b1));
  int64_t n = it->count;
  if (n != v->dims[0])
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Expected len(indices) == values.shape[0], but saw: %lld vs. %lld",
                          (long long)n, (long long)v->dims[0]);
  int64_t *starts = dfx__malloc(sizeof(int64_t) * (size_t)(2 * n + 1));
  if (!starts) return dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory");
  int64_t *lens = starts + n;
  for (int64_t i = 0; i < n; i++) {
    starts[i] = i;
    lens[i] = 1;
  }
  /* Scatter stores single rows without their dim 0 (an unstack); Split below
   * keeps dim 0, as its pieces are runs of rows of any length. */
  c = write_slices(ctx, ta, v, n, it->data, starts, lens, true);
  dfx__free(starts);
  if (c != DFX_OK) return c;
  dfx__kctx_forward(ctx, 3, 0);
  return DFX_OK;
}

static dfx_code ta_concat_kernel(dfx_kctx *ctx) {
  char b1[256], b2[256];
  dfx_tarray *ta = dfx__ta_get(ctx, 0);
  if (!ta) return ctx->st->code;
  uv_mutex_lock(&ta->mu);
  dfx_code c = check_read_dtype(ctx, ta);
  if (c == DFX_OK) c = dfx__ta_check_open(ctx, ta);
  /* The size is sampled under the lock; elements are read under it again in
   * read_many, where a concurrent close is caught. */
  int64_t n = ta->size;
  uv_mutex_unlock(&ta->mu);
  if (c != DFX_OK) return c;
  if (n == 0) {
    const dfx_shape *es = dfx__attr_shape(ctx->node, "element_shape_except0");
    dfx_shape unknown = {-1, NULL};
    if (!es) es = &unknown;
    if (!dfx__ta_fully_defined(es))
      return dfx__kctx_fail(ctx, DFX_EUNIMPL,
                            "TensorArray has size zero, but element_shape_except0 %s is not fully defined. Currently "
                            "only static shapes are supported when concatenating zero-size TensorArrays.",
                            dfx__ta_pshape_str(es, b1, sizeof b1));
    c = empty_out(ctx, 0, ta->dtype, es);
    if (c != DFX_OK) return c;
    int64_t zero = 0;
    return dfx__kctx_alloc(ctx, 1, DFX_I64, 1, &zero) ? DFX_OK : ctx->st->code;
  }
  dfx_tensor **vals = dfx__calloc((size_t)n, sizeof *vals);
  int32_t *idx = dfx__malloc(sizeof(int32_t) * (size_t)n);
  if (!vals || !idx) {
    dfx__free(vals);
    dfx__free(idx);
    return dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory");
  }
  /* Concat reads every element in order; n fits int32 as array sizes do. */
  for (int64_t i = 0; i < n; i++) idx[i] = (int32_t)i;
  c = read_many(ctx, ta, idx, n, vals);
  dfx__free(idx);
  dfx_tensor *lengths = c == DFX_OK ? dfx__kctx_alloc(ctx, 1, DFX_I64, 1, &n) : NULL;
  if (c == DFX_OK && !lengths) c = ctx->st->code;
  const dfx_tensor *v0 = vals[0];
  int64_t total = 0;
  for (int64_t i = 0; c == DFX_OK && i < n; i++) {
    const dfx_tensor *v = vals[i];
    if (v->ndims < 1) {
      c = dfx__kctx_fail(ctx, DFX_EINVAL,
                         "Concat saw a scalar shape at index %lld but requires at least vectors.  Did you mean to call "
                         "TensorArray.pack?",
                         (long long)i);
      break;
    }
    /* Elements may differ in dim 0 only: that is the axis they join along. */
    if (v->ndims != v0->ndims || memcmp(v->dims + 1, v0->dims + 1, sizeof(int64_t) * (v->ndims - 1)) != 0)
      c = dfx__kctx_fail(ctx, DFX_EINVAL,
                         "TensorArray has inconsistent shapes.  Index 0 has (excepting dimension 0) shape: %s but "
                         "index %lld has (excepting dimension 0) shape: %s",
                         dfx__shape_str(v0->ndims - 1, v0->dims + 1, b1, sizeof b1), (long long)i,
                         dfx__shape_str(v->ndims - 1, v->dims + 1, b2, sizeof b2));
    ((int64_t *)lengths->data)[i] = v->dims[0];
    if (c == DFX_OK && __builtin_add_overflow(total, v->dims[0], &total))
      c = dfx__kctx_fail(ctx, DFX_EINVAL, "TensorArray elements' dimension 0 sizes overflow int64 at index %lld",
                         (long long)i);
  }
  if (c == DFX_OK) {
    int64_t dims[DFX_MAX_DIMS];
    memcpy(dims, v0->dims, sizeof(int64_t) * v0->ndims);
    dims[0] = total;
    dfx_tensor *out = dfx__kctx_alloc(ctx, 0, ta->dtype, v0->ndims, dims);
    if (!out) c = ctx->st->code;
    int64_t off = 0;
    for (int64_t i = 0; c == DFX_OK && i < n; i++) {
      if ((c = dfx__kctx_poll(ctx)) == DFX_OK && !dfx__misc_copy_elems(out, off, vals[i], 0, vals[i]->count))
        c = dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory");
      off += vals[i]->count;
    }
  }
  unref_all(vals, n);
  return c;
}

static dfx_code ta_split_kernel(dfx_kctx *ctx) {
  char b1[256];
  dfx_tarray *ta = dfx__ta_get(ctx, 0);
  if (!ta) return ctx->st->code;
  const dfx_tensor *v = ctx->in[1], *lt = ctx->in[2];
  uv_mutex_lock(&ta->mu);
  dfx_code c = check_write_dtype(ctx, ta, v);
  if (c == DFX_OK) c = dfx__ta_check_open(ctx, ta);
  int64_t size = ta->size;
  bool dyn = ta->dynamic_size;
  uv_mutex_unlock(&ta->mu);
  if (c != DFX_OK) return c;
  if (lt->ndims != 1 || lt->dtype != DFX_I64)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Expected lengths to be a vector, received shape: %s", DFX_SHAPE_STR(lt, b1));
  int64_t n = lt->count;
  const int64_t *lens = lt->data;
  int64_t total = 0;
  for (int64_t i = 0; i < n; i++) {
    if (lens[i] < 0 || __builtin_add_overflow(total, lens[i], &total))
      return dfx__kctx_fail(ctx, DFX_EINVAL, "Expected lengths to be non-negative, but lengths[%lld] = %lld",
                            (long long)i, (long long)lens[i]);
  }
  if (v->ndims < 1)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Expected value to be at least a vector, but received shape: %s",
                          DFX_SHAPE_STR(v, b1));
  if (total != v->dims[0])
    return dfx__kctx_fail(ctx, DFX_EINVAL,
                          "Expected sum of lengths to be equal to values.shape[0], but sum of lengths is %lld and "
                          "value's shape is: %s",
                          (long long)total, DFX_SHAPE_STR(v, b1));
  /* Only a dynamic array may take more pieces than its size; a fixed one
   * must match exactly (TF). */
  if (dyn && size < n) size = n;
  if (size != n)
    return dfx__kctx_fail(ctx, DFX_EINVAL,
                          "TensorArray's size is not equal to the size of lengths (%lld vs. %lld), and the "
                          "TensorArray is not marked as dynamically resizeable",
                          (long long)size, (long long)n);
  int64_t *starts = dfx__malloc(sizeof(int64_t) * (size_t)(n + 1));
  if (!starts) return dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory");
  int64_t off = 0;
  for (int64_t i = 0; i < n; i++) {
    starts[i] = off;
    off += lens[i];
  }
  c = write_slices(ctx, ta, v, n, NULL, starts, lens, false);
  dfx__free(starts);
  if (c != DFX_OK) return c;
  dfx__kctx_forward(ctx, 3, 0);
  return DFX_OK;
}

static const dfx_kernel_def kernels[] = {
    /* Not CHEAP, unlike the single-element ops: these copy whole arrays. */
    {"TensorArrayGatherV3", TA_DTYPE, ta_gather_kernel, DFX_KERNEL_STATEFUL, dfx__ta_init, NULL},
    {"TensorArrayGatherV2", TA_DTYPE, ta_gather_kernel, DFX_KERNEL_STATEFUL, dfx__ta_init, NULL},
    {"TensorArrayScatterV3", TA_T, ta_scatter_kernel, DFX_KERNEL_STATEFUL, NULL, NULL},
    {"TensorArrayScatterV2", TA_T, ta_scatter_kernel, DFX_KERNEL_STATEFUL, NULL, NULL},
    {"TensorArrayConcatV3", TA_DTYPE, ta_concat_kernel, DFX_KERNEL_STATEFUL, dfx__ta_init, NULL},
    {"TensorArrayConcatV2", TA_DTYPE, ta_concat_kernel, DFX_KERNEL_STATEFUL, dfx__ta_init, NULL},
    {"TensorArraySplitV3", TA_T, ta_split_kernel, DFX_KERNEL_STATEFUL, NULL, NULL},
    {"TensorArraySplitV2", TA_T, ta_split_kernel, DFX_KERNEL_STATEFUL, NULL, NULL},
    {NULL}};

void dfx__kernels_misc_tensor_array_many(dfx_registry *r);
void dfx__kernels_misc_tensor_array_many(dfx_registry *r) { dfx__kernels_add(r, kernels); }
