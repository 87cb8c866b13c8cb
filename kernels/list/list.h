/* list.h - TensorFlow's TensorList, the value TF2 loops accumulate into: a
 * DFX_VARIANT scalar whose element is a dfx_tlist the tensor owns (its
 * deallocator frees the list, so the list lives exactly as long as the
 * tensor). Lists are values: an op that changes one (SetItem, PushBack,
 * PopBack, Resize, ScatterIntoExistingList) changes its input in place only
 * when it holds the only reference to it (TF's forwarding), and otherwise a
 * shallow copy whose elements share the same immutable tensors. A handle
 * is trusted only when its tensor's deallocator is this family's, so any
 * other variant is an error, never a wild pointer. */
#ifndef DFX_LIST_H
#define DFX_LIST_H

#include <stdbool.h>
#include <stdint.h>

#include "kernel.h"

/* Element dtypes: numbers, bool and strings (elements are whole tensors). */
#define LIST_NUM                                                                                             \
  "bool, int8, uint8, int16, uint16, int32, uint32, int64, uint64, half, bfloat16, float, double, complex64, " \
  "complex128"
#define LIST_ELEM "element_dtype: {" LIST_NUM ", string}"

typedef struct dfx_tlist {
  dfx_dtype dtype;             /* element_dtype */
  int rank;                    /* element_shape: -1 unknown rank */
  int64_t dims[DFX_MAX_DIMS];  /* -1 for an unknown dim */
  int64_t max;                 /* max_num_elements, -1 unlimited */
  int64_t n, cap;
  dfx_tensor **elems;          /* n references; NULL = never set */
} dfx_tlist;

/* The list in input i, or NULL after failing ctx. */
const dfx_tlist *dfx__list_in(dfx_kctx *ctx, int i);
/* A list input i this kernel may change: the input itself when unique, else
 * a shallow copy; stored as output k. NULL after failing ctx. */
dfx_tlist *dfx__list_mutable(dfx_kctx *ctx, int i, int k);
/* A new empty list as output k (dtype, shape copied); NULL after failing ctx. */
dfx_tlist *dfx__list_out(dfx_kctx *ctx, int k, dfx_dtype dtype, int rank, const int64_t *dims);
/* Grows or shrinks l to n elements (new ones unset). */
dfx_code dfx__list_resize(dfx_kctx *ctx, dfx_tlist *l, int64_t n);
/* An element_shape input (int32/int64: scalar -1 = unknown rank, else a
 * vector with -1 for unknown dims). */
dfx_code dfx__list_shape_in(dfx_kctx *ctx, int i, int *rank, int64_t *dims);
/* Merges shape b into a (both partial); DFX_EINVAL naming `what` when they
 * disagree. */
dfx_code dfx__list_shape_merge(dfx_kctx *ctx, int *rank, int64_t *dims, int brank, const int64_t *bdims,
                               const char *what);
bool dfx__list_shape_full(int rank, const int64_t *dims);
/* Whether tensor t fits (rank, dims). */
bool dfx__list_fits(int rank, const int64_t *dims, const dfx_tensor *t);
const char *dfx__list_shape_str(int rank, const int64_t *dims, char *buf, size_t n);
/* Checks an element before storing it: dtype and shape. */
dfx_code dfx__list_check_item(dfx_kctx *ctx, const dfx_tlist *l, const dfx_tensor *t);
/* A new zero tensor of l's dtype and shape (rank, dims), which must be full. */
dfx_tensor *dfx__list_zeros(dfx_kctx *ctx, dfx_dtype dtype, int rank, const int64_t *dims, const char *why);
/* Copies n elements from src[so..] to dst[do..] (deep for strings); false when out of memory. */
bool dfx__list_copy(dfx_tensor *dst, int64_t d0, const dfx_tensor *src, int64_t s0, int64_t n);

#endif
