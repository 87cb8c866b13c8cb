/* frame.h - per-run frame and iteration state (tf-semantics §2.5, §3.2).
 *
 * Locking rule (the one place it is written down):
 *   - dfx_frame.mu guards everything in that frame instance and in its
 *     iterations: pending/dead counts, input slots of nodes that have not
 *     started, outstanding counters, the ring, the deferred lists and the
 *     children list of each of its iterations.
 *   - Locks nest parent frame before child frame, and only in DeleteFrame;
 *     elsewhere at most one frame lock is held at a time.
 *   - dfx_exec.mu guards the per-run frame free lists and the live-frame list;
 *     it is never held while taking a frame lock.
 *   - A run without worker threads (dfx_exec.threaded false) takes no frame
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

#include "plan.h"
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
  int32_t *dead_src;            /* plan id + 1 of the Switch whose untaken branch killed it */
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
  int sframe;                   /* static frame index in the plan */
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

typedef struct dfx_ready {
  dfx_tagged *v;
  int n, cap;
  dfx_tagged small[16];         /* avoids heap use for the common case */
} dfx_ready;

/* Per-run executor state that the propagator needs. */
typedef struct dfx_exec {
  const dfx_plan *plan;
  uv_mutex_t mu;                /* guards free_frames and live list */
  dfx_frame **free_frames;      /* per static frame */
  dfx_frame *live;              /* every frame instance alive in this run */
  dfx_frame *root;
  int64_t max_iterations;       /* 0: unlimited */
  bool threaded;                /* nodes may run on several threads: take frame locks */
  /* Dead Exits and trivial nodes (Const, Identity) are settled where they
   * become ready instead of being scheduled. Both are off while tracing, so
   * every node instance shows in the trace. */
  bool settle_dead_exits;
  bool settle_trivial;
  const int *cancelled;         /* the run's cancel flag (atomic): a settled LoopCond checks it */
  /* Nodes found waiting for inputs in iterations that were deleted anyway
   * (ill-formed graphs); guarded by mu; reported if the run gets stuck. */
  int n_stuck;
  struct {
    int node;
    const char *frame;
    int64_t iter;
    int32_t pending;
  } stuck[8];
  /* Records the first run error (called without frame locks held or with
   * one; it only touches run-level state). */
  void (*fail)(struct dfx_exec *ex, dfx_code code, const char *fmt, ...);
  /* A dead instance of fetched node `node` was settled without running:
   * the run records the deadness as if it had run. */
  void (*dead_fetch)(struct dfx_exec *ex, int node, int dead_src);
} dfx_exec;

/* A node that got some but not all of its inputs (or a dead one) in an
 * iteration: only ill-formed graphs leave one behind when the iteration
 * ends. 0 or 1, computed without branches: it is checked for every node of
 * every finished iteration. */
static inline int dfx__partly_activated(int32_t pending, int32_t pending_init, int32_t dead) {
  return (pending > 0) & ((pending != pending_init) | (dead != 0));
}

static inline dfx_iter *dfx__frame_iter(const dfx_frame *f, int64_t k) {
  return f->ring[k % (f->max_parallel + 1)];
}

/* ---- frame.c: allocation and teardown ---- */
dfx_code dfx__exec_init(dfx_exec *ex, const dfx_plan *plan);
/* Frees every frame still alive (after errors) and the free lists. */
void dfx__exec_destroy(dfx_exec *ex);
/* A new frame instance for static frame sf (NULL when out of memory). */
dfx_frame *dfx__frame_new(dfx_exec *ex, int sf, dfx_frame *parent, dfx_iter *parent_iter);
void dfx__frame_release(dfx_exec *ex, dfx_frame *f);
/* A fresh iteration of f with initial pending counts (NULL when out of memory). */
dfx_iter *dfx__iter_new(dfx_exec *ex, dfx_frame *f, int64_t num);
void dfx__iter_release(dfx_exec *ex, dfx_frame *f, dfx_iter *it);
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
void dfx__ready_init(dfx_ready *r);
void dfx__ready_free(dfx_ready *r);

/* ---- propagate.c: tf-semantics §2.4-2.5 ---- */
/* Propagates the outputs of a finished node (outputs[k] are references the
 * propagator consumes: moved into slots or dropped) and appends newly ready
 * nodes to `ready`. Returns DFX_OK or DFX_ENOMEM/DFX_ELIMIT (after ex->fail). */
dfx_code dfx__propagate(dfx_exec *ex, const dfx_tagged *t, dfx_tensor **outputs, dfx_ready *ready);
/* Nodes of the root frame that start the run. */
dfx_code dfx__activate_roots(dfx_exec *ex, dfx_ready *ready);

#endif
