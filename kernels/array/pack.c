/* pack.c - Pack, Unpack, ConcatV2, Concat, ParallelConcat, Split, SplitV.
 * All are row-major block copies: an outer loop over the dims before the axis
 * and one contiguous run per input (or output) inside it. */
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "autil.h"


/* Pack's output and Unpack's input have rank at most DFX_MAX_DIMS. */
static dfx_code axis_init(const dfx_node *n, void **state, dfx_status *st) {
  (void)state;
  return dfx__arr_attr_range(n, "axis", -DFX_MAX_DIMS, DFX_MAX_DIMS - 1, st);
}

static dfx_code pack_kernel(dfx_kctx *ctx) {
  int n = ctx->n_in;
  if (n < 1) return dfx__kctx_fail(ctx, DFX_EINVAL, "Pack needs at least one value, got %d", n);
  const dfx_tensor *x0 = ctx->in[0];
  int r = x0->ndims;
  int64_t axis = dfx__attr_int(ctx->node, "axis", 0);
  /* Pack adds a dim, so the axis ranges over the output's r + 1 dims. */
  if (axis < -(r + 1) || axis >= r + 1)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "axis = %lld not in [%d, %d)", (long long)axis, -(r + 1), r + 1);
  if (axis < 0) axis += r + 1;
  if (r + 1 > DFX_MAX_DIMS) return dfx__kctx_fail(ctx, DFX_EINVAL, "Pack output rank %d too large", r + 1);
  for (int i = 1; i < n; i++)
    if (!dfx__tensor_same_shape(x0, ctx->in[i])) {
      char a[128], b[128];
      return dfx__kctx_fail(ctx, DFX_EINVAL, "Shapes of all inputs must match: values[0].shape = %s != values[%d].shape = %s",
                            DFX_SHAPE_STR(x0, a), i, DFX_SHAPE_STR(ctx->in[i], b));
    }
  int64_t od[DFX_MAX_DIMS];
  for (int i = 0, j = 0; i <= r; i++) od[i] = i == axis ? n : x0->dims[j++];
  dfx_tensor *y = dfx__kctx_alloc(ctx, 0, (dfx_dtype)x0->dtype, r + 1, od);
  if (!y) return DFX_ENOMEM;
  /* The output is [outer, n, inner] in row-major order: block o of input i
   * lands at (o * n + i) * inner. */
  int64_t outer = dfx__arr_prod(x0->dims, 0, (int)axis), inner = dfx__arr_prod(x0->dims, (int)axis, r), work = 0;
  if (inner == 0) return DFX_OK;
  for (int64_t o = 0; o < outer; o++)
    for (int i = 0; i < n; i++) {
      dfx_code c = dfx__arr_copy(ctx, y, (o * n + i) * inner, ctx->in[i], o * inner, inner);
      if (c || (c = dfx__arr_tick(ctx, &work, inner))) return c;
    }
  return DFX_OK;
}

static dfx_code unpack_kernel(dfx_kctx *ctx) {
  const dfx_tensor *x = ctx->in[0];
  int r = x->ndims;
  int64_t axis = dfx__attr_int(ctx->node, "axis", 0);
  if (axis < -r || axis >= r) return dfx__kctx_fail(ctx, DFX_EINVAL, "axis = %lld not in [%d, %d)", (long long)axis, -r, r);
  if (axis < 0) axis += r;
  int n = ctx->n_out;
  /* n is the op's num attr (its output count): it must match the dim
   * unpacked. */
  if (x->dims[axis] != n) {
    char b[128];
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Input shape axis %lld must equal %d, got shape %s", (long long)axis, n,
                          DFX_SHAPE_STR(x, b));
  }
  int64_t od[DFX_MAX_DIMS];
  for (int i = 0, j = 0; i < r; i++)
    if (i != axis) od[j++] = x->dims[i];
  /* The inverse of Pack: output k takes block (o * n + k) of [outer, n, inner]. */
  int64_t outer = dfx__arr_prod(x->dims, 0, (int)axis), inner = dfx__arr_prod(x->dims, (int)axis + 1, r), work = 0;
  for (int k = 0; k < n; k++) {
    dfx_tensor *y = dfx__kctx_alloc(ctx, k, (dfx_dtype)x->dtype, r - 1, od);
    if (!y) return DFX_ENOMEM;
    for (int64_t o = 0; o < outer && inner; o++) {
      dfx_code c = dfx__arr_copy(ctx, y, o * inner, x, (o * n + k) * inner, inner);
      if (c || (c = dfx__arr_tick(ctx, &work, inner))) return c;
    }
  }
  return DFX_OK;
}

/* Concatenates xs[0..n) along axis (already read, possibly negative). */
static dfx_code concat(dfx_kctx *ctx, dfx_tensor *const *xs, int n, int64_t axis) {
  /* Import enforces N's minimum; a hand-built node must still not make us
   * read past the inputs. */
  if (n < 1) return dfx__kctx_fail(ctx, DFX_EINVAL, "ConcatOp : needs at least one value, got %d", n);
  const dfx_tensor *x0 = xs[0];
  int r = x0->ndims;
  bool legacy = r == 0 && axis == 0; /* scalars concatenate as 1-vectors */
  int er = legacy ? 1 : r;
  if (!legacy && (axis < -r || axis >= r)) {
    if (r == 0) return dfx__kctx_fail(ctx, DFX_EINVAL, "ConcatOp : Can't concatenate scalars (use tf.stack instead)");
    return dfx__kctx_fail(ctx, DFX_EINVAL, "ConcatOp : Expected concatenating dimensions in the range [%d, %d), but got %lld",
                          -r, r, (long long)axis);
  }
  if (axis < 0) axis += r;
  int64_t od[DFX_MAX_DIMS];
  if (legacy) od[0] = 0;
  else memcpy(od, x0->dims, sizeof(int64_t) * (size_t)r);
  od[axis] = 0;
  for (int i = 0; i < n; i++) {
    const dfx_tensor *x = xs[i];
    char a[128], b[128];
    if (x->ndims != r)
      return dfx__kctx_fail(ctx, DFX_EINVAL, "ConcatOp : Ranks of all input tensors should match: shape[0] = %s vs. shape[%d] = %s",
                            DFX_SHAPE_STR(x0, a), i, DFX_SHAPE_STR(x, b));
    for (int d = 0; d < r; d++)
      if (d != axis && x->dims[d] != x0->dims[d])
        return dfx__kctx_fail(ctx, DFX_EINVAL, "ConcatOp : Dimensions of inputs should match: shape[0] = %s vs. shape[%d] = %s",
                              DFX_SHAPE_STR(x0, a), i, DFX_SHAPE_STR(x, b));
    /* Empty inputs can have huge axis dims that sum past int64. */
    if (__builtin_add_overflow(od[axis], legacy ? 1 : x->dims[axis], &od[axis]))
      return dfx__kctx_fail(ctx, DFX_EINVAL, "ConcatOp : the concatenated dimension overflows int64");
  }
  dfx_tensor *y = dfx__kctx_alloc(ctx, 0, (dfx_dtype)x0->dtype, er, od);
  if (!y) return DFX_ENOMEM;
  int64_t outer = dfx__arr_prod(od, 0, (int)axis);
  int64_t off = 0, work = 0;
  for (int64_t o = 0; o < outer; o++)
    for (int i = 0; i < n; i++) {
      /* Input i contributes its dims[axis] * inner elements per outer index;
       * outputs are written strictly in order, so off just advances. */
      int64_t run = xs[i]->count / (outer ? outer : 1);
      dfx_code c = dfx__arr_copy(ctx, y, off, xs[i], o * run, run);
      if (c || (c = dfx__arr_tick(ctx, &work, run + 1))) return c;
      off += run;
    }
  return DFX_OK;
}

static dfx_code concat_axis(dfx_kctx *ctx, int i, int64_t *axis) {
  if (i < 0 || i >= ctx->n_in) return dfx__kctx_fail(ctx, DFX_EINVAL, "ConcatOp : no concat_dim input");
  const dfx_tensor *t = ctx->in[i];
  /* A one-element vector is accepted as well as a scalar. */
  if (t->ndims != 0 && !(t->ndims == 1 && t->count == 1)) {
    char b[128];
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Concat dim tensor should be a scalar integer, but got shape %s",
                          DFX_SHAPE_STR(t, b));
  }
  return dfx__kctx_scalar_i64(ctx, i, "concat_dim", axis);
}

static dfx_code concatv2_kernel(dfx_kctx *ctx) {
  int64_t axis;
  if (concat_axis(ctx, ctx->n_in - 1, &axis)) return DFX_EINVAL;
  return concat(ctx, ctx->in, ctx->n_in - 1, axis);
}

static dfx_code concat_kernel(dfx_kctx *ctx) {
  int64_t axis;
  if (concat_axis(ctx, 0, &axis)) return DFX_EINVAL;
  return concat(ctx, ctx->in + 1, ctx->n_in - 1, axis);
}

static dfx_code parallel_concat_kernel(dfx_kctx *ctx) {
  for (int i = 0; i < ctx->n_in; i++)
    if (ctx->in[i]->ndims == 0 || ctx->in[i]->dims[0] != 1) {
      char b[128];
      return dfx__kctx_fail(ctx, DFX_EINVAL, "ParallelConcat input %d must have first dimension 1, got %s", i,
                            DFX_SHAPE_STR(ctx->in[i], b));
    }
  return concat(ctx, ctx->in, ctx->n_in, 0);
}

/* Splits x along axis into outputs of sizes[k] (validated by the caller). */
static dfx_code split_out(dfx_kctx *ctx, const dfx_tensor *x, int axis, const int64_t *sizes) {
  int r = x->ndims;
  int64_t outer = dfx__arr_prod(x->dims, 0, axis), inner = dfx__arr_prod(x->dims, axis + 1, r);
  /* Each outer index holds one row of dims[axis] * inner elements; output k
   * takes sizes[k] * inner of them, starting where output k - 1 stopped. */
  int64_t row = x->dims[axis] * inner, start = 0, work = 0;
  for (int k = 0; k < ctx->n_out; k++) {
    int64_t od[DFX_MAX_DIMS];
    memcpy(od, x->dims, sizeof(int64_t) * (size_t)r);
    od[axis] = sizes[k];
    dfx_tensor *y = dfx__kctx_alloc(ctx, k, (dfx_dtype)x->dtype, r, od);
    if (!y) return DFX_ENOMEM;
    int64_t run = sizes[k] * inner;
    for (int64_t o = 0; o < outer && run; o++) {
      dfx_code c = dfx__arr_copy(ctx, y, o * run, x, o * row + start, run);
      if (c || (c = dfx__arr_tick(ctx, &work, run))) return c;
    }
    start += run;
  }
  return DFX_OK;
}

static dfx_code split_kernel(dfx_kctx *ctx) {
  int64_t axis;
  if (dfx__kctx_scalar_i64(ctx, 0, "split_dim", &axis)) return DFX_EINVAL;
  const dfx_tensor *x = ctx->in[1];
  int r = x->ndims, n = ctx->n_out;
  int64_t a = axis < 0 ? axis + r : axis;
  if (a < 0 || a >= r) return dfx__kctx_fail(ctx, DFX_EINVAL, "-%d <= split_dim < %d but got %lld", r, r, (long long)axis);
  if (x->dims[a] % n)
    return dfx__kctx_fail(ctx, DFX_EINVAL,
                          "Number of ways to split should evenly divide the split dimension, but got split_dim %lld "
                          "(size = %lld) and num_split %d",
                          (long long)a, (long long)x->dims[a], n);
  if (n == 1) {
    /* One piece is the input itself: shared, not copied. */
    dfx__kctx_forward(ctx, 1, 0);
    return DFX_OK;
  }
  /* num_split comes from an attr, so the stack only serves the usual counts. */
  int64_t sizes[256], *sz = n <= 256 ? sizes : dfx__malloc(sizeof(int64_t) * (size_t)n);
  if (!sz) return dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory");
  for (int k = 0; k < n; k++) sz[k] = x->dims[a] / n;
  dfx_code c = split_out(ctx, x, (int)a, sz);
  if (sz != sizes) dfx__free(sz);
  return c;
}

static dfx_code splitv_kernel(dfx_kctx *ctx) {
  const dfx_tensor *x = ctx->in[0], *st = ctx->in[1];
  int64_t axis;
  if (dfx__kctx_scalar_i64(ctx, 2, "split_dim", &axis)) return DFX_EINVAL;
  int r = x->ndims, n = ctx->n_out;
  int64_t a = axis < 0 ? axis + r : axis;
  if (a < 0 || a >= r) return dfx__kctx_fail(ctx, DFX_EINVAL, "-%d <= split_dim < %d but got %lld", r, r, (long long)axis);
  if (st->ndims != 1 || st->count != n) {
    char b[128];
    return dfx__kctx_fail(ctx, DFX_EINVAL,
                          "size_splits must be a 1-D tensor with num_split (%d) elements, got shape %s", n,
                          DFX_SHAPE_STR(st, b));
  }
  /* The sizes are read into a copy: the -1 entry is replaced once the others
   * are summed. */
  int64_t *sz = dfx__malloc(sizeof(int64_t) * (size_t)(n ? n : 1));
  if (!sz) return dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory");
  int neg = -1;
  int64_t sum = 0;
  dfx_code c = DFX_OK;
  for (int k = 0; k < n && !c; k++) {
    sz[k] = dfx__tensor_get_i64(st, k);
    if (sz[k] == -1) {
      if (neg >= 0) c = dfx__kctx_fail(ctx, DFX_EINVAL, "There can only be one -1 in the input.");
      neg = k;
    } else if (sz[k] < 0) {
      c = dfx__kctx_fail(ctx, DFX_EINVAL, "Split size at index %d must be >= 0. Got: %lld", k, (long long)sz[k]);
    } else if (__builtin_add_overflow(sum, sz[k], &sum)) {
      c = dfx__kctx_fail(ctx, DFX_EINVAL, "size_splits overflow int64 at index %d", k);
    }
  }
  int64_t dim = x->dims[a];
  if (!c && ((neg < 0 && sum != dim) || (neg >= 0 && sum > dim)))
    c = dfx__kctx_fail(ctx, DFX_EINVAL,
                       "Determined shape must either match input shape along split_dim exactly if fully specified, "
                       "or be less than the size of the input along split_dim if not fully specified.  Got: %lld",
                       (long long)sum);
  /* At most one size may be -1: it takes whatever the others leave (TF). */
  if (!c && neg >= 0) sz[neg] = dim - sum;
  if (!c) c = split_out(ctx, x, (int)a, sz);
  dfx__free(sz);
  return c;
}

static const dfx_kernel_def kernels[] = {
    {"Pack", DFX_ARR_T_COPY, pack_kernel, DFX_KERNEL_CHEAP, axis_init, NULL},
    {"Unpack", DFX_ARR_T_COPY, unpack_kernel, DFX_KERNEL_CHEAP, axis_init, NULL},
    {"ConcatV2", DFX_ARR_T_COPY "; Tidx: {int32, int64}", concatv2_kernel, DFX_KERNEL_CHEAP, NULL, NULL},
    {"Concat", DFX_ARR_T_COPY, concat_kernel, DFX_KERNEL_CHEAP, NULL, NULL},
    {"ParallelConcat", DFX_ARR_T_COPY, parallel_concat_kernel, DFX_KERNEL_CHEAP, NULL, NULL},
    {"Split", DFX_ARR_T_COPY, split_kernel, DFX_KERNEL_CHEAP, NULL, NULL},
    {"SplitV", DFX_ARR_T_COPY "; Tlen: {int8, int32, int64}", splitv_kernel, DFX_KERNEL_CHEAP, NULL, NULL},
    {NULL}};

void dfx__kernels_array_pack(dfx_registry *r);
void dfx__kernels_array_pack(dfx_registry *r) { dfx__kernels_add(r, kernels); }
