/* flow.c - laying out a flow graph (flow.h): frame-local input slots, the
 * initial pending counts of tf-semantics §2.4 (their encoding is a control
 * rule: control.c), roots, and the consumer facts copied into each edge. */
#include "flow.h"

#include "alloc.h"
#include "control.h"

dfx_code dfx__flow_add_edge(dfx_flow *f, int src, int dst, int src_slot, int dst_slot) {
  dfx_fnode *s = &f->nodes[src];
  /* Capacity is the next power of two at or above n_edges: no field kept. */
  int n = s->n_edges;
  if (n == 0 || (n & (n - 1)) == 0) {
    int nc = n ? n * 2 : 2;
    dfx_fedge *ne = dfx__realloc(s->edges, sizeof *ne * (size_t)nc);
    if (!ne) return DFX_ENOMEM;
    s->edges = ne;
  }
  s->edges[s->n_edges++] = (dfx_fedge){.dst = dst, .src_slot = src_slot, .dst_slot = dst_slot};
  return DFX_OK;
}

void dfx__flow_clear(dfx_flow *f) {
  for (int i = 0; i < f->n_nodes; i++) dfx__free(f->nodes[i].edges);
  for (int i = 0; i < f->n_frames; i++) dfx__free(f->frames[i].pending_init);
  dfx__free(f->nodes);
  dfx__free(f->frames);
  dfx__free(f->roots);
  *f = (dfx_flow){0};
}

bool dfx__flow_trivial(const dfx_fnode *n) {
  if (n->observed) return false;
  switch (n->ctrl) {
    case DFX_CTRL_MERGE: return !n->merge_index_used;
    case DFX_CTRL_SWITCH: return !n->is_switch_n && n->n_in == 2 && n->n_out == 2;
    case DFX_CTRL_LOOP_COND: return n->n_in == 1 && n->n_out == 1;
    case DFX_CTRL_NONE: break;
    default: return false;
  }
  if (n->n_out != 1) return false;
  if (n->move == DFX_MOVE_CONST) return n->n_in == 0;
  return n->move == DFX_MOVE_FORWARD && n->n_in == 1;
}

/* Marks the last data edge reading each output slot: only that edge may
 * move the tensor into its consumer (tf-semantics §3.1 is_last). */
static void mark_last_edges(dfx_fnode *n) {
  for (int e = n->n_edges - 1; e >= 0; e--) {
    if (n->edges[e].src_slot < 0) continue;
    bool later = false;
    for (int e2 = e + 1; e2 < n->n_edges && !later; e2++) later = n->edges[e2].src_slot == n->edges[e].src_slot;
    n->edges[e].is_last = !later;
  }
}

/* Copies what activation needs about each edge's consumer into the edge. */
static void fill_edge_facts(dfx_flow *f) {
  for (int i = 0; i < f->n_nodes; i++) {
    mark_last_edges(&f->nodes[i]);
    for (int e = 0; e < f->nodes[i].n_edges; e++) {
      dfx_fedge *fe = &f->nodes[i].edges[e];
      const dfx_fnode *dst = &f->nodes[fe->dst];
      fe->dst_local = dst->local;
      fe->dst_input = fe->dst_slot < 0 ? -1 : dst->input_start + fe->dst_slot;
      fe->dst_n_in = dst->n_in;
      fe->dst_kind = dst->ctrl == DFX_CTRL_MERGE             ? DFX_DST_MERGE
                     : dst->ctrl == DFX_CTRL_CONTROL_TRIGGER ? DFX_DST_TRIGGER
                     : dst->ctrl == DFX_CTRL_EXIT            ? DFX_DST_EXIT
                                                             : DFX_DST_PLAIN;
      fe->dst_observed = dst->observed;
      fe->dst_trivial = dfx__flow_trivial(dst);
    }
  }
}

dfx_code dfx__flow_layout(dfx_flow *f, dfx_status *st) {
  int32_t *in_count = dfx__calloc((size_t)f->n_nodes + 1, sizeof(int32_t));
  int32_t *ctrl_count = dfx__calloc((size_t)f->n_nodes + 1, sizeof(int32_t));
  if (!in_count || !ctrl_count || !(f->roots = dfx__calloc((size_t)f->n_nodes + 1, sizeof(int)))) {
    dfx__free(in_count);
    dfx__free(ctrl_count);
    return dfx__status_set(st, DFX_ENOMEM, "out of memory");
  }
  for (int i = 0; i < f->n_nodes; i++)
    for (int e = 0; e < f->nodes[i].n_edges; e++) {
      const dfx_fedge *fe = &f->nodes[i].edges[e];
      if (fe->dst_slot < 0) ctrl_count[fe->dst]++;
      else in_count[fe->dst]++;
    }
  f->n_roots = 0;
  f->n_dead_slots = 0;
  for (int i = 0; i < f->n_nodes; i++) {
    dfx_fnode *n = &f->nodes[i];
    dfx_fframe *fr = &f->frames[n->frame];
    n->local = fr->n_local++;
    n->input_start = fr->total_inputs;
    fr->total_inputs += n->n_in;
    if (n->ctrl == DFX_CTRL_ENTER) f->frames[n->child_frame].n_enters++;
    n->pending_init = dfx__ctrl_pending_init(n->ctrl, in_count[i], ctrl_count[i]);
    if (n->pending_init == 0 && n->frame == 0) f->roots[f->n_roots++] = i;
    n->dead_slot = n->ctrl == DFX_CTRL_EXIT && n->observed ? f->n_dead_slots++ : -1;
  }
  dfx__free(in_count);
  dfx__free(ctrl_count);
  for (int fi = 0; fi < f->n_frames; fi++)
    if (!(f->frames[fi].pending_init = dfx__calloc((size_t)f->frames[fi].n_local + 1, sizeof(int32_t))))
      return dfx__status_set(st, DFX_ENOMEM, "out of memory");
  for (int i = 0; i < f->n_nodes; i++) f->frames[f->nodes[i].frame].pending_init[f->nodes[i].local] = f->nodes[i].pending_init;
  fill_edge_facts(f);
  return DFX_OK;
}
