/* misc.h - what the misc family's kernel files share: the dtype sets their
 * rows declare (the `types` strings of kernel.h) and the grain at which
 * long kernels poll for cancellation. Kernels that only store, move or print
 * elements serve every dtype with a plain layout; variant is left out of
 * those that copy or print elements, as its values are opaque objects. */
#ifndef DFX_MISC_H
#define DFX_MISC_H

#include "kernel.h"

/* Numbers and bool, stored as plain values. */
#define MISC_NUM_TYPES                                                                                      \
  "bool, int8, uint8, int16, uint16, int32, uint32, int64, uint64, half, bfloat16, float, double, complex64, " \
  "complex128, qint8, quint8, qint16, quint16, qint32"
/* What a TensorArray copies, gathers and splits element by element. */
#define MISC_DATA_TYPES "{" MISC_NUM_TYPES ", string}"
/* Every dtype: kernels that only hold references to whole tensors. */
#define MISC_ANY_TYPES "{" MISC_NUM_TYPES ", string, resource, variant}"
/* Shape inputs of the random ops. */
#define MISC_SHAPE_TYPES "{int32, int64}"

/* Long loops call dfx__kctx_poll once per this many elements of work. */
#define MISC_POLL_MASK (((int64_t)1 << 20) - 1)

/* Polls when `done` (elements of work so far) crosses a grain boundary. */
static inline dfx_code misc_poll(dfx_kctx *ctx, int64_t done) {
  return (done & MISC_POLL_MASK) == 0 ? dfx__kctx_poll(ctx) : DFX_OK;
}

#endif
