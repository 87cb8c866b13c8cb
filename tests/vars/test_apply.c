/* test_apply.c - the optimizer ops against naive references written from
 * the documented update rules (not from the kernels' form): each op, ref
 * and resource form, float and double, with and without Nesterov, runs
 * three steps on variables set from random values, then var and its slots
 * are compared with the reference. Also the errors: an uninitialised slot
 * is named, and a non-scalar learning rate is refused. */
#include <math.h>
#include <stdarg.h>

#include "vtest.h"

TestSuite(apply, .init = vt_setup, .fini = vt_teardown, .timeout = 60);

enum { N = 5, STEPS = 3 };
typedef enum { GD, MOM, ADAM, RMS } kind;
static const char *const op_names[] = {"GradientDescent", "Momentum", "Adam", "RMSProp"};
static const int n_slots[] = {0, 1, 2, 2};

/* Hyper-parameters. */
static const double lr = 0.01, momentum = 0.5, b1 = 0.9, b2 = 0.999, b1p = 0.9 * 0.9, b2p = 0.999 * 0.999,
                    eps = 1e-7, rho = 0.9;

/* The documented rules, one element at a time, in double. */
static void reference(kind k, bool nesterov, double *var, double *s1, double *s2, const double *g) {
  for (int i = 0; i < N; i++) {
    switch (k) {
      case GD: var[i] = var[i] - lr * g[i]; break;
      case MOM:
        s1[i] = momentum * s1[i] + g[i];
        var[i] = nesterov ? var[i] - (lr * g[i] + lr * momentum * s1[i]) : var[i] - lr * s1[i];
        break;
      case ADAM: {
        double lr_t = lr * sqrt(1 - b2p) / (1 - b1p);
        s1[i] = b1 * s1[i] + (1 - b1) * g[i];
        s2[i] = b2 * s2[i] + (1 - b2) * g[i] * g[i];
        double dir = nesterov ? b1 * s1[i] + (1 - b1) * g[i] : s1[i];
        var[i] = var[i] - lr_t * dir / (sqrt(s2[i]) + eps);
        break;
      }
      case RMS:
        s1[i] = rho * s1[i] + (1 - rho) * g[i] * g[i];
        s2[i] = momentum * s2[i] + lr * g[i] / sqrt(s1[i] + eps);
        var[i] = var[i] - s2[i];
        break;
    }
  }
}

/* ---- graph text ---- */

static void cat(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void cat(char *buf, size_t n, const char *fmt, ...) {
  size_t len = strlen(buf);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf + len, n - len, fmt, ap);
  va_end(ap);
}

static void scalar(char *b, size_t n, const char *name, double v, const char *dt) {
  cat(b, n,
      "node { name: \"%s\" op: \"Const\" attr { key: \"dtype\" value { type: %s } } attr { key: \"value\" value { "
      "tensor { dtype: %s tensor_shape { } %s: %.17g } } } }\n",
      name, dt, dt, strcmp(dt, "DT_FLOAT") ? "double_val" : "float_val", v);
}

/* Variables v0 (var), v1, v2 (slots) set from placeholders p0..p2 by
 * init0..init2; the update "step" reads grad g; reads r0..r2. */
static void build(char *b, size_t n, kind k, bool resource, bool nesterov, const char *dt) {
  b[0] = 0;
  int nv = 1 + n_slots[k];
  for (int i = 0; i < nv; i++) {
    cat(b, n, "node { name: \"p%d\" op: \"Placeholder\" attr { key: \"dtype\" value { type: %s } } }\n", i, dt);
    if (resource) {
      cat(b, n,
          "node { name: \"v%d\" op: \"VarHandleOp\" attr { key: \"dtype\" value { type: %s } } attr { key: "
          "\"shape\" value { shape { dim { size: %d } } } } }\n",
          i, dt, N);
      cat(b, n,
          "node { name: \"init%d\" op: \"AssignVariableOp\" input: \"v%d\" input: \"p%d\" attr { key: \"dtype\" "
          "value { type: %s } } }\n",
          i, i, i, dt);
      cat(b, n,
          "node { name: \"r%d\" op: \"ReadVariableOp\" input: \"v%d\" attr { key: \"dtype\" value "
          "{ type: %s } } }\n",
          i, i, dt);
    } else {
      cat(b, n,
          "node { name: \"v%d\" op: \"VariableV2\" attr { key: \"dtype\" value { type: %s } } attr { key: "
          "\"shape\" value { shape { dim { size: %d } } } } }\n",
          i, dt, N);
      cat(b, n,
          "node { name: \"init%d\" op: \"Assign\" input: \"v%d\" input: \"p%d\" attr { key: \"T\" value { type: %s "
          "} } }\n",
          i, i, i, dt);
      cat(b, n, "node { name: \"r%d\" op: \"Identity\" input: \"v%d\" attr { key: \"T\" value { type: %s } } }\n",
          i, i, dt);
    }
  }
  cat(b, n, "node { name: \"g\" op: \"Placeholder\" attr { key: \"dtype\" value { type: %s } } }\n", dt);
  static const char *const ins[4][10] = {
      {"v0", "lr", "g"},
      {"v0", "v1", "lr", "g", "momentum"},
      {"v0", "v1", "v2", "b1p", "b2p", "lr", "b1", "b2", "eps", "g"},
      {"v0", "v1", "v2", "lr", "rho", "momentum", "eps", "g"}};
  scalar(b, n, "lr", lr, dt);
  scalar(b, n, "momentum", momentum, dt);
  scalar(b, n, "b1", b1, dt);
  scalar(b, n, "b2", b2, dt);
  scalar(b, n, "b1p", b1p, dt);
  scalar(b, n, "b2p", b2p, dt);
  scalar(b, n, "eps", eps, dt);
  scalar(b, n, "rho", rho, dt);
  cat(b, n, "node { name: \"step\" op: \"%sApply%s\"", resource ? "Resource" : "", op_names[k]);
  for (int i = 0; i < 10 && ins[k][i]; i++) cat(b, n, " input: \"%s\"", ins[k][i]);
  cat(b, n, " attr { key: \"T\" value { type: %s } }", dt);
  if (k == MOM || k == ADAM) cat(b, n, " attr { key: \"use_nesterov\" value { b: %s } }", nesterov ? "true" : "false");
  cat(b, n, " }\n");
}

static dfx_tensor *vec(bool f64, const double *v) {
  int64_t d = N;
  dfx_tensor *t = dfx_tensor_new(f64 ? DFX_F64 : DFX_F32, &d, 1);
  for (int i = 0; i < N; i++) {
    if (f64) ((double *)dfx_tensor_data(t))[i] = v[i];
    else ((float *)dfx_tensor_data(t))[i] = (float)v[i];
  }
  return t;
}

static void check(kind k, bool resource, bool nesterov, bool f64) {
  static char text[16384];
  build(text, sizeof text, k, resource, nesterov, f64 ? "DT_DOUBLE" : "DT_FLOAT");
  vt c = vt_open(text, 2);
  int nv = 1 + n_slots[k];
  double ref[3][N];
  srand(42 + k);
  for (int j = 0; j < nv; j++)
    for (int i = 0; i < N; i++)
      /* Second-moment slots must stay non-negative, as they are in training. */
      ref[j][i] = (j > 0 && (k == RMS ? j == 1 : k == ADAM && j == 2)) ? rand() / (double)RAND_MAX
                                                                        : rand() / (double)RAND_MAX * 2 - 1;
  dfx_port feeds[3] = {{"p0", 0}, {"p1", 0}, {"p2", 0}};
  dfx_tensor *fv[3];
  const char *inits[3] = {"init0", "init1", "init2"};
  for (int j = 0; j < nv; j++) fv[j] = vec(f64, ref[j]);
  cr_assert_eq(dfx_session_run(c.s, NULL, feeds, fv, nv, NULL, NULL, 0, inits, nv, c.st), DFX_OK, "%s",
               dfx_status_message(c.st));
  for (int j = 0; j < nv; j++) dfx_tensor_free(fv[j]);
  for (int s = 0; s < STEPS; s++) {
    double g[N];
    for (int i = 0; i < N; i++) g[i] = rand() / (double)RAND_MAX * 2 - 1;
    dfx_tensor *gt = vec(f64, g);
    dfx_port gp = {"g", 0};
    const char *tg[1] = {"step"};
    cr_assert_eq(dfx_session_run(c.s, NULL, &gp, &gt, 1, NULL, NULL, 0, tg, 1, c.st), DFX_OK, "%s",
                 dfx_status_message(c.st));
    dfx_tensor_free(gt);
    reference(k, nesterov, ref[0], ref[1], ref[2], g);
  }
  for (int j = 0; j < nv; j++) {
    char name[8];
    snprintf(name, sizeof name, "r%d", j);
    dfx_port p = {name, 0};
    dfx_tensor *t = NULL;
    cr_assert_eq(dfx_session_run(c.s, NULL, NULL, NULL, 0, &p, &t, 1, NULL, 0, c.st), DFX_OK, "%s",
                 dfx_status_message(c.st));
    for (int i = 0; i < N; i++) {
      double got = f64 ? ((const double *)dfx_tensor_data(t))[i] : ((const float *)dfx_tensor_data(t))[i];
      double tol = f64 ? 1e-12 : 1e-5;
      cr_assert(fabs(got - ref[j][i]) <= tol * (1 + fabs(ref[j][i])), "%s %s%s %s slot %d [%d]: got %.9g want %.9g",
                op_names[k], resource ? "resource " : "", nesterov ? "nesterov" : "", f64 ? "f64" : "f32", j, i, got,
                ref[j][i]);
    }
    dfx_tensor_free(t);
  }
  vt_close(&c);
}

static void check_all(bool resource) {
  for (int f64 = 0; f64 < 2; f64++)
    for (int k = GD; k <= RMS; k++)
      for (int nest = 0; nest < ((k == MOM || k == ADAM) ? 2 : 1); nest++) check(k, resource, nest, f64);
}

Test(apply, ref_forms_match_reference) { check_all(false); }
Test(apply, resource_forms_match_reference) { check_all(true); }

Test(apply, uninitialised_slot_is_named) {
  static char text[16384];
  build(text, sizeof text, ADAM, false, false, "DT_FLOAT");
  vt c = vt_open(text, 1);
  double z[N] = {0};
  dfx_tensor *fv[2] = {vec(false, z), vec(false, z)};
  dfx_port feeds[2] = {{"p0", 0}, {"p1", 0}};
  const char *inits[2] = {"init0", "init1"};
  cr_assert_eq(dfx_session_run(c.s, NULL, feeds, fv, 2, NULL, NULL, 0, inits, 2, c.st), DFX_OK);
  dfx_port gp = {"g", 0};
  const char *tg[1] = {"step"};
  cr_assert_eq(dfx_session_run(c.s, NULL, &gp, fv, 1, NULL, NULL, 0, tg, 1, c.st), DFX_EPRECOND);
  cr_assert(strstr(dfx_status_message(c.st), "Attempting to use uninitialized value v2"), "%s",
            dfx_status_message(c.st));
  dfx_tensor_free(fv[0]);
  dfx_tensor_free(fv[1]);
  vt_close(&c);
}

Test(apply, learning_rate_must_be_scalar) {
  static const char *g2 = VT_VAR("v", 3) VT_FVEC("val", "1 float_val: 2 float_val: 3")
      VT_OP2("init", "Assign", "v", "val", "DT_FLOAT")
      "node { name: \"step\" op: \"ApplyGradientDescent\"" VT_IN("v") VT_IN("val") VT_IN("val")
      VT_TYPE("T", "DT_FLOAT") " }\n";
  vt c = vt_open(g2, 1);
  cr_assert_eq(vt_run(&c, NULL, NULL, NULL, NULL, "init"), DFX_OK);
  cr_assert_eq(vt_run(&c, NULL, NULL, NULL, NULL, "step"), DFX_EINVAL);
  cr_assert(strstr(dfx_status_message(c.st), "alpha is not a scalar: [3]"), "%s", dfx_status_message(c.st));
  vt_close(&c);
}
