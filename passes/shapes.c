/* shapes.c - the inference engine (shapes.h): sources (Const, Placeholder,
 * feeds), the control-flow ops, the lookup of every other op's shape
 * function (shape_fn.h) and the fixed point over loops.
 *
 * The fixed point is optimistic. Every output starts "not reached"; rounds
 * visit the nodes in topological order (back edges from NextIteration into
 * Merge left out) and recompute them: a Merge from the inputs reached so
 * far, joined; any other node once all its data inputs are reached. A
 * round that changes nothing ends it. Then each node's facts equal its
 * function of its inputs' facts (a Merge's, the join of its reached ones),
 * which is what makes them hold in every run: a live tensor is produced
 * from live inputs that, by induction over the run, satisfy their facts. A
 * node never reached never produces a live tensor (it would need a live
 * input from another one) and reads as unknown.
 *
 * Joins only lose information, so loops settle in a few rounds; as a
 * guard against a shape function that is not monotone, after 16 rounds the
 * loops' Merges are made unknown (the graph is then acyclic for this
 * purpose and settles in two more rounds), and if even that fails every
 * output is made unknown: always sound, never wrong. */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "invariant.h"
#include "shape_fn.h"

#define ROUNDS_BEFORE_WIDENING 16
#define ROUNDS_AFTER_WIDENING 8

/* ---- the op table ---- */

static const dfx_shape_fn_def *const families[] = {dfx__shape_fns_math, dfx__shape_fns_array, dfx__shape_fns_slice,
                                                   dfx__shape_fns_nn, dfx__shape_fns_misc};
#define N_FAMILIES ((int)(sizeof families / sizeof families[0]))

static int by_op(const void *a, const void *b) {
  return strcmp((*(const dfx_shape_fn_def *const *)a)->op, (*(const dfx_shape_fn_def *const *)b)->op);
}

/* Every shape function, sorted by op (a new array of *n, or NULL). */
static const dfx_shape_fn_def **table_new(int *n) {
  int total = 0;
  for (int f = 0; f < N_FAMILIES; f++)
    for (const dfx_shape_fn_def *d = families[f]; d->op; d++) total++;
  const dfx_shape_fn_def **t = dfx__malloc(sizeof *t * ((size_t)total + 1));
  if (!t) return NULL;
  *n = 0;
  for (int f = 0; f < N_FAMILIES; f++)
    for (const dfx_shape_fn_def *d = families[f]; d->op; d++) t[(*n)++] = d;
  qsort(t, (size_t)*n, sizeof *t, by_op);
  for (int i = 1; i < *n; i++) DFX_ASSERT(strcmp(t[i - 1]->op, t[i]->op) != 0 && "an op has two shape functions");
  return t;
}

static dfx_shape_fn table_find(const dfx_shape_fn_def **t, int n, const char *op) {
  dfx_shape_fn_def key = {op, NULL};
  const dfx_shape_fn_def *kp = &key;
  const dfx_shape_fn_def **hit = bsearch(&kp, t, (size_t)n, sizeof *t, by_op);
  return hit ? (*hit)->fn : NULL;
}

static bool is_source(const char *op) {
  return strcmp(op, "Const") == 0 || strcmp(op, "Placeholder") == 0 || strcmp(op, "PlaceholderV2") == 0 ||
         strcmp(op, "PlaceholderWithDefault") == 0;
}

bool dfx__shapes_has_fn(const char *op) {
  if (dfx__ctrl_class(op) != DFX_CTRL_NONE || is_source(op)) return true;
  for (int f = 0; f < N_FAMILIES; f++)
    for (const dfx_shape_fn_def *d = families[f]; d->op; d++)
      if (strcmp(d->op, op) == 0) return true;
  return false;
}

/* ---- facts ---- */

static const dfx_tinfo unknown_info = {.shape = {.rank = -1}, .n_val = -1};

static bool info_equal(const dfx_tinfo *a, const dfx_tinfo *b) {
  if (!dfx__pshape_equal(&a->shape, &b->shape) || a->n_val != b->n_val || a->konst != b->konst ||
      a->origin != b->origin)
    return false;
  for (int i = 0; i < a->n_val; i++)
    if (a->val[i] != b->val[i]) return false;
  return true;
}

/* a becomes what a Merge of a and b can carry. */
static void info_join(dfx_tinfo *a, const dfx_tinfo *b) {
  bool same_shape = dfx__pshape_equal(&a->shape, &b->shape);
  dfx__pshape_relax(&a->shape, &b->shape);
  if (!same_shape || a->n_val != b->n_val) a->n_val = -1;
  for (int i = 0; i < a->n_val; i++)
    if (a->val[i] != b->val[i]) a->val[i] = DFX_VALUE_UNKNOWN;
  if (a->konst != b->konst) a->konst = NULL;
  if (a->origin != b->origin) a->origin = NULL;
}

/* ---- the engine ---- */

typedef struct engine {
  const dfx_graph *g;
  const dfx_shapes_opts *o;
  dfx_shapes *s;
  char *reached;              /* per node */
  char *fed;                  /* per node */
  char *widen;                /* per node: a loop Merge made unknown */
  int *order;                 /* nodes, topologically with back edges left out */
  dfx_shape_fn *fn;           /* per node, or NULL */
  const dfx_tinfo **in;       /* scratch: one node's inputs */
  dfx_tinfo *next;            /* scratch: one node's new outputs */
} engine;

static bool back_edge(const dfx_graph *g, int src, int dst) {
  return g->nodes[dst].ctrl == DFX_CTRL_MERGE && g->nodes[src].ctrl == DFX_CTRL_NEXT_ITERATION;
}

/* Kahn's algorithm over data edges, back edges left out; whatever a cycle
 * keeps out (finalize rejects such graphs) goes last in id order. */
static dfx_code topo_order(engine *e) {
  const dfx_graph *g = e->g;
  int n = g->n_nodes, head = 0, tail = 0;
  int *indeg = dfx__calloc((size_t)n + 1, sizeof(int));
  char *placed = dfx__calloc((size_t)n + 1, 1);
  if (!indeg || !placed) {
    dfx__free(indeg);
    dfx__free(placed);
    return DFX_ENOMEM;
  }
  for (int i = 0; i < n; i++)
    for (int k = 0; k < g->nodes[i].n_in; k++)
      if (!back_edge(g, g->nodes[i].in[k].node, i)) indeg[i]++;
  for (int i = 0; i < n; i++)
    if (indeg[i] == 0) e->order[tail++] = i, placed[i] = 1;
  while (head < tail) {
    const dfx_node *p = &g->nodes[e->order[head++]];
    for (int k = 0; k < p->n_edges; k++) {
      int d = p->edges[k].dst;
      if (p->edges[k].dst_slot < 0 || back_edge(g, p->id, d)) continue;
      if (--indeg[d] == 0 && !placed[d]) e->order[tail++] = d, placed[d] = 1;
    }
  }
  for (int i = 0; i < n && tail < n; i++)
    if (!placed[i]) e->order[tail++] = i;
  dfx__free(indeg);
  dfx__free(placed);
  return DFX_OK;
}

static void seed_const(const dfx_node *n, dfx_tinfo *out) {
  const dfx_tensor *t = dfx__attr_tensor(n, "value");
  if (!t || n->n_out < 1) return;
  out->shape = dfx__pshape_make(t->ndims, t->dims);
  out->konst = t;
  dfx_dtype dt = n->out_types[0];
  if ((dt == DFX_I32 || dt == DFX_I64) && t->dtype == dt && t->count <= DFX_SHAPE_VALUE_MAX) {
    out->n_val = (int)t->count;
    for (int64_t i = 0; i < t->count; i++) out->val[i] = dfx__tensor_get_i64(t, i);
  }
}

static dfx_pshape attr_pshape(const dfx_node *n, const char *name) {
  const dfx_shape *sh = dfx__attr_shape(n, name);
  return sh && sh->rank >= 0 ? dfx__pshape_make(sh->rank, sh->dims) : dfx__pshape_unknown();
}

static bool is_placeholder(const dfx_node *n) {
  return strcmp(n->op, "Placeholder") == 0 || strcmp(n->op, "PlaceholderV2") == 0;
}

/* A fed node's outputs: what the run may feed. A placeholder's feed is
 * checked against its shape attr; a PlaceholderWithDefault that a run may
 * leave unfed forwards its input instead; anything else fed can be any
 * tensor of its dtype. A given feed shape narrows it. */
static void seed_fed(const engine *e, const dfx_node *n, dfx_tinfo *out) {
  for (int k = 0; k < n->n_out; k++) {
    dfx_tinfo *t = &out[k];
    if (k == 0 && (is_placeholder(n) || strcmp(n->op, "PlaceholderWithDefault") == 0)) t->shape = attr_pshape(n, "shape");
    bool given = false;
    for (int f = 0; f < e->o->n_feeds; f++) {
      const dfx_shape_feed *fd = &e->o->feeds[f];
      if (fd->slot != k || strcmp(fd->node, n->name) != 0) continue;
      given = true;
      if (!dfx__pshape_merge(&t->shape, &fd->shape, &t->shape)) t->shape = fd->shape;
    }
    if (!given && k == 0 && strcmp(n->op, "PlaceholderWithDefault") == 0 && n->n_in == 1 && e->reached[n->in[0].node]) {
      const dfx_node *p = &e->g->nodes[n->in[0].node];
      int slot = n->in[0].slot;
      if (slot >= 0 && slot < p->n_out) dfx__pshape_relax(&t->shape, &e->s->out[e->s->first[p->id] + slot].shape);
      else t->shape = dfx__pshape_unknown();
    }
  }
}

/* Gathers node i's data inputs into e->in; false when one is not reached. */
static bool gather_inputs(engine *e, const dfx_node *n, bool any) {
  bool all = true, some = false;
  for (int k = 0; k < n->n_in; k++) {
    const dfx_node *p = &e->g->nodes[n->in[k].node];
    int slot = n->in[k].slot;
    if (!e->reached[p->id]) {
      e->in[k] = NULL;
      all = false;
      continue;
    }
    some = true;
    e->in[k] = slot >= 0 && slot < p->n_out ? &e->s->out[e->s->first[p->id] + slot] : &unknown_info;
  }
  return any ? some : all;
}

static void run_merge(engine *e, const dfx_node *n) {
  bool first = true;
  for (int k = 0; k < n->n_in; k++) {
    if (!e->in[k]) continue;
    if (first) e->next[0] = *e->in[k];
    else info_join(&e->next[0], e->in[k]);
    first = false;
  }
  if (n->n_out > 1) e->next[1].shape = dfx__pshape_scalar();
}

static void apply_hints(const dfx_node *n, dfx_tinfo *out) {
  const dfx_attr_list *l = dfx__attr_list(n, "_output_shapes");
  if (!l || l->kind != DFX_ATTR_SHAPE || l->n != n->n_out) return;
  for (int k = 0; k < n->n_out; k++) {
    const dfx_shape *h = &l->v.shape[k];
    if (h->rank < 0 || h->rank > DFX_MAX_DIMS) continue;
    dfx_pshape hs = dfx__pshape_make(h->rank, h->dims), m;
    if (dfx__pshape_merge(&out[k].shape, &hs, &m) && !dfx__pshape_equal(&m, &out[k].shape)) {
      out[k].shape = m;
      out[k].n_val = -1; /* the shape changed, so it had no value */
    }
  }
}

/* Recomputes node i; returns whether its facts changed. */
static bool visit(engine *e, int i) {
  const dfx_node *n = &e->g->nodes[i];
  for (int k = 0; k < n->n_out; k++) e->next[k] = unknown_info;
  if (e->fed[i]) {
    seed_fed(e, n, e->next);
  } else if (n->ctrl == DFX_CTRL_MERGE) {
    if (!gather_inputs(e, n, true)) return false;
    run_merge(e, n);
  } else {
    if (!gather_inputs(e, n, false)) return false;
    switch (n->ctrl) {
      case DFX_CTRL_SWITCH: /* every port forwards the data input; the untaken one is dead */
      case DFX_CTRL_ENTER:
      case DFX_CTRL_EXIT:
      case DFX_CTRL_NEXT_ITERATION:
      case DFX_CTRL_LOOP_COND:
        for (int k = 0; k < n->n_out && n->n_in > 0; k++) e->next[k] = *e->in[0];
        break;
      case DFX_CTRL_CONTROL_TRIGGER:
      case DFX_CTRL_MERGE:
      case DFX_CTRL_NONE:
      case DFX_CTRL_COUNT_:
        if (strcmp(n->op, "Const") == 0) {
          seed_const(n, e->next);
        } else if (is_placeholder(n)) {
          if (n->n_out > 0) e->next[0].shape = attr_pshape(n, "shape"); /* unfed: the run fails anyway */
        } else if (strcmp(n->op, "PlaceholderWithDefault") == 0) {
          if (n->n_out > 0 && n->n_in == 1) e->next[0] = *e->in[0];
        } else if (e->fn[i]) {
          dfx_shape_ctx c = {.node = n, .n_in = n->n_in, .in = e->in, .n_out = n->n_out, .out = e->next,
                           .hints = e->o->use_hints};
          e->fn[i](&c);
        }
        break;
    }
  }
  if (e->o->use_hints) apply_hints(n, e->next);
  if (e->widen[i] && n->n_out > 0) e->next[0] = unknown_info;
  dfx_tinfo *cur = &e->s->out[e->s->first[i]];
  bool changed = !e->reached[i];
  for (int k = 0; k < n->n_out && !changed; k++) changed = !info_equal(&cur[k], &e->next[k]);
  if (changed) memcpy(cur, e->next, sizeof *cur * (size_t)n->n_out);
  e->reached[i] = 1;
  return changed;
}

static bool run_rounds(engine *e, int max) {
  for (int r = 0; r < max; r++) {
    bool changed = false;
    e->s->rounds++;
    for (int j = 0; j < e->g->n_nodes; j++) changed |= visit(e, e->order[j]);
    if (!changed) return true;
  }
  return false;
}

static void settle(engine *e) {
  if (run_rounds(e, ROUNDS_BEFORE_WIDENING)) return;
  e->s->widened = true;
  for (int i = 0; i < e->g->n_nodes; i++) {
    const dfx_node *n = &e->g->nodes[i];
    for (int k = 0; n->ctrl == DFX_CTRL_MERGE && k < n->n_in; k++)
      if (back_edge(e->g, n->in[k].node, i)) e->widen[i] = 1;
  }
  if (run_rounds(e, ROUNDS_AFTER_WIDENING)) return;
  for (int j = 0; j < e->s->n_outputs; j++) e->s->out[j] = unknown_info;
}

static dfx_code setup(engine *e, const dfx_graph *g, const dfx_shapes_opts *o) {
  int n = g->n_nodes, max_in = 1, max_out = 1;
  dfx_shapes *s = e->s;
  s->n_nodes = n;
  if (!(s->first = dfx__malloc(sizeof(int) * ((size_t)n + 1)))) return DFX_ENOMEM;
  s->first[0] = 0;
  for (int i = 0; i < n; i++) {
    s->first[i + 1] = s->first[i] + g->nodes[i].n_out;
    if (g->nodes[i].n_in > max_in) max_in = g->nodes[i].n_in;
    if (g->nodes[i].n_out > max_out) max_out = g->nodes[i].n_out;
  }
  s->n_outputs = s->first[n];
  s->out = dfx__malloc(sizeof *s->out * ((size_t)s->n_outputs + 1));
  e->reached = dfx__calloc((size_t)n + 1, 1);
  e->fed = dfx__calloc((size_t)n + 1, 1);
  e->widen = dfx__calloc((size_t)n + 1, 1);
  e->order = dfx__malloc(sizeof(int) * ((size_t)n + 1));
  e->fn = dfx__calloc((size_t)n + 1, sizeof *e->fn);
  e->in = dfx__malloc(sizeof *e->in * (size_t)max_in);
  e->next = dfx__malloc(sizeof *e->next * (size_t)max_out);
  if (!s->out || !e->reached || !e->fed || !e->widen || !e->order || !e->fn || !e->in || !e->next) return DFX_ENOMEM;
  for (int j = 0; j < s->n_outputs; j++) s->out[j] = unknown_info;
  for (int f = 0; f < o->n_fed; f++) {
    int id = dfx__graph_find(g, o->fed[f], (size_t)-1);
    if (id >= 0) e->fed[id] = 1;
  }
  for (int f = 0; f < o->n_feeds; f++) {
    int id = dfx__graph_find(g, o->feeds[f].node, (size_t)-1);
    if (id >= 0) e->fed[id] = 1;
  }
  int n_fns;
  const dfx_shape_fn_def **table = table_new(&n_fns);
  if (!table) return DFX_ENOMEM;
  for (int i = 0; i < n; i++) e->fn[i] = table_find(table, n_fns, g->nodes[i].op);
  dfx__free(table);
  return topo_order(e);
}

dfx_code dfx__shapes_infer(const dfx_graph *g, const dfx_shapes_opts *o, dfx_shapes **out, dfx_status *st) {
  static const dfx_shapes_opts none = {0};
  *out = NULL;
  DFX_ASSERT(g->final);
  engine e = {.g = g, .o = o ? o : &none, .s = dfx__calloc(1, sizeof(dfx_shapes))};
  dfx_code rc = e.s ? setup(&e, g, e.o) : DFX_ENOMEM;
  if (rc == DFX_OK) {
    settle(&e);
    for (int j = 0; j < e.s->n_outputs; j++) e.s->n_known += dfx__pshape_known(&e.s->out[j].shape);
  }
  dfx__free(e.reached);
  dfx__free(e.fed);
  dfx__free(e.widen);
  dfx__free(e.order);
  dfx__free(e.fn);
  dfx__free(e.in);
  dfx__free(e.next);
  if (rc != DFX_OK) {
    dfx__shapes_free(e.s);
    return dfx__status_set(st, rc, "out of memory inferring shapes");
  }
  *out = e.s;
  return DFX_OK;
}

void dfx__shapes_free(dfx_shapes *s) {
  if (!s) return;
  dfx__free(s->first);
  dfx__free(s->out);
  dfx__free(s);
}

const dfx_tinfo *dfx__shapes_output(const dfx_shapes *s, int node, int slot) {
  if (!s || node < 0 || node >= s->n_nodes || slot < 0 || slot >= s->first[node + 1] - s->first[node]) return NULL;
  return &s->out[s->first[node] + slot];
}
