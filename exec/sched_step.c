/* sched_step.c - executing node instances: control ops, kernel calls, fetch
 * capture, completion counting and the inline/pool dispatch decision.
 * Cheap nodes (control flow, CHEAP kernels, dead nodes) run next on the
 * thread that readied them, FIFO, so a scalar while loop never changes
 * thread; expensive ones go to the pool, keeping the last one inline when
 * nothing else is queued here (tf-semantics §3.4). */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "alloc.h"
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
}

static const char *frame_label(const dfx_frame *f) { return f->parent ? f->name : "(root)"; }

/* Wraps a kernel's message with node, op, frame and iteration. */
static void fail_node(dfx_run *r, const dfx_tagged *t, dfx_code code, const char *msg) {
  const dfx_pnode *n = &r->plan->nodes[t->node];
  dfx__run_fail(r, code, "node '%s' (%s) in frame '%s', iteration %lld: %s", n->name, n->op, frame_label(t->frame),
                (long long)t->iter->iter_num, msg);
}

/* ---- local FIFO of inline work ---- */

typedef struct inline_q {
  dfx_tagged *v;
  int head, n, cap;
  dfx_tagged small[32];
} inline_q;

static int q_push(inline_q *q, dfx_tagged t) {
  if (q->head + q->n == q->cap) {
    if (q->head > 0) { /* compact before growing */
      memmove(q->v, q->v + q->head, sizeof *q->v * (size_t)q->n);
      q->head = 0;
    } else {
      int nc = q->cap * 2;
      dfx_tagged *nv = dfx__malloc(sizeof *nv * (size_t)nc);
      if (!nv) return -1;
      memcpy(nv, q->v, sizeof *nv * (size_t)q->n);
      if (q->v != q->small) dfx__free(q->v);
      q->v = nv;
      q->cap = nc;
    }
  }
  q->v[q->head + q->n++] = t;
  return 0;
}

/* ---- executing one node instance ---- */

/* Control ops (the closed set of tf-semantics §2.2) and no-op kernels move
 * their inputs to their outputs (dfx__move_outputs); everything else calls
 * the kernel. On return the node's input slots are empty. */
static dfx_code execute(dfx_run *r, const dfx_tagged *t, dfx_tensor **out, char *msg, size_t msglen) {
  const dfx_pnode *n = &r->plan->nodes[t->node];
  dfx_tensor **in = t->iter->inputs + n->input_start;
  dfx_code c = DFX_OK;
  if (t->dead) goto clear; /* dead nodes never run their kernel (§2.3) */
  if (n->feed >= 0) {
    out[0] = dfx__tensor_ref(r->feed_vals[n->feed]);
    return DFX_OK;
  }
  if (dfx__move_outputs(n, in, out, n->ctrl == DFX_CTRL_LOOP_COND && dfx__step_is_cancelled(&r->step)))
    goto clear;
  /* Control ops that dfx__move_outputs leaves here: errors, _SwitchN and a
   * Merge whose value_index is read. */
  switch (n->ctrl) {
    case DFX_CTRL_SWITCH: {
      const dfx_tensor *pred = in[1];
      if (!n->is_switch_n) {
        snprintf(msg, msglen, "The second input must be a scalar bool, but it has shape with %d dims and dtype %s",
                 pred->ndims, dfx_dtype_name((dfx_dtype)pred->dtype));
        c = DFX_EINVAL;
        goto clear;
      }
      /* _SwitchN: an index out of range selects the last output */
      if (pred->ndims != 0 || pred->dtype != DFX_I32) {
        snprintf(msg, msglen, "output_index must be a scalar int32");
        c = DFX_EINVAL;
        goto clear;
      }
      int32_t k = *(const int32_t *)pred->data;
      out[(k < 0 || k >= n->n_out) ? n->n_out - 1 : k] = in[0];
      in[0] = NULL;
      goto clear;
    }
    case DFX_CTRL_MERGE:
      for (int i = 0; i < n->n_in; i++)
        if (in[i]) {
          int32_t idx = i;
          out[0] = in[i];
          in[i] = NULL;
          out[1] = dfx__tensor_scalar(DFX_I32, &idx);
          if (!out[1]) {
            snprintf(msg, msglen, "out of memory");
            c = DFX_ENOMEM;
          }
          break;
        }
      goto clear;
    case DFX_CTRL_LOOP_COND:
      snprintf(msg, msglen, "Loop execution was cancelled.");
      c = DFX_ECANCELED;
      goto clear;
    case DFX_CTRL_CONTROL_TRIGGER:
      return DFX_OK;
    default: break;
  }
  dfx_status st;
  st.code = DFX_OK;
  st.msg[0] = 0;
  dfx_kctx ctx = {.node = n->g, .n_in = n->n_in, .in = in, .n_out = n->n_out, .out = out, .state = n->kstate,
                  .step = &r->step, .frame = frame_label(t->frame), .iter = t->iter->iter_num, .st = &st, .own_inputs = true};
  c = n->kernel->fn(&ctx);
  if (c != DFX_OK) {
    /* Kernels return DFX_ENOMEM for any failed output; the helper knows why. */
    if (c == DFX_ENOMEM && st.code != DFX_OK) c = st.code;
    snprintf(msg, msglen, "%s", st.msg[0] ? st.msg : dfx_code_name(c));
  } else {
    for (int k = 0; k < n->n_out; k++)
      if (!out[k]) {
        snprintf(msg, msglen, "Missing %d-th output from %s", k, n->name);
        c = DFX_EINTERNAL;
        break;
      }
  }
clear:
  for (int i = 0; i < n->n_in; i++)
    if (in[i]) {
      dfx__tensor_unref(in[i]);
      in[i] = NULL;
    }
  return c;
}

/* Root-frame fetches are captured before propagation can move the tensors.
 * An Exit's instances from different iterations may finish on different
 * threads at once, so the capture takes the run's error mutex. */
static void capture_fetches(dfx_run *r, const dfx_pnode *n, const dfx_tagged *t, dfx_tensor **out) {
  bool oom = false;
  uv_mutex_lock(&r->err_mu);
  for (int i = 0; i < n->n_fetch_slots; i++) {
    int slot = n->fetch_slots[2 * i], idx = n->fetch_slots[2 * i + 1];
    /* An ill-formed loop can deliver a live Exit more than once; the first
     * value is kept (and no reference is lost). */
    if (r->fetch_vals[idx]) continue;
    int dead = 0;
    if (t->dead) {
      dead = t->dead_src ? t->dead_src : -1;
    } else if (out[slot]) {
      /* The user keeps fetches past the session: no immortal tensors. */
      dfx_tensor *v = dfx__tensor_export(out[slot]);
      oom |= v == NULL;
      __atomic_store_n(&r->fetch_vals[idx], v, __ATOMIC_RELAXED);
    } else {
      dead = n->ctrl == DFX_CTRL_SWITCH ? n->id + 1 : -1;
    }
    if (dead) __atomic_store_n(&r->fetch_dead[idx], dead, __ATOMIC_RELAXED);
  }
  uv_mutex_unlock(&r->err_mu);
  if (oom) dfx__run_fail(r, DFX_ENOMEM, "out of memory fetching an output of node '%s'", n->name);
}

/* The propagator settled a dead instance of a fetched Exit in place (once
 * per non-final iteration): only the first one needs the mutex. */
static void dead_fetch(dfx_exec *ex, int node, int dead_src) {
  dfx_run *r = (dfx_run *)((char *)ex - offsetof(dfx_run, ex));
  const dfx_pnode *n = &r->plan->nodes[node];
  bool known = true;
  for (int i = 0; i < n->n_fetch_slots; i++) {
    int idx = n->fetch_slots[2 * i + 1];
    known &= __atomic_load_n(&r->fetch_dead[idx], __ATOMIC_RELAXED) != 0 ||
             __atomic_load_n(&r->fetch_vals[idx], __ATOMIC_RELAXED) != NULL;
  }
  if (known) return;
  dfx_tagged t = {.node = node, .dead = true, .dead_src = dead_src};
  capture_fetches(r, n, &t, NULL);
}

void dfx__run_hooks(dfx_run *r) { r->ex.dead_fetch = dead_fetch; }

/* Running average like TF's (9 * old + new) / 10, in integer ns. */
static void update_cost(dfx_run *r, int node, uint64_t ns) {
  int64_t *c = &r->plan->cost_ns[node];
  int64_t old = __atomic_load_n(c, __ATOMIC_RELAXED);
  int64_t now = (int64_t)(ns > (uint64_t)INT64_MAX / 2 ? INT64_MAX / 2 : ns);
  __atomic_store_n(c, old >= DFX_INITIAL_COST_NS ? now : (9 * old + now) / 10, __ATOMIC_RELAXED);
}

static void trace(dfx_run *r, const dfx_tagged *t, uint64_t t0, int worker) {
  const dfx_pnode *n = &r->plan->nodes[t->node];
  if (!n->g) return;
  uint64_t t1 = uv_hrtime();
  r->ro->trace(r->ro->trace_ud, n->g->id, t->frame->name, t->iter->iter_num, (int64_t)(t0 - r->t0_ns),
               (int64_t)(t1 - r->t0_ns), worker);
}

/* ---- completion and dispatch ---- */

static void finish(dfx_run *r) {
  if (r->pool) dfx__pool_finish(r->pool, r);
  else r->done = 1;
}

/* Whether a ready node should run on this thread rather than go to the pool. */
static inline bool runs_inline(const dfx_run *r, const dfx_tagged *t) {
  return !r->pool || t->dead || __atomic_load_n(&r->plan->cost_ns[t->node], __ATOMIC_RELAXED) < DFX_INLINE_COST_NS;
}

/* TF's NodeDone + ScheduleReady: count the ready nodes in first, then hand
 * them out. When nothing is queued here, the first inline node becomes *next
 * directly (a chain of cheap nodes then never touches the queue). Anything
 * that cannot be queued (out of memory) fails the run and is counted out at
 * the end. Returns 1 if the run just ended; the caller must not touch the
 * run after that. */
static int node_done(dfx_run *r, dfx_ready *ready, inline_q *q, dfx_tagged *next, int *have_next) {
  int n = ready->n, dropped = n == 0 ? 1 : 0, last = -1;
  if (n > 1) __atomic_add_fetch(&r->outstanding, n - 1, __ATOMIC_RELAXED);
  for (int i = 0; i < n; i++) {
    const dfx_tagged *t = &ready->v[i];
    if (runs_inline(r, t)) {
      if (!*have_next && q->n == 0) {
        *next = *t;
        *have_next = 1;
      } else if (q_push(q, *t)) {
        dfx__run_fail(r, DFX_ENOMEM, "out of memory queueing node '%s'", r->plan->nodes[t->node].name);
        dropped++;
      }
      continue;
    }
    if (last >= 0 && dfx__pool_post(r->pool, r, ready->v[last], false) != DFX_OK) {
      dfx__run_fail(r, DFX_ENOMEM, "out of memory scheduling node '%s'", r->plan->nodes[ready->v[last].node].name);
      dropped++;
    }
    last = i;
  }
  if (last >= 0) { /* the last expensive node stays here if nothing else does */
    int bad = 0;
    if (!*have_next && q->n == 0) {
      *next = ready->v[last];
      *have_next = 1;
    } else {
      /* Queued without waking anyone: see dfx__pool_nudge in the run loop. */
      bad = dfx__pool_post(r->pool, r, ready->v[last], false) != DFX_OK;
    }
    if (bad) {
      dfx__run_fail(r, DFX_ENOMEM, "out of memory scheduling node '%s'", r->plan->nodes[ready->v[last].node].name);
      dropped++;
    }
  }
  if (dropped && __atomic_sub_fetch(&r->outstanding, dropped, __ATOMIC_ACQ_REL) == 0) {
    finish(r);
    return 1;
  }
  return 0;
}

void dfx__run_process(dfx_run *r, dfx_tagged first, int worker) {
  inline_q q = {.v = NULL, .cap = 32};
  q.v = q.small;
  dfx_ready ready;
  dfx__ready_init(&ready);
  dfx_tensor *small_out[8] = {NULL};
  char msg[1024];
  const bool tracing = r->ro && r->ro->trace;
  const dfx_pnode *const nodes = r->plan->nodes;
  unsigned ticks = 0;
  uint32_t rng = 2463534242u + (uint32_t)worker; /* xorshift32 state for sampling kernel times */
  dfx_tagged t = first;
  for (;;) {
    const dfx_pnode *n = &nodes[t.node];
    ready.n = 0;
    if (!dfx__step_is_cancelled(&r->step)) {
      if ((++ticks & 63) == 0) {
        /* Queued expensive nodes wait for a thread that runs out of work,
         * or for this nudge: a long cheap chain here must not hold them. */
        if (r->pool) dfx__pool_nudge(r->pool);
        if ((ticks & 1023) == 0 && r->deadline_ns && uv_hrtime() > r->deadline_ns)
          dfx__run_fail(r, DFX_EDEADLINE, "run timed out after %.3f s", (double)(uv_hrtime() - r->t0_ns) / 1e9);
      }
      /* Before a long kernel, wake a sleeping thread for whatever is queued. */
      if (!n->inline_ok && r->pool && !t.dead) dfx__pool_nudge(r->pool);
      /* small_out is all NULL here: every slot is cleared after use. */
      dfx_tensor **out = small_out;
      dfx_code c = DFX_OK;
      if (n->n_out > 8 && !(out = dfx__calloc((size_t)n->n_out, sizeof *out))) {
        out = small_out;
        c = DFX_ENOMEM;
        snprintf(msg, sizeof msg, "out of memory");
      }
      if (c == DFX_OK) {
        /* Only kernels that are not always cheap are timed, to learn whether
         * they are worth sending to another worker: every run until there is
         * an estimate, then one run in 8 chosen at random (two clock reads
         * cost as much as a small MatMul, and a fixed stride could keep
         * missing the same node of a loop body). */
        bool learn = false;
        if (!n->inline_ok && !t.dead) {
          rng ^= rng << 13;
          rng ^= rng >> 17;
          rng ^= rng << 5;
          learn = (rng & 7) == 0 ||
                  __atomic_load_n(&r->plan->cost_ns[t.node], __ATOMIC_RELAXED) >= DFX_INITIAL_COST_NS;
        }
        uint64_t t0 = learn || tracing ? uv_hrtime() : 0;
        c = execute(r, &t, out, msg, sizeof msg);
        if (learn) update_cost(r, t.node, uv_hrtime() - t0);
        if (tracing) trace(r, &t, t0, worker);
      }
      if (c == DFX_OK) {
        if (n->n_fetch_slots) capture_fetches(r, n, &t, out);
        c = dfx__propagate(&r->ex, &t, out, &ready);
        if (c != DFX_OK) ready.n = 0; /* the error is recorded; stop here */
      } else {
        fail_node(r, &t, c, msg);
      }
      if (out != small_out) {
        for (int k = 0; k < n->n_out; k++) dfx__tensor_unref(out[k]);
        dfx__free(out);
      } else {
        for (int k = 0; k < n->n_out; k++)
          if (out[k]) {
            dfx__tensor_unref(out[k]);
            out[k] = NULL;
          }
      }
      /* The common case in a loop body: this node readied exactly one
       * successor and nothing is queued; it runs next with no bookkeeping
       * (one instance finished, one became ready: `outstanding` is unchanged). */
      if (ready.n == 1 && q.n == 0 && runs_inline(r, &ready.v[0])) {
        t = ready.v[0];
        continue;
      }
    }
    /* After the first error nothing new runs (ready is empty); inputs are
     * released when the run's frames are torn down. */
    int have = 0;
    if (node_done(r, &ready, &q, &t, &have)) break;
    if (!have) {
      if (q.n == 0) break;
      t = q.v[q.head++];
      if (--q.n == 0) q.head = 0;
    }
  }
  dfx__ready_free(&ready);
  if (q.v != q.small) dfx__free(q.v);
}

/* ---- stuck report ---- */

void dfx__run_stuck_report(dfx_run *r, dfx_status *st) {
  const dfx_plan *p = r->plan;
  dfx__status_set(st, DFX_ESTUCK, "the run cannot make progress: no node is running or ready, but");
  int missing = 0;
  for (int i = 0; i < p->n_fetches; i++)
    if (!r->fetch_vals[i] && !r->fetch_dead[i]) {
      dfx__status_append(st, "%s fetch '%s:%d'", missing ? "," : "", p->nodes[p->fetches[i].node].name,
                         p->fetches[i].slot);
      missing++;
    }
  dfx__status_append(st, " %s never produced. Waiting nodes:", missing == 1 ? "was" : "were");
  int shown = 0;
  uv_mutex_lock(&r->ex.mu);
  for (dfx_frame *f = r->ex.live; f && shown < 8; f = f->live_next) {
    const dfx_pframe *pf = &p->frames[f->sframe];
    for (int k = 0; k <= f->max_parallel && shown < 8; k++) {
      dfx_iter *it = f->ring[k];
      if (!it) continue;
      for (int i = 0; i < p->n_nodes && shown < 8; i++) {
        const dfx_pnode *n = &p->nodes[i];
        if (n->frame != f->sframe) continue;
        int32_t pend = it->pending[n->local], init = pf->pending_init[n->local];
        if (!dfx__partly_activated(pend, init, it->dead[n->local])) continue;
        int waiting = n->ctrl == DFX_CTRL_MERGE ? pend / 2 + (pend & 1) : pend;
        dfx__status_append(st, " node '%s' (%s) in frame '%s', iteration %lld waits for %d of its %d input%s;",
                           n->name, n->op, frame_label(f), (long long)it->iter_num, waiting,
                           n->n_in + (n->ctrl == DFX_CTRL_MERGE ? init / 2 : 0), n->n_in == 1 ? "" : "s");
        shown++;
      }
    }
  }
  for (int i = 0; i < r->ex.n_stuck && shown < 8; i++, shown++) {
    const dfx_pnode *n = &p->nodes[r->ex.stuck[i].node];
    dfx__status_append(st, " node '%s' (%s) in frame '%s', iteration %lld was still waiting for inputs when its "
                       "iteration ended;", n->name, n->op, r->ex.stuck[i].frame, (long long)r->ex.stuck[i].iter);
  }
  uv_mutex_unlock(&r->ex.mu);
  if (!shown) dfx__status_append(st, " (none found)");
}
