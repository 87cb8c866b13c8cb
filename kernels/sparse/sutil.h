/* sutil.h - helpers shared by the sparse family: integer element reads,
 * growable int64 vectors (decoded sequences, sparse outputs of unknown
 * size) and the size check for outputs sized from input values. */
#ifndef DFX_SPARSE_SUTIL_H
#define DFX_SPARSE_SUTIL_H

#include <stdint.h>

#include "alloc.h"
#include "kernel.h"

/* Element i of an integer tensor as int64. */
static inline int64_t sidx(const dfx_tensor *t, int64_t i) {
  switch (t->dtype) {
    case DFX_I32: return ((const int32_t *)t->data)[i];
    case DFX_I64: return ((const int64_t *)t->data)[i];
    default: return dfx__tensor_get_i64(t, i);
  }
}

/* A growable int64 array; zero-initialise, free with svec_free. */
typedef struct svec {
  int64_t *v;
  int64_t n, cap;
} svec;

static inline void svec_free(svec *s) {
  dfx__free(s->v);
  s->v = NULL;
  s->n = s->cap = 0;
}

/* Appends x; fails via ctx (DFX_ENOMEM, or DFX_ELIMIT past the tensor
 * limit) and returns the code. */
dfx_code dfx__svec_push(dfx_kctx *ctx, svec *s, int64_t x);

/* Fails with DFX_ELIMIT naming `what` when n elements of dt (n < 0: the
 * count overflowed) would exceed dfx__tensor_limit(); DFX_OK otherwise. */
dfx_code dfx__s_check_count(dfx_kctx *ctx, const char *what, int64_t n, dfx_dtype dt);

/* Cancellation for loops over data: charge `work` elements to *left and
 * poll every ~1 M elements. */
#define DFX_S_POLL_EVERY ((int64_t)1 << 20)
static inline dfx_code stick(dfx_kctx *ctx, int64_t *left, int64_t work) {
  if ((*left -= work) > 0) return DFX_OK;
  *left = DFX_S_POLL_EVERY;
  return dfx__kctx_poll(ctx);
}

#endif
