/* register.c - registration of the extra kernel family: ops of issue 22
 * that belong to no other family (one call per file). */
#include "kernel.h"

void dfx__kernels_extra_search(dfx_registry *r);
void dfx__kernels_extra_bmm3(dfx_registry *r);
void dfx__kernels_extra_einsum(dfx_registry *r);
void dfx__kernels_extra_unique2(dfx_registry *r);

void dfx__kernels_extra(dfx_registry *r);
void dfx__kernels_extra(dfx_registry *r) {
  dfx__kernels_extra_search(r);
  dfx__kernels_extra_bmm3(r);
  dfx__kernels_extra_einsum(r);
  dfx__kernels_extra_unique2(r);
}
