/* session.h - the executor's side of dfx_session_new: a session over a
 * given kernel registry. The public call (api/lib.c) passes the
 * library's registry; tests may pass one of their own. */
#ifndef DFX_SESSION_H
#define DFX_SESSION_H

#include "graph.h"
#include "kernel.h"

/* How a session rewrites its graph for one run signature before planning
 * it (the graph-transformation layer above exec/ provides it; api/ hands
 * it over): fn returns a new final graph, a copy of g optimised for those
 * feeds, fetches and targets, keeping their names. */
typedef struct dfx_optimizer {
  dfx_code (*fn)(void *ud, const dfx_graph *g, const dfx_port *feeds, int n_feeds, const dfx_port *fetches,
                 int n_fetches, const char *const *targets, int n_targets, dfx_graph **out, dfx_status *st);
  void *ud;
  void (*free_ud)(void *ud); /* called by dfx_session_free (and on a failed dfx__session_new); may be NULL */
} dfx_optimizer;

/* dfx_session_new with the kernels of `reg` (borrowed, sealed, must outlive
 * the session) and an optimizer (copied, and its ud owned from the call on,
 * even when it fails; NULL or .fn NULL: plans run the graph as it is).
 * Same contract otherwise. */
dfx_code dfx__session_new(const dfx_graph *g, const dfx_registry *reg, const dfx_optimizer *opt,
                          const dfx_session_options *opts, dfx_session **out, dfx_status *st);

/* The session's resource store (core/resmgr.h: variables, tables, queues),
 * borrowed for the session's life: how the checkpoint calls reach the
 * variables every run of the session sees. */
struct dfx_resmgr *dfx__session_store(dfx_session *s);
/* A run that is one task's part of a partitioned step: its _Send and
 * _Recv kernels meet the other tasks' in `rendezvous` (borrowed) under
 * `step_id`, the same on every task of the step and distinct between
 * concurrent steps (unlinked runs get negative ids). */
typedef struct dfx_step_link {
  struct dfx_rendezvous *rendezvous;
  int64_t step_id;
} dfx_step_link;

/* dfx_session_run for one task of a partitioned step (link may be NULL:
 * a plain run). */
dfx_code dfx__session_run_linked(dfx_session *s, const dfx_run_options *ro, const dfx_step_link *link,
                                 const dfx_port *feeds, dfx_tensor *const *feed_vals, int n_feeds,
                                 const dfx_port *fetches, dfx_tensor **fetch_vals, int n_fetches,
                                 const char *const *targets, int n_targets, dfx_status *st);

#endif
