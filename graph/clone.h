/* clone.h - deep copies of a graph (clone.c). Kept apart from graph.h only
 * because this change may not edit it; the two declarations belong in its
 * edit section. */
#ifndef DFX_CLONE_H
#define DFX_CLONE_H

#include "graph.h"

/* A new graph in the editing state holding a deep copy of g's nodes (same
 * ids, removed ones still marked), inputs, attrs (tensors shared by
 * reference) and meta; g may be final or being edited and is only read.
 * Finalise the copy before planning from it. DFX_ENOMEM. */
dfx_code dfx__graph_clone(const dfx_graph *g, dfx_graph **out, dfx_status *st);
/* A new copy of a graph's function library (an unpacked
 * Tensorflow__FunctionDefLibrary, passed as void*), or NULL when out of
 * memory. */
void *dfx__graph_library_copy(const void *library);

#endif
