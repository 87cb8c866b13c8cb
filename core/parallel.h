/* parallel.h - intra-op parallelism for kernels (TF's Shard, Eigen's
 * parallelFor): split one kernel's work into blocks and run them on the
 * caller plus threads of the session's pool that are idle right now.
 *
 * The kernel-author API is dfx__kctx_parallel_for (declared in kernel.h):
 *
 *   static void tanh_block(void *arg, int64_t begin, int64_t end) {
 *     const job *j = arg;
 *     for (int64_t i = begin; i < end; i++) j->y[i] = tanhf(j->x[i]);
 *   }
 *   ...
 *   job j = {x, y};
 *   dfx__kctx_parallel_for(ctx, n, &(dfx_par_cost){.unit_ns = 0.3}, tanh_block, &j);
 *
 * Contract for fn: it is called with disjoint [begin, end) ranges that
 * together cover [0, n) exactly once, possibly concurrently on different
 * threads and in any order; each range is a multiple of `grain` long except
 * the last. fn must not fail: check inputs before, and let each block write
 * only its own part of the output (a reduction gives each block its own
 * partial slot, then combines them after the call). parallel_for returns
 * when every block has finished. It is always correct to call: with no pool
 * (n_threads = 1), no idle thread, or little work it simply runs
 * fn(arg, 0, n) on the calling thread. It may be nested (fn may call it).
 *
 * Idle threads only: the pool lends a block to a thread only while that
 * thread is asleep with nothing queued, so when the graph itself keeps every
 * core busy (independent nodes, parallel loop iterations) kernels run whole,
 * as before, and nothing waits for a helper that never comes: a block nobody
 * has claimed yet is run by the caller itself.
 *
 * The executor provides the `dfx_parallel` behind ctx->par (exec/pool.c);
 * tests may plug in their own (tests/kernels/kharness.h). */
#ifndef DFX_PARALLEL_H
#define DFX_PARALLEL_H

#include <stdint.h>

/* Runs blocks of a parallel_for: fn(arg, begin, end). */
typedef void (*dfx_shard_fn)(void *arg, int64_t begin, int64_t end);

/* What a parallel_for needs to know to choose its blocks. */
typedef struct dfx_par_cost {
  /* Estimated nanoseconds per unit of work on one core (an element, a row,
   * a matrix): the total decides whether splitting pays for the wake-up of
   * a sleeping thread (a few microseconds). */
  double unit_ns;
  /* Blocks are multiples of this many units (0 or 1: any size): a vector
   * width, so SIMD loops have no ragged middle, or a cache line's worth of
   * output, so two threads never write the same line. */
  int64_t grain;
  /* Blocks per participating thread. 1 for work with a per-call setup cost
   * (sgemm packs its operands once per call); 0 means the default, 4, which
   * lets the caller take over the blocks of a helper that starts late on a
   * busy machine. */
  int blocks_per_thread;
} dfx_par_cost;

/* A pool's view for parallel_for (implemented by exec/pool.c). */
typedef struct dfx_parallel {
  /* How many threads are asleep with nothing to do right now (a hint, read
   * without locking). */
  int (*idle)(void *impl);
  /* Runs block(ud, b) for every b in [0, n_blocks) on the calling thread
   * and up to `helpers` idle threads, and returns when all have finished.
   * Blocks are claimed one at a time, so the caller runs any a helper did
   * not start. */
  void (*run)(void *impl, int n_blocks, int helpers, void (*block)(void *ud, int b), void *ud);
  void *impl;
} dfx_parallel;

/* Below this much estimated work (ns), a parallel_for never splits: waking a
 * thread and joining it costs a few microseconds. */
#define DFX_PAR_MIN_NS 20000.0
/* No block is planned smaller than this (ns of estimated work). */
#define DFX_PAR_MIN_BLOCK_NS 8000.0

/* The blocking plan parallel_for would use for n units on 1 + idle threads:
 * the number of blocks (>= 1) and their length in units. Exposed for tests. */
int dfx__par_plan(int64_t n, const dfx_par_cost *cost, int idle, int *helpers, int64_t *block_len);

/* Runs fn over [0, n) with `par` (NULL: on the caller). kernel.h's
 * dfx__kctx_parallel_for is this with ctx->par. */
void dfx__parallel_for(const dfx_parallel *par, int64_t n, const dfx_par_cost *cost, dfx_shard_fn fn, void *arg);

#endif
