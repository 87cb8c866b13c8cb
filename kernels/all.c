/* all.c - the list of kernel families; adding a family is one line here. */
#include "kernel.h"

void dfx__kernels_base(dfx_registry *r);
void dfx__kernels_math(dfx_registry *r);
void dfx__kernels_nn(dfx_registry *r);
void dfx__kernels_conv(dfx_registry *r);
void dfx__kernels_array(dfx_registry *r);
void dfx__kernels_gather(dfx_registry *r);
void dfx__kernels_misc(dfx_registry *r);
void dfx__kernels_sparse(dfx_registry *r);
void dfx__kernels_extra(dfx_registry *r);
void dfx__kernels_strings(dfx_registry *r);
void dfx__kernels_fft(dfx_registry *r);
void dfx__kernels_queue(dfx_registry *r);
void dfx__kernels_quant(dfx_registry *r);
void dfx__kernels_vision(dfx_registry *r);
void dfx__kernels_seq(dfx_registry *r);
void dfx__kernels_var(dfx_registry *r);
void dfx__kernels_list(dfx_registry *r);
void dfx__kernels_fused(dfx_registry *r);
void dfx__kernels_dist(dfx_registry *r);

void dfx__kernels_register_all(dfx_registry *r);
void dfx__kernels_register_all(dfx_registry *r) {
  dfx__kernels_base(r);
  dfx__kernels_math(r);
  dfx__kernels_nn(r);
  dfx__kernels_conv(r);
  dfx__kernels_array(r);
  dfx__kernels_gather(r);
  dfx__kernels_misc(r);
  dfx__kernels_sparse(r);
  dfx__kernels_extra(r);
  dfx__kernels_strings(r);
  dfx__kernels_fft(r);
  dfx__kernels_queue(r);
  dfx__kernels_quant(r);
  dfx__kernels_vision(r);
  dfx__kernels_seq(r);
  dfx__kernels_var(r);
  dfx__kernels_list(r);
  dfx__kernels_fused(r);
  dfx__kernels_dist(r);
}
