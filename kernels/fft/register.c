/* register.c - registration of the fft kernel family (one call per file). */
#include "kernel.h"

void dfx__kernels_fft_fft(dfx_registry *r);

void dfx__kernels_fft(dfx_registry *r);
void dfx__kernels_fft(dfx_registry *r) { dfx__kernels_fft_fft(r); }
