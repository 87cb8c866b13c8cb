/* simd.c - run-time choice of the dfx_simd_table (simd.h): the widest
 * instruction set both this build and the running CPU have, unless
 * DFX_SIMD names another. Chosen once; every later call is one load. */
#include <stdlib.h>
#include <string.h>

#include "simd.h"

extern const dfx_simd_table dfx__simd_table_base;
#ifdef DFX_SIMD_X86
extern const dfx_simd_table dfx__simd_table_avx2;
extern const dfx_simd_table dfx__simd_table_avx512;
#endif

const dfx_simd_table *dfx__simd_get(const char *isa) {
  if (strcmp(isa, "base") == 0) return &dfx__simd_table_base;
#ifdef DFX_SIMD_X86
  __builtin_cpu_init();
  if (strcmp(isa, "avx2") == 0 && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return &dfx__simd_table_avx2;
  if (strcmp(isa, "avx512") == 0 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("fma"))
    return &dfx__simd_table_avx512;
#endif
  return NULL;
}

static const dfx_simd_table *choose(void) {
  const char *want = getenv("DFX_SIMD");
  const dfx_simd_table *t = want ? dfx__simd_get(want) : NULL;
  if (t) return t;
  static const char *const best_first[] = {"avx512", "avx2"};
  for (size_t i = 0; i < sizeof best_first / sizeof *best_first; i++)
    if ((t = dfx__simd_get(best_first[i]))) return t;
  return &dfx__simd_table_base;
}

const dfx_simd_table *dfx__simd(void) {
  /* Racing first callers all compute the same answer: a relaxed publish is
   * enough (the tables are constants). */
  static const dfx_simd_table *chosen;
  const dfx_simd_table *t = __atomic_load_n(&chosen, __ATOMIC_ACQUIRE);
  if (!t) {
    t = choose();
    __atomic_store_n(&chosen, t, __ATOMIC_RELEASE);
  }
  return t;
}
