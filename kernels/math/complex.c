/* complex.c - the parts of complex numbers: Complex (two reals -> complex,
 * with TF broadcasting), Real, Imag, Angle, ComplexAbs (complex -> real,
 * same shape) and Conj. As in TF, complex64 pairs with float and complex128
 * with double; elements are dense, dfx_c64 / dfx_c128 being {re, im}. */
#include <math.h>

#include "ew.h"

enum part { REAL, IMAG, ANGLE, ABS, CONJ };

/* o[i] = part of x[i] for i in [lo, hi). */
#define PART_LOOP(CT, RT, HYPOT, ATAN2)                                                        \
  do {                                                                                         \
    const CT *restrict a = x->data;                                                            \
    RT *restrict b = o->data;                                                                  \
    CT *restrict bc = o->data;                                                                 \
    switch (p) {                                                                               \
      case REAL: for (int64_t i = lo; i < hi; i++) b[i] = a[i].re; break;                      \
      case IMAG: for (int64_t i = lo; i < hi; i++) b[i] = a[i].im; break;                      \
      case ANGLE: for (int64_t i = lo; i < hi; i++) b[i] = ATAN2(a[i].im, a[i].re); break;     \
      case ABS: for (int64_t i = lo; i < hi; i++) b[i] = HYPOT(a[i].re, a[i].im); break;       \
      case CONJ: for (int64_t i = lo; i < hi; i++) bc[i] = (CT){a[i].re, -a[i].im}; break;     \
    }                                                                                          \
  } while (0)

static dfx_code run_part(dfx_kctx *ctx, enum part p) {
  const dfx_tensor *x = ctx->in[0];
  const bool c64 = x->dtype == DFX_C64;
  /* The parts of a complex64 are floats, of a complex128 doubles (TF's Tout);
   * Conj keeps the complex type. */
  const dfx_dtype ot = p == CONJ ? (dfx_dtype)x->dtype : c64 ? DFX_F32 : DFX_F64;
  dfx_tensor *o = dfx__kctx_alloc(ctx, 0, ot, x->ndims, x->dims);
  if (!o) return dfx_status_code(ctx->st);
  for (int64_t lo = 0; lo < x->count; lo += EW_POLL_GRAIN) {
    dfx_code c = lo > 0 ? dfx__kctx_poll(ctx) : DFX_OK;
    if (c != DFX_OK) return c;
    const int64_t hi = x->count - lo > EW_POLL_GRAIN ? lo + EW_POLL_GRAIN : x->count;
    /* hypot, not sqrt(re*re + im*im): the squares overflow or underflow long
     * before |z| does. Angle is atan2(im, re), in [-pi, pi]. */
    if (c64)
      PART_LOOP(dfx_c64, float, hypotf, atan2f);
    else
      PART_LOOP(dfx_c128, double, hypot, atan2);
  }
  return DFX_OK;
}

static dfx_code k_real(dfx_kctx *ctx) { return run_part(ctx, REAL); }
static dfx_code k_imag(dfx_kctx *ctx) { return run_part(ctx, IMAG); }
static dfx_code k_angle(dfx_kctx *ctx) { return run_part(ctx, ANGLE); }
static dfx_code k_abs(dfx_kctx *ctx) { return run_part(ctx, ABS); }
static dfx_code k_conj(dfx_kctx *ctx) { return run_part(ctx, CONJ); }

/* out = real + i * imag, broadcasting real against imag. */
static dfx_code k_complex(dfx_kctx *ctx) {
  const dfx_tensor *re = ctx->in[0], *im = ctx->in[1];
  dfx_bcast bcs;
  const dfx_bcast *bc = dfx__bcast_pair(&bcs, (const dfx_tensor *const *)ctx->in);
  if (!bc) return dfx__bcast_fail(ctx, re, im);
  /* The rows pair float with complex64 and double with complex128, so the
   * real dtype decides the output. */
  const bool f32 = re->dtype == DFX_F32;
  dfx_tensor *o = dfx__kctx_alloc(ctx, 0, f32 ? DFX_C64 : DFX_C128, bc->ndims, bc->dims);
  if (!o) return dfx_status_code(ctx->st);
  const int64_t n = bc->count, grain = dfx__bcast_grain(bc, EW_POLL_GRAIN);
  for (int64_t lo = 0; lo < n; lo += grain) {
    dfx_code c = lo > 0 ? dfx__kctx_poll(ctx) : DFX_OK;
    if (c != DFX_OK) return c;
    const int64_t hi = n - lo > grain ? lo + grain : n;
    if (f32) {
      const float *pa = re->data, *pb = im->data;
      dfx_c64 *po = o->data;
      EW_LOOP2(bc, lo, hi, po[io] = (dfx_c64){pa[ia], pb[ib]});
    } else {
      const double *pa = re->data, *pb = im->data;
      dfx_c128 *po = o->data;
      EW_LOOP2(bc, lo, hi, po[io] = (dfx_c128){pa[ia], pb[ib]});
    }
  }
  return DFX_OK;
}

#define C64_F "T: {complex64}; Tout: {float}"
#define C128_D "T: {complex128}; Tout: {double}"
static const dfx_kernel_def kernels[] = {
    {"Complex", "T: {float}; Tout: {complex64}", k_complex, DFX_KERNEL_CHEAP, NULL, NULL},
    {"Complex", "T: {double}; Tout: {complex128}", k_complex, DFX_KERNEL_CHEAP, NULL, NULL},
    {"Real", C64_F, k_real, DFX_KERNEL_CHEAP, NULL, NULL},
    {"Real", C128_D, k_real, DFX_KERNEL_CHEAP, NULL, NULL},
    {"Imag", C64_F, k_imag, DFX_KERNEL_CHEAP, NULL, NULL},
    {"Imag", C128_D, k_imag, DFX_KERNEL_CHEAP, NULL, NULL},
    {"Angle", C64_F, k_angle, DFX_KERNEL_CHEAP, NULL, NULL},
    {"Angle", C128_D, k_angle, DFX_KERNEL_CHEAP, NULL, NULL},
    {"ComplexAbs", C64_F, k_abs, DFX_KERNEL_CHEAP, NULL, NULL},
    {"ComplexAbs", C128_D, k_abs, DFX_KERNEL_CHEAP, NULL, NULL},
    {"Conj", "T: {" EW_TY_C "}", k_conj, DFX_KERNEL_CHEAP, NULL, NULL},
    {NULL}};

void dfx__kernels_math_complex(dfx_registry *r);
void dfx__kernels_math_complex(dfx_registry *r) { dfx__kernels_add(r, kernels); }
