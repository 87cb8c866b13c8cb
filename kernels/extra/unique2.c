/* unique2.c - UniqueV2: the distinct slices of x along `axis` (a vector of
 * zero or one element; empty means x is a vector), in first-occurrence
 * order, and for each slice of x the index of its distinct slice. Floats
 * compare by value (-0 == 0; a slice holding a NaN equals no other slice),
 * as TF's hash map with operator== does. */
#include <math.h>
#include <string.h>

#include "alloc.h"
#include "gather/gutil.h"

static uint64_t mix(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ULL;
  return h ^ (h >> 33);
}

static double fval(const dfx_tensor *t, int64_t i) {
  switch (t->dtype) {
    case DFX_F32: return ((const float *)t->data)[i];
    case DFX_F64: return ((const double *)t->data)[i];
    case DFX_F16: return dfx__f16_to_f32(((const uint16_t *)t->data)[i]);
    default: return dfx__bf16_to_f32(((const uint16_t *)t->data)[i]);
  }
}

/* Hash of element i; *nan is set when it is a NaN. */
static uint64_t hash_elem(const dfx_tensor *t, int64_t i, bool *nan) {
  const unsigned char *p;
  size_t n;
  double v;
  if (t->dtype == DFX_STRING) {
    const dfx_str *s = (const dfx_str *)t->data + i;
    p = (const unsigned char *)s->ptr, n = s->len;
  } else if (dfx__dtype_is_float((dfx_dtype)t->dtype)) {
    v = fval(t, i);
    if (isnan(v)) *nan = true;
    if (v == 0) v = 0; /* -0 hashes as 0 */
    p = (const unsigned char *)&v, n = sizeof v;
  } else {
    n = dfx__dtype_storage((dfx_dtype)t->dtype);
    p = (const unsigned char *)t->data + (size_t)i * n;
  }
  uint64_t h = 1469598103934665603ULL;
  for (size_t k = 0; k < n; k++) h = (h ^ p[k]) * 1099511628211ULL;
  return h;
}

static bool eq_elem(const dfx_tensor *t, int64_t i, int64_t j) {
  if (t->dtype == DFX_STRING) {
    const dfx_str *a = (const dfx_str *)t->data + i, *b = (const dfx_str *)t->data + j;
    return a->len == b->len && (a->len == 0 || memcmp(a->ptr, b->ptr, a->len) == 0);
  }
  if (dfx__dtype_is_float((dfx_dtype)t->dtype)) return fval(t, i) == fval(t, j);
  size_t es = dfx__dtype_storage((dfx_dtype)t->dtype);
  return memcmp((const char *)t->data + (size_t)i * es, (const char *)t->data + (size_t)j * es, es) == 0;
}

static dfx_code unique_v2(dfx_kctx *ctx) {
  const dfx_tensor *x = ctx->in[0], *ax = ctx->in[1];
  if (x->count > INT32_MAX)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "unique does not support input tensors larger than %d elements", INT32_MAX);
  if (ax->ndims != 1) return dfx__kctx_fail(ctx, DFX_EINVAL, "axis expects a 1D vector.");
  if (ax->count > 1)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "axis does not support input tensors larger than 1 elements");
  int64_t outer = 1, n = x->count, inner = 1, axis = 0;
  if (ax->count == 0) {
    if (x->ndims != 1) return dfx__kctx_fail(ctx, DFX_EINVAL, "unique expects a 1D vector.");
  } else {
    axis = gidx(ax, 0);
    axis = axis < 0 ? axis + x->ndims : axis;
    if (axis < 0 || axis >= x->ndims)
      return dfx__kctx_fail(ctx, DFX_EINVAL, "axis has to be between [0, %d)", x->ndims);
    for (int i = 0; i < axis; i++) outer *= x->dims[i];
    n = x->dims[axis];
    for (int i = (int)axis + 1; i < x->ndims; i++) inner *= x->dims[i];
  }
  dfx_dtype it = dfx__attr_type(ctx->node, "out_idx", DFX_I32);
  dfx_tensor *idx = dfx__kctx_alloc(ctx, 1, it, 1, &n);
  if (!idx) return ctx->st->code;
  /* Open-addressing table of slice numbers (+1; 0 = empty), 2x oversized. */
  uint32_t cap = 16;
  while ((uint64_t)cap < (uint64_t)n * 2) cap <<= 1;
  int32_t *table = dfx__calloc(cap, sizeof(int32_t)), *first = dfx__malloc(dfx__mul_size((size_t)n + 1, sizeof(int32_t)));
  dfx_code code = DFX_OK;
  if (!table || !first) {
    code = dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory");
    goto done;
  }
  int64_t uniq = 0, left = DFX_G_POLL_EVERY;
  for (int64_t j = 0; j < n; j++) {
    uint64_t h = 0;
    bool nan = false;
    for (int64_t a = 0; a < outer; a++)
      for (int64_t b = 0; b < inner; b++) h = mix(h ^ hash_elem(x, (a * n + j) * inner + b, &nan));
    /* A slice with a NaN equals nothing: spread such slices by position. */
    if (nan) h = mix((uint64_t)j * 0x9e3779b97f4a7c15ULL + 7);
    int64_t found = -1;
    uint32_t s = (uint32_t)h & (cap - 1);
    for (; table[s]; s = (s + 1) & (cap - 1)) {
      int64_t u = table[s] - 1, r = first[u];
      bool eq = !nan;
      for (int64_t a = 0; a < outer && eq; a++)
        for (int64_t b = 0; b < inner && eq; b++) eq = eq_elem(x, (a * n + j) * inner + b, (a * n + r) * inner + b);
      if (eq) {
        found = u;
        break;
      }
    }
    if (found < 0) {
      found = uniq;
      first[uniq++] = (int32_t)j;
      table[s] = (int32_t)found + 1;
    }
    gset_idx(idx, j, found);
    if ((code = gtick(ctx, &left, outer * inner))) goto done;
  }
  int64_t od[DFX_MAX_DIMS];
  memcpy(od, x->dims, sizeof(int64_t) * x->ndims);
  od[axis] = uniq;
  dfx_tensor *y = dfx__kctx_alloc(ctx, 0, (dfx_dtype)x->dtype, x->ndims, od);
  if (!y) {
    code = ctx->st->code;
    goto done;
  }
  size_t es = dfx__dtype_storage((dfx_dtype)x->dtype);
  for (int64_t a = 0; a < outer && !code; a++)
    for (int64_t u = 0; u < uniq && !code; u++)
      code = dfx__g_copy(ctx, (dfx_dtype)x->dtype, (char *)y->data + (size_t)((a * uniq + u) * inner) * es,
                         (const char *)x->data + (size_t)((a * n + first[u]) * inner) * es, inner);
done:
  dfx__free(table);
  dfx__free(first);
  return code;
}

static const dfx_kernel_def kernels[] = {
    {"UniqueV2", "T: " DFX_G_HASHABLE "; Taxis: {int32, int64}; out_idx: {int32, int64}", unique_v2, DFX_KERNEL_CHEAP,
     NULL, NULL},
    {NULL}};

void dfx__kernels_extra_unique2(dfx_registry *r);
void dfx__kernels_extra_unique2(dfx_registry *r) { dfx__kernels_add(r, kernels); }
