/* edit.c - editing a graph in place: the primitives that import options,
 * optimisation passes, gradients and the builder are written with.
 *
 * An edit leaves the derived data (input and output dtypes, consumer
 * edges, frames) stale until dfx__graph_finalize recomputes it and checks
 * the graph as import does; `final` says which state a graph is in. Node ids
 * stay stable until then: a removed node is only marked, and finalising
 * compacts the array. Adding nodes may move the array, so code keeps ids,
 * not pointers, across dfx__graph_add_node. Nothing here may run while a
 * session uses the graph (dfx_graph.n_sessions): sessions plan from the
 * finalised form. */
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "graph.h"
#include "invariant.h"

dfx_graph *dfx__graph_new(void) {
  dfx_graph *g = dfx__calloc(1, sizeof *g);
  if (!g) return NULL;
  g->final = false;
  return g;
}

static dfx_code oom(dfx_status *st) { return dfx__status_set(st, DFX_ENOMEM, "out of memory editing the graph"); }

static void mark_edited(dfx_graph *g) {
  DFX_ASSERT(__atomic_load_n(&g->n_sessions, __ATOMIC_RELAXED) == 0);
  g->final = false;
}

int dfx__graph_add_node(dfx_graph *g, const char *name, const char *op, dfx_status *st) {
  if (!dfx__node_name_valid(name)) {
    dfx__status_set(st, DFX_EINVAL, "Node '%s': node name is not valid (must match [A-Za-z0-9._][A-Za-z0-9_./>-]*)",
                    name);
    return -1;
  }
  if (!op || !*op) {
    dfx__status_set(st, DFX_EINVAL, "Node '%s': has no op", name);
    return -1;
  }
  if (dfx__graph_find(g, name, (size_t)-1) >= 0) {
    dfx__status_set(st, DFX_EINVAL, "Node '%s': duplicate node name", name);
    return -1;
  }
  if (g->n_nodes == g->cap_nodes) {
    int cap = g->cap_nodes ? g->cap_nodes * 2 : 16;
    dfx_node *nn = dfx__realloc(g->nodes, sizeof *nn * (size_t)cap);
    if (!nn) {
      oom(st);
      return -1;
    }
    g->nodes = nn;
    g->cap_nodes = cap;
  }
  dfx_node *n = &g->nodes[g->n_nodes];
  memset(n, 0, sizeof *n);
  n->id = g->n_nodes;
  n->frame = n->child_frame = -1;
  n->ctrl = dfx__ctrl_class(op);
  if (!(n->name = dfx__strdup(name)) || !(n->op = dfx__strdup(op)) || !(n->device = dfx__strdup(""))) {
    dfx__node_clear(n);
    oom(st);
    return -1;
  }
  g->n_nodes++;
  if (dfx__graph_index_insert(g, n->id) != -1) { /* cannot be a duplicate: checked above; so out of memory */
    g->n_nodes--;
    dfx__node_clear(&g->nodes[g->n_nodes]);
    oom(st);
    return -1;
  }
  mark_edited(g);
  return g->n_nodes - 1;
}

dfx_code dfx__graph_add_input(dfx_graph *g, int id, int src, int slot, dfx_status *st) {
  DFX_ASSERT(id >= 0 && id < g->n_nodes && src >= 0 && src < g->n_nodes);
  dfx_node *n = &g->nodes[id];
  dfx_input *in = dfx__realloc(n->in, sizeof *in * (size_t)(n->n_in + n->n_ctrl + 1));
  if (!in) return oom(st);
  n->in = in;
  if (slot < 0) {
    in[n->n_in + n->n_ctrl] = (dfx_input){src, -1};
    n->n_ctrl++;
  } else { /* data inputs stay ahead of control inputs */
    memmove(&in[n->n_in + 1], &in[n->n_in], sizeof *in * (size_t)n->n_ctrl);
    in[n->n_in] = (dfx_input){src, slot};
    n->n_in++;
  }
  mark_edited(g);
  return DFX_OK;
}

void dfx__graph_set_input(dfx_graph *g, int id, int k, int src, int slot) {
  dfx_node *n = &g->nodes[id];
  DFX_ASSERT(k >= 0 && k < n->n_in + n->n_ctrl && (slot < 0) == (k >= n->n_in));
  n->in[k] = (dfx_input){src, slot};
  mark_edited(g);
}

void dfx__graph_remove_input(dfx_graph *g, int id, int k) {
  dfx_node *n = &g->nodes[id];
  DFX_ASSERT(k >= 0 && k < n->n_in + n->n_ctrl);
  if (k < n->n_in) n->n_in--;
  else n->n_ctrl--;
  memmove(&n->in[k], &n->in[k + 1], sizeof *n->in * (size_t)(n->n_in + n->n_ctrl - k));
  mark_edited(g);
}

int dfx__graph_replace_uses(dfx_graph *g, int src, int slot, int to, int to_slot) {
  int count = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    dfx_node *n = &g->nodes[i];
    if (n->removed || i == to) continue; /* the replacement may read what it replaces */
    for (int k = 0; k < n->n_in + n->n_ctrl; k++)
      if (n->in[k].node == src && n->in[k].slot == slot) {
        n->in[k] = (dfx_input){to, to_slot};
        count++;
      }
  }
  if (count) mark_edited(g);
  return count;
}

dfx_code dfx__graph_set_attr(dfx_graph *g, int id, const dfx_attr *a, dfx_status *st) {
  dfx_node *n = &g->nodes[id];
  dfx_attr copy;
  if (dfx__attr_copy(&copy, a) != DFX_OK) return oom(st);
  for (int k = 0; k < n->n_attrs; k++)
    if (strcmp(n->attrs[k].name, a->name) == 0) {
      dfx__attr_clear(&n->attrs[k]);
      n->attrs[k] = copy;
      mark_edited(g);
      return DFX_OK;
    }
  dfx_attr *na = dfx__realloc(n->attrs, sizeof *na * (size_t)(n->n_attrs + 1));
  if (!na) {
    dfx__attr_clear(&copy);
    return oom(st);
  }
  n->attrs = na;
  na[n->n_attrs++] = copy;
  mark_edited(g);
  return DFX_OK;
}

void dfx__graph_remove_attr(dfx_graph *g, int id, const char *name) {
  dfx_node *n = &g->nodes[id];
  for (int k = 0; k < n->n_attrs; k++)
    if (strcmp(n->attrs[k].name, name) == 0) {
      dfx__attr_clear(&n->attrs[k]);
      n->attrs[k] = n->attrs[--n->n_attrs];
      mark_edited(g);
      return;
    }
}

void dfx__graph_remove_node(dfx_graph *g, int id) {
  DFX_ASSERT(id >= 0 && id < g->n_nodes);
  g->nodes[id].removed = true;
  mark_edited(g);
}

dfx_code dfx__graph_rename(dfx_graph *g, int id, const char *name, dfx_status *st) {
  if (!dfx__node_name_valid(name))
    return dfx__status_set(st, DFX_EINVAL, "Node '%s': node name is not valid (must match [A-Za-z0-9._][A-Za-z0-9_./>-]*)",
                           name);
  int other = dfx__graph_find(g, name, (size_t)-1);
  if (other >= 0 && other != id) return dfx__status_set(st, DFX_EINVAL, "Node '%s': duplicate node name", name);
  char *s = dfx__strdup(name);
  if (!s) return oom(st);
  dfx__free(g->nodes[id].name);
  g->nodes[id].name = s;
  mark_edited(g);
  return dfx__graph_index_rebuild(g, st);
}

dfx_code dfx__graph_set_op(dfx_graph *g, int id, const char *op, dfx_status *st) {
  char *o = dfx__strdup(op);
  if (!o) return oom(st);
  dfx_node *n = &g->nodes[id];
  dfx__free(n->op);
  n->op = o;
  n->ctrl = dfx__ctrl_class(op);
  mark_edited(g);
  return DFX_OK;
}

dfx_code dfx__graph_set_device(dfx_graph *g, int id, const char *device, dfx_status *st) {
  char *d = dfx__strdup(device ? device : "");
  if (!d) return oom(st);
  dfx__free(g->nodes[id].device);
  g->nodes[id].device = d;
  mark_edited(g);
  return DFX_OK;
}

char *dfx__graph_unique_name(const dfx_graph *g, const char *base) {
  size_t n = strlen(base) + 24;
  char *s = dfx__malloc(n);
  if (!s) return NULL;
  snprintf(s, n, "%s", base);
  for (int k = 1; dfx__graph_find(g, s, (size_t)-1) >= 0; k++) snprintf(s, n, "%s_%d", base, k);
  return s;
}
