/* graph.h - dfexec's immutable graph: nodes, edges, attrs and static frames.
 * Built by graph_import.c from a GraphDef and never changed afterwards, so any
 * number of sessions and threads may read it. Node ids are GraphDef order. */
#ifndef DFX_GRAPH_H
#define DFX_GRAPH_H

#include <stdbool.h>
#include <stdint.h>

#include "arena.h"
#include "dfexec.h"
#include "node.h"
#include "status.h"

typedef struct dfx_frame_info {
  char *name;             /* "" for the root frame */
  int parent;             /* enclosing frame index, -1 for the root */
  int parallel_iterations;
  int n_enters;
  int n_nodes;
} dfx_frame_info;

/* What a GraphDef carries besides its nodes, kept so export writes it back. */
typedef struct dfx_graph_meta {
  bool has_versions;
  int32_t producer, min_consumer;
  int n_bad_consumers;
  int32_t *bad_consumers;
  void *library;          /* the unpacked FunctionDefLibrary (owned), or NULL: functions are not imported yet */
} dfx_graph_meta;

struct dfx_graph {
  int n_nodes;
  dfx_node *nodes;
  int n_frames;
  dfx_frame_info *frames;
  int *name_index;        /* open-addressed hash of node ids by name */
  uint32_t name_cap;      /* power of two */
  dfx_graph_meta meta;
};

/* export.c: the graph as a Tensorflow__GraphDef (returned as void*: the
 * generated types stay in graph/) whose memory lives in `a`, or shares the
 * graph's (the function library): valid until either goes. */
dfx_code dfx__graph_to_proto(const dfx_graph *g, dfx_arena *a, void **out, dfx_status *st);

/* Finds a node by name (-1 if none); len may be (size_t)-1 for strlen. */
int dfx__graph_find(const dfx_graph *g, const char *name, size_t len);
/* A (node id, output slot) pair inside a graph. */
typedef struct dfx_graph_port {
  int node;
  int slot;
} dfx_graph_port;

/* Writes " (did you mean 'x'?)" into buf for the node name closest to
 * `name`, or "" when none is close; returns buf. For error messages only (a
 * linear scan). */
const char *dfx__graph_suggest(const dfx_graph *g, const char *name, char *buf, size_t n);
#define DFX_SUGGEST_MAX 160 /* a buffer this size holds any suggestion */

/* prune.c: marks in needed[] (g->n_nodes bytes, zeroed by the caller) every
 * node the fetches and targets reach backwards through data and control
 * inputs; a fed (node, slot) replaces its producer on the edges that read
 * it, so nothing behind a feed is needed for its sake (tf-semantics §2.8).
 * `via` (may be NULL; g->n_nodes ints) receives for each needed node the
 * consumer that first needed it, -1 for the fetches and targets: the chain
 * an error message names. */
dfx_code dfx__graph_prune_mark(const dfx_graph *g, const dfx_graph_port *fetches, int n_fetches, const int *targets,
                               int n_targets, const dfx_graph_port *feeds, int n_feeds, char *needed, int *via,
                               dfx_status *st);

#endif
