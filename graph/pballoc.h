/* pballoc.h - protobuf-c's allocations through the library's single
 * allocation hook (style.md §2.2), so the test allocator sees and can fail
 * every byte protobuf-c takes. */
#ifndef DFX_PBALLOC_H
#define DFX_PBALLOC_H

#include <protobuf-c/protobuf-c.h>

extern ProtobufCAllocator dfx__pb_allocator;
/* The same allocator, raising *oom when an allocation fails: protobuf-c
 * returns NULL alike for bad bytes and for no memory, and import must tell
 * the two apart. */
ProtobufCAllocator dfx__pb_allocator_flagged(int *oom);

#endif
