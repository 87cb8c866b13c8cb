/* graph.h - dfexec's immutable graph: nodes, edges, attrs and static frames.
 * Built by graph_import.c from a GraphDef and never changed afterwards, so any
 * number of sessions and threads may read it. Node ids are GraphDef order. */
#ifndef DFX_GRAPH_H
#define DFX_GRAPH_H

#include <stdbool.h>
#include <stdint.h>

#include "dfexec.h"
#include "node.h"

typedef struct dfx_frame_info {
  char *name;             /* "" for the root frame */
  int parent;             /* enclosing frame index, -1 for the root */
  int parallel_iterations;
  int n_enters;
  int n_nodes;
} dfx_frame_info;

struct dfx_graph {
  int n_nodes;
  dfx_node *nodes;
  int n_frames;
  dfx_frame_info *frames;
  int *name_index;        /* open-addressed hash of node ids by name */
  uint32_t name_cap;      /* power of two */
};

/* Finds a node by name (-1 if none); len may be (size_t)-1 for strlen. */
int dfx__graph_find(const dfx_graph *g, const char *name, size_t len);
#endif
