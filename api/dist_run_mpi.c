/* dist_run_mpi.c - one step of a partitioned run with one process per
 * task (mpiexec -n N: rank K runs task K, dist/mpi_rdv.c carries the
 * tensors). Every rank prepares the same partitions (the ranks checked at
 * start-up that they hold the same graph), runs its own, and reports to
 * rank 0: its status, and the fetches its task holds. Rank 0 returns the
 * fetches in order, or the error of the rank that failed first (naming the
 * rank); every rank returns the same code. */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <uv.h>

#include "alloc.h"
#include "dist.h"
#include "dist_mpi.h"
#include "dist_run.h"

typedef struct waiter {
  uv_mutex_t mu;
  uv_cond_t cv;
  int done;
  dfx_code code;
  dfx_tensor *value;
  bool dead;
  char msg[DFX_STATUS_MSG_MAX];
} waiter;

static void wake(void *ud, dfx_code code, const char *msg, dfx_tensor *value, bool is_dead) {
  waiter *w = ud;
  uv_mutex_lock(&w->mu);
  w->code = code;
  w->value = value;
  w->dead = is_dead;
  snprintf(w->msg, sizeof w->msg, "%s", msg);
  w->done = 1;
  uv_cond_signal(&w->cv);
  uv_mutex_unlock(&w->mu);
}

/* A blocking receive for the caller's thread, with a time limit (a rank
 * that died must not hang rank 0). On timeout the step is aborted, which
 * completes the receive. */
static dfx_code recv_wait(dfx_rendezvous *r, int64_t step, int src, const char *key, double timeout_sec,
                          dfx_tensor **out, dfx_status *st) {
  waiter w = {0};
  uv_mutex_init(&w.mu);
  uv_cond_init(&w.cv);
  r->vt->recv(r, step, src, key, wake, &w);
  uint64_t deadline = uv_hrtime() + (uint64_t)(timeout_sec * 1e9);
  uv_mutex_lock(&w.mu);
  while (!w.done) {
    uint64_t now = uv_hrtime();
    if (now >= deadline) {
      uv_mutex_unlock(&w.mu);
      char msg[160];
      snprintf(msg, sizeof msg, "rank %d did not report within %.0f s (did it die?)", src, timeout_sec);
      r->vt->abort(r, step, DFX_EDEADLINE, msg);
      uv_mutex_lock(&w.mu);
      continue;
    }
    uint64_t left = deadline - now;
    uv_cond_timedwait(&w.cv, &w.mu, left < 100000000u ? left : 100000000u);
  }
  uv_mutex_unlock(&w.mu);
  uv_cond_destroy(&w.cv);
  uv_mutex_destroy(&w.mu);
  *out = w.value;
  if (w.code != DFX_OK) return dfx__status_set(st, w.code, "%s", w.msg);
  return DFX_OK;
}

static dfx_tensor *status_tensor(dfx_code c, const char *msg) {
  size_t n = strlen(msg);
  int64_t dims[1] = {(int64_t)(4 + n)};
  dfx_code code;
  dfx_tensor *t = dfx__tensor_alloc(DFX_U8, 1, dims, &code);
  if (!t) return NULL;
  int32_t c32 = c;
  memcpy(t->data, &c32, 4);
  memcpy((char *)t->data + 4, msg, n);
  return t;
}

dfx_code dfx__dist_run_mpi(dfx_mpi *m, const dfx_graph *g, const dfx_dist_options *o, const dfx_run_options *ro,
                           int64_t step, const dfx_port *feeds, dfx_tensor *const *feed_vals, int n_feeds,
                           const dfx_port *fetches, dfx_tensor **fetch_vals, int n_fetches, const char *const *targets,
                           int n_targets, dfx_status *st) {
  int rank = dfx__mpi_rank(m), size = dfx__mpi_size(m);
  for (int i = 0; i < n_fetches; i++) fetch_vals[i] = NULL;
  dfx_dist_options lo = *o;
  lo.n_tasks = size;
  lo.only_task = rank;
  dfx_dist_prepared *p = NULL;
  dfx_status mine;
  dfx__status_clear(&mine);
  dfx_code rc = dfx__dist_prepare_run(g, &lo, feeds, n_feeds, fetches, n_fetches, targets, n_targets, &p, &mine);
  /* Placement errors are the same on every rank; anything else must not
   * leave the others waiting: agree before anything runs. */
  int all_ok = 0;
  if (dfx__mpi_agree(m, rc == DFX_OK ? 1 : 0, &all_ok, st) != DFX_OK) {
    dfx__dist_prepared_free(p);
    return st->code;
  }
  if (!all_ok) {
    dfx__dist_prepared_free(p);
    if (rc != DFX_OK) return dfx__status_set(st, rc, "%s", mine.msg);
    return dfx__status_set(st, DFX_EINTERNAL, "another rank failed before running");
  }
  dfx_rendezvous *rdv = dfx__mpi_rendezvous(m);
  if (!rdv) {
    dfx__dist_prepared_free(p);
    return dfx__status_set(st, DFX_EINTERNAL, "cannot start the communication thread");
  }
  dfx_step_link link = {rdv, step};
  rc = dfx__dist_run_task(p, rank, ro, &link, feeds, feed_vals, n_feeds, fetches, fetch_vals, n_fetches, targets,
                          n_targets, &mine);
  if (rc != DFX_OK) {
    char msg[DFX_STATUS_MSG_MAX];
    snprintf(msg, sizeof msg, "rank %d: %s", rank, mine.msg);
    rdv->vt->abort(rdv, step, rc, msg);
  }
  /* Reporting: a step id of its own, so the run's abort cannot drop it. */
  int64_t rstep = -step - 1;
  double wait_sec = ro && ro->timeout_sec > 0 ? ro->timeout_sec + 10 : 3600;
  dfx_code final = DFX_OK;
  if (rank != 0) {
    char key[64];
    dfx_status sst;
    for (int i = 0; rc == DFX_OK && i < n_fetches; i++) {
      if (p->task_of_fetch[i] != rank) continue;
      snprintf(key, sizeof key, "__fetch;%d", i);
      rdv->vt->send(rdv, rstep, 0, key, fetch_vals[i], false, &sst);
      dfx_tensor_free(fetch_vals[i]);
      fetch_vals[i] = NULL;
    }
    dfx_tensor *stt = status_tensor(rc, rc == DFX_OK ? "" : mine.msg);
    snprintf(key, sizeof key, "__status;%d", rank);
    if (stt) rdv->vt->send(rdv, rstep, 0, key, stt, false, &sst);
    dfx__tensor_unref(stt);
  } else {
    /* Rank 0: every rank's status, then the fetches of the others. */
    dfx_status first;
    dfx__status_clear(&first);
    if (rc != DFX_OK && rc != DFX_ECANCELED) dfx__status_set(&first, rc, "rank 0: %s", mine.msg);
    dfx_status any = first;
    if (rc == DFX_ECANCELED) dfx__status_set(&any, rc, "rank 0: %s", mine.msg);
    for (int r = 1; r < size; r++) {
      char key[64];
      snprintf(key, sizeof key, "__status;%d", r);
      dfx_tensor *t = NULL;
      dfx_status rs;
      dfx_code c = recv_wait(rdv, rstep, r, key, wait_sec, &t, &rs);
      if (c == DFX_OK && t && t->nbytes >= 4) {
        int32_t c32;
        memcpy(&c32, t->data, 4);
        c = (dfx_code)c32;
        if (c != DFX_OK) dfx__status_set(&rs, c, "rank %d: %.*s", r, (int)(t->nbytes - 4), (const char *)t->data + 4);
      }
      dfx__tensor_unref(t);
      if (c != DFX_OK && c != DFX_ECANCELED && first.code == DFX_OK) first = rs;
      if (c != DFX_OK && any.code == DFX_OK) any = rs;
    }
    if (first.code == DFX_OK) first = any;
    final = first.code;
    for (int i = 0; final == DFX_OK && i < n_fetches; i++) {
      if (p->task_of_fetch[i] == 0) continue;
      char key[64];
      snprintf(key, sizeof key, "__fetch;%d", i);
      dfx_status fs;
      if (recv_wait(rdv, rstep, p->task_of_fetch[i], key, wait_sec, &fetch_vals[i], &fs) != DFX_OK) first = fs;
      final = first.code;
    }
    if (final != DFX_OK) {
      dfx__status_copy(st, &first);
      for (int i = 0; i < n_fetches; i++) {
        dfx_tensor_free(fetch_vals[i]);
        fetch_vals[i] = NULL;
      }
    }
  }
  dfx__mpi_stop(m); /* flushes what is queued; collectives follow */
  dfx__mpi_end_step(m, step);
  dfx__mpi_end_step(m, rstep);
  /* Every rank leaves with rank 0's verdict. */
  int agreed = 0;
  dfx__mpi_agree(m, rank == 0 ? (int)final : INT_MAX, &agreed, NULL);
  if (rank != 0) {
    for (int i = 0; i < n_fetches; i++) {
      dfx_tensor_free(fetch_vals[i]);
      fetch_vals[i] = NULL;
    }
    if (agreed != DFX_OK) dfx__status_set(st, (dfx_code)agreed, "the step failed (rank 0 reports why)");
  }
  dfx__dist_prepared_free(p);
  return (dfx_code)agreed;
}
