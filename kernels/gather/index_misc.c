/* index_misc.c - small indexing ops: Bincount, HistogramFixedWidth,
 * SparseTensorDenseAdd, RaggedRange, CompareAndBitpack and Cross. Dense
 * operands are row-major and never broadcast. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gutil.h"
#include "kdispatch.h"

/* ---- Bincount ---- */

static dfx_code bincount(dfx_kctx *ctx) {
  const dfx_tensor *arr = ctx->in[0], *sz = ctx->in[1], *w = ctx->in[2];
  char b1[128], b2[128];
  if (sz->ndims != 0) return dfx__kctx_fail(ctx, DFX_EINVAL, "Shape must be rank 0 but is rank %d", sz->ndims);
  int64_t size = gidx(sz, 0);
  if (size < 0) return dfx__kctx_fail(ctx, DFX_EINVAL, "size (%lld) must be non-negative", (long long)size);
  /* An empty weights tensor means "count": every value adds 1 (TF). */
  bool weighted = w->count > 0;
  if (weighted && !dfx__tensor_same_shape(arr, w))
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Weights and arr must have the same shape. arr: %s weights: %s",
                          DFX_SHAPE_STR(arr, b1), DFX_SHAPE_STR(w, b2));
  const int32_t *a = arr->data;
  for (int64_t i = 0; i < arr->count; i++)
    /* Checked before anything is allocated; values >= size are skipped below,
     * as TF drops them. */
    if (a[i] < 0) return dfx__kctx_fail(ctx, DFX_EINVAL, "Input arr must be non-negative!");
  dfx_dtype dt = (dfx_dtype)w->dtype;
  /* size is an input value: the output is checked against the limit first. */
  if (dfx__g_check_rows(ctx, "size", size, size, 1, dt)) return ctx->st->code;
  dfx_tensor *out = dfx__kctx_alloc(ctx, 0, dt, 1, &size);
  if (!out) return ctx->st->code;
  memset(out->data, 0, out->nbytes);
  switch (dt) {
#define CASE(DT, T)                                                                  \
  case DT: {                                                                         \
    T *o = out->data;                                                                \
    const T *wv = w->data;                                                           \
    for (int64_t i = 0; i < arr->count;) {                                           \
      if (i && dfx__kctx_poll(ctx)) return ctx->st->code;                            \
      for (int64_t end = gchunk(i, arr->count); i < end; i++)                        \
        if (a[i] < size) o[a[i]] = (T)(o[a[i]] + (weighted ? wv[i] : (T)1));         \
    }                                                                                \
    break;                                                                           \
  }
    CASE(DFX_I32, int32_t)
    CASE(DFX_I64, int64_t)
    CASE(DFX_F32, float)
    CASE(DFX_F64, double)
#undef CASE
    default: return dfx__g_bad_dtype(ctx, dt);
  }
  return DFX_OK;
}

/* ---- HistogramFixedWidth ---- */

static dfx_code histogram_fixed_width(dfx_kctx *ctx) {
  const dfx_tensor *v = ctx->in[0], *r = ctx->in[1], *nb = ctx->in[2];
  char b1[128];
  if (r->ndims != 1 || r->count != 2)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "value_range should be a vector of 2 elements, but got %s",
                          DFX_SHAPE_STR(r, b1));
  if (nb->ndims != 0)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "nbins should be a scalar, but got '%s'", DFX_SHAPE_STR(nb, b1));
  int64_t nbins = gidx(nb, 0);
  double lo = dfx__tensor_get_f64(r, 0), hi = dfx__tensor_get_f64(r, 1);
  if (!(lo < hi))
    return dfx__kctx_fail(ctx, DFX_EINVAL,
                          "value_range should satisfy value_range[0] < value_range[1], but got '[%g %g]'", lo, hi);
  if (nbins <= 0)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "nbins should be a positive number, but got '%lld'", (long long)nbins);
  dfx_dtype ot = ctx->node->out_types ? ctx->node->out_types[0] : DFX_I32;
  if (ot != DFX_I64) ot = DFX_I32;
  if (dfx__g_check_rows(ctx, "nbins", nbins, nbins, 1, ot)) return ctx->st->code;
  dfx_tensor *out = dfx__kctx_alloc(ctx, 0, ot, 1, &nbins);
  if (!out) return ctx->st->code;
  memset(out->data, 0, out->nbytes);
  /* TF takes the range width in T, then divides in double: a float range
   * rounds as it does in float, and an integer range that wraps in T wraps
   * here too, so the bins match TF's. */
  double width = hi - lo;
  if (v->dtype == DFX_F32) width = (double)((float)hi - (float)lo);
  else if (v->dtype == DFX_I32 || v->dtype == DFX_I64)
    width = (double)(int64_t)((uint64_t)gidx(r, 1) - (uint64_t)gidx(r, 0));
  /* bin = floor((v - lo) / step), with v below lo clamped to lo and the top
   * clamped to the last bin: out-of-range values land in the end bins (TF). */
  const double step = width / (double)nbins, top = (double)(nbins - 1);
  for (int64_t i = 0; i < v->count;) {
    if (i && dfx__kctx_poll(ctx)) return ctx->st->code;
    for (int64_t end = gchunk(i, v->count); i < end; i++) {
      double d;
      if (v->dtype == DFX_I32 || v->dtype == DFX_I64) { /* integer subtraction, as TF does in T */
        int64_t x = gidx(v, i), l = (int64_t)lo;
        if (x < l) x = l;
        d = (double)(int64_t)((uint64_t)x - (uint64_t)l);
      } else {
        double x = dfx__tensor_get_f64(v, i);
        if (v->dtype == DFX_F32) {
          float xf = (float)x, lf = (float)lo;
          d = (double)((xf > lf ? xf : lf) - lf);
        } else {
          d = (x > lo ? x : lo) - lo;
        }
      }
      double q = d / step;
      if (q > top) q = top;
      /* NaN and negative quotients (a wrapped integer range) go to bin 0
       * without an out-of-range float-to-int conversion. */
      int64_t bin = q >= 0 ? (int64_t)(int32_t)q : 0;
      if (ot == DFX_I32) ((int32_t *)out->data)[bin]++;
      else ((int64_t *)out->data)[bin]++;
    }
  }
  return DFX_OK;
}

/* ---- SparseTensorDenseAdd ---- */

static dfx_code sparse_tensor_dense_add(dfx_kctx *ctx) {
  const dfx_tensor *ix = ctx->in[0], *vals = ctx->in[1], *shp = ctx->in[2], *b = ctx->in[3];
  char b1[128], b2[128], b3[128];
  if (ix->ndims != 2)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Input a_indices should be a matrix but received shape: %s",
                          DFX_SHAPE_STR(ix, b1));
  if (vals->ndims != 1 || shp->ndims != 1)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Inputs a_values and a_shape should be vectors but received shapes: %s and %s",
                          DFX_SHAPE_STR(vals, b1), DFX_SHAPE_STR(shp, b2));
  if (shp->count != b->ndims)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Two operands have different ranks; received: %lld and %d",
                          (long long)shp->count, b->ndims);
  for (int i = 0; i < b->ndims; i++)
    if (gidx(shp, i) != b->dims[i])
      return dfx__kctx_fail(ctx, DFX_EINVAL,
                            "Dimension %d does not equal (no broadcasting is supported): sparse side %lld vs dense side %lld",
                            i, (long long)gidx(shp, i), (long long)b->dims[i]);
  /* a_indices is [nnz, rank]: one row of coordinates per value. */
  int64_t nnz = ix->dims[0], nd = ix->dims[1];
  if (vals->count != nnz || nd != b->ndims)
    return dfx__kctx_fail(ctx, DFX_EINVAL,
                          "Expected a_indices of shape [%lld, %d] and a_values of shape [%lld], got %s and %s "
                          "(dense shape %s)",
                          (long long)vals->count, b->ndims, (long long)nnz, DFX_SHAPE_STR(ix, b1),
                          DFX_SHAPE_STR(vals, b2), DFX_SHAPE_STR(b, b3));
  dfx_dtype dt = (dfx_dtype)b->dtype;
  for (int64_t i = 0; i < nnz; i++)
    for (int64_t d = 0; d < nd; d++) {
      int64_t v = gidx(ix, i * nd + d);
      if (v < 0 || v >= b->dims[d])
        return dfx__kctx_fail(ctx, DFX_EINVAL,
                              "Sparse tensor has an invalid index on dimension %lld: a_indices(%lld,%lld) = %lld, "
                              "dense tensor shape: %s",
                              (long long)d, (long long)i, (long long)d, (long long)v, DFX_SHAPE_STR(b, b1));
    }
  /* A copy, never b itself: b may be shared with other consumers. */
  dfx_tensor *out = dfx__tensor_copy(b);
  if (!out) return dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory");
  ctx->out[0] = out;
  size_t es = dfx__dtype_storage(dt);
  int64_t left = DFX_G_POLL_EVERY;
  /* Every index was checked above, so a bad one fails before any output
   * exists. Duplicate indices each add their value. */
  for (int64_t i = 0; i < nnz; i++) {
    if (gtick(ctx, &left, nd + 1)) return ctx->st->code;
    int64_t off = 0;
    for (int64_t d = 0; d < nd; d++) off = off * b->dims[d] + gidx(ix, i * nd + d);
    dfx_code c = dfx__g_apply(ctx, dt, DFX_GOP_ADD, (char *)out->data + (size_t)off * es,
                              (const char *)vals->data + (size_t)i * es, 1, 1);
    if (c) return c;
  }
  return DFX_OK;
}

/* ---- RaggedRange ---- */

/* A scalar start, limit or delta serves every row. */
static double rr_get(const dfx_tensor *t, int64_t i) { return t->ndims == 0 ? dfx__tensor_get_f64(t, 0) : dfx__tensor_get_f64(t, i); }
static int64_t rr_geti(const dfx_tensor *t, int64_t i) { return t->ndims == 0 ? gidx(t, 0) : gidx(t, i); }

static dfx_code ragged_range(dfx_kctx *ctx) {
  const dfx_tensor *st = ctx->in[0], *li = ctx->in[1], *de = ctx->in[2];
  const char *names[] = {"starts", "limits", "deltas"};
  int64_t nrows = -1;
  bool any_vec = false;
  for (int k = 0; k < 3; k++) {
    const dfx_tensor *t = ctx->in[k];
    if (t->ndims > 1) return dfx__kctx_fail(ctx, DFX_EINVAL, "%s must be a scalar or vector", names[k]);
    if (t->ndims == 1) {
      if (any_vec && t->count != nrows)
        return dfx__kctx_fail(ctx, DFX_EINVAL, "starts, limits, and deltas must have the same shape");
      nrows = t->count;
      any_vec = true;
    }
  }
  if (!any_vec) nrows = 1;
  dfx_dtype dt = (dfx_dtype)st->dtype, sp = ctx->node->out_types ? ctx->node->out_types[0] : DFX_I64;
  if (sp != DFX_I32) sp = DFX_I64;
  bool isint = dt == DFX_I32 || dt == DFX_I64;
  int64_t np1 = nrows + 1;
  dfx_tensor *splits = dfx__kctx_alloc(ctx, 0, sp, 1, &np1);
  if (!splits) return ctx->st->code;
  int64_t total = 0;
  gset_idx(splits, 0, 0);
  for (int64_t r = 0; r < nrows; r++) {
    int64_t size;
    if (isint) {
      int64_t s = rr_geti(st, r), l = rr_geti(li, r), d = rr_geti(de, r);
      if (d == 0) return dfx__kctx_fail(ctx, DFX_EINVAL, "Requires delta != 0");
      /* A range heading away from its limit is empty, not an error (TF). */
      if ((d > 0 && l < s) || (d < 0 && l > s)) size = 0;
      else { /* ceil(|l - s| / |d|), exact for any int64 operands */
        uint64_t dist = l > s ? (uint64_t)l - (uint64_t)s : (uint64_t)s - (uint64_t)l;
        uint64_t ad = d > 0 ? (uint64_t)d : (uint64_t)0 - (uint64_t)d, q = dist / ad + (dist % ad != 0);
        if (q > INT64_MAX)
          return dfx__kctx_fail(ctx, DFX_EINVAL, "Requires ((limit - start) / delta) <= %lld", (long long)INT64_MAX);
        size = (int64_t)q;
      }
    } else {
      double s = rr_get(st, r), l = rr_get(li, r), d = rr_get(de, r);
      if (d == 0) return dfx__kctx_fail(ctx, DFX_EINVAL, "Requires delta != 0");
      if ((d > 0 && l < s) || (d < 0 && l > s)) size = 0;
      else {
        double q; /* computed in T, as TF does */
        if (dt == DFX_F32) {
          q = ceilf(fabsf(((float)l - (float)s) / (float)d));
        } else if (dt == DFX_BF16) {
          float diff = dfx__bf16_to_f32(dfx__f32_to_bf16((float)l - (float)s));
          q = ceilf(fabsf(dfx__bf16_to_f32(dfx__f32_to_bf16(diff / (float)d))));
        } else {
          q = ceil(fabs((l - s) / d));
        }
        if (!(q < 9.2e18)) return dfx__kctx_fail(ctx, DFX_EINVAL, "Requires ((limit - start) / delta) <= %lld",
                                                 (long long)INT64_MAX);
        size = (int64_t)q;
      }
    }
    if (size < 0 || total > INT64_MAX - size)
      return dfx__kctx_fail(ctx, DFX_EINVAL, "Requires ((limit - start) / delta) <= %lld", (long long)INT64_MAX);
    total += size;
    /* int32 splits cannot point past 2^31 - 1 values. */
    if (sp == DFX_I32 && total > INT32_MAX)
      return dfx__kctx_fail(ctx, DFX_EINVAL, "the total range size %lld does not fit in int32 splits", (long long)total);
    gset_idx(splits, r + 1, total);
  }
  /* The sizes came from input values: the limit is checked before the values
   * tensor is allocated, with the splits already validated. */
  if (dfx__g_check_rows(ctx, "the total range size", total, total, 1, dt)) return ctx->st->code;
  dfx_tensor *vals = dfx__kctx_alloc(ctx, 1, dt, 1, &total);
  if (!vals) return ctx->st->code;
  /* Values accumulate value += delta in T, as TF does. */
  int64_t k = 0, left = DFX_G_POLL_EVERY;
  for (int64_t r = 0; r < nrows; r++) {
    int64_t n = gidx(splits, r + 1) - gidx(splits, r);
    if (gtick(ctx, &left, n + 1)) return ctx->st->code;
    switch (dt) {
      case DFX_I32: {
        /* Integer steps wrap in unsigned arithmetic: no signed-overflow UB. */
        uint32_t v = (uint32_t)rr_geti(st, r), d = (uint32_t)rr_geti(de, r);
        for (int64_t j = 0; j < n; j++, k++, v += d) ((int32_t *)vals->data)[k] = (int32_t)v;
        break;
      }
      case DFX_I64: {
        uint64_t v = (uint64_t)rr_geti(st, r), d = (uint64_t)rr_geti(de, r);
        for (int64_t j = 0; j < n; j++, k++, v += d) ((int64_t *)vals->data)[k] = (int64_t)v;
        break;
      }
      case DFX_F32: {
        float v = (float)rr_get(st, r), d = (float)rr_get(de, r);
        for (int64_t j = 0; j < n; j++, k++, v += d) ((float *)vals->data)[k] = v;
        break;
      }
      case DFX_F64: {
        double v = rr_get(st, r), d = rr_get(de, r);
        for (int64_t j = 0; j < n; j++, k++, v += d) ((double *)vals->data)[k] = v;
        break;
      }
      case DFX_BF16: {
        uint16_t v = dfx__f32_to_bf16((float)rr_get(st, r));
        float d = (float)rr_get(de, r);
        for (int64_t j = 0; j < n; j++, k++) {
          ((uint16_t *)vals->data)[k] = v;
          /* Each step rounds to bfloat16, as TF's accumulation in T does. */
          v = dfx__f32_to_bf16(dfx__bf16_to_f32(v) + d);
        }
        break;
      }
      default: return dfx__g_bad_dtype(ctx, dt);
    }
  }
  return DFX_OK;
}

/* ---- CompareAndBitpack ---- */

/* Bit b of output byte i is x[8i + b] > threshold, most significant bit
 * first; the comparison is strict, as TF's. */
static dfx_code compare_and_bitpack(dfx_kctx *ctx) {
  const dfx_tensor *x = ctx->in[0], *th = ctx->in[1];
  char b1[128];
  if (th->ndims != 0)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Compare must be a scalar, but saw shape: %s", DFX_SHAPE_STR(th, b1));
  if (x->ndims < 1)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Input should be at least a vector, but saw a scalar.");
  if (x->dims[x->ndims - 1] % 8 != 0)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Inner dimension of input should be divisible by 8, but saw shape: %s",
                          DFX_SHAPE_STR(x, b1));
  int64_t od[DFX_MAX_DIMS];
  memcpy(od, x->dims, sizeof(int64_t) * (size_t)x->ndims);
  /* Eight elements per output byte, the first one in the high bit. */
  od[x->ndims - 1] /= 8;
  dfx_tensor *out = dfx__kctx_alloc(ctx, 0, DFX_U8, x->ndims, od);
  if (!out) return ctx->st->code;
  uint8_t *o = out->data;
  int64_t n = out->count;
  dfx_dtype dt = (dfx_dtype)x->dtype;
#define PACK(EXPR)                                               \
  for (int64_t i = 0; i < n; i++) {                              \
    unsigned byte = 0;                                           \
    for (int b = 0; b < 8; b++) {                                \
      int64_t k = i * 8 + b;                                     \
      byte = (byte << 1) | (unsigned)(EXPR);                     \
    }                                                            \
    o[i] = (uint8_t)byte;                                        \
  }
  switch (dt) {
    case DFX_BOOL: { /* TF packs the bools themselves; the threshold is ignored */
      const uint8_t *v = x->data;
      PACK(v[k] != 0)
      break;
    }
#define CASE(DT, T)                       \
  case DT: {                              \
    const T *v = x->data;                 \
    const T t = *(const T *)th->data;     \
    PACK(v[k] > t)                        \
    break;                                \
  }
    CASE(DFX_I8, int8_t)
    CASE(DFX_I16, int16_t)
    CASE(DFX_I32, int32_t)
    CASE(DFX_I64, int64_t)
    CASE(DFX_F32, float)
    CASE(DFX_F64, double)
#undef CASE
    case DFX_F16: {
      const uint16_t *v = x->data;
      const float t = dfx__f16_to_f32(*(const uint16_t *)th->data);
      PACK(dfx__f16_to_f32(v[k]) > t)
      break;
    }
    default: return dfx__g_bad_dtype(ctx, dt);
  }
#undef PACK
  return DFX_OK;
}

/* ---- Cross ---- */

/* The cross product per row of 3; integers multiply in uint64 so overflow
 * wraps (as TF's integer types do) instead of being undefined. */
static dfx_code cross(dfx_kctx *ctx) {
  const dfx_tensor *a = ctx->in[0], *b = ctx->in[1];
  char b1[128], b2[128];
  if (!dfx__tensor_same_shape(a, b))
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Both inputs must be of same shape: %s vs. %s", DFX_SHAPE_STR(a, b1),
                          DFX_SHAPE_STR(b, b2));
  if (a->ndims < 1) return dfx__kctx_fail(ctx, DFX_EINVAL, "Input must be at least 1D%s", DFX_SHAPE_STR(a, b1));
  if (a->dims[a->ndims - 1] != 3)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Argument 'a' must have 3 elements in its inner-most dimension, got %s",
                          DFX_SHAPE_STR(a, b1));
  dfx_dtype dt = (dfx_dtype)a->dtype;
  dfx_tensor *out = dfx__kctx_alloc(ctx, 0, dt, a->ndims, a->dims);
  if (!out) return ctx->st->code;
  int64_t n = a->count / 3;
  switch (dt) {
#define CASE(DT, T)                                                                          \
  case DT: {                                                                                 \
    const T *x = a->data, *y = b->data;                                                      \
    T *o = out->data;                                                                        \
    for (int64_t i = 0; i < n; i++, x += 3, y += 3, o += 3) {                                \
      o[0] = (T)((uint64_t)x[1] * (uint64_t)y[2] - (uint64_t)x[2] * (uint64_t)y[1]);         \
      o[1] = (T)((uint64_t)x[2] * (uint64_t)y[0] - (uint64_t)x[0] * (uint64_t)y[2]);         \
      o[2] = (T)((uint64_t)x[0] * (uint64_t)y[1] - (uint64_t)x[1] * (uint64_t)y[0]);         \
    }                                                                                        \
    break;                                                                                   \
  }
    DFX_INT_TYPES(CASE)
#undef CASE
#define CASE(DT, T)                                                                          \
  case DT: {                                                                                 \
    const T *x = a->data, *y = b->data;                                                      \
    T *o = out->data;                                                                        \
    for (int64_t i = 0; i < n; i++, x += 3, y += 3, o += 3) {                                \
      o[0] = x[1] * y[2] - x[2] * y[1];                                                      \
      o[1] = x[2] * y[0] - x[0] * y[2];                                                      \
      o[2] = x[0] * y[1] - x[1] * y[0];                                                      \
    }                                                                                        \
    break;                                                                                   \
  }
    DFX_FLOAT_TYPES(CASE)
#undef CASE
    case DFX_F16:
    case DFX_BF16: { /* each product and difference rounds to the half type, as Eigen's half does */
      bool bf = dt == DFX_BF16;
      const uint16_t *x = a->data, *y = b->data;
      uint16_t *o = out->data;
#define H(v) (bf ? dfx__bf16_to_f32(v) : dfx__f16_to_f32(v))
#define R(f) (bf ? dfx__bf16_to_f32(dfx__f32_to_bf16(f)) : dfx__f16_to_f32(dfx__f32_to_f16(f)))
#define S(f) (bf ? dfx__f32_to_bf16(f) : dfx__f32_to_f16(f))
      for (int64_t i = 0; i < n; i++, x += 3, y += 3, o += 3) {
        o[0] = S(R(H(x[1]) * H(y[2])) - R(H(x[2]) * H(y[1])));
        o[1] = S(R(H(x[2]) * H(y[0])) - R(H(x[0]) * H(y[2])));
        o[2] = S(R(H(x[0]) * H(y[1])) - R(H(x[1]) * H(y[0])));
      }
#undef H
#undef R
#undef S
      break;
    }
    default: return dfx__g_bad_dtype(ctx, dt);
  }
  return DFX_OK;
}

static const dfx_kernel_def kernels[] = {
    {"Bincount", "T: {int32, int64, float, double}", bincount, DFX_KERNEL_CHEAP, NULL, NULL},
    {"HistogramFixedWidth", "T: {int32, int64, float, double}; dtype: {int32, int64}", histogram_fixed_width,
     DFX_KERNEL_CHEAP, NULL, NULL},
    {"SparseTensorDenseAdd", "T: " DFX_G_NUM "; Tindices: {int32, int64}", sparse_tensor_dense_add,
     DFX_KERNEL_CHEAP, NULL, NULL},
    {"RaggedRange", "T: {bfloat16, float, double, int32, int64}; Tsplits: {int32, int64}", ragged_range,
     DFX_KERNEL_CHEAP, NULL, NULL},
    {"CompareAndBitpack", "T: {bool, half, float, double, int8, int16, int32, int64}", compare_and_bitpack,
     DFX_KERNEL_CHEAP, NULL, NULL},
    {"Cross", "T: " DFX_G_REAL, cross, DFX_KERNEL_CHEAP, NULL, NULL},
    {NULL}};

void dfx__kernels_gather_index_misc(dfx_registry *r);
void dfx__kernels_gather_index_misc(dfx_registry *r) { dfx__kernels_add(r, kernels); }
