/* register.c - registration of the nn kernel family (one call per file). */
#include "kernel.h"

void dfx__kernels_nn_reduce(dfx_registry *r);
void dfx__kernels_nn_scan(dfx_registry *r);
void dfx__kernels_nn_matmul(dfx_registry *r);
void dfx__kernels_nn_bias(dfx_registry *r);
void dfx__kernels_nn_softmax(dfx_registry *r);
void dfx__kernels_nn_batchnorm(dfx_registry *r);
void dfx__kernels_nn_topk(dfx_registry *r);
void dfx__kernels_nn_linalg(dfx_registry *r);
void dfx__kernels_nn_fused_matmul(dfx_registry *r);

void dfx__kernels_nn(dfx_registry *r);
void dfx__kernels_nn(dfx_registry *r) {
  dfx__kernels_nn_reduce(r);
  dfx__kernels_nn_scan(r);
  dfx__kernels_nn_matmul(r);
  dfx__kernels_nn_bias(r);
  dfx__kernels_nn_softmax(r);
  dfx__kernels_nn_batchnorm(r);
  dfx__kernels_nn_topk(r);
  dfx__kernels_nn_linalg(r);
  dfx__kernels_nn_fused_matmul(r);
}
