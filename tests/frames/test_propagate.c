/* test_propagate.c - one small graph per control-flow rule of tf-semantics
 * §2.3-2.5, each checking values and deadness, on 1 and several threads. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eutil.h"
#include "gtext.h"
#include "tensor.h"

TestSuite(propagate, .init = eu_setup, .fini = eu_teardown, .timeout = 60);

static int32_t run_i32(const char *text, int threads, const char *fetch) {
  dfx_graph *g = eu_graph(text);
  dfx_tensor *out[1] = {NULL};
  char msg[2048];
  dfx_code c = eu_run(g, threads, fetch, out, NULL, NULL, msg, sizeof msg);
  cr_assert_eq(c, DFX_OK, "run failed: %s", msg);
  int32_t v = eu_i32(out[0]);
  dfx_tensor_free(out[0]);
  dfx_graph_free(g);
  return v;
}

static dfx_code run_err(const char *text, int threads, const char *fetch, char *msg, size_t n) {
  dfx_graph *g = eu_graph(text);
  dfx_tensor *out[4] = {NULL};
  dfx_code c = eu_run(g, threads, fetch, out, NULL, NULL, msg, n);
  for (int i = 0; i < 4; i++) dfx_tensor_free(out[i]);
  dfx_graph_free(g);
  return c;
}

/* ---- conds ---- */

/* tf.cond(pred, lambda: x + 10, lambda: x * 2) with pivots: the branch
 * constants hang off switch_t / switch_f, so they die with their branch. */
#define COND_WITH_PIVOTS(PRED)                                                       \
  GT_CONST_BOOL("pred", PRED, "")                                                    \
  GT_CONST_I32("x", 5, "")                                                           \
  GT_SWITCH("cond/Switch", "pred", "pred", "DT_BOOL")                                \
  GT_OP1("cond/switch_t", "Identity", "cond/Switch:1", "DT_BOOL", "")                \
  GT_OP1("cond/switch_f", "Identity", "cond/Switch", "DT_BOOL", "")                  \
  GT_OP1("cond/pred_id", "Identity", "pred", "DT_BOOL", "")                          \
  GT_SWITCH("cond/Switch_1", "x", "cond/pred_id", "DT_INT32")                        \
  GT_CONST_I32("cond/ten", 10, GT_INPUT("^cond/switch_t"))                           \
  GT_OP2("cond/add", "Add", "cond/Switch_1:1", "cond/ten", "DT_INT32", "")           \
  GT_CONST_I32("cond/two", 2, GT_INPUT("^cond/switch_f"))                            \
  GT_OP2("cond/mul", "Mul", "cond/Switch_1", "cond/two", "DT_INT32", "")             \
  GT_MERGE2("cond/Merge", "cond/mul", "cond/add", "DT_INT32", "")

Test(propagate, cond_with_pivots_true) {
  cr_assert_eq(run_i32(COND_WITH_PIVOTS(true), 1, "cond/Merge:0"), 15);
  cr_assert_eq(run_i32(COND_WITH_PIVOTS(true), 1, "cond/Merge:1"), 1);
  cr_assert_eq(run_i32(COND_WITH_PIVOTS(true), 2, "cond/Merge:0"), 15);
}

Test(propagate, cond_with_pivots_false) {
  cr_assert_eq(run_i32(COND_WITH_PIVOTS(false), 1, "cond/Merge:0"), 10);
  cr_assert_eq(run_i32(COND_WITH_PIVOTS(false), 1, "cond/Merge:1"), 0);
}

Test(propagate, fetching_untaken_branch_is_an_error_naming_the_switch) {
  char msg[2048];
  dfx_code c = run_err(COND_WITH_PIVOTS(true), 1, "cond/mul", msg, sizeof msg);
  cr_assert_eq(c, DFX_EINVAL, "%s", msg);
  cr_assert(strstr(msg, "dead") && strstr(msg, "Switch 'cond/Switch"), "%s", msg);
  /* The pivot's constant is dead too, through its control edge. */
  c = run_err(COND_WITH_PIVOTS(true), 1, "cond/two", msg, sizeof msg);
  cr_assert_eq(c, DFX_EINVAL, "%s", msg);
  cr_assert(strstr(msg, "cond/Switch'"), "%s", msg);
}

/* Without pivots a branch constant has no input: it is a live root, but the
 * branch op that reads the dead Switch port is dead, so Merge still picks the
 * taken side. A control edge from the *live* Switch node keeps a node live
 * even in the untaken branch (control edges carry node deadness, §2.3). */
Test(propagate, cond_without_pivots) {
  const char *g = GT_CONST_BOOL("pred", false, "") GT_CONST_I32("x", 7, "")
      GT_SWITCH("s", "x", "pred", "DT_INT32") GT_CONST_I32("c", 100, "")
      GT_OP2("t", "Add", "s:1", "c", "DT_INT32", "") GT_OP2("f", "Sub", "s:0", "c", "DT_INT32", "")
      GT_MERGE2("m", "f", "t", "DT_INT32", "")
      GT_CONST_I32("live_ctl", 3, GT_INPUT("^s"));
  cr_assert_eq(run_i32(g, 1, "m"), -93);
  cr_assert_eq(run_i32(g, 1, "m:1"), 0);
  cr_assert_eq(run_i32(g, 1, "live_ctl"), 3);
}

/* All inputs of a Merge dead: the Merge fires dead (dead_count == N). */
Test(propagate, merge_with_all_inputs_dead_is_dead) {
  const char *g = GT_CONST_BOOL("pred", true, "") GT_CONST_I32("x", 1, "")
      GT_SWITCH("s", "x", "pred", "DT_INT32") GT_OP1("a", "Identity", "s:0", "DT_INT32", "")
      GT_OP1("b", "Identity", "s:0", "DT_INT32", "") GT_MERGE2("m", "a", "b", "DT_INT32", "")
      GT_MERGE2("outer", "m", "s:1", "DT_INT32", "");
  cr_assert_eq(run_i32(g, 1, "outer"), 1);
  cr_assert_eq(run_i32(g, 1, "outer:1"), 1);
  char msg[2048];
  cr_assert_eq(run_err(g, 1, "m", msg, sizeof msg), DFX_EINVAL, "%s", msg);
}

/* Merge waits for its control inputs even after a live data input came. */
Test(propagate, merge_with_control_inputs) {
  const char *g = GT_CONST_I32("a", 4, "") GT_CONST_I32("b", 9, "")
      GT_OP2("slow", "Mul", "a", "b", "DT_INT32", "") GT_NOOP("gate", GT_INPUT("^slow"))
      GT_MERGE2("m", "a", "b", "DT_INT32", GT_INPUT("^gate"));
  int32_t v = run_i32(g, 2, "m");
  cr_assert(v == 4 || v == 9);
  /* A dead control source does not kill the Merge (§2.4). */
  const char *g2 = GT_CONST_BOOL("pred", true, "") GT_CONST_I32("x", 2, "")
      GT_SWITCH("s", "x", "pred", "DT_INT32") GT_OP1("dead", "Identity", "s:0", "DT_INT32", "")
      GT_CONST_I32("y", 6, "") GT_CONST_I32("z", 8, "")
      GT_MERGE2("m", "y", "z", "DT_INT32", GT_INPUT("^dead"));
  v = run_i32(g2, 1, "m");
  cr_assert(v == 6 || v == 8);
}

/* ControlTrigger is never dead, even when all its inputs are. */
Test(propagate, control_trigger_is_live_when_inputs_are_dead) {
  const char *g = GT_CONST_BOOL("pred", true, "") GT_CONST_I32("x", 2, "")
      GT_SWITCH("s", "x", "pred", "DT_INT32") GT_OP1("dead", "Identity", "s:0", "DT_INT32", "")
      "node { name: \"trig\" op: \"ControlTrigger\" input: \"^dead\" }\n"
      GT_CONST_I32("after", 42, GT_INPUT("^trig")) GT_CONST_I32("after_dead", 1, GT_INPUT("^dead"));
  cr_assert_eq(run_i32(g, 1, "after"), 42);
  char msg[2048];
  cr_assert_eq(run_err(g, 1, "after_dead", msg, sizeof msg), DFX_EINVAL, "%s", msg);
}

/* ---- loops ---- */

Test(propagate, counter_loop) {
  cr_assert_eq(run_i32(GT_COUNTER_LOOP("w/", 0, 10, 1, 10), 1, "w/Exit"), 10);
  cr_assert_eq(run_i32(GT_COUNTER_LOOP("w/", 3, 100, 7, 10), 2, "w/Exit"), 101);
}

Test(propagate, zero_iteration_loop) {
  cr_assert_eq(run_i32(GT_COUNTER_LOOP("w/", 50, 10, 1, 10), 1, "w/Exit"), 50);
  cr_assert_eq(run_i32(GT_COUNTER_LOOP("w/", 50, 10, 1, 10), 2, "w/Exit"), 50);
}

/* parallel_iterations only changes how many iterations are in flight. */
Test(propagate, parallel_iterations_give_same_results) {
  cr_assert_eq(run_i32(GT_COUNTER_LOOP("w/", 0, 1000, 3, 1), 1, "w/Exit"), 1002);
  cr_assert_eq(run_i32(GT_COUNTER_LOOP("w/", 0, 1000, 3, 10), 2, "w/Exit"), 1002);
  cr_assert_eq(run_i32(GT_COUNTER_LOOP("w/", 0, 1000, 3, 32), 2, "w/Exit"), 1002);
  cr_assert_eq(run_i32(GT_COUNTER_LOOP("w/", 0, 1000, 3, 1), 2, "w/Exit"), 1002);
}

/* A loop inside the untaken branch of a cond runs dead once and finishes;
 * its Exit is dead (delivered when the frame is deleted) and the outer
 * Merge takes the live side. */
#define LOOP_IN_BRANCH(PRED)                                                               \
  GT_CONST_BOOL("pred", PRED, "") GT_CONST_I32("x", 1, "")                                 \
  GT_SWITCH("sw", "x", "pred", "DT_INT32")                                                 \
  GT_ENTER("w/Enter", "sw:1", "DT_INT32", "w/while", false, 10)                            \
  GT_MERGE2("w/Merge", "w/Enter", "w/NextIteration", "DT_INT32", "")                       \
  GT_CONST_I32("w/limit", 5, GT_INPUT("^w/Merge"))                                         \
  GT_OP2("w/Less", "Less", "w/Merge", "w/limit", "DT_INT32", "")                           \
  GT_LOOPCOND("w/LoopCond", "w/Less") GT_SWITCH("w/Switch", "w/Merge", "w/LoopCond", "DT_INT32") \
  GT_OP1("w/Identity", "Identity", "w/Switch:1", "DT_INT32", "")                           \
  GT_CONST_I32("w/one", 1, GT_INPUT("^w/Identity"))                                        \
  GT_OP2("w/add", "Add", "w/Identity", "w/one", "DT_INT32", "")                            \
  GT_OP1("w/NextIteration", "NextIteration", "w/add", "DT_INT32", "")                      \
  GT_OP1("w/Exit", "Exit", "w/Switch", "DT_INT32", "")                                     \
  GT_OP1("other", "Neg", "sw:0", "DT_INT32", "")                                           \
  GT_MERGE2("out", "other", "w/Exit", "DT_INT32", "")

Test(propagate, loop_in_dead_branch_finishes_with_dead_exit) {
  cr_assert_eq(run_i32(LOOP_IN_BRANCH(false), 1, "out"), -1);
  cr_assert_eq(run_i32(LOOP_IN_BRANCH(false), 2, "out:1"), 0);
  cr_assert_eq(run_i32(LOOP_IN_BRANCH(true), 1, "out"), 5);
  cr_assert_eq(run_i32(LOOP_IN_BRANCH(true), 2, "out:1"), 1);
  char msg[2048];
  cr_assert_eq(run_err(LOOP_IN_BRANCH(false), 1, "w/Exit", msg, sizeof msg), DFX_EINVAL, "%s", msg);
  cr_assert(strstr(msg, "'sw'"), "%s", msg);
}

/* A cond inside the loop body: add 1 on even i, 3 on odd i, until i >= 20. */
Test(propagate, cond_in_loop) {
  const char *g = GT_COND_IN_LOOP(20, 10);
  /* 0 -> 1 -> 4 -> 5 -> 8 -> ... : evens add 1, odds add 3. */
  int32_t want = 0;
  while (want < 20) want += (want % 2 == 0) ? 1 : 3;
  cr_assert_eq(run_i32(g, 1, "w/Exit"), want);
  cr_assert_eq(run_i32(g, 2, "w/Exit"), want);
}

/* Nested loops: outer runs 3 times, inner counts j to 4 in each outer
 * iteration and adds an invariant that enters through both frames. */
#define NESTED(PI)                                                                        \
  GT_CONST_I32("k", 10, "") GT_CONST_I32("o/start", 0, "")                                \
  GT_ENTER("o/Enter", "o/start", "DT_INT32", "o/while", false, PI)                        \
  GT_ENTER("o/k", "k", "DT_INT32", "o/while", true, PI)                                   \
  GT_MERGE2("o/Merge", "o/Enter", "o/NextIteration", "DT_INT32", "")                      \
  GT_CONST_I32("o/limit", 3, GT_INPUT("^o/Merge"))                                        \
  GT_OP2("o/Less", "Less", "o/Merge", "o/limit", "DT_INT32", "")                          \
  GT_LOOPCOND("o/LoopCond", "o/Less") GT_SWITCH("o/Switch", "o/Merge", "o/LoopCond", "DT_INT32") \
  GT_OP1("o/i", "Identity", "o/Switch:1", "DT_INT32", "")                                 \
  GT_CONST_I32("o/j0", 0, GT_INPUT("^o/i"))                                               \
  GT_ENTER("o/in/Enter", "o/j0", "DT_INT32", "o/in/while", false, PI)                     \
  GT_ENTER("o/in/k", "o/k", "DT_INT32", "o/in/while", true, PI)                           \
  GT_ENTER("o/in/acc0", "o/i", "DT_INT32", "o/in/while", false, PI)                       \
  GT_MERGE2("o/in/Merge", "o/in/Enter", "o/in/NextIteration", "DT_INT32", "")             \
  GT_MERGE2("o/in/Merge_1", "o/in/acc0", "o/in/NextIteration_1", "DT_INT32", "")          \
  GT_CONST_I32("o/in/limit", 4, GT_INPUT("^o/in/Merge"))                                  \
  GT_OP2("o/in/Less", "Less", "o/in/Merge", "o/in/limit", "DT_INT32", "")                 \
  GT_LOOPCOND("o/in/LoopCond", "o/in/Less")                                               \
  GT_SWITCH("o/in/Switch", "o/in/Merge", "o/in/LoopCond", "DT_INT32")                     \
  GT_SWITCH("o/in/Switch_1", "o/in/Merge_1", "o/in/LoopCond", "DT_INT32")                 \
  GT_OP1("o/in/j", "Identity", "o/in/Switch:1", "DT_INT32", "")                           \
  GT_OP1("o/in/acc", "Identity", "o/in/Switch_1:1", "DT_INT32", "")                       \
  GT_CONST_I32("o/in/one", 1, GT_INPUT("^o/in/j"))                                        \
  GT_OP2("o/in/j1", "Add", "o/in/j", "o/in/one", "DT_INT32", "")                          \
  GT_OP2("o/in/acc1", "Add", "o/in/acc", "o/in/k", "DT_INT32", "")                        \
  GT_OP1("o/in/NextIteration", "NextIteration", "o/in/j1", "DT_INT32", "")                \
  GT_OP1("o/in/NextIteration_1", "NextIteration", "o/in/acc1", "DT_INT32", "")            \
  GT_OP1("o/in/Exit", "Exit", "o/in/Switch", "DT_INT32", "")                              \
  GT_OP1("o/in/Exit_1", "Exit", "o/in/Switch_1", "DT_INT32", "")                          \
  GT_CONST_I32("o/one", 1, GT_INPUT("^o/i"))                                              \
  GT_OP2("o/i1", "Add", "o/i", "o/one", "DT_INT32", "")                                   \
  GT_OP2("o/next", "Add", "o/i1", "o/in/Exit_1", "DT_INT32", "")                          \
  GT_OP1("o/NextIteration", "NextIteration", "o/next", "DT_INT32", "")                    \
  GT_OP1("o/Exit", "Exit", "o/Switch", "DT_INT32", "")

/* i -> (i + 1) + (i + 4 * 10): 0 -> 41 -> stop (41 >= 3). */
static int32_t nested_want(void) {
  int32_t i = 0;
  while (i < 3) i = (i + 1) + (i + 4 * 10);
  return i;
}

Test(propagate, nested_loops_with_invariants_through_two_frames) {
  cr_assert_eq(run_i32(NESTED(10), 1, "o/Exit"), nested_want());
  cr_assert_eq(run_i32(NESTED(1), 2, "o/Exit"), nested_want());
  cr_assert_eq(run_i32(NESTED(32), 2, "o/Exit"), nested_want());
}

/* ---- errors ---- */

/* CheckNumerics fails in iteration 3 of a loop computing 1 / (i - 3). */
Test(propagate, kernel_error_names_node_frame_and_iteration) {
  const char *g = GT_CONST_F32("start", 0, "")
      GT_ENTER("w/Enter", "start", "DT_FLOAT", "w/while", false, 1)
      GT_MERGE2("w/Merge", "w/Enter", "w/NextIteration", "DT_FLOAT", "")
      GT_CONST_F32("w/limit", 10, GT_INPUT("^w/Merge"))
      GT_OP2("w/Less", "Less", "w/Merge", "w/limit", "DT_FLOAT", "")
      GT_LOOPCOND("w/LoopCond", "w/Less") GT_SWITCH("w/Switch", "w/Merge", "w/LoopCond", "DT_FLOAT")
      GT_OP1("w/i", "Identity", "w/Switch:1", "DT_FLOAT", "")
      GT_CONST_F32("w/three", 3, GT_INPUT("^w/i")) GT_CONST_F32("w/one", 1, GT_INPUT("^w/i"))
      GT_OP2("w/d", "Sub", "w/i", "w/three", "DT_FLOAT", "")
      GT_OP2("w/q", "RealDiv", "w/one", "w/d", "DT_FLOAT", "")
      "node { name: \"w/check\" op: \"CheckNumerics\" input: \"w/q\" attr { key: \"T\" value { type: DT_FLOAT } }"
      " attr { key: \"message\" value { s: \"bad q\" } } }\n"
      GT_OP2("w/next", "Add", "w/i", "w/one", "DT_FLOAT", GT_INPUT("^w/check"))
      GT_OP1("w/NextIteration", "NextIteration", "w/next", "DT_FLOAT", "")
      GT_OP1("w/Exit", "Exit", "w/Switch", "DT_FLOAT", "");
  char msg[2048];
  for (int threads = 1; threads <= 2; threads++) {
    dfx_code c = run_err(g, threads, "w/Exit", msg, sizeof msg);
    cr_assert_eq(c, DFX_EINVAL, "%s", msg);
    cr_assert(strstr(msg, "w/check") && strstr(msg, "CheckNumerics") && strstr(msg, "w/while") &&
                  strstr(msg, "iteration 3") && strstr(msg, "bad q"),
              "%s", msg);
  }
}

/* A Merge that waits for a control input that never comes: the run ends
 * with a report of the stuck node instead of hanging. */
Test(propagate, stuck_run_reports_waiting_nodes) {
  const char *g = GT_CONST_I32("start", 0, "")
      GT_ENTER("w/Enter", "start", "DT_INT32", "w/while", false, 10)
      GT_MERGE2("w/Merge", "w/Enter", "w/NextIteration", "DT_INT32", "")
      GT_OP1("w/Identity", "Identity", "w/Merge", "DT_INT32", "")
      "node { name: \"w/M2\" op: \"Merge\" input: \"w/NextIteration_1\" input: \"^w/Identity\""
      " attr { key: \"T\" value { type: DT_INT32 } } attr { key: \"N\" value { i: 1 } } }\n"
      GT_OP1("w/NextIteration_1", "NextIteration", "w/M2", "DT_INT32", "")
      GT_OP2("w/sum", "Add", "w/Identity", "w/M2", "DT_INT32", "")
      GT_OP1("w/NextIteration", "NextIteration", "w/sum", "DT_INT32", "")
      GT_OP1("w/Exit", "Exit", "w/sum", "DT_INT32", "");
  char msg[4096];
  dfx_code c = run_err(g, 1, "w/Exit", msg, sizeof msg);
  cr_assert_eq(c, DFX_ESTUCK, "%s", msg);
  cr_assert(strstr(msg, "w/sum") && strstr(msg, "w/while") && strstr(msg, "iteration 0"), "%s", msg);
}

Test(propagate, runaway_loop_stops_at_max_iterations) {
  dfx_graph *g = eu_graph(GT_COUNTER_LOOP("w/", 0, 2000000000, 1, 10));
  dfx_status *st = dfx_status_new();
  dfx_session *s = NULL;
  cr_assert_eq(dfx_session_new(g, NULL, &s, st), DFX_OK, "%s", dfx_status_message(st));
  dfx_run_options ro = {.max_iterations = 1000};
  dfx_port f = {"w/Exit", 0};
  dfx_tensor *out = NULL;
  dfx_code c = dfx_session_run(s, &ro, NULL, NULL, 0, &f, &out, 1, NULL, 0, st);
  cr_assert_eq(c, DFX_ELIMIT, "%s", dfx_status_message(st));
  cr_assert(strstr(dfx_status_message(st), "w/while"), "%s", dfx_status_message(st));
  cr_assert_null(out);
  /* The session still works afterwards. */
  ro.max_iterations = 0;
  ro.timeout_sec = 0.2;
  c = dfx_session_run(s, &ro, NULL, NULL, 0, &f, &out, 1, NULL, 0, st);
  cr_assert_eq(c, DFX_EDEADLINE, "%s", dfx_status_message(st));
  dfx_session_free(s);
  dfx_status_free(st);
  dfx_graph_free(g);
}

/* One million iterations: finishes, and memory stays flat (no per-iteration
 * growth: the peak is far below what a leak of even a byte per iteration
 * would reach). */
Test(propagate, million_iteration_counter_loop_memory_flat, .timeout = 120) {
  dfx_graph *g = eu_graph(GT_COUNTER_LOOP("w/", 0, 1000000, 1, 10));
  dfx_tensor *out[1] = {NULL};
  char msg[2048];
  long long before = eu_alloc.live_bytes;
  dfx_code c = eu_run(g, 1, "w/Exit", out, NULL, NULL, msg, sizeof msg);
  cr_assert_eq(c, DFX_OK, "%s", msg);
  cr_assert_eq(eu_i32(out[0]), 1000000);
  dfx_tensor_free(out[0]);
  dfx__tensor_cache_flush();
  cr_assert_eq(eu_alloc.live_bytes, before, "grew by %lld bytes", eu_alloc.live_bytes - before);
  cr_assert_lt(eu_alloc.peak_bytes - before, 1 << 20, "peak %lld bytes", eu_alloc.peak_bytes - before);
  dfx_graph_free(g);
}

/* Scalars in a tight loop cost no heap allocation per iteration: 100x more
 * iterations must not mean more allocations (tensor structs, iteration
 * blocks and ready lists are all recycled). */
static long long allocs_for(int limit) {
  char text[8192]; /* the macro stringizes its arguments: patch the limit in */
  snprintf(text, sizeof text, "%s", GT_COUNTER_LOOP("w/", 0, LIMIT_PLACEHOLDER, 1, 10));
  char *p = strstr(text, "int_val: LIMIT_PLACEHOLDER");
  cr_assert(p);
  char rest[8192];
  snprintf(rest, sizeof rest, "%s", p + strlen("int_val: LIMIT_PLACEHOLDER"));
  snprintf(p, sizeof text - (size_t)(p - text), "int_val: %d%s", limit, rest);
  dfx_graph *g = eu_graph(text);
  dfx_tensor *out[1] = {NULL};
  char msg[2048];
  long long before = eu_alloc.n_allocs;
  cr_assert_eq(eu_run(g, 1, "w/Exit", out, NULL, NULL, msg, sizeof msg), DFX_OK, "%s", msg);
  long long used = eu_alloc.n_allocs - before;
  cr_assert_eq(eu_i32(out[0]), limit);
  dfx_tensor_free(out[0]);
  dfx_graph_free(g);
  return used;
}

Test(propagate, no_heap_allocation_per_iteration) {
  long long small = allocs_for(1000), large = allocs_for(100000);
  cr_assert_lt(large - small, 64, "1000 iterations: %lld allocations, 100000: %lld", small, large);
}

/* ---- dead Exits settled in place ---- */

/* Without a trace, the dead Exit of each non-final iteration is settled where
 * it becomes ready instead of being scheduled; with a trace every instance
 * runs and is reported. Both must give the same values and deadness. */
typedef struct {
  const char *exit_node;
  int exit_calls; /* single-threaded runs only: no lock needed */
} exit_count;

static void count_exit(void *ud, const char *node, const char *op, const char *frame, int64_t iter, int64_t t0,
                       int64_t t1, int worker) {
  (void)op, (void)frame, (void)iter, (void)t0, (void)t1, (void)worker;
  exit_count *c = ud;
  if (c->exit_node && strcmp(node, c->exit_node) == 0) __atomic_add_fetch(&c->exit_calls, 1, __ATOMIC_RELAXED);
}

/* Runs one int32 fetch ("name" or "name:k") with or without a trace. */
static dfx_code run_traced_on(const dfx_graph *g, int threads, const char *fetch, bool traced, exit_count *cnt,
                              int32_t *got, char *msg, size_t n) {
  char name[128];
  snprintf(name, sizeof name, "%s", fetch);
  char *colon = strchr(name, ':');
  int index = colon ? atoi(colon + 1) : 0;
  if (colon) *colon = 0;
  dfx_session_options so = {.n_threads = threads};
  dfx_session *s = NULL;
  dfx_status *st = dfx_status_new();
  cr_assert_eq(dfx_session_new(g, &so, &s, st), DFX_OK, "%s", dfx_status_message(st));
  dfx_run_options ro = {.trace = traced ? count_exit : NULL, .trace_ud = cnt};
  dfx_port port = {name, index};
  dfx_tensor *out = NULL;
  dfx_code c = dfx_session_run(s, &ro, NULL, NULL, 0, &port, &out, 1, NULL, 0, st);
  snprintf(msg, n, "%s", dfx_status_message(st));
  if (c == DFX_OK) *got = eu_i32(out);
  dfx_tensor_free(out);
  dfx_session_free(s);
  dfx_status_free(st);
  return c;
}

static dfx_code run_traced(const dfx_graph *g, const char *fetch, bool traced, exit_count *cnt, int32_t *got,
                           char *msg, size_t n) {
  return run_traced_on(g, 1, fetch, traced, cnt, got, msg, n);
}

Test(propagate, dead_exits_settled_or_traced_agree) {
  dfx_graph *g = eu_graph(GT_COUNTER_LOOP("w/", 0, 7, 1, 10));
  exit_count cnt = {"w/Exit", 0};
  char msg[2048];
  int32_t plain = 0, traced = 0;
  cr_assert_eq(run_traced(g, "w/Exit", false, &cnt, &plain, msg, sizeof msg), DFX_OK, "%s", msg);
  cr_assert_eq(run_traced(g, "w/Exit", true, &cnt, &traced, msg, sizeof msg), DFX_OK, "%s", msg);
  cr_assert_eq(plain, 7);
  cr_assert_eq(traced, 7);
  cr_assert_eq(cnt.exit_calls, 8, "7 dead Exit instances and the live one, got %d", cnt.exit_calls);
  dfx_graph_free(g);

  /* A loop in the untaken branch: its fetched Exit is dead either way, and
   * the message names the Switch that killed it. */
  g = eu_graph(LOOP_IN_BRANCH(false));
  for (int traced_run = 0; traced_run < 2; traced_run++) {
    int32_t v = 0;
    cr_assert_eq(run_traced(g, "w/Exit", traced_run, &cnt, &v, msg, sizeof msg), DFX_EINVAL, "%s", msg);
    cr_assert(strstr(msg, "'sw'"), "%s", msg);
  }
  dfx_graph_free(g);
}

/* ---- trivial nodes settled in place ---- */

/* Without a trace, Consts and one-input Identities are run where they become
 * ready (frames/propagate.c settle_trivial); with a trace they are scheduled
 * like any node. Every graph and fetch below must give the same value, or
 * the same error, both ways, on one and two threads. The graphs have dead
 * Consts and Identities (untaken branches, pivots), a loop in a dead branch,
 * fetched Identities (never settled), and a chain of control-dependent
 * Consts longer than the settling depth. */
#define CONST_CHAIN                                                                                 \
  GT_CONST_BOOL("p", false, "") GT_CONST_I32("v", 3, "") GT_SWITCH("s", "v", "p", "DT_INT32")     \
  GT_OP1("live", "Identity", "s:0", "DT_INT32", "") GT_OP1("dead", "Identity", "s:1", "DT_INT32", "") \
  GT_CONST_I32("k0", 1, GT_INPUT("^live")) GT_CONST_I32("k1", 2, GT_INPUT("^k0"))                  \
  GT_CONST_I32("k2", 3, GT_INPUT("^k1")) GT_CONST_I32("k3", 4, GT_INPUT("^k2"))                    \
  GT_CONST_I32("k4", 5, GT_INPUT("^k3")) GT_CONST_I32("k5", 6, GT_INPUT("^k4"))                    \
  GT_CONST_I32("k6", 7, GT_INPUT("^k5")) GT_OP2("sum", "Add", "k6", "live", "DT_INT32", "")        \
  GT_CONST_I32("d0", 1, GT_INPUT("^dead")) GT_CONST_I32("d1", 2, GT_INPUT("^d0"))                  \
  GT_CONST_I32("d2", 3, GT_INPUT("^d1")) GT_CONST_I32("d3", 4, GT_INPUT("^d2"))                    \
  GT_CONST_I32("d4", 5, GT_INPUT("^d3")) GT_CONST_I32("d5", 6, GT_INPUT("^d4"))                    \
  GT_OP1("d6", "Identity", "d5", "DT_INT32", "") GT_MERGE2("m", "d6", "sum", "DT_INT32", "")

/* A Switch whose predicate is not a scalar is an error, settled or not. */
#define BAD_PRED                                                                                          \
  "node { name: \"p\" op: \"Const\"" GT_TYPE("dtype", "DT_BOOL")                                         \
  " attr { key: \"value\" value { tensor { dtype: DT_BOOL tensor_shape { dim { size: 2 } } bool_val: true" \
  " bool_val: false } } } }\n" GT_CONST_I32("v", 3, "") GT_OP1("pid", "Identity", "p", "DT_BOOL", "")        \
  GT_SWITCH("s", "v", "pid", "DT_INT32") GT_OP1("out", "Identity", "s:1", "DT_INT32", "")

/* A cond's Merge that nobody fetches (settled in place), read through an
 * Identity; and one whose value_index is read (never settled). */
#define MERGE_THEN(PRED)                                                                     \
  COND_WITH_PIVOTS(PRED) GT_OP2("after", "Add", "cond/Merge", "cond/Merge", "DT_INT32", "") \
  GT_MERGE2("m2", "cond/mul", "cond/add", "DT_INT32", "") GT_OP1("idx", "Identity", "m2:1", "DT_INT32", "")

Test(propagate, trivial_nodes_settled_or_traced_agree) {
  static const struct {
    const char *text, *fetch;
  } cases[] = {
      {COND_WITH_PIVOTS(true), "cond/Merge"},   {COND_WITH_PIVOTS(false), "cond/Merge:1"},
      {COND_WITH_PIVOTS(false), "cond/ten"},    {COND_WITH_PIVOTS(true), "cond/switch_f"},
      {LOOP_IN_BRANCH(false), "out"},           {LOOP_IN_BRANCH(true), "out"},
      {LOOP_IN_BRANCH(false), "w/Exit"},        {GT_COND_IN_LOOP(25, 3), "w/Exit"},
      {CONST_CHAIN, "m"},                       {CONST_CHAIN, "m:1"},
      {CONST_CHAIN, "k6"},                      {CONST_CHAIN, "d6"},
      {CONST_CHAIN, "d5"},                      {CONST_CHAIN, "live"},
      {BAD_PRED, "out"},                        {GT_COUNTER_LOOP("w/", 0, 30, 4, 1), "w/Exit"},
      {MERGE_THEN(true), "after"},              {MERGE_THEN(false), "after"},
      {MERGE_THEN(false), "idx"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    dfx_graph *g = eu_graph(cases[i].text);
    exit_count cnt = {NULL, 0};
    for (int threads = 1; threads <= 2; threads++) {
      char m1[2048], m2[2048];
      int32_t v1 = -12345, v2 = -54321;
      dfx_code c1 = run_traced_on(g, threads, cases[i].fetch, false, &cnt, &v1, m1, sizeof m1);
      dfx_code c2 = run_traced_on(g, threads, cases[i].fetch, true, &cnt, &v2, m2, sizeof m2);
      cr_assert_eq(c1, c2, "case %zu (%s), %d threads: %s / %s", i, cases[i].fetch, threads, m1, m2);
      if (c1 == DFX_OK) cr_assert_eq(v1, v2, "case %zu (%s): %d vs %d", i, cases[i].fetch, v1, v2);
      else cr_assert_str_eq(m1, m2, "case %zu (%s)", i, cases[i].fetch);
    }
    dfx_graph_free(g);
  }
  /* And the values themselves, so that agreeing on a wrong answer fails. */
  cr_assert_eq(run_i32(MERGE_THEN(true), 1, "after"), 30);
  cr_assert_eq(run_i32(MERGE_THEN(false), 2, "after"), 20);
  cr_assert_eq(run_i32(MERGE_THEN(false), 1, "idx"), 0);
  cr_assert_eq(run_i32(CONST_CHAIN, 1, "m"), 10);
  cr_assert_eq(run_i32(CONST_CHAIN, 2, "m:1"), 1);
  char msg[2048];
  cr_assert_eq(run_err(CONST_CHAIN, 1, "d6", msg, sizeof msg), DFX_EINVAL, "%s", msg);
  cr_assert(strstr(msg, "'s'"), "%s", msg);
  cr_assert_eq(run_err(BAD_PRED, 1, "out", msg, sizeof msg), DFX_EINVAL, "%s", msg);
  cr_assert(strstr(msg, "scalar bool") && strstr(msg, "'s'"), "%s", msg);
}
