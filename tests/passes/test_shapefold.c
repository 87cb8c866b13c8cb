/* test_shapefold.c - the shapefold pass: Shape, ShapeN, Size, Rank and
 * BroadcastGradientArgs of statically known shapes become Consts (in
 * place, or one per output) that keep their producer as a control input,
 * so they stay in its frame and iteration, die with it in an untaken
 * branch (through a pivot Identity on a Switch port) and fail when it
 * fails; fed nodes and fed inputs are left alone; constfold then folds
 * what reads them. Every graph runs before and after to the same values. */
#include <criterion/criterion.h>
#include <string.h>

#include "eutil.h"
#include "gtext.h"
#include "ptest.h"

TestSuite(shapefold, .init = eu_setup, .fini = eu_teardown, .timeout = 30);

#define ATTR_T(k, t) " attr { key: '" k "' value { type: " t " } }"
#define ATTR_I(k, v) " attr { key: '" k "' value { i: " #v " } }"
#define IN(a) " input: '" a "'"
#define OP(name, op, ins, attrs) "node { name: '" name "' op: '" op "'" ins attrs " }\n"
#define F ATTR_T("T", "DT_FLOAT")
#define OUT32 ATTR_T("out_type", "DT_INT32")
#define D(n) "dim { size: " #n " } "
/* A float Const of `shape` filled with v. */
#define CF(name, shape, v, ctl) \
  "node { name: '" name "' op: 'Const'" ctl ATTR_T("dtype", "DT_FLOAT") \
  " attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape { " shape "} float_val: " #v " } } } }\n"
#define CI(name, shape, vals) \
  "node { name: '" name "' op: 'Const'" ATTR_T("dtype", "DT_INT32") \
  " attr { key: 'value' value { tensor { dtype: DT_INT32 tensor_shape { " shape "} " vals " } } } }\n"
#define SCALAR_PH(name) \
  "node { name: '" name "' op: 'Placeholder'" ATTR_T("dtype", "DT_FLOAT") \
  " attr { key: 'shape' value { shape { } } } }\n"

/* Whether node `name` in g has a control input from `src`. */
static bool has_ctrl(const dfx_graph *g, const char *name, const char *src) {
  int i = dfx_graph_node_find(g, name), s = dfx_graph_node_find(g, src);
  for (int k = 0; i >= 0 && k < dfx_graph_node_num_control_inputs(g, i); k++)
    if (dfx_graph_node_control_input(g, i, k) == s) return true;
  return false;
}

static int n_ctrl(const dfx_graph *g, const char *name) {
  return dfx_graph_node_num_control_inputs(g, dfx_graph_node_find(g, name));
}

Test(shapefold, a_shape_of_a_computed_tensor_becomes_a_const_in_place) {
  pt_case t;
  pt_optimize(&t,
              SCALAR_PH("x") CI("dims", D(2), "int_val: 2 int_val: 3")
              OP("b", "Fill", IN("dims") IN("x"), F ATTR_T("index_type", "DT_INT32"))
              OP("s", "Shape", IN("b"), F OUT32) OP("n", "Size", IN("b"), F OUT32) OP("r", "Rank", IN("b"), F)
              OP("y", "Reshape", IN("b") IN("s"), F ATTR_T("Tshape", "DT_INT32")),
              "shapefold", "s,n,r,y", "x", NULL);
  cr_assert_str_eq(pt_op(t.after, "s"), "Const");
  cr_assert_str_eq(pt_op(t.after, "n"), "Const");
  cr_assert_str_eq(pt_op(t.after, "r"), "Const");
  cr_assert(has_ctrl(t.after, "s", "b"), "the producer stays a control input");
  cr_assert_str_eq(pt_op(t.after, "y"), "Reshape");
  cr_assert_eq(t.rewritten, 3);
  pt_same_outputs(&t, (float[]){2.5f});
  pt_free(&t);
}

Test(shapefold, a_placeholder_shape_folds_only_for_a_run_that_feeds_it) {
  static const char g[] = SCALAR_PH("x") OP("s", "Size", IN("x"), F OUT32) OP("r", "Rank", IN("x"), F);
  pt_case t;
  pt_optimize(&t, g, "shapefold", "s,r", "x", NULL);
  cr_assert_str_eq(pt_op(t.after, "s"), "Const");
  cr_assert_eq(n_ctrl(t.after, "s"), 0, "a placeholder is live in the root frame: no control input");
  pt_same_outputs(&t, (float[]){1});
  pt_free(&t);
  /* Not fed: the run fails (must feed x) before and after. */
  pt_optimize(&t, g, "shapefold", "s", NULL, NULL);
  cr_assert_str_eq(pt_op(t.after, "s"), "Size");
  cr_assert_neq(pt_same_outputs(&t, NULL), DFX_OK);
  pt_free(&t);
  /* No run known: a later run may not feed it. */
  pt_optimize(&t, g, "shapefold", NULL, NULL, NULL);
  cr_assert_str_eq(pt_op(t.after, "r"), "Rank");
  pt_free(&t);
}

Test(shapefold, unknown_dims_are_not_folded_but_known_rank_is) {
  pt_case t;
  pt_optimize(&t,
              "node { name: 'x' op: 'Placeholder'" ATTR_T("dtype", "DT_FLOAT")
              " attr { key: 'shape' value { shape { " D(-1) D(3) "} } } }\n"
              OP("s", "Shape", IN("x"), F OUT32) OP("n", "Size", IN("x"), F OUT32) OP("r", "Rank", IN("x"), F),
              "shapefold", "s,n,r", "x", NULL);
  cr_assert_str_eq(pt_op(t.after, "s"), "Shape");
  cr_assert_str_eq(pt_op(t.after, "n"), "Size");
  cr_assert_str_eq(pt_op(t.after, "r"), "Const");
  pt_free(&t);
}

/* A counter loop whose step is Size(i), which is 1: the folded Const must
 * stay in the loop's frame and run in every iteration (its control input
 * is the loop's Identity). */
static const char size_loop[] =
    CI("start", "", "int_val: 0")
    GT_ENTER("w/Enter", "start", "DT_INT32", "w/while", false, 10)
    GT_MERGE2("w/Merge", "w/Enter", "w/NextIteration", "DT_INT32", "")
    GT_CONST_I32("w/limit", 5, GT_INPUT("^w/Merge"))
    GT_OP2("w/Less", "Less", "w/Merge", "w/limit", "DT_INT32", "")
    GT_LOOPCOND("w/LoopCond", "w/Less")
    GT_SWITCH("w/Switch", "w/Merge", "w/LoopCond", "DT_INT32")
    GT_OP1("w/Identity", "Identity", "w/Switch:1", "DT_INT32", "")
    OP("w/step", "Size", IN("w/Identity"), ATTR_T("T", "DT_INT32") OUT32)
    GT_OP2("w/add", "Add", "w/Identity", "w/step", "DT_INT32", "")
    GT_OP1("w/NextIteration", "NextIteration", "w/add", "DT_INT32", "")
    GT_OP1("w/Exit", "Exit", "w/Switch", "DT_INT32", "");

Test(shapefold, in_a_loop_the_const_stays_in_the_frame) {
  pt_case t;
  pt_optimize(&t, size_loop, "shapefold", "w/Exit", NULL, NULL);
  cr_assert_str_eq(pt_op(t.after, "w/step"), "Const");
  cr_assert(has_ctrl(t.after, "w/step", "w/Identity"));
  cr_assert_str_eq(dfx_graph_node_frame(t.after, dfx_graph_node_find(t.after, "w/step")), "w/while");
  cr_assert_eq(pt_same_outputs(&t, NULL), DFX_OK);
  pt_free(&t);
}

/* tf.cond: the true branch reads the shape of the Switch's port 1 directly.
 * Folded, it must still die when the false branch runs; a control input
 * from the Switch itself would be live, so a pivot Identity on the port
 * carries the deadness. The false branch's constant hangs off its pivot. */
#define SHAPE_COND \
    SCALAR_PH("x") CF("zero", "", 0, "") GT_OP2("pred", "Greater", "x", "zero", "DT_FLOAT", "") \
    CF("c", D(2) D(3), 1, "") GT_SWITCH("sw", "c", "pred", "DT_FLOAT") \
    OP("ts", "Shape", IN("sw:1"), F OUT32) \
    GT_OP1("pf", "Identity", "sw:0", "DT_FLOAT", "") \
    "node { name: 'fs' op: 'Const' input: '^pf'" ATTR_T("dtype", "DT_INT32") \
    " attr { key: 'value' value { tensor { dtype: DT_INT32 tensor_shape { " D(2) "} int_val: 9 int_val: 9 } } } }\n" \
    GT_MERGE2("m", "ts", "fs", "DT_INT32", "")

Test(shapefold, in_an_untaken_branch_the_const_stays_dead) {
  pt_case t;
  pt_optimize(&t, SHAPE_COND, "shapefold", "m,m:1", "x", NULL);
  cr_assert_str_eq(pt_op(t.after, "ts"), "Const");
  cr_assert_str_eq(pt_op(t.after, "sw/shape_pivot_1"), "Identity");
  cr_assert(has_ctrl(t.after, "ts", "sw/shape_pivot_1"));
  cr_assert(!has_ctrl(t.after, "ts", "sw"));
  cr_assert_eq(t.added, 1);
  cr_assert_eq(pt_same_outputs(&t, (float[]){1}), DFX_OK);
  cr_assert_eq(pt_same_outputs(&t, (float[]){-1}), DFX_OK);
  pt_free(&t);
  /* Fetched directly, the branch's shape is dead (an error) when not taken. */
  pt_optimize(&t, SHAPE_COND, "shapefold", "ts", "x", NULL);
  cr_assert_str_eq(pt_op(t.after, "ts"), "Const");
  cr_assert_eq(pt_same_outputs(&t, (float[]){1}), DFX_OK);
  cr_assert_neq(pt_same_outputs(&t, (float[]){-1}), DFX_OK);
  pt_free(&t);
}

Test(shapefold, an_existing_pivot_is_reused) {
  pt_case t;
  pt_optimize(&t, SHAPE_COND GT_OP1("pt", "Identity", "sw:1", "DT_FLOAT", "") GT_NOOP("use", GT_INPUT("^pt")),
              "shapefold", "m,m:1", "x", "use");
  cr_assert(has_ctrl(t.after, "ts", "pt"));
  cr_assert(!pt_has(t.after, "sw/shape_pivot_1"));
  cr_assert_eq(pt_same_outputs(&t, (float[]){-1}), DFX_OK);
  pt_free(&t);
}

Test(shapefold, shape_n_becomes_one_const_per_output_unless_kept) {
  static const char g[] =
      SCALAR_PH("x") CF("a", D(2) D(3), 1, "") CF("b", D(4), 2, "")
      GT_OP2("ax", "Mul", "a", "x", "DT_FLOAT", "") GT_OP2("bx", "Mul", "b", "x", "DT_FLOAT", "")
      OP("sn", "ShapeN", IN("ax") IN("bx"), F ATTR_I("N", 2) OUT32) CI("axis", "", "int_val: 0")
      OP("cat", "ConcatV2", IN("sn") IN("sn:1") IN("axis"), ATTR_T("T", "DT_INT32") ATTR_I("N", 2)
                                                           ATTR_T("Tidx", "DT_INT32"));
  pt_case t;
  pt_optimize(&t, g, "shapefold", "cat", "x", NULL);
  cr_assert(!pt_has(t.after, "sn"));
  cr_assert_str_eq(pt_op(t.after, "sn/shape_0"), "Const");
  cr_assert_str_eq(pt_op(t.after, "sn/shape_1"), "Const");
  cr_assert(has_ctrl(t.after, "sn/shape_1", "ax") && has_ctrl(t.after, "sn/shape_1", "bx"));
  cr_assert_eq(t.added, 2);
  cr_assert_eq(t.removed, 1);
  pt_same_outputs(&t, (float[]){3});
  pt_free(&t);
  /* Fetched, it keeps its name, which one Const per output cannot. */
  pt_optimize(&t, g, "shapefold", "sn:0,sn:1", "x", NULL);
  cr_assert_str_eq(pt_op(t.after, "sn"), "ShapeN");
  pt_free(&t);
}

Test(shapefold, broadcast_gradient_args_of_known_shapes) {
  pt_case t;
  pt_optimize(&t,
              SCALAR_PH("x") CF("a", D(2) D(3) D(1), 1, "") CF("b", D(3) D(4), 2, "")
              GT_OP2("ax", "Mul", "a", "x", "DT_FLOAT", "") GT_OP2("bx", "Mul", "b", "x", "DT_FLOAT", "")
              OP("sa", "Shape", IN("ax"), F OUT32) OP("sb", "Shape", IN("bx"), F OUT32)
              OP("bga", "BroadcastGradientArgs", IN("sa") IN("sb"), ATTR_T("T", "DT_INT32"))
              GT_OP1("r0", "Identity", "bga:0", "DT_INT32", "") GT_OP1("r1", "Identity", "bga:1", "DT_INT32", ""),
              "shapefold", "r0,r1", "x", NULL);
  cr_assert(!pt_has(t.after, "bga"));
  cr_assert_str_eq(pt_op(t.after, "bga/shape_0"), "Const");
  cr_assert_str_eq(pt_op(t.after, "sa"), "Const");
  pt_same_outputs(&t, (float[]){1});
  pt_free(&t);
}

Test(shapefold, fed_nodes_and_fed_inputs_stay) {
  pt_case t;
  pt_optimize(&t,
              CF("c", D(2) D(3), 1, "") GT_OP1("i", "Identity", "c", "DT_FLOAT", "")
              OP("s", "Shape", IN("i"), F OUT32) OP("s2", "Shape", IN("c"), F OUT32) OP("s3", "Shape", IN("c"), F OUT32)
              OP("ss", "Size", IN("s2"), ATTR_T("T", "DT_INT32") OUT32),
              "shapefold", "s,s2,ss", "i", NULL);
  cr_assert_str_eq(pt_op(t.after, "s"), "Shape", "its input is fed: it can have any shape");
  cr_assert_str_eq(pt_op(t.after, "s2"), "Const");
  cr_assert_eq(n_ctrl(t.after, "s2"), 0, "a Const producer passes on its (no) control inputs");
  cr_assert_str_eq(pt_op(t.after, "ss"), "Const");
  pt_same_outputs(&t, (float[]){5}); /* i fed a scalar: its Shape is [] */
  pt_free(&t);
  pt_optimize(&t, CF("c", D(2) D(3), 1, "") OP("s3", "Shape", IN("c"), F OUT32), "shapefold", "s3", "s3", NULL);
  cr_assert_str_eq(pt_op(t.after, "s3"), "Shape", "fed itself");
  pt_free(&t);
}

Test(shapefold, a_failing_producer_still_fails_the_run) {
  pt_case t;
  pt_optimize(&t,
              CF("c", D(2), -1, "") GT_OP1("l", "Log", "c", "DT_FLOAT", "")
              OP("chk", "CheckNumerics", IN("l"), F " attr { key: 'message' value { s: 'bad' } }")
              OP("s", "Shape", IN("chk"), F OUT32),
              "shapefold", "s", NULL, NULL);
  cr_assert_str_eq(pt_op(t.after, "s"), "Const");
  cr_assert(has_ctrl(t.after, "s", "chk"));
  cr_assert_neq(pt_same_outputs(&t, NULL), DFX_OK);
  pt_free(&t);
}

Test(shapefold, the_nodes_own_control_inputs_are_kept) {
  pt_case t;
  pt_optimize(&t,
              SCALAR_PH("x") CF("c", D(3), 1, "") GT_OP2("cx", "Mul", "c", "x", "DT_FLOAT", "") GT_NOOP("gate", "")
              OP("s", "Shape", IN("cx") IN("^gate"), F OUT32),
              "shapefold", "s", "x", NULL);
  cr_assert_str_eq(pt_op(t.after, "s"), "Const");
  cr_assert(has_ctrl(t.after, "s", "gate") && has_ctrl(t.after, "s", "cx"));
  pt_same_outputs(&t, (float[]){1});
  pt_free(&t);
}

/* In the default pipeline constfold finishes what shapefold starts: a
 * slice of a known shape of a computed tensor becomes a constant, and the
 * control inputs left on constants go. */
Test(shapefold, the_default_pipeline_folds_what_reads_a_shape) {
  static const char g[] =
      SCALAR_PH("x") CI("dims", D(2), "int_val: 2 int_val: 3")
      OP("b", "Fill", IN("dims") IN("x"), F ATTR_T("index_type", "DT_INT32")) OP("s", "Shape", IN("b"), F OUT32)
      CI("one", D(1), "int_val: 1") CI("two", D(1), "int_val: 2")
      OP("d1", "StridedSlice", IN("s") IN("one") IN("two") IN("one"),
         ATTR_T("T", "DT_INT32") ATTR_T("Index", "DT_INT32") ATTR_I("shrink_axis_mask", 1))
      GT_OP2("y", "Mul", "d1", "d1", "DT_INT32", "");
  pt_case t;
  pt_optimize(&t, g, "prune,identity,constfold,cse", "y", "x", NULL);
  cr_assert_str_eq(pt_op(t.after, "y"), "Mul", "without shapefold nothing folds");
  pt_free(&t);
  pt_optimize(&t, g, "default", "y", "x", NULL);
  cr_assert_str_eq(pt_op(t.after, "y"), "Const");
  pt_same_outputs(&t, (float[]){4});
  pt_free(&t);
  /* A shape of a constant: one node is left. */
  pt_optimize(&t,
              CF("c", D(2), 1, "") OP("p", "Pack", IN("c"), F ATTR_I("N", 1) ATTR_I("axis", 0))
              OP("s", "Shape", IN("p"), F OUT32),
              "default", "s", NULL, NULL);
  cr_assert_eq(pt_count(t.after), 1);
  cr_assert_eq(n_ctrl(t.after, "s"), 0);
  pt_same_outputs(&t, NULL);
  pt_free(&t);
}
