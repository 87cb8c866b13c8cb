/* graph.h - dfexec's graph: the one representation that import produces,
 * optimisation passes, gradients and the builder edit, sessions plan from,
 * and export writes back as a GraphDef.
 *
 * A graph is either final or being edited (`final`). Final: every node's
 * signature is applied (attr defaults filled and checked, input and output
 * dtypes known, opaque nodes for unknown ops), consumer edges and static
 * frames are built, and the graph passed TensorFlow's import checks; any
 * number of sessions and threads may read it. Editing (edit.c) changes
 * nodes, inputs and attrs and leaves the derived data stale until
 * dfx__graph_finalize (finalize.c) recomputes and re-checks it. A graph in
 * use by a session (n_sessions > 0) is never edited.
 *
 * Node ids are array indices in GraphDef order, stable while editing (a
 * removed node is only marked) and renumbered, order kept, when finalising
 * compacts removed nodes away. Adding nodes may move the array: keep ids,
 * not pointers, across dfx__graph_add_node. */
#ifndef DFX_GRAPH_H
#define DFX_GRAPH_H

#include <stdbool.h>
#include <stddef.h>
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
  int n_nodes, cap_nodes;
  dfx_node *nodes;
  int n_frames;           /* derived (finalize.c) */
  dfx_frame_info *frames;
  int *name_index;        /* open-addressed hash of node ids by name, at most half full */
  uint32_t name_cap;      /* power of two */
  uint32_t name_used;
  dfx_graph_meta meta;
  bool final;             /* derived data is current (see top) */
  int n_sessions;         /* atomic: sessions planning from this graph */
};

/* A (node id, output slot) pair inside a graph; slot -1 is the node itself
 * as a control input. */
typedef struct dfx_graph_port {
  int node;
  int slot;
} dfx_graph_port;

/* ---- graph.c: lifecycle, names, lookups ---- */

/* Finds a node by name (-1 if none); len may be (size_t)-1 for strlen. */
int dfx__graph_find(const dfx_graph *g, const char *name, size_t len);
/* TensorFlow's node name rule ([A-Za-z0-9._][A-Za-z0-9_./>-]*). */
bool dfx__node_name_valid(const char *name);
/* TensorFlow's ParseTensorName (tf-semantics §1.3): "node" (output 0),
 * "node:k" (output k) or "^node" (a control input: *slot -1). *name points
 * into s, *len bytes long. An index beyond INT32_MAX reads as INT32_MAX. */
void dfx__tensor_name_parse(const char *s, const char **name, size_t *len, int *slot);
/* Frees everything a node owns and zeroes it. */
void dfx__node_clear(dfx_node *n);
/* Rebuilds the name index over every node; DFX_EINVAL naming a duplicate
 * name, or DFX_ENOMEM. */
dfx_code dfx__graph_index_rebuild(dfx_graph *g, dfx_status *st);
/* Adds the newest node `id` to the index (growing it): the id of another
 * node with the same name, -1 when added, -2 when out of memory. */
int dfx__graph_index_insert(dfx_graph *g, int id);
/* Frees the static frames (before finalize.c recomputes them). */
void dfx__graph_clear_frames(dfx_graph *g);
/* Writes " (did you mean 'x'?)" into buf for the node name closest to
 * `name`, or "" when none is close; returns buf. For error messages only (a
 * linear scan). */
const char *dfx__graph_suggest(const dfx_graph *g, const char *name, char *buf, size_t n);
#define DFX_SUGGEST_MAX 160 /* a buffer this size holds any suggestion */

/* ---- edit.c: editing (see top) ---- */

/* A new empty graph being edited, or NULL when out of memory. */
dfx_graph *dfx__graph_new(void);
/* Adds a node `name` (valid and unused) of `op` with no inputs and no
 * attrs; returns its id, or -1 with DFX_EINVAL / DFX_ENOMEM in st. */
int dfx__graph_add_node(dfx_graph *g, const char *name, const char *op, dfx_status *st);
/* Appends an input (slot -1: a control input). Data inputs stay ahead of
 * control inputs. DFX_ENOMEM. */
dfx_code dfx__graph_add_input(dfx_graph *g, int id, int src, int slot, dfx_status *st);
/* Replaces input k (same kind: data stays data, control stays control). */
void dfx__graph_set_input(dfx_graph *g, int id, int k, int src, int slot);
void dfx__graph_remove_input(dfx_graph *g, int id, int k);
/* Every input reading (src, slot) reads (to, to_slot) instead, except the
 * inputs of `to` itself (a replacement may read what it replaces). Returns
 * how many inputs changed. */
int dfx__graph_replace_uses(dfx_graph *g, int src, int slot, int to, int to_slot);
/* Sets an attr (a deep copy of `a`; replaces one of the same name).
 * DFX_ENOMEM. */
dfx_code dfx__graph_set_attr(dfx_graph *g, int id, const dfx_attr *a, dfx_status *st);
void dfx__graph_remove_attr(dfx_graph *g, int id, const char *name);
/* Marks a node removed; finalising drops it (and fails if a kept node still
 * reads it). */
void dfx__graph_remove_node(dfx_graph *g, int id);
/* Renames a node (valid, unused name). DFX_EINVAL / DFX_ENOMEM. */
dfx_code dfx__graph_rename(dfx_graph *g, int id, const char *name, dfx_status *st);
/* A name not used in g: `base`, else "base_1", "base_2"... (new string, or
 * NULL when out of memory). */
char *dfx__graph_unique_name(const dfx_graph *g, const char *base);
/* Changes a node's op in place (its inputs and attrs stay: make them fit
 * the new op's signature before finalising). DFX_ENOMEM. */
dfx_code dfx__graph_set_op(dfx_graph *g, int id, const char *op, dfx_status *st);
/* Sets a node's requested device (a copy; "" for none). DFX_ENOMEM. */
dfx_code dfx__graph_set_device(dfx_graph *g, int id, const char *device, dfx_status *st);

/* ---- clone.c ---- */

/* A new graph in the editing state holding a deep copy of g's nodes (same
 * ids, removed ones still marked), inputs, attrs (tensors shared by
 * reference) and meta; g may be final or being edited and is only read.
 * Finalise the copy before planning from it. DFX_ENOMEM. */
dfx_code dfx__graph_clone(const dfx_graph *g, dfx_graph **out, dfx_status *st);
/* A new copy of a graph's function library (an unpacked
 * Tensorflow__FunctionDefLibrary, passed as void*), or NULL when out of
 * memory. */
void *dfx__graph_library_copy(const void *library);

/* ---- finalize.c ---- */

/* Brings the derived data up to date and re-checks the graph as import
 * does: compacts removed nodes, rebuilds the name index, applies signatures,
 * checks every edge, builds consumer edges and static frames. On success
 * the graph is final. Errors name the node and op (DFX_EINVAL, DFX_ENOMEM);
 * after one the graph stays in the editing state. */
dfx_code dfx__graph_finalize(dfx_graph *g, dfx_status *st);

/* ---- graph_frames.c ---- */

/* Static frame assignment and cycle checks (tf-semantics §2.5, §1.11);
 * called by dfx__graph_finalize. */
dfx_code dfx__graph_frames(dfx_graph *g, dfx_status *st);

/* ---- export.c ---- */

/* The graph as a Tensorflow__GraphDef (returned as void*: the generated
 * types stay in graph/) whose memory lives in `a`, or shares the graph's
 * (the function library): valid until either goes. */
dfx_code dfx__graph_to_proto(const dfx_graph *g, dfx_arena *a, void **out, dfx_status *st);

/* ---- prune.c ---- */

/* Marks in needed[] (g->n_nodes bytes, zeroed by the caller) every node
 * the fetches and targets reach backwards through data and control inputs;
 * a fed (node, slot) replaces its producer on the edges that read it, so
 * nothing behind a feed is needed for its sake (tf-semantics §2.8). `via`
 * (may be NULL; g->n_nodes ints) receives for each needed node the consumer
 * that first needed it, -1 for the fetches and targets: the chain an error
 * message names. */
dfx_code dfx__graph_prune_mark(const dfx_graph *g, const dfx_graph_port *fetches, int n_fetches, const int *targets,
                               int n_targets, const dfx_graph_port *feeds, int n_feeds, char *needed, int *via,
                               dfx_status *st);

#endif
