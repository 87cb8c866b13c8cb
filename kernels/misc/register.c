/* register.c - registration of the misc kernel family (one call per file). */
#include "kernel.h"

void dfx__kernels_misc_logging(dfx_registry *r);
void dfx__kernels_misc_tensor_array(dfx_registry *r);
void dfx__kernels_misc_tensor_array_many(dfx_registry *r);
void dfx__kernels_misc_random(dfx_registry *r);
void dfx__kernels_misc_random_dist(dfx_registry *r);
void dfx__kernels_misc_rnn(dfx_registry *r);
void dfx__kernels_misc_fake_quant(dfx_registry *r);
void dfx__kernels_misc_stack(dfx_registry *r);

/* The order of the calls does not matter: each file's rows serve their own
 * ops, and two rows of one op for the same dtypes fail sealing either way. */
void dfx__kernels_misc(dfx_registry *r);
void dfx__kernels_misc(dfx_registry *r) {
  dfx__kernels_misc_logging(r);
  dfx__kernels_misc_tensor_array(r);
  dfx__kernels_misc_tensor_array_many(r);
  dfx__kernels_misc_random(r);
  dfx__kernels_misc_random_dist(r);
  dfx__kernels_misc_rnn(r);
  dfx__kernels_misc_fake_quant(r);
  dfx__kernels_misc_stack(r);
}
