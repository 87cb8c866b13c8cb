/* constfold.c - the `constfold` pass: a pure node whose data inputs are
 * all constants is computed now, with its own kernel, and replaced by
 * Consts holding its outputs (TF's Grappler constant folding).
 *
 * Constants are Const nodes nobody feeds, and loop invariants: a constant
 * Enter of a constant (tf-semantics §2.5), which delivers the same value to
 * every iteration. The replacement keeps the frame, the iterations and the
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
  /* A kept node keeps its name: possible for one output only. */
  if (dfx__pass_keeps(c, n->name) && n->n_out != 1) return false;
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

/* Adds Const `name` holding t, with node nid's control inputs and those of
 * its sources (see top). Returns its id or -1. Nodes are read through their
 * ids, since adding a node may move the node array. */
static int add_const(dfx_pass_ctx *c, const char *name, const dfx_tensor *t, int nid, const int *src) {
  dfx_graph *g = c->g;
  int id = dfx__graph_add_node(g, name, "Const", c->st);
  if (id < 0) return -1;
  dfx_attr value = {.name = "value", .kind = DFX_ATTR_TENSOR, .v.tensor = (dfx_tensor *)t};
  dfx_attr dtype = {.name = "dtype", .kind = DFX_ATTR_TYPE, .v.type = (dfx_dtype)t->dtype};
  if (dfx__graph_set_attr(g, id, &value, c->st) != DFX_OK || dfx__graph_set_attr(g, id, &dtype, c->st) != DFX_OK)
    return -1;
  for (int k = g->nodes[nid].n_in; k < g->nodes[nid].n_in + g->nodes[nid].n_ctrl; k++)
    if (dfx__graph_add_input(g, id, g->nodes[nid].in[k].node, -1, c->st) != DFX_OK) return -1;
  for (int k = 0; k < g->nodes[nid].n_in; k++) {
    int via = g->nodes[nid].in[k].node; /* the Const itself, or the constant Enter n reads */
    if (via != src[k]) {
      if (dfx__graph_add_input(g, id, via, -1, c->st) != DFX_OK) return -1;
      continue;
    }
    const dfx_node *s = &g->nodes[src[k]];
    for (int j = s->n_in; j < s->n_in + s->n_ctrl; j++)
      if (dfx__graph_add_input(g, id, s->in[j].node, -1, c->st) != DFX_OK) return -1;
  }
  return id;
}

/* Replaces node i by Consts holding outs[]; a kept node's Const takes its
 * name (the node itself is renamed out of the way first). */
static dfx_code replace(dfx_pass_ctx *c, int i, dfx_tensor **outs, const int *src) {
  dfx_graph *g = c->g;
  char *keep_name = NULL;
  dfx_code rc = DFX_OK;
  if (dfx__pass_keeps(c, g->nodes[i].name)) {
    char *tmp = dfx__graph_unique_name(g, "folded/old");
    keep_name = dfx__strdup(g->nodes[i].name);
    if (!tmp || !keep_name || dfx__graph_rename(g, i, tmp, c->st) != DFX_OK) rc = DFX_ENOMEM;
    dfx__free(tmp);
  }
  int n_out = g->nodes[i].n_out;
  for (int k = 0; k < n_out && rc == DFX_OK; k++) {
    char base[256];
    snprintf(base, sizeof base, "%.200s/folded_%d", g->nodes[i].name, k);
    char *name = keep_name ? keep_name : dfx__graph_unique_name(g, base);
    int id = name ? add_const(c, name, outs[k], i, src) : -1;
    if (name != keep_name) dfx__free(name);
    if (id < 0) {
      rc = c->st && c->st->code != DFX_OK ? c->st->code : DFX_ENOMEM;
      break;
    }
    dfx__graph_replace_uses(g, i, k, id, 0);
    if (k == 0) dfx__graph_replace_uses(g, i, -1, id, -1);
    c->counts.added++;
  }
  dfx__free(keep_name);
  if (rc == DFX_OK) {
    dfx__graph_remove_node(g, i);
    c->counts.removed++;
  }
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
