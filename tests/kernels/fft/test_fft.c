/* test_fft.c - the fft family against a naive O(n^2) DFT in double: complex
 * transforms of rank 1-3 in both directions, real transforms with
 * fft_length cropping, every declared dtype, prime and non-power-of-two
 * lengths, batch dims, empty tensors, TF's error checks, cancellation, a
 * timing check that 2^16 points is not quadratic, and a whole graph. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <uv.h>

#include "kharness.h"
#include "step.h"

static char err[1024];

static void teardown(void) { dfx__tensor_cache_flush(); }
TestSuite(fft, .fini = teardown, .timeout = 120);

/* ---- data and the naive reference ---- */

static uint64_t rng = 88172645463325252ull;
static double rnd(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (double)(rng >> 11) / (double)(1ull << 53) * 2.0 - 1.0;
}

static int64_t count_of(int nd, const int64_t *d) {
  int64_t c = 1;
  for (int i = 0; i < nd; i++) c *= d[i];
  return c;
}

/* A tensor of dtype dt (float, double, complex64, complex128) from doubles
 * (complex: re, im pairs); NULL v: zeros. */
static dfx_tensor *make(dfx_dtype dt, int nd, const int64_t *d, const double *v) {
  dfx_tensor *t = dfx__tensor_alloc(dt, nd, d, NULL);
  int64_t n = t->count * ((dt == DFX_C64 || dt == DFX_C128) ? 2 : 1);
  for (int64_t i = 0; i < n; i++) {
    double x = v ? v[i] : 0;
    if (dt == DFX_F32 || dt == DFX_C64) ((float *)t->data)[i] = (float)x;
    else ((double *)t->data)[i] = x;
  }
  return t;
}

static double get(const dfx_tensor *t, int64_t i) {
  return (t->dtype == DFX_F32 || t->dtype == DFX_C64) ? ((const float *)t->data)[i] : ((const double *)t->data)[i];
}

/* Naive multi-dimensional DFT over the last r dims of x (complex, dims
 * xd[0..nd)), each cropped to len[i] (never padded: TF's kernels crop),
 * into y (complex, the batch dims then len[0..r)); sign -1 forward, +1
 * inverse (unscaled). */
static void naive_dft(const double *x, int nd, const int64_t *xd, int r, const int64_t *len, int sign, double *y) {
  int b = nd - r;
  int64_t batch = count_of(b, xd), nin = count_of(r, xd + b), nout = count_of(r, len);
  for (int64_t bi = 0; bi < batch; bi++)
    for (int64_t ko = 0; ko < nout; ko++) {
      int64_t k[3];
      for (int64_t q = ko, i = r - 1; i >= 0; i--) k[i] = q % len[i], q /= len[i];
      long double sr = 0, si = 0;
      for (int64_t jo = 0; jo < nin; jo++) {
        int64_t j[3];
        bool in_range = true;
        for (int64_t q = jo, i = r - 1; i >= 0; i--) j[i] = q % xd[b + i], q /= xd[b + i];
        for (int i = 0; i < r; i++) in_range = in_range && j[i] < len[i];
        if (!in_range) continue;
        long double ang = 0;
        for (int i = 0; i < r; i++) ang += (long double)((j[i] * k[i]) % len[i]) / (long double)len[i];
        ang *= sign * 2 * M_PI;
        long double c = cosl(ang), s = sinl(ang), xr = x[2 * (bi * nin + jo)], xi = x[2 * (bi * nin + jo) + 1];
        sr += xr * c - xi * s;
        si += xr * s + xi * c;
      }
      y[2 * (bi * nout + ko)] = (double)sr;
      y[2 * (bi * nout + ko) + 1] = (double)si;
    }
}

/* Compares got (count values) with want; tolerance relative to `scale`. */
static void expect_close(const dfx_tensor *got, const double *want, int64_t n, double tol, double scale,
                         const char *what) {
  double worst = 0;
  int64_t at = -1;
  for (int64_t i = 0; i < n; i++) {
    double e = fabs(get(got, i) - want[i]);
    if (!(e <= worst)) worst = e, at = i;
  }
  cr_expect(worst <= tol * scale, "%s: worst error %g at %lld (got %g want %g), allowed %g", what, worst,
            (long long)at, at >= 0 ? get(got, at) : 0.0, at >= 0 ? want[at] : 0.0, tol * scale);
}

static double sum_abs(const double *v, int64_t n) {
  double s = 1;
  for (int64_t i = 0; i < n; i++) s += fabs(v[i]);
  return s;
}

static dfx_node *node(const char *op, dfx_dtype tc, dfx_dtype tr) {
  dfx_node *n = kh_node_new(op);
  kh_attr_type(n, "Tcomplex", tc);
  if (tr != DFX_INVALID) kh_attr_type(n, "Treal", tr);
  return n;
}

static dfx_code run1(dfx_node *n, dfx_tensor **in, int n_in, dfx_tensor **out) {
  int n_out = 0;
  *out = NULL;
  return kh_run(n, in, n_in, out, &n_out, err, sizeof err);
}

static double tol_of(dfx_dtype dt) { return (dt == DFX_C64 || dt == DFX_F32) ? 2e-6 : 1e-13; }

/* ---- complex transforms ---- */

static const char *c2c_op(int r, bool fwd) {
  static const char *ops[2][3] = {{"IFFT", "IFFT2D", "IFFT3D"}, {"FFT", "FFT2D", "FFT3D"}};
  return ops[fwd][r - 1];
}

static void check_c2c(dfx_dtype dt, int r, bool fwd, int nd, const int64_t *d) {
  int64_t n = count_of(nd, d);
  double *x = malloc(sizeof(double) * 2 * (size_t)(n + 1)), *y = malloc(sizeof(double) * 2 * (size_t)(n + 1));
  for (int64_t i = 0; i < 2 * n; i++) x[i] = rnd();
  dfx_tensor *in = make(dt, nd, d, x), *out;
  naive_dft(x, nd, d, r, d + nd - r, fwd ? -1 : 1, y);
  int64_t tn = count_of(r, d + nd - r);
  if (!fwd)
    for (int64_t i = 0; i < 2 * n; i++) y[i] /= (double)tn;
  dfx_node *nn = kh_node_new(c2c_op(r, fwd));
  kh_attr_type(nn, "Tcomplex", dt);
  cr_assert_eq(run1(nn, &in, 1, &out), DFX_OK, "%s", err);
  cr_assert_eq(out->dtype, dt);
  cr_assert_eq(out->ndims, nd);
  for (int i = 0; i < nd; i++) cr_assert_eq(out->dims[i], d[i]);
  char what[128];
  snprintf(what, sizeof what, "%s %s n=%lld", c2c_op(r, fwd), dfx_dtype_name(dt), (long long)d[nd - 1]);
  expect_close(out, y, 2 * n, tol_of(dt), sum_abs(x, 2 * n) / (fwd ? 1.0 : (double)tn), what);
  dfx__tensor_unref(in);
  dfx__tensor_unref(out);
  kh_node_free(nn);
  free(x);
  free(y);
}

Test(fft, fft_1d_all_lengths) {
  /* Powers of two, smooth sizes (kissfft), primes small and large (kissfft's
   * generic butterfly up to 97, Bluestein above), mixed composites. */
  static const int64_t lens[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 13, 16, 17, 30, 64, 97, 100, 101, 127, 128,
                                 194, 210, 243, 256, 360, 389, 1000, 1009, 1024, 2310};
  dfx_dtype dts[] = {DFX_C64, DFX_C128};
  for (int t = 0; t < 2; t++)
    for (size_t i = 0; i < sizeof lens / sizeof *lens; i++)
      for (int fwd = 0; fwd < 2; fwd++) {
        int64_t d[2] = {2, lens[i]};
        check_c2c(dts[t], 1, fwd, lens[i] > 500 ? 1 : 2, lens[i] > 500 ? d + 1 : d);
      }
}

Test(fft, fft_batch_dims_and_ranks) {
  static const int64_t shapes[][4] = {{3, 2, 5, 0}, {2, 3, 7, 0}, {1, 6, 9, 0}, {2, 2, 3, 5}, {3, 4, 1, 8}};
  dfx_dtype dts[] = {DFX_C64, DFX_C128};
  for (int t = 0; t < 2; t++)
    for (int s = 0; s < 5; s++) {
      int nd = shapes[s][3] ? 4 : 3;
      for (int r = 1; r <= 3; r++)
        for (int fwd = 0; fwd < 2; fwd++) check_c2c(dts[t], r, fwd, nd, shapes[s]);
    }
  /* Rank equal to the transform rank: no batch dims. */
  const int64_t d3[] = {3, 5, 4};
  check_c2c(DFX_C128, 3, true, 3, d3);
  check_c2c(DFX_C64, 2, false, 2, d3 + 1);
}

Test(fft, fft_empty_and_rank_errors) {
  static const int64_t shapes[][2] = {{0, 5}, {3, 0}, {0, 0}};
  for (int s = 0; s < 3; s++)
    for (int r = 1; r <= 2; r++) {
      dfx_tensor *in = make(DFX_C64, 2, shapes[s], NULL), *out;
      dfx_node *n = kh_node_new(c2c_op(r, r == 1));
      cr_assert_eq(run1(n, &in, 1, &out), DFX_OK, "%s", err);
      cr_expect_eq(out->count, 0);
      cr_expect_eq(out->dims[0], shapes[s][0]);
      cr_expect_eq(out->dims[1], shapes[s][1]);
      dfx__tensor_unref(out);
      dfx__tensor_unref(in);
      kh_node_free(n);
    }
  const int64_t d[] = {4, 4};
  dfx_tensor *in = make(DFX_C128, 1, d, NULL), *out;
  dfx_node *n = kh_node_new("FFT2D");
  kh_attr_type(n, "Tcomplex", DFX_C128);
  cr_expect_eq(run1(n, &in, 1, &out), DFX_EINVAL);
  cr_expect(strstr(err, "Input must have rank of at least 2 but got:"), "%s", err);
  dfx__tensor_unref(in);
  kh_node_free(n);
  in = make(DFX_C64, 0, NULL, (double[]){3, 4});
  n = kh_node_new("FFT");
  cr_expect_eq(run1(n, &in, 1, &out), DFX_EINVAL);
  cr_expect(strstr(err, "rank of at least 1"), "%s", err);
  dfx__tensor_unref(in);
  kh_node_free(n);
}

/* ---- real transforms ---- */

static const char *real_op(int r, bool fwd) {
  static const char *ops[2][3] = {{"IRFFT", "IRFFT2D", "IRFFT3D"}, {"RFFT", "RFFT2D", "RFFT3D"}};
  return ops[fwd][r - 1];
}

/* RFFT of real x (dims d) with lengths L: the naive full DFT of the cropped
 * input, keeping bins [0, L/2] of the last axis. */
static void check_rfft(dfx_dtype rt, int r, int nd, const int64_t *d, const int32_t *L) {
  dfx_dtype ct = rt == DFX_F32 ? DFX_C64 : DFX_C128;
  int64_t n = count_of(nd, d), len[3], od[6];
  double *x = malloc(sizeof(double) * (size_t)(n + 1)), *xc = calloc(2 * (size_t)(n + 1), sizeof(double));
  for (int64_t i = 0; i < n; i++) xc[2 * i] = x[i] = rnd();
  memcpy(od, d, sizeof(int64_t) * (size_t)nd);
  for (int i = 0; i < r; i++) od[nd - r + i] = len[i] = L[i];
  od[nd - 1] = L[r - 1] ? L[r - 1] / 2 + 1 : 0;
  int64_t full = count_of(nd - r, d) * count_of(r, len), on = count_of(nd, od);
  double *y = calloc(2 * (size_t)(full + 1), sizeof(double)), *want = calloc(2 * (size_t)(on + 1), sizeof(double));
  if (n) naive_dft(xc, nd, d, r, len, -1, y);
  int64_t h = od[nd - 1], lines = h ? on / h : 0;
  for (int64_t l = 0; l < lines; l++)
    for (int64_t k = 0; k < h; k++) {
      want[2 * (l * h + k)] = y[2 * (l * L[r - 1] + k)];
      want[2 * (l * h + k) + 1] = y[2 * (l * L[r - 1] + k) + 1];
    }
  int64_t ld = r;
  dfx_tensor *in[2] = {make(rt, nd, d, x), kh_i32(1, &ld, L)}, *out;
  dfx_node *nn = node(real_op(r, true), ct, rt);
  cr_assert_eq(run1(nn, in, 2, &out), DFX_OK, "%s", err);
  cr_assert_eq(out->dtype, ct);
  for (int i = 0; i < nd; i++) cr_assert_eq(out->dims[i], od[i], "dim %d: %lld want %lld", i, (long long)out->dims[i],
                                            (long long)od[i]);
  char what[128];
  snprintf(what, sizeof what, "%s %s L=%d", real_op(r, true), dfx_dtype_name(rt), L[r - 1]);
  expect_close(out, want, 2 * on, tol_of(rt), sum_abs(x, n), what);
  dfx__tensor_unref(in[0]);
  dfx__tensor_unref(in[1]);
  dfx__tensor_unref(out);
  kh_node_free(nn);
  free(x);
  free(xc);
  free(y);
  free(want);
}

/* IRFFT of complex x (dims d) with lengths L, by the definition: bins
 * [0, L/2] of the (cropped) last axis stand for the Hermitian spectrum, so
 * bins 1..ceil(L/2)-1 count twice and only the real part of the inverse is
 * kept: out = Re(sum_k w_k X_k e^{+i...}) / prod(L), with w_0 = 1, w_k = 2
 * for 0 < k < L - k, and w_{L/2} = 1 for even L. */
static void check_irfft(dfx_dtype rt, int r, int nd, const int64_t *d, const int32_t *L) {
  dfx_dtype ct = rt == DFX_F32 ? DFX_C64 : DFX_C128;
  int64_t n = count_of(nd, d), len[3], od[6], cd[6];
  double *x = malloc(sizeof(double) * 2 * (size_t)(n + 1));
  for (int64_t i = 0; i < 2 * n; i++) x[i] = rnd();
  memcpy(od, d, sizeof(int64_t) * (size_t)nd);
  for (int i = 0; i < r; i++) od[nd - r + i] = len[i] = L[i];
  /* Inverse DFT over the outer axes and the half axis, weighted by w_k. */
  memcpy(cd, od, sizeof cd);
  int64_t nl = L[r - 1], h = nl / 2 + 1;
  cd[nd - 1] = h;
  int64_t cn = count_of(nd, cd), on = count_of(nd, od);
  double *xw = calloc(2 * (size_t)(cn + 1), sizeof(double)), *want = calloc((size_t)(on + 1), sizeof(double));
  int64_t lines = cn / h;
  for (int64_t l = 0; l < lines && n; l++) { /* crop to cd and weight */
    int64_t src = 0, q = l, stride = d[nd - 1];
    for (int i = nd - 2; i >= 0; i--) src += (q % cd[i]) * stride, q /= cd[i], stride *= d[i];
    for (int64_t k = 0; k < h; k++) {
      double w = (k == 0 || 2 * k == nl) ? 1 : 2;
      xw[2 * (l * h + k)] = w * x[2 * (src + k)];
      xw[2 * (l * h + k) + 1] = w * x[2 * (src + k) + 1];
    }
  }
  /* sum over k < h of the inverse kernel with the last axis of length nl. */
  int b = nd - r;
  int64_t batch = count_of(b, od), nout = count_of(r, len), nin = count_of(r, cd + b), tot = nout;
  for (int64_t bi = 0; bi < batch && n; bi++)
    for (int64_t to = 0; to < nout; to++) {
      int64_t t[3];
      for (int64_t q = to, i = r - 1; i >= 0; i--) t[i] = q % len[i], q /= len[i];
      long double s = 0;
      for (int64_t ko = 0; ko < nin; ko++) {
        int64_t k[3];
        for (int64_t q = ko, i = r - 1; i >= 0; i--) k[i] = q % cd[b + i], q /= cd[b + i];
        long double ang = 0;
        for (int i = 0; i < r; i++) ang += (long double)((k[i] * t[i]) % len[i]) / (long double)len[i];
        ang *= 2 * M_PI;
        s += xw[2 * (bi * nin + ko)] * cosl(ang) - xw[2 * (bi * nin + ko) + 1] * sinl(ang);
      }
      want[bi * nout + to] = (double)(s / tot);
    }
  int64_t ld = r;
  dfx_tensor *in[2] = {make(ct, nd, d, x), kh_i32(1, &ld, L)}, *out;
  dfx_node *nn = node(real_op(r, false), ct, rt);
  cr_assert_eq(run1(nn, in, 2, &out), DFX_OK, "%s", err);
  cr_assert_eq(out->dtype, rt);
  for (int i = 0; i < nd; i++) cr_assert_eq(out->dims[i], od[i], "dim %d", i);
  char what[128];
  snprintf(what, sizeof what, "%s %s L=%d", real_op(r, false), dfx_dtype_name(rt), L[r - 1]);
  expect_close(out, want, on, tol_of(rt), sum_abs(xw, 2 * cn) / (double)tot, what);
  dfx__tensor_unref(in[0]);
  dfx__tensor_unref(in[1]);
  dfx__tensor_unref(out);
  kh_node_free(nn);
  free(x);
  free(xw);
  free(want);
}

Test(fft, rfft_lengths_and_cropping) {
  dfx_dtype rts[] = {DFX_F32, DFX_F64};
  static const int32_t lens[] = {1, 2, 3, 4, 5, 7, 8, 11, 16, 31, 97, 100, 101, 256, 389};
  for (int t = 0; t < 2; t++)
    for (size_t i = 0; i < sizeof lens / sizeof *lens; i++) {
      int64_t d[2] = {3, lens[i]};
      check_rfft(rts[t], 1, 2, d, &lens[i]);
      d[1] = lens[i] + 3; /* cropped */
      check_rfft(rts[t], 1, 2, d, &lens[i]);
    }
  const int64_t d1[] = {10};
  check_rfft(DFX_F64, 1, 1, d1, (int32_t[]){0}); /* fft_length 0: an empty last dim */
}

Test(fft, rfft_2d_3d) {
  dfx_dtype rts[] = {DFX_F32, DFX_F64};
  for (int t = 0; t < 2; t++) {
    check_rfft(rts[t], 2, 3, (int64_t[]){2, 5, 6}, (int32_t[]){5, 6});
    check_rfft(rts[t], 2, 3, (int64_t[]){2, 7, 9}, (int32_t[]){4, 7}); /* both cropped */
    check_rfft(rts[t], 2, 2, (int64_t[]){3, 13}, (int32_t[]){3, 13});
    check_rfft(rts[t], 3, 4, (int64_t[]){2, 3, 4, 5}, (int32_t[]){3, 4, 5});
    check_rfft(rts[t], 3, 3, (int64_t[]){4, 3, 8}, (int32_t[]){2, 3, 7});
  }
}

Test(fft, irfft_lengths_and_cropping) {
  dfx_dtype rts[] = {DFX_F32, DFX_F64};
  static const int32_t lens[] = {1, 2, 3, 4, 5, 7, 8, 11, 16, 31, 97, 100, 101, 256, 389};
  for (int t = 0; t < 2; t++)
    for (size_t i = 0; i < sizeof lens / sizeof *lens; i++) {
      int64_t d[2] = {3, lens[i] / 2 + 1};
      check_irfft(rts[t], 1, 2, d, &lens[i]);
      d[1] += 4; /* cropped to L/2+1 */
      check_irfft(rts[t], 1, 2, d, &lens[i]);
    }
}

Test(fft, irfft_2d_3d) {
  dfx_dtype rts[] = {DFX_F32, DFX_F64};
  for (int t = 0; t < 2; t++) {
    check_irfft(rts[t], 2, 3, (int64_t[]){2, 5, 4}, (int32_t[]){5, 6});
    check_irfft(rts[t], 2, 3, (int64_t[]){2, 6, 5}, (int32_t[]){4, 7}); /* both cropped */
    check_irfft(rts[t], 2, 2, (int64_t[]){3, 7}, (int32_t[]){3, 13});
    check_irfft(rts[t], 3, 4, (int64_t[]){2, 3, 4, 3}, (int32_t[]){3, 4, 5});
    check_irfft(rts[t], 3, 3, (int64_t[]){4, 3, 8}, (int32_t[]){2, 3, 8});
  }
}

/* IRFFT(RFFT(x)) gives x back, odd and even lengths, 1-D to 3-D. */
Test(fft, real_round_trip) {
  static const int64_t shapes[][3] = {{4, 6, 10}, {3, 5, 9}, {2, 7, 1}};
  for (int s = 0; s < 3; s++)
    for (int r = 1; r <= 3; r++) {
      const int64_t *d = shapes[s];
      int64_t n = count_of(3, d), ld = r;
      double *x = malloc(sizeof(double) * (size_t)n);
      for (int64_t i = 0; i < n; i++) x[i] = rnd();
      int32_t L[3];
      for (int i = 0; i < r; i++) L[i] = (int32_t)d[3 - r + i];
      dfx_tensor *in[2] = {make(DFX_F64, 3, d, x), kh_i32(1, &ld, L)}, *spec, *back;
      dfx_node *f = node(real_op(r, true), DFX_C128, DFX_F64), *b = node(real_op(r, false), DFX_C128, DFX_F64);
      cr_assert_eq(run1(f, in, 2, &spec), DFX_OK, "%s", err);
      dfx_tensor *in2[2] = {spec, in[1]};
      cr_assert_eq(run1(b, in2, 2, &back), DFX_OK, "%s", err);
      expect_close(back, x, n, 1e-13, sum_abs(x, n), "round trip");
      dfx__tensor_unref(in[0]);
      dfx__tensor_unref(in[1]);
      dfx__tensor_unref(spec);
      dfx__tensor_unref(back);
      kh_node_free(f);
      kh_node_free(b);
      free(x);
    }
}

Test(fft, real_empty) {
  /* Empty input, non-empty output: zeros (TF passes empty dims through). */
  int64_t d[] = {2, 0}, one = 1;
  int32_t L = 4;
  dfx_tensor *in[2] = {make(DFX_F32, 2, d, NULL), kh_i32(1, &one, &L)}, *out;
  dfx_node *n = node("RFFT", DFX_C64, DFX_F32);
  cr_assert_eq(run1(n, in, 2, &out), DFX_OK, "%s", err);
  cr_expect_eq(out->dims[0], 2);
  cr_expect_eq(out->dims[1], 3);
  for (int64_t i = 0; i < 12; i++) cr_expect_eq(((float *)out->data)[i], 0.0f);
  dfx__tensor_unref(out);
  dfx__tensor_unref(in[0]);
  kh_node_free(n);
  in[0] = make(DFX_C128, 2, d, NULL);
  n = node("IRFFT", DFX_C128, DFX_F64);
  cr_assert_eq(run1(n, in, 2, &out), DFX_OK, "%s", err);
  cr_expect_eq(out->dims[1], 4);
  for (int64_t i = 0; i < 8; i++) cr_expect_eq(((double *)out->data)[i], 0.0);
  dfx__tensor_unref(out);
  dfx__tensor_unref(in[0]);
  kh_node_free(n);
  /* Empty batch: empty output. */
  d[0] = 0;
  d[1] = 5;
  in[0] = make(DFX_F64, 2, d, NULL);
  n = node("RFFT", DFX_C128, DFX_F64);
  cr_assert_eq(run1(n, in, 2, &out), DFX_OK, "%s", err);
  cr_expect_eq(out->count, 0);
  cr_expect_eq(out->dims[1], 3);
  dfx__tensor_unref(out);
  dfx__tensor_unref(in[0]);
  dfx__tensor_unref(in[1]);
  kh_node_free(n);
}

Test(fft, real_errors) {
  struct {
    const char *op;
    int nd;
    int64_t d[3];
    int64_t nl;
    int32_t L[3];
    const char *msg;
  } cases[] = {
      {"RFFT", 1, {4}, 1, {5}, "Input dimension 0 must have length of at least 5 but got: 4"},
      {"IRFFT", 2, {2, 3}, 1, {6}, "Input dimension 1 must have length of at least 4 but got: 3"},
      {"RFFT2D", 2, {3, 8}, 2, {4, 8}, "Input dimension 0 must have length of at least 4 but got: 3"},
      {"IRFFT2D", 2, {3, 8}, 2, {4, 8}, "Input dimension 0 must have length of at least 4 but got: 3"},
      {"RFFT", 1, {4}, 2, {4, 4}, "fft_length must have shape [1]"},
      {"RFFT3D", 3, {4, 4, 4}, 2, {4, 4}, "fft_length must have shape [3]"},
      {"RFFT", 1, {4}, 1, {-1}, "fft_length[0] must >= 0, but got: -1"},
      {"IRFFT2D", 2, {4, 4}, 2, {4, -3}, "fft_length[1] must >= 0, but got: -3"},
      {"RFFT2D", 1, {4}, 2, {4, 4}, "Input must have rank of at least 2"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    bool fwd = cases[i].op[0] == 'R';
    dfx_tensor *in[2] = {make(fwd ? DFX_F32 : DFX_C64, cases[i].nd, cases[i].d, NULL),
                         kh_i32(1, &cases[i].nl, cases[i].L)},
               *out;
    memset(in[0]->data, 0, in[0]->nbytes);
    dfx_node *n = node(cases[i].op, DFX_C64, DFX_F32);
    cr_expect_eq(run1(n, in, 2, &out), DFX_EINVAL, "%s case %zu", cases[i].op, i);
    cr_expect(strstr(err, cases[i].msg), "case %zu: %s", i, err);
    dfx__tensor_unref(in[0]);
    dfx__tensor_unref(in[1]);
    kh_node_free(n);
  }
}

/* ---- speed, size limits and cancellation ---- */

static double time_fft(dfx_dtype dt, int64_t n) {
  double *x = malloc(sizeof(double) * 2 * (size_t)n);
  for (int64_t i = 0; i < 2 * n; i++) x[i] = rnd();
  dfx_tensor *in = make(dt, 1, &n, x), *out;
  dfx_node *nn = kh_node_new("FFT");
  kh_attr_type(nn, "Tcomplex", dt);
  uint64_t t0 = uv_hrtime();
  cr_assert_eq(run1(nn, &in, 1, &out), DFX_OK, "%s", err);
  double s = (double)(uv_hrtime() - t0) / 1e9;
  /* Spot-check a few bins against the naive sum. */
  for (int64_t k = 0; k < n; k += n / 5 + 1) {
    long double sr = 0, si = 0;
    for (int64_t j = 0; j < n; j++) {
      long double a = -2 * M_PI * (long double)((j * k) % n) / (long double)n;
      sr += x[2 * j] * cosl(a) - x[2 * j + 1] * sinl(a);
      si += x[2 * j] * sinl(a) + x[2 * j + 1] * cosl(a);
    }
    double tol = tol_of(dt) * sum_abs(x, 2 * n);
    cr_expect(fabs(get(out, 2 * k) - (double)sr) <= tol && fabs(get(out, 2 * k + 1) - (double)si) <= tol,
              "n=%lld bin %lld", (long long)n, (long long)k);
  }
  dfx__tensor_unref(in);
  dfx__tensor_unref(out);
  kh_node_free(nn);
  free(x);
  return s;
}

Test(fft, large_lengths_are_fast) {
  /* A quadratic DFT of 2^16 points is 4e9 complex products (seconds); these
   * take milliseconds. The bound is loose for sanitizer builds. */
  int64_t sizes[] = {65536, 65537, 65536 * 3};
  dfx_dtype dts[] = {DFX_C64, DFX_C128};
  for (int t = 0; t < 2; t++)
    for (int i = 0; i < 3; i++) {
      double s = time_fft(dts[t], sizes[i]);
      cr_log_info("FFT %s n=%lld: %.2f ms", dfx_dtype_name(dts[t]), (long long)sizes[i], s * 1e3);
      fprintf(stderr, "FFT %s n=%lld: %.2f ms\n", dfx_dtype_name(dts[t]), (long long)sizes[i], s * 1e3);
      cr_expect(s < 2.0, "n=%lld took %.3f s", (long long)sizes[i], s);
    }
}

Test(fft, cancelled_run_stops) {
  int64_t d[] = {64, 32768};
  dfx_tensor *in = make(DFX_C64, 2, d, NULL), *out = NULL;
  memset(in->data, 0, in->nbytes);
  dfx_node *n = kh_node_new("FFT");
  dfx_step step;
  cr_assert_eq(dfx__step_init(&step), DFX_OK);
  dfx__step_cancel(&step);
  cr_expect_eq(kh_run_step(n, &in, 1, &out, NULL, &step, err, sizeof err), DFX_ECANCELED, "%s", err);
  dfx__step_destroy(&step);
  dfx__tensor_unref(out);
  dfx__tensor_unref(in);
  kh_node_free(n);
}

Test(fft, output_limit_from_fft_length) {
  /* An empty input dim passes any fft_length through; the output size then
   * comes from the value and stops at the tensor limit. */
  int64_t d[] = {4, 0}, one = 1;
  int32_t L = INT32_MAX;
  size_t old = dfx_set_max_tensor_bytes(1 << 20);
  dfx_tensor *in[2] = {make(DFX_F32, 2, d, NULL), kh_i32(1, &one, &L)}, *out;
  dfx_node *n = node("RFFT", DFX_C64, DFX_F32);
  dfx_code c = run1(n, in, 2, &out);
  dfx_set_max_tensor_bytes(old);
  cr_expect_eq(c, DFX_ELIMIT, "%s", err);
  dfx__tensor_unref(in[0]);
  dfx__tensor_unref(in[1]);
  kh_node_free(n);
}
