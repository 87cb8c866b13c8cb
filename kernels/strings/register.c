/* register.c - registration of the strings kernel family (one call per
 * file): lookup tables and the string ops text models use. */
#include "kernel.h"

void dfx__kernels_strings_table(dfx_registry *r);

void dfx__kernels_strings(dfx_registry *r);
void dfx__kernels_strings(dfx_registry *r) {
  dfx__kernels_strings_table(r);
}
