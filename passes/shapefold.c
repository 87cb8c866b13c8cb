/* shapefold.c - the `shapefold` pass: Shape, ShapeN, Size, Rank and
 * BroadcastGradientArgs whose results static shape inference (shapes.h)
 * knows completely become Consts (Grappler's MaterializeShapes). It runs
 * before constfold in the default pipeline, which then folds what reads
 * them (a StridedSlice of a shape, a Reshape target built by Pack).
 *
 * Inference gets no hints here: a folded value must hold for every run,
 * and only what the engine checks (placeholder shapes, Const values)
 * counts. Fed nodes are never folded, and a fed input is unknown unless it
 * is a placeholder (whose feeds the session checks against its shape).
 *
 * Frame, iteration, deadness and errors: each Const keeps the node's own
 * control inputs and takes every data input's producer as a control input,
 * as Grappler does. That puts it in the producer's frame and iteration,
 * makes it dead exactly when the input was dead (tf-semantics §2.3: a
 * control edge carries its source node's deadness) and still runs the
 * producer, so a run that failed there fails the same way. A Const
 * producer passes on its own control inputs instead (it is exactly as
 * live, and cannot fail), so it can still be pruned. Two producers need
 * more care. A Switch is live even when the port read is dead, so the
 * control input comes from an Identity on that port (a pivot, as tf.cond
 * makes), created when there is none. A plain Placeholder is always live
 * in the root frame, so it needs no control input; but a run that does
 * not feed it fails, so its readers fold only when the run's ports are
 * known and include it (a control edge from a fed placeholder would make
 * the run execute it; TF's executor rewires those, dfexec does not). */
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "pass.h"
#include "shapes.h"

static bool folds(const char *op) {
  return strcmp(op, "Shape") == 0 || strcmp(op, "ShapeN") == 0 || strcmp(op, "Size") == 0 ||
         strcmp(op, "Rank") == 0 || strcmp(op, "BroadcastGradientArgs") == 0;
}

static bool is_placeholder(const dfx_node *n) {
  return strcmp(n->op, "Placeholder") == 0 || strcmp(n->op, "PlaceholderV2") == 0;
}

/* Whether every output of node i has a fully known value. */
static bool all_known(const dfx_shapes *s, const dfx_node *n) {
  for (int k = 0; k < n->n_out; k++) {
    const dfx_tinfo *t = dfx__shapes_output(s, n->id, k);
    if (!t || t->n_val < 0 || (n->out_types[k] != DFX_I32 && n->out_types[k] != DFX_I64)) return false;
    for (int j = 0; j < t->n_val; j++)
      if (t->val[j] == DFX_VALUE_UNKNOWN) return false;
  }
  return true;
}

static bool foldable(const dfx_pass_ctx *c, const dfx_shapes *s, const dfx_node *n) {
  if (n->removed || !folds(n->op) || n->n_out == 0 || !dfx__pass_pure(c, n) || dfx__pass_fed(c, n->name)) return false;
  if (dfx__pass_keeps(c, n->name) && n->n_out != 1) return false; /* a kept node keeps its name: one output only */
  for (int k = 0; k < n->n_in; k++) {
    const dfx_node *p = &c->g->nodes[n->in[k].node];
    if (!dfx__pass_fed(c, p->name)) continue;
    if (!is_placeholder(p) || !c->ports_known || !dfx__pass_keeps(c, p->name)) return false;
  }
  return all_known(s, n);
}

/* ---- control inputs ---- */

typedef struct pivots {
  int n, cap;
  struct { int sw, port, id; } *v; /* pivots made by this run (edges are stale until finalising) */
} pivots;

/* An Identity reading (sw, port) and nothing else: an existing one, or a
 * new "<switch>/shape_pivot_<port>". -1 when out of memory. */
static int pivot(dfx_pass_ctx *c, pivots *pv, int sw, int port) {
  dfx_graph *g = c->g;
  for (int i = 0; i < pv->n; i++)
    if (pv->v[i].sw == sw && pv->v[i].port == port) return pv->v[i].id;
  const dfx_node *s = &g->nodes[sw];
  for (int e = 0; e < s->n_edges; e++) {
    const dfx_node *d = &g->nodes[s->edges[e].dst];
    if (!d->removed && strcmp(d->op, "Identity") == 0 && d->n_in == 1 && d->n_ctrl == 0 && d->in[0].node == sw &&
        d->in[0].slot == port && !dfx__pass_fed(c, d->name))
      return d->id;
  }
  if (pv->n == pv->cap) {
    int nc = pv->cap ? pv->cap * 2 : 8;
    void *nv = dfx__realloc(pv->v, sizeof *pv->v * (size_t)nc);
    if (!nv) return -1;
    pv->v = nv;
    pv->cap = nc;
  }
  char base[256];
  snprintf(base, sizeof base, "%.200s/shape_pivot_%d", s->name, port);
  dfx_dtype t = s->out_types[port];
  char *name = dfx__graph_unique_name(g, base);
  int id = name ? dfx__graph_add_node(g, name, "Identity", NULL) : -1;
  dfx__free(name);
  dfx_attr ta = {.name = "T", .kind = DFX_ATTR_TYPE, .v.type = t};
  if (id < 0 || dfx__graph_add_input(g, id, sw, port, NULL) != DFX_OK || dfx__graph_set_attr(g, id, &ta, NULL) != DFX_OK)
    return -1;
  c->counts.added++;
  pv->v[pv->n].sw = sw;
  pv->v[pv->n].port = port;
  pv->v[pv->n++].id = id;
  return id;
}

static int add_unique(int *ids, int n, int id) {
  for (int q = 0; q < n; q++)
    if (ids[q] == id) return n;
  ids[n] = id;
  return n + 1;
}

/* The control inputs a Const replacing node i needs (see top), into ids
 * (room for ctrl_room(i)); their count, or -1 when out of memory. */
static int fold_controls(dfx_pass_ctx *c, pivots *pv, int i, int *ids) {
  int n = 0, n_in = c->g->nodes[i].n_in, n_all = n_in + c->g->nodes[i].n_ctrl;
  for (int k = 0; k < n_all; k++) {
    dfx_input in = c->g->nodes[i].in[k]; /* re-read: making a pivot may move the node array */
    const dfx_node *p = &c->g->nodes[in.node];
    int id = in.node;
    if (k < n_in && is_placeholder(p)) continue;
    if (k < n_in && strcmp(p->op, "Const") == 0 && !dfx__pass_fed(c, p->name)) {
      /* A Const is only as live as its control inputs: take those over
       * instead, so an unneeded constant can still be pruned. */
      for (int j = p->n_in; j < p->n_in + p->n_ctrl; j++) n = add_unique(ids, n, p->in[j].node);
      continue;
    }
    if (k < n_in && p->ctrl == DFX_CTRL_SWITCH && (id = pivot(c, pv, in.node, in.slot)) < 0) return -1;
    n = add_unique(ids, n, id);
  }
  return n;
}

/* ---- the Consts ---- */

static dfx_tensor *value_tensor(const dfx_tinfo *t, dfx_dtype dt) {
  dfx_code code;
  dfx_tensor *v = dfx__tensor_alloc(dt, t->shape.rank, t->shape.dims, &code);
  for (int j = 0; v && j < t->n_val; j++) {
    if (dt == DFX_I32) ((int32_t *)v->data)[j] = (int32_t)t->val[j];
    else ((int64_t *)v->data)[j] = t->val[j];
  }
  return v;
}

static dfx_code set_value(dfx_graph *g, int id, const dfx_tensor *t) {
  dfx_attr value = {.name = "value", .kind = DFX_ATTR_TENSOR, .v.tensor = (dfx_tensor *)t};
  dfx_attr dtype = {.name = "dtype", .kind = DFX_ATTR_TYPE, .v.type = (dfx_dtype)t->dtype};
  dfx_code rc = dfx__graph_set_attr(g, id, &value, NULL);
  return rc == DFX_OK ? dfx__graph_set_attr(g, id, &dtype, NULL) : rc;
}

/* Node i (one output) becomes a Const in place: its id, name and device
 * stay, so consumers, a fetch of it and a trace still find it. */
static dfx_code become_const(dfx_pass_ctx *c, int i, const dfx_tensor *v, const int *ctrl, int n_ctrl) {
  dfx_graph *g = c->g;
  while (g->nodes[i].n_in + g->nodes[i].n_ctrl > 0) dfx__graph_remove_input(g, i, 0);
  while (g->nodes[i].n_attrs > 0) dfx__graph_remove_attr(g, i, g->nodes[i].attrs[0].name);
  dfx_code rc = dfx__graph_set_op(g, i, "Const", NULL);
  if (rc == DFX_OK) rc = set_value(g, i, v);
  for (int k = 0; k < n_ctrl && rc == DFX_OK; k++) rc = dfx__graph_add_input(g, i, ctrl[k], -1, NULL);
  if (rc == DFX_OK) c->counts.rewritten++;
  return rc;
}

/* Node i (several outputs, not kept) becomes one Const per output,
 * "<name>/shape_<k>"; its control consumers wait for the first. */
static dfx_code split_into_consts(dfx_pass_ctx *c, int i, dfx_tensor **vs, const int *ctrl, int n_ctrl) {
  dfx_graph *g = c->g;
  int n_out = g->nodes[i].n_out;
  for (int k = 0; k < n_out; k++) {
    char base[256];
    snprintf(base, sizeof base, "%.200s/shape_%d", g->nodes[i].name, k);
    char *name = dfx__graph_unique_name(g, base);
    int id = name ? dfx__graph_add_node(g, name, "Const", NULL) : -1;
    dfx__free(name);
    if (id < 0) return DFX_ENOMEM;
    dfx_code rc = set_value(g, id, vs[k]);
    for (int q = 0; q < n_ctrl && rc == DFX_OK; q++) rc = dfx__graph_add_input(g, id, ctrl[q], -1, NULL);
    if (rc != DFX_OK) return rc;
    dfx__graph_replace_uses(g, i, k, id, 0);
    if (k == 0) dfx__graph_replace_uses(g, i, -1, id, -1);
    c->counts.added++;
  }
  dfx__graph_remove_node(g, i);
  c->counts.removed++;
  return DFX_OK;
}

/* How many control inputs fold_controls may produce for node i. */
static int ctrl_room(const dfx_graph *g, int i) {
  const dfx_node *n = &g->nodes[i];
  int room = n->n_in + n->n_ctrl;
  for (int k = 0; k < n->n_in; k++) room += g->nodes[n->in[k].node].n_ctrl;
  return room;
}

static dfx_code fold(dfx_pass_ctx *c, const dfx_shapes *s, pivots *pv, int i) {
  int n_out = c->g->nodes[i].n_out, n_all = ctrl_room(c->g, i);
  dfx_tensor **vs = dfx__calloc((size_t)n_out, sizeof *vs);
  int *ctrl = dfx__malloc(sizeof(int) * ((size_t)n_all + 1));
  dfx_code rc = vs && ctrl ? DFX_OK : DFX_ENOMEM;
  for (int k = 0; k < n_out && rc == DFX_OK; k++)
    if (!(vs[k] = value_tensor(dfx__shapes_output(s, i, k), c->g->nodes[i].out_types[k]))) rc = DFX_ENOMEM;
  int n_ctrl = rc == DFX_OK ? fold_controls(c, pv, i, ctrl) : -1;
  if (rc == DFX_OK && n_ctrl < 0) rc = DFX_ENOMEM;
  if (rc == DFX_OK) rc = n_out == 1 ? become_const(c, i, vs[0], ctrl, n_ctrl) : split_into_consts(c, i, vs, ctrl, n_ctrl);
  for (int k = 0; vs && k < n_out; k++) dfx_tensor_free(vs[k]);
  dfx__free(vs);
  dfx__free(ctrl);
  return rc;
}

/* A control input from an input-less Const is a no-op: that Const runs
 * in the root frame's only iteration, is never dead and never fails, and
 * whatever reads it is in the root frame too. The control inputs this pass
 * hands to its Consts become such no-ops once constfold has folded their
 * producers, and would keep those alive; they go here, from Consts only. */
static void drop_constant_controls(dfx_pass_ctx *c) {
  dfx_graph *g = c->g;
  for (int i = 0; i < g->n_nodes; i++) {
    const dfx_node *n = &g->nodes[i];
    if (n->removed || n->n_ctrl == 0 || strcmp(n->op, "Const") != 0) continue;
    bool changed = false;
    for (int k = n->n_in + n->n_ctrl - 1; k >= n->n_in; k--) {
      const dfx_node *p = &g->nodes[n->in[k].node];
      if (strcmp(p->op, "Const") == 0 && p->n_in + p->n_ctrl == 0 && !dfx__pass_fed(c, p->name)) {
        dfx__graph_remove_input(g, i, k);
        changed = true;
      }
    }
    c->counts.rewritten += changed;
  }
}

static dfx_code shapefold_run(dfx_pass_ctx *c) {
  dfx_shapes_opts o = {.fed = (const char *const *)c->fed, .n_fed = c->n_fed};
  dfx_shapes *s = NULL;
  dfx_code rc = dfx__shapes_infer(c->g, &o, &s, c->st);
  pivots pv = {0};
  int n_nodes = c->g->n_nodes; /* the inference covers these; what this run adds needs no visit */
  for (int i = 0; i < n_nodes && rc == DFX_OK; i++)
    if (foldable(c, s, &c->g->nodes[i])) rc = fold(c, s, &pv, i);
  dfx__free(pv.v);
  dfx__shapes_free(s);
  if (rc == DFX_OK) drop_constant_controls(c);
  return rc == DFX_ENOMEM ? dfx__status_set(c->st, DFX_ENOMEM, "out of memory") : rc;
}

const dfx_pass dfx__pass_shapefold = {
    .name = "shapefold",
    .purpose = "replace Shape, ShapeN, Size, Rank and BroadcastGradientArgs of statically known shapes by Consts",
    .run = shapefold_run,
    .in_default = true,
};
