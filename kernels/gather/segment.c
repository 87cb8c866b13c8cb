/* segment.c - segment reductions: UnsortedSegment{Sum,Max,Min,Prod}
 * (num_segments input; negative ids dropped; empty segments get 0, lowest,
 * highest or 1) and the sorted Segment{Sum,Mean,Max,Min,Prod} (gaps get 0, or
 * 1 for Prod). Row-major: segment_ids index the leading dims of data, each id
 * owns one contiguous row of the output. */
#include <string.h>

#include "gutil.h"

static dfx_code unsorted(dfx_kctx *ctx, dfx_gop op, dfx_gfill init) {
  const dfx_tensor *data = ctx->in[0], *ids = ctx->in[1], *ns = ctx->in[2];
  char b1[128], b2[128];
  dfx_dtype dt = (dfx_dtype)data->dtype;
  if (ns->ndims != 0)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "num_segments should be a scalar, not shape %s", DFX_SHAPE_STR(ns, b1));
  int64_t nseg = gidx(ns, 0);
  if (nseg < 0)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Input num_segments == %lld must not be negative.", (long long)nseg);
  bool prefix = ids->ndims <= data->ndims;
  for (int i = 0; prefix && i < ids->ndims; i++) prefix = ids->dims[i] == data->dims[i];
  if (!prefix)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "data.shape = %s does not start with segment_ids.shape = %s",
                          DFX_SHAPE_STR(data, b1), DFX_SHAPE_STR(ids, b2));
  int64_t od[DFX_MAX_DIMS + 1];
  int on = 0;
  /* Output: [num_segments] + data.shape[rank(ids):], one row per segment. */
  od[on++] = nseg;
  for (int i = ids->ndims; i < data->ndims; i++) od[on++] = data->dims[i];
  if (on > DFX_MAX_DIMS) return dfx__kctx_fail(ctx, DFX_EINVAL, "output rank exceeds %d", DFX_MAX_DIMS);
  int64_t inner = gprod(od, 1, on), left = DFX_G_POLL_EVERY;
  if (dfx__g_check_rows(ctx, "num_segments", nseg, nseg, inner, dt)) return ctx->st->code;
  /* Check ids before allocating. */
  for (int64_t k = 0; k < ids->count; k++) {
    int64_t j = gidx(ids, k);
    /* Only ids past the end are errors: negative ids are TF's way of dropping a
     * row, and the loop below skips them. */
    if (j >= nseg)
      return dfx__kctx_fail(ctx, DFX_EINVAL, "segment_ids%s = %lld is out of range [0, %lld)",
                            dfx__g_slice_str(ids->ndims, ids->dims, k, b1, sizeof b1), (long long)j, (long long)nseg);
  }
  dfx_tensor *out = dfx__kctx_alloc(ctx, 0, dt, on, od);
  if (!out) return ctx->st->code;
  /* Each segment starts at its op's identity, the value an empty one keeps. */
  if (dfx__g_fill(ctx, dt, out->data, out->count, init)) return ctx->st->code;
  size_t es = dfx__dtype_storage(dt);
  for (int64_t k = 0; k < ids->count && inner > 0; k++) {
    int64_t j = gidx(ids, k);
    if (j < 0) continue;
    dfx_code c = dfx__g_apply(ctx, dt, op, (char *)out->data + (size_t)(j * inner) * es,
                              (const char *)data->data + (size_t)(k * inner) * es, inner, 1);
    if (!c) c = gtick(ctx, &left, inner);
    if (c) return c;
  }
  return DFX_OK;
}

static dfx_code usum(dfx_kctx *ctx) { return unsorted(ctx, DFX_GOP_ADD, DFX_GFILL_ZERO); }
static dfx_code uprod(dfx_kctx *ctx) { return unsorted(ctx, DFX_GOP_MUL, DFX_GFILL_ONE); }
static dfx_code umax(dfx_kctx *ctx) { return unsorted(ctx, DFX_GOP_MAX, DFX_GFILL_LOWEST); }
static dfx_code umin(dfx_kctx *ctx) { return unsorted(ctx, DFX_GOP_MIN, DFX_GFILL_HIGHEST); }

/* Sorted segments: op combines rows; mean divides by the row count. */
static dfx_code sorted(dfx_kctx *ctx, dfx_gop op, bool mean) {
  const dfx_tensor *data = ctx->in[0], *ids = ctx->in[1];
  dfx_dtype dt = (dfx_dtype)data->dtype;
  if (ids->ndims != 1) return dfx__kctx_fail(ctx, DFX_EINVAL, "segment_ids should be a vector.");
  if (data->ndims < 1 || ids->count != data->dims[0])
    return dfx__kctx_fail(ctx, DFX_EINVAL, "segment_ids should be the same size as dimension 0 of input.");
  /* Sorted ids: the last one sets the row count (rows -1 flags an id that
   * cannot be incremented, rejected by dfx__g_check_rows). */
  int64_t n = ids->count, last = n > 0 ? gidx(ids, n - 1) : -1, rows = last == INT64_MAX ? -1 : last + 1;
  if (last < -1) return dfx__kctx_fail(ctx, DFX_EINVAL, "segment ids must be >= 0");
  int64_t inner = gprod(data->dims, 1, data->ndims), left = DFX_G_POLL_EVERY;
  if (dfx__g_check_rows(ctx, "the largest segment id", last, rows, inner, dt)) return ctx->st->code;
  for (int64_t k = 0; k < n; k++) {
    int64_t j = gidx(ids, k);
    /* The sorted ops rely on equal ids being adjacent; checking the order up
     * front fails before any output exists. */
    if (k > 0 && j < gidx(ids, k - 1)) return dfx__kctx_fail(ctx, DFX_EINVAL, "segment ids are not increasing");
    if (j < 0 || j >= rows)
      return dfx__kctx_fail(ctx, DFX_EINVAL,
                            "Segment id %lld out of range [0, %lld), possibly because 'segment_ids' input is not "
                            "sorted.",
                            (long long)j, (long long)rows);
  }
  int64_t od[DFX_MAX_DIMS];
  od[0] = rows;
  for (int i = 1; i < data->ndims; i++) od[i] = data->dims[i];
  dfx_tensor *out = dfx__kctx_alloc(ctx, 0, dt, data->ndims, od);
  if (!out) return ctx->st->code;
  if (dfx__g_fill(ctx, dt, out->data, out->count, op == DFX_GOP_MUL ? DFX_GFILL_ONE : DFX_GFILL_ZERO))
    return ctx->st->code;
  if (inner == 0) return DFX_OK;
  size_t es = dfx__dtype_storage(dt);
  /* Rows with equal ids are adjacent (ids are sorted): each run reduces into
   * its segment's row. */
  for (int64_t k = 0; k < n;) {
    int64_t j = gidx(ids, k), e = k + 1;
    while (e < n && gidx(ids, e) == j) e++;
    char *dst = (char *)out->data + (size_t)(j * inner) * es;
    const char *src = data->data;
    /* The first row of a run is copied, not combined with the fill, so Max and
     * Min do not see the 0 that gaps get; later rows combine. */
    memcpy(dst, src + (size_t)(k * inner) * es, (size_t)inner * es);
    for (int64_t r = k + 1; r < e; r++) {
      dfx_code c = dfx__g_apply(ctx, dt, op, dst, src + (size_t)(r * inner) * es, inner, 1);
      if (!c) c = gtick(ctx, &left, inner);
      if (c) return c;
    }
    if (mean) dfx__g_div_count(dt, dst, inner, e - k);
    k = e;
  }
  return DFX_OK;
}

static dfx_code ssum(dfx_kctx *ctx) { return sorted(ctx, DFX_GOP_ADD, false); }
static dfx_code smean(dfx_kctx *ctx) { return sorted(ctx, DFX_GOP_ADD, true); }
static dfx_code sprod(dfx_kctx *ctx) { return sorted(ctx, DFX_GOP_MUL, false); }
static dfx_code smax(dfx_kctx *ctx) { return sorted(ctx, DFX_GOP_MAX, false); }
static dfx_code smin(dfx_kctx *ctx) { return sorted(ctx, DFX_GOP_MIN, false); }

#define REAL_T "T: " DFX_G_REAL
#define NUM_T "T: " DFX_G_NUM
#define IDX "; Tindices: {int32, int64}"
#define NSEG "; Tnumsegments: {int32, int64}"
static const dfx_kernel_def kernels[] = {
    {"UnsortedSegmentSum", NUM_T "; Tindices: {int16, int32, int64}" NSEG, usum, DFX_KERNEL_CHEAP, NULL, NULL},
    {"UnsortedSegmentProd", NUM_T IDX NSEG, uprod, DFX_KERNEL_CHEAP, NULL, NULL},
    {"UnsortedSegmentMax", REAL_T IDX NSEG, umax, DFX_KERNEL_CHEAP, NULL, NULL},
    {"UnsortedSegmentMin", REAL_T IDX NSEG, umin, DFX_KERNEL_CHEAP, NULL, NULL},
    {"SegmentSum", NUM_T IDX, ssum, DFX_KERNEL_CHEAP, NULL, NULL},
    {"SegmentMean", NUM_T IDX, smean, DFX_KERNEL_CHEAP, NULL, NULL},
    {"SegmentProd", NUM_T IDX, sprod, DFX_KERNEL_CHEAP, NULL, NULL},
    {"SegmentMax", REAL_T IDX, smax, DFX_KERNEL_CHEAP, NULL, NULL},
    {"SegmentMin", REAL_T IDX, smin, DFX_KERNEL_CHEAP, NULL, NULL},
    {NULL}};

void dfx__kernels_gather_segment(dfx_registry *r);
void dfx__kernels_gather_segment(dfx_registry *r) { dfx__kernels_add(r, kernels); }
