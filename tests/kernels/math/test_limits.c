/* test_limits.c - hostile inputs: broadcast shapes whose products overflow,
 * special-function series that would not end, and long kernels that must
 * stop when the run is cancelled or times out. */
#include <uv.h>

#include "dtype.h"
#include "mt.h"

/* Input shapes: the work of each case is over EW_POLL_GRAIN (2^20) elements
 * from inputs no bigger than that. */
enum { FULL, COL, ROW, SCALAR, SPECIAL, SPECIAL_COL, STRINGS };
static const int64_t FULL_D[1] = {(1 << 21) + 3}, COL_D[2] = {2048, 1}, ROW_D[2] = {1, 1025},
                     SPECIAL_D[2] = {4, 200}, SPECIAL_COL_D[2] = {4, 1}, STRINGS_D[1] = {(1 << 17) + 3};

typedef struct {
  const char *op;
  const char *a1, *a2; /* type attrs */
  dfx_dtype t1, t2;
  bool own;            /* the kernel may write into an input it owns */
  int n_in;
  dfx_dtype in_t[3];
  int in_shape[3];
} lcase;

static const lcase CASES[] = {
    {"Add", "T", NULL, DFX_F32, 0, false, 2, {DFX_F32, DFX_F32}, {FULL, FULL}},
    {"Add", "T", NULL, DFX_F32, 0, false, 2, {DFX_F32, DFX_F32}, {COL, ROW}},
    {"AddV2", "T", NULL, DFX_F32, 0, true, 2, {DFX_F32, DFX_F32}, {FULL, FULL}},
    {"Add", "T", NULL, DFX_STRING, 0, false, 2, {DFX_STRING, DFX_STRING}, {STRINGS, STRINGS}},
    {"Less", "T", NULL, DFX_I32, 0, false, 2, {DFX_I32, DFX_I32}, {COL, ROW}},
    {"Exp", "T", NULL, DFX_F32, 0, false, 1, {DFX_F32}, {FULL}},
    {"Exp", "T", NULL, DFX_F64, 0, true, 1, {DFX_F64}, {FULL}},
    {"IsNan", "T", NULL, DFX_F16, 0, false, 1, {DFX_F16}, {FULL}},
    {"LogicalNot", NULL, NULL, 0, 0, false, 1, {DFX_BOOL}, {FULL}},
    {"Invert", "T", NULL, DFX_I64, 0, false, 1, {DFX_I64}, {FULL}},
    {"LeakyRelu", "T", NULL, DFX_F32, 0, false, 1, {DFX_F32}, {FULL}},
    {"Cast", "SrcT", "DstT", DFX_F32, DFX_I32, false, 1, {DFX_F32}, {FULL}},
    {"Select", "T", NULL, DFX_F32, 0, false, 3, {DFX_BOOL, DFX_F32, DFX_F32}, {FULL, FULL, FULL}},
    {"SelectV2", "T", NULL, DFX_I8, 0, false, 3, {DFX_BOOL, DFX_I8, DFX_I8}, {COL, ROW, SCALAR}},
    {"AddN", "T", NULL, DFX_F32, 0, false, 2, {DFX_F32, DFX_F32}, {FULL, FULL}},
    {"ClipByValue", "T", NULL, DFX_F32, 0, false, 3, {DFX_F32, DFX_F32, DFX_F32}, {FULL, SCALAR, SCALAR}},
    {"CheckNumerics", "T", NULL, DFX_F32, 0, false, 1, {DFX_F32}, {FULL}},
    {"Igamma", "T", NULL, DFX_F64, 0, false, 2, {DFX_F64, DFX_F64}, {SPECIAL, SPECIAL}},
    {"Betainc", "T", NULL, DFX_F32, 0, false, 3, {DFX_F32, DFX_F32, DFX_F32}, {SPECIAL, SPECIAL, SPECIAL_COL}},
    {"ComplexAbs", "T", "Tout", DFX_C64, DFX_F32, false, 1, {DFX_C64}, {FULL}},
    {"Complex", "T", "Tout", DFX_F32, DFX_C64, false, 2, {DFX_F32, DFX_F32}, {COL, ROW}},
};

static dfx_tensor *shaped(dfx_dtype t, int kind) {
  switch (kind) {
    case FULL: return dfx__tensor_zeros(t, 1, FULL_D, NULL);
    case COL: return dfx__tensor_zeros(t, 2, COL_D, NULL);
    case ROW: return dfx__tensor_zeros(t, 2, ROW_D, NULL);
    case SPECIAL: return dfx__tensor_zeros(t, 2, SPECIAL_D, NULL);
    case SPECIAL_COL: return dfx__tensor_zeros(t, 2, SPECIAL_COL_D, NULL);
    case STRINGS: return dfx__tensor_zeros(t, 1, STRINGS_D, NULL);
    default: return dfx__tensor_zeros(t, 0, NULL, NULL);
  }
}

static dfx_node *case_node(const lcase *c) {
  dfx_node *n = kh_node_new(c->op);
  if (c->a1) kh_attr_type(n, c->a1, c->t1);
  if (c->a2) kh_attr_type(n, c->a2, c->t2);
  if (!strcmp(c->op, "AddN")) kh_attr_int(n, "N", c->n_in);
  if (!strcmp(c->op, "CheckNumerics")) kh_attr_str(n, "message", "m");
  return n;
}

/* Runs case c in a step that is cancelled (deadline 0) or past its deadline;
 * returns the code and leaves the message in err. */
static dfx_code run_stopped(const lcase *c, bool deadline, char *err, size_t len) {
  dfx_step step;
  cr_assert_eq(dfx__step_init(&step), DFX_OK);
  if (deadline) {
    step.t0_ns = uv_hrtime();
    step.deadline_ns = 1; /* long past */
  } else {
    dfx__step_cancel(&step);
  }
  dfx_node *n = case_node(c);
  dfx_tensor *in[3] = {0}, *o;
  for (int i = 0; i < c->n_in; i++) in[i] = shaped(c->in_t[i], c->in_shape[i]);
  dfx_code code = mt_run_in_step(n, &step, c->own, in, c->n_in, &o, err, len);
  dfx__tensor_unref(o);
  for (int i = 0; i < c->n_in; i++) dfx__tensor_unref(in[i]);
  kh_node_free(n);
  dfx__step_destroy(&step);
  return code;
}

/* A kernel whose work runs past EW_POLL_GRAIN elements polls the run: it
 * stops when the run is cancelled, and when its deadline has passed, with
 * no output left behind (ASan's leak check). */
Test(limits, long_kernels_stop_on_cancel_and_deadline, .timeout = 60) {
  for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
    char err[256];
    cr_expect_eq(run_stopped(&CASES[i], false, err, sizeof err), DFX_ECANCELED, "%s #%zu: %s", CASES[i].op, i, err);
    cr_expect(strstr(err, "cancelled"), "%s #%zu: %s", CASES[i].op, i, err);
    cr_expect_eq(run_stopped(&CASES[i], true, err, sizeof err), DFX_EDEADLINE, "%s #%zu: %s", CASES[i].op, i, err);
  }
}

/* The same cases run to the end in a live step (the stop above is the
 * poll's doing, not a failure of the inputs). */
Test(limits, long_kernels_finish_when_not_stopped, .timeout = 60) {
  for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
    dfx_step step;
    cr_assert_eq(dfx__step_init(&step), DFX_OK);
    dfx_node *n = case_node(&CASES[i]);
    dfx_tensor *in[3] = {0}, *o;
    for (int k = 0; k < CASES[i].n_in; k++) in[k] = shaped(CASES[i].in_t[k], CASES[i].in_shape[k]);
    char err[256];
    cr_expect_eq(mt_run_in_step(n, &step, CASES[i].own, in, CASES[i].n_in, &o, err, sizeof err), DFX_OK,
                 "%s #%zu: %s", CASES[i].op, i, err);
    dfx__tensor_unref(o);
    for (int k = 0; k < CASES[i].n_in; k++) dfx__tensor_unref(in[k]);
    kh_node_free(n);
    dfx__step_destroy(&step);
  }
}

/* Empty operands may carry dims whose broadcast product overflows int64:
 * [2^62, 1, 0] with [1, 2^62, 0]. The kernels fail cleanly or return the
 * empty result; they never multiply out the dims unchecked (UBSan). */
Test(limits, broadcast_dims_overflow) {
  const int64_t big = INT64_C(1) << 62;
  const int64_t da[3] = {big, 1, 0}, db[3] = {1, big, 0}, dc[3] = {INT64_C(1) << 40, 1, 0}, dd[3] = {1, 1 << 20, 0};
  static const struct {
    const char *op;
    int n;
  } ops[] = {{"Add", 2}, {"Less", 2}, {"Equal", 2}, {"Zeta", 2}, {"Betainc", 3}, {"SelectV2", 3}};
  for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
    for (int huge = 0; huge < 2; huge++) {
      const bool sel = !strcmp(ops[k].op, "SelectV2");
      dfx_tensor *in[3] = {dfx__tensor_zeros(sel ? DFX_BOOL : DFX_F32, 3, huge ? da : dc, NULL),
                           dfx__tensor_zeros(DFX_F32, 3, huge ? db : dd, NULL),
                           dfx__tensor_zeros(DFX_F32, 3, huge ? db : dd, NULL)};
      dfx_tensor *o = NULL;
      char err[256];
      dfx_code c = mt_run(ops[k].op, DFX_F32, in, ops[k].n, &o, err, sizeof err);
      if (huge) {
        /* [2^62, 2^62, 0] is empty, but core counts it by multiplying in
         * order (dfx__shape_count), so allocating it fails. */
        cr_expect(c == DFX_OK || strstr(err, "cannot allocate output 0"), "%s: %s", ops[k].op, err);
      } else {
        cr_assert_eq(c, DFX_OK, "%s: %s", ops[k].op, err);
        const int64_t want[3] = {INT64_C(1) << 40, 1 << 20, 0};
        mt_expect_shape(o, 3, want);
      }
      dfx__tensor_unref(o);
      for (int i = 0; i < 3; i++) dfx__tensor_unref(in[i]);
    }
  }
}

/* Zeta(x, q) for q far below zero sums -q terms per element (TF's Cephes
 * loop); past 65536 the kernel fails at once, naming the values, and so
 * does Polygamma, which is built on it. Digamma's reflection needs no such
 * series. */
Test(limits, zeta_series_bounded, .timeout = 10) {
  const double x[1] = {2}, q[1] = {-1e15 - 0.5}, n0[1] = {0}, n1[1] = {1};
  int64_t d[1] = {1};
  dfx_tensor *o;
  char err[256];
  dfx_tensor *in[2] = {mt_tensor(DFX_F64, 1, d, x), mt_tensor(DFX_F64, 1, d, q)};
  cr_expect_eq(mt_run("Zeta", DFX_F64, in, 2, &o, err, sizeof err), DFX_EINVAL);
  cr_expect(strstr(err, "Zeta(2, -1e+15) needs more than 65536 series terms"), "%s", err);
  dfx__tensor_unref(in[0]);
  in[0] = mt_tensor(DFX_F64, 1, d, n1);
  cr_expect_eq(mt_run("Polygamma", DFX_F64, in, 2, &o, err, sizeof err), DFX_EINVAL);
  cr_expect(strstr(err, "Polygamma(1, -1e+15)"), "%s", err);
  dfx__tensor_unref(in[0]);
  in[0] = mt_tensor(DFX_F64, 1, d, n0);
  cr_assert_eq(mt_run("Polygamma", DFX_F64, in, 2, &o, err, sizeof err), DFX_OK, "%s", err);
  cr_expect(isfinite(dfx__tensor_get_f64(o, 0)));
  dfx__tensor_unref(o);
  dfx__tensor_unref(in[0]);
  dfx__tensor_unref(in[1]);
  /* Just inside the bound, the series runs and ends. */
  const double x3[1] = {3}, q3[1] = {-60000.5};
  dfx_tensor *in3[2] = {mt_tensor(DFX_F64, 1, d, x3), mt_tensor(DFX_F64, 1, d, q3)};
  cr_assert_eq(mt_run("Zeta", DFX_F64, in3, 2, &o, err, sizeof err), DFX_OK, "%s", err);
  dfx__tensor_unref(o);
  dfx__tensor_unref(in3[0]);
  dfx__tensor_unref(in3[1]);
}
