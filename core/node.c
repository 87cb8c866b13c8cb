/* node.c - attr lookups on a node record and the control-flow class of an op. */
#include "node.h"

#include <string.h>

dfx_ctrl_op dfx__ctrl_class(const char *op) {
  /* TF's node-class table (its graph/graph.cc, tf-semantics §2.1): a Ref form
   * shares its base op's class, and _SwitchN is a Switch. RefSelect is no
   * Ref form of a control op, so it is never stripped. */
  if (strncmp(op, "Ref", 3) == 0 && strcmp(op, "RefSelect") != 0) op += 3;
  if (strcmp(op, "_SwitchN") == 0) return DFX_CTRL_SWITCH;
#define XX(name, str) \
  if (str[0] && strcmp(op, str) == 0) return DFX_CTRL_##name;
  DFX_CTRL_OP_MAP(XX)
#undef XX
  return DFX_CTRL_NONE;
}

/* A linear scan: nodes carry a handful of attrs. A kernel that reads one on
 * every call pays it each time; a hot one reads it in init instead. */
const dfx_attr *dfx__node_attr(const dfx_node *n, const char *name) {
  for (int i = 0; i < n->n_attrs; i++)
    if (strcmp(n->attrs[i].name, name) == 0) return &n->attrs[i];
  return NULL;
}

int64_t dfx__attr_int(const dfx_node *n, const char *name, int64_t def) {
  const dfx_attr *a = dfx__node_attr(n, name);
  return a && a->kind == DFX_ATTR_I ? a->v.i : def;
}

float dfx__attr_float(const dfx_node *n, const char *name, float def) {
  const dfx_attr *a = dfx__node_attr(n, name);
  return a && a->kind == DFX_ATTR_F ? a->v.f : def;
}

bool dfx__attr_bool(const dfx_node *n, const char *name, bool def) {
  const dfx_attr *a = dfx__node_attr(n, name);
  return a && a->kind == DFX_ATTR_B ? a->v.b : def;
}

dfx_dtype dfx__attr_type(const dfx_node *n, const char *name, dfx_dtype def) {
  const dfx_attr *a = dfx__node_attr(n, name);
  return a && a->kind == DFX_ATTR_TYPE ? a->v.type : def;
}

const char *dfx__attr_str(const dfx_node *n, const char *name, const char *def) {
  const dfx_attr *a = dfx__node_attr(n, name);
  if (!a || a->kind != DFX_ATTR_S) return def;
  /* An empty bytes value may have no buffer at all; callers expect a string. */
  return a->v.s.ptr ? a->v.s.ptr : "";
}

const dfx_shape *dfx__attr_shape(const dfx_node *n, const char *name) {
  const dfx_attr *a = dfx__node_attr(n, name);
  return a && a->kind == DFX_ATTR_SHAPE ? &a->v.shape : NULL;
}

const dfx_tensor *dfx__attr_tensor(const dfx_node *n, const char *name) {
  const dfx_attr *a = dfx__node_attr(n, name);
  return a && a->kind == DFX_ATTR_TENSOR ? a->v.tensor : NULL;
}

const dfx_attr_list *dfx__attr_list(const dfx_node *n, const char *name) {
  const dfx_attr *a = dfx__node_attr(n, name);
  return a && a->kind == DFX_ATTR_LIST ? &a->v.list : NULL;
}

const dfx_node *dfx__node_producer(const dfx_node *n, int i) {
  if (!n->in || i < 0 || i >= n->n_in || n->in[i].node < 0) return NULL;
  return &(n - n->id)[n->in[i].node];
}
