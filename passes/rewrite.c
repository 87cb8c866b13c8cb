/* rewrite.c - see rewrite.h. */
#include "rewrite.h"

#include <stdio.h>
#include <string.h>

#include "alloc.h"

bool dfx__rewrite_same_place(const dfx_node *a, const dfx_node *b) {
  return a->frame == b->frame && strcmp(a->device, b->device) == 0;
}

int dfx__rewrite_sole_consumer(const dfx_pass_ctx *c, int id, int *dst_slot) {
  const dfx_node *n = &c->g->nodes[id];
  if (n->removed || n->n_edges != 1 || n->edges[0].src_slot != 0 || n->edges[0].dst_slot < 0) return -1;
  if (dfx__pass_keeps(c, n->name) || dfx__pass_fed(c, n->name)) return -1;
  if (c->g->nodes[n->edges[0].dst].removed) return -1;
  *dst_slot = n->edges[0].dst_slot;
  return n->edges[0].dst;
}

int dfx__rewrite_const_source(const dfx_pass_ctx *c, dfx_input in, int *via) {
  const dfx_graph *g = c->g;
  *via = in.node;
  for (int hops = 0; hops < g->n_nodes; hops++) {
    const dfx_node *n = &g->nodes[in.node];
    if (n->removed || dfx__pass_fed(c, n->name)) return -1;
    if (strcmp(n->op, "Const") == 0) return dfx__attr_tensor(n, "value") ? in.node : -1;
    if (n->ctrl != DFX_CTRL_ENTER || !dfx__attr_bool(n, "is_constant", false) || n->n_in != 1) return -1;
    in = n->in[0];
  }
  return -1;
}

dfx_code dfx__rewrite_ids_add(dfx_rewrite_ids *s, int id) {
  for (int i = 0; i < s->n; i++)
    if (s->ids[i] == id) return DFX_OK;
  if (s->n == s->cap) {
    int cap = s->cap ? s->cap * 2 : 8;
    int *ids = dfx__realloc(s->ids, sizeof *ids * (size_t)cap);
    if (!ids) return DFX_ENOMEM;
    s->ids = ids;
    s->cap = cap;
  }
  s->ids[s->n++] = id;
  return DFX_OK;
}

void dfx__rewrite_ids_free(dfx_rewrite_ids *s) {
  dfx__free(s->ids);
  memset(s, 0, sizeof *s);
}

dfx_code dfx__rewrite_ids_add_ctrl(dfx_rewrite_ids *s, const dfx_graph *g, int id) {
  const dfx_node *n = &g->nodes[id];
  dfx_code rc = DFX_OK;
  for (int k = n->n_in; k < n->n_in + n->n_ctrl && rc == DFX_OK; k++) rc = dfx__rewrite_ids_add(s, n->in[k].node);
  return rc;
}

dfx_code dfx__rewrite_ids_add_const_place(dfx_rewrite_ids *s, const dfx_graph *g, int src, int via) {
  return via != src ? dfx__rewrite_ids_add(s, via) : dfx__rewrite_ids_add_ctrl(s, g, src);
}

dfx_code dfx__rewrite_reset(dfx_graph *g, int id, const char *op, dfx_status *st) {
  while (g->nodes[id].n_in + g->nodes[id].n_ctrl > 0) dfx__graph_remove_input(g, id, 0);
  while (g->nodes[id].n_attrs > 0) dfx__graph_remove_attr(g, id, g->nodes[id].attrs[0].name);
  return dfx__graph_set_op(g, id, op, st);
}

int dfx__rewrite_add_const(dfx_graph *g, const char *base, dfx_tensor *t, const dfx_rewrite_ids *ctrl,
                           dfx_status *st) {
  char *name = dfx__graph_unique_name(g, base);
  int id = name ? dfx__graph_add_node(g, name, "Const", st) : -1;
  dfx__free(name);
  if (id < 0) return -1;
  dfx_attr value = {.name = "value", .kind = DFX_ATTR_TENSOR, .v.tensor = t};
  dfx_code rc = dfx__graph_set_attr(g, id, &value, st);
  if (rc == DFX_OK) rc = dfx__rewrite_set_type(g, id, "dtype", (dfx_dtype)t->dtype, st);
  for (int k = 0; ctrl && k < ctrl->n && rc == DFX_OK; k++) rc = dfx__graph_add_input(g, id, ctrl->ids[k], -1, st);
  return rc == DFX_OK ? id : -1;
}

dfx_code dfx__rewrite_set_type(dfx_graph *g, int id, const char *name, dfx_dtype t, dfx_status *st) {
  dfx_attr a = {.name = (char *)name, .kind = DFX_ATTR_TYPE, .v.type = t};
  return dfx__graph_set_attr(g, id, &a, st);
}

dfx_code dfx__rewrite_set_int(dfx_graph *g, int id, const char *name, int64_t v, dfx_status *st) {
  dfx_attr a = {.name = (char *)name, .kind = DFX_ATTR_I, .v.i = v};
  return dfx__graph_set_attr(g, id, &a, st);
}

dfx_code dfx__rewrite_set_str(dfx_graph *g, int id, const char *name, const char *s, dfx_status *st) {
  dfx_attr a = {.name = (char *)name, .kind = DFX_ATTR_S, .v.s = {(char *)s, strlen(s)}};
  return dfx__graph_set_attr(g, id, &a, st);
}

dfx_code dfx__rewrite_copy_attr(dfx_graph *g, int id, int from, const char *name, dfx_status *st) {
  const dfx_attr *a = dfx__node_attr(&g->nodes[from], name);
  if (!a) return DFX_OK;
  /* set_attr copies before it touches the node: a may live in g's array. */
  dfx_attr copy;
  if (dfx__attr_copy(&copy, a) != DFX_OK) return dfx__status_set(st, DFX_ENOMEM, "out of memory");
  dfx_code rc = dfx__graph_set_attr(g, id, &copy, st);
  dfx__attr_clear(&copy);
  return rc;
}
