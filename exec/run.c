/* run.c - a run's lifecycle: set up, start the roots, wait for the drain,
 * collect the fetches (or the reason there are none), tear down. The first
 * error wins and cancels the run (tf-semantics §2.9); after it nothing new
 * starts, and the run drains. The per-node loop is in process.c. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "alloc.h"
#include "control.h"
#include "invariant.h"
#include "policy.h"
#include "rendezvous.h"
#include "run.h"

/* ---- errors ---- */

void dfx__run_fail(dfx_run *r, dfx_code code, const char *fmt, ...) {
  uv_mutex_lock(&r->err_mu);
  if (r->err.code == DFX_OK) {
    va_list ap;
    va_start(ap, fmt);
    dfx__status_vset(&r->err, code, fmt, ap);
    va_end(ap);
  }
  uv_mutex_unlock(&r->err_mu);
  dfx__step_cancel(&r->step);
  /* The caller may sleep waiting for receives: wake it to abort them. */
  if (r->async) sem_post(&r->inbox_sem);
}

/* ---- lifecycle ---- */

dfx_code dfx__run_init(dfx_run *r, const dfx_plan *plan, dfx_pool *pool, dfx_tensor *const *feed_vals,
                       const dfx_run_options *ro, dfx_status *st) {
  r->plan = plan;
  r->pool = pool;
  r->feed_vals = feed_vals;
  r->ro = ro;
  r->t0_ns = uv_hrtime();
  if (ro && ro->timeout_sec > 0) r->deadline_ns = r->t0_ns + (uint64_t)(ro->timeout_sec * 1e9);
  if (!(r->fetch_vals = dfx__calloc((size_t)plan->n_fetches + 1, sizeof(dfx_tensor *))) ||
      !(r->fetch_dead = dfx__calloc((size_t)plan->n_fetches + 1, sizeof(int)))) {
    dfx__free(r->fetch_vals);
    return dfx__status_set(st, DFX_ENOMEM, "out of memory");
  }
  dfx_code c = DFX_EINTERNAL;
  if (uv_mutex_init(&r->err_mu)) goto fail_mu;
  if ((c = dfx__step_init(&r->step)) != DFX_OK) goto fail_step;
  r->step.t0_ns = r->t0_ns;
  r->step.deadline_ns = r->deadline_ns;
  for (int i = 0; i < plan->flow.n_nodes && !r->async; i++)
    r->async = plan->nodes[i].kernel && (plan->nodes[i].kernel->flags & DFX_KERNEL_ASYNC);
  if (r->async && (uv_mutex_init(&r->inbox_mu) || sem_init(&r->inbox_sem, 0, 0))) {
    c = DFX_EINTERNAL;
    dfx__step_destroy(&r->step);
    goto fail_step;
  }
  if ((c = dfx__prop_init(&r->prop, &plan->flow)) != DFX_OK) goto fail_prop;
  bool tracing = ro && ro->trace;
  r->prop.max_iterations = ro ? ro->max_iterations : 0;
  r->prop.threaded = pool != NULL;
  r->prop.settle_dead_exits = r->prop.settle_trivial = dfx__policy_settle(tracing);
  r->prop.cancelled = &r->step.cancelled;
  return DFX_OK;
fail_prop:
  if (r->async) {
    uv_mutex_destroy(&r->inbox_mu);
    sem_destroy(&r->inbox_sem);
  }
  dfx__step_destroy(&r->step);
fail_step:
  uv_mutex_destroy(&r->err_mu);
fail_mu:
  dfx__free(r->fetch_vals);
  dfx__free(r->fetch_dead);
  return dfx__status_set(st, c, c == DFX_ENOMEM ? "out of memory starting the run" : "cannot initialise the run");
}

void dfx__run_destroy(dfx_run *r) {
  if (r->async) {
    uv_mutex_destroy(&r->inbox_mu);
    sem_destroy(&r->inbox_sem);
  }
  dfx__prop_destroy(&r->prop);
  dfx__step_destroy(&r->step);
  uv_mutex_destroy(&r->err_mu);
  for (int i = 0; i < r->plan->n_fetches; i++) dfx__tensor_unref(r->fetch_vals[i]);
  dfx__free(r->fetch_vals);
  dfx__free(r->fetch_dead);
}

/* The caller's part in a run with asynchronous kernels: resume finished
 * instances as they arrive, until the run is done. Sleeps on the inbox
 * between them (waking every 100 ms to check the deadline); once the run
 * is cancelled it aborts the step's pending receives, which then finish
 * with that error, so the run drains instead of waiting for values that
 * will never come. */
static void wait_async(dfx_run *r) {
  bool aborted = false;
  for (;;) {
    dfx__run_drain_inbox(r);
    /* This thread takes no pooled work (it stays free for completions), so
     * what its resumed nodes queued must wake a worker now. */
    if (r->pool) dfx__pool_nudge(r->pool);
    if (__atomic_load_n(&r->done, __ATOMIC_ACQUIRE)) {
      /* The worker that set it may still be inside dfx__pool_finish, posting
       * r->inbox_sem (our waiter semaphore): let it leave before r goes. */
      if (r->pool) dfx__pool_quiesce(r->pool);
      break;
    }
    if (dfx__step_is_cancelled(&r->step) && !aborted) {
      aborted = true;
      if (r->step.rendezvous) {
        dfx_status why;
        uv_mutex_lock(&r->err_mu);
        why = r->err;
        uv_mutex_unlock(&r->err_mu);
        if (why.code == DFX_OK) dfx__status_set(&why, DFX_ECANCELED, "the run was cancelled");
        r->step.rendezvous->vt->abort(r->step.rendezvous, r->step.step_id, why.code, why.msg);
      }
      continue;
    }
    uint64_t now = uv_hrtime(), wait_ns = 100000000u;
    if (r->deadline_ns && !aborted) {
      if (now >= r->deadline_ns) {
        dfx__run_fail(r, DFX_EDEADLINE, "run timed out after %.3f s", (double)(now - r->t0_ns) / 1e9);
        continue;
      }
      if (r->deadline_ns - now < wait_ns) wait_ns = r->deadline_ns - now;
    }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += (time_t)(wait_ns / 1000000000u);
    ts.tv_nsec += (long)(wait_ns % 1000000000u);
    if (ts.tv_nsec >= 1000000000L) {
      ts.tv_sec++;
      ts.tv_nsec -= 1000000000L;
    }
    while (sem_timedwait(&r->inbox_sem, &ts) != 0 && errno == EINTR) {
    }
  }
}

void dfx__run_start(dfx_run *r) {
  /* The pool wakes the run's waiter when the run ends: with asynchronous
   * kernels that is the inbox's semaphore, set before anything runs. */
  if (r->async && r->pool) r->waiter = &r->inbox_sem;
  dfx_status st;
  dfx__status_clear(&st);
  dfx_ready ready;
  dfx__ready_init(&ready, &st);
  if (dfx__activate_roots(&r->prop, &ready) != DFX_OK) {
    dfx__run_fail(r, DFX_ENOMEM, "out of memory starting the run");
    dfx__ready_free(&ready);
    return;
  }
  if (ready.n == 0) {
    dfx__ready_free(&ready);
    return;
  }
  /* All roots count as outstanding before any of them runs; expensive ones
   * go to the pool, the rest run here, queued together (dfx__run_process
   * says why not one after another). */
  r->outstanding = ready.n;
  int n_here = 0;
  for (int i = 0; i < ready.n; i++) {
    if (!dfx__policy_runs_inline(r->plan, r->pool != NULL, ready.v[i].node, false) &&
        dfx__pool_post(r->pool, r, ready.v[i], true) == DFX_OK) continue;
    ready.v[n_here++] = ready.v[i];
  }
  if (n_here > 0) dfx__run_process(r, ready.v, n_here, 0);
  dfx__ready_free(&ready);
  if (r->async) wait_async(r);
  else if (r->pool) dfx__pool_help(r->pool, r);
}

/* Builds the report of nodes waiting for inputs that never came. */
static void stuck_report(dfx_run *r, dfx_status *st) {
  const dfx_plan *p = r->plan;
  const dfx_flow *fl = &p->flow;
  dfx__status_set(st, DFX_ESTUCK, "the run cannot make progress: no node is running or ready, but");
  int missing = 0;
  for (int i = 0; i < p->n_fetches; i++)
    if (!r->fetch_vals[i] && !r->fetch_dead[i]) {
      dfx__status_append(st, "%s fetch '%s:%d'", missing ? "," : "", fl->nodes[p->fetches[i].node].name,
                         p->fetches[i].slot);
      missing++;
    }
  dfx__status_append(st, " %s never produced. Waiting nodes:", missing == 1 ? "was" : "were");
  int shown = 0;
  uv_mutex_lock(&r->prop.mu);
  for (dfx_frame *f = r->prop.live; f && shown < 8; f = f->live_next) {
    const dfx_fframe *pf = &fl->frames[f->sframe];
    for (int k = 0; k <= f->max_parallel && shown < 8; k++) {
      dfx_iter *it = f->ring[k];
      if (!it) continue;
      for (int i = 0; i < fl->n_nodes && shown < 8; i++) {
        const dfx_fnode *n = &fl->nodes[i];
        if (n->frame != f->sframe) continue;
        int32_t pend = it->pending[n->local], init = pf->pending_init[n->local];
        if (!dfx__partly_activated(pend, init, it->dead[n->local])) continue;
        int expected = dfx__ctrl_expected(n);
        dfx__status_append(st, " node '%s' (%s) in frame '%s', iteration %lld waits for %d of its %d input%s;",
                           n->name, n->op, dfx__run_frame_label(f), (long long)it->iter_num,
                           dfx__ctrl_waiting(n->ctrl, pend), expected, expected == 1 ? "" : "s");
        shown++;
      }
    }
  }
  for (int i = 0; i < r->prop.n_stuck && shown < 8; i++, shown++) {
    const dfx_fnode *n = &fl->nodes[r->prop.stuck[i].node];
    dfx__status_append(st, " node '%s' (%s) in frame '%s', iteration %lld was still waiting for inputs when its "
                       "iteration ended;", n->name, n->op, r->prop.stuck[i].frame, (long long)r->prop.stuck[i].iter);
  }
  uv_mutex_unlock(&r->prop.mu);
  if (!shown) dfx__status_append(st, " (none found)");
}

dfx_code dfx__run_collect(dfx_run *r, dfx_tensor **fetch_vals, dfx_status *st) {
  const dfx_plan *p = r->plan;
  if (r->err.code != DFX_OK) return dfx__status_copy(st, &r->err);
  for (int i = 0; i < p->n_fetches; i++) {
    if (r->fetch_vals[i]) continue;
    const dfx_fnode *n = &p->flow.nodes[p->fetches[i].node];
    int dead = r->fetch_dead[i];
    if (!dead && n->dead_slot >= 0) dead = r->prop.settled_dead[n->dead_slot]; /* settled in place */
    if (dead > 0)
      return dfx__status_set(st, DFX_EINVAL,
                             "fetch '%s:%d' is dead (Retval does not have value): it lies on the untaken branch of "
                             "Switch '%s'",
                             n->name, p->fetches[i].slot, p->flow.nodes[dead - 1].name);
    if (dead < 0)
      return dfx__status_set(st, DFX_EINVAL, "fetch '%s:%d' is dead (Retval does not have value)", n->name,
                             p->fetches[i].slot);
    stuck_report(r, st);
    return DFX_ESTUCK;
  }
  for (int i = 0; i < p->n_fetches; i++) {
    fetch_vals[i] = r->fetch_vals[i];
    r->fetch_vals[i] = NULL;
  }
  return DFX_OK;
}
