/* test_step.c - per-run state (core/step.c): a fresh step has nothing to
 * free and is not cancelled, resources handed to it are freed exactly once
 * and in reverse order (past the growth of its array, and when handed over
 * from several threads), and a destroyed step can be set up again. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <string.h>

#include "../eutil.h"
#include "alloc.h"
#include "kernel.h"
#include "step.h"

TestSuite(step, .init = eu_setup, .fini = eu_teardown);

/* A log of free_fn calls: which objects, in which order. */
static struct {
  int n;
  int order[256];
} freed;

static void record_free(void *obj) {
  int id = *(int *)obj;
  if (freed.n < 256) freed.order[freed.n] = id;
  freed.n++;
}

/* A resource that owns a heap block, so the leak check sees a missed free. */
static void free_block(void *obj) {
  record_free(obj);
  dfx__free(obj);
}

static int *block(int id) {
  int *p = dfx__malloc(sizeof *p);
  cr_assert_not_null(p);
  *p = id;
  return p;
}

static dfx_kctx ctx_for(dfx_step *s, dfx_status *st) { return (dfx_kctx){.step = s, .st = st}; }

Test(step, a_fresh_step_owns_nothing_and_runs) {
  dfx_step s;
  memset(&s, 0x5a, sizeof s); /* init must not rely on a zeroed struct */
  cr_assert_eq(dfx__step_init(&s), DFX_OK);
  cr_expect_eq(s.n_res, 0);
  cr_expect_eq(s.deadline_ns, 0, "no deadline unless the run sets one");
  cr_expect_not(dfx__step_is_cancelled(&s));
  cr_expect_not(dfx__step_is_cancelled(NULL), "no step (a direct kernel call) is never cancelled");
  freed.n = 0;
  dfx__step_destroy(&s);
  cr_expect_eq(freed.n, 0);
  cr_expect_eq(eu_alloc.live_blocks, 0);
}

Test(step, cancel_is_sticky) {
  dfx_step s;
  cr_assert_eq(dfx__step_init(&s), DFX_OK);
  dfx__step_cancel(&s);
  cr_expect(dfx__step_is_cancelled(&s));
  dfx__step_cancel(&s);
  cr_expect(dfx__step_is_cancelled(&s), "cancelling twice is the same as once");
  dfx__step_destroy(&s);
}

Test(step, resources_are_freed_in_reverse_order) {
  /* 1, 8, 9 and 40 cross the growth of the resource array (8, 16, 32, 64). */
  const int counts[] = {1, 2, 8, 9, 40};
  for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
    int n = counts[c];
    dfx_step s;
    dfx_status st;
    dfx__status_clear(&st);
    cr_assert_eq(dfx__step_init(&s), DFX_OK);
    dfx_kctx ctx = ctx_for(&s, &st);
    freed.n = 0;
    for (int i = 0; i < n; i++) cr_assert_eq(dfx__kctx_step_own(&ctx, block(i), free_block), DFX_OK, "%s", st.msg);
    cr_expect_eq(freed.n, 0, "nothing is freed before the run ends");
    cr_expect_eq(s.n_res, n);
    dfx__step_destroy(&s);
    cr_assert_eq(freed.n, n, "%d resources: each freed once", n);
    for (int i = 0; i < n; i++) cr_expect_eq(freed.order[i], n - 1 - i, "%d resources: position %d", n, i);
    cr_expect_eq(eu_alloc.live_blocks, 0);
  }
}

Test(step, a_destroyed_step_can_be_set_up_again) {
  dfx_step s;
  dfx_status st;
  dfx__status_clear(&st);
  cr_assert_eq(dfx__step_init(&s), DFX_OK);
  dfx_kctx ctx = ctx_for(&s, &st);
  freed.n = 0;
  cr_assert_eq(dfx__kctx_step_own(&ctx, block(1), free_block), DFX_OK);
  dfx__step_cancel(&s);
  dfx__step_destroy(&s);
  cr_assert_eq(dfx__step_init(&s), DFX_OK);
  cr_expect_not(dfx__step_is_cancelled(&s), "a new run starts uncancelled");
  cr_expect_eq(s.n_res, 0, "and owns none of the last run's resources");
  cr_assert_eq(dfx__kctx_step_own(&ctx, block(2), free_block), DFX_OK);
  dfx__step_destroy(&s);
  cr_expect_eq(freed.n, 2);
  cr_expect_eq(freed.order[1], 2, "the second run's resource, freed by the second destroy");
}

/* When the resource array cannot grow the object is freed at once and the
 * ones already held are kept, still to be freed in reverse order. */
Test(step, a_resource_that_cannot_be_recorded_is_freed_at_once) {
  dfx_step s;
  dfx_status st;
  dfx__status_clear(&st);
  cr_assert_eq(dfx__step_init(&s), DFX_OK);
  dfx_kctx ctx = ctx_for(&s, &st);
  freed.n = 0;
  for (int i = 0; i < 8; i++) cr_assert_eq(dfx__kctx_step_own(&ctx, block(i), free_block), DFX_OK);
  int *ninth = block(8);
  eu_alloc.fail_at = eu_alloc.n_allocs + 1; /* the array's growth from 8 to 16 */
  cr_assert_eq(dfx__kctx_step_own(&ctx, ninth, free_block), DFX_ENOMEM);
  eu_alloc.fail_at = 0;
  cr_expect_eq(freed.n, 1, "the refused resource is freed right away");
  cr_expect_eq(freed.order[0], 8);
  cr_expect_eq(s.n_res, 8);
  dfx__step_destroy(&s);
  cr_assert_eq(freed.n, 9);
  for (int i = 1; i < 9; i++) cr_expect_eq(freed.order[i], 8 - i);
}

/* Kernels on several workers hand resources to one run at once. */
#define N_THREADS 4
#define PER_THREAD 500

typedef struct {
  dfx_step *s;
  int base;
} worker_arg;

static int counted[N_THREADS * PER_THREAD];

static void count_free(void *obj) { __atomic_add_fetch((int *)obj, 1, __ATOMIC_RELAXED); }

static void *worker(void *p) {
  worker_arg *w = p;
  dfx_status st;
  dfx__status_clear(&st);
  dfx_kctx ctx = ctx_for(w->s, &st);
  for (int i = 0; i < PER_THREAD; i++)
    if (dfx__kctx_step_own(&ctx, &counted[w->base + i], count_free) != DFX_OK) return (void *)1;
  return NULL;
}

Test(step, resources_from_several_threads_are_each_freed_once, .timeout = 20) {
  dfx_step s;
  cr_assert_eq(dfx__step_init(&s), DFX_OK);
  memset(counted, 0, sizeof counted);
  pthread_t th[N_THREADS];
  worker_arg args[N_THREADS];
  for (int i = 0; i < N_THREADS; i++) {
    args[i] = (worker_arg){&s, i * PER_THREAD};
    cr_assert_eq(pthread_create(&th[i], NULL, worker, &args[i]), 0);
  }
  for (int i = 0; i < N_THREADS; i++) {
    void *r;
    pthread_join(th[i], &r);
    cr_expect_null(r);
  }
  cr_expect_eq(s.n_res, N_THREADS * PER_THREAD);
  dfx__step_destroy(&s);
  for (int i = 0; i < N_THREADS * PER_THREAD; i++) cr_assert_eq(counted[i], 1, "resource %d", i);
}
