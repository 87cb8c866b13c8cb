/* arith.c - the `arith` pass: arithmetic and shape simplification in the
 * manner of Grappler's ArithmeticOptimizer and the "simplify" half of its
 * constant folding: a node whose output is provably one of the tensors it
 * reads (x*1, x+0, Neg(Neg(x)), Cast to the same type, Transpose by the
 * identity permutation, a Reshape to x's own shape, ...) is replaced by
 * that tensor. The rules live in arith_math.c (elementwise) and
 * arith_shape.c (layout); this file runs them and owns the two rewrite
 * primitives every rule goes through, which keep deadness, frames and
 * kept names exact (arith.h).
 *
 * "Provably" is strict: a rule applies only when the result is the input
 * bit for bit for every value and every feed, including broadcasting (x*1
 * with a larger 1 changes the shape), integer wrap-around, NaN and
 * infinities, and when the node could not have failed (a Transpose whose
 * permutation does not fit x's rank reports an error the rewrite would
 * hide). Shapes come from dfx__static_shape_of (static_shape.h): no shape
 * inference exists yet, so rules that need a shape apply only where one is
 * locally certain. The one deliberate inexactness is TensorFlow's own:
 * x + 0 and 0 + x become x for floating x although -0.0 + 0.0 is +0.0
 * (Grappler's constant folding does the same, so TensorFlow itself returns
 * -0.0 there); see arith_math.c.
 *
 * In the default pipeline: every rewrite is exact (as above), never adds
 * a node, and turns what it cannot remove into an Identity that the
 * identity pass removes in the next round. */
#include "arith.h"

#include <string.h>

#include "alloc.h"
#include "invariant.h"

/* ---- constants and shapes for the rules ---- */

const dfx_tensor *dfx__arith_const(const dfx_arith *a, int i, int k) {
  const dfx_node *n = &a->c->g->nodes[i];
  return k < n->n_in ? dfx__static_shape_const(a->c, n->in[k]) : NULL;
}

bool dfx__arith_shape(const dfx_arith *a, int i, int k, dfx_static_shape *s) {
  const dfx_node *n = &a->c->g->nodes[i];
  if (k >= n->n_in) {
    s->rank = -1;
    return false;
  }
  return dfx__static_shape_of(a->c, n->in[k], s);
}

int dfx__arith_ints(const dfx_tensor *t, bool scalar_ok, int64_t *v) {
  if (!t || (t->dtype != DFX_I32 && t->dtype != DFX_I64)) return -1;
  if (t->ndims > 1 || (t->ndims == 0 && !scalar_ok) || t->count > DFX_MAX_DIMS * 2) return -1;
  for (int64_t e = 0; e < t->count; e++) v[e] = dfx__tensor_get_i64(t, e);
  return (int)t->count;
}

bool dfx__arith_transparent(const dfx_arith *a, int id) {
  const dfx_node *n = &a->c->g->nodes[id];
  return !n->removed && !dfx__pass_fed(a->c, n->name);
}

/* ---- deadness carriers ---- */

/* Whether a data input can never be dead: a Const with no inputs nobody
 * feeds, read directly or through constant Enters with no control inputs.
 * Dropping such an input changes no deadness, frame or iteration (the node
 * keeps its other data input, which fixes those). */
static bool always_live(const dfx_arith *a, dfx_input in) {
  const dfx_graph *g = a->c->g;
  for (int hops = 0; hops < g->n_nodes; hops++) {
    const dfx_node *n = &g->nodes[in.node];
    if (n->removed || dfx__pass_fed(a->c, n->name)) return false;
    if (strcmp(n->op, "Const") == 0) return n->n_in + n->n_ctrl == 0;
    if (n->ctrl != DFX_CTRL_ENTER || !dfx__attr_bool(n, "is_constant", false) || n->n_in != 1 || n->n_ctrl != 0)
      return false;
    in = n->in[0];
  }
  return false;
}

typedef struct carriers {
  int n, cap;
  int *ids;
} carriers;

/* Adds the inputs of node m other than data input `skip` to cs: control
 * inputs as they are, data inputs as control inputs on their producer
 * (which carries the same deadness: every output of a non-Switch node is
 * dead exactly when the node is), constants that are always live not at
 * all. False when one reads a Switch-like producer (per-output deadness). */
static bool add_carriers(const dfx_arith *a, int m, int skip, carriers *cs) {
  const dfx_node *n = &a->c->g->nodes[m];
  for (int k = 0; k < n->n_in + n->n_ctrl; k++) {
    if (k == skip) continue;
    dfx_input in = n->in[k];
    if (k < n->n_in) {
      if (always_live(a, in)) continue;
      if (a->c->g->nodes[in.node].ctrl == DFX_CTRL_SWITCH) return false;
    }
    bool dup = false;
    for (int q = 0; q < cs->n && !dup; q++) dup = cs->ids[q] == in.node;
    if (!dup) cs->ids[cs->n++] = in.node;
  }
  return true;
}

/* Turns node i into Identity(target, ^carriers...) in place. */
static dfx_code become_identity(dfx_arith *a, int i, dfx_input target, dfx_dtype t, const carriers *cs) {
  dfx_graph *g = a->c->g;
  dfx_status *st = a->c->st;
  while (g->nodes[i].n_in + g->nodes[i].n_ctrl > 0) dfx__graph_remove_input(g, i, 0);
  while (g->nodes[i].n_attrs > 0) dfx__graph_remove_attr(g, i, g->nodes[i].attrs[0].name);
  dfx_attr ta = {.name = "T", .kind = DFX_ATTR_TYPE, .v.type = t};
  dfx_code rc = dfx__graph_set_op(g, i, "Identity", st);
  if (rc == DFX_OK) rc = dfx__graph_set_attr(g, i, &ta, st);
  if (rc == DFX_OK) rc = dfx__graph_add_input(g, i, target.node, target.slot, st);
  for (int q = 0; q < cs->n && rc == DFX_OK; q++) {
    rc = dfx__graph_add_input(g, i, cs->ids[q], -1, st);
    a->ctrl_used[cs->ids[q]] = true;
  }
  return rc;
}

static dfx_dtype port_type(const dfx_graph *g, dfx_input p) {
  const dfx_node *n = &g->nodes[p.node];
  return p.slot >= 0 && p.slot < n->n_out ? n->out_types[p.slot] : DFX_INVALID;
}

/* ---- the primitives (arith.h) ---- */

int dfx__arith_forward(dfx_arith *a, int i, const int *path, int n_path) {
  dfx_graph *g = a->c->g;
  const dfx_node *n = &g->nodes[i];
  if (n->n_out < 1 || n_path < 1) return 0;
  int total = 0, cur = i;
  dfx_input target = {-1, -1};
  for (int j = 0; j < n_path; j++) {
    const dfx_node *m = &g->nodes[cur];
    if (path[j] >= m->n_in || (j > 0 && !dfx__arith_transparent(a, cur))) return 0;
    total += m->n_in + m->n_ctrl;
    target = m->in[path[j]];
    cur = target.node;
  }
  if (port_type(g, target) != n->out_types[0] || target.node == i) return 0;
  int ids[64];
  carriers cs = {0, total, total <= 64 ? ids : dfx__malloc(sizeof(int) * (size_t)total)};
  if (!cs.ids) return dfx__status_set(a->c->st, DFX_ENOMEM, "out of memory");
  bool ok = true;
  cur = i;
  for (int j = 0; j < n_path && ok; j++) {
    ok = add_carriers(a, cur, path[j], &cs);
    cur = g->nodes[cur].in[path[j]].node;
  }
  int rc = 0;
  if (!ok) goto done;
  if (cs.n > 0 || a->ctrl_used[i] || dfx__pass_keeps(a->c, n->name)) {
    if ((rc = become_identity(a, i, target, n->out_types[0], &cs)) == DFX_OK) {
      a->c->counts.rewritten++;
      rc = 1;
    }
  } else {
    dfx__graph_replace_uses(g, i, 0, target.node, target.slot);
    dfx__graph_remove_node(g, i);
    a->c->counts.removed++;
    rc = 1;
  }
done:
  if (cs.ids != ids) dfx__free(cs.ids);
  return rc;
}

int dfx__arith_bypass(dfx_arith *a, int i, int k, int mk) {
  dfx_graph *g = a->c->g;
  const dfx_node *n = &g->nodes[i];
  dfx_input via = n->in[k];
  const dfx_node *m = &g->nodes[via.node];
  if (!dfx__arith_transparent(a, via.node) || mk >= m->n_in) return 0;
  dfx_input target = m->in[mk];
  if (port_type(g, target) != port_type(g, via) || target.node == i) return 0;
  int ids[64];
  int total = m->n_in + m->n_ctrl;
  carriers cs = {0, total, total <= 64 ? ids : dfx__malloc(sizeof(int) * (size_t)total)};
  if (!cs.ids) return dfx__status_set(a->c->st, DFX_ENOMEM, "out of memory");
  int rc = 0;
  if (add_carriers(a, via.node, mk, &cs)) {
    dfx__graph_set_input(g, i, k, target.node, target.slot);
    rc = DFX_OK;
    for (int q = 0; q < cs.n && rc == DFX_OK; q++) {
      bool dup = false;
      for (int e = n->n_in; e < n->n_in + n->n_ctrl && !dup; e++) dup = n->in[e].node == cs.ids[q];
      if (dup) continue;
      rc = dfx__graph_add_input(g, i, cs.ids[q], -1, a->c->st);
      n = &g->nodes[i];
      a->ctrl_used[cs.ids[q]] = true;
    }
    if (rc == DFX_OK) {
      a->c->counts.rewritten++;
      rc = 1;
    }
  }
  if (cs.ids != ids) dfx__free(cs.ids);
  return rc;
}

/* ---- the pass ---- */

static dfx_arith_rule_fn find_rule(const char *op) {
  const dfx_arith_rule *tables[] = {dfx__arith_math_rules, dfx__arith_shape_rules};
  for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++)
    for (const dfx_arith_rule *r = tables[t]; r->op; r++)
      if (strcmp(r->op, op) == 0) return r->fn;
  return NULL;
}

static dfx_code arith_run(dfx_pass_ctx *c) {
  dfx_graph *g = c->g;
  dfx_arith a = {.c = c, .ctrl_used = dfx__calloc((size_t)g->n_nodes + 1, sizeof(bool))};
  if (!a.ctrl_used) return dfx__status_set(c->st, DFX_ENOMEM, "out of memory");
  for (int i = 0; i < g->n_nodes; i++)
    for (int e = 0; e < g->nodes[i].n_edges; e++)
      if (g->nodes[i].edges[e].dst_slot < 0) a.ctrl_used[i] = true;
  dfx_code rc = DFX_OK;
  /* Producers come first in graph order, so a chain (Neg(Neg(Neg(Neg x))))
   * collapses in one visit; the manager's next round catches the rest. */
  for (int i = 0; i < g->n_nodes && rc == DFX_OK; i++) {
    const dfx_node *n = &g->nodes[i];
    if (n->removed || n->n_out < 1 || dfx__pass_fed(c, n->name) || !dfx__pass_pure(c, n)) continue;
    dfx_arith_rule_fn fn = find_rule(n->op);
    int r = fn ? fn(&a, i) : 0;
    if (r < 0) rc = (dfx_code)r;
  }
  dfx__free(a.ctrl_used);
  return rc;
}

const dfx_pass dfx__pass_arith = {
    .name = "arith",
    .purpose = "replace nodes that provably return one of their inputs (x*1, x+0, Neg(Neg x), same-type Cast, ...)",
    .run = arith_run,
    .in_default = true,
};
