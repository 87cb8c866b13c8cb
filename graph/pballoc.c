/* pballoc.c - see pballoc.h. */
#include "pballoc.h"

#include "alloc.h"

/* `ud`, when set, points to a flag raised on a failed allocation. */
static void *pb_alloc(void *ud, size_t n) {
  void *p = dfx__malloc(n);
  if (!p && ud) *(int *)ud = 1;
  return p;
}

static void pb_free(void *ud, void *p) {
  (void)ud;
  dfx__free(p);
}

ProtobufCAllocator dfx__pb_allocator = {pb_alloc, pb_free, NULL};

ProtobufCAllocator dfx__pb_allocator_flagged(int *oom) { return (ProtobufCAllocator){pb_alloc, pb_free, oom}; }
