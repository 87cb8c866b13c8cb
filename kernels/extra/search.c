/* search.c - UpperBound / LowerBound (searchsorted over each row of a
 * [batch, n] matrix of sorted rows for each value of a [batch, m] matrix),
 * Reverse (the old op: a bool per dimension) and DenseBincount (counts or
 * weights per value below `size`, per row for a 2-D input). */
#include <string.h>

#include "alloc.h"
#include "gather/gutil.h"
#include "kdispatch.h"

/* ---- UpperBound / LowerBound ---- */

#define BOUND(DT, T)                                                                                          \
  static void bound_##T(const T *s, const T *v, int64_t batch, int64_t n, int64_t m, bool upper, int64_t *o) { \
    for (int64_t b = 0; b < batch; b++) {                                                                     \
      const T *row = s + b * n;                                                                               \
      for (int64_t j = 0; j < m; j++) {                                                                       \
        T x = v[b * m + j];                                                                                   \
        int64_t lo = 0, hi = n;                                                                               \
        while (lo < hi) {                                                                                     \
          int64_t mid = lo + (hi - lo) / 2;                                                                   \
          bool right = upper ? !(x < row[mid]) : row[mid] < x;                                                \
          if (right) lo = mid + 1;                                                                            \
          else hi = mid;                                                                                      \
        }                                                                                                     \
        o[b * m + j] = lo;                                                                                    \
      }                                                                                                       \
    }                                                                                                         \
  }
DFX_REAL_TYPES(BOUND)
#undef BOUND

/* Half types compare through float. */
static void bound_half(const uint16_t *s, const uint16_t *v, int64_t batch, int64_t n, int64_t m, bool upper, bool bf,
                       int64_t *o) {
  for (int64_t b = 0; b < batch; b++)
    for (int64_t j = 0; j < m; j++) {
      float x = bf ? dfx__bf16_to_f32(v[b * m + j]) : dfx__f16_to_f32(v[b * m + j]);
      int64_t lo = 0, hi = n;
      while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        float r = bf ? dfx__bf16_to_f32(s[b * n + mid]) : dfx__f16_to_f32(s[b * n + mid]);
        if (upper ? !(x < r) : r < x) lo = mid + 1;
        else hi = mid;
      }
      o[b * m + j] = lo;
    }
}

static dfx_code bound(dfx_kctx *ctx, bool upper) {
  const dfx_tensor *s = ctx->in[0], *v = ctx->in[1];
  char b1[128];
  if (s->ndims != 2) return dfx__kctx_fail(ctx, DFX_EINVAL, "sorted input argument must be a matrix");
  if (v->ndims != 2) return dfx__kctx_fail(ctx, DFX_EINVAL, "Shape must be rank 2 but is rank %d", v->ndims);
  if (s->dims[0] != v->dims[0]) return dfx__kctx_fail(ctx, DFX_EINVAL, "Leading dim_size of both tensors must match.");
  if (v->count >= INT32_MAX) return dfx__kctx_fail(ctx, DFX_EINVAL, "values tensor size must less than INT_MAX");
  dfx_dtype ot = dfx__attr_type(ctx->node, "out_type", DFX_I32);
  if (ot == DFX_I32 && s->dims[1] >= INT32_MAX)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "trailing dim_size must less than INT_MAX for int32 output type, was %lld",
                          (long long)s->dims[1]);
  dfx_tensor *out = dfx__kctx_alloc(ctx, 0, ot, 2, v->dims);
  if (!out) return ctx->st->code;
  int64_t batch = s->dims[0], n = s->dims[1], m = v->dims[1];
  int64_t *o = ot == DFX_I64 ? out->data : dfx__malloc(dfx__mul_size((size_t)out->count, sizeof(int64_t)) + 1);
  if (!o) return dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory");
  switch ((dfx_dtype)s->dtype) {
#define CASE(DT, T) \
  case DT: bound_##T(s->data, v->data, batch, n, m, upper, o); break;
    DFX_REAL_TYPES(CASE)
#undef CASE
    case DFX_F16:
    case DFX_BF16: bound_half(s->data, v->data, batch, n, m, upper, s->dtype == DFX_BF16, o); break;
    default:
      if (o != out->data) dfx__free(o);
      return dfx__kctx_fail(ctx, DFX_EINVAL, "unsupported dtype %s", DFX_SHAPE_STR(s, b1));
  }
  if (ot == DFX_I32) {
    for (int64_t i = 0; i < out->count; i++) ((int32_t *)out->data)[i] = (int32_t)o[i];
    dfx__free(o);
  }
  return DFX_OK;
}

static dfx_code upper_bound(dfx_kctx *ctx) { return bound(ctx, true); }
static dfx_code lower_bound(dfx_kctx *ctx) { return bound(ctx, false); }

/* ---- Reverse ---- */

static dfx_code reverse(dfx_kctx *ctx) {
  const dfx_tensor *in = ctx->in[0], *dims = ctx->in[1];
  if (in->ndims == 0) {
    dfx__kctx_forward(ctx, 0, 0);
    return DFX_OK;
  }
  if (dims->ndims != 1) return dfx__kctx_fail(ctx, DFX_EINVAL, "'dims' must be 1-dimension, not %d", dims->ndims);
  if (dims->dims[0] != in->ndims)
    return dfx__kctx_fail(ctx, DFX_EINVAL,
                          "'dims' must have the same number of values as 'input' has dimensions. 'input' has %d'dims' "
                          "has %lld values",
                          in->ndims, (long long)dims->dims[0]);
  if (in->ndims > 8) return dfx__kctx_fail(ctx, DFX_EUNIMPL, "reverse is not implemented for tensors of rank > 8.");
  dfx_dtype dt = (dfx_dtype)in->dtype;
  dfx_tensor *out = dfx__kctx_alloc(ctx, 0, dt, in->ndims, in->dims);
  if (!out || out->count == 0) return out ? DFX_OK : ctx->st->code;
  const uint8_t *rev = dims->data;
  int nd = in->ndims;
  size_t es = dfx__dtype_storage(dt);
  /* The innermost dimension is copied as a run when it is not reversed. */
  int64_t inner = rev[nd - 1] ? 1 : in->dims[nd - 1], outer = in->count / inner, idx[DFX_MAX_DIMS] = {0};
  int od = rev[nd - 1] ? nd : nd - 1;
  for (int64_t r = 0; r < outer; r++) {
    int64_t src = 0;
    for (int d = 0; d < od; d++) src = src * in->dims[d] + (rev[d] ? in->dims[d] - 1 - idx[d] : idx[d]);
    if (od < nd) src *= in->dims[nd - 1];
    char *dst = (char *)out->data + (size_t)(r * inner) * es;
    const char *sp = (const char *)in->data + (size_t)src * es;
    if (dt == DFX_STRING) {
      if (dfx__g_copy(ctx, dt, dst, sp, inner)) return ctx->st->code;
    } else {
      memcpy(dst, sp, (size_t)inner * es);
    }
    for (int d = od - 1; d >= 0 && ++idx[d] == in->dims[d]; d--) idx[d] = 0;
    if ((r & 0xfffff) == 0xfffff && dfx__kctx_poll(ctx)) return ctx->st->code;
  }
  return DFX_OK;
}

/* ---- DenseBincount ---- */

static dfx_code dense_bincount(dfx_kctx *ctx) {
  const dfx_tensor *in = ctx->in[0], *sz = ctx->in[1], *w = ctx->in[2];
  char b1[128];
  if (in->ndims > 2) return dfx__kctx_fail(ctx, DFX_EINVAL, "Shape must be at most rank 2 but is rank %d", in->ndims);
  if (sz->ndims != 0) return dfx__kctx_fail(ctx, DFX_EINVAL, "Shape must be rank 0 but is rank %d", sz->ndims);
  if (!dfx__tensor_same_shape(in, w) && w->count != 0)
    return dfx__kctx_fail(ctx, DFX_EINVAL,
                          "`weights` must be the same shape as `arr` or a length-0 `Tensor`, in which case it acts as "
                          "all weights equal to 1. Received %s",
                          DFX_SHAPE_STR(w, b1));
  int64_t size = gidx(sz, 0);
  if (size < 0) return dfx__kctx_fail(ctx, DFX_EINVAL, "size (%lld) must be non-negative", (long long)size);
  bool binary = dfx__attr_bool(ctx->node, "binary_output", false), weighted = w->count != 0;
  dfx_dtype dt = (dfx_dtype)w->dtype;
  int64_t rows = in->ndims == 2 ? in->dims[0] : 1, cols = in->ndims == 2 ? in->dims[1] : in->count;
  int64_t od[2] = {rows, size};
  if (dfx__g_check_rows(ctx, "size", size, rows, size, dt)) return ctx->st->code;
  for (int64_t i = 0; i < in->count; i++)
    if (gidx(in, i) < 0) return dfx__kctx_fail(ctx, DFX_EINVAL, "Input arr must be non-negative!");
  dfx_tensor *out = in->ndims == 2 ? dfx__kctx_alloc(ctx, 0, dt, 2, od) : dfx__kctx_alloc(ctx, 0, dt, 1, &size);
  if (!out) return ctx->st->code;
  if (out->nbytes) memset(out->data, 0, out->nbytes);
  for (int64_t r = 0; r < rows; r++)
    for (int64_t c = 0; c < cols; c++) {
      int64_t i = r * cols + c, v = gidx(in, i);
      if (v >= size) continue;
      int64_t o = r * size + v;
      switch (dt) {
        case DFX_I32: {
          int32_t *p = out->data;
          p[o] = binary ? 1 : (int32_t)((uint32_t)p[o] + (uint32_t)(weighted ? ((const int32_t *)w->data)[i] : 1));
          break;
        }
        case DFX_I64: {
          int64_t *p = out->data;
          p[o] = binary ? 1 : (int64_t)((uint64_t)p[o] + (uint64_t)(weighted ? ((const int64_t *)w->data)[i] : 1));
          break;
        }
        case DFX_F32: {
          float *p = out->data;
          p[o] = binary ? 1 : p[o] + (weighted ? ((const float *)w->data)[i] : 1);
          break;
        }
        default: {
          double *p = out->data;
          p[o] = binary ? 1 : p[o] + (weighted ? ((const double *)w->data)[i] : 1);
          break;
        }
      }
    }
  return DFX_OK;
}

static const dfx_kernel_def kernels[] = {
    {"UpperBound", "T: " DFX_G_REAL "; out_type: {int32, int64}", upper_bound, DFX_KERNEL_CHEAP, NULL, NULL},
    {"LowerBound", "T: " DFX_G_REAL "; out_type: {int32, int64}", lower_bound, DFX_KERNEL_CHEAP, NULL, NULL},
    {"Reverse", NULL, reverse, DFX_KERNEL_CHEAP, NULL, NULL},
    {"DenseBincount", "Tidx: {int32, int64}; T: {int32, int64, float, double}", dense_bincount, DFX_KERNEL_CHEAP, NULL,
     NULL},
    {NULL}};

void dfx__kernels_extra_search(dfx_registry *r);
void dfx__kernels_extra_search(dfx_registry *r) { dfx__kernels_add(r, kernels); }
