/* gather.c - Gather, GatherV2 (axis, batch_dims) and GatherNd over every
 * copyable dtype (strings deep-copied). Row-major; out-of-range indices are
 * errors, as on TF's CPU (GatherNd's IGNORE policy zero-fills instead). */
#include <stdio.h>
#include <string.h>

#include "gutil.h"

/* Copies `inner` elements per gathered row; slices are contiguous. */
static dfx_code copy_rows(dfx_kctx *ctx, dfx_dtype dt, char *dst, const char *src, int64_t n) {
  if (dt == DFX_STRING) return dfx__g_copy(ctx, dt, dst, src, n);
  memcpy(dst, src, (size_t)n * dfx__dtype_storage(dt));
  return DFX_OK;
}

static dfx_code gather_impl(dfx_kctx *ctx, int64_t axis, bool axis_set, int64_t batch_dims) {
  const dfx_tensor *p = ctx->in[0], *ix = ctx->in[1];
  char b1[128], b2[128];
  int pr = p->ndims, ir = ix->ndims;
  if (batch_dims != 0) {
    if (batch_dims < -ir || batch_dims > ir)
      return dfx__kctx_fail(ctx, DFX_EINVAL, "Expected batch_dims in the range [%d, %d], but got %lld", -ir, ir,
                            (long long)batch_dims);
    if (batch_dims < 0) batch_dims += ir;
    /* TF's default: with batch dims, the gather axis is the first one after. */
    if (!axis_set) axis = batch_dims;
    if (batch_dims >= pr)
      return dfx__kctx_fail(ctx, DFX_EINVAL, "batch_dims (%lld) must be less than rank(params) (%d).",
                            (long long)batch_dims, pr);
  }
  if (axis < -pr || axis >= pr) {
    if (pr == 0) return dfx__kctx_fail(ctx, DFX_EINVAL, "params must be at least 1 dimensional");
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Expected axis in the range [%d, %d), but got %lld", -pr, pr,
                          (long long)axis);
  }
  if (axis < 0) axis += pr;
  if (batch_dims != 0) {
    if (axis < batch_dims)
      return dfx__kctx_fail(ctx, DFX_EINVAL, "batch_dims (%lld) must be less than or equal to axis (%lld).",
                            (long long)batch_dims, (long long)axis);
    for (int i = 0; i < batch_dims; i++)
      if (p->dims[i] != ix->dims[i])
        return dfx__kctx_fail(ctx, DFX_EINVAL, "params.shape[%d]: %lld should be equal to indices.shape[%d]: %lld",
                              i, (long long)p->dims[i], i, (long long)ix->dims[i]);
  }
  int64_t od[2 * DFX_MAX_DIMS];
  int on = 0;
  /* Output shape: params' dims before the axis, the indices' dims after the
   * batch dims (which params already supplied), then params' dims after the
   * axis. */
  for (int i = 0; i < axis; i++) od[on++] = p->dims[i];
  for (int i = (int)batch_dims; i < ir; i++) od[on++] = ix->dims[i];
  for (int i = (int)axis + 1; i < pr; i++) od[on++] = p->dims[i];
  if (on > DFX_MAX_DIMS)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "output rank %d exceeds %d (params %s, indices %s)", on, DFX_MAX_DIMS,
                          DFX_SHAPE_STR(p, b1), DFX_SHAPE_STR(ix, b2));
  /* Validate every index first; report the first bad one like TF. */
  /* Before allocating, so a bad index costs no output and no partial copy. */
  int64_t gdim = p->dims[axis];
  for (int64_t k = 0; k < ix->count; k++) {
    int64_t v = gidx(ix, k);
    if (v < 0 || v >= gdim)
      return dfx__kctx_fail(ctx, DFX_EINVAL, "indices%s = %lld is not in [0, %lld)",
                            dfx__g_slice_str(ir, ix->dims, k, b1, sizeof b1), (long long)v, (long long)gdim);
  }
  dfx_dtype dt = (dfx_dtype)p->dtype;
  dfx_tensor *out = dfx__kctx_alloc(ctx, 0, dt, on, od);
  if (!out) return ctx->st->code;
  if (out->count == 0) return DFX_OK;
  /* A non-empty output makes every factor positive and no larger than a
   * tensor's element count, so the offsets below cannot overflow. */
  int64_t batch = gprod(p->dims, 0, (int)batch_dims),
          outer = gprod(p->dims, (int)batch_dims, (int)axis), inner = gprod(p->dims, (int)axis + 1, pr),
          n = gprod(ix->dims, (int)batch_dims, ir), left = DFX_G_POLL_EVERY;
  size_t es = dfx__dtype_storage(dt);
  const char *src = p->data;
  char *dst = out->data;
  for (int64_t b = 0; b < batch; b++)
    for (int64_t o = 0; o < outer; o++) {
      /* Params are [batch, outer, gdim, inner] and the output [batch, outer, n,
       * inner]: row v of the gathered dim becomes row i. */
      const char *prow = src + (size_t)((b * outer + o) * gdim * inner) * es;
      char *orow = dst + (size_t)((b * outer + o) * n * inner) * es;
      for (int64_t i = 0; i < n; i++) {
        int64_t v = gidx(ix, b * n + i);
        dfx_code c = copy_rows(ctx, dt, orow + (size_t)(i * inner) * es, prow + (size_t)(v * inner) * es, inner);
        if (!c) c = gtick(ctx, &left, inner);
        if (c) return c;
      }
    }
  return DFX_OK;
}

static dfx_code gather_v2(dfx_kctx *ctx) {
  int64_t axis;
  const dfx_tensor *a = ctx->in[2];
  /* A one-element axis tensor of any rank is accepted, as a scalar. */
  if (a->ndims != 0 && a->count != 1) {
    char b[128];
    return dfx__kctx_fail(ctx, DFX_EINVAL, "axis must be scalar, but saw shape: %s", DFX_SHAPE_STR(a, b));
  }
  if (dfx__kctx_scalar_i64(ctx, 2, "axis", &axis)) return ctx->st->code;
  return gather_impl(ctx, axis, true, dfx__attr_int(ctx->node, "batch_dims", 0));
}

dfx_code dfx__g_gather(dfx_kctx *ctx, int64_t axis, int64_t batch_dims) {
  return gather_impl(ctx, axis, true, batch_dims);
}

static dfx_code gather_v1(dfx_kctx *ctx) { return gather_impl(ctx, 0, true, 0); }

/* GatherNd: indices [..., K] index the first K dims of params. */
static dfx_code gather_nd(dfx_kctx *ctx) {
  const dfx_tensor *p = ctx->in[0], *ix = ctx->in[1];
  char b1[256], b2[256];
  if (p->ndims < 1) return dfx__kctx_fail(ctx, DFX_EINVAL, "params must be at least a vector");
  if (ix->ndims < 1) return dfx__kctx_fail(ctx, DFX_EINVAL, "indices must be at least a vector");
  int64_t k = ix->dims[ix->ndims - 1];
  if (k > p->ndims)
    return dfx__kctx_fail(ctx, DFX_EINVAL,
                          "index innermost dimension length must be <= params rank; saw: %lld vs. %d", (long long)k,
                          p->ndims);
  int64_t od[2 * DFX_MAX_DIMS];
  int on = 0;
  for (int i = 0; i < ix->ndims - 1; i++) od[on++] = ix->dims[i];
  for (int i = (int)k; i < p->ndims; i++) od[on++] = p->dims[i];
  /* With k > 0 the index rows number ix->count / k; with k == 0 indices
   * hold nothing and their leading dims (free to be huge) only shape the
   * output, which bounds the loop instead. */
  /* With k == 0 each (empty) index row selects all of params: the output is
   * nres copies of it. */
  int64_t nres = k > 0 ? ix->count / k : gprod(ix->dims, 0, ix->ndims - 1), slice = gprod(p->dims, (int)k, p->ndims);
  if (nres != 0 && p->count == 0 && k > 0)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Requested more than 0 entries, but params is empty.  Params shape: %s",
                          DFX_SHAPE_STR(p, b1));
  bool ignore = ctx->state != NULL;
  dfx_dtype dt = (dfx_dtype)p->dtype;
  dfx_tensor *out = dfx__kctx_alloc(ctx, 0, dt, on, od);
  if (!out) return ctx->st->code;
  if (k == 0 && out->count == 0) return DFX_OK;
  /* With the IGNORE policy a bad index row leaves its slice at zero; string
   * outputs start empty already. */
  if (ignore && dt != DFX_STRING) memset(out->data, 0, out->nbytes);
  size_t es = dfx__dtype_storage(dt);
  int64_t left = DFX_G_POLL_EVERY;
  for (int64_t r = 0; r < nres; r++) {
    int64_t off = 0;
    bool bad = false;
    for (int64_t j = 0; j < k && !bad; j++) {
      int64_t v = gidx(ix, r * k + j);
      bad = v < 0 || v >= p->dims[j];
      /* Row-major offset of the indexed slice within params' first k dims. */
      off = off * p->dims[j] + (bad ? 0 : v);
    }
    if (bad) {
      if (ignore) continue;
      int len = 0;
      char idx[256];
      idx[0] = 0;
      for (int64_t j = 0; j < k && len < (int)sizeof idx - 24; j++)
        len += snprintf(idx + len, sizeof idx - (size_t)len, "%s%lld", j ? ", " : "",
                        (long long)gidx(ix, r * k + j));
      return dfx__kctx_fail(ctx, DFX_EINVAL, "indices%s = [%s] does not index into param shape %s",
                            dfx__g_slice_str(ix->ndims - 1, ix->dims, r, b1, sizeof b1), idx, DFX_SHAPE_STR(p, b2));
    }
    dfx_code c = copy_rows(ctx, dt, (char *)out->data + (size_t)(r * slice) * es,
                           (const char *)p->data + (size_t)(off * slice) * es, slice);
    if (!c) c = gtick(ctx, &left, slice + k);
    if (c) return c;
  }
  return DFX_OK;
}

#define GATHER_T "Tparams: " DFX_G_COPY
static const dfx_kernel_def kernels[] = {
    {"GatherV2", GATHER_T "; Tindices: {int16, int32, int64}; Taxis: {int32, int64}", gather_v2, DFX_KERNEL_CHEAP,
     NULL, NULL},
    {"Gather", GATHER_T "; Tindices: {int32, int64}", gather_v1, DFX_KERNEL_CHEAP, NULL, NULL},
    {"GatherNd", GATHER_T "; Tindices: {int16, int32, int64}", gather_nd, DFX_KERNEL_CHEAP, dfx__g_policy_init, NULL},
    {NULL}};

void dfx__kernels_gather_gather(dfx_registry *r);
void dfx__kernels_gather_gather(dfx_registry *r) { dfx__kernels_add(r, kernels); }
