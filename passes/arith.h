/* arith.h - what the `arith` pass's rule files share (passes/arith*.c):
 * the rewrite primitives, which keep every kept output's value and
 * deadness, and the rule tables. A rule looks at one node and, when it can
 * prove the node's output equals some tensor already in the graph, calls a
 * primitive; it never edits the graph itself. */
#ifndef DFX_ARITH_H
#define DFX_ARITH_H

#include <stdbool.h>

#include "pass.h"
#include "static_shape.h"

typedef struct dfx_arith {
  dfx_pass_ctx *c;
  bool *ctrl_used; /* per node: has control consumers (edges at entry, plus those this pass adds) */
} dfx_arith;

/* A rule: 1 when it rewrote node i, 0 when it did not apply, or a negative
 * dfx_code (out of memory). */
typedef int (*dfx_arith_rule_fn)(dfx_arith *a, int i);

typedef struct dfx_arith_rule {
  const char *op;
  dfx_arith_rule_fn fn;
} dfx_arith_rule;

/* The rule tables, each ending in a {NULL} row. */
extern const dfx_arith_rule dfx__arith_math_rules[];   /* arith_math.c */
extern const dfx_arith_rule dfx__arith_shape_rules[];  /* arith_shape.c */

/* Node i's output 0 is provably the tensor at the end of a chain of data
 * inputs: path[0] is an input index of i, path[1] an input index of the
 * node that input reads, and so on (n_path >= 1). Consumers of i read that
 * tensor instead and i goes; or, when i is kept, has control consumers, or
 * some input off the path could make it dead (a control input, a
 * non-constant data input), i becomes an Identity of that tensor in place
 * with those inputs as control inputs, so its deadness, frame and iteration
 * stay. Declines (returns 0) when an input off the path reads a Switch
 * (its deadness is per output, which no control edge carries) or when the
 * dtypes differ. 1 when rewritten, or a negative dfx_code. */
int dfx__arith_forward(dfx_arith *a, int i, const int *path, int n_path);

/* Node i's data input k reads node m, and m's output equals (as far as i
 * cares) m's data input mk: i reads that instead, taking m's other inputs
 * as control inputs (as above; same declines). */
int dfx__arith_bypass(dfx_arith *a, int i, int k, int mk);

/* ---- helpers for the rules ---- */

/* The node that data input k of node i reads. */
static inline const dfx_node *dfx__arith_src(const dfx_arith *a, int i, int k) {
  return &a->c->g->nodes[a->c->g->nodes[i].in[k].node];
}
/* The constant behind data input k of node i, or NULL. */
const dfx_tensor *dfx__arith_const(const dfx_arith *a, int i, int k);
/* The shape of data input k of node i (see dfx__static_shape_of). */
bool dfx__arith_shape(const dfx_arith *a, int i, int k, dfx_static_shape *s);
/* A constant integer vector (rank 1, or a scalar when scalar_ok) of at
 * most DFX_MAX_DIMS * 2 elements, into v; its length, or -1. */
int dfx__arith_ints(const dfx_tensor *t, bool scalar_ok, int64_t *v);
/* Whether a producer may be looked through: not fed (a feed replaces its
 * value) and present. */
bool dfx__arith_transparent(const dfx_arith *a, int id);

#endif
