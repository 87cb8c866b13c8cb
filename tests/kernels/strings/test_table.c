/* test_table.c - lookup table kernels on one step with a resource store:
 * every key -> value pair TF registers, V1 (string pair) and V2 (resource)
 * handles, a naive linear-search reference, initialisation rules, sharing
 * by name, and hostile handles and shapes. */
#include "stest.h"

TestSuite(table, .init = st_setup, .fini = st_teardown, .timeout = 30);

/* ---- elements of any table dtype ---- */

/* n distinct keys or values of dtype t; salt shifts them. */
static dfx_tensor *mk(dfx_dtype t, int64_t n, int salt) {
  dfx_tensor *x = dfx__tensor_alloc(t, 1, &n, NULL);
  for (int64_t i = 0; i < n; i++) {
    switch (t) {
      case DFX_I32: ((int32_t *)x->data)[i] = (int32_t)(3 * i + salt - 5); break;
      case DFX_I64: ((int64_t *)x->data)[i] = (3 * i + salt) * 1000003LL - ((int64_t)1 << 40); break;
      case DFX_F32: ((float *)x->data)[i] = (float)(i + salt) * 0.5f; break;
      case DFX_F64: ((double *)x->data)[i] = (double)(i + salt) * -0.25; break;
      case DFX_BOOL: ((uint8_t *)x->data)[i] = (uint8_t)((i + salt) & 1); break;
      default: {
        char b[32];
        dfx_str *s = &((dfx_str *)x->data)[i];
        s->len = (size_t)snprintf(b, sizeof b, "s%lld_%d", (long long)(3 * i), salt);
        if (i == 0) s->len = 0; /* the empty string is a key like any other */
        s->ptr = s->len ? dfx__malloc(s->len) : NULL;
        memcpy(s->ptr ? s->ptr : b, b, s->len);
      }
    }
  }
  return x;
}

static dfx_tensor *scalar_of(const dfx_tensor *x, int64_t i) {
  dfx_tensor *s = dfx__tensor_alloc((dfx_dtype)x->dtype, 0, NULL, NULL);
  if (x->dtype == DFX_STRING) {
    const dfx_str *v = &((const dfx_str *)x->data)[i];
    dfx_str *d = s->data;
    d->len = v->len;
    d->ptr = v->len ? dfx__malloc(v->len) : NULL;
    if (v->len) memcpy(d->ptr, v->ptr, v->len);
  } else {
    size_t es = dfx__dtype_storage((dfx_dtype)x->dtype);
    memcpy(s->data, (const char *)x->data + (size_t)i * es, es);
  }
  return s;
}

/* A scalar of dtype t. */
static dfx_tensor *mk1(dfx_dtype t, int salt) {
  dfx_tensor *v = mk(t, 1, salt), *s = scalar_of(v, 0);
  dfx__tensor_unref(v);
  return s;
}

static bool eq(const dfx_tensor *a, int64_t i, const dfx_tensor *b, int64_t j) {
  if (a->dtype == DFX_STRING) {
    const dfx_str *x = &((const dfx_str *)a->data)[i], *y = &((const dfx_str *)b->data)[j];
    return x->len == y->len && (x->len == 0 || memcmp(x->ptr, y->ptr, x->len) == 0);
  }
  size_t es = dfx__dtype_storage((dfx_dtype)a->dtype);
  return memcmp((const char *)a->data + (size_t)i * es, (const char *)b->data + (size_t)j * es, es) == 0;
}

/* ---- running the ops ---- */

static dfx_tensor *table(bool v1, dfx_dtype k, dfx_dtype v, const char *node, const char *shared, bool share) {
  dfx_node *n = kh_node_new(v1 ? "HashTable" : "HashTableV2");
  dfx__free(n->name);
  n->name = dfx__strdup(node);
  kh_attr_type(n, "key_dtype", k);
  kh_attr_type(n, "value_dtype", v);
  if (shared) kh_attr_str(n, "shared_name", shared);
  if (share) kh_attr_bool(n, "use_node_name_sharing", 1);
  dfx_tensor *h = NULL;
  cr_assert_eq(st_run(n, NULL, 0, &h), DFX_OK, "%s", st_err);
  kh_node_free(n);
  return h;
}

static dfx_code op3(const char *op, const char *ka, const char *va, dfx_tensor *h, dfx_tensor *a, dfx_tensor *b,
                    dfx_tensor **out) {
  dfx_node *n = kh_node_new(op);
  kh_attr_type(n, ka, (dfx_dtype)a->dtype);
  kh_attr_type(n, va, (dfx_dtype)b->dtype);
  dfx_tensor *in[3] = {h, a, b}, *o[2] = {NULL, NULL};
  dfx_code c = st_run(n, in, 3, out ? out : o);
  kh_node_free(n);
  return c;
}

static dfx_code init(bool v1, dfx_tensor *h, dfx_tensor *k, dfx_tensor *v) {
  return op3(v1 ? "InitializeTable" : "InitializeTableV2", "Tkey", "Tval", h, k, v, NULL);
}
static dfx_code import(bool v1, dfx_tensor *h, dfx_tensor *k, dfx_tensor *v) {
  return op3(v1 ? "LookupTableImport" : "LookupTableImportV2", "Tin", "Tout", h, k, v, NULL);
}
static dfx_code find(bool v1, dfx_tensor *h, dfx_tensor *k, dfx_tensor *def, dfx_tensor **out) {
  return op3(v1 ? "LookupTableFind" : "LookupTableFindV2", "Tin", "Tout", h, k, def, out);
}
static int64_t size(bool v1, dfx_tensor *h) {
  dfx_node *n = kh_node_new(v1 ? "LookupTableSize" : "LookupTableSizeV2");
  dfx_tensor *o = NULL;
  cr_assert_eq(st_run(n, &h, 1, &o), DFX_OK, "%s", st_err);
  int64_t v = ((int64_t *)o->data)[0];
  dfx__tensor_unref(o);
  kh_node_free(n);
  return v;
}
static dfx_code export(bool v1, dfx_tensor *h, dfx_dtype k, dfx_dtype v, dfx_tensor **out) {
  dfx_node *n = kh_node_new(v1 ? "LookupTableExport" : "LookupTableExportV2");
  kh_attr_type(n, "Tkeys", k);
  kh_attr_type(n, "Tvalues", v);
  dfx_code c = st_run(n, &h, 1, out);
  kh_node_free(n);
  return c;
}

/* ---- every registered pair against the reference ---- */

static const struct {
  dfx_dtype k, v;
} pairs[] = {{DFX_I32, DFX_F64},    {DFX_I32, DFX_F32},    {DFX_I32, DFX_I32},    {DFX_I32, DFX_STRING},
             {DFX_I64, DFX_F64},    {DFX_I64, DFX_F32},    {DFX_I64, DFX_I32},    {DFX_I64, DFX_I64},
             {DFX_I64, DFX_STRING}, {DFX_STRING, DFX_BOOL}, {DFX_STRING, DFX_F64}, {DFX_STRING, DFX_F32},
             {DFX_STRING, DFX_I32}, {DFX_STRING, DFX_I64}, {DFX_STRING, DFX_STRING}};

static void roundtrip(bool v1, dfx_dtype kt, dfx_dtype vt) {
  const int64_t n = 40;
  dfx_tensor *h = table(v1, kt, vt, v1 ? "t1" : "t2", NULL, false);
  dfx_tensor *keys = mk(kt, n, 1), *vals = mk(vt, n, 2), *other = mk(kt, n, 7), *defs = mk1(vt, 9);
  cr_assert_eq(size(v1, h), 0);
  cr_assert_eq(init(v1, h, keys, vals), DFX_OK, "%s %s->%s: %s", v1 ? "v1" : "v2", dfx_dtype_name(kt),
               dfx_dtype_name(vt), st_err);
  cr_expect_eq(size(v1, h), n);
  /* Queries: every key backwards, then keys of another set (some hit). */
  int64_t qn = 2 * n;
  dfx_tensor *q = dfx__tensor_alloc(kt, 2, (int64_t[]){2, n}, NULL);
  for (int64_t i = 0; i < n; i++) {
    dfx_tensor *a = scalar_of(keys, n - 1 - i), *b = scalar_of(other, i);
    if (kt == DFX_STRING) {
      dfx_str *d = q->data;
      d[i] = *(dfx_str *)a->data, d[n + i] = *(dfx_str *)b->data;
      *(dfx_str *)a->data = *(dfx_str *)b->data = (dfx_str){0};
    } else {
      size_t es = dfx__dtype_storage(kt);
      memcpy((char *)q->data + (size_t)i * es, a->data, es);
      memcpy((char *)q->data + (size_t)(n + i) * es, b->data, es);
    }
    dfx__tensor_unref(a);
    dfx__tensor_unref(b);
  }
  dfx_tensor *out = NULL;
  cr_assert_eq(find(v1, h, q, defs, &out), DFX_OK, "%s", st_err);
  cr_assert(dfx__tensor_same_shape(out, q) && out->dtype == vt);
  for (int64_t i = 0; i < qn; i++) {
    int64_t hit = -1;
    for (int64_t j = 0; j < n && hit < 0; j++)
      if (eq(q, i, keys, j)) hit = j;
    cr_expect(hit >= 0 ? eq(out, i, vals, hit) : eq(out, i, defs, 0), "%s->%s query %lld (hit %lld)",
              dfx_dtype_name(kt), dfx_dtype_name(vt), (long long)i, (long long)hit);
  }
  /* Export gives every pair once. */
  dfx_tensor *ex[2] = {NULL, NULL};
  cr_assert_eq(export(v1, h, kt, vt, ex), DFX_OK, "%s", st_err);
  cr_assert_eq(ex[0]->count, n);
  for (int64_t i = 0; i < n; i++) {
    int64_t hit = -1;
    for (int64_t j = 0; j < n && hit < 0; j++)
      if (eq(ex[0], i, keys, j)) hit = j;
    cr_expect(hit >= 0 && eq(ex[1], i, vals, hit));
  }
  dfx_tensor *all[] = {h, keys, vals, other, defs, q, out, ex[0], ex[1]};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) dfx__tensor_unref(all[i]);
}

Test(table, every_registered_pair_matches_the_reference) {
  for (size_t p = 0; p < sizeof pairs / sizeof *pairs; p++) {
    roundtrip(false, pairs[p].k, pairs[p].v);
    roundtrip(true, pairs[p].k, pairs[p].v);
    st_teardown(); /* a fresh store each time: the node name repeats */
    st_setup();
  }
}

Test(table, unregistered_pairs_have_no_kernel) {
  dfx_node *n = kh_node_new("HashTableV2");
  kh_attr_type(n, "key_dtype", DFX_I32);
  kh_attr_type(n, "value_dtype", DFX_I64); /* TF registers int32 -> int64 only for MutableHashTable */
  dfx_tensor *h = NULL;
  cr_expect_eq(st_run(n, NULL, 0, &h), DFX_EUNIMPL, "%s", st_err);
  kh_attr_type(n, "key_dtype", DFX_F32);
  kh_attr_type(n, "value_dtype", DFX_F32);
  cr_expect_eq(st_run(n, NULL, 0, &h), DFX_EUNIMPL, "%s", st_err);
  kh_node_free(n);
}

/* ---- initialisation rules ---- */

Test(table, find_before_init_fails_and_size_is_zero) {
  for (int v1 = 0; v1 < 2; v1++) {
    dfx_tensor *h = table(v1, DFX_STRING, DFX_I64, v1 ? "a" : "b", NULL, false), *k = mk(DFX_STRING, 2, 0),
               *d = mk1(DFX_I64, 0), *o = NULL, *ex[2];
    cr_expect_eq(find(v1, h, k, d, &o), DFX_EPRECOND);
    cr_expect(strstr(st_err, "Table not initialized."), "%s", st_err);
    cr_expect_eq(size(v1, h), 0);
    cr_expect_eq(export(v1, h, DFX_STRING, DFX_I64, ex), DFX_EPRECOND);
    cr_expect(strstr(st_err, "HashTable is not initialized."), "%s", st_err);
    dfx__tensor_unref(h), dfx__tensor_unref(k), dfx__tensor_unref(d);
  }
}

Test(table, second_init_is_accepted_only_with_as_many_keys) {
  dfx_tensor *h = table(false, DFX_I64, DFX_I64, "t", NULL, false);
  dfx_tensor *k3 = mk(DFX_I64, 3, 0), *v3 = mk(DFX_I64, 3, 1), *k3b = mk(DFX_I64, 3, 5), *k2 = mk(DFX_I64, 2, 0),
             *v2 = mk(DFX_I64, 2, 1), *o = NULL;
  cr_assert_eq(init(false, h, k3, v3), DFX_OK, "%s", st_err);
  /* TF compares only the sizes: other keys of the same count are a no-op. */
  cr_expect_eq(init(false, h, k3b, v3), DFX_OK, "%s", st_err);
  cr_expect_eq(import(false, h, k3b, v3), DFX_OK, "%s", st_err);
  cr_expect_eq(init(false, h, k2, v2), DFX_EPRECOND);
  cr_expect(strstr(st_err, "Table was already initialized with different data."), "%s", st_err);
  /* The table still holds the first keys and values. */
  dfx_tensor *d = kh_tensor(DFX_I64, 0, NULL, (int64_t[]){-1});
  cr_assert_eq(find(false, h, k3, d, &o), DFX_OK, "%s", st_err);
  cr_expect(memcmp(o->data, v3->data, 24) == 0);
  dfx__tensor_unref(o);
  dfx_tensor *all[] = {h, k3, v3, k3b, k2, v2, d};
  for (size_t i = 0; i < 7; i++) dfx__tensor_unref(all[i]);
}

Test(table, duplicate_keys_must_agree) {
  dfx_tensor *h = table(false, DFX_I64, DFX_I64, "t", NULL, false);
  dfx_tensor *k = kh_i64(1, (int64_t[]){3}, (int64_t[]){1, 2, 1}), *v = kh_i64(1, (int64_t[]){3}, (int64_t[]){2, 5, 3});
  cr_expect_eq(init(false, h, k, v), DFX_EPRECOND);
  cr_expect(strstr(st_err, "HashTable has different value for same key. Key 1 has 2 and trying to add value 3"), "%s",
            st_err);
  cr_expect_eq(size(false, h), 0, "a failed initialisation leaves the table uninitialised");
  /* The same value twice is fine; the size counts distinct keys. */
  ((int64_t *)v->data)[2] = 2;
  cr_expect_eq(init(false, h, k, v), DFX_OK, "%s", st_err);
  cr_expect_eq(size(false, h), 2);
  /* ... so initialising again with the same 3 keys differs in size. */
  cr_expect_eq(init(false, h, k, v), DFX_EPRECOND);
  dfx__tensor_unref(h), dfx__tensor_unref(k), dfx__tensor_unref(v);

  h = table(true, DFX_STRING, DFX_F32, "u", NULL, false);
  const char *ks[] = {"x", "x"};
  k = st_vec(2, ks);
  v = kh_f32(1, (int64_t[]){2}, (float[]){0.5f, 0.1f});
  cr_expect_eq(init(true, h, k, v), DFX_EPRECOND);
  cr_expect(strstr(st_err, "Key x has 0.5 and trying to add value 0.1"), "%s", st_err);
  /* NaN never equals itself, in TF's map as here. */
  ((float *)v->data)[0] = ((float *)v->data)[1] = NAN;
  cr_expect_eq(init(true, h, k, v), DFX_EPRECOND, "%s", st_err);
  dfx__tensor_unref(h), dfx__tensor_unref(k), dfx__tensor_unref(v);
}

Test(table, init_and_import_shape_checks) {
  dfx_tensor *h = table(false, DFX_I32, DFX_I32, "t", NULL, false);
  dfx_tensor *m = kh_i32(2, (int64_t[]){2, 2}, (int32_t[]){1, 2, 3, 4}), *v4 = kh_i32(1, (int64_t[]){4}, NULL),
             *v3 = kh_i32(1, (int64_t[]){3}, (int32_t[]){7, 8, 9}), *k3 = kh_i32(1, (int64_t[]){3}, (int32_t[]){1, 2, 3}),
             *s = kh_scalar_i32(1);
  cr_expect_eq(init(false, h, m, v4), DFX_EINVAL);
  cr_expect(strstr(st_err, "Keys must be a vector, but received shape[2,2]"), "%s", st_err);
  cr_expect_eq(init(false, h, k3, s), DFX_EINVAL);
  cr_expect(strstr(st_err, "Values must be a vector, but received shape[]"), "%s", st_err);
  cr_expect_eq(init(false, h, k3, v4), DFX_EINVAL);
  cr_expect(strstr(st_err, "Keys and values must have the same size 3 vs 4"), "%s", st_err);
  /* Import takes keys of any shape with values of the same shape. */
  cr_expect_eq(import(false, h, m, v4), DFX_EINVAL);
  cr_expect(strstr(st_err, "Expected shape [2,2] for value, got [4]"), "%s", st_err);
  memcpy(v4->data, (int32_t[]){10, 20, 30, 40}, 16);
  dfx_tensor *v22 = kh_i32(2, (int64_t[]){2, 2}, (int32_t[]){10, 20, 30, 40}), *o = NULL;
  cr_expect_eq(import(false, h, m, v22), DFX_OK, "%s", st_err);
  cr_expect_eq(size(false, h), 4);
  /* Find with keys of any shape: the output has the keys' shape. */
  cr_assert_eq(find(false, h, m, s, &o), DFX_OK, "%s", st_err);
  cr_expect(dfx__tensor_same_shape(o, m) && memcmp(o->data, v22->data, 16) == 0);
  dfx__tensor_unref(o);
  dfx_tensor *e = kh_i32(2, (int64_t[]){0, 3}, NULL);
  cr_assert_eq(find(false, h, e, s, &o), DFX_OK, "%s", st_err);
  cr_expect(o->count == 0 && o->ndims == 2 && o->dims[1] == 3);
  dfx__tensor_unref(o);
  dfx_tensor *all[] = {h, m, v4, v3, k3, s, v22, e};
  for (size_t i = 0; i < 8; i++) dfx__tensor_unref(all[i]);
}

Test(table, default_value_scalar_or_full_shape) {
  dfx_tensor *h = table(false, DFX_STRING, DFX_I64, "t", NULL, false);
  const char *ks[] = {"a", "b"}, *qs[] = {"a", "z", "q"};
  dfx_tensor *k = st_vec(2, ks), *v = kh_i64(1, (int64_t[]){2}, (int64_t[]){1, 2}), *q = st_vec(3, qs), *o = NULL;
  cr_assert_eq(init(false, h, k, v), DFX_OK, "%s", st_err);
  /* A default of the keys' shape is accepted; HashTable uses its first
   * element for every missing key, as TF's does. */
  dfx_tensor *full = kh_i64(1, (int64_t[]){3}, (int64_t[]){-7, -8, -9}), *bad = kh_i64(1, (int64_t[]){2}, NULL);
  cr_assert_eq(find(false, h, q, full, &o), DFX_OK, "%s", st_err);
  cr_expect(memcmp(o->data, (int64_t[]){1, -7, -7}, 24) == 0);
  dfx__tensor_unref(o);
  cr_expect_eq(find(false, h, q, bad, &o), DFX_EINVAL);
  cr_expect(strstr(st_err, "Expected shape [] or [3] for default value, got [2]"), "%s", st_err);
  dfx_tensor *all[] = {h, k, v, q, full, bad};
  for (size_t i = 0; i < 6; i++) dfx__tensor_unref(all[i]);
}

Test(table, dtypes_must_match_the_table) {
  dfx_tensor *h = table(false, DFX_I64, DFX_I64, "t", NULL, false), *hs = table(true, DFX_I64, DFX_I64, "u", NULL, false);
  dfx_tensor *k32 = kh_i32(1, (int64_t[]){1}, (int32_t[]){1}), *v64 = kh_i64(1, (int64_t[]){1}, (int64_t[]){1}),
             *d = kh_scalar_i32(0), *o = NULL;
  cr_expect_eq(init(false, h, k32, v64), DFX_EINVAL);
  cr_expect(strstr(st_err, "Signature mismatch, have: resource, int32, int64-> expected: resource, int64, int64->"),
            "%s", st_err);
  cr_expect_eq(init(false, h, v64, v64), DFX_OK, "%s", st_err);
  cr_expect_eq(find(false, h, v64, d, &o), DFX_EINVAL);
  cr_expect(strstr(st_err, "have: resource, int64, int32->int32 expected: resource, int64, int64->int64"), "%s",
            st_err);
  cr_expect_eq(find(true, hs, k32, v64, &o), DFX_EINVAL);
  cr_expect(strstr(st_err, "have: string_ref, int32, int64->int64"), "%s", st_err);
  dfx_tensor *ex[2];
  cr_expect_eq(export(false, h, DFX_I64, DFX_STRING, ex), DFX_EINVAL, "%s", st_err);
  dfx_tensor *all[] = {h, hs, k32, v64, d};
  for (size_t i = 0; i < 5; i++) dfx__tensor_unref(all[i]);
}

/* ---- names, sharing and handles ---- */

Test(table, names_follow_tf_container_info) {
  dfx_tensor *p = table(true, DFX_I64, DFX_I64, "mytab", NULL, false);
  ST_EXPECT_STRS(p, 2, "localhost", "_0_mytab");
  dfx_tensor *q = table(true, DFX_I64, DFX_I64, "mytab", NULL, true);
  ST_EXPECT_STRS(q, 2, "localhost", "mytab");
  dfx_tensor *r = table(true, DFX_I64, DFX_I64, "other", "vocab", true);
  ST_EXPECT_STRS(r, 2, "localhost", "vocab");
  dfx_node *n = kh_node_new("HashTable");
  kh_attr_type(n, "key_dtype", DFX_I64);
  kh_attr_type(n, "value_dtype", DFX_I64);
  kh_attr_str(n, "container", "box");
  dfx_tensor *c = NULL;
  cr_assert_eq(st_run(n, NULL, 0, &c), DFX_OK, "%s", st_err);
  ST_EXPECT_STRS(c, 2, "box", "_0_kh_node");
  kh_node_free(n);
  cr_expect_eq(dfx__resmgr_count(st_store), 4);
  dfx__tensor_unref(p), dfx__tensor_unref(q), dfx__tensor_unref(r), dfx__tensor_unref(c);
}

Test(table, shared_name_shares_one_table) {
  dfx_tensor *a = table(false, DFX_STRING, DFX_I64, "a", "vocab", false);
  dfx_tensor *b = table(false, DFX_STRING, DFX_I64, "b", "vocab", false);
  dfx_tensor *c = table(true, DFX_STRING, DFX_I64, "c", "vocab", false);
  cr_expect_eq(((void **)a->data)[0], ((void **)b->data)[0]);
  const char *ks[] = {"x", "y"};
  dfx_tensor *k = st_vec(2, ks), *v = kh_i64(1, (int64_t[]){2}, (int64_t[]){4, 5}), *o = NULL,
             *d = kh_tensor(DFX_I64, 0, NULL, (int64_t[]){0});
  cr_assert_eq(init(false, a, k, v), DFX_OK, "%s", st_err);
  cr_assert_eq(find(true, c, k, d, &o), DFX_OK, "%s", st_err); /* a V1 handle names the same table */
  cr_expect(memcmp(o->data, v->data, 16) == 0);
  cr_expect_eq(size(false, b), 2);
  /* Running the creating node again returns the same table. */
  dfx_tensor *a2 = table(false, DFX_STRING, DFX_I64, "a", "vocab", false);
  cr_expect_eq(((void **)a2->data)[0], ((void **)a->data)[0]);
  cr_expect_eq(dfx__resmgr_count(st_store), 1);
  /* Another dtype under the same name conflicts. */
  dfx_node *n = kh_node_new("HashTableV2");
  kh_attr_type(n, "key_dtype", DFX_I64);
  kh_attr_type(n, "value_dtype", DFX_I64);
  kh_attr_str(n, "shared_name", "vocab");
  dfx_tensor *h = NULL;
  cr_expect_eq(st_run(n, NULL, 0, &h), DFX_EINVAL);
  cr_expect(strstr(st_err, "Conflicting key/value dtypes int64->int64 with string-int64 for table vocab"), "%s", st_err);
  kh_node_free(n);
  dfx_tensor *all[] = {a, b, c, k, v, o, d, a2};
  for (size_t i = 0; i < 8; i++) dfx__tensor_unref(all[i]);
}

Test(table, hostile_handles) {
  dfx_tensor *k = kh_i64(1, (int64_t[]){1}, (int64_t[]){1}), *d = kh_tensor(DFX_I64, 0, NULL, (int64_t[]){0}), *o;
  /* A resource scalar that is not a table of this store. */
  int x;
  dfx_tensor *forged = dfx__tensor_alloc(DFX_RESOURCE, 0, NULL, NULL);
  ((void **)forged->data)[0] = &x;
  cr_expect_eq(find(false, forged, k, d, &o), DFX_ENOTFOUND);
  cr_expect(strstr(st_err, "does not name a table of this session"), "%s", st_err);
  ((void **)forged->data)[0] = NULL;
  cr_expect_eq(find(false, forged, k, d, &o), DFX_ENOTFOUND);
  /* V1 pairs naming nothing, or of the wrong size. */
  const char *nope[] = {"localhost", "nope"}, *three[] = {"a", "b", "c"};
  dfx_tensor *h1 = st_vec(2, nope), *h3 = st_vec(3, three);
  cr_expect_eq(find(true, h1, k, d, &o), DFX_ENOTFOUND);
  cr_expect(strstr(st_err, "Table localhost nope does not exist"), "%s", st_err);
  cr_expect_eq(find(true, h3, k, d, &o), DFX_EINVAL);
  cr_expect(strstr(st_err, "Lookup table handle must be scalar, but had shape: [3]"), "%s", st_err);
  /* Embedded NULs and very long names never match. */
  dfx_tensor *hn = st_vec(2, nope);
  ((dfx_str *)hn->data)[1].ptr[1] = 0;
  cr_expect_eq(find(true, hn, k, d, &o), DFX_ENOTFOUND);
  /* Without a session's store the ops refuse to run. */
  st_step.store = NULL;
  cr_expect_eq(find(true, h1, k, d, &o), DFX_EPRECOND);
  dfx_node *n = kh_node_new("HashTableV2");
  kh_attr_type(n, "key_dtype", DFX_I64);
  kh_attr_type(n, "value_dtype", DFX_I64);
  cr_expect_eq(st_run(n, NULL, 0, &o), DFX_EPRECOND);
  cr_expect(strstr(st_err, "no resource store"), "%s", st_err);
  kh_node_free(n);
  st_step.store = st_store;
  dfx_tensor *all[] = {k, d, forged, h1, h3, hn};
  for (size_t i = 0; i < 6; i++) dfx__tensor_unref(all[i]);
}

Test(table, many_keys) {
  const int64_t n = 300000;
  dfx_tensor *h = table(false, DFX_I64, DFX_I32, "t", NULL, false);
  dfx_tensor *k = dfx__tensor_alloc(DFX_I64, 1, &n, NULL), *v = dfx__tensor_alloc(DFX_I32, 1, &n, NULL), *o = NULL,
             *d = kh_scalar_i32(-1);
  for (int64_t i = 0; i < n; i++) ((int64_t *)k->data)[i] = i * 7919, ((int32_t *)v->data)[i] = (int32_t)i;
  cr_assert_eq(init(false, h, k, v), DFX_OK, "%s", st_err);
  for (int64_t i = 0; i < n; i++) ((int64_t *)k->data)[i] += 1; /* all miss but i = 0 mod 7919 multiples */
  cr_assert_eq(find(false, h, k, d, &o), DFX_OK, "%s", st_err);
  for (int64_t i = 0; i < n; i++) {
    int64_t key = i * 7919 + 1;
    int32_t want = key % 7919 == 0 ? (int32_t)(key / 7919) : -1;
    if (((int32_t *)o->data)[i] != want) cr_assert_fail("key %lld", (long long)key);
  }
  dfx_tensor *all[] = {h, k, v, o, d};
  for (size_t i = 0; i < 5; i++) dfx__tensor_unref(all[i]);
}
