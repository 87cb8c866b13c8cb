/* setop.c - DenseToDenseSetOperation: for each group (every index of the
 * leading dims of set1 / set2, which must match), the set of the last-dim
 * row of set1 combined with set2's by a-b, b-a, intersection or union. The
 * result is a SparseTensor: [group..., position] indices, values ascending
 * within a group (numbers by value, strings bytewise), dense shape
 * [group..., largest set]. */
#include <string.h>

#include "gather/gutil.h"
#include "sutil.h"

typedef enum { SET_A_MINUS_B, SET_B_MINUS_A, SET_INTERSECTION, SET_UNION } set_op;

static dfx_code setop_init(const dfx_node *node, void **state, dfx_status *st) {
  const char *s = dfx__attr_str(node, "set_operation", "");
  set_op op;
  if (strcmp(s, "a-b") == 0) op = SET_A_MINUS_B;
  else if (strcmp(s, "b-a") == 0) op = SET_B_MINUS_A;
  else if (strcmp(s, "intersection") == 0) op = SET_INTERSECTION;
  else if (strcmp(s, "union") == 0) op = SET_UNION;
  else return dfx__status_set(st, DFX_EINVAL, "Invalid set_operation %s.", s);
  *state = (void *)(intptr_t)(op + 1);
  return DFX_OK;
}

/* Three-way compare of element i of a with element j of b (same dtype). */
static int cmp_elem(const dfx_tensor *a, int64_t i, const dfx_tensor *b, int64_t j) {
  switch (a->dtype) {
    case DFX_STRING: {
      const dfx_str *x = (const dfx_str *)a->data + i, *y = (const dfx_str *)b->data + j;
      size_t n = x->len < y->len ? x->len : y->len;
      int c = n ? memcmp(x->ptr, y->ptr, n) : 0;
      return c ? c : (x->len > y->len) - (x->len < y->len);
    }
    default: {
      int64_t x = sidx(a, i), y = sidx(b, j);
      return (x > y) - (x < y);
    }
  }
}

/* Sorts idx[0..n) (element numbers of t) ascending: merge sort, stable. */
static void sort_idx(const dfx_tensor *t, int64_t *idx, int64_t *tmp, int64_t n) {
  if (n < 2) return;
  int64_t h = n / 2;
  sort_idx(t, idx, tmp, h);
  sort_idx(t, idx + h, tmp, n - h);
  int64_t i = 0, j = h, k = 0;
  while (i < h && j < n) tmp[k++] = cmp_elem(t, idx[j], t, idx[i]) < 0 ? idx[j++] : idx[i++];
  while (i < h) tmp[k++] = idx[i++];
  while (j < n) tmp[k++] = idx[j++];
  memcpy(idx, tmp, (size_t)n * sizeof *idx);
}

/* Sorted distinct elements of row r (length n) of t into out; returns count. */
static int64_t row_set(const dfx_tensor *t, int64_t r, int64_t n, int64_t *out, int64_t *tmp) {
  for (int64_t i = 0; i < n; i++) out[i] = r * n + i;
  sort_idx(t, out, tmp, n);
  int64_t k = 0;
  for (int64_t i = 0; i < n; i++)
    if (k == 0 || cmp_elem(t, out[k - 1], t, out[i]) != 0) out[k++] = out[i];
  return k;
}

static dfx_code dense_setop(dfx_kctx *ctx) {
  const dfx_tensor *a = ctx->in[0], *b = ctx->in[1];
  set_op op = (set_op)((intptr_t)ctx->state - 1);
  char b1[128], b2[128];
  if (a->ndims < 2)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Shape %s has rank %d < 2", DFX_SHAPE_STR(a, b1), a->ndims);
  if (b->ndims < 2)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Shape %s has rank %d < 2", DFX_SHAPE_STR(b, b1), b->ndims);
  bool same = a->ndims == b->ndims;
  for (int i = 0; same && i < a->ndims - 1; i++) same = a->dims[i] == b->dims[i];
  if (!same)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Mismatched shapes %s vs %s",
                          dfx__shape_str(a->ndims - 1, a->dims, b1, sizeof b1),
                          dfx__shape_str(b->ndims - 1, b->dims, b2, sizeof b2));
  int gr = a->ndims - 1, w = a->ndims;
  int64_t groups = dfx__shape_count(gr, a->dims), na = a->dims[gr], nb = b->dims[gr];
  int64_t *sa = dfx__malloc(dfx__mul_size((size_t)na + 1, sizeof(int64_t)));
  int64_t *sb = dfx__malloc(dfx__mul_size((size_t)nb + 1, sizeof(int64_t)));
  int64_t *tmp = dfx__malloc(dfx__mul_size((size_t)(na > nb ? na : nb) + 1, sizeof(int64_t)));
  svec res = {0}, lens = {0}; /* result elements: (1 for b) << 62 | element; per-group sizes */
  dfx_code code = DFX_OK;
  int64_t largest = 0, left = DFX_S_POLL_EVERY;
  if (!sa || !sb || !tmp) {
    code = dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory");
    goto done;
  }
  const int64_t B = (int64_t)1 << 62;
  for (int64_t g = 0; g < groups && !code; g++) {
    int64_t ka = row_set(a, g, na, sa, tmp), kb = row_set(b, g, nb, sb, tmp), before = res.n, i = 0, j = 0;
    while ((i < ka || j < kb) && !code) {
      int c = i == ka ? 1 : j == kb ? -1 : cmp_elem(a, sa[i], b, sb[j]);
      bool take_a = false, take_b = false;
      if (c < 0) take_a = op == SET_A_MINUS_B || op == SET_UNION;
      else if (c > 0) take_b = op == SET_B_MINUS_A || op == SET_UNION;
      else take_a = op == SET_INTERSECTION || op == SET_UNION;
      if (take_a) code = dfx__svec_push(ctx, &res, sa[i]);
      else if (take_b) code = dfx__svec_push(ctx, &res, B | sb[j]);
      if (c <= 0) i++;
      if (c >= 0) j++;
    }
    if (!code) code = dfx__svec_push(ctx, &lens, res.n - before);
    if (res.n - before > largest) largest = res.n - before;
    if (!code) code = stick(ctx, &left, na + nb + 1);
  }
  if (code) goto done;
  int64_t n = res.n, idims[2] = {n, w}, sd[1] = {w};
  dfx_tensor *ind = dfx__kctx_alloc(ctx, 0, DFX_I64, 2, idims);
  dfx_tensor *val = ind ? dfx__kctx_alloc(ctx, 1, (dfx_dtype)a->dtype, 1, &n) : NULL;
  dfx_tensor *shp = val ? dfx__kctx_alloc(ctx, 2, DFX_I64, 1, sd) : NULL;
  if (!shp) {
    code = ctx->st->code;
    goto done;
  }
  int64_t *iv = ind->data, *sv = shp->data, k = 0, gi[DFX_MAX_DIMS] = {0};
  memcpy(sv, a->dims, sizeof(int64_t) * gr);
  sv[gr] = largest;
  size_t es = dfx__dtype_storage((dfx_dtype)a->dtype);
  for (int64_t g = 0; g < groups && !code; g++) {
    for (int64_t p = 0; p < lens.v[g] && !code; p++, k++) {
      memcpy(iv + k * w, gi, sizeof(int64_t) * gr);
      iv[k * w + gr] = p;
      const dfx_tensor *src = res.v[k] & B ? b : a;
      code = dfx__g_copy(ctx, (dfx_dtype)a->dtype, (char *)val->data + (size_t)k * es,
                         (const char *)src->data + (size_t)(res.v[k] & (B - 1)) * es, 1);
    }
    for (int d = gr - 1; d >= 0 && ++gi[d] == a->dims[d]; d--) gi[d] = 0;
  }
done:
  dfx__free(sa);
  dfx__free(sb);
  dfx__free(tmp);
  svec_free(&res);
  svec_free(&lens);
  return code;
}

static const dfx_kernel_def kernels[] = {
    {"DenseToDenseSetOperation", "T: {int8, int16, int32, int64, uint8, uint16, string}", dense_setop, DFX_KERNEL_CHEAP,
     setop_init, NULL},
    {NULL}};

void dfx__kernels_sparse_setop(dfx_registry *r);
void dfx__kernels_sparse_setop(dfx_registry *r) { dfx__kernels_add(r, kernels); }
