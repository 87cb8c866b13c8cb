/* fft_plan.c - 1-D complex transforms (fft.h): kissfft for complex64 lines
 * of smooth lengths, our radix-2 / Bluestein path in double for the rest.
 * Every buffer is sized with checked arithmetic against the tensor limit;
 * kissfft's state lives in memory from our allocator (its two-call
 * kiss_fft_alloc protocol), so the test allocator sees it. */
#include <kiss_fft.h>
#include <math.h>
#include <string.h>

#include "alloc.h"
#include "fft.h"

static int64_t largest_prime_factor(int64_t n) {
  int64_t best = 1;
  for (int64_t f = 2; f * f <= n; f++)
    while (n % f == 0) {
      best = f;
      n /= f;
    }
  return n > 1 ? n : best;
}

/* A buffer of `count` elements of `size` bytes, within the tensor limit. */
static void *buffer(dfx_kctx *ctx, int64_t count, size_t size, const char *what) {
  size_t bytes = dfx__mul_size((size_t)count, size);
  if (bytes > dfx__tensor_limit()) {
    dfx__kctx_fail(ctx, DFX_ELIMIT, "FFT of length %lld needs %zu bytes of %s, above the tensor byte limit",
                   (long long)count, bytes, what);
    return NULL;
  }
  void *p = dfx__malloc(bytes ? bytes : 1);
  if (!p) dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory allocating %zu bytes of FFT %s", bytes, what);
  return p;
}

void dfx__fft_plan_destroy(dfx_fft_plan *p) {
  dfx__free(p->line);
  dfx__free(p->kcfg);
  dfx__free(p->kout);
  dfx__free(p->tw);
  dfx__free(p->chirp);
  dfx__free(p->filt);
  dfx__free(p->work);
  memset(p, 0, sizeof *p);
}

/* ---- radix-2 in double ---- */

/* In-place iterative radix-2 transform of a[0..m) (complex as re, im pairs),
 * m a power of two; conj flips the twiddles (unscaled inverse). tw holds
 * each stage's twiddles exp(-i pi k / half), k < half, at tw[2 (half + k)]. */
static void radix2(double *a, int64_t m, const double *tw, bool conj) {
  for (int64_t i = 1, j = 0; i < m; i++) { /* bit-reversal permutation */
    int64_t bit = m >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) {
      double r = a[2 * i], im = a[2 * i + 1];
      a[2 * i] = a[2 * j];
      a[2 * i + 1] = a[2 * j + 1];
      a[2 * j] = r;
      a[2 * j + 1] = im;
    }
  }
  const double sg = conj ? -1.0 : 1.0;
  for (int64_t len = 2; len <= m; len <<= 1) {
    int64_t half = len >> 1;
    const double *w = tw + 2 * half; /* this stage's twiddles, contiguous */
    for (int64_t s = 0; s < m; s += len)
      for (int64_t k = 0; k < half; k++) {
        double wr = w[2 * k], wi = sg * w[2 * k + 1];
        double *u = a + 2 * (s + k), *v = a + 2 * (s + k + half);
        double vr = v[0] * wr - v[1] * wi, vi = v[0] * wi + v[1] * wr;
        v[0] = u[0] - vr;
        v[1] = u[1] - vi;
        u[0] += vr;
        u[1] += vi;
      }
  }
}

static dfx_code init_double(dfx_fft_plan *p, dfx_kctx *ctx) {
  int64_t n = p->n, m = 1;
  while (m < n) m <<= 1;
  if (m != n) { /* Bluestein: a linear convolution of 2n-1 terms without wrap-around */
    m = 1;
    while (m < 2 * n - 1) m <<= 1;
  }
  p->m = m;
  if (!(p->tw = buffer(ctx, m, 2 * sizeof(double), "twiddles")) ||
      !(p->work = buffer(ctx, m, 2 * sizeof(double), "scratch")))
    return ctx->st->code;
  for (int64_t half = 1; half < m; half <<= 1)
    for (int64_t k = 0; k < half; k++) {
      double a = M_PI * (double)k / (double)half;
      p->tw[2 * (half + k)] = cos(a);
      p->tw[2 * (half + k) + 1] = -sin(a);
    }
  if (m == n) return DFX_OK;
  if (!(p->chirp = buffer(ctx, n, 2 * sizeof(double), "chirp")) ||
      !(p->filt = buffer(ctx, m, 2 * sizeof(double), "filter")))
    return ctx->st->code;
  /* k^2 is reduced mod 2n in integers first: the angle pi k^2 / n then stays
   * below 2 pi and keeps its precision for large k. */
  for (int64_t k = 0; k < n; k++) {
    int64_t r = (int64_t)(((unsigned __int128)k * (unsigned __int128)k) % (unsigned __int128)(2 * n));
    double a = M_PI * (double)r / (double)n;
    p->chirp[2 * k] = cos(a);
    p->chirp[2 * k + 1] = -sin(a);
  }
  memset(p->filt, 0, sizeof(double) * 2 * (size_t)m);
  for (int64_t k = 0; k < n; k++) {
    p->filt[2 * k] = p->chirp[2 * k];
    p->filt[2 * k + 1] = -p->chirp[2 * k + 1];
    if (k) {
      p->filt[2 * (m - k)] = p->filt[2 * k];
      p->filt[2 * (m - k) + 1] = p->filt[2 * k + 1];
    }
  }
  radix2(p->filt, m, p->tw, false);
  return DFX_OK;
}

/* Forward transform on the double path; the inverse is conj(F(conj x)). */
static void run_double(dfx_fft_plan *p) {
  int64_t n = p->n, m = p->m;
  double *w = p->work;
  const double sg = p->inverse ? -1.0 : 1.0;
  const float *lf = p->line;
  const double *ld = p->line;
  for (int64_t k = 0; k < n; k++) {
    double re = p->f32 ? lf[2 * k] : ld[2 * k], im = sg * (p->f32 ? lf[2 * k + 1] : ld[2 * k + 1]);
    if (p->chirp) {
      double cr = p->chirp[2 * k], ci = p->chirp[2 * k + 1];
      w[2 * k] = re * cr - im * ci;
      w[2 * k + 1] = re * ci + im * cr;
    } else {
      w[2 * k] = re;
      w[2 * k + 1] = im;
    }
  }
  if (p->chirp) {
    memset(w + 2 * n, 0, sizeof(double) * 2 * (size_t)(m - n));
    radix2(w, m, p->tw, false);
    for (int64_t k = 0; k < m; k++) {
      double ar = w[2 * k], ai = w[2 * k + 1], br = p->filt[2 * k], bi = p->filt[2 * k + 1];
      w[2 * k] = ar * br - ai * bi;
      w[2 * k + 1] = ar * bi + ai * br;
    }
    radix2(w, m, p->tw, true);
    const double inv_m = 1.0 / (double)m;
    for (int64_t k = 0; k < n; k++) {
      double ar = w[2 * k] * inv_m, ai = w[2 * k + 1] * inv_m, cr = p->chirp[2 * k], ci = p->chirp[2 * k + 1];
      w[2 * k] = ar * cr - ai * ci;
      w[2 * k + 1] = ar * ci + ai * cr;
    }
  } else {
    radix2(w, m, p->tw, false);
  }
  float *of = p->line;
  double *od = p->line;
  for (int64_t k = 0; k < n; k++) {
    if (p->f32) {
      of[2 * k] = (float)w[2 * k];
      of[2 * k + 1] = (float)(sg * w[2 * k + 1]);
    } else {
      od[2 * k] = w[2 * k];
      od[2 * k + 1] = sg * w[2 * k + 1];
    }
  }
}

/* ---- plans ---- */

dfx_code dfx__fft_plan_init(dfx_fft_plan *p, int64_t n, bool inverse, bool f32, dfx_kctx *ctx) {
  memset(p, 0, sizeof *p);
  p->n = n;
  p->inverse = inverse;
  p->f32 = f32;
  if (n < 1 || n > INT64_MAX / 4)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "FFT length %lld out of range", (long long)n);
  if (!(p->line = buffer(ctx, n, f32 ? 2 * sizeof(float) : 2 * sizeof(double), "line"))) goto fail;
  if (f32 && n <= INT32_MAX && largest_prime_factor(n) <= FFT_KISS_MAX_FACTOR) {
    size_t len = 0;
    kiss_fft_alloc((int)n, inverse, NULL, &len);
    if (!(p->kcfg = buffer(ctx, (int64_t)len, 1, "kissfft state")) ||
        !(p->kout = buffer(ctx, n, sizeof(kiss_fft_cpx), "line")))
      goto fail;
    if (!kiss_fft_alloc((int)n, inverse, p->kcfg, &len)) {
      dfx__kctx_fail(ctx, DFX_EINTERNAL, "kissfft refused a plan of length %lld", (long long)n);
      goto fail;
    }
    return DFX_OK;
  }
  if (init_double(p, ctx) == DFX_OK) return DFX_OK;
fail:
  dfx__fft_plan_destroy(p);
  return ctx->st->code;
}

void dfx__fft_plan_run(dfx_fft_plan *p) {
  if (p->n == 1) return;
  if (p->kcfg) {
    kiss_fft(p->kcfg, p->line, p->kout);
    memcpy(p->line, p->kout, sizeof(kiss_fft_cpx) * (size_t)p->n);
    return;
  }
  run_double(p);
}
