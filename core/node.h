/* node.h - the node record: a NodeDef resolved against its op signature.
 * Core owns the record because three layers read it: kernels (name, op,
 * attrs and dtypes, through the getters below), the graph layer (which
 * builds, edits and indexes nodes) and the executor (which plans from them).
 * Only graph/ writes the topology fields (in, frame, edges). */
#ifndef DFX_NODE_H
#define DFX_NODE_H

#include <stdbool.h>
#include <stdint.h>

#include "attr.h"
#include "dfexec.h"
#include "op_def.h"

/* Control-flow classes handled by the frames engine (tf-semantics §2.1).
 * The Ref variants map to the same class; `_SwitchN` is a SWITCH. */
#define DFX_CTRL_OP_MAP(XX)               \
  XX(NONE, "")                            \
  XX(SWITCH, "Switch")                    \
  XX(MERGE, "Merge")                      \
  XX(ENTER, "Enter")                      \
  XX(EXIT, "Exit")                        \
  XX(NEXT_ITERATION, "NextIteration")     \
  XX(LOOP_COND, "LoopCond")               \
  XX(CONTROL_TRIGGER, "ControlTrigger")

typedef enum dfx_ctrl_op {
#define XX(name, op) DFX_CTRL_##name,
  DFX_CTRL_OP_MAP(XX)
#undef XX
  DFX_CTRL_COUNT_
} dfx_ctrl_op;

/* The control-flow class of an op name (DFX_CTRL_NONE for compute ops). */
dfx_ctrl_op dfx__ctrl_class(const char *op);

/* An input reference: producer node and output slot (-1: control input). */
typedef struct dfx_input {
  int node;
  int slot;
} dfx_input;

/* A consumer edge, stored on the producer. dst_slot -1 is a control edge. */
typedef struct dfx_edge {
  int dst;
  int src_slot;
  int dst_slot;
} dfx_edge;

typedef struct dfx_node {
  int id;                 /* index in the graph's node array (GraphDef order) */
  char *name;
  char *op;
  char *device;
  dfx_ctrl_op ctrl;
  int n_in;               /* data inputs */
  int n_ctrl;             /* control inputs, after the data inputs in `in` */
  dfx_input *in;          /* n_in + n_ctrl */
  int n_attrs;
  dfx_attr *attrs;        /* GraphDef attrs plus defaults from the op def */
  int n_out;              /* outputs, list outputs expanded */
  dfx_dtype *in_types;    /* n_in, from the op def and attrs */
  dfx_dtype *out_types;   /* n_out */
  const dfx_op_def *def;  /* NULL for an op with no signature */
  int frame;              /* static frame index (0 = root); graph/ assigns it */
  int child_frame;        /* Enter: the frame it enters; graph/ assigns it */
  int n_edges;            /* consumers: data edges then control edges; graph/ builds them */
  dfx_edge *edges;
  bool removed;           /* deleted by an edit; gone at the next dfx__graph_finalize */
} dfx_node;

const dfx_attr *dfx__node_attr(const dfx_node *n, const char *name);

/* The record of the node producing data input i of n, or NULL (no such
 * input, or n was made outside a graph, as kernel tests do). The nodes of a
 * graph are one array indexed by id (graph/graph.h keeps them so), which
 * lets a kernel's init follow its inputs to their producers: how the ops
 * that take a TF1 ref (Assign, ApplyAdam) find their variable's node. Only
 * valid while the graph is not edited (kernel init runs on a final graph). */
const dfx_node *dfx__node_producer(const dfx_node *n, int i);

/* Typed attr getters: return the attr's value, or `def` when it is absent or of
 * another kind. */
int64_t dfx__attr_int(const dfx_node *n, const char *name, int64_t def);
float dfx__attr_float(const dfx_node *n, const char *name, float def);
bool dfx__attr_bool(const dfx_node *n, const char *name, bool def);
dfx_dtype dfx__attr_type(const dfx_node *n, const char *name, dfx_dtype def);
/* NUL-terminated string value (the importer guarantees a terminator) or def. */
const char *dfx__attr_str(const dfx_node *n, const char *name, const char *def);
const dfx_shape *dfx__attr_shape(const dfx_node *n, const char *name);
const dfx_tensor *dfx__attr_tensor(const dfx_node *n, const char *name);
/* The list attr, or NULL; an empty list has n == 0. */
const dfx_attr_list *dfx__attr_list(const dfx_node *n, const char *name);

#endif
