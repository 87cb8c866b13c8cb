/* register.c - registration of the sparse kernel family (one call per file). */
#include "kernel.h"

void dfx__kernels_sparse_ctc(dfx_registry *r);
void dfx__kernels_sparse_to_dense(dfx_registry *r);
void dfx__kernels_sparse_reshape_fill(dfx_registry *r);
void dfx__kernels_sparse_segment(dfx_registry *r);
void dfx__kernels_sparse_ragged(dfx_registry *r);
void dfx__kernels_sparse_setop(dfx_registry *r);

void dfx__kernels_sparse(dfx_registry *r);
void dfx__kernels_sparse(dfx_registry *r) {
  dfx__kernels_sparse_ctc(r);
  dfx__kernels_sparse_to_dense(r);
  dfx__kernels_sparse_reshape_fill(r);
  dfx__kernels_sparse_segment(r);
  dfx__kernels_sparse_ragged(r);
  dfx__kernels_sparse_setop(r);
}
