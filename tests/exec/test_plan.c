/* test_plan.c - plan building (exec/plan.c) from text graphs: which nodes
 * a signature keeps (tf-semantics §2.8 pruning, feeds replacing their
 * producers), what each plan node tells propagation (observed, trivial,
 * merge_index_used, pending counts, frames, roots) and the dispatcher
 * (inline_ok, initial cost), and the errors and explanations a bad
 * signature gets. Kernels come from the real registry; the plan looks
 * them up for the needed nodes only. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eutil.h"
#include "graph_import.h"
#include "gtext.h"
#include "kernel.h"
#include "lib.h"
#include "plan.h"
#include "policy.h"

TestSuite(plan, .init = eu_setup, .fini = eu_teardown, .timeout = 30);

/* ---- harness: a graph, its kernels and one plan ---- */

typedef struct pt {
  dfx_graph *g;
  dfx_plan *plan;
  dfx_plan_sel sel;         /* live between pt_select and pt_unselect */
  dfx_status st;
  char buf[3][512];         /* the port names point in here */
  dfx_port feeds[8], fetches[8];
  const char *targets[8];
  int nf, nx, nt;
} pt;

static void pt_init(pt *t, dfx_graph *g) {
  memset(t, 0, sizeof *t);
  t->g = g;
}

static void pt_text(pt *t, const char *text) { pt_init(t, eu_graph(text)); }

static void pt_free(pt *t) {
  dfx__plan_free(t->plan);
  dfx_graph_free(t->g);
}

/* Splits a comma list into buf (names point into it); NULL: empty. */
static int split(char *buf, const char *list, char **out) {
  int n = 0;
  snprintf(buf, 512, "%s", list ? list : "");
  for (char *save, *tok = strtok_r(buf, ",", &save); tok && n < 8; tok = strtok_r(NULL, ",", &save)) out[n++] = tok;
  return n;
}

/* "a:1,b" -> ports (index 0 when omitted). */
static int parse_ports(char *buf, const char *list, dfx_port *out) {
  char *tok[8];
  int n = split(buf, list, tok);
  for (int i = 0; i < n; i++) {
    char *colon = strrchr(tok[i], ':');
    out[i].index = colon ? atoi(colon + 1) : 0;
    if (colon) *colon = 0;
    out[i].node = tok[i];
  }
  return n;
}

static dfx_code pt_select(pt *t, const char *feeds, const char *fetches, const char *targets) {
  char *names[8];
  t->nf = parse_ports(t->buf[0], feeds, t->feeds);
  t->nx = parse_ports(t->buf[1], fetches, t->fetches);
  t->nt = split(t->buf[2], targets, names);
  for (int i = 0; i < t->nt; i++) t->targets[i] = names[i];
  dfx__status_clear(&t->st);
  return dfx__plan_select(t->g, t->feeds, t->nf, t->fetches, t->nx, t->targets, t->nt, &t->sel, &t->st);
}

static void pt_unselect(pt *t) { dfx__plan_select_free(&t->sel); }

/* Select and build: what a session does for a new signature (without an
 * optimizer). */
static dfx_code pt_plan(pt *t, const char *feeds, const char *fetches, const char *targets) {
  dfx_code c = pt_select(t, feeds, fetches, targets);
  if (c != DFX_OK) return c;
  const dfx_registry *r = dfx__lib_registry(&t->st);
  cr_assert(r);
  char *key = dfx__plan_key(t->feeds, t->nf, t->fetches, t->nx, t->targets, t->nt);
  cr_assert(key);
  c = dfx__plan_build(t->g, NULL, &t->sel, r, key, &t->plan, &t->st);
  dfx__free(key);
  pt_unselect(t);
  return c;
}

static void pt_plan_ok(pt *t, const char *feeds, const char *fetches, const char *targets) {
  dfx_code c = pt_plan(t, feeds, fetches, targets);
  cr_assert_eq(c, DFX_OK, "plan: %s", t->st.msg);
}

/* Plan index of graph node `name` (-1: pruned). Feed nodes do not count. */
static int pn(const pt *t, const char *name) {
  const dfx_plan *p = t->plan;
  for (int i = 0; i < p->flow.n_nodes; i++)
    if (p->nodes[i].g && strcmp(p->nodes[i].g->name, name) == 0) return i;
  return -1;
}

static int pnode(const pt *t, const char *name) {
  int i = pn(t, name);
  cr_assert(i >= 0, "'%s' was pruned", name);
  return i;
}

/* Plan index of the feed node standing for `name`. */
static int pfeed(const pt *t, const char *name) {
  const dfx_plan *p = t->plan;
  for (int i = 0; i < p->flow.n_nodes; i++)
    if (p->nodes[i].feed >= 0 && strcmp(p->flow.nodes[i].name, name) == 0) return i;
  cr_assert_fail("no feed node for '%s'", name);
  return -1;
}

static const dfx_fnode *fn(const pt *t, int i) { return &t->plan->flow.nodes[i]; }

static const dfx_fedge *pedge(const pt *t, int src, int dst, int dst_slot) {
  const dfx_fnode *n = fn(t, src);
  for (int e = 0; e < n->n_edges; e++)
    if (n->edges[e].dst == dst && n->edges[e].dst_slot == dst_slot) return &n->edges[e];
  return NULL;
}

static void assert_only(const pt *t, const char *const *names, int n) {
  cr_assert_eq(t->plan->flow.n_nodes - t->plan->n_feeds, n, "plan keeps %d graph nodes, expected %d",
               t->plan->flow.n_nodes - t->plan->n_feeds, n);
  for (int i = 0; i < n; i++) pnode(t, names[i]);
}

/* ---- pruning ---- */

#define ARITH                                                                       \
  GT_CONST_I32("a", 1, "") GT_CONST_I32("b", 2, "") GT_CONST_I32("k", 9, "")       \
  GT_OP2("c", "Add", "a", "b", "DT_INT32", "")                                      \
  GT_OP2("d", "Mul", "c", "c", "DT_INT32", GT_INPUT("^k"))                          \
  GT_CONST_I32("x", 5, "") GT_OP2("y", "Add", "x", "x", "DT_INT32", "")

/* Fetching d needs c, its inputs a and b, and k through a control edge;
 * x and y are not reverse-reachable. */
Test(plan, prune_keeps_only_what_the_fetches_reach) {
  pt t;
  pt_text(&t, ARITH);
  pt_plan_ok(&t, NULL, "d", NULL);
  const char *keep[] = {"a", "b", "k", "c", "d"};
  assert_only(&t, keep, 5);
  cr_assert_eq(pn(&t, "x"), -1);
  cr_assert_eq(pn(&t, "y"), -1);
  cr_assert_eq(t.plan->n_fetches, 1);
  cr_assert_eq(t.plan->fetches[0].node, pnode(&t, "d"));
  cr_assert_eq(t.plan->fetches[0].slot, 0);
  cr_assert(pedge(&t, pnode(&t, "k"), pnode(&t, "d"), -1), "k -> d control edge");
  cr_assert_eq(t.plan->flow.n_roots, 3, "a, b, k");
  pt_free(&t);
}

/* Feeding b:0 replaces b on the edges that read it; b and a (needed only
 * by b) are pruned. The feed node serves both of c's inputs from slot 0. */
#define FED GT_CONST_I32("a", 1, "") GT_OP2("b", "Add", "a", "a", "DT_INT32", "") GT_OP2("c", "Mul", "b", "b", "DT_INT32", "")

Test(plan, a_fed_port_replaces_its_producer) {
  pt t;
  pt_text(&t, FED);
  pt_plan_ok(&t, "b:0", "c", NULL);
  const char *keep[] = {"c"};
  assert_only(&t, keep, 1);
  cr_assert_eq(pn(&t, "a"), -1);
  cr_assert_eq(pn(&t, "b"), -1);
  cr_assert_eq(t.plan->n_feeds, 1);
  int f = pfeed(&t, "b"), c = pnode(&t, "c");
  cr_assert_eq(t.plan->nodes[f].feed, 0);
  cr_assert_null(t.plan->nodes[f].g);
  cr_assert_null(t.plan->nodes[f].kernel);
  cr_assert_str_eq(fn(&t, f)->op, "(feed)");
  cr_assert_eq(fn(&t, f)->n_out, 1);
  cr_assert_eq(fn(&t, f)->frame, 0);
  cr_assert(fn(&t, f)->observed, "the executor hands out a feed's value");
  cr_assert(t.plan->nodes[f].inline_ok);
  for (int slot = 0; slot < 2; slot++) {
    const dfx_fedge *e = pedge(&t, f, c, slot);
    cr_assert(e, "feed -> c:%d", slot);
    cr_assert_eq(e->src_slot, 0);
  }
  cr_assert_eq(t.plan->flow.n_roots, 1);
  cr_assert_eq(t.plan->flow.roots[0], f);
  pt_free(&t);
}

/* The producer stays when something else needs it (here a control edge),
 * but the fed reads still come from the feed node. */
Test(plan, a_fed_producer_needed_elsewhere_stays) {
  pt t;
  pt_text(&t, FED GT_CONST_I32("d", 3, GT_INPUT("^b")));
  pt_plan_ok(&t, "b:0", "c,d", NULL);
  const char *keep[] = {"a", "b", "c", "d"};
  assert_only(&t, keep, 4);
  int f = pfeed(&t, "b"), b = pnode(&t, "b"), c = pnode(&t, "c");
  cr_assert(pedge(&t, f, c, 0) && pedge(&t, f, c, 1));
  cr_assert_null(pedge(&t, b, c, 0));
  cr_assert_null(pedge(&t, b, c, 1));
  cr_assert_eq(fn(&t, b)->n_edges, 1, "only b -> d (control)");
  cr_assert(pedge(&t, b, pnode(&t, "d"), -1));
  pt_free(&t);
}

/* Fetching the fed port itself: the feed node alone serves it. */
Test(plan, fetching_a_fed_port_is_served_by_the_feed_node) {
  pt t;
  pt_text(&t, FED);
  pt_plan_ok(&t, "b:0", "b:0", NULL);
  cr_assert_eq(t.plan->flow.n_nodes, 1);
  int f = pfeed(&t, "b");
  cr_assert_eq(t.plan->fetches[0].node, f);
  cr_assert_eq(t.plan->fetches[0].slot, 0);
  cr_assert_eq(t.plan->nodes[f].n_fetch_slots, 1);
  cr_assert_eq(t.plan->nodes[f].fetch_slots[0], 0, "slot");
  cr_assert_eq(t.plan->nodes[f].fetch_slots[1], 0, "fetch index");
  pt_free(&t);
}

/* A target runs for effect: it and what it reaches are kept, nothing is
 * fetched, and it is not observed. */
Test(plan, a_target_runs_for_effect) {
  pt t;
  pt_text(&t, ARITH GT_NOOP("t", GT_INPUT("^c")));
  pt_plan_ok(&t, NULL, NULL, "t");
  const char *keep[] = {"a", "b", "c", "t"};
  assert_only(&t, keep, 4);
  cr_assert_eq(t.plan->n_fetches, 0);
  cr_assert_eq(t.plan->n_targets, 1);
  cr_assert_eq(t.plan->targets[0], pnode(&t, "t"));
  cr_assert(!fn(&t, pnode(&t, "t"))->observed);
  pt_free(&t);
}

/* ---- what plan nodes tell propagation ---- */

#define COND                                                                        \
  GT_CONST_BOOL("pred", true, "") GT_CONST_I32("x", 5, "")                          \
  GT_SWITCH("sw", "x", "pred", "DT_INT32")                                          \
  GT_OP1("t", "Identity", "sw:1", "DT_INT32", "")                                   \
  GT_OP1("f", "Neg", "sw:0", "DT_INT32", "")                                        \
  GT_MERGE2("m", "f", "t", "DT_INT32", "")                                          \
  GT_OP1("out", "Identity", "m", "DT_INT32", "")                                    \
  GT_OP1("idx", "Identity", "m:1", "DT_INT32", "")

/* Like recent TF, a Merge makes value_index only when it is read or
 * fetched; a Merge that does not is trivial (settled in place) unless it
 * is itself fetched. */
Test(plan, merge_index_used_only_when_value_index_is_read_or_fetched) {
  struct {
    const char *fetch;
    bool used, observed;
  } cases[] = {
      {"out", false, false}, {"m:0", false, true}, {"m:1", true, true}, {"idx", true, false}, {"m:0,idx", true, true},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    pt t;
    pt_text(&t, COND);
    pt_plan_ok(&t, NULL, cases[i].fetch, NULL);
    int m = pnode(&t, "m");
    cr_assert_eq(fn(&t, m)->merge_index_used, cases[i].used, "fetch %s", cases[i].fetch);
    cr_assert_eq(fn(&t, m)->observed, cases[i].observed, "fetch %s", cases[i].fetch);
    bool trivial = !cases[i].used && !cases[i].observed;
    cr_assert_eq(dfx__flow_trivial(fn(&t, m)), trivial, "fetch %s", cases[i].fetch);
    cr_assert_eq(pedge(&t, pnode(&t, "t"), m, 1)->dst_trivial, trivial, "fetch %s", cases[i].fetch);
    pt_free(&t);
  }
}

/* Fetched nodes and feeds are observed, nothing else; edge facts follow:
 * a fetched Identity is not trivial, an unfetched one is, a Const (here
 * hung off j by a control edge) is; an Add is a kernel. Const and
 * Identity become propagator moves, with the Const's value the session's
 * kernel state. */
Test(plan, observed_nodes_moves_and_trivial_edges) {
  pt t;
  pt_text(&t, GT_CONST_I32("a", 1, "") GT_OP1("i", "Identity", "a", "DT_INT32", "")
                  GT_OP1("j", "Identity", "i", "DT_INT32", "") GT_CONST_I32("k", 2, GT_INPUT("^j"))
                      GT_OP2("s", "Add", "k", "a", "DT_INT32", "") GT_PLACEHOLDER("ph", "DT_INT32")
                          GT_OP2("u", "Add", "ph", "ph", "DT_INT32", ""));
  pt_plan_ok(&t, "ph:0", "i,s,u", NULL);
  int a = pnode(&t, "a"), i = pnode(&t, "i"), j = pnode(&t, "j"), k = pnode(&t, "k"), s = pnode(&t, "s");
  int f = pfeed(&t, "ph");
  cr_assert_eq(pn(&t, "ph"), -1, "the fed placeholder itself is pruned");
  struct {
    int node;
    bool observed;
  } want[] = {{a, false}, {i, true}, {j, false}, {k, false}, {s, true}, {f, true}};
  for (size_t x = 0; x < sizeof want / sizeof want[0]; x++)
    cr_assert_eq(fn(&t, want[x].node)->observed, want[x].observed, "'%s' observed", fn(&t, want[x].node)->name);
  cr_assert(!pedge(&t, a, i, 0)->dst_trivial, "fetched Identity");
  cr_assert(pedge(&t, i, j, 0)->dst_trivial, "Identity");
  cr_assert(pedge(&t, j, k, -1)->dst_trivial, "Const");
  cr_assert(!pedge(&t, k, s, 0)->dst_trivial, "Add");
  cr_assert_eq(fn(&t, a)->move, DFX_MOVE_CONST);
  cr_assert_eq(fn(&t, a)->const_value, t.plan->kstate[t.plan->nodes[a].g->id], "the plan's Const state");
  cr_assert_eq(*(const int32_t *)fn(&t, a)->const_value->data, 1);
  cr_assert_eq(fn(&t, i)->move, DFX_MOVE_FORWARD);
  cr_assert_eq(fn(&t, s)->move, DFX_MOVE_NONE);
  cr_assert_str_eq(t.plan->nodes[s].kernel->op, "Add");
  /* Only fetched Exits get dead slots: there are none. */
  cr_assert_eq(t.plan->flow.n_dead_slots, 0);
  pt_free(&t);
}

/* The counter loop in frame "w/while" (parallel_iterations 7) next to a
 * root-frame Merge with two control inputs. */
#define LOOP_AND_MERGE                                                              \
  GT_COUNTER_LOOP("w/", 0, 10, 1, 7)                                                \
  GT_CONST_I32("a", 1, "") GT_CONST_I32("b", 2, "") GT_CONST_I32("c1", 3, "")        \
  GT_CONST_I32("c2", 4, "") GT_MERGE2("m", "a", "b", "DT_INT32", GT_INPUT("^c1") GT_INPUT("^c2"))

Test(plan, pending_counts_frames_and_roots) {
  pt t;
  pt_text(&t, LOOP_AND_MERGE);
  pt_plan_ok(&t, NULL, "w/Exit,m", NULL);
  const dfx_flow *fl = &t.plan->flow;
  /* §2.4: Merge 1 + 2 x control edges, others one per in-edge. */
  struct {
    const char *name;
    int32_t pending;
    int frame;
  } want[] = {
      {"m", 1 + 2 * 2, 0},   {"w/start", 0, 0}, {"w/Enter", 1, 0},      {"w/Merge", 1, 1},
      {"w/limit", 1, 1},     {"w/Less", 2, 1},  {"w/LoopCond", 1, 1},   {"w/Switch", 2, 1},
      {"w/Identity", 1, 1},  {"w/step", 1, 1},  {"w/add", 2, 1},        {"w/NextIteration", 1, 1},
      {"w/Exit", 1, 1},
  };
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    const dfx_fnode *n = fn(&t, pnode(&t, want[i].name));
    cr_assert_eq(n->pending_init, want[i].pending, "'%s' pending %d", n->name, n->pending_init);
    cr_assert_eq(n->frame, want[i].frame, "'%s' frame %d", n->name, n->frame);
  }
  /* §2.5: Enter lives in the outer frame and enters "w/while", whose
   * parallel_iterations comes from that Enter; the root's is 1. */
  cr_assert_eq(fl->n_frames, 2);
  cr_assert_str_eq(fl->frames[1].name, "w/while");
  cr_assert_eq(fl->frames[1].parent, 0);
  cr_assert_eq(fl->frames[1].parallel_iterations, 7);
  cr_assert_eq(fl->frames[0].parallel_iterations, 1);
  cr_assert_eq(fl->frames[1].n_enters, 1);
  cr_assert_eq(fl->frames[1].n_local, 10);
  cr_assert_eq(fl->frames[0].n_local, 7);
  const dfx_fnode *en = fn(&t, pnode(&t, "w/Enter"));
  cr_assert_eq(en->child_frame, 1);
  cr_assert(!en->is_constant_enter);
  /* Roots: the input-less root-frame nodes; the loop's constants hang off
   * its Merge and Identity. */
  const char *roots[] = {"w/start", "a", "b", "c1", "c2"};
  cr_assert_eq(fl->n_roots, 5);
  for (size_t i = 0; i < 5; i++) {
    bool found = false;
    for (int r = 0; r < fl->n_roots; r++) found |= fl->roots[r] == pnode(&t, roots[i]);
    cr_assert(found, "'%s' is not a root", roots[i]);
  }
  /* The fetched Exit is observed and has the only dead slot. */
  cr_assert(fn(&t, pnode(&t, "w/Exit"))->observed);
  cr_assert_eq(fl->n_dead_slots, 1);
  cr_assert_eq(fn(&t, pnode(&t, "w/Exit"))->dead_slot, 0);
  pt_free(&t);
}

/* policy.h: control ops, feeds and CHEAP kernels always run inline and
 * start with cost 0; other kernels (MatMul) start expensive. */
Test(plan, inline_ok_and_initial_cost_from_the_policy) {
  pt t;
  pt_text(&t, GT_COUNTER_LOOP("w/", 0, 10, 1, 10) GT_PLACEHOLDER("p", "DT_FLOAT")
              "node { name: \"mm\" op: \"MatMul\" input: \"p\" input: \"p\"" GT_TYPE("T", "DT_FLOAT") " }\n"
              GT_OP1("id", "Identity", "mm", "DT_FLOAT", "") GT_OP2("sum", "Add", "p", "p", "DT_FLOAT", ""));
  pt_plan_ok(&t, "p:0", "w/Exit,id,sum", NULL);
  const char *cheap[] = {"w/start", "w/Enter", "w/Merge", "w/Less", "w/LoopCond", "w/Switch",
                         "w/Identity", "w/add", "w/NextIteration", "w/Exit", "id", "sum"};
  for (size_t i = 0; i < sizeof cheap / sizeof cheap[0]; i++) {
    int x = pnode(&t, cheap[i]);
    cr_assert(t.plan->nodes[x].inline_ok, "'%s' should run inline", cheap[i]);
    cr_assert_eq(t.plan->cost_ns[x], 0, "'%s'", cheap[i]);
  }
  int mm = pnode(&t, "mm");
  cr_assert(!t.plan->nodes[mm].inline_ok);
  cr_assert_eq(t.plan->cost_ns[mm], DFX_INITIAL_COST_NS);
  cr_assert_str_eq(t.plan->nodes[mm].kernel->op, "MatMul");
  int f = pfeed(&t, "p");
  cr_assert(t.plan->nodes[f].inline_ok);
  cr_assert_eq(t.plan->cost_ns[f], 0);
  /* Control ops have no kernel: the propagator's rules run them. */
  cr_assert_null(t.plan->nodes[pnode(&t, "w/Merge")].kernel);
  cr_assert_null(t.plan->nodes[pnode(&t, "w/Enter")].kernel);
  pt_free(&t);
}

/* ---- errors ---- */

#define NAMED                                                                       \
  GT_CONST_I32("alpha", 1, "") GT_CONST_I32("beta", 2, "")                          \
  GT_OP2("gamma", "Add", "alpha", "beta", "DT_INT32", "")                           \
  GT_COUNTER_LOOP("w/", 0, 10, 1, 10)

static void expect_select_error(const char *feeds, const char *fetches, const char *targets, dfx_code code,
                                const char *msg) {
  pt t;
  pt_text(&t, NAMED);
  dfx_code c = pt_select(&t, feeds, fetches, targets);
  cr_assert_eq(c, code, "feeds '%s' fetches '%s' targets '%s': %s (%s)", feeds ? feeds : "", fetches ? fetches : "",
               targets ? targets : "", dfx_code_name(c), t.st.msg);
  cr_assert_str_eq(t.st.msg, msg);
  /* On failure the selection holds nothing (the leak check proves it). */
  cr_assert_null(t.sel.needed);
  pt_free(&t);
}

Test(plan, unknown_fetch_names_the_closest_node) {
  expect_select_error(NULL, "gamm", NULL, DFX_ENOTFOUND,
                      "fetch 'gamm:0': no node named 'gamm' in the graph (did you mean 'gamma'?)");
  expect_select_error(NULL, "zzzzzzzz:0", NULL, DFX_ENOTFOUND, "fetch 'zzzzzzzz:0': no node named 'zzzzzzzz' in the graph");
}

Test(plan, bad_output_index) {
  expect_select_error(NULL, "gamma:2", NULL, DFX_EINVAL, "fetch 'gamma:2': node 'gamma' (Add) has 1 output");
  expect_select_error(NULL, "w/Switch:2", NULL, DFX_EINVAL,
                      "fetch 'w/Switch:2': node 'w/Switch' (Switch) has 2 outputs");
  expect_select_error("alpha:-1", "gamma", NULL, DFX_EINVAL, "feed 'alpha:-1': node 'alpha' (Const) has 1 output");
}

Test(plan, feed_given_twice) {
  expect_select_error("alpha:0,beta:0,alpha:0", "gamma", NULL, DFX_EINVAL, "feed 'alpha:0' is given twice");
}

/* Only tensors outside loops can be fed or fetched: an Enter's output is
 * inside the frame it enters, an Exit's outside. */
Test(plan, fetch_or_feed_inside_a_loop_frame) {
  expect_select_error(NULL, "w/Merge", NULL, DFX_EINVAL,
                      "fetch 'w/Merge:0': node 'w/Merge' is inside while-loop frame 'w/while'; only tensors outside "
                      "loops (e.g. an Exit) can be fetched");
  expect_select_error(NULL, "w/Enter", NULL, DFX_EINVAL,
                      "fetch 'w/Enter:0': node 'w/Enter' is inside while-loop frame 'w/while'; only tensors outside "
                      "loops (e.g. an Exit) can be fetched");
  expect_select_error("w/Identity:0", "w/Exit", NULL, DFX_EINVAL,
                      "feed 'w/Identity:0': cannot feed a tensor inside while-loop frame 'w/while'");
  expect_select_error("w/Enter:0", "w/Exit", NULL, DFX_EINVAL,
                      "feed 'w/Enter:0': cannot feed a tensor inside while-loop frame 'w/while'");
  expect_select_error(NULL, NULL, "w/add", DFX_EINVAL, "target 'w/add' is inside while-loop frame 'w/while'");
  /* The Exit's and the Enter's own outputs toward the root are fine. */
  pt t;
  pt_text(&t, NAMED);
  cr_assert_eq(pt_select(&t, "w/Exit:0", "w/Exit", "w/Enter"), DFX_OK, "%s", t.st.msg);
  pt_unselect(&t);
  pt_free(&t);
}

Test(plan, unknown_target) {
  expect_select_error(NULL, "gamma", "gama", DFX_ENOTFOUND, "target 'gama': no such node (did you mean 'gamma'?)");
}

/* plan_build refuses a needed compute node without a kernel, naming it and
 * why the signature needs it; an owned graph is freed with the failure
 * (the leak check of the sanitizer builds watches it). */
Test(plan, build_without_a_kernel_names_the_node) {
  pt t;
  pt_text(&t, ARITH);
  cr_assert_eq(pt_select(&t, NULL, "c", NULL), DFX_OK, "%s", t.st.msg);
  static dfx_registry *empty; /* registries live as long as the process */
  empty = dfx__registry_new();
  cr_assert(empty);
  cr_assert_eq(dfx__registry_seal(empty, &t.st), DFX_OK, "%s", t.st.msg);
  dfx_plan *p = (dfx_plan *)1;
  dfx_code c = dfx__plan_build(t.g, NULL, &t.sel, empty, "k", &p, &t.st);
  cr_assert_eq(c, DFX_EUNIMPL);
  cr_assert_null(p);
  cr_assert(strncmp(t.st.msg, "node 'a' (Const): no kernel for this op", 39) == 0, "%s", t.st.msg);
  dfx_graph *copy = eu_graph(ARITH);
  p = (dfx_plan *)1;
  cr_assert_eq(dfx__plan_build(copy, copy, &t.sel, empty, "k", &p, &t.st), DFX_EUNIMPL);
  cr_assert_null(p);
  pt_unselect(&t);
  pt_free(&t);
}

/* ---- explanations ---- */

/* A chain n0 -> n1 -> ... -> n{len-1} of Neg nodes, fetching the last. */
static char *chain_graph(int len) {
  size_t cap = 256 * (size_t)len + 256, o = 0;
  char *s = malloc(cap);
  cr_assert(s);
  o += (size_t)snprintf(s + o, cap - o, "%s", GT_CONST_I32("n0", 1, ""));
  for (int i = 1; i < len; i++) {
    char a[16], b[16];
    snprintf(a, sizeof a, "n%d", i);
    snprintf(b, sizeof b, "n%d", i - 1);
    o += (size_t)snprintf(s + o, cap - o,
                          "node { name: \"%s\" op: \"Neg\" input: \"%s\" attr { key: \"T\" value { type: DT_INT32 } } }\n",
                          a, b);
  }
  return s;
}

/* What explain appends for node `who` of a len-chain fetched at its end. */
static void explain_chain(int len, const char *who, char *out, size_t n) {
  char *text = chain_graph(len);
  pt t;
  pt_text(&t, text);
  free(text);
  char fetch[16];
  snprintf(fetch, sizeof fetch, "n%d", len - 1);
  cr_assert_eq(pt_select(&t, NULL, fetch, NULL), DFX_OK, "%s", t.st.msg);
  dfx__status_clear(&t.st);
  dfx__plan_explain(t.g, &t.sel, dfx__graph_find(t.g, who, (size_t)-1), &t.st);
  snprintf(out, n, "%s", t.st.msg);
  pt_unselect(&t);
  pt_free(&t);
}

/* The chain runs from the node to the fetch, which is named first. */
Test(plan, explain_names_the_chain_to_the_fetch) {
  char msg[DFX_STATUS_MSG_MAX];
  explain_chain(4, "n0", msg, sizeof msg);
  cr_assert_str_eq(msg, "; needed for fetch 'n3:0' (path: 'n0' -> 'n1' -> 'n2' -> 'n3')");
  explain_chain(4, "n2", msg, sizeof msg);
  cr_assert_str_eq(msg, "; needed for fetch 'n3:0' (path: 'n2' -> 'n3')");
  explain_chain(4, "n3", msg, sizeof msg);
  cr_assert_str_eq(msg, "; needed for fetch 'n3:0'");
  /* A long path names the node, its first seven consumers, "..." and the end. */
  explain_chain(10, "n0", msg, sizeof msg);
  cr_assert_str_eq(msg, "; needed for fetch 'n9:0' (path: 'n0' -> 'n1' -> 'n2' -> 'n3' -> 'n4' -> 'n5' -> 'n6' -> "
                        "'n7' -> ... -> 'n9')");
}

/* "..." only where nodes are left out: a path of nine nodes is shown whole. */
Test(plan, explain_ellipsis_only_when_nodes_are_left_out) {
  char msg[DFX_STATUS_MSG_MAX];
  explain_chain(9, "n0", msg, sizeof msg);
  cr_assert_str_eq(msg, "; needed for fetch 'n8:0' (path: 'n0' -> 'n1' -> 'n2' -> 'n3' -> 'n4' -> 'n5' -> 'n6' -> "
                        "'n7' -> 'n8')");
  explain_chain(7, "n0", msg, sizeof msg);
  cr_assert_str_eq(msg, "; needed for fetch 'n6:0' (path: 'n0' -> 'n1' -> 'n2' -> 'n3' -> 'n4' -> 'n5' -> 'n6')");
}

/* For a target the message says so. */
Test(plan, explain_names_a_target) {
  pt t;
  pt_text(&t, ARITH GT_NOOP("t", GT_INPUT("^c")));
  cr_assert_eq(pt_select(&t, NULL, NULL, "t"), DFX_OK, "%s", t.st.msg);
  dfx__status_clear(&t.st);
  dfx__plan_explain(t.g, &t.sel, dfx__graph_find(t.g, "a", (size_t)-1), &t.st);
  cr_assert_str_eq(t.st.msg, "; needed for target 't' (path: 'a' -> 'c' -> 't')");
  pt_unselect(&t);
  pt_free(&t);
}

/* A frozen input pipeline: an iterator op nobody implements feeding
 * IteratorGetNext, which has no kernel (it carries TF's attrs, so the test
 * holds whether or not the registry knows its signature). Unknown ops
 * import as opaque nodes; a session then fails on the first needed unknown
 * node, naming the path and suggesting to feed IteratorGetNext's output
 * instead; doing so prunes the pipeline away. */
#define PIPELINE                                                                    \
  "node { name: \"it\" op: \"MadeUpIterator\" }\n"                                  \
  "node { name: \"next\" op: \"IteratorGetNext\" input: \"it\""                        \
  " attr { key: \"output_types\" value { list { type: DT_FLOAT } } }"                 \
  " attr { key: \"output_shapes\" value { list { shape {} } } } }\n"                  \
  GT_OP1("x", "Identity", "next", "DT_FLOAT", "") GT_OP1("y", "Neg", "x", "DT_FLOAT", "")

Test(plan, explain_suggests_feeding_past_an_iterator) {
  dfx_graph *g = eu_graph(PIPELINE);
  pt t;
  pt_init(&t, g);
  cr_assert_eq(pt_plan(&t, NULL, "y", NULL), DFX_EUNIMPL);
  cr_assert_str_eq(t.st.msg,
                   "node 'it' (MadeUpIterator): op MadeUpIterator is not known to dfexec or TensorFlow; needed for "
                   "fetch 'y:0' (path: 'it' -> 'next' -> 'x' -> 'y'). 'next' (IteratorGetNext) reads input data from "
                   "outside the graph: feed 'next:0' instead to leave it out");
  cr_assert_null(t.plan);
  /* Explaining the input op itself names it too. */
  cr_assert_eq(pt_select(&t, NULL, "y", NULL), DFX_OK);
  dfx__status_clear(&t.st);
  dfx__plan_explain(t.g, &t.sel, dfx__graph_find(t.g, "next", (size_t)-1), &t.st);
  cr_assert_str_eq(t.st.msg, "; needed for fetch 'y:0' (path: 'next' -> 'x' -> 'y'). 'next' (IteratorGetNext) reads "
                             "input data from outside the graph: feed 'next:0' instead to leave it out");
  pt_unselect(&t);
  /* Feeding past it leaves the pipeline out. */
  pt_plan_ok(&t, "next:0", "y", NULL);
  const char *keep[] = {"x", "y"};
  assert_only(&t, keep, 2);
  cr_assert_eq(pn(&t, "it"), -1);
  cr_assert_eq(pn(&t, "next"), -1);
  pfeed(&t, "next");
  pt_free(&t);
}
