/* arena.h - zeroed blocks freed all at once: the memory of protobuf-c
 * messages export assembles (alive for one serialisation) and the
 * builder's handles and strings (alive as long as the builder). */
#ifndef DFX_ARENA_H
#define DFX_ARENA_H

#include <stddef.h>

typedef struct dfx_arena_blk dfx_arena_blk;
typedef struct dfx_arena {
  dfx_arena_blk *head;
} dfx_arena;

/* Zeroed, max_align_t-aligned memory valid until dfx__arena_free; NULL when
 * out of memory. */
void *dfx__arena_alloc(dfx_arena *a, size_t n);
char *dfx__arena_strdup(dfx_arena *a, const char *s);
/* A copy of `bytes` bytes at src (bytes may be 0), or NULL. */
void *dfx__arena_memdup(dfx_arena *a, const void *src, size_t bytes);
char *dfx__arena_strndup(dfx_arena *a, const char *s, size_t n);
char *dfx__arena_printf(dfx_arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void dfx__arena_free(dfx_arena *a);

#endif
