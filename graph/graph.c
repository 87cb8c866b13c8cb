/* graph.c - queries on a graph: lookup by name, "did you mean", public getters. */
#include "graph.h"

#include <stdio.h>
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

/* ---- "did you mean" for unknown names ---- */

#define SUGGEST_MAX_LEN 128

/* Edit distance (insert, delete, substitute) between a and b, both at most
 * SUGGEST_MAX_LEN bytes long; two rows on the stack. */
static int edit_distance(const char *a, size_t la, const char *b, size_t lb) {
  int row[2][SUGGEST_MAX_LEN + 1];
  for (size_t j = 0; j <= lb; j++) row[0][j] = (int)j;
  for (size_t i = 1; i <= la; i++) {
    int *prev = row[(i - 1) & 1], *cur = row[i & 1];
    cur[0] = (int)i;
    for (size_t j = 1; j <= lb; j++) {
      int best = prev[j - 1] + (a[i - 1] != b[j - 1]);
      if (prev[j] + 1 < best) best = prev[j] + 1;
      if (cur[j - 1] + 1 < best) best = cur[j - 1] + 1;
      cur[j] = best;
    }
  }
  return row[la & 1][lb];
}

/* Writes " (did you mean 'x'?)" into buf for the node name closest to
 * `name`, or "" when none is within a third of the name's length (at least
 * 2 edits). Only runs on the error path, so a linear scan is fine. */
const char *dfx__graph_suggest(const dfx_graph *g, const char *name, char *buf, size_t n) {
  size_t len = strlen(name);
  buf[0] = 0;
  if (len > SUGGEST_MAX_LEN) return buf;
  int best = -1, best_d = (int)(len / 3 > 2 ? len / 3 : 2) + 1;
  for (int i = 0; i < g->n_nodes; i++) {
    size_t l = strlen(g->nodes[i].name);
    if (l > SUGGEST_MAX_LEN || (l > len ? l - len : len - l) >= (size_t)best_d) continue;
    int d = edit_distance(name, len, g->nodes[i].name, l);
    if (d < best_d) best_d = d, best = i;
  }
  if (best >= 0) snprintf(buf, n, " (did you mean '%s'?)", g->nodes[best].name);
  return buf;
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
