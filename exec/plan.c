/* plan.c - building a plan (plan.h) for one signature, in two halves:
 * select (check the ports, prune the graph to what the fetches and targets
 * need: graph/prune.c), then, once the session has the kernels of the
 * needed nodes, build (one node per feed, every kept node described to the
 * flow graph, what propagation may do with it, and to the executor, its
 * kernel and fetches; frames/flow.c lays the flow out). */
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "plan.h"
#include "policy.h"

void dfx__plan_free(dfx_plan *p) {
  if (!p) return;
  if (p->kernels)
    for (int i = 0; i < p->graph->n_nodes; i++)
      if (p->kernels[i] && p->kernels[i]->fini && p->kstate[i]) p->kernels[i]->fini(p->kstate[i]);
  dfx__free(p->kernels);
  dfx__free(p->kstate);
  dfx_graph_free(p->owned_graph);
  if (p->nodes)
    for (int i = 0; i < p->flow.n_nodes; i++) dfx__free(p->nodes[i].fetch_slots);
  dfx__flow_clear(&p->flow);
  dfx__free(p->nodes);
  dfx__free(p->fetches);
  dfx__free(p->targets);
  dfx__free(p->cost_ns);
  dfx__free(p->key);
  dfx__free(p);
}

char *dfx__plan_key(const dfx_port *feeds, int n_feeds, const dfx_port *fetches, int n_fetches,
                    const char *const *targets, int n_targets) {
  size_t len = 16;
  for (int i = 0; i < n_feeds; i++) len += strlen(feeds[i].node) + 16;
  for (int i = 0; i < n_fetches; i++) len += strlen(fetches[i].node) + 16;
  for (int i = 0; i < n_targets; i++) len += strlen(targets[i]) + 4;
  char *k = dfx__malloc(len);
  if (!k) return NULL;
  size_t o = 0;
  for (int i = 0; i < n_feeds; i++) o += (size_t)snprintf(k + o, len - o, "%s:%d,", feeds[i].node, feeds[i].index);
  o += (size_t)snprintf(k + o, len - o, "|");
  for (int i = 0; i < n_fetches; i++) o += (size_t)snprintf(k + o, len - o, "%s:%d,", fetches[i].node, fetches[i].index);
  o += (size_t)snprintf(k + o, len - o, "|");
  for (int i = 0; i < n_targets; i++) o += (size_t)snprintf(k + o, len - o, "%s,", targets[i]);
  return k;
}

/* The frame a node's outputs live in: an Enter's are in the frame it enters,
 * an Exit's in the enclosing frame (tf-semantics §2.5). */
static int output_frame(const dfx_graph *g, const dfx_node *n) {
  if (n->ctrl == DFX_CTRL_ENTER) return n->child_frame;
  if (n->ctrl == DFX_CTRL_EXIT) return g->frames[n->frame].parent;
  return n->frame;
}

/* Index of the feed for (node, slot), or -1. */
static int feed_of(const dfx_graph_port *feeds, int n_feeds, int node, int slot) {
  for (int i = 0; i < n_feeds; i++)
    if (feeds[i].node == node && feeds[i].slot == slot) return i;
  return -1;
}

static dfx_code port_node(const dfx_graph *g, const dfx_port *p, const char *what, int *id, dfx_status *st) {
  if (!p->node) return dfx__status_set(st, DFX_EINVAL, "%s has a NULL node name", what);
  *id = dfx__graph_find(g, p->node, (size_t)-1);
  char hint[DFX_SUGGEST_MAX];
  if (*id < 0)
    return dfx__status_set(st, DFX_ENOTFOUND, "%s '%s:%d': no node named '%s' in the graph%s", what, p->node, p->index,
                           p->node, dfx__graph_suggest(g, p->node, hint, sizeof hint));
  const dfx_node *n = &g->nodes[*id];
  if (!n->def && p->index >= n->n_out)
    return dfx__status_set(st, DFX_EUNIMPL, "%s '%s:%d': node '%s' has op %s, which neither dfexec nor TensorFlow "
                           "knows, so its outputs are unknown", what, p->node, p->index, n->name, n->op);
  if (p->index < 0 || p->index >= n->n_out)
    return dfx__status_set(st, DFX_EINVAL, "%s '%s:%d': node '%s' (%s) has %d output%s", what, p->node, p->index,
                           n->name, n->op, n->n_out, n->n_out == 1 ? "" : "s");
  return DFX_OK;
}

/* Resolves feeds, fetches and targets to graph ids, with the checks that
 * only a run can make: nothing inside a loop frame can be fed or fetched. */
static dfx_code resolve_ports(const dfx_graph *g, const dfx_port *feeds, int n_feeds, const dfx_port *fetches,
                              int n_fetches, const char *const *targets, int n_targets, dfx_graph_port *feed_ids,
                              dfx_graph_port *fetch_ids, int *target_ids, dfx_status *st) {
  dfx_code c;
  for (int i = 0; i < n_feeds; i++) {
    if ((c = port_node(g, &feeds[i], "feed", &feed_ids[i].node, st)) != DFX_OK) return c;
    feed_ids[i].slot = feeds[i].index;
    if (feed_of(feed_ids, i, feed_ids[i].node, feed_ids[i].slot) >= 0)
      return dfx__status_set(st, DFX_EINVAL, "feed '%s:%d' is given twice", feeds[i].node, feeds[i].index);
    int ff = output_frame(g, &g->nodes[feed_ids[i].node]);
    if (ff != 0)
      return dfx__status_set(st, DFX_EINVAL, "feed '%s:%d': cannot feed a tensor inside while-loop frame '%s'",
                             feeds[i].node, feeds[i].index, g->frames[ff].name);
  }
  for (int i = 0; i < n_fetches; i++) {
    if ((c = port_node(g, &fetches[i], "fetch", &fetch_ids[i].node, st)) != DFX_OK) return c;
    fetch_ids[i].slot = fetches[i].index;
    int fr = output_frame(g, &g->nodes[fetch_ids[i].node]);
    if (fr != 0)
      return dfx__status_set(st, DFX_EINVAL,
                             "fetch '%s:%d': node '%s' is inside while-loop frame '%s'; only tensors outside loops "
                             "(e.g. an Exit) can be fetched",
                             fetches[i].node, fetches[i].index, fetches[i].node, g->frames[fr].name);
  }
  for (int i = 0; i < n_targets; i++) {
    if (!targets[i] || (target_ids[i] = dfx__graph_find(g, targets[i], (size_t)-1)) < 0) {
      char hint[DFX_SUGGEST_MAX] = "";
      return dfx__status_set(st, DFX_ENOTFOUND, "target '%s': no such node%s", targets[i] ? targets[i] : "(null)",
                             targets[i] ? dfx__graph_suggest(g, targets[i], hint, sizeof hint) : "");
    }
    const dfx_node *n = &g->nodes[target_ids[i]];
    int tf = output_frame(g, n);
    /* A partition's _Send is the exception: it runs in every iteration of
     * its frame, and the partitioned run names it as a target (TF runs a
     * partition whole). */
    if (tf != 0 && n->frame != 0 && strcmp(n->op, "_Send") != 0)
      return dfx__status_set(st, DFX_EINVAL, "target '%s' is inside while-loop frame '%s'", targets[i],
                             g->frames[tf].name);
  }
  return DFX_OK;
}

/* Describes graph node n as plan node i: to the flow (what it is, where it
 * lives, what propagation may do with it) and to the executor. */
static dfx_code describe_node(dfx_plan *p, int i, const dfx_node *n, const dfx_kernel_def *kernel, void *kstate,
                              dfx_status *st) {
  dfx_fnode *f = &p->flow.nodes[i];
  dfx_pnode *x = &p->nodes[i];
  f->name = n->name;
  f->op = n->op;
  f->frame = n->frame;
  f->n_in = n->n_in;
  f->n_out = n->n_out;
  f->ctrl = n->ctrl;
  f->is_switch_n = strcmp(n->op, "_SwitchN") == 0;
  if (n->ctrl == DFX_CTRL_ENTER) {
    f->is_constant_enter = dfx__attr_bool(n, "is_constant", false);
    f->child_frame = n->child_frame;
  }
  x->g = n;
  x->feed = -1;
  if (n->ctrl == DFX_CTRL_NONE) {
    if (!kernel) return dfx__status_set(st, DFX_EUNIMPL, "node '%s' (%s): no kernel for this op", n->name, n->op);
    x->kernel = kernel;
    x->kstate = kstate;
    /* Kernels whose only effect is to forward inputs or hand out their
     * state are moves the propagator can make itself. */
    if (kernel->flags & DFX_KERNEL_STATE_VALUE) {
      f->move = DFX_MOVE_CONST;
      f->const_value = kstate;
    } else if (kernel->flags & DFX_KERNEL_FORWARD) {
      f->move = DFX_MOVE_FORWARD;
    }
  }
  x->inline_ok = dfx__policy_always_inline(f, x);
  return DFX_OK;
}

/* Consumer edges in flow form: graph edges between kept nodes, minus reads
 * of fed ports, plus edges from feed nodes. Data edges precede control
 * edges on every producer (two passes). */
static dfx_code build_edges(const dfx_graph *g, dfx_plan *p, const int *pid, const dfx_graph_port *feeds,
                            const int *feed_pid, int n_feeds, dfx_status *st) {
  for (int pass = 0; pass < 2; pass++)
    for (int v = 0; v < g->n_nodes; v++) {
      if (pid[v] < 0) continue;
      const dfx_node *n = &g->nodes[v];
      for (int k = 0; k < n->n_in + n->n_ctrl; k++) {
        bool ctrl = n->in[k].slot < 0;
        if (ctrl != (pass == 1)) continue;
        int u = n->in[k].node, slot = n->in[k].slot;
        int f = ctrl ? -1 : feed_of(feeds, n_feeds, u, slot);
        int src = f >= 0 ? feed_pid[f] : pid[u];
        if (dfx__flow_add_edge(&p->flow, src, pid[v], f >= 0 ? 0 : slot, ctrl ? -1 : k) != DFX_OK)
          return dfx__status_set(st, DFX_ENOMEM, "out of memory");
      }
    }
  return DFX_OK;
}

/* Records which plan node serves each fetch, and marks what a run must see
 * with its own eyes (observed nodes are never settled in place). */
static dfx_code attach_fetches(dfx_plan *p, const dfx_graph_port *fetch_ids, const dfx_graph_port *feed_ids,
                               const int *feed_pid, int n_feeds, const int *pid, dfx_status *st) {
  for (int i = 0; i < p->n_fetches; i++) {
    int f = feed_of(feed_ids, n_feeds, fetch_ids[i].node, fetch_ids[i].slot);
    p->fetches[i] = f >= 0 ? (dfx_pfetch){feed_pid[f], 0} : (dfx_pfetch){pid[fetch_ids[i].node], fetch_ids[i].slot};
    dfx_pnode *x = &p->nodes[p->fetches[i].node];
    int *nf = dfx__realloc(x->fetch_slots, sizeof(int) * 2 * (size_t)(x->n_fetch_slots + 1));
    if (!nf) return dfx__status_set(st, DFX_ENOMEM, "out of memory");
    x->fetch_slots = nf;
    nf[2 * x->n_fetch_slots] = p->fetches[i].slot;
    nf[2 * x->n_fetch_slots + 1] = i;
    x->n_fetch_slots++;
    p->flow.nodes[p->fetches[i].node].observed = true;
  }
  /* Like recent TF, a Merge makes value_index only when someone reads it. */
  for (int i = 0; i < p->flow.n_nodes; i++) {
    dfx_fnode *fn = &p->flow.nodes[i];
    if (fn->ctrl != DFX_CTRL_MERGE) continue;
    for (int e = 0; e < fn->n_edges; e++) fn->merge_index_used |= fn->edges[e].src_slot == 1;
    for (int k = 0; k < p->nodes[i].n_fetch_slots; k++) fn->merge_index_used |= p->nodes[i].fetch_slots[2 * k] == 1;
  }
  return DFX_OK;
}

void dfx__plan_select_free(dfx_plan_sel *sel) {
  dfx__free(sel->feeds);
  dfx__free(sel->fetches);
  dfx__free(sel->targets);
  dfx__free(sel->needed);
  dfx__free(sel->via);
  memset(sel, 0, sizeof *sel);
}

dfx_code dfx__plan_select(const dfx_graph *g, const dfx_port *feeds, int n_feeds, const dfx_port *fetches,
                          int n_fetches, const char *const *targets, int n_targets, dfx_plan_sel *sel,
                          dfx_status *st) {
  memset(sel, 0, sizeof *sel);
  sel->n_feeds = n_feeds;
  sel->n_fetches = n_fetches;
  sel->n_targets = n_targets;
  size_t nn = (size_t)g->n_nodes + 1;
  dfx_code c;
  if (!(sel->feeds = dfx__calloc((size_t)n_feeds + 1, sizeof *sel->feeds)) ||
      !(sel->fetches = dfx__calloc((size_t)n_fetches + 1, sizeof *sel->fetches)) ||
      !(sel->targets = dfx__calloc((size_t)n_targets + 1, sizeof(int))) || !(sel->needed = dfx__calloc(nn, 1)) ||
      !(sel->via = dfx__malloc(sizeof(int) * nn))) {
    c = dfx__status_set(st, DFX_ENOMEM, "out of memory");
    goto fail;
  }
  if ((c = resolve_ports(g, feeds, n_feeds, fetches, n_fetches, targets, n_targets, sel->feeds, sel->fetches,
                         sel->targets, st)) != DFX_OK ||
      (c = dfx__graph_prune_mark(g, sel->fetches, n_fetches, sel->targets, n_targets, sel->feeds, n_feeds, sel->needed,
                                 sel->via, st)) != DFX_OK)
    goto fail;
  return DFX_OK;
fail:
  dfx__plan_select_free(sel);
  return c;
}

/* Ops that bring data into a graph from outside (tf.data iterators,
 * queues, readers): graphs are often frozen with them in place and fed
 * past them, so an error about one suggests feeding its outputs. */
static bool is_input_op(const char *op) {
  static const char *const ops[] = {"IteratorGetNext", "IteratorGetNextSync", "IteratorGetNextAsOptional",
                                    "QueueDequeue", "QueueDequeueV2", "QueueDequeueMany", "QueueDequeueManyV2",
                                    "QueueDequeueUpTo", "QueueDequeueUpToV2", "ReaderRead", "ReaderReadV2", NULL};
  for (int i = 0; ops[i]; i++)
    if (strcmp(op, ops[i]) == 0) return true;
  return false;
}

void dfx__plan_explain(const dfx_graph *g, const dfx_plan_sel *sel, int id, dfx_status *st) {
  /* Walk the consumers from the node up to the fetch or target that needed
   * it, keeping the first hops of the path and noting any data-input op
   * passed on the way. */
  enum { SHOWN = 8 };
  int path[SHOWN], hops = 0, v = id, input_op = is_input_op(g->nodes[id].op) ? id : -1;
  for (int steps = 0; steps < g->n_nodes && sel->via[v] >= 0; steps++) {
    v = sel->via[v];
    if (input_op < 0 && is_input_op(g->nodes[v].op)) input_op = v;
    if (hops < SHOWN) path[hops] = v;
    hops++;
  }
  int slot = -1;
  for (int i = 0; i < sel->n_fetches && slot < 0; i++)
    if (sel->fetches[i].node == v) slot = sel->fetches[i].slot;
  if (slot >= 0) dfx__status_append(st, "; needed for fetch '%s:%d'", g->nodes[v].name, slot);
  else dfx__status_append(st, "; needed for target '%s'", g->nodes[v].name);
  if (hops > 0) {
    /* The node, the nodes between (at most SHOWN - 1 of them), the end. */
    int between = hops - 1, shown = between < SHOWN - 1 ? between : SHOWN - 1;
    dfx__status_append(st, " (path: '%s'", g->nodes[id].name);
    for (int i = 0; i < shown; i++) dfx__status_append(st, " -> '%s'", g->nodes[path[i]].name);
    dfx__status_append(st, "%s -> '%s')", between > shown ? " -> ..." : "", g->nodes[v].name);
  }
  if (input_op >= 0)
    dfx__status_append(st, ". '%s' (%s) reads input data from outside the graph: feed '%s:0' instead to leave it out",
                       g->nodes[input_op].name, g->nodes[input_op].op, g->nodes[input_op].name);
}

/* Kernels of the nodes the selection needs (TensorFlow looks kernels up
 * only for what a run executes, after pruning), looked up and initialised
 * into the plan. A missing kernel is an error only here, and names the
 * node, its op and why the run needs it. */
static dfx_code resolve_kernels(dfx_plan *p, const dfx_plan_sel *sel, const dfx_registry *reg, dfx_status *st) {
  const dfx_graph *g = p->graph;
  for (int i = 0; i < g->n_nodes; i++) {
    const dfx_node *n = &g->nodes[i];
    if (!sel->needed[i] || (n->ctrl != DFX_CTRL_NONE && n->def)) continue;
    dfx_status kst;
    dfx__status_clear(&kst);
    const dfx_kernel_def *k = n->def ? dfx__registry_kernel_for(reg, n, &kst)
                                     : (dfx__status_set(&kst, DFX_EUNIMPL, "op %s is not known to dfexec or "
                                                        "TensorFlow", n->op), NULL);
    if (k && k->init) {
      dfx__status_clear(&kst);
      if (k->init(n, &p->kstate[i], &kst) != DFX_OK) k = NULL;
    }
    if (!k) {
      dfx_code c = dfx__status_set(st, kst.code, "node '%s' (%s): %s", n->name, n->op,
                                   kst.msg[0] ? kst.msg : dfx_code_name(kst.code));
      dfx__plan_explain(g, sel, i, st);
      return c;
    }
    p->kernels[i] = k;
  }
  return DFX_OK;
}

dfx_code dfx__plan_build(const dfx_graph *g, dfx_graph *owned, const dfx_plan_sel *sel, const dfx_registry *reg,
                         const char *key, dfx_plan **out, dfx_status *st) {
  *out = NULL;
  dfx_code c = DFX_OK;
  const int n_feeds = sel->n_feeds, n_fetches = sel->n_fetches, n_targets = sel->n_targets;
  const dfx_graph_port *feed_ids = sel->feeds, *fetch_ids = sel->fetches;
  const char *needed = sel->needed;
  dfx_plan *p = dfx__calloc(1, sizeof *p);
  int *pid = dfx__malloc(sizeof(int) * ((size_t)g->n_nodes + 1)), *feed_pid = dfx__calloc((size_t)n_feeds + 1, sizeof(int));
  if (!p) {
    dfx_graph_free(owned);
    dfx__free(pid);
    dfx__free(feed_pid);
    return dfx__status_set(st, DFX_ENOMEM, "out of memory");
  }
  p->graph = g;
  p->owned_graph = owned;
  if (!pid || !feed_pid || !(p->key = dfx__strdup(key)) ||
      !(p->kernels = dfx__calloc((size_t)g->n_nodes + 1, sizeof *p->kernels)) ||
      !(p->kstate = dfx__calloc((size_t)g->n_nodes + 1, sizeof *p->kstate))) {
    c = dfx__status_set(st, DFX_ENOMEM, "out of memory");
    goto fail;
  }
  if ((c = resolve_kernels(p, sel, reg, st)) != DFX_OK) goto fail;
  p->n_feeds = n_feeds;
  p->n_fetches = n_fetches;
  p->n_targets = n_targets;
  /* A feed nobody reads still gets a node, so fetching a fed port works. */
  int count = n_feeds;
  for (int i = 0; i < g->n_nodes; i++) count += needed[i];
  if (!(p->flow.nodes = dfx__calloc((size_t)count + 1, sizeof(dfx_fnode))) ||
      !(p->nodes = dfx__calloc((size_t)count + 1, sizeof(dfx_pnode))) ||
      !(p->flow.frames = dfx__calloc((size_t)g->n_frames, sizeof(dfx_fframe)))) {
    c = dfx__status_set(st, DFX_ENOMEM, "out of memory");
    goto fail;
  }
  p->flow.n_nodes = count;
  p->flow.n_frames = g->n_frames;
  for (int f = 0; f < g->n_frames; f++) {
    p->flow.frames[f].name = g->frames[f].name;
    p->flow.frames[f].parent = g->frames[f].parent;
    p->flow.frames[f].parallel_iterations = g->frames[f].parallel_iterations > 0 ? g->frames[f].parallel_iterations : 1;
  }
  int next = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    pid[i] = -1;
    if (!needed[i]) continue;
    pid[i] = next++;
    if ((c = describe_node(p, pid[i], &g->nodes[i], p->kernels[i], p->kstate[i], st)) != DFX_OK) goto fail;
  }
  for (int i = 0; i < n_feeds; i++) {
    int k = feed_pid[i] = next++;
    dfx_fnode *f = &p->flow.nodes[k];
    /* The graph outlives the plan; the caller's string may not. */
    f->name = g->nodes[feed_ids[i].node].name;
    f->op = "(feed)";
    f->n_out = 1;
    f->observed = true; /* the executor hands out its value */
    p->nodes[k].feed = i;
    p->nodes[k].inline_ok = true;
  }
  if (!(p->cost_ns = dfx__calloc((size_t)count + 1, sizeof(int64_t))) ||
      !(p->fetches = dfx__calloc((size_t)n_fetches + 1, sizeof(dfx_pfetch))) ||
      !(p->targets = dfx__calloc((size_t)n_targets + 1, sizeof(int)))) {
    c = dfx__status_set(st, DFX_ENOMEM, "out of memory");
    goto fail;
  }
  if ((c = build_edges(g, p, pid, feed_ids, feed_pid, n_feeds, st)) != DFX_OK ||
      (c = attach_fetches(p, fetch_ids, feed_ids, feed_pid, n_feeds, pid, st)) != DFX_OK ||
      (c = dfx__flow_layout(&p->flow, st)) != DFX_OK)
    goto fail;
  for (int i = 0; i < count; i++) p->cost_ns[i] = dfx__policy_initial_cost(&p->nodes[i]);
  for (int i = 0; i < n_targets; i++) p->targets[i] = pid[sel->targets[i]];
  *out = p;
  p = NULL;
fail:
  dfx__plan_free(p);
  dfx__free(pid);
  dfx__free(feed_pid);
  return c;
}
