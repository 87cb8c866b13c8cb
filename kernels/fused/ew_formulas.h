/* ew_formulas.h - the per-element formulas of the elementwise math kernels
 * (kernels/math/binary.c and unary.c), for _FusedElementwise to apply
 * step by step. They must stay the same expressions, evaluated in the same
 * type (T is float or double; <tgmath.h> picks expf for a float, exp for a
 * double, as in those files): the ewfuse pass promises bit-identical
 * results, and tests/kernels/fused compares every opcode against the
 * unfused kernel. math/ keeps its formulas private to its .c files, so
 * they are copied here; if they ever move to a shared header, include it
 * instead of this copy. */
#ifndef DFX_FUSED_EW_FORMULAS_H
#define DFX_FUSED_EW_FORMULAS_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <tgmath.h>

/* ---- binary.c (x, y of type T) ---- */
#define EWF_ADD(T) (x + y)
#define EWF_SUB(T) (x - y)
#define EWF_MUL(T) (x * y)
#define EWF_DIV(T) (x / y)
#define EWF_MAX(T) (isnan(x) ? x : isnan(y) ? y : x > y ? x : y)
#define EWF_MIN(T) (isnan(x) ? x : isnan(y) ? y : x < y ? x : y)
#define EWF_SQD(T) ((x - y) * (x - y))

/* ---- unary.c (x of type T) ---- */
#define EWF_NEG(T) (-x)
#define EWF_ABS(T) fabs(x)
#define EWF_SQR(T) (x * x)
#define EWF_REC(T) ((T)1 / x)
#define EWF_SQRT(T) sqrt(x)
#define EWF_RSQRT(T) ((T)1 / sqrt(x))
#define EWF_EXP(T) exp(x)
#define EWF_EXPM1(T) expm1(x)
#define EWF_LOG(T) log(x)
#define EWF_LOG1P(T) log1p(x)
#define EWF_TANH(T) ewf_tanh(x)
#define EWF_SIGM(T) ((T)1 / ((T)1 + exp(-x)))
#define EWF_RELU(T) (x < 0 ? (T)0 : x)
#define EWF_RELU6(T) (x < 0 ? (T)0 : x > 6 ? (T)6 : x)
#define EWF_ELU(T) (x < 0 ? expm1(x) : x)
#define EWF_SELU(T) \
  (x < 0 ? (T)(1.0507009873554804934193349852946 * 1.6732632423543772848170429916717) * expm1(x) \
         : (T)1.0507009873554804934193349852946 * x)
#define EWF_SOFTPLUS(T) ewf_softplus(x)
#define EWF_SOFTSIGN(T) (x / ((T)1 + fabs(x)))

/* c ? a : b on bits with both sides computed (unary.c's blend_f), so the
 * tanh loop has no branch and vectorises. */
static inline float ewf_blend_f(bool c, float a, float b) {
  uint32_t ua, ub, m = 0u - (uint32_t)c;
  memcpy(&ua, &a, 4);
  memcpy(&ub, &b, 4);
  uint32_t r = (ua & m) | (ub & ~m);
  float f;
  memcpy(&f, &r, 4);
  return f;
}

/* Float tanh as unary.c computes it (Eigen's rational approximation, TF's
 * CPU tanh); doubles use libm. */
static inline float ewf_tanh_f(float x) {
  const float clamp = 7.90531110763549805f;
  float c = ewf_blend_f(x > clamp, clamp, ewf_blend_f(x < -clamp, -clamp, x));
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
  return ewf_blend_f(fabsf(x) < 0.0004f, x, p / q);
}
#define ewf_tanh(x) _Generic((x), float: ewf_tanh_f, default: tanh)(x)

/* TF's Softplus with unary.c's tails past log(epsilon) + 2. */
static inline double ewf_softplus_d(double x) {
  const double th = -34.04365338911715;
  return x > -th ? x : x < th ? exp(x) : log1p(exp(x));
}
static inline float ewf_softplus_f(float x) {
  const float th = -13.942385f;
  return x > -th ? x : x < th ? exp(x) : log1p(exp(x));
}
#define ewf_softplus(x) _Generic((x), float: ewf_softplus_f, default: ewf_softplus_d)(x)

#endif
