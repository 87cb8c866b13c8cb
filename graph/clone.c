/* clone.c - deep copies of a graph: what the builder finalises while it
 * keeps its own graph growing, and what a pass that must not touch its
 * input edits. The copy has the same node ids (removed nodes stay marked),
 * inputs, attrs and meta, and is in the editing state: derived data is not
 * copied, finalising the copy recomputes it. Attr tensors are shared by
 * reference, as tensors in a graph are never written. */
#include <string.h>

#include "alloc.h"
#include "graph.h"
#include "function.pb-c.h"
#include "pballoc.h"

/* Copies what an edit may change; dst is zeroed and, on failure, holds
 * what was copied so far (dfx__node_clear frees it). */
static dfx_code node_copy(dfx_node *dst, const dfx_node *src) {
  dst->id = src->id;
  dst->ctrl = src->ctrl;
  dst->removed = src->removed;
  dst->frame = dst->child_frame = -1;
  if (!(dst->name = dfx__strdup(src->name)) || !(dst->op = dfx__strdup(src->op)) ||
      (src->device && !(dst->device = dfx__strdup(src->device))))
    return DFX_ENOMEM;
  size_t n_in = (size_t)(src->n_in + src->n_ctrl);
  if (n_in && !(dst->in = dfx__malloc(n_in * sizeof *dst->in))) return DFX_ENOMEM;
  if (n_in) memcpy(dst->in, src->in, n_in * sizeof *dst->in);
  dst->n_in = src->n_in;
  dst->n_ctrl = src->n_ctrl;
  if (src->n_attrs && !(dst->attrs = dfx__calloc((size_t)src->n_attrs, sizeof *dst->attrs))) return DFX_ENOMEM;
  for (; dst->n_attrs < src->n_attrs; dst->n_attrs++)
    if (dfx__attr_copy(&dst->attrs[dst->n_attrs], &src->attrs[dst->n_attrs]) != DFX_OK) return DFX_ENOMEM;
  return DFX_OK;
}

void *dfx__graph_library_copy(const void *library) {
  const Tensorflow__FunctionDefLibrary *lib = library;
  size_t n = protobuf_c_message_get_packed_size(&lib->base);
  uint8_t *buf = dfx__malloc(n ? n : 1);
  if (!buf) return NULL;
  protobuf_c_message_pack(&lib->base, buf);
  void *copy = tensorflow__function_def_library__unpack(&dfx__pb_allocator, n, buf);
  dfx__free(buf);
  return copy;
}

static dfx_code meta_copy(dfx_graph_meta *dst, const dfx_graph_meta *src) {
  dst->has_versions = src->has_versions;
  dst->producer = src->producer;
  dst->min_consumer = src->min_consumer;
  if (src->n_bad_consumers) {
    size_t bytes = (size_t)src->n_bad_consumers * sizeof *dst->bad_consumers;
    if (!(dst->bad_consumers = dfx__malloc(bytes))) return DFX_ENOMEM;
    memcpy(dst->bad_consumers, src->bad_consumers, bytes);
    dst->n_bad_consumers = src->n_bad_consumers;
  }
  if (src->library && !(dst->library = dfx__graph_library_copy(src->library))) return DFX_ENOMEM;
  return DFX_OK;
}

dfx_code dfx__graph_clone(const dfx_graph *g, dfx_graph **out, dfx_status *st) {
  *out = NULL;
  dfx_graph *c = dfx__graph_new();
  if (!c) goto oom;
  if (g->n_nodes && !(c->nodes = dfx__calloc((size_t)g->n_nodes, sizeof *c->nodes))) goto oom;
  c->cap_nodes = g->n_nodes;
  /* n_nodes counts the node being copied too, so a partial one is freed. */
  for (int i = 0; i < g->n_nodes; i++) {
    c->n_nodes++;
    if (node_copy(&c->nodes[i], &g->nodes[i]) != DFX_OK) goto oom;
  }
  if (meta_copy(&c->meta, &g->meta) != DFX_OK) goto oom;
  dfx_code code = dfx__graph_index_rebuild(c, st);
  if (code != DFX_OK) {
    dfx_graph_free(c);
    return code;
  }
  *out = c;
  return DFX_OK;
oom:
  dfx_graph_free(c);
  return dfx__status_set(st, DFX_ENOMEM, "out of memory copying the graph");
}
