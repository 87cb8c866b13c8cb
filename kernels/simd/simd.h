/* simd.h - the hot float32 loops, compiled once per instruction set and
 * chosen at load time (run-time CPU dispatch).
 *
 * The library stays portable (baseline x86-64, or whatever the compiler
 * targets elsewhere): simd_isa.c is compiled once per ISA this build knows
 * (kernels/simd/meson.build: `base` always; `avx2` with FMA and `avx512`
 * on x86-64), each copy filling one dfx_simd_table, and simd.c picks the
 * best one the running CPU supports the first time a kernel asks. The loops
 * are plain C that the compiler vectorises for each target; they keep
 * TensorFlow's own approximations (Eigen's rational tanh), so every table
 * gives the scalar kernels' results within a few ulp (FMA contraction and
 * the summation order are the only differences).
 *
 * DFX_SIMD=base|avx2|avx512 in the environment forces a table (one the CPU
 * supports), for comparisons and tests. */
#ifndef DFX_SIMD_H
#define DFX_SIMD_H

#include <stdint.h>

/* Binary operations with a SIMD loop. */
typedef enum { DFX_SIMD_ADD, DFX_SIMD_SUB, DFX_SIMD_MUL, DFX_SIMD_DIV, DFX_SIMD_MAX, DFX_SIMD_MIN, DFX_SIMD_NOPS } dfx_simd_op;

typedef struct dfx_simd_table {
  const char *isa; /* "base", "avx2", "avx512" */
  /* y[i] = f(x[i]) for i < n; x == y is allowed (in place). */
  void (*vtanh)(const float *x, float *y, int64_t n);    /* Eigen's rational tanh, as kernels/math/unary.c */
  void (*vsigmoid)(const float *x, float *y, int64_t n); /* 1 / (1 + exp(-x)), exp by range reduction */
  void (*vexp)(const float *x, float *y, int64_t n);     /* within 2 ulp of expf; 0 below -87.3, inf above 88.7 */
  /* o[i] = a[i*sa] op b[i*sb] with strides sa, sb in {0, 1} (0: a scalar
   * broadcast along the row); o may alias an operand with stride 1. */
  void (*binary)(dfx_simd_op op, const float *a, int sa, const float *b, int sb, float *o, int64_t n);
  /* Sum and maximum of x[0..n) (n >= 1 for max); the sum keeps several
   * partial sums, as Eigen's packet reductions do. */
  float (*sum)(const float *x, int64_t n);
  float (*max)(const float *x, int64_t n);
  /* y[i] = exp(x[i] - shift), returning the sum of the y[i] (softmax). */
  float (*exp_shift_sum)(const float *x, float shift, float *y, int64_t n);
  /* y[i] = x[i] * s. */
  void (*scale)(const float *x, float s, float *y, int64_t n);
} dfx_simd_table;

/* The table chosen for this CPU (and DFX_SIMD), fixed after the first call. */
const dfx_simd_table *dfx__simd(void);
/* The table for `isa` when this build has it and the CPU supports it, else
 * NULL: for tests that compare every table with the scalar kernels. */
const dfx_simd_table *dfx__simd_get(const char *isa);

#endif
