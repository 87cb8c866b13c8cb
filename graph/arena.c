/* arena.c - the arena of arena.h. Blocks of 8 KiB; a larger request gets
 * a block of its own, linked behind the current one so the current block's
 * free space stays in use. */
#include "arena.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "alloc.h"

struct dfx_arena_blk {
  dfx_arena_blk *next;
  size_t used, cap;
  _Alignas(max_align_t) unsigned char data[];
};

void *dfx__arena_alloc(dfx_arena *a, size_t n) {
  const size_t align = _Alignof(max_align_t);
  if (n > SIZE_MAX - (align - 1)) return NULL; /* rounding up would wrap to a tiny block */
  n = (n + align - 1) & ~(align - 1);
  /* A zero-byte request still gets memory, so NULL always means out of memory
   * to callers that copy empty arrays and strings. */
  if (n == 0) n = align;
  dfx_arena_blk *h = a->head;
  if (!h || h->cap - h->used < n) {
    size_t cap = n > 8192 ? n : 8192;
    if (cap > SIZE_MAX - sizeof *h) return NULL;
    dfx_arena_blk *nb = dfx__malloc(sizeof *nb + cap);
    if (!nb) return NULL;
    nb->used = 0;
    nb->cap = cap;
    /* A big one-off block goes behind the current one so its free space
     * stays in use. */
    if (h && n > 8192) {
      nb->next = h->next;
      h->next = nb;
    } else {
      nb->next = h;
      a->head = nb;
    }
    h = nb;
  }
  void *p = h->data + h->used;
  h->used += n;
  memset(p, 0, n);
  return p;
}

char *dfx__arena_strndup(dfx_arena *a, const char *s, size_t n) {
  char *p = dfx__arena_alloc(a, n + 1);
  /* No terminator to write: arena memory comes zeroed. */
  if (p) memcpy(p, s, n);
  return p;
}

void *dfx__arena_memdup(dfx_arena *a, const void *src, size_t bytes) {
  void *p = dfx__arena_alloc(a, bytes);
  if (p && bytes) memcpy(p, src, bytes);
  return p;
}

char *dfx__arena_strdup(dfx_arena *a, const char *s) { return dfx__arena_strndup(a, s, strlen(s)); }

char *dfx__arena_printf(dfx_arena *a, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  /* Measure first, then format into exactly that much arena memory; the
   * va_list is consumed by each pass, so it is restarted. */
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) return NULL;
  char *p = dfx__arena_alloc(a, (size_t)n + 1);
  if (!p) return NULL;
  va_start(ap, fmt);
  vsnprintf(p, (size_t)n + 1, fmt, ap);
  va_end(ap);
  return p;
}

void dfx__arena_free(dfx_arena *a) {
  for (dfx_arena_blk *h = a->head, *nx; h; h = nx) {
    nx = h->next;
    dfx__free(h);
  }
  a->head = NULL;
}

