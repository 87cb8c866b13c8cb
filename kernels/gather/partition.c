/* partition.c - DynamicPartition, DynamicStitch and ParallelDynamicStitch
 * over every copyable dtype (strings deep-copied). Row-major: partitions and
 * indices cover the leading dims of their data; each entry moves one row. */
#include <string.h>

#include "alloc.h"
#include "gutil.h"

static dfx_code dynamic_partition(dfx_kctx *ctx) {
  const dfx_tensor *data = ctx->in[0], *parts = ctx->in[1];
  char b1[128], b2[128];
  int np = ctx->n_out;
  bool prefix = parts->ndims <= data->ndims;
  for (int i = 0; prefix && i < parts->ndims; i++) prefix = parts->dims[i] == data->dims[i];
  if (!prefix)
    return dfx__kctx_fail(ctx, DFX_EINVAL,
                          "data.shape must start with partitions.shape, got data.shape = %s, partitions.shape = %s",
                          DFX_SHAPE_STR(data, b1), DFX_SHAPE_STR(parts, b2));
  /* np is the num_partitions attr; +1 keeps the request non-zero. */
  int64_t *counts = dfx__calloc((size_t)np + 1, sizeof *counts);
  if (!counts) return dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory");
  /* A first pass counts each partition's rows, so every output is allocated
   * once at its final size. */
  const int32_t *pv = parts->data;
  for (int64_t k = 0; k < parts->count; k++) {
    if (pv[k] < 0 || pv[k] >= np) {
      dfx__free(counts);
      return dfx__kctx_fail(ctx, DFX_EINVAL, "partitions%s = %d is not in [0, %d)",
                            dfx__g_slice_str(parts->ndims, parts->dims, k, b1, sizeof b1), (int)pv[k], np);
    }
    counts[pv[k]]++;
  }
  dfx_dtype dt = (dfx_dtype)data->dtype;
  /* Scalar partitions make the outputs one rank more than data: room for
   * that, and dfx__kctx_alloc refuses ranks past DFX_MAX_DIMS. */
  int64_t od[DFX_MAX_DIMS + 1], inner = gprod(data->dims, parts->ndims, data->ndims), left = DFX_G_POLL_EVERY;
  int on = 1;
  for (int i = parts->ndims; i < data->ndims; i++) od[on++] = data->dims[i];
  dfx_code c = DFX_OK;
  for (int p = 0; p < np && c == DFX_OK; p++) {
    od[0] = counts[p];
    if (!dfx__kctx_alloc(ctx, p, dt, on, od)) c = ctx->st->code;
    counts[p] = 0; /* becomes the fill position */
  }
  size_t es = dfx__dtype_storage(dt);
  for (int64_t k = 0; k < parts->count && c == DFX_OK && inner > 0; k++) {
    dfx_tensor *o = ctx->out[pv[k]];
    c = dfx__g_copy(ctx, dt, (char *)o->data + (size_t)(counts[pv[k]]++ * inner) * es,
                    (const char *)data->data + (size_t)(k * inner) * es, inner);
    if (!c) c = gtick(ctx, &left, inner);
  }
  dfx__free(counts);
  return c;
}

static dfx_code dynamic_stitch(dfx_kctx *ctx) {
  int n = ctx->n_in / 2;
  char b1[128], b2[128];
  if (n < 1) return dfx__kctx_fail(ctx, DFX_EINVAL, "DynamicStitch needs at least one input");
  const dfx_tensor *d0 = ctx->in[n], *i0 = ctx->in[0];
  /* The output has max index + 1 rows, so every index is read before the
   * output exists. */
  int64_t max_index = -1;
  for (int i = 0; i < n; i++) {
    const dfx_tensor *ix = ctx->in[i], *d = ctx->in[n + i];
    bool prefix = ix->ndims <= d->ndims;
    for (int k = 0; prefix && k < ix->ndims; k++) prefix = ix->dims[k] == d->dims[k];
    if (!prefix)
      return dfx__kctx_fail(ctx, DFX_EINVAL, "data[%d].shape = %s does not start with indices[%d].shape = %s", i,
                            DFX_SHAPE_STR(d, b1), i, DFX_SHAPE_STR(ix, b2));
    /* Every data[i] must carry rows of one shape: the dims after its indices'
     * dims match data[0]'s. */
    bool same = d->ndims - ix->ndims == d0->ndims - i0->ndims;
    for (int k = 0; same && k < d->ndims - ix->ndims; k++) same = d->dims[ix->ndims + k] == d0->dims[i0->ndims + k];
    if (i > 0 && !same)
      return dfx__kctx_fail(ctx, DFX_EINVAL, "Need data[0].shape[%d:] = %s to match data[%d].shape[%d:] = %s",
                            i0->ndims, dfx__shape_str(d0->ndims - i0->ndims, d0->dims + i0->ndims, b1, sizeof b1), i,
                            ix->ndims, dfx__shape_str(d->ndims - ix->ndims, d->dims + ix->ndims, b2, sizeof b2));
    const int32_t *v = ix->data;
    for (int64_t k = 0; k < ix->count; k++) {
      if (v[k] < 0) return dfx__kctx_fail(ctx, DFX_EINVAL, "indices[%lld] is out of range", (long long)k);
      if (v[k] > max_index) max_index = v[k];
    }
  }
  int64_t od[DFX_MAX_DIMS + 1], inner = gprod(d0->dims, i0->ndims, d0->ndims), left = DFX_G_POLL_EVERY;
  int on = 1;
  od[0] = max_index + 1;
  for (int k = i0->ndims; k < d0->ndims; k++) od[on++] = d0->dims[k];
  dfx_dtype dt = (dfx_dtype)d0->dtype;
  if (dfx__g_check_rows(ctx, "the largest index", max_index, od[0], inner, dt)) return ctx->st->code;
  dfx_tensor *out = dfx__kctx_alloc(ctx, 0, dt, on, od);
  if (!out) return ctx->st->code;
  if (dt != DFX_STRING) memset(out->data, 0, out->nbytes);
  size_t es = dfx__dtype_storage(dt);
  /* Inputs are copied in order, so when indices repeat the last one written
   * wins (TF's DynamicStitch rule); rows no index names stay zero. */
  for (int i = 0; i < n && inner > 0; i++) {
    const dfx_tensor *ix = ctx->in[i], *d = ctx->in[n + i];
    const int32_t *v = ix->data;
    for (int64_t k = 0; k < ix->count; k++) {
      dfx_code c = dfx__g_copy(ctx, dt, (char *)out->data + (size_t)(v[k] * inner) * es,
                               (const char *)d->data + (size_t)(k * inner) * es, inner);
      if (!c) c = gtick(ctx, &left, inner);
      if (c) return c;
    }
  }
  return DFX_OK;
}

static const dfx_kernel_def kernels[] = {
    {"DynamicPartition", "T: " DFX_G_COPY, dynamic_partition, DFX_KERNEL_CHEAP, NULL, NULL},
    {"DynamicStitch", "T: " DFX_G_COPY, dynamic_stitch, DFX_KERNEL_CHEAP, NULL, NULL},
    {"ParallelDynamicStitch", "T: " DFX_G_COPY, dynamic_stitch, DFX_KERNEL_CHEAP, NULL, NULL},
    {NULL}};

void dfx__kernels_gather_partition(dfx_registry *r);
void dfx__kernels_gather_partition(dfx_registry *r) { dfx__kernels_add(r, kernels); }
