/* builder_infer.c - the attrs a builder node may leave out, filled in at
 * finalisation on the copy being finalised: a number attr ("N" of AddN)
 * from the input count, and a type attr ("T" of Add, "Tidx" of Sum) from
 * the producer of the first input whose signature arg uses it. A type attr
 * takes its default only when no input determines it, so an int64 axis
 * makes Tidx int64 although the op says int32 when nothing else does.
 *
 * Types flow along edges, loops included (a Merge learns its type from
 * its Enter, the NextIteration behind it from the loop body), so this is a
 * worklist over the graph rather than recursion: a node is tried again
 * whenever one of its producers gains a type, and each attr is set once. */
#include <string.h>

#include "alloc.h"
#include "builder.h"
#include "op_registry.h"

typedef struct infer {
  dfx_graph *g;
  const dfx_op_def **def;  /* per node; NULL for an op no registry knows */
  int *first, *cons;       /* consumers of node i (data inputs): cons[first[i] .. first[i + 1]) */
  int *queue;              /* ring of node ids, each at most once (queued[]) */
  char *queued;
  int head, count;
} infer;

static dfx_code set_type(dfx_graph *g, int id, const char *name, dfx_dtype t, dfx_status *st) {
  dfx_attr a = {.name = (char *)name, .kind = DFX_ATTR_TYPE, .v.type = t};
  return dfx__graph_set_attr(g, id, &a, st);
}

/* Element count of an input or output arg from the node's attrs (number
 * attrs are all set or defaulted by then), or -1 when it is not known. */
static int arg_count(const dfx_node *n, const dfx_op_def *def, const dfx_op_arg *a) {
  if (a->type_list_attr) {
    const dfx_attr_list *l = dfx__attr_list(n, a->type_list_attr);
    return l && (l->n == 0 || l->kind == DFX_ATTR_TYPE) ? l->n : -1;
  }
  if (!a->number_attr) return 1;
  const dfx_attr *v = dfx__node_attr(n, a->number_attr);
  const dfx_op_attr *oa = dfx__op_def_attr(def, a->number_attr);
  if (!v && oa && oa->has_default) v = &oa->def;
  return v && v->kind == DFX_ATTR_I && v->v.i >= 0 && v->v.i <= INT32_MAX ? (int)v->v.i : -1;
}

/* A missing number attr of an input arg: its default, else the data input
 * count when it is the only input arg of variable length; -1 when neither. */
static int number_from_inputs(const dfx_node *n, const dfx_op_def *def, const dfx_op_arg *a) {
  const dfx_op_attr *oa = dfx__op_def_attr(def, a->number_attr);
  if (oa && oa->has_default && oa->def.kind == DFX_ATTR_I) return (int)oa->def.v.i;
  int fixed = 0;
  for (int i = 0; i < def->n_in; i++) {
    if (&def->in[i] == a) continue;
    if (def->in[i].number_attr || def->in[i].type_list_attr) return -1;
    fixed++;
  }
  return n->n_in >= fixed ? n->n_in - fixed : -1;
}

/* The dtype of output `slot` of node p, DFX_INVALID while it is unknown. */
static dfx_dtype out_dtype(const infer *in, int p, int slot) {
  const dfx_node *n = &in->g->nodes[p];
  const dfx_op_def *def = in->def[p];
  for (int i = 0, base = 0; def && i < def->n_out; i++) {
    const dfx_op_arg *a = &def->out[i];
    int cnt = arg_count(n, def, a);
    if (cnt < 0) return DFX_INVALID;
    if (slot - base < cnt) {
      if (a->type_list_attr) return dfx__attr_list(n, a->type_list_attr)->v.type[slot - base];
      if (a->type != DFX_INVALID) return a->type;
      return dfx__attr_type(n, a->type_attr, DFX_INVALID);
    }
    base += cnt;
  }
  return DFX_INVALID;
}

/* Tries each missing type attr of node id: the first input of an arg using
 * it whose producer's dtype is known, else the default when no input can
 * ever determine it. *changed is raised when an attr was set. */
static dfx_code try_node(infer *in, int id, bool *changed, dfx_status *st) {
  const dfx_op_def *def = in->def[id];
  *changed = false;
  for (int i = 0; def && i < def->n_attrs; i++) {
    const dfx_op_attr *oa = &def->attrs[i];
    const dfx_node *n = &in->g->nodes[id];
    if (oa->kind != DFX_ATTR_TYPE || dfx__node_attr(n, oa->name)) continue;
    bool used = false, known = true;
    dfx_dtype t = DFX_INVALID;
    for (int j = 0, k = 0; j < def->n_in && k < n->n_in && t == DFX_INVALID; j++) {
      const dfx_op_arg *a = &def->in[j];
      int cnt = arg_count(n, def, a);
      if (cnt < 0) {
        known = false; /* where later args start is unknown */
        break;
      }
      if (a->type_attr && strcmp(a->type_attr, oa->name) == 0 && cnt > 0) {
        used = true;
        for (int e = k; e < k + cnt && e < n->n_in && t == DFX_INVALID; e++)
          t = out_dtype(in, n->in[e].node, n->in[e].slot);
      }
      k += cnt;
    }
    if (t == DFX_INVALID && !used && known && oa->has_default && oa->def.kind == DFX_ATTR_TYPE) t = oa->def.v.type;
    if (t == DFX_INVALID) continue;
    if (set_type(in->g, id, oa->name, t, st) != DFX_OK) return DFX_ENOMEM;
    *changed = true;
  }
  return DFX_OK;
}

static void push(infer *in, int id) {
  int n = in->g->n_nodes;
  if (in->queued[id]) return;
  in->queued[id] = 1;
  in->queue[(in->head + in->count++) % n] = id;
}

/* Runs the worklist dry: a node that gained a type queues its consumers. */
static dfx_code drain(infer *in, dfx_status *st) {
  while (in->count) {
    int id = in->queue[in->head];
    in->head = (in->head + 1) % in->g->n_nodes;
    in->count--;
    in->queued[id] = 0;
    bool changed;
    if (try_node(in, id, &changed, st) != DFX_OK) return DFX_ENOMEM;
    for (int k = in->first[id]; changed && k < in->first[id + 1]; k++) push(in, in->cons[k]);
  }
  return DFX_OK;
}

/* Op definitions, number attrs and the consumer lists. */
static dfx_code prepare(infer *in, dfx_status *st) {
  dfx_graph *g = in->g;
  size_t n = (size_t)g->n_nodes;
  if (!(in->def = dfx__calloc(n + 1, sizeof *in->def)) || !(in->first = dfx__calloc(n + 2, sizeof(int))) ||
      !(in->queue = dfx__malloc((n + 1) * sizeof(int))) || !(in->queued = dfx__calloc(n + 1, 1)))
    return DFX_ENOMEM;
  int edges = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    const dfx_node *node = &g->nodes[i];
    dfx_code c = dfx__op_find(node->op, &in->def[i], st);
    if (c != DFX_OK) return c;
    for (int k = 0; k < node->n_in; k++) in->first[node->in[k].node + 2]++;
    edges += node->n_in;
    const dfx_op_def *def = in->def[i];
    for (int k = 0; def && k < def->n_in; k++) {
      const dfx_op_arg *a = &def->in[k];
      if (!a->number_attr || dfx__node_attr(node, a->number_attr)) continue;
      int cnt = number_from_inputs(node, def, a);
      dfx_attr v = {.name = a->number_attr, .kind = DFX_ATTR_I, .v.i = cnt};
      if (cnt >= 0 && dfx__graph_set_attr(g, i, &v, st) != DFX_OK) return DFX_ENOMEM;
    }
  }
  /* Counting sort: first[i + 2] counted, prefix sums shift it to first[i + 1],
   * and filling moves it to first[i]. */
  for (size_t i = 2; i < n + 2; i++) in->first[i] += in->first[i - 1];
  if (!(in->cons = dfx__malloc(((size_t)edges + 1) * sizeof(int)))) return DFX_ENOMEM;
  for (int i = 0; i < g->n_nodes; i++)
    for (int k = 0; k < g->nodes[i].n_in; k++) in->cons[in->first[g->nodes[i].in[k].node + 1]++] = i;
  return DFX_OK;
}

dfx_code dfx__builder_infer(dfx_graph *g, dfx_status *st) {
  infer in = {.g = g};
  dfx_code c = prepare(&in, st);
  /* In graph order first, where producers mostly come before consumers;
   * then, once nothing more follows, defaults for attrs whose inputs never
   * said, one node at a time, as a default may in turn type a consumer. */
  for (int i = 0; c == DFX_OK && i < g->n_nodes; i++) push(&in, i);
  if (c == DFX_OK) c = drain(&in, st);
  for (int i = 0; c == DFX_OK && i < g->n_nodes; i++) {
    const dfx_op_def *def = in.def[i];
    bool changed = false;
    for (int k = 0; def && k < def->n_attrs && c == DFX_OK; k++) {
      const dfx_op_attr *oa = &def->attrs[k];
      if (oa->kind != DFX_ATTR_TYPE || !oa->has_default || oa->def.kind != DFX_ATTR_TYPE ||
          dfx__node_attr(&g->nodes[i], oa->name))
        continue;
      c = set_type(g, i, oa->name, oa->def.v.type, st);
      changed = true;
    }
    for (int k = in.first[i]; c == DFX_OK && changed && k < in.first[i + 1]; k++) push(&in, in.cons[k]);
    if (c == DFX_OK) c = drain(&in, st);
  }
  dfx__free(in.def);
  dfx__free(in.first);
  dfx__free(in.cons);
  dfx__free(in.queue);
  dfx__free(in.queued);
  return c == DFX_ENOMEM ? dfx__status_set(st, DFX_ENOMEM, "out of memory inferring attrs") : c;
}
