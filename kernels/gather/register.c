/* register.c - registration of the gather kernel family (one call per file). */
#include "kernel.h"

void dfx__kernels_gather_gather(dfx_registry *r);
void dfx__kernels_gather_scatter(dfx_registry *r);
void dfx__kernels_gather_segment(dfx_registry *r);
void dfx__kernels_gather_partition(dfx_registry *r);
void dfx__kernels_gather_unique(dfx_registry *r);
void dfx__kernels_gather_index_misc(dfx_registry *r);

/* The order of the calls does not matter: each file's rows serve their own
 * ops, and two rows of one op for the same dtypes fail sealing either way. */
void dfx__kernels_gather(dfx_registry *r);
void dfx__kernels_gather(dfx_registry *r) {
  dfx__kernels_gather_gather(r);
  dfx__kernels_gather_scatter(r);
  dfx__kernels_gather_segment(r);
  dfx__kernels_gather_partition(r);
  dfx__kernels_gather_unique(r);
  dfx__kernels_gather_index_misc(r);
}
