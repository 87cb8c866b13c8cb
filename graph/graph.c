/* graph.c - a graph's lifecycle, its name index, lookups by name, "did
 * you mean", and the public getters. Editing is edit.c's, bringing derived
 * data up to date finalize.c's. */
#include "graph.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "function.pb-c.h"
#include "pballoc.h"

/* 32-bit FNV-1a over the name's bytes. */
static uint32_t hash_name(const char *s, size_t len) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < len; i++) h = (h ^ (unsigned char)s[i]) * 16777619u;
  return h;
}

/* ---- lifecycle ---- */

void dfx__node_clear(dfx_node *n) {
  dfx__free(n->name);
  dfx__free(n->op);
  dfx__free(n->device);
  dfx__free(n->in);
  for (int i = 0; i < n->n_attrs; i++) dfx__attr_clear(&n->attrs[i]);
  dfx__free(n->attrs);
  dfx__free(n->in_types);
  dfx__free(n->out_types);
  dfx__free(n->edges);
  memset(n, 0, sizeof *n);
}

void dfx__graph_clear_frames(dfx_graph *g) {
  for (int i = 0; i < g->n_frames; i++) dfx__free(g->frames[i].name);
  dfx__free(g->frames);
  g->frames = NULL;
  g->n_frames = 0;
}

void dfx_graph_free(dfx_graph *g) {
  if (!g) return;
  for (int i = 0; i < g->n_nodes; i++) dfx__node_clear(&g->nodes[i]);
  dfx__free(g->nodes);
  dfx__graph_clear_frames(g);
  dfx__free(g->name_index);
  dfx__free(g->meta.bad_consumers);
  /* The library was unpacked with this allocator (a wire-format copy). */
  if (g->meta.library) tensorflow__function_def_library__free_unpacked(g->meta.library, &dfx__pb_allocator);
  dfx__free(g);
}

/* TF's node name rule, with the characters newer TF also accepts and a
 * leading '_' as in TF's internal names (function-lowered graphs use them). */
bool dfx__node_name_valid(const char *s) {
  if (!s || !*s || !(isalnum((unsigned char)*s) || *s == '.' || *s == '_')) return false;
  for (s++; *s; s++)
    if (!(isalnum((unsigned char)*s) || strchr("_./->", *s))) return false;
  return true;
}

/* ParseTensorName (tf-semantics §1.3): "node", "node:k" or "^node". */
void dfx__tensor_name_parse(const char *s, const char **name, size_t *len, int *slot) {
  size_t n = strlen(s);
  size_t i = n;
  while (i > 0 && isdigit((unsigned char)s[i - 1])) i--;
  /* The ":digits" test comes first, as in TF: "^a:1" is node "^a", output 1,
   * which then fails as an unknown node rather than parsing as control. */
  if (i < n && i > 0 && s[i - 1] == ':') {
    *name = s;
    *len = i - 1;
    long long k = 0;
    for (size_t j = i; j < n && k <= INT32_MAX; j++) k = k * 10 + (s[j] - '0');
    /* Clamped, not wrapped: a huge index still fails the output-range check. */
    *slot = k > INT32_MAX ? INT32_MAX : (int)k;
    return;
  }
  if (s[0] == '^') {
    *name = s + 1;
    *len = n - 1;
    *slot = -1;
    return;
  }
  *name = s;
  *len = n;
  *slot = 0;
}

/* ---- the name index: open addressing, at most half full ---- */

int dfx__graph_find(const dfx_graph *g, const char *name, size_t len) {
  if (!g || !name || !g->name_index) return -1;
  if (len == (size_t)-1) len = strlen(name);
  for (uint32_t i = hash_name(name, len) & (g->name_cap - 1);; i = (i + 1) & (g->name_cap - 1)) {
    int id = g->name_index[i];
    if (id < 0) return -1;
    const char *n = g->nodes[id].name;
    /* name may be a slice of an input string ("x:1"), not NUL-terminated at len. */
    if (strncmp(n, name, len) == 0 && n[len] == 0) return id;
  }
}

/* Inserts id into a table with room; the id already there under that name,
 * or -1. */
static int index_put(dfx_graph *g, int id) {
  const char *name = g->nodes[id].name;
  size_t len = strlen(name);
  for (uint32_t i = hash_name(name, len) & (g->name_cap - 1);; i = (i + 1) & (g->name_cap - 1)) {
    int other = g->name_index[i];
    if (other < 0) {
      g->name_index[i] = id;
      g->name_used++;
      return -1;
    }
    if (strcmp(g->nodes[other].name, name) == 0) return other;
  }
}

/* A fresh table for the first n_nodes nodes; the id of a duplicate's first
 * holder in *dup (else -1). */
static dfx_code index_build(dfx_graph *g, uint32_t cap, int *dup, int *dup_at) {
  int *idx = dfx__malloc(sizeof(int) * cap);
  if (!idx) return DFX_ENOMEM;
  dfx__free(g->name_index);
  g->name_index = idx;
  g->name_cap = cap;
  g->name_used = 0;
  for (uint32_t i = 0; i < cap; i++) idx[i] = -1;
  *dup = -1;
  for (int i = 0; i < g->n_nodes && *dup < 0; i++)
    if ((*dup = index_put(g, i)) >= 0) *dup_at = i;
  return DFX_OK;
}

dfx_code dfx__graph_index_rebuild(dfx_graph *g, dfx_status *st) {
  uint32_t cap = 16;
  /* At least twice the node count: the table stays at most half full, so a
   * probe always ends at an empty slot. */
  while (cap < (uint32_t)g->n_nodes * 2u) cap *= 2;
  int dup, at = 0;
  if (index_build(g, cap, &dup, &at) != DFX_OK) return dfx__status_set(st, DFX_ENOMEM, "out of memory");
  if (dup >= 0)
    return dfx__status_set(st, DFX_EINVAL, "Node '%s': duplicate node name (nodes %d and %d)", g->nodes[at].name, dup,
                           at);
  return DFX_OK;
}

int dfx__graph_index_insert(dfx_graph *g, int id) {
  if ((g->name_used + 1) * 2 > g->name_cap) {
    int dup, at;
    /* Rebuild over the nodes before id, then add id as usual. */
    int n = g->n_nodes;
    g->n_nodes = id;
    dfx_code c = index_build(g, g->name_cap ? g->name_cap * 2 : 16, &dup, &at);
    g->n_nodes = n;
    if (c != DFX_OK) return -2;
  }
  return index_put(g, id);
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
    /* The edit distance is at least the length difference, so names too far
     * apart in length are skipped without computing it. */
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
  /* frames exist once the graph is final, which every public graph is. */
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
