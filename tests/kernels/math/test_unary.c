/* test_unary.c - unary math, activations and special functions against libm
 * references, complex formulas written out in real arithmetic, and
 * hand-computed TensorFlow values. */
#include "dtype.h"
#include "mt.h"

static const double XS[] = {-2.5, -1.5, -0.5, 0, 0.5, 1.5, 2.5, 0.3, -0.7, 3.75};
#define NX 10

typedef double (*rf)(double);
static double r_neg(double x) { return -x; }
static double r_sqr(double x) { return x * x; }
static double r_rec(double x) { return 1 / x; }
static double r_sign(double x) { return (x > 0) - (x < 0); }
static double r_rsqrt(double x) { return 1 / sqrt(x); }
static double r_sigm(double x) { return 1 / (1 + exp(-x)); }
static double r_relu(double x) { return x < 0 ? 0 : x; }
static double r_relu6(double x) { return x < 0 ? 0 : x > 6 ? 6 : x; }
static double r_elu(double x) { return x < 0 ? expm1(x) : x; }
static double r_selu(double x) {
  return x < 0 ? 1.0507009873554804934193349852946 * 1.6732632423543772848170429916717 * expm1(x)
               : 1.0507009873554804934193349852946 * x;
}
static double r_softplus(double x) { return log1p(exp(x)); }
static double r_softsign(double x) { return x / (1 + fabs(x)); }
static double r_lgamma(double x) { return lgamma(x); }
static double r_isnan(double x) { return isnan(x) != 0; }
static double r_isinf(double x) { return isinf(x) != 0; }
static double r_isfin(double x) { return isfinite(x) != 0; }
static double r_leaky(double x) { return x > 0 ? x : x * (double)0.2f; }
/* Digamma by recurrence up to y >= 20, then its asymptotic series. */
static double r_digamma(double x) {
  double acc = 0;
  for (; x < 20; x += 1) acc -= 1 / x;
  double r = 1 / (x * x);
  return acc + log(x) - 0.5 / x - r * (1.0 / 12 - r * (1.0 / 120 - r * (1.0 / 252 - r / 240)));
}

/* ---- complex references, written out with real arithmetic ---- */
typedef struct {
  double re, im;
} cx;
static cx c_add(cx a, cx b) { return (cx){a.re + b.re, a.im + b.im}; }
static cx c_sub(cx a, cx b) { return (cx){a.re - b.re, a.im - b.im}; }
static cx c_mul(cx a, cx b) { return (cx){a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re}; }
static cx c_div(cx a, cx b) {
  double d = b.re * b.re + b.im * b.im;
  return (cx){(a.re * b.re + a.im * b.im) / d, (a.im * b.re - a.re * b.im) / d};
}
static const cx ONE = {1, 0}, I1 = {0, 1};
static cx c_neg(cx z) { return (cx){-z.re, -z.im}; }
static cx c_sqr(cx z) { return c_mul(z, z); }
static cx c_rec(cx z) { return c_div(ONE, z); }
static cx c_sign(cx z) { return (cx){z.re / hypot(z.re, z.im), z.im / hypot(z.re, z.im)}; }
static cx c_exp(cx z) { return (cx){exp(z.re) * cos(z.im), exp(z.re) * sin(z.im)}; }
static cx c_log(cx z) { return (cx){log(hypot(z.re, z.im)), atan2(z.im, z.re)}; }
static cx c_sqrt(cx z) {
  double r = hypot(z.re, z.im);
  return (cx){sqrt((r + z.re) / 2), copysign(sqrt((r - z.re) / 2), z.im)};
}
static cx c_rsqrt(cx z) { return c_rec(c_sqrt(z)); }
static cx c_sin(cx z) { return (cx){sin(z.re) * cosh(z.im), cos(z.re) * sinh(z.im)}; }
static cx c_cos(cx z) { return (cx){cos(z.re) * cosh(z.im), -sin(z.re) * sinh(z.im)}; }
static cx c_tan(cx z) { return c_div(c_sin(z), c_cos(z)); }
static cx c_sinh(cx z) { return (cx){sinh(z.re) * cos(z.im), cosh(z.re) * sin(z.im)}; }
static cx c_cosh(cx z) { return (cx){cosh(z.re) * cos(z.im), sinh(z.re) * sin(z.im)}; }
static cx c_tanh(cx z) { return c_div(c_sinh(z), c_cosh(z)); }
/* asin z = -i log(iz + sqrt(1 - z^2)); the others likewise by logarithms. */
static cx c_asin(cx z) { return c_mul(c_neg(I1), c_log(c_add(c_mul(I1, z), c_sqrt(c_sub(ONE, c_sqr(z)))))); }
static cx c_acos(cx z) { return c_sub((cx){M_PI / 2, 0}, c_asin(z)); }
static cx c_atan(cx z) {
  cx l = c_sub(c_log(c_sub(ONE, c_mul(I1, z))), c_log(c_add(ONE, c_mul(I1, z))));
  return c_mul((cx){0, 0.5}, l);
}
static cx c_asinh(cx z) { return c_log(c_add(z, c_sqrt(c_add(c_sqr(z), ONE)))); }
static cx c_acosh(cx z) { return c_log(c_add(z, c_mul(c_sqrt(c_add(z, ONE)), c_sqrt(c_sub(z, ONE))))); }
static cx c_atanh(cx z) { return c_mul((cx){0.5, 0}, c_sub(c_log(c_add(ONE, z)), c_log(c_sub(ONE, z)))); }
static cx c_sigm(cx z) { return c_rec(c_add(ONE, c_exp(c_neg(z)))); }

typedef cx (*cf)(cx);
static const struct {
  const char *op;
  rf f;
  int domain; /* 0 any, 1 x > 0, 2 |x| < 1, 3 x >= 1 */
  cf c;       /* complex reference, for ops that declare complex */
  bool to_bool;
} UN[] = {
    {"Abs", fabs, 0, NULL, 0},          {"Neg", r_neg, 0, c_neg, 0},        {"Square", r_sqr, 0, c_sqr, 0},
    {"Reciprocal", r_rec, 0, c_rec, 0}, {"Inv", r_rec, 0, c_rec, 0},        {"Sign", r_sign, 0, c_sign, 0},
    {"Sqrt", sqrt, 1, c_sqrt, 0},       {"Rsqrt", r_rsqrt, 1, c_rsqrt, 0},  {"Exp", exp, 0, c_exp, 0},
    {"Expm1", expm1, 0, NULL, 0},       {"Log", log, 1, c_log, 0},          {"Log1p", log1p, 1, NULL, 0},
    {"Sin", sin, 0, c_sin, 0},          {"Cos", cos, 0, c_cos, 0},          {"Tan", tan, 0, c_tan, 0},
    {"Asin", asin, 2, c_asin, 0},       {"Acos", acos, 2, c_acos, 0},       {"Atan", atan, 0, c_atan, 0},
    {"Sinh", sinh, 0, c_sinh, 0},       {"Cosh", cosh, 0, c_cosh, 0},       {"Tanh", tanh, 0, c_tanh, 0},
    {"Asinh", asinh, 0, c_asinh, 0},    {"Acosh", acosh, 3, c_acosh, 0},    {"Atanh", atanh, 2, c_atanh, 0},
    {"Sigmoid", r_sigm, 0, c_sigm, 0},  {"Lgamma", r_lgamma, 1, NULL, 0},   {"Digamma", r_digamma, 1, NULL, 0},
    {"Erf", erf, 0, NULL, 0},           {"Erfc", erfc, 0, NULL, 0},         {"Floor", floor, 0, NULL, 0},
    {"Ceil", ceil, 0, NULL, 0},         {"Rint", rint, 0, NULL, 0},         {"Round", rint, 0, NULL, 0},
    {"Relu", r_relu, 0, NULL, 0},       {"Relu6", r_relu6, 0, NULL, 0},     {"Elu", r_elu, 0, NULL, 0},
    {"Selu", r_selu, 0, NULL, 0},       {"Softplus", r_softplus, 0, NULL, 0}, {"Softsign", r_softsign, 0, NULL, 0},
    {"LeakyRelu", r_leaky, 0, NULL, 0}, {"IsNan", r_isnan, 0, NULL, 1},     {"IsInf", r_isinf, 0, NULL, 1},
    {"IsFinite", r_isfin, 0, NULL, 1},
};

static bool in_domain(int dom, double x) {
  return dom == 0 || (dom == 1 && x > 0) || (dom == 2 && fabs(x) < 1) || (dom == 3 && x >= 1);
}

/* Every unary op on every dtype it declares: floats on XS (within the op's
 * domain), integers on small values (the reference truncated), complex on
 * XS * (1 - i/2), which avoids every branch cut. */
Test(unary, every_declared_dtype) {
  static const double XI[] = {-3, -2, -1, 0, 1, 2, 3, 7, 11}, XU[] = {0, 1, 2, 3, 7, 11};
  int runs = 0;
  for (size_t k = 0; k < sizeof UN / sizeof UN[0]; k++) {
    MT_FOR_DTYPES(t, mt_declared(UN[k].op, "T")) {
      const bool cpx = mt_is_complex(t), in = dfx__dtype_is_int(t);
      const double *src = in ? (mt_is_unsigned(t) ? XU : XI) : XS;
      const int nsrc = in ? (mt_is_unsigned(t) ? 6 : 9) : NX;
      double xs[NX], want[NX], wim[NX];
      int n = 0;
      for (int i = 0; i < nsrc; i++) {
        const bool zero_bad = UN[k].f == r_rec || cpx;
        if ((cpx || in_domain(UN[k].domain, src[i])) && !(src[i] == 0 && zero_bad)) xs[n++] = src[i];
      }
      int64_t d[2] = {1, n};
      dfx_tensor *x = mt_tensor(t, 2, d, xs), *o;
      for (int i = 0; i < n; i++) {
        if (cpx) {
          cx z;
          mt_cget(x, i, &z.re, &z.im);
          cx w = UN[k].c(z);
          want[i] = w.re;
          wim[i] = w.im;
        } else {
          want[i] = UN[k].f(dfx__tensor_get_f64(x, i));
          if (in) want[i] = trunc(want[i]);
        }
      }
      char err[256], what[64];
      snprintf(what, sizeof what, "%s/%s", UN[k].op, dfx_dtype_name(t));
      dfx_tensor *in1[1] = {x};
      cr_assert_eq(mt_run(UN[k].op, t, in1, 1, &o, err, sizeof err), DFX_OK, "%s: %s", what, err);
      mt_expect_shape(o, 2, d);
      cr_assert_eq(o->dtype, UN[k].to_bool ? DFX_BOOL : t, "%s", what);
      if (cpx)
        mt_expect_cvals(o, want, wim, t == DFX_C64 ? 2e-5 : 1e-10, what);
      else
        mt_expect_vals(o, want, t == DFX_F64 ? 1e-14 : t == DFX_F32 ? 1e-6 : mt_tol(t), what);
      dfx__tensor_unref(o);
      dfx__tensor_unref(x);
      runs++;
    }
  }
  cr_expect_geq(runs, 200, "%d op/dtype pairs", runs);
}

Test(unary, round_half_to_even) {
  int64_t d[1] = {8};
  const double xv[] = {0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.4, -2.6};
  const double w[] = {0, 2, 2, -0.0, -2, -2, 2, -3};
  dfx_tensor *x = mt_tensor(DFX_F32, 1, d, xv), *o, *in[1] = {x};
  char err[256];
  cr_assert_eq(mt_run("Round", DFX_F32, in, 1, &o, err, sizeof err), DFX_OK);
  mt_expect_vals(o, w, 0, "Round");
  dfx__tensor_unref(o);
  dfx__tensor_unref(x);
}

Test(unary, integer_ops_wrap) {
  int64_t d[1] = {4};
  int32_t xv[4] = {INT32_MIN, -5, 0, 7};
  dfx_tensor *x = kh_i32(1, d, xv), *o, *in[1] = {x};
  char err[256];
  cr_assert_eq(mt_run("Abs", DFX_I32, in, 1, &o, err, sizeof err), DFX_OK);
  const int32_t wa[] = {INT32_MIN, 5, 0, 7};
  for (int i = 0; i < 4; i++) cr_expect_eq(((int32_t *)o->data)[i], wa[i]);
  dfx__tensor_unref(o);
  cr_assert_eq(mt_run("Neg", DFX_I32, in, 1, &o, err, sizeof err), DFX_OK);
  const int32_t wn[] = {INT32_MIN, 5, 0, -7};
  for (int i = 0; i < 4; i++) cr_expect_eq(((int32_t *)o->data)[i], wn[i]);
  dfx__tensor_unref(o);
  cr_assert_eq(mt_run("Sign", DFX_I32, in, 1, &o, err, sizeof err), DFX_OK);
  const int32_t ws[] = {-1, -1, 0, 1};
  for (int i = 0; i < 4; i++) cr_expect_eq(((int32_t *)o->data)[i], ws[i]);
  dfx__tensor_unref(o);
  cr_assert_eq(mt_run("Square", DFX_I32, in, 1, &o, err, sizeof err), DFX_OK);
  const int32_t wq[] = {0, 25, 0, 49};
  for (int i = 0; i < 4; i++) cr_expect_eq(((int32_t *)o->data)[i], wq[i]);
  dfx__tensor_unref(o);
  cr_assert_eq(mt_run("Relu", DFX_I32, in, 1, &o, err, sizeof err), DFX_OK);
  const int32_t wr[] = {0, 0, 0, 7};
  for (int i = 0; i < 4; i++) cr_expect_eq(((int32_t *)o->data)[i], wr[i]);
  dfx__tensor_unref(o);
  cr_assert_eq(mt_run("Relu6", DFX_I32, in, 1, &o, err, sizeof err), DFX_OK);
  const int32_t wr6[] = {0, 0, 0, 6};
  for (int i = 0; i < 4; i++) cr_expect_eq(((int32_t *)o->data)[i], wr6[i]);
  dfx__tensor_unref(o);
  /* Floats only. */
  cr_expect_eq(mt_run("Exp", DFX_I32, in, 1, &o, err, sizeof err), DFX_EINVAL);
  dfx__tensor_unref(x);
}

Test(unary, classification_and_nan) {
  int64_t d[1] = {5};
  const double xv[] = {NAN, INFINITY, -INFINITY, 0, -3};
  const dfx_dtype ts[] = {DFX_F32, DFX_F64, DFX_F16, DFX_BF16};
  for (int k = 0; k < 4; k++) {
    dfx_tensor *x = mt_tensor(ts[k], 1, d, xv), *o, *in[1] = {x};
    char err[256];
    const uint8_t wn[] = {1, 0, 0, 0, 0}, wi[] = {0, 1, 1, 0, 0}, wf[] = {0, 0, 0, 1, 1};
    cr_assert_eq(mt_run("IsNan", ts[k], in, 1, &o, err, sizeof err), DFX_OK);
    cr_assert_eq(o->dtype, DFX_BOOL);
    for (int i = 0; i < 5; i++) cr_expect_eq(((uint8_t *)o->data)[i], wn[i]);
    dfx__tensor_unref(o);
    cr_assert_eq(mt_run("IsInf", ts[k], in, 1, &o, err, sizeof err), DFX_OK);
    for (int i = 0; i < 5; i++) cr_expect_eq(((uint8_t *)o->data)[i], wi[i]);
    dfx__tensor_unref(o);
    cr_assert_eq(mt_run("IsFinite", ts[k], in, 1, &o, err, sizeof err), DFX_OK);
    for (int i = 0; i < 5; i++) cr_expect_eq(((uint8_t *)o->data)[i], wf[i]);
    dfx__tensor_unref(o);
    cr_assert_eq(mt_run("Relu", ts[k], in, 1, &o, err, sizeof err), DFX_OK);
    const double wr[] = {NAN, INFINITY, 0, 0, 0};
    mt_expect_vals(o, wr, 0, "Relu nan");
    dfx__tensor_unref(o);
    cr_assert_eq(mt_run("Sign", ts[k], in, 1, &o, err, sizeof err), DFX_OK);
    const double ws[] = {NAN, 1, -1, 0, -1};
    mt_expect_vals(o, ws, 0, "Sign nan");
    dfx__tensor_unref(o);
    dfx__tensor_unref(x);
  }
}

Test(unary, leaky_relu_alpha) {
  int64_t d[1] = {3};
  const double xv[] = {-2, 0, 3};
  dfx_tensor *x = mt_tensor(DFX_F32, 1, d, xv), *in[1] = {x}, *outs[1];
  char err[256];
  int nout;
  dfx_node *n = kh_node_new("LeakyRelu");
  cr_assert_eq(kh_run(n, in, 1, outs, &nout, err, sizeof err), DFX_OK, "%s", err); /* T defaults to float */
  const double w1[] = {-0.4, 0, 3};
  mt_expect_vals(outs[0], w1, 1e-7, "LeakyRelu default");
  dfx__tensor_unref(outs[0]);
  kh_attr_float(n, "alpha", 0.5f);
  cr_assert_eq(kh_run(n, in, 1, outs, &nout, err, sizeof err), DFX_OK, "%s", err);
  const double w2[] = {-1, 0, 3};
  mt_expect_vals(outs[0], w2, 1e-7, "LeakyRelu 0.5");
  dfx__tensor_unref(outs[0]);
  kh_node_free(n);
  dfx__tensor_unref(x);
}

Test(unary, softplus_tails_and_empty) {
  int64_t d[1] = {4};
  const double xv[] = {-50, 50, 20, -20};
  dfx_tensor *x = mt_tensor(DFX_F32, 1, d, xv), *o, *in[1] = {x};
  char err[256];
  cr_assert_eq(mt_run("Softplus", DFX_F32, in, 1, &o, err, sizeof err), DFX_OK);
  const double w[] = {exp(-50.0), 50, 20, exp(-20.0)};
  mt_expect_vals(o, w, 1e-6, "Softplus");
  dfx__tensor_unref(o);
  dfx__tensor_unref(x);
  int64_t d0[2] = {0, 3};
  x = mt_tensor(DFX_F64, 2, d0, NULL);
  in[0] = x;
  cr_assert_eq(mt_run("Tanh", DFX_F64, in, 1, &o, err, sizeof err), DFX_OK);
  mt_expect_shape(o, 2, d0);
  dfx__tensor_unref(o);
  dfx__tensor_unref(x);
}

/* ---- special functions (values from scipy.special / TF) ---- */

static dfx_tensor *run_special(const char *op, dfx_dtype t, int n, const double *a, const double *b) {
  int64_t d[1] = {n};
  dfx_tensor *in[2] = {mt_tensor(t, 1, d, a), mt_tensor(t, 1, d, b)}, *o;
  char err[256];
  cr_assert_eq(mt_run(op, t, in, 2, &o, err, sizeof err), DFX_OK, "%s: %s", op, err);
  dfx__tensor_unref(in[0]);
  dfx__tensor_unref(in[1]);
  return o;
}

Test(special, digamma_values) {
  int64_t d[1] = {6};
  const double xv[] = {1, 0.5, 3.07256962, 10.5, -0.5, 0};
  const double w[] = {-0.5772156649015329, -1.9635100260214235, 0.95104617, 2.3030010342185, 0.03648997397857652,
                      INFINITY};
  dfx_tensor *x = mt_tensor(DFX_F64, 1, d, xv), *o, *in[1] = {x};
  char err[256];
  cr_assert_eq(mt_run("Digamma", DFX_F64, in, 1, &o, err, sizeof err), DFX_OK);
  mt_expect_vals(o, w, 1e-8, "Digamma");
  dfx__tensor_unref(o);
  dfx__tensor_unref(x);
}

Test(special, igamma_igammac) {
  const double a[] = {1, 2, 0.5, 5, 3, 1, -1, 2};
  const double x[] = {1, 3, 2, 1, 10, 0, 1, INFINITY};
  /* scipy.special.gammainc */
  const double p[] = {0.6321205588285577, 0.8008517265285442, 0.9544997361036416, 0.003659846827343712,
                      0.9972306042844884, 0, NAN, 1};
  double q[8];
  for (int i = 0; i < 8; i++) q[i] = 1 - p[i];
  for (int k = 0; k < 2; k++)
    MT_FOR_DTYPES(t, mt_declared(k ? "Igammac" : "Igamma", "T")) {
      dfx_tensor *o = run_special(k ? "Igammac" : "Igamma", t, 8, a, x);
      cr_expect_eq(o->dtype, t);
      mt_expect_vals(o, k ? q : p, t == DFX_F64 ? 1e-12 : mt_tol(t), dfx_dtype_name(t));
      dfx__tensor_unref(o);
    }
}

Test(special, zeta_polygamma) {
  const double x[] = {2, 3, 2, 1, 0.5, 4};
  const double q[] = {1, 1, 2, 1, 1, 0.5};
  const double wz[] = {1.6449340668482264, 1.2020569031595942, 0.6449340668482264, INFINITY, NAN,
                       16.234848505667074};
  const double n[] = {0, 1, 2, 3, 1.5}, px[] = {1, 1, 2, 0.5, 1};
  /* scipy.special.polygamma */
  const double wp[] = {-0.5772156649015329, 1.6449340668482264, -0.4041138063191885, 97.40909103400242, NAN};
  MT_FOR_DTYPES(t, mt_declared("Zeta", "T")) {
    dfx_tensor *o = run_special("Zeta", t, 6, x, q);
    mt_expect_vals(o, wz, t == DFX_F64 ? 1e-12 : mt_tol(t), "Zeta");
    dfx__tensor_unref(o);
  }
  MT_FOR_DTYPES(t, mt_declared("Polygamma", "T")) {
    dfx_tensor *o = run_special("Polygamma", t, 5, n, px);
    mt_expect_vals(o, wp, t == DFX_F64 ? 1e-12 : mt_tol(t), "Polygamma");
    dfx__tensor_unref(o);
  }
}

Test(special, betainc_broadcast) {
  int64_t ds[1] = {4};
  const double av[] = {1}, bv[] = {2, 0.5, 3, 1}, xv[] = {0.5, 0.3, 0.9, 0};
  dfx_tensor *in[3] = {mt_tensor(DFX_F64, 0, NULL, av), mt_tensor(DFX_F64, 1, ds, bv), mt_tensor(DFX_F64, 1, ds, xv)};
  dfx_tensor *o;
  char err[256];
  cr_assert_eq(mt_run("Betainc", DFX_F64, in, 3, &o, err, sizeof err), DFX_OK, "%s", err);
  /* I_x(1, b) = 1 - (1-x)^b */
  double w[4];
  for (int i = 0; i < 4; i++) w[i] = 1 - pow(1 - xv[i], bv[i]);
  mt_expect_vals(o, w, 1e-12, "Betainc");
  dfx__tensor_unref(o);
  for (int i = 0; i < 3; i++) dfx__tensor_unref(in[i]);
  /* scipy.special.betainc(2, 3, 0.4) = 0.5248 */
  const double a2[] = {2}, b2[] = {3}, x2[] = {0.4};
  dfx_tensor *in2[3] = {mt_tensor(DFX_F32, 0, NULL, a2), mt_tensor(DFX_F32, 0, NULL, b2), mt_tensor(DFX_F32, 0, NULL, x2)};
  cr_assert_eq(mt_run("Betainc", DFX_F32, in2, 3, &o, err, sizeof err), DFX_OK, "%s", err);
  const double w2[] = {0.5248};
  mt_expect_vals(o, w2, 1e-6, "Betainc f32");
  dfx__tensor_unref(o);
  for (int i = 0; i < 3; i++) dfx__tensor_unref(in2[i]);
}

/* Float Tanh is TF's rational approximation: a dense sweep stays within a few
 * ulp of the exact value, saturates to exactly +-1, keeps tiny inputs (and
 * -0) as they are, is odd, and passes NaN through. */
Test(unary, tanh_float_approximation) {
  enum { N = 20001 };
  static float xv[N + 6];
  for (int i = 0; i <= N / 2; i++) { /* a grid symmetric about 0, to test oddness */
    xv[i] = -10.0f + 20.0f * (float)i / (N - 1);
    xv[N - 1 - i] = -xv[i];
  }
  const float special[6] = {1e-5f, -0.0f, 30.0f, -INFINITY, INFINITY, NAN};
  memcpy(xv + N, special, sizeof special);
  int64_t d[1] = {N + 6};
  dfx_tensor *x = dfx__tensor_alloc(DFX_F32, 1, d, NULL), *o, *in[1] = {x};
  memcpy(x->data, xv, sizeof xv);
  char err[256];
  cr_assert_eq(mt_run("Tanh", DFX_F32, in, 1, &o, err, sizeof err), DFX_OK, "%s", err);
  const float *y = o->data;
  double worst = 0;
  for (int i = 0; i < N; i++) {
    double want = tanh((double)xv[i]), ulp = nextafterf((float)fabs(want), INFINITY) - (float)fabs(want);
    double e = fabs(y[i] - want) / ulp;
    if (e > worst) worst = e;
    cr_assert(y[i] >= -1.0f && y[i] <= 1.0f, "tanh(%g) = %g", xv[i], y[i]);
    cr_assert_eq(y[N - 1 - i], -y[i], "not odd at %g", xv[i]);
  }
  cr_assert(worst <= 8, "worst error %.2f ulp", worst); /* about 6 ulp near |x| = 5.9, as in TF */
  cr_assert_eq(y[N], 1e-5f);
  cr_assert(y[N + 1] == 0 && signbit(y[N + 1]), "tanh(-0) = %g", y[N + 1]);
  cr_assert_eq(y[N + 2], 1.0f);
  cr_assert_eq(y[N + 3], -1.0f);
  cr_assert_eq(y[N + 4], 1.0f);
  cr_assert(isnan(y[N + 5]));
  dfx__tensor_unref(o);
  dfx__tensor_unref(x);
}
