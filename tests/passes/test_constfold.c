/* test_constfold.c - the constfold pass: pure nodes over constants become
 * Consts (in place, names kept; one per output for several outputs),
 * loop invariants fold inside their frame, branch constants keep their
 * deadness; stateful ops, fed nodes and failing kernels are left alone. */
#include <criterion/criterion.h>
#include <string.h>

#include "eutil.h"
#include "gtext.h"
#include "ptest.h"

TestSuite(constfold, .init = eu_setup, .fini = eu_teardown, .timeout = 30);

Test(constfold, a_chain_folds_in_place) {
  pt_case t;
  pt_optimize(&t,
              GT_CONST_F32("a", 2, "") GT_CONST_F32("b", 3, "") GT_OP2("c", "Mul", "a", "b", "DT_FLOAT", "")
                  GT_OP1("d", "Neg", "c", "DT_FLOAT", "") GT_PLACEHOLDER("x", "DT_FLOAT")
                  GT_OP2("y", "Add", "x", "d", "DT_FLOAT", ""),
              "constfold", "y", "x", NULL);
  cr_assert_str_eq(pt_op(t.after, "c"), "Const");
  cr_assert_str_eq(pt_op(t.after, "d"), "Const");
  cr_assert_str_eq(pt_op(t.after, "y"), "Add");
  cr_assert_eq(t.rewritten, 2);
  pt_same_outputs(&t, (float[]){0.5f});
  pt_free(&t);
}

Test(constfold, a_fetched_node_folds_and_keeps_its_name) {
  pt_case t;
  pt_optimize(&t, GT_CONST_I32("a", 6, "") GT_CONST_I32("b", 7, "") GT_OP2("y", "Mul", "a", "b", "DT_INT32", ""),
              "constfold", "y", NULL, NULL);
  cr_assert_str_eq(pt_op(t.after, "y"), "Const");
  pt_same_outputs(&t, NULL);
  pt_free(&t);
}

Test(constfold, several_outputs_become_several_consts) {
  pt_case t;
  pt_optimize(&t,
              "node { name: 'v' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } } attr { key: 'value' value"
              " { tensor { dtype: DT_INT32 tensor_shape { dim { size: 2 } } int_val: 4 int_val: 9 } } } }\n"
              "node { name: 'u' op: 'Unpack' input: 'v' attr { key: 'T' value { type: DT_INT32 } }"
              " attr { key: 'num' value { i: 2 } } attr { key: 'axis' value { i: 0 } } }\n"
              GT_OP2("y", "Sub", "u:1", "u:0", "DT_INT32", ""),
              "constfold", "y", NULL, NULL);
  cr_assert(!pt_has(t.after, "u"));
  cr_assert_str_eq(pt_op(t.after, "u/folded_0"), "Const");
  cr_assert_str_eq(pt_op(t.after, "u/folded_1"), "Const");
  pt_same_outputs(&t, NULL);
  pt_free(&t);
}

Test(constfold, fed_stateful_and_failing_nodes_stay) {
  pt_case t;
  pt_optimize(&t,
              GT_CONST_F32("fed", 2, "") GT_OP1("n", "Neg", "fed", "DT_FLOAT", "")
              "node { name: 'shape' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } }"
              " attr { key: 'value' value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 1 } } int_val: 2 } } } }\n"
              "node { name: 'r' op: 'RandomUniform' input: 'shape' attr { key: 'T' value { type: DT_INT32 } }"
              " attr { key: 'dtype' value { type: DT_FLOAT } } }\n"
              "node { name: 'bad_shape' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } }"
              " attr { key: 'value' value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 1 } } int_val: 3 } } } }\n"
              "node { name: 'rs' op: 'Reshape' input: 'fed2' input: 'bad_shape' attr { key: 'T' value { type: DT_FLOAT } }"
              " attr { key: 'Tshape' value { type: DT_INT32 } } }\n"
              GT_CONST_F32("fed2", 1, ""),
              "constfold", "n,r,rs", "fed", NULL);
  cr_assert_str_eq(pt_op(t.after, "n"), "Neg", "reads a fed Const");
  cr_assert_str_eq(pt_op(t.after, "r"), "RandomUniform");
  cr_assert_str_eq(pt_op(t.after, "rs"), "Reshape", "its kernel fails: the run reports it");
  pt_free(&t);
}

/* A folded node inside a cond branch keeps the branch's pivot as a control
 * input: in the dead branch it stays dead and the Merge takes the other. */
static const char cond[] =
    GT_PLACEHOLDER("x", "DT_FLOAT") GT_PLACEHOLDER("p", "DT_FLOAT")
    GT_CONST_F32("zero", 0, "") GT_OP2("pred", "Greater", "p", "zero", "DT_FLOAT", "")
    GT_SWITCH("c/Switch", "x", "pred", "DT_FLOAT")
    GT_OP1("c/t", "Identity", "c/Switch:1", "DT_FLOAT", "")
    GT_OP1("c/f", "Identity", "c/Switch:0", "DT_FLOAT", "")
    GT_CONST_F32("c/one", 1, GT_INPUT("^c/t")) GT_CONST_F32("c/ten", 10, GT_INPUT("^c/t"))
    GT_OP2("c/eleven", "Add", "c/one", "c/ten", "DT_FLOAT", "")
    GT_CONST_F32("c/two", 2, GT_INPUT("^c/f")) GT_OP1("c/m2", "Neg", "c/two", "DT_FLOAT", "")
    GT_MERGE2("c/Merge", "c/m2", "c/eleven", "DT_FLOAT", "");

Test(constfold, branch_constants_keep_their_deadness) {
  pt_case t;
  pt_optimize(&t, cond, "constfold", "c/Merge", "x,p", NULL);
  cr_assert_str_eq(pt_op(t.after, "c/eleven"), "Const");
  cr_assert_str_eq(pt_op(t.after, "c/m2"), "Const");
  cr_assert_eq(dfx_graph_node_num_control_inputs(t.after, dfx_graph_node_find(t.after, "c/eleven")), 1);
  pt_same_outputs(&t, (float[]){1, 1});
  pt_same_outputs(&t, (float[]){1, -1});
  pt_free(&t);
}

/* limit2 = limit * 2 inside the loop reads only the invariant limit through
 * an is_constant Enter: it folds, and stays in the frame (the Enter becomes
 * its control input). */
Test(constfold, loop_invariants_fold_inside_the_frame) {
  pt_case t;
  pt_optimize(&t,
              GT_CONST_I32("start", 0, "") GT_CONST_I32("lim", 6, "") GT_CONST_I32("k", 2, "")
              GT_ENTER("w/Enter", "start", "DT_INT32", "w", false, 10)
              GT_ENTER("w/lim", "lim", "DT_INT32", "w", true, 10)
              GT_ENTER("w/k", "k", "DT_INT32", "w", true, 10)
              GT_OP2("w/lim2", "Mul", "w/lim", "w/k", "DT_INT32", "")
              GT_MERGE2("w/Merge", "w/Enter", "w/Next", "DT_INT32", "")
              GT_OP2("w/Less", "Less", "w/Merge", "w/lim2", "DT_INT32", "")
              GT_LOOPCOND("w/LoopCond", "w/Less") GT_SWITCH("w/Switch", "w/Merge", "w/LoopCond", "DT_INT32")
              GT_OP1("w/i", "Identity", "w/Switch:1", "DT_INT32", "")
              GT_CONST_I32("w/one", 1, GT_INPUT("^w/i"))
              GT_OP2("w/add", "Add", "w/i", "w/one", "DT_INT32", "")
              GT_OP1("w/Next", "NextIteration", "w/add", "DT_INT32", "")
              GT_OP1("w/Exit", "Exit", "w/Switch", "DT_INT32", ""),
              "constfold", "w/Exit", NULL, NULL);
  cr_assert_str_eq(pt_op(t.after, "w/lim2"), "Const");
  cr_assert_str_eq(dfx_graph_node_frame(t.after, dfx_graph_node_find(t.after, "w/lim2")), "w");
  cr_assert_str_eq(pt_op(t.after, "w/add"), "Add", "reads the loop variable");
  pt_same_outputs(&t, NULL);
  pt_free(&t);
}
