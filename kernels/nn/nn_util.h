/* nn_util.h - helpers shared by the nn kernel files: axis parsing, integer
 * limits, element loads/stores through float for the half types, index
 * stores, cancellation polling and the dtype sets of the kernel rows. */
#ifndef DFX_NN_UTIL_H
#define DFX_NN_UTIL_H

#include <stdbool.h>
#include <stdint.h>

#include "kernel.h"

/* Dtype sets for the rows' types strings ("T: {" DFX_NN_FLOAT_T ", " DFX_NN_INT_T "}"). */
#define DFX_NN_FLOAT_T "half, bfloat16, float, double"
#define DFX_NN_INT_T "int8, int16, int32, int64, uint8, uint16, uint32, uint64"

/* Reads the int32/int64 axes tensor ctx->in[i] (any shape, flattened) and
 * marks the reduced dims of a rank-`rank` input; TF's errors for out-of-range
 * and duplicate axes. */
dfx_code dfx__nn_axes_mask(dfx_kctx *ctx, int i, int rank, bool *mask);
/* Range of a signed or unsigned integer dtype (uint64's hi is INT64_MAX). */
void dfx__nn_int_limits(dfx_dtype t, int64_t *lo, int64_t *hi);
/* Element i of a float-like tensor (f16/bf16/f32/f64, also integers) as double. */
double dfx__nn_load(const void *data, dfx_dtype t, int64_t i);
/* Stores v into element i, rounding to nearest even for the half types. */
void dfx__nn_store(void *data, dfx_dtype t, int64_t i, double v);
/* Stores index v into element i of an int16/uint16/int32/int64 tensor,
 * truncating like TF's cast to the index type. */
void dfx__nn_store_index(void *data, dfx_dtype t, int64_t i, int64_t v);

/* Work units between two polls of the run (dfx__kctx_poll). */
#define DFX_NN_POLL_WORK ((int64_t)1 << 20)

/* Adds `work` units to *done and polls the run once they pass DFX_NN_POLL_WORK:
 * DFX_OK to go on, or the code to return at once. */
static inline dfx_code dfx__nn_progress(dfx_kctx *ctx, int64_t *done, int64_t work) {
  if ((*done += work) < DFX_NN_POLL_WORK) return DFX_OK;
  *done = 0;
  return dfx__kctx_poll(ctx);
}

#endif
