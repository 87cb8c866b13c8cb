/* test_alloc.c - the single allocation path (core/alloc.c): what the hook
 * sees (sizes in and old sizes back, as lua_Alloc requires), aligned
 * payloads, overflowing requests that never reach the hook, realloc that
 * keeps the old block on failure, the string helpers, and the counting test
 * allocator itself: counts, peak, fail-at-N and thread safety. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdalign.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../eutil.h"
#include "alloc.h"
#include "bufcache.h"

TestSuite(alloc, .init = eu_setup, .fini = eu_teardown);

/* ---- a hook that records every call ---- */

typedef struct {
  int n;
  struct {
    void *ptr;
    size_t osize, nsize;
    void *ret;
  } call[16];
  int fail; /* return NULL for allocations */
} rec;

static void *rec_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  rec *r = ud;
  void *ret = NULL;
  if (nsize == 0)
    free(ptr);
  else if (!r->fail)
    ret = realloc(ptr, nsize);
  if (r->n < 16) r->call[r->n].ptr = ptr, r->call[r->n].osize = osize, r->call[r->n].nsize = nsize, r->call[r->n].ret = ret;
  r->n++;
  return ret;
}

/* Runs with `r` as the hook; the test allocator comes back afterwards. */
static void use_rec(rec *r) {
  memset(r, 0, sizeof *r);
  dfx_set_allocator(rec_alloc, r);
}
static void back_to_test_alloc(void) { dfx__testalloc_install(&eu_alloc); }

Test(alloc, the_hook_always_gets_the_old_size_back) {
  rec r;
  use_rec(&r);
  char *p = dfx__malloc(10);
  cr_assert_not_null(p);
  cr_assert_eq(r.n, 1);
  cr_expect_null(r.call[0].ptr);
  cr_expect_eq(r.call[0].osize, 0);
  cr_expect_geq(r.call[0].nsize, 10, "the hook must be asked for at least the payload");
  size_t first = r.call[0].nsize;
  memset(p, 7, 10);

  p = dfx__realloc(p, 1000);
  cr_assert_not_null(p);
  cr_assert_eq(r.n, 2);
  cr_expect_eq(r.call[1].ptr, r.call[0].ret, "realloc hands the hook the block it made");
  cr_expect_eq(r.call[1].osize, first, "and the size it was asked for then");
  cr_expect_eq(r.call[1].nsize - first, 1000 - 10, "the header costs the same at every size");
  for (int i = 0; i < 10; i++) cr_expect_eq(p[i], 7, "realloc keeps the contents");
  size_t second = r.call[1].nsize;

  dfx__free(p);
  cr_assert_eq(r.n, 3);
  cr_expect_eq(r.call[2].ptr, r.call[1].ret);
  cr_expect_eq(r.call[2].osize, second, "a free reports the block's size");
  cr_expect_eq(r.call[2].nsize, 0, "nsize 0 means free");

  dfx__free(NULL);
  cr_expect_eq(r.n, 3, "freeing NULL does not call the hook");
  back_to_test_alloc();
}

Test(alloc, the_hook_receives_its_user_data_and_null_restores_malloc) {
  rec r;
  use_rec(&r);
  void *p = dfx__malloc(1);
  cr_expect_eq(r.n, 1, "the hook gets the ud it was set with (rec_alloc would crash otherwise)");
  dfx__free(p);
  dfx_set_allocator(NULL, &r); /* NULL: malloc/free, and ud is not used */
  p = dfx__malloc(100);
  cr_assert_not_null(p);
  dfx__free(p);
  cr_expect_eq(r.n, 2, "after dfx_set_allocator(NULL) the old hook is not called");
  back_to_test_alloc();
}

Test(alloc, payloads_are_max_aligned) {
  void *p[40];
  for (size_t i = 0; i < 40; i++) {
    p[i] = dfx__malloc(i * 3 + 1);
    cr_assert_not_null(p[i]);
    cr_expect_eq((uintptr_t)p[i] % alignof(max_align_t), 0, "size %zu", i * 3 + 1);
  }
  for (size_t i = 0; i < 40; i++) {
    p[i] = dfx__realloc(p[i], i * 50 + 7);
    cr_assert_not_null(p[i]);
    cr_expect_eq((uintptr_t)p[i] % alignof(max_align_t), 0);
    dfx__free(p[i]);
  }
  void *c = dfx__calloc(3, 5);
  cr_expect_eq((uintptr_t)c % alignof(max_align_t), 0);
  dfx__free(c);
}

Test(alloc, zero_byte_blocks_are_real_blocks) {
  void *p = dfx__malloc(0);
  cr_assert_not_null(p, "malloc(0) gives a block that can be freed");
  void *q = dfx__calloc(0, 8);
  cr_assert_not_null(q);
  cr_expect_eq(eu_alloc.live_blocks, 2);
  dfx__free(p);
  dfx__free(q);
}

/* ---- overflow: the request never reaches the hook ---- */

Test(alloc, overflowing_requests_fail_without_calling_the_hook) {
  long long before = eu_alloc.n_allocs;
  cr_expect_null(dfx__malloc(SIZE_MAX));
  cr_expect_null(dfx__malloc(SIZE_MAX - 4)); /* would wrap once the header is added */
  cr_expect_null(dfx__calloc(SIZE_MAX / 2 + 1, 2));
  cr_expect_null(dfx__calloc((size_t)1 << 33, (size_t)1 << 33));
  cr_expect_eq(eu_alloc.n_allocs, before, "a wrapped size must not be passed to the hook");

  char *p = dfx__malloc(4);
  memcpy(p, "abc", 4);
  cr_expect_null(dfx__realloc(p, SIZE_MAX - 1));
  cr_expect_str_eq(p, "abc", "a failed realloc leaves the block alone");
  dfx__free(p);
}

static const struct {
  size_t a, b, want;
} mul_cases[] = {
    {0, 0, 0},
    {0, SIZE_MAX, 0},
    {3, 4, 12},
    {SIZE_MAX, 1, SIZE_MAX},
    {SIZE_MAX, 2, SIZE_MAX},
    {SIZE_MAX / 2 + 1, 2, SIZE_MAX},
    {(size_t)1 << 32, (size_t)1 << 31, (size_t)1 << 63},
    {(size_t)1 << 32, (size_t)1 << 32, SIZE_MAX},
};

Test(alloc, mul_size_saturates_instead_of_wrapping) {
  for (size_t i = 0; i < sizeof mul_cases / sizeof mul_cases[0]; i++)
    cr_expect_eq(dfx__mul_size(mul_cases[i].a, mul_cases[i].b), mul_cases[i].want, "%zu * %zu", mul_cases[i].a,
                 mul_cases[i].b);
}

/* ---- calloc, realloc ---- */

Test(alloc, calloc_zeroes_even_recycled_memory) {
  for (int round = 0; round < 4; round++) {
    unsigned char *p = dfx__malloc(4096);
    memset(p, 0xee, 4096);
    dfx__free(p);
    unsigned char *q = dfx__calloc(64, 64);
    cr_assert_not_null(q);
    for (int i = 0; i < 4096; i++) cr_assert_eq(q[i], 0, "byte %d", i);
    dfx__free(q);
  }
}

Test(alloc, realloc_of_null_allocates_and_failure_keeps_the_block) {
  int *p = dfx__realloc(NULL, 4 * sizeof(int));
  cr_assert_not_null(p);
  cr_expect_eq(eu_alloc.live_blocks, 1);
  for (int i = 0; i < 4; i++) p[i] = i * 11;
  eu_alloc.fail_at = eu_alloc.n_allocs + 1;
  cr_assert_null(dfx__realloc(p, 1 << 20));
  cr_expect_eq(eu_alloc.live_blocks, 1, "the old block is still there");
  for (int i = 0; i < 4; i++) cr_expect_eq(p[i], i * 11);
  /* Shrinking and growing move the contents along. */
  p = dfx__realloc(p, 2 * sizeof(int));
  cr_assert_not_null(p);
  p = dfx__realloc(p, 1000 * sizeof(int));
  cr_assert_not_null(p);
  cr_expect_eq(p[0], 0);
  cr_expect_eq(p[1], 11);
  cr_expect_eq(eu_alloc.live_blocks, 1, "realloc never adds a block");
  dfx__free(p);
}

/* ---- strings ---- */

Test(alloc, strdup_and_strndup_copy_exactly) {
  char *a = dfx__strdup("hello");
  cr_assert_not_null(a);
  cr_expect_str_eq(a, "hello");
  char *b = dfx__strndup("hello world", 5);
  cr_expect_str_eq(b, "hello", "strndup copies n bytes and terminates");
  char *c = dfx__strndup(NULL, 0);
  cr_assert_not_null(c, "an empty bytes field has a NULL pointer and length 0");
  cr_expect_str_eq(c, "");
  char *d = dfx__strndup("a\0b", 3); /* protobuf bytes: NULs are data */
  cr_assert_not_null(d);
  cr_expect_eq(memcmp(d, "a\0b", 4), 0, "all n bytes are copied, then a terminator");
  char *e = dfx__strdup("");
  cr_expect_str_eq(e, "");
  cr_expect_eq(eu_alloc.live_blocks, 5);
  dfx__free(a);
  dfx__free(b);
  dfx__free(c);
  dfx__free(d);
  dfx__free(e);
}

Test(alloc, string_helpers_return_null_when_memory_runs_out) {
  eu_alloc.fail_at = eu_alloc.n_allocs + 1;
  cr_expect_null(dfx__strdup("abc"));
  eu_alloc.fail_at = eu_alloc.n_allocs + 1;
  cr_expect_null(dfx__strndup("abc", 2));
  eu_alloc.fail_at = eu_alloc.n_allocs + 1;
  cr_expect_null(dfx__calloc(2, 2));
  cr_expect_eq(eu_alloc.n_failed, 3);
  cr_expect_eq(eu_alloc.live_blocks, 0);
}

Test(alloc, dfx_free_releases_library_blocks) {
  void *p = dfx__malloc(33);
  cr_expect_eq(eu_alloc.live_blocks, 1);
  dfx_free(p);
  cr_expect_eq(eu_alloc.live_blocks, 0);
  dfx_free(NULL);
}

/* ---- the counting allocator ---- */

Test(alloc, counting_allocator_counts_blocks_bytes_and_peak) {
  cr_assert_eq(eu_alloc.live_blocks, 0);
  cr_assert_eq(eu_alloc.live_bytes, 0);
  void *a = dfx__malloc(100);
  void *b = dfx__malloc(300);
  cr_expect_eq(eu_alloc.live_blocks, 2);
  long long both = eu_alloc.live_bytes;
  cr_expect_geq(both, 400, "bytes include every payload");
  cr_expect_leq(both, 400 + 2 * 64, "and at most a small header per block");
  dfx__free(a);
  cr_expect_eq(eu_alloc.live_blocks, 1);
  cr_expect_lt(eu_alloc.live_bytes, both);
  cr_expect_eq(eu_alloc.peak_bytes, both, "peak keeps the high mark");
  b = dfx__realloc(b, 10);
  cr_expect_eq(eu_alloc.live_blocks, 1);
  cr_expect_lt(eu_alloc.live_bytes, 300, "a shrink lowers the live bytes");
  cr_expect_eq(eu_alloc.peak_bytes, both);
  dfx__free(b);
  cr_expect_eq(eu_alloc.live_blocks, 0);
  cr_expect_eq(eu_alloc.live_bytes, 0);
  cr_expect_eq(eu_alloc.n_allocs, 3, "two mallocs and a realloc were attempted");
}

/* fail_at = N fails the Nth allocation only (1-based): table over N. */
Test(alloc, fail_at_fails_exactly_the_nth_allocation) {
  for (int n = 1; n <= 6; n++) {
    dfx_testalloc ta = {.fail_at = n};
    dfx__testalloc_install(&ta);
    void *p[6];
    for (int i = 0; i < 6; i++) p[i] = dfx__malloc(16);
    for (int i = 0; i < 6; i++) cr_expect_eq(p[i] == NULL, i + 1 == n, "fail_at %d, allocation %d", n, i + 1);
    cr_expect_eq(ta.n_failed, 1);
    cr_expect_eq(ta.n_allocs, 6, "a failed attempt is counted too");
    cr_expect_eq(ta.live_blocks, 5);
    for (int i = 0; i < 6; i++) dfx__free(p[i]);
    cr_expect_eq(ta.live_blocks, 0);
    cr_expect_eq(ta.live_bytes, 0);
  }
  dfx_testalloc none = {0}; /* fail_at 0: nothing fails */
  dfx__testalloc_install(&none);
  void *p[50];
  for (int i = 0; i < 50; i++) cr_expect_not_null(p[i] = dfx__malloc(8));
  for (int i = 0; i < 50; i++) dfx__free(p[i]);
  cr_expect_eq(none.n_failed, 0);
  back_to_test_alloc();
}

/* Switching allocators returns idle cached buffers to the one that made them. */
Test(alloc, changing_the_allocator_returns_idle_buffers_to_their_owner) {
  void *b = dfx__buf_alloc(1 << 16);
  cr_assert_not_null(b);
  dfx__buf_free(b, 1 << 16);
  cr_assert_eq(eu_alloc.live_blocks, 1, "the buffer cache keeps a 64 KiB buffer idle");
  dfx_testalloc other = {0};
  dfx__testalloc_install(&other);
  cr_expect_eq(eu_alloc.live_blocks, 0, "installing another allocator gave the idle buffer back");
  cr_expect_eq(other.live_blocks, 0);
  back_to_test_alloc();
}

#define N_THREADS 4
#define N_ROUNDS 20000

static void *churn(void *arg) {
  (void)arg;
  void *keep[8] = {0};
  for (int i = 0; i < N_ROUNDS; i++) {
    int k = i & 7;
    dfx__free(keep[k]);
    keep[k] = dfx__malloc((size_t)(i % 200) + 1);
    if (!keep[k]) return (void *)1;
  }
  for (int k = 0; k < 8; k++) dfx__free(keep[k]);
  return NULL;
}

Test(alloc, counting_allocator_is_exact_under_threads, .timeout = 20) {
  pthread_t th[N_THREADS];
  for (int i = 0; i < N_THREADS; i++) cr_assert_eq(pthread_create(&th[i], NULL, churn, NULL), 0);
  for (int i = 0; i < N_THREADS; i++) {
    void *r;
    pthread_join(th[i], &r);
    cr_expect_null(r, "thread %d saw an allocation fail", i);
  }
  cr_expect_eq(eu_alloc.n_allocs, (long long)N_THREADS * N_ROUNDS);
  cr_expect_eq(eu_alloc.live_blocks, 0);
  cr_expect_eq(eu_alloc.live_bytes, 0);
  cr_expect_gt(eu_alloc.peak_bytes, 0);
}
