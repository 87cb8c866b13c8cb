/* nn_test.h - small helpers shared by the nn kernel tests. */
#ifndef NN_TEST_H
#define NN_TEST_H

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kharness.h"
#include "lib.h"
#include "op_registry.h"

/* Element i of any real tensor as double. */
static inline double tget(const dfx_tensor *t, int64_t i) { return dfx__tensor_get_f64(t, i); }

/* Stores v (rounded for half types, truncated for integers) as element i. */
static inline void tset(dfx_tensor *x, int64_t i, double v) {
  switch ((dfx_dtype)x->dtype) {
  case DFX_F32: ((float *)x->data)[i] = (float)v; break;
  case DFX_F64: ((double *)x->data)[i] = v; break;
  case DFX_F16: ((uint16_t *)x->data)[i] = dfx__f32_to_f16((float)v); break;
  case DFX_BF16: ((uint16_t *)x->data)[i] = dfx__f32_to_bf16((float)v); break;
  case DFX_I8: ((int8_t *)x->data)[i] = (int8_t)v; break;
  case DFX_I16: ((int16_t *)x->data)[i] = (int16_t)v; break;
  case DFX_I32: ((int32_t *)x->data)[i] = (int32_t)v; break;
  case DFX_I64: ((int64_t *)x->data)[i] = (int64_t)v; break;
  case DFX_U8: case DFX_BOOL: ((uint8_t *)x->data)[i] = (uint8_t)v; break;
  case DFX_U16: ((uint16_t *)x->data)[i] = (uint16_t)v; break;
  case DFX_U32: ((uint32_t *)x->data)[i] = (uint32_t)v; break;
  case DFX_U64: ((uint64_t *)x->data)[i] = (uint64_t)v; break;
  default: break;
  }
}

/* A new tensor of dtype t holding v[0..count). */
static inline dfx_tensor *tfrom(dfx_dtype t, int nd, const int64_t *dims, const double *v) {
  dfx_tensor *x = kh_tensor(t, nd, dims, NULL);
  for (int64_t i = 0; i < x->count; i++) tset(x, i, v[i]);
  return x;
}

/* Fills a tensor of dtype t with deterministic pseudo-random values in
 * [lo, hi] (integers rounded). */
static inline dfx_tensor *trand(dfx_dtype t, int nd, const int64_t *dims, double lo, double hi, unsigned seed) {
  dfx_tensor *x = kh_tensor(t, nd, dims, NULL);
  unsigned s = seed * 2654435761u + 12345;
  for (int64_t i = 0; i < x->count; i++) {
    s = s * 1103515245u + 12345;
    double v = lo + (hi - lo) * ((s >> 8) & 0xffff) / 65535.0;
    if (dfx__dtype_is_int(t) || t == DFX_BOOL) v = floor(v + 0.5);
    tset(x, i, v);
  }
  return x;
}

static inline double ttol(dfx_dtype t) {
  return t == DFX_F16 || t == DFX_BF16 ? 2e-2 : t == DFX_F32 ? 1e-4 : t == DFX_F64 ? 1e-10 : 0;
}

/* Asserts |got - want| <= tol * (1 + |want|), NaN equal to NaN. */
#define EXPECT_NEAR(got, want, tol, ...)                                                   \
  do {                                                                                     \
    double g_ = (got), w_ = (want);                                                        \
    if (isnan(w_)) cr_expect(isnan(g_), __VA_ARGS__);                                      \
    else if (isinf(w_)) cr_expect(g_ == w_, __VA_ARGS__);                                  \
    else cr_expect(fabs(g_ - w_) <= (tol) * (1 + fabs(w_)), __VA_ARGS__);                  \
  } while (0)

/* Runs node with inputs; on success returns out[0..] and frees nothing. */
static inline dfx_code run1(dfx_node *n, dfx_tensor **in, int nin, dfx_tensor **out, char *err) {
  int nout = 0;
  return kh_run(n, in, nin, out, &nout, err, 512);
}

static inline void unref_all(dfx_tensor **t, int n) {
  for (int i = 0; i < n; i++) dfx__tensor_unref(t[i]);
}

static inline const dfx_registry *nn_reg(void) {
  dfx_status st;
  const dfx_registry *r = dfx__lib_registry(&st);
  cr_assert(r, "registry: %s", st.msg);
  return r;
}

/* The dtypes op's kernel rows declare for type attr `attr`, in dtype order
 * (out has room for DFX_DTYPE_END_); returns how many. An op without that
 * attr gives {fallback}. */
static inline int nn_declared_or(const char *op, const char *attr, dfx_dtype fallback, dfx_dtype *out) {
  if (!dfx__op_def_attr(dfx__op_get(op), attr)) {
    out[0] = fallback;
    return 1;
  }
  uint64_t m = dfx__registry_kernel_types(nn_reg(), op, attr);
  cr_assert_neq(m, ~(uint64_t)0, "%s: the kernel rows leave %s unconstrained", op, attr);
  int n = 0;
  for (int t = 1; t < DFX_DTYPE_END_; t++)
    if (m >> t & 1) out[n++] = (dfx_dtype)t;
  cr_assert_gt(n, 0, "%s declares no %s", op, attr);
  return n;
}
static inline int nn_declared(const char *op, const char *attr, dfx_dtype *out) {
  return nn_declared_or(op, attr, DFX_INVALID, out);
}

/* A random input for dtype t: [0, 1] for bool, [0, 3] unsigned, else [-3, 3]. */
static inline dfx_tensor *nn_rand(dfx_dtype t, int nd, const int64_t *dims, unsigned seed) {
  bool sgn = dfx__dtype_is_signed(t) || dfx__dtype_is_float(t);
  return trand(t, nd, dims, sgn ? -3 : 0, t == DFX_BOOL ? 1 : 3, seed);
}

/* A scalar of integer dtype t. */
static inline dfx_tensor *nn_iscalar(dfx_dtype t, int64_t v) {
  dfx_tensor *x = kh_tensor(t, 0, NULL, NULL);
  switch (t) {
  case DFX_I16: *(int16_t *)x->data = (int16_t)v; break;
  case DFX_U16: *(uint16_t *)x->data = (uint16_t)v; break;
  case DFX_I32: *(int32_t *)x->data = (int32_t)v; break;
  default: *(int64_t *)x->data = v; break;
  }
  return x;
}

/* Asserts y holds n elements close to want[0..n). */
static inline void nn_expect(const dfx_tensor *y, const double *want, int64_t n, double tol, const char *what) {
  cr_assert_eq(y->count, n, "%s: %lld elements, want %lld", what, (long long)y->count, (long long)n);
  for (int64_t i = 0; i < n; i++)
    EXPECT_NEAR(tget(y, i), want[i], tol, "%s [%lld]: got %g want %g", what, (long long)i, tget(y, i), want[i]);
}

#endif
