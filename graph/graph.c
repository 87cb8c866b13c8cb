/* graph.c - read-only queries on an imported graph: names, attrs, public getters. */
#include "graph.h"

#include <string.h>

#include "alloc.h"

static uint32_t hash_name(const char *s, size_t len) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < len; i++) h = (h ^ (unsigned char)s[i]) * 16777619u;
  return h;
}

int dfx__graph_find(const dfx_graph *g, const char *name, size_t len) {
  if (!g || !name || !g->name_index) return -1;
  if (len == (size_t)-1) len = strlen(name);
  for (uint32_t i = hash_name(name, len) & (g->name_cap - 1);; i = (i + 1) & (g->name_cap - 1)) {
    int id = g->name_index[i];
    if (id < 0) return -1;
    const char *n = g->nodes[id].name;
    if (strncmp(n, name, len) == 0 && n[len] == 0) return id;
  }
}

/* Used by the importer: inserts node id under its name; returns the id already
 * there for a duplicate name, else -1. */
int dfx__graph_index_insert(dfx_graph *g, int id) {
  const char *name = g->nodes[id].name;
  size_t len = strlen(name);
  for (uint32_t i = hash_name(name, len) & (g->name_cap - 1);; i = (i + 1) & (g->name_cap - 1)) {
    int other = g->name_index[i];
    if (other < 0) {
      g->name_index[i] = id;
      return -1;
    }
    if (strcmp(g->nodes[other].name, name) == 0) return other;
  }
}

/* ---- public getters ---- */

static const dfx_node *node_at(const dfx_graph *g, int i) {
  return g && i >= 0 && i < g->n_nodes ? &g->nodes[i] : NULL;
}

int dfx_graph_node_count(const dfx_graph *g) { return g ? g->n_nodes : 0; }
int dfx_graph_node_find(const dfx_graph *g, const char *name) { return dfx__graph_find(g, name, (size_t)-1); }
const char *dfx_graph_node_name(const dfx_graph *g, int i) {
  const dfx_node *n = node_at(g, i);
  return n ? n->name : NULL;
}
const char *dfx_graph_node_op(const dfx_graph *g, int i) {
  const dfx_node *n = node_at(g, i);
  return n ? n->op : NULL;
}
const char *dfx_graph_node_frame(const dfx_graph *g, int i) {
  const dfx_node *n = node_at(g, i);
  return n ? g->frames[n->frame].name : NULL;
}
int dfx_graph_node_num_inputs(const dfx_graph *g, int i) {
  const dfx_node *n = node_at(g, i);
  return n ? n->n_in : -1;
}
int dfx_graph_node_num_outputs(const dfx_graph *g, int i) {
  const dfx_node *n = node_at(g, i);
  return n ? n->n_out : -1;
}
dfx_port dfx_graph_node_input(const dfx_graph *g, int i, int k) {
  const dfx_node *n = node_at(g, i);
  if (!n || k < 0 || k >= n->n_in) return (dfx_port){NULL, -1};
  return (dfx_port){g->nodes[n->in[k].node].name, n->in[k].slot};
}
dfx_dtype dfx_graph_node_output_dtype(const dfx_graph *g, int i, int k) {
  const dfx_node *n = node_at(g, i);
  return n && k >= 0 && k < n->n_out ? n->out_types[k] : DFX_INVALID;
}
int dfx_graph_node_num_control_inputs(const dfx_graph *g, int i) {
  const dfx_node *n = node_at(g, i);
  return n ? n->n_ctrl : -1;
}
int dfx_graph_node_control_input(const dfx_graph *g, int i, int k) {
  const dfx_node *n = node_at(g, i);
  return n && k >= 0 && k < n->n_ctrl ? n->in[n->n_in + k].node : -1;
}
