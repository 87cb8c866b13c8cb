/* test_parallel.c - parallel_for's blocking plan and its contract: blocks
 * cover [0, n) exactly once in grain multiples, work below the threshold or
 * without idle threads stays whole on the caller, and helpers never exceed
 * the idle threads. A threaded stand-in runs blocks concurrently. */
#include <criterion/criterion.h>
#include <uv.h>

#include "parallel.h"

typedef struct cover {
  int *hits;
  int64_t n;
  int calls;
} cover;

static void mark(void *arg, int64_t begin, int64_t end) {
  cover *c = arg;
  for (int64_t i = begin; i < end; i++) __atomic_fetch_add(&c->hits[i], 1, __ATOMIC_RELAXED);
  __atomic_fetch_add(&c->calls, 1, __ATOMIC_RELAXED);
}

static int idle_n = 3;
static int fake_idle(void *impl) { return idle_n; }
static int last_helpers = -1;
static void serial_reverse(void *impl, int n_blocks, int helpers, void (*block)(void *ud, int b), void *ud) {
  last_helpers = helpers;
  for (int b = n_blocks - 1; b >= 0; b--) block(ud, b);
}
static const dfx_parallel fake = {.idle = fake_idle, .run = serial_reverse};

Test(parallel, plan_covers_in_grains) {
  int64_t ns[] = {1, 2, 15, 16, 17, 100, 1000, 4097, 1 << 20};
  int64_t grains[] = {0, 1, 8, 16, 64};
  for (size_t a = 0; a < sizeof ns / sizeof *ns; a++)
    for (size_t g = 0; g < sizeof grains / sizeof *grains; g++)
      for (int idle = 0; idle < 5; idle++)
        for (int per = 0; per < 3; per++) {
          dfx_par_cost cost = {.unit_ns = 100, .grain = grains[g], .blocks_per_thread = per};
          int helpers;
          int64_t len;
          int blocks = dfx__par_plan(ns[a], &cost, idle, &helpers, &len);
          cr_assert_geq(blocks, 1);
          cr_assert_leq(helpers, idle);
          cr_assert_lt(helpers, blocks > 1 ? blocks : 1);
          cr_assert_geq((int64_t)blocks * len, ns[a], "n %lld: %d blocks of %lld", (long long)ns[a], blocks,
                        (long long)len);
          cr_assert_lt((int64_t)(blocks - 1) * len, ns[a]);
          if (grains[g] > 1 && blocks > 1) cr_assert_eq(len % grains[g], 0);
          int64_t threads = 1 + idle;
          int p = per > 0 ? per : 4;
          cr_assert_leq(blocks, threads * p);
        }
}

Test(parallel, small_or_no_idle_stays_whole) {
  int helpers;
  int64_t len;
  /* 100 units of 100 ns = 10 us: below DFX_PAR_MIN_NS. */
  cr_expect_eq(dfx__par_plan(100, &(dfx_par_cost){.unit_ns = 100}, 3, &helpers, &len), 1);
  cr_expect_eq(len, 100);
  cr_expect_eq(dfx__par_plan(1000000, &(dfx_par_cost){.unit_ns = 100}, 0, &helpers, &len), 1);
  cr_expect_eq(helpers, 0);
  /* A cost of 0 (unknown) never splits. */
  cr_expect_eq(dfx__par_plan(1000000, &(dfx_par_cost){0}, 3, &helpers, &len), 1);
  /* Enough work for two minimum blocks only: two, whatever the idle count. */
  cr_expect_eq(dfx__par_plan(2, &(dfx_par_cost){.unit_ns = DFX_PAR_MIN_NS / 2 + 1}, 3, &helpers, &len), 2);
  cr_expect_eq(helpers, 1);
  /* One block per thread when asked. */
  cr_expect_eq(dfx__par_plan(256, &(dfx_par_cost){.unit_ns = 1000, .grain = 16, .blocks_per_thread = 1}, 1,
                             &helpers, &len),
               2);
  cr_expect_eq(len, 128);
}

Test(parallel, for_runs_every_unit_once) {
  for (int64_t n = 1; n < 3000; n = n * 3 + 1) {
    cover c = {calloc((size_t)n, sizeof(int)), n, 0};
    last_helpers = -1;
    dfx__parallel_for(&fake, n, &(dfx_par_cost){.unit_ns = 1000, .grain = 4}, mark, &c);
    for (int64_t i = 0; i < n; i++) cr_assert_eq(c.hits[i], 1, "n %lld unit %lld", (long long)n, (long long)i);
    if (n * 1000 >= DFX_PAR_MIN_NS) cr_expect_gt(c.calls, 1, "n %lld not split", (long long)n);
    free(c.hits);
  }
  /* Without a pool: one call. */
  cover c = {calloc(500, sizeof(int)), 500, 0};
  dfx__parallel_for(NULL, 500, &(dfx_par_cost){.unit_ns = 1000}, mark, &c);
  cr_expect_eq(c.calls, 1);
  free(c.hits);
}

/* A stand-in with real threads: every helper and the caller claim blocks
 * from one counter, as exec/pool.c does. */
typedef struct tjob {
  void (*block)(void *ud, int b);
  void *ud;
  int n_blocks, next;
} tjob;
static void claim(void *p) {
  tjob *j = p;
  int b;
  while ((b = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED)) < j->n_blocks) j->block(j->ud, b);
}
static void threaded_run(void *impl, int n_blocks, int helpers, void (*block)(void *ud, int b), void *ud) {
  tjob j = {block, ud, n_blocks, 0};
  uv_thread_t t[8];
  for (int i = 0; i < helpers && i < 8; i++) uv_thread_create(&t[i], claim, &j);
  claim(&j);
  for (int i = 0; i < helpers && i < 8; i++) uv_thread_join(&t[i]);
}
static const dfx_parallel threaded = {.idle = fake_idle, .run = threaded_run};

Test(parallel, threads_cover_once) {
  int64_t n = 100000;
  cover c = {calloc((size_t)n, sizeof(int)), n, 0};
  dfx__parallel_for(&threaded, n, &(dfx_par_cost){.unit_ns = 10, .grain = 16}, mark, &c);
  for (int64_t i = 0; i < n; i++) cr_assert_eq(c.hits[i], 1);
  cr_expect_gt(c.calls, 1);
  free(c.hits);
}
