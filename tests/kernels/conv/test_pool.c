/* test_pool.c - pooling ops and Dilation2D against a naive reference, over
 * every dtype their kernels declare. */
#include <float.h>

#include "ctest.h"

typedef struct pcase {
  int nd, clast;
  int64_t N, C, in[3], k[3], stride[3], rate[3];
  const char *pad;
} pcase;

static void geom(const pcase *c, int64_t *out, int64_t *pb) {
  for (int i = 0; i < c->nd; i++) {
    int64_t r = c->rate[i] ? c->rate[i] : 1, ek = (c->k[i] - 1) * r + 1, s = c->stride[i];
    if (!strcmp(c->pad, "VALID")) {
      out[i] = (c->in[i] - ek) / s + 1;
      pb[i] = 0;
    } else {
      out[i] = (c->in[i] + s - 1) / s;
      int64_t t = (out[i] - 1) * s + ek - c->in[i];
      pb[i] = t > 0 ? t / 2 : 0;
    }
  }
}

static int64_t off(const pcase *c, const int64_t *sp, int64_t n, const int64_t *pos, int64_t ch) {
  int64_t o = n;
  if (!c->clast) o = o * c->C + ch;
  for (int i = 0; i < c->nd; i++) o = o * sp[i] + pos[i];
  if (c->clast) o = o * c->C + ch;
  return o;
}

static void fmt(const pcase *c, const int64_t *sp, int64_t *d) {
  d[0] = c->N;
  d[c->clast ? c->nd + 1 : 1] = c->C;
  for (int i = 0; i < c->nd; i++) d[(c->clast ? 1 : 2) + i] = sp[i];
}

/* The window tap of input index i for output o along spatial dim d, or -1:
 * i is a tap when i = o * stride - pad_before + t * rate for 0 <= t < k. */
static int64_t tap(const pcase *c, int d, int64_t o, int64_t pb, int64_t i) {
  int64_t r = c->rate[d] ? c->rate[d] : 1, rel = i - (o * c->stride[d] - pb);
  return rel >= 0 && rel % r == 0 && rel / r < c->k[d] ? rel / r : -1;
}

/* mode 0 max, 1 avg, 2 dilation (f[k..., C]); arg gets flat NHWC index. Walks
 * every input position per output and keeps the taps, so it stays cheap for
 * any ksize. Empty windows give -inf. */
static void ref(const pcase *c, int mode, const double *x, const double *f, double *y, int64_t *arg) {
  int64_t out[3], pb[3];
  geom(c, out, pb);
  int64_t P = 1, I = 1;
  for (int i = 0; i < c->nd; i++) P *= out[i], I *= c->in[i];
  for (int64_t n = 0; n < c->N; n++)
    for (int64_t p = 0; p < P; p++) {
      int64_t o[3], rr = p;
      for (int i = c->nd - 1; i >= 0; i--) o[i] = rr % out[i], rr /= out[i];
      for (int64_t ch = 0; ch < c->C; ch++) {
        double best = -INFINITY, sum = 0;
        int64_t cnt = 0, ba = -1;
        for (int64_t q = 0; q < I; q++) {
          int64_t ip[3], r2 = q, kk = 0;
          int ok = 1;
          for (int i = c->nd - 1; i >= 0; i--) ip[i] = r2 % c->in[i], r2 /= c->in[i];
          for (int i = 0; i < c->nd && ok; i++) {
            int64_t t = tap(c, i, o[i], pb[i], ip[i]);
            ok = t >= 0;
            kk = kk * c->k[i] + t;
          }
          if (!ok) continue;
          double v = x[off(c, c->in, n, ip, ch)] + (mode == 2 ? f[kk * c->C + ch] : 0);
          cnt++, sum += v;
          if (v > best) best = v, ba = off(c, c->in, n, ip, ch);
        }
        int64_t yo = off(c, out, n, o, ch);
        y[yo] = mode == 1 ? sum / (double)cnt : best;
        if (arg) arg[yo] = ba;
      }
    }
}

static int is_unsigned(dfx_dtype dt) { return dt == DFX_U8 || dt == DFX_U16 || dt == DFX_U32 || dt == DFX_U64; }

/* Runs op on case c with dtype dt (and Targmax ta for MaxPoolWithArgmax). */
static void run_case(const pcase *c, const char *op, dfx_dtype dt, unsigned seed, int mode, dfx_dtype ta) {
  int r = c->nd + 2;
  int64_t out[3], pb[3], xd[5], yd[5];
  geom(c, out, pb);
  fmt(c, c->in, xd);
  fmt(c, out, yd);
  int64_t nx = 1, ny = 1, nf = c->C;
  for (int i = 0; i < r; i++) nx *= xd[i], ny *= yd[i];
  for (int i = 0; i < c->nd; i++) nf *= c->k[i];
  double *x = calloc((size_t)nx + 1, 8), *y = calloc((size_t)ny + 1, 8), *f = calloc((size_t)nf + 1, 8);
  int64_t *arg = calloc((size_t)ny + 1, 8);
  double sc = dfx__dtype_is_int(dt) || dt == DFX_QI8 ? 50 : 1;
  for (int64_t i = 0; i < nx; i++) x[i] = round(ct_rand(&seed) * sc * 1000) / 1000;
  for (int64_t i = 0; i < nf; i++) f[i] = round(ct_rand(&seed) * sc * 1000) / 1000;
  if (is_unsigned(dt)) {
    for (int64_t i = 0; i < nx; i++) x[i] = fabs(x[i]);
    for (int64_t i = 0; i < nf; i++) f[i] = fabs(f[i]);
  }
  dfx_tensor *tx = ct_tensor(dt, r, xd, x), *tf = ct_tensor(dt, 3, (int64_t[]){c->k[0], c->k[1], c->C}, f);
  ct_read(tx, x);
  ct_read(tf, f);
  ref(c, mode, x, f, y, arg);
  dfx_node *n = kh_node_new(op);
  kh_attr_type(n, "T", dt);
  int64_t ks[5] = {1, 1, 1, 1, 1}, st[5] = {1, 1, 1, 1, 1}, rt[4] = {1, 1, 1, 1};
  int sp0 = c->clast ? 1 : 2;
  for (int i = 0; i < c->nd; i++) ks[sp0 + i] = c->k[i], st[sp0 + i] = c->stride[i];
  if (mode == 2) rt[1] = c->rate[0], rt[2] = c->rate[1];
  if (mode != 2 && strcmp(op, "MaxPoolV2")) kh_attr_ints(n, "ksize", ks, r);
  if (strcmp(op, "MaxPoolV2")) kh_attr_ints(n, "strides", st, r);
  if (mode == 2) kh_attr_ints(n, "rates", rt, 4);
  kh_attr_str(n, "padding", c->pad);
  if (strcmp(op, "MaxPoolWithArgmax") && mode != 2)
    kh_attr_str(n, "data_format", c->nd == 2 ? (c->clast ? "NHWC" : "NCHW") : (c->clast ? "NDHWC" : "NCDHW"));
  dfx_tensor *o[2] = {0};
  if (mode == 2) {
    ct_run(n, (dfx_tensor *[]){tx, tf}, 2, o, 1);
  } else if (!strcmp(op, "MaxPoolV2")) {
    dfx_tensor *tk = kh_i32(1, (int64_t[]){4}, (int32_t[]){1, (int32_t)ks[1], (int32_t)ks[2], (int32_t)ks[3]});
    dfx_tensor *ts = kh_i32(1, (int64_t[]){4}, (int32_t[]){1, (int32_t)st[1], (int32_t)st[2], (int32_t)st[3]});
    ct_run(n, (dfx_tensor *[]){tx, tk, ts}, 3, o, 1);
    ct_free((dfx_tensor *[]){tk, ts}, 2);
  } else if (!strcmp(op, "MaxPoolWithArgmax")) {
    kh_attr_bool(n, "include_batch_in_index", seed & 1);
    kh_attr_type(n, "Targmax", ta);
    ct_run(n, (dfx_tensor *[]){tx}, 1, o, 2);
    double *wa = calloc((size_t)ny + 1, 8);
    int64_t per = nx / c->N;
    for (int64_t i = 0; i < ny; i++) wa[i] = (double)((seed & 1) ? arg[i] : arg[i] % per);
    ct_expect(o[1], ta, r, yd, wa, 0, "argmax");
    free(wa);
  } else {
    ct_run(n, (dfx_tensor *[]){tx}, 1, o, 1);
  }
  ct_expect(o[0], dt, r, yd, y, ct_tol(dt), op);
  ct_free(o, 2);
  kh_node_free(n);
  ct_free((dfx_tensor *[]){tx, tf}, 2);
  free(x), free(y), free(f), free(arg);
}

/* Runs op on c over every dtype its kernels declare (T, and Targmax). */
static void sweep(const pcase *c, const char *op, unsigned *seed, int mode) {
  dfx_dtype dts[DFX_DTYPE_END_], tas[DFX_DTYPE_END_] = {DFX_I64};
  int nd = ct_declared(op, "T", dts), na = strcmp(op, "MaxPoolWithArgmax") ? 1 : ct_declared(op, "Targmax", tas);
  for (int d = 0; d < nd; d++)
    for (int a = 0; a < na; a++) run_case(c, op, dts[d], (*seed)++, mode, tas[a]);
}

Test(pool, pool2d_matrix) {
  const char *pads[] = {"VALID", "SAME"};
  unsigned seed = 3;
  for (int pi = 0; pi < 2; pi++)
    for (int clast = 0; clast < 2; clast++)
      for (int cfg = 0; cfg < 3; cfg++) {
        pcase c = {.nd = 2, .clast = clast, .N = 2, .C = 3, .in = {7, 6}, .k = {3, 2}, .stride = {2, 2},
                   .pad = pads[pi]};
        if (cfg == 1) c.stride[0] = 1, c.stride[1] = 3;
        if (cfg == 2) c.k[0] = 4, c.k[1] = 4, c.stride[0] = 3;
        sweep(&c, "MaxPool", &seed, 0);
        sweep(&c, "AvgPool", &seed, 1);
        sweep(&c, "MaxPoolV2", &seed, 0);
        if (clast) {
          sweep(&c, "MaxPoolWithArgmax", &seed, 0);
          c.rate[0] = 2, c.rate[1] = 1 + cfg % 2;
          sweep(&c, "Dilation2D", &seed, 2);
        }
      }
}

/* Channel counts for the float max row's 16-wide loop and its tail
 * (kernels/conv/pool.c), both formats. */
Test(pool, maxpool_wide_channels) {
  unsigned seed = 5;
  for (int clast = 0; clast < 2; clast++)
    for (int64_t C = 16; C <= 37; C += 21) {
      pcase c = {.nd = 2, .clast = clast, .N = 2, .C = C, .in = {7, 6}, .k = {3, 3}, .stride = {2, 1},
                 .pad = clast ? "SAME" : "VALID"};
      sweep(&c, "MaxPool", &seed, 0);
    }
}

Test(pool, pool3d_matrix) {
  const char *pads[] = {"VALID", "SAME"};
  unsigned seed = 11;
  for (int pi = 0; pi < 2; pi++)
    for (int clast = 0; clast < 2; clast++) {
      pcase c = {.nd = 3, .clast = clast, .N = 2, .C = 2, .in = {4, 5, 6}, .k = {2, 3, 2}, .stride = {2, 1, 2},
                 .pad = pads[pi]};
      sweep(&c, "MaxPool3D", &seed, 0);
      sweep(&c, "AvgPool3D", &seed, 1);
    }
}

/* A dilated window can miss the input entirely (rate 3, SAME, 1x1 input):
 * Dilation2D then gives TF's lowest value of T, not -inf. */
Test(pool, dilation2d_empty_window_is_lowest) {
  dfx_dtype dts[DFX_DTYPE_END_];
  int nd = ct_declared("Dilation2D", "T", dts);
  for (int d = 0; d < nd; d++) {
    double lowest;
    switch (dts[d]) {
    case DFX_F32: lowest = -FLT_MAX; break;
    case DFX_F64: lowest = -DBL_MAX; break;
    case DFX_F16: lowest = -65504; break;
    case DFX_BF16: lowest = -3.3895313892515355e38; break;
    default: lowest = is_unsigned(dts[d]) ? 0 : -ldexp(1, 8 * (int)dfx__dtype_storage(dts[d]) - 1);
    }
    dfx_tensor *x = ct_tensor(dts[d], 4, (int64_t[]){1, 1, 1, 1}, (double[]){7});
    dfx_tensor *f = ct_tensor(dts[d], 3, (int64_t[]){2, 1, 1}, (double[]){1, 2});
    dfx_node *n = kh_node_new("Dilation2D");
    kh_attr_type(n, "T", dts[d]);
    kh_attr_ints(n, "strides", (int64_t[]){1, 1, 1, 1}, 4);
    kh_attr_ints(n, "rates", (int64_t[]){1, 3, 1, 1}, 4);
    kh_attr_str(n, "padding", "SAME");
    dfx_tensor *o[1];
    ct_run(n, (dfx_tensor *[]){x, f}, 2, o, 1);
    ct_expect(o[0], dts[d], 4, (int64_t[]){1, 1, 1, 1}, &lowest, 1e-7, dfx_dtype_name(dts[d]));
    ct_free(o, 1);
    kh_node_free(n);
    ct_free((dfx_tensor *[]){x, f}, 2);
  }
}

/* Hand-computed: AvgPool SAME divides by the valid count. */
Test(pool, avg_same_known) {
  dfx_tensor *x = kh_f32(4, (int64_t[]){1, 2, 3, 1}, (float[]){1, 2, 3, 4, 5, 6});
  dfx_node *n = kh_node_new("AvgPool");
  kh_attr_type(n, "T", DFX_F32);
  kh_attr_ints(n, "ksize", (int64_t[]){1, 2, 2, 1}, 4);
  kh_attr_ints(n, "strides", (int64_t[]){1, 2, 2, 1}, 4);
  kh_attr_str(n, "padding", "SAME");
  dfx_tensor *o[1];
  ct_run(n, &x, 1, o, 1);
  ct_expect(o[0], DFX_F32, 4, (int64_t[]){1, 1, 2, 1}, (double[]){3, 4.5}, 1e-6, "avg same");
  ct_free(o, 1);
  kh_attr_ints(n, "ksize", (int64_t[]){2, 2, 2, 1}, 4);
  ct_fail(n, &x, 1, "batch dimension");
  /* The signature's "ksize: list(int) >= 4" rejects it before the kernel does. */
  kh_attr_ints(n, "ksize", (int64_t[]){1, 2, 2}, 3);
  ct_fail(n, &x, 1, "attr 'ksize' has 3 elements, below the minimum length 4");
  kh_node_free(n);
  dfx__tensor_unref(x);
}

Test(pool, maxpool_explicit_and_empty) {
  dfx_tensor *x = kh_f32(4, (int64_t[]){1, 2, 2, 1}, (float[]){-1, -2, -3, -4});
  dfx_node *n = kh_node_new("MaxPool");
  kh_attr_type(n, "T", DFX_F32);
  kh_attr_ints(n, "ksize", (int64_t[]){1, 2, 2, 1}, 4);
  kh_attr_ints(n, "strides", (int64_t[]){1, 1, 1, 1}, 4);
  kh_attr_str(n, "padding", "EXPLICIT");
  kh_attr_ints(n, "explicit_paddings", (int64_t[]){0, 0, 1, 0, 0, 1, 0, 0}, 8);
  dfx_tensor *o[1];
  ct_run(n, &x, 1, o, 1);
  /* padding is ignored by the max, never a zero. */
  ct_expect(o[0], DFX_F32, 4, (int64_t[]){1, 2, 2, 1}, (double[]){-1, -2, -1, -2}, 0, "explicit");
  ct_free(o, 1);
  dfx_tensor *e = kh_f32(4, (int64_t[]){0, 4, 4, 2}, NULL);
  kh_attr_str(n, "padding", "VALID");
  kh_attr_ints(n, "explicit_paddings", NULL, 0);
  ct_run(n, &e, 1, o, 1);
  ct_expect(o[0], DFX_F32, 4, (int64_t[]){0, 3, 3, 2}, NULL, 0, "empty");
  ct_free(o, 1);
  kh_node_free(n);
  ct_free((dfx_tensor *[]){x, e}, 2);
}
