/* process.c - the loop that processes node instances on one thread (TF's
 * Process): execute an instance, capture its fetched outputs, propagate,
 * then hand out what became ready by the policy of policy.h. Executing an
 * instance: a dead one runs nothing (tf-semantics §2.3), a feed hands out
 * its tensor, a control op or a pure move follows frames/control.h, anything
 * else calls its kernel. This is the per-node hot path: keep it in one
 * translation unit so the compiler can inline across it. */
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "control.h"
#include "invariant.h"
#include "policy.h"
#include "rendezvous.h"
#include "run.h"

/* A node instance whose kernel finishes later. Two references: the
 * executor's until execute() is done with the instance (input slots
 * cleared), and the kernel's until dfx__async_done; whoever drops the last
 * one hands it to the run's inbox, so the resumer never races the
 * executor still clearing the instance's inputs. */
struct dfx_async_inst {
  dfx_async pub;
  dfx_run *r;
  dfx_tagged t;
  int refs;                    /* atomic */
  struct dfx_async_inst *next; /* in the run's inbox */
  dfx_tensor *out[];
};

static void async_release(dfx_async_inst *a) {
  if (__atomic_sub_fetch(&a->refs, 1, __ATOMIC_ACQ_REL) != 0) return;
  dfx_run *r = a->r;
  uv_mutex_lock(&r->inbox_mu);
  a->next = r->inbox;
  r->inbox = a;
  uv_mutex_unlock(&r->inbox_mu);
  sem_post(&r->inbox_sem);
}

static void async_done(dfx_async *pub) { async_release((dfx_async_inst *)pub); }

static void async_free(dfx_async_inst *a) {
  for (int k = 0; k < a->pub.n_out; k++) dfx__tensor_unref(a->out[k]);
  dfx__free(a);
}

/* The frame instance's id in rendezvous keys: the chain of frame names and
 * parent iterations, hashed (rendezvous.h). */
static uint64_t frame_id(const dfx_frame *f) {
  return f->parent ? dfx__rdv_frame_id(frame_id(f->parent), f->parent_iter_num, f->name) : 0;
}

/* Calls a transfer or asynchronous kernel (kept out of the hot path). An
 * asynchronous one that defers leaves its handle in *pending and makes
 * execute return DFX__PENDING. */
static __attribute__((noinline)) dfx_code call_special(dfx_run *r, const dfx_tagged *t, dfx_kctx *ctx,
                                                       const dfx_kernel_def *k, dfx_async_inst **pending) {
  ctx->input_dead = t->dead;
  ctx->frame_id = frame_id(t->frame);
  dfx_async_inst *a = NULL;
  if (k->flags & DFX_KERNEL_ASYNC) {
    a = dfx__calloc(1, sizeof *a + sizeof(dfx_tensor *) * (size_t)(ctx->n_out + 1));
    if (!a) return dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory");
    a->pub.n_out = ctx->n_out;
    a->pub.out = a->out;
    a->pub.done = async_done;
    a->r = r;
    a->t = *t;
    a->refs = 2;
    ctx->async = &a->pub;
  }
  dfx_code c = k->fn(ctx);
  if (a && ctx->deferred && c == DFX_OK) {
    *pending = a;
    return DFX__PENDING;
  }
  dfx__free(a); /* finished at once (or failed before deferring) */
  return c;
}

/* ---- one node instance ---- */

const char *dfx__run_frame_label(const dfx_frame *f) { return f->parent ? f->name : "(root)"; }

static inline dfx_code execute(dfx_run *r, const dfx_tagged *t, dfx_tensor **out, dfx_status *msg,
                               dfx_async_inst **pending) {
  const dfx_fnode *n = &r->plan->flow.nodes[t->node];
  const dfx_pnode *x = &r->plan->nodes[t->node];
  dfx_tensor **in = t->iter->inputs + n->input_start;
  dfx_code c = DFX_OK;
  /* A dead instance runs nothing, except a transfer kernel, which must
   * pass the deadness on to its partner. */
  if (t->dead && !(x->kernel && (x->kernel->flags & DFX_KERNEL_TRANSFER))) goto clear;
  if (x->feed >= 0) {
    out[0] = dfx__tensor_ref(r->feed_vals[x->feed]);
    return DFX_OK;
  }
  bool cancelled = n->ctrl == DFX_CTRL_LOOP_COND && dfx__step_is_cancelled(&r->step);
  if (dfx__ctrl_move(n, in, out, cancelled)) goto clear;
  if (n->ctrl != DFX_CTRL_NONE) {
    c = dfx__ctrl_execute(n, in, out, msg);
    goto clear;
  }
  dfx_kctx ctx = {.node = x->g, .n_in = n->n_in, .in = in, .n_out = n->n_out, .out = out, .state = x->kstate,
                  .step = &r->step, .frame = dfx__run_frame_label(t->frame), .iter = t->iter->iter_num, .st = msg,
                  .own_inputs = true, .par = dfx__pool_parallel(r->pool)};
  if (__builtin_expect((x->kernel->flags & (DFX_KERNEL_ASYNC | DFX_KERNEL_TRANSFER)) != 0, 0)) {
    c = call_special(r, t, &ctx, x->kernel, pending);
    if (c == DFX__PENDING) goto clear;
  } else {
    c = x->kernel->fn(&ctx);
  }
  if (c != DFX_OK) {
    /* Kernels return DFX_ENOMEM for any failed output; the helper knows why. */
    if (c == DFX_ENOMEM && msg->code != DFX_OK) c = msg->code;
    if (!msg->msg[0]) dfx__status_set(msg, c, "%s", dfx_code_name(c));
  } else {
    for (int k = 0; k < n->n_out; k++)
      if (!out[k]) {
        c = dfx__status_set(msg, DFX_EINTERNAL, "Missing %d-th output from %s", k, n->name);
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
static void capture(dfx_run *r, const dfx_tagged *t, dfx_tensor **out) {
  const dfx_fnode *n = &r->plan->flow.nodes[t->node];
  const dfx_pnode *x = &r->plan->nodes[t->node];
  bool oom = false;
  uv_mutex_lock(&r->err_mu);
  for (int i = 0; i < x->n_fetch_slots; i++) {
    int slot = x->fetch_slots[2 * i], idx = x->fetch_slots[2 * i + 1];
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
      r->fetch_vals[idx] = v;
    } else {
      dead = n->ctrl == DFX_CTRL_SWITCH ? t->node + 1 : -1;
    }
    if (dead) r->fetch_dead[idx] = dead;
  }
  uv_mutex_unlock(&r->err_mu);
  if (oom) dfx__run_fail(r, DFX_ENOMEM, "out of memory fetching an output of node '%s'", n->name);
}

static void trace(dfx_run *r, const dfx_tagged *t, uint64_t t0, int worker) {
  const dfx_pnode *x = &r->plan->nodes[t->node];
  if (!x->g) return; /* feed nodes are not graph nodes */
  uint64_t t1 = uv_hrtime();
  r->ro->trace(r->ro->trace_ud, x->g->name, x->g->op, t->frame->name, t->iter->iter_num, (int64_t)(t0 - r->t0_ns),
               (int64_t)(t1 - r->t0_ns), worker);
}

/* ---- the loop ---- */

/* A kernel's or a rule's message, with node, op, frame and iteration. */
static void fail_node(dfx_run *r, const dfx_tagged *t, const dfx_status *msg) {
  const dfx_fnode *n = &r->plan->flow.nodes[t->node];
  dfx__run_fail(r, msg->code, "node '%s' (%s) in frame '%s', iteration %lld: %s", n->name, n->op,
                dfx__run_frame_label(t->frame), (long long)t->iter->iter_num, msg->msg);
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

/* ---- completion and dispatch ---- */

static void finish(dfx_run *r) {
  if (r->pool) dfx__pool_finish(r->pool, r);
  else __atomic_store_n(&r->done, 1, __ATOMIC_RELEASE); /* read by wait_async (run.c) */
}

static inline bool runs_inline(const dfx_run *r, const dfx_tagged *t) {
  return dfx__policy_runs_inline(r->plan, r->pool != NULL, t->node, t->dead);
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
        dfx__run_fail(r, DFX_ENOMEM, "out of memory queueing node '%s'", r->plan->flow.nodes[t->node].name);
        dropped++;
      }
      continue;
    }
    if (last >= 0 && dfx__pool_post(r->pool, r, ready->v[last], false) != DFX_OK) {
      dfx__run_fail(r, DFX_ENOMEM, "out of memory scheduling node '%s'", r->plan->flow.nodes[ready->v[last].node].name);
      dropped++;
    }
    last = i;
  }
  if (last >= 0) { /* the last expensive node stays here if nothing else does */
    if (!*have_next && q->n == 0) {
      *next = ready->v[last];
      *have_next = 1;
    } else if (dfx__pool_post(r->pool, r, ready->v[last], false) != DFX_OK) {
      /* Queued without waking anyone: see dfx__pool_nudge in the run loop. */
      dfx__run_fail(r, DFX_ENOMEM, "out of memory scheduling node '%s'", r->plan->flow.nodes[ready->v[last].node].name);
      dropped++;
    }
  }
  if (dropped) {
    int64_t left = __atomic_sub_fetch(&r->outstanding, dropped, __ATOMIC_ACQ_REL);
    DFX_ASSERT(left >= 0);
    if (left == 0) {
      finish(r);
      return 1;
    }
  }
  return 0;
}

/* Releases the references left in an output array and clears it. */
static void drop_outputs(dfx_tensor **out, int n) {
  for (int k = 0; k < n; k++)
    if (out[k]) {
      dfx__tensor_unref(out[k]);
      out[k] = NULL;
    }
}

/* Takes a finished asynchronous instance's result as if execute had just
 * produced it: outputs into out[], deadness into *t, an error into msg. */
static dfx_code take_result(dfx_async_inst *a, dfx_tagged *t, dfx_tensor **out, dfx_status *msg) {
  dfx_code c = a->pub.st.code;
  if (c != DFX_OK) {
    dfx__status_copy(msg, &a->pub.st);
  } else if (a->pub.is_dead) {
    t->dead = true;
    t->dead_src = 0;
  } else {
    for (int k = 0; k < a->pub.n_out; k++) {
      out[k] = a->out[k];
      a->out[k] = NULL;
      if (!out[k]) c = dfx__status_set(msg, DFX_EINTERNAL, "missing %d-th output of an asynchronous kernel", k);
    }
  }
  async_free(a);
  return c;
}

static void process(dfx_run *r, const dfx_tagged *first, int n_first, int worker, dfx_async_inst *resume);

void dfx__run_process(dfx_run *r, const dfx_tagged *first, int n_first, int worker) {
  process(r, first, n_first, worker, NULL);
}

void dfx__run_resume(dfx_run *r, dfx_async_inst *inst) {
  dfx_tagged t = inst->t;
  process(r, &t, 1, 0, inst);
}

void dfx__run_drain_inbox(dfx_run *r) {
  uv_mutex_lock(&r->inbox_mu);
  dfx_async_inst *list = r->inbox, *fifo = NULL;
  r->inbox = NULL;
  uv_mutex_unlock(&r->inbox_mu);
  while (list) { /* the inbox is a stack: oldest first */
    dfx_async_inst *nx = list->next;
    list->next = fifo;
    fifo = list;
    list = nx;
  }
  while (fifo) {
    dfx_async_inst *nx = fifo->next;
    dfx__run_resume(r, fifo);
    fifo = nx;
  }
}

static void process(dfx_run *r, const dfx_tagged *first, int n_first, int worker, dfx_async_inst *resume) {
  inline_q q = {.v = NULL, .cap = 32};
  q.v = q.small;
  for (int i = 1; i < n_first; i++)
    if (q_push(&q, first[i])) {
      /* Counted out at once: the first node is still outstanding, so the
       * run cannot end here. */
      dfx__run_fail(r, DFX_ENOMEM, "out of memory queueing node '%s'", r->plan->flow.nodes[first[i].node].name);
      __atomic_sub_fetch(&r->outstanding, 1, __ATOMIC_ACQ_REL);
    }
  dfx_status msg;
  dfx_ready ready;
  dfx__ready_init(&ready, &msg);
  dfx_tensor *small_out[8] = {NULL};
  const bool tracing = r->ro && r->ro->trace;
  const dfx_plan *const plan = r->plan;
  unsigned ticks = 0;
  uint32_t rng = 2463534242u + (uint32_t)worker; /* xorshift32 state for sampling kernel times */
  dfx_tagged t = first[0];
  for (;;) {
    const dfx_fnode *n = &plan->flow.nodes[t.node];
    ready.n = 0;
    if (resume && dfx__step_is_cancelled(&r->step)) { /* nothing new runs after an error */
      async_free(resume);
      resume = NULL;
    }
    if (!dfx__step_is_cancelled(&r->step)) {
      if ((++ticks % DFX_NUDGE_EVERY) == 0) {
        /* Queued expensive nodes wait for a thread that runs out of work,
         * or for this nudge: a long cheap chain here must not hold them. */
        if (r->pool) dfx__pool_nudge(r->pool);
        if ((ticks % DFX_DEADLINE_CHECK_EVERY) == 0 && r->deadline_ns && uv_hrtime() > r->deadline_ns)
          /* Where the run was: in a long loop, the frame and iteration say
           * how far it got. */
          dfx__run_fail(r, DFX_EDEADLINE, "run timed out after %.3f s, at node '%s' (%s) in frame '%s', iteration %lld",
                        (double)(uv_hrtime() - r->t0_ns) / 1e9, n->name, n->op, dfx__run_frame_label(t.frame),
                        (long long)t.iter->iter_num);
      }
      const bool inline_ok = plan->nodes[t.node].inline_ok;
      /* Before a long kernel, wake a sleeping thread for whatever is queued. */
      if (!inline_ok && r->pool && !t.dead) dfx__pool_nudge(r->pool);
      /* small_out is all NULL here: every slot is cleared after use. */
      dfx_tensor **out = small_out;
      dfx_code c = DFX_OK;
      msg.code = DFX_OK;
      msg.msg[0] = 0;
      if (n->n_out > 8 && !(out = dfx__calloc((size_t)n->n_out, sizeof *out))) {
        out = small_out;
        c = dfx__status_set(&msg, DFX_ENOMEM, "out of memory");
      }
      dfx_async_inst *pending = NULL;
      if (resume) {
        c = take_result(resume, &t, out, &msg);
        resume = NULL;
      } else if (c == DFX_OK) {
        /* Only kernels that are not always cheap are timed (policy.h). */
        bool learn = !inline_ok && !t.dead && dfx__policy_should_time(plan, t.node, &rng);
        uint64_t t0 = learn || tracing ? uv_hrtime() : 0;
        c = execute(r, &t, out, &msg, &pending);
        if (learn) dfx__policy_cost_update(plan, t.node, uv_hrtime() - t0);
        if (tracing) trace(r, &t, t0, worker);
      }
      if (c == DFX__PENDING) {
        /* The instance stays outstanding until dfx__run_resume: counted
         * once more before the kernel's completion can count it out. */
        __atomic_add_fetch(&r->outstanding, 1, __ATOMIC_ACQ_REL);
        async_release(pending);
      } else if (c == DFX_OK) {
        if (plan->nodes[t.node].n_fetch_slots) capture(r, &t, out);
        if (dfx__propagate(&r->prop, &t, out, &ready) != DFX_OK) {
          dfx__run_fail(r, msg.code, "%s", msg.msg);
          ready.n = 0; /* the error is recorded; stop here */
        }
      } else {
        fail_node(r, &t, &msg);
      }
      drop_outputs(out, n->n_out);
      if (out != small_out) dfx__free(out);
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

