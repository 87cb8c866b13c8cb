/* topk.c - TopKV2, InTopKV2 and NthElement over the last dimension.
 * Rows are ordered by a stable merge sort of column indices on an exact
 * order-preserving 64-bit key per value, so equal values keep the lower
 * index first; TopKV2 with sorted=false keeps TensorFlow's heap order
 * instead. */
#include <math.h>
#include <string.h>

#include "alloc.h"
#include "kernel.h"
#include "nn_util.h"

/* Stable sort of idx[0..n) by key descending (desc) or ascending. */
static void msort(int64_t *idx, int64_t *tmp, int64_t n, const uint64_t *key, bool desc) {
  if (n < 2) return;
  int64_t h = n / 2;
  msort(idx, tmp, h, key, desc);
  msort(idx + h, tmp, n - h, key, desc);
  int64_t i = 0, j = h, o = 0;
  while (i < h && j < n) {
    uint64_t a = key[idx[i]], b = key[idx[j]];
    bool take_right = desc ? b > a : b < a;
    tmp[o++] = take_right ? idx[j++] : idx[i++];
  }
  while (i < h) tmp[o++] = idx[i++];
  while (j < n) tmp[o++] = idx[j++];
  memcpy(idx, tmp, sizeof(int64_t) * (size_t)n);
}

/* ---- TF's gtl::TopN, for sorted=false ----
 * TF returns the internal order of its bounded heap, so unsorted results are
 * reproduced by running the same heap algorithm: greater(a, b) is TF's
 * stable comparison and the heap operations follow the C++ standard
 * library's make_heap / push_heap / pop_heap step for step. */

static bool greater(const uint64_t *key, int64_t a, int64_t b) {
  if (key[b] < key[a]) return true;
  if (key[b] > key[a]) return false;
  return a < b;
}

static void heap_push_up(int64_t *h, int64_t hole, int64_t top, int64_t v, const uint64_t *key) {
  int64_t parent = (hole - 1) / 2;
  while (hole > top && greater(key, h[parent], v)) {
    h[hole] = h[parent];
    hole = parent;
    parent = (hole - 1) / 2;
  }
  h[hole] = v;
}

static void heap_adjust(int64_t *h, int64_t hole, int64_t len, int64_t v, const uint64_t *key) {
  int64_t top = hole, child = hole;
  while (child < (len - 1) / 2) {
    child = 2 * (child + 1);
    if (greater(key, h[child], h[child - 1])) child--;
    h[hole] = h[child];
    hole = child;
  }
  if ((len & 1) == 0 && child == (len - 2) / 2) {
    child = 2 * (child + 1);
    h[hole] = h[child - 1];
    hole = child - 1;
  }
  heap_push_up(h, hole, top, v, key);
}

static void heap_make(int64_t *h, int64_t len, const uint64_t *key) {
  if (len < 2) return;
  for (int64_t parent = (len - 2) / 2;; parent--) {
    heap_adjust(h, parent, len, h[parent], key);
    if (parent == 0) return;
  }
}

static void heap_pop(int64_t *h, int64_t len, const uint64_t *key) {
  if (len < 2) return;
  int64_t v = h[len - 1];
  h[len - 1] = h[0];
  heap_adjust(h, 0, len - 1, v, key);
}

/* Pushes columns 0..n-1 into a TopN of limit k (1 < k < n) and leaves its
 * unsorted order in h[0..k); h has room for k + 1. */
static void topn_unsorted(const uint64_t *key, int64_t n, int64_t k, int64_t *h) {
  int64_t size = 0;
  for (int64_t c = 0; c < n; c++) {
    if (size <= k) { /* still an unordered vector */
      h[size++] = c;
      if (size == k + 1) {
        heap_make(h, size, key);
        heap_pop(h, size, key);
      }
    } else if (greater(key, c, h[0])) {
      h[k] = c;
      heap_push_up(h, k, 0, h[k], key);
      heap_pop(h, k + 1, key);
    }
  }
}

/* Element i as a key whose unsigned order is the value order, exact for
 * 64-bit integers (which double is not). NaN is the greatest value, equal to
 * +inf (TopKV2 puts it first), and -0 equals +0. */
static uint64_t key_of(const void *data, dfx_dtype t, int64_t i) {
  const uint64_t sign = (uint64_t)1 << 63;
  switch (t) {
  case DFX_I64: return (uint64_t)((const int64_t *)data)[i] ^ sign;
  case DFX_U64: return ((const uint64_t *)data)[i];
  default:
    if (dfx__dtype_is_int(t)) return (uint64_t)(int64_t)dfx__nn_load(data, t, i) ^ sign;
    break;
  }
  double v = dfx__nn_load(data, t, i);
  if (isnan(v)) v = INFINITY;
  if (v == 0) v = 0; /* -0 */
  uint64_t b;
  memcpy(&b, &v, sizeof b);
  return b & sign ? ~b : b | sign;
}

/* Copies element si of src into element di of dst (same dtype). */
static void copy_elem(void *dst, int64_t di, const void *src, int64_t si, size_t es) {
  memcpy((char *)dst + (size_t)di * es, (const char *)src + (size_t)si * es, es);
}

/* Per-row work space: a key per column, and 2n indices (the sort's or the
 * heap's, plus merge scratch). False, with nothing allocated, when out of
 * memory. */
static bool scratch(int64_t n, uint64_t **key, int64_t **idx) {
  *key = dfx__malloc(sizeof(uint64_t) * (size_t)n);
  *idx = dfx__malloc(sizeof(int64_t) * (size_t)n * 2);
  if (*key && *idx) return true;
  dfx__free(*key);
  dfx__free(*idx);
  return false;
}

static dfx_code topk_k(dfx_kctx *ctx) {
  const dfx_tensor *x = ctx->in[0], *kt = ctx->in[1];
  char b1[96];
  dfx_dtype t = (dfx_dtype)x->dtype;
  if (kt->ndims != 0) return dfx__kctx_fail(ctx, DFX_EINVAL, "k must be scalar, got shape %s", DFX_SHAPE_STR(kt, b1));
  int64_t k = dfx__tensor_get_i64(kt, 0); /* Tk: int16, int32 or int64 */
  if (k < 0) return dfx__kctx_fail(ctx, DFX_EINVAL, "Need k >= 0, got %lld", (long long)k);
  if (x->ndims < 1)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "input must be >= 1-D, got shape %s", DFX_SHAPE_STR(x, b1));
  int64_t n = x->dims[x->ndims - 1];
  if (n < k)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "input must have at least k columns. Had %lld, needed %lld", (long long)n,
                          (long long)k);
  int64_t od[DFX_MAX_DIMS];
  memcpy(od, x->dims, sizeof(int64_t) * (size_t)x->ndims);
  od[x->ndims - 1] = k;
  dfx_tensor *v = dfx__kctx_alloc(ctx, 0, t, x->ndims, od);
  if (!v) return DFX_ENOMEM;
  dfx_dtype it = ctx->node->out_types[1]; /* index_type: int16, int32 or int64 */
  dfx_tensor *ix = dfx__kctx_alloc(ctx, 1, it, x->ndims, od);
  if (!ix) return DFX_ENOMEM;
  if (v->count == 0) return DFX_OK;
  int64_t rows = x->count / n;
  uint64_t *key;
  int64_t *idx;
  if (!scratch(n, &key, &idx)) return dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory");
  size_t es = dfx_dtype_size(t);
  bool sorted = dfx__attr_bool(ctx->node, "sorted", true);
  dfx_code rc = DFX_OK;
  for (int64_t r = 0, done = 0; r < rows && rc == DFX_OK; r++) {
    for (int64_t j = 0; j < n; j++) {
      key[j] = key_of(x->data, t, r * n + j);
      idx[j] = j;
    }
    if (!sorted && k > 1 && k < n) topn_unsorted(key, n, k, idx);
    else msort(idx, idx + n, n, key, true);
    for (int64_t j = 0; j < k; j++) {
      copy_elem(v->data, r * k + j, x->data, r * n + idx[j], es);
      dfx__nn_store_index(ix->data, it, r * k + j, idx[j]);
    }
    rc = dfx__nn_progress(ctx, &done, n);
  }
  dfx__free(key);
  dfx__free(idx);
  return rc;
}

static dfx_code in_topk_k(dfx_kctx *ctx) {
  const dfx_tensor *p = ctx->in[0], *tg = ctx->in[1], *kt = ctx->in[2];
  char b1[96];
  if (p->ndims != 2)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "predictions must be 2-dimensional, got %s", DFX_SHAPE_STR(p, b1));
  if (tg->ndims != 1) return dfx__kctx_fail(ctx, DFX_EINVAL, "targets must be 1-dimensional, got %s", DFX_SHAPE_STR(tg, b1));
  if (p->dims[0] != tg->dims[0])
    return dfx__kctx_fail(ctx, DFX_EINVAL, "First dimension of predictions %lld must match length of targets %lld",
                          (long long)p->dims[0], (long long)tg->dims[0]);
  if (kt->ndims != 0) return dfx__kctx_fail(ctx, DFX_EINVAL, "k must be 0-D, got shape %s", DFX_SHAPE_STR(kt, b1));
  int64_t k = kt->dtype == DFX_I64 ? *(const int64_t *)kt->data : *(const int32_t *)kt->data;
  int64_t b = p->dims[0], n = p->dims[1];
  dfx_tensor *y = dfx__kctx_alloc(ctx, 0, DFX_BOOL, 1, &b);
  if (!y) return DFX_ENOMEM;
  const float *pd = p->data;
  int64_t done = 0;
  for (int64_t i = 0; i < b; i++) {
    int64_t target = tg->dtype == DFX_I64 ? ((const int64_t *)tg->data)[i] : ((const int32_t *)tg->data)[i];
    bool cannot = target < 0 || target >= n;
    int64_t more = 0;
    if (!cannot) {
      float tp = pd[i * n + target];
      cannot = !isfinite(tp);
      for (int64_t j = 0; j < n && !cannot; j++) {
        float v = pd[i * n + j];
        if (!isfinite(v)) cannot = true;
        else if (v > tp) more++;
      }
    }
    ((uint8_t *)y->data)[i] = !cannot && more < k;
    dfx_code rc = dfx__nn_progress(ctx, &done, n + 1);
    if (rc != DFX_OK) return rc;
  }
  return DFX_OK;
}

static dfx_code nth_k(dfx_kctx *ctx) {
  const dfx_tensor *x = ctx->in[0], *nt = ctx->in[1];
  dfx_dtype t = (dfx_dtype)x->dtype;
  if (nt->ndims != 0)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "N must be scalar but has rank %d", nt->ndims);
  int64_t nn = *(const int32_t *)nt->data;
  if (nn < 0) return dfx__kctx_fail(ctx, DFX_EINVAL, "n must be non-negative but is %lld", (long long)nn);
  if (x->ndims < 1)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Input must be >= 1-D but is %d-D", x->ndims);
  int64_t n = x->dims[x->ndims - 1];
  if (n <= nn)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Input must have last dimension > n = %lld", (long long)nn);
  bool rev = dfx__attr_bool(ctx->node, "reverse", false);
  dfx_tensor *y = dfx__kctx_alloc(ctx, 0, t, x->ndims - 1, x->dims);
  if (!y) return DFX_ENOMEM;
  if (y->count == 0) return DFX_OK;
  int64_t rows = x->count / n;
  uint64_t *key;
  int64_t *idx;
  if (!scratch(n, &key, &idx)) return dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory");
  size_t es = dfx_dtype_size(t);
  dfx_code rc = DFX_OK;
  for (int64_t r = 0, done = 0; r < rows && rc == DFX_OK; r++) {
    for (int64_t j = 0; j < n; j++) {
      key[j] = key_of(x->data, t, r * n + j);
      idx[j] = j;
    }
    msort(idx, idx + n, n, key, rev);
    copy_elem(y->data, r, x->data, r * n + idx[nn], es);
    rc = dfx__nn_progress(ctx, &done, n);
  }
  dfx__free(key);
  dfx__free(idx);
  return rc;
}

/* TF's real types (no quantized or complex ones in these ops). */
#define SORT_T "T: {" DFX_NN_FLOAT_T ", " DFX_NN_INT_T "}"

static const dfx_kernel_def kernels[] = {
    {"TopKV2", SORT_T "; Tk: {int16, int32, int64}; index_type: {int16, int32, int64}", topk_k, 0, NULL, NULL},
    {"InTopKV2", "T: {int32, int64}", in_topk_k, 0, NULL, NULL},
    {"NthElement", SORT_T, nth_k, 0, NULL, NULL},
    {NULL}};

void dfx__kernels_nn_topk(dfx_registry *r);
void dfx__kernels_nn_topk(dfx_registry *r) { dfx__kernels_add(r, kernels); }
