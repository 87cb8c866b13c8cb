/* shape.c - shape-only ops and plain copies: Reshape, ExpandDims, Squeeze,
 * Shape, ShapeN, Size, Rank, EnsureShape, BroadcastArgs,
 * BroadcastGradientArgs, Fill, Empty, DeepCopy. Reshape-like outputs share
 * the input's elements (dfx__tensor_reshaped); nothing here writes an input. */
#include <stdio.h>
#include <string.h>

#include "autil.h"


static dfx_code reshaped_out(dfx_kctx *ctx, int r, const int64_t *dims) {
  if (r > DFX_MAX_DIMS)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "output rank %d exceeds the supported maximum %d", r, DFX_MAX_DIMS);
  /* A view sharing the input's elements (a copy only for strings and small
   * tensors): these ops never move data. */
  ctx->out[0] = dfx__tensor_reshaped(ctx->in[0], r, dims);
  return ctx->out[0] ? DFX_OK : dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory");
}

static dfx_code reshape_kernel(dfx_kctx *ctx) {
  const dfx_tensor *x = ctx->in[0], *s = ctx->in[1];
  char b[128];
  if (s->ndims != 1) return dfx__kctx_fail(ctx, DFX_EINVAL, "sizes input must be 1-D, not %s", DFX_SHAPE_STR(s, b));
  if (s->count > DFX_MAX_DIMS)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Reshape to rank %lld exceeds the supported maximum %d", (long long)s->count,
                          DFX_MAX_DIMS);
  /* TF2 semantics: zero sizes are left out of the product so a -1 can still
   * be inferred next to them. */
  int r = (int)s->count, unknown = -1;
  int64_t d[DFX_MAX_DIMS], prod = 1;
  bool zero = false;
  for (int i = 0; i < r; i++) {
    d[i] = dfx__tensor_get_i64(s, i);
    if (d[i] == -1) {
      if (unknown >= 0)
        return dfx__kctx_fail(ctx, DFX_EINVAL, "only one input size may be -1, not both %d and %d", unknown, i);
      unknown = i;
    } else if (d[i] < 0) {
      return dfx__kctx_fail(ctx, DFX_EINVAL, "size %d must be non-negative, not %lld", i, (long long)d[i]);
    } else if (d[i] == 0) {
      zero = true;
    } else if (__builtin_mul_overflow(prod, d[i], &prod)) {
      return dfx__kctx_fail(ctx, DFX_EINVAL, "Reshape: requested shape has too many elements");
    }
  }
  if (unknown >= 0) {
    int64_t in_n = 1;
    bool in_zero = false;
    /* An empty input's nonzero dims may multiply past int64. */
    for (int i = 0; i < x->ndims; i++) {
      /* With a zero in the requested shape, the input's zero dims are left out
       * too, so the -1 is solved from the nonzero sizes on both sides. Without
       * one, an empty input makes in_n 0 and the -1 becomes 0. */
      if (x->dims[i] > 0 || !zero) {
        if (__builtin_mul_overflow(in_n, x->dims[i], &in_n))
          return dfx__kctx_fail(ctx, DFX_EINVAL, "Reshape: the input's nonzero dims overflow int64");
      } else {
        in_zero = true;
      }
    }
    /* prod leaves out zero sizes, so it is at least 1 and the division is safe. */
    int64_t missing = in_n / prod;
    if (!in_zero && prod * missing != in_n)
      return dfx__kctx_fail(ctx, DFX_EINVAL,
                            "Input to reshape is a tensor with %lld values, but the requested shape requires a "
                            "multiple of %lld",
                            (long long)in_n, (long long)prod);
    d[unknown] = missing;
  }
  /* The final word whatever the -1 became: counts must match exactly. */
  int64_t total = dfx__shape_count(r, d);
  if (total != x->count)
    return dfx__kctx_fail(ctx, DFX_EINVAL,
                          "Input to reshape is a tensor with %lld values, but the requested shape has %lld",
                          (long long)x->count, (long long)total);
  return reshaped_out(ctx, r, d);
}

static dfx_code expand_dims_kernel(dfx_kctx *ctx) {
  const dfx_tensor *x = ctx->in[0];
  if (ctx->in[1]->count != 1)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "'dim' must be a tensor with a single value");
  int64_t dim = dfx__tensor_get_i64(ctx->in[1], 0);
  int r = x->ndims;
  /* The new dim may go anywhere in [0, r], so -r-1 .. r are valid. */
  if (dim < -1 - r || dim > r)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Tried to expand dim index %lld for tensor with %d dimensions.",
                          (long long)dim, r);
  if (dim < 0) dim += r + 1;
  int64_t d[DFX_MAX_DIMS + 1];
  for (int i = 0, j = 0; i <= r; i++) d[i] = i == dim ? 1 : x->dims[j++];
  return reshaped_out(ctx, r + 1, d);
}

static dfx_code squeeze_init(const dfx_node *n, void **state, dfx_status *st) {
  (void)state;
  const dfx_attr_list *l = dfx__attr_list(n, "squeeze_dims");
  for (int k = 0; l && l->kind == DFX_ATTR_I && k < l->n; k++)
    if (l->v.i[k] < -DFX_MAX_DIMS || l->v.i[k] >= DFX_MAX_DIMS)
      return dfx__status_set(st, DFX_EINVAL, "attr squeeze_dims[%d] = %lld is out of range [%d, %d)", k,
                             (long long)l->v.i[k], -DFX_MAX_DIMS, DFX_MAX_DIMS);
  return DFX_OK;
}

static dfx_code squeeze_kernel(dfx_kctx *ctx) {
  const dfx_tensor *x = ctx->in[0];
  int r = x->ndims;
  const dfx_attr_list *l = dfx__attr_list(ctx->node, "squeeze_dims");
  bool want[DFX_MAX_DIMS] = {false};
  int nl = l && l->kind == DFX_ATTR_I ? l->n : 0;
  for (int k = 0; k < nl; k++) {
    int64_t a = l->v.i[k];
    if (a < -r || a >= r)
      return dfx__kctx_fail(ctx, DFX_EINVAL, "Tried to squeeze dim index %lld for tensor with %d dimensions.",
                            (long long)a, r);
    if (a < 0) a += r;
    want[a] = true;
  }
  int64_t d[DFX_MAX_DIMS];
  int m = 0;
  for (int i = 0; i < r; i++) {
    /* Without squeeze_dims every dim of size 1 goes. */
    if (nl ? want[i] : x->dims[i] == 1) {
      if (x->dims[i] != 1)
        return dfx__kctx_fail(ctx, DFX_EINVAL, "Can not squeeze dim[%d], expected a dimension of 1, got %lld", i,
                              (long long)x->dims[i]);
      continue;
    }
    d[m++] = x->dims[i];
  }
  return reshaped_out(ctx, m, d);
}

/* Writes n int64 values into a new rank-1 (or rank-0 when scalar) output k of dtype t. */
static dfx_code int_out(dfx_kctx *ctx, int k, dfx_dtype t, const int64_t *v, int64_t n, bool scalar) {
  for (int64_t i = 0; i < n; i++)
    /* An int32 out_type cannot hold every dim: fail rather than wrap. */
    if (t == DFX_I32 && (v[i] > INT32_MAX || v[i] < INT32_MIN))
      return dfx__kctx_fail(ctx, DFX_EINVAL, "Shape value %lld does not fit in int32 (use out_type int64)",
                            (long long)v[i]);
  dfx_tensor *y = dfx__kctx_alloc(ctx, k, t, scalar ? 0 : 1, &n);
  if (!y) return DFX_ENOMEM;
  for (int64_t i = 0; i < n; i++) {
    if (t == DFX_I32) ((int32_t *)y->data)[i] = (int32_t)v[i];
    else ((int64_t *)y->data)[i] = v[i];
  }
  return DFX_OK;
}

static dfx_code shape_kernel(dfx_kctx *ctx) {
  return int_out(ctx, 0, ctx->node->out_types[0], ctx->in[0]->dims, ctx->in[0]->ndims, false);
}

static dfx_code shape_n_kernel(dfx_kctx *ctx) {
  for (int i = 0; i < ctx->n_in; i++) {
    dfx_code c = int_out(ctx, i, ctx->node->out_types[i], ctx->in[i]->dims, ctx->in[i]->ndims, false);
    if (c) return c;
  }
  return DFX_OK;
}

static dfx_code size_kernel(dfx_kctx *ctx) {
  return int_out(ctx, 0, ctx->node->out_types[0], &ctx->in[0]->count, 1, true);
}

static dfx_code rank_kernel(dfx_kctx *ctx) {
  /* Rank's output is int32 in TF's signature; it has no out_type attr. */
  int64_t r = ctx->in[0]->ndims;
  return int_out(ctx, 0, DFX_I32, &r, 1, true);
}

static dfx_code ensure_shape_kernel(dfx_kctx *ctx) {
  const dfx_tensor *x = ctx->in[0];
  const dfx_shape *s = dfx__attr_shape(ctx->node, "shape");
  bool ok = !s || s->rank < 0;
  if (!ok && s->rank == x->ndims) {
    ok = true;
    for (int i = 0; i < s->rank; i++)
      /* A -1 in the attr is an unknown dim and matches any size. */
      if (s->dims[i] >= 0 && s->dims[i] != x->dims[i]) ok = false;
  }
  if (!ok) {
    char a[128], b[160] = "[";
    size_t o = 1;
    for (int i = 0; i < s->rank && o < sizeof b; i++) {
      if (s->dims[i] < 0) o += (size_t)snprintf(b + o, sizeof b - o, "%s?", i ? "," : "");
      else o += (size_t)snprintf(b + o, sizeof b - o, "%s%lld", i ? "," : "", (long long)s->dims[i]);
    }
    if (o < sizeof b) snprintf(b + o, sizeof b - o, "]");
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Shape of tensor input %s is not compatible with expected shape %s.",
                          DFX_SHAPE_STR(x, a), b);
  }
  dfx__kctx_forward(ctx, 0, 0);
  return DFX_OK;
}

/* Reads a shape vector input (max 4*DFX_MAX_DIMS entries). */
/* These are shapes given as data, not tensor ranks, so they may be longer
 * than DFX_MAX_DIMS; the fixed bound only protects the stack arrays. */
static dfx_code shape_vec(dfx_kctx *ctx, int i, const char *what, int64_t *v, int *n) {
  const dfx_tensor *t = ctx->in[i];
  char b[128];
  if (t->ndims != 1) return dfx__kctx_fail(ctx, DFX_EINVAL, "In[%d] must be a vector. %s", i, DFX_SHAPE_STR(t, b));
  return dfx__kctx_vector_i64(ctx, i, what, v, 4 * DFX_MAX_DIMS, n);
}

/* TF's BCast over two shapes: output shape and (optionally) gradient reduction indices. */
static dfx_code bcast(dfx_kctx *ctx, bool grads) {
  int64_t a[4 * DFX_MAX_DIMS], b[4 * DFX_MAX_DIMS], o[4 * DFX_MAX_DIMS], ra[4 * DFX_MAX_DIMS], rb[4 * DFX_MAX_DIMS];
  int na, nb, nra = 0, nrb = 0;
  if (shape_vec(ctx, 0, "s0", a, &na) || shape_vec(ctx, 1, "s1", b, &nb)) return DFX_EINVAL;
  int n = na > nb ? na : nb;
  for (int i = 0; i < n; i++) {
    int64_t x = i - (n - na) >= 0 ? a[i - (n - na)] : 1, y = i - (n - nb) >= 0 ? b[i - (n - nb)] : 1;
    if (x != y && x != 1 && y != 1) {
      char sa[256], sb[256];
      return dfx__kctx_fail(ctx, DFX_EINVAL, "Incompatible shapes: %s vs. %s", dfx__shape_str(na, a, sa, sizeof sa),
                            dfx__shape_str(nb, b, sb, sizeof sb));
    }
    o[i] = x == 1 ? y : x;
    /* A dim where an operand is 1 was broadcast for it, so its gradient sums
     * over that dim: both lists get it when both are 1. */
    if (x == 1) ra[nra++] = i;
    if (y == 1) rb[nrb++] = i;
  }
  dfx_dtype t = ctx->node->out_types[0];
  if (!grads) return int_out(ctx, 0, t, o, n, false);
  if (int_out(ctx, 0, t, ra, nra, false)) return DFX_EINVAL;
  return int_out(ctx, 1, t, rb, nrb, false);
}

static dfx_code bcast_args_kernel(dfx_kctx *ctx) { return bcast(ctx, false); }
static dfx_code bcast_grad_args_kernel(dfx_kctx *ctx) { return bcast(ctx, true); }

static dfx_code fill_kernel(dfx_kctx *ctx) {
  const dfx_tensor *dt = ctx->in[0], *v = ctx->in[1];
  char b[128];
  if (dt->ndims != 1) return dfx__kctx_fail(ctx, DFX_EINVAL, "dims must be a vector, got shape %s", DFX_SHAPE_STR(dt, b));
  if (v->ndims != 0) return dfx__kctx_fail(ctx, DFX_EINVAL, "value must be a scalar, got shape %s", DFX_SHAPE_STR(v, b));
  int64_t d[DFX_MAX_DIMS];
  int r;
  if (dfx__kctx_vector_i64(ctx, 0, "dims", d, DFX_MAX_DIMS, &r)) return DFX_EINVAL;
  for (int i = 0; i < r; i++)
    if (d[i] < 0) return dfx__kctx_fail(ctx, DFX_EINVAL, "Dimension %lld must be >= 0", (long long)d[i]);
  if (v->dtype == DFX_STRING && dfx__arr_str_budget(ctx, "Fill dims", 0, dfx__shape_count(r, d), dfx__arr_str_len(v, 0)))
    return ctx->st->code;
  /* dims come from a tensor's values: the alloc names them if too large. */
  dfx_tensor *y = dfx__arr_alloc(ctx, 0, (dfx_dtype)v->dtype, r, d, "Fill dims");
  if (!y) return ctx->st->code;
  return dfx__arr_fill(ctx, y, 0, y->count, v, 0);
}

static dfx_code empty_kernel(dfx_kctx *ctx) {
  const dfx_tensor *s = ctx->in[0];
  char b[128];
  if (s->ndims != 1)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "shape must be a vector of int32, got shape %s", DFX_SHAPE_STR(s, b));
  int64_t d[DFX_MAX_DIMS];
  int r;
  if (dfx__kctx_vector_i64(ctx, 0, "shape", d, DFX_MAX_DIMS, &r)) return DFX_EINVAL;
  for (int i = 0; i < r; i++)
    if (d[i] < 0) return dfx__kctx_fail(ctx, DFX_EINVAL, "Dimension %lld must be >= 0", (long long)d[i]);
  dfx_dtype t = dfx__attr_type(ctx->node, "dtype", DFX_F32);
  dfx_tensor *y = dfx__arr_alloc(ctx, 0, t, r, d, "Empty shape");
  if (!y) return ctx->st->code;
  /* Uninitialised memory is never handed out: init=false also gets zeros. */
  if (t != DFX_STRING) memset(y->data, 0, y->nbytes);
  return DFX_OK;
}

static dfx_code deep_copy_kernel(dfx_kctx *ctx) {
  ctx->out[0] = dfx__tensor_copy(ctx->in[0]);
  return ctx->out[0] ? DFX_OK : dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory");
}

#define ALL "T: " DFX_ARR_ALL_TYPES

static const dfx_kernel_def kernels[] = {
    {"Reshape", ALL "; Tshape: " DFX_ARR_I32_64, reshape_kernel, DFX_KERNEL_CHEAP, NULL, NULL},
    {"ExpandDims", ALL "; Tdim: " DFX_ARR_I32_64, expand_dims_kernel, DFX_KERNEL_CHEAP, NULL, NULL},
    {"Squeeze", ALL, squeeze_kernel, DFX_KERNEL_CHEAP, squeeze_init, NULL},
    {"Shape", ALL "; out_type: " DFX_ARR_I32_64, shape_kernel, DFX_KERNEL_CHEAP, NULL, NULL},
    {"ShapeN", ALL "; out_type: " DFX_ARR_I32_64, shape_n_kernel, DFX_KERNEL_CHEAP, NULL, NULL},
    {"Size", ALL "; out_type: " DFX_ARR_I32_64, size_kernel, DFX_KERNEL_CHEAP, NULL, NULL},
    {"Rank", ALL, rank_kernel, DFX_KERNEL_CHEAP, NULL, NULL},
    {"EnsureShape", ALL, ensure_shape_kernel, DFX_KERNEL_CHEAP, NULL, NULL},
    {"BroadcastArgs", "T: " DFX_ARR_I32_64, bcast_args_kernel, DFX_KERNEL_CHEAP, NULL, NULL},
    {"BroadcastGradientArgs", "T: " DFX_ARR_I32_64, bcast_grad_args_kernel, DFX_KERNEL_CHEAP, NULL, NULL},
    {"Fill", DFX_ARR_T_COPY "; index_type: " DFX_ARR_I32_64, fill_kernel, DFX_KERNEL_CHEAP, NULL, NULL},
    /* Stateful as TF's OpDef marks them, so constant folding leaves them be:
     * each run makes its own tensor. */
    {"Empty", "dtype: " DFX_ARR_COPY_TYPES, empty_kernel, DFX_KERNEL_CHEAP | DFX_KERNEL_STATEFUL, NULL, NULL},
    {"DeepCopy", DFX_ARR_T_COPY, deep_copy_kernel, DFX_KERNEL_CHEAP | DFX_KERNEL_STATEFUL, NULL, NULL},
    {NULL}};

void dfx__kernels_array_shape(dfx_registry *r);
void dfx__kernels_array_shape(dfx_registry *r) { dfx__kernels_add(r, kernels); }
