/* grad_while.c - gradients through TF1 while loops (Yu et al., EuroSys
 * 2018, §5). For a forward loop (frame F, parent P):
 *
 *  - a counter is added to F (a new loop variable: Enter 0, +1 per
 *    iteration); its Exit is the iteration count N;
 *  - the backward loop (frame F/grad) runs N iterations, counting down from
 *    N; the gradient of each loop variable's Exit enters it, and each Exit
 *    of the backward loop is the gradient of the loop variable's initial
 *    value; a loop invariant (constant Enter) gets an accumulator variable
 *    summing its per-iteration gradients;
 *  - forward values the gradient functions read inside the loop are pushed
 *    on a stack (StackV2 created in P) each forward iteration and popped in
 *    the backward loop, so iteration k of the backward loop sees forward
 *    iteration N-1-k; values from enclosing frames enter the backward frame
 *    as constants. Nested loops apply the same rules one level up (a stack
 *    handle or an iteration count of an inner loop is itself a forward value
 *    of the outer loop).
 *
 * Ordering: with parallel_iterations > 1 pushes of different iterations may
 * race, so the counter's increment waits (through a ControlTrigger, which
 * fires even when a push is dead) for the pushes of its iteration, and each
 * push waits for its iteration's counter; the backward counter orders the
 * pops the same way. A pop also waits for the gradient that needs it, so a
 * value pushed inside a cond branch is popped only when the branch ran. */
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "grad_control.h"
#include "grad.h"
#include "walk.h"

/* ---- sides and frames ---- */

int dfx__walk_side(const walk *w, int id) {
  if (id < w->n_fwd) { /* where the node's output lives: an Enter's in its loop, an Exit's outside */
    const dfx_node *n = &w->g->nodes[id];
    if (n->ctrl == DFX_CTRL_ENTER) return n->child_frame;
    if (n->ctrl == DFX_CTRL_EXIT) return w->g->frames[n->frame].parent;
    return n->frame;
  }
  return id < w->side_cap ? w->side[id] : -2;
}

static void set_side(walk *w, int id, int frame) {
  if (id < 0) return;
  if (id >= w->side_cap) {
    int cap = w->side_cap ? w->side_cap : 64;
    while (cap <= id) cap *= 2;
    int *s = dfx__realloc(w->side, sizeof(int) * (size_t)cap);
    if (!s) {
      em_fail(&w->e, DFX_ENOMEM, "out of memory");
      return;
    }
    for (int i = w->side_cap; i < cap; i++) s[i] = -2;
    w->side = s;
    w->side_cap = cap;
  }
  w->side[id] = frame;
}

static int parent_of(const walk *w, int f) { return w->g->frames[f].parent; }

static void add_ctrl(walk *w, int id, int src) {
  if (w->e.err != DFX_OK || id < 0 || src < 0) return;
  if (dfx__graph_add_input(w->g, id, src, -1, w->e.st) != DFX_OK) em_fail(&w->e, DFX_ENOMEM, "out of memory");
}

static void add_data(walk *w, int id, gp src) {
  if (w->e.err != DFX_OK || id < 0 || !gp_ok(src)) return;
  if (dfx__graph_add_input(w->g, id, src.node, src.slot, w->e.st) != DFX_OK) em_fail(&w->e, DFX_ENOMEM, "out of memory");
}

/* Emission with no remapping and a given constant anchor; restores after. */
typedef struct saved {
  gp (*remap)(void *, gp);
  int ctrl;
} saved;
static saved raw_begin(walk *w, int ctrl) {
  saved s = {w->e.remap, w->e.ctrl};
  w->e.remap = NULL;
  w->e.ctrl = ctrl;
  return s;
}
static void raw_end(walk *w, saved s) {
  w->e.remap = s.remap;
  w->e.ctrl = s.ctrl;
}

static gp enter(walk *w, gp x, const char *frame, bool is_const, int pi) {
  em_attr a[4] = {EA_TYPE("T", em_dtype(&w->e, x)), {.name = "frame_name", .kind = DFX_ATTR_S},
                  EA_BOOL("is_constant", is_const), EA_INT("parallel_iterations", pi)};
  a[1].v.s = (dfx_str){.ptr = (char *)frame, .len = strlen(frame)};
  return em_op(&w->e, "Enter", &x, 1, a, 4);
}

/* Merge with its first input only; the back edge is added later (N is 2). */
static int half_merge(walk *w, gp x) {
  em_attr a[2] = {EA_TYPE("T", em_dtype(&w->e, x)), EA_INT("N", 2)};
  return em_node(&w->e, "Merge", NULL, &x, 1, a, 2);
}

static gp cswitch(walk *w, gp x, int pred) {
  gp in[2] = {x, {pred, 0}};
  em_attr a = EA_TYPE("T", em_dtype(&w->e, x));
  int id = em_node(&w->e, "Switch", NULL, in, 2, &a, 1);
  return (gp){id, 0};
}

static gp const_i32(walk *w, int32_t v) { return em_scalar(&w->e, DFX_I32, v); }

/* ---- the loop state ---- */

static dfx_code build_loop(walk *w, loopst *L) {
  dfx_graph *g = w->g;
  int F = L->frame, P = parent_of(w, F);
  int some_enter = -1;
  for (int i = 0; i < w->n_fwd; i++) {
    const dfx_node *n = &g->nodes[i];
    if (n->ctrl == DFX_CTRL_ENTER && n->child_frame == F && some_enter < 0) some_enter = i;
    if (n->ctrl == DFX_CTRL_LOOP_COND && n->frame == F) L->lc = i;
  }
  if (some_enter < 0 || L->lc < 0)
    return em_fail(&w->e, DFX_EUNIMPL, "while loop '%s': no Enter or no LoopCond found", g->frames[F].name);
  const dfx_node *en = &g->nodes[some_enter];
  L->fname = dfx__strdup(dfx__attr_str(en, "frame_name", ""));
  L->pi = (int)dfx__attr_int(en, "parallel_iterations", 10);
  char b[700];
  snprintf(b, sizeof b, "%s/%s", w->prefix, L->fname);
  L->bname = dfx__strdup(b);
  if (!L->fname || !L->bname) return em_fail(&w->e, DFX_ENOMEM, "out of memory");
  /* Constants of the parent frame hang off the parent loop's counter (a
   * control edge from a data input could name a fed placeholder, which a
   * run would then have to execute). */
  int outer_anchor = P > 0 ? w->loops[P]->c_ident : -1;

  /* forward counter, beside the loop's own variables */
  saved s = raw_begin(w, outer_anchor);
  L->c_zero = const_i32(w, 0).node;
  set_side(w, L->c_zero, P);
  gp ce = enter(w, (gp){L->c_zero, 0}, L->fname, false, L->pi);
  int cm = half_merge(w, ce);
  gp cs = cswitch(w, (gp){cm, 0}, L->lc);
  gp ci = em_ident(&w->e, (gp){cs.node, 1});
  L->c_ident = ci.node;
  w->e.ctrl = L->c_ident;
  gp one = const_i32(w, 1);
  gp ca = em_binary(&w->e, "AddV2", ci, one);
  L->c_add = ca.node;
  gp cn = em_unary(&w->e, "NextIteration", ca);
  add_data(w, cm, cn);
  gp cx = em_unary(&w->e, "Exit", (gp){cs.node, 0});
  L->c_exit = cx.node;
  raw_end(w, s);
  int fwd_nodes[] = {ce.node, cm, cs.node, ci.node, one.node, ca.node, cn.node};
  for (size_t i = 0; i < sizeof fwd_nodes / sizeof *fwd_nodes; i++) set_side(w, fwd_nodes[i], F);
  set_side(w, cx.node, P);
  if (w->e.err != DFX_OK) return w->e.err;

  /* backward loop: counts N down to 0 */
  int save_cur = w->cur_frame, save_live = w->cur_live;
  w->cur_frame = P;
  w->cur_live = -1;
  gp n_b = P == 0 ? cx : dfx__loop_remap(w, cx);
  w->cur_frame = save_cur;
  w->cur_live = save_live;
  s = raw_begin(w, -1);
  gp be = enter(w, n_b, L->bname, false, L->pi);
  int bm = half_merge(w, be);
  w->e.ctrl = bm;
  gp pred = em_binary(&w->e, "Greater", (gp){bm, 0}, const_i32(w, 0));
  gp lc = em_unary(&w->e, "LoopCond", pred);
  L->b_lc = lc.node;
  gp bs = cswitch(w, (gp){bm, 0}, L->b_lc);
  gp bi = em_ident(&w->e, (gp){bs.node, 1});
  L->b_ident = bi.node;
  w->e.ctrl = L->b_ident;
  gp bsub = em_binary(&w->e, "Sub", bi, const_i32(w, 1));
  L->b_sub = bsub.node;
  gp bn = em_unary(&w->e, "NextIteration", bsub);
  add_data(w, bm, bn);
  em_unary(&w->e, "Exit", (gp){bs.node, 0});
  raw_end(w, s);
  return w->e.err;
}

loopst *dfx__loop_get(walk *w, int f) {
  if (f <= 0 || f >= w->n_frames) return NULL;
  if (w->loops[f]) return w->loops[f];
  loopst *L = dfx__calloc(1, sizeof *L);
  if (!L) {
    em_fail(&w->e, DFX_ENOMEM, "out of memory");
    return NULL;
  }
  L->frame = f;
  L->lc = L->fsync = L->bsync = -1;
  w->loops[f] = L;
  int P = parent_of(w, f);
  if (P > 0 && !dfx__loop_get(w, P)) return NULL;
  return build_loop(w, L) == DFX_OK ? L : NULL;
}

/* ---- forward values seen from the backward loop ---- */

static gp *map_find(gmap *m, int n, gp from) {
  for (int i = 0; i < n; i++)
    if (m[i].from.node == from.node && m[i].from.slot == from.slot) return &m[i].to;
  return NULL;
}

static void map_add(walk *w, gmap **m, int *n, int *cap, gp from, gp to) {
  if (*n == *cap) {
    int c = *cap ? 2 * *cap : 8;
    gmap *nm = dfx__realloc(*m, sizeof(gmap) * (size_t)c);
    if (!nm) {
      em_fail(&w->e, DFX_ENOMEM, "out of memory");
      return;
    }
    *m = nm;
    *cap = c;
  }
  (*m)[(*n)++] = (gmap){from, to};
}

static gp remap_at(walk *w, int F, gp p, bool use_live);

/* q (a tensor of the backward frame of F's parent) as a constant of F's
 * backward frame. */
static gp enter_const(walk *w, loopst *L, gp outer_key, gp q) {
  gp *hit = map_find(L->ent, L->n_ent, outer_key);
  if (hit) return *hit;
  saved s = raw_begin(w, -1);
  gp t = enter(w, q, L->bname, true, L->pi);
  raw_end(w, s);
  map_add(w, &L->ent, &L->n_ent, &L->cap_ent, outer_key, t);
  return t;
}

/* The value t had in the forward iteration matching the current backward
 * one: pushed each forward iteration, popped each backward one. */
static gp history(walk *w, loopst *L, gp t, bool use_live) {
  gp *hit = map_find(L->hist, L->n_hist, t);
  if (hit) return *hit;
  int F = L->frame, P = parent_of(w, F);
  dfx_dtype dt = em_dtype(&w->e, t);
  saved s = raw_begin(w, L->c_zero);
  gp max = const_i32(w, -1);
  gp in_max = max;
  em_attr sa = EA_TYPE("elem_type", dt);
  gp stack = em_op(&w->e, "StackV2", &in_max, 1, &sa, 1);
  set_side(w, max.node, P);
  set_side(w, stack.node, P);
  gp h_f = enter(w, stack, L->fname, true, L->pi);
  set_side(w, h_f.node, F);
  gp in_push[2] = {h_f, t};
  em_attr pa = EA_TYPE("T", dt);
  int push = em_node(&w->e, "StackPushV2", NULL, in_push, 2, &pa, 1);
  set_side(w, push, F);
  add_ctrl(w, push, L->c_ident);
  if (L->fsync < 0) {
    w->e.ctrl = L->c_ident;
    L->fsync = em_node(&w->e, "ControlTrigger", NULL, NULL, 0, NULL, 0);
    set_side(w, L->fsync, F);
    add_ctrl(w, L->c_add, L->fsync);
  }
  add_ctrl(w, L->fsync, push);
  raw_end(w, s);
  if (w->e.err != DFX_OK) return GP_NONE;
  /* the handle in the backward frame */
  int save_cur = w->cur_frame;
  gp h_outer = P == 0 ? stack : remap_at(w, P, stack, false);
  w->cur_frame = save_cur;
  if (!gp_ok(h_outer)) return GP_NONE;
  gp h_b = enter_const(w, L, stack, h_outer);
  s = raw_begin(w, -1);
  em_attr oa = EA_TYPE("elem_type", dt);
  int pop = em_node(&w->e, "StackPopV2", NULL, &h_b, 1, &oa, 1);
  add_ctrl(w, pop, L->b_ident);
  if (use_live && w->cur_live >= 0) add_ctrl(w, pop, w->cur_live);
  if (L->bsync < 0) {
    w->e.ctrl = L->b_ident;
    L->bsync = em_node(&w->e, "ControlTrigger", NULL, NULL, 0, NULL, 0);
    add_ctrl(w, L->b_sub, L->bsync);
  }
  add_ctrl(w, L->bsync, pop);
  raw_end(w, s);
  gp r = {pop, 0};
  if (pop >= 0) map_add(w, &L->hist, &L->n_hist, &L->cap_hist, t, r);
  return w->e.err == DFX_OK ? r : GP_NONE;
}

static bool is_const_enter(const walk *w, int id) {
  if (id < 0 || id >= w->n_fwd) return false;
  const dfx_node *n = &w->g->nodes[id];
  return n->ctrl == DFX_CTRL_ENTER && dfx__attr_bool(n, "is_constant", false);
}

/* What the backward frame of forward frame F reads for forward tensor p. */
static gp remap_at(walk *w, int F, gp p, bool use_live) {
  if (F <= 0 || !gp_ok(p)) return p;
  int f = dfx__walk_side(w, p.node);
  if (f == -2) return p;
  loopst *L = dfx__loop_get(w, F);
  if (!L) return GP_NONE;
  int P = parent_of(w, F);
  if (f == F) {
    if (is_const_enter(w, p.node)) {
      gp src = {w->g->nodes[p.node].in[0].node, w->g->nodes[p.node].in[0].slot};
      gp *hit = map_find(L->ent, L->n_ent, src);
      if (hit) return *hit;
      gp q = remap_at(w, P, src, false);
      return gp_ok(q) ? enter_const(w, L, src, q) : GP_NONE;
    }
    return history(w, L, p, use_live);
  }
  gp *hit = map_find(L->ent, L->n_ent, p);
  if (hit) return *hit;
  gp q = remap_at(w, P, p, false);
  return gp_ok(q) ? enter_const(w, L, p, q) : GP_NONE;
}

gp dfx__loop_remap(void *ud, gp p) {
  walk *w = ud;
  return remap_at(w, w->cur_frame, p, true);
}

/* ---- gradients of the loop's control nodes ---- */

/* The loop whose Switch feeds Exit v. */
static loopst *loop_of_exit(walk *w, int v) {
  return dfx__loop_get(w, w->g->nodes[w->g->nodes[v].in[0].node].frame);
}

void dfx__grad_loop_exit(walk *w, int v, const gp *dy, gp *dx) {
  loopst *L = loop_of_exit(w, v);
  if (!L) return;
  saved s = raw_begin(w, -1);
  dx[0] = enter(w, dy[0], L->bname, false, L->pi);
  raw_end(w, s);
}

void dfx__grad_loop_switch1(walk *w, int v, const gp *dy, gp *dx) {
  if (!dfx__loop_get(w, w->g->nodes[v].frame)) return;
  saved s = raw_begin(w, -1);
  int m = half_merge(w, dy[0]);
  raw_end(w, s);
  w->bmerge[v] = m;
  if (m >= 0) dx[0] = (gp){m, 0};
}

void dfx__grad_loop_switch2(walk *w, int v, gp dy1) {
  int m = w->bmerge[v];
  if (m < 0 || !gp_ok(dy1)) return;
  saved s = raw_begin(w, -1);
  gp next = em_unary(&w->e, "NextIteration", dy1);
  raw_end(w, s);
  add_data(w, m, next);
  w->bmerge[v] = -1;
}

void dfx__grad_loop_merge(walk *w, int v, const gp *dy, gp *dx) {
  loopst *L = dfx__loop_get(w, w->g->nodes[v].frame);
  if (!L) return;
  saved s = raw_begin(w, -1);
  gp bs = cswitch(w, dy[0], L->b_lc);
  raw_end(w, s);
  const dfx_node *n = &w->g->nodes[v];
  for (int k = 0; k < n->n_in; k++)
    dx[k] = (gp){bs.node, w->g->nodes[n->in[k].node].ctrl == DFX_CTRL_ENTER ? 0 : 1};
}

void dfx__grad_loop_enter(walk *w, int v, const gp *dy, gp *dx) {
  int F = w->g->nodes[v].child_frame;
  loopst *L = dfx__loop_get(w, F);
  if (!L) return;
  if (!is_const_enter(w, v)) {
    saved s = raw_begin(w, -1);
    dx[0] = em_unary(&w->e, "Exit", dy[0]);
    raw_end(w, s);
    return;
  }
  /* an invariant: sum its gradient over the backward iterations */
  int P = parent_of(w, F), save_cur = w->cur_frame, save_live = w->cur_live;
  gp src = gin(&w->e, v, 0);
  w->cur_frame = P;
  w->cur_live = -1;
  saved s = raw_begin(w, P > 0 ? w->loops[P]->b_ident : -1);
  gp outer = P > 0 ? remap_at(w, P, src, false) : src;
  gp zeros = em_zeros_like(&w->e, outer);
  w->e.ctrl = -1;
  w->cur_frame = save_cur;
  w->cur_live = save_live;
  gp ae = enter(w, zeros, L->bname, false, L->pi);
  int am = half_merge(w, ae);
  gp as = cswitch(w, (gp){am, 0}, L->b_lc);
  gp sum = em_binary(&w->e, "AddV2", (gp){as.node, 1}, dy[0]);
  gp an = em_unary(&w->e, "NextIteration", sum);
  add_data(w, am, an);
  dx[0] = em_unary(&w->e, "Exit", (gp){as.node, 0});
  raw_end(w, s);
}

void dfx__grad_loop_finish(walk *w) {
  for (int v = 0; v < w->n_fwd && w->e.err == DFX_OK; v++) {
    int m = w->bmerge[v];
    if (m < 0) continue;
    /* no gradient came back from the body: zeros go around the loop */
    loopst *L = dfx__loop_get(w, w->g->nodes[v].frame);
    if (!L) return;
    saved s = raw_begin(w, -1);
    gp z = em_zeros_like(&w->e, (gp){cswitch(w, (gp){m, 0}, L->b_lc).node, 1});
    raw_end(w, s);
    dfx__grad_loop_switch2(w, v, z);
  }
}

void dfx__walk_loops_free(walk *w) {
  for (int f = 0; w->loops && f < w->n_frames; f++) {
    loopst *L = w->loops[f];
    if (!L) continue;
    dfx__free(L->fname);
    dfx__free(L->bname);
    dfx__free(L->hist);
    dfx__free(L->ent);
    dfx__free(L);
  }
  dfx__free(w->loops);
  dfx__free(w->side);
}
