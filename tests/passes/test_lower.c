/* test_lower.c - the lower pass: TensorFlow 2 graphs (function library,
 * functional While/If/Case, calls) lowered to v1 control flow and run.
 * Every value is checked against the same computation written directly in
 * C in the test (an independent interpretation of the functions), over
 * inputs that cover zero-trip loops and every branch. Nesting in every
 * order: If in While, While in If, While in While, bodies calling
 * functions, attr placeholders. The lowered graph holds only v1 ops, no
 * library, and survives a save and reload. Malformed libraries fail with
 * messages naming the node and function. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "eutil.h"
#include "ftext.h"
#include "tensor.h"

TestSuite(lower, .init = eu_setup, .fini = eu_teardown, .timeout = 60);

static dfx_tensor *i32(int32_t v) {
  dfx_tensor *t = dfx_tensor_new(DFX_I32, NULL, 0);
  *(int32_t *)dfx_tensor_data(t) = v;
  return t;
}

/* Runs `fetch` (an int32 scalar) with int32 feed x; fails the test on error. */
static int32_t run_i32(const dfx_graph *g, const char *fetch, const char *feed, int32_t x) {
  dfx_tensor *in = i32(x), *out = NULL;
  char msg[512];
  dfx_code c = eu_run(g, 2, fetch, &out, feed, in, msg, sizeof msg);
  dfx_tensor_free(in);
  cr_assert_eq(c, DFX_OK, "x=%d: %s", x, msg);
  int32_t v = eu_i32(out);
  dfx_tensor_free(out);
  return v;
}

static float run_f32(const dfx_graph *g, const char *fetch, const char *feed, int32_t x) {
  dfx_tensor *in = i32(x), *out = NULL;
  char msg[512];
  dfx_code c = eu_run(g, 2, fetch, &out, feed, in, msg, sizeof msg);
  dfx_tensor_free(in);
  cr_assert_eq(c, DFX_OK, "x=%d: %s", x, msg);
  float v = eu_f32(out);
  dfx_tensor_free(out);
  return v;
}

/* ---- a loop whose body calls another function ---- */

/* s = 0; for i in [0, n): s += sq(float(i + 1)), sq through a StatefulPartitionedCall. */
static const char *CALL_IN_LOOP =
    GT_PLACEHOLDER("n", "DT_INT32")
    GT_CONST_I32("i0", 0, "")
    GT_CONST_F32("s0", 0, "")
    "node { name: \"loop\" op: \"StatelessWhile\" input: \"i0\" input: \"s0\" input: \"n\""
    FT_WHILE_ATTRS(FT_T(FT_I32) FT_T(FT_F32) FT_T(FT_I32), "cond_fn", "body_fn")
    " attr { key: \"_num_original_outputs\" value { i: 3 } } }\n"
    GT_OP1("out", "Identity", "loop:1", "DT_FLOAT", "")
    FT_LIBRARY(
      FT_FUNC("cond_fn", FT_ARG("i", FT_I32) FT_ARG("s", FT_F32) FT_ARG("n", FT_I32) FT_OUT("ok", "DT_BOOL"),
              FT_BIN("lt", "Less", "i", "n", FT_I32), FT_RET("ok", "lt:z:0"))
      FT_FUNC("sq", FT_ARG("x", FT_F32) FT_OUT("y", FT_F32),
              FT_BIN("m", "Mul", "x", "x", FT_F32), FT_RET("y", "m:z:0"))
      FT_FUNC("body_fn",
              FT_ARG("i", FT_I32) FT_ARG("s", FT_F32) FT_ARG("n", FT_I32)
              FT_OUT("i2", FT_I32) FT_OUT("s2", FT_F32) FT_OUT("n2", FT_I32),
              FT_CONST_I32("one", 1)
              FT_BIN("inc", "AddV2", "i", "one:output:0", FT_I32)
              FT_NODE("f", "Cast", GT_INPUT("inc:z:0"), GT_TYPE("SrcT", "DT_INT32") GT_TYPE("DstT", "DT_FLOAT"))
              FT_NODE("call", "StatefulPartitionedCall", GT_INPUT("f:y:0"),
                      FT_ATTR_TYPES("Tin", FT_T(FT_F32)) FT_ATTR_TYPES("Tout", FT_T(FT_F32)) FT_ATTR_FUNC("f", "sq"))
              FT_BIN("acc", "AddV2", "s", "call:output:0", FT_F32),
              FT_RET("i2", "inc:z:0") FT_RET("s2", "acc:z:0") FT_RET("n2", "n")));

static float ref_call_in_loop(int n) {
  float s = 0;
  for (int i = 0; i < n; i++) s += (float)(i + 1) * (float)(i + 1);
  return s;
}

Test(lower, loop_body_calls_a_function_zero_trip_included) {
  dfx_graph *g = eu_graph(CALL_IN_LOOP);
  int ns[] = {0, 1, 4, 9};
  for (int k = 0; k < 4; k++) {
    cr_expect_float_eq(run_f32(g, "out", "n", ns[k]), ref_call_in_loop(ns[k]), 1e-4, "n=%d", ns[k]);
    cr_expect_eq(run_i32(g, "loop:0", "n", ns[k]), ns[k]);
  }
  dfx_graph_free(g);
}

/* ---- If in While ---- */

/* s = 0; for i in [0, n): s = (i % 2 == 0) ? s + i : s - 2 * i */
static const char *IF_IN_LOOP =
    GT_PLACEHOLDER("n", "DT_INT32")
    GT_CONST_I32("i0", 0, "")
    GT_CONST_I32("s0", 0, "")
    "node { name: \"loop\" op: \"While\" input: \"i0\" input: \"s0\" input: \"n\""
    FT_WHILE_ATTRS(FT_T(FT_I32) FT_T(FT_I32) FT_T(FT_I32), "cond", "body")
    " attr { key: \"parallel_iterations\" value { i: 3 } } }\n"
    FT_LIBRARY(
      FT_FUNC("cond", FT_ARG("i", FT_I32) FT_ARG("s", FT_I32) FT_ARG("n", FT_I32) FT_OUT("ok", "DT_BOOL"),
              FT_BIN("lt", "Less", "i", "n", FT_I32), FT_RET("ok", "lt:z:0"))
      FT_FUNC("add_i", FT_ARG("i", FT_I32) FT_ARG("s", FT_I32) FT_OUT("r", FT_I32),
              FT_BIN("a", "AddV2", "s", "i", FT_I32), FT_RET("r", "a:z:0"))
      /* Its constant has no inputs: it must still run in the loop's frame, dead when not taken. */
      FT_FUNC("sub_2i", FT_ARG("i", FT_I32) FT_ARG("s", FT_I32) FT_OUT("r", FT_I32),
              FT_CONST_I32("two", 2)
              FT_BIN("m", "Mul", "i", "two:output:0", FT_I32)
              FT_BIN("d", "Sub", "s", "m:z:0", FT_I32), FT_RET("r", "d:z:0"))
      FT_FUNC("body",
              FT_ARG("i", FT_I32) FT_ARG("s", FT_I32) FT_ARG("n", FT_I32)
              FT_OUT("i2", FT_I32) FT_OUT("s2", FT_I32) FT_OUT("n2", FT_I32),
              FT_CONST_I32("two", 2)
              FT_CONST_I32("zero", 0)
              FT_BIN("mod", "FloorMod", "i", "two:output:0", FT_I32)
              FT_BIN("even", "Equal", "mod:z:0", "zero:output:0", FT_I32)
              FT_NODE("if", "StatelessIf", GT_INPUT("even:z:0") GT_INPUT("i") GT_INPUT("s"),
                      FT_IF_ATTRS(FT_T(FT_I32) FT_T(FT_I32), FT_T(FT_I32), "add_i", "sub_2i"))
              FT_CONST_I32("one", 1)
              FT_BIN("inc", "AddV2", "i", "one:output:0", FT_I32),
              FT_RET("i2", "inc:z:0") FT_RET("s2", "if:output:0") FT_RET("n2", "n")));

static int ref_if_in_loop(int n) {
  int s = 0;
  for (int i = 0; i < n; i++) s = i % 2 == 0 ? s + i : s - 2 * i;
  return s;
}

Test(lower, if_in_while) {
  dfx_graph *g = eu_graph(IF_IN_LOOP);
  for (int n = 0; n < 8; n++) cr_expect_eq(run_i32(g, "loop:1", "n", n), ref_if_in_loop(n), "n=%d", n);
  dfx_graph_free(g);
}

/* ---- While in If ---- */

/* y = x > 0 ? (sum of 1..x by a loop) : x * x - 1 */
static const char *WHILE_IN_IF =
    GT_PLACEHOLDER("x", "DT_INT32")
    GT_CONST_I32("zero", 0, "")
    GT_OP2("pos", "Greater", "x", "zero", "DT_INT32", "")
    "node { name: \"if\" op: \"If\" input: \"pos\" input: \"x\""
    FT_IF_ATTRS(FT_T(FT_I32), FT_T(FT_I32), "sum_to", "square_less_one") " }\n"
    GT_OP1("y", "Identity", "if", "DT_INT32", "")
    FT_LIBRARY(
      FT_FUNC("square_less_one", FT_ARG("x", FT_I32) FT_OUT("r", FT_I32),
              FT_CONST_I32("one", 1)
              FT_BIN("m", "Mul", "x", "x", FT_I32)
              FT_BIN("d", "Sub", "m:z:0", "one:output:0", FT_I32), FT_RET("r", "d:z:0"))
      FT_FUNC("sum_to", FT_ARG("x", FT_I32) FT_OUT("r", FT_I32),
              FT_CONST_I32("i0", 1)
              FT_CONST_I32("s0", 0)
              FT_NODE("w", "StatelessWhile", GT_INPUT("i0:output:0") GT_INPUT("s0:output:0") GT_INPUT("x"),
                      FT_WHILE_ATTRS(FT_T(FT_I32) FT_T(FT_I32) FT_T(FT_I32), "le_cond", "sum_body")),
              FT_RET("r", "w:output:1"))
      FT_FUNC("le_cond", FT_ARG("i", FT_I32) FT_ARG("s", FT_I32) FT_ARG("x", FT_I32) FT_OUT("ok", "DT_BOOL"),
              FT_BIN("le", "LessEqual", "i", "x", FT_I32), FT_RET("ok", "le:z:0"))
      FT_FUNC("sum_body",
              FT_ARG("i", FT_I32) FT_ARG("s", FT_I32) FT_ARG("x", FT_I32)
              FT_OUT("i2", FT_I32) FT_OUT("s2", FT_I32) FT_OUT("x2", FT_I32),
              FT_CONST_I32("one", 1)
              FT_BIN("inc", "AddV2", "i", "one:output:0", FT_I32)
              FT_BIN("acc", "AddV2", "s", "i", FT_I32),
              FT_RET("i2", "inc:z:0") FT_RET("s2", "acc:z:0") FT_RET("x2", "x")));

static int ref_while_in_if(int x) {
  if (x <= 0) return x * x - 1;
  int s = 0;
  for (int i = 1; i <= x; i++) s += i;
  return s;
}

Test(lower, while_in_if_both_branches) {
  dfx_graph *g = eu_graph(WHILE_IN_IF);
  int xs[] = {5, 1, 0, -3, 12};
  for (int k = 0; k < 5; k++) cr_expect_eq(run_i32(g, "y", "x", xs[k]), ref_while_in_if(xs[k]), "x=%d", xs[k]);
  dfx_graph_free(g);
}

/* TF's If takes any scalar as its predicate: non-zero is true. */
Test(lower, if_on_an_integer_predicate) {
  /* WHILE_IN_IF with the predicate x itself (int32) instead of x > 0. */
  char text[8192];
  snprintf(text, sizeof text, "%s", WHILE_IN_IF);
  char *p = strstr(text, "input: \"pos\" input: \"x\"");
  cr_assert(p);
  memcpy(p, "input: \"x\"   input: \"x\"", strlen("input: \"pos\" input: \"x\""));
  p = strstr(text, "key: \"Tcond\" value { type: DT_BOOL }");
  cr_assert(p);
  memcpy(p, "key: \"Tcond\" value { type: DT_INT32}", strlen("key: \"Tcond\" value { type: DT_BOOL }"));
  dfx_graph *g = eu_graph(text);
  int xs[] = {5, 0, -3};
  for (int k = 0; k < 3; k++) {
    int x = xs[k], want = 0;
    if (x != 0)
      for (int i = 1; i <= x; i++) want += i;
    else
      want = x * x - 1;
    cr_expect_eq(run_i32(g, "y", "x", x), want, "x=%d", x);
  }
  dfx_graph_free(g);
}

/* ---- While in While ---- */

/* acc = 0; for i in [0, n): for j in [0, i): acc += i * j */
static const char *NESTED_WHILE =
    GT_PLACEHOLDER("n", "DT_INT32")
    GT_CONST_I32("i0", 0, "")
    GT_CONST_I32("a0", 0, "")
    "node { name: \"outer\" op: \"StatelessWhile\" input: \"i0\" input: \"a0\" input: \"n\""
    FT_WHILE_ATTRS(FT_T(FT_I32) FT_T(FT_I32) FT_T(FT_I32), "lt3", "outer_body") " }\n"
    FT_LIBRARY(
      FT_FUNC("lt3", FT_ARG("i", FT_I32) FT_ARG("a", FT_I32) FT_ARG("n", FT_I32) FT_OUT("ok", "DT_BOOL"),
              FT_BIN("lt", "Less", "i", "n", FT_I32), FT_RET("ok", "lt:z:0"))
      FT_FUNC("inner_body",
              FT_ARG("j", FT_I32) FT_ARG("a", FT_I32) FT_ARG("i", FT_I32)
              FT_OUT("j2", FT_I32) FT_OUT("a2", FT_I32) FT_OUT("i2", FT_I32),
              FT_CONST_I32("one", 1)
              FT_BIN("inc", "AddV2", "j", "one:output:0", FT_I32)
              FT_BIN("p", "Mul", "i", "j", FT_I32)
              FT_BIN("acc", "AddV2", "a", "p:z:0", FT_I32),
              FT_RET("j2", "inc:z:0") FT_RET("a2", "acc:z:0") FT_RET("i2", "i"))
      FT_FUNC("outer_body",
              FT_ARG("i", FT_I32) FT_ARG("a", FT_I32) FT_ARG("n", FT_I32)
              FT_OUT("i2", FT_I32) FT_OUT("a2", FT_I32) FT_OUT("n2", FT_I32),
              FT_CONST_I32("j0", 0)
              FT_NODE("inner", "While", GT_INPUT("j0:output:0") GT_INPUT("a") GT_INPUT("i"),
                      FT_WHILE_ATTRS(FT_T(FT_I32) FT_T(FT_I32) FT_T(FT_I32), "lt3", "inner_body"))
              FT_CONST_I32("one", 1)
              FT_BIN("inc", "AddV2", "i", "one:output:0", FT_I32),
              FT_RET("i2", "inc:z:0") FT_RET("a2", "inner:output:1") FT_RET("n2", "n")));

static int ref_nested(int n) {
  int acc = 0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < i; j++) acc += i * j;
  return acc;
}

Test(lower, while_in_while) {
  dfx_graph *g = eu_graph(NESTED_WHILE);
  for (int n = 0; n < 7; n++) cr_expect_eq(run_i32(g, "outer:1", "n", n), ref_nested(n), "n=%d", n);
  dfx_graph_free(g);
}

/* ---- Case, and a function called directly as an op with an attr placeholder ---- */

/* Case(idx, x): [x + 1, x * 2, sq_T(x) - 5]; out-of-range runs the last. */
static const char *CASE =
    GT_PLACEHOLDER("idx", "DT_INT32")
    GT_CONST_I32("x", 7, "")
    "node { name: \"case\" op: \"Case\" input: \"idx\" input: \"x\""
    FT_ATTR_TYPES("Tin", FT_T(FT_I32)) FT_ATTR_TYPES("Tout", FT_T(FT_I32))
    " attr { key: \"branches\" value { list { func { name: \"b0\" } func { name: \"b1\" } func { name: \"b2\" } } } } }\n"
    FT_LIBRARY(
      FT_FUNC("b0", FT_ARG("x", FT_I32) FT_OUT("r", FT_I32),
              FT_CONST_I32("one", 1) FT_BIN("a", "AddV2", "x", "one:output:0", FT_I32), FT_RET("r", "a:z:0"))
      FT_FUNC("b1", FT_ARG("x", FT_I32) FT_OUT("r", FT_I32),
              FT_CONST_I32("two", 2) FT_BIN("a", "Mul", "x", "two:output:0", FT_I32), FT_RET("r", "a:z:0"))
      " function { signature { name: \"sq_T\" input_arg { name: \"x\" type_attr: \"T\" }"
      " output_arg { name: \"y\" type_attr: \"T\" } attr { name: \"T\" type: \"type\" } }"
      " node_def { name: \"m\" op: \"Mul\" input: \"x\" input: \"x\" attr { key: \"T\" value { placeholder: \"T\" } } }"
      FT_RET("y", "m:z:0") " }\n"
      FT_FUNC("b2", FT_ARG("x", FT_I32) FT_OUT("r", FT_I32),
              FT_NODE("s", "sq_T", GT_INPUT("x"), GT_TYPE("T", "DT_INT32"))
              FT_CONST_I32("five", 5) FT_BIN("a", "Sub", "s:y:0", "five:output:0", FT_I32), FT_RET("r", "a:z:0")));

static int ref_case(int idx) {
  int x = 7;
  if (idx == 0) return x + 1;
  if (idx == 1) return x * 2;
  return x * x - 5;
}

Test(lower, case_and_placeholder_attrs) {
  dfx_graph *g = eu_graph(CASE);
  int idx[] = {0, 1, 2, 3, -1};
  for (int k = 0; k < 5; k++) cr_expect_eq(run_i32(g, "case", "idx", idx[k]), ref_case(idx[k]), "idx=%d", idx[k]);
  dfx_graph_free(g);
}

/* ---- the lowered graph ---- */

Test(lower, result_is_plain_v1_and_survives_save_and_reload) {
  dfx_graph *g = eu_graph(NESTED_WHILE);
  dfx_status *st = dfx_status_new();
  dfx_optimize_options o = {.passes = "none"};
  dfx_graph *low = NULL;
  cr_assert_eq(dfx_graph_optimize(g, &o, &low, NULL, st), DFX_OK, "%s", dfx_status_message(st));
  const char *allowed[] = {"Placeholder", "Const", "Enter", "Merge", "Switch", "LoopCond", "Exit", "NextIteration",
                           "Identity", "IdentityN", "NoOp", "Less", "AddV2", "Mul"};
  for (int i = 0; i < dfx_graph_node_count(low); i++) {
    const char *op = dfx_graph_node_op(low, i);
    bool ok = false;
    for (size_t k = 0; k < sizeof allowed / sizeof *allowed; k++) ok |= strcmp(op, allowed[k]) == 0;
    cr_expect(ok, "op %s left after lowering", op);
  }
  char path[] = "/tmp/dfx_lower_XXXXXX.pbtxt";
  int fd = mkstemps(path, 6);
  cr_assert(fd >= 0);
  close(fd);
  cr_assert_eq(dfx_graph_save(low, path, st), DFX_OK, "%s", dfx_status_message(st));
  dfx_graph *back = NULL;
  cr_assert_eq(dfx_graph_load(path, &back, st), DFX_OK, "%s", dfx_status_message(st));
  unlink(path);
  FILE *f = NULL;
  (void)f;
  for (int n = 0; n < 6; n++) cr_expect_eq(run_i32(back, "outer:1", "n", n), ref_nested(n), "n=%d", n);
  dfx_graph_free(back);
  dfx_graph_free(low);
  dfx_graph_free(g);
  dfx_status_free(st);
}

/* ---- errors ---- */

static void expect_error(const char *text, const char *fetch, const char *feed, const char *needle) {
  dfx_graph *g = eu_graph(text);
  dfx_tensor *in = i32(1), *out = NULL;
  char msg[1024];
  dfx_code c = eu_run(g, 1, fetch, &out, feed, in, msg, sizeof msg);
  dfx_tensor_free(in);
  dfx_tensor_free(out);
  cr_expect_neq(c, DFX_OK);
  cr_expect(strstr(msg, needle), "message '%s' lacks '%s'", msg, needle);
  dfx_graph_free(g);
}

Test(lower, missing_function_is_named) {
  expect_error(GT_PLACEHOLDER("x", "DT_INT32")
               "node { name: \"c\" op: \"PartitionedCall\" input: \"x\"" FT_ATTR_TYPES("Tin", FT_T(FT_I32))
               FT_ATTR_TYPES("Tout", FT_T(FT_I32)) FT_ATTR_FUNC("f", "nowhere") " }\n"
               FT_LIBRARY(FT_FUNC("other", FT_ARG("x", FT_I32) FT_OUT("y", FT_I32), "", FT_RET("y", "x"))),
               "c", "x", "Node 'c' (PartitionedCall): f 'nowhere' is not in the graph's function library");
}

Test(lower, recursion_is_stopped) {
  expect_error(GT_PLACEHOLDER("x", "DT_INT32")
               "node { name: \"c\" op: \"rec\" input: \"x\" }\n"
               FT_LIBRARY(FT_FUNC("rec", FT_ARG("x", FT_I32) FT_OUT("y", FT_I32),
                                  FT_NODE("again", "rec", GT_INPUT("x"), ""), FT_RET("y", "again:y:0"))),
               "c", "x", "nest more than 64 deep");
}

Test(lower, bad_body_reference_is_named) {
  expect_error(GT_PLACEHOLDER("x", "DT_INT32")
               "node { name: \"c\" op: \"f\" input: \"x\" }\n"
               FT_LIBRARY(FT_FUNC("f", FT_ARG("x", FT_I32) FT_OUT("y", FT_I32),
                                  FT_BIN("a", "AddV2", "x", "ghost:z:0", FT_I32), FT_RET("y", "a:z:0"))),
               "c", "x", "function 'f': node 'a' reads 'ghost:z:0', which names no argument or node");
}

Test(lower, wrong_output_arg_is_named) {
  expect_error(GT_PLACEHOLDER("x", "DT_INT32")
               "node { name: \"c\" op: \"f\" input: \"x\" }\n"
               FT_LIBRARY(FT_FUNC("f", FT_ARG("x", FT_I32) FT_OUT("y", FT_I32),
                                  FT_BIN("a", "AddV2", "x", "x", FT_I32), FT_RET("y", "a:sum:0"))),
               "c", "x", "AddV2) has no output 'sum'");
}

/* ---- TensorList accumulators in a lowered loop ---- */

/* a = Reserve(n); b = Empty; for i in [0, n): a[i] = float(i * i - 3); b.push(float(2 * i))
 * then Stack(a), Stack(b) and Length(b). */
#define SHAPE_SCALAR_ELEMS                                                                                 \
  "node { name: \"eshape\" op: \"Const\"" GT_TYPE("dtype", "DT_INT32")                                      \
  " attr { key: \"value\" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 0 } } } } } }\n"
#define LIST_ATTRS GT_TYPE("element_dtype", "DT_FLOAT") GT_TYPE("shape_type", "DT_INT32")
static const char *LIST_LOOP =
    GT_PLACEHOLDER("n", "DT_INT32")
    GT_CONST_I32("i0", 0, "")
    GT_CONST_I32("unlimited", -1, "")
    SHAPE_SCALAR_ELEMS
    "node { name: \"a0\" op: \"TensorListReserve\" input: \"eshape\" input: \"n\"" LIST_ATTRS " }\n"
    "node { name: \"b0\" op: \"EmptyTensorList\" input: \"eshape\" input: \"unlimited\"" LIST_ATTRS " }\n"
    "node { name: \"loop\" op: \"While\" input: \"i0\" input: \"a0\" input: \"b0\" input: \"n\""
    FT_WHILE_ATTRS(FT_T(FT_I32) FT_T("DT_VARIANT") FT_T("DT_VARIANT") FT_T(FT_I32), "lcond", "lbody") " }\n"
    "node { name: \"sa\" op: \"TensorListStack\" input: \"loop:1\" input: \"unlimited\"" GT_TYPE("element_dtype", "DT_FLOAT") " }\n"
    "node { name: \"sb\" op: \"TensorListStack\" input: \"loop:2\" input: \"unlimited\"" GT_TYPE("element_dtype", "DT_FLOAT") " }\n"
    "node { name: \"lb\" op: \"TensorListLength\" input: \"loop:2\" }\n"
    FT_LIBRARY(
      FT_FUNC("lcond", FT_ARG("i", FT_I32) FT_ARG("a", "DT_VARIANT") FT_ARG("b", "DT_VARIANT") FT_ARG("n", FT_I32)
              FT_OUT("ok", "DT_BOOL"),
              FT_BIN("lt", "Less", "i", "n", FT_I32), FT_RET("ok", "lt:z:0"))
      FT_FUNC("lbody",
              FT_ARG("i", FT_I32) FT_ARG("a", "DT_VARIANT") FT_ARG("b", "DT_VARIANT") FT_ARG("n", FT_I32)
              FT_OUT("i2", FT_I32) FT_OUT("a2", "DT_VARIANT") FT_OUT("b2", "DT_VARIANT") FT_OUT("n2", FT_I32),
              FT_CONST_I32("three", 3) FT_CONST_I32("two", 2) FT_CONST_I32("one", 1)
              FT_BIN("sq", "Mul", "i", "i", FT_I32)
              FT_BIN("d", "Sub", "sq:z:0", "three:output:0", FT_I32)
              FT_NODE("fd", "Cast", GT_INPUT("d:z:0"), GT_TYPE("SrcT", "DT_INT32") GT_TYPE("DstT", "DT_FLOAT"))
              FT_NODE("set", "TensorListSetItem", GT_INPUT("a") GT_INPUT("i") GT_INPUT("fd:y:0"),
                      GT_TYPE("element_dtype", "DT_FLOAT"))
              FT_BIN("tw", "Mul", "i", "two:output:0", FT_I32)
              FT_NODE("ft", "Cast", GT_INPUT("tw:z:0"), GT_TYPE("SrcT", "DT_INT32") GT_TYPE("DstT", "DT_FLOAT"))
              FT_NODE("push", "TensorListPushBack", GT_INPUT("b") GT_INPUT("ft:y:0"), GT_TYPE("element_dtype", "DT_FLOAT"))
              FT_BIN("inc", "AddV2", "i", "one:output:0", FT_I32),
              FT_RET("i2", "inc:z:0") FT_RET("a2", "set:output_handle:0") FT_RET("b2", "push:output_handle:0")
              FT_RET("n2", "n")));

Test(lower, tensorlist_accumulators_in_a_loop) {
  dfx_graph *g = eu_graph(LIST_LOOP);
  for (int n = 0; n < 6; n++) {
    dfx_tensor *in = i32(n), *out[3] = {0};
    char msg[512];
    dfx_code c = eu_run(g, 2, "sa,sb,lb", out, "n", in, msg, sizeof msg);
    dfx_tensor_free(in);
    cr_assert_eq(c, DFX_OK, "n=%d: %s", n, msg);
    for (int k = 0; k < 2; k++) {
      cr_assert_eq(dfx_tensor_ndims(out[k]), 1);
      cr_assert_eq(dfx_tensor_dim(out[k], 0), n);
    }
    const float *a = dfx_tensor_data(out[0]), *b = dfx_tensor_data(out[1]);
    for (int i = 0; i < n; i++) {
      cr_expect_float_eq(a[i], (float)(i * i - 3), 0, "n=%d a[%d]", n, i);
      cr_expect_float_eq(b[i], (float)(2 * i), 0, "n=%d b[%d]", n, i);
    }
    cr_expect_eq(eu_i32(out[2]), n);
    for (int k = 0; k < 3; k++) dfx_tensor_free(out[k]);
  }
  dfx_graph_free(g);
}

/* ---- control outputs ---- */

/* check(x) asserts x < 10 and returns nothing: its only effect is a
 * control output. A call of it as a target runs the assert; If runs it only
 * in the branch that calls it. */
#define CHECK_FN                                                                                              \
  FT_FUNC("check", FT_ARG("x", FT_I32),                                                                       \
          FT_CONST_I32("ten", 10) FT_BIN("ok", "Less", "x", "ten:output:0", FT_I32)                             \
          FT_NODE("assert", "Assert", GT_INPUT("ok:z:0") GT_INPUT("x"), FT_ATTR_TYPES("T", FT_T(FT_I32))),     \
          " control_ret { key: \"assert\" value: \"assert\" }")

static const char *CONTROL_CALL =
    GT_PLACEHOLDER("x", "DT_INT32")
    "node { name: \"c\" op: \"StatefulPartitionedCall\" input: \"x\"" FT_ATTR_TYPES("Tin", FT_T(FT_I32))
    " attr { key: \"Tout\" value { list { } } }" FT_ATTR_FUNC("f", "check") " }\n"
    GT_CONST_I32("zero", 0, "")
    GT_OP2("pos", "Greater", "x", "zero", "DT_INT32", "")
    "node { name: \"if\" op: \"If\" input: \"pos\" input: \"x\""
    GT_TYPE("Tcond", "DT_BOOL") FT_ATTR_TYPES("Tin", FT_T(FT_I32)) " attr { key: \"Tout\" value { list { } } }"
    FT_ATTR_FUNC("then_branch", "call_check") FT_ATTR_FUNC("else_branch", "nothing") " }\n"
    FT_LIBRARY(CHECK_FN
      FT_FUNC("call_check", FT_ARG("x", FT_I32),
              FT_NODE("inner", "check", GT_INPUT("x"), ""), " control_ret { key: \"inner\" value: \"inner\" }")
      FT_FUNC("nothing", FT_ARG("x", FT_I32), "", ""));

/* Runs `target` with x fed; returns the code and the message. */
static dfx_code run_target(const dfx_graph *g, const char *target, int32_t x, char *msg, size_t n) {
  dfx_status *st = dfx_status_new();
  dfx_session *s = NULL;
  dfx_code c = dfx_session_new(g, NULL, &s, st);
  dfx_tensor *in = i32(x);
  dfx_port feed = {"x", 0};
  const char *targets[1] = {target};
  if (c == DFX_OK) c = dfx_session_run(s, NULL, &feed, &in, 1, NULL, NULL, 0, targets, 1, st);
  snprintf(msg, n, "%s", dfx_status_message(st));
  dfx_tensor_free(in);
  dfx_session_free(s);
  dfx_status_free(st);
  return c;
}

Test(lower, control_outputs_run_with_their_call) {
  dfx_graph *g = eu_graph(CONTROL_CALL);
  char msg[1024];
  /* The call: its assert passes below 10 and fails from 10 on. */
  cr_expect_eq(run_target(g, "c", 3, msg, sizeof msg), DFX_OK, "%s", msg);
  cr_expect_neq(run_target(g, "c", 12, msg, sizeof msg), DFX_OK);
  cr_expect(strstr(msg, "assert"), "%s", msg);
  /* The If: only the then branch (x > 0) checks. */
  cr_expect_eq(run_target(g, "if", 5, msg, sizeof msg), DFX_OK, "%s", msg);
  cr_expect_eq(run_target(g, "if", -20, msg, sizeof msg), DFX_OK, "%s", msg);
  cr_expect_neq(run_target(g, "if", 15, msg, sizeof msg), DFX_OK);
  cr_expect(strstr(msg, "assert"), "%s", msg);
  dfx_graph_free(g);
}

/* A session asked for no optimisation still lowers: nothing else runs a While. */
Test(lower, runs_even_with_optimize_none) {
  dfx_graph *g = eu_graph(CALL_IN_LOOP);
  dfx_status *st = dfx_status_new();
  dfx_session_options o = {.n_threads = 2, .optimize = "none"};
  dfx_session *s = NULL;
  cr_assert_eq(dfx_session_new(g, &o, &s, st), DFX_OK, "%s", dfx_status_message(st));
  dfx_tensor *in = i32(6), *out = NULL;
  dfx_port feed = {"n", 0}, fetch = {"out", 0};
  cr_assert_eq(dfx_session_run(s, NULL, &feed, &in, 1, &fetch, &out, 1, NULL, 0, st), DFX_OK, "%s",
               dfx_status_message(st));
  cr_expect_float_eq(eu_f32(out), ref_call_in_loop(6), 1e-4);
  dfx_tensor_free(in);
  dfx_tensor_free(out);
  dfx_session_free(s);
  dfx_status_free(st);
  dfx_graph_free(g);
}

/* Lowering under allocation failure: every failing allocation gives
 * DFX_ENOMEM, leaks nothing, and leaves the user's graph runnable. */
Test(lower, allocation_failures_are_clean, .timeout = 300) {
  dfx_graph *g = eu_graph(IF_IN_LOOP);
  dfx_optimize_options o = {.passes = "lower"};
  dfx_status *st = dfx_status_new();
  dfx__tensor_cache_flush();
  long long start = eu_alloc.n_allocs;
  dfx_graph *low = NULL;
  cr_assert_eq(dfx_graph_optimize(g, &o, &low, NULL, st), DFX_OK, "%s", dfx_status_message(st));
  long long total = eu_alloc.n_allocs - start;
  dfx_graph_free(low);
  long long step = total > 1500 ? total / 1500 : 1;
  for (long long n = 1; n <= total; n += step) {
    dfx__tensor_cache_flush();
    long long blocks = eu_alloc.live_blocks;
    eu_alloc.n_failed = 0;
    eu_alloc.fail_at = eu_alloc.n_allocs + n;
    low = NULL;
    dfx_code c = dfx_graph_optimize(g, &o, &low, NULL, st);
    bool failed = eu_alloc.n_failed > 0;
    eu_alloc.fail_at = 0;
    if (c == DFX_OK) {
      cr_assert(!failed || low, "N=%lld", n);
    } else {
      cr_assert_eq(c, DFX_ENOMEM, "N=%lld: %s: %s", n, dfx_code_name(c), dfx_status_message(st));
      cr_assert_null(low);
    }
    dfx_graph_free(low);
    dfx__tensor_cache_flush();
    cr_assert_eq(eu_alloc.live_blocks, blocks, "N=%lld leaked %lld blocks", n, eu_alloc.live_blocks - blocks);
  }
  cr_expect_eq(run_i32(g, "loop:1", "n", 5), ref_if_in_loop(5));
  dfx_status_free(st);
  dfx_graph_free(g);
}

/* Arguments and body nodes live in separate namespaces: "x" is the argument,
 * "x:y:0" the node called x. f(x) = -x + x * 3 */
Test(lower, argument_and_node_may_share_a_name) {
  dfx_graph *g = eu_graph(GT_PLACEHOLDER("x", "DT_INT32")
                          "node { name: \"c\" op: \"f\" input: \"x\" }\n"
                          FT_LIBRARY(FT_FUNC("f", FT_ARG("x", FT_I32) FT_OUT("r", FT_I32),
                                             FT_NODE("x", "Neg", GT_INPUT("x"), GT_TYPE("T", FT_I32))
                                             FT_CONST_I32("three", 3)
                                             FT_BIN("m", "Mul", "x", "three:output:0", FT_I32)
                                             FT_BIN("a", "AddV2", "x:y:0", "m:z:0", FT_I32),
                                             FT_RET("r", "a:z:0"))));
  for (int x = -4; x < 5; x += 3) cr_expect_eq(run_i32(g, "c", "x", x), -x + x * 3, "x=%d", x);
  dfx_graph_free(g);
}
