/* register.c - registration of the conv kernel family (one call per file). */
#include "kernel.h"

void dfx__kernels_conv_conv(dfx_registry *r);
void dfx__kernels_conv_pool(dfx_registry *r);
void dfx__kernels_conv_space(dfx_registry *r);
void dfx__kernels_conv_resize(dfx_registry *r);
void dfx__kernels_conv_color(dfx_registry *r);
void dfx__kernels_conv_nms(dfx_registry *r);
void dfx__kernels_conv_fused(dfx_registry *r);
void dfx__kernels_conv_grad(dfx_registry *r);

void dfx__kernels_conv(dfx_registry *r);
void dfx__kernels_conv(dfx_registry *r) {
  dfx__kernels_conv_conv(r);
  dfx__kernels_conv_pool(r);
  dfx__kernels_conv_space(r);
  dfx__kernels_conv_resize(r);
  dfx__kernels_conv_color(r);
  dfx__kernels_conv_nms(r);
  dfx__kernels_conv_fused(r);
  dfx__kernels_conv_grad(r);
}
