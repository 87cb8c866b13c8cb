/* register.c - registration of the fused kernel family: kernels that do
 * the work of several graph nodes at once, as the optimisation passes
 * write them (one call per file). */
#include "kernel.h"

void dfx__kernels_fused_ew(dfx_registry *r);

void dfx__kernels_fused(dfx_registry *r);
void dfx__kernels_fused(dfx_registry *r) { dfx__kernels_fused_ew(r); }
