/* stest.h - small helpers for the sparse family's kernel tests. */
#ifndef STEST_H
#define STEST_H

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dfexec.h"
#include "kharness.h"

/* Runs `n` on borrowed inputs; up to 64 outputs go to out (caller unrefs,
 * s_unref_all) and err (512 bytes) gets the message. */
static inline dfx_code s_run(dfx_node *n, dfx_tensor **in, int nin, dfx_tensor **out, char *err) {
  int nout = 0;
  return kh_run(n, in, nin, out, &nout, err, 512);
}

static inline void s_unref_all(dfx_tensor **t, int n) {
  for (int i = 0; i < n; i++) {
    dfx__tensor_unref(t[i]);
    t[i] = NULL;
  }
}

static inline void s_expect_err(dfx_node *n, dfx_tensor **in, int nin, const char *sub) {
  dfx_tensor *out[64] = {0};
  char err[512];
  dfx_code c = s_run(n, in, nin, out, err);
  cr_expect_neq(c, DFX_OK, "expected error containing '%s'", sub);
  if (c == DFX_OK) s_unref_all(out, 64);
  else cr_expect(strstr(err, sub) != NULL, "error '%s' lacks '%s'", err, sub);
}

/* Numeric tensor of dtype dt from double values. */
static inline dfx_tensor *s_from_doubles(dfx_dtype dt, int nd, const int64_t *dims, const double *v) {
  dfx_tensor *t = dfx__tensor_alloc(dt, nd, dims, NULL);
  for (int64_t i = 0; i < t->count; i++) {
    switch (dt) {
      case DFX_I8: ((int8_t *)t->data)[i] = (int8_t)v[i]; break;
      case DFX_I16: ((int16_t *)t->data)[i] = (int16_t)v[i]; break;
      case DFX_I32: ((int32_t *)t->data)[i] = (int32_t)v[i]; break;
      case DFX_I64: ((int64_t *)t->data)[i] = (int64_t)v[i]; break;
      case DFX_U8: ((uint8_t *)t->data)[i] = (uint8_t)v[i]; break;
      case DFX_U16: ((uint16_t *)t->data)[i] = (uint16_t)v[i]; break;
      case DFX_U32: ((uint32_t *)t->data)[i] = (uint32_t)v[i]; break;
      case DFX_U64: ((uint64_t *)t->data)[i] = (uint64_t)v[i]; break;
      case DFX_BOOL: ((uint8_t *)t->data)[i] = v[i] != 0; break;
      case DFX_F64: ((double *)t->data)[i] = v[i]; break;
      case DFX_F32: ((float *)t->data)[i] = (float)v[i]; break;
      case DFX_F16: ((uint16_t *)t->data)[i] = dfx__f32_to_f16((float)v[i]); break;
      case DFX_BF16: ((uint16_t *)t->data)[i] = dfx__f32_to_bf16((float)v[i]); break;
      default: cr_assert_fail("dtype");
    }
  }
  return t;
}

/* String tensor from C strings. */
static inline dfx_tensor *s_str(int ndims, const int64_t *dims, const char *const *v) {
  dfx_tensor *t = dfx__tensor_alloc(DFX_STRING, ndims, dims, NULL);
  for (int64_t i = 0; i < t->count; i++) dfx_tensor_set_string(t, i, v[i], strlen(v[i]));
  return t;
}

static inline void s_expect_shape(const dfx_tensor *t, int ndims, const int64_t *dims) {
  cr_assert_eq(t->ndims, ndims, "rank %d want %d", t->ndims, ndims);
  for (int i = 0; i < ndims; i++)
    cr_assert_eq(t->dims[i], dims[i], "dim %d: %lld want %lld", i, (long long)t->dims[i], (long long)dims[i]);
}

static inline void s_expect_i64v(const dfx_tensor *t, const int64_t *want, int64_t n) {
  cr_assert_eq(t->count, n, "count %lld want %lld", (long long)t->count, (long long)n);
  for (int64_t i = 0; i < n; i++)
    cr_expect_eq(dfx__tensor_get_i64(t, i), want[i], "[%lld] %lld want %lld", (long long)i,
                 (long long)dfx__tensor_get_i64(t, i), (long long)want[i]);
}

static inline void s_expect_f64v(const dfx_tensor *t, const double *want, int64_t n, double tol) {
  cr_assert_eq(t->count, n, "count %lld want %lld", (long long)t->count, (long long)n);
  for (int64_t i = 0; i < n; i++) {
    double g = dfx__tensor_get_f64(t, i);
    cr_expect(fabs(g - want[i]) <= tol * (1 + fabs(want[i])), "[%lld] %.9g want %.9g", (long long)i, g, want[i]);
  }
}

static inline uint32_t s_rand(uint32_t *s) {
  *s = *s * 1664525u + 1013904223u;
  return *s >> 8;
}

/* Uniform in [lo, hi). */
static inline double s_uniform(uint32_t *s, double lo, double hi) {
  return lo + (hi - lo) * (double)(s_rand(s) & 0xffffff) / 16777216.0;
}

/* Imports GraphDef text, runs it once with the given feeds and fetches and
 * returns the code; fetched tensors go to out (dfx_tensor_free them), the
 * message to err (512 bytes). */
static inline dfx_code s_graph_run(const char *text, const dfx_port *feeds, dfx_tensor *const *fv, int nf,
                                   const dfx_port *fetches, dfx_tensor **out, int nout, char *err) {
  dfx_status *st = dfx_status_new();
  dfx_graph *g = NULL;
  dfx_session *s = NULL;
  dfx_session_options o = {.n_threads = 2};
  dfx_code c = dfx_graph_import(text, strlen(text), &g, st);
  if (c == DFX_OK) c = dfx_session_new(g, &o, &s, st);
  if (c == DFX_OK) c = dfx_session_run(s, NULL, feeds, fv, nf, fetches, out, nout, NULL, 0, st);
  snprintf(err, 512, "%s", c == DFX_OK ? "" : dfx_status_message(st));
  dfx_session_free(s);
  dfx_graph_free(g);
  dfx_status_free(st);
  return c;
}

#endif
