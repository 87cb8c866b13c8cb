/* test_licm.c - the licm pass: invariant work in a loop body moves in
 * front of the loop and enters once through a constant Enter; anchored
 * work (hung off a pivot) enters through a guard that keeps its deadness;
 * what could fail or change deadness stays; nested loops move one level
 * per round; outputs are equal for every iteration count, zero included. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "eutil.h"
#include "gtext.h"
#include "ptest.h"

TestSuite(licm, .init = eu_setup, .fini = eu_teardown, .timeout = 60);

/* `i = 0.0; acc = 0.5; while i < lim: i += 1; acc = <body>` in frame
 * "w/while", with lim, a and b fed and entered as constants (w/lim, w/a,
 * w/b). The body reads w/acc (the accumulator) and w/i (the counter's
 * pivot, which body constants hang off) and defines w/acc_next. */
#define LOOP(pi, body)                                                              \
  GT_PLACEHOLDER("lim", "DT_FLOAT") GT_PLACEHOLDER("a", "DT_FLOAT")                 \
  GT_PLACEHOLDER("b", "DT_FLOAT")                                                   \
  GT_CONST_F32("i0", 0, "") GT_CONST_F32("acc0", 0.5, "")                           \
  GT_ENTER("w/Enter_i", "i0", "DT_FLOAT", "w/while", false, pi)                     \
  GT_ENTER("w/Enter_acc", "acc0", "DT_FLOAT", "w/while", false, pi)                 \
  GT_ENTER("w/lim", "lim", "DT_FLOAT", "w/while", true, pi)                         \
  GT_ENTER("w/a", "a", "DT_FLOAT", "w/while", true, pi)                             \
  GT_ENTER("w/b", "b", "DT_FLOAT", "w/while", true, pi)                             \
  GT_MERGE2("w/Merge_i", "w/Enter_i", "w/Next_i", "DT_FLOAT", "")                   \
  GT_MERGE2("w/Merge_acc", "w/Enter_acc", "w/Next_acc", "DT_FLOAT", "")             \
  GT_OP2("w/Less", "Less", "w/Merge_i", "w/lim", "DT_FLOAT", "")                    \
  GT_LOOPCOND("w/LoopCond", "w/Less")                                               \
  GT_SWITCH("w/Switch_i", "w/Merge_i", "w/LoopCond", "DT_FLOAT")                    \
  GT_SWITCH("w/Switch_acc", "w/Merge_acc", "w/LoopCond", "DT_FLOAT")                \
  GT_OP1("w/i", "Identity", "w/Switch_i:1", "DT_FLOAT", "")                         \
  GT_OP1("w/acc", "Identity", "w/Switch_acc:1", "DT_FLOAT", "")                     \
  GT_CONST_F32("w/one", 1, GT_INPUT("^w/i"))                                        \
  GT_OP2("w/i1", "Add", "w/i", "w/one", "DT_FLOAT", "")                             \
  GT_OP1("w/Next_i", "NextIteration", "w/i1", "DT_FLOAT", "")                       \
  body                                                                              \
  GT_OP1("w/Next_acc", "NextIteration", "w/acc_next", "DT_FLOAT", "")               \
  GT_OP1("w/Exit_i", "Exit", "w/Switch_i", "DT_FLOAT", "")                          \
  GT_OP1("w/Exit_acc", "Exit", "w/Switch_acc", "DT_FLOAT", "")

static const char *frame_of(const dfx_graph *g, const char *name) {
  const char *f = dfx_graph_node_frame(g, dfx_graph_node_find(g, name));
  return f ? f : "(none)";
}

/* The node input k of `name` reads, or "". */
static const char *input_of(const dfx_graph *g, const char *name, int k) {
  dfx_port p = dfx_graph_node_input(g, dfx_graph_node_find(g, name), k);
  return p.node ? p.node : "";
}

static bool has_control(const dfx_graph *g, const char *name, const char *src) {
  int i = dfx_graph_node_find(g, name), s = dfx_graph_node_find(g, src);
  for (int k = 0; k < dfx_graph_node_num_control_inputs(g, i); k++)
    if (dfx_graph_node_control_input(g, i, k) == s) return true;
  return false;
}

/* Asserts `name` is a constant Enter of frame w/while, parallel_iterations pi. */
static void assert_const_enter(const dfx_graph *g, const char *name, const char *frame, int64_t pi) {
  int i = dfx_graph_node_find(g, name);
  cr_assert(i >= 0, "no node '%s'", name);
  cr_assert_str_eq(dfx_graph_node_op(g, i), "Enter");
  int b = 0;
  int64_t p = 0;
  const char *fn = NULL;
  cr_assert_eq(dfx_graph_node_attr_bool(g, i, "is_constant", &b, NULL), DFX_OK);
  cr_assert(b, "'%s' is not a constant Enter", name);
  cr_assert_eq(dfx_graph_node_attr_string(g, i, "frame_name", &fn, NULL, NULL), DFX_OK);
  cr_assert_str_eq(fn, frame);
  cr_assert_eq(dfx_graph_node_attr_int(g, i, "parallel_iterations", &p, NULL), DFX_OK);
  cr_assert_eq(p, pi);
}

/* Runs before and after for several iteration counts (lim), zero among them. */
static void same_for_many_counts(const pt_case *t, float a, float b) {
  static const float lims[] = {-1, 0, 0.5f, 1, 2, 3, 7, 40};
  for (size_t k = 0; k < sizeof lims / sizeof lims[0]; k++)
    cr_assert_eq(pt_same_outputs(t, (float[]){lims[k], a, b}), DFX_OK, "lim %g", lims[k]);
}

/* The headline case: a*b, and a chain on it, computed every iteration from
 * fed values entered as constants. */
static const char mul_loop[] = LOOP(10, GT_OP2("w/ab", "Mul", "w/a", "w/b", "DT_FLOAT", "")
                                            GT_OP1("w/sq", "Square", "w/ab", "DT_FLOAT", "")
                                            GT_OP2("w/acc_next", "Add", "w/acc", "w/sq", "DT_FLOAT", ""));

Test(licm, an_invariant_chain_moves_out_and_enters_once) {
  pt_case t;
  pt_optimize(&t, mul_loop, "licm", "w/Exit_acc,w/Exit_i", "lim,a,b", NULL);
  cr_assert_str_eq(frame_of(t.before, "w/ab"), "w/while");
  cr_assert_str_eq(frame_of(t.after, "w/ab"), "", "moved to the root frame");
  cr_assert_str_eq(frame_of(t.after, "w/sq"), "");
  cr_assert_str_eq(input_of(t.after, "w/ab", 0), "a", "reads the Enter's input");
  cr_assert_str_eq(input_of(t.after, "w/ab", 1), "b");
  assert_const_enter(t.after, "w/sq/licm_enter", "w/while", 10);
  cr_assert_str_eq(input_of(t.after, "w/sq/licm_enter", 0), "w/sq");
  cr_assert_str_eq(input_of(t.after, "w/acc_next", 1), "w/sq/licm_enter");
  cr_assert(!pt_has(t.after, "w/ab/licm_enter"), "w/ab feeds only moved nodes");
  cr_assert(!pt_has(t.after, "w/a") && !pt_has(t.after, "w/b"), "the Enters nobody reads went");
  cr_assert(!pt_has(t.after, "w/sq/licm_guard"), "no anchor: no guard");
  cr_assert_str_eq(frame_of(t.after, "w/acc_next"), "w/while");
  cr_assert_str_eq(frame_of(t.after, "w/i1"), "w/while", "loop-variant work stays");
  same_for_many_counts(&t, 1.5f, -2);
  pt_free(&t);
}

/* a * 2 with the 2 hung off the pivot (the classic `x * some_const`):
 * anchored, and Mul by a scalar constant cannot fail, so it moves; its
 * consumers read a guard that dies with the pivot. The Const is copied
 * out and the one inside goes. */
static const char scaled_loop[] = LOOP(7, GT_CONST_F32("w/two", 2, GT_INPUT("^w/i"))
                                              GT_OP2("w/a2", "Mul", "w/a", "w/two", "DT_FLOAT", "")
                                              GT_OP2("w/acc_next", "Add", "w/acc", "w/a2", "DT_FLOAT", ""));

Test(licm, a_product_with_a_pivot_constant_moves_behind_a_guard) {
  pt_case t;
  pt_optimize(&t, scaled_loop, "licm", "w/Exit_acc,w/Exit_i", "lim,a,b", NULL);
  cr_assert_str_eq(frame_of(t.after, "w/a2"), "");
  cr_assert_str_eq(input_of(t.after, "w/a2", 1), "w/two/licm");
  cr_assert_str_eq(pt_op(t.after, "w/two/licm"), "Const");
  cr_assert_str_eq(frame_of(t.after, "w/two/licm"), "");
  cr_assert_eq(dfx_graph_node_num_control_inputs(t.after, dfx_graph_node_find(t.after, "w/two/licm")), 0);
  cr_assert(!pt_has(t.after, "w/two"), "no consumer left inside");
  assert_const_enter(t.after, "w/a2/licm_enter", "w/while", 7);
  cr_assert_str_eq(pt_op(t.after, "w/a2/licm_guard"), "Identity");
  cr_assert_str_eq(frame_of(t.after, "w/a2/licm_guard"), "w/while");
  cr_assert_str_eq(input_of(t.after, "w/a2/licm_guard", 0), "w/a2/licm_enter");
  cr_assert(has_control(t.after, "w/a2/licm_guard", "w/i"), "the guard hangs off the pivot");
  cr_assert_str_eq(input_of(t.after, "w/acc_next", 1), "w/a2/licm_guard");
  same_for_many_counts(&t, 1.5f, 0);
  pt_free(&t);
}

/* NextIteration(a * 2): the moved value is the loop variable's next value
 * itself. Live in the exiting iteration it would start one iteration too
 * many; the guard keeps it dead there. */
static const char next_is_invariant[] = LOOP(10, GT_CONST_F32("w/two", 2, GT_INPUT("^w/i"))
                                                     GT_OP2("w/acc_next", "Mul", "w/a", "w/two", "DT_FLOAT", ""));

Test(licm, the_guard_keeps_a_moved_next_value_dead_in_the_exiting_iteration) {
  pt_case t;
  pt_optimize(&t, next_is_invariant, "licm", "w/Exit_acc,w/Exit_i", "lim,a,b", NULL);
  cr_assert_str_eq(frame_of(t.after, "w/acc_next"), "");
  cr_assert_str_eq(input_of(t.after, "w/Next_acc", 0), "w/acc_next/licm_guard");
  same_for_many_counts(&t, 3, 0);
  pt_free(&t);
}

/* Reshape of a weight with a shape hung off the pivot could fail outside
 * (a loop of zero iterations never runs it); with the shape entered as a
 * constant it ran in iteration 0 anyway, so it moves, failing or not. */
#define SHAPE_CONST(name, n, ctl)                                                                         \
  "node { name: '" name "' op: 'Const' " ctl " attr { key: 'dtype' value { type: DT_INT32 } }"           \
  " attr { key: 'value' value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 1 } } int_val: " #n \
  " } } } }\n"
#define RESHAPE(name, x, shape) \
  "node { name: '" name "' op: 'Reshape' input: '" x "' input: '" shape "'" GT_TYPE("T", "DT_FLOAT") \
  GT_TYPE("Tshape", "DT_INT32") " }\n"
#define SUM(name, x, axes)                                                                             \
  "node { name: '" name "' op: 'Sum' input: '" x "' input: '" axes "'" GT_TYPE("T", "DT_FLOAT") \
  GT_TYPE("Tidx", "DT_INT32") " }\n"

Test(licm, a_pivot_reshape_that_could_fail_stays_an_entered_one_moves) {
  for (int n = 1; n <= 2; n++) { /* 1 fits the scalar a; 2 fails */
    char text[8192];
    snprintf(text, sizeof text, "%s",
             n == 1 ? LOOP(10, SHAPE_CONST("w/shape", 1, "input: '^w/i'") RESHAPE("w/r", "w/a", "w/shape")
                                   SHAPE_CONST("w/axes", 0, "input: '^w/i'") SUM("w/s", "w/r", "w/axes")
                                   GT_OP2("w/acc_next", "Add", "w/acc", "w/s", "DT_FLOAT", ""))
                    : LOOP(10, SHAPE_CONST("w/shape", 2, "input: '^w/i'") RESHAPE("w/r", "w/a", "w/shape")
                                   SHAPE_CONST("w/axes", 0, "input: '^w/i'") SUM("w/s", "w/r", "w/axes")
                                   GT_OP2("w/acc_next", "Add", "w/acc", "w/s", "DT_FLOAT", "")));
    pt_case t;
    pt_optimize(&t, text, "licm", "w/Exit_acc,w/Exit_i", "lim,a,b", NULL);
    cr_assert_str_eq(frame_of(t.after, "w/r"), "w/while", "Reshape may fail: stays");
    cr_assert_str_eq(frame_of(t.after, "w/s"), "w/while");
    cr_assert_eq(pt_same_outputs(&t, (float[]){0, 1, 1}), DFX_OK, "zero iterations never reshape");
    dfx_code c = pt_same_outputs(&t, (float[]){3, 1, 1});
    cr_assert_eq(c, n == 1 ? DFX_OK : DFX_EINVAL);
    pt_free(&t);
  }
  /* The same with the shape entered as a constant: no anchor. The bad
   * shape fails before and after, whatever the iteration count. */
  static const char entered[] =
      SHAPE_CONST("shape", 2, "") SHAPE_CONST("axes", 0, "")
      LOOP(10, GT_ENTER("w/shape", "shape", "DT_INT32", "w/while", true, 10)
                   GT_ENTER("w/axes", "axes", "DT_INT32", "w/while", true, 10) RESHAPE("w/r", "w/a", "w/shape")
                       SUM("w/s", "w/r", "w/axes") GT_OP2("w/acc_next", "Add", "w/acc", "w/s", "DT_FLOAT", ""));
  pt_case t;
  pt_optimize(&t, entered, "licm", "w/Exit_acc,w/Exit_i", "lim,a,b", NULL);
  cr_assert_str_eq(frame_of(t.after, "w/r"), "");
  cr_assert_str_eq(frame_of(t.after, "w/s"), "");
  cr_assert_eq(pt_same_outputs(&t, (float[]){0, 1, 1}), DFX_EINVAL, "fails in iteration 0 before too");
  cr_assert_eq(pt_same_outputs(&t, (float[]){3, 1, 1}), DFX_EINVAL);
  pt_free(&t);
}

/* A node of several outputs gets one Enter per output read inside; a
 * control consumer left inside waits for the Enter instead. */
Test(licm, each_output_read_inside_gets_its_enter) {
  pt_case t;
  pt_optimize(&t,
              LOOP(10, "node { name: 'w/p' op: 'Pack' input: 'w/a' input: 'w/b'" GT_TYPE("T", "DT_FLOAT")
                       " attr { key: 'N' value { i: 2 } } attr { key: 'axis' value { i: 0 } } }\n"
                       "node { name: 'w/u' op: 'Unpack' input: 'w/p'" GT_TYPE("T", "DT_FLOAT")
                       " attr { key: 'num' value { i: 2 } } attr { key: 'axis' value { i: 0 } } }\n"
                       GT_CONST_F32("w/ten", 10, GT_INPUT("^w/u"))
                       GT_OP2("w/t1", "Add", "w/acc", "w/u:1", "DT_FLOAT", "")
                       GT_OP2("w/t2", "Sub", "w/t1", "w/u:0", "DT_FLOAT", "")
                       GT_OP2("w/acc_next", "Add", "w/t2", "w/ten", "DT_FLOAT", "")),
              "licm", "w/Exit_acc,w/Exit_i", "lim,a,b", NULL);
  cr_assert_str_eq(frame_of(t.after, "w/p"), "");
  cr_assert_str_eq(frame_of(t.after, "w/u"), "");
  assert_const_enter(t.after, "w/u/licm_enter", "w/while", 10);
  assert_const_enter(t.after, "w/u/licm_enter_1", "w/while", 10);
  dfx_port in1 = dfx_graph_node_input(t.after, dfx_graph_node_find(t.after, "w/u/licm_enter_1"), 0);
  cr_assert_str_eq(in1.node, "w/u");
  cr_assert_eq(in1.index, 1);
  cr_assert_str_eq(input_of(t.after, "w/t1", 1), "w/u/licm_enter_1");
  cr_assert_str_eq(input_of(t.after, "w/t2", 1), "w/u/licm_enter");
  cr_assert_str_eq(frame_of(t.after, "w/ten"), "w/while", "hangs off an invariant: not one itself");
  cr_assert(has_control(t.after, "w/ten", "w/u/licm_enter"));
  same_for_many_counts(&t, 1.5f, -2);
  pt_free(&t);
}

/* A Merge reading an anchor-free invariant would see a dead Enter as "all
 * inputs dead": the node stays. Identities alone are not worth an Enter. */
Test(licm, merge_consumers_and_lone_identities_stay) {
  pt_case t;
  pt_optimize(&t,
              LOOP(10, GT_OP2("w/ab", "Mul", "w/a", "w/b", "DT_FLOAT", "")
                           "node { name: 'w/m' op: 'Merge' input: 'w/ab'" GT_TYPE("T", "DT_FLOAT")
                           " attr { key: 'N' value { i: 1 } } }\n"
                           GT_OP1("w/ida", "Identity", "w/a", "DT_FLOAT", "")
                           GT_OP2("w/mi", "Add", "w/m", "w/ida", "DT_FLOAT", "")
                           GT_OP2("w/acc_next", "Add", "w/acc", "w/mi", "DT_FLOAT", "")),
              "licm", "w/Exit_acc,w/Exit_i", "lim,a,b", NULL);
  cr_assert_str_eq(frame_of(t.after, "w/ab"), "w/while");
  cr_assert_str_eq(frame_of(t.after, "w/ida"), "w/while");
  cr_assert_eq(pt_count(t.after), pt_count(t.before));
  cr_assert_eq(t.added + t.removed + t.rewritten, 0);
  same_for_many_counts(&t, 2, 5);
  pt_free(&t);
}

/* A cond in the body: the true branch scales a by a Const hung off the
 * branch pivot. It moves behind a guard on that pivot, so the branch not
 * taken still sees a dead value; the Merge picks the same input. */
static const char cond_loop[] = LOOP(
    10, GT_CONST_F32("w/zero", 0, GT_INPUT("^w/i")) GT_OP2("w/pos", "Greater", "w/acc", "w/zero", "DT_FLOAT", "")
            GT_SWITCH("w/c/Switch", "w/acc", "w/pos", "DT_FLOAT")
                GT_OP1("w/c/t", "Identity", "w/c/Switch:1", "DT_FLOAT", "")
                    GT_OP1("w/c/f", "Identity", "w/c/Switch:0", "DT_FLOAT", "")
                        GT_CONST_F32("w/c/three", 3, GT_INPUT("^w/c/t"))
                            GT_OP2("w/c/a3", "Mul", "w/a", "w/c/three", "DT_FLOAT", "")
                                GT_OP2("w/c/add", "Sub", "w/c/t", "w/c/a3", "DT_FLOAT", "")
                                    GT_OP2("w/c/ab", "Mul", "w/a", "w/b", "DT_FLOAT", "")
                                        GT_OP2("w/c/sub", "Add", "w/c/f", "w/c/ab", "DT_FLOAT", "")
                                            GT_MERGE2("w/acc_next", "w/c/sub", "w/c/add", "DT_FLOAT", ""));

Test(licm, a_cond_in_the_body_keeps_its_branches) {
  pt_case t;
  pt_optimize(&t, cond_loop, "licm", "w/Exit_acc,w/Exit_i", "lim,a,b", NULL);
  cr_assert_str_eq(frame_of(t.after, "w/c/a3"), "");
  cr_assert(has_control(t.after, "w/c/a3/licm_guard", "w/c/t"), "guarded by the branch pivot");
  cr_assert(!has_control(t.after, "w/c/a3/licm_guard", "w/i"));
  cr_assert_str_eq(frame_of(t.after, "w/c/ab"), "", "anchor-free inside a branch moves too");
  cr_assert(!pt_has(t.after, "w/c/ab/licm_guard"));
  cr_assert_str_eq(frame_of(t.after, "w/c/add"), "w/while");
  cr_assert_str_eq(frame_of(t.after, "w/acc_next"), "w/while");
  same_for_many_counts(&t, 0.75f, 0.25f);
  same_for_many_counts(&t, 0.25f, -3);
  pt_free(&t);
}

/* Kept nodes never move: a target inside the loop, or a fed constant Enter
 * (its consumers read the fed value, not the Enter's input). */
Test(licm, kept_and_fed_nodes_stay) {
  pt_case t;
  pt_optimize(&t, mul_loop, "licm", "w/Exit_acc", "lim,a,b", "w/sq");
  cr_assert_str_eq(frame_of(t.after, "w/sq"), "w/while", "a target");
  cr_assert_str_eq(frame_of(t.after, "w/ab"), "", "what it reads still moves");
  cr_assert(pt_has(t.after, "w/ab/licm_enter"));
  pt_free(&t);
  pt_optimize(&t, mul_loop, "licm", "w/Exit_acc", "lim,w/a,b", NULL);
  cr_assert_str_eq(frame_of(t.after, "w/ab"), "w/while", "reads a fed Enter");
  cr_assert(pt_has(t.after, "w/a"));
  pt_free(&t);
  /* No ports: the placeholders and outputs are kept; the move still happens. */
  pt_optimize(&t, mul_loop, "licm", NULL, NULL, NULL);
  cr_assert_str_eq(frame_of(t.after, "w/sq"), "");
  cr_assert(pt_has(t.after, "w/Exit_acc") && pt_has(t.after, "a"));
  pt_free(&t);
}

/* Two levels: x = a * b inside an inner loop, a and b entered through both
 * loops. Round 1 moves it to the outer body, round 2 in front of both. */
static const char nested[] =
    GT_PLACEHOLDER("limo", "DT_FLOAT") GT_PLACEHOLDER("limi", "DT_FLOAT") GT_PLACEHOLDER("a", "DT_FLOAT")
    GT_PLACEHOLDER("b", "DT_FLOAT") GT_CONST_F32("j0", 0, "") GT_CONST_F32("acc0", 0.5, "")
    GT_ENTER("o/Enter_j", "j0", "DT_FLOAT", "o/while", false, 10)
    GT_ENTER("o/Enter_acc", "acc0", "DT_FLOAT", "o/while", false, 10)
    GT_ENTER("o/limo", "limo", "DT_FLOAT", "o/while", true, 10)
    GT_ENTER("o/limi", "limi", "DT_FLOAT", "o/while", true, 10)
    GT_ENTER("o/a", "a", "DT_FLOAT", "o/while", true, 10) GT_ENTER("o/b", "b", "DT_FLOAT", "o/while", true, 10)
    GT_MERGE2("o/Merge_j", "o/Enter_j", "o/Next_j", "DT_FLOAT", "")
    GT_MERGE2("o/Merge_acc", "o/Enter_acc", "o/Next_acc", "DT_FLOAT", "")
    GT_OP2("o/Less", "Less", "o/Merge_j", "o/limo", "DT_FLOAT", "") GT_LOOPCOND("o/LoopCond", "o/Less")
    GT_SWITCH("o/Switch_j", "o/Merge_j", "o/LoopCond", "DT_FLOAT")
    GT_SWITCH("o/Switch_acc", "o/Merge_acc", "o/LoopCond", "DT_FLOAT")
    GT_OP1("o/j", "Identity", "o/Switch_j:1", "DT_FLOAT", "")
    GT_OP1("o/acc", "Identity", "o/Switch_acc:1", "DT_FLOAT", "")
    GT_CONST_F32("o/one", 1, GT_INPUT("^o/j")) GT_OP2("o/j1", "Add", "o/j", "o/one", "DT_FLOAT", "")
    GT_OP1("o/Next_j", "NextIteration", "o/j1", "DT_FLOAT", "")
    /* the inner loop, in the outer body */
    GT_CONST_F32("o/w/i0", 0, GT_INPUT("^o/j"))
    GT_ENTER("o/w/Enter_i", "o/w/i0", "DT_FLOAT", "o/w/while", false, 4)
    GT_ENTER("o/w/Enter_acc", "o/acc", "DT_FLOAT", "o/w/while", false, 4)
    GT_ENTER("o/w/limi", "o/limi", "DT_FLOAT", "o/w/while", true, 4)
    GT_ENTER("o/w/a", "o/a", "DT_FLOAT", "o/w/while", true, 4)
    GT_ENTER("o/w/b", "o/b", "DT_FLOAT", "o/w/while", true, 4)
    GT_MERGE2("o/w/Merge_i", "o/w/Enter_i", "o/w/Next_i", "DT_FLOAT", "")
    GT_MERGE2("o/w/Merge_acc", "o/w/Enter_acc", "o/w/Next_acc", "DT_FLOAT", "")
    GT_OP2("o/w/Less", "Less", "o/w/Merge_i", "o/w/limi", "DT_FLOAT", "") GT_LOOPCOND("o/w/LoopCond", "o/w/Less")
    GT_SWITCH("o/w/Switch_i", "o/w/Merge_i", "o/w/LoopCond", "DT_FLOAT")
    GT_SWITCH("o/w/Switch_acc", "o/w/Merge_acc", "o/w/LoopCond", "DT_FLOAT")
    GT_OP1("o/w/i", "Identity", "o/w/Switch_i:1", "DT_FLOAT", "")
    GT_OP1("o/w/acc", "Identity", "o/w/Switch_acc:1", "DT_FLOAT", "")
    GT_CONST_F32("o/w/one", 1, GT_INPUT("^o/w/i")) GT_OP2("o/w/i1", "Add", "o/w/i", "o/w/one", "DT_FLOAT", "")
    GT_OP1("o/w/Next_i", "NextIteration", "o/w/i1", "DT_FLOAT", "")
    GT_OP2("o/w/ab", "Mul", "o/w/a", "o/w/b", "DT_FLOAT", "")
    GT_OP2("o/w/acc1", "Add", "o/w/acc", "o/w/ab", "DT_FLOAT", "")
    GT_OP1("o/w/Next_acc", "NextIteration", "o/w/acc1", "DT_FLOAT", "")
    GT_OP1("o/w/Exit_i", "Exit", "o/w/Switch_i", "DT_FLOAT", "")
    GT_OP1("o/w/Exit_acc", "Exit", "o/w/Switch_acc", "DT_FLOAT", "")
    /* back in the outer body */
    GT_OP2("o/bj", "Mul", "o/b", "o/j", "DT_FLOAT", "")
    GT_OP2("o/acc_next", "Add", "o/w/Exit_acc", "o/bj", "DT_FLOAT", "")
    GT_OP1("o/Next_acc", "NextIteration", "o/acc_next", "DT_FLOAT", "")
    GT_OP1("o/Exit_j", "Exit", "o/Switch_j", "DT_FLOAT", "")
    GT_OP1("o/Exit_acc", "Exit", "o/Switch_acc", "DT_FLOAT", "");

Test(licm, nested_loops_move_one_level_per_round) {
  pt_case t;
  pt_optimize(&t, nested, "licm", "o/Exit_acc", "limo,limi,a,b", NULL);
  cr_assert_str_eq(frame_of(t.before, "o/w/ab"), "o/w/while");
  cr_assert_str_eq(frame_of(t.after, "o/w/ab"), "", "two rounds: in front of both loops");
  assert_const_enter(t.after, "o/w/ab/licm_enter", "o/w/while", 4);
  assert_const_enter(t.after, "o/w/ab/licm_enter_1", "o/while", 10);
  cr_assert_str_eq(input_of(t.after, "o/w/ab/licm_enter", 0), "o/w/ab/licm_enter_1", "an Enter chain");
  cr_assert_str_eq(frame_of(t.after, "o/bj"), "o/while", "reads the outer counter");
  static const float cases[][4] = {{0, 3, 1, 2}, {3, 0, 1, 2}, {3, 4, 1.5f, -1}, {1, 1, 2, 2}, {5, 2, 0.5f, 3}};
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) cr_assert_eq(pt_same_outputs(&t, cases[k]), DFX_OK);
  pt_free(&t);
}

/* The default pipeline with constants: constfold computes what reads only
 * constants; licm moves what reads fed values; outputs agree. */
Test(licm, the_default_pipeline_folds_then_moves) {
  pt_case t;
  pt_optimize(&t,
              LOOP(10, GT_CONST_F32("w/two", 2, GT_INPUT("^w/i")) GT_CONST_F32("w/three", 3, GT_INPUT("^w/i"))
                           GT_OP2("w/six", "Mul", "w/two", "w/three", "DT_FLOAT", "")
                               GT_OP2("w/ab", "Mul", "w/a", "w/b", "DT_FLOAT", "")
                                   GT_OP2("w/ab6", "Mul", "w/ab", "w/six", "DT_FLOAT", "")
                                       GT_OP2("w/acc_next", "Add", "w/acc", "w/ab6", "DT_FLOAT", "")),
              "default", "w/Exit_acc,w/Exit_i", "lim,a,b", NULL);
  cr_assert(!pt_has(t.after, "w/six"), "folded, then copied out");
  cr_assert_str_eq(pt_op(t.after, "w/six/licm"), "Const");
  cr_assert_str_eq(frame_of(t.after, "w/ab"), "");
  cr_assert_str_eq(frame_of(t.after, "w/ab6"), "");
  cr_assert(has_control(t.after, "w/ab6/licm_guard", "w/i"), "the folded 6 hung off the pivot");
  same_for_many_counts(&t, 1.25f, 2);
  pt_free(&t);
}
