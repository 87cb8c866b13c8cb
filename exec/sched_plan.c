/* sched_plan.c - pruning and plan construction (tf-semantics §2.8, §3.1).
 * Keeps only the nodes that fetches and targets reach backwards through data
 * and control edges; a fed port replaces its producer on the edges that read
 * it. Then lays out frame-local input slots and initial pending counts. */
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "plan.h"
#include "status.h"

void dfx__plan_free(dfx_plan *p) {
  if (!p) return;
  for (int i = 0; i < p->n_nodes; i++) {
    dfx__free(p->nodes[i].edges);
    dfx__free(p->nodes[i].fetch_slots);
  }
  for (int i = 0; i < p->n_frames; i++) dfx__free(p->frames[i].pending_init);
  dfx__free(p->nodes);
  dfx__free(p->frames);
  dfx__free(p->roots);
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

static int child_frame_of(const dfx_graph *g, const dfx_node *n) {
  const char *name = dfx__attr_str(n, "frame_name", "");
  for (int f = 0; f < g->n_frames; f++)
    if (strcmp(g->frames[f].name, name) == 0) return f;
  return 0;
}

/* The frame a node's outputs live in: an Enter's are in the frame it enters,
 * an Exit's in the enclosing frame (tf-semantics §2.5). */
static int output_frame(const dfx_graph *g, const dfx_node *n) {
  if (n->ctrl == DFX_CTRL_ENTER) return child_frame_of(g, n);
  if (n->ctrl == DFX_CTRL_EXIT) return g->frames[n->frame].parent;
  return n->frame;
}

/* Index of the feed for (node, slot), or -1. */
static int feed_of(const int *feed_node, const int *feed_slot, int n_feeds, int node, int slot) {
  for (int i = 0; i < n_feeds; i++)
    if (feed_node[i] == node && feed_slot[i] == slot) return i;
  return -1;
}

/* ---- "did you mean" for unknown names ---- */

#define SUGGEST_MAX_LEN 128

/* Edit distance (insert, delete, substitute) between a and b, both at most
 * SUGGEST_MAX_LEN bytes long; two rows on the stack. */
static int edit_distance(const char *a, size_t la, const char *b, size_t lb) {
  int row[2][SUGGEST_MAX_LEN + 1];
  for (size_t j = 0; j <= lb; j++) row[0][j] = (int)j;
  for (size_t i = 1; i <= la; i++) {
    int *prev = row[(i - 1) & 1], *cur = row[i & 1];
    cur[0] = (int)i;
    for (size_t j = 1; j <= lb; j++) {
      int best = prev[j - 1] + (a[i - 1] != b[j - 1]);
      if (prev[j] + 1 < best) best = prev[j] + 1;
      if (cur[j - 1] + 1 < best) best = cur[j - 1] + 1;
      cur[j] = best;
    }
  }
  return row[la & 1][lb];
}

/* Writes " (did you mean 'x'?)" into buf for the node name closest to
 * `name`, or "" when none is within a third of the name's length (at least
 * 2 edits). Only runs on the error path, so a linear scan is fine. */
static const char *suggest_name(const dfx_graph *g, const char *name, char *buf, size_t n) {
  size_t len = strlen(name);
  buf[0] = 0;
  if (len > SUGGEST_MAX_LEN) return buf;
  int best = -1, best_d = (int)(len / 3 > 2 ? len / 3 : 2) + 1;
  for (int i = 0; i < g->n_nodes; i++) {
    size_t l = strlen(g->nodes[i].name);
    if (l > SUGGEST_MAX_LEN || (l > len ? l - len : len - l) >= (size_t)best_d) continue;
    int d = edit_distance(name, len, g->nodes[i].name, l);
    if (d < best_d) best_d = d, best = i;
  }
  if (best >= 0) snprintf(buf, n, " (did you mean '%s'?)", g->nodes[best].name);
  return buf;
}

static dfx_code port_node(const dfx_graph *g, const dfx_port *p, const char *what, int *id, dfx_status *st) {
  if (!p->node) return dfx__status_set(st, DFX_EINVAL, "%s has a NULL node name", what);
  *id = dfx__graph_find(g, p->node, (size_t)-1);
  char hint[SUGGEST_MAX_LEN + 32];
  if (*id < 0)
    return dfx__status_set(st, DFX_ENOTFOUND, "%s '%s:%d': no node named '%s' in the graph%s", what, p->node, p->index,
                           p->node, suggest_name(g, p->node, hint, sizeof hint));
  const dfx_node *n = &g->nodes[*id];
  if (p->index < 0 || p->index >= n->n_out)
    return dfx__status_set(st, DFX_EINVAL, "%s '%s:%d': node '%s' (%s) has %d output%s", what, p->node, p->index,
                           n->name, n->op, n->n_out, n->n_out == 1 ? "" : "s");
  return DFX_OK;
}

typedef struct {
  const dfx_graph *g;
  dfx_plan *p;
  int *pid;        /* graph id -> plan id, -1 if pruned */
  int *feed_node;  /* graph id of each feed */
  int *feed_slot;
  int n_feeds;
  int *feed_pid;   /* plan id of each feed node */
} builder;

static dfx_code prune(builder *b, const int *fetch_ids, const dfx_port *fetches, int n_fetches, const int *target_ids,
                      int n_targets, char *needed, dfx_status *st) {
  const dfx_graph *g = b->g;
  int *stack = dfx__malloc(sizeof(int) * ((size_t)g->n_nodes + 1));
  if (!stack) return dfx__status_set(st, DFX_ENOMEM, "out of memory");
  int sp = 0;
  for (int i = 0; i < n_fetches; i++)
    if (feed_of(b->feed_node, b->feed_slot, b->n_feeds, fetch_ids[i], fetches[i].index) < 0 && !needed[fetch_ids[i]]) {
      needed[fetch_ids[i]] = 1;
      stack[sp++] = fetch_ids[i];
    }
  for (int i = 0; i < n_targets; i++)
    if (!needed[target_ids[i]]) {
      needed[target_ids[i]] = 1;
      stack[sp++] = target_ids[i];
    }
  while (sp > 0) {
    const dfx_node *n = &g->nodes[stack[--sp]];
    for (int k = 0; k < n->n_in + n->n_ctrl; k++) {
      int u = n->in[k].node;
      if (n->in[k].slot >= 0 && feed_of(b->feed_node, b->feed_slot, b->n_feeds, u, n->in[k].slot) >= 0) continue;
      if (!needed[u]) {
        needed[u] = 1;
        stack[sp++] = u;
      }
    }
  }
  dfx__free(stack);
  return DFX_OK;
}

static dfx_code add_edge(dfx_pnode *src, dfx_pedge e, int *cap) {
  if (src->n_edges == *cap) {
    int nc = *cap ? *cap * 2 : 4;
    dfx_pedge *ne = dfx__realloc(src->edges, sizeof *ne * (size_t)nc);
    if (!ne) return DFX_ENOMEM;
    src->edges = ne;
    *cap = nc;
  }
  src->edges[src->n_edges++] = e;
  return DFX_OK;
}

/* Consumer edges in plan form: graph edges between kept nodes, minus reads of
 * fed ports, plus edges from feed nodes. Data edges precede control edges. */
static dfx_code build_edges(builder *b, dfx_status *st) {
  const dfx_graph *g = b->g;
  dfx_plan *p = b->p;
  int *cap = dfx__calloc((size_t)p->n_nodes + 1, sizeof(int));
  if (!cap) return dfx__status_set(st, DFX_ENOMEM, "out of memory");
  for (int pass = 0; pass < 2; pass++) {
    for (int v = 0; v < g->n_nodes; v++) {
      if (b->pid[v] < 0) continue;
      const dfx_node *n = &g->nodes[v];
      for (int k = 0; k < n->n_in + n->n_ctrl; k++) {
        bool ctrl = n->in[k].slot < 0;
        if (ctrl != (pass == 1)) continue;
        int u = n->in[k].node, slot = n->in[k].slot;
        int f = ctrl ? -1 : feed_of(b->feed_node, b->feed_slot, b->n_feeds, u, slot);
        int src = f >= 0 ? b->feed_pid[f] : b->pid[u];
        dfx_pedge e = {.dst = b->pid[v], .src_slot = f >= 0 ? 0 : slot, .dst_slot = ctrl ? -1 : k};
        if (add_edge(&p->nodes[src], e, &cap[src]) != DFX_OK) {
          dfx__free(cap);
          return dfx__status_set(st, DFX_ENOMEM, "out of memory");
        }
      }
    }
  }
  dfx__free(cap);
  /* Mark the last data edge of each output slot. */
  for (int i = 0; i < p->n_nodes; i++) {
    dfx_pnode *pn = &p->nodes[i];
    for (int e = pn->n_edges - 1; e >= 0; e--) {
      if (pn->edges[e].src_slot < 0) continue;
      bool later = false;
      for (int e2 = e + 1; e2 < pn->n_edges; e2++)
        if (pn->edges[e2].src_slot == pn->edges[e].src_slot) later = true;
      pn->edges[e].is_last = !later;
    }
  }
  return DFX_OK;
}

/* Frame-local slots and initial pending counts (tf-semantics §2.4). */
static dfx_code layout_frames(builder *b, dfx_status *st) {
  const dfx_graph *g = b->g;
  dfx_plan *p = b->p;
  if (!(p->frames = dfx__calloc((size_t)g->n_frames, sizeof(dfx_pframe)))) return dfx__status_set(st, DFX_ENOMEM, "out of memory");
  p->n_frames = g->n_frames;
  for (int f = 0; f < g->n_frames; f++) {
    p->frames[f].name = g->frames[f].name;
    p->frames[f].parent = g->frames[f].parent;
    p->frames[f].parallel_iterations = g->frames[f].parallel_iterations > 0 ? g->frames[f].parallel_iterations : 1;
  }
  int32_t *in_count = dfx__calloc((size_t)p->n_nodes + 1, sizeof(int32_t));
  int32_t *ctrl_count = dfx__calloc((size_t)p->n_nodes + 1, sizeof(int32_t));
  if (!in_count || !ctrl_count) {
    dfx__free(in_count);
    dfx__free(ctrl_count);
    return dfx__status_set(st, DFX_ENOMEM, "out of memory");
  }
  for (int i = 0; i < p->n_nodes; i++)
    for (int e = 0; e < p->nodes[i].n_edges; e++) {
      const dfx_pedge *pe = &p->nodes[i].edges[e];
      if (pe->dst_slot < 0) ctrl_count[pe->dst]++;
      else in_count[pe->dst]++;
    }
  for (int i = 0; i < p->n_nodes; i++) {
    dfx_pnode *n = &p->nodes[i];
    dfx_pframe *f = &p->frames[n->frame];
    n->local = f->n_local++;
    n->input_start = f->total_inputs;
    f->total_inputs += n->n_in;
    if (n->ctrl == DFX_CTRL_ENTER) p->frames[n->child_frame].n_enters++;
    n->pending_init = n->ctrl == DFX_CTRL_MERGE ? 1 + 2 * ctrl_count[i] : in_count[i] + ctrl_count[i];
  }
  dfx__free(in_count);
  dfx__free(ctrl_count);
  for (int f = 0; f < p->n_frames; f++)
    if (!(p->frames[f].pending_init = dfx__calloc((size_t)p->frames[f].n_local + 1, sizeof(int32_t))))
      return dfx__status_set(st, DFX_ENOMEM, "out of memory");
  for (int i = 0; i < p->n_nodes; i++) p->frames[p->nodes[i].frame].pending_init[p->nodes[i].local] = p->nodes[i].pending_init;
  return DFX_OK;
}

/* A node the propagator may run in place (frames/propagate.c,
 * settle_trivial): no fetch reads it, and it only moves tensors: a Switch, a
 * Merge whose value_index nobody reads, a LoopCond, a constant, or an op
 * forwarding its one input. */
static bool trivial(const dfx_pnode *n) {
  if (n->n_fetch_slots || n->feed >= 0) return false;
  if (n->ctrl == DFX_CTRL_MERGE) return !n->merge_index_used;
  if (n->ctrl == DFX_CTRL_SWITCH) return !n->is_switch_n && n->n_in == 2 && n->n_out == 2;
  if (n->ctrl == DFX_CTRL_LOOP_COND) return n->n_in == 1 && n->n_out == 1;
  if (n->ctrl != DFX_CTRL_NONE || n->n_out != 1) return false;
  if (n->kflags & DFX_KERNEL_STATE_VALUE) return n->n_in == 0;
  return (n->kflags & DFX_KERNEL_FORWARD) && n->n_in == 1;
}

/* Copies what propagation needs about each edge's consumer into the edge
 * (after layout and fetches are known). */
static void fill_edge_facts(dfx_plan *p) {
  for (int i = 0; i < p->n_nodes; i++)
    for (int e = 0; e < p->nodes[i].n_edges; e++) {
      dfx_pedge *pe = &p->nodes[i].edges[e];
      const dfx_pnode *dst = &p->nodes[pe->dst];
      pe->dst_local = dst->local;
      pe->dst_input = pe->dst_slot < 0 ? -1 : dst->input_start + pe->dst_slot;
      pe->dst_n_in = dst->n_in;
      pe->dst_kind = dst->ctrl == DFX_CTRL_MERGE             ? DFX_DST_MERGE
                     : dst->ctrl == DFX_CTRL_CONTROL_TRIGGER ? DFX_DST_TRIGGER
                     : dst->ctrl == DFX_CTRL_EXIT            ? DFX_DST_EXIT
                                                             : DFX_DST_PLAIN;
      pe->dst_fetched = dst->n_fetch_slots > 0;
      pe->dst_trivial = trivial(dst);
    }
}


dfx_code dfx__plan_build(const dfx_graph *g, const dfx_kernel_def *const *kernels, void *const *kstate,
                         const dfx_port *feeds, int n_feeds, const dfx_port *fetches, int n_fetches,
                         const char *const *targets, int n_targets, dfx_plan **out, dfx_status *st) {
  *out = NULL;
  dfx_code c = DFX_OK;
  builder b = {.g = g, .n_feeds = n_feeds};
  int *fetch_ids = NULL, *target_ids = NULL;
  char *needed = NULL;
  dfx_plan *p = dfx__calloc(1, sizeof *p);
  size_t nn = (size_t)g->n_nodes + 1;
  b.p = p;
  if (!p || !(b.pid = dfx__malloc(sizeof(int) * nn)) || !(needed = dfx__calloc(nn, 1)) ||
      !(b.feed_node = dfx__calloc((size_t)n_feeds + 1, sizeof(int))) ||
      !(b.feed_slot = dfx__calloc((size_t)n_feeds + 1, sizeof(int))) ||
      !(b.feed_pid = dfx__calloc((size_t)n_feeds + 1, sizeof(int))) ||
      !(fetch_ids = dfx__calloc((size_t)n_fetches + 1, sizeof(int))) ||
      !(target_ids = dfx__calloc((size_t)n_targets + 1, sizeof(int)))) {
    c = dfx__status_set(st, DFX_ENOMEM, "out of memory");
    goto fail;
  }
  p->n_feeds = n_feeds;
  p->n_fetches = n_fetches;
  p->n_targets = n_targets;
  for (int i = 0; i < n_feeds; i++) {
    if ((c = port_node(g, &feeds[i], "feed", &b.feed_node[i], st)) != DFX_OK) goto fail;
    b.feed_slot[i] = feeds[i].index;
    if (feed_of(b.feed_node, b.feed_slot, i, b.feed_node[i], b.feed_slot[i]) >= 0) {
      c = dfx__status_set(st, DFX_EINVAL, "feed '%s:%d' is given twice", feeds[i].node, feeds[i].index);
      goto fail;
    }
    int ff = output_frame(g, &g->nodes[b.feed_node[i]]);
    if (ff != 0) {
      c = dfx__status_set(st, DFX_EINVAL, "feed '%s:%d': cannot feed a tensor inside while-loop frame '%s'",
                          feeds[i].node, feeds[i].index, g->frames[ff].name);
      goto fail;
    }
  }
  for (int i = 0; i < n_fetches; i++) {
    if ((c = port_node(g, &fetches[i], "fetch", &fetch_ids[i], st)) != DFX_OK) goto fail;
    int fr = output_frame(g, &g->nodes[fetch_ids[i]]);
    if (fr != 0) {
      c = dfx__status_set(st, DFX_EINVAL,
                          "fetch '%s:%d': node '%s' is inside while-loop frame '%s'; only tensors outside loops (e.g. "
                          "an Exit) can be fetched",
                          fetches[i].node, fetches[i].index, fetches[i].node, g->frames[fr].name);
      goto fail;
    }
  }
  for (int i = 0; i < n_targets; i++) {
    if (!targets[i] || (target_ids[i] = dfx__graph_find(g, targets[i], (size_t)-1)) < 0) {
      char hint[SUGGEST_MAX_LEN + 32] = "";
      c = dfx__status_set(st, DFX_ENOTFOUND, "target '%s': no such node%s", targets[i] ? targets[i] : "(null)",
                          targets[i] ? suggest_name(g, targets[i], hint, sizeof hint) : "");
      goto fail;
    }
    int tf = output_frame(g, &g->nodes[target_ids[i]]);
    if (tf != 0 && g->nodes[target_ids[i]].frame != 0) {
      c = dfx__status_set(st, DFX_EINVAL, "target '%s' is inside while-loop frame '%s'", targets[i],
                          g->frames[tf].name);
      goto fail;
    }
  }
  if ((c = prune(&b, fetch_ids, fetches, n_fetches, target_ids, n_targets, needed, st)) != DFX_OK) goto fail;
  /* A feed nobody reads still gets a node, so fetching a fed port works. */
  int count = n_feeds;
  for (int i = 0; i < g->n_nodes; i++) count += needed[i];
  if (!(p->nodes = dfx__calloc((size_t)count + 1, sizeof(dfx_pnode)))) {
    c = dfx__status_set(st, DFX_ENOMEM, "out of memory");
    goto fail;
  }
  for (int i = 0; i < g->n_nodes; i++) {
    b.pid[i] = -1;
    if (!needed[i]) continue;
    const dfx_node *n = &g->nodes[i];
    dfx_pnode *pn = &p->nodes[p->n_nodes];
    b.pid[i] = pn->id = p->n_nodes++;
    pn->g = n;
    pn->name = n->name;
    pn->op = n->op;
    pn->frame = n->frame;
    pn->n_in = n->n_in;
    pn->n_out = n->n_out;
    pn->ctrl = n->ctrl;
    pn->feed = -1;
    pn->is_switch_n = strcmp(n->op, "_SwitchN") == 0;
    if (n->ctrl == DFX_CTRL_ENTER) {
      pn->is_constant_enter = dfx__attr_bool(n, "is_constant", false);
      pn->child_frame = child_frame_of(g, n);
    }
    if (n->ctrl == DFX_CTRL_NONE) {
      pn->kernel = kernels[i];
      pn->kstate = kstate[i];
      if (!pn->kernel) {
        c = dfx__status_set(st, DFX_EUNIMPL, "node '%s' (%s): no kernel for this op", n->name, n->op);
        goto fail;
      }
    }
    pn->inline_ok = n->ctrl != DFX_CTRL_NONE || (pn->kernel->flags & DFX_KERNEL_CHEAP);
    pn->kflags = pn->kernel ? (uint8_t)pn->kernel->flags : 0;
  }
  for (int i = 0; i < n_feeds; i++) {
    dfx_pnode *pn = &p->nodes[p->n_nodes];
    b.feed_pid[i] = pn->id = p->n_nodes++;
    pn->name = g->nodes[b.feed_node[i]].name; /* the graph outlives the plan; the caller's string may not */
    pn->op = "(feed)";
    pn->n_out = 1;
    pn->feed = i;
    pn->inline_ok = true;
  }
  if ((c = build_edges(&b, st)) != DFX_OK || (c = layout_frames(&b, st)) != DFX_OK) goto fail;
  if (!(p->cost_ns = dfx__calloc((size_t)p->n_nodes + 1, sizeof(int64_t))) ||
      !(p->roots = dfx__calloc((size_t)p->n_nodes + 1, sizeof(int))) ||
      !(p->fetches = dfx__calloc((size_t)n_fetches + 1, sizeof(dfx_pfetch))) ||
      !(p->targets = dfx__calloc((size_t)n_targets + 1, sizeof(int)))) {
    c = dfx__status_set(st, DFX_ENOMEM, "out of memory");
    goto fail;
  }
  for (int i = 0; i < p->n_nodes; i++) {
    if (p->nodes[i].pending_init == 0 && p->nodes[i].frame == 0) p->roots[p->n_roots++] = i;
    p->cost_ns[i] = p->nodes[i].inline_ok ? 0 : DFX_INITIAL_COST_NS;
  }
  for (int i = 0; i < n_fetches; i++) {
    int f = feed_of(b.feed_node, b.feed_slot, n_feeds, fetch_ids[i], fetches[i].index);
    p->fetches[i] = f >= 0 ? (dfx_pfetch){b.feed_pid[f], 0} : (dfx_pfetch){b.pid[fetch_ids[i]], fetches[i].index};
    dfx_pnode *pn = &p->nodes[p->fetches[i].node];
    int *nf = dfx__realloc(pn->fetch_slots, sizeof(int) * 2 * (size_t)(pn->n_fetch_slots + 1));
    if (!nf) {
      c = dfx__status_set(st, DFX_ENOMEM, "out of memory");
      goto fail;
    }
    pn->fetch_slots = nf;
    nf[2 * pn->n_fetch_slots] = p->fetches[i].slot;
    nf[2 * pn->n_fetch_slots + 1] = i;
    pn->n_fetch_slots++;
  }
  for (int i = 0; i < n_targets; i++) p->targets[i] = b.pid[target_ids[i]];
  /* Like recent TF, a Merge makes value_index only when someone reads it. */
  for (int i = 0; i < p->n_nodes; i++) {
    dfx_pnode *pn = &p->nodes[i];
    for (int e = 0; e < pn->n_edges; e++) pn->merge_index_used |= pn->edges[e].src_slot == 1;
    for (int k = 0; k < pn->n_fetch_slots; k++) pn->merge_index_used |= pn->fetch_slots[2 * k] == 1;
  }
  fill_edge_facts(p);
  if (!(p->key = dfx__plan_key(feeds, n_feeds, fetches, n_fetches, targets, n_targets))) {
    c = dfx__status_set(st, DFX_ENOMEM, "out of memory");
    goto fail;
  }
  *out = p;
  p = NULL;
fail:
  dfx__plan_free(p);
  dfx__free(b.pid);
  dfx__free(needed);
  dfx__free(b.feed_node);
  dfx__free(b.feed_slot);
  dfx__free(b.feed_pid);
  dfx__free(fetch_ids);
  dfx__free(target_ids);
  return c;
}
