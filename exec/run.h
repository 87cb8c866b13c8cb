/* run.h - one dfx_session_run call in flight (TF's ExecutorState).
 * Owned by the calling thread's stack frame; workers reach it through pool
 * items. The run ends when `outstanding` (ready + running node instances)
 * drops to zero; after that final decrement no worker touches the run.
 * run.c owns its lifecycle, process.c the loop that runs node instances,
 * pool.c the worker threads. */
#ifndef DFX_RUN_H
#define DFX_RUN_H

#include <semaphore.h>
#include <stdint.h>
#include <uv.h>

#include "frame.h"
#include "parallel.h"
#include "plan.h"
#include "status.h"
#include "step.h"

typedef struct dfx_pool dfx_pool;
/* A node instance whose asynchronous kernel has not finished (process.c). */
typedef struct dfx_async_inst dfx_async_inst;

/* What execute returns for an instance whose kernel completes later. */
#define DFX__PENDING ((dfx_code)1)

typedef struct dfx_run {
  dfx_step step;                   /* kernels' view: resources, cancel flag */
  dfx_prop prop;                   /* frames and iterations */
  const dfx_plan *plan;
  dfx_pool *pool;                  /* NULL: everything runs on the caller */
  dfx_tensor *const *feed_vals;    /* borrowed, in plan feed order */
  dfx_tensor **fetch_vals;         /* new references, in plan fetch order */
  int *fetch_dead;                 /* per fetch: Switch plan id + 1 that killed it, -1 dead without one */
  int64_t outstanding;             /* atomic */
  int done;                        /* set under the pool mutex (or by the caller alone) */
  sem_t *waiter;                   /* the caller's semaphore while it sleeps (pool mutex) */
  uv_mutex_t err_mu;               /* guards err, fetch_vals and fetch_dead */
  dfx_status err;                  /* first error of the run */
  const dfx_run_options *ro;
  uint64_t t0_ns, deadline_ns;     /* uv_hrtime at start; 0: no deadline */
  struct dfx_run *next_active;     /* session's list of runs in progress */
  /* Asynchronous kernels (DFX_KERNEL_ASYNC, a _Recv): when the plan has
   * any, finished instances queue in the inbox and the run's caller thread
   * resumes them (dfx__run_resume); it sleeps on inbox_sem meanwhile, and
   * is the pool's waiter for the run's end too. No worker ever waits for a
   * value. */
  bool async;
  uv_mutex_t inbox_mu;             /* guards inbox */
  sem_t inbox_sem;
  dfx_async_inst *inbox;           /* LIFO of finished instances */
} dfx_run;

/* ---- run.c ---- */
/* Sets up a run of `plan` (borrowed, like feed_vals and ro, for the run's
 * life) in r, which the caller zeroed. DFX_ENOMEM / DFX_EINTERNAL with a
 * message; on failure nothing needs freeing. */
dfx_code dfx__run_init(dfx_run *r, const dfx_plan *plan, dfx_pool *pool, dfx_tensor *const *feed_vals,
                       const dfx_run_options *ro, dfx_status *st);
/* Starts the roots and returns when the run is over (the caller's thread
 * works meanwhile). */
void dfx__run_start(dfx_run *r);
/* Hands the fetched tensors to the caller (fetch_vals[i] new) or reports
 * why the run failed: its first error, a dead fetch, or the stuck report. */
dfx_code dfx__run_collect(dfx_run *r, dfx_tensor **fetch_vals, dfx_status *st);
/* Frees what dfx__run_init set up. */
void dfx__run_destroy(dfx_run *r);
/* Records the first error and cancels the run. */
void dfx__run_fail(dfx_run *r, dfx_code code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* ---- process.c ---- */
/* Runs first[0..n-1] (n >= 1, each already counted in `outstanding`) and
 * everything they make ready inline on this thread. Taking the inline roots
 * together matters: with all of them queued here, a node that may block (a
 * queue dequeue) goes to the pool instead of waiting here in front of a
 * root that would unblock it. */
void dfx__run_process(dfx_run *r, const dfx_tagged *first, int n, int worker);
/* Resumes a finished asynchronous instance (its kernel's outputs, deadness
 * or error) and runs what it makes ready on this thread, as
 * dfx__run_process does. Frees inst. */
void dfx__run_resume(dfx_run *r, dfx_async_inst *inst);
/* Resumes every instance in the inbox, oldest first. */
void dfx__run_drain_inbox(dfx_run *r);
/* "(root)" for the root frame, else the frame's name: for messages. */
const char *dfx__run_frame_label(const dfx_frame *f);

/* ---- pool.c ---- */
dfx_code dfx__pool_new(int n_workers, dfx_pool **out);
void dfx__pool_free(dfx_pool *p);
/* Queues a node instance for any worker; DFX_ENOMEM if the queue can't grow.
 * wake false: leave sleeping threads asleep (the poster nudges later). */
dfx_code dfx__pool_post(dfx_pool *p, dfx_run *r, dfx_tagged t, bool wake);
/* Wakes sleeping threads while queued work is waiting (cheap when there is
 * none: two relaxed loads). */
void dfx__pool_nudge(dfx_pool *p);
/* The calling thread helps with queued work until r is done (or its
 * deadline passes, which fails the run and keeps waiting for the drain). */
void dfx__pool_help(dfx_pool *p, dfx_run *r);
/* Kernels' handle on the pool's idle threads (core/parallel.h), or NULL
 * when p is NULL or intra-op parallelism is off (DFX_INTRA_OP=0). */
const dfx_parallel *dfx__pool_parallel(dfx_pool *p);
/* Marks r done and wakes its caller. */
void dfx__pool_finish(dfx_pool *p, dfx_run *r);
/* Returns once no dfx__pool_finish is running: a caller that saw its run's
 * `done` flag without the pool lock calls this before freeing the run. */
void dfx__pool_quiesce(dfx_pool *p);

#endif
