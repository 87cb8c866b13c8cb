/* scan.c - single-axis ops over an [outer, n, inner] view: ArgMax, ArgMin,
 * Cumsum and Cumprod. Ties in ArgMax/ArgMin go to the lowest index; scans
 * accumulate in double (floats) or wrapping 64-bit integers. */
#include "kdispatch.h"
#include "kernel.h"
#include "nn_util.h"

/* Reads the scalar axis input i (any integer dtype) and splits x into
 * outer/n/inner; outer and inner are 0 for an empty x, whose other dims'
 * product may overflow. */
static dfx_code split_axis(dfx_kctx *ctx, const char *who, int64_t *outer, int64_t *n, int64_t *inner, int *axis) {
  const dfx_tensor *x = ctx->in[0], *a = ctx->in[1];
  char buf[96];
  if (a->ndims != 0)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "%s must be a scalar, but received tensor of shape: %s", who,
                          DFX_SHAPE_STR(a, buf));
  int64_t v = dfx__tensor_get_i64(a, 0);
  int r = x->ndims;
  if (v < -r || v >= r)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Expected %s in the range [%d, %d), but got %lld",
                          who[0] == 'd' ? "dimension" : "scan axis", -r, r, (long long)v);
  int ax = (int)(v < 0 ? v + r : v);
  *outer = *inner = x->count > 0;
  for (int d = 0; d < ax && x->count > 0; d++) *outer *= x->dims[d];
  for (int d = ax + 1; d < r && x->count > 0; d++) *inner *= x->dims[d];
  *n = x->dims[ax];
  *axis = ax;
  return DFX_OK;
}

/* ---- ArgMax / ArgMin ---- */

#define LDN(v) (v)
#define LDH(v) dfx__f16_to_f32(v)
#define LDB(v) dfx__bf16_to_f32(v)
/* Index of the first max (min) along n for each (outer, inner), stored as
 * the output's index dtype; polls the run once per outer row. */
#define DEF_ARG(NM, T, CT, L)                                                                 \
  static dfx_code arg_##NM(dfx_kctx *ctx, const T *x, int64_t outer, int64_t n, int64_t inner, bool mx, \
                           void *out, dfx_dtype ot) {                                         \
    int64_t done = 0;                                                                         \
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
        dfx__nn_store_index(out, ot, o * inner + i, bi);                                      \
      }                                                                                       \
      dfx_code rc = dfx__nn_progress(ctx, &done, n * inner);                                  \
      if (rc != DFX_OK) return rc;                                                            \
    }                                                                                         \
    return DFX_OK;                                                                            \
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
  switch ((dfx_dtype)x->dtype) {
#define C(DT, T) \
  case DT: return arg_##T(ctx, x->data, outer, n, inner, mx, y->data, ot);
    DFX_REAL_TYPES(C)
#undef C
  case DFX_F16: return arg_f16(ctx, x->data, outer, n, inner, mx, y->data, ot);
  case DFX_BF16: return arg_bf16(ctx, x->data, outer, n, inner, mx, y->data, ot);
  case DFX_BOOL: return arg_bool(ctx, x->data, outer, n, inner, mx, y->data, ot);
  default: return DFX_EINTERNAL; /* the row's types string admits no other dtype */
  }
}

static dfx_code argmax_k(dfx_kctx *ctx) { return arg_run(ctx, true); }
static dfx_code argmin_k(dfx_kctx *ctx) { return arg_run(ctx, false); }

/* ---- Cumsum / Cumprod ---- */

#define DEF_SCAN(NM, T, ACC, L, ST)                                                           \
  static dfx_code scan_##NM(dfx_kctx *ctx, const T *x, T *y, int64_t outer, int64_t n, int64_t inner, \
                            bool prod, bool excl, bool rev) {                                 \
    int64_t done = 0;                                                                         \
    for (int64_t o = 0; o < outer; o++) {                                                     \
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
      dfx_code rc = dfx__nn_progress(ctx, &done, n * inner);                                  \
      if (rc != DFX_OK) return rc;                                                            \
    }                                                                                         \
    return DFX_OK;                                                                            \
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
  case DT: return scan_##T(ctx, x->data, y->data, outer, n, inner, prod, excl, rev);
    DFX_INT_TYPES(C)
#undef C
  case DFX_F32: return scan_float(ctx, x->data, y->data, outer, n, inner, prod, excl, rev);
  case DFX_F64: return scan_double(ctx, x->data, y->data, outer, n, inner, prod, excl, rev);
  case DFX_F16: return scan_f16(ctx, x->data, y->data, outer, n, inner, prod, excl, rev);
  case DFX_BF16: return scan_bf16(ctx, x->data, y->data, outer, n, inner, prod, excl, rev);
  default: return DFX_EINTERNAL; /* the row's types string admits no other dtype */
  }
}

static dfx_code cumsum_k(dfx_kctx *ctx) { return scan_run(ctx, false); }
static dfx_code cumprod_k(dfx_kctx *ctx) { return scan_run(ctx, true); }

/* Real types (and bool for the arg ops); complex and quantized have no kernel. */
#define ARG_T "T: {" DFX_NN_FLOAT_T ", " DFX_NN_INT_T ", bool}"
#define SCAN_T "T: {" DFX_NN_FLOAT_T ", " DFX_NN_INT_T "}; Tidx: {int32, int64}"

static const dfx_kernel_def kernels[] = {
    {"ArgMax", ARG_T "; Tidx: {int16, int32, int64}; output_type: {int16, uint16, int32, int64}", argmax_k,
     DFX_KERNEL_CHEAP, NULL, NULL},
    {"ArgMin", ARG_T "; Tidx: {int32, int64}; output_type: {int32, int64}", argmin_k, DFX_KERNEL_CHEAP, NULL, NULL},
    {"Cumsum", SCAN_T, cumsum_k, DFX_KERNEL_CHEAP, NULL, NULL},
    {"Cumprod", SCAN_T, cumprod_k, DFX_KERNEL_CHEAP, NULL, NULL},
    {NULL}};

void dfx__kernels_nn_scan(dfx_registry *r);
void dfx__kernels_nn_scan(dfx_registry *r) { dfx__kernels_add(r, kernels); }
