/* plan.h - the immutable execution plan for one (feeds, fetches, targets) signature.
 * A plan is the pruned graph in executor form (tf-semantics §3.1): plan
 * nodes with their frame-local slots, initial pending counts and consumer
 * edges. Sessions cache plans; any number of runs share one. */
#ifndef DFX_PLAN_H
#define DFX_PLAN_H

#include <stdbool.h>
#include <stdint.h>

#include "graph.h"
#include "kernel.h"

/* What the propagator must know about an edge's destination. It is copied
 * into the edge so that activating a consumer touches only the edge and the
 * iteration's counters, not the consumer's plan node. */
enum {
  DFX_DST_PLAIN,
  DFX_DST_MERGE,
  DFX_DST_TRIGGER,
  DFX_DST_EXIT /* a dead instance need not be scheduled */
};

typedef struct dfx_pedge {
  int dst;          /* plan node index */
  int src_slot;     /* -1 for a control edge */
  int dst_slot;     /* input index at dst, -1 for a control edge */
  int dst_local;    /* dst's frame-local index */
  int dst_input;    /* dst's input_start + dst_slot: its slot in the iteration's inputs; -1 for control */
  int dst_n_in;     /* dst's data input count (a Merge is dead when all are) */
  uint8_t dst_kind; /* DFX_DST_* */
  bool dst_fetched; /* dst serves a fetch */
  bool dst_trivial; /* dst may run where it becomes ready (Const, Identity, Switch, LoopCond, Merge) */
  bool is_last;     /* last data edge reading src_slot: may move the tensor */
} dfx_pedge;

/* Where a fetched tensor comes from. */
typedef struct dfx_pfetch {
  int node;         /* plan node */
  int slot;
} dfx_pfetch;

typedef struct dfx_pnode {
  const dfx_node *g;          /* graph node; NULL for a feed node */
  const char *name, *op;      /* for messages and traces */
  int id;
  int frame;                  /* static frame (graph frame index) */
  int local;                  /* index among the plan nodes of its frame */
  int n_in, n_out;
  int input_start;            /* offset of input 0 in the iteration's input array */
  int32_t pending_init;       /* tf-semantics §2.4 initial count */
  dfx_ctrl_op ctrl;
  bool is_constant_enter;
  bool is_switch_n;           /* _SwitchN: int32 index instead of a bool */
  bool merge_index_used;      /* Merge: value_index has a consumer or a fetch */
  bool inline_ok;             /* cheap: run on the thread that readied it */
  uint8_t kflags;             /* the kernel's DFX_KERNEL_* flags (0 for control ops) */
  int child_frame;            /* Enter: frame it enters */
  int feed;                   /* feed index for a feed node, else -1 */
  const dfx_kernel_def *kernel;
  void *kstate;               /* kernel init state (owned by the session) */
  int n_edges;                /* data edges first, then control edges */
  dfx_pedge *edges;
  int n_fetch_slots;          /* fetches served by this node: (slot, fetch index) */
  int *fetch_slots;
} dfx_pnode;

typedef struct dfx_pframe {
  const char *name;
  int parent;
  int parallel_iterations;
  int n_enters;               /* Enters of this frame inside the plan */
  int n_local;                /* plan nodes in the frame */
  int total_inputs;           /* size of an iteration's input array */
  int32_t *pending_init;      /* n_local initial pending counts */
} dfx_pframe;

typedef struct dfx_plan {
  char *key;                  /* signature used by the session's cache */
  int n_nodes;
  dfx_pnode *nodes;
  int n_frames;
  dfx_pframe *frames;
  int n_roots;
  int *roots;                 /* nodes with no inputs in the plan (root frame) */
  int n_feeds, n_fetches, n_targets;
  dfx_pfetch *fetches;
  int *targets;               /* plan nodes run for effect */
  /* Running estimate of each node's kernel time in ns (TF's cost model,
   * tf-semantics §3.4): updated with relaxed atomics by every run, read by
   * the dispatcher. The only mutable part of a plan. */
  int64_t *cost_ns;
} dfx_plan;

/* What a node that only moves tensors does: Switch, Merge, LoopCond, Enter,
 * Exit, NextIteration, and kernels flagged FORWARD or STATE_VALUE. Moves its
 * live inputs to out[] and returns true. Returns false, touching nothing, for
 * every other node and for the cases with more to do: a _SwitchN, a Switch
 * predicate that is not a scalar bool, a Merge whose value_index is read, a
 * LoopCond of a cancelled run. The executor (core/sched_step.c) and the
 * propagator's settling (frames/propagate.c) both call it, so they cannot
 * disagree on what these nodes do. */
static inline bool dfx__move_outputs(const dfx_pnode *n, dfx_tensor **in, dfx_tensor **out, bool cancelled) {
  switch (n->ctrl) {
    case DFX_CTRL_SWITCH: {
      const dfx_tensor *pred = in[1];
      if (n->is_switch_n || pred->ndims != 0 || pred->dtype != DFX_BOOL) return false;
      out[*(const uint8_t *)pred->data ? 1 : 0] = in[0];
      in[0] = NULL;
      return true;
    }
    case DFX_CTRL_MERGE: /* the input that fired it */
      if (n->merge_index_used) return false;
      for (int i = 0; i < n->n_in; i++)
        if (in[i]) {
          out[0] = in[i];
          in[i] = NULL;
          break;
        }
      return true;
    case DFX_CTRL_LOOP_COND:
      if (cancelled) return false;
      /* fall through */
    case DFX_CTRL_ENTER:
    case DFX_CTRL_EXIT:
    case DFX_CTRL_NEXT_ITERATION:
      out[0] = in[0];
      in[0] = NULL;
      return true;
    case DFX_CTRL_NONE:
      if (n->kflags & DFX_KERNEL_STATE_VALUE) {
        out[0] = dfx__tensor_ref(n->kstate);
        return true;
      }
      if (!(n->kflags & DFX_KERNEL_FORWARD)) return false;
      for (int i = 0; i < n->n_out && i < n->n_in; i++) {
        out[i] = in[i];
        in[i] = NULL;
      }
      return true;
    default:
      return false;
  }
}

/* A kernel estimated below this runs inline even if not flagged CHEAP: a hop
 * to another worker costs several microseconds (futex wake-up). */
#define DFX_INLINE_COST_NS 20000
/* Start estimate for kernels not flagged CHEAP: expensive until measured. */
#define DFX_INITIAL_COST_NS 100000000

/* Builds the plan for the given ports (borrowed). kstate/kernels are indexed
 * by graph node id and come from the session. Errors name unknown nodes and
 * bad ports. */
dfx_code dfx__plan_build(const dfx_graph *g, const dfx_kernel_def *const *kernels, void *const *kstate,
                         const dfx_port *feeds, int n_feeds, const dfx_port *fetches, int n_fetches,
                         const char *const *targets, int n_targets, dfx_plan **out, dfx_status *st);
void dfx__plan_free(dfx_plan *p);
/* Canonical cache key for a signature; new string or NULL. */
char *dfx__plan_key(const dfx_port *feeds, int n_feeds, const dfx_port *fetches, int n_fetches,
                    const char *const *targets, int n_targets);

#endif
