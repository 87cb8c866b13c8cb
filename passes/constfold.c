/* constfold.c - the `constfold` pass: a pure node whose data inputs are
 * all constants is computed now, with its own kernel, and replaced by
 * Consts holding its outputs (TF's Grappler constant folding).
 *
 * Constants are Const nodes nobody feeds, and loop invariants: a constant
 * Enter of a constant (tf-semantics §2.5), which delivers the same value to
 * every iteration. A node of one output becomes a Const in place (its name
 * stays); one of several becomes one Const per output. The replacement keeps the frame, the iterations and the
 * deadness of what it replaces by taking over its control inputs and those
 * of its constant sources (a branch constant's pivot, an invariant's Enter
 * as a control input, which puts it in the loop's frame and every
 * iteration). Nodes are visited in graph order, producers first, so a
 * chain folds in one visit. Not folded: stateful ops, anything a run may
 * feed, kernels that fail on these values (the run reports that), inputs
 * or results over 10 MiB (Grappler's limit: folding must not bloat a
 * graph), and ops that can expand their inputs without bound. */
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "pass.h"
#include "session.h"

#define MAX_FOLDED_BYTES ((size_t)10 << 20)
#define MAX_FOLD_INPUTS 64

/* The Const a data input ultimately reads (through constant Enters), or -1. */
static int const_source(const dfx_pass_ctx *c, dfx_input in) {
  const dfx_graph *g = c->g;
  for (int hops = 0; hops < g->n_nodes; hops++) {
    const dfx_node *n = &g->nodes[in.node];
    if (n->removed || dfx__pass_fed(c, n->name)) return -1;
    if (strcmp(n->op, "Const") == 0) return dfx__attr_tensor(n, "value") ? in.node : -1;
    if (n->ctrl != DFX_CTRL_ENTER || !dfx__attr_bool(n, "is_constant", false) || n->n_in != 1) return -1;
    in = n->in[0];
  }
  return -1;
}

/* Ops whose output can be far larger than their inputs: folding them could
 * allocate without bound before the size check. Shape inference will let
 * them fold when the output is known to be small. */
static bool expands(const char *op) {
  static const char *const ops[] = {"Fill", "Tile", "BroadcastTo", "Range", "OneHot", "MatrixDiag", "MatrixDiagV2",
                                    "MatrixDiagV3", "Pad", "PadV2", "MirrorPad", "ResizeBilinear",
                                    "ResizeNearestNeighbor", "ResizeBicubic", "ResizeArea", "Empty", NULL};
  for (int i = 0; ops[i]; i++)
    if (strcmp(op, ops[i]) == 0) return true;
  return false;
}

static bool foldable(const dfx_pass_ctx *c, const dfx_node *n, int *src) {
  if (n->removed || n->n_in == 0 || n->n_in > MAX_FOLD_INPUTS || n->n_out == 0 || expands(n->op)) return false;
  if (!dfx__pass_pure(c, n) || dfx__pass_fed(c, n->name)) return false;
  /* A kept node keeps its name: it becomes a Const in place, which only
   * a node of one output can. */
  if (dfx__pass_keeps(c, n->name) && n->n_out != 1) return false;
  /* A variant (a TensorList) or resource value is an object, not data a
   * Const can hold. */
  for (int k = 0; k < n->n_out; k++)
    if (n->out_types[k] == DFX_VARIANT || n->out_types[k] == DFX_RESOURCE) return false;
  size_t in_bytes = 0;
  for (int k = 0; k < n->n_in; k++) {
    if ((src[k] = const_source(c, n->in[k])) < 0) return false;
    in_bytes += dfx_tensor_nbytes(dfx__attr_tensor(&c->g->nodes[src[k]], "value"));
  }
  return in_bytes <= MAX_FOLDED_BYTES;
}

/* Runs node n once on its constant inputs, with its own kernel, on a
 * graph of its own: one Const per input feeding a copy of n. On success
 * out[0 .. n_out-1] are new tensors. Any failure (no kernel, a kernel
 * error) returns an error code and leaves n for the run to report. */
static dfx_code evaluate(const dfx_pass_ctx *c, const dfx_node *n, const int *src, dfx_tensor **out) {
  const dfx_graph *g = c->g;
  dfx_graph *sub = dfx__graph_new();
  dfx_session *s = NULL;
  dfx_code rc = sub ? DFX_OK : DFX_ENOMEM;
  int x = -1;
  char name[32];
  for (int k = 0; k < n->n_in && rc == DFX_OK; k++) {
    snprintf(name, sizeof name, "in%d", k);
    int id = dfx__graph_add_node(sub, name, "Const", NULL);
    const dfx_node *s_node = &g->nodes[src[k]];
    const dfx_attr *v = dfx__node_attr(s_node, "value"), *t = dfx__node_attr(s_node, "dtype");
    if (id < 0 || !v || !t || dfx__graph_set_attr(sub, id, v, NULL) != DFX_OK || dfx__graph_set_attr(sub, id, t, NULL) != DFX_OK)
      rc = DFX_ENOMEM;
  }
  if (rc == DFX_OK && (x = dfx__graph_add_node(sub, "x", n->op, NULL)) < 0) rc = DFX_ENOMEM;
  for (int k = 0; k < n->n_attrs && rc == DFX_OK; k++) rc = dfx__graph_set_attr(sub, x, &n->attrs[k], NULL);
  for (int k = 0; k < n->n_in && rc == DFX_OK; k++) rc = dfx__graph_add_input(sub, x, k, 0, NULL);
  if (rc == DFX_OK) rc = dfx__graph_finalize(sub, NULL);
  dfx_session_options so = {.n_threads = 1, .inline_only = 1};
  if (rc == DFX_OK) rc = dfx__session_new(sub, c->reg, NULL, &so, &s, NULL);
  if (rc == DFX_OK) {
    dfx_port fetch[16];
    int n_out = n->n_out < 16 ? n->n_out : 16;
    for (int k = 0; k < n_out; k++) fetch[k] = (dfx_port){"x", k};
    rc = n->n_out <= 16 ? dfx_session_run(s, NULL, NULL, NULL, 0, fetch, out, n_out, NULL, 0, NULL) : DFX_EUNIMPL;
  }
  dfx_session_free(s);
  dfx_graph_free(sub);
  return rc;
}

/* The control inputs a Const replacing node i needs (see top): i's own,
 * those of its constant sources, and the constant Enters it reads through.
 * A new array of *n ids (duplicates dropped), or NULL when out of memory. */
static int *fold_controls(const dfx_graph *g, int i, const int *src, int *n) {
  const dfx_node *x = &g->nodes[i];
  int cap = x->n_ctrl + x->n_in;
  for (int k = 0; k < x->n_in; k++) cap += g->nodes[src[k]].n_ctrl;
  int *ids = dfx__malloc(sizeof(int) * ((size_t)cap + 1));
  if (!ids) return NULL;
  *n = 0;
#define ADD(id_)                                                    \
  do {                                                              \
    int id__ = (id_), dup__ = 0;                                    \
    for (int q = 0; q < *n && !dup__; q++) dup__ = ids[q] == id__;  \
    if (!dup__) ids[(*n)++] = id__;                                 \
  } while (0)
  for (int k = x->n_in; k < x->n_in + x->n_ctrl; k++) ADD(x->in[k].node);
  for (int k = 0; k < x->n_in; k++) {
    int via = x->in[k].node; /* the Const itself, or the constant Enter x reads */
    if (via != src[k]) {
      ADD(via);
      continue;
    }
    const dfx_node *s = &g->nodes[src[k]];
    for (int j = s->n_in; j < s->n_in + s->n_ctrl; j++) ADD(s->in[j].node);
  }
#undef ADD
  return ids;
}

static dfx_code set_value(dfx_graph *g, int id, const dfx_tensor *t, dfx_status *st) {
  dfx_attr value = {.name = "value", .kind = DFX_ATTR_TENSOR, .v.tensor = (dfx_tensor *)t};
  dfx_attr dtype = {.name = "dtype", .kind = DFX_ATTR_TYPE, .v.type = (dfx_dtype)t->dtype};
  dfx_code rc = dfx__graph_set_attr(g, id, &value, st);
  return rc == DFX_OK ? dfx__graph_set_attr(g, id, &dtype, st) : rc;
}

/* Turns node i into a Const holding t, in place: it keeps its id, name and
 * device, so its consumers, a fetch of it and a trace still find it. */
static dfx_code become_const(dfx_pass_ctx *c, int i, const dfx_tensor *t, const int *ctrl, int n_ctrl) {
  dfx_graph *g = c->g;
  while (g->nodes[i].n_in + g->nodes[i].n_ctrl > 0) dfx__graph_remove_input(g, i, 0);
  while (g->nodes[i].n_attrs > 0) dfx__graph_remove_attr(g, i, g->nodes[i].attrs[0].name);
  dfx_code rc = dfx__graph_set_op(g, i, "Const", c->st);
  if (rc == DFX_OK) rc = set_value(g, i, t, c->st);
  for (int k = 0; k < n_ctrl && rc == DFX_OK; k++) rc = dfx__graph_add_input(g, i, ctrl[k], -1, c->st);
  return rc;
}

/* Replaces node i by one Const per output ("<name>/folded_<k>"); its
 * control consumers wait for the first. Never a kept node (see foldable). */
static dfx_code split_into_consts(dfx_pass_ctx *c, int i, dfx_tensor **outs, const int *ctrl, int n_ctrl) {
  dfx_graph *g = c->g;
  int n_out = g->nodes[i].n_out;
  for (int k = 0; k < n_out; k++) {
    char base[256];
    snprintf(base, sizeof base, "%.200s/folded_%d", g->nodes[i].name, k);
    char *name = dfx__graph_unique_name(g, base);
    int id = name ? dfx__graph_add_node(g, name, "Const", c->st) : -1;
    dfx__free(name);
    if (id < 0) return DFX_ENOMEM;
    dfx_code rc = set_value(g, id, outs[k], c->st);
    for (int q = 0; q < n_ctrl && rc == DFX_OK; q++) rc = dfx__graph_add_input(g, id, ctrl[q], -1, c->st);
    if (rc != DFX_OK) return rc;
    dfx__graph_replace_uses(g, i, k, id, 0);
    if (k == 0) dfx__graph_replace_uses(g, i, -1, id, -1);
    c->counts.added++;
  }
  dfx__graph_remove_node(g, i);
  c->counts.removed++;
  return DFX_OK;
}

static dfx_code replace(dfx_pass_ctx *c, int i, dfx_tensor **outs, const int *src) {
  int n_ctrl;
  int *ctrl = fold_controls(c->g, i, src, &n_ctrl);
  dfx_code rc = DFX_ENOMEM;
  if (ctrl && c->g->nodes[i].n_out == 1) {
    if ((rc = become_const(c, i, outs[0], ctrl, n_ctrl)) == DFX_OK) c->counts.rewritten++;
  } else if (ctrl) {
    rc = split_into_consts(c, i, outs, ctrl, n_ctrl);
  }
  dfx__free(ctrl);
  return rc == DFX_ENOMEM ? dfx__status_set(c->st, DFX_ENOMEM, "out of memory") : rc;
}

static dfx_code constfold_run(dfx_pass_ctx *c) {
  if (!c->reg) return DFX_OK;
  dfx_graph *g = c->g;
  int src[MAX_FOLD_INPUTS];
  int n_nodes = g->n_nodes; /* the Consts added below need no visit */
  for (int i = 0; i < n_nodes; i++) {
    if (!foldable(c, &g->nodes[i], src)) continue;
    dfx_tensor *outs[16] = {NULL};
    if (evaluate(c, &g->nodes[i], src, outs) != DFX_OK) continue;
    size_t bytes = 0;
    for (int k = 0; k < g->nodes[i].n_out; k++) bytes += dfx_tensor_nbytes(outs[k]);
    dfx_code rc = bytes <= MAX_FOLDED_BYTES ? replace(c, i, outs, src) : DFX_OK;
    for (int k = 0; k < 16; k++) dfx_tensor_free(outs[k]);
    if (rc != DFX_OK) return rc;
  }
  return DFX_OK;
}

const dfx_pass dfx__pass_constfold = {
    .name = "constfold",
    .purpose = "compute nodes whose inputs are all constants, with their kernels, into Consts",
    .run = constfold_run,
    .in_default = true,
};
