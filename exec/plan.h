/* plan.h - the execution plan for one (feeds, fetches, targets) signature.
 * A plan is the pruned graph as a flow graph (frames/flow.h: what
 * propagation walks) plus what the executor needs per node: its kernel, the
 * feed it stands for, the fetches it serves, and the running cost estimate
 * the dispatch policy reads (policy.h). Sessions cache plans; any number of
 * runs share one. */
#ifndef DFX_PLAN_H
#define DFX_PLAN_H

#include <stdbool.h>
#include <stdint.h>

#include "flow.h"
#include "graph.h"
#include "kernel.h"

/* Where a fetched tensor comes from. */
typedef struct dfx_pfetch {
  int node;                     /* plan node */
  int slot;
} dfx_pfetch;

/* The executor's side of a plan node; plan->nodes[i] goes with
 * plan->flow.nodes[i]. */
typedef struct dfx_pnode {
  const dfx_node *g;            /* graph node; NULL for a feed node */
  const dfx_kernel_def *kernel; /* NULL for control ops and feed nodes */
  void *kstate;                 /* kernel init state (owned by the session) */
  int feed;                     /* feed index for a feed node, else -1 */
  bool inline_ok;               /* dispatch policy: always run where it became ready */
  int n_fetch_slots;            /* fetches served by this node: (slot, fetch index) pairs */
  int *fetch_slots;
} dfx_pnode;

typedef struct dfx_plan {
  char *key;                    /* signature used by the session's cache */
  const dfx_graph *graph;       /* the graph the plan runs: the session's, or its own optimised copy */
  dfx_graph *owned_graph;       /* that copy when the plan owns it, else NULL */
  const dfx_kernel_def **kernels; /* per node of `graph`: the kernel rows it runs (NULL: none needed) */
  void **kstate;                /* their init states, owned by the plan */
  dfx_flow flow;
  dfx_pnode *nodes;             /* flow.n_nodes */
  int n_feeds, n_fetches, n_targets;
  dfx_pfetch *fetches;
  int *targets;                 /* plan nodes run for effect */
  /* Running estimate of each node's kernel time in ns (TF's cost model,
   * tf-semantics §3.4; policy.h): updated with relaxed atomics by every run,
   * read by the dispatcher. The only mutable part of a plan. */
  int64_t *cost_ns;
} dfx_plan;

/* A signature's ports resolved in the graph, and the nodes a run of it
 * needs (the first half of building a plan: the session resolves kernels
 * for the needed nodes only, as TensorFlow does after pruning). */
typedef struct dfx_plan_sel {
  int n_feeds, n_fetches, n_targets;
  dfx_graph_port *feeds, *fetches;
  int *targets;
  char *needed;                 /* per graph node */
  int *via;                     /* per needed node: its first consumer on the way from a fetch (-1: none) */
} dfx_plan_sel;

/* Resolves the ports (borrowed) and prunes. Errors name unknown nodes and
 * bad ports, with the closest node name as a hint. On failure *sel holds
 * nothing to free. */
dfx_code dfx__plan_select(const dfx_graph *g, const dfx_port *feeds, int n_feeds, const dfx_port *fetches,
                          int n_fetches, const char *const *targets, int n_targets, dfx_plan_sel *sel,
                          dfx_status *st);
void dfx__plan_select_free(dfx_plan_sel *sel);
/* Appends to st why node `id` is needed: " (needed for fetch 'y:0' through
 * 'a' <- 'b')", and for a data-input op (an iterator, a queue) the tensor
 * whose feeding would leave it out. For error messages. */
void dfx__plan_explain(const dfx_graph *g, const dfx_plan_sel *sel, int id, dfx_status *st);
/* Builds the plan of a selection over g (borrowed; it must outlive the
 * plan unless `owned` is g, which the plan then takes): looks kernels up in
 * `reg` for the needed compute nodes, as TensorFlow does after pruning, and
 * initialises them; a missing one fails with DFX_EUNIMPL naming the node,
 * the dtypes that have a kernel and the path from the fetch. `key`
 * (borrowed) is the signature's cache key (dfx__plan_key). On failure an
 * owned graph is freed too. */
dfx_code dfx__plan_build(const dfx_graph *g, dfx_graph *owned, const dfx_plan_sel *sel, const dfx_registry *reg,
                         const char *key, dfx_plan **out, dfx_status *st);
void dfx__plan_free(dfx_plan *p);
/* Canonical cache key for a signature; new string or NULL. */
char *dfx__plan_key(const dfx_port *feeds, int n_feeds, const dfx_port *fetches, int n_fetches,
                    const char *const *targets, int n_targets);

#endif
