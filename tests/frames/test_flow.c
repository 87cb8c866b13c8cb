/* test_flow.c - the frames layer on hand-built flow graphs (fbuild.h): the
 * layout of flow.c, the per-op rules of control.c and the iteration and
 * frame lifecycle of iteration.c, each checked against tf-semantics
 * §2.3-2.5 with no graph, plan or executor involved. Every run is made with
 * settling off and on (fb_run_both): both must agree, and with settling off
 * every instance shows in the log. Expected values are worked out by hand
 * from the spec in the comments. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "eutil.h"
#include "fbuild.h"

TestSuite(flow, .init = eu_setup, .fini = eu_teardown, .timeout = 30);
TestSuite(control, .init = eu_setup, .fini = eu_teardown, .timeout = 30);
TestSuite(iteration, .init = eu_setup, .fini = eu_teardown, .timeout = 30);

/* The event of `node` in (parent_iter, iter); the test fails if it did not run. */
static const fb_event *ran(const fb_result *r, const fb *b, int node, int64_t parent_iter, int64_t iter) {
  const fb_event *e = fb_at(r, node, parent_iter, iter);
  cr_assert(e, "'%s' did not run in iteration %lld (parent iteration %lld)", b->flow.nodes[node].name,
            (long long)iter, (long long)parent_iter);
  return e;
}

static void assert_live(const fb_event *e, const fb *b, int32_t want) {
  const char *name = b->flow.nodes[e->node].name;
  cr_assert(!e->dead, "'%s' (iteration %lld) is dead, expected live %d", name, (long long)e->iter, want);
  cr_assert(e->has[0], "'%s' produced nothing", name);
  cr_assert_eq(e->val[0], want, "'%s' (iteration %lld) = %d, expected %d", name, (long long)e->iter, e->val[0], want);
}

/* Dead, and killed by the untaken branch of Switch `sw` (dead_src is its
 * flow index + 1). */
static void assert_dead_from(const fb_event *e, const fb *b, int sw) {
  const char *name = b->flow.nodes[e->node].name;
  cr_assert(e->dead, "'%s' (iteration %lld) is live, expected dead", name, (long long)e->iter);
  cr_assert_eq(e->dead_src, sw + 1, "'%s': dead_src %d, expected Switch '%s' (%d)", name, e->dead_src,
               b->flow.nodes[sw].name, sw + 1);
}

static int64_t max_iter(const fb_result *r, int node) {
  int64_t m = -1;
  for (int i = 0; i < r->n_ev; i++)
    if (r->ev[i].node == node && r->ev[i].iter > m) m = r->ev[i].iter;
  return m;
}

/* ================= flow.c: layout ================= */

/* Frame 1 "w" holds a loop-frame node with no inputs (hand-built: real
 * loop constants hang off the Merge) and two Exits, one observed. */
typedef struct layout_fx {
  fb b;
  int a, p, sw, t, f, m, trig, en, lc, x1, x2, snk, w;
} layout_fx;

static void build_layout(layout_fx *x) {
  fb *b = &x->b;
  fb_init(b);
  x->w = fb_frame(b, "w", 0, 4);
  x->a = fb_compute(b, "a", 0, 0, fb_fn_const, 1);
  x->p = fb_const(b, "p", 0, DFX_BOOL, 1);
  x->sw = fb_node(b, "sw", "Switch", DFX_CTRL_SWITCH, 0, 2, 2);
  x->t = fb_identity(b, "t", 0);
  x->f = fb_compute(b, "f", 0, 1, fb_fn_copy, 0);
  x->m = fb_node(b, "m", "Merge", DFX_CTRL_MERGE, 0, 2, 2);
  x->trig = fb_node(b, "trig", "ControlTrigger", DFX_CTRL_CONTROL_TRIGGER, 0, 0, 0);
  x->en = fb_enter(b, "en", 0, x->w, false);
  x->lc = fb_const(b, "lc", x->w, DFX_I32, 3);
  x->x1 = fb_node(b, "x1", "Exit", DFX_CTRL_EXIT, x->w, 1, 1);
  x->x2 = fb_node(b, "x2", "Exit", DFX_CTRL_EXIT, x->w, 1, 1);
  x->snk = fb_compute(b, "snk", 0, 2, fb_fn_add, 0);
  b->flow.nodes[x->t].observed = true;
  b->flow.nodes[x->x1].observed = true;
  fb_control(b, x->a, x->m); /* given first: layout must still put a's data edges first */
  fb_data(b, x->a, 0, x->sw, 0);
  fb_data(b, x->p, 0, x->sw, 1);
  fb_data(b, x->sw, 1, x->t, 0);
  fb_data(b, x->sw, 0, x->f, 0);
  fb_data(b, x->f, 0, x->m, 0);
  fb_data(b, x->t, 0, x->m, 1);
  fb_control(b, x->f, x->trig);
  fb_data(b, x->a, 0, x->en, 0);
  fb_data(b, x->en, 0, x->x1, 0);
  fb_data(b, x->en, 0, x->x2, 0);
  fb_data(b, x->x1, 0, x->snk, 0);
  fb_data(b, x->x2, 0, x->snk, 1);
  fb_control(b, x->trig, x->snk);
  fb_layout(b);
}

Test(flow, layout_locals_input_slots_pending_and_roots) {
  layout_fx x;
  build_layout(&x);
  const dfx_flow *fl = &x.b.flow;
  /* Frame-local indices and input offsets run in node order inside each
   * frame; offsets advance by each node's data input count. */
  struct {
    int node, local, input_start;
    int32_t pending;
  } want[] = {
      {x.a, 0, 0, 0},    {x.p, 1, 0, 0},     {x.sw, 2, 0, 2},  {x.t, 3, 2, 1},
      {x.f, 4, 3, 1},    {x.m, 5, 4, 1 + 2}, /* Merge: 1 + 2 x one control edge */
      {x.trig, 6, 6, 1}, {x.en, 7, 6, 1},    {x.snk, 8, 7, 3}, /* two data + one control */
      {x.lc, 0, 0, 0},   {x.x1, 1, 0, 1},    {x.x2, 2, 1, 1},
  };
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    const dfx_fnode *n = &fl->nodes[want[i].node];
    cr_assert_eq(n->local, want[i].local, "'%s' local %d", n->name, n->local);
    cr_assert_eq(n->input_start, want[i].input_start, "'%s' input_start %d", n->name, n->input_start);
    cr_assert_eq(n->pending_init, want[i].pending, "'%s' pending_init %d", n->name, n->pending_init);
    cr_assert_eq(fl->frames[n->frame].pending_init[n->local], n->pending_init, "'%s': frame table", n->name);
  }
  cr_assert_eq(fl->frames[0].n_local, 9);
  cr_assert_eq(fl->frames[0].total_inputs, 9);
  cr_assert_eq(fl->frames[x.w].n_local, 3);
  cr_assert_eq(fl->frames[x.w].total_inputs, 2);
  cr_assert_eq(fl->frames[x.w].n_enters, 1);
  cr_assert_eq(fl->frames[0].n_enters, 0);
  /* Roots: zero pending and in the root frame. 'lc' has no inputs either,
   * but lives in a loop frame. */
  cr_assert_eq(fl->n_roots, 2);
  cr_assert_eq(fl->roots[0], x.a);
  cr_assert_eq(fl->roots[1], x.p);
  /* Only an observed Exit gets a settled-deadness slot. */
  cr_assert_eq(fl->n_dead_slots, 1);
  cr_assert_eq(fl->nodes[x.x1].dead_slot, 0);
  cr_assert_eq(fl->nodes[x.x2].dead_slot, -1);
  cr_assert_eq(fl->nodes[x.t].dead_slot, -1, "observed, but not an Exit");
  cr_assert_eq(fl->nodes[x.snk].dead_slot, -1);
  fb_free(&x.b);
}

static const dfx_fedge *edge_to(const dfx_flow *fl, int src, int dst, int dst_slot) {
  const dfx_fnode *n = &fl->nodes[src];
  for (int e = 0; e < n->n_edges; e++)
    if (n->edges[e].dst == dst && n->edges[e].dst_slot == dst_slot) return &n->edges[e];
  cr_assert_fail("no edge %s -> %s:%d", n->name, fl->nodes[dst].name, dst_slot);
  return NULL;
}

Test(flow, layout_edge_facts) {
  layout_fx x;
  build_layout(&x);
  const dfx_flow *fl = &x.b.flow;
  /* Data edges before control edges on every producer. */
  for (int i = 0; i < fl->n_nodes; i++) {
    bool seen_ctrl = false;
    for (int e = 0; e < fl->nodes[i].n_edges; e++) {
      const dfx_fedge *fe = &fl->nodes[i].edges[e];
      if (fe->src_slot < 0) seen_ctrl = true;
      else cr_assert(!seen_ctrl, "'%s': data edge after a control edge", fl->nodes[i].name);
      cr_assert_eq(fe->dst_local, fl->nodes[fe->dst].local);
      cr_assert_eq(fe->dst_n_in, fl->nodes[fe->dst].n_in);
      cr_assert_eq(fe->dst_input, fe->dst_slot < 0 ? -1 : fl->nodes[fe->dst].input_start + fe->dst_slot);
      cr_assert(!(fe->src_slot < 0 && fe->is_last), "'%s': a control edge moves nothing", fl->nodes[i].name);
    }
  }
  /* is_last: a:0 feeds sw then en; only the later edge may move it. */
  cr_assert_eq(fl->nodes[x.a].n_edges, 3);
  cr_assert(!edge_to(fl, x.a, x.sw, 0)->is_last);
  cr_assert(edge_to(fl, x.a, x.en, 0)->is_last);
  cr_assert(!edge_to(fl, x.a, x.m, -1)->is_last);
  /* Switch ports are separate slots: each has one reader, its last. */
  cr_assert(edge_to(fl, x.sw, x.t, 0)->is_last);
  cr_assert(edge_to(fl, x.sw, x.f, 0)->is_last);
  cr_assert(!edge_to(fl, x.en, x.x1, 0)->is_last);
  cr_assert(edge_to(fl, x.en, x.x2, 0)->is_last);
  /* Slots in the iteration's input array: sw:1 -> t at t's offset 2;
   * t -> m:1 at 4 + 1; x2 -> snk:1 at 7 + 1. */
  cr_assert_eq(edge_to(fl, x.sw, x.t, 0)->dst_input, 2);
  cr_assert_eq(edge_to(fl, x.t, x.m, 1)->dst_input, 5);
  cr_assert_eq(edge_to(fl, x.x2, x.snk, 1)->dst_input, 8);
  cr_assert_eq(edge_to(fl, x.p, x.sw, 1)->dst_input, 1);
  /* Destination kinds. */
  cr_assert_eq(edge_to(fl, x.a, x.m, -1)->dst_kind, DFX_DST_MERGE);
  cr_assert_eq(edge_to(fl, x.t, x.m, 1)->dst_kind, DFX_DST_MERGE);
  cr_assert_eq(edge_to(fl, x.f, x.trig, -1)->dst_kind, DFX_DST_TRIGGER);
  cr_assert_eq(edge_to(fl, x.en, x.x1, 0)->dst_kind, DFX_DST_EXIT);
  cr_assert_eq(edge_to(fl, x.p, x.sw, 1)->dst_kind, DFX_DST_PLAIN);
  cr_assert_eq(edge_to(fl, x.trig, x.snk, -1)->dst_kind, DFX_DST_PLAIN);
  cr_assert_eq(edge_to(fl, x.a, x.m, -1)->dst_n_in, 2);
  /* Observed and trivial consumers: an observed Identity is not trivial, a
   * Switch and a Merge nobody reads value_index of are, a compute node and
   * an Exit are not. */
  cr_assert(edge_to(fl, x.sw, x.t, 0)->dst_observed);
  cr_assert(!edge_to(fl, x.sw, x.t, 0)->dst_trivial);
  cr_assert(edge_to(fl, x.en, x.x1, 0)->dst_observed);
  cr_assert(!edge_to(fl, x.en, x.x2, 0)->dst_observed);
  cr_assert(!edge_to(fl, x.en, x.x2, 0)->dst_trivial);
  cr_assert(edge_to(fl, x.p, x.sw, 1)->dst_trivial);
  cr_assert(edge_to(fl, x.t, x.m, 1)->dst_trivial);
  cr_assert(!edge_to(fl, x.sw, x.f, 0)->dst_trivial);
  fb_free(&x.b);
}

static dfx_fnode fnode(dfx_ctrl_op ctrl, int n_in, int n_out, uint8_t move) {
  return (dfx_fnode){.name = "n", .op = "Op", .ctrl = ctrl, .n_in = n_in, .n_out = n_out, .move = move};
}

/* dfx__flow_trivial per kind (flow.h): Switch, unread-index Merge, LoopCond,
 * Const and one-input forwards are; everything with frame logic or a
 * kernel is not, and nothing observed is. */
Test(flow, trivial_by_node_kind) {
  dfx_fnode n = fnode(DFX_CTRL_SWITCH, 2, 2, 0);
  cr_assert(dfx__flow_trivial(&n));
  n.is_switch_n = true;
  cr_assert(!dfx__flow_trivial(&n), "_SwitchN needs dfx__ctrl_execute");
  n = fnode(DFX_CTRL_SWITCH, 2, 2, 0);
  n.observed = true;
  cr_assert(!dfx__flow_trivial(&n), "observed");
  n = fnode(DFX_CTRL_MERGE, 3, 2, 0);
  cr_assert(dfx__flow_trivial(&n));
  n.merge_index_used = true;
  cr_assert(!dfx__flow_trivial(&n), "value_index must be made");
  n = fnode(DFX_CTRL_LOOP_COND, 1, 1, 0);
  cr_assert(dfx__flow_trivial(&n));
  dfx_ctrl_op never[] = {DFX_CTRL_ENTER, DFX_CTRL_EXIT, DFX_CTRL_NEXT_ITERATION, DFX_CTRL_CONTROL_TRIGGER};
  for (size_t i = 0; i < sizeof never / sizeof never[0]; i++) {
    n = fnode(never[i], 1, 1, 0);
    cr_assert(!dfx__flow_trivial(&n), "ctrl %d has frame logic or a rule of its own", never[i]);
  }
  n = fnode(DFX_CTRL_NONE, 0, 1, DFX_MOVE_CONST);
  cr_assert(dfx__flow_trivial(&n));
  n.observed = true;
  cr_assert(!dfx__flow_trivial(&n), "a fetched Const");
  n = fnode(DFX_CTRL_NONE, 1, 1, DFX_MOVE_FORWARD);
  cr_assert(dfx__flow_trivial(&n));
  n = fnode(DFX_CTRL_NONE, 2, 2, DFX_MOVE_FORWARD);
  cr_assert(!dfx__flow_trivial(&n), "IdentityN");
  n = fnode(DFX_CTRL_NONE, 1, 1, DFX_MOVE_NONE);
  cr_assert(!dfx__flow_trivial(&n), "a kernel");
}

/* ================= control.c: pending counts ================= */

/* §2.4: a Merge starts at 1 + 2 x control edges (bit 0: waiting for a live
 * input); every other node at its number of in-edges. */
Test(control, pending_init_waiting_and_expected) {
  cr_assert_eq(dfx__ctrl_pending_init(DFX_CTRL_MERGE, 2, 0), 1);
  cr_assert_eq(dfx__ctrl_pending_init(DFX_CTRL_MERGE, 2, 3), 7);
  cr_assert_eq(dfx__ctrl_pending_init(DFX_CTRL_MERGE, 5, 1), 3);
  cr_assert_eq(dfx__ctrl_pending_init(DFX_CTRL_NONE, 2, 3), 5);
  cr_assert_eq(dfx__ctrl_pending_init(DFX_CTRL_SWITCH, 2, 0), 2);
  cr_assert_eq(dfx__ctrl_pending_init(DFX_CTRL_CONTROL_TRIGGER, 0, 2), 2);
  cr_assert_eq(dfx__ctrl_pending_init(DFX_CTRL_NONE, 0, 0), 0);
  /* A Merge with 3 control inputs waits for them and one live input: 4;
   * after the live input (bit 0 cleared) for 3; a started node (negative)
   * for nothing. */
  cr_assert_eq(dfx__ctrl_waiting(DFX_CTRL_MERGE, 7), 4);
  cr_assert_eq(dfx__ctrl_waiting(DFX_CTRL_MERGE, 6), 3);
  cr_assert_eq(dfx__ctrl_waiting(DFX_CTRL_MERGE, 1), 1);
  cr_assert_eq(dfx__ctrl_waiting(DFX_CTRL_MERGE, 0), 0);
  cr_assert_eq(dfx__ctrl_waiting(DFX_CTRL_MERGE, -1), 0);
  cr_assert_eq(dfx__ctrl_waiting(DFX_CTRL_NONE, 5), 5);
  cr_assert_eq(dfx__ctrl_waiting(DFX_CTRL_NONE, -1), 0);
  /* In all, in the same units: a Merge needs one live data input and its
   * control inputs (waiting at the start == expected). */
  dfx_fnode m = fnode(DFX_CTRL_MERGE, 2, 2, 0);
  m.pending_init = dfx__ctrl_pending_init(DFX_CTRL_MERGE, 2, 3);
  cr_assert_eq(dfx__ctrl_expected(&m), 4);
  cr_assert_eq(dfx__ctrl_waiting(DFX_CTRL_MERGE, m.pending_init), dfx__ctrl_expected(&m));
  dfx_fnode n = fnode(DFX_CTRL_NONE, 2, 1, 0);
  n.pending_init = dfx__ctrl_pending_init(DFX_CTRL_NONE, 2, 3);
  cr_assert_eq(dfx__ctrl_expected(&n), 5);
}

/* ================= control.c: conds ================= */

/* tf.cond on a constant predicate. x = 7; the true branch adds 100, the
 * false branch adds 10; m = Merge(true, false) so value_index names the
 * branch taken (true: slot 0, false: slot 1). 'live_ctl' hangs off the
 * Switch by a control edge: a control edge carries the Switch node's
 * deadness, and the Switch is live, so it runs even "in" the untaken
 * branch (§2.3). */
Test(control, cond_on_a_constant_predicate) {
  for (int pred = 0; pred <= 1; pred++) {
    fb b;
    fb_init(&b);
    int p = fb_const(&b, "p", 0, DFX_BOOL, pred);
    int x = fb_const(&b, "x", 0, DFX_I32, 7);
    int sw = fb_node(&b, "sw", "Switch", DFX_CTRL_SWITCH, 0, 2, 2);
    int tb = fb_compute(&b, "tb", 0, 1, fb_fn_add, 100);
    int tb2 = fb_compute(&b, "tb2", 0, 1, fb_fn_copy, 0);
    int fbr = fb_compute(&b, "fb", 0, 1, fb_fn_add, 10);
    int m = fb_node(&b, "m", "Merge", DFX_CTRL_MERGE, 0, 2, 2);
    int out = fb_compute(&b, "out", 0, 1, fb_fn_copy, 0);
    int idx = fb_compute(&b, "idx", 0, 1, fb_fn_copy, 0);
    int live_ctl = fb_compute(&b, "live_ctl", 0, 0, fb_fn_const, 3);
    b.flow.nodes[m].merge_index_used = true;
    fb_data(&b, x, 0, sw, 0);
    fb_data(&b, p, 0, sw, 1);
    fb_data(&b, sw, 1, tb, 0);
    fb_data(&b, tb, 0, tb2, 0);
    fb_data(&b, sw, 0, fbr, 0);
    fb_data(&b, tb2, 0, m, 0);
    fb_data(&b, fbr, 0, m, 1);
    fb_data(&b, m, 0, out, 0);
    fb_data(&b, m, 1, idx, 0);
    fb_control(&b, sw, live_ctl);
    fb_layout(&b);
    fb_result R[2]; /* settling off, on */
    fb_run_both(&b, 0, R);
    for (int k = 0; k < 2; k++) {
      const fb_result *r = &R[k];
      int live = pred ? tb2 : fbr, dead = pred ? fbr : tb;
      assert_live(fb_once(r, live), &b, pred ? 107 : 17);
      assert_dead_from(fb_once(r, dead), &b, sw);
      if (!pred) assert_dead_from(fb_once(r, tb2), &b, sw); /* deadness travels down the branch */
      const fb_event *me = fb_once(r, m);
      assert_live(me, &b, pred ? 107 : 17);
      cr_assert(me->has[1] && me->val[1] == (pred ? 0 : 1), "value_index %d", me->val[1]);
      assert_live(fb_once(r, out), &b, pred ? 107 : 17);
      assert_live(fb_once(r, idx), &b, pred ? 0 : 1);
      assert_live(fb_once(r, live_ctl), &b, 3);
    }
    /* Unsettled, the Switch itself shows: live, one port set. */
    const fb_event *se = fb_once(&R[0], sw);
    cr_assert(!se->dead && se->has[pred] && !se->has[!pred]);
    cr_assert_eq(se->val[pred], 7);
    cr_assert_eq(fb_count(&R[1], sw, -1), 0, "settled in place");
    fb_results_free(R);
    fb_free(&b);
  }
}

/* §2.4 Merge rules. m = Merge(a, b) with a control input from the end of a
 * chain g1 -> g2 -> g3: a (a root) arrives first and clears bit 0, but m
 * must wait for g3. b, arriving later, is dropped: m forwards a's 4 with
 * index 0. m2 has a control input from a dead node: a dead control source
 * does not kill a Merge (dead = dead_count == N counts data inputs only). */
Test(control, merge_waits_for_control_inputs_after_a_live_input) {
  fb b;
  fb_init(&b);
  int a = fb_compute(&b, "a", 0, 0, fb_fn_const, 4);
  int bb = fb_compute(&b, "b", 0, 0, fb_fn_const, 9);
  int g1 = fb_compute(&b, "g1", 0, 0, fb_fn_const, 0);
  int g2 = fb_compute(&b, "g2", 0, 1, fb_fn_copy, 0);
  int g3 = fb_compute(&b, "g3", 0, 1, fb_fn_copy, 0);
  int m = fb_node(&b, "m", "Merge", DFX_CTRL_MERGE, 0, 2, 2);
  int out = fb_compute(&b, "out", 0, 1, fb_fn_copy, 0);
  int p = fb_const(&b, "p", 0, DFX_BOOL, 1);
  int sw = fb_node(&b, "sw", "Switch", DFX_CTRL_SWITCH, 0, 2, 2);
  int d = fb_compute(&b, "d", 0, 1, fb_fn_copy, 0);
  int c5 = fb_compute(&b, "c5", 0, 0, fb_fn_const, 5);
  int c6 = fb_compute(&b, "c6", 0, 0, fb_fn_const, 6);
  int m2 = fb_node(&b, "m2", "Merge", DFX_CTRL_MERGE, 0, 2, 2);
  int out2 = fb_compute(&b, "out2", 0, 1, fb_fn_copy, 0);
  /* value_index read: not trivial, so m and m2 show in both logs. */
  fb_compute(&b, "m_idx", 0, 1, fb_fn_copy, 0);
  b.flow.nodes[m].merge_index_used = b.flow.nodes[m2].merge_index_used = true;
  fb_data(&b, a, 0, m, 0);
  fb_data(&b, bb, 0, m, 1);
  fb_data(&b, g1, 0, g2, 0);
  fb_data(&b, g2, 0, g3, 0);
  fb_control(&b, g3, m);
  fb_data(&b, m, 0, out, 0);
  fb_data(&b, m, 1, fb_find(&b, "m_idx"), 0);
  fb_data(&b, c5, 0, sw, 0);
  fb_data(&b, p, 0, sw, 1);
  fb_data(&b, sw, 0, d, 0);
  fb_data(&b, c5, 0, m2, 0);
  fb_data(&b, c6, 0, m2, 1);
  fb_control(&b, d, m2);
  fb_data(&b, m2, 0, out2, 0);
  fb_layout(&b);
  cr_assert_eq(b.flow.nodes[m].pending_init, 1 + 2 * 1);
  fb_result R[2]; /* settling off, on */
  fb_run_both(&b, 0, R);
  for (int k = 0; k < 2; k++) {
    const fb_result *r = &R[k];
    const fb_event *me = fb_once(r, m);
    cr_assert_gt(fb_pos(r, me), fb_pos(r, fb_once(r, g3)), "Merge ran before its control input");
    cr_assert_gt(fb_pos(r, me), fb_pos(r, fb_once(r, bb)));
    assert_live(me, &b, 4);
    cr_assert(me->has[1] && me->val[1] == 0);
    assert_live(fb_once(r, out), &b, 4);
    assert_live(fb_once(r, fb_find(&b, "m_idx")), &b, 0);
    assert_dead_from(fb_once(r, d), &b, sw);
    assert_live(fb_once(r, m2), &b, 5);
    assert_live(fb_once(r, out2), &b, 5);
  }
  fb_results_free(R);
  fb_free(&b);
}

/* A Merge whose data inputs are all dead fires dead (dead_count == N), and
 * its consumer is dead by the same Switch. 'outer' merges it with the
 * taken port and fires live on that, value_index 1. */
Test(control, merge_with_all_inputs_dead_fires_dead) {
  fb b;
  fb_init(&b);
  int p = fb_const(&b, "p", 0, DFX_BOOL, 1);
  int x = fb_const(&b, "x", 0, DFX_I32, 1);
  int sw = fb_node(&b, "sw", "Switch", DFX_CTRL_SWITCH, 0, 2, 2);
  int a = fb_compute(&b, "a", 0, 1, fb_fn_copy, 0);
  int bb = fb_compute(&b, "b", 0, 1, fb_fn_copy, 0);
  int m = fb_node(&b, "m", "Merge", DFX_CTRL_MERGE, 0, 2, 2);
  int after = fb_compute(&b, "after", 0, 1, fb_fn_copy, 0);
  int outer = fb_node(&b, "outer", "Merge", DFX_CTRL_MERGE, 0, 2, 2);
  int val = fb_compute(&b, "val", 0, 1, fb_fn_copy, 0);
  int idx = fb_compute(&b, "idx", 0, 1, fb_fn_copy, 0);
  b.flow.nodes[outer].merge_index_used = true;
  fb_data(&b, x, 0, sw, 0);
  fb_data(&b, p, 0, sw, 1);
  fb_data(&b, sw, 0, a, 0);
  fb_data(&b, sw, 0, bb, 0);
  fb_data(&b, a, 0, m, 0);
  fb_data(&b, bb, 0, m, 1);
  fb_data(&b, m, 0, after, 0);
  fb_data(&b, m, 0, outer, 0);
  fb_data(&b, sw, 1, outer, 1);
  fb_data(&b, outer, 0, val, 0);
  fb_data(&b, outer, 1, idx, 0);
  fb_layout(&b);
  fb_result R[2]; /* settling off, on */
  fb_run_both(&b, 0, R);
  for (int k = 0; k < 2; k++) {
    assert_dead_from(fb_once(&R[k], after), &b, sw);
    assert_live(fb_once(&R[k], val), &b, 1);
    assert_live(fb_once(&R[k], idx), &b, 1);
  }
  assert_dead_from(fb_once(&R[0], m), &b, sw);
  fb_results_free(R);
  fb_free(&b);
}

/* A ControlTrigger whose only input is dead is still live once ready; a
 * node hanging off it runs live, one hanging off the dead node directly
 * is dead. */
Test(control, control_trigger_is_forced_live) {
  fb b;
  fb_init(&b);
  int p = fb_const(&b, "p", 0, DFX_BOOL, 1);
  int x = fb_const(&b, "x", 0, DFX_I32, 2);
  int sw = fb_node(&b, "sw", "Switch", DFX_CTRL_SWITCH, 0, 2, 2);
  int d = fb_compute(&b, "d", 0, 1, fb_fn_copy, 0);
  int trig = fb_node(&b, "trig", "ControlTrigger", DFX_CTRL_CONTROL_TRIGGER, 0, 0, 0);
  int after = fb_compute(&b, "after", 0, 0, fb_fn_const, 42);
  int after_dead = fb_compute(&b, "after_dead", 0, 0, fb_fn_const, 1);
  fb_data(&b, x, 0, sw, 0);
  fb_data(&b, p, 0, sw, 1);
  fb_data(&b, sw, 0, d, 0);
  fb_control(&b, d, trig);
  fb_control(&b, trig, after);
  fb_control(&b, d, after_dead);
  fb_layout(&b);
  fb_result R[2]; /* settling off, on */
  fb_run_both(&b, 0, R);
  for (int k = 0; k < 2; k++) {
    assert_dead_from(fb_once(&R[k], d), &b, sw);
    cr_assert(!fb_once(&R[k], trig)->dead, "ControlTrigger ran dead");
    assert_live(fb_once(&R[k], after), &b, 42);
    assert_dead_from(fb_once(&R[k], after_dead), &b, sw);
  }
  fb_results_free(R);
  fb_free(&b);
}

/* An Exit that reads the loop's Identity (Switch:1) is live in every
 * iteration but the last: its root-frame consumer gets a second value in
 * root iteration 0 when loop iteration 1 ends. That is an ill-formed
 * graph, reported with both nodes named, not a silent overwrite. The
 * consumer has either run already (one input) or still waits for a slow
 * second input with the first value in its slot. */
static void run_second_value(bool waiting) {
  fb b;
  fb_init(&b);
  int x = fb_const(&b, "x", 0, DFX_I32, 0);
  fb_loop L = fb_counter_loop(&b, "w/", 0, x, 0, 3, 10);
  int bad = fb_node(&b, "w/bad_exit", "Exit", DFX_CTRL_EXIT, L.frame, 1, 1);
  int snk = fb_compute(&b, "snk", 0, 1, fb_fn_copy, 0);
  int snk2 = fb_compute(&b, "snk2", 0, waiting ? 2 : 1, fb_fn_add, 0);
  fb_data(&b, L.ident, 0, bad, 0);
  fb_data(&b, L.exit, 0, snk, 0);
  fb_data(&b, bad, 0, snk2, 0);
  if (waiting) fb_data(&b, fb_chain(&b, "late", 0, -1, 0, 60, 1), 0, snk2, 1);
  fb_layout(&b);
  fb_result R[2]; /* settling off, on */
  fb_run_both(&b, 0, R);
  for (int k = 0; k < 2; k++) {
    const fb_result *r = &R[k];
    cr_assert_eq(r->code, DFX_EINVAL, "%s", r->msg);
    cr_assert(strstr(r->msg, "'snk2'") && strstr(r->msg, "'w/bad_exit' (Exit)") &&
                  strstr(r->msg, "second value for input 0") && strstr(r->msg, "iteration 0"),
              "%s", r->msg);
    /* Running, it got loop iteration 0's i; waiting, it never ran. */
    if (waiting) cr_assert_eq(fb_count(r, snk2, -1), 0);
    else assert_live(fb_once(r, snk2), &b, 0);
    cr_assert_eq(fb_count(r, snk, -1), 0, "the loop cannot have finished");
  }
  fb_results_free(R);
  fb_free(&b);
}

Test(control, second_value_after_the_consumer_ran_is_an_error) { run_second_value(false); }
Test(control, second_value_while_the_consumer_waits_is_an_error) { run_second_value(true); }

/* _SwitchN (§2.2): data goes to port `index`; an index outside [0, N)
 * selects the last port. The other ports are unset: their consumers are
 * dead, killed by the _SwitchN. It is never settled (dfx__ctrl_execute
 * runs it). */
Test(control, switch_n_forwards_to_the_index_or_the_last_port) {
  struct {
    int32_t index;
    int port;
  } cases[] = {{0, 0}, {1, 1}, {2, 2}, {5, 2}, {-1, 2}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    fb b;
    fb_init(&b);
    int x = fb_const(&b, "x", 0, DFX_I32, 7);
    int idx = fb_const(&b, "idx", 0, DFX_I32, cases[c].index);
    int sn = fb_node(&b, "sn", "_SwitchN", DFX_CTRL_SWITCH, 0, 2, 3);
    b.flow.nodes[sn].is_switch_n = true;
    fb_data(&b, x, 0, sn, 0);
    fb_data(&b, idx, 0, sn, 1);
    int out[3];
    for (int k = 0; k < 3; k++) {
      char nm[8];
      snprintf(nm, sizeof nm, "o%d", k);
      out[k] = fb_compute(&b, nm, 0, 1, fb_fn_copy, 0);
      fb_data(&b, sn, k, out[k], 0);
    }
    fb_layout(&b);
    fb_result R[2]; /* settling off, on */
    fb_run_both(&b, 0, R);
    for (int r = 0; r < 2; r++) {
      cr_assert_eq(fb_count(&R[r], sn, 0), 1, "index %d: _SwitchN must run", cases[c].index);
      for (int k = 0; k < 3; k++) {
        if (k == cases[c].port) assert_live(fb_once(&R[r], out[k]), &b, 7);
        else assert_dead_from(fb_once(&R[r], out[k]), &b, sn);
      }
    }
    fb_results_free(R);
    fb_free(&b);
  }
}

/* A Switch predicate must be a scalar bool (§2.2): an int32 one fails the
 * node with InvalidArgument instead of being read as a bool. */
Test(control, switch_with_a_non_bool_predicate_fails) {
  fb b;
  fb_init(&b);
  int x = fb_const(&b, "x", 0, DFX_I32, 7);
  int p = fb_const(&b, "p", 0, DFX_I32, 1);
  int sw = fb_node(&b, "sw", "Switch", DFX_CTRL_SWITCH, 0, 2, 2);
  int o = fb_compute(&b, "o", 0, 1, fb_fn_copy, 0);
  fb_data(&b, x, 0, sw, 0);
  fb_data(&b, p, 0, sw, 1);
  fb_data(&b, sw, 1, o, 0);
  fb_layout(&b);
  fb_result R[2]; /* settling off, on: a settled Switch with a bad predicate is run normally */
  fb_run_both(&b, 0, R);
  for (int r = 0; r < 2; r++) {
    cr_assert_eq(R[r].code, DFX_EINVAL, "%s", R[r].msg);
    cr_assert(strstr(R[r].msg, "must be a scalar bool") && strstr(R[r].msg, "int32"), "%s", R[r].msg);
    cr_assert_eq(fb_count(&R[r], o, -1), 0);
  }
  fb_results_free(R);
  fb_free(&b);
}

/* ================= iteration.c: loops ================= */

/* i = 0; while i < 4: i += 1. Iterations 0..4 exist; the body (add) runs
 * live in 0..3 giving k + 1, and dead in 4 (Switch port 1 untaken); the
 * Exit is dead in 0..3 and live in 4 with 4. A second Exit reads Switch:0
 * through a chain, so its dead instances come after the next iteration
 * started: only the newest iteration's dead Exits may be held, and
 * starting an iteration drops those held, so 'sum' (which also waits for
 * a root chain that ends after the loop) gets only the live 4s and no
 * dead input when the frame is deleted: 4 + 4 + 10. */
Test(iteration, counter_loop) {
  fb b;
  fb_init(&b);
  int x = fb_const(&b, "x", 0, DFX_I32, 0);
  fb_loop L = fb_counter_loop(&b, "w/", 0, x, 0, 4, 10);
  int snk = fb_compute(&b, "snk", 0, 1, fb_fn_copy, 0);
  fb_data(&b, L.exit, 0, snk, 0);
  int late = fb_chain(&b, "late", 0, -1, 0, 60, 10);
  int exit2 = fb_node(&b, "w/Exit_2", "Exit", DFX_CTRL_EXIT, L.frame, 1, 1);
  fb_data(&b, fb_chain(&b, "w/c", L.frame, L.sw, 0, 3, 0), 0, exit2, 0);
  int sum = fb_compute(&b, "sum", 0, 3, fb_fn_add, 0);
  fb_data(&b, L.exit, 0, sum, 0);
  fb_data(&b, exit2, 0, sum, 1);
  fb_data(&b, late, 0, sum, 2);
  fb_layout(&b);
  fb_result R[2]; /* settling off, on */
  fb_run_both(&b, 0, R);
  for (int r = 0; r < 2; r++) {
    assert_live(fb_once(&R[r], snk), &b, 4);
    const fb_event *se = fb_once(&R[r], sum);
    assert_live(se, &b, 18);
    for (int i = 0; i < R[r].n_ev; i++) /* else this checks nothing */
      if (R[r].ev[i].sframe == L.frame)
        cr_assert_gt(fb_pos(&R[r], fb_once(&R[r], late)), i, "the root chain must end after the loop");
    cr_assert_eq(fb_count(&R[r], L.add, 0), 4, "body runs");
    for (int k = 0; k < 4; k++) assert_live(ran(&R[r], &b, L.add, 0, k), &b, k + 1);
    assert_dead_from(ran(&R[r], &b, L.add, 0, 4), &b, L.sw);
    cr_assert_eq(max_iter(&R[r], L.add), 4);
    assert_live(ran(&R[r], &b, L.exit, 0, 4), &b, 4);
    cr_assert_eq(fb_count(&R[r], L.exit, 0), 1);
    cr_assert_eq(fb_count(&R[r], L.enter, -1), 1);
    cr_assert_eq(fb_count(&R[r], L.next, 0), 4);
  }
  /* Unsettled, every instance shows: Merge in 0..4 with value k, the dead
   * Exits of 0..3, the dead NextIteration of 4. */
  for (int k = 0; k <= 4; k++) {
    assert_live(ran(&R[0], &b, L.merge, 0, k), &b, k);
    assert_live(ran(&R[0], &b, L.less, 0, k), &b, k < 4);
    cr_assert(ran(&R[0], &b, L.cond, 0, k));
    cr_assert(ran(&R[0], &b, L.sw, 0, k));
    cr_assert(ran(&R[0], &b, L.ident, 0, k)->dead == (k == 4));
    cr_assert(ran(&R[0], &b, L.next, 0, k)->dead == (k == 4));
    if (k < 4) assert_dead_from(ran(&R[0], &b, L.exit, 0, k), &b, L.sw);
  }
  cr_assert_eq(max_iter(&R[0], L.merge), 4);
  cr_assert_eq(fb_count(&R[1], L.exit, 1), 0, "dead Exits are settled in place");
  fb_results_free(R);
  fb_free(&b);
}

/* i = 5; while i < 3: zero trips. LoopCond is false in iteration 0: the
 * Exit is live there with 5, and the body runs once, dead. */
Test(iteration, zero_trip_loop) {
  fb b;
  fb_init(&b);
  int x = fb_const(&b, "x", 0, DFX_I32, 5);
  fb_loop L = fb_counter_loop(&b, "w/", 0, x, 0, 3, 10);
  int snk = fb_compute(&b, "snk", 0, 1, fb_fn_copy, 0);
  fb_data(&b, L.exit, 0, snk, 0);
  fb_layout(&b);
  fb_result R[2]; /* settling off, on */
  fb_run_both(&b, 0, R);
  for (int r = 0; r < 2; r++) {
    assert_live(fb_once(&R[r], snk), &b, 5);
    assert_live(ran(&R[r], &b, L.exit, 0, 0), &b, 5);
    assert_dead_from(fb_once(&R[r], L.add), &b, L.sw);
    cr_assert(fb_once(&R[r], L.next)->dead);
    cr_assert_eq(max_iter(&R[r], L.next), 0);
  }
  assert_live(fb_once(&R[0], L.merge), &b, 5);
  fb_results_free(R);
  fb_free(&b);
}

/* A loop invariant (constant Enter) reaches every iteration. Its value
 * (100) comes through a long root-frame chain, so it arrives late: with
 * parallel_iterations 2, iterations 0 and 1 already exist then (iteration
 * 0 cannot finish while an Enter is pending, so no third one can start:
 * the Enter's child frame has newest iteration 1), and iterations 2..6 are
 * created afterwards and get it from inv_values. use = i + inv is live
 * with k + 100 in 0..5 and dead in 6. */
Test(iteration, constant_enter_reaches_every_iteration) {
  fb b;
  fb_init(&b);
  int x = fb_const(&b, "x", 0, DFX_I32, 0);
  fb_loop L = fb_counter_loop(&b, "w/", 0, x, 0, 6, 2);
  int prev = fb_chain(&b, "r", 0, -1, 0, 16, 100);
  int ce = fb_enter(&b, "w/inv", 0, L.frame, true);
  int use = fb_compute(&b, "w/use", L.frame, 2, fb_fn_add, 0);
  int snk = fb_compute(&b, "snk", 0, 1, fb_fn_copy, 0);
  fb_data(&b, prev, 0, ce, 0);
  fb_data(&b, L.ident, 0, use, 0);
  fb_data(&b, ce, 0, use, 1);
  fb_data(&b, L.exit, 0, snk, 0);
  fb_layout(&b);
  cr_assert_eq(b.flow.frames[L.frame].n_enters, 2);
  fb_result R[2]; /* settling off, on */
  fb_run_both(&b, 0, R);
  for (int r = 0; r < 2; r++) {
    assert_live(fb_once(&R[r], snk), &b, 6);
    cr_assert_eq(fb_once(&R[r], ce)->child_iteration_count, 1, "the invariant must arrive after iteration 1 exists");
    cr_assert(R[r].deferred[L.frame], "iteration 2 must have waited for the invariant");
    for (int k = 0; k < 6; k++) assert_live(ran(&R[r], &b, use, 0, k), &b, k + 100);
    assert_dead_from(ran(&R[r], &b, use, 0, 6), &b, L.sw);
    cr_assert_eq(fb_count(&R[r], use, -1), 7);
    cr_assert_leq(R[r].max_outstanding[L.frame], 2);
  }
  fb_results_free(R);
  fb_free(&b);
}

/* parallel_iterations bounds the iterations alive at once. A side chain of
 * 40 nodes hangs off each iteration's Identity. The FIFO driver advances
 * every queued chain by one node per round, and one iteration reaches its
 * NextIteration about 8 rounds after the previous one, so iteration k is
 * still alive when iterations k+1..k+3 want to start: the loop reaches the
 * bound, and further NextIteration values wait in next_iter_roots until
 * the oldest iteration ends. Results are those of the plain loop: the
 * chain's end is k + 100 in iterations 0..7, the Exit 8. */
#define SIDE_CHAIN 40
static void run_bounded(int pi) {
  fb b;
  fb_init(&b);
  int x = fb_const(&b, "x", 0, DFX_I32, 0);
  fb_loop L = fb_counter_loop(&b, "w/", 0, x, 0, 8, pi);
  int prev = fb_chain(&b, "w/s", L.frame, L.ident, 0, SIDE_CHAIN, 100);
  int snk = fb_compute(&b, "snk", 0, 1, fb_fn_copy, 0);
  fb_data(&b, L.exit, 0, snk, 0);
  fb_layout(&b);
  fb_result R[2]; /* settling off, on */
  fb_run_both(&b, 0, R);
  for (int r = 0; r < 2; r++) {
    cr_assert_leq(R[r].max_outstanding[L.frame], pi, "pi %d: %d iterations alive at once", pi,
                 R[r].max_outstanding[L.frame]);
    cr_assert_eq(R[r].max_outstanding[L.frame], pi, "pi %d: the loop never reached its bound", pi);
    cr_assert(R[r].deferred[L.frame], "pi %d, settling %s: no NextIteration value was deferred", pi, r ? "on" : "off");
    assert_live(fb_once(&R[r], snk), &b, 8);
    cr_assert_eq(fb_count(&R[r], L.add, 0), 8);
    for (int k = 0; k < 8; k++) assert_live(ran(&R[r], &b, prev, 0, k), &b, k + 100);
    assert_dead_from(ran(&R[r], &b, prev, 0, 8), &b, L.sw);
  }
  fb_results_free(R);
  fb_free(&b);
}

Test(iteration, parallel_iterations_1_bounds_outstanding_iterations) { run_bounded(1); }
Test(iteration, parallel_iterations_3_bounds_outstanding_iterations) { run_bounded(3); }

/* Two loop variables, i (the counter) and acc += i, so each iteration has
 * two NextIterations. The first to fire in the newest iteration starts the
 * next one (or is deferred with the other when parallel_iterations are in
 * flight); the second then feeds the iteration that exists. With limit 6:
 * i ends at 6 and acc at 0 + 1 + ... + 5 = 15, whatever the bound. */
static void run_two_vars(int pi) {
  fb b;
  fb_init(&b);
  int x = fb_const(&b, "x", 0, DFX_I32, 0);
  fb_loop L = fb_counter_loop(&b, "w/", 0, x, 0, 6, pi);
  int en = fb_enter(&b, "w/Enter_1", 0, L.frame, false);
  int m = fb_node(&b, "w/Merge_1", "Merge", DFX_CTRL_MERGE, L.frame, 2, 2);
  int sw = fb_node(&b, "w/Switch_1", "Switch", DFX_CTRL_SWITCH, L.frame, 2, 2);
  int id = fb_identity(&b, "w/Identity_1", L.frame);
  int acc = fb_compute(&b, "w/acc", L.frame, 2, fb_fn_add, 0);
  int next = fb_node(&b, "w/NextIteration_1", "NextIteration", DFX_CTRL_NEXT_ITERATION, L.frame, 1, 1);
  int ex = fb_node(&b, "w/Exit_1", "Exit", DFX_CTRL_EXIT, L.frame, 1, 1);
  int snk_i = fb_compute(&b, "snk_i", 0, 1, fb_fn_copy, 0);
  int snk_acc = fb_compute(&b, "snk_acc", 0, 1, fb_fn_copy, 0);
  fb_data(&b, x, 0, en, 0);
  fb_data(&b, en, 0, m, 0);
  fb_data(&b, next, 0, m, 1);
  fb_data(&b, m, 0, sw, 0);
  fb_data(&b, L.cond, 0, sw, 1);
  fb_data(&b, sw, 1, id, 0);
  fb_data(&b, id, 0, acc, 0);
  fb_data(&b, L.ident, 0, acc, 1);
  fb_data(&b, acc, 0, next, 0);
  fb_data(&b, sw, 0, ex, 0);
  fb_data(&b, L.exit, 0, snk_i, 0);
  fb_data(&b, ex, 0, snk_acc, 0);
  fb_layout(&b);
  fb_result R[2]; /* settling off, on */
  fb_run_both(&b, 0, R);
  for (int r = 0; r < 2; r++) {
    assert_live(fb_once(&R[r], snk_i), &b, 6);
    assert_live(fb_once(&R[r], snk_acc), &b, 15);
    cr_assert_leq(R[r].max_outstanding[L.frame], pi);
    int32_t want = 0;
    for (int k = 0; k < 6; k++) {
      want += k;
      assert_live(ran(&R[r], &b, acc, 0, k), &b, want);
    }
  }
  cr_assert(pi > 1 || R[0].deferred[L.frame], "parallel_iterations 1 defers every NextIteration value");
  fb_results_free(R);
  fb_free(&b);
}

Test(iteration, two_loop_variables_parallel_iterations_1) { run_two_vars(1); }
Test(iteration, two_loop_variables_parallel_iterations_2) { run_two_vars(2); }

/* A loop in the untaken branch of a cond: its Enter is dead, which makes
 * the Merge dead at once ("or X is an Enter": the NextIteration input
 * never comes), so the whole loop runs dead once in iteration 0. Its dead
 * Exit is held and delivered when the frame is deleted: the root consumer
 * ends dead, killed by the cond's Switch. */
Test(iteration, loop_in_a_dead_branch_runs_dead_once) {
  fb b;
  fb_init(&b);
  int p = fb_const(&b, "p", 0, DFX_BOOL, 0);
  int x = fb_const(&b, "x", 0, DFX_I32, 7);
  int sw = fb_node(&b, "sw", "Switch", DFX_CTRL_SWITCH, 0, 2, 2);
  fb_data(&b, x, 0, sw, 0);
  fb_data(&b, p, 0, sw, 1);
  fb_loop L = fb_counter_loop(&b, "w/", 0, sw, 1, 5, 10);
  int snk = fb_compute(&b, "snk", 0, 1, fb_fn_copy, 0);
  int other = fb_compute(&b, "other", 0, 1, fb_fn_copy, 0);
  fb_data(&b, L.exit, 0, snk, 0);
  fb_data(&b, sw, 0, other, 0);
  fb_layout(&b);
  fb_result R[2]; /* settling off, on */
  fb_run_both(&b, 0, R);
  for (int r = 0; r < 2; r++) {
    assert_dead_from(fb_once(&R[r], snk), &b, sw);
    assert_live(fb_once(&R[r], other), &b, 7);
    assert_dead_from(fb_once(&R[r], L.add), &b, sw);
    assert_dead_from(fb_once(&R[r], L.enter), &b, sw);
    /* the dead Exit reached the root only after the loop was over */
    cr_assert_gt(fb_pos(&R[r], fb_once(&R[r], snk)), fb_pos(&R[r], fb_once(&R[r], L.next)));
  }
  int loop_nodes[] = {L.enter, L.merge, L.limit, L.less, L.cond, L.sw, L.ident, L.add, L.next, L.exit};
  for (size_t i = 0; i < sizeof loop_nodes / sizeof loop_nodes[0]; i++) {
    const fb_event *e = fb_once(&R[0], loop_nodes[i]);
    assert_dead_from(e, &b, sw);
    cr_assert_eq(e->iter, 0);
  }
  fb_results_free(R);
  fb_free(&b);
}

/* Nested loops: outer i = 0..3 (limit 3); in each outer iteration the
 * inner loop counts j from 0 to 2 in a fresh frame instance, with its own
 * iterations 0, 1, 2. 'use' reads the inner Exit (2). In the outer
 * iteration 3 the outer body is dead: the inner Enter is dead, the inner
 * loop runs dead once (iteration 0) and its held dead Exit makes 'use'
 * dead when that inner instance is deleted. */
Test(iteration, nested_loops_recreate_the_inner_frame_per_outer_iteration) {
  fb b;
  fb_init(&b);
  int x = fb_const(&b, "x", 0, DFX_I32, 0);
  fb_loop O = fb_counter_loop(&b, "o/", 0, x, 0, 3, 10);
  int j0 = fb_compute(&b, "o/j0", O.frame, 0, fb_fn_const, 0);
  fb_control(&b, O.ident, j0);
  fb_loop I = fb_counter_loop(&b, "o/i/", O.frame, j0, 0, 2, 10);
  int use = fb_compute(&b, "o/use", O.frame, 1, fb_fn_copy, 0);
  int snk = fb_compute(&b, "snk", 0, 1, fb_fn_copy, 0);
  fb_data(&b, I.exit, 0, use, 0);
  fb_data(&b, O.exit, 0, snk, 0);
  fb_layout(&b);
  cr_assert_eq(b.flow.frames[I.frame].parent, O.frame);
  fb_result R[2]; /* settling off, on */
  fb_run_both(&b, 0, R);
  for (int r = 0; r < 2; r++) {
    assert_live(fb_once(&R[r], snk), &b, 3);
    for (int k = 0; k < 3; k++) {
      /* inner add: j + 1 in inner iterations 0, 1; dead in 2 */
      assert_live(ran(&R[r], &b, I.add, k, 0), &b, 1);
      assert_live(ran(&R[r], &b, I.add, k, 1), &b, 2);
      assert_dead_from(ran(&R[r], &b, I.add, k, 2), &b, I.sw);
      cr_assert_null(fb_at(&R[r], I.add, k, 3));
      assert_live(ran(&R[r], &b, I.exit, k, 2), &b, 2);
      assert_live(ran(&R[r], &b, use, 0, k), &b, 2);
    }
    assert_dead_from(ran(&R[r], &b, I.add, 3, 0), &b, O.sw);
    cr_assert_null(fb_at(&R[r], I.add, 3, 1));
    assert_dead_from(ran(&R[r], &b, use, 0, 3), &b, O.sw);
    cr_assert_eq(fb_count(&R[r], use, -1), 4);
    cr_assert_eq(fb_count(&R[r], I.enter, -1), 4, "one inner Enter per outer iteration");
  }
  /* Unsettled: the inner Merge runs in inner iterations 0..2 of each live
   * outer iteration, then once dead in outer iteration 3. */
  for (int k = 0; k < 3; k++)
    for (int j = 0; j < 3; j++) assert_live(ran(&R[0], &b, I.merge, k, j), &b, j);
  cr_assert(ran(&R[0], &b, I.merge, 3, 0)->dead);
  cr_assert_eq(fb_count(&R[0], I.merge, -1), 10);
  fb_results_free(R);
  fb_free(&b);
}

/* dfx_prop.max_iterations = 5 lets iterations 0..4 run and fails creating
 * iteration 5 (directly, or from CleanupIterations when the value was
 * deferred by parallel_iterations 1), naming the frame. */
static void run_limited(int pi) {
  fb b;
  fb_init(&b);
  int x = fb_const(&b, "x", 0, DFX_I32, 0);
  fb_loop L = fb_counter_loop(&b, "w/", 0, x, 0, 1000000, pi);
  int snk = fb_compute(&b, "snk", 0, 1, fb_fn_copy, 0);
  fb_data(&b, L.exit, 0, snk, 0);
  fb_layout(&b);
  fb_result R[2]; /* settling off, on */
  fb_run_both(&b, 5, R);
  for (int r = 0; r < 2; r++) {
    cr_assert_eq(R[r].code, DFX_ELIMIT, "pi %d: %s", pi, R[r].msg);
    cr_assert(strstr(R[r].msg, "'w/while'") && strstr(R[r].msg, "maximum of 5 iterations"), "%s", R[r].msg);
    for (int k = 0; k < 5; k++) assert_live(ran(&R[r], &b, L.add, 0, k), &b, k + 1);
    cr_assert_eq(max_iter(&R[r], L.add), 4);
    cr_assert_eq(fb_count(&R[r], snk, -1), 0);
  }
  fb_results_free(R);
  fb_free(&b);
}

Test(iteration, max_iterations_stops_a_long_loop) { run_limited(10); }
Test(iteration, max_iterations_stops_a_deferred_iteration) { run_limited(1); }

/* A frame with no loop in it, entered from the untaken branch of a cond:
 * Enter -> Exit. The dead Enter makes the Exit dead in iteration 0; it is
 * held and delivered when the frame is deleted, so 'snk' ends dead
 * (§2.3, §2.5 DeleteFrame). */
static void build_enter_exit(fb *b, int pred, int *sw, int *snk) {
  fb_init(b);
  int p = fb_const(b, "p", 0, DFX_BOOL, pred);
  int x = fb_const(b, "x", 0, DFX_I32, 7);
  *sw = fb_node(b, "sw", "Switch", DFX_CTRL_SWITCH, 0, 2, 2);
  int w = fb_frame(b, "w", 0, 10);
  int en = fb_enter(b, "w/Enter", 0, w, false);
  int ex = fb_node(b, "w/Exit", "Exit", DFX_CTRL_EXIT, w, 1, 1);
  *snk = fb_compute(b, "snk", 0, 1, fb_fn_copy, 0);
  fb_data(b, x, 0, *sw, 0);
  fb_data(b, p, 0, *sw, 1);
  fb_data(b, *sw, 1, en, 0);
  fb_data(b, en, 0, ex, 0);
  fb_data(b, ex, 0, *snk, 0);
  fb_layout(b);
}

Test(iteration, enter_straight_into_exit_live) {
  fb b;
  int sw, snk;
  build_enter_exit(&b, 1, &sw, &snk);
  fb_result R[2]; /* settling off, on */
  fb_run_both(&b, 0, R);
  assert_live(fb_once(&R[0], snk), &b, 7);
  assert_live(fb_once(&R[1], snk), &b, 7);
  fb_results_free(R);
  fb_free(&b);
}

/* A dead Enter straight into its Exit: with settling on, the Exit is
 * settled in place and nothing in the child frame is readied, so the Enter
 * itself must finish the child's iteration 0 and delete the frame, which
 * delivers the held dead Exit ('snk' ends dead, from the Switch). (A bug
 * found by this test: the run used to end DFX_ESTUCK.) */
Test(iteration, enter_straight_into_exit_dead) {
  fb b;
  int sw, snk;
  build_enter_exit(&b, 0, &sw, &snk);
  fb_result R[2]; /* settling off, on */
  fb_run_both(&b, 0, R);
  assert_dead_from(fb_once(&R[0], snk), &b, sw);
  assert_dead_from(fb_once(&R[1], snk), &b, sw);
  fb_results_free(R);
  fb_free(&b);
}

/* The same frame without a loop, inside the body of a loop with
 * parallel_iterations 1: each outer iteration k has a cond on a false
 * predicate whose untaken branch enters frame "w/c/in" and leaves it at
 * once. Each inner instance runs dead and is deleted, so outer iteration
 * k can end and k + 1 start: i counts to 5, 'use' (after the cond's
 * Merge) is k in 0..4 and dead in 5.
 * (The same bug as enter_straight_into_exit_dead stopped this loop after
 * one iteration, with a wrong "dead fetch" error through the session.) */
Test(iteration, dead_frame_without_a_loop_inside_a_loop_body) {
  fb b;
  fb_init(&b);
  int x = fb_const(&b, "x", 0, DFX_I32, 0);
  fb_loop L = fb_counter_loop(&b, "w/", 0, x, 0, 5, 1);
  int p = fb_const(&b, "w/p", L.frame, DFX_BOOL, 0);
  int csw = fb_node(&b, "w/c/Switch", "Switch", DFX_CTRL_SWITCH, L.frame, 2, 2);
  int in = fb_frame(&b, "w/c/in", L.frame, 10);
  int en = fb_enter(&b, "w/c/in/Enter", L.frame, in, false);
  int ex = fb_node(&b, "w/c/in/Exit", "Exit", DFX_CTRL_EXIT, in, 1, 1);
  int cm = fb_node(&b, "w/c/Merge", "Merge", DFX_CTRL_MERGE, L.frame, 2, 2);
  int use = fb_compute(&b, "w/use", L.frame, 1, fb_fn_copy, 0);
  int snk = fb_compute(&b, "snk", 0, 1, fb_fn_copy, 0);
  fb_control(&b, L.ident, p);
  fb_data(&b, L.ident, 0, csw, 0);
  fb_data(&b, p, 0, csw, 1);
  fb_data(&b, csw, 1, en, 0);
  fb_data(&b, en, 0, ex, 0);
  fb_data(&b, csw, 0, cm, 0);
  fb_data(&b, ex, 0, cm, 1);
  fb_data(&b, cm, 0, use, 0);
  fb_data(&b, L.exit, 0, snk, 0);
  fb_layout(&b);
  fb_result R[2]; /* settling off, on */
  fb_run_both(&b, 0, R);
  for (int r = 0; r < 2; r++) {
    assert_live(fb_once(&R[r], snk), &b, 5);
    for (int k = 0; k < 5; k++) assert_live(ran(&R[r], &b, use, 0, k), &b, k);
    assert_dead_from(ran(&R[r], &b, use, 0, 5), &b, L.sw);
    cr_assert_eq(fb_count(&R[r], en, 1), 6, "one dead inner Enter per outer iteration");
  }
  fb_results_free(R);
  fb_free(&b);
}
