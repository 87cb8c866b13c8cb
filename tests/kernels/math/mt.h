/* mt.h - small helpers shared by the math kernel tests: run an op with a T
 * attr, build tensors from double values of any dtype, compare outputs, and
 * list the dtypes an op's kernels declare (the sweeps cover exactly those). */
#ifndef MT_H
#define MT_H

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kharness.h"
#include "lib.h"
#include "node_sig.h"
#include "step.h"

/* Runs `op` with attr T=t (when t != DFX_INVALID) on n inputs; returns the
 * code, out[0] on success (caller unrefs), message in err. */
static inline dfx_code mt_run(const char *op, dfx_dtype t, dfx_tensor **in, int n, dfx_tensor **out,
                              char *err, size_t errlen) {
  dfx_node *nd = kh_node_new(op);
  if (t != DFX_INVALID) kh_attr_type(nd, "T", t);
  dfx_tensor *outs[4] = {0};
  int nout = 0;
  dfx_code c = kh_run(nd, in, n, outs, &nout, err, errlen);
  kh_node_free(nd);
  *out = outs[0];
  return c;
}

/* The kernel registry sessions use. */
static inline const dfx_registry *mt_registry(void) {
  dfx_status st;
  const dfx_registry *r = dfx__lib_registry(&st);
  cr_assert(r, "registry: %s", st.msg);
  return r;
}
/* The dtypes op's kernels declare for type attr `attr`: bit t for dtype t. */
static inline uint64_t mt_declared(const char *op, const char *attr) {
  uint64_t m = dfx__registry_kernel_types(mt_registry(), op, attr);
  cr_assert(m != ~(uint64_t)0, "%s: some kernel row leaves %s unconstrained", op, attr);
  return m;
}
/* for (each dtype t in mask) */
#define MT_FOR_DTYPES(t, mask) \
  for (dfx_dtype t = DFX_F32; t < DFX_DTYPE_END_; t++) \
    if ((mask) >> t & 1)
static inline bool mt_is_complex(dfx_dtype t) { return t == DFX_C64 || t == DFX_C128; }
static inline bool mt_is_unsigned(dfx_dtype t) {
  return t == DFX_U8 || t == DFX_U16 || t == DFX_U32 || t == DFX_U64 || t == DFX_QU8 || t == DFX_QU16;
}
/* Relative tolerance of a float dtype's results (0 for exact types). */
static inline double mt_tol(dfx_dtype t) {
  switch (t) {
    case DFX_F16: return 2e-3;
    case DFX_BF16: return 1.6e-2;
    case DFX_F32: case DFX_C64: return 2e-6;
    case DFX_F64: case DFX_C128: return 1e-13;
    default: return 0;
  }
}

/* Complex element i of a complex64/complex128 tensor. */
static inline void mt_cget(const dfx_tensor *t, int64_t i, double *re, double *im) {
  if (t->dtype == DFX_C64) {
    *re = ((const dfx_c64 *)t->data)[i].re;
    *im = ((const dfx_c64 *)t->data)[i].im;
  } else {
    *re = ((const dfx_c128 *)t->data)[i].re;
    *im = ((const dfx_c128 *)t->data)[i].im;
  }
}

/* Tensor of dtype t from double values (integers truncated, halves rounded;
 * complex elements get v and -v/2 as real and imaginary parts). */
static inline dfx_tensor *mt_tensor(dfx_dtype t, int ndims, const int64_t *dims, const double *v) {
  dfx_tensor *x = dfx__tensor_alloc(t, ndims, dims, NULL);
  cr_assert(x);
  for (int64_t i = 0; i < x->count; i++) {
    double d = v ? v[i] : 0;
    void *p = x->data;
    switch (t) {
      case DFX_F32: ((float *)p)[i] = (float)d; break;
      case DFX_F64: ((double *)p)[i] = d; break;
      case DFX_F16: ((uint16_t *)p)[i] = dfx__f32_to_f16((float)d); break;
      case DFX_BF16: ((uint16_t *)p)[i] = dfx__f32_to_bf16((float)d); break;
      case DFX_BOOL: ((uint8_t *)p)[i] = d != 0; break;
      case DFX_I8: ((int8_t *)p)[i] = (int8_t)d; break;
      case DFX_I16: ((int16_t *)p)[i] = (int16_t)d; break;
      case DFX_I32: ((int32_t *)p)[i] = (int32_t)d; break;
      case DFX_I64: ((int64_t *)p)[i] = (int64_t)d; break;
      case DFX_U8: ((uint8_t *)p)[i] = (uint8_t)d; break;
      case DFX_U16: ((uint16_t *)p)[i] = (uint16_t)d; break;
      case DFX_U32: ((uint32_t *)p)[i] = (uint32_t)d; break;
      case DFX_U64: ((uint64_t *)p)[i] = (uint64_t)d; break;
      case DFX_QI8: ((int8_t *)p)[i] = (int8_t)d; break;
      case DFX_QU8: ((uint8_t *)p)[i] = (uint8_t)d; break;
      case DFX_QI16: ((int16_t *)p)[i] = (int16_t)d; break;
      case DFX_QU16: ((uint16_t *)p)[i] = (uint16_t)d; break;
      case DFX_QI32: ((int32_t *)p)[i] = (int32_t)d; break;
      case DFX_C64: ((dfx_c64 *)p)[i] = (dfx_c64){(float)d, (float)(-d / 2)}; break;
      case DFX_C128: ((dfx_c128 *)p)[i] = (dfx_c128){d, -d / 2}; break;
      default: cr_assert_fail("mt_tensor: dtype %d", t);
    }
  }
  return x;
}

static inline void mt_expect_shape(const dfx_tensor *t, int ndims, const int64_t *dims) {
  cr_assert_eq(t->ndims, ndims, "rank %d != %d", t->ndims, ndims);
  for (int i = 0; i < ndims; i++) cr_assert_eq(t->dims[i], dims[i], "dim %d: %lld != %lld", i, (long long)t->dims[i], (long long)dims[i]);
}

/* Elementwise comparison with relative tolerance; NaN matches NaN. */
static inline void mt_expect_vals(const dfx_tensor *t, const double *want, double tol, const char *what) {
  for (int64_t i = 0; i < t->count; i++) {
    double g = dfx__tensor_get_f64(t, i), w = want[i];
    if (isnan(w)) {
      cr_expect(isnan(g), "%s[%lld]: got %g want nan", what, (long long)i, g);
    } else if (isinf(w)) {
      cr_expect(g == w, "%s[%lld]: got %g want %g", what, (long long)i, g, w);
    } else {
      cr_expect(fabs(g - w) <= tol * fmax(1.0, fabs(w)), "%s[%lld]: got %.17g want %.17g", what, (long long)i, g, w);
    }
  }
}

/* Complex results against want_re/want_im, with relative tolerance on |want|. */
static inline void mt_expect_cvals(const dfx_tensor *t, const double *want_re, const double *want_im, double tol,
                                   const char *what) {
  for (int64_t i = 0; i < t->count; i++) {
    double re, im;
    mt_cget(t, i, &re, &im);
    double scale = fmax(1.0, hypot(want_re[i], want_im[i]));
    cr_expect(fabs(re - want_re[i]) <= tol * scale && fabs(im - want_im[i]) <= tol * scale,
              "%s[%lld]: got %.17g%+.17gi want %.17g%+.17gi", what, (long long)i, re, im, want_re[i], want_im[i]);
  }
}

/* The parallel_for stand-in mt_run_in_step hands kernels (NULL: serial). */
static const dfx_parallel *mt_par;

/* Runs node n's kernel like kh_run, but in `step` (the caller cancels it or
 * sets its deadline) and with ctx.own_inputs = own: the kernel may then take
 * an input, leaving its in[] entry NULL; the caller unrefs the entries left.
 * Returns the code; out[0] on success (caller unrefs); message in err. */
static inline dfx_code mt_run_in_step(dfx_node *n, dfx_step *step, bool own, dfx_tensor **in, int n_in,
                                      dfx_tensor **out, char *err, size_t errlen) {
  dfx_status st;
  dfx__status_clear(&st);
  int expected = 0;
  dfx_code c = dfx__node_fill_defaults(n, n->def, &st);
  if (c == DFX_OK) c = dfx__node_resolve_types(n, n->def, &expected, &st);
  const dfx_kernel_def *k = c == DFX_OK ? dfx__registry_kernel_for(mt_registry(), n, &st) : NULL;
  cr_assert(k, "%s", st.msg);
  void *state = NULL;
  if (k->init) cr_assert_eq(k->init(n, &state, &st), DFX_OK, "%s", st.msg);
  dfx_tensor *outs[4] = {0};
  dfx_kctx ctx = {.node = n, .n_in = n_in, .in = in, .n_out = n->n_out, .out = outs, .state = state,
                  .step = step, .frame = "", .iter = 0, .st = &st, .own_inputs = own, .par = mt_par};
  c = k->fn(&ctx);
  if (k->fini) k->fini(state);
  if (c != DFX_OK)
    for (int i = 0; i < n->n_out; i++) dfx__tensor_unref(outs[i]);
  *out = c == DFX_OK ? outs[0] : NULL;
  snprintf(err, errlen, "%s", c == DFX_OK ? "" : st.msg);
  return c;
}

#endif
