/* register.c - registration of the variable kernel family: TF1 ref
 * variables, TF2 resource variables and the optimizer updates. */
#include "kernel.h"

void dfx__kernels_var_ref(dfx_registry *r);
void dfx__kernels_var_res(dfx_registry *r);
void dfx__kernels_var_apply(dfx_registry *r);

void dfx__kernels_var(dfx_registry *r);
void dfx__kernels_var(dfx_registry *r) {
  dfx__kernels_var_ref(r);
  dfx__kernels_var_res(r);
  dfx__kernels_var_apply(r);
}
