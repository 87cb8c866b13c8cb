/* dist_run.c - partitioned runs: one run signature is pruned, placed and
 * partitioned (dist/), each task's partition gets a session, and the tasks
 * run one step together, meeting in a rendezvous. In-process (every task a
 * thread of this process, the local rendezvous) or one task per process
 * (the caller's transport, e.g. MPI: dist_mpi.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "alloc.h"
#include "dist.h"
#include "dist_run.h"
#include "session.h"

static bool is_in(const dfx_graph *g, const char *name) { return dfx__graph_find(g, name, (size_t)-1) >= 0; }

void dfx__dist_prepared_free(dfx_dist_prepared *p) {
  if (!p) return;
  for (int k = 0; k < p->n_tasks; k++) {
    dfx_session_free(p->sess ? p->sess[k] : NULL);
    dfx_graph_free(p->parts ? p->parts[k] : NULL);
  }
  dfx__free(p->sess);
  dfx__free(p->parts);
  dfx__free(p->task_of_fetch);
  dfx__free(p->task);
  dfx_graph_free(p->pruned);
  dfx__free(p);
}

dfx_code dfx__dist_prepare_run(const dfx_graph *g, const dfx_dist_options *o, const dfx_port *feeds, int n_feeds,
                               const dfx_port *fetches, int n_fetches, const char *const *targets, int n_targets,
                               dfx_dist_prepared **out, dfx_status *st) {
  *out = NULL;
  int T = o->n_tasks;
  if (T < 1) return dfx__status_set(st, DFX_EINVAL, "partitioned run: the number of tasks must be >= 1, got %d", T);
  dfx_dist_prepared *p = dfx__calloc(1, sizeof *p);
  if (!p) return dfx__status_set(st, DFX_ENOMEM, "out of memory");
  p->n_tasks = T;
  dfx_code rc = dfx__dist_prepare(g, feeds, n_feeds, fetches, n_fetches, targets, n_targets, &p->pruned, st);
  if (rc != DFX_OK) goto fail;
  p->parts = dfx__calloc((size_t)T, sizeof *p->parts);
  p->sess = dfx__calloc((size_t)T, sizeof *p->sess);
  p->task = dfx__calloc((size_t)p->pruned->n_nodes + 1, sizeof *p->task);
  p->task_of_fetch = dfx__calloc((size_t)n_fetches + 1, sizeof *p->task_of_fetch);
  if (!p->parts || !p->sess || !p->task || !p->task_of_fetch) {
    rc = dfx__status_set(st, DFX_ENOMEM, "out of memory");
    goto fail;
  }
  if ((rc = dfx__dist_place(p->pruned, T, o->random_seed, p->task, st)) != DFX_OK) goto fail;
  if ((rc = dfx__dist_partition(p->pruned, p->task, T, 1, p->parts, st)) != DFX_OK) goto fail;
  for (int i = 0; i < n_fetches; i++) {
    p->task_of_fetch[i] = -1;
    for (int k = 0; k < T && p->task_of_fetch[i] < 0; k++)
      if (is_in(p->parts[k], fetches[i].node)) p->task_of_fetch[i] = k;
  }
  /* The partitions are already pruned and must keep their transfer nodes
   * and control loops exactly: no further optimisation. */
  dfx_session_options so = {.n_threads = o->n_threads, .inline_only = o->inline_only, .optimize = "none"};
  for (int k = 0; k < T; k++) {
    if (o->only_task >= 0 && k != o->only_task) continue;
    if ((rc = dfx_session_new(p->parts[k], &so, &p->sess[k], st)) != DFX_OK) goto fail;
  }
  *out = p;
  return DFX_OK;
fail:
  dfx__dist_prepared_free(p);
  return rc;
}

dfx_code dfx__dist_run_task(dfx_dist_prepared *p, int k, const dfx_run_options *ro, const dfx_step_link *link,
                            const dfx_port *feeds, dfx_tensor *const *feed_vals, int n_feeds, const dfx_port *fetches,
                            dfx_tensor **fetch_vals, int n_fetches, const char *const *targets, int n_targets,
                            dfx_status *st) {
  const dfx_graph *pg = p->parts[k];
  int cap = n_feeds + n_fetches + n_targets + pg->n_nodes + 1;
  dfx_port *f_ports = dfx__calloc((size_t)cap, sizeof *f_ports), *x_ports = dfx__calloc((size_t)cap, sizeof *x_ports);
  dfx_tensor **f_vals = dfx__calloc((size_t)cap, sizeof *f_vals), **x_vals = dfx__calloc((size_t)cap, sizeof *x_vals);
  const char **t_names = dfx__calloc((size_t)cap, sizeof *t_names);
  int *x_idx = dfx__calloc((size_t)cap, sizeof *x_idx);
  dfx_code rc = DFX_OK;
  if (!f_ports || !x_ports || !f_vals || !x_vals || !t_names || !x_idx) {
    rc = dfx__status_set(st, DFX_ENOMEM, "out of memory");
    goto done;
  }
  int nf = 0, nx = 0, nt = 0;
  for (int i = 0; i < n_feeds; i++)
    if (is_in(pg, feeds[i].node)) {
      f_ports[nf] = feeds[i];
      f_vals[nf++] = feed_vals[i];
    }
  for (int i = 0; i < n_fetches; i++)
    if (p->task_of_fetch[i] == k) {
      x_ports[nx] = fetches[i];
      x_idx[nx++] = i;
    }
  for (int i = 0; i < n_targets; i++)
    if (is_in(pg, targets[i])) t_names[nt++] = targets[i];
  /* Every _Send runs: another task waits for it. */
  for (int i = 0; i < pg->n_nodes; i++)
    if (strcmp(pg->nodes[i].op, "_Send") == 0) t_names[nt++] = pg->nodes[i].name;
  if (nx + nt == 0) goto done; /* nothing of this signature lives here */
  rc = dfx__session_run_linked(p->sess[k], ro, link, f_ports, f_vals, nf, x_ports, x_vals, nx, t_names, nt, st);
  if (rc == DFX_OK)
    for (int j = 0; j < nx; j++) fetch_vals[x_idx[j]] = x_vals[j];
done:
  dfx__free(f_ports);
  dfx__free(x_ports);
  dfx__free(f_vals);
  dfx__free(x_vals);
  dfx__free(t_names);
  dfx__free(x_idx);
  return rc;
}

/* ---- every task in this process ---- */

typedef struct task_job {
  dfx_dist_prepared *p;
  int k;
  const dfx_run_options *ro;
  dfx_step_link link;
  const dfx_port *feeds, *fetches;
  dfx_tensor *const *feed_vals;
  dfx_tensor **fetch_vals;
  int n_feeds, n_fetches, n_targets;
  const char *const *targets;
  dfx_status st;
  dfx_code rc;
} task_job;

static void run_job(void *arg) {
  task_job *j = arg;
  dfx__status_clear(&j->st);
  j->rc = dfx__dist_run_task(j->p, j->k, j->ro, &j->link, j->feeds, j->feed_vals, j->n_feeds, j->fetches, j->fetch_vals,
                             j->n_fetches, j->targets, j->n_targets, &j->st);
  /* A task that failed stops the others: their receives would wait for
   * values this task will never send. */
  if (j->rc != DFX_OK) {
    char msg[DFX_STATUS_MSG_MAX];
    snprintf(msg, sizeof msg, "task %d: %s", j->k, j->st.msg);
    j->link.rendezvous->vt->abort(j->link.rendezvous, j->link.step_id, j->rc, msg);
  }
  dfx__tensor_cache_flush();
}

static int64_t local_step = 1;

dfx_code dfx__dist_run_local(const dfx_graph *g, const dfx_dist_options *o, const dfx_run_options *ro,
                             const dfx_port *feeds, dfx_tensor *const *feed_vals, int n_feeds, const dfx_port *fetches,
                             dfx_tensor **fetch_vals, int n_fetches, const char *const *targets, int n_targets,
                             dfx_status *st) {
  for (int i = 0; i < n_fetches; i++) fetch_vals[i] = NULL;
  dfx_dist_options lo = *o;
  lo.only_task = -1;
  dfx_dist_prepared *p = NULL;
  dfx_code rc = dfx__dist_prepare_run(g, &lo, feeds, n_feeds, fetches, n_fetches, targets, n_targets, &p, st);
  if (rc != DFX_OK) return rc;
  int T = p->n_tasks;
  dfx_rendezvous *rdv = dfx__local_rdv_new();
  task_job *jobs = dfx__calloc((size_t)T, sizeof *jobs);
  uv_thread_t *th = dfx__calloc((size_t)T, sizeof *th);
  if (!rdv || !jobs || !th) {
    rc = dfx__status_set(st, DFX_ENOMEM, "out of memory");
    goto done;
  }
  int64_t step = __atomic_fetch_add(&local_step, 1, __ATOMIC_RELAXED);
  for (int k = 0; k < T; k++)
    jobs[k] = (task_job){.p = p, .k = k, .ro = ro, .link = {rdv, step}, .feeds = feeds, .fetches = fetches,
                         .feed_vals = feed_vals, .fetch_vals = fetch_vals, .n_feeds = n_feeds, .n_fetches = n_fetches,
                         .n_targets = n_targets, .targets = targets};
  int started = 0;
  for (int k = 1; k < T; k++, started++)
    if (uv_thread_create(&th[k], run_job, &jobs[k])) {
      rdv->vt->abort(rdv, step, DFX_EINTERNAL, "cannot start a task thread");
      break;
    }
  run_job(&jobs[0]);
  for (int k = 1; k <= started; k++) uv_thread_join(&th[k]);
  dfx__local_rdv_end_step(rdv, step);
  rc = DFX_OK;
  for (int k = 0; k < T && rc == DFX_OK; k++)
    if (jobs[k].rc != DFX_OK) rc = jobs[k].rc;
  if (rc != DFX_OK) {
    /* The tasks whose receives were aborted fail as cancelled; the task
     * that failed first has the real error. */
    dfx_status first;
    dfx__status_clear(&first);
    for (int k = 0; k < T; k++)
      if (jobs[k].rc != DFX_OK && jobs[k].rc != DFX_ECANCELED) {
        dfx__status_set(&first, jobs[k].rc, "task %d: %s", k, jobs[k].st.msg);
        break;
      }
    if (first.code == DFX_OK)
      for (int k = 0; k < T; k++)
        if (jobs[k].rc != DFX_OK) {
          first = jobs[k].st;
          break;
        }
    rc = dfx__status_copy(st, &first);
    for (int i = 0; i < n_fetches; i++) {
      dfx_tensor_free(fetch_vals[i]);
      fetch_vals[i] = NULL;
    }
  }
done:
  dfx__free(jobs);
  dfx__free(th);
  dfx__local_rdv_free(rdv);
  dfx__dist_prepared_free(p);
  return rc;
}
