/* outputs.c - a graph's default outputs (what `dfexec run` fetches when told
 * nothing, `dfexec info` lists, dfx_graph_outputs returns) and the parser of
 * TensorFlow's "node:k" tensor names (dfx_port_parse). */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "graph.h"

/* Whether output `k` of node `n` is used by a node other than a _Retval. */
static bool consumed(const dfx_graph *g, const dfx_node *n, int k) {
  for (int e = 0; e < n->n_edges; e++) {
    const dfx_edge *ed = &n->edges[e];
    if (ed->dst_slot >= 0 && ed->src_slot == k && strcmp(g->nodes[ed->dst].op, "_Retval") != 0) return true;
  }
  return false;
}

static bool is_switch(const dfx_node *n) {
  return n->ctrl == DFX_CTRL_SWITCH || strcmp(n->op, "_SwitchN") == 0;
}

/* Marks the nodes whose outputs may be dead in a run: those downstream (by
 * data or control edges) of a Switch without a Merge or Exit in between.
 * The graph may have cycles, so this iterates to a fixed point. */
static void mark_conditional(const dfx_graph *g, bool *cond) {
  for (bool changed = true; changed;) {
    changed = false;
    for (int i = 0; i < g->n_nodes; i++) {
      const dfx_node *n = &g->nodes[i];
      bool c = is_switch(n);
      if (n->ctrl != DFX_CTRL_MERGE && n->ctrl != DFX_CTRL_EXIT)
        for (int k = 0; !c && k < n->n_in + n->n_ctrl; k++) c = cond[n->in[k].node];
      if (c && !cond[i]) cond[i] = changed = true;
    }
  }
}

/* The rules: a tensor is a default output when no node consumes it (a
 * _Retval counts as a graph output, not a consumer), its node runs in the
 * root frame (an Exit counts as being in its loop's parent frame), and it
 * cannot be dead: tensors behind a Switch that no Merge joins again (the
 * Switch outputs themselves, tf.cond pivots and the constants hung on them)
 * are left out, and so is a Merge's value_index. Ops without outputs (NoOp,
 * Assert, _Retval) are sinks and never outputs. */
static bool is_default_output(const dfx_graph *g, const dfx_node *n, int k, const bool *cond) {
  int frame = n->ctrl == DFX_CTRL_EXIT ? g->frames[n->frame].parent : n->frame;
  if (frame != 0 || consumed(g, n, k) || cond[n->id]) return false;
  return !(n->ctrl == DFX_CTRL_MERGE && k == 1);
}

int dfx_graph_outputs(const dfx_graph *g, dfx_port *out, int max) {
  if (!g) return 0;
  bool *cond = dfx__calloc((size_t)g->n_nodes + 1, 1);
  if (!cond) return -1;
  mark_conditional(g, cond);
  int n = 0;
  for (int i = 0; i < g->n_nodes; i++)
    for (int k = 0; k < g->nodes[i].n_out; k++) {
      if (!is_default_output(g, &g->nodes[i], k, cond)) continue;
      if (out && n < max) out[n] = (dfx_port){g->nodes[i].name, k};
      n++;
    }
  dfx__free(cond);
  return n;
}

dfx_code dfx_port_parse(const char *text, char *buf, size_t n, dfx_port *out, dfx_status *st) {
  if (!text || !buf || !out) return dfx__status_set(st, DFX_EINVAL, "dfx_port_parse: NULL argument");
  size_t len = strlen(text), name_len = len;
  long index = 0;
  /* A trailing ":digits" is the output index: TF node names cannot hold ':'. */
  const char *colon = strrchr(text, ':');
  if (colon) {
    name_len = (size_t)(colon - text);
    if (!colon[1]) return dfx__status_set(st, DFX_EINVAL, "tensor name '%s': no output index after ':'", text);
    for (const char *p = colon + 1; *p; p++) {
      if (*p < '0' || *p > '9' || index > 100000000)
        return dfx__status_set(st, DFX_EINVAL, "tensor name '%s': the output index must be a decimal number", text);
      index = index * 10 + (*p - '0');
    }
  }
  if (name_len == 0) return dfx__status_set(st, DFX_EINVAL, "tensor name '%s': empty node name", text);
  if (text[0] == '^')
    return dfx__status_set(st, DFX_EINVAL, "tensor name '%s' is a control input, not a tensor", text);
  if (name_len + 1 > n)
    return dfx__status_set(st, DFX_ERANGE, "tensor name '%s': the node name needs %zu bytes, the buffer has %zu", text,
                           name_len + 1, n);
  memcpy(buf, text, name_len);
  buf[name_len] = 0;
  *out = (dfx_port){buf, (int)index};
  return DFX_OK;
}
