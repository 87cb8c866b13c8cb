/* tensor.h - refcounted dense tensors, the value type that flows along edges.
 * A tensor is immutable once shared (refs > 1); kernels may reuse an input's
 * buffer only when they hold the only reference. Small tensors keep their
 * elements inline and their structs are recycled per thread, so a scalar
 * loop does no heap allocation in steady state. */
#ifndef DFX_TENSOR_H
#define DFX_TENSOR_H

#include <stdbool.h>
#include <stdint.h>

#include "dfexec.h"
#include "dtype.h"

#define DFX_TENSOR_INLINE 32 /* bytes of elements stored inside the struct */

struct dfx_tensor {
  int refs;                  /* atomic reference count */
  uint8_t dtype;             /* dfx_dtype */
  uint8_t ndims;
  uint8_t owns_data;         /* data is a dfx__malloc block to free */
  uint8_t cached;            /* struct came from / may return to a thread cache */
  uint8_t immortal;          /* owned by a session (a Const's value): not refcounted, see below */
  int64_t count;             /* element count = product of dims */
  size_t nbytes;             /* count * storage size */
  void *data;                /* elements; inline_buf, own block or caller memory */
  void (*dealloc)(void *data, void *ud); /* caller memory release, if any */
  void *dealloc_ud;
  int64_t dims[DFX_MAX_DIMS];
  _Alignas(16) unsigned char inline_buf[DFX_TENSOR_INLINE];
};

/* Largest tensor a session may create, in bytes; larger fails with DFX_ELIMIT.
 * Process-wide, set by dfx_set_max_tensor_bytes; 0 means the default, which
 * is half the machine's memory capped at DFX_TENSOR_MAX_BYTES_DEFAULT. Read it
 * through dfx__tensor_limit(); kernels sizing non-tensor buffers from input
 * values (TensorArray slots, ...) check against it too. */
#define DFX_TENSOR_MAX_BYTES_DEFAULT ((size_t)1 << 36) /* 64 GiB */
extern size_t dfx__tensor_max_bytes;
size_t dfx__tensor_limit(void);

/* Returns a new tensor with uninitialised elements (strings are zeroed),
 * or NULL with *code set to DFX_EINVAL / DFX_ELIMIT / DFX_ENOMEM. */
dfx_tensor *dfx__tensor_alloc(dfx_dtype dtype, int ndims, const int64_t *dims, dfx_code *code);
/* Same, elements zeroed. */
dfx_tensor *dfx__tensor_zeros(dfx_dtype dtype, int ndims, const int64_t *dims, dfx_code *code);
/* Scalar helpers (new tensors). */
dfx_tensor *dfx__tensor_scalar(dfx_dtype dtype, const void *value);
/* Shape check: product of dims without overflow; -1 on a negative dim or
 * overflow. */
int64_t dfx__shape_count(int ndims, const int64_t *dims);

static inline dfx_tensor *dfx__tensor_ref(dfx_tensor *t) {
  if (t && !t->immortal) __atomic_add_fetch(&t->refs, 1, __ATOMIC_RELAXED);
  return t;
}
void dfx__tensor_unref(dfx_tensor *t);
static inline bool dfx__tensor_unique(const dfx_tensor *t) {
  return !t->immortal && __atomic_load_n(&t->refs, __ATOMIC_ACQUIRE) == 1 &&
         (t->owns_data || t->data == t->inline_buf);
}

/* Immortal tensors. A Const's value is read by every run of a session,
 * often by many nodes at once (a loop's step, a fan-out); an atomic
 * reference count on it costs more than the node. So the session owns it
 * outright and ref/unref skip it. It may flow anywhere inside a run, but it
 * must not outlive the session: whatever hands a tensor to the user goes
 * through dfx__tensor_export, and views of it keep its base alive instead. */
/* Makes a new tensor (refs 1, owned by the caller) immortal. */
void dfx__tensor_set_immortal(dfx_tensor *t);
/* Frees an immortal tensor (the session's owner only). */
void dfx__tensor_free_immortal(dfx_tensor *t);
/* A reference the caller may keep past the session: t itself (a new
 * reference), or for an immortal t a view or copy. NULL when out of memory. */
dfx_tensor *dfx__tensor_export(dfx_tensor *t);

/* Returns a new tensor sharing `t`'s elements with another shape (same count),
 * or NULL when memory runs out. Used by Reshape/ExpandDims/Squeeze. */
dfx_tensor *dfx__tensor_reshaped(dfx_tensor *t, int ndims, const int64_t *dims);
/* Deep copy (new tensor), or NULL. */
dfx_tensor *dfx__tensor_copy(const dfx_tensor *t);
bool dfx__tensor_same_shape(const dfx_tensor *a, const dfx_tensor *b);
/* Writes "[2,3]" into buf (always NUL-terminated). */
const char *dfx__shape_str(int ndims, const int64_t *dims, char *buf, size_t n);
#define DFX_SHAPE_STR(t, buf) dfx__shape_str((t)->ndims, (t)->dims, buf, sizeof buf)

/* Element access helpers for kernels that go through double (casts, tests). */
double dfx__tensor_get_f64(const dfx_tensor *t, int64_t i);
int64_t dfx__tensor_get_i64(const dfx_tensor *t, int64_t i);

/* Releases this thread's cache of tensor structs and the process's idle
 * tensor buffers (core/bufcache.c); tests call it before checking for
 * leaks. A thread's struct cache is also released when the thread exits. */
void dfx__tensor_cache_flush(void);

#endif
