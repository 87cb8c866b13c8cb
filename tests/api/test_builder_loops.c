/* test_builder_loops.c - the builder's while and cond helpers: TF1's
 * lowering, invariants through nested frames, conds inside loops and loops
 * inside conds, misuse of the helpers and the scope inside them; and a
 * loop written node by node, whose back edge names a node added later. */
#include <criterion/criterion.h>
#include <string.h>

#include "butil.h"
#include "eutil.h"
#include "tensor.h"

TestSuite(builder_loops, .init = eu_setup, .fini = eu_teardown, .timeout = 60);

Test(builder_loops, while_emits_tf1_lowering) {
  dfx_builder *b = small_loop_builder();
  dfx_graph *g = finish(b);
  const char *expect[][2] = {{"loop/Enter", "Enter"},       {"loop/Merge", "Merge"},
                             {"loop/LoopCond", "LoopCond"}, {"loop/Switch", "Switch"},
                             {"loop/Identity", "Identity"}, {"loop/NextIteration", "NextIteration"},
                             {"loop/Exit", "Exit"},         {"loop/Enter_1", "Enter"}};
  for (size_t i = 0; i < sizeof expect / sizeof expect[0]; i++) {
    int k = dfx_graph_node_find(g, expect[i][0]);
    cr_assert_geq(k, 0, "%s missing", expect[i][0]);
    cr_assert_str_eq(dfx_graph_node_op(g, k), expect[i][1]);
  }
  /* The limit comes in through a constant Enter; the step constant hangs
   * off the Identity pivot and lives in the loop frame. */
  int inv = dfx_graph_node_find(g, "loop/Enter_1"), step = dfx_graph_node_find(g, "loop/step");
  int is_const, n = dfx_graph_node_find(g, "loop/Enter");
  int64_t pi;
  OK(dfx_graph_node_attr_bool(g, inv, "is_constant", &is_const, NULL));
  cr_assert_eq(is_const, 1);
  OK(dfx_graph_node_attr_int(g, n, "parallel_iterations", &pi, NULL));
  cr_assert_eq(pi, 4);
  cr_assert_str_eq(dfx_graph_node_input(g, inv, 0).node, "five");
  cr_assert_eq(dfx_graph_node_control_input(g, step, 0), dfx_graph_node_find(g, "loop/Identity"));
  cr_assert_str_eq(dfx_graph_node_frame(g, step), "loop/while_context");
  cr_assert_str_eq(dfx_graph_node_frame(g, dfx_graph_node_find(g, "loop/Exit")), "loop/while_context");
  cr_assert_eq(fetch_i32(g, "loop/Exit"), 5);
  dfx_graph_free(g);
  dfx_builder_free(b);
}

Test(builder_loops, while_with_two_vars_reuses_invariant_enters) {
  dfx_builder *b = dfx_builder_new();
  const char *vars[2] = {ci32(b, "i0", 0), ci32(b, "acc0", 100)};
  const char *lim = ci32(b, "lim", 4);
  loop_ud u = {lim, 1, NULL};
  const char *exits[2];
  OK(dfx_builder_while(b, NULL, vars, 2, 0, count_cond, count_body, &u, exits, NULL));
  cr_assert_str_eq(exits[1], "while/Exit_1");
  dfx_graph *g = finish(b);
  cr_assert_eq(fetch_i32(g, exits[1]), 100 + 0 + 1 + 2 + 3);
  int64_t pi;
  OK(dfx_graph_node_attr_int(g, dfx_graph_node_find(g, "while/Enter"), "parallel_iterations", &pi, NULL));
  cr_assert_eq(pi, 10);
  dfx_graph_free(g);
  /* A second loop gets a fresh scope. */
  OK(dfx_builder_while(b, NULL, vars, 1, 1, count_cond, count_body, &u, exits, NULL));
  cr_assert_str_eq(exits[0], "while_1/Exit");
  g = finish(b);
  cr_assert_eq(fetch_i32(g, exits[0]), 4);
  dfx_graph_free(g);
  dfx_builder_free(b);
}

Test(builder_loops, zero_iteration_loop_returns_initial_values) {
  dfx_builder *b = dfx_builder_new();
  const char *v = ci32(b, "start", 9), *lim = ci32(b, "lim", 3);
  loop_ud u = {lim, 1, NULL};
  const char *ex[1];
  OK(dfx_builder_while(b, "w", &v, 1, 2, count_cond, count_body, &u, ex, NULL));
  dfx_graph *g = finish(b);
  cr_assert_eq(fetch_i32(g, ex[0]), 9);
  dfx_graph_free(g);
  dfx_builder_free(b);
}

/* Outer loop i < 3; its body runs an inner loop j < lim (lim from the root,
 * entered through both frames) adding 1 to acc each time. */
static dfx_code inner_body(dfx_builder *b, const char *const *v, int n, void *ud, const char **next) {
  const char *one = ci32(b, "one", 1);
  next[0] = op2(b, "Add", "j1", v[0], one);
  next[1] = op2(b, "Add", "acc1", v[1], one);
  return DFX_OK;
}

static dfx_code outer_body(dfx_builder *b, const char *const *v, int n, void *ud, const char **next) {
  loop_ud *u = ud, inner = {u->inner, 1, NULL};
  const char *vars[2] = {ci32(b, "j0", 0), v[1]};
  const char *ex[2];
  dfx_code c = dfx_builder_while(b, "inner", vars, 2, 3, count_cond, inner_body, &inner, ex, NULL);
  if (c != DFX_OK) return c;
  next[0] = op2(b, "Add", "i1", v[0], ci32(b, "one", 1));
  next[1] = ex[1];
  return DFX_OK;
}

Test(builder_loops, nested_loops_enter_invariants_through_each_level) {
  dfx_builder *b = dfx_builder_new();
  const char *vars[2] = {ci32(b, "i0", 0), ci32(b, "acc0", 0)}, *ex[2];
  loop_ud u = {ci32(b, "three", 3), 0, ci32(b, "lim", 4)};
  OK(dfx_builder_while(b, "outer", vars, 2, 2, count_cond, outer_body, &u, ex, NULL));
  dfx_graph *g = finish(b);
  cr_assert_eq(fetch_i32(g, "outer/Exit_1"), 3 * 4);
  /* lim is entered into outer, then into inner: a chain of two constant
   * Enters (each Enter itself lives in the frame it enters from). */
  int e2 = dfx_graph_node_find(g, "outer/inner/Enter_2");
  cr_assert_geq(e2, 0);
  int e1 = dfx_graph_node_find(g, dfx_graph_node_input(g, e2, 0).node);
  cr_assert_str_eq(dfx_graph_node_op(g, e1), "Enter");
  cr_assert_str_eq(dfx_graph_node_input(g, e1, 0).node, "lim");
  cr_assert_str_eq(dfx_graph_node_frame(g, e2), "outer/while_context");
  const char *fr;
  OK(dfx_graph_node_attr_string(g, e1, "frame_name", &fr, NULL, NULL));
  cr_assert_str_eq(fr, "outer/while_context");
  cr_assert_str_eq(dfx_graph_node_frame(g, dfx_graph_node_find(g, "outer/inner/less")), "outer/inner/while_context");
  dfx_graph_free(g);
  dfx_builder_free(b);
}

/* ---- cond ---- */

static dfx_code then_double(dfx_builder *b, void *ud, const char **outs) {
  dfx_bnode *two;
  cr_assert_str_eq(dfx_builder_pivot(b), "c/switch_t");
  OK(dfx_builder_const_f32(b, "two", 2, &two, NULL));
  outs[0] = op2(b, "Mul", "dbl", ud, nm(two));
  return DFX_OK;
}

static dfx_code else_same(dfx_builder *b, void *ud, const char **outs) {
  cr_assert_str_eq(dfx_builder_pivot(b), "c/switch_f");
  outs[0] = ud; /* an outside tensor: switched in */
  return DFX_OK;
}

Test(builder_loops, cond_takes_one_branch) {
  dfx_builder *b = dfx_builder_new();
  dfx_bnode *x, *zero;
  OK(dfx_builder_placeholder(b, "x", DFX_F32, NULL, 0, &x, NULL));
  OK(dfx_builder_const_f32(b, "zero", 0, &zero, NULL));
  const char *pos = op2(b, "Greater", "pos", nm(x), nm(zero));
  const char *out[1];
  OK(dfx_builder_cond(b, "c", pos, 1, then_double, else_same, (void *)nm(x), out, NULL));
  cr_assert_str_eq(out[0], "c/Merge");
  dfx_graph *g = finish(b);
  cr_assert_float_eq(fetch_f32_fed(g, "c/Merge", "x", 3), 6.0f, 1e-6);
  cr_assert_float_eq(fetch_f32_fed(g, "c/Merge", "x", -3), -3.0f, 1e-6);
  int two = dfx_graph_node_find(g, "c/two");
  cr_assert_eq(dfx_graph_node_control_input(g, two, 0), dfx_graph_node_find(g, "c/switch_t"));
  cr_assert_geq(dfx_graph_node_find(g, "c/pred_id"), 0);
  dfx_graph_free(g);
  dfx_builder_free(b);
}

/* acc += (i < 2 ? 10 : 1) for i in 0..4: a cond inside a loop body. */
static dfx_code then_ten(dfx_builder *b, void *ud, const char **outs) {
  outs[0] = ci32(b, "ten", 10);
  return DFX_OK;
}
static dfx_code else_one(dfx_builder *b, void *ud, const char **outs) {
  outs[0] = ci32(b, "one", 1);
  return DFX_OK;
}
static dfx_code body_with_cond(dfx_builder *b, const char *const *v, int n, void *ud, const char **next) {
  const char *small = op2(b, "Less", "small", v[0], ci32(b, "two", 2)), *inc[1];
  dfx_code c = dfx_builder_cond(b, "pick", small, 1, then_ten, else_one, NULL, inc, NULL);
  if (c != DFX_OK) return c;
  next[0] = op2(b, "Add", "i1", v[0], ci32(b, "one", 1));
  next[1] = op2(b, "Add", "acc1", v[1], inc[0]);
  return DFX_OK;
}

Test(builder_loops, cond_inside_loop_and_loop_inside_cond) {
  dfx_builder *b = dfx_builder_new();
  const char *vars[2] = {ci32(b, "i0", 0), ci32(b, "acc0", 0)};
  loop_ud u = {ci32(b, "five", 5), 0, NULL};
  const char *ex[2];
  OK(dfx_builder_while(b, "w", vars, 2, 10, count_cond, body_with_cond, &u, ex, NULL));
  dfx_graph *g = finish(b);
  cr_assert_eq(fetch_i32(g, ex[1]), 10 + 10 + 1 + 1 + 1);
  dfx_graph_free(g);
  dfx_builder_free(b);
}

static dfx_code then_loop(dfx_builder *b, void *ud, const char **outs) {
  const char *start = ci32(b, "start", 0);
  loop_ud u = {ud, 2, NULL};
  return dfx_builder_while(b, "w", &start, 1, 1, count_cond, count_body, &u, outs, NULL);
}

Test(builder_loops, loop_inside_untaken_branch_is_dead) {
  dfx_builder *b = dfx_builder_new();
  dfx_bnode *x;
  OK(dfx_builder_placeholder(b, "x", DFX_F32, NULL, 0, &x, NULL));
  dfx_bnode *zero;
  OK(dfx_builder_const_f32(b, "zero", 0, &zero, NULL));
  const char *pos = op2(b, "Greater", "pos", nm(x), nm(zero)), *out[1];
  const char *lim = ci32(b, "lim", 7);
  OK(dfx_builder_cond(b, NULL, pos, 1, then_loop, else_one, (void *)lim, out, NULL));
  dfx_graph *g = finish(b);
  dfx_tensor *f = dfx_tensor_new_copy(DFX_F32, NULL, 0, &(float){1}, 4), *o[1];
  char msg[2048];
  cr_assert_eq(eu_run(g, 2, out[0], o, "x", f, msg, sizeof msg), DFX_OK, "%s", msg);
  cr_assert_eq(eu_i32(o[0]), 8); /* 0, 2, 4, 6, 8 */
  dfx_tensor_free(o[0]);
  *(float *)dfx_tensor_data(f) = -1;
  cr_assert_eq(eu_run(g, 2, out[0], o, "x", f, msg, sizeof msg), DFX_OK, "%s", msg);
  cr_assert_eq(eu_i32(o[0]), 1);
  dfx_tensor_free(o[0]);
  dfx_tensor_free(f);
  dfx_graph_free(g);
  dfx_builder_free(b);
}

/* ---- helper misuse ---- */

static const char *leaked_inner;
static dfx_code cond_leak(dfx_builder *b, const char *const *v, int n, void *ud, const char **pred) {
  leaked_inner = v[0];
  *pred = op2(b, "Less", NULL, v[0], ud);
  return DFX_OK;
}
static dfx_code body_id(dfx_builder *b, const char *const *v, int n, void *ud, const char **next) {
  next[0] = v[0];
  return DFX_OK;
}
static dfx_code body_fails(dfx_builder *b, const char *const *v, int n, void *ud, const char **next) {
  return DFX_ECANCELED;
}
static dfx_code body_nothing(dfx_builder *b, const char *const *v, int n, void *ud, const char **next) {
  return DFX_OK;
}
static dfx_code body_outer_ctrl(dfx_builder *b, const char *const *v, int n, void *ud, const char **next) {
  dfx_code c = dfx_builder_node(b, "Identity", "x", (const char *[]){v[0], "^gate"}, 2, NULL, NULL);
  next[0] = v[0];
  return c;
}
static dfx_code body_pop(dfx_builder *b, const char *const *v, int n, void *ud, const char **next) {
  next[0] = v[0];
  return dfx_builder_scope_pop(b, NULL);
}

Test(builder_loops, helper_misuse_is_reported) {
  dfx_status *st = dfx_status_new();
  const char *ex[1];
  char msg[2048];
  /* A loop-internal tensor used after the loop. */
  dfx_builder *b = dfx_builder_new();
  const char *z = ci32(b, "z", 0), *lim = ci32(b, "lim", 2);
  OK(dfx_builder_while(b, NULL, &z, 1, 1, cond_leak, body_id, (void *)lim, ex, st));
  dfx_bnode *n;
  cr_assert_eq(dfx_builder_node(b, "Identity", "after", &leaked_inner, 1, &n, st), DFX_EINVAL);
  cr_assert(strstr(dfx_status_message(st), "Exit"), "%s", dfx_status_message(st));
  dfx_builder_free(b);
  /* Bad arguments. */
  b = dfx_builder_new();
  z = ci32(b, "z", 0);
  cr_assert_eq(dfx_builder_while(b, NULL, &z, 0, 1, cond_leak, body_id, NULL, ex, st), DFX_EINVAL);
  cr_assert_eq(dfx_builder_while(b, NULL, &z, 1, 1, NULL, body_id, NULL, ex, st), DFX_EINVAL);
  cr_assert_eq(dfx_builder_while(b, "a/b", &z, 1, 1, cond_leak, body_id, (void *)z, ex, st), DFX_EINVAL);
  cr_assert_eq(dfx_builder_while(NULL, NULL, &z, 1, 1, cond_leak, body_id, NULL, ex, st), DFX_EINVAL);
  cr_assert_eq(dfx_builder_cond(b, NULL, "^z", 1, then_ten, else_one, NULL, ex, st), DFX_EINVAL);
  cr_assert_eq(dfx_builder_cond(b, NULL, z, 0, then_ten, else_one, NULL, ex, st), DFX_EINVAL);
  dfx_builder_free(b);
  /* A failing callback's code comes back and the builder stays failed. */
  struct {
    dfx_while_body_fn body;
    dfx_code code;
    const char *needle;
  } cases[] = {
      {body_fails, DFX_ECANCELED, "body callback"},
      {body_nothing, DFX_EINVAL, "no value"},
      {body_outer_ctrl, DFX_EINVAL, "^gate"},
      {body_pop, DFX_EINVAL, "scope_pop"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    b = dfx_builder_new();
    z = ci32(b, "z", 0);
    lim = ci32(b, "lim", 2);
    OK(dfx_builder_node(b, "NoOp", "gate", NULL, 0, NULL, NULL));
    cr_assert_eq(dfx_builder_while(b, NULL, &z, 1, 1, cond_leak, cases[i].body, (void *)lim, ex, st), cases[i].code,
                 "case %zu: %s", i, dfx_status_message(st));
    cr_assert(strstr(dfx_status_message(st), cases[i].needle), "case %zu: %s", i, dfx_status_message(st));
    cr_assert_null(ex[0]);
    cr_assert_neq(finish_err(b, msg, sizeof msg), DFX_OK);
    /* The helper's scope is closed again: new nodes are at the root. */
    cr_assert_str_eq(op2(b, "Identity", "top", z, NULL), "top");
    dfx_builder_free(b);
  }
  dfx_status_free(st);
}

/* ---- loops written node by node ---- */

static dfx_code node(dfx_builder *b, const char *op, const char *name, const char *const *ins, int n, dfx_bnode **out) {
  dfx_status *st = dfx_status_new();
  dfx_code c = dfx_builder_node(b, op, name, ins, n, out, st);
  cr_assert_eq(c, DFX_OK, "%s: %s", name, dfx_status_message(st));
  dfx_status_free(st);
  return c;
}

/* The Merge names its NextIteration, and a node its control input, before
 * they exist; finalising in between fails and leaves the builder as it
 * was. */
Test(builder_loops, forward_references_resolve_at_finalisation) {
  dfx_builder *b = dfx_builder_new();
  dfx_bnode *enter, *lim_in, *gated;
  ci32(b, "zero", 0);
  ci32(b, "lim", 3);
  node(b, "Enter", "enter", (const char *[]){"zero"}, 1, &enter);
  node(b, "Merge", "merge", (const char *[]){"enter", "next"}, 2, NULL);
  char msg[2048];
  cr_assert_eq(finish_err(b, msg, sizeof msg), DFX_EINVAL);
  cr_assert(strstr(msg, "'merge'") && strstr(msg, "Unknown input node 'next'"), "%s", msg);
  node(b, "Enter", "lim_in", (const char *[]){"lim"}, 1, &lim_in);
  OK(dfx_bnode_attr_string(enter, "frame_name", "f"));
  OK(dfx_bnode_attr_string(lim_in, "frame_name", "f"));
  OK(dfx_bnode_attr_bool(lim_in, "is_constant", 1));
  node(b, "Less", "less", (const char *[]){"merge", "lim_in"}, 2, NULL);
  node(b, "LoopCond", "cond", (const char *[]){"less"}, 1, NULL);
  node(b, "Switch", "sw", (const char *[]){"merge", "cond"}, 2, NULL);
  node(b, "Identity", "id", (const char *[]){"sw:1"}, 1, &gated);
  OK(dfx_bnode_add_input(gated, "^gate"));
  node(b, "Const", "one", (const char *[]){"^id"}, 1, NULL);
  dfx_tensor *one = dfx_tensor_new_copy(DFX_I32, NULL, 0, &(int32_t){1}, 4);
  OK(dfx_bnode_attr_tensor(dfx_builder_find(b, "one"), "value", one));
  OK(dfx_bnode_attr_type(dfx_builder_find(b, "one"), "dtype", DFX_I32));
  dfx_tensor_free(one);
  node(b, "Add", "add", (const char *[]){"id", "one"}, 2, NULL);
  node(b, "NextIteration", "next", (const char *[]){"add"}, 1, NULL);
  node(b, "Exit", "exit", (const char *[]){"sw"}, 1, NULL);
  cr_assert_eq(finish_err(b, msg, sizeof msg), DFX_EINVAL);
  cr_assert(strstr(msg, "Unknown input node '^gate'"), "%s", msg);
  void *buf;
  size_t len;
  cr_assert_eq(dfx_builder_serialize(b, 1, &buf, &len, NULL), DFX_EINVAL);
  node(b, "Identity", "gate", (const char *[]){"merge"}, 1, NULL);
  dfx_graph *g = finish(b);
  int merge = dfx_graph_node_find(g, "merge");
  cr_assert_str_eq(dfx_graph_node_input(g, merge, 1).node, "next");
  cr_assert_eq(dfx_graph_node_control_input(g, dfx_graph_node_find(g, "id"), 0), dfx_graph_node_find(g, "gate"));
  cr_assert_eq(fetch_i32(g, "exit"), 3);
  dfx_graph_free(g);
  dfx_builder_free(b);
}

/* ---- scopes inside the helpers ---- */

static dfx_code cond_scoped(dfx_builder *b, const char *const *v, int n, void *ud, const char **pred) {
  cr_assert_str_eq(dfx_builder_scope(b), "outer/w/");
  return count_cond(b, v, n, ud, pred);
}

static dfx_code body_scoped(dfx_builder *b, const char *const *v, int n, void *ud, const char **next) {
  cr_assert_str_eq(dfx_builder_scope(b), "outer/w/");
  OK(dfx_builder_scope_push(b, "inc", NULL));
  cr_assert_str_eq(dfx_builder_scope(b), "outer/w/inc/");
  dfx_code c = count_body(b, v, n, ud, next);
  OK(dfx_builder_scope_pop(b, NULL));
  return c;
}

Test(builder_loops, scope_inside_helpers_is_the_helpers) {
  dfx_builder *b = dfx_builder_new();
  const char *z = ci32(b, "z", 0), *lim = ci32(b, "lim", 2), *ex[1];
  OK(dfx_builder_scope_push(b, "outer", NULL));
  loop_ud u = {lim, 1, NULL};
  OK(dfx_builder_while(b, "w", &z, 1, 1, cond_scoped, body_scoped, &u, ex, NULL));
  cr_assert_str_eq(dfx_builder_scope(b), "outer/");
  cr_assert_str_eq(ex[0], "outer/w/Exit");
  cr_assert_not_null(dfx_builder_find(b, "outer/w/inc/add"));
  dfx_graph *g = finish(b);
  cr_assert_eq(fetch_i32(g, ex[0]), 2);
  dfx_graph_free(g);
  dfx_builder_free(b);
}
