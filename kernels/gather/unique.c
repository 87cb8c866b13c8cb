/* unique.c - Unique, UniqueWithCounts, ListDiff (hash sets over the
 * elements of 1-D tensors; floats compare by value so -0 == 0 and NaNs are
 * all distinct) and InvertPermutation. */
#include <math.h>
#include <string.h>

#include "alloc.h"
#include "gutil.h"

/* ---- element hashing ---- */

/* MurmurHash3's 64-bit finalizer. The low bits of an FNV hash depend only
 * on the low bits of each byte, and the low bits pick the slot: keys that
 * differ only in high bits would share a probe chain without it. */
static uint64_t mix(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ULL;
  return h ^ (h >> 33);
}

static uint64_t hash_bytes(const void *p, size_t n) {
  const unsigned char *b = p;
  uint64_t h = 1469598103934665603ULL;
  for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ULL;
  return mix(h);
}

/* Float-like value of element i (floats only). */
static double fval(const dfx_tensor *t, int64_t i) {
  switch (t->dtype) {
    case DFX_F32: return ((const float *)t->data)[i];
    case DFX_F64: return ((const double *)t->data)[i];
    case DFX_F16: return dfx__f16_to_f32(((const uint16_t *)t->data)[i]);
    default: return dfx__bf16_to_f32(((const uint16_t *)t->data)[i]);
  }
}

static uint64_t hash_elem(const dfx_tensor *t, int64_t i) {
  if (t->dtype == DFX_STRING) {
    const dfx_str *s = (const dfx_str *)t->data + i;
    return hash_bytes(s->ptr, s->len);
  }
  if (dfx__dtype_is_float((dfx_dtype)t->dtype)) {
    double v = fval(t, i) + 0.0; /* -0 hashes as 0 */
    /* Hashing must agree with eq_elem, which compares by value: -0 and 0 are
     * equal, so both must hash the same bits. */
    if (v == 0) v = 0;
    /* A NaN equals nothing: spread NaNs by position, or n of them would
     * share one probe chain and cost O(n^2). */
    if (isnan(v)) return mix((uint64_t)i * 0x9e3779b97f4a7c15ULL + 1);
    return hash_bytes(&v, sizeof v);
  }
  /* Integers and bool compare bit for bit, so their bytes are the key. */
  size_t es = dfx__dtype_storage((dfx_dtype)t->dtype);
  return hash_bytes((const char *)t->data + (size_t)i * es, es);
}

static bool eq_elem(const dfx_tensor *a, int64_t i, const dfx_tensor *b, int64_t j) {
  if (a->dtype == DFX_STRING) {
    const dfx_str *s = (const dfx_str *)a->data + i, *r = (const dfx_str *)b->data + j;
    return s->len == r->len && (s->len == 0 || memcmp(s->ptr, r->ptr, s->len) == 0);
  }
  if (dfx__dtype_is_float((dfx_dtype)a->dtype)) return fval(a, i) == fval(b, j);
  size_t es = dfx__dtype_storage((dfx_dtype)a->dtype);
  return memcmp((const char *)a->data + (size_t)i * es, (const char *)b->data + (size_t)j * es, es) == 0;
}

/* Open-addressing map from elements of `keys` (by index) to int64 values. */
typedef struct hmap {
  const dfx_tensor *keys;
  int64_t *slot; /* key index or -1 */
  int64_t *val;
  uint64_t mask;
} hmap;

static bool hmap_init(hmap *m, const dfx_tensor *keys, int64_t n) {
  uint64_t cap = 16;
  /* At most half full, so probes stay short and always end at an empty slot. */
  while (cap < (uint64_t)n * 2) cap <<= 1;
  m->keys = keys;
  m->mask = cap - 1;
  m->slot = dfx__malloc(cap * sizeof *m->slot);
  m->val = dfx__malloc(cap * sizeof *m->val);
  if (!m->slot || !m->val) return false;
  /* Every byte 0xff is -1 in two's complement: all slots empty. */
  memset(m->slot, 0xff, cap * sizeof *m->slot);
  return true;
}

static void hmap_free(hmap *m) {
  dfx__free(m->slot);
  dfx__free(m->val);
}

/* Finds element j of `t` in the map: returns its slot (occupied or the empty
 * slot where it would go). */
static uint64_t hmap_find(const hmap *m, const dfx_tensor *t, int64_t j) {
  uint64_t h = hash_elem(t, j) & m->mask;
  while (m->slot[h] >= 0 && !eq_elem(m->keys, m->slot[h], t, j)) h = (h + 1) & m->mask;
  return h;
}

/* ---- Unique / UniqueWithCounts ---- */

static dfx_code unique_impl(dfx_kctx *ctx, bool counts) {
  const dfx_tensor *x = ctx->in[0];
  if (x->ndims != 1) return dfx__kctx_fail(ctx, DFX_EINVAL, "unique expects a 1D vector.");
  dfx_dtype dt = (dfx_dtype)x->dtype, it = ctx->node->out_types ? ctx->node->out_types[1] : DFX_I32;
  if (it != DFX_I64) it = DFX_I32;
  int64_t n = x->count;
  hmap m;
  /* first[u]: where unique value u first appears, to copy it out at the end. */
  int64_t *first = dfx__malloc(((size_t)n + 1) * sizeof *first), *cnt = NULL;
  if (counts) cnt = dfx__calloc((size_t)n + 1, sizeof *cnt);
  if (!hmap_init(&m, x, n) || !first || (counts && !cnt)) {
    hmap_free(&m);
    dfx__free(first);
    dfx__free(cnt);
    return dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory");
  }
  dfx_code c = DFX_OK;
  dfx_tensor *idx = dfx__kctx_alloc(ctx, 1, it, 1, &n);
  int64_t nu = 0, left = DFX_G_POLL_EVERY;
  if (!idx) c = ctx->st->code;
  for (int64_t i = 0; c == DFX_OK && i < n; i++) {
    if ((c = gtick(ctx, &left, 1))) break;
    uint64_t s = hmap_find(&m, x, i);
    /* First time this value is seen: it becomes unique number nu. Output order
     * is first appearance, as TF's Unique. */
    if (m.slot[s] < 0) {
      m.slot[s] = i;
      m.val[s] = nu;
      first[nu++] = i;
    }
    gset_idx(idx, i, m.val[s]);
    if (counts) cnt[m.val[s]]++;
  }
  /* y's length, the number of distinct values, is known only after the pass;
   * idx has one entry per input, so it could be filled during it. */
  dfx_tensor *y = c == DFX_OK ? dfx__kctx_alloc(ctx, 0, dt, 1, &nu) : NULL;
  if (c == DFX_OK && !y) c = ctx->st->code;
  size_t es = dfx__dtype_storage(dt);
  for (int64_t u = 0; c == DFX_OK && u < nu; u++)
    c = dfx__g_copy(ctx, dt, (char *)y->data + (size_t)u * es, (const char *)x->data + (size_t)first[u] * es, 1);
  if (c == DFX_OK && counts) {
    dfx_tensor *ct = dfx__kctx_alloc(ctx, 2, it, 1, &nu);
    if (!ct) c = ctx->st->code;
    for (int64_t u = 0; c == DFX_OK && u < nu; u++) gset_idx(ct, u, cnt[u]);
  }
  hmap_free(&m);
  dfx__free(first);
  dfx__free(cnt);
  return c;
}

static dfx_code unique(dfx_kctx *ctx) { return unique_impl(ctx, false); }
static dfx_code unique_counts(dfx_kctx *ctx) { return unique_impl(ctx, true); }

/* ---- ListDiff ---- */

static dfx_code list_diff(dfx_kctx *ctx) {
  const dfx_tensor *x = ctx->in[0], *y = ctx->in[1];
  if (x->ndims != 1) return dfx__kctx_fail(ctx, DFX_EINVAL, "x should be a 1D vector.");
  if (y->ndims != 1) return dfx__kctx_fail(ctx, DFX_EINVAL, "y should be a 1D vector.");
  dfx_dtype dt = (dfx_dtype)x->dtype, it = ctx->node->out_types ? ctx->node->out_types[1] : DFX_I32;
  if (it != DFX_I64) it = DFX_I32;
  /* y's elements go into a set; x's elements not in it are kept, in order,
   * with their positions in x. */
  hmap m;
  if (!hmap_init(&m, y, y->count)) {
    hmap_free(&m);
    return dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory");
  }
  dfx_code c = DFX_OK;
  int64_t keep = 0, left = DFX_G_POLL_EVERY;
  for (int64_t j = 0; c == DFX_OK && j < y->count; j++) {
    uint64_t s = hmap_find(&m, y, j);
    if (m.slot[s] < 0) m.slot[s] = j;
    c = gtick(ctx, &left, 1);
  }
  for (int64_t i = 0; c == DFX_OK && i < x->count; i++) {
    /* Counted first so the outputs are allocated at their final size. */
    keep += m.slot[hmap_find(&m, x, i)] < 0;
    c = gtick(ctx, &left, 1);
  }
  dfx_tensor *out = c == DFX_OK ? dfx__kctx_alloc(ctx, 0, dt, 1, &keep) : NULL;
  dfx_tensor *idx = out ? dfx__kctx_alloc(ctx, 1, it, 1, &keep) : NULL;
  if (c == DFX_OK && (!out || !idx)) c = ctx->st->code;
  size_t es = dfx__dtype_storage(dt);
  for (int64_t i = 0, k = 0; c == DFX_OK && i < x->count; i++) {
    if (m.slot[hmap_find(&m, x, i)] >= 0) continue;
    c = dfx__g_copy(ctx, dt, (char *)out->data + (size_t)k * es, (const char *)x->data + (size_t)i * es, 1);
    gset_idx(idx, k++, i);
  }
  hmap_free(&m);
  return c;
}

/* ---- InvertPermutation ---- */

static dfx_code invert_permutation(dfx_kctx *ctx) {
  const dfx_tensor *x = ctx->in[0];
  if (x->ndims != 1) return dfx__kctx_fail(ctx, DFX_EINVAL, "invert_permutation expects a 1D vector.");
  int64_t n = x->count;
  if (n > INT32_MAX)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "permutation of nonnegative int32s must have <= int32 max elements");
  dfx_tensor *y = dfx__kctx_alloc(ctx, 0, (dfx_dtype)x->dtype, 1, &n);
  if (!y) return ctx->st->code;
  /* -1 marks an output position not yet taken, which finds duplicates. */
  for (int64_t i = 0; i < n; i++) gset_idx(y, i, -1);
  int64_t left = DFX_G_POLL_EVERY;
  for (int64_t i = 0; i < n; i++) {
    if (gtick(ctx, &left, 1)) return ctx->st->code;
    int64_t d = gidx(x, i);
    if (d < 0 || d >= n)
      return dfx__kctx_fail(ctx, DFX_EINVAL, "%lld is not between 0 and %lld", (long long)d, (long long)n);
    if (gidx(y, d) != -1) return dfx__kctx_fail(ctx, DFX_EINVAL, "%lld is duplicated in the input.", (long long)d);
    gset_idx(y, d, i);
  }
  return DFX_OK;
}

#define UNIQUE_T "T: " DFX_G_HASHABLE "; out_idx: {int32, int64}"
static const dfx_kernel_def kernels[] = {
    {"Unique", UNIQUE_T, unique, DFX_KERNEL_CHEAP, NULL, NULL},
    {"UniqueWithCounts", UNIQUE_T, unique_counts, DFX_KERNEL_CHEAP, NULL, NULL},
    {"ListDiff", UNIQUE_T, list_diff, DFX_KERNEL_CHEAP, NULL, NULL},
    {"InvertPermutation", "T: {int32, int64}", invert_permutation, DFX_KERNEL_CHEAP, NULL, NULL},
    {NULL}};

void dfx__kernels_gather_unique(dfx_registry *r);
void dfx__kernels_gather_unique(dfx_registry *r) { dfx__kernels_add(r, kernels); }
