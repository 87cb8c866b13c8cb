/* ew.h - shared machinery of the elementwise math kernels: TF/numpy
 * broadcasting of up to three operands and loop macros that inline the
 * per-element expression (no per-element function pointer calls).
 * Operands are dense row-major; a broadcast dimension gets stride 0. */
#ifndef DFX_MATH_EW_H
#define DFX_MATH_EW_H

#include <stdbool.h>
#include <stdint.h>

#include "kdispatch.h"
#include "kernel.h"

enum { DFX_BC_SAME, DFX_BC_XSCALAR, DFX_BC_YSCALAR, DFX_BC_GENERAL };

typedef struct dfx_bcast {
  int ndims;                     /* output rank */
  int64_t dims[DFX_MAX_DIMS];    /* output dims */
  int64_t count;                 /* output elements */
  int kind;                      /* DFX_BC_*: fast path for two operands */
  int nd;                        /* collapsed rank for the general path (>= 1) */
  int64_t cd[DFX_MAX_DIMS];      /* collapsed output dims */
  int64_t s[3][DFX_MAX_DIMS];    /* per-operand element strides, 0 = broadcast */
} dfx_bcast;

/* Computes the broadcast of n (2 or 3) tensors. Returns false when the shapes
 * are incompatible. */
bool dfx__bcast_init(dfx_bcast *b, int n, const dfx_tensor *const *ts);
/* The broadcast of scalars with scalars, shared: a while loop's Less and Add
 * see nothing else, so they skip dfx__bcast_init entirely. */
extern const dfx_bcast dfx__bcast_scalars;
/* &dfx__bcast_scalars when both operands are scalars, else b initialised by
 * dfx__bcast_init; NULL when the shapes do not broadcast. */
static inline const dfx_bcast *dfx__bcast_pair(dfx_bcast *b, const dfx_tensor *const *ts) {
  if (ts[0]->ndims == 0 && ts[1]->ndims == 0) return &dfx__bcast_scalars;
  return dfx__bcast_init(b, 2, ts) ? b : NULL;
}
/* Fails ctx with TF's "Incompatible shapes: [a] vs. [b]" message. */
dfx_code dfx__bcast_fail(dfx_kctx *ctx, const dfx_tensor *x, const dfx_tensor *y);
/* Fails ctx with "<op> does not support dtype <t>" (DFX_EUNIMPL). */
dfx_code dfx__ew_unsupported(dfx_kctx *ctx, dfx_dtype t);

/* dtype sets for the kernel rows' `types` strings (kernel.h), one per case
 * generator family below: EW_F_CASES / EW_UF_CASES, EW_SI_CASES / EW_US_CASES,
 * EW_UI_CASES / EW_UU_CASES, EW_C_CASES / EW_UC_CASES. */
#define EW_TY_F "bfloat16, half, float, double"
#define EW_TY_SI "int8, int16, int32, int64"
#define EW_TY_UI "uint8, uint16, uint32, uint64"
#define EW_TY_FS EW_TY_F ", " EW_TY_SI
#define EW_TY_FSU EW_TY_FS ", " EW_TY_UI
#define EW_TY_C "complex64, complex128"

/* Integer arithmetic that wraps like TF's CPU kernels (no signed overflow UB). */
#define EW_WADD(T, a, b) ((T)((uint64_t)(a) + (uint64_t)(b)))
#define EW_WSUB(T, a, b) ((T)((uint64_t)(a) - (uint64_t)(b)))
#define EW_WMUL(T, a, b) ((T)((uint64_t)(a) * (uint64_t)(b)))

/* Elements of work between two cancellation polls (dfx__kctx_poll): a few
 * milliseconds of the cheapest loops. Kernels run their loops over chunks
 * of this size; a tensor of one chunk or less never polls. */
#define EW_POLL_GRAIN ((int64_t)1 << 20)

/* The chunk size for a ranged loop over bc near `want` elements: ranges of
 * the general path must start at a multiple of its innermost (collapsed)
 * dimension. */
int64_t dfx__bcast_grain(const dfx_bcast *bc, int64_t want);

/* Runs the statement for output elements [lo, hi) with indices io (output),
 * ia, ib (operands 0 and 1) following broadcast bc. For DFX_BC_GENERAL, lo
 * is a multiple of dfx__bcast_grain's grain (or hi == bc->count). */
#define EW_LOOP2(bc, lo, hi, ...)                                                \
  do {                                                                           \
    const dfx_bcast *bc_ = (bc);                                                 \
    const int64_t lo_ = (lo), hi_ = (hi);                                        \
    if (bc_->kind == DFX_BC_SAME) {                                              \
      for (int64_t io = lo_; io < hi_; io++) {                                   \
        const int64_t ia = io, ib = io;                                          \
        __VA_ARGS__;                                                             \
      }                                                                          \
    } else if (bc_->kind == DFX_BC_XSCALAR) {                                    \
      for (int64_t io = lo_; io < hi_; io++) {                                   \
        const int64_t ia = 0, ib = io;                                           \
        __VA_ARGS__;                                                             \
      }                                                                          \
    } else if (bc_->kind == DFX_BC_YSCALAR) {                                    \
      for (int64_t io = lo_; io < hi_; io++) {                                   \
        const int64_t ia = io, ib = 0;                                           \
        __VA_ARGS__;                                                             \
      }                                                                          \
    } else if (lo_ < hi_) {                                                      \
      const int nd_ = bc_->nd;                                                   \
      const int64_t in_ = bc_->cd[nd_ - 1], sa_ = bc_->s[0][nd_ - 1],            \
                    sb_ = bc_->s[1][nd_ - 1];                                    \
      int64_t idx_[DFX_MAX_DIMS] = {0}, oa_ = 0, ob_ = 0, r_ = lo_ / in_;        \
      for (int d_ = nd_ - 2; d_ >= 0 && r_; d_--) {                              \
        idx_[d_] = r_ % bc_->cd[d_];                                             \
        r_ /= bc_->cd[d_];                                                       \
        oa_ += idx_[d_] * bc_->s[0][d_];                                         \
        ob_ += idx_[d_] * bc_->s[1][d_];                                         \
      }                                                                          \
      for (int64_t o0_ = lo_; o0_ < hi_; o0_ += in_) {                           \
        for (int64_t j_ = 0; j_ < in_; j_++) {                                   \
          const int64_t io = o0_ + j_, ia = oa_ + j_ * sa_, ib = ob_ + j_ * sb_; \
          __VA_ARGS__;                                                           \
        }                                                                        \
        for (int d_ = nd_ - 2; d_ >= 0; d_--) {                                  \
          oa_ += bc_->s[0][d_];                                                  \
          ob_ += bc_->s[1][d_];                                                  \
          if (++idx_[d_] < bc_->cd[d_]) break;                                   \
          oa_ -= bc_->s[0][d_] * bc_->cd[d_];                                    \
          ob_ -= bc_->s[1][d_] * bc_->cd[d_];                                    \
          idx_[d_] = 0;                                                          \
        }                                                                        \
      }                                                                          \
    }                                                                            \
  } while (0)

/* Three operands (ia, ib, ic) over [lo, hi): the same shapes, or the
 * general path (dfx__bcast_init gives three operands no scalar kinds). */
#define EW_LOOP3(bc, lo, hi, ...)                                                 \
  do {                                                                            \
    const dfx_bcast *bc_ = (bc);                                                  \
    const int64_t lo_ = (lo), hi_ = (hi);                                         \
    if (bc_->kind == DFX_BC_SAME) {                                               \
      for (int64_t io = lo_; io < hi_; io++) {                                    \
        const int64_t ia = io, ib = io, ic = io;                                  \
        __VA_ARGS__;                                                              \
      }                                                                           \
    } else if (lo_ < hi_) {                                                       \
      const int nd_ = bc_->nd;                                                    \
      const int64_t in_ = bc_->cd[nd_ - 1], sa_ = bc_->s[0][nd_ - 1],             \
                    sb_ = bc_->s[1][nd_ - 1], sc_ = bc_->s[2][nd_ - 1];           \
      int64_t idx_[DFX_MAX_DIMS] = {0}, oa_ = 0, ob_ = 0, oc_ = 0, r_ = lo_ / in_; \
      for (int d_ = nd_ - 2; d_ >= 0 && r_; d_--) {                               \
        idx_[d_] = r_ % bc_->cd[d_];                                              \
        r_ /= bc_->cd[d_];                                                        \
        oa_ += idx_[d_] * bc_->s[0][d_];                                          \
        ob_ += idx_[d_] * bc_->s[1][d_];                                          \
        oc_ += idx_[d_] * bc_->s[2][d_];                                          \
      }                                                                           \
      for (int64_t o0_ = lo_; o0_ < hi_; o0_ += in_) {                            \
        for (int64_t j_ = 0; j_ < in_; j_++) {                                    \
          const int64_t io = o0_ + j_, ia = oa_ + j_ * sa_, ib = ob_ + j_ * sb_,  \
                        ic = oc_ + j_ * sc_;                                      \
          __VA_ARGS__;                                                            \
        }                                                                         \
        for (int d_ = nd_ - 2; d_ >= 0; d_--) {                                   \
          oa_ += bc_->s[0][d_];                                                   \
          ob_ += bc_->s[1][d_];                                                   \
          oc_ += bc_->s[2][d_];                                                   \
          if (++idx_[d_] < bc_->cd[d_]) break;                                    \
          oa_ -= bc_->s[0][d_] * bc_->cd[d_];                                     \
          ob_ -= bc_->s[1][d_] * bc_->cd[d_];                                     \
          oc_ -= bc_->s[2][d_] * bc_->cd[d_];                                     \
          idx_[d_] = 0;                                                           \
        }                                                                         \
      }                                                                           \
    }                                                                             \
  } while (0)

/* ---- per-dtype case generators ----
 * An expression macro E(T) computes from locals x, y (of compute type T) and may
 * set the local `bad` to report an error. Output kinds: SAME (input dtype) or
 * BOOL. Half types are computed in float and rounded to nearest even. */
#define EW_OT_SAME(T) T
#define EW_OT_BOOL(T) uint8_t
#define EW_F16ST_SAME(v) dfx__f32_to_f16(v)
#define EW_F16ST_BOOL(v) ((uint8_t)(v))
#define EW_BF16ST_SAME(v) dfx__f32_to_bf16(v)
#define EW_BF16ST_BOOL(v) ((uint8_t)(v))

#define EW_BCASE(DT, T, OK, E)                                           \
  case DT: {                                                             \
    const T *restrict pa = a;                                            \
    const T *restrict pb = b;                                            \
    EW_OT_##OK(T) *restrict po = o;                                      \
    EW_LOOP2(bc, lo, hi, {                                               \
      const T x = pa[ia], y = pb[ib];                                    \
      po[io] = (EW_OT_##OK(T))(E(T));                                    \
    });                                                                  \
    break;                                                               \
  }
#define EW_BCASE_HALF(DT, LD, OK, ST, E)                                 \
  case DT: {                                                             \
    const uint16_t *restrict pa = a;                                     \
    const uint16_t *restrict pb = b;                                     \
    EW_OT_##OK(uint16_t) *restrict po = o;                               \
    EW_LOOP2(bc, lo, hi, {                                               \
      const float x = LD(pa[ia]), y = LD(pb[ib]);                        \
      po[io] = ST##_##OK(E(float));                                      \
    });                                                                  \
    break;                                                               \
  }
#define EW_BCASE_HALVES(OK, E)                                           \
  EW_BCASE_HALF(DFX_F16, dfx__f16_to_f32, OK, EW_F16ST, E)               \
  EW_BCASE_HALF(DFX_BF16, dfx__bf16_to_f32, OK, EW_BF16ST, E)

/* A binary loop over output elements [lo, hi): the functions EW_DEF_BIN
 * defines. Returns -1 for a dtype it does not handle; sets *bad_out to an
 * error flag of its expression (1: integer division by zero, 2: negative
 * integer power). */
typedef int (*dfx_ew_bin_fn)(const dfx_bcast *bc, int64_t lo, int64_t hi, dfx_dtype t, const void *a,
                             const void *b, void *o, int *bad_out);
/* Runs fn over all of bc's output, in chunks of about EW_POLL_GRAIN elements
 * with a cancellation poll between them. Returns DFX_OK with *bad as fn set
 * it (the first chunk that sets it stops the loop), or the failure recorded
 * in ctx: a poll's, or DFX_EUNIMPL for a dtype fn does not handle. */
dfx_code dfx__ew_run_bin_chunked(dfx_kctx *ctx, dfx_ew_bin_fn fn, const dfx_bcast *bc, dfx_dtype t, const void *a,
                                 const void *b, void *o, int *bad);
/* Tensors of at least this many elements may be split over idle threads
 * (core/parallel.h); smaller ones, and every scalar of a while loop, never
 * look at the cost model. */
#define EW_PAR_MIN ((int64_t)16384)
/* Estimated ns per element of a binary loop on one core (the cost model's
 * unit): memory-bound arithmetic. */
#define EW_BIN_UNIT_NS 0.3
/* Runs fn over all of bc's output in blocks on idle threads; in_place: o is
 * a (same-shape) operand, each block goes through a stack buffer. Returns
 * like dfx__ew_run_bin_chunked (cancellation is polled after the join). */
dfx_code dfx__ew_run_bin_par(dfx_kctx *ctx, dfx_ew_bin_fn fn, const dfx_bcast *bc, dfx_dtype t, const void *a,
                             const void *b, void *o, bool in_place, int *bad);
/* The float32 SIMD loop (kernels/simd) for op over output elements [lo, hi)
 * of bc, when the layout allows it: the same shapes, a scalar operand, or
 * the general path with unit or zero inner strides and rows of at least 8.
 * Returns false (nothing done) otherwise. op is a dfx_simd_op. */
bool dfx__ew_simd_bin_f32(int op, const dfx_bcast *bc, int64_t lo, int64_t hi, const float *a, const float *b,
                          float *o);
static inline dfx_code dfx__ew_run_bin(dfx_kctx *ctx, dfx_ew_bin_fn fn, const dfx_bcast *bc, dfx_dtype t,
                                       const void *a, const void *b, void *o, int *bad) {
  if (bc->count >= EW_PAR_MIN && ctx->par) return dfx__ew_run_bin_par(ctx, fn, bc, t, a, b, o, false, bad);
  if (bc->count > EW_POLL_GRAIN) return dfx__ew_run_bin_chunked(ctx, fn, bc, t, a, b, o, bad);
  *bad = 0; /* one chunk, no poll: the loop counter and comparison of a while loop come here */
  return fn(bc, 0, bc->count, t, a, b, o, bad) < 0 ? dfx__ew_unsupported(ctx, t) : DFX_OK;
}

/* Defines the dfx_ew_bin_fn `fn` whose switch holds CASES (EW_SI_CASES /
 * EW_UI_CASES / EW_F_CASES / EW_C_CASES / EW_BCASE ...). */
#define EW_DEF_BIN(fn, CASES)                                                            \
  static int fn(const dfx_bcast *bc, int64_t lo, int64_t hi, dfx_dtype t, const void *a, \
                const void *b, void *o, int *bad_out) {                                  \
    int bad = 0;                                                                         \
    switch (t) {                                                                         \
      CASES                                                                              \
      default:                                                                           \
        return -1;                                                                       \
    }                                                                                    \
    *bad_out = bad;                                                                      \
    return 0;                                                                            \
  }
#define EW_SI_CASES(OK, E)                                            \
  EW_BCASE(DFX_I8, int8_t, OK, E) EW_BCASE(DFX_I16, int16_t, OK, E) \
  EW_BCASE(DFX_I32, int32_t, OK, E) EW_BCASE(DFX_I64, int64_t, OK, E)
#define EW_UI_CASES(OK, E)                                              \
  EW_BCASE(DFX_U8, uint8_t, OK, E) EW_BCASE(DFX_U16, uint16_t, OK, E) \
  EW_BCASE(DFX_U32, uint32_t, OK, E) EW_BCASE(DFX_U64, uint64_t, OK, E)
#define EW_F_CASES(OK, E) \
  EW_BCASE(DFX_F32, float, OK, E) EW_BCASE(DFX_F64, double, OK, E) EW_BCASE_HALVES(OK, E)
/* Complex elements are C99 complex numbers, laid out as dfx_c64 / dfx_c128;
 * <tgmath.h> picks the complex function for exp, log, sqrt, sin, ... */
#define EW_C_CASES(OK, E) \
  EW_BCASE(DFX_C64, float _Complex, OK, E) EW_BCASE(DFX_C128, double _Complex, OK, E)

/* ---- unary generators: E(T) computes from local x ---- */
#define EW_UCASE(DT, T, OK, E)                   \
  case DT: {                                     \
    const T *restrict pa = a;                    \
    EW_OT_##OK(T) *restrict po = o;              \
    for (int64_t i = 0; i < n; i++) {            \
      const T x = pa[i];                         \
      po[i] = (EW_OT_##OK(T))(E(T));             \
    }                                            \
    break;                                       \
  }
#define EW_UCASE_HALF(DT, LD, OK, ST, E)         \
  case DT: {                                     \
    const uint16_t *restrict pa = a;             \
    EW_OT_##OK(uint16_t) *restrict po = o;       \
    for (int64_t i = 0; i < n; i++) {            \
      const float x = LD(pa[i]);                 \
      po[i] = ST##_##OK(E(float));               \
    }                                            \
    break;                                       \
  }
#define EW_US_CASES(OK, E)                                            \
  EW_UCASE(DFX_I8, int8_t, OK, E) EW_UCASE(DFX_I16, int16_t, OK, E) \
  EW_UCASE(DFX_I32, int32_t, OK, E) EW_UCASE(DFX_I64, int64_t, OK, E)
#define EW_UU_CASES(OK, E)                                              \
  EW_UCASE(DFX_U8, uint8_t, OK, E) EW_UCASE(DFX_U16, uint16_t, OK, E) \
  EW_UCASE(DFX_U32, uint32_t, OK, E) EW_UCASE(DFX_U64, uint64_t, OK, E)
#define EW_UF_CASES(OK, E)                                                                  \
  EW_UCASE(DFX_F32, float, OK, E) EW_UCASE(DFX_F64, double, OK, E)                          \
  EW_UCASE_HALF(DFX_F16, dfx__f16_to_f32, OK, EW_F16ST, E)                                  \
  EW_UCASE_HALF(DFX_BF16, dfx__bf16_to_f32, OK, EW_BF16ST, E)
#define EW_UC_CASES(OK, E) \
  EW_UCASE(DFX_C64, float _Complex, OK, E) EW_UCASE(DFX_C128, double _Complex, OK, E)
/* Defines `static int fn(n, t, a, o, &bad)`; -1 for a dtype not in CASES. */
#define EW_DEF_UN(fn, CASES)                                                 \
  static int fn(int64_t n, dfx_dtype t, const void *a, void *o, int *bad_out) { \
    int bad = 0;                                                             \
    switch (t) {                                                             \
      CASES                                                                  \
      default:                                                               \
        return -1;                                                           \
    }                                                                        \
    *bad_out = bad;                                                          \
    return 0;                                                                \
  }

#endif
