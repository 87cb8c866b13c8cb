/* fft.h - the fft family's 1-D transform engine (fft_plan.c), shared by its
 * kernels (fft.c).
 *
 * Library choice: complex64 lines go to kissfft (BSD-3-Clause, Debian's
 * libkissfft-dev, pkg-config kissfft-float), a small, well-kept mixed-radix
 * FFT. Debian builds it for float only, and no permissively licensed FFT
 * library with a double build ships in Debian 12 (FFTW and GSL are GPL,
 * pocketfft/DUCC are C++ sources not packaged as libraries), so complex128
 * lines use our own double-precision path: an iterative radix-2 transform for
 * power-of-two lengths, and Bluestein's chirp-z algorithm (a convolution done
 * with radix-2 transforms of a power of two >= 2n-1) for every other length.
 * kissfft's butterfly for a prime factor p costs O(n p), so complex64 lines
 * whose length has a prime factor above FFT_KISS_MAX_FACTOR take the double
 * path too (computed in double, rounded once): every length runs in
 * O(n log n), prime ones included. */
#ifndef DFX_FFT_H
#define DFX_FFT_H

#include <stdbool.h>
#include <stdint.h>

#include "kernel.h"

/* Largest prime factor handed to kissfft's generic butterfly. */
#define FFT_KISS_MAX_FACTOR 97

/* A transform of one length and direction (unscaled, like kissfft and
 * FFTW: the inverse does not divide by n). Not thread-safe: one plan per
 * kernel call. */
typedef struct dfx_fft_plan {
  int64_t n;
  bool inverse;
  bool f32;           /* line holds float pairs (complex64), else double pairs */
  void *line;         /* n complex values: the input before dfx__fft_plan_run, the result after */
  void *kcfg;         /* kissfft state (kiss_fft_cfg), NULL on the double path */
  void *kout;         /* kissfft's output line */
  int64_t m;          /* double path: radix-2 length (n, or Bluestein's >= 2n-1) */
  double *tw;         /* per radix-2 stage of half-length h: exp(-i pi k / h), k < h, at [h + k] */
  double *chirp;      /* Bluestein: n values exp(-i pi k^2 / n); NULL when m == n */
  double *filt;       /* Bluestein: radix-2 transform of the conjugate chirp filter, m values */
  double *work;       /* m values of scratch */
} dfx_fft_plan;

/* Prepares p for lines of n complex64 (f32) or complex128 values; n >= 1.
 * Sizes its buffers against dfx__tensor_limit. On failure the error is in
 * ctx and p holds nothing to free. */
dfx_code dfx__fft_plan_init(dfx_fft_plan *p, int64_t n, bool inverse, bool f32, dfx_kctx *ctx);
void dfx__fft_plan_destroy(dfx_fft_plan *p);
/* Transforms p->line in place. */
void dfx__fft_plan_run(dfx_fft_plan *p);

#endif
