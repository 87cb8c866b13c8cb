/* propagate.c - what happens after a node finishes: activation of its
 * consumers, frames, iterations and their cleanup (tf-semantics §2.3-2.5).
 * Every rule below cites the section it implements; the locking rule is in
 * frame.h. Control-flow ops are the closed set switched on here. */
#include <string.h>

#include "alloc.h"
#include "frame.h"

/* A run whose nodes all execute on the calling thread (no worker pool) has no
 * concurrency inside it, so its frame locks are skipped. */
#define LOCK(ex, f)                         \
  do {                                      \
    if ((ex)->threaded) dfx__spin_lock(&(f)->mu); \
  } while (0)
#define UNLOCK(ex, f)                         \
  do {                                        \
    if ((ex)->threaded) dfx__spin_unlock(&(f)->mu); \
  } while (0)

/* ---- activation (§2.4) ---- */

/* Delivers `outputs` of node `src` (dead or not) to its consumers in
 * (frame f, iteration it), appending ready nodes. Caller holds f->mu.
 * Consumes each outputs[k] reference on its last edge. This loop runs once
 * per finished node, so everything it needs about a consumer is in the edge. */
static int activate_at(dfx_exec *ex, const dfx_pnode *src, bool src_dead, int src_dead_src, dfx_frame *f,
                       dfx_iter *it, dfx_tensor **outputs, bool consume, dfx_ready *ready, int depth);

/* How deep trivial nodes are settled inside one another before the rest go
 * through the ready list. A loop body's chain Merge -> ... LoopCond -> Switch
 * -> Identity -> Const is five deep. */
#define SETTLE_DEPTH 8

/* Runs a trivial node where it became ready: exactly what executing it and
 * propagating its outputs would do, without a trip through the scheduler.
 * Trivial (core/sched_plan.c) means nobody fetches it and it is a Const, a
 * one-input Identity-like op, a Switch, a Merge without a value_index reader
 * or a LoopCond; a loop has several per iteration. Returns 0 when settled,
 * -1 on error, and 1 when the node must run normally after all: a bad Switch
 * predicate or a cancelled LoopCond, whose errors execute() reports. Caller
 * holds f->mu. */
static int settle_trivial(dfx_exec *ex, int node, bool dead, int dead_src, dfx_frame *f, dfx_iter *it,
                          dfx_ready *ready, int depth) {
  const dfx_pnode *n = &ex->plan->nodes[node];
  dfx_tensor *out[2] = {NULL, NULL};
  dfx_tensor **in = it->inputs + n->input_start;
  if (!dead && !dfx__move_outputs(n, in, out, __atomic_load_n(ex->cancelled, __ATOMIC_RELAXED))) return 1;
  /* What is left in the input slots is dropped, as when a node runs. */
  for (int i = 0; i < n->n_in; i++)
    if (in[i]) {
      dfx__tensor_unref(in[i]);
      in[i] = NULL;
    }
  int r = activate_at(ex, n, dead, dead_src, f, it, out, true, ready, depth) ? -1 : 0;
  dfx__tensor_unref(out[0]);
  dfx__tensor_unref(out[1]);
  return r;
}

/* Puts outputs[pe->src_slot] into the consumer's input slot: moved on the
 * slot's last edge when the caller gives up its references, else shared. */
static inline void store_input(dfx_iter *it, const dfx_pedge *pe, dfx_tensor **outputs, bool consume) {
  dfx_tensor **slot = &it->inputs[pe->dst_input];
  if (*slot) dfx__tensor_unref(*slot); /* only an ill-formed graph delivers twice */
  if (pe->is_last && consume) {
    *slot = outputs[pe->src_slot];
    outputs[pe->src_slot] = NULL;
  } else {
    *slot = dfx__tensor_ref(outputs[pe->src_slot]);
  }
}

static int activate_at(dfx_exec *ex, const dfx_pnode *src, bool src_dead, int src_dead_src, dfx_frame *f,
                       dfx_iter *it, dfx_tensor **outputs, bool consume, dfx_ready *ready, int depth) {
  if (src->n_edges == 0) return 0; /* edges is NULL then: no pointer arithmetic on it */
  /* A dead input remembers which Switch started the deadness. */
  const int why = src_dead ? src_dead_src : (src->ctrl == DFX_CTRL_SWITCH ? src->id + 1 : 0);
  const bool src_enter = src->ctrl == DFX_CTRL_ENTER;
  /* Not restrict: settling a consumer below updates these arrays too. */
  int32_t *pending = it->pending, *dead = it->dead;
  for (const dfx_pedge *pe = src->edges, *end = pe + src->n_edges; pe < end; pe++) {
    const int loc = pe->dst_local;
    const bool ctrl = pe->dst_input < 0;
    dfx_tensor *val = ctrl ? NULL : outputs[pe->src_slot];
    bool dst_dead;
    if (pe->dst_kind != DFX_DST_MERGE) {
      /* Every input counts once; any dead one makes the node dead. */
      if (val) store_input(it, pe, outputs, consume);
      if (src_dead || (!ctrl && !val)) {
        dead[loc]++;
        if (!it->dead_src[loc]) it->dead_src[loc] = why;
      }
      if (--pending[loc] != 0) continue;
      dst_dead = dead[loc] > 0 && pe->dst_kind != DFX_DST_TRIGGER;
    } else {
      int32_t count = pending[loc];
      bool dst_ready;
      if (count < 0) continue; /* already started: later inputs are ignored */
      if (ctrl) {
        pending[loc] = count -= 2;
        dst_dead = dead[loc] == pe->dst_n_in;
        dst_ready = count == 0 || (count == 1 && dst_dead);
      } else if (val) {
        /* Only the first live input is kept; it fires the Merge when no
         * control input is outstanding (count == 1). */
        if (count & 1) {
          pending[loc] = count & ~1;
          store_input(it, pe, outputs, consume);
        }
        dst_dead = false;
        dst_ready = count == 1;
      } else {
        dead[loc]++;
        if (!it->dead_src[loc]) it->dead_src[loc] = why;
        /* "or X is an Enter": a loop in a dead branch must still finish. */
        dst_dead = dead[loc] == pe->dst_n_in || src_enter;
        dst_ready = count == 1 && dst_dead;
      }
      if (!dst_ready) continue;
      pending[loc] = -1; /* started: late inputs are dropped */
    }
    /* dst is ready. */
    if (dst_dead && pe->dst_kind == DFX_DST_EXIT && ex->settle_dead_exits) {
      /* What running the dead Exit would do (see dfx__propagate): every
       * non-final iteration of a loop has one per loop variable. */
      if (it->iter_num == f->iteration_count && dfx__held_push(&f->dead_exits, pe->dst, NULL, it->dead_src[loc])) {
        ex->fail(ex, DFX_ENOMEM, "out of memory");
        return -1;
      }
      if (pe->dst_fetched) ex->dead_fetch(ex, pe->dst, it->dead_src[loc]);
      continue;
    }
    if (pe->dst_trivial && ex->settle_trivial && depth < SETTLE_DEPTH) {
      int r = settle_trivial(ex, pe->dst, dst_dead, dst_dead ? it->dead_src[loc] : 0, f, it, ready, depth + 1);
      if (r < 0) return -1;
      if (r == 0) continue;
    }
    if (dfx__ready_add(ready, pe->dst, dst_dead, dst_dead ? it->dead_src[loc] : 0, f, it)) return -1;
    it->outstanding_ops++;
  }
  return 0;
}

static inline int activate_nodes(dfx_exec *ex, const dfx_pnode *src, bool src_dead, int src_dead_src, dfx_frame *f,
                                 dfx_iter *it, dfx_tensor **outputs, bool consume, dfx_ready *ready) {
  return activate_at(ex, src, src_dead, src_dead_src, f, it, outputs, consume, ready, 0);
}

/* ---- iterations (§2.5) ---- */

static bool iteration_done(const dfx_frame *f, const dfx_iter *it) {
  if (it->outstanding_ops != 0 || it->outstanding_frame_count != 0) return false;
  if (it->iter_num == 0) return f->num_pending_inputs == 0;
  return dfx__frame_iter(f, it->iter_num - 1) == NULL;
}

static bool frame_done(const dfx_frame *f) { return f->num_pending_inputs == 0 && f->num_outstanding_iterations == 0; }

/* Starts iteration count+1: deferred NextIteration values and loop
 * invariants are delivered to it. Caller holds f->mu. */
static int increment_iteration(dfx_exec *ex, dfx_frame *f, dfx_ready *ready) {
  if (ex->max_iterations > 0 && f->iteration_count + 1 >= ex->max_iterations) {
    ex->fail(ex, DFX_ELIMIT, "while-loop frame '%s' exceeded the maximum of %lld iterations", f->name,
             (long long)ex->max_iterations);
    return -1;
  }
  int64_t next = ++f->iteration_count;
  dfx_iter *it = dfx__iter_new(ex, f, next);
  if (!it) {
    ex->fail(ex, DFX_ENOMEM, "out of memory starting iteration %lld of frame '%s'", (long long)next, f->name);
    return -1;
  }
  f->ring[next % (f->max_parallel + 1)] = it;
  f->num_outstanding_iterations++;
  for (int i = 0; i < f->dead_exits.n; i++) dfx__tensor_unref(f->dead_exits.v[i].value);
  f->dead_exits.n = 0;
  const dfx_plan *p = ex->plan;
  /* Deferred NextIteration outputs come first, then the invariants. */
  int n_roots = f->next_iter_roots.n;
  for (int i = 0; i < n_roots; i++) {
    dfx_held *h = &f->next_iter_roots.v[i];
    dfx_tensor *out[1] = {h->value};
    int r = activate_nodes(ex, &p->nodes[h->node], false, 0, f, it, out, true, ready);
    dfx__tensor_unref(out[0]);
    h->value = NULL;
    if (r) return -1;
  }
  f->next_iter_roots.n = 0;
  for (int i = 0; i < f->inv_values.n; i++) {
    dfx_held *h = &f->inv_values.v[i];
    dfx_tensor *out[1] = {h->value};
    if (activate_nodes(ex, &p->nodes[h->node], h->value == NULL, h->dead_src, f, it, out, false, ready)) return -1;
  }
  return 0;
}

/* Deletes finished iterations from `it` onwards and starts deferred ones.
 * Caller holds f->mu. Returns whether the frame is done. */
static bool cleanup_iterations(dfx_exec *ex, dfx_frame *f, dfx_iter *it, dfx_ready *ready, int *err) {
  int64_t k = it->iter_num;
  while (k <= f->iteration_count) {
    dfx_iter *cur = dfx__frame_iter(f, k);
    if (!cur || !iteration_done(f, cur)) break;
    f->ring[k % (f->max_parallel + 1)] = NULL;
    dfx__iter_release(ex, f, cur);
    f->num_outstanding_iterations--;
    k++;
    if (f->next_iter_roots.n > 0 && increment_iteration(ex, f, ready)) *err = 1;
  }
  return frame_done(f);
}

/* One node of iteration `it` finished. Caller holds f->mu. */
static bool decrement_outstanding(dfx_exec *ex, dfx_frame *f, dfx_iter *it, dfx_ready *ready, int *err) {
  if (--it->outstanding_ops != 0) return false;
  if (!f->parent) return false; /* the root frame lives until the run ends */
  return cleanup_iterations(ex, f, it, ready, err);
}

/* ---- frames (§2.5) ---- */

static dfx_frame *find_or_create_child(dfx_exec *ex, dfx_frame *f, dfx_iter *it, int sframe, int *err) {
  LOCK(ex, f);
  for (dfx_frame *c = it->children; c; c = c->next_sibling)
    if (c->sframe == sframe) {
      UNLOCK(ex, f);
      return c;
    }
  dfx_frame *c = dfx__frame_new(ex, sframe, f, it);
  if (!c) {
    UNLOCK(ex, f);
    ex->fail(ex, DFX_ENOMEM, "out of memory creating frame '%s'", ex->plan->frames[sframe].name);
    *err = 1;
    return NULL;
  }
  c->next_sibling = it->children;
  it->children = c;
  it->outstanding_frame_count++;
  UNLOCK(ex, f);
  return c;
}

static void delete_frame(dfx_exec *ex, dfx_frame *f, dfx_ready *ready, int *err);

/* A child frame of (f, it) finished: the iteration may now be done. */
static void cleanup_frames_iterations(dfx_exec *ex, dfx_frame *f, dfx_iter *it, dfx_ready *ready, int *err) {
  LOCK(ex, f);
  it->outstanding_frame_count--;
  bool done = f->parent ? cleanup_iterations(ex, f, it, ready, err) : false;
  UNLOCK(ex, f);
  if (done) delete_frame(ex, f, ready, err);
}

/* Delivers the held-back dead Exits to the parent iteration, unlinks the
 * frame and recurses upwards (DeleteFrame). */
static void delete_frame(dfx_exec *ex, dfx_frame *f, dfx_ready *ready, int *err) {
  dfx_frame *parent = f->parent;
  dfx_iter *pit = f->parent_iter;
  const dfx_plan *p = ex->plan;
  LOCK(ex, parent);
  for (int i = 0; i < f->dead_exits.n; i++) {
    const dfx_pnode *x = &p->nodes[f->dead_exits.v[i].node];
    dfx_tensor *none[1] = {NULL}; /* an Exit has exactly one output */
    if (activate_nodes(ex, x, true, f->dead_exits.v[i].dead_src, parent, pit, none, false, ready)) *err = 1;
  }
  /* Unlink from the parent iteration's children. */
  for (dfx_frame **pp = &pit->children; *pp; pp = &(*pp)->next_sibling)
    if (*pp == f) {
      *pp = f->next_sibling;
      break;
    }
  UNLOCK(ex, parent);
  dfx__frame_release(ex, f);
  cleanup_frames_iterations(ex, parent, pit, ready, err);
}

/* ---- PropagateOutputs ---- */

dfx_code dfx__propagate(dfx_exec *ex, const dfx_tagged *t, dfx_tensor **outputs, dfx_ready *ready) {
  const dfx_pnode *n = &ex->plan->nodes[t->node];
  dfx_frame *f = t->frame;
  dfx_iter *it = t->iter;
  bool done = false;
  int err = 0;
  switch (n->ctrl) {
    /* Enter: deliver into the child frame, iteration 0 (or every iteration
     * for a loop invariant); one fewer pending Enter. */
    case DFX_CTRL_ENTER: {
      dfx_frame *c = find_or_create_child(ex, f, it, n->child_frame, &err);
      if (!c) break;
      LOCK(ex, c);
      if (n->is_constant_enter) {
        dfx_tensor *v = t->dead ? NULL : dfx__tensor_ref(outputs[0]);
        if (dfx__held_push(&c->inv_values, t->node, v, t->dead_src)) {
          dfx__tensor_unref(v);
          ex->fail(ex, DFX_ENOMEM, "out of memory");
          err = 1;
        }
        for (int64_t k = 0; k <= c->iteration_count && !err; k++) {
          dfx_iter *ci = dfx__frame_iter(c, k);
          if (ci && activate_nodes(ex, n, t->dead, t->dead_src, c, ci, outputs, false, ready)) err = 1;
        }
      } else {
        if (activate_nodes(ex, n, t->dead, t->dead_src, c, dfx__frame_iter(c, 0), outputs, true, ready)) err = 1;
      }
      c->num_pending_inputs--;
      UNLOCK(ex, c);
      LOCK(ex, f);
      done = decrement_outstanding(ex, f, it, ready, &err);
      UNLOCK(ex, f);
      break;
    }
    /* Exit: a live value leaves at once; a dead one is held until the frame
     * is deleted, and only if it comes from the newest iteration. */
    case DFX_CTRL_EXIT:
      if (t->dead) {
        LOCK(ex, f);
        if (it->iter_num == f->iteration_count && dfx__held_push(&f->dead_exits, t->node, NULL, t->dead_src)) {
          ex->fail(ex, DFX_ENOMEM, "out of memory");
          err = 1;
        }
        done = decrement_outstanding(ex, f, it, ready, &err);
        UNLOCK(ex, f);
      } else {
        LOCK(ex, f->parent);
        if (activate_nodes(ex, n, false, 0, f->parent, f->parent_iter, outputs, true, ready)) err = 1;
        UNLOCK(ex, f->parent);
        LOCK(ex, f);
        done = decrement_outstanding(ex, f, it, ready, &err);
        UNLOCK(ex, f);
      }
      break;
    /* NextIteration: a dead one stops deadness; a live one feeds iteration
     * k+1, creating it unless parallel_iterations are already in flight. */
    case DFX_CTRL_NEXT_ITERATION:
      LOCK(ex, f);
      if (!t->dead) {
        dfx_iter *out_it = NULL;
        if (it->iter_num == f->iteration_count) {
          if (f->num_outstanding_iterations == f->max_parallel) {
            if (dfx__held_push(&f->next_iter_roots, t->node, outputs[0], 0)) {
              ex->fail(ex, DFX_ENOMEM, "out of memory");
              err = 1;
            } else {
              outputs[0] = NULL;
            }
          } else if (increment_iteration(ex, f, ready)) {
            err = 1;
          } else {
            out_it = dfx__frame_iter(f, it->iter_num + 1);
          }
        } else {
          out_it = dfx__frame_iter(f, it->iter_num + 1);
        }
        if (out_it && activate_nodes(ex, n, false, 0, f, out_it, outputs, true, ready)) err = 1;
      }
      done = decrement_outstanding(ex, f, it, ready, &err);
      UNLOCK(ex, f);
      break;
    /* Everything else (Switch, Merge, LoopCond, ControlTrigger and compute
     * ops) activates its consumers in the same frame and iteration. */
    default:
      LOCK(ex, f);
      if (activate_nodes(ex, n, t->dead, t->dead_src, f, it, outputs, true, ready)) {
        ex->fail(ex, DFX_ENOMEM, "out of memory");
        err = 1;
      }
      done = decrement_outstanding(ex, f, it, ready, &err);
      UNLOCK(ex, f);
      break;
  }
  if (done) delete_frame(ex, f, ready, &err);
  return err ? DFX_ENOMEM : DFX_OK;
}

dfx_code dfx__activate_roots(dfx_exec *ex, dfx_ready *ready) {
  const dfx_plan *p = ex->plan;
  dfx_iter *it = ex->root->ring[0];
  for (int i = 0; i < p->n_roots; i++) {
    if (dfx__ready_add(ready, p->roots[i], false, 0, ex->root, it)) return DFX_ENOMEM;
    it->outstanding_ops++;
  }
  return DFX_OK;
}
