/* ragged_variant.c - RaggedTensorToVariant and RaggedTensorFromVariant: a
 * ragged tensor (nested row splits, outermost first, plus dense values)
 * packed into one variant element, or (batched_input) unbatched along its
 * outermost ragged dimension into a vector of variants, one per row; and
 * the inverse, which stacks a tensor of such variants back into one ragged
 * tensor with encoded_ragged.dims() more ragged dimensions (the outer ones
 * uniform). A variant element points to a `rvar` the run owns (step-owned,
 * freed when the run ends, like TensorArrays), which keeps references to
 * its splits and values tensors. */
#include <string.h>

#include "alloc.h"
#include "kernel.h"

#define RVAR_MAGIC 0x5241474745445631ull /* "RAGGEDV1": tells our variants from others' */

typedef struct rvar {
  uint64_t magic;
  int rank;              /* ragged rank: number of splits */
  dfx_tensor **splits;   /* rank tensors, [rows + 1] each */
  dfx_tensor *values;
} rvar;

static void rvar_free(void *p) {
  rvar *v = p;
  if (!v) return;
  for (int i = 0; i < v->rank; i++) dfx__tensor_unref(v->splits ? v->splits[i] : NULL);
  dfx__tensor_unref(v->values);
  dfx__free(v->splits);
  dfx__free(v);
}

static rvar *rvar_new(int rank) {
  rvar *v = dfx__calloc(1, sizeof *v);
  if (!v) return NULL;
  v->magic = RVAR_MAGIC;
  v->rank = rank;
  if (rank && !(v->splits = dfx__calloc((size_t)rank, sizeof *v->splits))) {
    dfx__free(v);
    return NULL;
  }
  return v;
}

static int64_t sp(const dfx_tensor *s, int64_t i) {
  return s->dtype == DFX_I32 ? ((const int32_t *)s->data)[i] : ((const int64_t *)s->data)[i];
}

/* A new [n] splits tensor of dtype t with values f(i) = base[i + off] - base[off]. */
static dfx_tensor *splits_slice(dfx_tensor *base, int64_t off, int64_t n) {
  const int64_t d[1] = {n};
  dfx_tensor *s = dfx__tensor_alloc(base->dtype, 1, d, NULL);
  if (!s) return NULL;
  int64_t b0 = sp(base, off);
  for (int64_t i = 0; i < n; i++) {
    int64_t v = sp(base, off + i) - b0;
    if (s->dtype == DFX_I32) ((int32_t *)s->data)[i] = (int32_t)v;
    else ((int64_t *)s->data)[i] = v;
  }
  return s;
}

/* Rows [r0, r1) of values along dim 0, as a new tensor (strings deep-copied). */
static dfx_tensor *rows_slice(const dfx_tensor *v, int64_t r0, int64_t r1) {
  int64_t d[DFX_MAX_DIMS];
  memcpy(d, v->dims, sizeof(int64_t) * (size_t)v->ndims);
  d[0] = r1 - r0;
  dfx_tensor *o = dfx__tensor_alloc((dfx_dtype)v->dtype, v->ndims, d, NULL);
  if (!o) return NULL;
  int64_t inner = v->dims[0] ? v->count / v->dims[0] : 0, n = (r1 - r0) * inner;
  if (v->dtype == DFX_STRING) {
    const dfx_str *src = (const dfx_str *)v->data + r0 * inner;
    dfx_str *dst = o->data;
    for (int64_t i = 0; i < n; i++) {
      if (src[i].len && !(dst[i].ptr = dfx__strndup(src[i].ptr, src[i].len))) {
        dfx__tensor_unref(o);
        return NULL;
      }
      dst[i].len = src[i].len;
    }
  } else if (n) {
    size_t es = dfx__dtype_storage((dfx_dtype)v->dtype);
    memcpy(o->data, (const char *)v->data + (size_t)(r0 * inner) * es, (size_t)n * es);
  }
  return o;
}

/* TF's split checks: 1-D, starts at 0, never decreases, ends at the size
 * of the level below. */
static dfx_code check_splits(dfx_kctx *ctx, const dfx_tensor *s, int64_t below) {
  char b[64];
  if (s->ndims != 1 || s->count < 1)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Invalid ragged splits: splits must be a non-empty vector, got %s",
                          DFX_SHAPE_STR(s, b));
  if (sp(s, 0) != 0)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Invalid ragged splits: first element of ragged splits must be 0 but is %lld",
                          (long long)sp(s, 0));
  for (int64_t i = 1; i < s->count; i++)
    if (sp(s, i) < sp(s, i - 1))
      return dfx__kctx_fail(ctx, DFX_EINVAL,
                            "Invalid ragged splits: ragged splits must be monotonically increasing, but "
                            "ragged_splits[%lld]=%lld is smaller than row_splits[%lld]=%lld",
                            (long long)i, (long long)sp(s, i), (long long)(i - 1), (long long)sp(s, i - 1));
  if (sp(s, s->count - 1) != below)
    return dfx__kctx_fail(ctx, DFX_EINVAL,
                          "Invalid ragged splits: last element of ragged splits must be the number of ragged values (%lld) but is %lld",
                          (long long)below, (long long)sp(s, s->count - 1));
  return DFX_OK;
}

/* ---- RaggedTensorToVariant ---- */

static dfx_code to_variant(dfx_kctx *ctx) {
  int rank = ctx->n_in - 1;
  dfx_tensor *values = ctx->in[rank];
  bool batched = dfx__attr_bool(ctx->node, "batched_input", false);
  dfx_code c;
  if (values->dtype == DFX_VARIANT || values->dtype == DFX_RESOURCE)
    return dfx__kctx_fail(ctx, DFX_EUNIMPL, "ragged values of dtype %s are not supported",
                          dfx__dtype_tf_name((dfx_dtype)values->dtype));
  if (rank > 0 && values->ndims < 1) return dfx__kctx_fail(ctx, DFX_EINVAL, "rt_dense_values must be at least 1-D");
  for (int i = rank - 1; i >= 0; i--) {
    int64_t below = i == rank - 1 ? values->dims[0] : ctx->in[i + 1]->count - 1;
    if ((c = check_splits(ctx, ctx->in[i], below)) != DFX_OK) return c;
  }
  if (!batched) {
    rvar *v = rvar_new(rank);
    if (!v) return dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory");
    for (int i = 0; i < rank; i++) v->splits[i] = dfx__tensor_ref(ctx->in[i]);
    v->values = dfx__tensor_ref(values);
    if ((c = dfx__kctx_step_own(ctx, v, rvar_free)) != DFX_OK) return c;
    dfx_tensor *o = dfx__kctx_alloc(ctx, 0, DFX_VARIANT, 0, NULL);
    if (!o) return DFX_ENOMEM;
    ((void **)o->data)[0] = v;
    return DFX_OK;
  }
  if (rank == 0)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "ragged_rank must be greater than 0 when batched_input is true");
  const dfx_tensor *top = ctx->in[0];
  int64_t rows = top->count - 1;
  const int64_t od[1] = {rows};
  dfx_tensor *o = dfx__kctx_alloc(ctx, 0, DFX_VARIANT, 1, od);
  if (!o) return DFX_ENOMEM;
  for (int64_t r = 0; r < rows; r++) {
    rvar *v = rvar_new(rank - 1);
    if (!v) return dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory");
    if ((c = dfx__kctx_step_own(ctx, v, rvar_free)) != DFX_OK) return c;
    /* Follow row r down the levels: [lo, hi) at each. */
    int64_t lo = sp(top, r), hi = sp(top, r + 1);
    for (int i = 1; i < rank; i++) {
      if (!(v->splits[i - 1] = splits_slice(ctx->in[i], lo, hi - lo + 1)))
        return dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory");
      int64_t nlo = sp(ctx->in[i], lo), nhi = sp(ctx->in[i], hi);
      lo = nlo, hi = nhi;
    }
    if (!(v->values = rows_slice(values, lo, hi))) return dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory");
    ((void **)o->data)[r] = v;
    if ((r & 1023) == 1023 && (c = dfx__kctx_poll(ctx)) != DFX_OK) return c;
  }
  return DFX_OK;
}

/* ---- RaggedTensorFromVariant ---- */

static dfx_code get_var(dfx_kctx *ctx, const dfx_tensor *enc, int64_t i, int rank, dfx_dtype vt, dfx_dtype st,
                        const rvar **out) {
  const rvar *v = ((void *const *)enc->data)[i];
  if (!v || v->magic != RVAR_MAGIC)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "encoded_ragged[%lld] is not a RaggedTensorVariant", (long long)i);
  if (v->rank != rank)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Encoded input RaggedTensorVariant has ragged_rank=%d.  Expected ragged_rank=%d.",
                          v->rank, rank);
  if (v->values->dtype != vt)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Expected values Tensor dtype: %s, found: %s", dfx__dtype_tf_name(vt),
                          dfx__dtype_tf_name((dfx_dtype)v->values->dtype));
  for (int k = 0; k < rank; k++)
    if (v->splits[k]->dtype != st)
      return dfx__kctx_fail(ctx, DFX_EINVAL, "Expected splits Tensor dtype: %s, found: %s", dfx__dtype_tf_name(st),
                            dfx__dtype_tf_name((dfx_dtype)v->splits[k]->dtype));
  *out = v;
  return DFX_OK;
}

static void put_split(dfx_tensor *s, int64_t i, int64_t v) {
  if (s->dtype == DFX_I32) ((int32_t *)s->data)[i] = (int32_t)v;
  else ((int64_t *)s->data)[i] = v;
}

static dfx_code from_variant(dfx_kctx *ctx) {
  const dfx_tensor *enc = ctx->in[0];
  int out_rank = (int)dfx__attr_int(ctx->node, "output_ragged_rank", 0);
  int in_rank = (int)dfx__attr_int(ctx->node, "input_ragged_rank", -1);
  dfx_dtype vt = dfx__attr_type(ctx->node, "Tvalues", DFX_F32), st = dfx__attr_type(ctx->node, "Tsplits", DFX_I64);
  if (in_rank == -1) in_rank = out_rank - enc->ndims;
  if (in_rank < 0)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "input_ragged_rank must be non-negative, got %d (output_ragged_rank %d, "
                                           "encoded_ragged of rank %d)", in_rank, out_rank, enc->ndims);
  if (out_rank != in_rank + enc->ndims)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "output_ragged_rank must be equal to input_ragged_rank + encoded_ragged.dims "
                                           "(%d + %d), got %d", in_rank, enc->ndims, out_rank);
  dfx_code c;
  const rvar *v;
  if (enc->ndims == 0) { /* one ragged tensor: its parts as they are */
    if ((c = get_var(ctx, enc, 0, in_rank, vt, st, &v)) != DFX_OK) return c;
    for (int k = 0; k < in_rank; k++) ctx->out[k] = dfx__tensor_ref(v->splits[k]);
    ctx->out[in_rank] = dfx__tensor_ref(v->values);
    return DFX_OK;
  }
  int64_t n = enc->count;
  /* Components share the values' inner shape. */
  int64_t inner_dims[DFX_MAX_DIMS];
  int inner_nd = -1;
  int64_t total_rows = 0, *level_rows = dfx__calloc((size_t)in_rank + 1, sizeof(int64_t));
  if (!level_rows) return dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory");
  for (int64_t i = 0; i < n; i++) {
    if ((c = get_var(ctx, enc, i, in_rank, vt, st, &v)) != DFX_OK) goto done;
    const dfx_tensor *val = v->values;
    int nd = val->ndims - 1;
    if (val->ndims < 1) {
      c = dfx__kctx_fail(ctx, DFX_EINVAL, "Ragged values of component %lld must be at least 1-D to be batched", (long long)i);
      goto done;
    }
    if (inner_nd < 0) inner_nd = nd, memcpy(inner_dims, val->dims + 1, sizeof(int64_t) * (size_t)nd);
    else if (nd != inner_nd || memcmp(inner_dims, val->dims + 1, sizeof(int64_t) * (size_t)nd) != 0) {
      c = dfx__kctx_fail(ctx, DFX_EINVAL, "Ragged components must have the same inner value shape to be batched (component %lld differs)",
                         (long long)i);
      goto done;
    }
    total_rows += in_rank ? v->splits[0]->count - 1 : val->dims[0];
    for (int k = 0; k < in_rank; k++) level_rows[k] += v->splits[k]->count - 1;
    level_rows[in_rank] += val->dims[0];
  }
  if (n == 0) inner_nd = 0;
  {
    /* Outer splits: enc->ndims - 1 uniform ones, then one over the components. */
    int o = 0;
    int64_t outer = 1;
    for (int k = 0; k + 1 < enc->ndims; k++) {
      int64_t step = enc->dims[k + 1], rows = outer * enc->dims[k];
      const int64_t d[1] = {rows + 1};
      dfx_tensor *s = dfx__kctx_alloc(ctx, o++, st, 1, d);
      if (!s) { c = DFX_ENOMEM; goto done; }
      for (int64_t r = 0; r <= rows; r++) put_split(s, r, r * step);
      outer = rows;
    }
    const int64_t d0[1] = {n + 1};
    dfx_tensor *s0 = dfx__kctx_alloc(ctx, o++, st, 1, d0);
    if (!s0) { c = DFX_ENOMEM; goto done; }
    put_split(s0, 0, 0);
    int64_t acc = 0;
    for (int64_t i = 0; i < n; i++) {
      v = ((void *const *)enc->data)[i];
      acc += in_rank ? v->splits[0]->count - 1 : v->values->dims[0];
      put_split(s0, i + 1, acc);
    }
    /* The components' own splits, offset by the rows before them. */
    for (int k = 0; k < in_rank; k++) {
      const int64_t d[1] = {level_rows[k] + 1};
      dfx_tensor *s = dfx__kctx_alloc(ctx, o++, st, 1, d);
      if (!s) { c = DFX_ENOMEM; goto done; }
      put_split(s, 0, 0);
      int64_t pos = 1, base = 0;
      for (int64_t i = 0; i < n; i++) {
        v = ((void *const *)enc->data)[i];
        const dfx_tensor *cs = v->splits[k];
        for (int64_t j = 1; j < cs->count; j++) put_split(s, pos++, base + sp(cs, j));
        base += sp(cs, cs->count - 1);
      }
    }
    int64_t vd[DFX_MAX_DIMS];
    vd[0] = level_rows[in_rank];
    if (inner_nd) memcpy(vd + 1, inner_dims, sizeof(int64_t) * (size_t)inner_nd);
    dfx_tensor *vals = dfx__kctx_alloc(ctx, o, vt, inner_nd + 1, vd);
    if (!vals) { c = DFX_ENOMEM; goto done; }
    size_t es = dfx__dtype_storage(vt), off = 0;
    for (int64_t i = 0; i < n; i++) {
      v = ((void *const *)enc->data)[i];
      const dfx_tensor *cv = v->values;
      if (vt == DFX_STRING) {
        const dfx_str *src = cv->data;
        dfx_str *dst = (dfx_str *)vals->data + off;
        for (int64_t j = 0; j < cv->count; j++) {
          if (src[j].len && !(dst[j].ptr = dfx__strndup(src[j].ptr, src[j].len))) {
            c = dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory");
            goto done;
          }
          dst[j].len = src[j].len;
        }
      } else if (cv->count) {
        memcpy((char *)vals->data + off * es, cv->data, (size_t)cv->count * es);
      }
      off += (size_t)cv->count;
    }
    (void)total_rows;
    c = DFX_OK;
  }
done:
  dfx__free(level_rows);
  return c;
}

/* Every value dtype with a plain or string element (not resource or variant). */
#define RV_T \
  "Tvalues: {float, double, int32, uint8, int16, int8, string, complex64, int64, bool, qint8, quint8, qint32, bfloat16, qint16, quint16, uint16, complex128, half, uint32, uint64}; Tsplits: {int32, int64}"

static const dfx_kernel_def kernels[] = {
    {"RaggedTensorToVariant", RV_T, to_variant, 0, NULL, NULL},
    {"RaggedTensorFromVariant", RV_T, from_variant, 0, NULL, NULL},
    {NULL}};

void dfx__kernels_seq_ragged_variant(dfx_registry *r);
void dfx__kernels_seq_ragged_variant(dfx_registry *r) { dfx__kernels_add(r, kernels); }
