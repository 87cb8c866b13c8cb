/* cast.c - Cast (SrcT -> DstT, optional mantissa Truncate) and Bitcast.
 * Cast follows TF's CPU kernels on x86: C conversions, except float -> int
 * which behaves like cvttss2si (NaN and out-of-range give the "integer
 * indefinite" INT_MIN, narrow ints go through int32 and wrap); half types go
 * through float with round-to-nearest-even; complex -> real takes the real
 * part and real -> complex a zero imaginary part (numpy's rules, as TF).
 * Elements are dense; the output has the input's shape. */
#include <math.h>
#include <string.h>

#include "ew.h"

/* x86 truncating conversions: out of range or NaN -> most negative value. */
static inline int32_t cvt32(double x) {
  /* The open bounds are exact doubles: anything in (-2^31 - 1, 2^31) truncates
   * into range; the comparisons are false for NaN too. */
  return (x > -2147483649.0 && x < 2147483648.0) ? (int32_t)x : INT32_MIN;
}
static inline int64_t cvt64(double x) {
  return (x >= -9223372036854775808.0 && x < 9223372036854775808.0) ? (int64_t)x : INT64_MIN;
}
static inline uint64_t cvtu64(double x) {
  /* As compilers convert to uint64 on x86: from 2^63 up, subtract 2^63, use
   * the signed conversion and put the top bit back. */
  if (x >= 9223372036854775808.0) return (uint64_t)cvt64(x - 9223372036854775808.0) ^ (UINT64_C(1) << 63);
  return (uint64_t)cvt64(x);
}

#define LD_ID(v) (v)
#define LD_B(v) ((v) != 0)
#define LD_H(v) dfx__f16_to_f32(v)
#define LD_BF(v) dfx__bf16_to_f32(v)
#define LD_RE(v) ((v).re) /* complex -> real keeps the real part, as numpy */

/* Stores from an integer-kind value (I) or a floating value (F). */
#define ST_I_I8(v) ((int8_t)(v))
#define ST_I_I16(v) ((int16_t)(v))
#define ST_I_I32(v) ((int32_t)(v))
#define ST_I_I64(v) ((int64_t)(v))
#define ST_I_U8(v) ((uint8_t)(v))
#define ST_I_U16(v) ((uint16_t)(v))
#define ST_I_U32(v) ((uint32_t)(v))
#define ST_I_U64(v) ((uint64_t)(v))
#define ST_I_F32(v) ((float)(v))
#define ST_I_F64(v) ((double)(v))
#define ST_I_F16(v) dfx__f32_to_f16((float)(v))
#define ST_I_BF16(v) dfx__f32_to_bf16((float)(v))
#define ST_I_BOOL(v) ((uint8_t)((v) != 0))
#define ST_I_C64(v) ((dfx_c64){(float)(v), 0})
#define ST_I_C128(v) ((dfx_c128){(double)(v), 0})
#define ST_F_I8(v) ((int8_t)cvt32(v))
#define ST_F_I16(v) ((int16_t)cvt32(v))
#define ST_F_I32(v) cvt32(v)
#define ST_F_I64(v) cvt64(v)
#define ST_F_U8(v) ((uint8_t)cvt32(v))
#define ST_F_U16(v) ((uint16_t)cvt32(v))
#define ST_F_U32(v) ((uint32_t)cvt64(v))
#define ST_F_U64(v) cvtu64(v)
#define ST_F_F32(v) ((float)(v))
#define ST_F_F64(v) ((double)(v))
#define ST_F_F16(v) dfx__f32_to_f16((float)(v))
#define ST_F_BF16(v) dfx__f32_to_bf16((float)(v))
#define ST_F_BOOL(v) ((uint8_t)((v) != 0))
#define ST_F_C64(v) ((dfx_c64){(float)(v), 0})
#define ST_F_C128(v) ((dfx_c128){(double)(v), 0})

#define SRCS(X, DN)                                                                                           \
  X(DN, DFX_I8, int8_t, LD_ID, I) X(DN, DFX_I16, int16_t, LD_ID, I) X(DN, DFX_I32, int32_t, LD_ID, I)        \
  X(DN, DFX_I64, int64_t, LD_ID, I) X(DN, DFX_U8, uint8_t, LD_ID, I) X(DN, DFX_U16, uint16_t, LD_ID, I)      \
  X(DN, DFX_U32, uint32_t, LD_ID, I) X(DN, DFX_U64, uint64_t, LD_ID, I) X(DN, DFX_BOOL, uint8_t, LD_B, I)    \
  X(DN, DFX_F32, float, LD_ID, F) X(DN, DFX_F64, double, LD_ID, F) X(DN, DFX_F16, uint16_t, LD_H, F)         \
  X(DN, DFX_BF16, uint16_t, LD_BF, F) X(DN, DFX_C64, dfx_c64, LD_RE, F) X(DN, DFX_C128, dfx_c128, LD_RE, F)
#define DSTS(X)                                                                                             \
  X(DFX_I8, int8_t, I8) X(DFX_I16, int16_t, I16) X(DFX_I32, int32_t, I32) X(DFX_I64, int64_t, I64)          \
  X(DFX_U8, uint8_t, U8) X(DFX_U16, uint16_t, U16) X(DFX_U32, uint32_t, U32) X(DFX_U64, uint64_t, U64)      \
  X(DFX_F32, float, F32) X(DFX_F64, double, F64) X(DFX_F16, uint16_t, F16) X(DFX_BF16, uint16_t, BF16)     \
  X(DFX_BOOL, uint8_t, BOOL) X(DFX_C64, dfx_c64, C64) X(DFX_C128, dfx_c128, C128)

#define SRC_CASE(DN, SDT, SC, LD, K)                                       \
  case SDT: {                                                              \
    const SC *restrict s = src;                                            \
    for (int64_t i = 0; i < n; i++) d[i] = ST_##K##_##DN(LD(s[i]));        \
    return 0;                                                              \
  }
#define DST_CASE(DDT, DC, DN)   \
  case DDT: {                   \
    DC *restrict d = dst;       \
    switch (st) {               \
      SRCS(SRC_CASE, DN)        \
      default:                  \
        return -1;              \
    }                           \
  }

/* Converts n elements; complex -> complex keeps both parts. */
static int cast_loop(dfx_dtype st, dfx_dtype dt, const void *src, void *dst, int64_t n) {
  if (st == DFX_C64 && dt == DFX_C128) {
    for (int64_t i = 0; i < n; i++)
      ((dfx_c128 *)dst)[i] = (dfx_c128){((const dfx_c64 *)src)[i].re, ((const dfx_c64 *)src)[i].im};
    return 0;
  }
  if (st == DFX_C128 && dt == DFX_C64) {
    for (int64_t i = 0; i < n; i++)
      ((dfx_c64 *)dst)[i] = (dfx_c64){(float)((const dfx_c128 *)src)[i].re, (float)((const dfx_c128 *)src)[i].im};
    return 0;
  }
  switch (dt) {
    DSTS(DST_CASE)
    default:
      return -1;
  }
}

/* Truncate=true clears the source mantissa bits the destination cannot
 * hold, then converts: for exactly the (destination, source) pairs TF's CPU
 * kernel truncates (its CAST_FUNCTORS list; 32- and 64-bit sources only).
 * Returns the bits to clear in each float of the source, or 0. */
static int trunc_bits(dfx_dtype st, dfx_dtype dt) {
  const bool s64 = st == DFX_F64 || st == DFX_C128, s32 = st == DFX_F32 || st == DFX_C64;
  switch (dt) {
    case DFX_F32: return s64 ? 53 - 24 : 0;
    case DFX_C64: return s64 ? 53 - 24 : 0;
    case DFX_F16: return s64 ? 53 - 11 : s32 ? 24 - 11 : 0;
    case DFX_BF16: return st == DFX_F32 ? 24 - 8 : 0;
    default: return 0;
  }
}

/* Cast with truncation: the source goes through a stack buffer, chunk by
 * chunk, where its low bits are cleared (NaNs left alone, as TF). */
static void cast_truncating(dfx_dtype st, dfx_dtype dt, int bits, const void *src, void *dst, int64_t n) {
  _Alignas(16) unsigned char buf[4096];
  const size_t es = dfx__dtype_storage(st), ds = dfx__dtype_storage(dt);
  const bool wide = st == DFX_F64 || st == DFX_C128; /* 64-bit floats */
  const int64_t per = (int64_t)(sizeof buf / es), nf = (int64_t)(es / (wide ? 8 : 4));
  for (int64_t i = 0; i < n; i += per) {
    const int64_t k = n - i < per ? n - i : per;
    memcpy(buf, (const char *)src + (size_t)i * es, (size_t)k * es);
    for (int64_t j = 0; j < k * nf; j++) {
      if (wide) {
        double *v = (double *)buf + j;
        uint64_t b;
        memcpy(&b, v, 8);
        b &= ~((UINT64_C(1) << bits) - 1);
        if (!isnan(*v)) memcpy(v, &b, 8);
      } else {
        float *v = (float *)buf + j;
        uint32_t b;
        memcpy(&b, v, 4);
        b &= ~((UINT32_C(1) << bits) - 1);
        if (!isnan(*v)) memcpy(v, &b, 4);
      }
    }
    cast_loop(st, dt, buf, (char *)dst + (size_t)i * ds, k);
  }
}

static dfx_code cast_init(const dfx_node *n, void **state, dfx_status *st) {
  *state = dfx__attr_bool(n, "Truncate", false) ? (void *)1 : NULL;
  return DFX_OK;
}

typedef struct cast_job {
  dfx_dtype st, dt;
  int bits;
  const char *src;
  char *dst;
  size_t ses, des;
  dfx_kctx *ctx;
} cast_job;

/* Elements [lo, hi) of a Cast whose dtype pair is known to be supported;
 * stops between pieces once the run is cancelled (polled after the join). */
static void cast_block(void *arg, int64_t lo, int64_t hi) {
  const cast_job *j = arg;
  for (int64_t i = lo; i < hi; i += EW_POLL_GRAIN) {
    const int64_t n = hi - i < EW_POLL_GRAIN ? hi - i : EW_POLL_GRAIN;
    const void *src = j->src + (size_t)i * j->ses;
    void *dst = j->dst + (size_t)i * j->des;
    if (j->bits)
      cast_truncating(j->st, j->dt, j->bits, src, dst, n);
    else
      cast_loop(j->st, j->dt, src, dst, n);
    if (dfx__kctx_cancelled(j->ctx)) return;
  }
}

static dfx_code k_cast(dfx_kctx *ctx) {
  const dfx_tensor *x = ctx->in[0];
  dfx_dtype st = (dfx_dtype)x->dtype;
  dfx_dtype dt = ctx->node->n_out > 0 && ctx->node->out_types ? ctx->node->out_types[0]
                                                             : dfx__attr_type(ctx->node, "DstT", st);
  if (st == dt) {
    dfx__kctx_forward(ctx, 0, 0);
    return DFX_OK;
  }
  const int bits = ctx->state ? trunc_bits(st, dt) : 0;
  dfx_tensor *o = dfx__kctx_alloc(ctx, 0, dt, x->ndims, x->dims);
  if (!o) return dfx_status_code(ctx->st);
  const size_t ses = dfx__dtype_storage(st), des = dfx__dtype_storage(dt);
  /* Large tensors: blocks on idle threads, once the pair is known to work
   * (a zero-length loop answers that). */
  if (x->count >= EW_PAR_MIN && ctx->par && (bits || cast_loop(st, dt, x->data, o->data, 0) >= 0)) {
    cast_job j = {st, dt, bits, x->data, o->data, ses, des, ctx};
    dfx__kctx_parallel_for(ctx, x->count, &(dfx_par_cost){.unit_ns = 0.3, .grain = 16}, cast_block, &j);
    dfx_code c = dfx__kctx_poll(ctx);
    if (c != DFX_OK) {
      dfx__tensor_unref(ctx->out[0]);
      ctx->out[0] = NULL;
    }
    return c;
  }
  for (int64_t i = 0; i < x->count; i += EW_POLL_GRAIN) {
    const int64_t n = x->count - i < EW_POLL_GRAIN ? x->count - i : EW_POLL_GRAIN;
    const void *src = (const char *)x->data + (size_t)i * ses;
    void *dst = (char *)o->data + (size_t)i * des;
    dfx_code c = i > 0 ? dfx__kctx_poll(ctx) : DFX_OK;
    if (c == DFX_OK && bits)
      cast_truncating(st, dt, bits, src, dst, n);
    else if (c == DFX_OK && cast_loop(st, dt, src, dst, n) < 0)
      c = dfx__kctx_fail(ctx, DFX_EUNIMPL, "Cast %s to %s is not supported", dfx__dtype_tf_name(st),
                         dfx__dtype_tf_name(dt));
    if (c != DFX_OK) {
      dfx__tensor_unref(ctx->out[0]);
      ctx->out[0] = NULL;
      return c;
    }
  }
  return DFX_OK;
}

/* Bitcast: reinterprets the bytes; a size change adds or removes the last dim. */
static dfx_code k_bitcast(dfx_kctx *ctx) {
  const dfx_tensor *x = ctx->in[0];
  dfx_dtype st = (dfx_dtype)x->dtype;
  dfx_dtype dt = ctx->node->out_types ? ctx->node->out_types[0] : dfx__attr_type(ctx->node, "type", st);
  size_t is = dfx__dtype_storage(st), os = dfx__dtype_storage(dt); /* declared: fixed, powers of two */
  int64_t dims[DFX_MAX_DIMS];
  int nd = x->ndims;
  memcpy(dims, x->dims, sizeof(int64_t) * (size_t)nd);
  char buf[128];
  if (is > os) {
    if (nd >= DFX_MAX_DIMS)
      return dfx__kctx_fail(ctx, DFX_EINVAL, "Cannot bitcast from %s to %s: shape %s has too many dims",
                            dfx__dtype_tf_name(st), dfx__dtype_tf_name(dt), DFX_SHAPE_STR(x, buf));
    dims[nd++] = (int64_t)(is / os);
  } else if (is < os) {
    if (nd == 0 || dims[nd - 1] != (int64_t)(os / is))
      return dfx__kctx_fail(ctx, DFX_EINVAL, "Cannot bitcast from %s to %s: shape %s", dfx__dtype_tf_name(st),
                            dfx__dtype_tf_name(dt), DFX_SHAPE_STR(x, buf));
    nd--;
  }
  dfx_tensor *o = dfx__kctx_alloc(ctx, 0, dt, nd, dims);
  if (!o) return dfx_status_code(ctx->st);
  if (x->nbytes) memcpy(o->data, x->data, x->nbytes);
  return DFX_OK;
}

/* Cast: the SRCS x DSTS loops above (no string or quantized types), in
 * three rows that differ in DstT or SrcT: real to real, anything to
 * complex, complex to real. The registry names the attr the last row
 * refused, so that row checks DstT first: a bad DstT is then named. */
#define CAST_REAL "{" EW_TY_FSU ", bool}"
#define CAST_C "{" EW_TY_C "}"
#define CAST_ALL "{" EW_TY_FSU ", bool, " EW_TY_C "}"
/* Bitcast copies bytes: every fixed-size type TensorFlow allows. */
#define BITCAST_TYPES "{" EW_TY_FSU ", complex64, complex128, qint8, quint8, qint16, quint16, qint32}"
static const dfx_kernel_def kernels[] = {
    {"Cast", "SrcT: " CAST_REAL "; DstT: " CAST_REAL, k_cast, DFX_KERNEL_CHEAP, cast_init, NULL},
    {"Cast", "SrcT: " CAST_ALL "; DstT: " CAST_C, k_cast, DFX_KERNEL_CHEAP, cast_init, NULL},
    {"Cast", "DstT: " CAST_REAL "; SrcT: " CAST_C, k_cast, DFX_KERNEL_CHEAP, cast_init, NULL},
    {"_HostCast", "SrcT: " CAST_REAL "; DstT: " CAST_REAL, k_cast, DFX_KERNEL_CHEAP, cast_init, NULL},
    {"_HostCast", "SrcT: " CAST_ALL "; DstT: " CAST_C, k_cast, DFX_KERNEL_CHEAP, cast_init, NULL},
    {"_HostCast", "DstT: " CAST_REAL "; SrcT: " CAST_C, k_cast, DFX_KERNEL_CHEAP, cast_init, NULL},
    {"Bitcast", "T: " BITCAST_TYPES "; type: " BITCAST_TYPES, k_bitcast, DFX_KERNEL_CHEAP, NULL, NULL},
    {NULL}};

void dfx__kernels_math_cast(dfx_registry *r);
void dfx__kernels_math_cast(dfx_registry *r) { dfx__kernels_add(r, kernels); }
