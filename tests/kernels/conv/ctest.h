/* ctest.h - small helpers shared by the conv family's tests. */
#ifndef CTEST_H
#define CTEST_H

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "kharness.h"
#include "lib.h"
#include "node_sig.h"
#include "step.h"

static inline double ct_rand(unsigned *s) {
  *s = *s * 1103515245u + 12345u;
  return (double)((*s >> 8) % 2001) / 1000.0 - 1.0;
}

/* Tensor of dtype dt from doubles (converted like a cast). */
static inline dfx_tensor *ct_tensor(dfx_dtype dt, int nd, const int64_t *dims, const double *v) {
  int64_t n = 1;
  for (int i = 0; i < nd; i++) n *= dims[i];
  dfx_tensor *t = kh_tensor(dt, nd, dims, NULL);
  for (int64_t i = 0; i < n; i++) {
    switch (dt) {
    case DFX_F32: ((float *)t->data)[i] = (float)v[i]; break;
    case DFX_F64: ((double *)t->data)[i] = v[i]; break;
    case DFX_F16: ((uint16_t *)t->data)[i] = dfx__f32_to_f16((float)v[i]); break;
    case DFX_BF16: ((uint16_t *)t->data)[i] = dfx__f32_to_bf16((float)v[i]); break;
    case DFX_I32: ((int32_t *)t->data)[i] = (int32_t)v[i]; break;
    case DFX_I64: ((int64_t *)t->data)[i] = (int64_t)v[i]; break;
    case DFX_U8: ((uint8_t *)t->data)[i] = (uint8_t)v[i]; break;
    case DFX_I8: ((int8_t *)t->data)[i] = (int8_t)v[i]; break;
    case DFX_I16: ((int16_t *)t->data)[i] = (int16_t)v[i]; break;
    case DFX_U16: ((uint16_t *)t->data)[i] = (uint16_t)v[i]; break;
    case DFX_U32: ((uint32_t *)t->data)[i] = (uint32_t)v[i]; break;
    case DFX_U64: ((uint64_t *)t->data)[i] = (uint64_t)v[i]; break;
    case DFX_QI8: ((int8_t *)t->data)[i] = (int8_t)v[i]; break;
    default: cr_assert_fail("ct_tensor: dtype %d", dt);
    }
  }
  return t;
}

/* Values as stored in t, re-read as doubles (what the kernel actually saw). */
static inline void ct_read(const dfx_tensor *t, double *v) {
  for (int64_t i = 0; i < t->count; i++) v[i] = dfx__tensor_get_f64(t, i);
}

static inline double ct_tol(dfx_dtype dt) {
  return dt == DFX_F16 ? 1e-2 : dt == DFX_BF16 ? 4e-2 : dt == DFX_F32 ? 2e-5 : 1e-9;
}

/* Checks t (dtype dt, dims) against want[]. */
static inline void ct_expect(const dfx_tensor *t, dfx_dtype dt, int nd, const int64_t *dims, const double *want,
                             double tol, const char *what) {
  cr_assert_eq(t->dtype, dt, "%s: dtype %d want %d", what, t->dtype, dt);
  cr_assert_eq(t->ndims, nd, "%s: rank %d want %d", what, t->ndims, nd);
  for (int i = 0; i < nd; i++)
    cr_assert_eq(t->dims[i], dims[i], "%s: dim %d = %lld want %lld", what, i, (long long)t->dims[i],
                 (long long)dims[i]);
  for (int64_t i = 0; i < t->count; i++) {
    double g = dfx__tensor_get_f64(t, i), w = want[i];
    if (isnan(w)) {
      cr_assert(isnan(g), "%s: [%lld] got %g want nan", what, (long long)i, g);
      continue;
    }
    cr_assert(fabs(g - w) <= tol + tol * fabs(w), "%s: [%lld] got %.9g want %.9g", what, (long long)i, g, w);
  }
}

/* Runs n expecting success with one or more outputs. */
static inline void ct_run(dfx_node *n, dfx_tensor **in, int n_in, dfx_tensor **out, int want_out) {
  char err[512] = "";
  int n_out = 0;
  dfx_code c = kh_run(n, in, n_in, out, &n_out, err, sizeof err);
  cr_assert_eq(c, DFX_OK, "%s failed: %s", n->op, err);
  cr_assert_eq(n_out, want_out);
}

/* Runs n expecting failure whose message contains `sub`. */
static inline void ct_fail(dfx_node *n, dfx_tensor **in, int n_in, const char *sub) {
  char err[512] = "";
  int n_out = 0;
  dfx_tensor *out[4] = {0};
  dfx_code c = kh_run(n, in, n_in, out, &n_out, err, sizeof err);
  cr_assert_neq(c, DFX_OK, "%s should fail (%s)", n->op, sub);
  cr_assert(strstr(err, sub), "%s: message '%s' lacks '%s'", n->op, err, sub);
}

static inline void ct_free(dfx_tensor **t, int n) {
  for (int i = 0; i < n; i++) dfx__tensor_unref(t[i]);
}

static inline const dfx_registry *ct_registry(void) {
  dfx_status st;
  const dfx_registry *r = dfx__lib_registry(&st);
  cr_assert_not_null(r, "registry: %s", st.msg);
  return r;
}

/* The dtypes op's kernels declare for type attr `attr`, ascending; returns
 * how many (each test sweeps exactly these). */
static inline int ct_declared(const char *op, const char *attr, dfx_dtype *out) {
  uint64_t mask = dfx__registry_kernel_types(ct_registry(), op, attr);
  cr_assert(mask && mask != ~(uint64_t)0, "%s declares no dtypes for %s", op, attr);
  int n = 0;
  for (int t = 1; t < DFX_DTYPE_END_; t++)
    if (mask >> t & 1) out[n++] = (dfx_dtype)t;
  return n;
}

/* Plans n as a session would (defaults, kernel lookup, init) and expects
 * init to refuse it with a message containing `sub`. */
static inline void ct_init_fails(dfx_node *n, const char *sub) {
  dfx_status st;
  dfx__status_clear(&st);
  cr_assert_eq(dfx__node_fill_defaults(n, n->def, &st), DFX_OK, "%s", st.msg);
  const dfx_kernel_def *k = dfx__registry_kernel_for(ct_registry(), n, &st);
  cr_assert(k && k->init, "%s: no kernel with an init (%s)", n->op, st.msg);
  void *state = NULL;
  dfx_code c = k->init(n, &state, &st);
  if (c == DFX_OK && k->fini) k->fini(state);
  cr_assert_neq(c, DFX_OK, "%s: init should refuse it (%s)", n->op, sub);
  cr_assert(strstr(st.msg, sub), "%s: init message '%s' lacks '%s'", n->op, st.msg, sub);
}

/* Runs n in a run whose deadline has passed: a kernel that polls returns
 * DFX_EDEADLINE after about CU_POLL_WORK units of work instead of
 * finishing. Returns the kernel's code; err gets its message. */
static inline dfx_code ct_run_late(dfx_node *n, dfx_tensor **in, int n_in, char *err, size_t errlen) {
  dfx_step step;
  cr_assert_eq(dfx__step_init(&step), DFX_OK);
  step.t0_ns = 1;
  step.deadline_ns = 2; /* long past */
  dfx_tensor *out[4] = {0};
  dfx_code c = kh_run_step(n, in, n_in, out, NULL, &step, err, errlen);
  ct_free(out, n->n_out);
  dfx__step_destroy(&step);
  return c;
}

#endif
