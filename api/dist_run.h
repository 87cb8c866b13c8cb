/* dist_run.h - partitioned runs (dist_run.c): a run signature prepared as
 * one session per task, and running one task's part or all of them. */
#ifndef DFX_DIST_RUN_H
#define DFX_DIST_RUN_H

#include "dfexec.h"
#include "graph.h"
#include "session.h"

typedef struct dfx_dist_options {
  int n_tasks;
  unsigned random_seed;   /* != 0: random placement (tests) */
  int n_threads;          /* per task session (0: number of cores) */
  int inline_only;
  int only_task;          /* >= 0: build only this task's session (one process per task) */
} dfx_dist_options;

typedef struct dfx_dist_prepared {
  int n_tasks;
  dfx_graph *pruned;       /* the signature's graph, placed by task[] */
  int *task;
  dfx_graph **parts;       /* per task */
  dfx_session **sess;      /* per task (NULL for tasks this process does not run) */
  int *task_of_fetch;      /* per fetch: the task that holds it */
} dfx_dist_prepared;

/* Prunes, places and partitions g for one signature and makes the task
 * sessions. Errors (placement, unknown ports) come before anything runs. */
dfx_code dfx__dist_prepare_run(const dfx_graph *g, const dfx_dist_options *o, const dfx_port *feeds, int n_feeds,
                               const dfx_port *fetches, int n_fetches, const char *const *targets, int n_targets,
                               dfx_dist_prepared **out, dfx_status *st);
void dfx__dist_prepared_free(dfx_dist_prepared *p);
/* Runs task k's part of one step: its feeds (those whose node it holds),
 * its fetches (stored at their index in fetch_vals; others untouched),
 * targets and every _Send. */
dfx_code dfx__dist_run_task(dfx_dist_prepared *p, int k, const dfx_run_options *ro, const dfx_step_link *link,
                            const dfx_port *feeds, dfx_tensor *const *feed_vals, int n_feeds, const dfx_port *fetches,
                            dfx_tensor **fetch_vals, int n_fetches, const char *const *targets, int n_targets,
                            dfx_status *st);
/* One step with every task a thread of this process and the local
 * rendezvous: same contract as dfx_session_run. An error names the task
 * that failed first. */
dfx_code dfx__dist_run_local(const dfx_graph *g, const dfx_dist_options *o, const dfx_run_options *ro,
                             const dfx_port *feeds, dfx_tensor *const *feed_vals, int n_feeds, const dfx_port *fetches,
                             dfx_tensor **fetch_vals, int n_fetches, const char *const *targets, int n_targets,
                             dfx_status *st);

#ifdef DFX_HAVE_MPI
#include "dist_mpi.h"
/* One step as this process's rank of an MPI world (dist_run_mpi.c):
 * collective, every rank calls it with the same arguments and step id.
 * Rank 0 receives every fetch; the others none. All ranks return the same
 * code; rank 0's status has the message (naming the rank that failed). */
dfx_code dfx__dist_run_mpi(dfx_mpi *m, const dfx_graph *g, const dfx_dist_options *o, const dfx_run_options *ro,
                           int64_t step, const dfx_port *feeds, dfx_tensor *const *feed_vals, int n_feeds,
                           const dfx_port *fetches, dfx_tensor **fetch_vals, int n_fetches, const char *const *targets,
                           int n_targets, dfx_status *st);
#endif

#endif
