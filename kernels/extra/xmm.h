/* xmm.h - batch matrix products and element plumbing shared by
 * BatchMatMulV3 and Einsum. Intermediate values live in a "work" dtype:
 * float for float/half/bfloat16, double, complex64, complex128, and int64
 * (wrapping) for integers. Products of float/double/complex go to OpenBLAS
 * gemm; int64 uses a naive loop. (kernels/nn's matmul keeps its gemm
 * static, so this is a small separate implementation.) */
#ifndef DFX_EXTRA_XMM_H
#define DFX_EXTRA_XMM_H

#include <stdbool.h>
#include <stdint.h>

#include "kernel.h"

/* A batch of products C[b] = op(A[b]) op(B[b]), C [m, n] row-major; the
 * batch index runs over bdims, and A's matrix for batch index (i0, i1, ...)
 * is sum(i_d * astr[d]) (0 strides broadcast), likewise B. */
typedef struct dfx_xmm {
  int nb;
  int64_t bdims[DFX_MAX_DIMS];
  int64_t astr[DFX_MAX_DIMS], bstr[DFX_MAX_DIMS];
  int64_t m, n, k;
  bool ta, tb;  /* A is stored [k, m] / B is stored [n, k] */
  bool conj;    /* transposed complex operands are conjugated */
} dfx_xmm;

/* The work dtype for t (DFX_INVALID-like 0 when t has none). */
dfx_dtype dfx__x_work_type(dfx_dtype t);

/* A new tensor holding t's values in work dtype w, or a new reference to t
 * when it already is w. NULL after failing via ctx. */
dfx_tensor *dfx__x_to_work(dfx_kctx *ctx, dfx_tensor *t, dfx_dtype w);

/* Stores n work-type values (dtype w) into dst of dtype t (rounding half
 * types, wrapping integers, the real part of complex into real types). */
void dfx__x_from_work(const void *src, dfx_dtype w, void *dst, dfx_dtype t, int64_t n);

/* A new tensor with t's axes permuted: output axis i is t's axis perm[i].
 * Returns a new reference to t for the identity. NULL after failing. */
dfx_tensor *dfx__x_permute(dfx_kctx *ctx, dfx_tensor *t, const int *perm);

/* Broadcasts the batch dims of a [.., m, k] and b [.., k, n] into p (nb,
 * bdims, astr, bstr); fails via ctx with TF's MatMulBCast message. */
dfx_code dfx__x_bcast(dfx_kctx *ctx, int na, const int64_t *ad, int nbd, const int64_t *bd, dfx_xmm *p);

/* Runs the products for work dtype w; c holds prod(bdims) * m * n values. */
dfx_code dfx__x_bmm(dfx_kctx *ctx, const dfx_xmm *p, dfx_dtype w, const void *a, const void *b, void *c);

#endif
