/* bufcache.h - process-wide recycling of large tensor buffers (bufcache.c).
 * A buffer from dfx__buf_alloc(n) must be released with dfx__buf_free(p, n)
 * with the same n. Thread-safe. */
#ifndef DFX_BUFCACHE_H
#define DFX_BUFCACHE_H

#include <stddef.h>

void *dfx__buf_alloc(size_t n);
void dfx__buf_free(void *p, size_t n);
/* Frees every idle buffer: before the allocator changes, and before a test
 * checks that nothing is left allocated. */
void dfx__buf_cache_flush(void);

#endif
