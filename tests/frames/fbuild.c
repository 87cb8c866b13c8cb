/* fbuild.c - hand-built flows and their single-threaded driver (fbuild.h). */
#include "fbuild.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "tensor.h"

/* A runaway loop in a test must fail, not hang until the timeout. */
#define FB_MAX_STEPS 200000
#define FB_MAX_OUT 4

/* ---- compute functions ---- */

int32_t fb_fn_const(const int32_t *in, int n_in, int32_t arg) {
  (void)in;
  (void)n_in;
  return arg;
}

int32_t fb_fn_copy(const int32_t *in, int n_in, int32_t arg) {
  (void)n_in;
  (void)arg;
  return in[0];
}

int32_t fb_fn_add(const int32_t *in, int n_in, int32_t arg) {
  int32_t s = arg;
  for (int i = 0; i < n_in; i++) s += in[i];
  return s;
}

int32_t fb_fn_less(const int32_t *in, int n_in, int32_t arg) {
  (void)n_in;
  (void)arg;
  return in[0] < in[1];
}

/* ---- building ---- */

/* Node and frame names are borrowed by the flow: the builder keeps copies
 * (outside the counting allocator: they are the test's, not the library's). */
static const char *keep(fb *b, const char *s) {
  cr_assert(b->n_names < FB_MAX_NODES + FB_MAX_FRAMES, "fbuild: too many names");
  char *c = strdup(s);
  cr_assert(c);
  b->names[b->n_names++] = c;
  return c;
}

void fb_init(fb *b) {
  memset(b, 0, sizeof *b);
  /* dfx__flow_clear frees these with dfx__free, as it does for plans. */
  b->flow.nodes = dfx__calloc(FB_MAX_NODES, sizeof(dfx_fnode));
  b->flow.frames = dfx__calloc(FB_MAX_FRAMES, sizeof(dfx_fframe));
  cr_assert(b->flow.nodes && b->flow.frames);
  fb_frame(b, "", -1, 1);
}

void fb_free(fb *b) {
  dfx__flow_clear(&b->flow);
  for (int i = 0; i < b->n_consts; i++) dfx__tensor_free_immortal(b->consts[i]);
  for (int i = 0; i < b->n_names; i++) free(b->names[i]);
  memset(b, 0, sizeof *b);
}

int fb_frame(fb *b, const char *name, int parent, int parallel_iterations) {
  cr_assert(b->flow.n_frames < FB_MAX_FRAMES, "fbuild: too many frames");
  int i = b->flow.n_frames++;
  dfx_fframe *f = &b->flow.frames[i];
  f->name = keep(b, name);
  f->parent = parent;
  f->parallel_iterations = parallel_iterations;
  return i;
}

int fb_node(fb *b, const char *name, const char *op, dfx_ctrl_op ctrl, int frame, int n_in, int n_out) {
  cr_assert(b->flow.n_nodes < FB_MAX_NODES, "fbuild: too many nodes");
  cr_assert(n_out <= FB_MAX_OUT, "fbuild: at most %d outputs", FB_MAX_OUT);
  int i = b->flow.n_nodes++;
  dfx_fnode *n = &b->flow.nodes[i];
  n->name = keep(b, name);
  n->op = op;
  n->ctrl = ctrl;
  n->frame = frame;
  n->n_in = n_in;
  n->n_out = n_out;
  n->child_frame = -1;
  n->dead_slot = -1;
  b->out_dtype[i] = DFX_I32;
  return i;
}

int fb_compute(fb *b, const char *name, int frame, int n_in, fb_fn fn, int32_t arg) {
  int i = fb_node(b, name, "Compute", DFX_CTRL_NONE, frame, n_in, 1);
  b->fn[i] = fn;
  b->arg[i] = arg;
  return i;
}

int fb_compute_bool(fb *b, const char *name, int frame, int n_in, fb_fn fn, int32_t arg) {
  int i = fb_compute(b, name, frame, n_in, fn, arg);
  b->out_dtype[i] = DFX_BOOL;
  return i;
}

static dfx_tensor *scalar(dfx_dtype dtype, int32_t v) {
  uint8_t u = v != 0;
  return dfx__tensor_scalar(dtype, dtype == DFX_BOOL ? (const void *)&u : (const void *)&v);
}

int fb_const(fb *b, const char *name, int frame, dfx_dtype dtype, int32_t v) {
  int i = fb_node(b, name, "Const", DFX_CTRL_NONE, frame, 0, 1);
  dfx_tensor *t = scalar(dtype, v);
  cr_assert(t);
  dfx__tensor_set_immortal(t); /* as a session owns a Const's value */
  b->consts[b->n_consts++] = t;
  b->flow.nodes[i].move = DFX_MOVE_CONST;
  b->flow.nodes[i].const_value = t;
  b->out_dtype[i] = (uint8_t)dtype;
  return i;
}

int fb_identity(fb *b, const char *name, int frame) {
  int i = fb_node(b, name, "Identity", DFX_CTRL_NONE, frame, 1, 1);
  b->flow.nodes[i].move = DFX_MOVE_FORWARD;
  return i;
}

int fb_enter(fb *b, const char *name, int frame, int child, bool is_constant) {
  int i = fb_node(b, name, "Enter", DFX_CTRL_ENTER, frame, 1, 1);
  b->flow.nodes[i].child_frame = child;
  b->flow.nodes[i].is_constant_enter = is_constant;
  return i;
}

static void add_edge(fb *b, int src, int src_slot, int dst, int dst_slot) {
  cr_assert(b->n_edges < FB_MAX_EDGES, "fbuild: too many edges");
  b->edges[b->n_edges++] = (fb_edge){src, src_slot, dst, dst_slot};
}

void fb_data(fb *b, int src, int src_slot, int dst, int dst_slot) { add_edge(b, src, src_slot, dst, dst_slot); }
void fb_control(fb *b, int src, int dst) { add_edge(b, src, -1, dst, -1); }

void fb_layout(fb *b) {
  /* dfx__flow_add_edge wants a producer's data edges before its control
   * edges: two passes, as exec/plan.c does. */
  for (int pass = 0; pass < 2; pass++)
    for (int e = 0; e < b->n_edges; e++) {
      const fb_edge *x = &b->edges[e];
      if ((x->dst_slot < 0) != (pass == 1)) continue;
      cr_assert_eq(dfx__flow_add_edge(&b->flow, x->src, x->dst, x->src_slot, x->dst_slot), DFX_OK);
    }
  dfx_status st;
  dfx__status_clear(&st);
  cr_assert_eq(dfx__flow_layout(&b->flow, &st), DFX_OK, "layout: %s", st.msg);
}

int fb_find(const fb *b, const char *name) {
  for (int i = 0; i < b->flow.n_nodes; i++)
    if (strcmp(b->flow.nodes[i].name, name) == 0) return i;
  cr_assert_fail("fbuild: no node '%s'", name);
  return -1;
}

int fb_chain(fb *b, const char *prefix, int frame, int src, int src_slot, int len, int32_t add) {
  int prev = -1;
  for (int i = 0; i < len; i++) {
    char nm[96];
    snprintf(nm, sizeof nm, "%s%d", prefix, i);
    bool first_const = i == 0 && src < 0;
    int n = fb_compute(b, nm, frame, first_const ? 0 : 1, i == 0 ? fb_fn_add : fb_fn_copy, i == 0 ? add : 0);
    if (i > 0) fb_data(b, prev, 0, n, 0);
    else if (!first_const) fb_data(b, src, src_slot, n, 0);
    prev = n;
  }
  return prev;
}

fb_loop fb_counter_loop(fb *b, const char *prefix, int parent, int src, int src_slot, int32_t limit, int pi) {
  char nm[96];
#define NM(s) (snprintf(nm, sizeof nm, "%s%s", prefix, s), nm)
  fb_loop L;
  L.frame = fb_frame(b, NM("while"), parent, pi);
  L.enter = fb_enter(b, NM("Enter"), parent, L.frame, false);
  L.merge = fb_node(b, NM("Merge"), "Merge", DFX_CTRL_MERGE, L.frame, 2, 2);
  L.limit = fb_compute(b, NM("limit"), L.frame, 0, fb_fn_const, limit);
  L.less = fb_compute_bool(b, NM("Less"), L.frame, 2, fb_fn_less, 0);
  L.cond = fb_node(b, NM("LoopCond"), "LoopCond", DFX_CTRL_LOOP_COND, L.frame, 1, 1);
  L.sw = fb_node(b, NM("Switch"), "Switch", DFX_CTRL_SWITCH, L.frame, 2, 2);
  L.ident = fb_identity(b, NM("Identity"), L.frame);
  L.add = fb_compute(b, NM("add"), L.frame, 1, fb_fn_add, 1);
  L.next = fb_node(b, NM("NextIteration"), "NextIteration", DFX_CTRL_NEXT_ITERATION, L.frame, 1, 1);
  L.exit = fb_node(b, NM("Exit"), "Exit", DFX_CTRL_EXIT, L.frame, 1, 1);
#undef NM
  fb_data(b, src, src_slot, L.enter, 0);
  fb_data(b, L.enter, 0, L.merge, 0);
  fb_data(b, L.next, 0, L.merge, 1);
  fb_control(b, L.merge, L.limit);
  fb_data(b, L.merge, 0, L.less, 0);
  fb_data(b, L.limit, 0, L.less, 1);
  fb_data(b, L.less, 0, L.cond, 0);
  fb_data(b, L.merge, 0, L.sw, 0);
  fb_data(b, L.cond, 0, L.sw, 1);
  fb_data(b, L.sw, 1, L.ident, 0);
  fb_data(b, L.ident, 0, L.add, 0);
  fb_data(b, L.add, 0, L.next, 0);
  fb_data(b, L.sw, 0, L.exit, 0);
  return L;
}

/* ---- the driver ---- */

static const int no_cancel = 0;

typedef struct fifo {
  dfx_tagged *v;
  int head, n, cap;
} fifo;

static void fifo_take(fifo *q, dfx_ready *ready) {
  for (int i = 0; i < ready->n; i++) {
    if (q->n == q->cap) {
      q->cap = q->cap ? q->cap * 2 : 64;
      q->v = realloc(q->v, sizeof *q->v * (size_t)q->cap);
      cr_assert(q->v);
    }
    q->v[q->n++] = ready->v[i];
  }
  ready->n = 0;
}

static int32_t value_of(const dfx_tensor *t) {
  cr_assert(t->ndims == 0, "fbuild: scalars only");
  if (t->dtype == DFX_BOOL) return *(const uint8_t *)t->data;
  cr_assert_eq(t->dtype, DFX_I32, "fbuild: int32 or bool only");
  return *(const int32_t *)t->data;
}

/* A compute node: every input is present (a live non-Merge node got all). */
static dfx_code compute(const fb *b, int node, dfx_tensor **in, dfx_tensor **out) {
  const dfx_fnode *n = &b->flow.nodes[node];
  int32_t v[16];
  cr_assert(n->n_in <= 16);
  for (int k = 0; k < n->n_in; k++) {
    cr_assert(in[k], "node '%s': live but input %d is missing", n->name, k);
    v[k] = value_of(in[k]);
  }
  if (n->n_out == 0) return DFX_OK;
  cr_assert(b->fn[node], "node '%s' (%s): nothing can run it", n->name, n->op);
  out[0] = scalar((dfx_dtype)b->out_dtype[node], b->fn[node](v, n->n_in, b->arg[node]));
  return out[0] ? DFX_OK : DFX_ENOMEM;
}

/* What process.c's execute does, with compute() for kernels. */
static dfx_code execute(const fb *b, const dfx_tagged *t, dfx_tensor **out, dfx_status *msg) {
  const dfx_fnode *n = &b->flow.nodes[t->node];
  dfx_tensor **in = t->iter->inputs + n->input_start;
  dfx_code c = DFX_OK;
  if (!t->dead && !dfx__ctrl_move(n, in, out, false))
    c = n->ctrl != DFX_CTRL_NONE ? dfx__ctrl_execute(n, in, out, msg) : compute(b, t->node, in, out);
  for (int i = 0; i < n->n_in; i++)
    if (in[i]) {
      dfx__tensor_unref(in[i]);
      in[i] = NULL;
    }
  return c;
}

static void observe(const dfx_prop *p, fb_result *r) {
  for (const dfx_frame *f = p->live; f; f = f->live_next) {
    if (f->num_outstanding_iterations > r->max_outstanding[f->sframe])
      r->max_outstanding[f->sframe] = f->num_outstanding_iterations;
    if (f->next_iter_roots.n > 0) r->deferred[f->sframe] = true;
  }
}

static void log_event(fb_result *r, const fb_event *e) {
  if (r->n_ev == r->cap_ev) {
    r->cap_ev = r->cap_ev ? r->cap_ev * 2 : 256;
    r->ev = realloc(r->ev, sizeof *r->ev * (size_t)r->cap_ev);
    cr_assert(r->ev);
  }
  r->ev[r->n_ev++] = *e;
}

static int64_t child_count(const dfx_tagged *t, int child) {
  for (const dfx_frame *c = t->iter->children; c; c = c->next_sibling)
    if (c->sframe == child) return c->iteration_count;
  return -1;
}

static void drop(dfx_tensor **out, int n) {
  for (int k = 0; k < n; k++) {
    dfx__tensor_unref(out[k]);
    out[k] = NULL;
  }
}

void fb_run(const fb *b, bool settle, int64_t max_iterations, fb_result *r) {
  memset(r, 0, sizeof *r);
  dfx_prop p;
  cr_assert_eq(dfx__prop_init(&p, &b->flow), DFX_OK);
  p.cancelled = &no_cancel;
  p.settle_trivial = settle;
  p.settle_dead_exits = settle;
  p.max_iterations = max_iterations;
  dfx_status st;
  dfx__status_clear(&st);
  dfx_ready ready;
  dfx__ready_init(&ready, &st);
  fifo q = {0};
  cr_assert_eq(dfx__activate_roots(&p, &ready), DFX_OK);
  fifo_take(&q, &ready);
  observe(&p, r);
  for (int steps = 0; q.head < q.n; steps++) {
    cr_assert(steps < FB_MAX_STEPS, "fbuild: more than %d steps", FB_MAX_STEPS);
    dfx_tagged t = q.v[q.head++];
    const dfx_fnode *n = &b->flow.nodes[t.node];
    fb_event e = {.node = t.node, .sframe = t.frame->sframe, .parent_iter = t.frame->parent_iter_num,
                  .iter = t.iter->iter_num, .dead = t.dead, .dead_src = t.dead_src,
                  .child_iteration_count = n->ctrl == DFX_CTRL_ENTER ? child_count(&t, n->child_frame) : -1};
    dfx_tensor *out[FB_MAX_OUT] = {NULL};
    dfx_status msg;
    dfx__status_clear(&msg);
    dfx_code c = execute(b, &t, out, &msg);
    for (int k = 0; k < 2 && k < n->n_out; k++)
      if ((e.has[k] = out[k] != NULL)) e.val[k] = value_of(out[k]);
    log_event(r, &e);
    if (c == DFX_OK && dfx__propagate(&p, &t, out, &ready) != DFX_OK) {
      c = st.code;
      snprintf(msg.msg, sizeof msg.msg, "%s", st.msg);
    }
    drop(out, n->n_out);
    if (c != DFX_OK) { /* the first error ends the run, as in process.c */
      r->code = c;
      snprintf(r->msg, sizeof r->msg, "%s", msg.msg);
      break;
    }
    fifo_take(&q, &ready);
    observe(&p, r);
  }
  r->left_in_queue = q.n - q.head;
  for (const dfx_frame *f = p.live; f; f = f->live_next) r->frames_left += f != p.root;
  r->root_outstanding = p.root->ring[0]->outstanding_ops;
  r->n_stuck = p.n_stuck;
  free(q.v);
  dfx__ready_free(&ready);
  dfx__prop_destroy(&p);
}

void fb_result_free(fb_result *r) {
  free(r->ev);
  memset(r, 0, sizeof *r);
}

void fb_assert_clean(const fb_result *r, const char *what) {
  cr_assert_eq(r->code, DFX_OK, "%s: run failed: %s", what, r->msg);
  cr_assert_eq(r->left_in_queue, 0, "%s", what);
  cr_assert_eq(r->frames_left, 0, "%s: %d frame instances still alive at the end", what, r->frames_left);
  cr_assert_eq(r->root_outstanding, 0, "%s", what);
  cr_assert_eq(r->n_stuck, 0, "%s: %d nodes were left waiting in finished iterations", what, r->n_stuck);
}

/* ---- comparing runs ---- */

/* Instances settling can remove: trivial nodes and dead Exits (policy.h). */
static bool settleable(const fb *b, const fb_event *e) {
  const dfx_fnode *n = &b->flow.nodes[e->node];
  return dfx__flow_trivial(n) || (n->ctrl == DFX_CTRL_EXIT && e->dead);
}

static int cmp_event(const void *pa, const void *pb) {
  const fb_event *a = pa, *b = pb;
  int64_t k[][2] = {{a->node, b->node},       {a->parent_iter, b->parent_iter}, {a->iter, b->iter},
                    {a->dead, b->dead},       {a->dead_src, b->dead_src},       {a->has[0], b->has[0]},
                    {a->val[0], b->val[0]},   {a->has[1], b->has[1]},           {a->val[1], b->val[1]}};
  for (size_t i = 0; i < sizeof k / sizeof k[0]; i++)
    if (k[i][0] != k[i][1]) return k[i][0] < k[i][1] ? -1 : 1;
  return 0;
}

/* The log's unsettleable instances, sorted (execution order differs). */
static int kept(const fb *b, const fb_result *r, fb_event *out) {
  int n = 0;
  for (int i = 0; i < r->n_ev; i++)
    if (!settleable(b, &r->ev[i])) {
      out[n] = r->ev[i];
      if (!out[n].has[0]) out[n].val[0] = 0;
      if (!out[n].has[1]) out[n].val[1] = 0;
      n++;
    }
  qsort(out, (size_t)n, sizeof *out, cmp_event);
  return n;
}

void fb_results_free(fb_result r[2]) {
  fb_result_free(&r[0]);
  fb_result_free(&r[1]);
}

void fb_run_both(const fb *b, int64_t max_iterations, fb_result r[2]) {
  fb_result *off = &r[0], *on = &r[1];
  fb_run(b, false, max_iterations, off);
  fb_run(b, true, max_iterations, on);
  cr_assert_eq(off->code, on->code, "settling changed the outcome: off '%s', on '%s'", off->msg, on->msg);
  if (off->code != DFX_OK) return; /* an error stops each run at a different point */
  fb_assert_clean(off, "settling off");
  fb_assert_clean(on, "settling on");
  fb_event *a = malloc(sizeof *a * ((size_t)off->n_ev + 1)), *z = malloc(sizeof *z * ((size_t)on->n_ev + 1));
  cr_assert(a && z);
  int na = kept(b, off, a), nz = kept(b, on, z);
  cr_assert_eq(na, nz, "settling changed the number of unsettleable instances: %d off, %d on", na, nz);
  for (int i = 0; i < na; i++)
    cr_assert_eq(cmp_event(&a[i], &z[i]), 0, "settling changed an instance of '%s' (iteration %lld)",
                 b->flow.nodes[a[i].node].name, (long long)a[i].iter);
  free(a);
  free(z);
}

/* ---- queries ---- */

int fb_count(const fb_result *r, int node, int dead) {
  int n = 0;
  for (int i = 0; i < r->n_ev; i++) n += r->ev[i].node == node && (dead < 0 || r->ev[i].dead == (dead != 0));
  return n;
}

const fb_event *fb_at(const fb_result *r, int node, int64_t parent_iter, int64_t iter) {
  const fb_event *found = NULL;
  for (int i = 0; i < r->n_ev; i++) {
    const fb_event *e = &r->ev[i];
    if (e->node != node || e->parent_iter != parent_iter || e->iter != iter) continue;
    cr_assert(!found, "node %d ran twice in iteration %lld (parent iteration %lld)", node, (long long)iter,
              (long long)parent_iter);
    found = e;
  }
  return found;
}

const fb_event *fb_once(const fb_result *r, int node) {
  cr_assert_eq(fb_count(r, node, -1), 1, "node %d ran %d times, expected once", node, fb_count(r, node, -1));
  for (int i = 0; i < r->n_ev; i++)
    if (r->ev[i].node == node) return &r->ev[i];
  return NULL;
}

int fb_pos(const fb_result *r, const fb_event *e) { return (int)(e - r->ev); }
