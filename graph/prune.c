/* prune.c - which nodes a run needs (tf-semantics §2.8): those the fetches
 * and targets reach backwards through data and control inputs, where a fed
 * tensor replaces its producer on the edges that read it (TF's
 * PruneForTargets). Later optimisation passes share it. */
#include "graph.h"

#include "alloc.h"
#include "status.h"

static bool is_fed(const dfx_graph_port *feeds, int n_feeds, int node, int slot) {
  for (int i = 0; i < n_feeds; i++)
    if (feeds[i].node == node && feeds[i].slot == slot) return true;
  return false;
}

dfx_code dfx__graph_prune_mark(const dfx_graph *g, const dfx_graph_port *fetches, int n_fetches, const int *targets,
                               int n_targets, const dfx_graph_port *feeds, int n_feeds, char *needed, int *via,
                               dfx_status *st) {
  /* A node is pushed only when it is first marked, so n slots suffice. */
  int *stack = dfx__malloc(sizeof(int) * ((size_t)g->n_nodes + 1));
  if (!stack) return dfx__status_set(st, DFX_ENOMEM, "out of memory");
  int sp = 0;
  for (int i = 0; i < n_fetches; i++) {
    int v = fetches[i].node;
    if (is_fed(feeds, n_feeds, v, fetches[i].slot) || needed[v]) continue;
    needed[v] = 1;
    if (via) via[v] = -1;
    stack[sp++] = v;
  }
  for (int i = 0; i < n_targets; i++)
    if (!needed[targets[i]]) {
      needed[targets[i]] = 1;
      if (via) via[targets[i]] = -1;
      stack[sp++] = targets[i];
    }
  while (sp > 0) {
    int v = stack[--sp];
    const dfx_node *n = &g->nodes[v];
    for (int k = 0; k < n->n_in + n->n_ctrl; k++) {
      int u = n->in[k].node;
      /* A feed replaces a tensor, not the node: a control input (slot -1) still
       * needs its producer to run. */
      if (n->in[k].slot >= 0 && is_fed(feeds, n_feeds, u, n->in[k].slot)) continue;
      if (!needed[u]) {
        needed[u] = 1;
        if (via) via[u] = v;
        stack[sp++] = u;
      }
    }
  }
  dfx__free(stack);
  return DFX_OK;
}
