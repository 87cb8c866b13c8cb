/* test_bufcache.c - the large-buffer cache (core/bufcache.c): buffers come
 * back by size class, small ones are not kept, the cap holds, and a flush
 * returns every idle byte to the allocator. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "alloc.h"
#include "bufcache.h"
#include "tensor.h"

static dfx_testalloc ta;

static void setup(void) {
  memset(&ta, 0, sizeof ta);
  dfx__testalloc_install(&ta);
}

static void teardown(void) {
  dfx__tensor_cache_flush();
  long long blocks = ta.live_blocks;
  dfx__testalloc_install(NULL);
  if (blocks) abort(); /* Criterion ignores assertions here */
}

TestSuite(bufcache, .init = setup, .fini = teardown);

Test(bufcache, same_class_is_reused_other_classes_are_not) {
  void *a = dfx__buf_alloc(100000);
  cr_assert(a);
  memset(a, 1, 100000);
  dfx__buf_free(a, 100000);
  long long allocs = ta.n_allocs;
  /* 100000 and 99000 round to the same class (98304 < n <= 114688). */
  void *b = dfx__buf_alloc(99000);
  cr_assert_eq(b, a, "a buffer of the same class should be reused");
  cr_assert_eq(ta.n_allocs, allocs, "reuse must not call the allocator");
  void *c = dfx__buf_alloc(200000); /* another class: a new block */
  cr_assert_neq(c, a);
  cr_assert_eq(ta.n_allocs, allocs + 1);
  memset(c, 2, 200000);
  dfx__buf_free(b, 99000);
  dfx__buf_free(c, 200000);
  cr_assert_eq(ta.live_blocks, 2, "both idle buffers are kept");
  dfx__buf_cache_flush();
  cr_assert_eq(ta.live_blocks, 0);
  cr_assert_eq(ta.live_bytes, 0);
}

Test(bufcache, small_and_huge_buffers_are_not_kept) {
  void *s = dfx__buf_alloc(1000);
  cr_assert(s);
  dfx__buf_free(s, 1000);
  cr_assert_eq(ta.live_blocks, 0, "small buffers go straight back");
  dfx__buf_free(NULL, 5000); /* NULL is ignored */
  /* A class never hands out a smaller block than asked for. */
  for (size_t n = 4096; n < (1u << 20); n = n * 5 / 4 + 3) {
    unsigned char *p = dfx__buf_alloc(n);
    cr_assert(p);
    memset(p, 0xab, n); /* ASan flags any overrun of the block */
    dfx__buf_free(p, n);
  }
}

Test(bufcache, idle_bytes_stay_under_the_cap) {
  /* 40 buffers of 8 MiB: more than the 256 MiB cap (or RAM / 16). */
  enum { N = 40 };
  static void *p[N];
  const size_t sz = (size_t)8 << 20;
  for (int i = 0; i < N; i++) cr_assert(p[i] = dfx__buf_alloc(sz));
  for (int i = 0; i < N; i++) dfx__buf_free(p[i], sz);
  cr_assert(ta.live_bytes <= (256 << 20) + N * 64, "idle bytes %lld above the cap", ta.live_bytes);
  cr_assert(ta.live_blocks > 0 && ta.live_blocks < N, "%lld blocks kept", ta.live_blocks);
}

Test(bufcache, tensors_recycle_their_buffers) {
  int64_t d[1] = {4096};
  dfx_tensor *t = dfx__tensor_alloc(DFX_F32, 1, d, NULL);
  cr_assert(t);
  void *data = t->data;
  dfx__tensor_unref(t);
  dfx_tensor *u = dfx__tensor_alloc(DFX_I32, 1, d, NULL); /* same bytes */
  cr_assert_eq(u->data, data);
  dfx__tensor_unref(u);
}
