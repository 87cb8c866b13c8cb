/* test_pool_par.c - the pool's side of parallel_for (exec/pool.c): sleeping
 * workers are lent to a job, every block runs exactly once, the caller runs
 * what helpers do not start, jobs nest, and DFX_INTRA_OP=0 turns it off. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <uv.h>

#include "run.h"

typedef struct rec {
  int hits[64];
  uv_thread_t who[64];
  const dfx_parallel *par; /* for the nested job */
  int nested_hits[16];
} rec;

static void nested_block(void *ud, int b) { __atomic_fetch_add(&((rec *)ud)->nested_hits[b], 1, __ATOMIC_RELAXED); }

static void block(void *ud, int b) {
  rec *r = ud;
  __atomic_fetch_add(&r->hits[b], 1, __ATOMIC_RELAXED);
  r->who[b] = uv_thread_self();
  uv_sleep(2); /* long enough for a woken helper to take some blocks */
  if (b == 0 && r->par) r->par->run(r->par->impl, 16, 2, nested_block, r);
}

/* Waits until the pool's workers are asleep (idle), up to about a second. */
static int wait_idle(const dfx_parallel *par, int want) {
  for (int i = 0; i < 200; i++) {
    if (par->idle(par->impl) >= want) return 1;
    uv_sleep(5);
  }
  return 0;
}

Test(pool_par, lends_idle_workers_and_runs_each_block_once) {
  dfx_pool *p = NULL;
  cr_assert_eq(dfx__pool_new(2, &p), DFX_OK);
  const dfx_parallel *par = dfx__pool_parallel(p);
  cr_assert(par);
  int helped = 0;
  /* A loaded machine may schedule the helpers late: try a few times. */
  for (int attempt = 0; attempt < 10 && !helped; attempt++) {
    cr_assert(wait_idle(par, 2), "workers never went idle");
    rec r = {.par = attempt % 2 ? par : NULL};
    uv_thread_t me = uv_thread_self();
    par->run(par->impl, 32, 2, block, &r);
    for (int b = 0; b < 32; b++) {
      cr_assert_eq(r.hits[b], 1, "block %d ran %d times", b, r.hits[b]);
      if (!uv_thread_equal(&r.who[b], &me)) helped = 1;
    }
    if (r.par)
      for (int b = 0; b < 16; b++) cr_assert_eq(r.nested_hits[b], 1, "nested block %d", b);
  }
  cr_expect(helped, "no block ever ran on a pool worker");
  dfx__pool_free(p);
}

Test(pool_par, nothing_idle_means_no_split_and_env_turns_it_off) {
  cr_expect_null(dfx__pool_parallel(NULL));
  setenv("DFX_INTRA_OP", "0", 1);
  dfx_pool *p = NULL;
  cr_assert_eq(dfx__pool_new(1, &p), DFX_OK);
  cr_expect_null(dfx__pool_parallel(p), "DFX_INTRA_OP=0 must turn parallel_for off");
  dfx__pool_free(p);
  unsetenv("DFX_INTRA_OP");
  /* A pool with no workers has nobody to lend: parallel_for runs whole. */
  cr_assert_eq(dfx__pool_new(0, &p), DFX_OK);
  const dfx_parallel *par = dfx__pool_parallel(p);
  cr_assert(par);
  cr_expect_eq(par->idle(par->impl), 0);
  dfx__pool_free(p);
}
