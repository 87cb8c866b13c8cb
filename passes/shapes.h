/* shapes.h - static shape inference over a whole final graph, TensorFlow
 * style: what every node output's shape is (unknown rank, or a rank with
 * each dim known or not) and, for small integer tensors, what its value is,
 * for any run of the graph with the given feeds. Passes ask it before
 * rewriting (shapefold.c); `dfexec info --shapes` prints it.
 *
 * A fact here is a claim about every *live* instance of a tensor in every
 * run that gets that far: a dead tensor has no shape, and a node that fails
 * at run time produces nothing to contradict the claim. Facts come from
 * Const values, Placeholder shapes (the session checks a fed placeholder
 * against its shape attr), the given feed shapes and, when asked for, the
 * `_output_shapes` attrs TF wrote (a hint the engine never checks), and
 * flow through one shape function per op (shape_fn.h), written after TF's
 * (core/ops/ and common_shape_fns.cc). An op without a function, a fed
 * non-placeholder and anything a malformed graph makes doubtful is simply
 * unknown: inference never fails on a graph, only on memory.
 *
 * Loops: a Merge joins what its inputs carry (the most specific shape they
 * share), back edges from NextIteration included, iterating to a fixed
 * point (shapes.c says how it always ends). */
#ifndef DFX_SHAPES_H
#define DFX_SHAPES_H

#include <stdbool.h>
#include <stdint.h>

#include "graph.h"

#define DFX_DIM_UNKNOWN (-1)
/* Values are tracked for int32/int64 tensors of at most this many elements
 * (shape vectors, axes, paddings of rank 8, small index lists). */
#define DFX_SHAPE_VALUE_MAX 16
#define DFX_VALUE_UNKNOWN INT64_MIN /* an element of a partly known value */

/* A partial shape: rank -1 is an unknown rank; a dim of -1 an unknown size.
 * Ranks beyond DFX_MAX_DIMS (which no tensor can have) read as unknown. */
typedef struct dfx_pshape {
  int rank;
  int64_t dims[DFX_MAX_DIMS];
} dfx_pshape;

/* What is known about one output. */
typedef struct dfx_tinfo {
  dfx_pshape shape;
  int n_val;                            /* -1: no value; else the element count (shape fully known) */
  int64_t val[DFX_SHAPE_VALUE_MAX];     /* row-major; DFX_VALUE_UNKNOWN where unknown */
  const dfx_tensor *konst;              /* the exact tensor when this is a Const's value (any dtype or
                                         * size, through Identity-like ops), borrowed from the graph */
  const dfx_node *origin;               /* a resource handle's creator (a TensorArrayV3), carried like a
                                         * value, so reads through the handle know the element shape */
} dfx_tinfo;

/* A known shape for a fed output. */
typedef struct dfx_shape_feed {
  const char *node;
  int slot;
  dfx_pshape shape;
} dfx_shape_feed;

typedef struct dfx_shapes_opts {
  const char *const *fed;     /* nodes a run may feed (any order); their outputs come from feeds, not from them */
  int n_fed;
  const dfx_shape_feed *feeds; /* known shapes of fed outputs; their nodes count as fed too */
  int n_feeds;
  bool use_hints;             /* refine with `_output_shapes` attrs (display only: never proven) */
} dfx_shapes_opts;

typedef struct dfx_shapes {
  int n_nodes;
  int *first;                 /* n_nodes + 1: node i's outputs are out[first[i] .. first[i+1]-1] */
  dfx_tinfo *out;
  int n_outputs;              /* first[n_nodes] */
  int n_known;                /* outputs with a fully known shape */
  int rounds;                 /* passes over the graph the fixed point took */
  bool widened;               /* loops did not settle: their Merges were made unknown */
} dfx_shapes;

/* Infers every output of final graph g (only read; the result refers to
 * its Const tensors, so g must outlive it and stay unedited while it is
 * used). `o` may be NULL (nothing fed, no hints). On success *out is new
 * (free with dfx__shapes_free); DFX_ENOMEM otherwise, *out NULL. */
dfx_code dfx__shapes_infer(const dfx_graph *g, const dfx_shapes_opts *o, dfx_shapes **out, dfx_status *st);
void dfx__shapes_free(dfx_shapes *s);
/* Output `slot` of node `node`, or NULL when there is no such output. */
const dfx_tinfo *dfx__shapes_output(const dfx_shapes *s, int node, int slot);
/* Whether op has a shape function (control-flow ops count: the engine
 * handles them). */
bool dfx__shapes_has_fn(const char *op);

/* ---- pshape.c: partial shapes ---- */

dfx_pshape dfx__pshape_unknown(void);
/* Rank r with every dim unknown; unknown rank when r is outside [0, DFX_MAX_DIMS]. */
dfx_pshape dfx__pshape_of_rank(int r);
/* Rank r with the given dims (negative ones unknown); unknown rank beyond DFX_MAX_DIMS. */
dfx_pshape dfx__pshape_make(int r, const int64_t *dims);
dfx_pshape dfx__pshape_scalar(void);
dfx_pshape dfx__pshape_vector(int64_t d);
/* Known rank and every dim known. */
bool dfx__pshape_known(const dfx_pshape *s);
/* Number of elements when fully known (or when a known dim is 0), else -1. */
int64_t dfx__pshape_count(const dfx_pshape *s);
/* Whether some tensor can have both shapes. */
bool dfx__pshape_compatible(const dfx_pshape *a, const dfx_pshape *b);
bool dfx__pshape_equal(const dfx_pshape *a, const dfx_pshape *b);
/* TF's Merge: the most specific shape compatible with both; false (out
 * untouched) when they conflict. out may alias a or b. */
bool dfx__pshape_merge(const dfx_pshape *a, const dfx_pshape *b, dfx_pshape *out);
/* The join: the most specific shape both are instances of (what a Merge of
 * the two can produce). a becomes the result. */
void dfx__pshape_relax(dfx_pshape *a, const dfx_pshape *b);
/* s as rank r (unknown rank becomes r unknown dims); false when s has another rank. */
bool dfx__pshape_with_rank(const dfx_pshape *s, int r, dfx_pshape *out);
/* Numpy broadcasting of two shapes (TF's BroadcastBinaryOpOutputShapeFn,
 * assuming the op succeeds); false when known dims cannot broadcast. */
bool dfx__pshape_broadcast(const dfx_pshape *a, const dfx_pshape *b, dfx_pshape *out);
/* Two dims that must be equal: the known one; false when both are known and differ. */
bool dfx__dim_merge(int64_t a, int64_t b, int64_t *out);
/* Dim arithmetic: unknown in, unknown out; -1 also on overflow. */
int64_t dfx__dim_add(int64_t a, int64_t b);
int64_t dfx__dim_mul(int64_t a, int64_t b);
/* "[?,3]", "[]" or "?" into buf (always terminated); returns buf. */
const char *dfx__pshape_str(const dfx_pshape *s, char *buf, size_t n);

#endif
