/* register.c - registration of the strings kernel family (one call per
 * file): lookup tables and the string ops text models use. */
#include "kernel.h"

void dfx__kernels_strings_table(dfx_registry *r);
void dfx__kernels_strings_as_string(dfx_registry *r);
void dfx__kernels_strings_to_number(dfx_registry *r);
void dfx__kernels_strings_split(dfx_registry *r);
void dfx__kernels_strings_ngrams(dfx_registry *r);
void dfx__kernels_strings_hash_bucket(dfx_registry *r);
void dfx__kernels_strings_regex(dfx_registry *r);
void dfx__kernels_strings_join(dfx_registry *r);

void dfx__kernels_strings(dfx_registry *r);
void dfx__kernels_strings(dfx_registry *r) {
  dfx__kernels_strings_table(r);
  dfx__kernels_strings_as_string(r);
  dfx__kernels_strings_to_number(r);
  dfx__kernels_strings_split(r);
  dfx__kernels_strings_ngrams(r);
  dfx__kernels_strings_hash_bucket(r);
  dfx__kernels_strings_regex(r);
  dfx__kernels_strings_join(r);
}
