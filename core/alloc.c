/* alloc.c - allocation hook, size-prefixed blocks and the counting test allocator.
 * The hook is process-global and must be set before objects are created; the
 * counting allocator is thread-safe because kernels allocate from workers. */
#include "alloc.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "bufcache.h"
#include "dfexec.h"
#include "tensor.h"

/* Header in front of each block; 16 bytes keeps the payload max-aligned. */
typedef union {
  size_t size;
  max_align_t align_;
} block_head;

static void *default_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  (void)ud;
  (void)osize;
  if (nsize == 0) {
    free(ptr);
    return NULL;
  }
  return realloc(ptr, nsize);
}

static dfx_alloc_fn g_alloc = default_alloc;
static void *g_alloc_ud;

void dfx_set_allocator(dfx_alloc_fn fn, void *ud) {
  /* This thread's idle tensor structs and buffers go back to the allocator
   * that made them (other threads' caches empty when those threads end;
   * switch allocators while no other thread runs kernels). */
  dfx__tensor_cache_flush();
  g_alloc = fn ? fn : default_alloc;
  g_alloc_ud = fn ? ud : NULL;
}

void *dfx__malloc(size_t n) {
  /* The header is added to n, so a size near SIZE_MAX must fail here rather
   * than wrap into a tiny block. */
  if (n > SIZE_MAX - sizeof(block_head)) return NULL;
  block_head *h = g_alloc(g_alloc_ud, NULL, 0, n + sizeof(block_head));
  if (!h) return NULL;
  h->size = n;
  return h + 1;
}

void *dfx__calloc(size_t count, size_t size) {
  size_t n = dfx__mul_size(count, size);
  if (n == SIZE_MAX) return NULL;
  void *p = dfx__malloc(n);
  if (p) memset(p, 0, n);
  return p;
}

void *dfx__realloc(void *p, size_t n) {
  if (!p) return dfx__malloc(n);
  if (n > SIZE_MAX - sizeof(block_head)) return NULL;
  block_head *h = (block_head *)p - 1;
  /* The hook is told the old size (lua_Alloc's contract); that is why every
   * block carries its size. On failure the old block is left as it was. */
  block_head *nh = g_alloc(g_alloc_ud, h, h->size + sizeof(block_head), n + sizeof(block_head));
  if (!nh) return NULL;
  nh->size = n;
  return nh + 1;
}

void dfx__free(void *p) {
  if (!p) return;
  block_head *h = (block_head *)p - 1;
  g_alloc(g_alloc_ud, h, h->size + sizeof(block_head), 0);
}

char *dfx__strndup(const char *s, size_t n) {
  char *d = dfx__malloc(n + 1);
  if (!d) return NULL;
  if (n) memcpy(d, s, n); /* s may be NULL when n is 0 (an empty protobuf bytes field) */
  d[n] = 0;
  return d;
}

char *dfx__strdup(const char *s) { return dfx__strndup(s, strlen(s)); }

/* ---- counting allocator for tests ---- */

static void *test_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  dfx_testalloc *ta = ud;
  if (nsize == 0) {
    if (ptr) {
      __atomic_sub_fetch(&ta->live_blocks, 1, __ATOMIC_RELAXED);
      __atomic_sub_fetch(&ta->live_bytes, (long long)osize, __ATOMIC_RELAXED);
      free(ptr);
    }
    return NULL;
  }
  /* Only the Nth request fails, reallocs included, and later ones succeed:
   * a test walks N = 1, 2, ... to fail each allocation site once. */
  long long k = __atomic_add_fetch(&ta->n_allocs, 1, __ATOMIC_RELAXED);
  if (ta->fail_at > 0 && k == ta->fail_at) {
    __atomic_add_fetch(&ta->n_failed, 1, __ATOMIC_RELAXED);
    return NULL;
  }
  void *np = realloc(ptr, nsize);
  if (!np) return NULL;
  if (!ptr) __atomic_add_fetch(&ta->live_blocks, 1, __ATOMIC_RELAXED);
  long long now = __atomic_add_fetch(&ta->live_bytes, (long long)nsize - (long long)osize, __ATOMIC_RELAXED);
  if (now > __atomic_load_n(&ta->peak_bytes, __ATOMIC_RELAXED)) __atomic_store_n(&ta->peak_bytes, now, __ATOMIC_RELAXED);
  return np;
}

void dfx__testalloc_install(dfx_testalloc *ta) { dfx_set_allocator(ta ? test_alloc : NULL, ta); }
