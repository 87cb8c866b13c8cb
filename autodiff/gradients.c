/* gradients.c - the backward walk of reverse-mode differentiation, as
 * TensorFlow 1's tf.gradients does it:
 *
 *  1. reached: nodes reachable from the xs forward along tensors that can
 *     carry a gradient (float and complex dtypes);
 *  2. between: the reached nodes from which some y is reachable backwards;
 *  3. pending[v]: how many data edges from `between` consumers into v still
 *     have to deliver their gradient;
 *  4. nodes are processed when their pending count reaches zero (reverse
 *     topological order): the gradients each output received are summed
 *     (AddN), the op's gradient function emits the input gradients, and
 *     these are handed to the producers.
 *
 * Invariant: a node's gradient function runs at most once, after every
 * consumer on a path to a y has contributed, so aggregation sees all
 * contributions. Only nodes that existed before the walk (id < n_fwd) are
 * walked; the consumer edges read are those of the final input graph. */
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "dtype.h"
#include "grad.h"
#include "grad_control.h"
#include "gradients.h"
#include "walk.h"

static bool backprop_dtype(dfx_dtype t) {
  return t == DFX_F32 || t == DFX_F64 || t == DFX_F16 || t == DFX_BF16 || t == DFX_C64 || t == DFX_C128;
}

static dfx_code oom(dfx_status *st) { return dfx__status_set(st, DFX_ENOMEM, "out of memory computing gradients"); }

static dfx_code add_grad(walk *w, gp t, gp grad) {
  if (!w->grads[t.node]) {
    int n_out = w->g->nodes[t.node].n_out;
    if (!(w->grads[t.node] = dfx__calloc((size_t)n_out + 1, sizeof(glist)))) return oom(w->e.st);
  }
  glist *l = &w->grads[t.node][t.slot];
  if (l->n == l->cap) {
    int cap = l->cap ? l->cap * 2 : 2;
    gp *v = dfx__realloc(l->v, sizeof(gp) * (size_t)cap);
    if (!v) return oom(w->e.st);
    l->v = v;
    l->cap = cap;
  }
  l->v[l->n++] = grad;
  return DFX_OK;
}

/* The summed gradient of tensor t (GP_NONE when nothing arrived); the sum
 * replaces the list so later readers (an x, say) reuse it. */
static gp aggregate(walk *w, gp t) {
  glist *l = w->grads[t.node] ? &w->grads[t.node][t.slot] : NULL;
  if (!l || l->n == 0) return GP_NONE;
  if (l->n == 1) return l->v[0];
  gp sum = em_addn(&w->e, l->v, l->n);
  if (!gp_ok(sum)) return GP_NONE;
  l->v[0] = sum;
  l->n = 1;
  return sum;
}

static void set_scope(walk *w, const char *node_name) {
  snprintf(w->scope, sizeof w->scope, "%s/%s_grad/", w->prefix, node_name);
  w->e.scope = w->scope;
}

/* Forward marking from the xs along differentiable outputs. */
static dfx_code mark_reached(walk *w, const dfx_graph_port *xs, int n_xs) {
  int *stack = dfx__malloc(sizeof(int) * ((size_t)w->n_fwd + 1));
  if (!stack) return oom(w->e.st);
  int top = 0;
  for (int i = 0; i < n_xs; i++)
    if (!w->reached[xs[i].node]) w->reached[xs[i].node] = 1, stack[top++] = xs[i].node;
  while (top) {
    const dfx_node *n = &w->g->nodes[stack[--top]];
    for (int k = 0; k < n->n_edges; k++) {
      const dfx_edge *ed = &n->edges[k];
      if (ed->dst_slot < 0 || !backprop_dtype(n->out_types[ed->src_slot]) || w->reached[ed->dst]) continue;
      w->reached[ed->dst] = 1;
      stack[top++] = ed->dst;
    }
  }
  dfx__free(stack);
  return DFX_OK;
}

/* Backward marking from the ys through reached producers, then the pending
 * counts of the between nodes. */
static dfx_code mark_between(walk *w, const dfx_graph_port *ys, int n_ys) {
  int *stack = dfx__malloc(sizeof(int) * ((size_t)w->n_fwd + 1));
  if (!stack) return oom(w->e.st);
  int top = 0;
  for (int i = 0; i < n_ys; i++)
    if (w->reached[ys[i].node] && !w->between[ys[i].node]) w->between[ys[i].node] = 1, stack[top++] = ys[i].node;
  while (top) {
    const dfx_node *n = &w->g->nodes[stack[--top]];
    for (int k = 0; k < n->n_in; k++) {
      int p = n->in[k].node;
      if (!w->reached[p] || w->between[p]) continue;
      w->between[p] = 1;
      stack[top++] = p;
    }
  }
  /* A loop variable whose Exit no y reads still carries the gradient of
   * the others around the loop: its Exit joins with a zero gradient. */
  for (int v = 0; v < w->n_fwd; v++) {
    const dfx_node *n = &w->g->nodes[v];
    if (n->ctrl != DFX_CTRL_EXIT || w->between[v] || !w->reached[v] || !backprop_dtype(n->out_types[0])) continue;
    if (w->between[n->in[0].node] && dfx__is_loop_switch(w->g, n->in[0].node)) w->between[v] = 2;
  }
  for (int v = 0; v < w->n_fwd; v++) {
    if (!w->between[v]) continue;
    const dfx_node *n = &w->g->nodes[v];
    for (int k = 0; k < n->n_in; k++) {
      int p = n->in[k].node;
      if (!w->between[p]) continue;
      if (n->in[k].slot == 1 && dfx__is_loop_switch(w->g, p))
        w->pending1[p]++;
      else
        w->pending[p]++;
    }
  }
  dfx__free(stack);
  return DFX_OK;
}

/* The node a pop of this gradient inherits its liveness from: the
 * producer of the first gradient, through an Identity when that is a
 * Switch (a Switch's control output is live on both sides). */
static int live_node(walk *w, const gp *dy, int n_out) {
  for (int k = 0; k < n_out; k++) {
    if (!gp_ok(dy[k])) continue;
    if (w->g->nodes[dy[k].node].ctrl != DFX_CTRL_SWITCH) return dy[k].node;
    gp (*remap)(void *, gp) = w->e.remap;
    w->e.remap = NULL;
    gp id = em_ident(&w->e, dy[k]);
    w->e.remap = remap;
    return id.node;
  }
  return -1;
}

/* Sets the emitter up for differentiating a node of forward frame f: in a
 * loop, forward values are remapped into the backward frame and constants
 * hang off the backward loop's pivot. */
static dfx_code enter_context(walk *w, int f) {
  w->cur_frame = f;
  w->cur_live = -1;
  if (f <= 0) {
    w->e.remap = NULL;
    w->e.ctrl = -1;
    return DFX_OK;
  }
  loopst *L = dfx__loop_get(w, f);
  if (!L) return w->e.err != DFX_OK ? w->e.err : em_fail(&w->e, DFX_EINTERNAL, "gradients: no loop for frame %d", f);
  w->e.remap = dfx__loop_remap;
  w->e.remap_ud = w;
  w->e.ctrl = L->b_ident;
  return DFX_OK;
}

/* The gradient function of a control-flow node (a closed set: a switch). */
typedef void (*walk_fn)(walk *w, int v, const gp *dy, gp *dx);
static void via_emit_cond_switch(walk *w, int v, const gp *dy, gp *dx) { dfx__grad_cond_switch(&w->e, v, dy, dx); }
static void via_emit_cond_merge(walk *w, int v, const gp *dy, gp *dx) { dfx__grad_cond_merge(&w->e, v, dy, dx); }
static void grad_next_iteration(walk *w, int v, const gp *dy, gp *dx) { dx[0] = em_ident(&w->e, dy[0]); }

static walk_fn control_fn(walk *w, int v) {
  const dfx_node *n = &w->g->nodes[v];
  switch (n->ctrl) {
  case DFX_CTRL_SWITCH: return dfx__is_loop_switch(w->g, v) ? dfx__grad_loop_switch1 : via_emit_cond_switch;
  case DFX_CTRL_MERGE: return dfx__is_loop_merge(w->g, v) ? dfx__grad_loop_merge : via_emit_cond_merge;
  case DFX_CTRL_ENTER: return dfx__grad_loop_enter;
  case DFX_CTRL_EXIT: return dfx__grad_loop_exit;
  case DFX_CTRL_NEXT_ITERATION: return grad_next_iteration;
  default: return NULL;
  }
}

/* Runs node v's gradient function on its summed output gradients and hands
 * the input gradients to the producers on a path from the xs. `phase2`: the
 * second visit of a loop Switch, when its body gradient is complete. */
static dfx_code backprop_node(walk *w, int v, bool phase2) {
  dfx_emit *e = &w->e;
  const dfx_node *n = &w->g->nodes[v];
  int n_out = n->n_out, n_in = n->n_in;
  bool feeds_between = false, has_grad = false;
  for (int k = 0; k < n_in; k++) feeds_between |= w->between[n->in[k].node] != 0;
  set_scope(w, n->name);
  dfx_code c = enter_context(w, dfx__walk_side(w, v));
  if (c != DFX_OK) return c;
  gp dy[n_out + 1], dx[n_in + 1];
  if (phase2) {
    dfx__grad_loop_switch2(w, v, aggregate(w, gout(v, 1)));
    return e->err;
  }
  /* Emitting (a loop's setup, an AddN) may move the node array: n is
   * re-read after each call that adds nodes. */
  n = &w->g->nodes[v];
  bool loop_switch = n->ctrl == DFX_CTRL_SWITCH && dfx__is_loop_switch(w->g, v);
  bool is_exit = n->ctrl == DFX_CTRL_EXIT;
  for (int k = 0; k < n_out; k++) {
    dy[k] = loop_switch && k == 1 ? GP_NONE : aggregate(w, gout(v, k));
    has_grad |= gp_ok(dy[k]);
  }
  if (e->err != DFX_OK) return e->err;
  if (is_exit && !has_grad && w->between[v] == 2) {
    dy[0] = em_zeros_like(e, gout(v, 0));
    has_grad = gp_ok(dy[0]);
  }
  if (!feeds_between || !has_grad) return e->err;
  n = &w->g->nodes[v];
  if (strcmp(n->op, "StopGradient") == 0) return DFX_OK;
  if (strcmp(n->op, "PreventGradient") == 0)
    return em_fail(e, DFX_EINVAL, "Node '%s' (PreventGradient): gradient explicitly disabled: %s", n->name,
                   dfx__attr_str(n, "message", ""));
  walk_fn cf = n->ctrl != DFX_CTRL_NONE ? control_fn(w, v) : NULL;
  const dfx_grad_def *d = NULL;
  if (n->ctrl != DFX_CTRL_NONE && !cf)
    return em_fail(e, DFX_EUNIMPL, "Node '%s' (%s): no gradient for this control op", n->name, n->op);
  if (!cf) {
    d = dfx__grad_find(n->op);
    if (!d)
      return em_fail(e, DFX_EUNIMPL, "Node '%s' (%s): no gradient defined for op %s (docs/autodiff.md lists the ops)",
                     n->name, n->op, n->op);
    if (!d->fn) return DFX_OK;
  }
  /* Outputs no consumer differentiated still need a gradient when another
   * output has one: zeros, as TF fills them. */
  w->cur_live = live_node(w, dy, n_out);
  for (int k = 0; k < n_out && !loop_switch; k++)
    if (!gp_ok(dy[k]) && backprop_dtype(w->g->nodes[v].out_types[k])) dy[k] = em_zeros_like(e, gout(v, k));
  for (int k = 0; k < n_in; k++) dx[k] = GP_NONE;
  if (cf)
    cf(w, v, dy, dx);
  else
    d->fn(e, v, dy, dx);
  if (e->err != DFX_OK) return e->err;
  n = &w->g->nodes[v];
  for (int k = 0; k < n_in; k++) {
    gp src = {n->in[k].node, n->in[k].slot};
    if (!gp_ok(dx[k]) || !w->between[src.node]) continue;
    if (add_grad(w, src, dx[k]) != DFX_OK) return DFX_ENOMEM;
    n = &w->g->nodes[v];
  }
  return DFX_OK;
}

static dfx_code run_walk(walk *w, const dfx_graph_port *ys, int n_ys, const dfx_graph_port *xs, int n_xs,
                         const dfx_graph_port *grad_ys, dfx_graph_port *dx) {
  dfx_code c;
  if ((c = mark_reached(w, xs, n_xs)) != DFX_OK || (c = mark_between(w, ys, n_ys)) != DFX_OK) return c;
  snprintf(w->scope, sizeof w->scope, "%s/", w->prefix);
  w->e.scope = w->scope;
  for (int i = 0; i < n_ys; i++) {
    if (!w->between[ys[i].node]) continue;
    gp y = {ys[i].node, ys[i].slot};
    gp seed = grad_ys && grad_ys[i].node >= 0 ? (gp){grad_ys[i].node, grad_ys[i].slot} : em_ones_like(&w->e, y);
    if (w->e.err != DFX_OK) return w->e.err;
    if ((c = add_grad(w, y, seed)) != DFX_OK) return c;
  }
  /* Each node is queued once, a loop Switch twice (its second visit as
   * -2 - v), so the queue never holds more than 2 n entries. */
  int *queue = dfx__malloc(sizeof(int) * (2 * (size_t)w->n_fwd + 1));
  if (!queue) return oom(w->e.st);
  int head = 0, tail = 0;
  for (int v = 0; v < w->n_fwd; v++)
    if (w->between[v] && w->pending[v] == 0) queue[tail++] = v;
  while (head < tail && c == DFX_OK) {
    int q = queue[head++];
    bool phase2 = q < 0;
    int v = phase2 ? -2 - q : q;
    if ((c = backprop_node(w, v, phase2)) != DFX_OK || phase2) continue;
    const dfx_node *n = &w->g->nodes[v];
    for (int k = 0; k < n->n_in; k++) {
      int p = n->in[k].node;
      if (!w->between[p]) continue;
      if (n->in[k].slot == 1 && dfx__is_loop_switch(w->g, p)) {
        if (--w->pending1[p] == 0) queue[tail++] = -2 - p;
      } else if (--w->pending[p] == 0) {
        queue[tail++] = p;
      }
    }
  }
  dfx__free(queue);
  if (c != DFX_OK) return c;
  /* A node still owed a gradient sits on a cycle the walk cannot order (a
   * loop not in TF1's lowering): better an error than a silently partial
   * gradient. */
  for (int v = 0; v < w->n_fwd; v++)
    if (w->between[v] && w->pending[v] > 0)
      return em_fail(&w->e, DFX_EUNIMPL,
                     "Node '%s' (%s): its gradient waits on a cycle that is not a TF1 while loop; cannot differentiate",
                     w->g->nodes[v].name, w->g->nodes[v].op);
  dfx__grad_loop_finish(w);
  if ((c = enter_context(w, 0)) != DFX_OK || w->e.err != DFX_OK) return w->e.err;
  snprintf(w->scope, sizeof w->scope, "%s/", w->prefix);
  w->e.scope = w->scope;
  for (int i = 0; i < n_xs; i++) {
    gp g = aggregate(w, (gp){xs[i].node, xs[i].slot});
    dx[i] = (dfx_graph_port){g.node, g.slot};
  }
  return w->e.err;
}

dfx_code dfx__gradients(dfx_graph *g, const dfx_graph_port *ys, int n_ys, const dfx_graph_port *xs, int n_xs,
                        const dfx_graph_port *grad_ys, const char *prefix, dfx_graph_port *dx, dfx_status *st) {
  walk w = {.g = g, .n_fwd = g->n_nodes, .prefix = prefix && *prefix ? prefix : "gradients"};
  w.e = (dfx_emit){.g = g, .scope = "", .ctrl = -1, .st = st, .err = DFX_OK};
  for (int i = 0; i < n_xs; i++) dx[i] = (dfx_graph_port){-1, 0};
  size_t n = (size_t)w.n_fwd + 1;
  w.reached = dfx__calloc(n, 1);
  w.between = dfx__calloc(n, 1);
  w.pending = dfx__calloc(n, sizeof(int));
  w.pending1 = dfx__calloc(n, sizeof(int));
  w.bmerge = dfx__malloc(n * sizeof(int));
  w.grads = dfx__calloc(n, sizeof(glist *));
  w.n_frames = g->n_frames;
  w.loops = dfx__calloc((size_t)g->n_frames + 1, sizeof(loopst *));
  for (size_t i = 0; w.bmerge && i < n; i++) w.bmerge[i] = -1;
  dfx_code c = !w.reached || !w.between || !w.pending || !w.pending1 || !w.bmerge || !w.grads || !w.loops
                   ? oom(st)
                   : run_walk(&w, ys, n_ys, xs, n_xs, grad_ys, dx);
  if (w.grads)
    for (int v = 0; v < w.n_fwd; v++) {
      if (!w.grads[v]) continue;
      for (int k = 0; k < g->nodes[v].n_out; k++) dfx__free(w.grads[v][k].v);
      dfx__free(w.grads[v]);
    }
  dfx__free(w.reached);
  dfx__free(w.between);
  dfx__free(w.pending);
  dfx__free(w.pending1);
  dfx__free(w.bmerge);
  dfx__free(w.grads);
  dfx__walk_loops_free(&w);
  if (c == DFX_OK) c = dfx__graph_finalize(g, st);
  if (c != DFX_OK)
    for (int i = 0; i < n_xs; i++) dx[i] = (dfx_graph_port){-1, 0};
  return c;
}
