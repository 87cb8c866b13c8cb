/* register.c - registration of the queue kernel family (one call per file). */
#include "kernel.h"

void dfx__kernels_queue_queue(dfx_registry *r);

void dfx__kernels_queue(dfx_registry *r);
void dfx__kernels_queue(dfx_registry *r) { dfx__kernels_queue_queue(r); }
