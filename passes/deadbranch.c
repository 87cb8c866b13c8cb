/* deadbranch.c - the `deadbranch` pass: a Switch whose predicate is a
 * constant always sends its data the same way (tf-semantics §2.2), so the
 * graph can say so. The live output's consumers read the data input
 * directly; everything that can only be dead goes (TensorFlow never runs
 * it, side effects included); a Merge left with one live input becomes an
 * Identity of it, its value_index a Const of that input's index.
 *
 * Constant predicate: a Const nobody feeds, read directly or through
 * Identities and is_constant Enters, where every input on the way (control
 * inputs too) is again such a constant: the predicate is then never dead
 * and the same in every iteration. A loop's
 * Switch reads a LoopCond and never qualifies; neither does a Switch in a
 * loop whose predicate varies by iteration.
 *
 * Static deadness (tf-semantics §2.4), from the dead output: a node other
 * than a Merge with a dead data or control input is dead, all its outputs
 * with it; a Merge is dead when all its data inputs are (its control
 * inputs only order it). The Switch is left alone when deadness would
 * reach a kept or fed node, a ControlTrigger (which turns dead into live),
 * an Enter, Exit, NextIteration or LoopCond (frame bookkeeping this pass
 * does not redo), or a Ref Merge.
 *
 * A Merge that stays a Merge (it is kept, so its value_index may be
 * fetched; it keeps control inputs, which a Merge ignores the deadness of
 * and an Identity would not; or several inputs stay live and value_index is
 * read) keeps its input slots: each dead one reads the Switch's dead output
 * instead, which the Switch (then kept) never produces. So the Merge's
 * value and value_index are exactly what they were.
 *
 * Frames: every node deadness reaches is in the Switch's frame (no Enter
 * or Exit on the way), so the rewired consumers, the Merges and the new
 * Consts (control input: the Merge turned Identity, which runs exactly when
 * the Merge did) stay in their frame and iteration. Constants of the live
 * branch keep their pivot Identity as control input; the pivot now reads
 * the data (for tf.cond's pivot Switch, the predicate) and still runs once
 * per iteration of the frame.
 *
 * In the default pipeline: exact for every kept output's value and
 * deadness, and it only removes work. It finalises the graph after each
 * Switch (so edges and frames are current for the next one) and repeats
 * until no Switch qualifies, which resolves nested conds in one run. */
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "pass.h"

typedef struct db {
  dfx_pass_ctx *c;
  int s;            /* the Switch */
  int live_slot;    /* its output that carries the data */
  int n_nodes;      /* nodes when resolving began (later ones are new and live) */
  char *dead;       /* per node: can only be dead */
  char *is_merge;   /* per node: a Merge deadness reached that is not dead */
  int *work, n_work;
  int *merges, n_merges;
  bool keep_switch; /* a Merge reads its dead output */
} db;

/* Whether node id yields the same value, live, in every iteration of its
 * frame: a Const, an Identity or an is_constant Enter (which delivers its
 * value to every iteration), nobody feeds, all of whose inputs, data and
 * control, are such nodes too. A branch constant under a pivot whose own
 * Switch this pass already resolved qualifies: that is how a nested cond's
 * predicate becomes constant. */
static bool always_live(const dfx_pass_ctx *c, int id, int depth) {
  const dfx_node *n = &c->g->nodes[id];
  if (depth > 64 || n->removed || dfx__pass_fed(c, n->name)) return false;
  bool konst = strcmp(n->op, "Const") == 0 && n->n_in == 0;
  bool ident = strcmp(n->op, "Identity") == 0 && n->n_in == 1;
  bool enter = n->ctrl == DFX_CTRL_ENTER && n->n_in == 1 && dfx__attr_bool(n, "is_constant", false);
  if (!konst && !ident && !enter) return false;
  for (int k = 0; k < n->n_in + n->n_ctrl; k++)
    if (!always_live(c, n->in[k].node, depth + 1)) return false;
  return true;
}

/* The constant predicate of Switch sw: 0 or 1, or -1 when it is not a
 * constant that is live whenever the Switch's data is. */
static int const_pred(const dfx_pass_ctx *c, const dfx_node *sw) {
  const dfx_graph *g = c->g;
  /* A control input could make the Switch dead; a feed replaces its outputs. */
  if (strcmp(sw->op, "Switch") != 0 || sw->n_in != 2 || sw->n_ctrl != 0 || sw->removed || dfx__pass_fed(c, sw->name))
    return -1;
  dfx_input in = sw->in[1];
  if (in.slot != 0 || !always_live(c, in.node, 0)) return -1;
  while (strcmp(g->nodes[in.node].op, "Const") != 0) in = g->nodes[in.node].in[0];
  const dfx_tensor *t = dfx__attr_tensor(&g->nodes[in.node], "value");
  if (!t || t->dtype != DFX_BOOL || t->ndims != 0) return -1;
  return *(const uint8_t *)t->data ? 1 : 0;
}

static bool port_dead(const db *d, dfx_input in) {
  if (in.node == d->s) return in.slot == 1 - d->live_slot;
  return in.node < d->n_nodes && d->dead[in.node] != 0;
}

/* Marks node id dead and queues its consumers; false when it must stay. */
static bool mark_dead(db *d, int id) {
  const dfx_node *n = &d->c->g->nodes[id];
  if (id == d->s || dfx__pass_keeps(d->c, n->name) || dfx__pass_fed(d->c, n->name)) return false;
  switch (n->ctrl) {
    case DFX_CTRL_ENTER: case DFX_CTRL_EXIT: case DFX_CTRL_NEXT_ITERATION:
    case DFX_CTRL_LOOP_COND: case DFX_CTRL_CONTROL_TRIGGER:
      return false;
    default:
      break;
  }
  d->dead[id] = 1;
  for (int e = 0; e < n->n_edges; e++) d->work[d->n_work++] = n->edges[e].dst;
  return true;
}

/* Propagates deadness from the Switch's dead output; false when the Switch
 * must be left alone (see top). */
static bool propagate(db *d) {
  const dfx_graph *g = d->c->g;
  const dfx_node *sw = &g->nodes[d->s];
  for (int e = 0; e < sw->n_edges; e++)
    if (sw->edges[e].src_slot == 1 - d->live_slot) d->work[d->n_work++] = sw->edges[e].dst;
  while (d->n_work > 0) {
    int id = d->work[--d->n_work];
    const dfx_node *n = &g->nodes[id];
    if (d->dead[id]) continue;
    bool all = n->n_in > 0, any = false;
    for (int k = 0; k < n->n_in + n->n_ctrl; k++) {
      bool dk = port_dead(d, n->in[k]);
      if (k < n->n_in) all &= dk;
      any |= dk;
    }
    if (n->ctrl == DFX_CTRL_MERGE) {
      if (strcmp(n->op, "Merge") != 0) return false;
      if (!all) {
        if (!d->is_merge[id]) d->merges[d->n_merges++] = id;
        d->is_merge[id] = 1;
        continue;
      }
    } else if (!any) {
      continue;
    }
    if (!mark_dead(d, id)) return false;
  }
  return true;
}

/* Adds Const(index) with ^m for the consumers of Merge m's value_index. */
static dfx_code value_index_const(db *d, int m, int32_t index) {
  dfx_graph *g = d->c->g;
  bool used = false;
  for (int e = 0; e < g->nodes[m].n_edges; e++)
    used |= g->nodes[m].edges[e].src_slot == 1 && !d->dead[g->nodes[m].edges[e].dst]; /* edges predate new nodes */
  if (!used) return DFX_OK;
  char base[256];
  snprintf(base, sizeof base, "%.200s/value_index", g->nodes[m].name);
  char *name = dfx__graph_unique_name(g, base);
  int id = name ? dfx__graph_add_node(g, name, "Const", d->c->st) : -1;
  dfx__free(name);
  dfx_tensor *t = id >= 0 ? dfx__tensor_scalar(DFX_I32, &index) : NULL;
  if (!t) return dfx__status_set(d->c->st, DFX_ENOMEM, "out of memory");
  dfx_attr value = {.name = "value", .kind = DFX_ATTR_TENSOR, .v.tensor = t};
  dfx_attr dtype = {.name = "dtype", .kind = DFX_ATTR_TYPE, .v.type = DFX_I32};
  dfx_code rc = dfx__graph_set_attr(g, id, &value, d->c->st);
  dfx_tensor_free(t);
  if (rc == DFX_OK) rc = dfx__graph_set_attr(g, id, &dtype, d->c->st);
  if (rc == DFX_OK) rc = dfx__graph_add_input(g, id, m, -1, d->c->st);
  if (rc != DFX_OK) return rc;
  dfx__graph_replace_uses(g, m, 1, id, 0);
  d->c->counts.added++;
  return DFX_OK;
}

typedef enum merge_fix { TO_IDENTITY, SHRINK, KEEP_SLOTS } merge_fix;

/* What becomes of Merge m, some of whose inputs are dead (see top). */
static merge_fix decide(const db *d, int m, int *live_k) {
  const dfx_node *n = &d->c->g->nodes[m];
  int n_live = 0, n_ctrl_live = 0;
  bool index_used = false;
  for (int k = 0; k < n->n_in; k++)
    if (!port_dead(d, n->in[k])) n_live++, *live_k = k;
  for (int k = n->n_in; k < n->n_in + n->n_ctrl; k++) n_ctrl_live += !port_dead(d, n->in[k]);
  for (int e = 0; e < n->n_edges; e++) index_used |= n->edges[e].src_slot == 1 && !d->dead[n->edges[e].dst];
  bool kept = dfx__pass_keeps(d->c, n->name);
  if (!kept && n_live == 1 && n_ctrl_live == 0) return TO_IDENTITY;
  if (!kept && !index_used) return SHRINK;
  return KEEP_SLOTS;
}

/* Whether resolving the Switch would change nothing: its live output is
 * unused, nothing is dead, and every Merge its dead output reaches keeps
 * its slots and reads that output already (the dead input a kept Merge is
 * given, below). */
static bool nothing_to_do(const db *d) {
  const dfx_graph *g = d->c->g;
  const dfx_node *sw = &g->nodes[d->s];
  for (int e = 0; e < sw->n_edges; e++)
    if (sw->edges[e].src_slot == d->live_slot) return false;
  for (int i = 0; i < g->n_nodes; i++)
    if (d->dead[i]) return false;
  for (int q = 0; q < d->n_merges; q++) {
    int live_k;
    const dfx_node *n = &g->nodes[d->merges[q]];
    if (decide(d, d->merges[q], &live_k) != KEEP_SLOTS) return false;
    for (int k = 0; k < n->n_in + n->n_ctrl; k++)
      if (port_dead(d, n->in[k]) && (n->in[k].node != d->s || k >= n->n_in)) return false;
  }
  return true;
}

/* A port of the Merge's dtype that is never produced: the Switch's dead
 * output when the types agree, else the dead output of a new Switch of the
 * Merge's first live input on the same predicate (same frame, never
 * produced; this pass then leaves it alone, see nothing_to_do). */
static dfx_code dead_source(db *d, int m, dfx_input *out) {
  dfx_graph *g = d->c->g;
  dfx_dtype t = dfx__attr_type(&g->nodes[m], "T", DFX_INVALID);
  int dead_slot = 1 - d->live_slot;
  if (g->nodes[d->s].out_types[dead_slot] == t) {
    d->keep_switch = true;
    *out = (dfx_input){d->s, dead_slot};
    return DFX_OK;
  }
  dfx_input live = {-1, -1}, pred = g->nodes[d->s].in[1];
  for (int k = 0; k < g->nodes[m].n_in && live.node < 0; k++)
    if (!port_dead(d, g->nodes[m].in[k])) live = g->nodes[m].in[k];
  char base[256];
  snprintf(base, sizeof base, "%.200s/dead_input", g->nodes[m].name);
  char *name = dfx__graph_unique_name(g, base);
  int id = name ? dfx__graph_add_node(g, name, "Switch", d->c->st) : -1;
  dfx__free(name);
  if (id < 0) return dfx__status_set(d->c->st, DFX_ENOMEM, "out of memory");
  dfx_attr ta = {.name = "T", .kind = DFX_ATTR_TYPE, .v.type = t};
  dfx_code rc = dfx__graph_set_attr(g, id, &ta, d->c->st);
  if (rc == DFX_OK) rc = dfx__graph_add_input(g, id, live.node, live.slot, d->c->st);
  if (rc == DFX_OK) rc = dfx__graph_add_input(g, id, pred.node, pred.slot, d->c->st);
  d->c->counts.added++;
  *out = (dfx_input){id, dead_slot};
  return rc;
}

static dfx_code fix_merge(db *d, int m) {
  dfx_graph *g = d->c->g;
  int live_k = -1;
  merge_fix fix = decide(d, m, &live_k);
  dfx_code rc = DFX_OK;
  /* Control inputs from dead nodes go in every case: they only ordered it. */
  for (int k = g->nodes[m].n_in + g->nodes[m].n_ctrl - 1; k >= g->nodes[m].n_in; k--)
    if (port_dead(d, g->nodes[m].in[k])) dfx__graph_remove_input(g, m, k);
  if (fix == TO_IDENTITY) {
    dfx_node *n = &g->nodes[m];
    dfx_input live = n->in[live_k];
    dfx_dtype t = dfx__attr_type(n, "T", DFX_INVALID);
    while (n->n_in > 0) dfx__graph_remove_input(g, m, 0);
    while (n->n_attrs > 0) dfx__graph_remove_attr(g, m, n->attrs[0].name);
    dfx_attr ta = {.name = "T", .kind = DFX_ATTR_TYPE, .v.type = t};
    rc = dfx__graph_set_op(g, m, "Identity", d->c->st);
    if (rc == DFX_OK) rc = dfx__graph_set_attr(g, m, &ta, d->c->st);
    if (rc == DFX_OK) rc = dfx__graph_add_input(g, m, live.node, live.slot, d->c->st);
    if (rc == DFX_OK) rc = value_index_const(d, m, live_k);
  } else if (fix == SHRINK) {
    int n_live = 0;
    for (int k = g->nodes[m].n_in - 1; k >= 0; k--)
      if (port_dead(d, g->nodes[m].in[k])) dfx__graph_remove_input(g, m, k);
      else n_live++;
    dfx_attr na = {.name = "N", .kind = DFX_ATTR_I, .v.i = n_live};
    rc = dfx__graph_set_attr(g, m, &na, d->c->st);
  } else {
    dfx_input src = {-1, -1};
    for (int k = 0; k < g->nodes[m].n_in && rc == DFX_OK; k++) {
      if (!port_dead(d, g->nodes[m].in[k])) continue;
      if (src.node < 0) rc = dead_source(d, m, &src);
      if (rc == DFX_OK) dfx__graph_set_input(g, m, k, src.node, src.slot);
    }
  }
  d->c->counts.rewritten++;
  return rc;
}

/* Resolves Switch s if it can; *done says whether it did. */
static dfx_code resolve(db *d, int s, int value, bool *done) {
  dfx_graph *g = d->c->g;
  *done = false;
  d->s = s;
  d->live_slot = value;
  d->n_work = d->n_merges = 0;
  d->keep_switch = false;
  d->n_nodes = g->n_nodes;
  memset(d->dead, 0, (size_t)g->n_nodes);
  memset(d->is_merge, 0, (size_t)g->n_nodes);
  if (!propagate(d) || nothing_to_do(d)) return DFX_OK;
  dfx_input data = g->nodes[s].in[0];
  dfx__graph_replace_uses(g, s, value, data.node, data.slot);
  int n_nodes = g->n_nodes; /* the nodes fix_merge adds are live */
  for (int q = 0; q < d->n_merges; q++) {
    if (d->dead[d->merges[q]]) continue; /* all its inputs turned out dead */
    dfx_code rc = fix_merge(d, d->merges[q]);
    if (rc != DFX_OK) return rc;
  }
  for (int i = 0; i < n_nodes; i++)
    if (d->dead[i]) {
      dfx__graph_remove_node(g, i);
      d->c->counts.removed++;
    }
  bool ctrl_used = false;
  for (int e = 0; e < g->nodes[s].n_edges; e++) ctrl_used |= g->nodes[s].edges[e].dst_slot < 0;
  if (d->keep_switch || ctrl_used || dfx__pass_keeps(d->c, g->nodes[s].name)) {
    d->c->counts.rewritten++;
  } else {
    dfx__graph_remove_node(g, s);
    d->c->counts.removed++;
  }
  *done = true;
  return DFX_OK;
}

static bool seen(char **names, int n, const char *name) {
  for (int i = 0; i < n; i++)
    if (strcmp(names[i], name) == 0) return true;
  return false;
}

static dfx_code deadbranch_run(dfx_pass_ctx *c) {
  dfx_graph *g = c->g;
  char **tried = NULL; /* Switches looked at in this run (ids change as the graph compacts) */
  int n_tried = 0, cap_tried = 0;
  db d = {.c = c};
  dfx_code rc = DFX_OK;
  for (bool again = true; again && rc == DFX_OK;) {
    again = false;
    size_t n = (size_t)g->n_nodes + 1, n_edges = 1;
    for (int i = 0; i < g->n_nodes; i++) n_edges += (size_t)g->nodes[i].n_edges;
    d.dead = dfx__malloc(n);
    d.is_merge = dfx__malloc(n);
    d.work = dfx__malloc(sizeof(int) * n_edges); /* each node queues its consumers once */
    d.merges = dfx__malloc(sizeof(int) * n);
    if (!d.dead || !d.is_merge || !d.work || !d.merges) rc = dfx__status_set(c->st, DFX_ENOMEM, "out of memory");
    for (int i = 0; i < g->n_nodes && rc == DFX_OK && !again; i++) {
      const dfx_node *sw = &g->nodes[i];
      int value = const_pred(c, sw);
      if (value < 0 || seen(tried, n_tried, sw->name)) continue;
      if (n_tried == cap_tried) {
        cap_tried = cap_tried ? cap_tried * 2 : 8;
        char **nt = dfx__realloc(tried, sizeof *nt * (size_t)cap_tried);
        if (!nt) {
          rc = dfx__status_set(c->st, DFX_ENOMEM, "out of memory");
          break;
        }
        tried = nt;
      }
      if (!(tried[n_tried] = dfx__strdup(sw->name))) {
        rc = dfx__status_set(c->st, DFX_ENOMEM, "out of memory");
        break;
      }
      n_tried++;
      rc = resolve(&d, i, value, &again);
    }
    dfx__free(d.dead);
    dfx__free(d.is_merge);
    dfx__free(d.work);
    dfx__free(d.merges);
    /* The next Switch needs current edges and frames. */
    if (again && rc == DFX_OK && (rc = dfx__graph_finalize(g, c->st)) != DFX_OK && rc != DFX_ENOMEM)
      rc = DFX_EINTERNAL;
  }
  for (int i = 0; i < n_tried; i++) dfx__free(tried[i]);
  dfx__free(tried);
  return rc;
}

const dfx_pass dfx__pass_deadbranch = {
    .name = "deadbranch",
    .purpose = "resolve Switches with a constant predicate: the live side reads the data, the dead side goes",
    .run = deadbranch_run,
    .in_default = true,
};
