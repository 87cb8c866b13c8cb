/* unary.c - elementwise unary math (x: T -> y: T, same shape): Abs, Neg,
 * Square, Reciprocal/Inv, Sign, rounding, exp/log/trig families, special
 * functions, IsNan/IsInf/IsFinite (-> bool) and the activations Relu, Relu6,
 * Elu, Selu, Softplus, Softsign, Sigmoid, LeakyRelu. Half types are computed in
 * float and rounded back; integer Abs/Neg/Square wrap like TF. */
#include <string.h>
#include <tgmath.h>

#include "ew.h"
#include "simd/simd.h"
#include "special.h"

/* Negation through uint64: Abs(INT_MIN) wraps to INT_MIN, as in TF, with no
 * signed-overflow UB. */
#define ABS_S(T) ((T)(x < 0 ? (T)(0 - (uint64_t)x) : x))
#define NEG_I(T) EW_WSUB(T, 0, x)
#define NEG_F(T) (-x)
#define SQR_I(T) EW_WMUL(T, x, x)
#define SQR_F(T) (x * x)
/* Integer 1 / 0 is TF's "Integer division by zero", not a trap. */
#define REC_I(T) (x == 0 ? (bad = 1, (T)0) : (T)(1 / x))
#define REC_F(T) ((T)1 / x)
#define SIGN_I(T) ((T)((x > 0) - (x < 0)))
#define SIGN_F(T) (isnan(x) ? x : (T)((x > 0) - (x < 0)))
#define SIGN_C(T) (x == 0 ? (T)0 : x / fabs(x)) /* TF: x / |x| */
#define ID(T) (x)
#define ABS_F(T) fabs(x)
#define SQRT_F(T) sqrt(x)
#define RSQRT_F(T) ((T)1 / sqrt(x))
#define EXP_F(T) exp(x)
#define EXPM1_F(T) expm1(x)
#define LOG_F(T) log(x)
#define LOG1P_F(T) log1p(x)
#define SIN_F(T) sin(x)
#define COS_F(T) cos(x)
#define TAN_F(T) tan(x)
#define ASIN_F(T) asin(x)
#define ACOS_F(T) acos(x)
#define ATAN_F(T) atan(x)
#define SINH_F(T) sinh(x)
#define COSH_F(T) cosh(x)
#define TANH_F(T) tanh_tf(x)
#define ASINH_F(T) asinh(x)
#define ACOSH_F(T) acosh(x)
#define ATANH_F(T) atanh(x)
/* For x far below 0, exp(-x) overflows to inf and 1 / inf is the right
 * limit, 0: no branch needed. */
#define SIGM_F(T) ((T)1 / ((T)1 + exp(-x)))
#define LGAMMA_F(T) ((T)dfx__lgamma((double)x))
#define DIGAMMA_F(T) ((T)dfx__digamma((double)x))
#define ERF_F(T) erf(x)
#define ERFC_F(T) erfc(x)
#define FLOOR_F(T) floor(x)
#define CEIL_F(T) ceil(x)
#define RINT_F(T) rint(x) /* Round and Rint: half to even (default rounding mode) */
#define ISNAN_F(T) (isnan(x) != 0)
#define ISINF_F(T) (isinf(x) != 0)
#define ISFIN_F(T) (isfinite(x) != 0)
#define RELU_I(T) (x < 0 ? (T)0 : x)
#define RELU6_I(T) (x < 0 ? (T)0 : x > 6 ? (T)6 : x)
#define RELU6_U(T) (x > 6 ? (T)6 : x)
#define ELU_F(T) (x < 0 ? expm1(x) : x)
/* SELU's fixed scale (1.0507...) and alpha (1.6732...), the constants TF uses. */
#define SELU_F(T) \
  (x < 0 ? (T)(1.0507009873554804934193349852946 * 1.6732632423543772848170429916717) * expm1(x) \
         : (T)1.0507009873554804934193349852946 * x)
#define SOFTSIGN_F(T) (x / ((T)1 + fabs(x)))
#define SOFTPLUS_F(T) softplus(x)

/* c ? a : b on bits, with both sides computed: a ternary over a division
 * is a branch to GCC (the division might trap), which stops vectorisation. */
static inline float blend_f(bool c, float a, float b) {
  uint32_t ua, ub, m = 0u - (uint32_t)c;
  memcpy(&ua, &a, 4);
  memcpy(&ub, &b, 4);
  uint32_t r = (ua & m) | (ub & ~m);
  float f;
  memcpy(&f, &r, 4);
  return f;
}

/* Float tanh as TensorFlow computes it on CPU: Eigen's fast rational
 * approximation (EIGEN_FAST_MATH), an odd degree-13 polynomial over an even
 * degree-6 one on x clamped to +-7.90531 (where it reaches 1.0f), and x itself
 * for |x| < 4e-4. It is within a few ulp of the exact value, has no branches
 * (so the loop vectorises) and matches TF's outputs more closely than libm.
 * Half types go through it too, as in TF. Doubles use libm. */
static inline float tanh_tf_f(float x) {
  const float clamp = 7.90531110763549805f;
  float c = blend_f(x > clamp, clamp, blend_f(x < -clamp, -clamp, x));
  float x2 = c * c;
  float p = x2 * -2.76076847742355e-16f + 2.00018790482477e-13f;
  p = x2 * p + -8.60467152213735e-11f;
  p = x2 * p + 5.12229709037114e-08f;
  p = x2 * p + 1.48572235717979e-05f;
  p = x2 * p + 6.37261928875436e-04f;
  p = x2 * p + 4.89352455891786e-03f;
  p = c * p;
  float q = x2 * 1.19825839466702e-06f + 1.18534705686654e-04f;
  q = x2 * q + 2.26843463243900e-03f;
  q = x2 * q + 4.89352518554385e-03f;
  /* NaN fails both comparisons above and stays NaN through p / q. */
  return blend_f(fabsf(x) < 0.0004f, x, p / q);
}
#define tanh_tf(x) \
  _Generic((x), float: tanh_tf_f, float _Complex: ctanhf, double _Complex: ctanh, default: tanh)(x)

/* TF's Softplus: linear or exponential tails past log(epsilon) + 2. */
static inline double softplus_d(double x) {
  /* Past -th, log1p(exp(x)) rounds to x, and below th to exp(x): the tails
   * skip the work, and exp(x) is never taken of a large x, so never overflows. */
  const double th = -34.04365338911715; /* log(DBL_EPSILON) + 2 */
  return x > -th ? x : x < th ? exp(x) : log1p(exp(x));
}
static inline float softplus_f(float x) {
  const float th = -13.942385f; /* log(FLT_EPSILON) + 2 */
  return x > -th ? x : x < th ? exp(x) : log1p(exp(x));
}
#define softplus(x) _Generic((x), float: softplus_f, default: softplus_d)(x)

#define FL(OK, E) EW_UF_CASES(OK, E)
#define CX(E) EW_UC_CASES(SAME, E)
EW_DEF_UN(abs_fn, EW_US_CASES(SAME, ABS_S) FL(SAME, ABS_F))
EW_DEF_UN(neg_fn, EW_US_CASES(SAME, NEG_I) FL(SAME, NEG_F) CX(NEG_F))
EW_DEF_UN(sqr_fn, EW_US_CASES(SAME, SQR_I) EW_UU_CASES(SAME, SQR_I) FL(SAME, SQR_F) CX(SQR_F))
EW_DEF_UN(rec_fn, EW_US_CASES(SAME, REC_I) FL(SAME, REC_F) CX(REC_F))
EW_DEF_UN(sign_fn, EW_US_CASES(SAME, SIGN_I) FL(SAME, SIGN_F) CX(SIGN_C))
EW_DEF_UN(sqrt_fn, FL(SAME, SQRT_F) CX(SQRT_F))
EW_DEF_UN(rsqrt_fn, FL(SAME, RSQRT_F) CX(RSQRT_F))
EW_DEF_UN(exp_fn, FL(SAME, EXP_F) CX(EXP_F))
EW_DEF_UN(expm1_fn, FL(SAME, EXPM1_F))
EW_DEF_UN(log_fn, FL(SAME, LOG_F) CX(LOG_F))
EW_DEF_UN(log1p_fn, FL(SAME, LOG1P_F))
EW_DEF_UN(sin_fn, FL(SAME, SIN_F) CX(SIN_F))
EW_DEF_UN(cos_fn, FL(SAME, COS_F) CX(COS_F))
EW_DEF_UN(tan_fn, FL(SAME, TAN_F) CX(TAN_F))
EW_DEF_UN(asin_fn, FL(SAME, ASIN_F) CX(ASIN_F))
EW_DEF_UN(acos_fn, FL(SAME, ACOS_F) CX(ACOS_F))
EW_DEF_UN(atan_fn, FL(SAME, ATAN_F) CX(ATAN_F))
EW_DEF_UN(sinh_fn, FL(SAME, SINH_F) CX(SINH_F))
EW_DEF_UN(cosh_fn, FL(SAME, COSH_F) CX(COSH_F))
EW_DEF_UN(tanh_fn, FL(SAME, TANH_F) CX(TANH_F))
EW_DEF_UN(asinh_fn, FL(SAME, ASINH_F) CX(ASINH_F))
EW_DEF_UN(acosh_fn, FL(SAME, ACOSH_F) CX(ACOSH_F))
EW_DEF_UN(atanh_fn, FL(SAME, ATANH_F) CX(ATANH_F))
EW_DEF_UN(sigm_fn, FL(SAME, SIGM_F) CX(SIGM_F))
EW_DEF_UN(lgamma_fn, FL(SAME, LGAMMA_F))
EW_DEF_UN(digamma_fn, FL(SAME, DIGAMMA_F))
EW_DEF_UN(erf_fn, FL(SAME, ERF_F))
EW_DEF_UN(erfc_fn, FL(SAME, ERFC_F))
EW_DEF_UN(floor_fn, FL(SAME, FLOOR_F))
EW_DEF_UN(ceil_fn, FL(SAME, CEIL_F))
EW_DEF_UN(rint_fn, EW_US_CASES(SAME, ID) FL(SAME, RINT_F)) /* integers: Round only */
EW_DEF_UN(isnan_fn, FL(BOOL, ISNAN_F))
EW_DEF_UN(isinf_fn, FL(BOOL, ISINF_F))
EW_DEF_UN(isfin_fn, FL(BOOL, ISFIN_F))
EW_DEF_UN(relu_fn, EW_US_CASES(SAME, RELU_I) EW_UU_CASES(SAME, ID) FL(SAME, RELU_I))
EW_DEF_UN(relu6_fn, EW_US_CASES(SAME, RELU6_I) FL(SAME, RELU6_I) EW_UCASE(DFX_U8, uint8_t, SAME, RELU6_U)
                        EW_UCASE(DFX_U16, uint16_t, SAME, RELU6_U) EW_UCASE(DFX_U32, uint32_t, SAME, RELU6_U)
                            EW_UCASE(DFX_U64, uint64_t, SAME, RELU6_U))
EW_DEF_UN(elu_fn, FL(SAME, ELU_F))
EW_DEF_UN(selu_fn, FL(SAME, SELU_F))
EW_DEF_UN(softplus_fn, FL(SAME, SOFTPLUS_F))
EW_DEF_UN(softsign_fn, FL(SAME, SOFTSIGN_F))

typedef int (*un_fn)(int64_t, dfx_dtype, const void *, void *, int *);

/* The kernel's code for fn's result r and error flag bad; on an error the
 * output is dropped. */
static dfx_code un_status(dfx_kctx *ctx, int r, int bad, dfx_dtype t) {
  dfx_code c = r < 0 ? dfx__ew_unsupported(ctx, t)
               : bad ? dfx__kctx_fail(ctx, DFX_EINVAL, "Integer division by zero")
                     : DFX_OK;
  if (c != DFX_OK) {
    dfx__tensor_unref(ctx->out[0]);
    ctx->out[0] = NULL;
  }
  return c;
}

/* A cancellation poll once EW_POLL_GRAIN more elements are done. */
static inline dfx_code un_poll(dfx_kctx *ctx, int64_t done, int64_t *next) {
  if (done < *next) return DFX_OK;
  *next += EW_POLL_GRAIN;
  dfx_code c = dfx__kctx_poll(ctx);
  if (c != DFX_OK) {
    dfx__tensor_unref(ctx->out[0]);
    ctx->out[0] = NULL;
  }
  return c;
}

/* The output goes into the input, which the kernel now owns, chunk by
 * chunk through a stack buffer (the elementwise loops take restrict
 * pointers). Not inlined: the buffer would enlarge every call's frame. */
__attribute__((noinline)) static dfx_code un_in_place(dfx_kctx *ctx, un_fn fn, dfx_dtype t, dfx_tensor *x) {
  _Alignas(64) unsigned char tmp[4096];
  const size_t es = dfx__dtype_storage(t);
  const int64_t per = (int64_t)(sizeof tmp / es);
  ctx->out[0] = x;
  char *d = x->data;
  for (int64_t i = 0, next = EW_POLL_GRAIN; i < x->count; i += per) {
    int64_t n = x->count - i < per ? x->count - i : per;
    int bad = 0;
    dfx_code c = un_status(ctx, fn(n, t, d + (size_t)i * es, tmp, &bad), bad, t);
    if (c == DFX_OK) c = un_poll(ctx, i, &next);
    if (c != DFX_OK) return c;
    memcpy(d + (size_t)i * es, tmp, (size_t)n * es);
  }
  return DFX_OK;
}

static dfx_code run_un(dfx_kctx *ctx, un_fn fn, bool out_bool);

/* ---- large tensors: blocks on idle threads (parallel_for) ---- */

/* Below this many elements a tensor takes the serial loops: scalars and
 * small vectors of a while loop never pay for the cost model. */
#define UN_PAR_MIN 16384

typedef struct un_job {
  dfx_kctx *ctx;
  un_fn fn;
  dfx_dtype t;
  const char *src;
  char *dst;            /* == src in place */
  size_t es, os;
  int unsupported, bad; /* atomic flags from the blocks */
} un_job;

/* Elements [lo, hi), in pieces of EW_POLL_GRAIN that stop once the run is
 * cancelled (the kernel polls after the join). In place, each piece goes
 * through a stack buffer (the loops take restrict pointers). */
static void un_block(void *arg, int64_t lo, int64_t hi) {
  un_job *j = arg;
  _Alignas(64) unsigned char tmp[4096];
  const int64_t per = j->src == j->dst ? (int64_t)(sizeof tmp / j->es) : EW_POLL_GRAIN;
  int64_t since_poll = 0;
  for (int64_t i = lo; i < hi; i += per) {
    int64_t n = hi - i < per ? hi - i : per;
    int bad = 0, r;
    if (j->src == j->dst) {
      r = j->fn(n, j->t, j->src + (size_t)i * j->es, tmp, &bad);
      if (r >= 0 && !bad) memcpy(j->dst + (size_t)i * j->es, tmp, (size_t)n * j->es);
    } else {
      r = j->fn(n, j->t, j->src + (size_t)i * j->es, j->dst + (size_t)i * j->os, &bad);
    }
    if (r < 0) __atomic_store_n(&j->unsupported, 1, __ATOMIC_RELAXED);
    if (bad) __atomic_store_n(&j->bad, 1, __ATOMIC_RELAXED);
    if (r < 0 || bad) return;
    if ((since_poll += n) >= EW_POLL_GRAIN) {
      since_poll = 0;
      if (dfx__kctx_cancelled(j->ctx)) return;
    }
  }
}

/* fn over all of x into o (o == x: in place), split over idle threads. */
static dfx_code un_parallel(dfx_kctx *ctx, un_fn fn, double unit_ns, const dfx_tensor *x, dfx_tensor *o) {
  dfx_dtype t = (dfx_dtype)x->dtype;
  un_job j = {.ctx = ctx, .fn = fn, .t = t, .src = x->data, .dst = o->data, .es = dfx__dtype_storage(t),
              .os = dfx__dtype_storage((dfx_dtype)o->dtype)};
  /* Blocks of 16 elements: whole cache lines of float output per thread. */
  dfx__kctx_parallel_for(ctx, x->count, &(dfx_par_cost){.unit_ns = unit_ns, .grain = 16}, un_block, &j);
  dfx_code c = un_status(ctx, j.unsupported ? -1 : 0, j.bad, t);
  if (c == DFX_OK && (c = dfx__kctx_poll(ctx)) != DFX_OK) {
    dfx__tensor_unref(ctx->out[0]);
    ctx->out[0] = NULL;
  }
  return c;
}

static dfx_code run_un_cost(dfx_kctx *ctx, un_fn fn, bool out_bool, double unit_ns) {
  const dfx_tensor *x = ctx->in[0];
  dfx_dtype t = (dfx_dtype)x->dtype;
  if (x->count >= UN_PAR_MIN && ctx->par) {
    dfx_tensor *own = out_bool ? NULL : dfx__kctx_take_unique(ctx, 0);
    if (own) {
      ctx->out[0] = own;
      return un_parallel(ctx, fn, unit_ns, own, own);
    }
    dfx_tensor *o = dfx__kctx_alloc(ctx, 0, out_bool ? DFX_BOOL : t, x->ndims, x->dims);
    if (!o) return dfx_status_code(ctx->st);
    return un_parallel(ctx, fn, unit_ns, x, o);
  }
  return run_un(ctx, fn, out_bool);
}

static dfx_code run_un(dfx_kctx *ctx, un_fn fn, bool out_bool) {
  const dfx_tensor *x = ctx->in[0];
  dfx_dtype t = (dfx_dtype)x->dtype;
  /* A bool result cannot live in the input's buffer (another dtype). */
  if (!out_bool) {
    dfx_tensor *own = dfx__kctx_take_unique(ctx, 0);
    if (own) return un_in_place(ctx, fn, t, own);
  }
  dfx_tensor *o = dfx__kctx_alloc(ctx, 0, out_bool ? DFX_BOOL : t, x->ndims, x->dims);
  if (!o) return dfx_status_code(ctx->st);
  const size_t es = dfx__dtype_storage(t), os = out_bool ? 1 : es;
  const char *src = x->data;
  char *dst = o->data;
  for (int64_t i = 0, next = EW_POLL_GRAIN; i < x->count; i += EW_POLL_GRAIN) {
    int64_t n = x->count - i < EW_POLL_GRAIN ? x->count - i : EW_POLL_GRAIN;
    int bad = 0;
    dfx_code c = un_status(ctx, fn(n, t, src + (size_t)i * es, dst + (size_t)i * os, &bad), bad, t);
    if (c == DFX_OK && i + n < x->count) c = un_poll(ctx, i + n, &next);
    if (c != DFX_OK) return c;
  }
  return DFX_OK;
}

/* Float32 Tanh and Sigmoid run the dispatched SIMD loops (kernels/simd):
 * the same functions, vectorised for the CPU. */
static int tanh_simd_fn(int64_t n, dfx_dtype t, const void *a, void *o, int *bad) {
  if (t != DFX_F32) return tanh_fn(n, t, a, o, bad);
  dfx__simd()->vtanh(a, o, n);
  return 0;
}
static int sigm_simd_fn(int64_t n, dfx_dtype t, const void *a, void *o, int *bad) {
  if (t != DFX_F32) return sigm_fn(n, t, a, o, bad);
  dfx__simd()->vsigmoid(a, o, n);
  return 0;
}

/* Kernels by estimated cost per element (ns, one core, the scalar loops):
 * C for compare/move-like ops, A for arithmetic, T for libm
 * transcendentals. It only decides when splitting pays. */
#define COST_C 0.1
#define COST_A 0.3
#define COST_T 2.0
#define KFN_C(name, fn, ob, cost) \
  static dfx_code name(dfx_kctx *ctx) { return run_un_cost(ctx, fn, ob, cost); }
#define KFN(name, fn, ob) KFN_C(name, fn, ob, COST_T)
KFN_C(k_abs, abs_fn, false, COST_C)
KFN_C(k_neg, neg_fn, false, COST_C)
KFN_C(k_sqr, sqr_fn, false, COST_C)
KFN_C(k_rec, rec_fn, false, COST_A)
KFN_C(k_sign, sign_fn, false, COST_C)
KFN_C(k_sqrt, sqrt_fn, false, COST_A)
KFN_C(k_rsqrt, rsqrt_fn, false, COST_A)
KFN(k_exp, exp_fn, false)
KFN(k_expm1, expm1_fn, false)
KFN(k_log, log_fn, false)
KFN(k_log1p, log1p_fn, false)
KFN(k_sin, sin_fn, false)
KFN(k_cos, cos_fn, false)
KFN(k_tan, tan_fn, false)
KFN(k_asin, asin_fn, false)
KFN(k_acos, acos_fn, false)
KFN(k_atan, atan_fn, false)
KFN(k_sinh, sinh_fn, false)
KFN(k_cosh, cosh_fn, false)
KFN_C(k_tanh, tanh_simd_fn, false, COST_A)
KFN(k_asinh, asinh_fn, false)
KFN(k_acosh, acosh_fn, false)
KFN(k_atanh, atanh_fn, false)
KFN_C(k_sigm, sigm_simd_fn, false, COST_A)
KFN(k_lgamma, lgamma_fn, false)
KFN(k_digamma, digamma_fn, false)
KFN(k_erf, erf_fn, false)
KFN(k_erfc, erfc_fn, false)
KFN_C(k_floor, floor_fn, false, COST_C)
KFN_C(k_ceil, ceil_fn, false, COST_C)
KFN_C(k_rint, rint_fn, false, COST_C)
KFN_C(k_isnan, isnan_fn, true, COST_C)
KFN_C(k_isinf, isinf_fn, true, COST_C)
KFN_C(k_isfin, isfin_fn, true, COST_C)
KFN_C(k_relu, relu_fn, false, COST_C)
KFN_C(k_relu6, relu6_fn, false, COST_C)
KFN(k_elu, elu_fn, false)
KFN(k_selu, selu_fn, false)
KFN(k_softplus, softplus_fn, false)
KFN_C(k_softsign, softsign_fn, false, COST_A)

/* LeakyRelu's alpha is a node attr, so it has its own loop over [lo, hi). */
static void leaky_range(dfx_dtype t, const void *x, void *o, int64_t lo, int64_t hi, float alpha) {
  switch (t) {
#define C(DT, T)                                                                  \
  case DT: {                                                                      \
    const T *restrict a = x;                                                      \
    T *restrict b = o;                                                            \
    for (int64_t i = lo; i < hi; i++) b[i] = a[i] > 0 ? a[i] : a[i] * (T)alpha;   \
    return;                                                                       \
  }
    C(DFX_F32, float)
    C(DFX_F64, double)
#undef C
    default: { /* half types */
      const uint16_t *a = x;
      uint16_t *b = o;
      const bool h = t == DFX_F16;
      /* alpha is rounded to the half type first, as TF's static_cast<T>(alpha). */
      const float al = h ? dfx__f16_to_f32(dfx__f32_to_f16(alpha)) : dfx__bf16_to_f32(dfx__f32_to_bf16(alpha));
      for (int64_t i = lo; i < hi; i++) {
        float v = h ? dfx__f16_to_f32(a[i]) : dfx__bf16_to_f32(a[i]);
        v = v > 0 ? v : v * al;
        b[i] = h ? dfx__f32_to_f16(v) : dfx__f32_to_bf16(v);
      }
    }
  }
}

static dfx_code k_leaky(dfx_kctx *ctx) {
  const dfx_tensor *x = ctx->in[0];
  const float alpha = dfx__attr_float(ctx->node, "alpha", 0.2f);
  dfx_tensor *o = dfx__kctx_alloc(ctx, 0, (dfx_dtype)x->dtype, x->ndims, x->dims);
  if (!o) return dfx_status_code(ctx->st);
  for (int64_t i = 0, next = EW_POLL_GRAIN; i < x->count; i += EW_POLL_GRAIN) {
    const int64_t hi = x->count - i < EW_POLL_GRAIN ? x->count : i + EW_POLL_GRAIN;
    leaky_range((dfx_dtype)x->dtype, x->data, o->data, i, hi, alpha);
    dfx_code c = hi < x->count ? un_poll(ctx, hi, &next) : DFX_OK;
    if (c != DFX_OK) return c;
  }
  return DFX_OK;
}

#define T_F "T: {" EW_TY_F "}"
#define T_FS "T: {" EW_TY_FS "}"
#define T_FSU "T: {" EW_TY_FSU "}"
#define T_FC "T: {" EW_TY_F ", " EW_TY_C "}"
#define T_FSC "T: {" EW_TY_FS ", " EW_TY_C "}"
#define T_FSUC "T: {" EW_TY_FSU ", " EW_TY_C "}"
static const dfx_kernel_def kernels[] = {
    {"Abs", T_FS, k_abs, DFX_KERNEL_CHEAP, NULL, NULL},
    {"Neg", T_FSC, k_neg, DFX_KERNEL_CHEAP, NULL, NULL},
    {"Inv", T_FSC, k_rec, DFX_KERNEL_CHEAP, NULL, NULL},
    {"Reciprocal", T_FSC, k_rec, DFX_KERNEL_CHEAP, NULL, NULL},
    {"Square", T_FSUC, k_sqr, DFX_KERNEL_CHEAP, NULL, NULL},
    {"Sign", T_FSC, k_sign, DFX_KERNEL_CHEAP, NULL, NULL},
    {"Sqrt", T_FC, k_sqrt, DFX_KERNEL_CHEAP, NULL, NULL},
    {"Rsqrt", T_FC, k_rsqrt, DFX_KERNEL_CHEAP, NULL, NULL},
    {"Exp", T_FC, k_exp, DFX_KERNEL_CHEAP, NULL, NULL},
    {"Expm1", T_F, k_expm1, DFX_KERNEL_CHEAP, NULL, NULL},
    {"Log", T_FC, k_log, DFX_KERNEL_CHEAP, NULL, NULL},
    {"Log1p", T_F, k_log1p, DFX_KERNEL_CHEAP, NULL, NULL},
    {"Sin", T_FC, k_sin, DFX_KERNEL_CHEAP, NULL, NULL},
    {"Cos", T_FC, k_cos, DFX_KERNEL_CHEAP, NULL, NULL},
    {"Tan", T_FC, k_tan, DFX_KERNEL_CHEAP, NULL, NULL},
    {"Asin", T_FC, k_asin, DFX_KERNEL_CHEAP, NULL, NULL},
    {"Acos", T_FC, k_acos, DFX_KERNEL_CHEAP, NULL, NULL},
    {"Atan", T_FC, k_atan, DFX_KERNEL_CHEAP, NULL, NULL},
    {"Sinh", T_FC, k_sinh, DFX_KERNEL_CHEAP, NULL, NULL},
    {"Cosh", T_FC, k_cosh, DFX_KERNEL_CHEAP, NULL, NULL},
    {"Tanh", T_FC, k_tanh, DFX_KERNEL_CHEAP, NULL, NULL},
    {"Asinh", T_FC, k_asinh, DFX_KERNEL_CHEAP, NULL, NULL},
    {"Acosh", T_FC, k_acosh, DFX_KERNEL_CHEAP, NULL, NULL},
    {"Atanh", T_FC, k_atanh, DFX_KERNEL_CHEAP, NULL, NULL},
    {"Sigmoid", T_FC, k_sigm, DFX_KERNEL_CHEAP, NULL, NULL},
    {"Lgamma", T_F, k_lgamma, DFX_KERNEL_CHEAP, NULL, NULL},
    {"Digamma", T_F, k_digamma, DFX_KERNEL_CHEAP, NULL, NULL},
    {"Erf", T_F, k_erf, DFX_KERNEL_CHEAP, NULL, NULL},
    {"Erfc", T_F, k_erfc, DFX_KERNEL_CHEAP, NULL, NULL},
    {"Floor", T_F, k_floor, DFX_KERNEL_CHEAP, NULL, NULL},
    {"Ceil", T_F, k_ceil, DFX_KERNEL_CHEAP, NULL, NULL},
    {"Rint", T_F, k_rint, DFX_KERNEL_CHEAP, NULL, NULL},
    {"Round", T_FS, k_rint, DFX_KERNEL_CHEAP, NULL, NULL},
    {"IsNan", T_F, k_isnan, DFX_KERNEL_CHEAP, NULL, NULL},
    {"IsInf", T_F, k_isinf, DFX_KERNEL_CHEAP, NULL, NULL},
    {"IsFinite", T_F, k_isfin, DFX_KERNEL_CHEAP, NULL, NULL},
    {"Relu", T_FSU, k_relu, DFX_KERNEL_CHEAP, NULL, NULL},
    {"Relu6", T_FSU, k_relu6, DFX_KERNEL_CHEAP, NULL, NULL},
    {"Elu", T_F, k_elu, DFX_KERNEL_CHEAP, NULL, NULL},
    {"Selu", T_F, k_selu, DFX_KERNEL_CHEAP, NULL, NULL},
    {"Softplus", T_F, k_softplus, DFX_KERNEL_CHEAP, NULL, NULL},
    {"Softsign", T_F, k_softsign, DFX_KERNEL_CHEAP, NULL, NULL},
    {"LeakyRelu", T_F, k_leaky, DFX_KERNEL_CHEAP, NULL, NULL},
    {NULL}};

void dfx__kernels_math_unary(dfx_registry *r);
void dfx__kernels_math_unary(dfx_registry *r) { dfx__kernels_add(r, kernels); }
