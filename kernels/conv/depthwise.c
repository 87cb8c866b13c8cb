/* depthwise.c - float32 depthwise convolution forward, channels last: the
 * path DepthwiseConv2dNative and _FusedDepthwiseConv2dNative take for
 * float (conv.c keeps the double path and the backprop).
 *
 * Work is split by output row (one image row of one batch element), and
 * dfx__dw_rows_f32 computes any range of them, so a parallel_for over the
 * intra-op pool can later hand each worker its own range: rows write
 * disjoint outputs and share only read-only inputs.
 *
 * Per output position, the taps that fall inside the input are listed
 * once; then, with a channel multiplier of 1 (MobileNet's case), each block
 * of 16 channels (four blocks at a time where there are 64) accumulates
 * over those taps in a vector register and is stored once; with a larger multiplier, each input channel's value is
 * broadcast over its M outputs. The taps are summed in the order conv.c's
 * reference loop uses (kernel row, then column, from zero), so results
 * agree with it up to FMA contraction, and the fused op computes the same
 * bits as the unfused one (the epilogue runs after the sum, on each row
 * while it is in cache).
 *
 * The vectors are GCC/Clang generic vectors; on x86-64 the hot functions
 * are compiled three times (AVX-512F, which brings FMA; AVX2; baseline)
 * and the loader picks one by the CPU's features (target_clones; not by
 * "arch=", which tests the CPU model and never matches an AMD CPU), so the
 * build itself stays portable. */
#include "conv.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__has_attribute)
/* Not under TSan: its runtime is not up when the loader runs ifunc resolvers. */
#if __has_attribute(target_clones) && !defined(__SANITIZE_THREAD__)
#define DW_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#endif
#endif
#ifndef DW_CLONES
#define DW_CLONES
#endif

typedef float v16 __attribute__((vector_size(64)));
typedef float v8 __attribute__((vector_size(32)));
typedef float v4 __attribute__((vector_size(16)));

/* Unaligned vector loads and stores (memcpy compiles to one instruction). */
#define VLOAD(V, p) ({ V v_; memcpy(&v_, (p), sizeof v_); v_; })
#define VSTORE(p, v) memcpy((p), &(v), sizeof(v))

/* The taps of one output position that fall inside the input: input and
 * filter offsets, in kernel-row-then-column order. Returns their count. */
static int64_t taps_at(const dfx_dw_geom *g, int64_t oh, int64_t ow, int64_t *xo, int64_t *fo) {
  int64_t n = 0, ih0 = oh * g->sh - g->pt, iw0 = ow * g->sw - g->pl, OC = g->C * g->M;
  for (int64_t kh = 0; kh < g->KH; kh++) {
    int64_t ih = ih0 + kh * g->dh;
    if (ih < 0 || ih >= g->H) continue;
    for (int64_t kw = 0; kw < g->KW; kw++) {
      int64_t iw = iw0 + kw * g->dw;
      if (iw < 0 || iw >= g->W) continue;
      xo[n] = (ih * g->W + iw) * g->C;
      fo[n] = (kh * g->KW + kw) * OC;
      n++;
    }
  }
  return n;
}

/* Multiplier 1, channels [c, C) of one position: yo[c] = sum over taps of
 * x[xo + c] * f[fo + c]. Four independent 16-wide sums at a time keep the
 * FMA units busy (one sum's chain of dependent adds would wait on each
 * add's latency). */
DW_CLONES static void pixel_m1(const float *x, const float *f, float *yo, int64_t c, int64_t C, const int64_t *xo,
                               const int64_t *fo, int64_t nt) {
  for (; c + 64 <= C; c += 64) {
    v16 a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0};
    for (int64_t t = 0; t < nt; t++) {
      const float *xs = x + xo[t] + c, *fs = f + fo[t] + c;
      a0 += VLOAD(v16, xs) * VLOAD(v16, fs);
      a1 += VLOAD(v16, xs + 16) * VLOAD(v16, fs + 16);
      a2 += VLOAD(v16, xs + 32) * VLOAD(v16, fs + 32);
      a3 += VLOAD(v16, xs + 48) * VLOAD(v16, fs + 48);
    }
    VSTORE(yo + c, a0);
    VSTORE(yo + c + 16, a1);
    VSTORE(yo + c + 32, a2);
    VSTORE(yo + c + 48, a3);
  }
  for (; c + 16 <= C; c += 16) {
    v16 acc = {0};
    for (int64_t t = 0; t < nt; t++) acc += VLOAD(v16, x + xo[t] + c) * VLOAD(v16, f + fo[t] + c);
    VSTORE(yo + c, acc);
  }
  for (; c + 4 <= C; c += 4) {
    v4 acc = {0};
    for (int64_t t = 0; t < nt; t++) acc += VLOAD(v4, x + xo[t] + c) * VLOAD(v4, f + fo[t] + c);
    VSTORE(yo + c, acc);
  }
  for (; c < C; c++) {
    float acc = 0;
    for (int64_t t = 0; t < nt; t++) acc += x[xo[t] + c] * f[fo[t] + c];
    yo[c] = acc;
  }
}

/* Multiplier 1, four neighbouring positions ow .. ow + 3 of output row oh
 * whose windows lie inside the input along the row (rows kh0 .. kh1 - 1 of
 * the filter are the ones inside it vertically), channels [0, C16), C16 a
 * multiple of 16: the four sums are independent and share each filter
 * load. Same taps, same order as pixel_m1, so the same bits. */
DW_CLONES static void quad_m1(const dfx_dw_geom *g, const float *xn, const float *f, float *yo, int64_t oh,
                              int64_t ow, int64_t kh0, int64_t kh1, int64_t C16) {
  int64_t C = g->C, step = g->sw * C, tap = g->dw * C;
  for (int64_t c = 0; c < C16; c += 16) {
    v16 a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0};
    for (int64_t kh = kh0; kh < kh1; kh++) {
      int64_t ih = oh * g->sh - g->pt + kh * g->dh;
      const float *xr = xn + (ih * g->W + ow * g->sw - g->pl) * C + c, *fr = f + kh * g->KW * C + c;
      for (int64_t kw = 0; kw < g->KW; kw++, xr += tap, fr += C) {
        v16 fv = VLOAD(v16, fr);
        a0 += VLOAD(v16, xr) * fv;
        a1 += VLOAD(v16, xr + step) * fv;
        a2 += VLOAD(v16, xr + 2 * step) * fv;
        a3 += VLOAD(v16, xr + 3 * step) * fv;
      }
    }
    VSTORE(yo + c, a0);
    VSTORE(yo + C + c, a1);
    VSTORE(yo + 2 * C + c, a2);
    VSTORE(yo + 3 * C + c, a3);
  }
}

/* y[0..n) += a * f[0..n) */
static inline void axpy(float *y, float a, const float *f, int64_t n) {
  int64_t m = 0;
  v16 a16 = a - (v16){0};
  v4 a4 = a - (v4){0};
  for (; m + 16 <= n; m += 16) {
    v16 r = VLOAD(v16, y + m) + a16 * VLOAD(v16, f + m);
    VSTORE(y + m, r);
  }
  for (; m + 4 <= n; m += 4) {
    v4 r = VLOAD(v4, y + m) + a4 * VLOAD(v4, f + m);
    VSTORE(y + m, r);
  }
  for (; m < n; m++) y[m] += a * f[m];
}

/* Multiplier M > 1: yo[c*M + m] = sum over taps of x[xo + c] * f[fo + c*M + m]. */
DW_CLONES static void pixel_mult(const float *x, const float *f, float *yo, int64_t C, int64_t M, const int64_t *xo,
                                 const int64_t *fo, int64_t nt) {
  memset(yo, 0, sizeof(float) * (size_t)(C * M));
  for (int64_t t = 0; t < nt; t++)
    for (int64_t c = 0; c < C; c++) axpy(yo + c * M, x[xo[t] + c], f + fo[t] + c * M, M);
}

dfx_code dfx__dw_rows_f32(const dfx_dw_geom *g, const float *x, const float *f, float *y,
                          const dfx_conv_epilogue *ep, int64_t row0, int64_t row1) {
  int64_t K = g->KH * g->KW, OC = g->C * g->M;
  int64_t *xo = dfx__malloc(dfx__mul_size((size_t)(2 * K), sizeof(int64_t)));
  if (!xo) return DFX_ENOMEM;
  int64_t *fo = xo + K;
  for (int64_t row = row0; row < row1; row++) {
    int64_t n = row / g->OH, oh = row % g->OH;
    const float *xn = x + n * g->H * g->W * g->C;
    float *yrow = y + row * g->OW * OC;
    /* Multiplier 1: positions [lo, hi) have every filter column inside
     * the input; they go four at a time (quad_m1) for whole 16-channel
     * blocks, the rest one at a time. */
    int64_t lo = 0, hi = 0, kh0 = 0, kh1 = 0, C16 = g->M == 1 ? g->C / 16 * 16 : 0;
    if (C16) {
      int64_t last = g->W - 1 + g->pl - (g->KW - 1) * g->dw; /* ow * sw may be at most this */
      lo = (g->pl + g->sw - 1) / g->sw;
      hi = last >= 0 ? last / g->sw + 1 : 0;
      if (hi > g->OW) hi = g->OW;
      if (hi < lo) hi = lo;
      for (kh0 = 0; kh0 < g->KH && oh * g->sh - g->pt + kh0 * g->dh < 0; kh0++) {}
      for (kh1 = kh0; kh1 < g->KH && oh * g->sh - g->pt + kh1 * g->dh < g->H; kh1++) {}
    }
    for (int64_t ow = 0; ow < g->OW;) {
      float *yo = yrow + ow * OC;
      if (g->M != 1) {
        pixel_mult(xn, f, yo, g->C, g->M, xo, fo, taps_at(g, oh, ow, xo, fo));
        ow++;
      } else if (ow >= lo && ow + 4 <= hi) {
        quad_m1(g, xn, f, yo, oh, ow, kh0, kh1, C16);
        for (int i = 0; i < 4 && C16 < g->C; i++, yo += OC)
          pixel_m1(xn, f, yo, C16, g->C, xo, fo, taps_at(g, oh, ow + i, xo, fo));
        ow += 4;
      } else {
        pixel_m1(xn, f, yo, 0, g->C, xo, fo, taps_at(g, oh, ow, xo, fo));
        ow++;
      }
    }
    if (ep) ep->fn(ep->ud, yrow, g->OW, OC, 0);
  }
  dfx__free(xo);
  return DFX_OK;
}
