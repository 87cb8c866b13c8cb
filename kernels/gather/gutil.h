/* gutil.h - helpers shared by the gather family: index reads, element copies
 * (strings deep-copied), elementwise combine ops over every dtype, fill values
 * and TensorFlow-style shape/slice strings for error messages. */
#ifndef DFX_GATHER_GUTIL_H
#define DFX_GATHER_GUTIL_H

#include <stdint.h>

#include "kernel.h"

/* Dtype sets for the kernels' `types` strings (kernel.h). DFX_G_REAL is
 * what dfx__g_apply's arithmetic and dfx__g_fill handle (integers, float,
 * double, the half types), DFX_G_NUM adds complex for the ops without an
 * order (add, sub, mul, div); DFX_G_COPY what element copies handle (every
 * fixed-size dtype and strings, not resource or variant handles);
 * DFX_G_HASHABLE what unique.c hashes and compares as TF does. */
#define DFX_G_REAL_LIST "int8, int16, int32, int64, uint8, uint16, uint32, uint64, half, bfloat16, float, double"
#define DFX_G_NUM_LIST DFX_G_REAL_LIST ", complex64, complex128"
#define DFX_G_QUANT_LIST "qint8, quint8, qint16, quint16, qint32"
#define DFX_G_REAL "{" DFX_G_REAL_LIST "}"
#define DFX_G_NUM "{" DFX_G_NUM_LIST "}"
#define DFX_G_COPY "{" DFX_G_NUM_LIST ", bool, " DFX_G_QUANT_LIST ", string}"
#define DFX_G_HASHABLE "{" DFX_G_REAL_LIST ", bool, string}"

/* Combine ops: dst = op(dst, src). */
typedef enum dfx_gop {
  DFX_GOP_SET,
  DFX_GOP_ADD,
  DFX_GOP_SUB,
  DFX_GOP_MUL,
  DFX_GOP_DIV,
  DFX_GOP_MAX,
  DFX_GOP_MIN,
} dfx_gop;

/* Fill values for reductions. */
typedef enum dfx_gfill {
  DFX_GFILL_ZERO,
  DFX_GFILL_ONE,
  DFX_GFILL_LOWEST,
  DFX_GFILL_HIGHEST,
} dfx_gfill;

/* Element i of an integer tensor as int64. */
static inline int64_t gidx(const dfx_tensor *t, int64_t i) {
  switch (t->dtype) {
    case DFX_I32: return ((const int32_t *)t->data)[i];
    case DFX_I64: return ((const int64_t *)t->data)[i];
    case DFX_I16: return ((const int16_t *)t->data)[i];
    default: return dfx__tensor_get_i64(t, i);
  }
}

/* Stores v as element i of an int32/int64 tensor. */
static inline void gset_idx(dfx_tensor *t, int64_t i, int64_t v) {
  if (t->dtype == DFX_I32) ((int32_t *)t->data)[i] = (int32_t)v;
  else ((int64_t *)t->data)[i] = v;
}

/* dst[i] = op(dst[i], src[i * src_stride]) for i < n (src_stride 0 broadcasts a
 * scalar). Elements are dt. Every op for DFX_G_REAL; complex all but MAX and
 * MIN; strings SET and ADD (concatenation); bool SET, ADD (or), MUL (and),
 * MAX (or) and MIN (and); other fixed-size dtypes SET. Fails via ctx on
 * integer division by zero, out of memory or an unsupported dtype. */
dfx_code dfx__g_apply(dfx_kctx *ctx, dfx_dtype dt, dfx_gop op, void *dst, const void *src, int64_t n,
                      int64_t src_stride);

/* GatherV2 of ctx->in[0] (params) by ctx->in[1] (indices) on `axis` with
 * `batch_dims`, into ctx->out[0] (ResourceGather reuses it on a variable's
 * value). */
dfx_code dfx__g_gather(dfx_kctx *ctx, int64_t axis, int64_t batch_dims);

/* Copies n elements (strings deep-copied; old dst strings freed). */
dfx_code dfx__g_copy(dfx_kctx *ctx, dfx_dtype dt, void *dst, const void *src, int64_t n);

/* Fills n elements of dt with the given value (DFX_G_REAL, bool; complex
 * ZERO and ONE); fails for an unsupported dtype. */
dfx_code dfx__g_fill(dfx_kctx *ctx, dfx_dtype dt, void *dst, int64_t n, dfx_gfill v);

/* Divides each of n elements by count (SegmentMean). */
void dfx__g_div_count(dfx_dtype dt, void *dst, int64_t n, int64_t count);

/* TensorFlow's SliceDebugString: "" for rank 0, "[i]" or "[i,j,...]". */
const char *dfx__g_slice_str(int ndims, const int64_t *dims, int64_t flat, char *buf, size_t n);

/* Fails with "<op> does not support dtype <dt>". */
dfx_code dfx__g_bad_dtype(dfx_kctx *ctx, dfx_dtype dt);

/* Output sizes that come from input values (a segment count, a largest
 * index, a bin count): fails with DFX_ELIMIT naming `what` and its value
 * when rows x inner elements of dt would exceed dfx__tensor_limit(), before
 * anything is allocated. rows or inner < 0 means its product overflowed. */
dfx_code dfx__g_check_rows(dfx_kctx *ctx, const char *what, int64_t value, int64_t rows, int64_t inner,
                           dfx_dtype dt);

/* Product of dims[from..to) without overflow, or -1 (dims of a tensor with
 * no elements may multiply past int64 once the zero is left out). */
static inline int64_t gprod(const int64_t *dims, int from, int to) {
  return to > from ? dfx__shape_count(to - from, dims + from) : 1;
}

/* Init for the ops with a bad_indices_policy attr (GatherNd, ScatterNd*,
 * TensorScatter*): rejects values TF does not know; the state is non-NULL
 * exactly when the policy is IGNORE (out-of-range indices skipped). */
dfx_code dfx__g_policy_init(const dfx_node *node, void **state, dfx_status *st);

/* Cancellation for loops over data: charge `work` elements to *left and
 * poll every ~1 M elements. Returns DFX_OK to go on, or the code to return. */
#define DFX_G_POLL_EVERY ((int64_t)1 << 20)
static inline dfx_code gtick(dfx_kctx *ctx, int64_t *left, int64_t work) {
  if ((*left -= work) > 0) return DFX_OK;
  *left = DFX_G_POLL_EVERY;
  return dfx__kctx_poll(ctx);
}

/* For loops too cheap per element even for gtick: the end of the chunk of
 * [i, n) to run before the next poll, as in
 *   for (i = 0; i < n;) { if (i && dfx__kctx_poll(ctx)) ...; for (end = gchunk(i, n); i < end; i++) ... } */
static inline int64_t gchunk(int64_t i, int64_t n) { return n - i > DFX_G_POLL_EVERY ? i + DFX_G_POLL_EVERY : n; }

#endif
