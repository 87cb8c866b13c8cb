/* prepare.c - the graph one partitioned run signature needs: a copy of g
 * pruned to what the fetches and targets reach, in which a fed tensor's
 * producer becomes a Placeholder (so nothing behind a feed is placed, sent
 * or run, as in a single-process run: tf-semantics §2.8). */
#include <string.h>

#include "alloc.h"
#include "dist.h"
#include "rewrite.h"

dfx_code dfx__dist_prepare(const dfx_graph *g, const dfx_port *feeds, int n_feeds, const dfx_port *fetches,
                           int n_fetches, const char *const *targets, int n_targets, dfx_graph **out,
                           dfx_status *st) {
  *out = NULL;
  int n = g->n_nodes;
  dfx_graph_port *fp = dfx__calloc((size_t)n_feeds + 1, sizeof *fp);
  dfx_graph_port *xp = dfx__calloc((size_t)n_fetches + 1, sizeof *xp);
  int *tp = dfx__calloc((size_t)n_targets + 1, sizeof *tp);
  char *needed = dfx__calloc((size_t)n + 1, 1);
  dfx_graph *c = NULL;
  dfx_code rc = DFX_OK;
  if (!fp || !xp || !tp || !needed) {
    rc = dfx__status_set(st, DFX_ENOMEM, "out of memory");
    goto done;
  }
  for (int i = 0; i < n_feeds + n_fetches + n_targets; i++) {
    bool is_feed = i < n_feeds, is_fetch = !is_feed && i < n_feeds + n_fetches;
    const char *name = is_feed ? feeds[i].node : is_fetch ? fetches[i - n_feeds].node : targets[i - n_feeds - n_fetches];
    int slot = is_feed ? feeds[i].index : is_fetch ? fetches[i - n_feeds].index : -1;
    int id = dfx__graph_find(g, name, (size_t)-1);
    if (id < 0 || (slot >= 0 && slot >= g->nodes[id].n_out) || (!is_feed && !is_fetch ? false : slot < 0)) {
      char hint[DFX_SUGGEST_MAX];
      rc = dfx__status_set(st, DFX_ENOTFOUND, "%s '%s:%d' names no output of the graph%s",
                           is_feed ? "feed" : is_fetch ? "fetch" : "target", name, slot,
                           dfx__graph_suggest(g, name, hint, sizeof hint));
      goto done;
    }
    if (is_feed) fp[i] = (dfx_graph_port){id, slot};
    else if (is_fetch) xp[i - n_feeds] = (dfx_graph_port){id, slot};
    else tp[i - n_feeds - n_fetches] = id;
  }
  if ((rc = dfx__graph_prune_mark(g, xp, n_fetches, tp, n_targets, fp, n_feeds, needed, NULL, st)) != DFX_OK) goto done;
  /* A fed node stays (as the Placeholder the feed fills); what is behind it goes. */
  for (int i = 0; i < n_feeds; i++) needed[fp[i].node] = 1;
  if ((rc = dfx__graph_clone(g, &c, st)) != DFX_OK) goto done;
  for (int i = 0; i < n_feeds; i++) {
    int id = fp[i].node;
    const dfx_node *nd = &c->nodes[id];
    if (nd->n_in + nd->n_ctrl == 0) continue;
    if (nd->n_out != 1) {
      rc = dfx__status_set(st, DFX_EUNIMPL,
                           "feed '%s:%d': a partitioned run can feed only nodes with no inputs or one output",
                           nd->name, fp[i].slot);
      goto done;
    }
    dfx_dtype dt = nd->out_types[0];
    if ((rc = dfx__rewrite_reset(c, id, "Placeholder", st)) != DFX_OK ||
        (rc = dfx__rewrite_set_type(c, id, "dtype", dt, st)) != DFX_OK)
      goto done;
  }
  for (int i = 0; i < n; i++)
    if (!needed[i]) dfx__graph_remove_node(c, i);
  if ((rc = dfx__graph_finalize(c, st)) != DFX_OK) goto done;
  *out = c;
  c = NULL;
done:
  dfx_graph_free(c);
  dfx__free(fp);
  dfx__free(xp);
  dfx__free(tp);
  dfx__free(needed);
  return rc;
}
