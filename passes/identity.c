/* identity.c - the `identity` pass: consumers of an Identity read its input
 * directly and the Identity goes. It keeps an Identity that is kept (a
 * fetched name), has control inputs (its consumers would lose them), or has
 * control consumers: a control edge carries its source node's deadness
 * (tf-semantics §2.3), and an Identity on a Switch port is exactly how
 * tf.cond builds the pivot a branch's constants hang off, so rewiring
 * ^pivot to the Switch would make a dead branch live. Data consumers see
 * the same value and the same deadness either way. */
#include <string.h>

#include "invariant.h"
#include "pass.h"

static bool removable(const dfx_pass_ctx *c, const dfx_node *n) {
  if (strcmp(n->op, "Identity") != 0 || n->n_in != 1 || n->n_ctrl != 0) return false;
  if (dfx__pass_keeps(c, n->name)) return false;
  for (int e = 0; e < n->n_edges; e++)
    if (n->edges[e].dst_slot < 0) return false;
  return true;
}

static dfx_code identity_run(dfx_pass_ctx *c) {
  dfx_graph *g = c->g;
  for (int i = 0; i < g->n_nodes; i++) {
    const dfx_node *n = &g->nodes[i];
    if (!removable(c, n)) continue;
    /* In a chain of Identities the earlier one rewired this one already. */
    dfx_input src = n->in[0];
    DFX_ASSERT(!g->nodes[src.node].removed);
    dfx__graph_replace_uses(g, i, 0, src.node, src.slot);
    dfx__graph_remove_node(g, i);
    c->counts.removed++;
  }
  return DFX_OK;
}

const dfx_pass dfx__pass_identity = {
    .name = "identity",
    .purpose = "remove Identity nodes whose consumers can read their input directly",
    .run = identity_run,
    .in_default = true,
};
