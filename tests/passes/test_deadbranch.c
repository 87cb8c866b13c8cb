/* test_deadbranch.c - the deadbranch pass: tf.cond with a constant
 * predicate (true and false) becomes straight-line code, nested and in
 * loops; a fetched value_index stays exact; dead side effects vanish;
 * loop Switches, fed predicates, kept dead nodes and ControlTriggers stop
 * it. Every graph runs to the same outputs before and after. */
#include <criterion/criterion.h>
#include <string.h>

#include "eutil.h"
#include "gtext.h"
#include "ptest.h"

TestSuite(deadbranch, .init = eu_setup, .fini = eu_teardown, .timeout = 30);

static int count_op(const dfx_graph *g, const char *op) {
  int n = 0;
  for (int i = 0; i < dfx_graph_node_count(g); i++) n += strcmp(dfx_graph_node_op(g, i), op) == 0;
  return n;
}

/* tf.cond(pred, lambda: x + 1, lambda: x * 2) as TF1 lowers it: a pivot
 * Switch of the predicate with Identities the branch constants hang off, a
 * pred_id, a Switch for x, the Merge. P is the name prefix, PRED the
 * predicate node, X the data. */
#define COND(P, PRED, X)                                                  \
  GT_SWITCH(P "Switch", PRED, PRED, "DT_BOOL")                            \
  GT_OP1(P "switch_t", "Identity", P "Switch:1", "DT_BOOL", "")           \
  GT_OP1(P "switch_f", "Identity", P "Switch:0", "DT_BOOL", "")           \
  GT_OP1(P "pred_id", "Identity", PRED, "DT_BOOL", "")                    \
  GT_SWITCH(P "Switch_1", X, P "pred_id", "DT_FLOAT")                     \
  GT_CONST_F32(P "one", 1, GT_INPUT("^" P "switch_t"))                    \
  GT_OP2(P "add", "Add", P "Switch_1:1", P "one", "DT_FLOAT", "")         \
  GT_CONST_F32(P "two", 2, GT_INPUT("^" P "switch_f"))                    \
  GT_OP2(P "mul", "Mul", P "Switch_1:0", P "two", "DT_FLOAT", "")         \
  GT_MERGE2(P "Merge", P "mul", P "add", "DT_FLOAT", "")                  \
  GT_OP1(P "y", "Neg", P "Merge", "DT_FLOAT", "")

static void check_straight(const pt_case *t, const char *live, const char *dead) {
  cr_assert_eq(count_op(t->after, "Switch"), 0);
  cr_assert_eq(count_op(t->after, "Merge"), 0);
  cr_assert_str_eq(pt_op(t->after, "c/Merge"), "Identity");
  cr_assert(pt_has(t->after, live));
  cr_assert(!pt_has(t->after, dead));
}

Test(deadbranch, a_constant_true_cond) {
  pt_case t;
  pt_optimize(&t, GT_PLACEHOLDER("x", "DT_FLOAT") GT_CONST_BOOL("pred", true, "") COND("c/", "pred", "x"),
              "deadbranch", "c/y", "x", NULL);
  check_straight(&t, "c/add", "c/mul");
  cr_assert(!pt_has(t.after, "c/switch_f") && !pt_has(t.after, "c/two"));
  cr_assert_eq(dfx_graph_node_num_control_inputs(t.after, dfx_graph_node_find(t.after, "c/one")), 1,
               "the live branch's constant keeps its pivot");
  pt_same_outputs(&t, (float[]){3});
  pt_free(&t);
}

Test(deadbranch, a_constant_false_cond) {
  pt_case t;
  pt_optimize(&t, GT_PLACEHOLDER("x", "DT_FLOAT") GT_CONST_BOOL("pred", false, "") COND("c/", "pred", "x"),
              "deadbranch", "c/y", "x", NULL);
  check_straight(&t, "c/mul", "c/add");
  pt_same_outputs(&t, (float[]){3});
  pt_free(&t);
}

/* The predicate is fed, or not constant: nothing changes. */
Test(deadbranch, fed_and_computed_predicates_stay) {
  pt_case t;
  pt_optimize(&t, GT_PLACEHOLDER("x", "DT_FLOAT") GT_CONST_BOOL("pred", true, "") COND("c/", "pred", "x"),
              "deadbranch", "c/Merge", "x,pred", NULL);
  cr_assert_eq(t.removed + t.rewritten + t.added, 0);
  pt_free(&t);
  pt_optimize(&t,
              GT_PLACEHOLDER("x", "DT_FLOAT") GT_CONST_F32("zero", 0, "")
              GT_OP2("pred", "Greater", "x", "zero", "DT_FLOAT", "") COND("c/", "pred", "x"),
              "deadbranch", "c/Merge", "x", NULL);
  cr_assert_eq(t.removed + t.rewritten + t.added, 0);
  pt_same_outputs(&t, (float[]){-3});
  pt_free(&t);
}

/* A fetched Merge stays a Merge (its value_index may be fetched), its dead
 * slot reading the output of a new Switch that is never produced;
 * consuming value_index without fetching the Merge turns it into a Const. */
Test(deadbranch, a_fetched_value_index_stays_exact) {
  pt_case t;
  pt_optimize(&t, GT_PLACEHOLDER("x", "DT_FLOAT") GT_CONST_BOOL("pred", true, "") COND("c/", "pred", "x"),
              "deadbranch", "c/Merge,c/Merge:1", "x", NULL);
  cr_assert_str_eq(pt_op(t.after, "c/Merge"), "Merge");
  cr_assert_str_eq(pt_op(t.after, "c/Merge/dead_input"), "Switch");
  cr_assert(!pt_has(t.after, "c/mul") && !pt_has(t.after, "c/switch_f"));
  pt_same_outputs(&t, (float[]){3});
  pt_free(&t);
  pt_optimize(&t,
              GT_PLACEHOLDER("x", "DT_FLOAT") GT_CONST_BOOL("pred", false, "") COND("c/", "pred", "x")
              "node { name: 'idx' op: 'Cast' input: 'c/Merge:1' attr { key: 'SrcT' value { type: DT_INT32 } }"
              " attr { key: 'DstT' value { type: DT_FLOAT } } }\n"
              GT_OP2("y", "Add", "idx", "c/Merge", "DT_FLOAT", ""),
              "deadbranch", "y", "x", NULL);
  cr_assert_str_eq(pt_op(t.after, "c/Merge"), "Identity");
  cr_assert_str_eq(pt_op(t.after, "c/Merge/value_index"), "Const");
  pt_same_outputs(&t, (float[]){3});
  pt_free(&t);
}

/* Outer cond true; its true branch holds a cond whose predicate is a
 * branch constant (false) under the outer pivot, its false branch another
 * cond. The outer resolves first, which makes the inner predicate
 * constant; the cond in the dead branch goes whole. */
Test(deadbranch, nested_conds) {
  pt_case t;
  pt_optimize(&t,
              GT_PLACEHOLDER("x", "DT_FLOAT") GT_CONST_BOOL("pred", true, "")
              GT_SWITCH("o/Switch", "pred", "pred", "DT_BOOL")
              GT_OP1("o/switch_t", "Identity", "o/Switch:1", "DT_BOOL", "")
              GT_OP1("o/switch_f", "Identity", "o/Switch:0", "DT_BOOL", "")
              GT_OP1("o/pred_id", "Identity", "pred", "DT_BOOL", "")
              GT_SWITCH("o/Switch_1", "x", "o/pred_id", "DT_FLOAT")
              GT_CONST_BOOL("o/t/ipred", false, GT_INPUT("^o/switch_t"))
              COND("o/t/", "o/t/ipred", "o/Switch_1:1")
              GT_CONST_BOOL("o/f/ipred", true, GT_INPUT("^o/switch_f"))
              COND("o/f/", "o/f/ipred", "o/Switch_1:0")
              GT_MERGE2("c/Merge", "o/f/Merge", "o/t/Merge", "DT_FLOAT", "") GT_OP1("y", "Neg", "c/Merge", "DT_FLOAT", ""),
              "deadbranch", "y", "x", NULL);
  cr_assert_eq(count_op(t.after, "Switch"), 0);
  cr_assert_eq(count_op(t.after, "Merge"), 0);
  cr_assert(pt_has(t.after, "o/t/mul") && !pt_has(t.after, "o/t/add"));
  cr_assert(!pt_has(t.after, "o/f/Merge") && !pt_has(t.after, "o/f/add") && !pt_has(t.after, "o/f/mul"));
  pt_same_outputs(&t, (float[]){5});
  pt_free(&t);
}

/* A cond with a constant predicate in a while loop body: the predicate
 * enters as a loop invariant. The body becomes straight-line code and stays
 * in the frame. */
Test(deadbranch, a_cond_inside_a_loop) {
  pt_case t;
  pt_optimize(&t,
              GT_CONST_F32("start", 0, "") GT_CONST_BOOL("pred", true, "")
              GT_ENTER("w/Enter", "start", "DT_FLOAT", "w", false, 10)
              GT_ENTER("w/pred", "pred", "DT_BOOL", "w", true, 10)
              GT_MERGE2("w/Merge", "w/Enter", "w/Next", "DT_FLOAT", "")
              GT_CONST_F32("w/lim", 20, GT_INPUT("^w/Merge"))
              GT_OP2("w/Less", "Less", "w/Merge", "w/lim", "DT_FLOAT", "")
              GT_LOOPCOND("w/LoopCond", "w/Less") GT_SWITCH("w/Switch", "w/Merge", "w/LoopCond", "DT_FLOAT")
              GT_OP1("w/i", "Identity", "w/Switch:1", "DT_FLOAT", "")
              COND("w/c/", "w/pred", "w/i")
              GT_OP1("w/Next", "NextIteration", "w/c/Merge", "DT_FLOAT", "")
              GT_OP1("w/Exit", "Exit", "w/Switch", "DT_FLOAT", ""),
              "deadbranch", "w/Exit", NULL, NULL);
  cr_assert_eq(count_op(t.after, "Switch"), 1, "the loop's Switch stays");
  cr_assert_eq(count_op(t.after, "Merge"), 1, "the loop's Merge stays");
  cr_assert(!pt_has(t.after, "w/c/mul"));
  cr_assert_str_eq(dfx_graph_node_frame(t.after, dfx_graph_node_find(t.after, "w/c/one")), "w");
  cr_assert_str_eq(dfx_graph_node_frame(t.after, dfx_graph_node_find(t.after, "w/c/Merge")), "w");
  pt_same_outputs(&t, NULL);
  pt_free(&t);
}

/* A loop alone: its Switch reads a LoopCond and is never touched. */
Test(deadbranch, loop_switches_stay) {
  pt_case t;
  pt_optimize(&t, GT_COUNTER_LOOP("w/", 0, 5, 1, 10), "deadbranch", "w/Exit", NULL, NULL);
  cr_assert_eq(t.removed + t.rewritten + t.added, 0);
  pt_same_outputs(&t, NULL);
  pt_free(&t);
}

/* The dead branch has a stateful op (TF never runs it): it goes too. */
Test(deadbranch, dead_side_effects_vanish) {
  pt_case t;
  pt_optimize(&t,
              GT_PLACEHOLDER("x", "DT_FLOAT") GT_CONST_BOOL("pred", true, "") COND("c/", "pred", "x")
              "node { name: 'c/shape' op: 'Const' input: '^c/switch_f' attr { key: 'dtype' value { type: DT_INT32 } }"
              " attr { key: 'value' value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 0 } } } } } }\n"
              "node { name: 'c/rand' op: 'RandomUniform' input: 'c/shape' attr { key: 'T' value { type: DT_INT32 } }"
              " attr { key: 'dtype' value { type: DT_FLOAT } } }\n"
              GT_OP2("c/noisy", "Add", "c/mul", "c/rand", "DT_FLOAT", "")
              GT_MERGE2("m", "c/noisy", "c/add", "DT_FLOAT", "") GT_OP1("y", "Neg", "m", "DT_FLOAT", ""),
              "deadbranch", "y,c/y", "x", NULL);
  cr_assert(!pt_has(t.after, "c/rand") && !pt_has(t.after, "c/noisy"));
  cr_assert_str_eq(pt_op(t.after, "m"), "Identity");
  pt_same_outputs(&t, (float[]){3});
  pt_free(&t);
}

/* Two conds whose branches feed each other's Merges: m1 takes c1's true
 * side and c2's true side (dead: c2 is false), m2 c1's false side (dead)
 * and c2's false side. */
Test(deadbranch, branches_feeding_each_others_merges) {
  pt_case t;
  pt_optimize(&t,
              GT_PLACEHOLDER("x", "DT_FLOAT") GT_CONST_BOOL("p1", true, "") GT_CONST_BOOL("p2", false, "")
              GT_SWITCH("s1", "x", "p1", "DT_FLOAT") GT_SWITCH("s2", "x", "p2", "DT_FLOAT")
              GT_OP1("a", "Neg", "s1:1", "DT_FLOAT", "") GT_OP1("b", "Exp", "s2:1", "DT_FLOAT", "")
              GT_OP1("c", "Abs", "s1:0", "DT_FLOAT", "") GT_OP1("d", "Square", "s2:0", "DT_FLOAT", "")
              GT_MERGE2("m1", "b", "a", "DT_FLOAT", "") GT_MERGE2("m2", "c", "d", "DT_FLOAT", "")
              GT_OP2("y", "Add", "m1", "m2", "DT_FLOAT", "")
              GT_MERGE2("m3", "a", "d", "DT_FLOAT", ""),
              "deadbranch", "y,m3,m3:1", "x", NULL);
  cr_assert_eq(count_op(t.after, "Merge"), 1, "m3 is fetched and has two live inputs");
  cr_assert(!pt_has(t.after, "b") && !pt_has(t.after, "c"));
  cr_assert_str_eq(pt_op(t.after, "m1"), "Identity");
  cr_assert_str_eq(pt_op(t.after, "m2"), "Identity");
  pt_same_outputs(&t, (float[]){-2});
  pt_free(&t);
}

/* A target in the dead branch, or a ControlTrigger deadness would reach:
 * the Switch is left alone. */
Test(deadbranch, kept_dead_nodes_and_control_triggers_stop_it) {
  pt_case t;
  pt_optimize(&t, GT_PLACEHOLDER("x", "DT_FLOAT") GT_CONST_BOOL("pred", true, "") COND("c/", "pred", "x"),
              "deadbranch", "c/Merge", "x", "c/mul");
  cr_assert_str_eq(pt_op(t.after, "c/Merge"), "Merge");
  cr_assert(pt_has(t.after, "c/mul"));
  pt_same_outputs(&t, (float[]){3});
  pt_free(&t);
  pt_optimize(&t,
              GT_PLACEHOLDER("x", "DT_FLOAT") GT_CONST_BOOL("pred", true, "") COND("c/", "pred", "x")
              "node { name: 'trig' op: 'ControlTrigger' input: '^c/mul' }\n"
              GT_OP1("y", "Neg", "c/Merge", "DT_FLOAT", GT_INPUT("^trig")),
              "deadbranch", "y", "x", NULL);
  cr_assert(pt_has(t.after, "c/mul") && pt_has(t.after, "trig"));
  pt_same_outputs(&t, (float[]){3});
  pt_free(&t);
}

/* A Merge with a control input keeps being a Merge (an Identity would die
 * with a dead control input, a Merge does not). */
Test(deadbranch, a_merge_with_a_control_input_stays_a_merge) {
  pt_case t;
  pt_optimize(&t,
              GT_PLACEHOLDER("x", "DT_FLOAT") GT_CONST_BOOL("pred", false, "") GT_NOOP("gate", "")
              GT_SWITCH("s", "x", "pred", "DT_FLOAT") GT_OP1("a", "Neg", "s:1", "DT_FLOAT", "")
              GT_OP1("b", "Abs", "s:0", "DT_FLOAT", "")
              GT_MERGE2("m", "a", "b", "DT_FLOAT", GT_INPUT("^gate")) GT_OP1("y", "Neg", "m", "DT_FLOAT", ""),
              "deadbranch", "y", "x", NULL);
  cr_assert_str_eq(pt_op(t.after, "m"), "Merge");
  cr_assert(!pt_has(t.after, "a"));
  pt_same_outputs(&t, (float[]){-3});
  pt_free(&t);
}

/* The default pipeline over a constant cond: only the live computation is
 * left (folded, since x is the only input). */
Test(deadbranch, default_pipeline) {
  pt_case t;
  pt_optimize(&t, GT_PLACEHOLDER("x", "DT_FLOAT") GT_CONST_BOOL("pred", true, "") COND("c/", "pred", "x"),
              "default", "c/y", "x", NULL);
  cr_assert_eq(count_op(t.after, "Switch"), 0);
  cr_assert_leq(pt_count(t.after), 5, "x, pred, one, add, y");
  pt_same_outputs(&t, (float[]){3});
  pt_free(&t);
}
