/* session.c - dfx_session: one plan per run signature (optimised by the
 * session's optimizer, when it has one), the plan cache, and
 * dfx_session_run.
 *
 * Threads and OpenBLAS: the scheduler owns the cores. A session runs ops
 * concurrently on its own workers, so OpenBLAS is set to one thread for the
 * whole process (the first session does it); a single large matmul therefore
 * uses one core, and parallelism comes from independent ops and iterations.
 *
 * s->mu guards the plan cache and the list of active runs. Plans (with
 * their kernel states and graphs) are immutable once published, so runs
 * read them without a lock. */
#include <stdio.h>
#include <string.h>
#include <uv.h>

#include "alloc.h"
#include "kernel.h"
#include "plan.h"
#include "resmgr.h"
#include "run.h"
#include "session.h"

void openblas_set_num_threads(int num_threads);

struct dfx_session {
  const dfx_graph *g;
  const dfx_registry *reg;              /* kernels (borrowed: process lifetime) */
  int n_threads;
  dfx_pool *pool;                       /* NULL when everything runs on the caller */
  dfx_optimizer opt;                    /* .fn NULL: plans run the graph as it is */
  uv_mutex_t mu;
  dfx_plan **plans;
  int n_plans, cap_plans;
  dfx_run *active;
  dfx_resmgr *res;                      /* resources shared by all runs (tables, queues), freed last */
  bool counted;                         /* holds one of g->n_sessions */
};

static uv_once_t blas_once = UV_ONCE_INIT;
static void blas_single_thread(void) { openblas_set_num_threads(1); }

static int default_threads(void) {
  unsigned n = uv_available_parallelism();
  return n > 0 ? (int)(n > 256 ? 256 : n) : 1;
}

/* The graph counts its sessions so that editing it while one plans from it
 * is caught (graph.h); the count is the only thing a session writes there. */
static void graph_users(const dfx_graph *g, int delta) {
  __atomic_add_fetch(&((dfx_graph *)g)->n_sessions, delta, __ATOMIC_RELAXED);
}

void dfx_session_free(dfx_session *s) {
  if (!s) return;
  if (s->counted) graph_users(s->g, -1);
  dfx__pool_free(s->pool);
  for (int i = 0; i < s->n_plans; i++) dfx__plan_free(s->plans[i]);
  if (s->opt.free_ud) s->opt.free_ud(s->opt.ud);
  dfx__free(s->plans);
  dfx__resmgr_free(s->res);
  uv_mutex_destroy(&s->mu);
  dfx__free(s);
}

dfx_code dfx__session_new(const dfx_graph *g, const dfx_registry *reg, const dfx_optimizer *opt,
                          const dfx_session_options *opts, dfx_session **out, dfx_status *st) {
  if (out) *out = NULL;
  dfx_optimizer o = opt ? *opt : (dfx_optimizer){0};
  dfx_code c = DFX_OK;
  if (!g || !out) c = dfx__status_set(st, DFX_EINVAL, "dfx_session_new: NULL argument");
  else if (!g->final) c = dfx__status_set(st, DFX_EPRECOND, "dfx_session_new: the graph is being edited (not finalised)");
  else if (opts && opts->n_threads < 0)
    c = dfx__status_set(st, DFX_EINVAL, "n_threads must be >= 0, got %d", opts->n_threads);
  dfx_session *s = c == DFX_OK ? dfx__calloc(1, sizeof *s) : NULL;
  if (c == DFX_OK && !s) c = dfx__status_set(st, DFX_ENOMEM, "out of memory");
  if (c == DFX_OK && uv_mutex_init(&s->mu)) {
    dfx__free(s);
    c = dfx__status_set(st, DFX_EINTERNAL, "cannot create a mutex");
  }
  if (c != DFX_OK) {
    if (o.free_ud) o.free_ud(o.ud);
    return c;
  }
  uv_once(&blas_once, blas_single_thread);
  s->g = g;
  s->reg = reg;
  s->opt = o;
  graph_users(g, 1);
  s->counted = true;
  s->n_threads = opts && opts->n_threads > 0 ? opts->n_threads : default_threads();
  if (opts && opts->inline_only) s->n_threads = 1;
  if (!(s->res = dfx__resmgr_new())) {
    c = dfx__status_set(st, DFX_ENOMEM, "out of memory");
    goto fail;
  }
  if (s->n_threads > 1 && (c = dfx__pool_new(s->n_threads - 1, &s->pool)) != DFX_OK) {
    dfx__status_set(st, c, "cannot start %d worker threads", s->n_threads - 1);
    goto fail;
  }
  *out = s;
  return DFX_OK;
fail:
  dfx_session_free(s);
  return c;
}

void dfx_session_cancel(dfx_session *s) {
  if (!s) return;
  uv_mutex_lock(&s->mu);
  for (dfx_run *r = s->active; r; r = r->next_active) dfx__run_fail(r, DFX_ECANCELED, "run cancelled by dfx_session_cancel");
  uv_mutex_unlock(&s->mu);
}

/* ---- plans ---- */

static const dfx_plan *cached_plan(dfx_session *s, const char *key) {
  for (int i = 0; i < s->n_plans; i++)
    if (strcmp(s->plans[i]->key, key) == 0) return s->plans[i];
  return NULL;
}

/* A new plan for one signature: over an optimised copy of the graph when
 * the session has an optimizer (the copy is the plan's), else over the
 * session's graph. The ports are checked against the session's graph first,
 * so their errors name it, not a copy. */
static dfx_code build_plan(dfx_session *s, const dfx_port *feeds, int n_feeds, const dfx_port *fetches, int n_fetches,
                           const char *const *targets, int n_targets, const char *key, dfx_plan **out,
                           dfx_status *st) {
  dfx_plan_sel sel;
  dfx_code c = dfx__plan_select(s->g, feeds, n_feeds, fetches, n_fetches, targets, n_targets, &sel, st);
  if (c != DFX_OK) return c;
  const dfx_graph *g = s->g;
  dfx_graph *copy = NULL;
  if (s->opt.fn) {
    dfx__plan_select_free(&sel);
    if ((c = s->opt.fn(s->opt.ud, s->g, feeds, n_feeds, fetches, n_fetches, targets, n_targets, &copy, st)) != DFX_OK)
      return c;
    g = copy;
    if ((c = dfx__plan_select(g, feeds, n_feeds, fetches, n_fetches, targets, n_targets, &sel, st)) != DFX_OK) {
      dfx_graph_free(copy);
      return c;
    }
  }
  c = dfx__plan_build(g, copy, &sel, s->reg, key, out, st);
  dfx__plan_select_free(&sel);
  return c;
}

static dfx_code get_plan(dfx_session *s, const dfx_port *feeds, int n_feeds, const dfx_port *fetches, int n_fetches,
                         const char *const *targets, int n_targets, const dfx_plan **out, dfx_status *st) {
  char *key = dfx__plan_key(feeds, n_feeds, fetches, n_fetches, targets, n_targets);
  if (!key) return dfx__status_set(st, DFX_ENOMEM, "out of memory");
  uv_mutex_lock(&s->mu);
  *out = cached_plan(s, key);
  uv_mutex_unlock(&s->mu);
  if (*out) {
    dfx__free(key);
    return DFX_OK;
  }
  dfx_plan *p = NULL;
  dfx_code c = build_plan(s, feeds, n_feeds, fetches, n_fetches, targets, n_targets, key, &p, st);
  dfx__free(key);
  if (c != DFX_OK) return c;
  uv_mutex_lock(&s->mu);
  if ((*out = cached_plan(s, p->key))) { /* another run built it first */
    uv_mutex_unlock(&s->mu);
    dfx__plan_free(p);
    return DFX_OK;
  }
  if (s->n_plans == s->cap_plans) {
    int nc = s->cap_plans ? s->cap_plans * 2 : 4;
    dfx_plan **np = dfx__realloc(s->plans, sizeof *np * (size_t)nc);
    if (!np) {
      uv_mutex_unlock(&s->mu);
      dfx__plan_free(p);
      return dfx__status_set(st, DFX_ENOMEM, "out of memory");
    }
    s->plans = np;
    s->cap_plans = nc;
  }
  s->plans[s->n_plans++] = p;
  *out = p;
  uv_mutex_unlock(&s->mu);
  return DFX_OK;
}

/* ---- feeds ---- */

static dfx_code check_feeds(const dfx_graph *g, const dfx_port *feeds, dfx_tensor *const *vals, int n, dfx_status *st) {
  for (int i = 0; i < n; i++) {
    if (!vals[i]) return dfx__status_set(st, DFX_EINVAL, "feed '%s:%d' has a NULL tensor", feeds[i].node, feeds[i].index);
    int id = dfx__graph_find(g, feeds[i].node, (size_t)-1);
    if (id < 0) continue; /* the plan reports unknown names */
    const dfx_node *nd = &g->nodes[id];
    if (feeds[i].index < 0 || feeds[i].index >= nd->n_out) continue;
    dfx_dtype want = nd->out_types[feeds[i].index], got = (dfx_dtype)vals[i]->dtype;
    if (want != DFX_INVALID && want != got)
      return dfx__status_set(st, DFX_EINVAL, "feed '%s:%d' is %s but '%s' (%s) produces %s", feeds[i].node,
                             feeds[i].index, dfx_dtype_name(got), nd->name, nd->op, dfx_dtype_name(want));
    const dfx_shape *sh = strncmp(nd->op, "Placeholder", 11) == 0 ? dfx__attr_shape(nd, "shape") : NULL;
    if (!sh || sh->rank < 0) continue;
    bool ok = sh->rank == vals[i]->ndims;
    for (int d = 0; ok && d < sh->rank; d++) ok = sh->dims[d] < 0 || sh->dims[d] == vals[i]->dims[d];
    if (!ok) {
      char a[128], b[128];
      return dfx__status_set(st, DFX_EINVAL, "feed '%s:%d' has shape %s but placeholder '%s' requires %s (-1: any)",
                             feeds[i].node, feeds[i].index, DFX_SHAPE_STR(vals[i], a), nd->name,
                             dfx__shape_str(sh->rank, sh->dims, b, sizeof b));
    }
  }
  return DFX_OK;
}

dfx_code dfx_session_run(dfx_session *s, const dfx_run_options *ro, const dfx_port *feeds, dfx_tensor *const *feed_vals,
                         int n_feeds, const dfx_port *fetches, dfx_tensor **fetch_vals, int n_fetches,
                         const char *const *targets, int n_targets, dfx_status *st) {
  return dfx__session_run_linked(s, ro, NULL, feeds, feed_vals, n_feeds, fetches, fetch_vals, n_fetches, targets,
                                 n_targets, st);
}

/* Step ids of runs no partitioned session names: distinct per process. */
static int64_t next_step_id = 1;

dfx_code dfx__session_run_linked(dfx_session *s, const dfx_run_options *ro, const dfx_step_link *link,
                                 const dfx_port *feeds, dfx_tensor *const *feed_vals, int n_feeds,
                                 const dfx_port *fetches, dfx_tensor **fetch_vals, int n_fetches,
                                 const char *const *targets, int n_targets, dfx_status *st) {
  dfx__status_clear(st);
  if (fetch_vals)
    for (int i = 0; i < n_fetches; i++) fetch_vals[i] = NULL;
  if (!s || n_feeds < 0 || n_fetches < 0 || n_targets < 0 || (n_feeds && (!feeds || !feed_vals)) ||
      (n_fetches && (!fetches || !fetch_vals)) || (n_targets && !targets))
    return dfx__status_set(st, DFX_EINVAL, "dfx_session_run: NULL or negative argument");
  for (int i = 0; i < n_feeds + n_fetches + n_targets; i++) { /* names are hashed before any lookup */
    int k = i < n_feeds ? 0 : i < n_feeds + n_fetches ? 1 : 2;
    const char *name = k == 0 ? feeds[i].node : k == 1 ? fetches[i - n_feeds].node : targets[i - n_feeds - n_fetches];
    if (!name)
      return dfx__status_set(st, DFX_EINVAL, "dfx_session_run: %s %d has a NULL node name",
                             k == 0 ? "feed" : k == 1 ? "fetch" : "target", k == 0 ? i : k == 1 ? i - n_feeds : i - n_feeds - n_fetches);
  }
  dfx_code c = check_feeds(s->g, feeds, feed_vals, n_feeds, st);
  if (c != DFX_OK) return c;
  const dfx_plan *plan = NULL;
  if ((c = get_plan(s, feeds, n_feeds, fetches, n_fetches, targets, n_targets, &plan, st)) != DFX_OK) return c;
  dfx_run *r = dfx__calloc(1, sizeof *r);
  if (!r) return dfx__status_set(st, DFX_ENOMEM, "out of memory");
  if ((c = dfx__run_init(r, plan, s->pool, feed_vals, ro, st)) != DFX_OK) {
    dfx__free(r);
    return c;
  }
  r->step.store = s->res;
  r->step.rendezvous = link ? link->rendezvous : NULL;
  r->step.step_id = link ? link->step_id : -__atomic_fetch_add(&next_step_id, 1, __ATOMIC_RELAXED);
  uv_mutex_lock(&s->mu);
  r->next_active = s->active;
  s->active = r;
  uv_mutex_unlock(&s->mu);
  dfx__run_start(r);
  uv_mutex_lock(&s->mu);
  for (dfx_run **pp = &s->active; *pp; pp = &(*pp)->next_active)
    if (*pp == r) {
      *pp = r->next_active;
      break;
    }
  uv_mutex_unlock(&s->mu);
  c = dfx__run_collect(r, fetch_vals, st);
  dfx__run_destroy(r);
  dfx__free(r);
  return c;
}

struct dfx_resmgr *dfx__session_store(dfx_session *s) { return s->res; }
