/* register.c - registration of the TensorList kernel family. */
#include "kernel.h"

void dfx__kernels_list_ops(dfx_registry *r);
void dfx__kernels_list_many(dfx_registry *r);

void dfx__kernels_list(dfx_registry *r);
void dfx__kernels_list(dfx_registry *r) {
  dfx__kernels_list_ops(r);
  dfx__kernels_list_many(r);
}
