/* static_shape.c - constants and locally known shapes for the passes (see
 * static_shape.h). Deliberately small: it looks at one node and follows
 * only nodes whose output is their input (Identity-like ops, constant
 * Enters), never computes a shape from an op's semantics. Shape inference
 * (a later layer) replaces dfx__static_shape_of's body. */
#include "static_shape.h"

#include <string.h>

static bool fed(const dfx_pass_ctx *c, const dfx_node *n) { return dfx__pass_fed(c, n->name); }

const dfx_tensor *dfx__static_shape_const(const dfx_pass_ctx *c, dfx_input in) {
  const dfx_graph *g = c->g;
  for (int hops = 0; hops < g->n_nodes && in.slot >= 0; hops++) {
    const dfx_node *n = &g->nodes[in.node];
    if (n->removed || fed(c, n)) return NULL;
    if (strcmp(n->op, "Const") == 0) return in.slot == 0 ? dfx__attr_tensor(n, "value") : NULL;
    if (n->ctrl != DFX_CTRL_ENTER || !dfx__attr_bool(n, "is_constant", false) || n->n_in != 1) return NULL;
    in = n->in[0];
  }
  return NULL;
}

bool dfx__static_shape_full(const dfx_static_shape *s) {
  if (s->rank < 0) return false;
  for (int d = 0; d < s->rank; d++)
    if (s->dims[d] < 0) return false;
  return true;
}

/* Ops whose output 0 is their data input 0, shape and all. */
static bool passes_through(const dfx_node *n) {
  static const char *const ops[] = {"Identity", "StopGradient", "PreventGradient", "Snapshot", NULL};
  if (n->ctrl == DFX_CTRL_ENTER || n->ctrl == DFX_CTRL_SWITCH) return n->n_in >= 1 && strcmp(n->op, "_SwitchN") != 0;
  for (int i = 0; ops[i]; i++)
    if (strcmp(n->op, ops[i]) == 0) return n->n_in == 1;
  return false;
}

/* Whether a run feeds some node that is not a Placeholder: its value could
 * have any shape, so shapes TensorFlow recorded downstream of it are not
 * certain. */
static bool feeds_beyond_placeholders(const dfx_pass_ctx *c) {
  for (int i = 0; i < c->n_fed; i++) {
    int id = dfx__graph_find(c->g, c->fed[i], (size_t)-1);
    if (id >= 0 && strncmp(c->g->nodes[id].op, "Placeholder", 11) != 0) return true;
  }
  return false;
}

static bool from_shape(const dfx_shape *sh, dfx_static_shape *s) {
  if (!sh || sh->rank < 0 || sh->rank > DFX_MAX_DIMS) return false;
  s->rank = sh->rank;
  for (int d = 0; d < sh->rank; d++) s->dims[d] = sh->dims[d] < 0 ? -1 : sh->dims[d];
  return true;
}

bool dfx__static_shape_of(const dfx_pass_ctx *c, dfx_input in, dfx_static_shape *s) {
  s->rank = -1;
  const dfx_graph *g = c->g;
  for (int hops = 0; hops < g->n_nodes && in.slot >= 0; hops++) {
    const dfx_node *n = &g->nodes[in.node];
    if (n->removed) return false;
    const dfx_tensor *t = dfx__static_shape_const(c, in);
    if (t) {
      s->rank = t->ndims;
      memcpy(s->dims, t->dims, sizeof t->dims[0] * t->ndims);
      return true;
    }
    if (strcmp(n->op, "Placeholder") == 0 || strcmp(n->op, "PlaceholderV2") == 0)
      return from_shape(dfx__attr_shape(n, "shape"), s);
    if (fed(c, n)) return false;
    const dfx_attr_list *recorded = dfx__attr_list(n, "_output_shapes");
    if (recorded && recorded->kind == DFX_ATTR_SHAPE && in.slot < recorded->n && !feeds_beyond_placeholders(c))
      return from_shape(&recorded->v.shape[in.slot], s);
    if (!passes_through(n)) return false;
    in = n->in[0];
  }
  return false;
}
