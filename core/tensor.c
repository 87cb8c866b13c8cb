/* tensor.c - tensor allocation, reference counting and the per-thread struct cache.
 * The cache holds freed structs whose elements fitted inline; it is private to
 * its thread, so no lock is taken. A struct freed on another thread simply
 * joins that thread's cache. */
#include "tensor.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <uv.h>

#include "alloc.h"
#include "bufcache.h"

size_t dfx__tensor_max_bytes; /* 0 until first use: then dfx__tensor_limit() sets the default */

/* The default limit: 64 GiB, or half the machine's memory when that is less,
 * so a hostile shape fails with DFX_ELIMIT before the allocation can succeed
 * lazily and get the process killed when its pages are touched. */
size_t dfx__tensor_limit(void) {
  size_t lim = __atomic_load_n(&dfx__tensor_max_bytes, __ATOMIC_RELAXED);
  if (lim) return lim;
  uint64_t half = uv_get_total_memory() / 2;
  lim = half > 0 && half < DFX_TENSOR_MAX_BYTES_DEFAULT ? (size_t)half : DFX_TENSOR_MAX_BYTES_DEFAULT;
  size_t unset = 0;
  if (!__atomic_compare_exchange_n(&dfx__tensor_max_bytes, &unset, lim, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
    lim = unset; /* set concurrently */
  return lim;
}

#define CACHE_MAX 64

static _Thread_local struct {
  dfx_tensor *items[CACHE_MAX];
  int n;
  int armed; /* the thread-exit flush is registered for this thread */
} cache;

static void flush_structs(void) {
  while (cache.n > 0) dfx__free(cache.items[--cache.n]);
}

void dfx__tensor_cache_flush(void) {
  flush_structs();
  dfx__buf_cache_flush();
}

/* Any thread that runs kernels fills a cache, including the caller's own
 * threads that call dfx_session_run; a pthread key destructor empties it when
 * such a thread exits (static TLS is still valid while key destructors run),
 * so short-lived threads do not leak their cached structs. */
static pthread_key_t cache_key;
static uv_once_t cache_once = UV_ONCE_INIT;
static void cache_exit(void *p) {
  (void)p;
  flush_structs();
}
static void cache_key_init(void) {
  if (pthread_key_create(&cache_key, cache_exit) != 0) cache_key = (pthread_key_t)-1;
}
static void cache_arm(void) {
  cache.armed = 1;
  uv_once(&cache_once, cache_key_init);
  /* Without a key the thread's cached structs are simply lost at its exit:
   * a leak in a rare failure, never a crash. A destructor only runs for a
   * non-NULL value, hence the per-thread setspecific. */
  if (cache_key != (pthread_key_t)-1) pthread_setspecific(cache_key, &cache);
}

int64_t dfx__shape_count(int ndims, const int64_t *dims) {
  int64_t n = 1;
  bool empty = false; /* [2^62, 2^62, 0] is a valid empty shape, though its other dims overflow */
  for (int i = 0; i < ndims; i++) {
    if (dims[i] < 0) return -1;
    empty |= dims[i] == 0;
  }
  if (empty) return 0;
  for (int i = 0; i < ndims; i++)
    if (__builtin_mul_overflow(n, dims[i], &n)) return -1;
  return n;
}

static dfx_tensor *new_struct(void) {
  dfx_tensor *t = cache.n > 0 ? cache.items[--cache.n] : dfx__malloc(sizeof *t);
  return t;
}

/* A recycled or new struct with the header filled in; data is inline when
 * nbytes fits, else left for the caller (owns_data set). */
static dfx_tensor *new_tensor(dfx_dtype dtype, int ndims, const int64_t *dims, int64_t count, size_t nbytes) {
  dfx_tensor *t = new_struct();
  if (!t) return NULL;
  t->refs = 1;
  t->dtype = (uint8_t)dtype;
  t->ndims = (uint8_t)ndims;
  t->count = count;
  t->nbytes = nbytes;
  t->dealloc = NULL;
  t->dealloc_ud = NULL;
  t->cached = 1;
  t->immortal = 0;
  if (ndims) memcpy(t->dims, dims, sizeof(int64_t) * (size_t)ndims);
  /* Every header field is set here: a recycled struct still holds its last life's. */
  t->owns_data = nbytes > DFX_TENSOR_INLINE;
  t->data = t->owns_data ? NULL : t->inline_buf;
  return t;
}

dfx_tensor *dfx__tensor_alloc(dfx_dtype dtype, int ndims, const int64_t *dims, dfx_code *code) {
  dfx_code dummy;
  if (!code) code = &dummy;
  size_t esz = dfx__dtype_storage(dtype);
  if (ndims == 0 && esz > 0 && dtype != DFX_STRING) {
    size_t lim = __atomic_load_n(&dfx__tensor_max_bytes, __ATOMIC_RELAXED);
    if (lim == 0 || esz <= lim) { /* plain scalars, most of what a loop makes: no shape arithmetic */
      dfx_tensor *t = new_tensor(dtype, 0, NULL, 1, esz);
      *code = t ? DFX_OK : DFX_ENOMEM;
      return t;
    }
  }
  /* Storage size 0 means a dtype with no element layout here (invalid or not
   * supported), except resource and variant, whose elements are pointers. */
  if ((esz == 0 && dtype != DFX_RESOURCE && dtype != DFX_VARIANT) || ndims < 0 || ndims > DFX_MAX_DIMS) {
    *code = DFX_EINVAL;
    return NULL;
  }
  if (esz == 0) esz = sizeof(void *); /* resource/variant: opaque pointers */
  int64_t count = dfx__shape_count(ndims, dims);
  if (count < 0) {
    *code = DFX_EINVAL;
    return NULL;
  }
  size_t nbytes = dfx__mul_size((size_t)count, esz);
  if (nbytes == SIZE_MAX || nbytes > dfx__tensor_limit()) {
    *code = DFX_ELIMIT;
    return NULL;
  }
  dfx_tensor *t = new_tensor(dtype, ndims, dims, count, nbytes);
  if (!t) {
    *code = DFX_ENOMEM;
    return NULL;
  }
  if (t->owns_data) {
    t->data = dfx__buf_alloc(nbytes);
    if (!t->data) {
      dfx__free(t);
      *code = DFX_ENOMEM;
      return NULL;
    }
  }
  /* Pointer elements must start NULL: unref frees every string's bytes, and
   * an error path may release the tensor before a kernel fills it. */
  if (dtype == DFX_STRING || dtype == DFX_RESOURCE || dtype == DFX_VARIANT) memset(t->data, 0, nbytes);
  *code = DFX_OK;
  return t;
}

dfx_tensor *dfx__tensor_zeros(dfx_dtype dtype, int ndims, const int64_t *dims, dfx_code *code) {
  dfx_tensor *t = dfx__tensor_alloc(dtype, ndims, dims, code);
  if (t) memset(t->data, 0, t->nbytes);
  return t;
}

dfx_tensor *dfx__tensor_scalar(dfx_dtype dtype, const void *value) {
  dfx_tensor *t = dfx__tensor_alloc(dtype, 0, NULL, NULL);
  if (t && dtype != DFX_STRING) memcpy(t->data, value, t->nbytes);
  return t;
}

void dfx__tensor_unref(dfx_tensor *t) {
  /* Acquire-release: the thread that frees must see every write the other
   * holders made before they dropped their references. */
  if (!t || t->immortal || __atomic_sub_fetch(&t->refs, 1, __ATOMIC_ACQ_REL) != 0) return;
  /* A wrapped tensor's elements belong to the caller, so their string bytes
   * are not ours to free. */
  if (t->dtype == DFX_STRING && (t->owns_data || t->data == t->inline_buf)) {
    dfx_str *s = t->data;
    for (int64_t i = 0; i < t->count; i++) dfx__free(s[i].ptr);
  }
  /* bufcache needs the size the buffer was allocated with, so nbytes of a
   * tensor that owns its data never changes. */
  if (t->owns_data) dfx__buf_free(t->data, t->nbytes);
  if (t->dealloc) t->dealloc(t->data, t->dealloc_ud);
  if (t->cached && cache.n < CACHE_MAX) {
    if (!cache.armed) cache_arm();
    cache.items[cache.n++] = t;
    return;
  }
  dfx__free(t);
}

/* The view keeps `base` alive through the deallocator hook. */
static void view_release(void *data, void *ud) {
  (void)data;
  dfx__tensor_unref(ud);
}

dfx_tensor *dfx__tensor_reshaped(dfx_tensor *t, int ndims, const int64_t *dims) {
  if (ndims < 0 || ndims > DFX_MAX_DIMS || dfx__shape_count(ndims, dims) != t->count) return NULL;
  if (t->dtype == DFX_STRING) { /* strings own their bytes per element: copy */
    dfx_tensor *c = dfx__tensor_copy(t);
    if (!c) return NULL;
    c->ndims = (uint8_t)ndims;
    if (ndims) memcpy(c->dims, dims, sizeof(int64_t) * (size_t)ndims);
    return c;
  }
  /* A view of an immortal tensor must survive the session: it keeps the
   * immortal's own base alive, or copies when there is none. */
  bool copy = t->nbytes <= DFX_TENSOR_INLINE || (t->immortal && t->dealloc != view_release);
  if (copy && t->nbytes > DFX_TENSOR_INLINE) {
    dfx_tensor *c = dfx__tensor_copy(t);
    if (!c) return NULL;
    c->ndims = (uint8_t)ndims;
    if (ndims) memcpy(c->dims, dims, sizeof(int64_t) * (size_t)ndims);
    return c;
  }
  dfx_tensor *v = new_struct();
  if (!v) return NULL;
  *v = (dfx_tensor){.refs = 1, .dtype = t->dtype, .ndims = (uint8_t)ndims, .count = t->count,
                    .nbytes = t->nbytes, .cached = 1};
  if (ndims) memcpy(v->dims, dims, sizeof(int64_t) * (size_t)ndims);
  if (copy) { /* small: cheaper to copy than to share */
    v->data = v->inline_buf;
    memcpy(v->data, t->data, t->nbytes);
  } else {
    /* A view never owns its data, so dfx__tensor_unique is false for it and
     * no kernel writes through it into a base other nodes still read. */
    v->data = t->data;
    v->dealloc = view_release;
    /* An immortal view (dealloc == view_release, checked above) keeps its
     * mortal base in dealloc_ud: reference that, not the immortal. */
    v->dealloc_ud = dfx__tensor_ref(t->immortal ? (dfx_tensor *)t->dealloc_ud : t);
  }
  return v;
}

void dfx__tensor_set_immortal(dfx_tensor *t) { t->immortal = 1; }

void dfx__tensor_free_immortal(dfx_tensor *t) {
  if (!t) return;
  /* ref/unref skipped it while immortal, so refs is still the 1 it was made
   * with: clearing the flag lets the ordinary unref free it. */
  t->immortal = 0;
  dfx__tensor_unref(t);
}

dfx_tensor *dfx__tensor_export(dfx_tensor *t) {
  if (!t || !t->immortal) return dfx__tensor_ref(t);
  return dfx__tensor_reshaped(t, t->ndims, t->dims);
}

dfx_tensor *dfx__tensor_copy(const dfx_tensor *t) {
  dfx_tensor *c = dfx__tensor_alloc((dfx_dtype)t->dtype, t->ndims, t->dims, NULL);
  if (!c) return NULL;
  if (t->dtype != DFX_STRING) {
    memcpy(c->data, t->data, t->nbytes);
    return c;
  }
  const dfx_str *src = t->data;
  dfx_str *dst = c->data;
  for (int64_t i = 0; i < t->count; i++) {
    /* c's elements start zeroed, so unref after a failure frees only the
     * strings copied so far. */
    if (src[i].len == 0) continue;
    dst[i].ptr = dfx__strndup(src[i].ptr, src[i].len);
    if (!dst[i].ptr) {
      dfx__tensor_unref(c);
      return NULL;
    }
    dst[i].len = src[i].len;
  }
  return c;
}

bool dfx__tensor_same_shape(const dfx_tensor *a, const dfx_tensor *b) {
  return a->ndims == b->ndims && memcmp(a->dims, b->dims, sizeof(int64_t) * a->ndims) == 0;
}

const char *dfx__shape_str(int ndims, const int64_t *dims, char *buf, size_t n) {
  size_t o = 0;
  /* snprintf returns the untruncated length, so o may pass n: every later
   * write checks o < n first, and the output is cut but terminated. */
  o += (size_t)snprintf(buf + o, n - o, "[");
  for (int i = 0; i < ndims && o < n; i++)
    o += (size_t)snprintf(buf + o, n - o, i ? ",%lld" : "%lld", (long long)dims[i]);
  if (o < n) snprintf(buf + o, n - o, "]");
  return buf;
}

double dfx__tensor_get_f64(const dfx_tensor *t, int64_t i) {
  const void *p = t->data;
  switch ((dfx_dtype)t->dtype) {
    case DFX_F32: return ((const float *)p)[i];
    case DFX_F64: return ((const double *)p)[i];
    case DFX_F16: return dfx__f16_to_f32(((const uint16_t *)p)[i]);
    case DFX_BF16: return dfx__bf16_to_f32(((const uint16_t *)p)[i]);
    case DFX_BOOL: return ((const uint8_t *)p)[i] ? 1.0 : 0.0;
    /* Not through get_i64, which would wrap values of 2^63 and more. */
    case DFX_U64: return (double)((const uint64_t *)p)[i];
    default: return (double)dfx__tensor_get_i64(t, i);
  }
}

int64_t dfx__tensor_get_i64(const dfx_tensor *t, int64_t i) {
  const void *p = t->data;
  switch ((dfx_dtype)t->dtype) {
    case DFX_I8: case DFX_QI8: return ((const int8_t *)p)[i];
    case DFX_U8: case DFX_QU8: case DFX_BOOL: return ((const uint8_t *)p)[i];
    case DFX_I16: case DFX_QI16: return ((const int16_t *)p)[i];
    case DFX_U16: case DFX_QU16: return ((const uint16_t *)p)[i];
    case DFX_I32: case DFX_QI32: return ((const int32_t *)p)[i];
    case DFX_U32: return ((const uint32_t *)p)[i];
    case DFX_I64: return ((const int64_t *)p)[i];
    case DFX_U64: return (int64_t)((const uint64_t *)p)[i];
    /* Truncates toward zero, as a C cast does; NaN and out-of-range values
     * are the caller's to exclude. */
    case DFX_F32: case DFX_F64: case DFX_F16: case DFX_BF16: return (int64_t)dfx__tensor_get_f64(t, i);
    default: return 0;
  }
}

/* ---- public tensor API ---- */

size_t dfx_set_max_tensor_bytes(size_t max_bytes) {
  /* Through dfx__tensor_limit, so an unset limit reports the default in force. */
  size_t old = dfx__tensor_limit();
  __atomic_store_n(&dfx__tensor_max_bytes, max_bytes, __ATOMIC_RELAXED); /* 0: default again on next use */
  return old;
}

dfx_tensor *dfx_tensor_new(dfx_dtype dtype, const int64_t *dims, int ndims) {
  if (ndims > 0 && !dims) return NULL;
  /* Their elements are internal pointers a caller could neither fill nor own. */
  if (dtype == DFX_RESOURCE || dtype == DFX_VARIANT) return NULL;
  return dfx__tensor_zeros(dtype, ndims, dims, NULL);
}

dfx_tensor *dfx_tensor_new_copy(dfx_dtype dtype, const int64_t *dims, int ndims, const void *data,
                                size_t nbytes) {
  /* String elements are dfx_str records, not flat bytes: dfx_tensor_set_string
   * fills those one by one. */
  if (dtype == DFX_STRING || (nbytes && !data)) return NULL;
  dfx_tensor *t = dfx_tensor_new(dtype, dims, ndims);
  if (!t) return NULL;
  if (t->nbytes != nbytes) {
    dfx__tensor_unref(t);
    return NULL;
  }
  if (nbytes) memcpy(t->data, data, nbytes);
  return t;
}

dfx_tensor *dfx_tensor_new_wrap(dfx_dtype dtype, const int64_t *dims, int ndims, void *data,
                                size_t nbytes, void (*dealloc)(void *, void *), void *ud) {
  size_t esz = dfx_dtype_size(dtype);
  if (esz == 0 || ndims < 0 || ndims > DFX_MAX_DIMS || (ndims > 0 && !dims)) return NULL;
  int64_t count = dfx__shape_count(ndims, dims);
  if (count < 0 || dfx__mul_size((size_t)count, esz) != nbytes || (nbytes && !data)) return NULL;
  /* owns_data stays 0: the elements are the caller's, so no kernel takes this
   * tensor as a unique input to overwrite (dfx__tensor_unique). */
  dfx_tensor *t = dfx__malloc(sizeof *t);
  if (!t) return NULL;
  *t = (dfx_tensor){.refs = 1, .dtype = (uint8_t)dtype, .ndims = (uint8_t)ndims, .count = count,
                    .nbytes = nbytes, .data = data, .dealloc = dealloc, .dealloc_ud = ud};
  if (ndims) memcpy(t->dims, dims, sizeof(int64_t) * (size_t)ndims);
  return t;
}

void dfx_tensor_free(dfx_tensor *t) { dfx__tensor_unref(t); }
dfx_dtype dfx_tensor_dtype(const dfx_tensor *t) { return t ? (dfx_dtype)t->dtype : DFX_INVALID; }
int dfx_tensor_ndims(const dfx_tensor *t) { return t ? t->ndims : -1; }
int64_t dfx_tensor_dim(const dfx_tensor *t, int i) {
  return t && i >= 0 && i < t->ndims ? t->dims[i] : -1;
}
int64_t dfx_tensor_count(const dfx_tensor *t) { return t ? t->count : -1; }
size_t dfx_tensor_nbytes(const dfx_tensor *t) { return t && t->dtype != DFX_STRING ? t->nbytes : 0; }
void *dfx_tensor_data(const dfx_tensor *t) { return t && t->dtype != DFX_STRING ? t->data : NULL; }

const char *dfx_tensor_string(const dfx_tensor *t, int64_t i, size_t *len) {
  if (!t || t->dtype != DFX_STRING || i < 0 || i >= t->count) {
    if (len) *len = 0;
    return NULL;
  }
  const dfx_str *s = (const dfx_str *)t->data + i;
  if (len) *len = s->len;
  /* An empty element has no buffer; callers get "" rather than NULL. */
  return s->ptr ? s->ptr : "";
}

dfx_code dfx_tensor_set_string(dfx_tensor *t, int64_t i, const char *s, size_t len) {
  if (!t || t->dtype != DFX_STRING || i < 0 || i >= t->count || (len && !s)) return DFX_EINVAL;
  char *p = NULL;
  if (len) {
    p = dfx__strndup(s, len);
    if (!p) return DFX_ENOMEM;
  }
  /* The copy is made before the old bytes are freed: on DFX_ENOMEM the
   * element is unchanged. */
  dfx_str *e = (dfx_str *)t->data + i;
  dfx__free(e->ptr);
  e->ptr = p;
  e->len = len;
  return DFX_OK;
}
