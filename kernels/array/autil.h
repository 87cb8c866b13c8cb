/* autil.h - element copy helpers and limits shared by the array kernels.
 * Offsets and strides count elements, not bytes. String elements are deep
 * copied (the destination's old bytes are freed). Every helper that takes a
 * ctx records its own error there (out of memory, cancellation, a limit), so
 * callers just return the code. */
#ifndef DFX_KERNELS_ARRAY_AUTIL_H
#define DFX_KERNELS_ARRAY_AUTIL_H

#include <stdint.h>

#include "kernel.h"

/* Dtype sets for the kernel rows' `types` strings. Copy kernels move elements
 * by storage size (strings deep) and cannot copy resource or variant handles;
 * ops that only share or describe a tensor (reshapes, Shape) take every dtype. */
#define DFX_ARR_COPY_TYPES                                                                                   \
  "{float, double, int32, uint8, int16, int8, string, complex64, int64, bool, qint8, quint8, qint32, "     \
  "bfloat16, qint16, quint16, uint16, complex128, half, uint32, uint64}"
#define DFX_ARR_ALL_TYPES                                                                                    \
  "{float, double, int32, uint8, int16, int8, string, complex64, int64, bool, qint8, quint8, qint32, "     \
  "bfloat16, qint16, quint16, uint16, complex128, half, resource, variant, uint32, uint64}"
#define DFX_ARR_T_COPY "T: " DFX_ARR_COPY_TYPES
#define DFX_ARR_I32_64 "{int32, int64}" /* most index attrs */

/* Elements of work between two dfx__kctx_poll calls. */
#define DFX_ARR_POLL_EVERY ((int64_t)1 << 20)

/* Copies n contiguous elements src[si..] to dst[di..] (same dtype). */
dfx_code dfx__arr_copy(dfx_kctx *ctx, dfx_tensor *dst, int64_t di, const dfx_tensor *src, int64_t si, int64_t n);

/* Copies an r-dimensional box of shape dims: element (i0..ir) goes from
 * src[soff + sum i*sstride] to dst[doff + sum i*dstride]. Source strides may
 * be zero (broadcast) or negative (reversal); r may be up to 2*DFX_MAX_DIMS.
 * Polls for cancellation every DFX_ARR_POLL_EVERY elements. */
dfx_code dfx__arr_strided(dfx_kctx *ctx, dfx_tensor *dst, int64_t doff, const int64_t *dstride, const dfx_tensor *src,
                          int64_t soff, const int64_t *sstride, int r, const int64_t *dims);

/* Sets dst[di..di+n) to the element src[si]. */
dfx_code dfx__arr_fill(dfx_kctx *ctx, dfx_tensor *dst, int64_t di, int64_t n, const dfx_tensor *src, int64_t si);

/* For kernels' own loops: adds n elements of work to *work and polls for
 * cancellation each time it passes DFX_ARR_POLL_EVERY. */
static inline dfx_code dfx__arr_tick(dfx_kctx *ctx, int64_t *work, int64_t n) {
  if ((*work += n) < DFX_ARR_POLL_EVERY) return DFX_OK;
  *work = 0;
  return dfx__kctx_poll(ctx);
}

/* Allocates output k like dfx__kctx_alloc, but a shape that overflows or is
 * above dfx__tensor_limit() fails with DFX_ELIMIT naming `what` (the attr or
 * input values the shape came from). */
dfx_tensor *dfx__arr_alloc(dfx_kctx *ctx, int k, dfx_dtype dtype, int ndims, const int64_t *dims, const char *what);

/* String element bytes are not counted by dfx__tensor_limit(), so kernels
 * that replicate strings add up what their output would hold before
 * allocating it: *acc += n * len, false on overflow. */
static inline bool dfx__arr_str_add(uint64_t *acc, uint64_t n, uint64_t len) {
  uint64_t p;
  return !__builtin_mul_overflow(n, len, &p) && !__builtin_add_overflow(*acc, p, acc);
}
/* Total string bytes held by t (0 for other dtypes). */
uint64_t dfx__arr_str_bytes(const dfx_tensor *t);
/* Length of string element i of t (0 for other dtypes). */
uint64_t dfx__arr_str_len(const dfx_tensor *t, int64_t i);
/* Fails with DFX_ELIMIT naming `what` unless ok (no overflow) and bytes are
 * within dfx__tensor_limit(). */
dfx_code dfx__arr_str_limit(dfx_kctx *ctx, bool ok, uint64_t bytes, const char *what);
/* The common case: base bytes plus n copies of len bytes (n < 0 is an
 * element count that overflowed). */
static inline dfx_code dfx__arr_str_budget(dfx_kctx *ctx, const char *what, uint64_t base, int64_t n, uint64_t len) {
  bool ok = n >= 0 && dfx__arr_str_add(&base, (uint64_t)n, len);
  return dfx__arr_str_limit(ctx, ok, base, what);
}

/* Row-major strides of a shape (elements). */
void dfx__arr_strides(int r, const int64_t *dims, int64_t *strides);

/* Product of dims[lo..hi) (the dims of a tensor, so it cannot overflow). */
int64_t dfx__arr_prod(const int64_t *dims, int lo, int hi);

/* Init check for an int attr that indexes dims: it must lie in [lo, hi]
 * (bounds from DFX_MAX_DIMS, so no input rank can make it valid otherwise). */
dfx_code dfx__arr_attr_range(const dfx_node *n, const char *attr, int64_t lo, int64_t hi, dfx_status *st);

#endif
