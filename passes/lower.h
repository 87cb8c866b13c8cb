/* lower.h - the lowering of TensorFlow 2 graphs to native v1 control flow,
 * shared by lower.c (the pass: which nodes, in what order, and when the
 * library can go), lower_call.c (function inlining), lower_cond.c
 * (If/StatelessIf/Case) and lower_while.c (While/StatelessWhile).
 *
 * dfexec has no function runtime: a node that calls a library function
 * (PartitionedCall, StatefulPartitionedCall, or the function's name used as
 * an op) is replaced by the function's body, and functional control flow by
 * Switch/Merge conds and Enter/Merge/Switch/LoopCond/NextIteration/Exit
 * frames whose branches and bodies are inlined the same way, as
 * TensorFlow's LowerFunctionalOpsPass does. Inlined bodies may hold more
 * functional ops and calls; the pass visits nodes in id order and new nodes
 * get higher ids, so nesting in any order lowers in one sweep. Every helper
 * works from attrs alone (the graph is being edited: dtypes and edges are
 * stale until the manager finalises it), and keeps node ids, never node
 * pointers, across node additions. */
#ifndef DFX_LOWER_H
#define DFX_LOWER_H

#include "function.h"
#include "pass.h"

/* Calls nested deeper than this (a function calling itself) fail. */
#define DFX_LOWER_MAX_DEPTH 64

typedef struct dfx_lower_ctx {
  dfx_graph *g;
  const dfx_fn_lib *lib;
  int *depth;                 /* per node id: how many inlinings made it (0 = the user's) */
  int cap_depth;
  dfx_pass_counts *counts;
  dfx_status *st;
} dfx_lower_ctx;

/* One function call to inline. */
typedef struct dfx_inline_call {
  const dfx_function *fn;
  const char *prefix;            /* body node names become "<prefix>/<name>" */
  const dfx_attr *attrs;         /* the caller's attrs: values for `$attr` placeholders and arg sizes */
  int n_attrs;
  int n_in;
  const dfx_graph_port *in;      /* the call's flat data inputs */
  const dfx_dtype *in_types;     /* their dtypes (NULL: from the signature) */
  int n_ctrl;
  const int *ctrl;               /* node ids the body must wait for */
  int depth;                     /* the caller's depth */
  const char *what;              /* "node 'x' (While) body", for messages */
} dfx_inline_call;

/* Where the inlined body's results are (new arrays; dfx__inline_result_free). */
typedef struct dfx_inline_result {
  int n_out;
  dfx_graph_port *out;           /* per flat output */
  dfx_dtype *out_types;
  int n_ctrl_out;
  int *ctrl_out;                 /* control_ret nodes */
  int anchor;                    /* a body node every root of the body waits on (-1: none) */
} dfx_inline_result;

dfx_code dfx__inline_function(dfx_lower_ctx *lc, const dfx_inline_call *call, dfx_inline_result *res);
void dfx__inline_result_free(dfx_inline_result *r);

/* The lowerings: node `id` of each kind becomes native control flow plus
 * inlined bodies; its data consumers read the new outputs directly, and the
 * node itself stays, as an IdentityN (or NoOp) of the same name, for
 * fetches and control edges. */
dfx_code dfx__lower_call(dfx_lower_ctx *lc, int id, const dfx_function *fn);
dfx_code dfx__lower_cond(dfx_lower_ctx *lc, int id);   /* If, StatelessIf, Case, StatelessCase */
dfx_code dfx__lower_while(dfx_lower_ctx *lc, int id);  /* While, StatelessWhile */

/* ---- helpers (lower.c) ---- */

/* Adds node "<base>" (made unique) of `op` at depth `depth`; returns its id
 * or -1 with the error in lc->st. */
int dfx__lower_add(dfx_lower_ctx *lc, const char *base, const char *op, int depth);
dfx_code dfx__lower_attr_type(dfx_lower_ctx *lc, int id, const char *name, dfx_dtype t);
dfx_code dfx__lower_attr_int(dfx_lower_ctx *lc, int id, const char *name, int64_t v);
dfx_code dfx__lower_attr_bool(dfx_lower_ctx *lc, int id, const char *name, bool v);
dfx_code dfx__lower_attr_str(dfx_lower_ctx *lc, int id, const char *name, const char *v);
dfx_code dfx__lower_attr_types(dfx_lower_ctx *lc, int id, const char *name, const dfx_dtype *t, int n);
/* Turns node id into IdentityN(outs) (NoOp when n_out is 0) with control
 * inputs ctrl; all its old inputs and attrs go. Its data consumers are
 * first moved to read outs directly. */
dfx_code dfx__lower_replace(dfx_lower_ctx *lc, int id, const dfx_graph_port *outs, const dfx_dtype *types, int n_out,
                            const int *ctrl, int n_ctrl);
/* The list(type) attr `name` of node id into a new array (*n elements; may
 * be NULL when empty); DFX_EINVAL naming node and attr if missing. */
dfx_code dfx__lower_types(dfx_lower_ctx *lc, int id, const char *name, dfx_dtype **out, int *n);
/* The function named by func attr `name` of node id; DFX_EINVAL naming the
 * node when the attr is missing or the library lacks the function. */
dfx_code dfx__lower_func(dfx_lower_ctx *lc, int id, const char *name, const dfx_function **out);

#endif
