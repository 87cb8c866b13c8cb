/* test_binary.c - arithmetic binary kernels against naive broadcasting
 * references and hand-computed TensorFlow values. */
#include <stdlib.h>

#include "dtype.h"
#include "mt.h"
#include "op_registry.h"

/* Naive broadcast index: output flat index -> operand flat index. */
static int64_t src_index(int64_t o, int ond, const int64_t *odims, int nd, const int64_t *dims) {
  int64_t idx = 0, mul = 1;
  for (int d = ond - 1, k = nd - 1; d >= 0; d--, k--) {
    int64_t c = o % odims[d];
    o /= odims[d];
    if (k >= 0) {
      if (dims[k] != 1) idx += c * mul;
      mul *= dims[k];
    }
  }
  return idx;
}

typedef struct {
  int nx, ny;
  int64_t dx[4], dy[4];
  int no;
  int64_t dout[4];
} shapes;

static const shapes cases[] = {
    {0, 0, {0}, {0}, 0, {0}},
    {1, 1, {5}, {5}, 1, {5}},
    {0, 1, {0}, {4}, 1, {4}},
    {1, 0, {4}, {0}, 1, {4}},
    {2, 1, {2, 3}, {3}, 2, {2, 3}},
    {2, 2, {2, 1}, {1, 3}, 2, {2, 3}},
    {3, 2, {2, 3, 4}, {3, 1}, 3, {2, 3, 4}},
    {3, 3, {2, 1, 4}, {1, 3, 1}, 3, {2, 3, 4}},
    {4, 3, {2, 1, 3, 1}, {4, 1, 5}, 4, {2, 4, 3, 5}},
    {2, 1, {1, 1}, {1}, 2, {1, 1}},
    {2, 1, {0, 3}, {3}, 2, {0, 3}},
    {2, 2, {3, 0}, {1, 1}, 2, {3, 0}},
    {3, 3, {1, 4, 1}, {1, 4, 1}, 3, {1, 4, 1}},
};

typedef double (*ref_fn)(double, double);
static double r_add(double a, double b) { return a + b; }
static double r_sub(double a, double b) { return a - b; }
static double r_mul(double a, double b) { return a * b; }
static double r_max(double a, double b) { return a > b ? a : b; }
static double r_min(double a, double b) { return a < b ? a : b; }
static double r_sqd(double a, double b) { return (a - b) * (a - b); }

static void check_op(const char *op, ref_fn ref, dfx_dtype t, double tol) {
  /* Only the dtypes TensorFlow's OpDef allows: import rejects the others. */
  const dfx_op_attr *ta = dfx__op_def_attr(dfx__op_get(op), "T");
  if (ta && ta->allowed && !(ta->allowed >> t & 1)) return;
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    const shapes *s = &cases[c];
    int64_t cx = dfx__shape_count(s->nx, s->dx), cy = dfx__shape_count(s->ny, s->dy);
    double vx[64], vy[64], want[256];
    for (int64_t i = 0; i < cx; i++) vx[i] = (double)((i * 7) % 11) - 5;
    for (int64_t i = 0; i < cy; i++) vy[i] = (double)((i * 5) % 9) - 3;
    dfx_tensor *in[2] = {mt_tensor(t, s->nx, s->dx, vx), mt_tensor(t, s->ny, s->dy, vy)};
    /* Reference computed from the stored (already rounded) inputs. */
    int64_t co = dfx__shape_count(s->no, s->dout);
    for (int64_t o = 0; o < co; o++) {
      double a = dfx__tensor_get_f64(in[0], src_index(o, s->no, s->dout, s->nx, s->dx));
      double b = dfx__tensor_get_f64(in[1], src_index(o, s->no, s->dout, s->ny, s->dy));
      want[o] = ref(a, b);
    }
    dfx_tensor *out;
    char err[256];
    cr_assert_eq(mt_run(op, t, in, 2, &out, err, sizeof err), DFX_OK, "%s case %zu: %s", op, c, err);
    cr_assert_eq(out->dtype, t);
    cr_assert_eq(out->ndims, s->no, "case %zu", c);
    for (int d = 0; d < s->no; d++) cr_assert_eq(out->dims[d], s->dout[d], "case %zu dim %d: %lld", c, d, (long long)out->dims[d]);
    char what[64];
    snprintf(what, sizeof what, "%s/%s/case%zu", op, dfx_dtype_name(t), c);
    mt_expect_vals(out, want, tol, what);
    dfx__tensor_unref(out);
    dfx__tensor_unref(in[0]);
    dfx__tensor_unref(in[1]);
  }
}

/* Broadcasting over the test shapes, for every real dtype an op declares
 * (the test values are negative: no unsigned types here). */
Test(binary, broadcast_all_dtypes) {
  static const struct {
    const char *op;
    ref_fn f;
  } ops[] = {{"Add", r_add}, {"AddV2", r_add}, {"Sub", r_sub}, {"Mul", r_mul},
             {"Maximum", r_max}, {"Minimum", r_min}, {"SquaredDifference", r_sqd}};
  for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++)
    MT_FOR_DTYPES(t, mt_declared(ops[k].op, "T")) {
      if (mt_is_unsigned(t) || mt_is_complex(t) || t == DFX_STRING) continue;
      check_op(ops[k].op, ops[k].f, t, t == DFX_F16 ? 1e-3 : t == DFX_BF16 ? 1e-2 : 1e-12);
    }
}

/* ---- every declared dtype of every op against a naive reference ---- */

static double py_mod(double a, double b) {
  double r = fmod(a, b);
  return r != 0 && (r < 0) != (b < 0) ? r + b : r;
}
/* Reference z = f(x, y) in double; `in` is true for integer dtypes. */
static double ref_bin(const char *op, double a, double b, bool in) {
  if (!strcmp(op, "Add") || !strcmp(op, "AddV2")) return a + b;
  if (!strcmp(op, "Sub")) return a - b;
  if (!strcmp(op, "Mul")) return a * b;
  if (!strcmp(op, "Div")) return in ? trunc(a / b) : a / b;
  if (!strcmp(op, "RealDiv")) return a / b;
  if (!strcmp(op, "TruncateDiv")) return trunc(a / b);
  if (!strcmp(op, "FloorDiv")) return floor(a / b);
  if (!strcmp(op, "FloorMod")) return py_mod(a, b);
  if (!strcmp(op, "TruncateMod") || !strcmp(op, "Mod")) return fmod(a, b);
  if (!strcmp(op, "Maximum")) return a > b ? a : b;
  if (!strcmp(op, "Minimum")) return a < b ? a : b;
  if (!strcmp(op, "Pow")) return pow(a, b);
  if (!strcmp(op, "SquaredDifference")) return (a - b) * (a - b);
  if (!strcmp(op, "Atan2")) return atan2(a, b);
  if (!strcmp(op, "DivNoNan")) return b == 0 ? 0 : a / b;
  if (!strcmp(op, "Xlogy")) return a == 0 ? 0 : a * log(b);
  if (!strcmp(op, "Xdivy")) return a == 0 ? 0 : a / b;
  cr_assert_fail("no reference for %s", op);
  return 0;
}

/* The complex reference, written out with real arithmetic. */
typedef struct {
  double re, im;
} cx;
static cx cx_mul(cx a, cx b) { return (cx){a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re}; }
static cx cx_div(cx a, cx b) {
  double d = b.re * b.re + b.im * b.im;
  return (cx){(a.re * b.re + a.im * b.im) / d, (a.im * b.re - a.re * b.im) / d};
}
static cx ref_cbin(const char *op, cx a, cx b) {
  if (!strcmp(op, "Add") || !strcmp(op, "AddV2")) return (cx){a.re + b.re, a.im + b.im};
  if (!strcmp(op, "Sub")) return (cx){a.re - b.re, a.im - b.im};
  if (!strcmp(op, "Mul")) return cx_mul(a, b);
  if (!strcmp(op, "Div") || !strcmp(op, "RealDiv") || !strcmp(op, "DivNoNan") || !strcmp(op, "Xdivy"))
    return cx_div(a, b); /* no zeros among the test values */
  if (!strcmp(op, "Xlogy")) return cx_mul(a, (cx){log(hypot(b.re, b.im)), atan2(b.im, b.re)});
  if (!strcmp(op, "SquaredDifference")) {
    cx d = {a.re - b.re, a.im - b.im};
    return (cx){d.re * d.re + d.im * d.im, 0};
  }
  cr_assert_fail("no complex reference for %s", op);
  return a;
}

static const char *const BIN_OPS[] = {"Add", "AddV2", "Sub", "Mul", "Div", "RealDiv", "TruncateDiv",
                                      "FloorDiv", "FloorMod", "TruncateMod", "Mod", "Maximum", "Minimum",
                                      "Pow", "SquaredDifference", "Atan2", "DivNoNan", "Xlogy", "Xdivy"};

Test(binary, every_declared_dtype) {
  enum { N = 7 };
  static const double sx[N] = {-7, -4, -1, 0, 2, 5, 7}, sy[N] = {2, -3, 1, 4, -2, 3, 5};
  static const double ux[N] = {7, 4, 1, 4, 2, 5, 7}, uy[N] = {2, 3, 1, 4, 2, 3, 5}; /* x >= y: Sub stays >= 0 */
  static const double px[N] = {-3, -2, -1, 0, 1, 2, 3}, py[N] = {3, 2, 0, 1, 2, 3, 1}; /* Pow */
  static const double fx[N] = {-7.5, -4, -1, 0, 2.25, 5, 7}, fy[N] = {2, -3, 0.5, 0, -2, 3, 5};
  static const double cy[N] = {2, -3, 0.5, 4, -2, 3, 5}; /* complex: no zero divisors */
  int64_t d[1] = {N};
  int runs = 0;
  for (size_t k = 0; k < sizeof BIN_OPS / sizeof BIN_OPS[0]; k++) {
    const char *op = BIN_OPS[k];
    MT_FOR_DTYPES(t, mt_declared(op, "T")) {
      if (t == DFX_STRING) continue; /* add_strings_broadcast */
      const bool in = dfx__dtype_is_int(t), pw = !strcmp(op, "Pow");
      const double *x = pw ? px : mt_is_unsigned(t) ? ux : in ? sx : fx;
      const double *y = pw ? py : mt_is_unsigned(t) ? uy : in ? sy : mt_is_complex(t) ? cy : fy;
      dfx_tensor *ins[2] = {mt_tensor(t, 1, d, x), mt_tensor(t, 1, d, y)}, *o;
      char err[256], what[64];
      snprintf(what, sizeof what, "%s/%s", op, dfx_dtype_name(t));
      cr_assert_eq(mt_run(op, t, ins, 2, &o, err, sizeof err), DFX_OK, "%s: %s", what, err);
      cr_assert_eq(o->dtype, t, "%s", what);
      mt_expect_shape(o, 1, d);
      if (mt_is_complex(t)) {
        double wr[N], wi[N];
        for (int i = 0; i < N; i++) {
          cx a, b;
          mt_cget(ins[0], i, &a.re, &a.im);
          mt_cget(ins[1], i, &b.re, &b.im);
          cx w = ref_cbin(op, a, b);
          wr[i] = w.re;
          wi[i] = w.im;
        }
        mt_expect_cvals(o, wr, wi, 4 * mt_tol(t), what);
      } else {
        double w[N];
        for (int i = 0; i < N; i++)
          w[i] = ref_bin(op, dfx__tensor_get_f64(ins[0], i), dfx__tensor_get_f64(ins[1], i), in);
        mt_expect_vals(o, w, mt_tol(t), what);
      }
      dfx__tensor_unref(o);
      dfx__tensor_unref(ins[0]);
      dfx__tensor_unref(ins[1]);
      runs++;
    }
  }
  cr_expect_geq(runs, 150, "%d op/dtype pairs", runs);
}

/* Runs a 1-D binary op on int64 / double inputs and returns out (caller unrefs). */
static dfx_tensor *run1d(const char *op, dfx_dtype t, int n, const double *x, const double *y, dfx_code want,
                         const char *want_msg) {
  int64_t d[1] = {n};
  dfx_tensor *in[2] = {mt_tensor(t, 1, d, x), mt_tensor(t, 1, d, y)};
  dfx_tensor *out = NULL;
  char err[256];
  dfx_code c = mt_run(op, t, in, 2, &out, err, sizeof err);
  cr_assert_eq(c, want, "%s: code %d (%s)", op, c, err);
  if (want_msg) cr_expect(strstr(err, want_msg), "%s: message '%s'", op, err);
  dfx__tensor_unref(in[0]);
  dfx__tensor_unref(in[1]);
  return out;
}

Test(binary, integer_division_semantics) {
  const double x[] = {7, -7, 7, -7, 0, 5};
  const double y[] = {2, 2, -2, -2, 3, 5};
  const double trunc_q[] = {3, -3, -3, 3, 0, 1}, floor_q[] = {3, -4, -4, 3, 0, 1};
  const double trunc_r[] = {1, -1, 1, -1, 0, 0}, floor_r[] = {1, 1, -1, -1, 0, 0};
  const dfx_dtype ts[] = {DFX_I8, DFX_I16, DFX_I32, DFX_I64};
  for (int k = 0; k < 4; k++) {
    dfx_tensor *o;
    o = run1d("Div", ts[k], 6, x, y, DFX_OK, NULL);
    mt_expect_vals(o, trunc_q, 0, "Div");
    dfx__tensor_unref(o);
    o = run1d("TruncateDiv", ts[k], 6, x, y, DFX_OK, NULL);
    mt_expect_vals(o, trunc_q, 0, "TruncateDiv");
    dfx__tensor_unref(o);
    o = run1d("FloorDiv", ts[k], 6, x, y, DFX_OK, NULL);
    mt_expect_vals(o, floor_q, 0, "FloorDiv");
    dfx__tensor_unref(o);
    o = run1d("FloorMod", ts[k], 6, x, y, DFX_OK, NULL);
    mt_expect_vals(o, floor_r, 0, "FloorMod");
    dfx__tensor_unref(o);
    if (ts[k] != DFX_I32 && ts[k] != DFX_I64) continue; /* TF registers the mods for these only */
    o = run1d("TruncateMod", ts[k], 6, x, y, DFX_OK, NULL);
    mt_expect_vals(o, trunc_r, 0, "TruncateMod");
    dfx__tensor_unref(o);
    o = run1d("Mod", ts[k], 6, x, y, DFX_OK, NULL);
    mt_expect_vals(o, trunc_r, 0, "Mod");
    dfx__tensor_unref(o);
  }
  /* unsigned */
  const double ux[] = {7, 200, 0}, uy[] = {2, 7, 3}, uq[] = {3, 28, 0}, ur[] = {1, 4, 0};
  dfx_tensor *o = run1d("FloorDiv", DFX_U8, 3, ux, uy, DFX_OK, NULL);
  mt_expect_vals(o, uq, 0, "FloorDiv u8");
  dfx__tensor_unref(o);
  o = run1d("FloorMod", DFX_U8, 3, ux, uy, DFX_OK, NULL);
  mt_expect_vals(o, ur, 0, "FloorMod u8");
  dfx__tensor_unref(o);
}

Test(binary, integer_division_by_zero_fails) {
  const double x[] = {1, 2}, y[] = {1, 0};
  const char *opsl[] = {"Div", "FloorDiv", "FloorMod", "TruncateDiv", "TruncateMod", "Mod"};
  for (int i = 0; i < 6; i++) {
    dfx_tensor *o = run1d(opsl[i], DFX_I32, 2, x, y, DFX_EINVAL, "Integer division by zero");
    cr_expect_null(o);
  }
  dfx_tensor *o = run1d("FloorDiv", DFX_U16, 2, x, y, DFX_EINVAL, "Integer division by zero");
  cr_expect_null(o);
}

Test(binary, int_min_by_minus_one_wraps) {
  int32_t xv[2] = {INT32_MIN, INT32_MIN}, yv[2] = {-1, -1};
  int64_t d[1] = {2};
  dfx_tensor *in[2] = {kh_i32(1, d, xv), kh_i32(1, d, yv)};
  const char *opsl[] = {"Div", "FloorDiv", "FloorMod", "TruncateMod"};
  const int32_t want[] = {INT32_MIN, INT32_MIN, 0, 0};
  for (int i = 0; i < 4; i++) {
    dfx_tensor *o;
    char err[256];
    cr_assert_eq(mt_run(opsl[i], DFX_I32, in, 2, &o, err, sizeof err), DFX_OK, "%s", err);
    cr_expect_eq(((int32_t *)o->data)[0], want[i], "%s", opsl[i]);
    dfx__tensor_unref(o);
  }
  /* Add/Mul wrap. */
  int32_t a[2] = {INT32_MAX, 65536}, b[2] = {1, 65536};
  dfx_tensor *in2[2] = {kh_i32(1, d, a), kh_i32(1, d, b)};
  dfx_tensor *o;
  char err[256];
  cr_assert_eq(mt_run("Add", DFX_I32, in2, 2, &o, err, sizeof err), DFX_OK);
  cr_expect_eq(((int32_t *)o->data)[0], INT32_MIN);
  dfx__tensor_unref(o);
  cr_assert_eq(mt_run("Mul", DFX_I32, in2, 2, &o, err, sizeof err), DFX_OK);
  cr_expect_eq(((int32_t *)o->data)[1], 0);
  dfx__tensor_unref(o);
  for (int i = 0; i < 2; i++) {
    dfx__tensor_unref(in[i]);
    dfx__tensor_unref(in2[i]);
  }
}

Test(binary, float_division_family) {
  const double x[] = {7, -7, 7, -7, 1, -1, 0, 5.5};
  const double y[] = {2, 2, -2, -2, 0, 0, 0, 0.5};
  const double fq[] = {3, -4, -4, 3, INFINITY, -INFINITY, NAN, 11};
  const double fr[] = {1, 1, -1, -1, NAN, NAN, NAN, 0};
  const double tr[] = {1, -1, 1, -1, NAN, NAN, NAN, 0};
  const double dq[] = {3.5, -3.5, -3.5, 3.5, INFINITY, -INFINITY, NAN, 11};
  const double dnn[] = {3.5, -3.5, -3.5, 3.5, 0, 0, 0, 11};
  const dfx_dtype ts[] = {DFX_F32, DFX_F64, DFX_F16, DFX_BF16};
  for (int k = 0; k < 4; k++) {
    dfx_tensor *o;
    o = run1d("FloorDiv", ts[k], 8, x, y, DFX_OK, NULL);
    mt_expect_vals(o, fq, 0, "FloorDiv f");
    dfx__tensor_unref(o);
    o = run1d("FloorMod", ts[k], 8, x, y, DFX_OK, NULL);
    mt_expect_vals(o, fr, 0, "FloorMod f");
    dfx__tensor_unref(o);
    o = run1d("TruncateMod", ts[k], 8, x, y, DFX_OK, NULL);
    mt_expect_vals(o, tr, 0, "TruncateMod f");
    dfx__tensor_unref(o);
    o = run1d("RealDiv", ts[k], 8, x, y, DFX_OK, NULL);
    mt_expect_vals(o, dq, 0, "RealDiv");
    dfx__tensor_unref(o);
    o = run1d("Div", ts[k], 8, x, y, DFX_OK, NULL);
    mt_expect_vals(o, dq, 0, "Div f");
    dfx__tensor_unref(o);
    o = run1d("DivNoNan", ts[k], 8, x, y, DFX_OK, NULL);
    mt_expect_vals(o, dnn, 0, "DivNoNan");
    dfx__tensor_unref(o);
  }
}

Test(binary, pow_and_atan2) {
  const double x[] = {2, -3, 0, 5, 1}, y[] = {10, 3, 0, 0, 7};
  const double want[] = {1024, -27, 1, 1, 1};
  dfx_tensor *o = run1d("Pow", DFX_I32, 5, x, y, DFX_OK, NULL);
  mt_expect_vals(o, want, 0, "Pow i32");
  dfx__tensor_unref(o);
  o = run1d("Pow", DFX_F32, 5, x, y, DFX_OK, NULL);
  mt_expect_vals(o, want, 1e-7, "Pow f32");
  dfx__tensor_unref(o);
  const double yn[] = {1, -1, 0, 0, 0};
  o = run1d("Pow", DFX_I64, 5, x, yn, DFX_EINVAL, "Integers to negative integer powers are not allowed");
  cr_expect_null(o);
  const double ay[] = {1, -1, 0, 1, -1}, ax[] = {1, 1, -1, 0, -1};
  const double aw[] = {atan2(1, 1), atan2(-1, 1), atan2(0, -1), atan2(1, 0), atan2(-1, -1)};
  o = run1d("Atan2", DFX_F64, 5, ay, ax, DFX_OK, NULL);
  mt_expect_vals(o, aw, 1e-15, "Atan2");
  dfx__tensor_unref(o);
  o = run1d("Atan2", DFX_I32, 5, ay, ax, DFX_EINVAL, "attr 'T' = int32 is not one of");
  cr_expect_null(o);
}

Test(binary, max_min_propagate_nan) {
  const double x[] = {NAN, 1, 2}, y[] = {1, NAN, 3};
  const double w[] = {NAN, NAN, 3};
  dfx_tensor *o = run1d("Maximum", DFX_F32, 3, x, y, DFX_OK, NULL);
  mt_expect_vals(o, w, 0, "Maximum");
  dfx__tensor_unref(o);
  const double w2[] = {NAN, NAN, 2};
  o = run1d("Minimum", DFX_F64, 3, x, y, DFX_OK, NULL);
  mt_expect_vals(o, w2, 0, "Minimum");
  dfx__tensor_unref(o);
}

Test(binary, half_rounds_result) {
  /* 1 + 2^-11 is a tie between 1 and 1+2^-10 in half: rounds to even (1). */
  const double x[] = {1, 1}, y[] = {1.0 / 2048, 3.0 / 2048};
  dfx_tensor *o = run1d("Add", DFX_F16, 2, x, y, DFX_OK, NULL);
  cr_expect_eq(((uint16_t *)o->data)[0], 0x3c00);
  cr_expect_eq(((uint16_t *)o->data)[1], 0x3c02);
  dfx__tensor_unref(o);
}

Test(binary, incompatible_shapes) {
  int64_t d2[2] = {2, 3}, d1[1] = {4};
  dfx_tensor *in[2] = {mt_tensor(DFX_F32, 2, d2, NULL), mt_tensor(DFX_F32, 1, d1, NULL)};
  dfx_tensor *o;
  char err[256];
  cr_assert_eq(mt_run("Add", DFX_F32, in, 2, &o, err, sizeof err), DFX_EINVAL);
  cr_expect(strstr(err, "Incompatible shapes: [2,3] vs. [4]"), "%s", err);
  dfx__tensor_unref(in[0]);
  dfx__tensor_unref(in[1]);
}

static dfx_tensor *str_tensor(int ndims, const int64_t *dims, const char **v) {
  dfx_tensor *t = dfx__tensor_alloc(DFX_STRING, ndims, dims, NULL);
  for (int64_t i = 0; i < t->count; i++) cr_assert_eq(dfx_tensor_set_string(t, i, v[i], strlen(v[i])), DFX_OK);
  return t;
}

Test(binary, add_strings_broadcast) {
  int64_t d2[2] = {2, 1}, d1[1] = {2};
  const char *a[] = {"ab", ""}, *b[] = {"x", "yz"};
  dfx_tensor *in[2] = {str_tensor(2, d2, a), str_tensor(1, d1, b)};
  dfx_tensor *o;
  char err[256];
  cr_assert_eq(mt_run("Add", DFX_STRING, in, 2, &o, err, sizeof err), DFX_OK, "%s", err);
  int64_t od[2] = {2, 2};
  mt_expect_shape(o, 2, od);
  const char *want[] = {"abx", "abyz", "x", "yz"};
  for (int i = 0; i < 4; i++) {
    size_t len;
    const char *s = dfx_tensor_string(o, i, &len);
    cr_expect(len == strlen(want[i]) && memcmp(s, want[i], len) == 0, "elem %d", i);
  }
  dfx__tensor_unref(o);
  cr_assert_eq(mt_run("Sub", DFX_STRING, in, 2, &o, err, sizeof err) != DFX_OK, 1);
  dfx__tensor_unref(in[0]);
  dfx__tensor_unref(in[1]);
}

Test(binary, dtype_mismatch_fails) {
  int64_t d[1] = {1};
  dfx_tensor *in[2] = {mt_tensor(DFX_F32, 1, d, NULL), mt_tensor(DFX_I32, 1, d, NULL)};
  dfx_tensor *o;
  char err[256];
  cr_expect_neq(mt_run("Mul", DFX_F32, in, 2, &o, err, sizeof err), DFX_OK);
  dfx__tensor_unref(in[0]);
  dfx__tensor_unref(in[1]);
}
