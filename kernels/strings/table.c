/* table.c - TF's static lookup tables: HashTable/HashTableV2 create one in
 * the session's resource store (core/resmgr.h), InitializeTable(V2) and
 * LookupTableImport(V2) fill it once, LookupTableFind(V2), -Size(V2) and
 * -Export(V2) read it (tf.lookup.StaticHashTable's ops).
 *
 * Naming and sharing follow TF's ContainerInfo: container "" is
 * "localhost"; the name is shared_name, else the node name when
 * use_node_name_sharing, else "_0_<node>" (private to the node). So every
 * run of a session sees the same table, and two nodes with one shared_name
 * share it. The V1 handle is TF's Ref(string) pair {container, name} and
 * is resolved by name; the V2 handle is a resource scalar holding the
 * table pointer, trusted only once found in the session's store.
 *
 * Locking: `mu` serialises initialisation. Once `ready` is set (release)
 * the entries never change again, so Find/Size/Export read them without
 * the lock after an acquire load of `ready`. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "alloc.h"
#include "resmgr.h"
#include "step.h"
#include "sutil.h"

typedef union tval {
  int64_t i; /* int32/int64 keys and values, bool values */
  float f;
  double d;
  dfx_str s;
} tval;

typedef struct tentry {
  uint64_t hash;
  tval key, val;
} tentry;

typedef struct dfx_table {
  uv_mutex_t mu;
  dfx_dtype kdt, vdt;
  int ready;            /* atomic: initialised, entries frozen */
  int64_t n, cap;       /* entries */
  tentry *e;
  int64_t *slot;        /* open addressing: entry index + 1, 0 empty */
  int64_t nslot;        /* power of two, > 2 * n */
} dfx_table;

static void table_free(void *obj) {
  dfx_table *t = obj;
  for (int64_t i = 0; i < t->n; i++) {
    if (t->kdt == DFX_STRING) dfx__free(t->e[i].key.s.ptr);
    if (t->vdt == DFX_STRING) dfx__free(t->e[i].val.s.ptr);
  }
  dfx__free(t->e);
  dfx__free(t->slot);
  uv_mutex_destroy(&t->mu);
  dfx__free(t);
}

static const dfx_res_kind table_kind = {"lookup table", table_free};

/* ---- elements ---- */

static tval elem(const dfx_tensor *x, int64_t i) {
  tval v;
  switch ((dfx_dtype)x->dtype) {
    case DFX_I32: v.i = ((const int32_t *)x->data)[i]; break;
    case DFX_I64: v.i = ((const int64_t *)x->data)[i]; break;
    case DFX_BOOL: v.i = ((const uint8_t *)x->data)[i] != 0; break;
    case DFX_F32: v.f = ((const float *)x->data)[i]; break;
    case DFX_F64: v.d = ((const double *)x->data)[i]; break;
    default: v.s = ((const dfx_str *)x->data)[i]; break;
  }
  return v;
}

/* Stores v (a table's own value) into x[i]; false when a string copy fails. */
static bool put(dfx_tensor *x, int64_t i, tval v) {
  switch ((dfx_dtype)x->dtype) {
    case DFX_I32: ((int32_t *)x->data)[i] = (int32_t)v.i; return true;
    case DFX_I64: ((int64_t *)x->data)[i] = v.i; return true;
    case DFX_BOOL: ((uint8_t *)x->data)[i] = (uint8_t)v.i; return true;
    case DFX_F32: ((float *)x->data)[i] = v.f; return true;
    case DFX_F64: ((double *)x->data)[i] = v.d; return true;
    default: return dfx__s_set(&((dfx_str *)x->data)[i], v.s.ptr, v.s.len);
  }
}

static uint64_t key_hash(dfx_dtype kdt, tval k) {
  if (kdt == DFX_STRING) return dfx__s_fingerprint64(k.s.ptr ? k.s.ptr : "", k.s.len);
  uint64_t z = (uint64_t)k.i + 0x9e3779b97f4a7c15ULL; /* splitmix64's finaliser */
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/* Equality as TF's maps compare: bytes for strings, == for numbers (so a
 * NaN value never equals itself). */
static bool same(dfx_dtype dt, tval a, tval b) {
  switch (dt) {
    case DFX_F32: return a.f == b.f;
    case DFX_F64: return a.d == b.d;
    case DFX_STRING: return a.s.len == b.s.len && (a.s.len == 0 || memcmp(a.s.ptr, b.s.ptr, a.s.len) == 0);
    default: return a.i == b.i;
  }
}

/* How TF's StrCat prints a key or value in messages: the shortest of 6 (9)
 * or 15 (17) significant digits that reads back the same. */
static const char *show(dfx_dtype dt, tval v, char *buf, size_t n) {
  switch (dt) {
    case DFX_F32:
      snprintf(buf, n, "%.6g", v.f);
      if (!isnan(v.f) && strtof(buf, NULL) != v.f) snprintf(buf, n, "%.9g", v.f);
      break;
    case DFX_F64:
      snprintf(buf, n, "%.15g", v.d);
      if (!isnan(v.d) && strtod(buf, NULL) != v.d) snprintf(buf, n, "%.17g", v.d);
      break;
    case DFX_STRING: snprintf(buf, n, "%.*s", (int)(v.s.len > 200 ? 200 : v.s.len), v.s.ptr ? v.s.ptr : ""); break;
    default: snprintf(buf, n, "%lld", (long long)v.i); break;
  }
  return buf;
}

/* ---- the hash table ---- */

static int64_t find(const dfx_table *t, tval k, uint64_t h) {
  if (!t->nslot) return -1;
  for (int64_t m = t->nslot - 1, i = (int64_t)(h & (uint64_t)m);; i = (i + 1) & m) {
    int64_t s = t->slot[i];
    if (!s) return -1;
    if (t->e[s - 1].hash == h && same(t->kdt, t->e[s - 1].key, k)) return s - 1;
  }
}

static void place(dfx_table *t, int64_t idx) {
  int64_t m = t->nslot - 1, i = (int64_t)(t->e[idx].hash & (uint64_t)m);
  while (t->slot[i]) i = (i + 1) & m;
  t->slot[i] = idx + 1;
}

/* Room for `more` entries; DFX_ENOMEM / DFX_ELIMIT with a message. */
static dfx_code reserve(dfx_kctx *ctx, dfx_table *t, int64_t more) {
  size_t lim = dfx__tensor_limit();
  if (more > (int64_t)(lim / sizeof(tentry)) || t->n > (int64_t)(lim / sizeof(tentry)) - more)
    return dfx__kctx_fail(ctx, DFX_ELIMIT, "a table of %lld entries exceeds the tensor byte limit",
                          (long long)(t->n + more));
  int64_t need = t->n + more;
  if (need > t->cap) {
    tentry *ne = dfx__realloc(t->e, sizeof *ne * (size_t)need);
    if (!ne) return dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory growing a table to %lld entries", (long long)need);
    t->e = ne;
    t->cap = need;
  }
  if (need * 2 >= t->nslot) {
    int64_t ns = 16;
    while (ns <= need * 2) ns *= 2;
    int64_t *nsl = dfx__calloc((size_t)ns, sizeof *nsl);
    if (!nsl) return dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory growing a table to %lld entries", (long long)need);
    dfx__free(t->slot);
    t->slot = nsl;
    t->nslot = ns;
    for (int64_t i = 0; i < t->n; i++) place(t, i);
  }
  return DFX_OK;
}

/* HashTable::DoInsert: a key already present keeps its value and must be
 * given the same one. Entries inserted before an error stay (as in TF). */
static dfx_code insert(dfx_kctx *ctx, dfx_table *t, const dfx_tensor *keys, const dfx_tensor *vals) {
  dfx_code c = reserve(ctx, t, keys->count);
  for (int64_t i = 0; c == DFX_OK && i < keys->count; i++) {
    tval k = elem(keys, i), v = elem(vals, i);
    uint64_t h = key_hash(t->kdt, k);
    int64_t at = find(t, k, h);
    if (at >= 0) {
      if (!same(t->vdt, t->e[at].val, v)) {
        char b1[256], b2[256], b3[256];
        return dfx__kctx_fail(ctx, DFX_EPRECOND,
                              "HashTable has different value for same key. Key %s has %s and trying to add value %s",
                              show(t->kdt, k, b1, sizeof b1), show(t->vdt, t->e[at].val, b2, sizeof b2),
                              show(t->vdt, v, b3, sizeof b3));
      }
      continue;
    }
    tentry *e = &t->e[t->n];
    *e = (tentry){.hash = h, .key = k, .val = v};
    if (t->kdt == DFX_STRING) e->key.s = (dfx_str){0};
    if (t->vdt == DFX_STRING) e->val.s = (dfx_str){0};
    if ((t->kdt == DFX_STRING && !dfx__s_set(&e->key.s, k.s.ptr, k.s.len)) ||
        (t->vdt == DFX_STRING && !dfx__s_set(&e->val.s, v.s.ptr, v.s.len))) {
      dfx__free(e->key.s.ptr);
      return dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory inserting into a table");
    }
    place(t, t->n++);
    c = str_poll(ctx, i + 1);
  }
  return c;
}

/* ---- handles ---- */

/* The table input 0 names: a V2 resource scalar, or TF's V1 {container,
 * name} string pair. NULL after failing ctx. */
static dfx_table *table_in(dfx_kctx *ctx) {
  dfx_resmgr *rm = ctx->step ? ctx->step->store : NULL;
  if (!rm)
    return dfx__kctx_fail(ctx, DFX_EPRECOND, "lookup tables live in a session: this run has no resource store"),
           NULL;
  const dfx_tensor *h = ctx->in[0];
  char b[64];
  if (h->dtype == DFX_RESOURCE) {
    void *obj = h->count == 1 ? ((void *const *)h->data)[0] : NULL;
    if (h->count != 1 || !obj || !dfx__resmgr_contains(rm, &table_kind, obj))
      return dfx__kctx_fail(ctx, DFX_ENOTFOUND,
                            "Lookup table handle %s does not name a table of this session (from another session?)",
                            DFX_SHAPE_STR(h, b)),
             NULL;
    return obj;
  }
  if (h->dtype != DFX_STRING || h->count != 2)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Lookup table handle must be scalar, but had shape: %s",
                          DFX_SHAPE_STR(h, b)),
           NULL;
  const dfx_str *s = h->data;
  char cont[512], name[512];
  snprintf(cont, sizeof cont, "%.*s", (int)s[0].len, s[0].ptr ? s[0].ptr : "");
  snprintf(name, sizeof name, "%.*s", (int)s[1].len, s[1].ptr ? s[1].ptr : "");
  if (s[0].len >= sizeof cont || s[1].len >= sizeof name || memchr(cont, 0, s[0].len) || memchr(name, 0, s[1].len))
    return dfx__kctx_fail(ctx, DFX_ENOTFOUND, "Table %s %s does not exist", cont, name), NULL;
  void *obj = NULL;
  if (dfx__resmgr_lookup_or_create(rm, &table_kind, cont, name, NULL, NULL, &obj, ctx->st) != DFX_OK) {
    dfx__kctx_fail(ctx, DFX_ENOTFOUND, "Table %s %s does not exist (its HashTable node has not run in this session)",
                   cont, name);
    return NULL;
  }
  return obj;
}

/* TF's MatchSignature over the handle and the key and value inputs. */
static dfx_code match_sig(dfx_kctx *ctx, const dfx_table *t, int n_data, bool out_value) {
  bool ok = ctx->in[1]->dtype == t->kdt && (n_data < 2 || ctx->in[2]->dtype == t->vdt);
  if (out_value) ok = ok && ctx->node->out_types[0] == t->vdt;
  if (ok) return DFX_OK;
  const char *h = ctx->in[0]->dtype == DFX_RESOURCE ? "resource" : "string_ref";
  char have[128], want[128];
  snprintf(have, sizeof have, "%s, %s%s%s->%s", h, dfx__s_tf_type((dfx_dtype)ctx->in[1]->dtype),
           n_data < 2 ? "" : ", ", n_data < 2 ? "" : dfx__s_tf_type((dfx_dtype)ctx->in[2]->dtype),
           out_value ? dfx__s_tf_type(ctx->node->out_types[0]) : "");
  snprintf(want, sizeof want, "%s, %s%s%s->%s", h, dfx__s_tf_type(t->kdt), n_data < 2 ? "" : ", ",
           n_data < 2 ? "" : dfx__s_tf_type(t->vdt), out_value ? dfx__s_tf_type(t->vdt) : "");
  return dfx__kctx_fail(ctx, DFX_EINVAL, "Signature mismatch, have: %s expected: %s", have, want);
}

/* ---- HashTable / HashTableV2 ---- */

typedef struct ht_state {
  char *container, *name;
  dfx_dtype kdt, vdt;
} ht_state;

static void ht_fini(void *state) {
  ht_state *s = state;
  if (!s) return;
  dfx__free(s->container);
  dfx__free(s->name);
  dfx__free(s);
}

static dfx_code ht_init(const dfx_node *n, void **state, dfx_status *st) {
  ht_state *s = dfx__calloc(1, sizeof *s);
  if (!s) return dfx__status_set(st, DFX_ENOMEM, "out of memory");
  const char *cont = dfx__attr_str(n, "container", ""), *shared = dfx__attr_str(n, "shared_name", "");
  s->kdt = dfx__attr_type(n, "key_dtype", DFX_INVALID);
  s->vdt = dfx__attr_type(n, "value_dtype", DFX_INVALID);
  s->container = dfx__strdup(*cont ? cont : "localhost");
  if (*shared || dfx__attr_bool(n, "use_node_name_sharing", false)) {
    s->name = dfx__strdup(*shared ? shared : n->name);
  } else if ((s->name = dfx__malloc(strlen(n->name) + 4))) {
    strcpy(s->name, "_0_");
    strcat(s->name, n->name);
  }
  if (!s->container || !s->name) {
    ht_fini(s);
    return dfx__status_set(st, DFX_ENOMEM, "out of memory");
  }
  *state = s;
  return DFX_OK;
}

static dfx_code table_create(void *ud, void **obj, dfx_status *st) {
  const ht_state *s = ud;
  dfx_table *t = dfx__calloc(1, sizeof *t);
  if (t && uv_mutex_init(&t->mu)) {
    dfx__free(t);
    t = NULL;
  }
  if (!t) return dfx__status_set(st, DFX_ENOMEM, "out of memory creating a table");
  t->kdt = s->kdt;
  t->vdt = s->vdt;
  *obj = t;
  return DFX_OK;
}

static dfx_code hash_table_kernel(dfx_kctx *ctx) {
  const ht_state *s = ctx->state;
  dfx_resmgr *rm = ctx->step ? ctx->step->store : NULL;
  if (!rm)
    return dfx__kctx_fail(ctx, DFX_EPRECOND, "lookup tables live in a session: this run has no resource store");
  void *obj;
  if (dfx__resmgr_lookup_or_create(rm, &table_kind, s->container, s->name, table_create, (void *)s, &obj, ctx->st))
    return ctx->st->code;
  const dfx_table *t = obj;
  if (t->kdt != s->kdt || t->vdt != s->vdt)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Conflicting key/value dtypes %s->%s with %s-%s for table %s",
                          dfx__s_tf_type(s->kdt), dfx__s_tf_type(s->vdt), dfx__s_tf_type(t->kdt),
                          dfx__s_tf_type(t->vdt), s->name);
  if (ctx->node->out_types[0] == DFX_RESOURCE) {
    dfx_tensor *h = dfx__kctx_alloc(ctx, 0, DFX_RESOURCE, 0, NULL);
    if (!h) return ctx->st->code;
    ((void **)h->data)[0] = obj;
    return DFX_OK;
  }
  int64_t two = 2;
  dfx_tensor *h = dfx__kctx_alloc(ctx, 0, DFX_STRING, 1, &two);
  if (!h) return ctx->st->code;
  dfx_str *hs = h->data;
  if (!dfx__s_set(&hs[0], s->container, strlen(s->container)) || !dfx__s_set(&hs[1], s->name, strlen(s->name)))
    return dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory making a table handle");
  return DFX_OK;
}

/* ---- initialisation: InitializeTable(V2), LookupTableImport(V2) ---- */

/* InitializableLookupTable::Initialize: checks the tensors, then fills the
 * table once. A second initialisation is accepted when it brings as many
 * keys as the table holds (TF compares only the sizes), else refused. */
static dfx_code initialize(dfx_kctx *ctx, dfx_table *t) {
  const dfx_tensor *keys = ctx->in[1], *vals = ctx->in[2];
  char b1[128], b2[128];
  if (!dfx__tensor_same_shape(keys, vals))
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Expected shape %s for value, got %s", DFX_SHAPE_STR(keys, b1),
                          DFX_SHAPE_STR(vals, b2));
  uv_mutex_lock(&t->mu);
  dfx_code c = DFX_OK;
  if (__atomic_load_n(&t->ready, __ATOMIC_ACQUIRE)) {
    if (keys->count != t->n) c = dfx__kctx_fail(ctx, DFX_EPRECOND, "Table was already initialized with different data.");
  } else if ((c = insert(ctx, t, keys, vals)) == DFX_OK) {
    __atomic_store_n(&t->ready, 1, __ATOMIC_RELEASE);
  }
  uv_mutex_unlock(&t->mu);
  return c;
}

static dfx_code init_table_kernel(dfx_kctx *ctx) {
  dfx_table *t = table_in(ctx);
  if (!t) return ctx->st->code;
  dfx_code c = match_sig(ctx, t, 2, false);
  if (c) return c;
  const dfx_tensor *keys = ctx->in[1], *vals = ctx->in[2];
  char b[128];
  if (keys->ndims != 1)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Keys must be a vector, but received shape%s", DFX_SHAPE_STR(keys, b));
  if (vals->ndims != 1)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Values must be a vector, but received shape%s", DFX_SHAPE_STR(vals, b));
  if (keys->count != vals->count)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Keys and values must have the same size %lld vs %lld",
                          (long long)keys->count, (long long)vals->count);
  return initialize(ctx, t);
}

static dfx_code import_kernel(dfx_kctx *ctx) {
  dfx_table *t = table_in(ctx);
  if (!t) return ctx->st->code;
  dfx_code c = match_sig(ctx, t, 2, false);
  return c ? c : initialize(ctx, t);
}

/* ---- readers: LookupTableFind(V2), -Size(V2), -Export(V2) ---- */

static dfx_code find_kernel(dfx_kctx *ctx) {
  dfx_table *t = table_in(ctx);
  if (!t) return ctx->st->code;
  dfx_code c = match_sig(ctx, t, 2, true);
  if (c) return c;
  const dfx_tensor *keys = ctx->in[1], *def = ctx->in[2];
  char b1[128], b2[128];
  if (def->ndims != 0 && !dfx__tensor_same_shape(def, keys))
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Expected shape [] or %s for default value, got %s",
                          DFX_SHAPE_STR(keys, b1), DFX_SHAPE_STR(def, b2));
  dfx_tensor *out = dfx__kctx_alloc(ctx, 0, t->vdt, keys->ndims, keys->dims);
  if (!out) return ctx->st->code;
  if (!__atomic_load_n(&t->ready, __ATOMIC_ACQUIRE))
    return dfx__kctx_fail(ctx, DFX_EPRECOND, "Table not initialized.");
  /* HashTable::DoFind uses the first default element for every missing
   * key, also when a full-shape default is given. */
  tval dv = def->count ? elem(def, 0) : (tval){0};
  for (int64_t i = 0; i < keys->count; i++) {
    tval k = elem(keys, i);
    int64_t at = find(t, k, key_hash(t->kdt, k));
    if (!put(out, i, at >= 0 ? t->e[at].val : dv))
      return dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory copying table values");
    if ((c = str_poll(ctx, i + 1))) return c;
  }
  return DFX_OK;
}

static dfx_code size_kernel(dfx_kctx *ctx) {
  dfx_table *t = table_in(ctx);
  if (!t) return ctx->st->code;
  dfx_tensor *out = dfx__kctx_alloc(ctx, 0, DFX_I64, 0, NULL);
  if (!out) return ctx->st->code;
  ((int64_t *)out->data)[0] = __atomic_load_n(&t->ready, __ATOMIC_ACQUIRE) ? t->n : 0;
  return DFX_OK;
}

/* Keys and values in insertion order (TF's follow its hash map's order,
 * which is unspecified). */
static dfx_code export_kernel(dfx_kctx *ctx) {
  dfx_table *t = table_in(ctx);
  if (!t) return ctx->st->code;
  if (ctx->node->out_types[0] != t->kdt || ctx->node->out_types[1] != t->vdt)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Signature mismatch, have: ->%s, %s expected: ->%s, %s",
                          dfx__s_tf_type(ctx->node->out_types[0]), dfx__s_tf_type(ctx->node->out_types[1]),
                          dfx__s_tf_type(t->kdt), dfx__s_tf_type(t->vdt));
  if (!__atomic_load_n(&t->ready, __ATOMIC_ACQUIRE))
    return dfx__kctx_fail(ctx, DFX_EPRECOND, "HashTable is not initialized.");
  dfx_tensor *k = dfx__kctx_alloc(ctx, 0, t->kdt, 1, &t->n), *v = k ? dfx__kctx_alloc(ctx, 1, t->vdt, 1, &t->n) : NULL;
  if (!v) return ctx->st->code;
  for (int64_t i = 0; i < t->n; i++) {
    if (!put(k, i, t->e[i].key) || !put(v, i, t->e[i].val))
      return dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory exporting a table");
    dfx_code c = str_poll(ctx, i + 1);
    if (c) return c;
  }
  return DFX_OK;
}

/* The key -> value pairs TF registers HashTable for, one row per key type. */
#define KEYS_I32 "key_dtype: {int32}; value_dtype: {double, float, int32, string}"
#define KEYS_I64 "key_dtype: {int64}; value_dtype: {double, float, int32, int64, string}"
#define KEYS_STR "key_dtype: {string}; value_dtype: {bool, double, float, int32, int64, string}"
#define IN_TYPES(k, v) k ": {int32, int64, string}; " v ": {bool, double, float, int32, int64, string}"
#define RES (DFX_KERNEL_STATEFUL | DFX_KERNEL_CHEAP)

static const dfx_kernel_def kernels[] = {
    {"HashTable", KEYS_I32, hash_table_kernel, RES, ht_init, ht_fini},
    {"HashTable", KEYS_I64, hash_table_kernel, RES, ht_init, ht_fini},
    {"HashTable", KEYS_STR, hash_table_kernel, RES, ht_init, ht_fini},
    {"HashTableV2", KEYS_I32, hash_table_kernel, RES, ht_init, ht_fini},
    {"HashTableV2", KEYS_I64, hash_table_kernel, RES, ht_init, ht_fini},
    {"HashTableV2", KEYS_STR, hash_table_kernel, RES, ht_init, ht_fini},
    {"InitializeTable", IN_TYPES("Tkey", "Tval"), init_table_kernel, DFX_KERNEL_STATEFUL},
    {"InitializeTableV2", IN_TYPES("Tkey", "Tval"), init_table_kernel, DFX_KERNEL_STATEFUL},
    {"LookupTableImport", IN_TYPES("Tin", "Tout"), import_kernel, DFX_KERNEL_STATEFUL},
    {"LookupTableImportV2", IN_TYPES("Tin", "Tout"), import_kernel, DFX_KERNEL_STATEFUL},
    {"LookupTableFind", IN_TYPES("Tin", "Tout"), find_kernel, DFX_KERNEL_STATEFUL},
    {"LookupTableFindV2", IN_TYPES("Tin", "Tout"), find_kernel, DFX_KERNEL_STATEFUL},
    {"LookupTableSize", NULL, size_kernel, RES},
    {"LookupTableSizeV2", NULL, size_kernel, RES},
    {"LookupTableExport", IN_TYPES("Tkeys", "Tvalues"), export_kernel, DFX_KERNEL_STATEFUL},
    {"LookupTableExportV2", IN_TYPES("Tkeys", "Tvalues"), export_kernel, DFX_KERNEL_STATEFUL},
    {NULL}};

void dfx__kernels_strings_table(dfx_registry *r);
void dfx__kernels_strings_table(dfx_registry *r) { dfx__kernels_add(r, kernels); }
