/* prune.c - the `prune` pass: remove every node that no kept node needs
 * (tf-semantics §2.8), as a run's plan does, but once, in the graph: so
 * later passes and an exported graph carry only what the run uses. Feeds
 * do not cut producers here (a fed intermediate node keeps its inputs, so
 * the graph stays valid for runs that do not feed it).
 *
 * Without a run's ports every output is kept, so nothing the graph had is
 * unneeded; but other passes leave nodes behind (the Consts a fold read,
 * the producers of a merged duplicate), and those go: pure nodes nobody
 * reads any more, repeatedly. */
#include "alloc.h"
#include "pass.h"

/* Without ports: removes pure, unkept nodes with no consumers, then their
 * producers that this leaves without consumers, and so on. */
static dfx_code sweep_unused(dfx_pass_ctx *c) {
  dfx_graph *g = c->g;
  int *uses = dfx__calloc((size_t)g->n_nodes + 1, sizeof(int));
  int *work = dfx__malloc(sizeof(int) * ((size_t)g->n_nodes + 1));
  if (!uses || !work) {
    dfx__free(uses);
    dfx__free(work);
    return dfx__status_set(c->st, DFX_ENOMEM, "out of memory");
  }
  for (int i = 0; i < g->n_nodes; i++)
    for (int k = 0; k < g->nodes[i].n_in + g->nodes[i].n_ctrl; k++) uses[g->nodes[i].in[k].node]++;
  int n_work = 0;
  for (int i = 0; i < g->n_nodes; i++)
    if (uses[i] == 0) work[n_work++] = i;
  while (n_work > 0) {
    int i = work[--n_work];
    const dfx_node *n = &g->nodes[i];
    if (n->removed || !dfx__pass_pure(c, n) || dfx__pass_keeps(c, n->name) || dfx__pass_fed(c, n->name)) continue;
    dfx__graph_remove_node(g, i);
    c->counts.removed++;
    /* Each producer enters the work list once, when its last use goes. */
    for (int k = 0; k < n->n_in + n->n_ctrl; k++)
      if (--uses[n->in[k].node] == 0) work[n_work++] = n->in[k].node;
  }
  dfx__free(uses);
  dfx__free(work);
  return DFX_OK;
}

static dfx_code prune_run(dfx_pass_ctx *c) {
  dfx_graph *g = c->g;
  if (!c->ports_known) return sweep_unused(c);
  int *roots = dfx__malloc(sizeof(int) * ((size_t)c->n_keep + 1));
  char *needed = dfx__calloc((size_t)g->n_nodes + 1, 1);
  dfx_code rc = DFX_OK;
  if (!roots || !needed) {
    rc = dfx__status_set(c->st, DFX_ENOMEM, "out of memory");
    goto done;
  }
  int n_roots = 0;
  for (int i = 0; i < c->n_keep; i++) {
    int id = dfx__graph_find(g, c->keep[i], (size_t)-1);
    if (id >= 0) roots[n_roots++] = id;
  }
  if ((rc = dfx__graph_prune_mark(g, NULL, 0, roots, n_roots, NULL, 0, needed, NULL, c->st)) != DFX_OK) goto done;
  for (int i = 0; i < g->n_nodes; i++)
    if (!needed[i]) {
      dfx__graph_remove_node(g, i);
      c->counts.removed++;
    }
done:
  dfx__free(roots);
  dfx__free(needed);
  return rc;
}

const dfx_pass dfx__pass_prune = {
    .name = "prune",
    .purpose = "remove nodes no fetch, feed or target needs (without those: nodes other passes left unused)",
    .run = prune_run,
    .in_default = true,
};
