/* test_tensor.c - refcounted tensors (core/tensor.c): allocation over a
 * dtype x shape table and its errors (bad shapes, overflow, the byte limit,
 * ENOMEM at every allocation), zeroing of recycled memory, reference counts
 * and uniqueness, immortal tensors and export, reshaped views, deep copies,
 * the per-thread struct cache, string elements, shape helpers, and the
 * public dfx_tensor_* calls. One test refs and unrefs a tensor from four
 * threads. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <uv.h>

#include "../eutil.h"
#include "alloc.h"
#include "tensor.h"

TestSuite(tensor, .init = eu_setup, .fini = eu_teardown);

/* Live blocks once every idle struct and buffer is handed back. */
static long long live(void) {
  dfx__tensor_cache_flush();
  return eu_alloc.live_blocks;
}

/* ---- the dtype table (tf-semantics §1.5 element sizes) ---- */

static const struct {
  dfx_dtype dt;
  size_t size; /* bytes per element */
} dtypes[] = {
    {DFX_F32, 4}, {DFX_F64, 8},  {DFX_I32, 4},  {DFX_U8, 1},   {DFX_I16, 2},  {DFX_I8, 1},   {DFX_C64, 8},
    {DFX_I64, 8}, {DFX_BOOL, 1}, {DFX_QI8, 1},  {DFX_QU8, 1},  {DFX_QI32, 4}, {DFX_BF16, 2}, {DFX_QI16, 2},
    {DFX_QU16, 2}, {DFX_U16, 2}, {DFX_C128, 16}, {DFX_F16, 2}, {DFX_U32, 4},  {DFX_U64, 8},
};
#define N_DTYPES (sizeof dtypes / sizeof dtypes[0])

static const struct {
  int ndims;
  int64_t dims[DFX_MAX_DIMS];
  int64_t count;
} shapes[] = {
    {0, {0}, 1},
    {1, {0}, 0},
    {1, {3}, 3},
    {2, {2, 3}, 6},
    {3, {4, 0, 5}, 0},
    {2, {33, 17}, 561}, /* elements outside the struct */
    {DFX_MAX_DIMS, {1, 2, 1, 2, 1, 2, 1, 2}, 16},
};
#define N_SHAPES (sizeof shapes / sizeof shapes[0])

/* ---- allocation ---- */

Test(tensor, alloc_fills_in_every_dtype_and_shape) {
  for (size_t d = 0; d < N_DTYPES + 1; d++) {
    dfx_dtype dt = d < N_DTYPES ? dtypes[d].dt : DFX_STRING;
    size_t esz = d < N_DTYPES ? dtypes[d].size : sizeof(dfx_str);
    for (size_t s = 0; s < N_SHAPES; s++) {
      int64_t dims[DFX_MAX_DIMS];
      memcpy(dims, shapes[s].dims, sizeof dims);
      dfx_code code = DFX_EINTERNAL;
      dfx_tensor *t = dfx__tensor_alloc(dt, shapes[s].ndims, dims, &code);
      cr_assert_not_null(t, "%s shape #%zu", dfx_dtype_name(dt), s);
      cr_expect_eq(code, DFX_OK);
      dims[0] = 99; /* the tensor keeps its own copy of the dims */
      cr_expect_eq(t->dtype, dt);
      cr_expect_eq(t->ndims, shapes[s].ndims);
      for (int i = 0; i < shapes[s].ndims; i++) cr_expect_eq(t->dims[i], shapes[s].dims[i]);
      cr_expect_eq(t->count, shapes[s].count, "%s shape #%zu", dfx_dtype_name(dt), s);
      cr_expect_eq(t->nbytes, (size_t)shapes[s].count * esz, "%s shape #%zu", dfx_dtype_name(dt), s);
      cr_expect_eq(t->refs, 1);
      cr_expect_not(t->immortal);
      cr_expect(dfx__tensor_unique(t), "a new tensor has one owner");
      cr_assert(t->nbytes == 0 || t->data);
      if (dt == DFX_STRING) {
        for (int64_t i = 0; i < t->count; i++) {
          const dfx_str *e = (const dfx_str *)t->data + i;
          cr_expect(e->ptr == NULL && e->len == 0, "string elements start empty");
        }
      } else {
        memset(t->data, 0x3c, t->nbytes); /* every byte is writable (ASan checks) */
      }
      dfx__tensor_unref(t);
    }
  }
  cr_expect_eq(live(), 0);
}

Test(tensor, alloc_of_resource_and_variant_holds_null_handles) {
  int64_t d[1] = {3};
  dfx_tensor *r = dfx__tensor_alloc(DFX_RESOURCE, 1, d, NULL);
  dfx_tensor *v = dfx__tensor_alloc(DFX_VARIANT, 0, NULL, NULL);
  cr_assert_not_null(r);
  cr_assert_not_null(v);
  cr_expect_eq(r->count, 3);
  cr_expect_eq(r->nbytes, 3 * sizeof(void *));
  for (int i = 0; i < 3; i++) cr_expect_null(((void **)r->data)[i]);
  cr_expect_null(((void **)v->data)[0]);
  dfx__tensor_unref(r);
  dfx__tensor_unref(v);
}

static const struct {
  const char *what;
  dfx_dtype dt;
  int ndims;
  int64_t dims[DFX_MAX_DIMS + 1];
} bad_allocs[] = {
    {"invalid dtype scalar", DFX_INVALID, 0, {0}},
    {"invalid dtype", DFX_INVALID, 1, {2}},
    {"dtype 24", (dfx_dtype)24, 1, {2}},
    {"dtype 99 scalar", (dfx_dtype)99, 0, {0}},
    {"dtype 101 (a ref number)", (dfx_dtype)101, 0, {0}},
    {"negative dtype", (dfx_dtype)-3, 1, {1}},
    {"negative rank", DFX_F32, -1, {1}},
    {"rank 9", DFX_F32, DFX_MAX_DIMS + 1, {1, 1, 1, 1, 1, 1, 1, 1, 1}},
    {"dim -1", DFX_F32, 1, {-1}},
    {"dim -5 after a good one", DFX_I32, 2, {2, -5}},
    {"unknown dim of a string", DFX_STRING, 2, {-1, 3}},
};

Test(tensor, alloc_rejects_bad_dtypes_and_shapes) {
  for (size_t i = 0; i < sizeof bad_allocs / sizeof bad_allocs[0]; i++) {
    dfx_code code = DFX_OK;
    cr_expect_null(dfx__tensor_alloc(bad_allocs[i].dt, bad_allocs[i].ndims, bad_allocs[i].dims, &code), "%s",
                   bad_allocs[i].what);
    cr_expect_eq(code, DFX_EINVAL, "%s", bad_allocs[i].what);
    cr_expect_null(dfx__tensor_zeros(bad_allocs[i].dt, bad_allocs[i].ndims, bad_allocs[i].dims, NULL),
                   "%s (no code wanted)", bad_allocs[i].what);
  }
  cr_expect_eq(live(), 0);
}

/* A hostile shape fails before anything is allocated. */
Test(tensor, overflowing_and_huge_shapes_fail_without_allocating) {
  static const struct {
    const char *what;
    dfx_dtype dt;
    int ndims;
    int64_t dims[3];
    bool limit_only; /* the count is valid; only the bytes are too many */
  } cases[] = {
      {"count overflows int64", DFX_F32, 2, {INT64_MAX, 2}, false},
      {"count overflows at 2^64", DFX_U8, 2, {INT64_C(1) << 32, INT64_C(1) << 32}, false},
      {"count is 2^63", DFX_U8, 3, {INT64_C(1) << 31, INT64_C(1) << 31, 2}, false},
      {"bytes overflow size_t", DFX_F64, 1, {INT64_C(1) << 62}, true},
      {"one TiB", DFX_U8, 1, {INT64_C(1) << 40}, true},
      {"one TiB of strings", DFX_STRING, 2, {INT64_C(1) << 20, INT64_C(1) << 16}, true},
  };
  long long before = eu_alloc.n_allocs;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    dfx_code code = DFX_OK;
    cr_expect_null(dfx__tensor_alloc(cases[i].dt, cases[i].ndims, cases[i].dims, &code), "%s", cases[i].what);
    if (cases[i].limit_only)
      cr_expect_eq(code, DFX_ELIMIT, "%s: %s", cases[i].what, dfx_code_name(code));
    else
      cr_expect(code == DFX_EINVAL || code == DFX_ELIMIT, "%s: %s", cases[i].what, dfx_code_name(code));
  }
  cr_expect_eq(eu_alloc.n_allocs, before, "nothing reaches the allocator");
}

static const struct {
  int ndims;
  int64_t dims[4];
  int64_t want;
} count_cases[] = {
    {0, {0}, 1},
    {1, {0}, 0},
    {1, {7}, 7},
    {3, {2, 3, 4}, 24},
    {2, {0, INT64_MAX}, 0},
    {1, {INT64_MAX}, INT64_MAX},
    {2, {INT64_C(1) << 31, INT64_C(1) << 31}, INT64_C(1) << 62},
    {2, {INT64_C(3037000499), INT64_C(3037000499)}, INT64_C(9223372030926249001)}, /* the largest square */
    {1, {-1}, -1},
    {2, {5, -1}, -1},
    {2, {-2, 0}, -1},
    {2, {INT64_MAX, 2}, -1},
    {2, {INT64_C(1) << 32, INT64_C(1) << 31}, -1}, /* 2^63 */
    {2, {INT64_C(3037000500), INT64_C(3037000500)}, -1},
    {4, {1 << 16, 1 << 16, 1 << 16, 1 << 16}, -1},
};

Test(tensor, shape_count_is_the_product_or_minus_one) {
  for (size_t i = 0; i < sizeof count_cases / sizeof count_cases[0]; i++)
    cr_expect_eq(dfx__shape_count(count_cases[i].ndims, count_cases[i].dims), count_cases[i].want, "case %zu", i);
}

Test(tensor, zeros_are_zero_on_recycled_memory) {
  int64_t small[1] = {4}, big[2] = {64, 64}; /* 16 B inline, 16 KiB from the buffer cache */
  const int64_t *shp[2] = {small, big};
  const int nd[2] = {1, 2};
  for (int k = 0; k < 2; k++) {
    for (int round = 0; round < 3; round++) {
      dfx_tensor *dirty = dfx__tensor_alloc(DFX_F32, nd[k], shp[k], NULL);
      memset(dirty->data, 0xff, dirty->nbytes);
      dfx__tensor_unref(dirty);
      dfx_code code;
      dfx_tensor *z = dfx__tensor_zeros(DFX_F32, nd[k], shp[k], &code);
      cr_assert_not_null(z);
      cr_expect_eq(code, DFX_OK);
      const unsigned char *b = z->data;
      for (size_t i = 0; i < z->nbytes; i++) cr_assert_eq(b[i], 0, "shape %d round %d byte %zu", k, round, i);
      dfx__tensor_unref(z);
    }
  }
  /* String elements of a recycled struct or buffer start empty too. */
  int64_t n[1] = {300};
  dfx_tensor *s = dfx__tensor_alloc(DFX_STRING, 1, n, NULL);
  for (int64_t i = 0; i < 300; i++) cr_assert_eq(dfx_tensor_set_string(s, i, "abc", 3), DFX_OK);
  dfx__tensor_unref(s);
  s = dfx__tensor_alloc(DFX_STRING, 1, n, NULL);
  for (int64_t i = 0; i < 300; i++) {
    size_t len = 9;
    dfx_tensor_string(s, i, &len);
    cr_assert_eq(len, 0, "element %lld", (long long)i);
  }
  dfx__tensor_unref(s);
}

Test(tensor, scalars_hold_their_value_for_every_dtype) {
  unsigned char bytes[16];
  for (int i = 0; i < 16; i++) bytes[i] = (unsigned char)(0x11 * (i + 1));
  for (size_t d = 0; d < N_DTYPES; d++) {
    dfx_tensor *t = dfx__tensor_scalar(dtypes[d].dt, bytes);
    cr_assert_not_null(t, "%s", dfx_dtype_name(dtypes[d].dt));
    cr_expect_eq(t->ndims, 0);
    cr_expect_eq(t->count, 1);
    cr_expect_eq(t->nbytes, dtypes[d].size);
    cr_expect_eq(memcmp(t->data, bytes, dtypes[d].size), 0, "%s", dfx_dtype_name(dtypes[d].dt));
    dfx__tensor_unref(t);
  }
  dfx_tensor *s = dfx__tensor_scalar(DFX_STRING, NULL);
  cr_assert_not_null(s);
  size_t len = 5;
  cr_expect_str_eq(dfx_tensor_string(s, 0, &len), "");
  cr_expect_eq(len, 0, "a string scalar starts empty");
  dfx__tensor_unref(s);
  cr_expect_null(dfx__tensor_scalar(DFX_INVALID, bytes));
}

/* Fault injection: a cold tensor allocation fails at each of its
 * allocations with DFX_ENOMEM and leaks nothing. */
Test(tensor, allocation_failure_is_enomem_and_leaks_nothing) {
  static const struct {
    dfx_dtype dt;
    int ndims;
    int64_t dims[2];
    int allocs; /* a small tensor is one block, a large one two */
  } cases[] = {
      {DFX_F32, 0, {0}, 1}, {DFX_I64, 1, {4}, 1}, {DFX_F32, 2, {40, 40}, 2}, {DFX_STRING, 1, {100}, 2},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    for (int zeros = 0; zeros < 2; zeros++) {
      int failures = 0;
      for (long long n = 1;; n++) {
        long long base = live();
        eu_alloc.fail_at = eu_alloc.n_allocs + n;
        dfx_code code = DFX_EINTERNAL;
        dfx_tensor *t = zeros ? dfx__tensor_zeros(cases[c].dt, cases[c].ndims, cases[c].dims, &code)
                              : dfx__tensor_alloc(cases[c].dt, cases[c].ndims, cases[c].dims, &code);
        eu_alloc.fail_at = 0;
        if (t) {
          cr_expect_eq(code, DFX_OK);
          dfx__tensor_unref(t);
          break;
        }
        cr_expect_eq(code, DFX_ENOMEM, "case %zu, allocation %lld: %s", c, n, dfx_code_name(code));
        cr_expect_eq(live(), base, "case %zu, allocation %lld leaked", c, n);
        failures++;
        cr_assert_lt(n, 10);
      }
      cr_expect_eq(failures, cases[c].allocs, "case %zu: one failure point per allocation", c);
    }
  }
  /* dfx_tensor_new reports the failure as NULL. */
  int64_t d[1] = {1000};
  dfx__tensor_cache_flush();
  eu_alloc.fail_at = eu_alloc.n_allocs + 2;
  cr_expect_null(dfx_tensor_new(DFX_F64, d, 1));
  eu_alloc.fail_at = 0;
}

/* ---- reference counts ---- */

Test(tensor, ref_and_unref_count_and_the_last_unref_frees) {
  int64_t d[1] = {100};
  dfx_tensor *t = dfx__tensor_alloc(DFX_F32, 1, d, NULL);
  cr_assert_eq(dfx__tensor_ref(t), t, "ref returns its argument");
  cr_expect_eq(t->refs, 2);
  cr_expect_not(dfx__tensor_unique(t), "two owners");
  dfx__tensor_ref(t);
  cr_expect_eq(t->refs, 3);
  dfx__tensor_unref(t);
  dfx__tensor_unref(t);
  cr_expect_eq(t->refs, 1);
  cr_expect(dfx__tensor_unique(t), "unique again once the last other reference drops");
  dfx__tensor_unref(t);
  cr_expect_eq(live(), 0, "the last unref frees struct and buffer");
  cr_expect_null(dfx__tensor_ref(NULL));
  dfx__tensor_unref(NULL);
  dfx_tensor_free(NULL);
}

Test(tensor, a_view_is_never_unique_and_its_base_is_unique_again_after_it) {
  int64_t d[1] = {64}, d2[2] = {8, 8};
  dfx_tensor *t = dfx__tensor_alloc(DFX_F32, 1, d, NULL);
  dfx_tensor *v = dfx__tensor_reshaped(t, 2, d2);
  cr_assert_not_null(v);
  cr_expect_not(dfx__tensor_unique(t), "the view holds the base");
  cr_expect_not(dfx__tensor_unique(v), "a view shares its elements, so a kernel may not write them");
  dfx__tensor_unref(v);
  cr_expect(dfx__tensor_unique(t));
  dfx__tensor_unref(t);
}

/* ---- immortal tensors and export ---- */

Test(tensor, immortal_tensors_ignore_ref_and_unref) {
  int64_t d[1] = {16};
  dfx_tensor *t = dfx__tensor_alloc(DFX_I32, 1, d, NULL);
  for (int i = 0; i < 16; i++) ((int32_t *)t->data)[i] = i * i;
  dfx__tensor_set_immortal(t);
  cr_expect_eq(dfx__tensor_ref(t), t);
  cr_expect_eq(t->refs, 1, "ref does not count an immortal");
  for (int i = 0; i < 5; i++) dfx__tensor_unref(t);
  cr_expect_eq(t->refs, 1, "unref does not count it either");
  cr_expect_eq(((int32_t *)t->data)[15], 225, "and does not free it");
  cr_expect_not(dfx__tensor_unique(t), "nobody may write into a session's constant");
  dfx__tensor_free_immortal(t);
  cr_expect_eq(live(), 0, "the owner frees it");
  dfx__tensor_free_immortal(NULL);
}

Test(tensor, export_of_a_mortal_tensor_is_another_reference) {
  dfx_tensor *t = dfx__tensor_alloc(DFX_F32, 0, NULL, NULL);
  dfx_tensor *e = dfx__tensor_export(t);
  cr_expect_eq(e, t);
  cr_expect_eq(t->refs, 2);
  dfx__tensor_unref(e);
  dfx__tensor_unref(t);
}

enum { IMM_SMALL, IMM_LARGE, IMM_STRING, IMM_VIEW, IMM_COUNT };
static const char *const imm_names[] = {"small", "large", "string", "view of a large base"};

/* An immortal owner of each kind, filled with a pattern. */
static dfx_tensor *make_immortal(int kind) {
  int64_t d64[1] = {64}, d3[1] = {3}, d8[2] = {8, 8};
  dfx_tensor *t;
  switch (kind) {
    case IMM_SMALL:
      t = dfx__tensor_alloc(DFX_F32, 1, d3, NULL);
      for (int i = 0; i < 3; i++) ((float *)t->data)[i] = (float)i + 0.5f;
      break;
    case IMM_LARGE:
      t = dfx__tensor_alloc(DFX_F32, 1, d64, NULL);
      for (int i = 0; i < 64; i++) ((float *)t->data)[i] = (float)i + 0.5f;
      break;
    case IMM_STRING:
      t = dfx__tensor_alloc(DFX_STRING, 1, d3, NULL);
      dfx_tensor_set_string(t, 0, "0.5", 3);
      dfx_tensor_set_string(t, 2, "2.5", 3);
      break;
    default: { /* a Const whose value is a view: the immortal holds its base */
      dfx_tensor *base = dfx__tensor_alloc(DFX_F32, 1, d64, NULL);
      for (int i = 0; i < 64; i++) ((float *)base->data)[i] = (float)i + 0.5f;
      t = dfx__tensor_reshaped(base, 2, d8);
      dfx__tensor_unref(base);
    }
  }
  cr_assert_not_null(t);
  dfx__tensor_set_immortal(t);
  return t;
}

static void expect_pattern(const dfx_tensor *e, int kind) {
  if (kind == IMM_STRING) {
    size_t len;
    cr_expect_eq(memcmp(dfx_tensor_string(e, 0, &len), "0.5", 3), 0);
    cr_expect_eq(len, 3);
    dfx_tensor_string(e, 1, &len);
    cr_expect_eq(len, 0);
    cr_expect_eq(memcmp(dfx_tensor_string(e, 2, &len), "2.5", 3), 0);
    return;
  }
  for (int64_t i = 0; i < e->count; i++)
    cr_expect_eq(((const float *)e->data)[i], (float)i + 0.5f, "%s [%lld]", imm_names[kind], (long long)i);
}

Test(tensor, export_of_an_immortal_outlives_its_owner) {
  for (int k = 0; k < IMM_COUNT; k++) {
    dfx_tensor *owner = make_immortal(k);
    dfx_tensor *e = dfx__tensor_export(owner);
    cr_assert_not_null(e, "%s", imm_names[k]);
    cr_expect_neq(e, owner, "%s: the user cannot hold the session's own tensor", imm_names[k]);
    cr_expect_not(e->immortal, "%s: the export is an ordinary tensor", imm_names[k]);
    cr_expect_eq(e->dtype, owner->dtype);
    cr_expect(dfx__tensor_same_shape(e, owner), "%s", imm_names[k]);
    size_t owner_bytes = owner->nbytes;
    dfx__tensor_free_immortal(owner); /* the session goes away */
    dfx__tensor_cache_flush();        /* and its structs with it */
    /* Whatever memory the owner had is handed out again and overwritten,
     * so a dangling export reads garbage even without ASan. */
    void *scribble[16];
    for (int i = 0; i < 16; i++) {
      size_t n = i % 2 ? sizeof(dfx_tensor) : owner_bytes;
      scribble[i] = dfx__malloc(n);
      memset(scribble[i], 0xee, n);
    }
    expect_pattern(e, k);
    for (int i = 0; i < 16; i++) dfx__free(scribble[i]);
    cr_expect_eq(e->refs, 1);
    dfx_tensor *again = dfx__tensor_ref(e);
    cr_expect_eq(e->refs, 2, "%s: an export is reference counted", imm_names[k]);
    dfx__tensor_unref(again);
    dfx__tensor_unref(e);
    cr_expect_eq(live(), 0, "%s", imm_names[k]);
  }
}

Test(tensor, export_of_an_immortal_fails_cleanly_without_memory) {
  for (int k = 0; k < IMM_COUNT; k++) {
    dfx_tensor *owner = make_immortal(k);
    for (long long n = 1;; n++) {
      long long base = live();
      eu_alloc.fail_at = eu_alloc.n_allocs + n;
      dfx_tensor *e = dfx__tensor_export(owner);
      eu_alloc.fail_at = 0;
      if (e) {
        dfx__tensor_unref(e);
        break;
      }
      cr_expect_eq(live(), base, "%s, allocation %lld leaked", imm_names[k], n);
      expect_pattern(owner, k);
      cr_assert_lt(n, 10);
    }
    dfx__tensor_free_immortal(owner);
  }
}

/* ---- views and copies ---- */

Test(tensor, reshaped_shares_elements_and_keeps_the_base_alive) {
  int64_t d[2] = {4, 16}, d2[2] = {8, 8}, d3[3] = {1, 64, 1}, d1[1] = {64};
  dfx_tensor *t = dfx__tensor_alloc(DFX_I32, 2, d, NULL);
  for (int i = 0; i < 64; i++) ((int32_t *)t->data)[i] = 1000 + i;
  dfx_tensor *v = dfx__tensor_reshaped(t, 2, d2);
  cr_assert_not_null(v);
  cr_expect_eq(v->data, t->data, "a large tensor's view shares its elements");
  cr_expect_eq(v->ndims, 2);
  cr_expect_eq(v->dims[0], 8);
  cr_expect_eq(v->count, 64);
  cr_expect_eq(v->nbytes, t->nbytes);
  cr_expect_eq(v->refs, 1);
  dfx_tensor *w = dfx__tensor_reshaped(v, 3, d3); /* a view of a view */
  dfx_tensor *f = dfx__tensor_reshaped(t, 1, d1);
  cr_assert_not_null(w);
  cr_assert_not_null(f);
  dfx__tensor_unref(t);
  dfx__tensor_unref(v);
  dfx__tensor_cache_flush();
  for (int i = 0; i < 64; i++) {
    cr_assert_eq(((int32_t *)w->data)[i], 1000 + i, "the base outlives its last direct owner");
    cr_assert_eq(((int32_t *)f->data)[i], 1000 + i);
  }
  dfx__tensor_unref(w);
  cr_expect_gt(live(), 0, "f still holds the base");
  dfx__tensor_unref(f);
  cr_expect_eq(live(), 0);
}

Test(tensor, reshaped_of_small_and_string_tensors_keeps_the_values) {
  int64_t d[1] = {6}, d2[2] = {2, 3}, d1[1] = {1};
  dfx_tensor *t = dfx__tensor_alloc(DFX_I16, 1, d, NULL);
  for (int i = 0; i < 6; i++) ((int16_t *)t->data)[i] = (int16_t)(-i);
  dfx_tensor *v = dfx__tensor_reshaped(t, 2, d2);
  cr_assert_not_null(v);
  dfx__tensor_unref(t);
  cr_expect_eq(v->dims[1], 3);
  for (int i = 0; i < 6; i++) cr_expect_eq(((int16_t *)v->data)[i], -i);
  dfx__tensor_unref(v);

  dfx_tensor *s = dfx__tensor_alloc(DFX_STRING, 2, d2, NULL);
  cr_assert_eq(dfx_tensor_set_string(s, 4, "four", 4), DFX_OK);
  dfx_tensor *sv = dfx__tensor_reshaped(s, 1, d);
  cr_assert_not_null(sv);
  dfx__tensor_unref(s);
  size_t len;
  cr_expect_eq(memcmp(dfx_tensor_string(sv, 4, &len), "four", 4), 0);
  cr_expect_eq(len, 4);
  dfx__tensor_unref(sv);

  /* A scalar reshaped to [1] and back. */
  float x = 3.25f;
  dfx_tensor *sc = dfx__tensor_scalar(DFX_F32, &x);
  dfx_tensor *one = dfx__tensor_reshaped(sc, 1, d1);
  dfx_tensor *back = dfx__tensor_reshaped(one, 0, NULL);
  cr_assert_not_null(back);
  cr_expect_eq(back->ndims, 0);
  cr_expect_eq(*(float *)back->data, 3.25f);
  dfx__tensor_unref(sc);
  dfx__tensor_unref(one);
  dfx__tensor_unref(back);
}

Test(tensor, reshaped_refuses_another_count_or_rank) {
  int64_t d[2] = {4, 16};
  dfx_tensor *t = dfx__tensor_alloc(DFX_F32, 2, d, NULL);
  int64_t wrong[2] = {8, 9}, neg[2] = {-8, -8}, nine[9] = {1, 1, 1, 1, 1, 1, 1, 4, 16};
  cr_expect_null(dfx__tensor_reshaped(t, 2, wrong), "63 elements != 64");
  cr_expect_null(dfx__tensor_reshaped(t, 2, neg), "negative dims do not multiply to 64");
  cr_expect_null(dfx__tensor_reshaped(t, 9, nine), "more than DFX_MAX_DIMS");
  cr_expect_null(dfx__tensor_reshaped(t, -1, d));
  cr_expect_null(dfx__tensor_reshaped(t, 0, NULL), "a scalar has 1 element");
  cr_expect_eq(t->refs, 1, "a refused view takes no reference");
  dfx__tensor_unref(t);
}

Test(tensor, reshaped_fails_cleanly_without_memory) {
  int64_t d[1] = {64}, d2[2] = {8, 8};
  dfx_tensor *kinds[2] = {dfx__tensor_alloc(DFX_F64, 1, d, NULL), dfx__tensor_alloc(DFX_STRING, 1, d, NULL)};
  dfx_tensor_set_string(kinds[1], 7, "x", 1);
  for (int k = 0; k < 2; k++) {
    for (long long n = 1;; n++) {
      long long base = live();
      eu_alloc.fail_at = eu_alloc.n_allocs + n;
      dfx_tensor *v = dfx__tensor_reshaped(kinds[k], 2, d2);
      eu_alloc.fail_at = 0;
      if (v) {
        dfx__tensor_unref(v);
        break;
      }
      cr_expect_eq(live(), base, "kind %d allocation %lld leaked", k, n);
      cr_expect_eq(kinds[k]->refs, 1);
      cr_assert_lt(n, 10);
    }
    dfx__tensor_unref(kinds[k]);
  }
}

Test(tensor, copy_is_deep) {
  int64_t d[1] = {50};
  dfx_tensor *t = dfx__tensor_alloc(DFX_F64, 1, d, NULL);
  for (int i = 0; i < 50; i++) ((double *)t->data)[i] = i / 4.0;
  dfx_tensor *c = dfx__tensor_copy(t);
  cr_assert_not_null(c);
  cr_expect_neq(c->data, t->data);
  cr_expect(dfx__tensor_same_shape(c, t));
  cr_expect_eq(memcmp(c->data, t->data, t->nbytes), 0);
  cr_expect(dfx__tensor_unique(c), "a copy is the caller's alone");
  ((double *)c->data)[3] = -1;
  cr_expect_eq(((double *)t->data)[3], 0.75, "writing the copy leaves the original");
  dfx__tensor_unref(t);
  dfx__tensor_unref(c);

  int64_t d3[1] = {3};
  dfx_tensor *s = dfx__tensor_alloc(DFX_STRING, 1, d3, NULL);
  dfx_tensor_set_string(s, 0, "alpha", 5);
  dfx_tensor_set_string(s, 2, "g\0mma", 5);
  dfx_tensor *sc = dfx__tensor_copy(s);
  cr_assert_not_null(sc);
  const dfx_str *a = s->data, *b = sc->data;
  cr_expect_neq(a[0].ptr, b[0].ptr, "string bytes are copied");
  cr_expect_eq(b[1].len, 0);
  cr_expect_eq(b[2].len, 5);
  cr_expect_eq(memcmp(b[2].ptr, "g\0mma", 5), 0);
  dfx__tensor_unref(s);
  size_t len;
  cr_expect_eq(memcmp(dfx_tensor_string(sc, 0, &len), "alpha", 5), 0, "the copy outlives the original");
  dfx__tensor_unref(sc);
}

Test(tensor, copy_fails_cleanly_at_every_allocation) {
  int64_t d[1] = {40};
  dfx_tensor *big = dfx__tensor_alloc(DFX_I64, 1, d, NULL);
  dfx_tensor *str = dfx__tensor_alloc(DFX_STRING, 1, d, NULL);
  for (int i = 0; i < 40; i += 10) dfx_tensor_set_string(str, i, "value", 5);
  dfx_tensor *src[2] = {big, str};
  const int allocs[2] = {2, 2 + 4}; /* struct + buffer, + one block per non-empty string */
  for (int k = 0; k < 2; k++) {
    int failures = 0;
    for (long long n = 1;; n++) {
      long long base = live();
      eu_alloc.fail_at = eu_alloc.n_allocs + n;
      dfx_tensor *c = dfx__tensor_copy(src[k]);
      eu_alloc.fail_at = 0;
      if (c) {
        dfx__tensor_unref(c);
        break;
      }
      cr_expect_eq(live(), base, "source %d allocation %lld leaked", k, n);
      failures++;
      cr_assert_lt(n, 20);
    }
    cr_expect_eq(failures, allocs[k], "source %d", k);
  }
  dfx__tensor_unref(big);
  dfx__tensor_unref(str);
}

/* ---- shape helpers ---- */

Test(tensor, same_shape_compares_rank_and_dims) {
  int64_t a[2] = {2, 3}, b[2] = {3, 2}, one[1] = {1}, six[1] = {6};
  dfx_tensor *x = dfx__tensor_alloc(DFX_F32, 2, a, NULL), *x2 = dfx__tensor_alloc(DFX_I8, 2, a, NULL);
  dfx_tensor *y = dfx__tensor_alloc(DFX_F32, 2, b, NULL), *z = dfx__tensor_alloc(DFX_F32, 1, six, NULL);
  dfx_tensor *sc = dfx__tensor_alloc(DFX_F32, 0, NULL, NULL), *v1 = dfx__tensor_alloc(DFX_F32, 1, one, NULL);
  cr_expect(dfx__tensor_same_shape(x, x2), "dtype does not matter");
  cr_expect_not(dfx__tensor_same_shape(x, y));
  cr_expect_not(dfx__tensor_same_shape(x, z), "same count, other rank");
  cr_expect_not(dfx__tensor_same_shape(sc, v1), "[] is not [1]");
  cr_expect(dfx__tensor_same_shape(sc, sc));
  dfx_tensor *all[] = {x, x2, y, z, sc, v1};
  for (int i = 0; i < 6; i++) dfx__tensor_unref(all[i]);
}

Test(tensor, shape_str_writes_brackets_and_always_terminates) {
  char buf[64];
  int64_t d[3] = {2, -1, 1234567890123};
  cr_expect_str_eq(dfx__shape_str(0, NULL, buf, sizeof buf), "[]");
  cr_expect_str_eq(dfx__shape_str(1, d, buf, sizeof buf), "[2]");
  cr_expect_str_eq(dfx__shape_str(3, d, buf, sizeof buf), "[2,-1,1234567890123]");
  int64_t d45[2] = {4, 5};
  dfx_tensor *t = dfx__tensor_alloc(DFX_F32, 2, d45, NULL);
  cr_expect_str_eq(DFX_SHAPE_STR(t, buf), "[4,5]");
  dfx__tensor_unref(t);
  /* Small buffers: a prefix of the full text, terminated. */
  const char *full = "[2,-1,1234567890123]";
  for (size_t n = 1; n <= strlen(full) + 1; n++) {
    char small[32];
    memset(small, '#', sizeof small);
    dfx__shape_str(3, d, small, n);
    cr_assert_lt(strlen(small), n, "n=%zu: terminated inside the buffer", n);
    cr_expect_eq(strncmp(small, full, strlen(small)), 0, "n=%zu: '%s' is a prefix", n, small);
    cr_expect_eq(small[n], '#', "n=%zu: nothing written past the buffer", n);
  }
}

Test(tensor, element_reads_through_double_and_int64) {
  static const struct {
    dfx_dtype dt;
    unsigned char bytes[8];
    double f;
    int64_t i;
  } cases[] = {
      {DFX_I8, {0xfb}, -5, -5},
      {DFX_QI8, {0x80}, -128, -128},
      {DFX_U8, {0xfa}, 250, 250},
      {DFX_QU8, {0xff}, 255, 255},
      {DFX_BOOL, {1}, 1, 1},
      {DFX_I16, {0x00, 0x80}, -32768, -32768},
      {DFX_QI16, {0xff, 0x7f}, 32767, 32767},
      {DFX_U16, {0xff, 0xff}, 65535, 65535},
      {DFX_QU16, {0x01, 0x80}, 32769, 32769},
      {DFX_I32, {0xff, 0xff, 0xff, 0xff}, -1, -1},
      {DFX_QI32, {0x00, 0x00, 0x00, 0x80}, -2147483648.0, INT32_MIN},
      {DFX_U32, {0x00, 0x28, 0x6b, 0xee}, 4000000000.0, 4000000000},
      {DFX_I64, {0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xc0}, -4611686018427387904.0, INT64_C(-4611686018427387904)},
      {DFX_U64, {0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x40}, 4611686018427387904.0, INT64_C(4611686018427387904)},
      {DFX_F32, {0x00, 0x00, 0x20, 0x40}, 2.5, 2},     /* 2.5f; to int64 truncates */
      {DFX_F64, {0, 0, 0, 0, 0, 0, 0x04, 0xc0}, -2.5, -2}, /* -2.5; truncates toward zero */
      {DFX_F16, {0x00, 0x3c}, 1.0, 1},
      {DFX_F16, {0x00, 0xc5}, -5.0, -5},
      {DFX_BF16, {0x80, 0x3f}, 1.0, 1},
      {DFX_BF16, {0x20, 0x41}, 10.0, 10},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    int64_t d[1] = {2};
    dfx_tensor *t = dfx__tensor_zeros(cases[c].dt, 1, d, NULL);
    size_t esz = dfx_dtype_size(cases[c].dt);
    memcpy((char *)t->data + esz, cases[c].bytes, esz); /* element 1 */
    cr_expect_eq(dfx__tensor_get_f64(t, 1), cases[c].f, "case %zu (%s)", c, dfx_dtype_name(cases[c].dt));
    cr_expect_eq(dfx__tensor_get_i64(t, 1), cases[c].i, "case %zu (%s)", c, dfx_dtype_name(cases[c].dt));
    cr_expect_eq(dfx__tensor_get_f64(t, 0), 0.0);
    dfx__tensor_unref(t);
  }
}

/* ---- the byte limit ---- */

Test(tensor, the_byte_limit_fails_larger_tensors_with_elimit) {
  size_t dflt = dfx_set_max_tensor_bytes(1024);
  cr_expect_gt(dflt, 0);
  cr_expect_leq(dflt, DFX_TENSOR_MAX_BYTES_DEFAULT);
  cr_expect_eq(dfx__tensor_limit(), 1024);
  int64_t ok[1] = {256}, over[1] = {257}, bytes[1] = {1025}, two[2] = {16, 17};
  dfx_code code = DFX_EINTERNAL;
  dfx_tensor *t = dfx__tensor_alloc(DFX_F32, 1, ok, &code);
  cr_assert_not_null(t, "exactly at the limit is allowed");
  dfx__tensor_unref(t);
  long long before = eu_alloc.n_allocs;
  cr_expect_null(dfx__tensor_alloc(DFX_F32, 1, over, &code));
  cr_expect_eq(code, DFX_ELIMIT);
  cr_expect_null(dfx__tensor_zeros(DFX_U8, 1, bytes, &code));
  cr_expect_eq(code, DFX_ELIMIT);
  cr_expect_null(dfx__tensor_alloc(DFX_F32, 2, two, &code));
  cr_expect_eq(code, DFX_ELIMIT);
  cr_expect_null(dfx_tensor_new(DFX_F32, over, 1), "the public call obeys the limit too");
  cr_expect_eq(eu_alloc.n_allocs, before, "refused before allocating");

  /* A limit smaller than a scalar refuses the scalar. */
  cr_expect_eq(dfx_set_max_tensor_bytes(2), 1024, "the previous limit comes back");
  cr_expect_null(dfx__tensor_alloc(DFX_F32, 0, NULL, &code));
  cr_expect_eq(code, DFX_ELIMIT);
  cr_expect_null(dfx__tensor_scalar(DFX_F64, "12345678"));
  for (int k = 0; k < 3; k++) {
    dfx_dtype small[3] = {DFX_U8, DFX_BOOL, DFX_I16};
    t = dfx__tensor_alloc(small[k], 0, NULL, &code);
    cr_expect_not_null(t, "%s fits in 2 bytes", dfx_dtype_name(small[k]));
    dfx__tensor_unref(t);
  }
  /* Copies obey the limit that is in force now. */
  dfx_set_max_tensor_bytes(0);
  int64_t big[1] = {100};
  dfx_tensor *b = dfx__tensor_alloc(DFX_F32, 1, big, NULL);
  dfx_set_max_tensor_bytes(64);
  cr_expect_null(dfx__tensor_copy(b));
  dfx__tensor_unref(b);

  /* 0 restores the default. */
  cr_expect_eq(dfx_set_max_tensor_bytes(0), 64);
  cr_expect_eq(dfx_set_max_tensor_bytes(0), dflt, "the default is back");
  cr_expect_eq(dfx__tensor_limit(), dflt);
}

Test(tensor, the_default_limit_is_half_the_memory_at_most_64_gib) {
  size_t lim = dfx__tensor_limit();
  uint64_t mem = uv_get_total_memory();
  size_t want = mem / 2 > 0 && mem / 2 < DFX_TENSOR_MAX_BYTES_DEFAULT ? (size_t)(mem / 2) : DFX_TENSOR_MAX_BYTES_DEFAULT;
  cr_expect_eq(lim, want);
}

/* ---- the per-thread struct cache ---- */

Test(tensor, a_scalar_loop_does_not_allocate_in_steady_state) {
  int32_t v = 1;
  dfx__tensor_unref(dfx__tensor_scalar(DFX_I32, &v)); /* warm the cache */
  long long before = eu_alloc.n_allocs;
  for (int i = 0; i < 1000; i++) {
    dfx_tensor *a = dfx__tensor_scalar(DFX_I32, &i);
    dfx_tensor *b = dfx__tensor_scalar(DFX_F64, &(double){i * 0.5});
    cr_assert_eq(*(int32_t *)a->data, i, "a recycled struct holds the new value");
    cr_assert_eq(*(double *)b->data, i * 0.5);
    cr_assert_eq(a->refs, 1);
    dfx__tensor_unref(a);
    dfx__tensor_unref(b);
  }
  cr_expect_leq(eu_alloc.n_allocs - before, 1, "structs are recycled, not reallocated");
}

Test(tensor, flush_returns_every_cached_struct) {
  dfx_tensor *t[200];
  for (int i = 0; i < 200; i++) t[i] = dfx__tensor_alloc(DFX_U8, 0, NULL, NULL);
  for (int i = 0; i < 200; i++) dfx__tensor_unref(t[i]);
  dfx__tensor_cache_flush();
  cr_expect_eq(eu_alloc.live_blocks, 0);
  cr_expect_eq(eu_alloc.live_bytes, 0);
}

/* Structs wait in the cache after their tensor is gone. dfx_set_allocator
 * hands idle tensor *buffers* back to the allocator that made them
 * (core/alloc.c: "idle buffers go back to the allocator that made them");
 * idle tensor *structs* must not outlive their allocator either, or the next
 * allocator is asked to free a block it never made. */
Test(tensor, cached_structs_go_back_to_the_allocator_that_made_them) {
  /* Regression: this failed before the fix it names above. */
  dfx__tensor_cache_flush();
  dfx_testalloc a = {0};
  dfx__testalloc_install(&a);
  dfx__tensor_unref(dfx__tensor_scalar(DFX_I32, &(int32_t){5}));
  dfx__testalloc_install(&eu_alloc);
  long long a_live = a.live_blocks;
  dfx_tensor *t = dfx__tensor_scalar(DFX_I32, &(int32_t){6});
  dfx__tensor_unref(t);
  dfx__tensor_cache_flush();
  cr_expect_eq(a_live, 0, "the switch gave A's idle struct back to A");
  cr_expect_eq(eu_alloc.live_blocks, 0, "B freed only what B allocated");
}

static dfx_tensor *handed_over;

static void *small_churn(void *arg) {
  (void)arg;
  for (int i = 0; i < 10; i++) dfx__tensor_unref(dfx__tensor_alloc(DFX_I64, 0, NULL, NULL));
  dfx__tensor_unref(handed_over); /* made on the main thread, freed here */
  return NULL;
}

Test(tensor, a_thread_releases_its_cache_when_it_exits, .timeout = 10) {
  dfx__tensor_cache_flush();
  handed_over = dfx__tensor_alloc(DFX_F32, 0, NULL, NULL);
  pthread_t th;
  cr_assert_eq(pthread_create(&th, NULL, small_churn, NULL), 0);
  pthread_join(th, NULL);
  cr_expect_eq(eu_alloc.live_blocks, 0, "the thread's cached structs went back when it exited");
}

/* ---- threads: one tensor shared by four ---- */

#define N_THREADS 4
#define N_ROUNDS 50000

static void *hammer(void *arg) {
  dfx_tensor *t = arg;
  dfx_tensor *held[64];
  for (int i = 0; i < N_ROUNDS; i++) {
    dfx__tensor_unref(dfx__tensor_ref(t));
    if (i % 1000 == 0) { /* hold a batch for a while so counts go well above 1 */
      for (int k = 0; k < 64; k++) held[k] = dfx__tensor_ref(t);
      for (int k = 0; k < 64; k++) dfx__tensor_unref(held[k]);
    }
  }
  return NULL;
}

Test(tensor, refs_from_four_threads_add_up, .timeout = 30) {
  int64_t d[1] = {1024};
  dfx_tensor *t = dfx__tensor_alloc(DFX_F32, 1, d, NULL);
  pthread_t th[N_THREADS];
  for (int i = 0; i < N_THREADS; i++) cr_assert_eq(pthread_create(&th[i], NULL, hammer, t), 0);
  for (int i = 0; i < N_THREADS; i++) pthread_join(th[i], NULL);
  cr_expect_eq(t->refs, 1, "every ref was matched by an unref");
  cr_expect(dfx__tensor_unique(t));
  dfx__tensor_unref(t);
  cr_expect_eq(live(), 0);
}

/* ---- public tensor API ---- */

Test(tensor, tensor_new_is_zero_filled_with_the_given_shape) {
  int64_t d[2] = {2, 3};
  dfx_tensor *t = dfx_tensor_new(DFX_F32, d, 2);
  cr_assert_not_null(t);
  cr_expect_eq(dfx_tensor_dtype(t), DFX_F32);
  cr_expect_eq(dfx_tensor_ndims(t), 2);
  cr_expect_eq(dfx_tensor_dim(t, 0), 2);
  cr_expect_eq(dfx_tensor_dim(t, 1), 3);
  cr_expect_eq(dfx_tensor_dim(t, 2), -1, "out of range");
  cr_expect_eq(dfx_tensor_dim(t, -1), -1, "out of range");
  cr_expect_eq(dfx_tensor_count(t), 6);
  cr_expect_eq(dfx_tensor_nbytes(t), 24);
  const float *f = dfx_tensor_data(t);
  for (int i = 0; i < 6; i++) cr_expect_eq(f[i], 0.0f);
  dfx_tensor_free(t);

  /* A previously dirtied buffer comes back zeroed through the public call. */
  int64_t big[1] = {5000};
  t = dfx_tensor_new(DFX_I32, big, 1);
  memset(dfx_tensor_data(t), 0x77, dfx_tensor_nbytes(t));
  dfx_tensor_free(t);
  t = dfx_tensor_new(DFX_I32, big, 1);
  for (int i = 0; i < 5000; i++) cr_assert_eq(((int32_t *)dfx_tensor_data(t))[i], 0);
  dfx_tensor_free(t);

  t = dfx_tensor_new(DFX_BOOL, NULL, 0); /* a scalar needs no dims */
  cr_assert_not_null(t);
  cr_expect_eq(dfx_tensor_ndims(t), 0);
  cr_expect_eq(dfx_tensor_count(t), 1);
  cr_expect_eq(*(uint8_t *)dfx_tensor_data(t), 0);
  dfx_tensor_free(t);

  int64_t two[1] = {2};
  t = dfx_tensor_new(DFX_STRING, two, 1);
  cr_assert_not_null(t);
  cr_expect_null(dfx_tensor_data(t), "string tensors have no flat data");
  cr_expect_eq(dfx_tensor_nbytes(t), 0);
  size_t len = 7;
  cr_expect_str_eq(dfx_tensor_string(t, 1, &len), "");
  cr_expect_eq(len, 0);
  dfx_tensor_free(t);
}

Test(tensor, tensor_new_rejects_invalid_requests) {
  int64_t d[2] = {2, 3}, neg[1] = {-2}, nine[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  cr_expect_null(dfx_tensor_new(DFX_F32, NULL, 2), "dims NULL with rank 2");
  cr_expect_null(dfx_tensor_new(DFX_F32, d, -1));
  cr_expect_null(dfx_tensor_new(DFX_F32, nine, 9));
  cr_expect_null(dfx_tensor_new(DFX_F32, neg, 1));
  cr_expect_null(dfx_tensor_new(DFX_INVALID, d, 2));
  cr_expect_null(dfx_tensor_new((dfx_dtype)77, d, 2));
  cr_expect_null(dfx_tensor_new(DFX_RESOURCE, d, 2), "handles are not user data");
  cr_expect_null(dfx_tensor_new(DFX_VARIANT, d, 2));
  cr_expect_eq(live(), 0);
}

Test(tensor, tensor_new_copy_copies_exactly_nbytes) {
  int64_t d[1] = {6};
  int32_t src[6] = {1, -2, 3, -4, 5, -6};
  dfx_tensor *t = dfx_tensor_new_copy(DFX_I32, d, 1, src, sizeof src);
  cr_assert_not_null(t);
  cr_expect_neq(dfx_tensor_data(t), (void *)src);
  src[0] = 100;
  cr_expect_eq(((int32_t *)dfx_tensor_data(t))[0], 1, "the caller's buffer is not kept");
  cr_expect_eq(((int32_t *)dfx_tensor_data(t))[5], -6);
  dfx_tensor_free(t);

  cr_expect_null(dfx_tensor_new_copy(DFX_I32, d, 1, src, sizeof src - 1), "too few bytes");
  cr_expect_null(dfx_tensor_new_copy(DFX_I32, d, 1, src, sizeof src + 4), "too many bytes");
  cr_expect_null(dfx_tensor_new_copy(DFX_I32, d, 1, NULL, sizeof src), "no data");
  cr_expect_null(dfx_tensor_new_copy(DFX_STRING, d, 1, src, 6 * sizeof(dfx_str)), "not for strings");
  int64_t zero[1] = {0};
  t = dfx_tensor_new_copy(DFX_F64, zero, 1, NULL, 0);
  cr_assert_not_null(t, "an empty tensor needs no data");
  cr_expect_eq(dfx_tensor_count(t), 0);
  dfx_tensor_free(t);
  cr_expect_eq(live(), 0, "refused copies leak nothing");
}

static int deallocs;
static void *dealloc_data, *dealloc_ud;
static void count_dealloc(void *data, void *ud) {
  deallocs++;
  dealloc_data = data;
  dealloc_ud = ud;
}

Test(tensor, tensor_new_wrap_uses_caller_memory_until_the_last_reference) {
  static double buf[100];
  int64_t d[2] = {10, 10};
  int tag;
  deallocs = 0;
  dfx_tensor *t = dfx_tensor_new_wrap(DFX_F64, d, 2, buf, sizeof buf, count_dealloc, &tag);
  cr_assert_not_null(t);
  cr_expect_eq(dfx_tensor_data(t), (void *)buf, "used in place");
  cr_expect_eq(dfx_tensor_count(t), 100);
  cr_expect_not(dfx__tensor_unique(t), "a kernel must not write into the caller's memory");
  buf[7] = 7.5;
  cr_expect_eq(((double *)dfx_tensor_data(t))[7], 7.5);
  dfx__tensor_ref(t);
  dfx_tensor_free(t);
  cr_expect_eq(deallocs, 0, "a reference is still out");
  /* A view keeps the caller's memory too. */
  int64_t flat[1] = {100};
  dfx_tensor *v = dfx__tensor_reshaped(t, 1, flat);
  cr_assert_not_null(v);
  dfx_tensor_free(t);
  cr_expect_eq(deallocs, 0, "the view still reads the caller's memory");
  dfx_tensor_free(v);
  cr_expect_eq(deallocs, 1, "dealloc runs once, when the last reference goes");
  cr_expect_eq(dealloc_data, (void *)buf);
  cr_expect_eq(dealloc_ud, (void *)&tag);

  /* No dealloc is fine. */
  t = dfx_tensor_new_wrap(DFX_F64, d, 2, buf, sizeof buf, NULL, NULL);
  cr_assert_not_null(t);
  dfx_tensor_free(t);
  cr_expect_eq(live(), 0);
}

Test(tensor, tensor_new_wrap_failure_does_not_call_dealloc) {
  static float buf[12];
  int64_t d[2] = {3, 4}, nine[9] = {1, 1, 1, 1, 1, 1, 1, 1, 12};
  deallocs = 0;
  cr_expect_null(dfx_tensor_new_wrap(DFX_F32, d, 2, buf, sizeof buf - 4, count_dealloc, NULL), "wrong size");
  cr_expect_null(dfx_tensor_new_wrap(DFX_F32, d, 2, NULL, sizeof buf, count_dealloc, NULL), "no data");
  cr_expect_null(dfx_tensor_new_wrap(DFX_STRING, d, 2, buf, 12 * sizeof(dfx_str), count_dealloc, NULL));
  cr_expect_null(dfx_tensor_new_wrap(DFX_F32, NULL, 2, buf, sizeof buf, count_dealloc, NULL));
  cr_expect_null(dfx_tensor_new_wrap(DFX_F32, nine, 9, buf, sizeof buf, count_dealloc, NULL));
  eu_alloc.fail_at = eu_alloc.n_allocs + 1;
  cr_expect_null(dfx_tensor_new_wrap(DFX_F32, d, 2, buf, sizeof buf, count_dealloc, NULL), "out of memory");
  eu_alloc.fail_at = 0;
  cr_expect_eq(deallocs, 0, "on failure the caller keeps its memory");
}

Test(tensor, string_elements_are_set_read_and_replaced) {
  int64_t d[1] = {4};
  dfx_tensor *t = dfx_tensor_new(DFX_STRING, d, 1);
  cr_assert_eq(dfx_tensor_set_string(t, 0, "hello", 5), DFX_OK);
  cr_assert_eq(dfx_tensor_set_string(t, 1, "a\0b", 3), DFX_OK);
  cr_assert_eq(dfx_tensor_set_string(t, 3, "xx", 0), DFX_OK); /* length 0: an empty string */
  size_t len;
  cr_expect_eq(memcmp(dfx_tensor_string(t, 0, &len), "hello", 5), 0);
  cr_expect_eq(len, 5);
  cr_expect_eq(memcmp(dfx_tensor_string(t, 1, &len), "a\0b", 3), 0, "bytes, NULs included");
  cr_expect_eq(len, 3);
  cr_expect_not_null(dfx_tensor_string(t, 3, &len));
  cr_expect_eq(len, 0);
  cr_expect_not_null(dfx_tensor_string(t, 2, NULL), "len may be NULL");
  /* Replacing frees the old bytes (the leak check sees it). */
  cr_assert_eq(dfx_tensor_set_string(t, 0, "bye", 3), DFX_OK);
  cr_expect_eq(memcmp(dfx_tensor_string(t, 0, &len), "bye", 3), 0);
  cr_expect_eq(len, 3);
  cr_assert_eq(dfx_tensor_set_string(t, 0, NULL, 0), DFX_OK);
  dfx_tensor_string(t, 0, &len);
  cr_expect_eq(len, 0);
  dfx_tensor_free(t); /* frees the remaining strings */
}

Test(tensor, string_calls_refuse_bad_arguments) {
  int64_t d[1] = {2};
  dfx_tensor *s = dfx_tensor_new(DFX_STRING, d, 1);
  dfx_tensor *f = dfx_tensor_new(DFX_F32, d, 1);
  cr_expect_eq(dfx_tensor_set_string(s, 2, "x", 1), DFX_EINVAL, "index past the end");
  cr_expect_eq(dfx_tensor_set_string(s, -1, "x", 1), DFX_EINVAL);
  cr_expect_eq(dfx_tensor_set_string(s, 0, NULL, 3), DFX_EINVAL, "NULL bytes with a length");
  cr_expect_eq(dfx_tensor_set_string(f, 0, "x", 1), DFX_EINVAL, "not a string tensor");
  cr_expect_eq(dfx_tensor_set_string(NULL, 0, "x", 1), DFX_EINVAL);
  size_t len = 99;
  cr_expect_null(dfx_tensor_string(f, 0, &len));
  cr_expect_eq(len, 0);
  len = 99;
  cr_expect_null(dfx_tensor_string(s, 2, &len));
  cr_expect_eq(len, 0);
  cr_expect_null(dfx_tensor_string(s, -1, NULL));
  cr_expect_null(dfx_tensor_string(NULL, 0, NULL));

  /* Out of memory: DFX_ENOMEM and the old value stays. */
  cr_assert_eq(dfx_tensor_set_string(s, 0, "keep", 4), DFX_OK);
  eu_alloc.fail_at = eu_alloc.n_allocs + 1;
  cr_expect_eq(dfx_tensor_set_string(s, 0, "replace", 7), DFX_ENOMEM);
  eu_alloc.fail_at = 0;
  cr_expect_eq(memcmp(dfx_tensor_string(s, 0, &len), "keep", 4), 0);
  cr_expect_eq(len, 4);
  dfx_tensor_free(s);
  dfx_tensor_free(f);
}
