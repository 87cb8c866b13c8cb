/* conv_grad.c - the backprop kernels the gradients of Conv2D,
 * DepthwiseConv2dNative, MaxPool and AvgPool emit: Conv2DBackpropFilter,
 * DepthwiseConv2dNativeBackpropFilter, MaxPoolGrad, AvgPoolGrad. 2-D only,
 * NHWC or NCHW; direct loops accumulating in double (these run once per
 * training step, not in an inference path). The window geometry is the
 * forward op's (cu_window), so SAME/VALID/EXPLICIT padding match it. */
#include "conv.h"

/* 4-D geometry in data format: element (n, h, w, c) of dims d. */
typedef struct g4 {
  int clast;
  int64_t N, H, W, C;
} g4;

static g4 geo(const int64_t *d, int clast) {
  return clast ? (g4){1, d[0], d[1], d[2], d[3]} : (g4){0, d[0], d[2], d[3], d[1]};
}
static int64_t at(const g4 *g, int64_t n, int64_t h, int64_t w, int64_t c) {
  return g->clast ? ((n * g->H + h) * g->W + w) * g->C + c : ((n * g->C + c) * g->H + h) * g->W + w;
}

static dfx_code check4(dfx_kctx *ctx, const dfx_tensor *t, const char *what) {
  if (t->ndims == 4) return DFX_OK;
  char b[96];
  return dfx__kctx_fail(ctx, DFX_EINVAL, "%s must be 4-dimensional: %s", what, DFX_SHAPE_STR(t, b));
}

/* Output size and padding before, per spatial dim, checked against dy. */
static dfx_code window(dfx_kctx *ctx, const cu_spec *s, const g4 *x, const g4 *y, const int64_t *k,
                       int64_t *padb) {
  int sp0 = s->clast ? 1 : 2;
  int64_t in[2] = {x->H, x->W}, want[2] = {y->H, y->W};
  for (int i = 0; i < 2; i++) {
    int64_t out = 0;
    dfx_code c = cu_window(ctx, in[i], k[i], s->dl[sp0 + i], s->st[sp0 + i], s->pad, s->ep[2 * (sp0 + i)],
                           s->ep[2 * (sp0 + i) + 1], &out, &padb[i]);
    if (c != DFX_OK) return c;
    if (out != want[i])
      return dfx__kctx_fail(ctx, DFX_EINVAL, "%s: out_backprop spatial dim %d is %lld, the forward op gives %lld",
                            ctx->node->op, i, (long long)want[i], (long long)out);
  }
  return DFX_OK;
}

static dfx_code conv_init(const dfx_node *n, void **state, dfx_status *st) {
  cu_spec s;
  dfx_code c = dfx__conv_spec(n, &s, st);
  return c != DFX_OK ? c : cu_spec_state(&s, state, st);
}

/* Conv2DBackpropFilter / DepthwiseConv2dNativeBackpropFilter:
 * (input, filter_sizes, out_backprop) -> filter gradient [kh, kw, in, out]. */
static dfx_code filter_grad(dfx_kctx *ctx, int depthwise) {
  const cu_spec *s = ctx->state;
  const dfx_tensor *xt = ctx->in[0], *dyt = ctx->in[2];
  int64_t fs[8];
  int nfs = 0;
  if (check4(ctx, xt, "input") || check4(ctx, dyt, "out_backprop")) return DFX_EINVAL;
  if (dfx__kctx_vector_i64(ctx, 1, "filter_sizes", fs, 8, &nfs) != DFX_OK) return DFX_EINVAL;
  if (nfs != 4) return dfx__kctx_fail(ctx, DFX_EINVAL, "filter_sizes must have 4 values, got %d", nfs);
  g4 x = geo(xt->dims, s->clast), y = geo(dyt->dims, s->clast);
  int64_t KH = fs[0], KW = fs[1], FI = fs[2], FO = fs[3], M = depthwise ? FO : 1;
  if (FI != x.C) return dfx__kctx_fail(ctx, DFX_EUNIMPL, "filter depth %lld must equal the input depth %lld (groups are not supported)", (long long)FI, (long long)x.C);
  if (y.C != (depthwise ? x.C * M : FO) || y.N != x.N)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "out_backprop depth %lld does not match the filter", (long long)y.C);
  int64_t k[2] = {KH, KW}, pb[2];
  dfx_code c = window(ctx, s, &x, &y, k, pb);
  if (c != DFX_OK) return c;
  int sp0 = s->clast ? 1 : 2;
  int64_t sh = s->st[sp0], sw = s->st[sp0 + 1], dh = s->dl[sp0], dw = s->dl[sp0 + 1];
  dfx_tensor *out = dfx__kctx_alloc(ctx, 0, (dfx_dtype)xt->dtype, 4, fs);
  if (!out) return DFX_ENOMEM;
  double *xv = cu_load(xt, 1), *gv = cu_load(dyt, 1), *acc = dfx__calloc((size_t)(out->count ? out->count : 1), sizeof(double));
  if (!xv || !gv || !acc) {
    dfx__free(xv), dfx__free(gv), dfx__free(acc);
    return dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory in %s", ctx->node->op);
  }
  int64_t work = 0;
  for (int64_t n = 0; n < x.N && c == DFX_OK; n++)
    for (int64_t oh = 0; oh < y.H && c == DFX_OK; oh++) {
      c = cu_tick(ctx, &work, y.W * KH * KW * y.C);
      for (int64_t ow = 0; ow < y.W; ow++)
        for (int64_t a = 0; a < KH; a++) {
          int64_t ih = oh * sh - pb[0] + a * dh;
          if (ih < 0 || ih >= x.H) continue;
          for (int64_t b = 0; b < KW; b++) {
            int64_t iw = ow * sw - pb[1] + b * dw;
            if (iw < 0 || iw >= x.W) continue;
            for (int64_t ci = 0; ci < x.C; ci++) {
              double xval = xv[at(&x, n, ih, iw, ci)];
              double *row = acc + ((a * KW + b) * FI + ci) * FO;
              if (depthwise)
                for (int64_t m = 0; m < M; m++) row[m] += xval * gv[at(&y, n, oh, ow, ci * M + m)];
              else
                for (int64_t co = 0; co < FO; co++) row[co] += xval * gv[at(&y, n, oh, ow, co)];
            }
          }
        }
    }
  if (c == DFX_OK) cu_store(out, acc, 1);
  dfx__free(xv), dfx__free(gv), dfx__free(acc);
  return c;
}
static dfx_code conv_filter(dfx_kctx *ctx) { return filter_grad(ctx, 0); }
static dfx_code depthwise_filter(dfx_kctx *ctx) { return filter_grad(ctx, 1); }

/* ---- pooling ---- */

static dfx_code pool_init(const dfx_node *n, void **state, dfx_status *st) {
  cu_spec s = {.nd = 2};
  dfx_code c;
  if ((c = cu_format_attr(n, 2, &s.clast, st)) || (c = cu_padding_attr(n, &s, st)) ||
      (c = cu_window_attr(n, "ksize", 4, s.ks, st)) || (c = cu_window_attr(n, "strides", 4, s.st, st)))
    return c;
  for (int i = 0; i < 4; i++) s.dl[i] = 1;
  int cax = s.clast ? 3 : 1;
  if (s.ks[0] != 1 || s.ks[cax] != 1 || s.st[0] != 1 || s.st[cax] != 1)
    return dfx__status_set(st, DFX_EUNIMPL, "pooling over the batch or depth dimension is not supported");
  return cu_spec_state(&s, state, st);
}

/* MaxPoolGrad(orig_input, orig_output, grad): each window's gradient goes
 * to its first maximal input (row-major scan, padding excluded).
 * AvgPoolGrad(orig_input_shape, grad): spread evenly over the window's
 * inputs (the count excludes padding, as AvgPool divides). */
static dfx_code pool_grad(dfx_kctx *ctx, int avg) {
  const cu_spec *s = ctx->state;
  const dfx_tensor *gt = ctx->in[avg ? 1 : 2];
  int64_t xd[4];
  const dfx_tensor *xt = NULL;
  if (avg) {
    int n = 0;
    if (dfx__kctx_vector_i64(ctx, 0, "orig_input_shape", xd, 4, &n) != DFX_OK) return DFX_EINVAL;
    if (n != 4) return dfx__kctx_fail(ctx, DFX_EINVAL, "orig_input_shape must have 4 values, got %d", n);
  } else {
    xt = ctx->in[0];
    if (check4(ctx, xt, "orig_input")) return DFX_EINVAL;
    memcpy(xd, xt->dims, sizeof xd);
  }
  if (check4(ctx, gt, "grad")) return DFX_EINVAL;
  g4 x = geo(xd, s->clast), y = geo(gt->dims, s->clast);
  if (x.N != y.N || x.C != y.C) return dfx__kctx_fail(ctx, DFX_EINVAL, "grad batch or depth does not match the input");
  int sp0 = s->clast ? 1 : 2;
  int64_t k[2] = {s->ks[sp0], s->ks[sp0 + 1]}, pb[2];
  dfx_code c = window(ctx, s, &x, &y, k, pb);
  if (c != DFX_OK) return c;
  dfx_tensor *out = dfx__kctx_alloc(ctx, 0, (dfx_dtype)gt->dtype, 4, xd);
  if (!out) return DFX_ENOMEM;
  double *gv = cu_load(gt, 1), *xv = xt ? cu_load(xt, 1) : NULL,
         *acc = dfx__calloc((size_t)(out->count ? out->count : 1), sizeof(double));
  if (!gv || (xt && !xv) || !acc) {
    dfx__free(gv), dfx__free(xv), dfx__free(acc);
    return dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory in %s", ctx->node->op);
  }
  int64_t sh = s->st[sp0], sw = s->st[sp0 + 1], work = 0;
  for (int64_t n = 0; n < y.N && c == DFX_OK; n++)
    for (int64_t oh = 0; oh < y.H && c == DFX_OK; oh++) {
      c = cu_tick(ctx, &work, y.W * y.C * k[0] * k[1]);
      int64_t h0 = oh * sh - pb[0], h1 = h0 + k[0];
      if (h0 < 0) h0 = 0;
      if (h1 > x.H) h1 = x.H;
      for (int64_t ow = 0; ow < y.W; ow++) {
        int64_t w0 = ow * sw - pb[1], w1 = w0 + k[1];
        if (w0 < 0) w0 = 0;
        if (w1 > x.W) w1 = x.W;
        for (int64_t ch = 0; ch < y.C; ch++) {
          double g = gv[at(&y, n, oh, ow, ch)];
          if (avg) {
            int64_t cnt = (h1 - h0) * (w1 - w0);
            for (int64_t h = h0; h < h1; h++)
              for (int64_t w = w0; w < w1; w++) acc[at(&x, n, h, w, ch)] += g / (double)(cnt ? cnt : 1);
            continue;
          }
          int64_t best = -1;
          double bv = 0;
          for (int64_t h = h0; h < h1; h++)
            for (int64_t w = w0; w < w1; w++) {
              int64_t i = at(&x, n, h, w, ch);
              if (best < 0 || xv[i] > bv) best = i, bv = xv[i];
            }
          if (best >= 0) acc[best] += g;
        }
      }
    }
  if (c == DFX_OK) cu_store(out, acc, 1);
  dfx__free(gv), dfx__free(xv), dfx__free(acc);
  return c;
}
static dfx_code max_pool_grad(dfx_kctx *ctx) { return pool_grad(ctx, 0); }
static dfx_code avg_pool_grad(dfx_kctx *ctx) { return pool_grad(ctx, 1); }

#define FLOATS "{half, bfloat16, float, double}"

static const dfx_kernel_def kernels[] = {
    {"Conv2DBackpropFilter", "T: " FLOATS, conv_filter, 0, conv_init, dfx__free},
    {"DepthwiseConv2dNativeBackpropFilter", "T: " FLOATS, depthwise_filter, 0, conv_init, dfx__free},
    {"MaxPoolGrad", "T: " FLOATS, max_pool_grad, 0, pool_init, dfx__free},
    {"AvgPoolGrad", "T: " FLOATS, avg_pool_grad, 0, pool_init, dfx__free},
    {NULL}};

void dfx__kernels_conv_grad(dfx_registry *r);
void dfx__kernels_conv_grad(dfx_registry *r) { dfx__kernels_add(r, kernels); }
