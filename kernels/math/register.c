/* register.c - registration of the math kernel family (one call per file). */
#include "kernel.h"

void dfx__kernels_math_binary(dfx_registry *r);
void dfx__kernels_math_compare(dfx_registry *r);
void dfx__kernels_math_unary(dfx_registry *r);
void dfx__kernels_math_special(dfx_registry *r);
void dfx__kernels_math_cast(dfx_registry *r);
void dfx__kernels_math_select(dfx_registry *r);
void dfx__kernels_math_complex(dfx_registry *r);

/* The order of the calls does not matter: each file's rows serve their own
 * ops, and two rows of one op for the same dtypes fail sealing either way. */
void dfx__kernels_math(dfx_registry *r);
void dfx__kernels_math(dfx_registry *r) {
  dfx__kernels_math_binary(r);
  dfx__kernels_math_compare(r);
  dfx__kernels_math_unary(r);
  dfx__kernels_math_special(r);
  dfx__kernels_math_cast(r);
  dfx__kernels_math_select(r);
  dfx__kernels_math_complex(r);
}
