/* segment.c - SparseSegmentSum/Mean/SqrtN and their WithNumSegments forms:
 * output row segment_ids[i] combines data rows indices[i] (row-major, dim 0
 * of data is the row). segment_ids must be sorted; rows of absent segments
 * are 0. Mean divides by the row count, SqrtN by its square root. Half
 * types accumulate in float, integers wrap as TF's do. */
#include <math.h>
#include <string.h>

#include "sutil.h"

typedef enum { SEG_SUM, SEG_MEAN, SEG_SQRTN } seg_mode;

/* acc[j] += row[j] for one data row (acc is float for the half types). */
#define ADD_ROW(T, A)                                                               \
  static void add_##T(void *acc, const void *row, int64_t n) {                      \
    A *a = acc;                                                                     \
    const T *r = row;                                                               \
    for (int64_t j = 0; j < n; j++) a[j] = (A)(a[j] + (A)r[j]);                     \
  }
ADD_ROW(float, float)
ADD_ROW(double, double)
#undef ADD_ROW

#define ADD_INT(T, U)                                                               \
  static void add_##T(void *acc, const void *row, int64_t n) {                      \
    T *a = acc;                                                                     \
    const T *r = row;                                                               \
    for (int64_t j = 0; j < n; j++) a[j] = (T)((U)a[j] + (U)r[j]);                  \
  }
ADD_INT(int8_t, uint8_t)
ADD_INT(int16_t, uint16_t)
ADD_INT(int32_t, uint32_t)
ADD_INT(int64_t, uint64_t)
ADD_INT(uint8_t, uint8_t)
ADD_INT(uint16_t, uint16_t)
ADD_INT(uint32_t, uint32_t)
ADD_INT(uint64_t, uint64_t)
#undef ADD_INT

static void add_f16(void *acc, const void *row, int64_t n) {
  float *a = acc;
  const uint16_t *r = row;
  for (int64_t j = 0; j < n; j++) a[j] += dfx__f16_to_f32(r[j]);
}

static void add_bf16(void *acc, const void *row, int64_t n) {
  float *a = acc;
  const uint16_t *r = row;
  for (int64_t j = 0; j < n; j++) a[j] += dfx__bf16_to_f32(r[j]);
}

typedef void (*add_fn)(void *acc, const void *row, int64_t n);

static add_fn adder(dfx_dtype dt) {
  switch (dt) {
    case DFX_F32: return add_float;
    case DFX_F64: return add_double;
    case DFX_I8: return add_int8_t;
    case DFX_I16: return add_int16_t;
    case DFX_I32: return add_int32_t;
    case DFX_I64: return add_int64_t;
    case DFX_U8: return add_uint8_t;
    case DFX_U16: return add_uint16_t;
    case DFX_U32: return add_uint32_t;
    case DFX_U64: return add_uint64_t;
    case DFX_F16: return add_f16;
    case DFX_BF16: return add_bf16;
    default: return NULL;
  }
}

/* Finishes one segment of `count` rows: mean / sqrtn scaling, and for the
 * half types the rounding from the float accumulator into dst. */
static void finish(dfx_dtype dt, seg_mode mode, void *dst, float *facc, int64_t n, int64_t count) {
  if (dt == DFX_F32) {
    float *d = dst, m = mode == SEG_MEAN ? (float)count : mode == SEG_SQRTN ? sqrtf((float)count) : 1;
    if (mode != SEG_SUM)
      for (int64_t j = 0; j < n; j++) d[j] /= m;
  } else if (dt == DFX_F64) {
    double *d = dst, m = mode == SEG_MEAN ? (double)count : mode == SEG_SQRTN ? sqrt((double)count) : 1;
    if (mode != SEG_SUM)
      for (int64_t j = 0; j < n; j++) d[j] /= m;
  } else if (dt == DFX_F16 || dt == DFX_BF16) {
    float m = mode == SEG_MEAN ? (float)count : mode == SEG_SQRTN ? sqrtf((float)count) : 1;
    uint16_t *d = dst;
    for (int64_t j = 0; j < n; j++) {
      float v = mode == SEG_SUM ? facc[j] : facc[j] / m;
      d[j] = dt == DFX_F16 ? dfx__f32_to_f16(v) : dfx__f32_to_bf16(v);
    }
  }
}

static dfx_code sparse_segment(dfx_kctx *ctx, seg_mode mode, bool has_ns) {
  const dfx_tensor *data = ctx->in[0], *ind = ctx->in[1], *ids = ctx->in[2];
  dfx_dtype dt = (dfx_dtype)data->dtype;
  if (ind->ndims != 1) return dfx__kctx_fail(ctx, DFX_EINVAL, "indices should be a vector.");
  if (ids->ndims != 1) return dfx__kctx_fail(ctx, DFX_EINVAL, "segment_ids should be a vector.");
  if (ind->count != ids->count)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "segment_ids and indices should have same size.");
  if (data->ndims < 1) return dfx__kctx_fail(ctx, DFX_EINVAL, "Shape must be at least rank 1 but is rank 0");
  int64_t n = ind->count, rows = -1;
  if (has_ns) {
    const dfx_tensor *ns = ctx->in[3];
    if (ns->ndims != 0) return dfx__kctx_fail(ctx, DFX_EINVAL, "num_segments should be a scalar");
    rows = sidx(ns, 0);
  }
  int64_t last = n > 0 ? sidx(ids, n - 1) : -1, last1 = last == INT64_MAX ? INT64_MAX : last + 1;
  if (has_ns) {
    if (rows < last1) return dfx__kctx_fail(ctx, DFX_EINVAL, "segment ids must be < num_segments");
  } else {
    rows = last1;
  }
  if (rows < 0) return dfx__kctx_fail(ctx, DFX_EINVAL, "segment ids must be >= 0");
  int64_t inner = data->ndims > 1 ? dfx__shape_count(data->ndims - 1, data->dims + 1) : 1;
  int64_t od[DFX_MAX_DIMS];
  memcpy(od, data->dims, sizeof(int64_t) * data->ndims);
  od[0] = rows;
  int64_t total = dfx__shape_count(data->ndims, od);
  if (dfx__s_check_count(ctx, "SparseSegment output", inner > 0 ? total : 0, dt)) return ctx->st->code;
  dfx_tensor *out = dfx__kctx_alloc(ctx, 0, dt, data->ndims, od);
  if (!out) return ctx->st->code;
  if (out->nbytes) memset(out->data, 0, out->nbytes);
  if (n == 0) return DFX_OK;
  if (rows <= 0) return dfx__kctx_fail(ctx, DFX_EINVAL, "segment ids must be >= 0");
  add_fn add = adder(dt);
  if (!add) return dfx__kctx_fail(ctx, DFX_EINVAL, "%s does not support dtype %s", ctx->node->op, dfx_dtype_name(dt));
  bool half = dt == DFX_F16 || dt == DFX_BF16;
  float *facc = NULL;
  if (half && inner > 0 && !(facc = dfx__malloc(dfx__mul_size((size_t)inner, sizeof(float)))))
    return dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory");
  size_t es = dfx__dtype_storage(dt);
  int64_t nrows = data->dims[0], left = DFX_S_POLL_EVERY;
  dfx_code code = DFX_OK;
  for (int64_t start = 0; start < n;) {
    int64_t seg = sidx(ids, start), end = start + 1;
    while (end < n && sidx(ids, end) == seg) end++;
    if (end < n && sidx(ids, end) < seg) {
      code = dfx__kctx_fail(ctx, DFX_EINVAL, "segment ids are not increasing");
      break;
    }
    if (seg < 0 || seg >= rows) {
      code = dfx__kctx_fail(ctx, DFX_EINVAL,
                            "Segment id %lld out of range [0, %lld), possibly because 'segment_ids' input is not "
                            "sorted.",
                            (long long)seg, (long long)rows);
      break;
    }
    for (int64_t i = start; i < end; i++) {
      int64_t r = sidx(ind, i);
      if (r < 0 || r >= nrows) {
        code = dfx__kctx_fail(ctx, DFX_EINVAL, "Bad: indices[%lld] == %lld out of range [0, %lld)", (long long)i,
                              (long long)r, (long long)nrows);
        goto done;
      }
    }
    char *dst = (char *)out->data + (size_t)(seg * inner) * es;
    if (half && inner > 0) memset(facc, 0, (size_t)inner * sizeof(float));
    for (int64_t i = start; i < end; i++) {
      add(half ? (void *)facc : dst, (const char *)data->data + (size_t)(sidx(ind, i) * inner) * es, inner);
      if ((code = stick(ctx, &left, inner + 1))) goto done;
    }
    finish(dt, mode, dst, facc, inner, end - start);
    start = end;
  }
done:
  dfx__free(facc);
  return code;
}

static dfx_code ss_sum(dfx_kctx *ctx) { return sparse_segment(ctx, SEG_SUM, false); }
static dfx_code ss_mean(dfx_kctx *ctx) { return sparse_segment(ctx, SEG_MEAN, false); }
static dfx_code ss_sqrtn(dfx_kctx *ctx) { return sparse_segment(ctx, SEG_SQRTN, false); }
static dfx_code ss_sum_ns(dfx_kctx *ctx) { return sparse_segment(ctx, SEG_SUM, true); }
static dfx_code ss_mean_ns(dfx_kctx *ctx) { return sparse_segment(ctx, SEG_MEAN, true); }
static dfx_code ss_sqrtn_ns(dfx_kctx *ctx) { return sparse_segment(ctx, SEG_SQRTN, true); }

#define SUM_T "T: {float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, uint64}"
#define MEAN_T "T: {bfloat16, half, float, double}"
#define IDX "; Tidx: {int32, int64}; Tsegmentids: {int32, int64}"
#define NSEG "; Tnumsegments: {int32, int64}"
static const dfx_kernel_def kernels[] = {
    {"SparseSegmentSum", SUM_T IDX, ss_sum, DFX_KERNEL_CHEAP, NULL, NULL},
    {"SparseSegmentMean", MEAN_T IDX, ss_mean, DFX_KERNEL_CHEAP, NULL, NULL},
    {"SparseSegmentSqrtN", MEAN_T IDX, ss_sqrtn, DFX_KERNEL_CHEAP, NULL, NULL},
    {"SparseSegmentSumWithNumSegments", SUM_T IDX NSEG, ss_sum_ns, DFX_KERNEL_CHEAP, NULL, NULL},
    {"SparseSegmentMeanWithNumSegments", MEAN_T IDX NSEG, ss_mean_ns, DFX_KERNEL_CHEAP, NULL, NULL},
    {"SparseSegmentSqrtNWithNumSegments", MEAN_T IDX NSEG, ss_sqrtn_ns, DFX_KERNEL_CHEAP, NULL, NULL},
    {NULL}};

void dfx__kernels_sparse_segment(dfx_registry *r);
void dfx__kernels_sparse_segment(dfx_registry *r) { dfx__kernels_add(r, kernels); }
