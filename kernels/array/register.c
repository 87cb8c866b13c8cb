/* register.c - registration of the array kernel family (one call per file). */
#include "kernel.h"

void dfx__kernels_array_pack(dfx_registry *r);
void dfx__kernels_array_shape(dfx_registry *r);
void dfx__kernels_array_range(dfx_registry *r);
void dfx__kernels_array_slice(dfx_registry *r);
void dfx__kernels_array_pad(dfx_registry *r);
void dfx__kernels_array_diag(dfx_registry *r);
void dfx__kernels_array_where(dfx_registry *r);

/* The order of the calls does not matter: each file's rows serve their own
 * ops, and two rows of one op for the same dtypes fail sealing either way. */
void dfx__kernels_array(dfx_registry *r);
void dfx__kernels_array(dfx_registry *r) {
  dfx__kernels_array_pack(r);
  dfx__kernels_array_shape(r);
  dfx__kernels_array_range(r);
  dfx__kernels_array_slice(r);
  dfx__kernels_array_pad(r);
  dfx__kernels_array_diag(r);
  dfx__kernels_array_where(r);
}
