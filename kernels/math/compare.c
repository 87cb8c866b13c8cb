/* compare.c - comparisons (-> bool), logical and bitwise ops with TF
 * broadcasting: Less, LessEqual, Greater, GreaterEqual, Equal, NotEqual,
 * LogicalAnd/Or/Not, BitwiseAnd/Or/Xor, LeftShift, RightShift, Invert.
 * Shift amounts are clamped to [0, bits-1] like TF's CPU kernels. */
#include <string.h>

#include "ew.h"

#define LT(T) (x < y)
#define LE(T) (x <= y)
#define GT(T) (x > y)
#define GE(T) (x >= y)
#define EQ(T) (x == y)
#define NE(T) (x != y)
#define BAND(T) (x & y)
#define BOR(T) (x | y)
#define BXOR(T) (x ^ y)
#define NBITS(T) ((int)(sizeof(T) * 8))
#define SHAMT_S(T) (y < 0 ? 0 : y > NBITS(T) - 1 ? NBITS(T) - 1 : (int)y)
#define SHAMT_U(T) (y > (T)(NBITS(T) - 1) ? NBITS(T) - 1 : (int)y)
/* Left shifts go through uint64: shifting a negative signed value left is
 * undefined in C. Right shifts of signed values stay arithmetic, as TF's. */
#define LSH_S(T) ((T)((uint64_t)x << SHAMT_S(T)))
#define LSH_U(T) ((T)((uint64_t)x << SHAMT_U(T)))
#define RSH_S(T) ((T)(x >> SHAMT_S(T)))
#define RSH_U(T) ((T)(x >> SHAMT_U(T)))
#define BOOL_CASE(OK, E) EW_BCASE(DFX_BOOL, uint8_t, OK, E)

EW_DEF_BIN(lt_fn, EW_SI_CASES(BOOL, LT) EW_UI_CASES(BOOL, LT) EW_F_CASES(BOOL, LT))
EW_DEF_BIN(le_fn, EW_SI_CASES(BOOL, LE) EW_UI_CASES(BOOL, LE) EW_F_CASES(BOOL, LE))
EW_DEF_BIN(gt_fn, EW_SI_CASES(BOOL, GT) EW_UI_CASES(BOOL, GT) EW_F_CASES(BOOL, GT))
EW_DEF_BIN(ge_fn, EW_SI_CASES(BOOL, GE) EW_UI_CASES(BOOL, GE) EW_F_CASES(BOOL, GE))
/* bool elements are normalised with !! so any non-zero byte counts as true. */
#define BEQ(T) (!!x == !!y)
#define BNE(T) (!!x != !!y)
#define LAND(T) (x && y)
#define LOR(T) (x || y)
EW_DEF_BIN(eq_fn, EW_SI_CASES(BOOL, EQ) EW_UI_CASES(BOOL, EQ) EW_F_CASES(BOOL, EQ) BOOL_CASE(BOOL, BEQ)
                      EW_BCASE(DFX_QI8, int8_t, BOOL, EQ) EW_BCASE(DFX_QU8, uint8_t, BOOL, EQ)
                          EW_BCASE(DFX_QI32, int32_t, BOOL, EQ) EW_C_CASES(BOOL, EQ))
EW_DEF_BIN(ne_fn, EW_SI_CASES(BOOL, NE) EW_UI_CASES(BOOL, NE) EW_F_CASES(BOOL, NE) BOOL_CASE(BOOL, BNE)
                      EW_BCASE(DFX_QI8, int8_t, BOOL, NE) EW_BCASE(DFX_QU8, uint8_t, BOOL, NE)
                          EW_BCASE(DFX_QI32, int32_t, BOOL, NE) EW_C_CASES(BOOL, NE))
EW_DEF_BIN(and_fn, BOOL_CASE(BOOL, LAND))
EW_DEF_BIN(or_fn, BOOL_CASE(BOOL, LOR))
EW_DEF_BIN(band_fn, EW_SI_CASES(SAME, BAND) EW_UI_CASES(SAME, BAND))
EW_DEF_BIN(bor_fn, EW_SI_CASES(SAME, BOR) EW_UI_CASES(SAME, BOR))
EW_DEF_BIN(bxor_fn, EW_SI_CASES(SAME, BXOR) EW_UI_CASES(SAME, BXOR))
EW_DEF_BIN(lsh_fn, EW_SI_CASES(SAME, LSH_S) EW_UI_CASES(SAME, LSH_U))
EW_DEF_BIN(rsh_fn, EW_SI_CASES(SAME, RSH_S) EW_UI_CASES(SAME, RSH_U))

typedef dfx_ew_bin_fn bin_fn;

static void str_eq(const dfx_bcast *bc, int64_t lo, int64_t hi, const dfx_str *pa, const dfx_str *pb, uint8_t *po,
                   bool eq) {
  EW_LOOP2(bc, lo, hi, {
    bool same = pa[ia].len == pb[ib].len && (pa[ia].len == 0 || memcmp(pa[ia].ptr, pb[ib].ptr, pa[ia].len) == 0);
    po[io] = same == eq;
  });
}

/* state: NULL normally; (void *)1 when incompatible_shape_error is false. */
static dfx_code run_cmp(dfx_kctx *ctx, bin_fn fn, bool out_bool, int eq) {
  const dfx_tensor *x = ctx->in[0], *y = ctx->in[1];
  dfx_dtype t = (dfx_dtype)x->dtype;
  if (y->dtype != t)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "%s: x is %s but y is %s", ctx->node->op, dfx_dtype_name(t),
                          dfx_dtype_name((dfx_dtype)y->dtype));
  dfx_bcast bcs;
  const dfx_bcast *bc = dfx__bcast_pair(&bcs, (const dfx_tensor *const *)ctx->in);
  if (!bc) {
    /* eq: -1 for ops other than Equal/NotEqual, 1 for Equal, 0 for NotEqual. */
    if (eq < 0 || !ctx->state) return dfx__bcast_fail(ctx, x, y);
    /* Unbroadcastable shapes compare as a whole: a scalar answer. */
    dfx_tensor *o = dfx__kctx_alloc(ctx, 0, DFX_BOOL, 0, NULL);
    if (!o) return dfx_status_code(ctx->st);
    *(uint8_t *)o->data = eq == 0;
    return DFX_OK;
  }
  dfx_tensor *o = dfx__kctx_alloc(ctx, 0, out_bool ? DFX_BOOL : t, bc->ndims, bc->dims);
  if (!o) return dfx_status_code(ctx->st);
  dfx_code c = DFX_OK;
  /* Only Equal and NotEqual take strings; they compare bytes, not pointers. */
  if (t == DFX_STRING && eq >= 0) {
    const int64_t n = bc->count, grain = dfx__bcast_grain(bc, EW_POLL_GRAIN);
    for (int64_t lo = 0; lo < n && c == DFX_OK; lo += grain) {
      str_eq(bc, lo, n - lo > grain ? lo + grain : n, x->data, y->data, o->data, eq == 1);
      if (n - lo > grain) c = dfx__kctx_poll(ctx);
    }
  } else {
    int bad;
    c = dfx__ew_run_bin(ctx, fn, bc, t, x->data, y->data, o->data, &bad);
  }
  if (c != DFX_OK) {
    dfx__tensor_unref(ctx->out[0]);
    ctx->out[0] = NULL;
  }
  return c;
}

static dfx_code eq_init(const dfx_node *n, void **state, dfx_status *st) {
  *state = dfx__attr_bool(n, "incompatible_shape_error", true) ? NULL : (void *)1;
  return DFX_OK;
}

#define KFN(name, fn, ob, eq) \
  static dfx_code name(dfx_kctx *ctx) { return run_cmp(ctx, fn, ob, eq); }
KFN(k_lt, lt_fn, true, -1)
KFN(k_le, le_fn, true, -1)
KFN(k_gt, gt_fn, true, -1)
KFN(k_ge, ge_fn, true, -1)
KFN(k_eq, eq_fn, true, 1)
KFN(k_ne, ne_fn, true, 0)
KFN(k_and, and_fn, true, -1)
KFN(k_or, or_fn, true, -1)
KFN(k_band, band_fn, false, -1)
KFN(k_bor, bor_fn, false, -1)
KFN(k_bxor, bxor_fn, false, -1)
KFN(k_lsh, lsh_fn, false, -1)
KFN(k_rsh, rsh_fn, false, -1)

/* y[i] = !x[i] (LogicalNot, bool) or ~x[i] (Invert, integers), i in [lo, hi). */
static void not_range(dfx_dtype t, const void *x, void *y, int64_t lo, int64_t hi) {
  switch (t) {
#define C(DT, T)                                              \
  case DT: {                                                  \
    const T *restrict a = x;                                  \
    T *restrict b = y;                                        \
    for (int64_t i = lo; i < hi; i++) b[i] = (T)~a[i];        \
    return;                                                   \
  }
    DFX_INT_TYPES(C)
#undef C
    default: { /* bool */
      const uint8_t *restrict a = x;
      uint8_t *restrict b = y;
      for (int64_t i = lo; i < hi; i++) b[i] = !a[i];
    }
  }
}

/* One kernel for LogicalNot (bool) and Invert (integers): not_range picks
 * by dtype. */
static dfx_code k_not(dfx_kctx *ctx) {
  const dfx_tensor *x = ctx->in[0];
  dfx_tensor *o = dfx__kctx_alloc(ctx, 0, (dfx_dtype)x->dtype, x->ndims, x->dims);
  if (!o) return dfx_status_code(ctx->st);
  for (int64_t lo = 0; lo < x->count; lo += EW_POLL_GRAIN) {
    dfx_code c = lo > 0 ? dfx__kctx_poll(ctx) : DFX_OK;
    if (c != DFX_OK) return c;
    not_range((dfx_dtype)x->dtype, x->data, o->data, lo, x->count - lo > EW_POLL_GRAIN ? lo + EW_POLL_GRAIN : x->count);
  }
  return DFX_OK;
}

#define T_FSU "T: {" EW_TY_FSU "}"
#define T_EQ "T: {" EW_TY_FSU ", " EW_TY_C ", bool, string, qint8, quint8, qint32}"
#define T_BITS "T: {" EW_TY_SI ", " EW_TY_UI "}"
/* The logical ops have no type attr: their signature fixes bool. */
static const dfx_kernel_def kernels[] = {
    {"Less", T_FSU, k_lt, DFX_KERNEL_CHEAP, NULL, NULL},
    {"LessEqual", T_FSU, k_le, DFX_KERNEL_CHEAP, NULL, NULL},
    {"Greater", T_FSU, k_gt, DFX_KERNEL_CHEAP, NULL, NULL},
    {"GreaterEqual", T_FSU, k_ge, DFX_KERNEL_CHEAP, NULL, NULL},
    {"Equal", T_EQ, k_eq, DFX_KERNEL_CHEAP, eq_init, NULL},
    {"NotEqual", T_EQ, k_ne, DFX_KERNEL_CHEAP, eq_init, NULL},
    {"LogicalAnd", NULL, k_and, DFX_KERNEL_CHEAP, NULL, NULL},
    {"LogicalOr", NULL, k_or, DFX_KERNEL_CHEAP, NULL, NULL},
    {"LogicalNot", NULL, k_not, DFX_KERNEL_CHEAP, NULL, NULL},
    {"BitwiseAnd", T_BITS, k_band, DFX_KERNEL_CHEAP, NULL, NULL},
    {"BitwiseOr", T_BITS, k_bor, DFX_KERNEL_CHEAP, NULL, NULL},
    {"BitwiseXor", T_BITS, k_bxor, DFX_KERNEL_CHEAP, NULL, NULL},
    {"LeftShift", T_BITS, k_lsh, DFX_KERNEL_CHEAP, NULL, NULL},
    {"RightShift", T_BITS, k_rsh, DFX_KERNEL_CHEAP, NULL, NULL},
    {"Invert", T_BITS, k_not, DFX_KERNEL_CHEAP, NULL, NULL},
    {NULL}};

void dfx__kernels_math_compare(dfx_registry *r);
void dfx__kernels_math_compare(dfx_registry *r) { dfx__kernels_add(r, kernels); }
