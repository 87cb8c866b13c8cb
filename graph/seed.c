/* seed.c - dfx_graph_seed: TensorFlow's graph-level random seed, applied to
 * a frozen graph.
 *
 * In TF1 the Python front end resolves seeds when it builds the graph: an
 * op created with neither a graph-level nor an op-level seed gets
 * seed = seed2 = 0, which its kernel reads as "nondeterministic". A frozen
 * GraphDef therefore carries 0/0 on exactly the ops the user left
 * unseeded, and explicit seeds on the others. Setting a graph-level seed N
 * afterwards follows tf.compat.v1.set_random_seed's rule for those ops
 * (random_seed.get_seed: graph seed set, op seed unset -> (N, per-op
 * value)); ops with explicit seeds keep them. TF derives the per-op value
 * from the op's creation order, which a GraphDef does not record, so here it
 * is a hash of the node's name: the same graph and N give the same numbers
 * on every run and machine, though not TF's own numbers. */
#include <stdint.h>
#include <string.h>

#include "graph.h"

/* FNV-1a of the name, folded into a positive int63: TF's seeds are int
 * attrs, and a zero seed2 together with a zero seed would mean "random". */
static int64_t name_seed(const char *name) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (const unsigned char *p = (const unsigned char *)name; *p; p++) h = (h ^ *p) * 0x100000001b3ull;
  h &= INT64_MAX;
  return h ? (int64_t)h : 1;
}

static bool unseeded_random_op(const dfx_node *n) {
  const dfx_attr *a = dfx__node_attr(n, "seed"), *b = dfx__node_attr(n, "seed2");
  return a && b && a->kind == DFX_ATTR_I && b->kind == DFX_ATTR_I && a->v.i == 0 && b->v.i == 0;
}

dfx_code dfx_graph_seed(const dfx_graph *g, int64_t seed, dfx_graph **out, int *n_seeded, dfx_status *st) {
  if (out) *out = NULL;
  if (n_seeded) *n_seeded = 0;
  if (!g || !out) return dfx__status_set(st, DFX_EINVAL, "dfx_graph_seed: NULL argument");
  if (!g->final) return dfx__status_set(st, DFX_EPRECOND, "dfx_graph_seed: the graph is being edited (not finalised)");
  dfx_graph *c;
  dfx_code code = dfx__graph_clone(g, &c, st);
  if (code != DFX_OK) return code;
  int count = 0;
  for (int i = 0; i < c->n_nodes && code == DFX_OK; i++) {
    if (!unseeded_random_op(&c->nodes[i])) continue;
    dfx_attr a = {.name = "seed", .kind = DFX_ATTR_I, .v.i = seed};
    dfx_attr b = {.name = "seed2", .kind = DFX_ATTR_I, .v.i = name_seed(c->nodes[i].name)};
    code = dfx__graph_set_attr(c, i, &a, st);
    if (code == DFX_OK) code = dfx__graph_set_attr(c, i, &b, st);
    count++;
  }
  if (code == DFX_OK) code = dfx__graph_finalize(c, st);
  if (code != DFX_OK) {
    dfx_graph_free(c);
    return code;
  }
  *out = c;
  if (n_seeded) *n_seeded = count;
  return DFX_OK;
}
