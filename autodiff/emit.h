/* emit.h - writing gradient nodes into a graph being edited. Gradient
 * functions (grad_*.c) build their vector-Jacobian products from ordinary
 * ops through these helpers; nothing here knows any op's derivative.
 *
 * The emitter keeps a sticky error (the first one wins, as the builder's
 * does), so a gradient function chains calls and checks once at the end: a
 * call after an error does nothing and returns the null port. Every node is
 * given its type attrs explicitly and has its signature resolved at once,
 * so its output dtypes are known to the next call (finalising recomputes
 * them). Node ids, not pointers, are kept: adding a node may move the array. */
#ifndef DFX_AD_EMIT_H
#define DFX_AD_EMIT_H

#include <stdbool.h>
#include <stdint.h>

#include "graph.h"

/* A tensor of the graph being edited; node -1 is "no tensor" (no gradient,
 * or an error). */
typedef struct gp {
  int node;
  int slot;
} gp;

#define GP_NONE ((gp){-1, 0})
static inline bool gp_ok(gp p) { return p.node >= 0; }

typedef struct dfx_emit {
  dfx_graph *g;
  const char *scope;     /* name prefix of every node made now, e.g. "gradients/mul_grad/" */
  int ctrl;              /* node that input-less nodes (constants) depend on, -1 for none:
                          * keeps them in the frame and branch of the gradient they serve */
  dfx_status *st;
  dfx_code err;          /* first error, sticky */
  /* Inside a loop's gradient, a forward tensor is not visible from the
   * backward frame: remap (when set) gives the tensor to read instead (a
   * value popped from the forward pass's stack, an invariant entered into
   * the backward frame). It is cleared while it runs. */
  gp (*remap)(void *ud, gp p);
  void *remap_ud;
} dfx_emit;

/* An attr for em_node: kinds as in core/attr.h. */
typedef dfx_attr em_attr;
#define EA_TYPE(n, t) ((dfx_attr){.name = (char *)(n), .kind = DFX_ATTR_TYPE, .v.type = (t)})
#define EA_INT(n, x) ((dfx_attr){.name = (char *)(n), .kind = DFX_ATTR_I, .v.i = (x)})
#define EA_BOOL(n, x) ((dfx_attr){.name = (char *)(n), .kind = DFX_ATTR_B, .v.b = (x)})
#define EA_FLOAT(n, x) ((dfx_attr){.name = (char *)(n), .kind = DFX_ATTR_F, .v.f = (x)})

/* Records an error (first one wins) and returns it. */
dfx_code em_fail(dfx_emit *e, dfx_code code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Adds node `op` named scope + `base` (made unique) reading `in` (n data
 * inputs; ports must be valid), with attrs; returns its id or -1. */
int em_node(dfx_emit *e, const char *op, const char *base, const gp *in, int n, const em_attr *attrs, int n_attrs);
/* Output k of a new node, as a port. */
gp em_op(dfx_emit *e, const char *op, const gp *in, int n, const em_attr *attrs, int n_attrs);

/* The dtype of a tensor (known for every node once resolved). */
dfx_dtype em_dtype(const dfx_emit *e, gp p);
/* Copies attr `name` of node `from` onto node `to` when present. */
void em_copy_attr(dfx_emit *e, int to, int from, const char *name);

/* ---- shorthands (T taken from the first input) ---- */
gp em_unary(dfx_emit *e, const char *op, gp x);
gp em_binary(dfx_emit *e, const char *op, gp a, gp b);
gp em_ident(dfx_emit *e, gp x);
/* Scalar constant of dtype t holding v (float types) or (int64_t)v. */
gp em_scalar(dfx_emit *e, dfx_dtype t, double v);
/* Int vector constant of dtype t (DFX_I32 or DFX_I64). */
gp em_ivec(dfx_emit *e, dfx_dtype t, const int64_t *v, int n);
gp em_shape(dfx_emit *e, gp x, dfx_dtype out_type);  /* Shape(x) */
gp em_size(dfx_emit *e, gp x);                       /* Size(x), int32 */
gp em_rank(dfx_emit *e, gp x);                       /* Rank(x), int32 */
gp em_reshape(dfx_emit *e, gp x, gp shape);
gp em_sum(dfx_emit *e, gp x, gp axes, bool keep);
gp em_cast(dfx_emit *e, gp x, dfx_dtype to);         /* x itself when already `to` */
gp em_zeros_like(dfx_emit *e, gp x);
gp em_ones_like(dfx_emit *e, gp x);
gp em_select(dfx_emit *e, gp c, gp t, gp f);
gp em_range(dfx_emit *e, gp start, gp limit, gp delta);
gp em_concat(dfx_emit *e, const gp *xs, int n, gp axis);
gp em_pack(dfx_emit *e, const gp *xs, int n, int axis);
gp em_matmul(dfx_emit *e, const char *op, gp a, gp b, const char *ta_name, bool ta, const char *tb_name, bool tb);
/* Sum of n >= 1 tensors of one shape (AddN when n > 1). */
gp em_addn(dfx_emit *e, const gp *xs, int n);
/* The gradients of a broadcasting binary op's operands from gx and gy
 * (each of the broadcast shape, either may be GP_NONE): each summed over
 * the axes BroadcastGradientArgs gives it and reshaped to its operand's
 * shape. */
void em_unbroadcast(dfx_emit *e, gp x, gp y, gp gx, gp gy, gp *dx, gp *dy);

#endif
