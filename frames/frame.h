/* frame.h - per-run frame and iteration state (tf-semantics §2.5, §3.2):
 * the propagator's mutable side of a flow graph (flow.h).
 *
 * Locking rule (the one place it is written down):
 *   - dfx_frame.mu guards everything in that frame instance and in its
 *     iterations: pending/dead counts, input slots of nodes that have not
 *     started, outstanding counters, the ring, the deferred lists and the
 *     children list of each of its iterations.
 *   - Locks nest parent frame before child frame, and only in DeleteFrame;
 *     elsewhere at most one frame lock is held at a time.
 *   - dfx_prop.mu guards the per-run frame free lists, the live-frame list
 *     and the stuck list; it is never held while taking a frame lock.
 *   - A run without worker threads (dfx_prop.threaded false) takes no frame
 *     locks at all: everything in it happens on one thread.
 *   - A node's own input slots are read and cleared without a lock once the
 *     node is ready: no other node writes them in that iteration any more
 *     (a Merge's late inputs are dropped, never stored, after it started). */
#ifndef DFX_FRAME_H
#define DFX_FRAME_H

#include <stdbool.h>
#include <sched.h>
#include <stdint.h>
#include <uv.h>

#include "flow.h"
#include "invariant.h"
#include "status.h"
#include "tensor.h"

struct dfx_frame;

/* Frame locks are held for a few dozen instructions per node. A spin lock
 * takes one atomic exchange and releases with a plain store, where a mutex
 * costs two atomics and two library calls on every node of a threaded run.
 * A waiter yields the CPU every 64 spins, so a holder that was preempted
 * (two cores, more threads) does not stall the others for long. */
typedef struct dfx_spin {
  int v;
} dfx_spin;

static inline void dfx__spin_lock(dfx_spin *l) {
  unsigned n = 0;
  while (__atomic_exchange_n(&l->v, 1, __ATOMIC_ACQUIRE)) {
    while (__atomic_load_n(&l->v, __ATOMIC_RELAXED)) {
      if ((++n & 63) == 0) sched_yield();
#if defined(__x86_64__) || defined(__i386__)
      else __builtin_ia32_pause();
#endif
    }
  }
}
static inline void dfx__spin_unlock(dfx_spin *l) { __atomic_store_n(&l->v, 0, __ATOMIC_RELEASE); }

typedef struct dfx_iter {
  int64_t iter_num;
  int outstanding_ops;          /* ready or running nodes of this iteration */
  int outstanding_frame_count;  /* live child frames created in this iteration */
  int32_t *pending;             /* per frame-local node */
  int32_t *dead;
  int32_t *dead_src;            /* flow index + 1 of the Switch whose untaken branch killed it */
  dfx_tensor **inputs;          /* the frame's total_inputs slots */
  struct dfx_frame *children;   /* child frame instances created in this iteration */
  struct dfx_iter *next_free;   /* frame-local free list of iteration blocks */
} dfx_iter;

/* A (node, value) pair kept for later activation: deferred NextIteration
 * outputs and loop invariants. */
typedef struct dfx_held {
  int node;
  dfx_tensor *value;            /* NULL: dead */
  int dead_src;
} dfx_held;

typedef struct dfx_held_vec {
  dfx_held *v;
  int n, cap;
} dfx_held_vec;

typedef struct dfx_frame {
  dfx_spin mu;
  int sframe;                   /* static frame index in the flow */
  const char *name;
  struct dfx_frame *parent;
  dfx_iter *parent_iter;
  int64_t parent_iter_num;
  struct dfx_frame *next_sibling; /* in parent_iter->children */
  struct dfx_frame *live_prev, *live_next; /* run-wide list of live frames */
  int max_parallel;
  int num_pending_inputs;       /* Enters not yet arrived */
  int64_t iteration_count;      /* number of the newest iteration */
  int num_outstanding_iterations;
  dfx_iter **ring;              /* max_parallel + 1 slots, by iter_num % (max_parallel + 1) */
  dfx_held_vec next_iter_roots; /* NextIteration outputs waiting for a free slot */
  dfx_held_vec inv_values;      /* constant Enter values, given to every iteration */
  dfx_held_vec dead_exits;      /* dead Exits of the newest iteration (node only) */
  dfx_iter *free_iters;
  struct dfx_frame *next_free;  /* run-level free list per static frame */
} dfx_frame;

/* One runnable node instance (TF's TaggedNode). */
typedef struct dfx_tagged {
  int node;
  bool dead;
  int dead_src;
  dfx_frame *frame;
  dfx_iter *iter;
} dfx_tagged;

/* What one propagation produces: the node instances that became ready, and
 * the first error met on the way (st: the caller's status, never NULL). */
typedef struct dfx_ready {
  dfx_tagged *v;
  int n, cap;
  dfx_status *st;
  dfx_tagged small[16];         /* avoids heap use for the common case */
} dfx_ready;

/* Per-run propagator state (TF's PropagatorState). */
typedef struct dfx_prop {
  const dfx_flow *flow;
  uv_mutex_t mu;                /* guards free_frames, live and stuck */
  dfx_frame **free_frames;      /* per static frame */
  dfx_frame *live;              /* every frame instance alive in this run */
  dfx_frame *root;
  int64_t max_iterations;       /* 0: unlimited */
  bool threaded;                /* nodes may run on several threads: take frame locks */
  /* Dead Exits and trivial nodes (dfx__flow_trivial) are settled where they
   * become ready instead of being scheduled. The executor turns both off
   * while tracing, so every node instance shows in the trace. */
  bool settle_dead_exits;
  bool settle_trivial;
  const int *cancelled;         /* the run's cancel flag (atomic): a settled LoopCond checks it */
  /* Per fetched Exit (dfx_fnode.dead_slot): 0 while no dead instance was
   * settled in place, else the deadness the executor would have recorded
   * had it run that instance: the flow index + 1 of the Switch whose
   * untaken branch killed it, or -1 (atomic; first write wins). */
  int *settled_dead;
  /* Nodes found waiting for inputs in iterations that were deleted anyway
   * (ill-formed graphs); guarded by mu; reported if the run gets stuck. */
  int n_stuck;
  struct {
    int node;
    const char *frame;
    int64_t iter;
    int32_t pending;
  } stuck[8];
} dfx_prop;

/* A node that got some but not all of its inputs (or a dead one) in an
 * iteration: only ill-formed graphs leave one behind when the iteration
 * ends. 0 or 1, computed without branches: it is checked for every node of
 * every finished iteration. */
static inline int dfx__partly_activated(int32_t pending, int32_t pending_init, int32_t dead) {
  return (pending > 0) & ((pending != pending_init) | (dead != 0));
}

/* Frame locks (the rule at the top), skipped in a run without workers. */
static inline void dfx__frame_lock(const dfx_prop *p, dfx_frame *f) {
  if (p->threaded) dfx__spin_lock(&f->mu);
}
static inline void dfx__frame_unlock(const dfx_prop *p, dfx_frame *f) {
  if (p->threaded) dfx__spin_unlock(&f->mu);
}

static inline dfx_iter *dfx__frame_iter(const dfx_frame *f, int64_t k) {
  return f->ring[k % (f->max_parallel + 1)];
}

/* ---- frame.c: allocation and recycling ---- */
/* Sets up the run's state and its root frame for `flow` (borrowed).
 * DFX_ENOMEM or DFX_EINTERNAL. */
dfx_code dfx__prop_init(dfx_prop *p, const dfx_flow *flow);
/* Frees every frame still alive (after errors) and the free lists. */
void dfx__prop_destroy(dfx_prop *p);
/* A new frame instance for static frame sf (NULL when out of memory). */
dfx_frame *dfx__frame_new(dfx_prop *p, int sf, dfx_frame *parent, dfx_iter *parent_iter);
void dfx__frame_release(dfx_prop *p, dfx_frame *f);
/* A fresh iteration of f with initial pending counts (NULL when out of memory). */
dfx_iter *dfx__iter_new(dfx_prop *p, dfx_frame *f, int64_t num);
void dfx__iter_release(dfx_prop *p, dfx_frame *f, dfx_iter *it);
int dfx__held_push(dfx_held_vec *v, int node, dfx_tensor *value, int dead_src);
int dfx__ready_grow(dfx_ready *r);
/* Appends a node instance; fields are written in place (building a struct
 * on the stack and copying it was a measurable stall in tight loops). */
static inline int dfx__ready_add(dfx_ready *r, int node, bool dead, int dead_src, dfx_frame *f, dfx_iter *it) {
  if (r->n == r->cap && dfx__ready_grow(r)) return -1;
  dfx_tagged *t = &r->v[r->n++];
  t->node = node;
  t->dead = dead;
  t->dead_src = dead_src;
  t->frame = f;
  t->iter = it;
  return 0;
}
/* An empty ready list whose errors go to st (borrowed; not NULL). */
void dfx__ready_init(dfx_ready *r, dfx_status *st);
void dfx__ready_free(dfx_ready *r);

/* ---- control.c: what happens after a node finishes (tf-semantics §2.3-2.5) ---- */
/* Propagates the outputs of a finished node instance (outputs[k] are
 * references the propagator consumes: moved into slots or dropped) and
 * appends newly ready instances to `ready`. Returns DFX_OK, or DFX_ENOMEM,
 * DFX_ELIMIT or DFX_EINVAL (an ill-formed loop) with a message in ready->st
 * (a status already holding an error keeps it: the first error wins). */
dfx_code dfx__propagate(dfx_prop *p, const dfx_tagged *t, dfx_tensor **outputs, dfx_ready *ready);
/* Delivers the outputs of flow node `src` (dead or not) to its consumers in
 * (f, it) by the activation rules of §2.4, appending ready instances.
 * Caller holds f->mu. `consume`: the caller gives up its references in
 * outputs[] (moved on each slot's last edge). Returns 0, or -1 after an
 * error in ready->st. */
int dfx__ctrl_activate(dfx_prop *p, int src, bool src_dead, int src_dead_src, dfx_frame *f, dfx_iter *it,
                       dfx_tensor **outputs, bool consume, dfx_ready *ready);
/* The root-frame nodes that start the run. DFX_ENOMEM. */
dfx_code dfx__activate_roots(dfx_prop *p, dfx_ready *ready);

/* ---- iteration.c: iteration and frame lifecycle (tf-semantics §2.5) ---- */
/* Finds or creates the child frame instance `sframe` of (f, it); NULL after
 * an error in ready->st. */
dfx_frame *dfx__iteration_child(dfx_prop *p, dfx_frame *f, dfx_iter *it, int sframe, dfx_ready *ready);
/* Starts iteration count+1 of f: deferred NextIteration values and loop
 * invariants are delivered to it. Caller holds f->mu. Returns 0 or -1 after
 * an error in ready->st. */
int dfx__iteration_increment(dfx_prop *p, dfx_frame *f, dfx_ready *ready);
/* Iteration `it` of f may be finished: deletes finished iterations from it
 * on and starts deferred ones (CleanupIterations). Caller holds f->mu.
 * Returns whether the frame is now done. */
bool dfx__iteration_cleanup(dfx_prop *p, dfx_frame *f, dfx_iter *it, dfx_ready *ready);
/* One node instance of iteration `it` finished. Caller holds f->mu. Returns
 * whether the frame is now done (the caller then calls
 * dfx__iteration_delete_frame after releasing the lock); errors go to ready->st.
 * Inline: it runs once per node instance. */
static inline bool dfx__iteration_node_done(dfx_prop *p, dfx_frame *f, dfx_iter *it, dfx_ready *ready) {
  DFX_ASSERT(it->outstanding_ops > 0);
  if (--it->outstanding_ops != 0) return false;
  if (!f->parent) return false; /* the root frame lives until the run ends */
  return dfx__iteration_cleanup(p, f, it, ready);
}
/* Deletes a finished frame: delivers its held dead Exits to the parent,
 * unlinks it and cleans up upwards (DeleteFrame). No lock held. */
void dfx__iteration_delete_frame(dfx_prop *p, dfx_frame *f, dfx_ready *ready);

#endif
