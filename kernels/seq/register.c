/* register.c - registration of the sequence kernel family (cuDNN-style RNNs, ragged variants). */
#include "kernel.h"

void dfx__kernels_seq_cudnn_rnn(dfx_registry *r);
void dfx__kernels_seq_cudnn_params(dfx_registry *r);
void dfx__kernels_seq_ragged_variant(dfx_registry *r);

void dfx__kernels_seq(dfx_registry *r);
void dfx__kernels_seq(dfx_registry *r) {
  dfx__kernels_seq_cudnn_rnn(r);
  dfx__kernels_seq_cudnn_params(r);
  dfx__kernels_seq_ragged_variant(r);
}
