/* finalize.c - bringing a graph's derived data up to date after import or
 * edits (graph.h): removed nodes compacted away, the name index, every
 * node's signature (attr defaults, attr checks against TF's OpDef, input and
 * output dtypes; opaque nodes for ops no registry knows), the checks
 * TensorFlow's importer makes on every edge, consumer edges, and static
 * frames (graph_frames.c). An edited graph is held to exactly the rules of
 * an imported one. */
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "function.h"
#include "graph.h"
#include "node_sig.h"
#include "op_registry.h"

/* Drops removed nodes, renumbering the rest in order; an input still
 * reading a removed node is an error naming both. */
static dfx_code compact(dfx_graph *g, dfx_status *st) {
  int kept = 0;
  for (int i = 0; i < g->n_nodes; i++) kept += !g->nodes[i].removed;
  if (kept == g->n_nodes) return DFX_OK;
  int *to = dfx__malloc(sizeof(int) * ((size_t)g->n_nodes + 1));
  if (!to) return dfx__status_set(st, DFX_ENOMEM, "out of memory");
  for (int i = 0, k = 0; i < g->n_nodes; i++) to[i] = g->nodes[i].removed ? -1 : k++;
  for (int i = 0; i < g->n_nodes; i++) {
    dfx_node *n = &g->nodes[i];
    if (n->removed) continue;
    for (int k = 0; k < n->n_in + n->n_ctrl; k++)
      if (to[n->in[k].node] < 0) {
        dfx_code c = dfx__status_set(st, DFX_EINVAL, "Node '%s' (%s): input %d reads removed node '%s'", n->name, n->op,
                                     k, g->nodes[n->in[k].node].name);
        dfx__free(to);
        return c;
      }
  }
  for (int i = 0; i < g->n_nodes; i++) {
    dfx_node *n = &g->nodes[i];
    if (n->removed) {
      dfx__node_clear(n);
      continue;
    }
    for (int k = 0; k < n->n_in + n->n_ctrl; k++) n->in[k].node = to[n->in[k].node];
    n->id = to[i];
    if (to[i] != i) {
      g->nodes[to[i]] = *n;
      memset(n, 0, sizeof *n);
    }
  }
  g->n_nodes = kept;
  dfx__free(to);
  return dfx__graph_index_rebuild(g, st);
}

/* Forgets what the previous finalisation derived, so it is recomputed from
 * the nodes as they are now. */
static void reset_derived(dfx_graph *g) {
  for (int i = 0; i < g->n_nodes; i++) {
    dfx_node *n = &g->nodes[i];
    dfx__free(n->in_types);
    dfx__free(n->out_types);
    dfx__free(n->edges);
    n->in_types = n->out_types = NULL;
    n->edges = NULL;
    n->n_edges = 0;
    n->n_out = 0;
    n->def = NULL;
    n->ctrl = dfx__ctrl_class(n->op);
  }
  dfx__graph_clear_frames(g);
}

/* Ops no registry knows (custom ops) import as opaque nodes, as TensorFlow
 * graphs with them still run when a run does not need them (issue: a
 * missing kernel is an error only when needed). Their output count is the
 * largest output index any consumer reads, and an output's dtype is what its
 * first typed consumer expects there (DFX_INVALID, "any", when none says). */
static dfx_code opaque_nodes(dfx_graph *g, dfx_status *st) {
  for (int i = 0; i < g->n_nodes; i++) {
    dfx_node *n = &g->nodes[i];
    for (int k = 0; k < n->n_in; k++) {
      dfx_node *src = &g->nodes[n->in[k].node];
      if (!src->def && n->in[k].slot >= src->n_out) src->n_out = n->in[k].slot + 1;
    }
  }
  /* A direct call of a library function has the function's outputs (the
   * lower pass inlines it; until then it is opaque). */
  for (int i = 0; g->meta.library && i < g->n_nodes; i++) {
    dfx_node *n = &g->nodes[i];
    int k = n->def ? -1 : dfx__graph_function_outputs(g, n->op, NULL, 0);
    if (k > n->n_out) n->n_out = k;
  }
  for (int i = 0; i < g->n_nodes; i++) {
    dfx_node *n = &g->nodes[i];
    if (n->def) continue;
    if (!(n->out_types = dfx__calloc((size_t)n->n_out + 1, sizeof(dfx_dtype))) ||
        !(n->in_types = dfx__calloc((size_t)n->n_in + 1, sizeof(dfx_dtype))))
      return dfx__status_set(st, DFX_ENOMEM, "out of memory");
  }
  for (int i = 0; i < g->n_nodes; i++) {
    const dfx_node *n = &g->nodes[i];
    for (int k = 0; n->def && k < n->n_in; k++) {
      dfx_node *src = &g->nodes[n->in[k].node];
      if (!src->def && src->out_types[n->in[k].slot] == DFX_INVALID) src->out_types[n->in[k].slot] = n->in_types[k];
    }
  }
  return DFX_OK;
}

/* Fills defaults, checks attrs and resolves dtypes for nodes whose op has a
 * signature (op_registry.h); the rest are opaque. */
static dfx_code apply_signatures(dfx_graph *g, dfx_status *st) {
  for (int i = 0; i < g->n_nodes; i++) {
    dfx_node *n = &g->nodes[i];
    dfx_code c = dfx__op_find(n->op, &n->def, st);
    if (c != DFX_OK) return c;
    if (!n->def) continue; /* an op no registry knows: opaque (below) */
    int expected = 0;
    c = dfx__node_fill_defaults(n, n->def, st);
    if (c == DFX_OK) {
      /* Its messages name node and op already, so they are passed on as they are. */
      if ((c = dfx__node_check_attrs(n, n->def, st)) != DFX_OK) return c;
      c = dfx__node_resolve_types(n, n->def, &expected, st);
    }
    if (c != DFX_OK) {
      char msg[DFX_STATUS_MSG_MAX];
      snprintf(msg, sizeof msg, "%s", st ? st->msg : "");
      return dfx__status_set(st, c, "Node '%s' (%s): %s", n->name, n->op, msg);
    }
    if (expected != n->n_in)
      return dfx__status_set(st, DFX_EINVAL, "Node '%s' (%s): expects %d data inputs but has %d", n->name, n->op,
                             expected, n->n_in);
  }
  return opaque_nodes(g, st);
}

/* Output indices in range, dtypes of each edge equal to the signature's. */
static dfx_code check_edges(dfx_graph *g, dfx_status *st) {
  for (int i = 0; i < g->n_nodes; i++) {
    dfx_node *n = &g->nodes[i];
    for (int k = 0; k < n->n_in; k++) {
      const dfx_node *src = &g->nodes[n->in[k].node];
      int slot = n->in[k].slot;
      if (slot >= src->n_out)
        return dfx__status_set(st, DFX_EINVAL, "Node '%s' (%s): input %d is '%s:%d' but %s (%s) has only %d output%s",
                               n->name, n->op, k, src->name, slot, src->name, src->op, src->n_out,
                               src->n_out == 1 ? "" : "s");
      dfx_dtype want = n->in_types[k], got = src->out_types[slot];
      if (want != DFX_INVALID && got != DFX_INVALID && want != got)
        return dfx__status_set(st, DFX_EINVAL,
                               "Node '%s' (%s): input %d expects %s but '%s:%d' (%s) produces %s", n->name, n->op, k,
                               dfx_dtype_name(want), src->name, slot, src->op, dfx_dtype_name(got));
    }
  }
  return DFX_OK;
}

static dfx_code build_edges(dfx_graph *g, dfx_status *st) {
  int *count = dfx__calloc((size_t)g->n_nodes + 1, sizeof(int));
  if (!count) return dfx__status_set(st, DFX_ENOMEM, "out of memory");
  for (int i = 0; i < g->n_nodes; i++)
    for (int k = 0; k < g->nodes[i].n_in + g->nodes[i].n_ctrl; k++) count[g->nodes[i].in[k].node]++;
  for (int i = 0; i < g->n_nodes; i++) {
    if (count[i] && !(g->nodes[i].edges = dfx__malloc(sizeof(dfx_edge) * (size_t)count[i]))) {
      dfx__free(count);
      return dfx__status_set(st, DFX_ENOMEM, "out of memory");
    }
  }
  /* Two passes keep data edges ahead of control edges on every producer. */
  for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i < g->n_nodes; i++) {
      dfx_node *n = &g->nodes[i];
      for (int k = 0; k < n->n_in + n->n_ctrl; k++) {
        bool ctrl = n->in[k].slot < 0;
        if (ctrl != (pass == 1)) continue;
        dfx_node *src = &g->nodes[n->in[k].node];
        src->edges[src->n_edges++] = (dfx_edge){i, n->in[k].slot < 0 ? -1 : n->in[k].slot, ctrl ? -1 : k};
      }
    }
  dfx__free(count);
  return DFX_OK;
}

dfx_code dfx__graph_finalize(dfx_graph *g, dfx_status *st) {
  g->final = false;
  dfx_code c;
  if ((c = compact(g, st)) != DFX_OK) return c;
  if (!g->name_index && (c = dfx__graph_index_rebuild(g, st)) != DFX_OK) return c;
  reset_derived(g);
  if ((c = apply_signatures(g, st)) != DFX_OK || (c = check_edges(g, st)) != DFX_OK ||
      (c = build_edges(g, st)) != DFX_OK || (c = dfx__graph_frames(g, st)) != DFX_OK)
    return c;
  g->final = true;
  return DFX_OK;
}
