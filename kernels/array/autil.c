/* autil.c - element copy helpers for the array kernels: contiguous runs are
 * memcpy'd, strided runs copy by element size, strings are deep copied.
 * Copies of more than DFX_ARR_POLL_EVERY elements poll for cancellation. */
#include "autil.h"

#include <string.h>

#include "alloc.h"

static dfx_code oom(dfx_kctx *ctx) { return dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory copying strings"); }

/* The copy is made before the old bytes are freed: on failure d is left as
 * it was, and still owned by its tensor. */
static dfx_code str_copy(dfx_str *d, const dfx_str *s) {
  char *p = NULL;
  if (s->len) {
    p = dfx__strndup(s->ptr, s->len);
    if (!p) return DFX_ENOMEM;
  }
  dfx__free(d->ptr);
  d->ptr = p;
  d->len = s->len;
  return DFX_OK;
}

/* One chunk of at most DFX_ARR_POLL_EVERY elements. */
static dfx_code copy_chunk(dfx_kctx *ctx, dfx_tensor *dst, int64_t di, const dfx_tensor *src, int64_t si, int64_t n) {
  if (dst->dtype == DFX_STRING) {
    dfx_str *d = (dfx_str *)dst->data + di;
    const dfx_str *s = (const dfx_str *)src->data + si;
    for (int64_t k = 0; k < n; k++)
      if (str_copy(&d[k], &s[k])) return oom(ctx);
    return DFX_OK;
  }
  size_t es = dfx__dtype_storage((dfx_dtype)dst->dtype);
  /* memmove: a copy within one tensor is safe too. */
  memmove((char *)dst->data + (size_t)di * es, (const char *)src->data + (size_t)si * es, (size_t)n * es);
  return DFX_OK;
}

dfx_code dfx__arr_copy(dfx_kctx *ctx, dfx_tensor *dst, int64_t di, const dfx_tensor *src, int64_t si, int64_t n) {
  while (n > DFX_ARR_POLL_EVERY) {
    dfx_code c = copy_chunk(ctx, dst, di, src, si, DFX_ARR_POLL_EVERY);
    if (c || (c = dfx__kctx_poll(ctx))) return c;
    di += DFX_ARR_POLL_EVERY;
    si += DFX_ARR_POLL_EVERY;
    n -= DFX_ARR_POLL_EVERY;
  }
  return n > 0 ? copy_chunk(ctx, dst, di, src, si, n) : DFX_OK;
}

static dfx_code fill_chunk(dfx_kctx *ctx, dfx_tensor *dst, int64_t di, int64_t n, const dfx_tensor *src, int64_t si) {
  if (dst->dtype == DFX_STRING) {
    dfx_str *d = (dfx_str *)dst->data + di;
    const dfx_str *s = (const dfx_str *)src->data + si;
    for (int64_t k = 0; k < n; k++)
      if (str_copy(&d[k], s)) return oom(ctx);
    return DFX_OK;
  }
  size_t es = dfx__dtype_storage((dfx_dtype)dst->dtype);
  char *d = (char *)dst->data + (size_t)di * es;
  const char *s = (const char *)src->data + (size_t)si * es;
#define FILL(T)                                   \
  do {                                            \
    T v;                                          \
    memcpy(&v, s, sizeof v);                      \
    T *p = (T *)(void *)d;                        \
    for (int64_t k = 0; k < n; k++) p[k] = v;     \
  } while (0)
  switch (es) {
    /* The value goes through memcpy into a typed local: no alignment or
     * aliasing assumption about the source element. */
    case 1: memset(d, *(const unsigned char *)s, (size_t)n); break;
    case 2: FILL(uint16_t); break;
    case 4: FILL(uint32_t); break;
    case 8: FILL(uint64_t); break;
    default:
      /* 16-byte elements (complex128): byte copies. */
      for (int64_t k = 0; k < n; k++) memcpy(d + (size_t)k * es, s, es);
  }
#undef FILL
  return DFX_OK;
}

dfx_code dfx__arr_fill(dfx_kctx *ctx, dfx_tensor *dst, int64_t di, int64_t n, const dfx_tensor *src, int64_t si) {
  while (n > DFX_ARR_POLL_EVERY) {
    dfx_code c = fill_chunk(ctx, dst, di, DFX_ARR_POLL_EVERY, src, si);
    if (c || (c = dfx__kctx_poll(ctx))) return c;
    di += DFX_ARR_POLL_EVERY;
    n -= DFX_ARR_POLL_EVERY;
  }
  return n > 0 ? fill_chunk(ctx, dst, di, n, src, si) : DFX_OK;
}

/* Element strides of a dense row-major shape: the last dim has stride 1,
 * each other dim the product of the dims after it. */
void dfx__arr_strides(int r, const int64_t *dims, int64_t *strides) {
  int64_t s = 1;
  for (int i = r - 1; i >= 0; i--) {
    strides[i] = s;
    s *= dims[i];
  }
}

int64_t dfx__arr_prod(const int64_t *dims, int lo, int hi) {
  int64_t p = 1;
  for (int i = lo; i < hi; i++) p *= dims[i];
  return p;
}

/* One innermost run of n elements with strides ds/ss (ss may be 0 or negative). */
static dfx_code run(dfx_kctx *ctx, dfx_tensor *dst, int64_t d, int64_t ds, const dfx_tensor *src, int64_t s,
                    int64_t ss, int64_t n, size_t es) {
  /* The common innermost runs have their own paths: contiguous on both sides
   * is one memmove, a zero source stride one fill. */
  if (ds == 1 && ss == 1) return dfx__arr_copy(ctx, dst, d, src, s, n);
  if (ds == 1 && ss == 0) return dfx__arr_fill(ctx, dst, d, n, src, s);
  if (dst->dtype == DFX_STRING) {
    dfx_str *dp = dst->data;
    const dfx_str *sp = src->data;
    for (int64_t k = 0; k < n; k++)
      if (str_copy(&dp[d + k * ds], &sp[s + k * ss])) return oom(ctx);
    return DFX_OK;
  }
#define RUN(T)                                                 \
  do {                                                         \
    T *dp = (T *)dst->data + d;                                \
    const T *sp = (const T *)src->data + s;                    \
    for (int64_t k = 0; k < n; k++) dp[k * ds] = sp[k * ss];   \
  } while (0)
  switch (es) {
    case 1: RUN(uint8_t); break;
    case 2: RUN(uint16_t); break;
    case 4: RUN(uint32_t); break;
    case 8: RUN(uint64_t); break;
    default: {
      char *dp = dst->data;
      const char *sp = src->data;
      for (int64_t k = 0; k < n; k++)
        memcpy(dp + (size_t)(d + k * ds) * es, sp + (size_t)(s + k * ss) * es, es);
    }
  }
#undef RUN
  return DFX_OK;
}

dfx_code dfx__arr_strided(dfx_kctx *ctx, dfx_tensor *dst, int64_t doff, const int64_t *dstride, const dfx_tensor *src,
                          int64_t soff, const int64_t *sstride, int r, const int64_t *dims) {
  int64_t n[2 * DFX_MAX_DIMS], ds[2 * DFX_MAX_DIMS], ss[2 * DFX_MAX_DIMS];
  int m = 0;
  /* Drop unit dims and merge dims that are contiguous in both tensors. */
  for (int i = 0; i < r; i++) {
    /* An empty box copies nothing; no stride is ever applied. */
    if (dims[i] == 0) return DFX_OK;
    if (dims[i] == 1) continue;
    /* Dim i-1 steps exactly over a whole dim i in both tensors, so the two are
     * one dim of n[m-1] * dims[i] with dim i's strides. Zero and negative
     * strides merge by the same test. */
    if (m > 0 && ds[m - 1] == dstride[i] * dims[i] && ss[m - 1] == sstride[i] * dims[i]) {
      n[m - 1] *= dims[i];
      ds[m - 1] = dstride[i];
      ss[m - 1] = sstride[i];
      continue;
    }
    n[m] = dims[i];
    ds[m] = dstride[i];
    ss[m] = sstride[i];
    m++;
  }
  size_t es = dfx__dtype_storage((dfx_dtype)dst->dtype);
  if (m == 0) return run(ctx, dst, doff, 1, src, soff, 1, 1, es);
  int64_t idx[2 * DFX_MAX_DIMS] = {0};
  int64_t d = doff, s = soff, work = 0;
  int last = m - 1;
  for (;;) {
    dfx_code c = run(ctx, dst, d, ds[last], src, s, ss[last], n[last], es);
    if (c || (c = dfx__arr_tick(ctx, &work, n[last]))) return c;
    /* Odometer over the outer dims: step dim k, and when it wraps undo its
     * whole extent and carry into dim k-1. */
    int k = last - 1;
    while (k >= 0) {
      d += ds[k];
      s += ss[k];
      if (++idx[k] < n[k]) break;
      d -= ds[k] * n[k];
      s -= ss[k] * n[k];
      idx[k] = 0;
      k--;
    }
    if (k < 0) return DFX_OK;
  }
}

dfx_tensor *dfx__arr_alloc(dfx_kctx *ctx, int k, dfx_dtype dtype, int ndims, const int64_t *dims, const char *what) {
  int64_t count = dfx__shape_count(ndims, dims);
  size_t es = dtype == DFX_RESOURCE || dtype == DFX_VARIANT ? sizeof(void *) : dfx__dtype_storage(dtype);
  size_t lim = dfx__tensor_limit();
  /* Checked here rather than left to dfx__kctx_alloc, so the message can name
   * the attr or input values that asked for this shape. */
  if (count < 0 || dfx__mul_size((size_t)count, es) > lim) {
    char b[256];
    dfx__kctx_fail(ctx, DFX_ELIMIT, "%s gives an output of shape %s, above the tensor limit of %zu bytes", what,
                   dfx__shape_str(ndims, dims, b, sizeof b), lim);
    return NULL;
  }
  return dfx__kctx_alloc(ctx, k, dtype, ndims, dims);
}

uint64_t dfx__arr_str_len(const dfx_tensor *t, int64_t i) {
  return t->dtype == DFX_STRING ? ((const dfx_str *)t->data)[i].len : 0;
}

uint64_t dfx__arr_str_bytes(const dfx_tensor *t) {
  uint64_t n = 0;
  for (int64_t i = 0; t->dtype == DFX_STRING && i < t->count; i++) n += ((const dfx_str *)t->data)[i].len;
  return n;
}

dfx_code dfx__arr_str_limit(dfx_kctx *ctx, bool ok, uint64_t bytes, const char *what) {
  size_t lim = dfx__tensor_limit();
  if (ok && bytes <= lim) return DFX_OK;
  if (!ok) return dfx__kctx_fail(ctx, DFX_ELIMIT, "%s: the string output's bytes overflow", what);
  return dfx__kctx_fail(ctx, DFX_ELIMIT, "%s: the string output would hold %llu bytes, above the tensor limit of %zu",
                        what, (unsigned long long)bytes, lim);
}

dfx_code dfx__arr_attr_range(const dfx_node *n, const char *attr, int64_t lo, int64_t hi, dfx_status *st) {
  const dfx_attr *a = dfx__node_attr(n, attr);
  if (!a || a->kind != DFX_ATTR_I || (a->v.i >= lo && a->v.i <= hi)) return DFX_OK;
  return dfx__status_set(st, DFX_EINVAL, "attr %s = %lld is out of range [%lld, %lld]", attr, (long long)a->v.i,
                         (long long)lo, (long long)hi);
}
