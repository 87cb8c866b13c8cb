/* test_manager.c - the pass manager and the public calls on top of it:
 * pipeline lists and their errors, rounds to a fixed point, the report,
 * dfx_graph_optimize's port checks, and sessions that optimise a private
 * copy per run signature. */
#include <criterion/criterion.h>
#include <string.h>

#include "eutil.h"
#include "gtext.h"
#include "lib.h"
#include "pass.h"
#include "ptest.h"

TestSuite(manager, .init = eu_setup, .fini = eu_teardown, .timeout = 30);

/* Folding makes c1 and c2 equal Consts; only a second round's cse can
 * merge them (cse runs after constfold, and the first cse saw Muls of
 * different inputs). */
static const char needs_two_rounds[] =
    GT_CONST_F32("a", 2, "") GT_CONST_F32("b", 3, "") GT_CONST_F32("a2", 3, "") GT_CONST_F32("b2", 2, "")
    GT_OP2("c1", "Mul", "a", "b", "DT_FLOAT", "") GT_OP2("c2", "Mul", "a2", "b2", "DT_FLOAT", "")
    GT_PLACEHOLDER("x", "DT_FLOAT") GT_OP2("y1", "Add", "x", "c1", "DT_FLOAT", "")
    GT_OP2("y2", "Add", "x", "c2", "DT_FLOAT", "") GT_OP2("y", "Sub", "y1", "y2", "DT_FLOAT", "");

Test(manager, the_pipeline_runs_to_a_fixed_point) {
  dfx_graph *g = eu_graph(needs_two_rounds);
  dfx_status st;
  dfx__status_clear(&st);
  dfx_port fetch = {"y", 0};
  dfx_optimize_options oo = {.fetches = &fetch, .n_fetches = 1};
  dfx_graph *og = NULL;
  dfx_optimize_report rep;
  cr_assert_eq(dfx_graph_optimize(g, &oo, &og, &rep, &st), DFX_OK, "%s", st.msg);
  cr_assert_eq(rep.nodes_before, 10);
  cr_assert_eq(rep.nodes_after, dfx_graph_node_count(og));
  int last_round = 0, n_passes = 0, in_default = 0;
  for (int i = 0; dfx_optimize_pass(i, NULL, &in_default); i++) n_passes += in_default;
  for (int i = 0; i < rep.n_stats; i++) last_round = rep.stats[i].round;
  cr_assert_eq(rep.n_stats, last_round * n_passes, "every default pass, every round");
  cr_assert_geq(last_round, 2);
  cr_assert_leq(last_round, 3);
  /* y1 and y2 merged too (they read x and one Const): y = y1 - y1. */
  cr_assert(dfx_graph_node_find(og, "y2") < 0 && dfx_graph_node_find(og, "c2") < 0);
  cr_assert_eq(dfx_graph_node_count(og), 4, "x, c1, y1, y");
  dfx_optimize_report_free(&rep);
  dfx_graph_free(og);
  dfx_graph_free(g);
}

Test(manager, pass_lists_and_their_errors) {
  dfx_graph *g = eu_graph(needs_two_rounds);
  dfx_status st;
  dfx__status_clear(&st);
  dfx_graph *og = (dfx_graph *)1;
  dfx_optimize_options oo = {.passes = "cse,fold"};
  cr_assert_eq(dfx_graph_optimize(g, &oo, &og, NULL, &st), DFX_EINVAL);
  cr_assert_null(og);
  cr_assert(strstr(st.msg, "unknown pass") && strstr(st.msg, "constfold") && strstr(st.msg, "prune"), "%s", st.msg);
  oo.passes = "none";
  dfx_optimize_report rep;
  cr_assert_eq(dfx_graph_optimize(g, &oo, &og, &rep, &st), DFX_OK, "%s", st.msg);
  cr_assert_eq(dfx_graph_node_count(og), 10);
  cr_assert_eq(rep.n_stats, 0);
  dfx_optimize_report_free(&rep);
  dfx_graph_free(og);
  /* A pass may appear twice; it runs where it is listed. */
  oo.passes = "cse,cse";
  cr_assert_eq(dfx_graph_optimize(g, &oo, &og, &rep, &st), DFX_OK, "%s", st.msg);
  cr_assert_str_eq(rep.stats[0].pass, "cse");
  cr_assert_str_eq(rep.stats[1].pass, "cse");
  dfx_optimize_report_free(&rep);
  dfx_graph_free(og);
  dfx_graph_free(g);
}

Test(manager, ports_get_a_runs_checks) {
  dfx_graph *g = eu_graph(GT_COUNTER_LOOP("w/", 0, 3, 1, 10));
  dfx_status st;
  dfx__status_clear(&st);
  dfx_graph *og = NULL;
  dfx_port bad = {"w/Exitt", 0};
  dfx_optimize_options oo = {.fetches = &bad, .n_fetches = 1};
  cr_assert_eq(dfx_graph_optimize(g, &oo, &og, NULL, &st), DFX_ENOTFOUND);
  cr_assert(strstr(st.msg, "did you mean 'w/Exit'"), "%s", st.msg);
  dfx_port inner = {"w/add", 0};
  oo.fetches = &inner;
  cr_assert_eq(dfx_graph_optimize(g, &oo, &og, NULL, &st), DFX_EINVAL);
  cr_assert(strstr(st.msg, "inside while-loop frame"), "%s", st.msg);
  cr_assert_null(og);
  dfx_graph_free(g);
}

/* A session optimises a copy per signature: the graph it was given keeps
 * every node, and each signature gets its own pruned plan. */
Test(manager, sessions_optimise_a_private_copy) {
  dfx_graph *g = eu_graph(needs_two_rounds);
  int before = dfx_graph_node_count(g);
  dfx_status *st = dfx_status_new();
  dfx_session *s = NULL;
  cr_assert_eq(dfx_session_new(g, NULL, &s, st), DFX_OK, "%s", dfx_status_message(st));
  dfx_tensor *x = dfx_tensor_new(DFX_F32, NULL, 0), *out[2] = {NULL};
  *(float *)dfx_tensor_data(x) = 1;
  dfx_port feed = {"x", 0}, fetch[2] = {{"y", 0}, {"c2", 0}};
  cr_assert_eq(dfx_session_run(s, NULL, &feed, &x, 1, fetch, out, 2, NULL, 0, st), DFX_OK, "%s",
               dfx_status_message(st));
  cr_assert_eq(eu_f32(out[0]), 0.0f);
  cr_assert_eq(eu_f32(out[1]), 6.0f, "c2 was fetched, so it was kept");
  cr_assert_eq(dfx_graph_node_count(g), before);
  for (int i = 0; i < 2; i++) dfx_tensor_free(out[i]);
  dfx_tensor_free(x);
  dfx_session_free(s);
  dfx_status_free(st);
  dfx_graph_free(g);
}
