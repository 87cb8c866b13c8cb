/* simd_isa.c - the loops of one dfx_simd_table (simd.h), compiled once per
 * instruction set with that set's flags and -O3; DFX_SIMD_ISA names the
 * copy (base, avx2, avx512). Plain C the compiler vectorises: no branches
 * in the element loops (selects are bit blends), no libm calls. */
#include <string.h>

#include "simd.h"

#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
#define STR2(a) #a
#define STR(a) STR2(a)
#define FN(name) CAT(name##_, DFX_SIMD_ISA)

static inline uint32_t bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}
static inline float from_bits(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}
/* c ? a : b without a branch. */
static inline float blend(int c, float a, float b) {
  uint32_t m = 0u - (uint32_t)(c != 0);
  return from_bits((bits(a) & m) | (bits(b) & ~m));
}

/* Eigen's fast tanh (TF's CPU Tanh): the same function as tanh_tf_f in
 * kernels/math/unary.c, which the tests compare against. With FMA the
 * polynomial rounds differently and first reaches exactly 1.0f at a larger
 * |x|: Eigen moves the clamp there too, and so do we. */
static inline float tanh1(float x) {
#ifdef __FMA__
  const float clamp = 7.99881172180175781f;
#else
  const float clamp = 7.90531110763549805f;
#endif
  float c = blend(x > clamp, clamp, blend(x < -clamp, -clamp, x));
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
  float ax = from_bits(bits(x) & 0x7fffffffu);
  return blend(ax < 0.0004f, x, p / q);
}

/* exp(x) = 2^n * e^r with n = round(x / ln 2) and |r| <= ln2 / 2, e^r by
 * its Taylor series to r^7 (error below 1e-8 relative), 2^n built in the
 * exponent bits. x is clamped so 2^n stays a normal float; past the clamp
 * the result saturates to 0 / inf as expf's does. NaN stays NaN. */
static inline float exp1(float x) {
  const float hi = 88.7228391f, lo = -87.3365479f;
  float c = blend(x > hi, hi, blend(x < lo, lo, x));
  float nf = c * 1.44269504088896341f;
  nf = (float)(int32_t)(nf + blend(nf < 0, -0.5f, 0.5f)); /* round half away: no libm */
  float r = c - nf * 0.693359375f;                       /* ln 2 in two parts (Cody-Waite) */
  r = r - nf * -2.12194440e-4f;
  float p = 1.0f / 5040;
  p = p * r + 1.0f / 720;
  p = p * r + 1.0f / 120;
  p = p * r + 1.0f / 24;
  p = p * r + 1.0f / 6;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  /* 2^n in two halves, so n = 128 (x near the top) does not overflow the
   * exponent field before the multiply. */
  int32_t n = (int32_t)nf;
  int32_t n1 = n / 2, n2 = n - n1;
  float s1 = from_bits((uint32_t)(n1 + 127) << 23), s2 = from_bits((uint32_t)(n2 + 127) << 23);
  float y = p * s1 * s2;
  y = blend(x > hi, __builtin_inff(), blend(x < lo, 0.0f, y));
  return blend(x != x, x, y);
}

static void FN(tanh_loop)(const float *x, float *y, int64_t n) {
  for (int64_t i = 0; i < n; i++) y[i] = tanh1(x[i]);
}
static void FN(exp_loop)(const float *x, float *y, int64_t n) {
  for (int64_t i = 0; i < n; i++) y[i] = exp1(x[i]);
}
static void FN(sigmoid_loop)(const float *x, float *y, int64_t n) {
  /* exp(-x) saturates to inf for x below -88.7, and 1 / inf is 0, the limit. */
  for (int64_t i = 0; i < n; i++) y[i] = 1.0f / (1.0f + exp1(-x[i]));
}

#define BIN_LOOPS(E)                                                     \
  if (sa && sb)                                                          \
    for (int64_t i = 0; i < n; i++) {                                    \
      float x = a[i], y = b[i];                                          \
      o[i] = (E);                                                        \
    }                                                                    \
  else if (sb)                                                           \
    for (int64_t i = 0; i < n; i++) {                                    \
      float x = a[0], y = b[i];                                          \
      o[i] = (E);                                                        \
    }                                                                    \
  else if (sa)                                                           \
    for (int64_t i = 0; i < n; i++) {                                    \
      float x = a[i], y = b[0];                                          \
      o[i] = (E);                                                        \
    }                                                                    \
  else                                                                   \
    for (int64_t i = 0; i < n; i++) {                                    \
      float x = a[0], y = b[0];                                          \
      o[i] = (E);                                                        \
    }

/* Maximum and Minimum propagate NaN like TF's CPU kernels (Eigen's scalar_max_op
 * with PropagateNaN would differ; kernels/math/binary.c's MAX_F decides). */
static void FN(binary_loop)(dfx_simd_op op, const float *a, int sa, const float *b, int sb, float *o, int64_t n) {
  switch (op) {
  case DFX_SIMD_ADD: BIN_LOOPS(x + y) break;
  case DFX_SIMD_SUB: BIN_LOOPS(x - y) break;
  case DFX_SIMD_MUL: BIN_LOOPS(x * y) break;
  case DFX_SIMD_DIV: BIN_LOOPS(x / y) break;
  case DFX_SIMD_MAX: BIN_LOOPS(blend(x > y || x != x, x, y)) break;
  case DFX_SIMD_MIN: BIN_LOOPS(blend(x < y || x != x, x, y)) break;
  default: break;
  }
}

/* 16 partial sums: vector registers of any width up to 512 bits. */
static float FN(sum_loop)(const float *x, int64_t n) {
  float acc[16] = {0};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    for (int k = 0; k < 16; k++) acc[k] += x[i + k];
  float s = 0;
  for (; i < n; i++) s += x[i];
  for (int k = 0; k < 16; k++) s += acc[k];
  return s;
}

static float FN(max_loop)(const float *x, int64_t n) {
  float m[16];
  int64_t i = 0;
  for (int k = 0; k < 16; k++) m[k] = x[0];
  for (; i + 16 <= n; i += 16)
    for (int k = 0; k < 16; k++) m[k] = blend(x[i + k] > m[k] || x[i + k] != x[i + k], x[i + k], m[k]);
  float r = m[0];
  for (int k = 1; k < 16; k++) r = blend(m[k] > r || m[k] != m[k], m[k], r);
  for (; i < n; i++) r = blend(x[i] > r || x[i] != x[i], x[i], r);
  return r;
}

static float FN(exp_shift_sum_loop)(const float *x, float shift, float *y, int64_t n) {
  for (int64_t i = 0; i < n; i++) y[i] = exp1(x[i] - shift);
  return FN(sum_loop)(y, n);
}

static void FN(scale_loop)(const float *x, float s, float *y, int64_t n) {
  for (int64_t i = 0; i < n; i++) y[i] = x[i] * s;
}

extern const dfx_simd_table FN(dfx__simd_table);
const dfx_simd_table FN(dfx__simd_table) = {
    .isa = STR(DFX_SIMD_ISA),
    .vtanh = FN(tanh_loop),
    .vsigmoid = FN(sigmoid_loop),
    .vexp = FN(exp_loop),
    .binary = FN(binary_loop),
    .sum = FN(sum_loop),
    .max = FN(max_loop),
    .exp_shift_sum = FN(exp_shift_sum_loop),
    .scale = FN(scale_loop),
};
