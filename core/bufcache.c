/* bufcache.c - recycling of large tensor buffers (an arena, as other
 * executors keep one). glibc returns freed memory at the top of its heap to
 * the kernel once more than 128 KB is free there, so a run that produces a
 * few megabytes of outputs and frees them (the user reads its fetches, a
 * fan-out of matmuls, a big loop body) page-faults all of it back in on the
 * next run: 1.7x the time of the matmuls themselves in dfx-bench's fan-out
 * case. Buffers of 4 KiB and more are therefore kept, by size class, up to a
 * process-wide cap, and handed out again. Smaller ones go straight to
 * dfx__malloc, which recycles them well. */
#include "bufcache.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "alloc.h"

#define MIN_SHIFT 12                   /* 4 KiB: smallest cached buffer */
#define MAX_SHIFT 30                   /* 1 GiB: larger buffers are never cached */
#define STEPS 4                        /* size classes per power of two (at most 25 % slack) */
#define N_CLASSES ((MAX_SHIFT - MIN_SHIFT + 1) * STEPS)
#define CAP_BYTES ((size_t)256 << 20)  /* at most this much idle memory, or RAM / 16 if less */

typedef struct free_block {
  struct free_block *next;
} free_block;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static free_block *lists[N_CLASSES];
static size_t cached_bytes, cap_bytes;

static size_t cap(void) {
  if (!cap_bytes) {
    uint64_t ram = uv_get_total_memory() / 16;
    cap_bytes = ram > 0 && ram < CAP_BYTES ? (size_t)ram : CAP_BYTES;
  }
  return cap_bytes;
}

static int floor_log2(size_t n) { return 63 - __builtin_clzll((unsigned long long)n); }

/* Rounds n up to its class size and returns the class, or -1 for sizes
 * that are not cached. */
static int size_class(size_t n, size_t *rounded) {
  if (n < ((size_t)1 << MIN_SHIFT) || n > ((size_t)1 << MAX_SHIFT)) return -1;
  size_t step = (size_t)1 << (floor_log2(n) - 2);
  size_t r = (n + step - 1) & ~(step - 1);
  int k = floor_log2(r);
  if (k > MAX_SHIFT) return -1;
  *rounded = r;
  return (k - MIN_SHIFT) * STEPS + (int)((r >> (k - 2)) & (STEPS - 1));
}

void *dfx__buf_alloc(size_t n) {
  size_t r;
  int c = size_class(n, &r);
  if (c < 0) return dfx__malloc(n);
  pthread_mutex_lock(&mu);
  free_block *b = lists[c];
  if (b) {
    lists[c] = b->next;
    cached_bytes -= r;
  }
  pthread_mutex_unlock(&mu);
  return b ? (void *)b : dfx__malloc(r);
}

void dfx__buf_free(void *p, size_t n) {
  if (!p) return;
  size_t r;
  int c = size_class(n, &r);
  if (c >= 0) {
    pthread_mutex_lock(&mu);
    bool keep = cached_bytes + r <= cap();
    if (keep) {
      free_block *b = p;
      b->next = lists[c];
      lists[c] = b;
      cached_bytes += r;
    }
    pthread_mutex_unlock(&mu);
    if (keep) return;
  }
  dfx__free(p);
}

void dfx__buf_cache_flush(void) {
  pthread_mutex_lock(&mu);
  for (int c = 0; c < N_CLASSES; c++)
    while (lists[c]) {
      free_block *b = lists[c];
      lists[c] = b->next;
      dfx__free(b);
    }
  cached_bytes = 0;
  pthread_mutex_unlock(&mu);
}
