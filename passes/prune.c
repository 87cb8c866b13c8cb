/* prune.c - the `prune` pass: remove every node that no kept node needs
 * (tf-semantics §2.8), as a run's plan does, but once, in the graph: so
 * later passes and an exported graph carry only what the run uses. Only
 * when the run's ports are known; feeds do not cut producers here (a fed
 * intermediate node keeps its inputs, so the graph stays valid for runs
 * that do not feed it). */
#include "alloc.h"
#include "pass.h"

static dfx_code prune_run(dfx_pass_ctx *c) {
  dfx_graph *g = c->g;
  if (!c->ports_known) return DFX_OK;
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
    .purpose = "remove nodes no fetch, feed or target needs",
    .run = prune_run,
    .in_default = true,
};
