/* register.c - registration of the quantization kernel family. */
#include "kernel.h"

void dfx__kernels_quant_quantize(dfx_registry *r);
void dfx__kernels_quant_dequantize(dfx_registry *r);

void dfx__kernels_quant(dfx_registry *r);
void dfx__kernels_quant(dfx_registry *r) {
  dfx__kernels_quant_quantize(r);
  dfx__kernels_quant_dequantize(r);
}
