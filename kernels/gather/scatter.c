/* scatter.c - variable-update ops on frozen graphs (Assign and AssignAdd/Sub
 * moved to kernels/var/, which keeps variables across runs): Scatter{Update,Add,Sub,Mul,Div,Max,Min} (first-dim indices) and the
 * ScatterNd family (ScatterNd, ScatterNd{Update,Add,Sub,Max,Min},
 * ScatterNdNonAliasingAdd, TensorScatter*). The Ref(T) input is a plain tensor
 * here: the output is a new tensor = input with the updates applied; the input
 * is never modified. use_locking is ignored. Row-major; updates never
 * broadcast except Scatter*'s scalar updates. */
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "gutil.h"

/* Output 0 = deep copy of input 0, or NULL after failing. */
/* A deep copy rather than the input's buffer: the "variable" may be shared
 * by other consumers, and tensors are immutable once shared. */
static dfx_tensor *copy_input(dfx_kctx *ctx) {
  dfx_tensor *c = dfx__tensor_copy(ctx->in[0]);
  if (!c) {
    dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory copying the input");
    return NULL;
  }
  ctx->out[0] = c;
  return c;
}

/* ---- Scatter* on the first dimension ---- */

static dfx_code scatter_first(dfx_kctx *ctx, dfx_gop op) {
  const dfx_tensor *p = ctx->in[0], *ix = ctx->in[1], *up = ctx->in[2];
  char b1[128], b2[128], b3[128];
  dfx_dtype dt = (dfx_dtype)p->dtype;
  if (p->ndims < 1)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "params must be at least 1-D, got shape %s", DFX_SHAPE_STR(p, b1));
  bool scalar = up->ndims == 0;
  bool ok = scalar || up->ndims == ix->ndims + p->ndims - 1;
  for (int i = 0; ok && !scalar && i < ix->ndims; i++) ok = up->dims[i] == ix->dims[i];
  for (int i = 1; ok && !scalar && i < p->ndims; i++) ok = up->dims[ix->ndims + i - 1] == p->dims[i];
  if (!ok)
    return dfx__kctx_fail(ctx, DFX_EINVAL,
                          "Must have updates.shape = indices.shape + params.shape[1:] or updates.shape = [], got "
                          "updates.shape %s, indices.shape %s, params.shape %s",
                          DFX_SHAPE_STR(up, b1), DFX_SHAPE_STR(ix, b2), DFX_SHAPE_STR(p, b3));
  int64_t rows = p->dims[0];
  /* All indices are checked before the copy is made: a bad one fails
   * without a partly updated output. */
  for (int64_t k = 0; k < ix->count; k++) {
    int64_t v = gidx(ix, k);
    if (v < 0 || v >= rows)
      return dfx__kctx_fail(ctx, DFX_EINVAL, "indices%s = %lld is not in [0, %lld)",
                            dfx__g_slice_str(ix->ndims, ix->dims, k, b1, sizeof b1), (long long)v, (long long)rows);
  }
  dfx_tensor *out = copy_input(ctx);
  if (!out) return ctx->st->code;
  int64_t inner = rows ? p->count / rows : 0, left = DFX_G_POLL_EVERY;
  size_t es = dfx__dtype_storage(dt);
  /* Duplicate indices apply in order, so for SET the last update wins and
   * for the others the updates combine. */
  for (int64_t k = 0; k < ix->count && inner > 0; k++) {
    char *dst = (char *)out->data + (size_t)(gidx(ix, k) * inner) * es;
    /* A scalar update applies to every element of the row: stride 0. */
    const char *src = scalar ? (const char *)up->data : (const char *)up->data + (size_t)(k * inner) * es;
    dfx_code c = dfx__g_apply(ctx, dt, op, dst, src, inner, scalar ? 0 : 1);
    if (!c) c = gtick(ctx, &left, inner);
    if (c) return c;
  }
  return DFX_OK;
}
static dfx_code scatter_update(dfx_kctx *ctx) { return scatter_first(ctx, DFX_GOP_SET); }
static dfx_code scatter_add(dfx_kctx *ctx) { return scatter_first(ctx, DFX_GOP_ADD); }
static dfx_code scatter_sub(dfx_kctx *ctx) { return scatter_first(ctx, DFX_GOP_SUB); }
static dfx_code scatter_mul(dfx_kctx *ctx) { return scatter_first(ctx, DFX_GOP_MUL); }
static dfx_code scatter_div(dfx_kctx *ctx) { return scatter_first(ctx, DFX_GOP_DIV); }
static dfx_code scatter_max(dfx_kctx *ctx) { return scatter_first(ctx, DFX_GOP_MAX); }
static dfx_code scatter_min(dfx_kctx *ctx) { return scatter_first(ctx, DFX_GOP_MIN); }

/* ---- ScatterNd family ---- */

/* Applies updates at indices [..., K] into out (shape = the params shape). */
static dfx_code scatter_nd_into(dfx_kctx *ctx, dfx_tensor *out, const dfx_tensor *ix, const dfx_tensor *up,
                                dfx_gop op) {
  char b1[128], b2[128], b3[128];
  int pr = out->ndims;
  if (pr < 1) return dfx__kctx_fail(ctx, DFX_EINVAL, "Output must be at least 1-D, got shape: %s", DFX_SHAPE_STR(out, b1));
  if (!(ix->count == 0 && up->count == 0) && out->count == 0)
    return dfx__kctx_fail(ctx, DFX_EINVAL,
                          "Indices and updates specified for empty output.  indices shape: %s, updates shape: %s, "
                          "output shape: %s",
                          DFX_SHAPE_STR(ix, b1), DFX_SHAPE_STR(up, b2), DFX_SHAPE_STR(out, b3));
  /* indices [..., K] address the first K dims of the output; a 1-D index
   * vector is read as K = 1 with one update per element. updates must be
   * indices.shape[:-1] + output.shape[K:]. */
  int64_t slice_dim = ix->ndims > 1 ? ix->dims[ix->ndims - 1] : 1;
  int batch_dim = ix->ndims > 1 ? ix->ndims - 1 : 1;
  if (ix->ndims == 0) return dfx__kctx_fail(ctx, DFX_EINVAL, "Indices shape must have rank at least one.");
  if (slice_dim > pr)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Index innermost dimension length must be <= output rank; saw: %lld vs. %d",
                          (long long)slice_dim, pr);
  bool pre_ok = up->ndims >= batch_dim;
  for (int d = 0; pre_ok && d < batch_dim; d++) pre_ok = up->dims[d] == ix->dims[d];
  if (!pre_ok)
    return dfx__kctx_fail(ctx, DFX_EINVAL,
                          "Dimensions [0,%d) of indices[shape=%s] must match dimensions [0,%d) of updates[shape=%s]",
                          batch_dim, DFX_SHAPE_STR(ix, b1), batch_dim, DFX_SHAPE_STR(up, b2));
  bool suf_ok = up->ndims == batch_dim + pr - slice_dim;
  for (int d = 0; suf_ok && d < up->ndims - batch_dim; d++) suf_ok = up->dims[d + batch_dim] == out->dims[d + slice_dim];
  if (!suf_ok)
    return dfx__kctx_fail(ctx, DFX_EINVAL,
                          "Dimensions [%lld,%d) of input[shape=%s] must match dimensions [%d,%d) of updates[shape=%s]",
                          (long long)slice_dim, pr, DFX_SHAPE_STR(out, b1), batch_dim, up->ndims, DFX_SHAPE_STR(up, b2));
  /* TF skips everything, index checks included, for an empty output; and
   * only then may the products below overflow (dims beside a zero). */
  if (out->count == 0) return DFX_OK;
  /* With K == 0 the index rows hold nothing; their leading dims count the
   * updates, each of which covers the whole output (as in GatherNd). */
  int64_t n_up = slice_dim ? ix->count / slice_dim : gprod(ix->dims, 0, batch_dim), slice = gprod(out->dims, (int)slice_dim, pr);
  bool ignore = ctx->state != NULL;
  dfx_dtype dt = (dfx_dtype)out->dtype;
  size_t es = dfx__dtype_storage(dt);
  int64_t left = DFX_G_POLL_EVERY;
  for (int64_t r = 0; r < n_up; r++) {
    int64_t off = 0;
    bool bad = false;
    for (int64_t j = 0; j < slice_dim && !bad; j++) {
      int64_t v = gidx(ix, r * slice_dim + j);
      bad = v < 0 || v >= out->dims[j];
      off = off * out->dims[j] + (bad ? 0 : v);
    }
    if (bad) {
      if (ignore) continue;
      char idx[256];
      int len = 0;
      idx[0] = 0;
      for (int64_t j = 0; j < slice_dim && len < (int)sizeof idx - 24; j++)
        len += snprintf(idx + len, sizeof idx - (size_t)len, "%s%lld", j ? ", " : "",
                        (long long)gidx(ix, r * slice_dim + j));
      return dfx__kctx_fail(ctx, DFX_EINVAL, "indices%s = [%s] does not index into shape %s",
                            dfx__g_slice_str(ix->ndims, ix->dims, r * slice_dim, b1, sizeof b1), idx,
                            DFX_SHAPE_STR(out, b2));
    }
    dfx_code c = dfx__g_apply(ctx, dt, op, (char *)out->data + (size_t)(off * slice) * es,
                              (const char *)up->data + (size_t)(r * slice) * es, slice, 1);
    if (!c) c = gtick(ctx, &left, slice + slice_dim);
    if (c) return c;
  }
  return DFX_OK;
}

static dfx_code scatter_nd(dfx_kctx *ctx) {
  const dfx_tensor *sh = ctx->in[2];
  char b1[128];
  if (sh->ndims != 1)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Shape must be a 1-D tensor, got shape %s", DFX_SHAPE_STR(sh, b1));
  if (sh->count > DFX_MAX_DIMS)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "shape has %lld dimensions, at most %d supported", (long long)sh->count,
                          DFX_MAX_DIMS);
  int64_t dims[DFX_MAX_DIMS];
  for (int i = 0; i < sh->count; i++) {
    dims[i] = gidx(sh, i);
    if (dims[i] < 0)
      return dfx__kctx_fail(ctx, DFX_EINVAL, "Dimension %lld must be >= 0", (long long)dims[i]);
  }
  dfx_dtype dt = (dfx_dtype)ctx->in[1]->dtype;
  int64_t count = dfx__shape_count((int)sh->count, dims);
  if (count < 0 || dfx__mul_size((size_t)count, dfx__dtype_storage(dt)) > dfx__tensor_limit())
    return dfx__kctx_fail(ctx, DFX_ELIMIT, "shape = %s is too large: the output would exceed the %zu-byte tensor limit",
                          dfx__shape_str((int)sh->count, dims, b1, sizeof b1), dfx__tensor_limit());
  dfx_tensor *out = dfx__kctx_alloc(ctx, 0, dt, (int)sh->count, dims);
  if (!out) return ctx->st->code;
  /* ScatterNd starts from zeros and adds, so duplicate indices sum. */
  if (dt != DFX_STRING) memset(out->data, 0, out->nbytes);
  return scatter_nd_into(ctx, out, ctx->in[0], ctx->in[1], DFX_GOP_ADD);
}

static dfx_code scatter_nd_ref(dfx_kctx *ctx, dfx_gop op) {
  dfx_tensor *out = copy_input(ctx);
  if (!out) return ctx->st->code;
  return scatter_nd_into(ctx, out, ctx->in[1], ctx->in[2], op);
}
static dfx_code scatter_nd_update(dfx_kctx *ctx) { return scatter_nd_ref(ctx, DFX_GOP_SET); }
static dfx_code scatter_nd_add(dfx_kctx *ctx) { return scatter_nd_ref(ctx, DFX_GOP_ADD); }
static dfx_code scatter_nd_sub(dfx_kctx *ctx) { return scatter_nd_ref(ctx, DFX_GOP_SUB); }
static dfx_code scatter_nd_max(dfx_kctx *ctx) { return scatter_nd_ref(ctx, DFX_GOP_MAX); }
static dfx_code scatter_nd_min(dfx_kctx *ctx) { return scatter_nd_ref(ctx, DFX_GOP_MIN); }

#define COPY_T "T: " DFX_G_COPY
#define REAL_T "T: " DFX_G_REAL
#define NUM_T "T: " DFX_G_NUM
#define MINMAX_T "T: {half, bfloat16, float, double, int32, int64}"
#define IDX "; Tindices: {int32, int64}"
#define P dfx__g_policy_init
static const dfx_kernel_def kernels[] = {
    {"ScatterUpdate", COPY_T IDX, scatter_update, DFX_KERNEL_CHEAP, NULL, NULL},
    {"ScatterAdd", NUM_T IDX, scatter_add, DFX_KERNEL_CHEAP, NULL, NULL},
    {"ScatterSub", NUM_T IDX, scatter_sub, DFX_KERNEL_CHEAP, NULL, NULL},
    {"ScatterMul", NUM_T IDX, scatter_mul, DFX_KERNEL_CHEAP, NULL, NULL},
    {"ScatterDiv", NUM_T IDX, scatter_div, DFX_KERNEL_CHEAP, NULL, NULL},
    {"ScatterMax", MINMAX_T IDX, scatter_max, DFX_KERNEL_CHEAP, NULL, NULL},
    {"ScatterMin", MINMAX_T IDX, scatter_min, DFX_KERNEL_CHEAP, NULL, NULL},
    /* Duplicate indices add: strings concatenate, bools or. */
    {"ScatterNd", "T: {" DFX_G_NUM_LIST ", bool, string}; Tindices: {int16, int32, int64}", scatter_nd,
     DFX_KERNEL_CHEAP, P, NULL},
    {"ScatterNdUpdate", COPY_T IDX, scatter_nd_update, DFX_KERNEL_CHEAP, P, NULL},
    {"ScatterNdAdd", NUM_T IDX, scatter_nd_add, DFX_KERNEL_CHEAP, P, NULL},
    {"ScatterNdSub", NUM_T IDX, scatter_nd_sub, DFX_KERNEL_CHEAP, P, NULL},
    {"ScatterNdMax", REAL_T IDX, scatter_nd_max, DFX_KERNEL_CHEAP, P, NULL},
    {"ScatterNdMin", REAL_T IDX, scatter_nd_min, DFX_KERNEL_CHEAP, P, NULL},
    /* Inputs are never modified here, so the non-aliasing and the TensorScatter
     * forms share the ref forms' kernels. */
    {"ScatterNdNonAliasingAdd", "T: {" DFX_G_NUM_LIST ", bool}" IDX, scatter_nd_add, DFX_KERNEL_CHEAP, P, NULL},
    {"TensorScatterUpdate", COPY_T "; Tindices: {int16, int32, int64, uint16}", scatter_nd_update, DFX_KERNEL_CHEAP,
     P, NULL},
    {"TensorScatterAdd", NUM_T IDX, scatter_nd_add, DFX_KERNEL_CHEAP, P, NULL},
    {"TensorScatterSub", NUM_T IDX, scatter_nd_sub, DFX_KERNEL_CHEAP, P, NULL},
    {"TensorScatterMax", REAL_T IDX, scatter_nd_max, DFX_KERNEL_CHEAP, P, NULL},
    {"TensorScatterMin", REAL_T IDX, scatter_nd_min, DFX_KERNEL_CHEAP, P, NULL},
    {NULL}};

void dfx__kernels_gather_scatter(dfx_registry *r);
void dfx__kernels_gather_scatter(dfx_registry *r) { dfx__kernels_add(r, kernels); }
