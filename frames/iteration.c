/* iteration.c - the lifecycle of iterations and frame instances
 * (tf-semantics §2.5): child frames created by Enters, new iterations
 * started by NextIteration (IncrementIteration), finished iterations
 * deleted in order (CleanupIterations) and finished frames deleted with
 * their held-back dead Exits delivered (DeleteFrame). The per-op rules that
 * call into this are in control.c; the locking rule is in frame.h. */
#include "frame.h"
#include "invariant.h"

/* IsIterationDone: no node running or ready, no live child frame, every
 * Enter arrived (iteration 0), and the previous iteration already gone. */
static bool iteration_done(const dfx_frame *f, const dfx_iter *it) {
  if (it->outstanding_ops != 0 || it->outstanding_frame_count != 0) return false;
  if (it->iter_num == 0) return f->num_pending_inputs == 0;
  return dfx__frame_iter(f, it->iter_num - 1) == NULL;
}

static bool frame_done(const dfx_frame *f) { return f->num_pending_inputs == 0 && f->num_outstanding_iterations == 0; }

int dfx__iteration_increment(dfx_prop *p, dfx_frame *f, dfx_ready *ready) {
  if (p->max_iterations > 0 && f->iteration_count + 1 >= p->max_iterations) {
    dfx__status_set_first(ready->st, DFX_ELIMIT, "while-loop frame '%s' exceeded the maximum of %lld iterations", f->name,
                          (long long)p->max_iterations);
    return -1;
  }
  int64_t next = ++f->iteration_count;
  DFX_ASSERT(dfx__frame_iter(f, next) == NULL); /* the ring slot was freed by CleanupIterations */
  dfx_iter *it = dfx__iter_new(p, f, next);
  if (!it) {
    dfx__status_set_first(ready->st, DFX_ENOMEM, "out of memory starting iteration %lld of frame '%s'", (long long)next,
                          f->name);
    return -1;
  }
  f->ring[next % (f->max_parallel + 1)] = it;
  f->num_outstanding_iterations++;
  DFX_ASSERT(f->num_outstanding_iterations <= f->max_parallel);
  /* Only the newest iteration's dead Exits can leave the frame. */
  for (int i = 0; i < f->dead_exits.n; i++) dfx__tensor_unref(f->dead_exits.v[i].value);
  f->dead_exits.n = 0;
  /* Deferred NextIteration outputs come first, then the invariants. */
  int n_roots = f->next_iter_roots.n;
  for (int i = 0; i < n_roots; i++) {
    dfx_held *h = &f->next_iter_roots.v[i];
    dfx_tensor *out[1] = {h->value};
    int r = dfx__ctrl_activate(p, h->node, false, 0, f, it, out, true, ready);
    dfx__tensor_unref(out[0]);
    h->value = NULL;
    if (r) return -1;
  }
  f->next_iter_roots.n = 0;
  for (int i = 0; i < f->inv_values.n; i++) {
    dfx_held *h = &f->inv_values.v[i];
    dfx_tensor *out[1] = {h->value};
    if (dfx__ctrl_activate(p, h->node, h->value == NULL, h->dead_src, f, it, out, false, ready)) return -1;
  }
  return 0;
}

/* This is how the parallel_iterations bound releases: deleting the oldest
 * iteration starts a deferred one. */
bool dfx__iteration_cleanup(dfx_prop *p, dfx_frame *f, dfx_iter *it, dfx_ready *ready) {
  int64_t k = it->iter_num;
  while (k <= f->iteration_count) {
    dfx_iter *cur = dfx__frame_iter(f, k);
    if (!cur || !iteration_done(f, cur)) break;
    f->ring[k % (f->max_parallel + 1)] = NULL;
    dfx__iter_release(p, f, cur);
    f->num_outstanding_iterations--;
    DFX_ASSERT(f->num_outstanding_iterations >= 0);
    k++;
    if (f->next_iter_roots.n > 0) dfx__iteration_increment(p, f, ready);
  }
  return frame_done(f);
}

dfx_frame *dfx__iteration_child(dfx_prop *p, dfx_frame *f, dfx_iter *it, int sframe, dfx_ready *ready) {
  dfx__frame_lock(p, f);
  for (dfx_frame *c = it->children; c; c = c->next_sibling)
    if (c->sframe == sframe) {
      dfx__frame_unlock(p, f);
      return c;
    }
  dfx_frame *c = dfx__frame_new(p, sframe, f, it);
  if (!c) {
    dfx__frame_unlock(p, f);
    dfx__status_set_first(ready->st, DFX_ENOMEM, "out of memory creating frame '%s'", p->flow->frames[sframe].name);
    return NULL;
  }
  c->next_sibling = it->children;
  it->children = c;
  it->outstanding_frame_count++;
  dfx__frame_unlock(p, f);
  return c;
}

/* A child frame of (f, it) finished: the iteration may now be done
 * (CleanupFramesIterations). */
static void child_done(dfx_prop *p, dfx_frame *f, dfx_iter *it, dfx_ready *ready) {
  dfx__frame_lock(p, f);
  it->outstanding_frame_count--;
  DFX_ASSERT(it->outstanding_frame_count >= 0);
  bool done = f->parent ? dfx__iteration_cleanup(p, f, it, ready) : false;
  dfx__frame_unlock(p, f);
  if (done) dfx__iteration_delete_frame(p, f, ready);
}

void dfx__iteration_delete_frame(dfx_prop *p, dfx_frame *f, dfx_ready *ready) {
  dfx_frame *parent = f->parent;
  dfx_iter *pit = f->parent_iter;
  dfx__frame_lock(p, parent);
  /* Op: Exit, dead: the held-back dead Exits go to the parent now, with the
   * same Merge and ControlTrigger rules as any delivery. */
  for (int i = 0; i < f->dead_exits.n; i++) {
    dfx_tensor *none[1] = {NULL}; /* an Exit has exactly one output */
    dfx__ctrl_activate(p, f->dead_exits.v[i].node, true, f->dead_exits.v[i].dead_src, parent, pit, none, false, ready);
  }
  for (dfx_frame **pp = &pit->children; *pp; pp = &(*pp)->next_sibling)
    if (*pp == f) {
      *pp = f->next_sibling;
      break;
    }
  dfx__frame_unlock(p, parent);
  dfx__frame_release(p, f);
  child_done(p, parent, pit, ready);
}
