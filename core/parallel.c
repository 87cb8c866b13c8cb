/* parallel.c - parallel_for's cost model and blocking (parallel.h): how many
 * threads a piece of work deserves and how it is cut. The threads
 * themselves belong to the executor's pool (exec/pool.c). */
#include "parallel.h"

#include "kernel.h"

int dfx__par_plan(int64_t n, const dfx_par_cost *cost, int idle, int *helpers, int64_t *block_len) {
  int64_t grain = cost->grain > 1 ? cost->grain : 1;
  double total = (double)n * (cost->unit_ns > 0 ? cost->unit_ns : 0);
  *helpers = 0;
  *block_len = n;
  if (n <= grain || idle <= 0 || total < DFX_PAR_MIN_NS) return 1;
  /* Threads: the caller plus idle helpers, no more than the work feeds with
   * blocks of at least DFX_PAR_MIN_BLOCK_NS or of one grain. */
  int64_t units = (n + grain - 1) / grain;
  double by_cost = total / DFX_PAR_MIN_BLOCK_NS;
  int64_t max_blocks = units < (int64_t)by_cost ? units : (int64_t)by_cost;
  if (max_blocks < 2) return 1;
  int64_t threads = 1 + (int64_t)idle;
  if (threads > max_blocks) threads = max_blocks;
  int per = cost->blocks_per_thread > 0 ? cost->blocks_per_thread : 4;
  int64_t blocks = threads * per;
  if (blocks > max_blocks) blocks = max_blocks;
  /* Equal blocks in grains; the last takes what is left, so recount. */
  int64_t len = (units + blocks - 1) / blocks * grain;
  blocks = (n + len - 1) / len;
  *helpers = (int)(threads - 1 < blocks - 1 ? threads - 1 : blocks - 1);
  *block_len = len;
  return (int)blocks;
}

typedef struct shard_job {
  dfx_shard_fn fn;
  void *arg;
  int64_t n, len;
} shard_job;

static void run_block(void *ud, int b) {
  const shard_job *j = ud;
  int64_t begin = (int64_t)b * j->len, end = begin + j->len;
  j->fn(j->arg, begin, end < j->n ? end : j->n);
}

void dfx__parallel_for(const dfx_parallel *par, int64_t n, const dfx_par_cost *cost, dfx_shard_fn fn, void *arg) {
  if (n <= 0) return;
  int idle = par ? par->idle(par->impl) : 0;
  int helpers;
  int64_t len;
  int blocks = dfx__par_plan(n, cost, idle, &helpers, &len);
  if (blocks <= 1 || helpers <= 0) {
    fn(arg, 0, n);
    return;
  }
  shard_job j = {fn, arg, n, len};
  par->run(par->impl, blocks, helpers, run_block, &j);
}

void dfx__kctx_parallel_for(dfx_kctx *ctx, int64_t n, const dfx_par_cost *cost, dfx_shard_fn fn, void *arg) {
  dfx__parallel_for(ctx->par, n, cost, fn, arg);
}
