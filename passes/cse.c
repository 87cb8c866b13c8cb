/* cse.c - the `cse` pass (common-subexpression elimination): of two pure
 * nodes with the same op, attrs, device and inputs (data inputs in order,
 * control inputs as a set), the later one goes and its consumers read the
 * first. Equal inputs put both in the same frame and iteration with the
 * same deadness, so the merge is exact. Stateful ops, control-flow ops and
 * kept nodes are left alone. Nodes are visited in graph order, which
 * TensorFlow writes producers-first, so one visit merges whole chains; the
 * manager's next round catches what another order would. */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "pass.h"

static uint64_t mix(uint64_t h, uint64_t v) { return (h ^ v) * 1099511628211ull; }

static uint64_t node_hash(const dfx_node *n) {
  uint64_t h = 1469598103934665603ull;
  for (const char *s = n->op; *s; s++) h = mix(h, (unsigned char)*s);
  for (int k = 0; k < n->n_in; k++) h = mix(mix(h, (uint64_t)n->in[k].node), (uint64_t)(int64_t)n->in[k].slot);
  /* Control inputs and attrs are sets: combine their hashes commutatively. */
  uint64_t ctrl = 0, attrs = 0;
  for (int k = n->n_in; k < n->n_in + n->n_ctrl; k++) ctrl += mix(7, (uint64_t)n->in[k].node);
  for (int k = 0; k < n->n_attrs; k++) {
    uint64_t a = 1469598103934665603ull;
    for (const char *s = n->attrs[k].name; *s; s++) a = mix(a, (unsigned char)*s);
    attrs += dfx__attr_hash(&n->attrs[k], a);
  }
  return mix(mix(h, ctrl), attrs);
}

static bool has_ctrl_input(const dfx_node *n, int src) {
  for (int k = n->n_in; k < n->n_in + n->n_ctrl; k++)
    if (n->in[k].node == src) return true;
  return false;
}

static bool same(const dfx_node *a, const dfx_node *b) {
  if (strcmp(a->op, b->op) != 0 || a->n_in != b->n_in || a->n_ctrl != b->n_ctrl || a->n_attrs != b->n_attrs ||
      strcmp(a->device, b->device) != 0)
    return false;
  for (int k = 0; k < a->n_in; k++)
    if (a->in[k].node != b->in[k].node || a->in[k].slot != b->in[k].slot) return false;
  for (int k = a->n_in; k < a->n_in + a->n_ctrl; k++)
    if (!has_ctrl_input(b, a->in[k].node)) return false;
  for (int k = 0; k < a->n_attrs; k++) {
    const dfx_attr *o = dfx__node_attr(b, a->attrs[k].name);
    if (!o || !dfx__attr_equal(&a->attrs[k], o)) return false;
  }
  return true;
}

static dfx_code cse_run(dfx_pass_ctx *c) {
  dfx_graph *g = c->g;
  /* Open addressing over node ids by hash, at most half full. */
  uint32_t cap = 16;
  while (cap < (uint32_t)g->n_nodes * 2u) cap *= 2;
  int *table = dfx__malloc(sizeof(int) * cap);
  uint64_t *hashes = dfx__malloc(sizeof(uint64_t) * ((size_t)g->n_nodes + 1));
  if (!table || !hashes) {
    dfx__free(table);
    dfx__free(hashes);
    return dfx__status_set(c->st, DFX_ENOMEM, "out of memory");
  }
  for (uint32_t i = 0; i < cap; i++) table[i] = -1;
  for (int i = 0; i < g->n_nodes; i++) {
    const dfx_node *n = &g->nodes[i];
    if (n->removed || !dfx__pass_pure(c, n)) continue;
    /* Inputs rewired by earlier merges in this visit are current here. */
    uint64_t h = hashes[i] = node_hash(n);
    uint32_t slot = (uint32_t)h & (cap - 1);
    int twin = -1;
    for (; table[slot] >= 0; slot = (slot + 1) & (cap - 1))
      if (hashes[table[slot]] == h && same(&g->nodes[table[slot]], n)) {
        twin = table[slot];
        break;
      }
    if (twin < 0 || dfx__pass_keeps(c, n->name)) {
      if (twin < 0) table[slot] = i;
      continue;
    }
    for (int k = 0; k < n->n_out; k++) dfx__graph_replace_uses(g, i, k, twin, k);
    dfx__graph_replace_uses(g, i, -1, twin, -1);
    dfx__graph_remove_node(g, i);
    c->counts.removed++;
  }
  dfx__free(table);
  dfx__free(hashes);
  return DFX_OK;
}

const dfx_pass dfx__pass_cse = {
    .name = "cse",
    .purpose = "merge nodes that compute the same op on the same inputs",
    .run = cse_run,
    .in_default = true,
};
