/* tensor_array.h - the TensorArray object shared by tensor_array.c (create,
 * read, write, size, close, grad) and tensor_array_many.c (gather, scatter,
 * concat, split). Every field after `mu` is guarded by `mu`; elements hold
 * references to immutable tensors, so reads hand out new references. */
#ifndef DFX_MISC_TENSOR_ARRAY_H
#define DFX_MISC_TENSOR_ARRAY_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "kernel.h"
#include "misc.h"

/* The `types` of the element-carrying rows: elements are copied whole
 * (strings deeply), so every dtype with a plain layout. */
#define TA_DTYPE "dtype: " MISC_DATA_TYPES
#define TA_T "T: " MISC_DATA_TYPES

typedef struct ta_elem {
  dfx_tensor *t;                 /* value, or NULL (never written, cleared, or shape only) */
  bool written, read, cleared;
  int rank;                      /* shape of a written (or shape-only) element */
  int64_t dims[DFX_MAX_DIMS];
} ta_elem;

typedef struct dfx_tarray dfx_tarray;
struct dfx_tarray {
  uv_mutex_t mu;
  char *name;
  dfx_dtype dtype;
  dfx_shape eshape;              /* element shape; rank -1 unknown; owns dims */
  bool dynamic_size, clear_after_read, identical_shapes, aggregate, is_grad, closed;
  int64_t size, cap;
  ta_elem *elems;
  int n_grads;                   /* gradient arrays (owned by the step, not by this array) */
  char **grad_src;
  dfx_tarray **grads;
};

void dfx__ta_free(void *obj);
/* Resolves input i as a TensorArray handle; NULL after failing ctx. */
dfx_tarray *dfx__ta_get(dfx_kctx *ctx, int i);
/* Locked helpers (caller holds ta->mu); they fail ctx and return its code. */
dfx_code dfx__ta_check_open(dfx_kctx *ctx, dfx_tarray *ta);
dfx_code dfx__ta_write(dfx_kctx *ctx, dfx_tarray *ta, int64_t index, dfx_tensor *value);
/* Stores a new reference in *out. */
dfx_code dfx__ta_read(dfx_kctx *ctx, dfx_tarray *ta, int64_t index, dfx_tensor **out);
/* Shape helpers. */
const char *dfx__ta_pshape_str(const dfx_shape *s, char *buf, size_t n);
bool dfx__ta_compatible(const dfx_shape *s, int rank, const int64_t *dims);
bool dfx__ta_fully_defined(const dfx_shape *s);
/* Init of the rows with shape attrs: checks element_shape(_except0). */
dfx_code dfx__ta_init(const dfx_node *n, void **state, dfx_status *st);
/* The float32 scalar 0 flow output. */
dfx_code dfx__ta_flow_out(dfx_kctx *ctx, int k);

#endif
