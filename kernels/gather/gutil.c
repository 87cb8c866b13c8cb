/* gutil.c - element helpers shared by the gather family (see gutil.h). */
#include "gutil.h"

#include <complex.h>
#include <float.h>
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "kdispatch.h"

dfx_code dfx__g_bad_dtype(dfx_kctx *ctx, dfx_dtype dt) {
  return dfx__kctx_fail(ctx, DFX_EUNIMPL, "%s does not support dtype %s", ctx->node->op, dfx_dtype_name(dt));
}

dfx_code dfx__g_check_rows(dfx_kctx *ctx, const char *what, int64_t value, int64_t rows, int64_t inner,
                           dfx_dtype dt) {
  int64_t n;
  /* An empty output needs no bytes, however large its other factor. */
  if (rows == 0 || (rows > 0 && inner == 0)) return DFX_OK;
  if (rows < 0 || inner < 0 || __builtin_mul_overflow(rows, inner, &n) ||
      dfx__mul_size((size_t)n, dfx__dtype_storage(dt)) > dfx__tensor_limit())
    return dfx__kctx_fail(ctx, DFX_ELIMIT, "%s = %lld is too large: the output would exceed the %zu-byte tensor limit",
                          what, (long long)value, dfx__tensor_limit());
  return DFX_OK;
}

dfx_code dfx__g_policy_init(const dfx_node *node, void **state, dfx_status *st) {
  /* The state is only a marker: the address of a static byte, so nothing is
   * allocated and the row needs no fini. */
  static const char ignore = 1;
  const char *p = dfx__attr_str(node, "bad_indices_policy", "");
  if (*p && strcmp(p, "DEFAULT") != 0 && strcmp(p, "ERROR") != 0 && strcmp(p, "IGNORE") != 0)
    return dfx__status_set(st, DFX_EINVAL, "bad_indices_policy = '%s' is not one of '', 'DEFAULT', 'ERROR', 'IGNORE'",
                           p);
  *state = strcmp(p, "IGNORE") == 0 ? (void *)&ignore : NULL;
  return DFX_OK;
}

/* Integer loops wrap on overflow (computed in the unsigned type), as TF's
 * CPU kernels do; x / -1 is taken as 0 - x, so INT_MIN / -1 wraps instead
 * of trapping. Returns 1 on division by zero. */
#define DEF_INT(NAME, T, SIGNED)                                                   \
  static int apply_##NAME(dfx_gop op, T *d, const T *s, int64_t n, int64_t ss) {      \
    switch (op) {                                                                      \
      case DFX_GOP_SET:                                                                \
        for (int64_t i = 0; i < n; i++) d[i] = s[i * ss];                              \
        break;                                                                         \
      case DFX_GOP_ADD:                                                                \
        for (int64_t i = 0; i < n; i++) d[i] = (T)((uint64_t)d[i] + (uint64_t)s[i * ss]);          \
        break;                                                                         \
      case DFX_GOP_SUB:                                                                \
        for (int64_t i = 0; i < n; i++) d[i] = (T)((uint64_t)d[i] - (uint64_t)s[i * ss]);          \
        break;                                                                         \
      case DFX_GOP_MUL:                                                                \
        for (int64_t i = 0; i < n; i++) d[i] = (T)((uint64_t)d[i] * (uint64_t)s[i * ss]);          \
        break;                                                                         \
      case DFX_GOP_DIV:                                                                \
        for (int64_t i = 0; i < n; i++) {                                              \
          T b = s[i * ss];                                                             \
          if (b == 0) return 1;                                                        \
          if (SIGNED && b == (T)-1) d[i] = (T)((uint64_t)0 - (uint64_t)d[i]);                       \
          else d[i] = (T)(d[i] / b);                                                   \
        }                                                                              \
        break;                                                                         \
      case DFX_GOP_MAX:                                                                \
        for (int64_t i = 0; i < n; i++)                                                \
          if (s[i * ss] > d[i]) d[i] = s[i * ss];                                      \
        break;                                                                         \
      case DFX_GOP_MIN:                                                                \
        for (int64_t i = 0; i < n; i++)                                                \
          if (s[i * ss] < d[i]) d[i] = s[i * ss];                                      \
        break;                                                                         \
    }                                                                                  \
    return 0;                                                                          \
  }
DEF_INT(i8, int8_t, 1)
DEF_INT(i16, int16_t, 1)
DEF_INT(i32, int32_t, 1)
DEF_INT(i64, int64_t, 1)
DEF_INT(u8, uint8_t, 0)
DEF_INT(u16, uint16_t, 0)
DEF_INT(u32, uint32_t, 0)
DEF_INT(u64, uint64_t, 0)
#undef DEF_INT

/* float and double ops go through double: for + - * / that rounds to the
 * same float as float arithmetic, since 53 >= 2 * 24 + 2 bits.
 * With a NaN the comparisons are false and MAX/MIN keep the current a. */
static inline double fop(dfx_gop op, double a, double b) {
  switch (op) {
    case DFX_GOP_SET: return b;
    case DFX_GOP_ADD: return a + b;
    case DFX_GOP_SUB: return a - b;
    case DFX_GOP_MUL: return a * b;
    case DFX_GOP_DIV: return a / b;
    case DFX_GOP_MAX: return b > a ? b : a;
    case DFX_GOP_MIN: return b < a ? b : a;
  }
  return a;
}

/* float and double: SET and ADD (the common segment sum) inline; the other
 * ops through fop. */
#define DEF_FLT(NAME, T)                                                                 \
  static void apply_##NAME(dfx_gop op, T *d, const T *s, int64_t n, int64_t ss) {        \
    switch (op) {                                                                        \
      case DFX_GOP_SET:                                                                  \
        for (int64_t i = 0; i < n; i++) d[i] = s[i * ss];                                \
        break;                                                                           \
      case DFX_GOP_ADD:                                                                  \
        for (int64_t i = 0; i < n; i++) d[i] += s[i * ss];                               \
        break;                                                                           \
      default:                                                                           \
        for (int64_t i = 0; i < n; i++) d[i] = (T)fop(op, (double)d[i], (double)s[i * ss]); \
        break;                                                                           \
    }                                                                                    \
  }
DEF_FLT(f32, float)
DEF_FLT(f64, double)
#undef DEF_FLT

/* Complex: no order, so no MAX/MIN (returns 1); division by zero gives
 * inf/nan, as std::complex does in TF. */
#define DEF_CPX(NAME, T)                                                       \
  static int apply_##NAME(dfx_gop op, T *d, const T *s, int64_t n, int64_t ss) { \
    switch (op) {                                                              \
      case DFX_GOP_SET:                                                        \
        for (int64_t i = 0; i < n; i++) d[i] = s[i * ss];                      \
        break;                                                                 \
      case DFX_GOP_ADD:                                                        \
        for (int64_t i = 0; i < n; i++) d[i] += s[i * ss];                     \
        break;                                                                 \
      case DFX_GOP_SUB:                                                        \
        for (int64_t i = 0; i < n; i++) d[i] -= s[i * ss];                     \
        break;                                                                 \
      case DFX_GOP_MUL:                                                        \
        for (int64_t i = 0; i < n; i++) d[i] *= s[i * ss];                     \
        break;                                                                 \
      case DFX_GOP_DIV:                                                        \
        for (int64_t i = 0; i < n; i++) d[i] /= s[i * ss];                     \
        break;                                                                 \
      default: return 1;                                                       \
    }                                                                          \
    return 0;                                                                  \
  }
DEF_CPX(c64, float complex)
DEF_CPX(c128, double complex)
#undef DEF_CPX

/* Half types: compute in float, round to nearest even on store. */
static void apply_half(dfx_gop op, uint16_t *d, const uint16_t *s, int64_t n, int64_t ss, bool bf) {
  for (int64_t i = 0; i < n; i++) {
    if (op == DFX_GOP_SET) {
      d[i] = s[i * ss];
      continue;
    }
    float a = bf ? dfx__bf16_to_f32(d[i]) : dfx__f16_to_f32(d[i]);
    float b = bf ? dfx__bf16_to_f32(s[i * ss]) : dfx__f16_to_f32(s[i * ss]);
    float r;
    switch (op) {
      /* The half types' sums are rounded back after every step, as TF's are. */
      case DFX_GOP_ADD: r = a + b; break;
      case DFX_GOP_SUB: r = a - b; break;
      case DFX_GOP_MUL: r = a * b; break;
      case DFX_GOP_DIV: r = a / b; break;
      default: r = (float)fop(op, a, b); break;
    }
    d[i] = bf ? dfx__f32_to_bf16(r) : dfx__f32_to_f16(r);
  }
}

/* Each new string is built before the old one is freed, so on failure
 * every element is still valid and owned by its tensor. */
static dfx_code apply_str(dfx_kctx *ctx, dfx_gop op, dfx_str *d, const dfx_str *s, int64_t n, int64_t ss) {
  for (int64_t i = 0; i < n; i++) {
    const dfx_str *b = &s[i * ss];
    char *p;
    size_t len;
    if (op == DFX_GOP_SET) {
      len = b->len;
      p = dfx__malloc(len + 1);
      if (!p) return dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory copying strings");
      if (len) memcpy(p, b->ptr, len);
    } else { /* ADD: concatenation */
      len = d[i].len + b->len;
      p = dfx__malloc(len + 1);
      if (!p) return dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory copying strings");
      if (d[i].len) memcpy(p, d[i].ptr, d[i].len);
      if (b->len) memcpy(p + d[i].len, b->ptr, b->len);
    }
    p[len] = 0;
    dfx__free(d[i].ptr);
    d[i].ptr = p;
    d[i].len = len;
  }
  return DFX_OK;
}

/* One dtype switch per call, not per element: callers pass whole rows of
 * n elements, so the dispatch cost is spread over them. */
dfx_code dfx__g_apply(dfx_kctx *ctx, dfx_dtype dt, dfx_gop op, void *dst, const void *src, int64_t n,
                      int64_t ss) {
  int div0 = 0;
  switch (dt) {
    case DFX_I8: div0 = apply_i8(op, dst, src, n, ss); break;
    case DFX_I16: div0 = apply_i16(op, dst, src, n, ss); break;
    case DFX_I32: div0 = apply_i32(op, dst, src, n, ss); break;
    case DFX_I64: div0 = apply_i64(op, dst, src, n, ss); break;
    case DFX_U8: div0 = apply_u8(op, dst, src, n, ss); break;
    case DFX_U16: div0 = apply_u16(op, dst, src, n, ss); break;
    case DFX_U32: div0 = apply_u32(op, dst, src, n, ss); break;
    case DFX_U64: div0 = apply_u64(op, dst, src, n, ss); break;
    case DFX_F32: apply_f32(op, dst, src, n, ss); break;
    case DFX_F64: apply_f64(op, dst, src, n, ss); break;
    case DFX_F16: apply_half(op, dst, src, n, ss, false); break;
    case DFX_BF16: apply_half(op, dst, src, n, ss, true); break;
    case DFX_C64:
      if (apply_c64(op, dst, src, n, ss)) return dfx__g_bad_dtype(ctx, dt);
      break;
    case DFX_C128:
      if (apply_c128(op, dst, src, n, ss)) return dfx__g_bad_dtype(ctx, dt);
      break;
    case DFX_BOOL: {
      uint8_t *d = dst;
      const uint8_t *s = src;
      for (int64_t i = 0; i < n; i++) {
        /* bool arithmetic saturates: a sum is "any" (or), a product "all" (and). */
        uint8_t b = s[i * ss] != 0;
        switch (op) {
          case DFX_GOP_SET: d[i] = b; break;
          case DFX_GOP_ADD:
          case DFX_GOP_MAX: d[i] = d[i] || b; break;
          case DFX_GOP_MUL:
          case DFX_GOP_MIN: d[i] = d[i] && b; break;
          default: return dfx__g_bad_dtype(ctx, dt);
        }
      }
      break;
    }
    case DFX_STRING:
      if (op != DFX_GOP_SET && op != DFX_GOP_ADD) return dfx__g_bad_dtype(ctx, dt);
      return apply_str(ctx, op, dst, src, n, ss);
    default: {
      size_t es = dfx__dtype_storage(dt);
      if (op != DFX_GOP_SET || es == 0 || dt == DFX_RESOURCE || dt == DFX_VARIANT) return dfx__g_bad_dtype(ctx, dt);
      /* Quantized dtypes only move: their arithmetic would need scales. */
      for (int64_t i = 0; i < n; i++) /* plain copies work for any fixed-size type (quantized) */
        memcpy((char *)dst + (size_t)i * es, (const char *)src + (size_t)(i * ss) * es, es);
      break;
    }
  }
  if (div0) return dfx__kctx_fail(ctx, DFX_EINVAL, "Integer division by zero");
  return DFX_OK;
}

dfx_code dfx__g_copy(dfx_kctx *ctx, dfx_dtype dt, void *dst, const void *src, int64_t n) {
  if (n <= 0) return DFX_OK;
  if (dt == DFX_STRING) return apply_str(ctx, DFX_GOP_SET, dst, src, n, 1);
  /* Every other element is a fixed-size value: a byte copy is exact. */
  memcpy(dst, src, (size_t)n * dfx__dtype_storage(dt));
  return DFX_OK;
}

#define FILL(T, v)                                           \
  do {                                                       \
    T *d_ = dst;                                             \
    T v_ = (T)(v);                                           \
    for (int64_t i = 0; i < n; i++) d_[i] = v_;              \
  } while (0)

dfx_code dfx__g_fill(dfx_kctx *ctx, dfx_dtype dt, void *dst, int64_t n, dfx_gfill v) {
  /* LOWEST and HIGHEST are the identities of MAX and MIN reductions, the
   * value an empty segment keeps. The half bit patterns are -+65504 (half)
   * and -+3.39e38 (bfloat16), their largest finite values, and 1.0. */
  bool lo = v == DFX_GFILL_LOWEST, hi = v == DFX_GFILL_HIGHEST, one = v == DFX_GFILL_ONE;
  switch (dt) {
    case DFX_I8: FILL(int8_t, lo ? INT8_MIN : hi ? INT8_MAX : one); break;
    case DFX_I16: FILL(int16_t, lo ? INT16_MIN : hi ? INT16_MAX : one); break;
    case DFX_I32: FILL(int32_t, lo ? INT32_MIN : hi ? INT32_MAX : one); break;
    case DFX_I64: FILL(int64_t, lo ? INT64_MIN : hi ? INT64_MAX : (int64_t)one); break;
    case DFX_U8: FILL(uint8_t, lo ? 0 : hi ? UINT8_MAX : one); break;
    case DFX_U16: FILL(uint16_t, lo ? 0 : hi ? UINT16_MAX : one); break;
    case DFX_U32: FILL(uint32_t, lo ? 0 : hi ? UINT32_MAX : one); break;
    case DFX_U64: FILL(uint64_t, lo ? 0 : hi ? UINT64_MAX : (uint64_t)one); break;
    case DFX_F32: FILL(float, lo ? -FLT_MAX : hi ? FLT_MAX : (float)one); break;
    case DFX_F64: FILL(double, lo ? -DBL_MAX : hi ? DBL_MAX : (double)one); break;
    case DFX_F16: FILL(uint16_t, lo ? 0xfbff : hi ? 0x7bff : one ? 0x3c00 : 0); break;
    case DFX_BF16: FILL(uint16_t, lo ? 0xff7f : hi ? 0x7f7f : one ? 0x3f80 : 0); break;
    case DFX_BOOL: FILL(uint8_t, lo ? 0 : hi ? 1 : one); break;
    case DFX_C64:
      if (lo || hi) return dfx__g_bad_dtype(ctx, dt);
      FILL(float complex, one);
      break;
    case DFX_C128:
      if (lo || hi) return dfx__g_bad_dtype(ctx, dt);
      FILL(double complex, one);
      break;
    default: return dfx__g_bad_dtype(ctx, dt);
  }
  return DFX_OK;
}
#undef FILL

/* SegmentMean divides the sum in T: integer means truncate, as TF's do. */
void dfx__g_div_count(dfx_dtype dt, void *dst, int64_t n, int64_t count) {
  switch (dt) {
#define CASE(DT, T)                                                   \
  case DT:                                                            \
    for (int64_t i = 0; i < n; i++) ((T *)dst)[i] = (T)(((T *)dst)[i] / (T)count); \
    break;
    DFX_REAL_TYPES(CASE)
    CASE(DFX_C64, float complex)
    CASE(DFX_C128, double complex)
#undef CASE
    case DFX_F16:
      for (int64_t i = 0; i < n; i++) {
        uint16_t *d = dst;
        d[i] = dfx__f32_to_f16(dfx__f16_to_f32(d[i]) / (float)count);
      }
      break;
    case DFX_BF16:
      for (int64_t i = 0; i < n; i++) {
        uint16_t *d = dst;
        d[i] = dfx__f32_to_bf16(dfx__bf16_to_f32(d[i]) / (float)count);
      }
      break;
    default: break;
  }
}

/* Turns a flat element index back into its coordinates, for messages that
 * name an element the way TF does ("indices[1,0] = ..."). */
const char *dfx__g_slice_str(int ndims, const int64_t *dims, int64_t flat, char *buf, size_t n) {
  buf[0] = 0;
  if (ndims <= 0) return buf;
  int64_t coord[DFX_MAX_DIMS];
  for (int d = ndims - 1; d >= 0; d--) {
    /* A zero dim has no valid coordinate anyway; 1 avoids dividing by zero. */
    int64_t sz = dims[d] > 0 ? dims[d] : 1;
    coord[d] = flat % sz;
    flat /= sz;
  }
  size_t off = 0;
  for (int d = 0; d < ndims && off < n; d++)
    off += (size_t)snprintf(buf + off, n - off, "%s%lld", d ? "," : "[", (long long)coord[d]);
  if (off < n) snprintf(buf + off, n - off, "]");
  return buf;
}
