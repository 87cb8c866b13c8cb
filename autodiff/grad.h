/* grad.h - the gradient-function registry and the contract of a gradient
 * function. Gradients are an open set, so they live in tables (style §2.3):
 * each grad_<family>.c exports one sentinel-terminated table of
 * (op name, function) rows, and grad_registry.c looks an op up in them.
 *
 * A gradient function emits the vector-Jacobian product of one forward node
 * with ordinary ops (emit.h): given the gradient of each output (dy[k],
 * never GP_NONE for a float output: missing ones arrive as zeros), it sets
 * dx[k] for each data input it differentiates and leaves GP_NONE for the
 * rest (integer inputs, shape arguments, indices). It reads the forward node
 * through its id (g->nodes[node]); the array may move while it emits, so it
 * re-reads rather than keeping a pointer. Errors go through em_fail. */
#ifndef DFX_AD_GRAD_H
#define DFX_AD_GRAD_H

#include "emit.h"

typedef void (*dfx_grad_fn)(dfx_emit *e, int node, const gp *dy, gp *dx);

typedef struct dfx_grad_def {
  const char *op;
  dfx_grad_fn fn;   /* NULL: the op is known to have no gradient (as TF's NotDifferentiable) */
} dfx_grad_def;

/* The tables, one per family, each ending with a {NULL} row. */
extern const dfx_grad_def dfx__grad_math[];
extern const dfx_grad_def dfx__grad_nn[];
extern const dfx_grad_def dfx__grad_array[];
extern const dfx_grad_def dfx__grad_ta[];
extern const dfx_grad_def dfx__grad_extra[];

/* The row for op, or NULL when no table lists it. */
const dfx_grad_def *dfx__grad_find(const char *op);

/* ---- helpers for gradient functions ---- */

/* Data input k of the forward node, as a port. */
static inline gp gin(const dfx_emit *e, int node, int k) {
  const dfx_input *in = &e->g->nodes[node].in[k];
  return (gp){in->node, in->slot};
}
static inline gp gout(int node, int k) { return (gp){node, k}; }
/* The dtype attr "T" of the forward node (DFX_INVALID when absent). */
static inline dfx_dtype gtype(const dfx_emit *e, int node) {
  return dfx__attr_type(&e->g->nodes[node], "T", DFX_INVALID);
}

#endif
