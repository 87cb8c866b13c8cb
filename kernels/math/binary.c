/* binary.c - arithmetic binary ops with TF broadcasting (x: T, y: T -> z: T):
 * Add (also string concatenation), AddV2, Sub, Mul, the divisions and mods,
 * Maximum, Minimum, Pow, SquaredDifference, Atan2, DivNoNan, Xlogy, Xdivy.
 * Integers wrap on overflow; integer division by zero is an error as in TF.
 * Complex is C99 complex arithmetic (Add, Sub, Mul, Div, RealDiv, DivNoNan,
 * Xlogy, Xdivy, SquaredDifference). The rows declare the dtypes TF defines
 * each op for, less those it has no kernel for (integer RealDiv). */
#include <string.h>
#include <tgmath.h>

#include "alloc.h"
#include "ew.h"
#include "simd/simd.h"

static const char DIV0[] = "Integer division by zero";

/* Exponentiation by squaring in uint64: products wrap mod 2^64, which agrees
 * with two's complement, so casting to a signed T gives the wrapped result
 * without signed-overflow UB. */
static inline uint64_t ipow(uint64_t base, uint64_t e) {
  uint64_t r = 1;
  while (e) {
    if (e & 1) r *= base;
    e >>= 1;
    base *= base;
  }
  return r;
}

/* Per-element expressions over locals x, y; `bad` flags an error. */
#define ADD_I(T) EW_WADD(T, x, y)
#define ADD_F(T) (x + y)
#define SUB_I(T) EW_WSUB(T, x, y)
#define SUB_F(T) (x - y)
#define MUL_I(T) EW_WMUL(T, x, y)
#define MUL_F(T) (x * y)
#define DIV_F(T) (x / y)
/* Signed: y == -1 is handled apart so INT_MIN / -1 wraps instead of trapping. */
#define DIV_S(T) (y == 0 ? (bad = 1, (T)0) : y == (T)-1 ? EW_WSUB(T, 0, x) : (T)(x / y))
#define DIV_U(T) (y == 0 ? (bad = 1, (T)0) : (T)(x / y))
/* Floor division: truncate, then step down one when there is a remainder
 * and the signs differ (-7 / 2 is -3 truncated, -4 floored). */
#define FDIV_S(T) \
  (y == 0 ? (bad = 1, (T)0) : y == (T)-1 ? EW_WSUB(T, 0, x) : (T)(x / y - ((x % y != 0) && ((x < 0) != (y < 0)))))
#define FDIV_F(T) floor(x / y)
#define TDIV_F(T) trunc(x / y)
/* Floor mod takes the sign of y: a remainder of the other sign gets y added.
 * x % -1 is always 0, and INT_MIN % -1 would trap, so it is answered apart. */
#define FMOD_S(T) \
  (y == 0 ? (bad = 1, (T)0) : y == (T)-1 ? (T)0 : (T)((x % y != 0 && ((x % y < 0) != (y < 0))) ? x % y + y : x % y))
#define MOD_U(T) (y == 0 ? (bad = 1, (T)0) : (T)(x % y))
#define TMOD_S(T) (y == 0 ? (bad = 1, (T)0) : y == (T)-1 ? (T)0 : (T)(x % y))
#define TMOD_F(T) fmod(x, y)
#define FMOD_F(T) floor_fmod(x, y)
#define MAX_I(T) (x > y ? x : y)
#define MIN_I(T) (x < y ? x : y)
/* NaN propagates through Maximum/Minimum (TF's PropagateNaN). */
#define MAX_F(T) (isnan(x) ? x : isnan(y) ? y : x > y ? x : y)
#define MIN_F(T) (isnan(x) ? x : isnan(y) ? y : x < y ? x : y)
#define POW_S(T) (y < 0 ? (bad = 2, (T)0) : (T)ipow((uint64_t)x, (uint64_t)y))
#define POW_U(T) ((T)ipow((uint64_t)x, (uint64_t)y))
#define POW_F(T) pow(x, y)
#define SQD_I(T) EW_WMUL(T, EW_WSUB(T, x, y), EW_WSUB(T, x, y))
#define SQD_F(T) ((x - y) * (x - y))
#define SQD_C(T) ((x - y) * conj(x - y)) /* TF: |x - y|^2 as a complex */
#define ATAN2_F(T) atan2(x, y)
#define DIVNN_F(T) (y == 0 ? (T)0 : x / y)
#define XLOGY_F(T) (x == 0 ? (T)0 : x * log(y))
#define XDIVY_F(T) (x == 0 ? (T)0 : x / y)

/* Python-style float remainder: the result takes the sign of y. */
static inline double floor_fmod_d(double x, double y) {
  double r = fmod(x, y);
  return (r != 0 && ((y < 0) != (r < 0))) ? r + y : r;
}
static inline float floor_fmod_f(float x, float y) {
  float r = fmod(x, y);
  return (r != 0 && ((y < 0) != (r < 0))) ? r + y : r;
}
#define floor_fmod(x, y) _Generic((x), float: floor_fmod_f, default: floor_fmod_d)(x, y)

EW_DEF_BIN(add_fn, EW_SI_CASES(SAME, ADD_I) EW_UI_CASES(SAME, ADD_I) EW_F_CASES(SAME, ADD_F) EW_C_CASES(SAME, ADD_F))
EW_DEF_BIN(sub_fn, EW_SI_CASES(SAME, SUB_I) EW_UI_CASES(SAME, SUB_I) EW_F_CASES(SAME, SUB_F) EW_C_CASES(SAME, SUB_F))
EW_DEF_BIN(mul_fn, EW_SI_CASES(SAME, MUL_I) EW_UI_CASES(SAME, MUL_I) EW_F_CASES(SAME, MUL_F) EW_C_CASES(SAME, MUL_F))
EW_DEF_BIN(div_fn, EW_SI_CASES(SAME, DIV_S) EW_UI_CASES(SAME, DIV_U) EW_F_CASES(SAME, DIV_F) EW_C_CASES(SAME, DIV_F))
EW_DEF_BIN(tdiv_fn, EW_SI_CASES(SAME, DIV_S) EW_UI_CASES(SAME, DIV_U) EW_F_CASES(SAME, TDIV_F))
EW_DEF_BIN(fdiv_fn, EW_SI_CASES(SAME, FDIV_S) EW_UI_CASES(SAME, DIV_U) EW_F_CASES(SAME, FDIV_F))
EW_DEF_BIN(fmod_fn, EW_SI_CASES(SAME, FMOD_S) EW_UI_CASES(SAME, MOD_U) EW_F_CASES(SAME, FMOD_F))
EW_DEF_BIN(tmod_fn, EW_SI_CASES(SAME, TMOD_S) EW_UI_CASES(SAME, MOD_U) EW_F_CASES(SAME, TMOD_F))
EW_DEF_BIN(max_fn, EW_SI_CASES(SAME, MAX_I) EW_UI_CASES(SAME, MAX_I) EW_F_CASES(SAME, MAX_F))
EW_DEF_BIN(min_fn, EW_SI_CASES(SAME, MIN_I) EW_UI_CASES(SAME, MIN_I) EW_F_CASES(SAME, MIN_F))
EW_DEF_BIN(pow_fn, EW_SI_CASES(SAME, POW_S) EW_UI_CASES(SAME, POW_U) EW_F_CASES(SAME, POW_F))
EW_DEF_BIN(sqd_fn, EW_SI_CASES(SAME, SQD_I) EW_UI_CASES(SAME, SQD_I) EW_F_CASES(SAME, SQD_F) EW_C_CASES(SAME, SQD_C))
EW_DEF_BIN(atan2_fn, EW_F_CASES(SAME, ATAN2_F))
EW_DEF_BIN(divnn_fn, EW_F_CASES(SAME, DIVNN_F) EW_C_CASES(SAME, DIVNN_F))
EW_DEF_BIN(xlogy_fn, EW_F_CASES(SAME, XLOGY_F) EW_C_CASES(SAME, XLOGY_F))
EW_DEF_BIN(xdivy_fn, EW_F_CASES(SAME, XDIVY_F) EW_C_CASES(SAME, XDIVY_F))

/* Float32 Add, Sub, Mul, division, Maximum and Minimum over rows of 16 or
 * more run the dispatched SIMD loops (kernels/simd); scalars (a loop's
 * counter arithmetic) stay on the inlined loops. */
#define SIMD_BIN(name, fn, OP)                                                                              \
  static int name(const dfx_bcast *bc, int64_t lo, int64_t hi, dfx_dtype t, const void *a, const void *b, \
                  void *o, int *bad) {                                                                     \
    if (t == DFX_F32 && hi - lo >= 16 && dfx__ew_simd_bin_f32(OP, bc, lo, hi, a, b, o)) {                 \
      *bad = 0;                                                                                            \
      return 0;                                                                                            \
    }                                                                                                      \
    return fn(bc, lo, hi, t, a, b, o, bad);                                                                \
  }
SIMD_BIN(add_v, add_fn, DFX_SIMD_ADD)
SIMD_BIN(sub_v, sub_fn, DFX_SIMD_SUB)
SIMD_BIN(mul_v, mul_fn, DFX_SIMD_MUL)
SIMD_BIN(div_v, div_fn, DFX_SIMD_DIV)
SIMD_BIN(max_v, max_fn, DFX_SIMD_MAX)
SIMD_BIN(min_v, min_fn, DFX_SIMD_MIN)

typedef dfx_ew_bin_fn bin_fn;

/* A failed kernel must leave no output: drop the half-written one. */
static dfx_code fail_clear(dfx_kctx *ctx, dfx_code c) {
  dfx__tensor_unref(ctx->out[0]);
  ctx->out[0] = NULL;
  return c;
}

/* String Add: elementwise concatenation with broadcasting. A malloc per
 * element dwarfs a poll every 64 K elements. */
static dfx_code add_strings(dfx_kctx *ctx, const dfx_bcast *bc, const dfx_str *pa, const dfx_str *pb,
                            dfx_str *po) {
  int bad = 0;
  dfx_code stop = DFX_OK;
  EW_LOOP2(bc, 0, bc->count, {
    if (!bad && (io & 0xffff) == 0 && io && (stop = dfx__kctx_poll(ctx)) != DFX_OK) bad = 1;
    if (!bad) {
      size_t n = pa[ia].len + pb[ib].len;
      if (n) {
        char *p = dfx__malloc(n);
        if (!p) {
          bad = 1;
        } else {
          if (pa[ia].len) memcpy(p, pa[ia].ptr, pa[ia].len);
          if (pb[ib].len) memcpy(p + pa[ia].len, pb[ib].ptr, pb[ib].len);
          po[io].ptr = p;
          po[io].len = n;
        }
      }
    }
  });
  if (stop != DFX_OK) return fail_clear(ctx, stop);
  if (bad) return fail_clear(ctx, dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory concatenating strings"));
  return DFX_OK;
}

static dfx_code bin_status(dfx_kctx *ctx, int r, int bad, dfx_dtype t) {
  if (r < 0) return fail_clear(ctx, dfx__ew_unsupported(ctx, t));
  if (bad == 1) return fail_clear(ctx, dfx__kctx_fail(ctx, DFX_EINVAL, "%s", DIV0));
  if (bad == 2)
    return fail_clear(ctx, dfx__kctx_fail(ctx, DFX_EINVAL, "Integers to negative integer powers are not allowed"));
  return DFX_OK;
}

/* Same-shape op whose output goes into `reuse`, an input the kernel now
 * owns. The elementwise loops take restrict pointers, so each chunk is
 * computed into a stack buffer (after its elements of x and y are read) and
 * copied into place. Not inlined: the buffer would enlarge every call's
 * frame. */
__attribute__((noinline)) static dfx_code bin_in_place(dfx_kctx *ctx, bin_fn fn, const dfx_bcast *bc, dfx_dtype t, const dfx_tensor *x,
                             const dfx_tensor *y, dfx_tensor *reuse) {
  _Alignas(64) unsigned char tmp[4096];
  const size_t es = dfx__dtype_storage(t);
  const int64_t per = (int64_t)(sizeof tmp / es), total = bc->count;
  ctx->out[0] = reuse;
  reuse->ndims = (uint8_t)bc->ndims; /* [64] + [1,64] is [1,64] */
  if (bc->ndims) memcpy(reuse->dims, bc->dims, sizeof(int64_t) * (size_t)bc->ndims);
  const char *xd = x->data, *yd = y->data;
  char *rd = reuse->data;
  int bad = 0;
  if (total <= per) { /* one chunk: no copy of the broadcast description */
    int r = fn(bc, 0, total, t, xd, yd, tmp, &bad);
    dfx_code c = bin_status(ctx, r, bad, t);
    if (c == DFX_OK) memcpy(rd, tmp, (size_t)total * es);
    return c;
  }
  dfx_bcast chunk = *bc;
  for (int64_t i = 0, next_poll = EW_POLL_GRAIN; i < total; i += per) {
    chunk.count = total - i < per ? total - i : per;
    size_t off = (size_t)i * es;
    int r = fn(&chunk, 0, chunk.count, t, xd + off, yd + off, tmp, &bad);
    dfx_code c = bin_status(ctx, r, bad, t);
    if (c == DFX_OK && i >= next_poll) {
      c = dfx__kctx_poll(ctx);
      next_poll += EW_POLL_GRAIN;
      if (c != DFX_OK) c = fail_clear(ctx, c);
    }
    if (c != DFX_OK) return c;
    memcpy(rd + off, tmp, (size_t)chunk.count * es);
  }
  return DFX_OK;
}

static dfx_code run_bin(dfx_kctx *ctx, bin_fn fn) {
  const dfx_tensor *x = ctx->in[0], *y = ctx->in[1];
  dfx_dtype t = (dfx_dtype)x->dtype;
  if (y->dtype != t)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "%s: x is %s but y is %s", ctx->node->op, dfx_dtype_name(t),
                          dfx_dtype_name((dfx_dtype)y->dtype));
  dfx_bcast bcs;
  const dfx_bcast *bc = dfx__bcast_pair(&bcs, (const dfx_tensor *const *)ctx->in);
  if (!bc) return dfx__bcast_fail(ctx, x, y);
  /* The result has the elements of an input nobody else holds: write it
   * there (a loop counter, a chain of ops, h @ W + x then allocate nothing). */
  if (bc == &dfx__bcast_scalars && t != DFX_STRING) { /* the common case in loops, kept short */
    dfx_tensor *reuse = dfx__kctx_take_unique(ctx, 0);
    if (!reuse) reuse = dfx__kctx_take_unique(ctx, 1);
    if (reuse) {
      /* 16 bytes hold the widest element, a complex128. */
      _Alignas(16) unsigned char res[16];
      int bad = 0;
      int r = fn(bc, 0, 1, t, x->data, y->data, res, &bad);
      ctx->out[0] = reuse;
      if (r < 0 || bad) return bin_status(ctx, r, bad, t);
      switch (reuse->nbytes) { /* fixed sizes: inline moves, not a memcpy call */
        case 1: memcpy(reuse->data, res, 1); break;
        case 2: memcpy(reuse->data, res, 2); break;
        case 4: memcpy(reuse->data, res, 4); break;
        case 8: memcpy(reuse->data, res, 8); break;
        default: memcpy(reuse->data, res, reuse->nbytes); break;
      }
      return DFX_OK;
    }
  } else if (bc->kind == DFX_BC_SAME && t != DFX_STRING) {
    dfx_tensor *reuse = dfx__kctx_take_unique(ctx, 0);
    if (!reuse) reuse = dfx__kctx_take_unique(ctx, 1);
    if (reuse && bc->count >= EW_PAR_MIN && ctx->par) {
      ctx->out[0] = reuse;
      reuse->ndims = (uint8_t)bc->ndims; /* [64] + [1,64] is [1,64] */
      if (bc->ndims) memcpy(reuse->dims, bc->dims, sizeof(int64_t) * (size_t)bc->ndims);
      int bad = 0;
      dfx_code c = dfx__ew_run_bin_par(ctx, fn, bc, t, x->data, y->data, reuse->data, true, &bad);
      return c != DFX_OK ? fail_clear(ctx, c) : bin_status(ctx, 0, bad, t);
    }
    if (reuse) return bin_in_place(ctx, fn, bc, t, x, y, reuse);
  }
  dfx_tensor *o = dfx__kctx_alloc(ctx, 0, t, bc->ndims, bc->dims);
  if (!o) return dfx_status_code(ctx->st);
  /* Only Add's row allows string; the output's elements start zeroed, so a
   * failure halfway frees what was made. */
  if (t == DFX_STRING && fn == add_v) return add_strings(ctx, bc, x->data, y->data, o->data);
  int bad = 0;
  dfx_code c = dfx__ew_run_bin(ctx, fn, bc, t, x->data, y->data, o->data, &bad);
  return c != DFX_OK ? fail_clear(ctx, c) : bin_status(ctx, 0, bad, t);
}

#define KFN(name, fn) \
  static dfx_code name(dfx_kctx *ctx) { return run_bin(ctx, fn); }
KFN(k_add, add_v)
KFN(k_sub, sub_v)
KFN(k_mul, mul_v)
KFN(k_div, div_v)
KFN(k_tdiv, tdiv_fn)
KFN(k_fdiv, fdiv_fn)
KFN(k_fmod, fmod_fn)
KFN(k_tmod, tmod_fn)
KFN(k_max, max_v)
KFN(k_min, min_v)
KFN(k_pow, pow_fn)
KFN(k_sqd, sqd_fn)
KFN(k_atan2, atan2_fn)
KFN(k_divnn, divnn_fn)
KFN(k_xlogy, xlogy_fn)
KFN(k_xdivy, xdivy_fn)

#define T_F "T: {" EW_TY_F "}"
#define T_FC "T: {" EW_TY_F ", " EW_TY_C "}"
#define T_FSU "T: {" EW_TY_FSU "}"
#define T_FSUC "T: {" EW_TY_FSU ", " EW_TY_C "}"
static const dfx_kernel_def kernels[] = {
    {"Add", "T: {" EW_TY_FS ", uint8, " EW_TY_C ", string}", k_add, DFX_KERNEL_CHEAP, NULL, NULL},
    {"AddV2", T_FSUC, k_add, DFX_KERNEL_CHEAP, NULL, NULL},
    {"Sub", T_FSUC, k_sub, DFX_KERNEL_CHEAP, NULL, NULL},
    {"Mul", T_FSUC, k_mul, DFX_KERNEL_CHEAP, NULL, NULL},
    {"Div", T_FSUC, k_div, DFX_KERNEL_CHEAP, NULL, NULL},
    {"RealDiv", T_FC, k_div, DFX_KERNEL_CHEAP, NULL, NULL},
    {"TruncateDiv", T_FSU, k_tdiv, DFX_KERNEL_CHEAP, NULL, NULL},
    {"FloorDiv", T_FSU, k_fdiv, DFX_KERNEL_CHEAP, NULL, NULL},
    {"FloorMod", T_FSU, k_fmod, DFX_KERNEL_CHEAP, NULL, NULL},
    {"TruncateMod", "T: {" EW_TY_F ", int32, int64}", k_tmod, DFX_KERNEL_CHEAP, NULL, NULL},
    {"Mod", "T: {" EW_TY_F ", int32, int64}", k_tmod, DFX_KERNEL_CHEAP, NULL, NULL},
    {"Maximum", T_FSU, k_max, DFX_KERNEL_CHEAP, NULL, NULL},
    {"Minimum", T_FSU, k_min, DFX_KERNEL_CHEAP, NULL, NULL},
    {"Pow", "T: {" EW_TY_FS "}", k_pow, DFX_KERNEL_CHEAP, NULL, NULL},
    {"SquaredDifference", "T: {" EW_TY_F ", int32, int64, " EW_TY_C "}", k_sqd, DFX_KERNEL_CHEAP, NULL, NULL},
    {"Atan2", T_F, k_atan2, DFX_KERNEL_CHEAP, NULL, NULL},
    {"DivNoNan", T_FC, k_divnn, DFX_KERNEL_CHEAP, NULL, NULL},
    {"Xlogy", T_FC, k_xlogy, DFX_KERNEL_CHEAP, NULL, NULL},
    {"Xdivy", T_FC, k_xdivy, DFX_KERNEL_CHEAP, NULL, NULL},
    {NULL}};

void dfx__kernels_math_binary(dfx_registry *r);
void dfx__kernels_math_binary(dfx_registry *r) { dfx__kernels_add(r, kernels); }
