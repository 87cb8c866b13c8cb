/* shape_fn.h - how shape functions are written: the context one call
 * sees (shape_ctx.c) and the per-family tables (shape_fns_*.c) that
 * shapes.c looks ops up in.
 *
 * A shape function reads its node's attrs and what is known about its
 * data inputs, and writes what it can about its outputs, which start out
 * unknown. It assumes the op succeeds at run time (a failing node produces
 * nothing), so "these dims must be equal" lets it take the known one; and
 * wherever a graph is malformed (a missing attr, a rank that cannot be, a
 * value out of range) it writes nothing rather than guess. It follows TF's
 * own function for the op; where that one trusts something a run does not
 * check, ours is stricter. */
#ifndef DFX_SHAPE_FN_H
#define DFX_SHAPE_FN_H

#include "shapes.h"

typedef struct dfx_shape_ctx {
  const dfx_node *node;
  int n_in;
  const dfx_tinfo *const *in;  /* the data inputs' facts */
  int n_out;
  dfx_tinfo *out;              /* preset unknown; write with the setters below */
  bool hints;                  /* attrs TF derived from its own inference (a TensorArray's element_shape)
                                * may be trusted, as `_output_shapes` is (dfx_shapes_opts.use_hints) */
} dfx_shape_ctx;

typedef void (*dfx_shape_fn)(dfx_shape_ctx *c);

typedef struct dfx_shape_fn_def {
  const char *op;
  dfx_shape_fn fn;
} dfx_shape_fn_def;

/* The family tables, each ended by {NULL, NULL}. */
extern const dfx_shape_fn_def dfx__shape_fns_math[];   /* shape_fns_math.c: elementwise, reductions, matmul */
extern const dfx_shape_fn_def dfx__shape_fns_array[];  /* shape_fns_array.c: shape ops, reshape, concat, pack */
extern const dfx_shape_fn_def dfx__shape_fns_slice[];  /* shape_fns_slice.c: slice, strided slice, split, gather */
extern const dfx_shape_fn_def dfx__shape_fns_nn[];     /* shape_fns_nn.c: conv, pool, bias, norms, image */
extern const dfx_shape_fn_def dfx__shape_fns_misc[];   /* shape_fns_misc.c: random, tensor arrays, linalg, rest */

/* ---- shape_ctx.c: reading inputs, writing outputs ---- */

/* Input k's shape (unknown when the node has no input k). */
const dfx_pshape *dfx__sctx_in(const dfx_shape_ctx *c, int k);
/* Input k's value when every element is known: copies it to v (at most
 * DFX_SHAPE_VALUE_MAX) and sets *n; false otherwise. */
bool dfx__sctx_value(const dfx_shape_ctx *c, int k, int64_t *v, int *n);
/* Input k's one element (a scalar, or a vector of one) when known. */
bool dfx__sctx_scalar(const dfx_shape_ctx *c, int k, int64_t *v);
/* Input k's Const tensor when it is one (through Identity-like ops). */
const dfx_tensor *dfx__sctx_const(const dfx_shape_ctx *c, int k);
/* Input k read as a shape, as TF's MakeShapeFromShapeTensor: a vector's
 * known elements become dims (-1 and unknown elements unknown dims), a
 * vector of known length and unknown value a rank, a scalar -1 an unknown
 * rank. False when the value cannot be a shape (a negative size). */
bool dfx__sctx_shape_from_value(const dfx_shape_ctx *c, int k, dfx_pshape *out);

/* Sets output k's shape (a no-op for a missing output). */
void dfx__sctx_set(dfx_shape_ctx *c, int k, const dfx_pshape *s);
/* Sets output k to the fully known shape (r, dims) with the value vals
 * (row-major, DFX_VALUE_UNKNOWN where unknown). The value is kept only
 * for an int32/int64 output that small, and an element that does not fit
 * the output's dtype becomes unknown. */
void dfx__sctx_set_value(dfx_shape_ctx *c, int k, int r, const int64_t *dims, const int64_t *vals);
/* Output k is input j unchanged: shape, value and Const. */
void dfx__sctx_forward(dfx_shape_ctx *c, int k, int j);

/* An int list attr into v (at most max): its length, or -1 when absent or
 * not a list of ints. */
int dfx__sctx_attr_ints(const dfx_shape_ctx *c, const char *name, int64_t *v, int max);
/* The node's data_format attr: 0 channels last ("NHWC", "NDHWC", or no
 * attr), 1 channels first ("NCHW", "NCDHW"), -1 anything else (unknown). */
int dfx__sctx_data_format(const dfx_shape_ctx *c);

/* Resolves an axis against rank r (negative counts from the end): false
 * when out of [-r, r). */
bool dfx__axis(int64_t axis, int r, int *out);

#endif
