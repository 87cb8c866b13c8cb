/* special.c - special functions (digamma, incomplete gamma, Hurwitz zeta,
 * polygamma, incomplete beta) and their broadcasting ops Igamma, Igammac,
 * Zeta, Polygamma (2 inputs) and Betainc (3 inputs). Series and continued
 * fractions follow Cephes, as Eigen does; float and half inputs are evaluated
 * in double. */
#include <float.h>
#include <math.h>

#include "ew.h"
#include "special.h"

/* Cephes' constants: MACHEP is 2^-53 (half an ulp of 1), MAXLOG ln(DBL_MAX);
 * BIG and BIGINV (2^52, 2^-52) rescale a continued fraction's terms before
 * they overflow, which leaves their ratio unchanged. */
#define MACHEP 1.11022302462515654042e-16
#define MAXLOG 7.09782712893383996843e2
#define BIG 4.503599627370496e15
#define BIGINV 2.22044604925031308085e-16

double dfx__lgamma(double x) {
  int sign;
  /* lgamma_r, not lgamma: lgamma writes the global signgam, a data race when
   * kernels run on several threads. */
  return lgamma_r(x, &sign);
}

double dfx__digamma(double x) {
  static const double A[] = {8.33333333333333333333E-2, -2.10927960927960927961E-2, 7.57575757575757575758E-3,
                             -4.16666666666666666667E-3, 3.96825396825396825397E-3, -8.33333333333333333333E-3,
                             8.33333333333333333333E-2};
  if (isnan(x)) return x;
  if (x == INFINITY) return x;
  double nz = 0;
  int negative = 0;
  /* Reflection: psi(x) = psi(1 - x) - pi / tan(pi x). tan has period pi, so
   * only the fractional part nz matters; the poles at 0, -1, -2, ... are +inf. */
  if (x <= 0) {
    if (isinf(x)) return NAN;
    double p = floor(x);
    if (p == x) return INFINITY;
    negative = 1;
    nz = x - p;
    if (nz != 0.5) {
      if (nz > 0.5) {
        p += 1;
        nz = x - p;
      }
      nz = M_PI / tan(M_PI * nz);
    } else {
      nz = 0;
    }
    x = 1 - x;
  }
  double y;
  /* psi(n) = 1 + 1/2 + ... + 1/(n-1) - gamma (Euler-Mascheroni) for small n;
   * otherwise climb with psi(x) = psi(x + 1) - 1/x to s >= 10 and use the
   * asymptotic series ln s - 1/(2s) - sum B_2k / (2k s^2k). */
  if (x <= 10 && x == floor(x)) {
    y = 0;
    int n = (int)x;
    for (int i = 1; i < n; i++) y += 1.0 / i;
    y -= 0.57721566490153286061;
  } else {
    double s = x, w = 0;
    while (s < 10) {
      w += 1 / s;
      s += 1;
    }
    double z = 0;
    if (s < 1e17) {
      double zz = 1 / (s * s), pol = 0;
      for (int i = 0; i < 7; i++) pol = pol * zz + A[i];
      z = zz * pol;
    }
    y = log(s) - (0.5 / s) - z - w;
  }
  return negative ? y - nz : y;
}

/* Series for P(a, x), valid for x <= a or x < 1. */
static double igam_series(double a, double x) {
  double ax = a * log(x) - x - dfx__lgamma(a);
  if (ax < -MAXLOG) return 0;
  ax = exp(ax);
  double r = a, c = 1, ans = 1;
  int iter = 0;
  /* Capped like igamc_cf (and Eigen's series): for a huge `a`, r + 1 == r and
   * the terms stop shrinking, so the loop would never end. */
  do {
    r += 1;
    c *= x / r;
    ans += c;
  } while (c / ans > MACHEP && ++iter < 2000);
  return ans * ax / a;
}

/* Continued fraction for Q(a, x), valid for x > a and x >= 1. */
static double igamc_cf(double a, double x) {
  double ax = a * log(x) - x - dfx__lgamma(a);
  if (ax < -MAXLOG) return 0;
  ax = exp(ax);
  double y = 1 - a, z = x + y + 1, c = 0;
  double pkm2 = 1, qkm2 = x, pkm1 = x + 1, qkm1 = z * x, ans = pkm1 / qkm1, t;
  int iter = 0;
  do {
    c += 1;
    y += 1;
    z += 2;
    double yc = y * c, pk = pkm1 * z - pkm2 * yc, qk = qkm1 * z - qkm2 * yc;
    if (qk != 0) {
      double r = pk / qk;
      t = fabs((ans - r) / r);
      ans = r;
    } else {
      t = 1;
    }
    pkm2 = pkm1;
    pkm1 = pk;
    qkm2 = qkm1;
    qkm1 = qk;
    if (fabs(pk) > BIG) {
      pkm2 *= BIGINV;
      pkm1 *= BIGINV;
      qkm2 *= BIGINV;
      qkm1 *= BIGINV;
    }
  } while (t > MACHEP && ++iter < 2000);
  return ans * ax;
}

double dfx__igamma(double a, double x) {
  if (isnan(a) || isnan(x)) return NAN;
  if (x == 0) return 0;
  if (x < 0 || a <= 0) return NAN;
  if (isinf(x)) return 1;
  /* Where the series for P converges slowly (x large against a), Q's continued
   * fraction is fast, and P = 1 - Q. igammac below mirrors the choice. */
  if (x > 1 && x > a) return 1 - igamc_cf(a, x);
  return igam_series(a, x);
}

double dfx__igammac(double a, double x) {
  if (isnan(a) || isnan(x)) return NAN;
  if (x < 0 || a <= 0) return NAN;
  if (isinf(x)) return 0;
  if (x < 1 || x < a) return 1 - igam_series(a, x);
  return igamc_cf(a, x);
}

double dfx__zeta(double x, double q) {
  static const double A[] = {12.0,
                             -720.0,
                             30240.0,
                             -1209600.0,
                             47900160.0,
                             -1.8924375803183791606e9,
                             7.47242496e10,
                             -2.950130727918164224e12,
                             1.1646782814350067249e14,
                             -4.5979787224074726105e15,
                             1.8152105401943546773e17,
                             -7.1661652561756670113e18};
  if (isnan(x) || isnan(q)) return NAN;
  if (x == 1) return INFINITY;
  if (x < 1) return NAN;
  if (q <= 0) {
    if (q == floor(q)) return INFINITY;
    /* q <= 0: a non-integer x would need (q + k)^-x of a negative base. */
    if (x != floor(x)) return NAN;
  }
  double s = pow(q, -x), a = q, b = 0;
  int i = 0;
  /* Euler-Maclaurin, as Cephes' zeta: sum terms directly until q + k > 9, then
   * add the tail integral, minus half the last term, and the Bernoulli
   * corrections; A[i] are (2i+2)! / B_(2i+2). */
  while (i < 9 || a <= 9) {
    i++;
    a += 1;
    b = pow(a, -x);
    s += b;
    if (fabs(b / s) < MACHEP) return s;
  }
  double w = a, k = 0;
  s += b * w / (x - 1);
  s -= 0.5 * b;
  a = 1;
  for (i = 0; i < 12; i++) {
    a *= x + k;
    b /= w;
    double t = a * b / A[i];
    s += t;
    if (fabs(t / s) < MACHEP) return s;
    k += 1;
    a *= x + k;
    b /= w;
    k += 1;
  }
  return s;
}

double dfx__polygamma(double n, double x) {
  if (isnan(n) || isnan(x)) return NAN;
  if (n != floor(n)) return NAN;
  if (n == 0) return dfx__digamma(x);
  double np1 = n + 1;
  /* psi^(n)(x) = (-1)^(n+1) n! zeta(n + 1, x), with n! as exp(lgamma(n + 1)):
   * no loop over n, and a huge n gives inf. */
  double fact = exp(dfx__lgamma(np1));
  return pow(-1.0, np1) * fact * dfx__zeta(np1, x);
}

/* Continued fraction for the incomplete beta (modified Lentz). */
static double betacf(double a, double b, double x) {
  const double tiny = 1e-300;
  double qab = a + b, qap = a + 1, qam = a - 1, c = 1, d = 1 - qab * x / qap;
  if (fabs(d) < tiny) d = tiny;
  d = 1 / d;
  double h = d;
  for (int m = 1; m <= 10000; m++) {
    double m2 = 2.0 * m, aa = m * (b - m) * x / ((qam + m2) * (a + m2));
    d = 1 + aa * d;
    if (fabs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (fabs(c) < tiny) c = tiny;
    d = 1 / d;
    h *= d * c;
    aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
    d = 1 + aa * d;
    if (fabs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (fabs(c) < tiny) c = tiny;
    d = 1 / d;
    double del = d * c;
    h *= del;
    if (fabs(del - 1) < 1e-16) break;
  }
  return h;
}

double dfx__betainc(double a, double b, double x) {
  if (isnan(a) || isnan(b) || isnan(x)) return NAN;
  if (a <= 0 || b <= 0 || x < 0 || x > 1) return NAN;
  if (x == 0) return 0;
  if (x == 1) return 1;
  /* The prefactor x^a (1-x)^b / B(a, b) in logs (log1p keeps 1 - x exact
   * near 0). The continued fraction converges fast for x below (a+1)/(a+b+2);
   * above, the symmetry I_x(a, b) = 1 - I_(1-x)(b, a) swaps into that range. */
  double lbt = dfx__lgamma(a + b) - dfx__lgamma(a) - dfx__lgamma(b) + a * log(x) + b * log1p(-x);
  double bt = exp(lbt);
  if (x < (a + 1) / (a + b + 2)) return bt * betacf(a, b, x) / a;
  return 1 - bt * betacf(b, a, 1 - x) / b;
}

/* ---- ops ---- */

/* Elements between cancellation polls: one element can cost thousands of
 * series terms (betacf, igamma, zeta below). */
#define SPECIAL_GRAIN 256
/* Zeta(x, q) sums (q + k)^-x one term at a time until q + k > 9: for q far
 * below zero that is -q terms for one element. Past this many the kernel
 * fails, naming the value, instead of running for hours. */
#define ZETA_MAX_TERMS 65536.0

static bool zeta_too_long(double x, double q) {
  return q < -ZETA_MAX_TERMS && q != floor(q) && x > 1 && x == floor(x);
}
/* polygamma(n, x) is zeta(n + 1, x) for n >= 1. */
static bool polygamma_too_long(double n, double x) { return n >= 1 && zeta_too_long(n + 1, x); }

/* Element access for the declared dtypes (float types); half types are
 * computed in double and rounded once. */
static inline double ld(dfx_dtype t, const void *p, int64_t i) {
  switch (t) {
    case DFX_F32: return ((const float *)p)[i];
    case DFX_F16: return dfx__f16_to_f32(((const uint16_t *)p)[i]);
    case DFX_BF16: return dfx__bf16_to_f32(((const uint16_t *)p)[i]);
    default: return ((const double *)p)[i];
  }
}
static inline void st(dfx_dtype t, void *p, int64_t i, double v) {
  switch (t) {
    case DFX_F32: ((float *)p)[i] = (float)v; break;
    case DFX_F16: ((uint16_t *)p)[i] = dfx__f32_to_f16((float)v); break;
    case DFX_BF16: ((uint16_t *)p)[i] = dfx__f32_to_bf16((float)v); break;
    default: ((double *)p)[i] = v; break;
  }
}

/* z = f(x, y) with broadcasting; too_long (optional) flags an element whose
 * series would not end in bounded time. */
static dfx_code run2(dfx_kctx *ctx, double (*f)(double, double), bool (*too_long)(double, double)) {
  const dfx_tensor *x = ctx->in[0], *y = ctx->in[1];
  const dfx_dtype t = (dfx_dtype)x->dtype;
  dfx_bcast bc;
  if (!dfx__bcast_init(&bc, 2, (const dfx_tensor *const *)ctx->in)) return dfx__bcast_fail(ctx, x, y);
  dfx_tensor *o = dfx__kctx_alloc(ctx, 0, t, bc.ndims, bc.dims);
  if (!o) return dfx_status_code(ctx->st);
  const int64_t n = bc.count, grain = dfx__bcast_grain(&bc, SPECIAL_GRAIN);
  double bad_a = 0, bad_b = 0;
  bool bad = false;
  for (int64_t lo = 0; lo < n && !bad; lo += grain) {
    dfx_code c = lo > 0 ? dfx__kctx_poll(ctx) : DFX_OK;
    if (c != DFX_OK) return c;
    EW_LOOP2(&bc, lo, n - lo > grain ? lo + grain : n, {
      const double a = ld(t, x->data, ia), b = ld(t, y->data, ib);
      if (too_long && !bad && too_long(a, b)) {
        bad = true;
        bad_a = a;
        bad_b = b;
      }
      st(t, o->data, io, bad ? 0 : f(a, b));
    });
  }
  if (bad)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "%s(%g, %g) needs more than %g series terms", ctx->node->op, bad_a, bad_b,
                          ZETA_MAX_TERMS);
  return DFX_OK;
}

static dfx_code k_igamma(dfx_kctx *ctx) { return run2(ctx, dfx__igamma, NULL); }
static dfx_code k_igammac(dfx_kctx *ctx) { return run2(ctx, dfx__igammac, NULL); }
static dfx_code k_zeta(dfx_kctx *ctx) { return run2(ctx, dfx__zeta, zeta_too_long); }
static dfx_code k_polygamma(dfx_kctx *ctx) { return run2(ctx, dfx__polygamma, polygamma_too_long); }

static dfx_code k_betainc(dfx_kctx *ctx) {
  const dfx_tensor *a = ctx->in[0], *b = ctx->in[1], *x = ctx->in[2];
  const dfx_dtype t = (dfx_dtype)a->dtype;
  dfx_bcast bc;
  if (!dfx__bcast_init(&bc, 3, (const dfx_tensor *const *)ctx->in)) {
    char s1[128], s2[128], s3[128];
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Shapes of a, b and x are inconsistent: %s vs. %s vs. %s",
                          DFX_SHAPE_STR(a, s1), DFX_SHAPE_STR(b, s2), DFX_SHAPE_STR(x, s3));
  }
  dfx_tensor *o = dfx__kctx_alloc(ctx, 0, t, bc.ndims, bc.dims);
  if (!o) return dfx_status_code(ctx->st);
  const int64_t n = bc.count, grain = dfx__bcast_grain(&bc, SPECIAL_GRAIN);
  for (int64_t lo = 0; lo < n; lo += grain) {
    dfx_code c = lo > 0 ? dfx__kctx_poll(ctx) : DFX_OK;
    if (c != DFX_OK) return c;
    EW_LOOP3(&bc, lo, n - lo > grain ? lo + grain : n,
             st(t, o->data, io, dfx__betainc(ld(t, a->data, ia), ld(t, b->data, ib), ld(t, x->data, ic))));
  }
  return DFX_OK;
}

static const dfx_kernel_def kernels[] = {
    /* Not DFX_KERNEL_CHEAP: one element can take thousands of series terms, so
     * the policy may send these to the worker pool (exec/policy.h). */
    {"Igamma", "T: {" EW_TY_F "}", k_igamma, 0, NULL, NULL},
    {"Igammac", "T: {" EW_TY_F "}", k_igammac, 0, NULL, NULL},
    {"Zeta", "T: {float, double}", k_zeta, 0, NULL, NULL},
    {"Polygamma", "T: {float, double}", k_polygamma, 0, NULL, NULL},
    {"Betainc", "T: {float, double}", k_betainc, 0, NULL, NULL},
    {NULL}};

void dfx__kernels_math_special(dfx_registry *r);
void dfx__kernels_math_special(dfx_registry *r) { dfx__kernels_add(r, kernels); }
