/* conv.c - Conv2D, Conv3D, DepthwiseConv2dNative and the input backprops
 * (Conv2DBackpropInput, Conv3DBackpropInputV2: what conv2d_transpose lowers to).
 * Every op runs as a 3-D convolution in channels-last layout (2-D ops have a
 * depth of 1): inputs are widened to float (f32/f16/bf16) or double (f64, int)
 * work buffers, convolved by im2col + sgemm/dgemm (grouped when the input depth
 * is a multiple of the filter depth), and rounded back on store. int32 is exact
 * while partial sums stay below 2^53. float32 skips the work buffers: the
 * GEMM reads the input and filter and writes the output in place (channels
 * last). Float depthwise forward goes to depthwise.c (vector code); double
 * and the backprops take the loops here. Attrs are checked once, at init.
 * An optional epilogue (conv.h) runs on each block of output rows as soon
 * as it is computed. Every loop is over independent blocks of output rows,
 * so an intra-op parallel_for can split them without changing a bit. */
#include <cblas.h>
#include <limits.h>

#include "conv.h"

typedef struct cparams {
  int nd;      /* spatial dims of the op: 2 or 3 */
  int clast;   /* channels-last data format */
  int depthwise;
  int64_t N, C, in[3], k[3], icg, OC, G, out[3], stride[3], dil[3], padb[3];
} cparams;

static int64_t sp_count(const int64_t *d) { return d[0] * d[1] * d[2]; }

/* Conv attrs (TF's constructor checks): strides and dilations of r values,
 * >= 1 and 1 in the batch and depth dims, padding, data_format. */
dfx_code dfx__conv_spec(const dfx_node *n, cu_spec *s, dfx_status *st) {
  memset(s, 0, sizeof *s);
  s->nd = strncmp(n->op, "Conv3D", 6) ? 2 : 3;
  int r = s->nd + 2;
  dfx_code c;
  if ((c = cu_format_attr(n, s->nd, &s->clast, st)) || (c = cu_window_attr(n, "strides", r, s->st, st)) ||
      (c = cu_window_attr(n, "dilations", r, s->dl, st)) ||
      (c = cu_unit_bc("strides", s->st, r, s->clast,
                      "strides in the batch and depth dimensions must be 1", st)) ||
      (c = cu_unit_bc("dilations", s->dl, r, s->clast,
                      "dilations in the batch and depth dimensions must be 1", st)) ||
      (c = cu_padding_attr(n, s, st)))
    return c;
  return DFX_OK;
}

static dfx_code conv_init(const dfx_node *n, void **state, dfx_status *st) {
  cu_spec s;
  dfx_code c = dfx__conv_spec(n, &s, st);
  return c != DFX_OK ? c : cu_spec_state(&s, state, st);
}

/* Output values per GEMM call on the direct (1x1) path (at least 64 rows,
 * so the GEMM stays efficient): few enough to stay in cache between the
 * GEMM and an epilogue. Plain Conv2D makes the same calls, so a fused node
 * computes the same bits as the Conv2D it replaces. */
#define EPILOGUE_ROW_VALUES ((int64_t)1 << 15)

/* The input, filter and output geometry from the node's attrs (state) and
 * the input and filter dims. xdims: input dims in data format. */
static dfx_code setup(dfx_kctx *ctx, cparams *p, int depthwise, const int64_t *xdims, const int64_t *fdims) {
  const cu_spec *s = ctx->state;
  int nd = s->nd, r = nd + 2;
  memset(p, 0, sizeof *p);
  p->nd = nd;
  p->depthwise = depthwise;
  p->clast = s->clast;
  int cax = p->clast ? r - 1 : 1, sp0 = p->clast ? 1 : 2;
  p->N = xdims[0];
  p->C = xdims[cax];
  for (int i = 0; i < 3; i++) p->in[i] = p->k[i] = p->stride[i] = p->dil[i] = 1;
  int off = 3 - nd;
  for (int i = 0; i < nd; i++) {
    p->in[off + i] = xdims[sp0 + i];
    p->k[off + i] = fdims[i];
    p->stride[off + i] = s->st[sp0 + i];
    p->dil[off + i] = s->dl[sp0 + i];
  }
  int64_t fin = fdims[nd], fout = fdims[nd + 1];
  if (depthwise) {
    if (fin != p->C)
      return dfx__kctx_fail(ctx, DFX_EINVAL, "input and filter must have the same depth: %lld vs %lld",
                            (long long)p->C, (long long)fin);
    p->icg = 1;
    if (__builtin_mul_overflow(p->C, fout, &p->OC))
      return dfx__kctx_fail(ctx, DFX_EINVAL, "output depth %lld * %lld overflows", (long long)p->C, (long long)fout);
    p->G = p->C;
  } else {
    if (fin <= 0 || p->C % fin != 0)
      return dfx__kctx_fail(ctx, DFX_EINVAL, "input depth must be evenly divisible by filter depth: %lld vs %lld",
                            (long long)p->C, (long long)fin);
    p->icg = fin;
    p->OC = fout;
    p->G = p->C / fin;
    if (p->G > 1 && fout % p->G != 0)
      return dfx__kctx_fail(ctx, DFX_EINVAL, "output depth must be evenly divisible by number of groups: %lld vs %lld",
                            (long long)fout, (long long)p->G);
  }
  for (int i = 0; i < 3; i++) {
    int64_t pb = 0, pa = 0;
    if (i >= off) {
      pb = s->ep[2 * (sp0 + i - off)];
      pa = s->ep[2 * (sp0 + i - off) + 1];
    }
    dfx_code c = cu_window(ctx, p->in[i], p->k[i], p->dil[i], p->stride[i], i >= off ? s->pad : PAD_VALID, pb, pa,
                           &p->out[i], &p->padb[i]);
    if (c != DFX_OK) return c;
  }
  return DFX_OK;
}

/* Output (or input-backprop) dims in data format. */
static void fmt_dims(const cparams *p, const int64_t *sp, int64_t C, int64_t *d) {
  int r = p->nd + 2, off = 3 - p->nd;
  d[0] = p->N;
  d[p->clast ? r - 1 : 1] = C;
  for (int i = 0; i < p->nd; i++) d[(p->clast ? 1 : 2) + i] = sp[off + i];
}

/* Work-type instantiations: im2col / col2im over rows [row0, row0+rows) of the
 * flattened (batch, output position) index, the gemm passes, depthwise loops. */
#define DEFINE_CONV(W, GEMM)                                                                              \
  static void im2col_##W(const cparams *p, const W *x, int64_t row0, int64_t rows, int64_t g, W *cols,   \
                         int add_back, W *dx) {                                                         \
    int64_t P = sp_count(p->out), icg = p->icg;                                                          \
    /* One group and no dilation along the last spatial dim: a window row's   \
     * taps are adjacent in the input. */                                     \
    int contiguous = !add_back && icg == p->C && p->dil[2] == 1;                                         \
    for (int64_t r = 0; r < rows; r++) {                                                                 \
      int64_t idx = row0 + r, n = idx / P, pos = idx % P;                                                \
      int64_t o0 = pos / (p->out[1] * p->out[2]), o1 = pos / p->out[2] % p->out[1], o2 = pos % p->out[2]; \
      W *col = cols + r * p->k[0] * p->k[1] * p->k[2] * icg;                                             \
      for (int64_t a = 0; a < p->k[0]; a++) {                                                            \
        int64_t i0 = o0 * p->stride[0] - p->padb[0] + a * p->dil[0];                                     \
        for (int64_t b = 0; b < p->k[1]; b++) {                                                          \
          int64_t i1 = o1 * p->stride[1] - p->padb[1] + b * p->dil[1];                                   \
          if (contiguous) { /* the window row is one run of the input: zeros, one copy, zeros */         \
            int64_t j0 = o2 * p->stride[2] - p->padb[2], lo = j0 < 0 ? -j0 : 0, hi = p->in[2] - j0;      \
            if (hi > p->k[2]) hi = p->k[2];                                                              \
            if (i0 < 0 || i0 >= p->in[0] || i1 < 0 || i1 >= p->in[1] || hi < lo) lo = hi = 0;           \
            if (lo) memset(col, 0, (size_t)(lo * icg) * sizeof(W));                                      \
            if (hi > lo)                                                                                 \
              memcpy(col + lo * icg, x + (((n * p->in[0] + i0) * p->in[1] + i1) * p->in[2] + j0 + lo) * icg, \
                     (size_t)((hi - lo) * icg) * sizeof(W));                                             \
            if (p->k[2] > hi) memset(col + hi * icg, 0, (size_t)((p->k[2] - hi) * icg) * sizeof(W));     \
            col += p->k[2] * icg;                                                                        \
            continue;                                                                                    \
          }                                                                                              \
          for (int64_t c = 0; c < p->k[2]; c++, col += icg) {                                            \
            int64_t i2 = o2 * p->stride[2] - p->padb[2] + c * p->dil[2];                                 \
            int ok = i0 >= 0 && i0 < p->in[0] && i1 >= 0 && i1 < p->in[1] && i2 >= 0 && i2 < p->in[2];   \
            int64_t xo = ok ? (((n * p->in[0] + i0) * p->in[1] + i1) * p->in[2] + i2) * p->C + g * icg : 0; \
            if (add_back) {                                                                              \
              if (ok)                                                                                    \
                for (int64_t q = 0; q < icg; q++) dx[xo + q] += col[q];                                  \
            } else if (ok && icg <= 8) { /* a few channels (an RGB image): no call */                   \
              for (int64_t q = 0; q < icg; q++) col[q] = x[xo + q];                                      \
            } else if (ok) {                                                                             \
              memcpy(col, x + xo, (size_t)icg * sizeof(W));                                              \
            } else {                                                                                     \
              memset(col, 0, (size_t)icg * sizeof(W));                                                   \
            }                                                                                            \
          }                                                                                              \
        }                                                                                                \
      }                                                                                                  \
    }                                                                                                    \
  }                                                                                                      \
  /* y[N*P, OC] = conv(x); back: x is dy and y is dx (zeroed by the caller). The                        \
   * filter is not empty, so K * icg * OC (its element count) fits. */                                   \
  static dfx_code gemm_conv_##W(dfx_kctx *ctx, const cparams *p, const W *x, const W *f, W *y, int back,   \
                                const dfx_conv_epilogue *ep) {                                         \
    int64_t K = p->k[0] * p->k[1] * p->k[2], KC = K * p->icg, OCg = p->OC / p->G;                        \
    int64_t rows_all = p->N * sp_count(p->out);                                                          \
    if (rows_all == 0 || KC == 0 || OCg == 0) return DFX_OK;                                             \
    if (KC > INT_MAX || p->OC > INT_MAX)                                                                 \
      return dfx__kctx_fail(ctx, DFX_EUNIMPL, "filter too large for BLAS: %lld x %lld", (long long)KC,   \
                            (long long)p->OC);                                                           \
    int direct = !back && K == 1 && p->G == 1 && p->stride[0] * p->stride[1] * p->stride[2] == 1 &&      \
                 !p->padb[0] && !p->padb[1] && !p->padb[2] && p->out[0] == p->in[0] &&                   \
                 p->out[1] == p->in[1] && p->out[2] == p->in[2] && rows_all <= INT_MAX;                  \
    if (direct) {                                                                                        \
      int64_t step = EPILOGUE_ROW_VALUES / p->OC; /* with or without one: the same GEMM calls */         \
      if (step < 64) step = 64;                                                                          \
      for (int64_t r0 = 0; r0 < rows_all; r0 += step) {                                                  \
        int64_t rows = rows_all - r0 < step ? rows_all - r0 : step;                                      \
        GEMM(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)rows, (int)p->OC, (int)KC, 1, x + r0 * KC,  \
             (int)KC, f, (int)p->OC, 0, y + r0 * p->OC, (int)p->OC);                                    \
        if (ep) ep->fn(ep->ud, y + r0 * p->OC, rows, p->OC, sizeof(W) == sizeof(double));                \
      }                                                                                                  \
      return DFX_OK;                                                                                     \
    }                                                                                                    \
    int64_t chunk = (int64_t)(4 << 20) / KC;                                                             \
    if (chunk < 1) chunk = 1;                                                                            \
    if (chunk > rows_all) chunk = rows_all;                                                              \
    W *cols = dfx__malloc(dfx__mul_size((size_t)(chunk * KC), sizeof(W)));                               \
    if (!cols) return DFX_ENOMEM;                                                                        \
    for (int64_t r0 = 0; r0 < rows_all; r0 += chunk) {                                                   \
      int64_t rows = rows_all - r0 < chunk ? rows_all - r0 : chunk;                                      \
      dfx_code c_ = dfx__kctx_poll(ctx);                                                                 \
      if (c_ != DFX_OK) {                                                                                \
        dfx__free(cols);                                                                                 \
        return c_;                                                                                       \
      }                                                                                                  \
      for (int64_t g = 0; g < p->G; g++) {                                                               \
        if (!back) {                                                                                     \
          im2col_##W(p, x, r0, rows, g, cols, 0, NULL);                                                  \
          GEMM(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)rows, (int)OCg, (int)KC, 1, cols, (int)KC, \
               f + g * OCg, (int)p->OC, 0, y + r0 * p->OC + g * OCg, (int)p->OC);                        \
        } else {                                                                                         \
          GEMM(CblasRowMajor, CblasNoTrans, CblasTrans, (int)rows, (int)KC, (int)OCg, 1,                 \
               x + r0 * p->OC + g * OCg, (int)p->OC, f + g * OCg, (int)p->OC, 0, cols, (int)KC);         \
          im2col_##W(p, NULL, r0, rows, g, cols, 1, y);                                                  \
        }                                                                                                \
      }                                                                                                  \
      if (ep) ep->fn(ep->ud, y + r0 * p->OC, rows, p->OC, sizeof(W) == sizeof(double));                  \
    }                                                                                                    \
    dfx__free(cols);                                                                                     \
    return DFX_OK;                                                                                       \
  }                                                                                                      \
  /* Depthwise: filter [k..., C, M]; back adds dy * f into dx. */                                         \
  static dfx_code depthwise_##W(dfx_kctx *ctx, const cparams *p, const W *x, const W *f, W *y, int back,   \
                                const dfx_conv_epilogue *ep) {                                         \
    int64_t C = p->C, M = p->OC / p->C, P = sp_count(p->out), work = 0;                                  \
    for (int64_t idx = 0; idx < p->N * P; idx++) {                                                       \
      dfx_code c_ = cu_tick(ctx, &work, p->k[0] * p->k[1] * p->k[2] * p->OC);                            \
      if (c_ != DFX_OK) return c_;                                                                       \
      int64_t n = idx / P, pos = idx % P;                                                                \
      int64_t o0 = pos / (p->out[1] * p->out[2]), o1 = pos / p->out[2] % p->out[1], o2 = pos % p->out[2]; \
      W *yo = back ? NULL : y + idx * p->OC;                                                             \
      const W *go = back ? x + idx * p->OC : NULL;                                                       \
      if (!back) memset(yo, 0, (size_t)p->OC * sizeof(W));                                               \
      const W *fk = f;                                                                                   \
      for (int64_t a = 0; a < p->k[0]; a++)                                                              \
        for (int64_t b = 0; b < p->k[1]; b++)                                                            \
          for (int64_t c = 0; c < p->k[2]; c++, fk += C * M) {                                           \
            int64_t i0 = o0 * p->stride[0] - p->padb[0] + a * p->dil[0];                                 \
            int64_t i1 = o1 * p->stride[1] - p->padb[1] + b * p->dil[1];                                 \
            int64_t i2 = o2 * p->stride[2] - p->padb[2] + c * p->dil[2];                                 \
            if (i0 < 0 || i0 >= p->in[0] || i1 < 0 || i1 >= p->in[1] || i2 < 0 || i2 >= p->in[2]) continue; \
            int64_t xo = (((n * p->in[0] + i0) * p->in[1] + i1) * p->in[2] + i2) * C;                    \
            if (!back && M == 1) { /* the common case; this loop vectorises */                          \
              const W *xs = x + xo;                                                                      \
              for (int64_t ch = 0; ch < C; ch++) yo[ch] += xs[ch] * fk[ch];                              \
              continue;                                                                                  \
            }                                                                                            \
            for (int64_t ch = 0; ch < C; ch++) {                                                         \
              if (back) {                                                                                \
                W s = 0;                                                                                 \
                for (int64_t m = 0; m < M; m++) s += go[ch * M + m] * fk[ch * M + m];                    \
                y[xo + ch] += s;                                                                         \
              } else {                                                                                   \
                W xv = x[xo + ch];                                                                       \
                for (int64_t m = 0; m < M; m++) yo[ch * M + m] += xv * fk[ch * M + m];                   \
              }                                                                                          \
            }                                                                                            \
          }                                                                                              \
      if (ep && !back) ep->fn(ep->ud, yo, 1, p->OC, sizeof(W) == sizeof(double));                        \
    }                                                                                                    \
    return DFX_OK;                                                                                       \
  }

DEFINE_CONV(float, cblas_sgemm)
DEFINE_CONV(double, cblas_dgemm)

/* float depthwise forward (DepthwiseConv2dNative is 2-D only): depthwise.c's
 * rows, in blocks of about CU_POLL_WORK multiply-adds between polls for
 * cancellation. */
static dfx_code depthwise_f32(dfx_kctx *ctx, const cparams *p, const float *x, const float *f, float *y,
                              const dfx_conv_epilogue *ep) {
  dfx_dw_geom g = {.N = p->N, .H = p->in[1], .W = p->in[2], .C = p->C, .M = p->OC / p->C, .KH = p->k[1],
                   .KW = p->k[2], .OH = p->out[1], .OW = p->out[2], .sh = p->stride[1], .sw = p->stride[2],
                   .dh = p->dil[1], .dw = p->dil[2], .pt = p->padb[1], .pl = p->padb[2]};
  int64_t rows = g.N * g.OH, per_row = g.OW * p->OC * g.KH * g.KW;
  int64_t step = per_row > 0 && per_row < CU_POLL_WORK ? CU_POLL_WORK / per_row : 1;
  for (int64_t r0 = 0; r0 < rows; r0 += step) {
    dfx_code c = dfx__kctx_poll(ctx);
    if (c == DFX_OK) c = dfx__dw_rows_f32(&g, x, f, y, ep, r0, r0 + step < rows ? r0 + step : rows);
    if (c != DFX_OK) return c;
  }
  return DFX_OK;
}

/* Runs the convolution: src has xdims (data format), result has ydims. back:
 * src is out_backprop and the result is the input gradient. An empty src or
 * filter gives zeros. float32 reads its operands in place and, channels
 * last, writes the output in place; other dtypes go through work buffers. */
static dfx_code run(dfx_kctx *ctx, const cparams *p, const dfx_tensor *src, const dfx_tensor *filt, int back,
                    const int64_t *ydims, const dfx_conv_epilogue *ep) {
  dfx_dtype dt = (dfx_dtype)src->dtype;
  int r = p->nd + 2, dbl = dt == DFX_F64 || dfx__dtype_is_int(dt), f32 = dt == DFX_F32;
  size_t ws = dbl ? sizeof(double) : sizeof(float);
  dfx_tensor *out = dfx__kctx_alloc(ctx, 0, dt, r, ydims);
  if (!out) return DFX_ENOMEM;
  int64_t ycount = out->count, ychan = back ? p->C : p->OC;
  const void *x = src->data, *f = filt->data;
  void *y = NULL, *xbuf = NULL, *fbuf = NULL, *ybuf = NULL, *tmp = NULL;
  dfx_code code = DFX_ENOMEM;
  if (!f32 && (!(x = xbuf = cu_load(src, dbl)) || !(f = fbuf = cu_load(filt, dbl)))) goto done;
  if (f32 && p->clast) { /* the GEMM writes the output itself */
    y = out->data;
    /* Forward, every output value is written (the GEMM with beta 0, or
     * depthwise.c); the backprop accumulates, and an empty input with
     * explicit padding still has an output (of zeros). */
    if (ycount && (back || !src->count)) memset(y, 0, (size_t)ycount * ws);
  } else if (!(y = ybuf = dfx__calloc((size_t)(ycount ? ycount : 1), ws))) {
    goto done;
  }
  code = DFX_OK;
  if (!ycount || !src->count || !filt->count) goto store;
  if (!p->clast) { /* channels first: move C last */
    int64_t C = back ? p->OC : p->C;
    if (!(tmp = dfx__malloc((size_t)src->count * ws))) {
      code = DFX_ENOMEM;
      goto done;
    }
    cu_move_c(x, tmp, p->N, C, src->count / (p->N * C), ws, 1);
    x = tmp;
  }
  if (p->depthwise)
    code = dbl    ? depthwise_double(ctx, p, x, f, y, back, ep)
           : back ? depthwise_float(ctx, p, x, f, y, back, ep)
                  : depthwise_f32(ctx, p, x, f, y, ep);
  else
    code = dbl ? gemm_conv_double(ctx, p, x, f, y, back, ep) : gemm_conv_float(ctx, p, x, f, y, back, ep);
  if (code != DFX_OK) goto done;
  if (!p->clast) {
    if (f32) { /* straight into the output */
      cu_move_c(y, out->data, p->N, ychan, ycount / (p->N * ychan), ws, 0);
      goto done;
    }
    dfx__free(tmp);
    if (!(tmp = dfx__malloc((size_t)ycount * ws))) {
      code = DFX_ENOMEM;
      goto done;
    }
    cu_move_c(y, tmp, p->N, ychan, ycount / (p->N * ychan), ws, 0);
    y = tmp;
  }
store:
  if (y != out->data) cu_store(out, y, dbl);
done:
  dfx__free(xbuf);
  dfx__free(fbuf);
  dfx__free(ybuf);
  dfx__free(tmp);
  if (code == DFX_ENOMEM) return dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory in %s", ctx->node->op);
  return code;
}

static dfx_code check_rank(dfx_kctx *ctx, const dfx_tensor *t, int r, const char *what) {
  if (t->ndims != r) {
    char b[96];
    return dfx__kctx_fail(ctx, DFX_EINVAL, "%s must be %d-dimensional: %s", what, r, DFX_SHAPE_STR(t, b));
  }
  return DFX_OK;
}

static dfx_code conv_fwd(dfx_kctx *ctx, int depthwise, const dfx_conv_epilogue *ep) {
  const dfx_tensor *x = ctx->in[0], *f = ctx->in[1];
  int r = ((const cu_spec *)ctx->state)->nd + 2;
  if (check_rank(ctx, x, r, "input") || check_rank(ctx, f, r, "filter")) return DFX_EINVAL;
  if (f->dtype != x->dtype) return dfx__kctx_fail(ctx, DFX_EINVAL, "input and filter must have the same dtype");
  if (f->count == 0) {
    char b[96];
    return dfx__kctx_fail(ctx, DFX_EINVAL,
                          "filter must not have zero elements (i.e. all dimensions must be non-zero): %s",
                          DFX_SHAPE_STR(f, b));
  }
  cparams p;
  dfx_code c = setup(ctx, &p, depthwise, x->dims, f->dims);
  if (c != DFX_OK) return c;
  int64_t yd[5];
  fmt_dims(&p, p.out, p.OC, yd);
  return run(ctx, &p, x, f, 0, yd, ep);
}

dfx_code dfx__conv_forward(dfx_kctx *ctx, const dfx_conv_epilogue *ep) { return conv_fwd(ctx, 0, ep); }
dfx_code dfx__depthwise_forward(dfx_kctx *ctx, const dfx_conv_epilogue *ep) { return conv_fwd(ctx, 1, ep); }
static dfx_code conv(dfx_kctx *ctx) { return conv_fwd(ctx, 0, NULL); }
static dfx_code depthwise(dfx_kctx *ctx) { return conv_fwd(ctx, 1, NULL); }

/* Conv{2,3}DBackpropInput: input_sizes, filter, out_backprop. */
static dfx_code conv_back(dfx_kctx *ctx, int depthwise_op) {
  const dfx_tensor *f = ctx->in[1], *dy = ctx->in[2];
  const cu_spec *s = ctx->state;
  int nd = s->nd, r = nd + 2;
  int64_t sz[8];
  int nsz = 0;
  if (dfx__kctx_vector_i64(ctx, 0, "input_sizes", sz, 8, &nsz) != DFX_OK) return DFX_EINVAL;
  if (check_rank(ctx, f, r, "filter") || check_rank(ctx, dy, r, "out_backprop")) return DFX_EINVAL;
  int64_t xd[5];
  if (nsz == r) {
    memcpy(xd, sz, sizeof(int64_t) * (size_t)r);
  } else if (nsz == nd && nd == 2) { /* spatial sizes only */
    int cax = s->clast ? r - 1 : 1, sp0 = s->clast ? 1 : 2;
    xd[0] = dy->dims[0];
    xd[cax] = f->dims[nd];
    for (int i = 0; i < nd; i++) xd[sp0 + i] = sz[i];
  } else {
    return dfx__kctx_fail(ctx, DFX_EINVAL, "input_sizes must be %d-dimensional, got: %d", r, nsz);
  }
  for (int i = 0; i < r; i++)
    if (xd[i] < 0) return dfx__kctx_fail(ctx, DFX_EINVAL, "Dimension %d of input_sizes is negative", i);
  cparams p;
  dfx_code c = setup(ctx, &p, depthwise_op, xd, f->dims);
  if (c != DFX_OK) return c;
  int64_t want[5];
  fmt_dims(&p, p.out, p.OC, want);
  for (int i = 0; i < r; i++)
    if (want[i] != dy->dims[i]) {
      char b1[96], b2[96];
      return dfx__kctx_fail(ctx, DFX_EINVAL, "%s: Size of out_backprop doesn't match computed: actual = %s, computed = %s",
                            ctx->node->op, DFX_SHAPE_STR(dy, b1), dfx__shape_str(r, want, b2, sizeof b2));
    }
  return run(ctx, &p, dy, f, 1, xd, NULL);
}

static dfx_code conv_backprop(dfx_kctx *ctx) { return conv_back(ctx, 0); }
static dfx_code depthwise_backprop(dfx_kctx *ctx) { return conv_back(ctx, 1); }

#define FLOATS "{half, bfloat16, float, double}"

static const dfx_kernel_def kernels[] = {
    {"Conv2D", "T: {half, bfloat16, float, double, int32}", conv, 0, conv_init, dfx__free},
    {"Conv2DBackpropInput", "T: {half, bfloat16, float, double, int32}", conv_backprop, 0, conv_init, dfx__free},
    {"DepthwiseConv2dNative", "T: " FLOATS, depthwise, 0, conv_init, dfx__free},
    {"DepthwiseConv2dNativeBackpropInput", "T: " FLOATS, depthwise_backprop, 0, conv_init, dfx__free},
    {"Conv3D", "T: " FLOATS, conv, 0, conv_init, dfx__free},
    {"Conv3DBackpropInputV2", "T: " FLOATS "; Tshape: {int32, int64}", conv_backprop, 0, conv_init, dfx__free},
    {NULL}};

void dfx__kernels_conv_conv(dfx_registry *r);
void dfx__kernels_conv_conv(dfx_registry *r) { dfx__kernels_add(r, kernels); }
