/* test_arith.c - the arith pass: neutral operands, involutions, casts,
 * identity-like ops and layout ops that return their input go (consumers
 * read the input; kept or controlled nodes become Identities in place);
 * broadcasting, unknown shapes, inexact pairs and fed nodes stop a rule;
 * deadness of dropped constants (a cond branch) and loop frames stay. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "eutil.h"
#include "gtext.h"
#include "ptest.h"

TestSuite(arith, .init = eu_setup, .fini = eu_teardown, .timeout = 30);

/* A constant of any dtype and shape: `shape` is TensorShapeProto text,
 * `vals` the typed value fields. */
#define CONST_T(name, dtype, shape, vals, ctl)                                                         \
  "node { name: '" name "' op: 'Const' " ctl " attr { key: 'dtype' value { type: " dtype " } }"       \
  " attr { key: 'value' value { tensor { dtype: " dtype " tensor_shape { " shape " } " vals " } } } }\n"
#define DIM(n) "dim { size: " #n " } "
#define INTS1(name, n, vals) CONST_T(name, "DT_INT32", DIM(n), vals, "")
/* x: a [2,3] float constant 1..6, whose shape the pass knows. */
#define X23 CONST_T("x", "DT_FLOAT", DIM(2) DIM(3), "float_val: 1 float_val: 2 float_val: 3 float_val: 4 float_val: 5 float_val: 6", "")
#define SCALAR_PH(name) \
  "node { name: '" name "' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } }" \
  " attr { key: 'shape' value { shape { } } } }\n"

static void same_for_many(const pt_case *t) {
  static const float vals[] = {1.5f, -2.0f, 0.0f, INFINITY, -INFINITY, NAN, 1e-40f};
  for (size_t k = 0; k < sizeof vals / sizeof vals[0]; k++) pt_same_outputs(t, &vals[k]);
}

Test(arith, neutral_operands_go) {
  pt_case t;
  pt_optimize(&t,
              GT_PLACEHOLDER("x", "DT_FLOAT") GT_CONST_F32("one", 1, "") GT_CONST_F32("zero", 0, "")
              GT_OP2("a", "Mul", "x", "one", "DT_FLOAT", "") GT_OP2("b", "Mul", "one", "a", "DT_FLOAT", "")
              GT_OP2("c", "RealDiv", "b", "one", "DT_FLOAT", "") GT_OP2("d", "Sub", "c", "zero", "DT_FLOAT", "")
              GT_OP2("e", "AddV2", "d", "zero", "DT_FLOAT", "") GT_OP2("f", "Add", "zero", "e", "DT_FLOAT", "")
              GT_OP2("g", "Div", "f", "one", "DT_FLOAT", "") GT_OP1("y", "Neg", "g", "DT_FLOAT", ""),
              "arith", "y", "x", NULL);
  const char *gone[] = {"a", "b", "c", "d", "e", "f", "g"};
  for (int k = 0; k < 7; k++) cr_assert(!pt_has(t.after, gone[k]), "%s", gone[k]);
  cr_assert_eq(t.removed, 7);
  cr_assert_eq(dfx_graph_node_input(t.after, dfx_graph_node_find(t.after, "y"), 0).node[0], 'x');
  same_for_many(&t);
  pt_free(&t);
}

Test(arith, non_neutral_operands_and_wrong_sides_stay) {
  pt_case t;
  pt_optimize(&t,
              GT_PLACEHOLDER("x", "DT_FLOAT") GT_CONST_F32("one", 1, "") GT_CONST_F32("zero", 0, "")
              GT_CONST_F32("two", 2, "") GT_OP2("a", "Sub", "zero", "x", "DT_FLOAT", "")
              GT_OP2("b", "RealDiv", "one", "a", "DT_FLOAT", "") GT_OP2("c", "Mul", "b", "two", "DT_FLOAT", "")
              GT_OP2("d", "Pow", "c", "one", "DT_FLOAT", ""),
              "arith", "d", "x", NULL);
  cr_assert_eq(t.removed + t.rewritten, 0);
  pt_same_outputs(&t, (float[]){3});
  pt_free(&t);
}

/* ones of shape [2] against a scalar x broadcasts x to [2]: not x. */
Test(arith, broadcasting_that_grows_x_stays) {
  pt_case t;
  pt_optimize(&t,
              SCALAR_PH("x") CONST_T("ones2", "DT_FLOAT", DIM(2), "float_val: 1", "")
              GT_OP2("y", "Mul", "x", "ones2", "DT_FLOAT", "")
              GT_PLACEHOLDER("u", "DT_FLOAT") CONST_T("one1", "DT_FLOAT", DIM(1), "float_val: 1", "")
              GT_OP2("z", "Mul", "u", "one1", "DT_FLOAT", ""),
              "arith", "y,z", "x,u", NULL);
  cr_assert_str_eq(pt_op(t.after, "y"), "Mul");
  cr_assert_str_eq(pt_op(t.after, "z"), "Mul", "u's rank is unknown: [1] may add a dim");
  pt_same_outputs(&t, (float[]){2, 3});
  pt_free(&t);
}

/* Against a known [2,3] x, ones of shape [3], [1,3] or [2,1] leave x as is. */
Test(arith, broadcasting_within_x_goes) {
  pt_case t;
  pt_optimize(&t,
              X23 CONST_T("o3", "DT_FLOAT", DIM(3), "float_val: 1", "")
              CONST_T("o13", "DT_FLOAT", DIM(1) DIM(3), "float_val: 1", "")
              CONST_T("z21", "DT_FLOAT", DIM(2) DIM(1), "float_val: 0", "")
              CONST_T("o123", "DT_FLOAT", DIM(1) DIM(2) DIM(3), "float_val: 1", "")
              GT_OP2("a", "Mul", "x", "o3", "DT_FLOAT", "") GT_OP2("b", "Mul", "o13", "a", "DT_FLOAT", "")
              GT_OP2("c", "AddV2", "b", "z21", "DT_FLOAT", "") GT_OP2("d", "Mul", "c", "o123", "DT_FLOAT", "")
              GT_OP1("y", "Neg", "d", "DT_FLOAT", ""),
              "arith", "y", NULL, NULL);
  cr_assert(!pt_has(t.after, "a") && !pt_has(t.after, "b") && !pt_has(t.after, "c"));
  cr_assert_str_eq(pt_op(t.after, "d"), "Mul", "[1,2,3] adds a dim");
  pt_same_outputs(&t, NULL);
  pt_free(&t);
}

/* Integers: +0, *1, /1 are exact, including the extremes. */
Test(arith, integer_neutrals_go) {
  pt_case t;
  pt_optimize(&t,
              CONST_T("x", "DT_INT32", DIM(3), "int_val: 2147483647 int_val: -2147483648 int_val: -7", "")
              GT_CONST_I32("one", 1, "") GT_CONST_I32("zero", 0, "")
              GT_OP2("a", "Mul", "x", "one", "DT_INT32", "") GT_OP2("b", "Add", "a", "zero", "DT_INT32", "")
              GT_OP2("c", "Div", "b", "one", "DT_INT32", "") GT_OP1("n1", "Neg", "c", "DT_INT32", "")
              GT_OP1("n2", "Neg", "n1", "DT_INT32", "") GT_OP1("y", "Abs", "n2", "DT_INT32", ""),
              "arith", "y", NULL, NULL);
  cr_assert(!pt_has(t.after, "a") && !pt_has(t.after, "b") && !pt_has(t.after, "c") && !pt_has(t.after, "n2"));
  pt_same_outputs(&t, NULL);
  pt_free(&t);
}

/* x - 0 is exact even for x = -0.0. x + 0 is not (-0.0 + 0.0 = +0.0) but
 * Grappler rewrites it, so TensorFlow returns -0.0; this pass follows. */
Test(arith, signed_zero) {
  pt_case t;
  pt_optimize(&t, GT_PLACEHOLDER("x", "DT_FLOAT") GT_CONST_F32("zero", 0, "") GT_OP2("y", "Sub", "x", "zero", "DT_FLOAT", ""),
              "arith", "y", "x", NULL);
  cr_assert_str_eq(pt_op(t.after, "y"), "Identity");
  pt_same_outputs(&t, (float[]){-0.0f});
  pt_free(&t);
  pt_optimize(&t, GT_PLACEHOLDER("x", "DT_FLOAT") GT_CONST_F32("zero", 0, "") GT_OP2("y", "Add", "x", "zero", "DT_FLOAT", ""),
              "arith", "y", "x", NULL);
  cr_assert_str_eq(pt_op(t.after, "y"), "Identity", "as TensorFlow's Grappler does");
  pt_same_outputs(&t, (float[]){-1.0f});
  pt_free(&t);
}

Test(arith, a_fetched_node_becomes_an_identity_in_place) {
  pt_case t;
  pt_optimize(&t, GT_PLACEHOLDER("x", "DT_FLOAT") GT_CONST_F32("one", 1, "") GT_OP2("y", "Mul", "x", "one", "DT_FLOAT", "")
                  GT_OP1("z", "Neg", "y", "DT_FLOAT", ""),
              "arith", "y,z", "x", NULL);
  cr_assert_str_eq(pt_op(t.after, "y"), "Identity");
  cr_assert_eq(t.rewritten, 1);
  same_for_many(&t);
  pt_free(&t);
}

/* A node others wait for by control edge, or with its own control input,
 * becomes an Identity carrying them. */
Test(arith, control_edges_stay) {
  pt_case t;
  pt_optimize(&t,
              GT_PLACEHOLDER("x", "DT_FLOAT") GT_CONST_F32("one", 1, "") GT_NOOP("gate", "")
              GT_OP2("a", "Mul", "x", "one", "DT_FLOAT", GT_INPUT("^gate"))
              GT_OP2("b", "Mul", "x", "one", "DT_FLOAT", "") GT_CONST_F32("after_b", 5, GT_INPUT("^b"))
              GT_OP2("y", "Add", "a", "after_b", "DT_FLOAT", ""),
              "arith", "y", "x", NULL);
  cr_assert_str_eq(pt_op(t.after, "a"), "Identity");
  cr_assert_eq(dfx_graph_node_num_control_inputs(t.after, dfx_graph_node_find(t.after, "a")), 1);
  cr_assert_str_eq(pt_op(t.after, "b"), "Identity");
  pt_same_outputs(&t, (float[]){2});
  pt_free(&t);
}

/* x * one inside a cond branch, x from outside, `one` a branch constant
 * under the pivot: the rewrite keeps ^one, so the untaken branch stays
 * dead and the Merge takes the other. */
static const char cond[] =
    GT_PLACEHOLDER("x", "DT_FLOAT") GT_PLACEHOLDER("p", "DT_FLOAT")
    GT_CONST_F32("zero", 0, "") GT_OP2("pred", "Greater", "p", "zero", "DT_FLOAT", "")
    GT_SWITCH("c/Switch", "pred", "pred", "DT_BOOL")
    GT_OP1("c/t", "Identity", "c/Switch:1", "DT_BOOL", "")
    GT_OP1("c/f", "Identity", "c/Switch:0", "DT_BOOL", "")
    GT_CONST_F32("c/one", 1, GT_INPUT("^c/t")) GT_CONST_F32("c/zero", 0, GT_INPUT("^c/f"))
    GT_OP2("c/times_one", "Mul", "x", "c/one", "DT_FLOAT", "")
    GT_OP2("c/plus_zero", "Add", "c/zero", "x", "DT_FLOAT", "") GT_OP1("c/neg", "Neg", "c/plus_zero", "DT_FLOAT", "")
    GT_MERGE2("c/Merge", "c/neg", "c/times_one", "DT_FLOAT", "");

Test(arith, a_dropped_branch_constant_keeps_its_deadness) {
  pt_case t;
  pt_optimize(&t, cond, "arith", "c/Merge,c/Merge:1", "x,p", NULL);
  cr_assert_str_eq(pt_op(t.after, "c/times_one"), "Identity");
  cr_assert_eq(dfx_graph_node_num_control_inputs(t.after, dfx_graph_node_find(t.after, "c/times_one")), 1);
  cr_assert_str_eq(pt_op(t.after, "c/plus_zero"), "Identity");
  pt_same_outputs(&t, (float[]){3, 1});
  pt_same_outputs(&t, (float[]){3, -1});
  pt_free(&t);
}

/* In a loop body: i * one with `one` under ^Identity keeps it; i + k with k
 * a zero loop invariant (constant Enter of a Const) needs nothing. */
Test(arith, inside_a_loop) {
  pt_case t;
  pt_optimize(&t,
              GT_CONST_I32("start", 0, "") GT_CONST_I32("lim", 5, "") GT_CONST_I32("k", 0, "")
              GT_ENTER("w/Enter", "start", "DT_INT32", "w", false, 10)
              GT_ENTER("w/k", "k", "DT_INT32", "w", true, 10)
              GT_MERGE2("w/Merge", "w/Enter", "w/Next", "DT_INT32", "")
              GT_CONST_I32("w/lim", 5, GT_INPUT("^w/Merge"))
              GT_OP2("w/Less", "Less", "w/Merge", "w/lim", "DT_INT32", "")
              GT_LOOPCOND("w/LoopCond", "w/Less") GT_SWITCH("w/Switch", "w/Merge", "w/LoopCond", "DT_INT32")
              GT_OP1("w/i", "Identity", "w/Switch:1", "DT_INT32", "")
              GT_CONST_I32("w/one", 1, GT_INPUT("^w/i"))
              GT_OP2("w/times_one", "Mul", "w/i", "w/one", "DT_INT32", "")
              GT_OP2("w/plus_k", "Add", "w/times_one", "w/k", "DT_INT32", "")
              GT_OP2("w/add", "Add", "w/plus_k", "w/one", "DT_INT32", "")
              GT_OP1("w/Next", "NextIteration", "w/add", "DT_INT32", "")
              GT_OP1("w/Exit", "Exit", "w/Switch", "DT_INT32", ""),
              "arith", "w/Exit", NULL, NULL);
  cr_assert_str_eq(pt_op(t.after, "w/times_one"), "Identity");
  cr_assert(!pt_has(t.after, "w/plus_k"));
  cr_assert_str_eq(dfx_graph_node_frame(t.after, dfx_graph_node_find(t.after, "w/times_one")), "w");
  pt_same_outputs(&t, NULL);
  pt_free(&t);
}

Test(arith, involutions) {
  pt_case t;
  pt_optimize(&t,
              GT_PLACEHOLDER("x", "DT_FLOAT") GT_OP1("n1", "Neg", "x", "DT_FLOAT", "")
              GT_OP1("n2", "Neg", "n1", "DT_FLOAT", "") GT_OP1("r1", "Reciprocal", "n2", "DT_FLOAT", "")
              GT_OP1("r2", "Reciprocal", "r1", "DT_FLOAT", "")
              GT_CONST_F32("zero", 0, "") GT_OP2("b", "Greater", "r2", "zero", "DT_FLOAT", "")
              "node { name: 'l1' op: 'LogicalNot' input: 'b' }\n"
              "node { name: 'l2' op: 'LogicalNot' input: 'l1' }\n"
              "node { name: 'y' op: 'Cast' input: 'l2' attr { key: 'SrcT' value { type: DT_BOOL } }"
              " attr { key: 'DstT' value { type: DT_FLOAT } } }\n"
              GT_OP2("z", "Mul", "y", "r2", "DT_FLOAT", ""),
              "arith", "z", "x", NULL);
  cr_assert(!pt_has(t.after, "n2") && !pt_has(t.after, "l2"));
  cr_assert_str_eq(pt_op(t.after, "r2"), "Reciprocal", "1/(1/x) rounds");
  same_for_many(&t);
  pt_free(&t);
}

/* The inner Neg is fed: the outer reads the feed, not x. */
Test(arith, a_fed_inner_node_stops_a_pair) {
  pt_case t;
  pt_optimize(&t,
              GT_PLACEHOLDER("x", "DT_FLOAT") GT_OP1("n1", "Neg", "x", "DT_FLOAT", "")
              GT_OP1("n2", "Neg", "n1", "DT_FLOAT", ""),
              "arith", "n2", "n1", NULL);
  cr_assert_str_eq(pt_op(t.after, "n2"), "Neg");
  pt_same_outputs(&t, (float[]){4});
  pt_free(&t);
}

#define CAST(name, in, src, dst)                                                              \
  "node { name: '" name "' op: 'Cast' input: '" in "' attr { key: 'SrcT' value { type: " src \
  " } } attr { key: 'DstT' value { type: " dst " } } }\n"

Test(arith, casts) {
  pt_case t;
  pt_optimize(&t,
              GT_PLACEHOLDER("x", "DT_FLOAT") CAST("same", "x", "DT_FLOAT", "DT_FLOAT")
              CAST("wide", "same", "DT_FLOAT", "DT_DOUBLE") CAST("back", "wide", "DT_DOUBLE", "DT_FLOAT")
              CAST("i", "back", "DT_FLOAT", "DT_INT32") CAST("i64", "i", "DT_INT32", "DT_INT64")
              CAST("i64same", "i64", "DT_INT64", "DT_INT64") CAST("i32b", "i64same", "DT_INT64", "DT_INT32")
              CAST("f", "i32b", "DT_INT32", "DT_FLOAT") CAST("lossy", "back", "DT_FLOAT", "DT_HALF")
              CAST("lossy_back", "lossy", "DT_HALF", "DT_FLOAT")
              GT_OP2("y", "Add", "f", "lossy_back", "DT_FLOAT", ""),
              "arith", "y", "x", NULL);
  cr_assert(!pt_has(t.after, "same") && !pt_has(t.after, "back") && !pt_has(t.after, "i32b") && !pt_has(t.after, "i64same"));
  cr_assert_str_eq(pt_op(t.after, "i"), "Cast", "float -> int32 truncates");
  cr_assert_str_eq(pt_op(t.after, "lossy_back"), "Cast", "float -> half rounds");
  static const float vals[] = {1.5f, -2.75f, 100000.3f, 0.1f};
  for (int k = 0; k < 4; k++) pt_same_outputs(&t, &vals[k]);
  pt_free(&t);
}

Test(arith, identity_like_ops_and_add_n_of_one) {
  pt_case t;
  pt_optimize(&t,
              SCALAR_PH("x") GT_OP1("sg", "StopGradient", "x", "DT_FLOAT", "")
              GT_OP1("pg", "PreventGradient", "sg", "DT_FLOAT", "") GT_OP1("sn", "Snapshot", "pg", "DT_FLOAT", "")
              "node { name: 'an' op: 'AddN' input: 'sn' attr { key: 'T' value { type: DT_FLOAT } }"
              " attr { key: 'N' value { i: 1 } } }\n"
              "node { name: 'es' op: 'EnsureShape' input: 'an' attr { key: 'T' value { type: DT_FLOAT } }"
              " attr { key: 'shape' value { shape { } } } }\n"
              "node { name: 'bad' op: 'EnsureShape' input: 'es' attr { key: 'T' value { type: DT_FLOAT } }"
              " attr { key: 'shape' value { shape { dim { size: 2 } } } } }\n",
              "arith", "es,bad", "x", NULL);
  cr_assert(!pt_has(t.after, "sg") && !pt_has(t.after, "pg") && !pt_has(t.after, "sn") && !pt_has(t.after, "an"));
  cr_assert_str_eq(pt_op(t.after, "es"), "Identity", "fetched: in place");
  cr_assert_str_eq(pt_op(t.after, "bad"), "EnsureShape", "it fails: the error stays");
  pt_same_outputs(&t, (float[]){7});
  pt_free(&t);
}

Test(arith, transposes) {
  pt_case t;
  pt_optimize(&t,
              X23 INTS1("p01", 2, "int_val: 0 int_val: 1") INTS1("p10", 2, "int_val: 1 int_val: 0")
              GT_PLACEHOLDER("u", "DT_FLOAT") INTS1("p0", 1, "int_val: 0")
              "node { name: 'id' op: 'Transpose' input: 'x' input: 'p01' attr { key: 'T' value { type: DT_FLOAT } } }\n"
              "node { name: 't1' op: 'Transpose' input: 'id' input: 'p10' attr { key: 'T' value { type: DT_FLOAT } } }\n"
              "node { name: 't2' op: 'Transpose' input: 't1' input: 'p10' attr { key: 'T' value { type: DT_FLOAT } } }\n"
              "node { name: 'y' op: 'Transpose' input: 't2' input: 'p10' attr { key: 'T' value { type: DT_FLOAT } } }\n"
              "node { name: 'tu' op: 'Transpose' input: 'u' input: 'p0' attr { key: 'T' value { type: DT_FLOAT } } }\n",
              "arith", "y,tu", "u", NULL);
  cr_assert(!pt_has(t.after, "id") && !pt_has(t.after, "t2"));
  cr_assert_str_eq(pt_op(t.after, "y"), "Transpose", "one transpose is left");
  cr_assert_str_eq(pt_op(t.after, "tu"), "Transpose", "u's rank is unknown: the op may fail");
  pt_same_outputs(&t, (float[]){1});
  pt_free(&t);
}

Test(arith, reshapes) {
  pt_case t;
  pt_optimize(&t,
              X23 INTS1("s23", 2, "int_val: 2 int_val: 3") INTS1("s_3", 2, "int_val: -1 int_val: 3")
              INTS1("s6", 1, "int_val: 6") INTS1("s32", 2, "int_val: 3 int_val: 2")
              "node { name: 'a' op: 'Reshape' input: 'x' input: 's23' attr { key: 'T' value { type: DT_FLOAT } } }\n"
              "node { name: 'b' op: 'Reshape' input: 'a' input: 's_3' attr { key: 'T' value { type: DT_FLOAT } } }\n"
              "node { name: 'flat' op: 'Reshape' input: 'b' input: 's6' attr { key: 'T' value { type: DT_FLOAT } } }\n"
              "node { name: 'y' op: 'Reshape' input: 'flat' input: 's32' attr { key: 'T' value { type: DT_FLOAT } } }\n"
              SCALAR_PH("u") INTS1("s1", 1, "int_val: 1") CONST_T("s_", "DT_INT32", DIM(0), "", "")
              "node { name: 'u1' op: 'Reshape' input: 'u' input: 's1' attr { key: 'T' value { type: DT_FLOAT } } }\n"
              "node { name: 'u0' op: 'Reshape' input: 'u1' input: 's_' attr { key: 'T' value { type: DT_FLOAT } } }\n"
              GT_OP1("z", "Neg", "u0", "DT_FLOAT", ""),
              "arith,prune,arith", "y,z", "u", NULL);
  cr_assert(!pt_has(t.after, "a") && !pt_has(t.after, "b"));
  cr_assert(!pt_has(t.after, "flat"), "the inner of two Reshapes is skipped");
  cr_assert_str_eq(dfx_graph_node_input(t.after, dfx_graph_node_find(t.after, "y"), 0).node, "x");
  cr_assert(!pt_has(t.after, "u1") && !pt_has(t.after, "u0"), "[] -> [1] -> [] of a scalar");
  pt_same_outputs(&t, (float[]){2.5f});
  pt_free(&t);
}

/* Reshape(Reshape(x, [4]), [2, 2]) with x of unknown size: the inner one
 * fails unless x has 4 elements, and so does the outer: skipping is exact.
 * Reshape(Reshape(x, [-1]), [4]) too; Reshape(Reshape(x, [4]), [-1]) not. */
Test(arith, reshape_pairs_keep_their_errors) {
  pt_case t;
  pt_optimize(&t,
              GT_PLACEHOLDER("u", "DT_FLOAT") INTS1("s4", 1, "int_val: 4") INTS1("s22", 2, "int_val: 2 int_val: 2")
              INTS1("s_", 1, "int_val: -1")
              "node { name: 'a' op: 'Reshape' input: 'u' input: 's4' attr { key: 'T' value { type: DT_FLOAT } } }\n"
              "node { name: 'b' op: 'Reshape' input: 'a' input: 's22' attr { key: 'T' value { type: DT_FLOAT } } }\n"
              "node { name: 'c' op: 'Reshape' input: 'u' input: 's_' attr { key: 'T' value { type: DT_FLOAT } } }\n"
              "node { name: 'd' op: 'Reshape' input: 'c' input: 's4' attr { key: 'T' value { type: DT_FLOAT } } }\n"
              "node { name: 'e' op: 'Reshape' input: 'a' input: 's_' attr { key: 'T' value { type: DT_FLOAT } } }\n",
              "arith", "b,d,e", "u", NULL);
  cr_assert_str_eq(dfx_graph_node_input(t.after, dfx_graph_node_find(t.after, "b"), 0).node, "u");
  cr_assert_str_eq(dfx_graph_node_input(t.after, dfx_graph_node_find(t.after, "d"), 0).node, "u");
  cr_assert_str_eq(dfx_graph_node_input(t.after, dfx_graph_node_find(t.after, "e"), 0).node, "a");
  cr_assert_neq(pt_same_outputs(&t, (float[]){1}), DFX_OK, "a scalar has 1 element, not 4");
  pt_free(&t);
}

Test(arith, squeeze_and_expand_dims) {
  pt_case t;
  pt_optimize(&t,
              SCALAR_PH("u") GT_CONST_I32("zero", 0, "")
              "node { name: 'e' op: 'ExpandDims' input: 'u' input: 'zero' attr { key: 'T' value { type: DT_FLOAT } } }\n"
              "node { name: 's' op: 'Squeeze' input: 'e' attr { key: 'T' value { type: DT_FLOAT } }"
              " attr { key: 'squeeze_dims' value { list { i: 0 } } } }\n"
              CONST_T("c13", "DT_FLOAT", DIM(1) DIM(3), "float_val: 1 float_val: 2 float_val: 3", "")
              "node { name: 's2' op: 'Squeeze' input: 'c13' attr { key: 'T' value { type: DT_FLOAT } }"
              " attr { key: 'squeeze_dims' value { list { i: -2 } } } }\n"
              "node { name: 'e2' op: 'ExpandDims' input: 's2' input: 'zero' attr { key: 'T' value { type: DT_FLOAT } } }\n"
              X23
              "node { name: 'all' op: 'Squeeze' input: 'x' attr { key: 'T' value { type: DT_FLOAT } } }\n"
              "node { name: 'ones' op: 'Squeeze' input: 'c13' attr { key: 'T' value { type: DT_FLOAT } } }\n"
              GT_CONST_I32("one", 1, "")
              "node { name: 'e3' op: 'ExpandDims' input: 'u' input: 'one' attr { key: 'T' value { type: DT_FLOAT } } }\n"
              "node { name: 's3' op: 'Squeeze' input: 'e3' attr { key: 'T' value { type: DT_FLOAT } }"
              " attr { key: 'squeeze_dims' value { list { i: 0 } } } }\n",
              "arith", "s,e2,all,ones,s3", "u", NULL);
  cr_assert_str_eq(pt_op(t.after, "s"), "Identity");
  cr_assert_str_eq(pt_op(t.after, "e2"), "Identity");
  cr_assert_str_eq(pt_op(t.after, "all"), "Identity");
  cr_assert_str_eq(pt_op(t.after, "ones"), "Squeeze", "removes the 1");
  cr_assert_str_eq(pt_op(t.after, "s3"), "Squeeze", "axis 1 of a scalar fails");
  pt_same_outputs(&t, (float[]){3});
  pt_free(&t);
}

Test(arith, whole_slices_tiles_and_pads) {
  pt_case t;
  pt_optimize(&t,
              X23 INTS1("z2", 2, "int_val: 0 int_val: 0") INTS1("all", 2, "int_val: -1 int_val: 3")
              INTS1("e", 2, "int_val: 5 int_val: 3") INTS1("one2", 2, "int_val: 1 int_val: 1")
              INTS1("part", 2, "int_val: 1 int_val: 3")
              CONST_T("pz", "DT_INT32", DIM(2) DIM(2), "int_val: 0", "")
              "node { name: 'sl' op: 'Slice' input: 'x' input: 'z2' input: 'all' attr { key: 'T' value { type: DT_FLOAT } }"
              " attr { key: 'Index' value { type: DT_INT32 } } }\n"
              "node { name: 'ss' op: 'StridedSlice' input: 'sl' input: 'z2' input: 'e' input: 'one2'"
              " attr { key: 'T' value { type: DT_FLOAT } } attr { key: 'Index' value { type: DT_INT32 } } }\n"
              "node { name: 'ti' op: 'Tile' input: 'ss' input: 'one2' attr { key: 'T' value { type: DT_FLOAT } }"
              " attr { key: 'Tmultiples' value { type: DT_INT32 } } }\n"
              "node { name: 'pa' op: 'Pad' input: 'ti' input: 'pz' attr { key: 'T' value { type: DT_FLOAT } }"
              " attr { key: 'Tpaddings' value { type: DT_INT32 } } }\n"
              "node { name: 'y' op: 'Slice' input: 'pa' input: 'z2' input: 'part' attr { key: 'T' value { type: DT_FLOAT } }"
              " attr { key: 'Index' value { type: DT_INT32 } } }\n",
              "arith", "y", NULL, NULL);
  cr_assert(!pt_has(t.after, "sl") && !pt_has(t.after, "ss") && !pt_has(t.after, "ti") && !pt_has(t.after, "pa"));
  cr_assert_str_eq(pt_op(t.after, "y"), "Slice", "takes one row");
  pt_same_outputs(&t, NULL);
  pt_free(&t);
}

Test(arith, bias_add_of_zeros) {
  pt_case t;
  pt_optimize(&t,
              X23 CONST_T("b0", "DT_FLOAT", DIM(3), "float_val: 0", "") CONST_T("b1", "DT_FLOAT", DIM(3), "float_val: 1", "")
              GT_OP2("a", "BiasAdd", "x", "b0", "DT_FLOAT", "") GT_OP2("y", "BiasAdd", "a", "b1", "DT_FLOAT", ""),
              "arith", "y", NULL, NULL);
  cr_assert(!pt_has(t.after, "a"));
  cr_assert_str_eq(pt_op(t.after, "y"), "BiasAdd");
  pt_same_outputs(&t, NULL);
  pt_free(&t);
}

/* In the default pipeline the Identities arith leaves go too. */
Test(arith, default_pipeline) {
  pt_case t;
  pt_optimize(&t, cond, "default", "c/Merge", "x,p", NULL);
  cr_assert(!pt_has(t.after, "c/plus_zero") || strcmp(pt_op(t.after, "c/plus_zero"), "Identity") == 0);
  pt_same_outputs(&t, (float[]){3, 1});
  pt_same_outputs(&t, (float[]){3, -1});
  pt_free(&t);
}
