/* atest.h - shared helpers for the array kernel tests: tensors of any dtype
 * from doubles or C strings, run-and-check wrappers, and a leak-checking
 * fixture (every test must end with no live allocations). */
#ifndef ATEST_H
#define ATEST_H

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "kharness.h"
#include "lib.h"
#include "op_registry.h"

static dfx_testalloc atest_ta;

static inline void atest_setup(void) {
  dfx_status st;
  /* Both registries built and fully parsed before counting. */
  cr_assert(dfx__lib_registry(&st) != NULL, "registry: %s", st.msg);
  cr_assert_eq(dfx__op_parse_all(&st), DFX_OK, "op registry: %s", st.msg);
  memset(&atest_ta, 0, sizeof atest_ta);
  dfx__testalloc_install(&atest_ta);
}

static inline void atest_teardown(void) {
  dfx__tensor_cache_flush();
  cr_expect_eq(atest_ta.live_blocks, 0, "leaked %lld blocks", atest_ta.live_blocks);
  dfx__testalloc_install(NULL);
}

#define ATEST(suite, name) Test(suite, name, .init = atest_setup, .fini = atest_teardown, .timeout = 20)

static inline void aset(dfx_tensor *t, int64_t i, double v) {
  void *p = t->data;
  switch ((dfx_dtype)t->dtype) {
    case DFX_F32: ((float *)p)[i] = (float)v; break;
    case DFX_F64: ((double *)p)[i] = v; break;
    case DFX_F16: ((uint16_t *)p)[i] = dfx__f32_to_f16((float)v); break;
    case DFX_BF16: ((uint16_t *)p)[i] = dfx__f32_to_bf16((float)v); break;
    case DFX_BOOL: ((uint8_t *)p)[i] = v != 0; break;
    case DFX_I8: case DFX_QI8: ((int8_t *)p)[i] = (int8_t)v; break;
    case DFX_U8: case DFX_QU8: ((uint8_t *)p)[i] = (uint8_t)v; break;
    case DFX_I16: case DFX_QI16: ((int16_t *)p)[i] = (int16_t)v; break;
    case DFX_U16: case DFX_QU16: ((uint16_t *)p)[i] = (uint16_t)v; break;
    case DFX_I32: case DFX_QI32: ((int32_t *)p)[i] = (int32_t)v; break;
    case DFX_U32: ((uint32_t *)p)[i] = (uint32_t)v; break;
    case DFX_I64: ((int64_t *)p)[i] = (int64_t)v; break;
    case DFX_U64: ((uint64_t *)p)[i] = (uint64_t)v; break;
    /* Handles are opaque pointers: tests store small integers in them. */
    case DFX_RESOURCE: case DFX_VARIANT: ((uintptr_t *)p)[i] = (uintptr_t)v; break;
    case DFX_C64: ((float *)p)[2 * i] = (float)v; ((float *)p)[2 * i + 1] = (float)-v; break;
    case DFX_C128: ((double *)p)[2 * i] = v; ((double *)p)[2 * i + 1] = -v; break;
    case DFX_STRING: {
      char buf[32];
      int n = snprintf(buf, sizeof buf, "s%g", v);
      cr_assert(dfx_tensor_set_string(t, i, buf, (size_t)n) == DFX_OK);
      break;
    }
    default: cr_assert_fail("aset: dtype %d", t->dtype);
  }
}

/* Reads element i as a double; strings "s<v>" read back as v, "" as 0. */
static inline double aget(const dfx_tensor *t, int64_t i) {
  if (t->dtype == DFX_STRING) {
    const dfx_str *s = (const dfx_str *)t->data + i;
    if (s->len == 0) return 0;
    char buf[64] = {0};
    cr_assert(s->len > 1 && s->len < sizeof buf && s->ptr[0] == 's', "bad string element %lld", (long long)i);
    memcpy(buf, s->ptr + 1, s->len - 1);
    return atof(buf);
  }
  if (t->dtype == DFX_C128) {
    const double *p = (const double *)t->data + 2 * i;
    cr_assert(p[1] == -p[0] || (p[0] == 0 && p[1] == 0));
    return p[0];
  }
  if (t->dtype == DFX_C64) {
    const float *p = (const float *)t->data + 2 * i;
    cr_assert(p[1] == -p[0] || (p[0] == 0 && p[1] == 0));
    return p[0];
  }
  if (t->dtype == DFX_RESOURCE || t->dtype == DFX_VARIANT) return (double)((const uintptr_t *)t->data)[i];
  return dfx__tensor_get_f64(t, i);
}

/* New tensor of dtype dt with the given values (NULL: 0, 1, 2, ...). */
static inline dfx_tensor *avals(dfx_dtype dt, int nd, const int64_t *dims, const double *v) {
  dfx_tensor *t = dfx__tensor_zeros(dt, nd, dims, NULL);
  cr_assert(t);
  for (int64_t i = 0; i < t->count; i++) aset(t, i, v ? v[i] : (double)i);
  return t;
}

static inline dfx_tensor *ai32v(int n, const int32_t *v) {
  int64_t d = n;
  return kh_i32(1, &d, v);
}
static inline dfx_tensor *ai64v(int n, const int64_t *v) {
  int64_t d = n;
  return kh_i64(1, &d, v);
}

/* Asserts t has dtype dt, shape dims and values v (NULL: skip values). */
static inline void acheck(const dfx_tensor *t, dfx_dtype dt, int nd, const int64_t *dims, const double *v) {
  cr_assert(t);
  cr_assert_eq(t->dtype, dt, "dtype %d != %d", t->dtype, dt);
  cr_assert_eq(t->ndims, nd, "rank %d != %d", t->ndims, nd);
  for (int i = 0; i < nd; i++) cr_assert_eq(t->dims[i], dims[i], "dim %d: %lld != %lld", i, (long long)t->dims[i],
                                            (long long)dims[i]);
  if (!v) return;
  for (int64_t i = 0; i < t->count; i++) {
    double a = aget(t, i);
    cr_assert(a == v[i] || (isnan(a) && isnan(v[i])), "element %lld: %g != %g", (long long)i, a, v[i]);
  }
}

/* Runs n with inputs and asserts success; outputs go to out. */
static inline int arun(dfx_node *n, dfx_tensor **in, int nin, dfx_tensor **out) {
  char err[512];
  int nout = 0;
  dfx_code c = kh_run(n, in, nin, out, &nout, err, sizeof err);
  cr_assert_eq(c, DFX_OK, "%s failed: %s", n->op, err);
  return nout;
}

/* Runs n and asserts failure with a message containing want. */
static inline void aerr(dfx_node *n, dfx_tensor **in, int nin, const char *want) {
  char err[512];
  dfx_tensor *out[64];
  int nout = 0;
  dfx_code c = kh_run(n, in, nin, out, &nout, err, sizeof err);
  cr_assert_neq(c, DFX_OK, "%s unexpectedly succeeded (want '%s')", n->op, want);
  cr_assert(strstr(err, want) != NULL, "error '%s' lacks '%s'", err, want);
}

static inline void afree(dfx_tensor **t, int n) {
  for (int i = 0; i < n; i++) dfx__tensor_unref(t[i]);
}

/* The dtypes the kernels of `op` declare for type attr `attr` (kernel rows'
 * `types`), so dtype sweeps cover exactly the declared set. */
static inline int adtypes(const char *op, const char *attr, dfx_dtype *out) {
  uint64_t m = dfx__registry_kernel_types(dfx__lib_registry(NULL), op, attr);
  cr_assert(m != ~(uint64_t)0, "%s: a kernel row leaves %s unconstrained", op, attr);
  int n = 0;
  for (int t = 1; t < DFX_DTYPE_END_; t++)
    if (m >> t & 1) out[n++] = (dfx_dtype)t;
  cr_assert(n > 0, "%s declares no dtype for %s", op, attr);
  return n;
}

/* An integer tensor of dtype dt (rank 1, or rank 0 when n < 0 with v[0]). */
static inline dfx_tensor *aint(dfx_dtype dt, int n, const int64_t *v) {
  int64_t d = n;
  dfx_tensor *t = dfx__tensor_zeros(dt, n < 0 ? 0 : 1, &d, NULL);
  cr_assert(t);
  for (int64_t i = 0; i < t->count; i++) aset(t, i, (double)v[i]);
  return t;
}

/* Value the reference uses for source element i in dtype dt (bool: 0/1). */

static inline double aval(dfx_dtype dt, int64_t i) { return dt == DFX_BOOL ? (double)(i % 2) : (double)(i % 100); }

static inline dfx_tensor *aseq(dfx_dtype dt, int nd, const int64_t *dims) {
  dfx_tensor *t = dfx__tensor_zeros(dt, nd, dims, NULL);
  cr_assert(t);
  for (int64_t i = 0; i < t->count; i++) aset(t, i, aval(dt, i));
  return t;
}

#endif
