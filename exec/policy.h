/* policy.h - the scheduling policy, in one place (tf-semantics §3.4).
 *
 * Where a ready node instance runs:
 *   - Control ops, kernels flagged DFX_KERNEL_CHEAP and dead instances run
 *     on the thread that readied them, next, in FIFO order, so a scalar
 *     while loop never changes thread (TF's inline queue).
 *   - Other kernels run inline too while their running cost estimate is
 *     below DFX_INLINE_COST_NS: a hop to another worker costs several
 *     microseconds (a futex wake-up), more than a small MatMul. Above it they
 *     go to the session's pool, except the last expensive node of a batch,
 *     which stays here when nothing else is queued.
 *   - Nodes that only move tensors (dfx__flow_trivial) are not scheduled at
 *     all: propagation settles them where they become ready, and dead Exits
 *     too, unless a trace is recorded (then every instance must show).
 *   - Queued nodes wake nobody at once: the running thread nudges sleeping
 *     workers before it starts an expensive kernel and every DFX_NUDGE_EVERY
 *     nodes, and takes what is left itself when it runs out of work. A loop
 *     that cannot overlap then stays on one thread.
 * The cost estimate is TF's: it starts at DFX_INITIAL_COST_NS (expensive
 * until measured), and updates as (9 old + measured) / 10 on every run until
 * the first measurement, then on about one run in 8, chosen at random (two
 * clock reads cost as much as a small MatMul, and a fixed stride could keep
 * missing the same node of a loop body). */
#ifndef DFX_POLICY_H
#define DFX_POLICY_H

#include <stdbool.h>
#include <stdint.h>

#include "plan.h"

#define DFX_INLINE_COST_NS 20000
#define DFX_INITIAL_COST_NS 100000000
/* Nodes between nudges of sleeping workers, and between deadline checks. */
#define DFX_NUDGE_EVERY 64
#define DFX_DEADLINE_CHECK_EVERY 1024

/* Whether a node always runs where it became ready: control ops, feeds and
 * cheap kernels. Fixed at plan time. */
static inline bool dfx__policy_always_inline(const dfx_fnode *f, const dfx_pnode *x) {
  return f->ctrl != DFX_CTRL_NONE || !x->kernel || (x->kernel->flags & DFX_KERNEL_CHEAP);
}

/* The starting estimate of a plan node. */
static inline int64_t dfx__policy_initial_cost(const dfx_pnode *x) {
  return x->inline_ok ? 0 : DFX_INITIAL_COST_NS;
}

/* Whether a ready instance runs on this thread rather than in the pool. */
static inline bool dfx__policy_runs_inline(const dfx_plan *p, bool have_pool, int node, bool dead) {
  return !have_pool || dead || __atomic_load_n(&p->cost_ns[node], __ATOMIC_RELAXED) < DFX_INLINE_COST_NS;
}

/* Whether to time this execution of a not-always-cheap kernel; `rng` is the
 * running thread's xorshift32 state. */
static inline bool dfx__policy_should_time(const dfx_plan *p, int node, uint32_t *rng) {
  /* A blocking kernel keeps its expensive initial estimate: it always goes
   * to the pool, whatever one wait measured. */
  const dfx_kernel_def *k = p->nodes[node].kernel;
  if (k && (k->flags & DFX_KERNEL_BLOCKING)) return false;
  uint32_t r = *rng;
  r ^= r << 13;
  r ^= r >> 17;
  r ^= r << 5;
  *rng = r;
  return (r & 7) == 0 || __atomic_load_n(&p->cost_ns[node], __ATOMIC_RELAXED) >= DFX_INITIAL_COST_NS;
}

/* Folds a measured kernel time into the node's estimate. */
static inline void dfx__policy_cost_update(const dfx_plan *p, int node, uint64_t ns) {
  int64_t *c = &p->cost_ns[node];
  int64_t old = __atomic_load_n(c, __ATOMIC_RELAXED);
  int64_t now = (int64_t)(ns > (uint64_t)INT64_MAX / 2 ? INT64_MAX / 2 : ns);
  __atomic_store_n(c, old >= DFX_INITIAL_COST_NS ? now : (9 * old + now) / 10, __ATOMIC_RELAXED);
}

/* Whether propagation may settle trivial nodes and dead Exits in place. */
static inline bool dfx__policy_settle(bool tracing) { return !tracing; }

#endif
