/* test_attr.c - dfx_attr values (core/attr.c): kind names, list element
 * sizes, dfx__attr_clear of every kind, and dfx__attr_copy, which must be
 * deep for every kind (tensors shared by reference, being immutable) and
 * must fail cleanly with DFX_ENOMEM at each of its allocations. The
 * fixtures are table-driven: one maker per attr kind and list kind. */
#include <criterion/criterion.h>
#include <string.h>

#include "../eutil.h"
#include "alloc.h"
#include "attr.h"
#include "tensor.h"

TestSuite(attr, .init = eu_setup, .fini = eu_teardown);

/* ---- kind names and element sizes ---- */

Test(attr, kind_names_are_tf_spellings) {
  static const struct {
    dfx_attr_kind k;
    const char *name;
  } t[] = {
      {DFX_ATTR_NONE, "none"},   {DFX_ATTR_S, "string"},     {DFX_ATTR_I, "int"},
      {DFX_ATTR_F, "float"},     {DFX_ATTR_B, "bool"},       {DFX_ATTR_TYPE, "type"},
      {DFX_ATTR_SHAPE, "shape"}, {DFX_ATTR_TENSOR, "tensor"}, {DFX_ATTR_FUNC, "func"},
      {DFX_ATTR_PLACEHOLDER, "placeholder"},                 {DFX_ATTR_LIST, "list"},
  };
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) cr_expect_str_eq(dfx__attr_kind_name(t[i].k), t[i].name);
  /* Out of range: "none", never NULL or a neighbour's name. */
  cr_expect_str_eq(dfx__attr_kind_name((dfx_attr_kind)(DFX_ATTR_LIST + 1)), "none");
  cr_expect_str_eq(dfx__attr_kind_name((dfx_attr_kind)-1), "none");
  cr_expect_str_eq(dfx__attr_kind_name((dfx_attr_kind)1000), "none");
}

Test(attr, list_element_sizes_are_the_union_members) {
  dfx_attr_list l;
  cr_expect_eq(dfx__attr_elem_size(DFX_ATTR_S), sizeof l.v.s[0]);
  cr_expect_eq(dfx__attr_elem_size(DFX_ATTR_I), sizeof l.v.i[0]);
  cr_expect_eq(dfx__attr_elem_size(DFX_ATTR_F), sizeof l.v.f[0]);
  cr_expect_eq(dfx__attr_elem_size(DFX_ATTR_B), sizeof l.v.b[0]);
  cr_expect_eq(dfx__attr_elem_size(DFX_ATTR_TYPE), sizeof l.v.type[0]);
  cr_expect_eq(dfx__attr_elem_size(DFX_ATTR_SHAPE), sizeof l.v.shape[0]);
  cr_expect_eq(dfx__attr_elem_size(DFX_ATTR_TENSOR), sizeof l.v.tensor[0]);
  cr_expect_eq(dfx__attr_elem_size(DFX_ATTR_FUNC), sizeof l.v.func[0]);
}

/* ---- fixtures: one fully populated attr per kind ---- */

static dfx_tensor *f32_vec(float a, float b) {
  int64_t d[1] = {2};
  dfx_tensor *t = dfx__tensor_alloc(DFX_F32, 1, d, NULL);
  cr_assert_not_null(t);
  ((float *)t->data)[0] = a;
  ((float *)t->data)[1] = b;
  return t;
}

static dfx_str str_of(const char *s, size_t n) { return (dfx_str){n ? dfx__strndup(s, n) : NULL, n}; }

static dfx_shape shape_of(int rank, const int64_t *dims) {
  dfx_shape s = {rank, NULL};
  if (rank > 0) {
    s.dims = dfx__malloc(sizeof(int64_t) * (size_t)rank);
    memcpy(s.dims, dims, sizeof(int64_t) * (size_t)rank);
  }
  return s;
}

static void *list_block(dfx_attr *a, dfx_attr_kind k, int n) {
  a->kind = DFX_ATTR_LIST;
  a->v.list.kind = k;
  a->v.list.n = n;
  a->v.list.v.i = dfx__calloc((size_t)n, dfx__attr_elem_size(k));
  return a->v.list.v.i;
}

enum {
  FX_S, FX_S_EMPTY, FX_PLACEHOLDER, FX_I, FX_F, FX_B, FX_TYPE_REF, FX_SHAPE, FX_SHAPE_UNKNOWN, FX_SHAPE_SCALAR,
  FX_TENSOR, FX_FUNC, FX_NONAME, FX_LIST_S, FX_LIST_I, FX_LIST_F, FX_LIST_B, FX_LIST_TYPE, FX_LIST_SHAPE,
  FX_LIST_TENSOR, FX_LIST_FUNC, FX_LIST_EMPTY, FX_COUNT
};

static const char *const fx_names[FX_COUNT] = {
    "s", "s_empty", "placeholder", "i", "f", "b", "type_ref", "shape", "shape_unknown", "shape_scalar",
    "tensor", "func", "noname", "list_s", "list_i", "list_f", "list_b", "list_type", "list_shape",
    "list_tensor", "list_func", "list_empty"};

static void make(int fx, dfx_attr *a) {
  memset(a, 0, sizeof *a);
  a->name = fx == FX_NONAME ? NULL : dfx__strdup(fx_names[fx]);
  static const int64_t dims3[3] = {2, -1, 5}, dims2[2] = {7, 8};
  switch (fx) {
    case FX_S: a->kind = DFX_ATTR_S, a->v.s = str_of("a\0bc", 4); break;
    case FX_S_EMPTY: a->kind = DFX_ATTR_S, a->v.s = (dfx_str){NULL, 0}; break;
    case FX_PLACEHOLDER: a->kind = DFX_ATTR_PLACEHOLDER, a->v.s = str_of("T", 1); break;
    case FX_I: a->kind = DFX_ATTR_I, a->v.i = -(INT64_C(1) << 40); break;
    case FX_F: a->kind = DFX_ATTR_F, a->v.f = 2.5f; break;
    case FX_B: a->kind = DFX_ATTR_B, a->v.b = true; break;
    case FX_TYPE_REF: a->kind = DFX_ATTR_TYPE, a->v.type = DFX_I64, a->ref_dtype = true; break;
    case FX_SHAPE: a->kind = DFX_ATTR_SHAPE, a->v.shape = shape_of(3, dims3); break;
    case FX_SHAPE_UNKNOWN: a->kind = DFX_ATTR_SHAPE, a->v.shape = shape_of(-1, NULL); break;
    case FX_SHAPE_SCALAR: a->kind = DFX_ATTR_SHAPE, a->v.shape = shape_of(0, NULL); break;
    case FX_TENSOR: a->kind = DFX_ATTR_TENSOR, a->v.tensor = f32_vec(1.5f, -3.0f); break;
    case FX_FUNC: a->kind = DFX_ATTR_FUNC, a->v.func = dfx__strdup("cond_fn"); break;
    case FX_NONAME: a->kind = DFX_ATTR_I, a->v.i = 9; break;
    case FX_LIST_S: {
      dfx_str *s = list_block(a, DFX_ATTR_S, 3);
      s[0] = str_of("x", 1), s[1] = (dfx_str){NULL, 0}, s[2] = str_of("yz\0", 3);
      break;
    }
    case FX_LIST_I: {
      int64_t *v = list_block(a, DFX_ATTR_I, 3);
      v[0] = 1, v[1] = -2, v[2] = INT64_MAX;
      break;
    }
    case FX_LIST_F: {
      float *v = list_block(a, DFX_ATTR_F, 2);
      v[0] = 0.25f, v[1] = -1e30f;
      break;
    }
    case FX_LIST_B: {
      bool *v = list_block(a, DFX_ATTR_B, 3);
      v[0] = true, v[1] = false, v[2] = true;
      break;
    }
    case FX_LIST_TYPE: {
      dfx_dtype *v = list_block(a, DFX_ATTR_TYPE, 2);
      v[0] = DFX_STRING, v[1] = DFX_C128;
      break;
    }
    case FX_LIST_SHAPE: {
      dfx_shape *v = list_block(a, DFX_ATTR_SHAPE, 3);
      v[0] = shape_of(2, dims2), v[1] = shape_of(-1, NULL), v[2] = shape_of(3, dims3);
      break;
    }
    case FX_LIST_TENSOR: {
      dfx_tensor **v = list_block(a, DFX_ATTR_TENSOR, 2);
      v[0] = f32_vec(1, 2), v[1] = f32_vec(3, 4);
      break;
    }
    case FX_LIST_FUNC: {
      char **v = list_block(a, DFX_ATTR_FUNC, 2);
      v[0] = dfx__strdup("f"), v[1] = dfx__strdup("g_and_h");
      break;
    }
    case FX_LIST_EMPTY: a->kind = DFX_ATTR_LIST, a->v.list = (dfx_attr_list){.kind = DFX_ATTR_NONE, .n = 0}; break;
  }
}

/* ---- equality, and "shares no owned block" ---- */

static bool str_eq(const dfx_str *a, const dfx_str *b) {
  return a->len == b->len && (a->len == 0 || memcmp(a->ptr, b->ptr, a->len) == 0);
}
static bool shape_eq(const dfx_shape *a, const dfx_shape *b) {
  return a->rank == b->rank && (a->rank <= 0 || memcmp(a->dims, b->dims, sizeof(int64_t) * (size_t)a->rank) == 0);
}
static bool tensor_eq(const dfx_tensor *a, const dfx_tensor *b) {
  return a->dtype == b->dtype && a->count == b->count && a->nbytes == b->nbytes &&
         memcmp(a->data, b->data, a->nbytes) == 0;
}

/* a and b hold equal values; `distinct` also requires that no owned block
 * (string bytes, dims, names, list arrays) is shared. */
static void expect_same(const dfx_attr *a, const dfx_attr *b, bool distinct, const char *what) {
  cr_assert_eq(a->kind, b->kind, "%s: kind", what);
  cr_expect_eq(a->ref_dtype, b->ref_dtype, "%s: ref_dtype", what);
  cr_expect_eq(!a->name, !b->name, "%s: name presence", what);
  if (a->name && b->name) {
    cr_expect_str_eq(a->name, b->name, "%s", what);
    if (distinct) cr_expect_neq(a->name, b->name, "%s: the name must be copied", what);
  }
  switch (a->kind) {
    case DFX_ATTR_S:
    case DFX_ATTR_PLACEHOLDER:
      cr_expect(str_eq(&a->v.s, &b->v.s), "%s", what);
      if (distinct && a->v.s.ptr) cr_expect_neq(a->v.s.ptr, b->v.s.ptr, "%s: bytes copied", what);
      break;
    case DFX_ATTR_I: cr_expect_eq(a->v.i, b->v.i, "%s", what); break;
    case DFX_ATTR_F: cr_expect_eq(a->v.f, b->v.f, "%s", what); break;
    case DFX_ATTR_B: cr_expect_eq(a->v.b, b->v.b, "%s", what); break;
    case DFX_ATTR_TYPE: cr_expect_eq(a->v.type, b->v.type, "%s", what); break;
    case DFX_ATTR_SHAPE:
      cr_expect(shape_eq(&a->v.shape, &b->v.shape), "%s", what);
      if (distinct && a->v.shape.dims) cr_expect_neq(a->v.shape.dims, b->v.shape.dims, "%s: dims copied", what);
      break;
    case DFX_ATTR_TENSOR: cr_expect(tensor_eq(a->v.tensor, b->v.tensor), "%s", what); break;
    case DFX_ATTR_FUNC:
      cr_expect_str_eq(a->v.func, b->v.func, "%s", what);
      if (distinct) cr_expect_neq(a->v.func, b->v.func, "%s: name copied", what);
      break;
    case DFX_ATTR_LIST: {
      const dfx_attr_list *x = &a->v.list, *y = &b->v.list;
      cr_assert_eq(x->n, y->n, "%s: list length", what);
      cr_expect_eq(x->kind, y->kind, "%s: list kind", what);
      if (x->n && distinct) cr_expect_neq(x->v.i, y->v.i, "%s: the list array is copied", what);
      for (int k = 0; k < x->n; k++) {
        switch (x->kind) {
          case DFX_ATTR_S:
            cr_expect(str_eq(&x->v.s[k], &y->v.s[k]), "%s[%d]", what, k);
            if (distinct && x->v.s[k].ptr) cr_expect_neq(x->v.s[k].ptr, y->v.s[k].ptr, "%s[%d]", what, k);
            break;
          case DFX_ATTR_I: cr_expect_eq(x->v.i[k], y->v.i[k], "%s[%d]", what, k); break;
          case DFX_ATTR_F: cr_expect_eq(x->v.f[k], y->v.f[k], "%s[%d]", what, k); break;
          case DFX_ATTR_B: cr_expect_eq(x->v.b[k], y->v.b[k], "%s[%d]", what, k); break;
          case DFX_ATTR_TYPE: cr_expect_eq(x->v.type[k], y->v.type[k], "%s[%d]", what, k); break;
          case DFX_ATTR_SHAPE:
            cr_expect(shape_eq(&x->v.shape[k], &y->v.shape[k]), "%s[%d]", what, k);
            if (distinct && x->v.shape[k].dims) cr_expect_neq(x->v.shape[k].dims, y->v.shape[k].dims);
            break;
          case DFX_ATTR_TENSOR: cr_expect(tensor_eq(x->v.tensor[k], y->v.tensor[k]), "%s[%d]", what, k); break;
          case DFX_ATTR_FUNC:
            cr_expect_str_eq(x->v.func[k], y->v.func[k], "%s[%d]", what, k);
            if (distinct) cr_expect_neq(x->v.func[k], y->v.func[k]);
            break;
          default: cr_expect_fail("%s: unexpected list kind %d", what, x->kind);
        }
      }
      break;
    }
    default: break;
  }
}

static bool all_zero(const dfx_attr *a) {
  static const dfx_attr zero;
  return memcmp(a, &zero, sizeof zero) == 0;
}

/* ---- clear ---- */

Test(attr, clear_releases_every_kind_and_leaves_a_blank_attr) {
  for (int fx = 0; fx < FX_COUNT; fx++) {
    dfx__tensor_cache_flush();
    long long base = eu_alloc.live_blocks;
    dfx_attr a;
    make(fx, &a);
    dfx__attr_clear(&a);
    cr_expect(all_zero(&a), "%s: a cleared attr is all zero (kind none, no name)", fx_names[fx]);
    dfx__tensor_cache_flush(); /* freed tensor structs may wait in the thread cache */
    cr_expect_eq(eu_alloc.live_blocks, base, "%s: clear must free everything the attr owns", fx_names[fx]);
    dfx__attr_clear(&a); /* clearing a blank attr is harmless */
  }
  dfx__attr_clear(NULL);
}

Test(attr, clear_drops_one_reference_to_a_tensor) {
  dfx_attr a;
  make(FX_TENSOR, &a);
  dfx_tensor *t = dfx__tensor_ref(a.v.tensor); /* ours */
  cr_assert_eq(t->refs, 2);
  dfx__attr_clear(&a);
  cr_expect_eq(t->refs, 1, "the attr's reference is gone, ours is not");
  cr_expect_eq(((float *)t->data)[1], -3.0f);
  dfx__tensor_unref(t);

  make(FX_LIST_TENSOR, &a);
  dfx_tensor *e0 = dfx__tensor_ref(a.v.list.v.tensor[0]), *e1 = dfx__tensor_ref(a.v.list.v.tensor[1]);
  dfx__attr_clear(&a);
  cr_expect_eq(e0->refs, 1);
  cr_expect_eq(e1->refs, 1);
  dfx__tensor_unref(e0);
  dfx__tensor_unref(e1);
}

/* ---- copy ---- */

Test(attr, copy_is_deep_for_every_kind) {
  for (int fx = 0; fx < FX_COUNT; fx++) {
    dfx_attr src, dst, ref;
    make(fx, &src);
    memset(&dst, 0xa5, sizeof dst); /* copy must not read what dst held */
    cr_assert_eq(dfx__attr_copy(&dst, &src), DFX_OK, "%s", fx_names[fx]);
    expect_same(&src, &dst, true, fx_names[fx]);
    /* The copy outlives its source. */
    dfx__attr_clear(&src);
    make(fx, &ref);
    expect_same(&ref, &dst, true, fx_names[fx]);
    dfx__attr_clear(&ref);
    dfx__attr_clear(&dst);
  }
}

Test(attr, copy_shares_tensors_by_reference) {
  dfx_attr src, dst;
  make(FX_TENSOR, &src);
  cr_assert_eq(dfx__attr_copy(&dst, &src), DFX_OK);
  cr_expect_eq(dst.v.tensor, src.v.tensor, "tensors are immutable: the copy takes a reference");
  cr_expect_eq(src.v.tensor->refs, 2);
  dfx__attr_clear(&src);
  cr_expect_eq(dst.v.tensor->refs, 1);
  dfx__attr_clear(&dst);

  make(FX_LIST_TENSOR, &src);
  cr_assert_eq(dfx__attr_copy(&dst, &src), DFX_OK);
  for (int k = 0; k < 2; k++) {
    cr_expect_eq(dst.v.list.v.tensor[k], src.v.list.v.tensor[k]);
    cr_expect_eq(src.v.list.v.tensor[k]->refs, 2);
  }
  dfx__attr_clear(&dst);
  for (int k = 0; k < 2; k++) cr_expect_eq(src.v.list.v.tensor[k]->refs, 1);
  dfx__attr_clear(&src);
}

Test(attr, copy_of_an_empty_list_stays_an_empty_list) {
  dfx_attr src, dst;
  make(FX_LIST_EMPTY, &src);
  long long before = eu_alloc.n_allocs;
  cr_assert_eq(dfx__attr_copy(&dst, &src), DFX_OK);
  cr_expect_eq(eu_alloc.n_allocs, before + 1, "only the name is allocated");
  cr_expect_eq(dst.kind, DFX_ATTR_LIST, "an empty list is not a missing attr");
  cr_expect_eq(dst.v.list.n, 0);
  cr_expect_eq(dst.v.list.kind, DFX_ATTR_NONE);
  dfx__attr_clear(&src);
  dfx__attr_clear(&dst);
}

/* Fault injection: fail the copy's 1st, 2nd, ... allocation until it
 * succeeds. Every failure is DFX_ENOMEM with dst cleared and nothing leaked,
 * and there are exactly as many failure points as a successful copy makes
 * allocations. */
Test(attr, copy_fails_cleanly_at_every_allocation) {
  for (int fx = 0; fx < FX_COUNT; fx++) {
    dfx_attr src, dst;
    make(fx, &src);
    dfx__tensor_cache_flush();
    long long live = eu_alloc.live_blocks;
    int failures = 0;
    for (long long n = 1;; n++) {
      long long start = eu_alloc.n_allocs;
      eu_alloc.fail_at = start + n;
      dfx_code c = dfx__attr_copy(&dst, &src);
      eu_alloc.fail_at = 0;
      if (c == DFX_OK) {
        cr_expect_eq(eu_alloc.n_allocs - start, failures, "%s: one failure point per allocation", fx_names[fx]);
        expect_same(&src, &dst, true, fx_names[fx]);
        dfx__attr_clear(&dst);
        break;
      }
      cr_assert_eq(c, DFX_ENOMEM, "%s, allocation %lld", fx_names[fx], n);
      cr_expect(all_zero(&dst), "%s, allocation %lld: dst is cleared", fx_names[fx], n);
      dfx__tensor_cache_flush();
      cr_assert_eq(eu_alloc.live_blocks, live, "%s, allocation %lld: leaked (%lld live, %lld before)", fx_names[fx], n, eu_alloc.live_blocks, live);
      failures++;
      cr_assert_lt(n, 100, "%s never succeeded", fx_names[fx]);
    }
    /* Only fixtures that own nothing but a name (or nothing at all) fail once. */
    if (fx == FX_NONAME) cr_expect_eq(failures, 0);
    else cr_expect_geq(failures, 1, "%s", fx_names[fx]);
    dfx__attr_clear(&src);
  }
}
