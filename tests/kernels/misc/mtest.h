/* mtest.h - small helpers shared by the misc family's tests. Kernels that
 * share per-run resources (TensorArrays, stacks) run through kh_run_step on
 * one dfx_step, as inside one session run. */
#ifndef MTEST_H
#define MTEST_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "kharness.h"
#include "lib.h"
#include "node_sig.h"
#include "step.h"

/* String tensor from C strings (NUL-terminated). */
static inline dfx_tensor *mk_str(int ndims, const int64_t *dims, const char *const *v) {
  dfx_tensor *t = dfx__tensor_alloc(DFX_STRING, ndims, dims, NULL);
  dfx_str *s = t->data;
  for (int64_t i = 0; i < t->count; i++) {
    s[i].len = strlen(v[i]);
    s[i].ptr = dfx__malloc(s[i].len + 1);
    memcpy(s[i].ptr, v[i], s[i].len + 1);
  }
  return t;
}

/* The dtypes the kernel rows of `op` declare for type attr `attr` (a bit per
 * dtype; ~0 when some row leaves it unconstrained). */
static inline uint64_t declared(const char *op, const char *attr) {
  dfx_status st;
  return dfx__registry_kernel_types(dfx__lib_registry(&st), op, attr);
}
/* Loops t over the dtypes in mask. */
#define FOR_DTYPES(t, mask) \
  for (dfx_dtype t = DFX_F32; t < DFX_DTYPE_END_; t++) \
    if ((mask) >> t & 1)

/* A tensor of any dtype whose elements differ from each other and with
 * `salt`: bytes for plain types (0/1 for bool), "e<k>.<salt>" for strings,
 * fake (never followed) pointers for resource and variant. */
static inline dfx_tensor *mk_elems(dfx_dtype t, int ndims, const int64_t *dims, int salt) {
  dfx_tensor *x = dfx__tensor_alloc(t, ndims, dims, NULL);
  if (t == DFX_STRING) {
    for (int64_t k = 0; k < x->count; k++) {
      char b[32];
      dfx_str *s = &((dfx_str *)x->data)[k];
      s->len = (size_t)snprintf(b, sizeof b, "e%lld.%d", (long long)k, salt);
      s->ptr = dfx__malloc(s->len);
      memcpy(s->ptr, b, s->len);
    }
  } else {
    unsigned char *p = x->data;
    for (size_t k = 0; k < x->nbytes; k++) p[k] = (unsigned char)(t == DFX_BOOL ? (k + salt) & 1 : k * 37 + salt * 11 + 1);
  }
  return x;
}

/* Whether a[ai..ai+n) and b[bi..bi+n) hold the same elements (strings by bytes). */
static inline bool elems_eq(const dfx_tensor *a, int64_t ai, const dfx_tensor *b, int64_t bi, int64_t n) {
  if (a->dtype != b->dtype) return false;
  if (a->dtype != DFX_STRING) {
    size_t es = a->nbytes / (size_t)(a->count ? a->count : 1);
    return memcmp((const char *)a->data + ai * es, (const char *)b->data + bi * es, (size_t)n * es) == 0;
  }
  const dfx_str *x = (const dfx_str *)a->data + ai, *y = (const dfx_str *)b->data + bi;
  for (int64_t k = 0; k < n; k++)
    if (x[k].len != y[k].len || (x[k].len && memcmp(x[k].ptr, y[k].ptr, x[k].len) != 0)) return false;
  return true;
}

#endif
