/* flow.h - the flow graph: a pruned graph in the form propagation walks
 * (tf-semantics §3.1, TF's NodeItem/FrameInfo).
 *
 * exec/plan.c fills the nodes (what each is, which frame it lives in) and
 * their consumer edges; dfx__flow_layout then lays out frame-local input
 * slots and initial pending counts and copies what activation needs about
 * each consumer into the edge. After that the flow is immutable and any
 * number of runs share it. Nothing here knows about kernels: a node the
 * propagator cannot run itself (DFX_MOVE_NONE, not a control op) is opaque
 * and the executor runs it. */
#ifndef DFX_FLOW_H
#define DFX_FLOW_H

#include <stdbool.h>
#include <stdint.h>

#include "node.h"
#include "status.h"
#include "tensor.h"

/* What the propagator must know about an edge's destination. It is copied
 * into the edge so that activating a consumer touches only the edge and the
 * iteration's counters, not the consumer's node. */
enum {
  DFX_DST_PLAIN,
  DFX_DST_MERGE,
  DFX_DST_TRIGGER,
  DFX_DST_EXIT /* a dead instance need not be scheduled */
};

/* Nodes outside the control-flow set that only move tensors, so that
 * propagation may run them where they become ready (see control.c). */
enum {
  DFX_MOVE_NONE,    /* a kernel: only the executor runs it */
  DFX_MOVE_FORWARD, /* output k is input k (Identity, Snapshot, StopGradient...) */
  DFX_MOVE_CONST,   /* output 0 is `const_value` (Const) */
};

typedef struct dfx_fedge {
  int dst;          /* flow node index */
  int src_slot;     /* -1 for a control edge */
  int dst_slot;     /* input index at dst, -1 for a control edge */
  int dst_local;    /* dst's frame-local index */
  int dst_input;    /* dst's input_start + dst_slot: its slot in the iteration's inputs; -1 for control */
  int dst_n_in;     /* dst's data input count (a Merge is dead when all are) */
  uint8_t dst_kind; /* DFX_DST_* */
  bool dst_observed; /* dst's outputs must reach the executor (fetched): see dfx_fnode.observed */
  bool dst_trivial; /* dst may be run where it becomes ready (dfx__flow_trivial) */
  bool is_last;     /* last data edge reading src_slot: may move the tensor */
} dfx_fedge;

typedef struct dfx_fnode {
  const char *name, *op;      /* for messages and traces; borrowed from the graph */
  int frame;                  /* static frame index */
  int n_in, n_out;
  int child_frame;            /* Enter: the frame it enters */
  dfx_ctrl_op ctrl;
  uint8_t move;               /* DFX_MOVE_*, for ctrl == DFX_CTRL_NONE */
  bool is_constant_enter;     /* Enter with is_constant: a loop invariant */
  bool is_switch_n;           /* _SwitchN: an int32 index instead of a bool */
  bool merge_index_used;      /* Merge: value_index has a consumer or is fetched */
  bool observed;              /* fetched or fed: the executor must run it (never settled) */
  int dead_slot;              /* fetched Exit: index into the run's settled-deadness record, else -1 */
  const dfx_tensor *const_value; /* DFX_MOVE_CONST: immortal, owned by the session */
  /* Filled by dfx__flow_layout. */
  int local;                  /* index among the nodes of its frame */
  int input_start;            /* offset of input 0 in the iteration's input array */
  int32_t pending_init;       /* tf-semantics §2.4 initial count (dfx__ctrl_pending_init) */
  int n_edges;                /* data edges first, then control edges */
  dfx_fedge *edges;
} dfx_fnode;

typedef struct dfx_fframe {
  const char *name;           /* "" for the root; borrowed from the graph */
  int parent;                 /* -1 for the root */
  int parallel_iterations;
  /* Filled by dfx__flow_layout. */
  int n_enters;               /* Enters of this frame inside the flow */
  int n_local;                /* nodes in the frame */
  int total_inputs;           /* size of an iteration's input array */
  int32_t *pending_init;      /* n_local initial pending counts */
} dfx_fframe;

typedef struct dfx_flow {
  int n_nodes;
  dfx_fnode *nodes;
  int n_frames;
  dfx_fframe *frames;
  int n_roots;
  int *roots;                 /* nodes with no inputs (root frame): the run starts here */
  int n_dead_slots;           /* fetched Exits (dfx_fnode.dead_slot) */
} dfx_flow;

/* Appends a consumer edge to node `src` (before layout). DFX_ENOMEM. Data
 * edges must all be added before control edges of the same producer. */
dfx_code dfx__flow_add_edge(dfx_flow *f, int src, int dst, int src_slot, int dst_slot);
/* Lays out slots, pending counts, roots and edge facts (see top). Returns
 * DFX_OK or DFX_ENOMEM with a message in st. */
dfx_code dfx__flow_layout(dfx_flow *f, dfx_status *st);
/* Frees what the flow owns (nodes, edges, frames, roots), not the struct. */
void dfx__flow_clear(dfx_flow *f);
/* Whether node n only moves tensors, so propagation may run it where it
 * becomes ready: a Switch, a Merge whose value_index nobody reads, a
 * LoopCond, a Const, or an op forwarding its one input; never an observed
 * node. */
bool dfx__flow_trivial(const dfx_fnode *n);

#endif
