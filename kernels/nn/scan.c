/* scan.c - single-axis ops over an [outer, n, inner] view: ArgMax, ArgMin,
 * Cumsum and Cumprod. Ties in ArgMax/ArgMin go to the lowest index; scans
 * accumulate in double (floats) or wrapping 64-bit integers. */
#include <string.h>

#include "alloc.h"
#include "kdispatch.h"
#include "kernel.h"
#include "nn_util.h"


/* Reads the scalar axis input i and splits x into outer/n/inner. */
static dfx_code split_axis(dfx_kctx *ctx, const char *who, int64_t *outer, int64_t *n, int64_t *inner, int *axis) {
  const dfx_tensor *x = ctx->in[0], *a = ctx->in[1];
  char buf[96];
  if (a->ndims != 0)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "%s must be a scalar, but received tensor of shape: %s", who,
                          DFX_SHAPE_STR(a, buf));
  int64_t v = a->dtype == DFX_I64 ? *(const int64_t *)a->data : *(const int32_t *)a->data;
  int r = x->ndims;
  if (v < -r || v >= r)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Expected %s in the range [%d, %d), but got %lld",
                          who[0] == 'd' ? "dimension" : "scan axis", -r, r, (long long)v);
  int ax = (int)(v < 0 ? v + r : v);
  *outer = 1;
  *inner = 1;
  for (int d = 0; d < ax; d++) *outer *= x->dims[d];
  for (int d = ax + 1; d < r; d++) *inner *= x->dims[d];
  *n = x->dims[ax];
  *axis = ax;
  return DFX_OK;
}

/* ---- ArgMax / ArgMin ---- */

#define LDN(v) (v)
#define LDH(v) dfx__f16_to_f32(v)
#define LDB(v) dfx__bf16_to_f32(v)
#define DEF_ARG(NM, T, CT, L)                                                                   \
  static void arg_##NM(const T *x, int64_t outer, int64_t n, int64_t inner, bool mx,          \
                       int64_t *idx) {                                                        \
    for (int64_t o = 0; o < outer; o++) {                                                     \
      const T *xo = x + o * n * inner;                                                        \
      for (int64_t i = 0; i < inner; i++) {                                                   \
        CT best = L(xo[i]);                                                                   \
        int64_t bi = 0;                                                                       \
        for (int64_t k = 1; k < n; k++) {                                                     \
          CT v = L(xo[k * inner + i]);                                                        \
          if (mx ? v > best : v < best) {                                                     \
            best = v;                                                                         \
            bi = k;                                                                           \
          }                                                                                   \
        }                                                                                     \
        idx[o * inner + i] = bi;                                                              \
      }                                                                                       \
    }                                                                                         \
  }
#define ARG_REAL(DT, T) DEF_ARG(T, T, T, LDN)
DFX_REAL_TYPES(ARG_REAL)
DEF_ARG(f16, uint16_t, float, LDH)
DEF_ARG(bf16, uint16_t, float, LDB)
DEF_ARG(bool, uint8_t, uint8_t, LDN)

static dfx_code arg_run(dfx_kctx *ctx, bool mx) {
  const dfx_tensor *x = ctx->in[0];
  int64_t outer, n, inner;
  int ax;
  dfx_code c = split_axis(ctx, "dim", &outer, &n, &inner, &ax);
  if (c != DFX_OK) return c;
  char buf[96];
  if (n == 0)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Reduction axis %d is empty in shape %s", ax, DFX_SHAPE_STR(x, buf));
  int64_t od[DFX_MAX_DIMS];
  int ond = 0;
  for (int d = 0; d < x->ndims; d++)
    if (d != ax) od[ond++] = x->dims[d];
  dfx_dtype ot = ctx->node->out_types[0];
  dfx_tensor *y = dfx__kctx_alloc(ctx, 0, ot, ond, od);
  if (!y) return DFX_ENOMEM;
  if (y->count == 0) return DFX_OK;
  int64_t *idx = ot == DFX_I64 ? (int64_t *)y->data : NULL;
  int64_t tmp[64];
  if (!idx) idx = y->count <= 64 ? tmp : dfx__malloc(sizeof(int64_t) * (size_t)y->count);
  if (!idx) return dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory");
  switch ((dfx_dtype)x->dtype) {
#define C(DT, T) \
  case DT: arg_##T(x->data, outer, n, inner, mx, idx); break;
    DFX_REAL_TYPES(C)
#undef C
  case DFX_F16: arg_f16(x->data, outer, n, inner, mx, idx); break;
  case DFX_BF16: arg_bf16(x->data, outer, n, inner, mx, idx); break;
  case DFX_BOOL: arg_bool(x->data, outer, n, inner, mx, idx); break;
  default:
    if (idx != tmp && idx != y->data) dfx__free(idx);
    return dfx__kctx_fail(ctx, DFX_EUNIMPL, "%s does not support dtype %s", ctx->node->op,
                          dfx_dtype_name((dfx_dtype)x->dtype));
  }
  if (idx != y->data) {
    for (int64_t i = 0; i < y->count; i++) ((int32_t *)y->data)[i] = (int32_t)idx[i];
    if (idx != tmp) dfx__free(idx);
  }
  return DFX_OK;
}

static dfx_code argmax_k(dfx_kctx *ctx) { return arg_run(ctx, true); }
static dfx_code argmin_k(dfx_kctx *ctx) { return arg_run(ctx, false); }

/* ---- Cumsum / Cumprod ---- */

#define DEF_SCAN(NM, T, ACC, L, ST)                                                           \
  static void scan_##NM(const T *x, T *y, int64_t outer, int64_t n, int64_t inner, bool prod, \
                        bool excl, bool rev) {                                                \
    for (int64_t o = 0; o < outer; o++)                                                       \
      for (int64_t i = 0; i < inner; i++) {                                                   \
        const T *xo = x + o * n * inner + i;                                                  \
        T *yo = y + o * n * inner + i;                                                        \
        ACC a = prod ? (ACC)1 : (ACC)0;                                                       \
        for (int64_t s = 0; s < n; s++) {                                                     \
          int64_t k = (rev ? n - 1 - s : s) * inner;                                          \
          ACC v = (ACC)L(xo[k]);                                                              \
          if (excl) {                                                                         \
            yo[k] = ST(a);                                                                    \
            a = prod ? a * v : a + v;                                                         \
          } else {                                                                            \
            a = prod ? a * v : a + v;                                                         \
            yo[k] = ST(a);                                                                    \
          }                                                                                   \
        }                                                                                     \
      }                                                                                       \
  }
#define STI(a) (__typeof__(*y))(a)
#define STH(a) dfx__f32_to_f16((float)(a))
#define STB(a) dfx__f32_to_bf16((float)(a))
#define SCAN_INT(DT, T) DEF_SCAN(T, T, uint64_t, LDN, STI)
DFX_INT_TYPES(SCAN_INT)
DEF_SCAN(float, float, double, LDN, STI)
DEF_SCAN(double, double, double, LDN, STI)
DEF_SCAN(f16, uint16_t, double, LDH, STH)
DEF_SCAN(bf16, uint16_t, double, LDB, STB)

static dfx_code scan_run(dfx_kctx *ctx, bool prod) {
  const dfx_tensor *x = ctx->in[0];
  int64_t outer, n, inner;
  int ax;
  dfx_code c = split_axis(ctx, "axis", &outer, &n, &inner, &ax);
  if (c != DFX_OK) return c;
  bool excl = dfx__attr_bool(ctx->node, "exclusive", false), rev = dfx__attr_bool(ctx->node, "reverse", false);
  dfx_tensor *y = dfx__kctx_alloc(ctx, 0, (dfx_dtype)x->dtype, x->ndims, x->dims);
  if (!y) return DFX_ENOMEM;
  switch ((dfx_dtype)x->dtype) {
#define C(DT, T) \
  case DT: scan_##T(x->data, y->data, outer, n, inner, prod, excl, rev); break;
    DFX_INT_TYPES(C)
#undef C
  case DFX_F32: scan_float(x->data, y->data, outer, n, inner, prod, excl, rev); break;
  case DFX_F64: scan_double(x->data, y->data, outer, n, inner, prod, excl, rev); break;
  case DFX_F16: scan_f16(x->data, y->data, outer, n, inner, prod, excl, rev); break;
  case DFX_BF16: scan_bf16(x->data, y->data, outer, n, inner, prod, excl, rev); break;
  default:
    return dfx__kctx_fail(ctx, DFX_EUNIMPL, "%s does not support dtype %s", ctx->node->op,
                          dfx_dtype_name((dfx_dtype)x->dtype));
  }
  return DFX_OK;
}

static dfx_code cumsum_k(dfx_kctx *ctx) { return scan_run(ctx, false); }
static dfx_code cumprod_k(dfx_kctx *ctx) { return scan_run(ctx, true); }

static const dfx_kernel_def kernels[] = {
    {"ArgMax", NULL, argmax_k, DFX_KERNEL_CHEAP, NULL, NULL},
    {"ArgMin", NULL, argmin_k, DFX_KERNEL_CHEAP, NULL, NULL},
    {"Cumsum", NULL, cumsum_k, DFX_KERNEL_CHEAP, NULL, NULL},
    {"Cumprod", NULL, cumprod_k, DFX_KERNEL_CHEAP, NULL, NULL},
    {NULL}};

void dfx__kernels_nn_scan(dfx_registry *r);
void dfx__kernels_nn_scan(dfx_registry *r) { dfx__kernels_add(r, kernels); }
