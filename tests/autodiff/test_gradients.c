/* test_gradients.c - the walk's tf.gradients semantics (autodiff/
 * gradients.c, api/gradients_api.c): ys summed, default grad_ys of ones,
 * fan-out aggregation, StopGradient, PreventGradient, unconnected and
 * integer xs, errors for bad ports and ops without gradients. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eutil.h"
#include "gcheck.h"
#include "gtext.h"
#include "gtext_ad.h"

TestSuite(gradients, .init = eu_setup, .fini = eu_teardown, .timeout = 60);

static const dfx_dtype F64[] = {DFX_F64};

static const gc_case semantic[] = {
    {"fan-out through three consumers", N1("e", "Exp", "a") N2("p", "Mul", "e", "e") N1("t", "Tanh", "e")
     N2("q", "Mul", "p", "t") N2("y", "AddV2", "q", "e"), "y", 1, {{"a", S2(2, 2), -1, 0.5}}},
};

Test(gradients, stop_gradient_and_fan_out) { gc_check_all(semantic, 1, F64, 1); }

#define G_XY                                                                                                   \
  GT_PLACEHOLDER("a", "DT_FLOAT") GT_PLACEHOLDER("b", "DT_FLOAT") GT_PLACEHOLDER("i", "DT_INT32")               \
  GT_OP2("m", "Mul", "a", "a", "DT_FLOAT", "")                                                                \
  "node { name: \"f\" op: \"Cast\" input: \"i\" attr { key: \"SrcT\" value { type: DT_INT32 } }"                \
  " attr { key: \"DstT\" value { type: DT_FLOAT } } }\n" GT_OP2("y", "Mul", "m", "f", "DT_FLOAT", "")          \
  GT_OP2("y2", "Mul", "a", "b", "DT_FLOAT", "")

static float run1(const dfx_graph *g, const char *fetch, float a, float b, int32_t i) {
  dfx_session *s = NULL;
  cr_assert_eq(dfx_session_new(g, NULL, &s, NULL), DFX_OK);
  dfx_tensor *va = dfx_tensor_new(DFX_F32, NULL, 0), *vb = dfx_tensor_new(DFX_F32, NULL, 0),
             *vi = dfx_tensor_new(DFX_I32, NULL, 0), *out = NULL;
  *(float *)dfx_tensor_data(va) = a;
  *(float *)dfx_tensor_data(vb) = b;
  *(int32_t *)dfx_tensor_data(vi) = i;
  dfx_port feeds[3] = {{"a", 0}, {"b", 0}, {"i", 0}};
  dfx_tensor *vals[3] = {va, vb, vi};
  char node[128];
  const char *c = strrchr(fetch, ':');
  snprintf(node, sizeof node, "%.*s", (int)(c - fetch), fetch);
  dfx_port f = {node, atoi(c + 1)};
  dfx_status *st = dfx_status_new();
  cr_assert_eq(dfx_session_run(s, NULL, feeds, vals, 3, &f, &out, 1, NULL, 0, st), DFX_OK, "%s", dfx_status_message(st));
  float r = *(float *)dfx_tensor_data(out);
  dfx_status_free(st);
  dfx_tensor_free(out);
  dfx_tensor_free(va);
  dfx_tensor_free(vb);
  dfx_tensor_free(vi);
  dfx_session_free(s);
  return r;
}

/* Two ys are summed; with no grad_ys they start from ones; b reaches only
 * y2; the int placeholder and an x no y depends on are unconnected. */
Test(gradients, sum_of_ys_ones_and_unconnected) {
  dfx_graph *g = eu_graph(G_XY GT_PLACEHOLDER("u", "DT_FLOAT"));
  dfx_port ys[2] = {{"y", 0}, {"y2", 0}}, xs[4] = {{"a", 0}, {"b", 0}, {"i", 0}, {"u", 0}};
  char *dx[4];
  dfx_graph *gg = NULL;
  dfx_status *st = dfx_status_new();
  cr_assert_eq(dfx_graph_gradients(g, ys, 2, xs, 4, NULL, NULL, &gg, dx, st), DFX_OK, "%s", dfx_status_message(st));
  cr_assert(dx[0] && dx[1]);
  cr_expect_null(dx[2], "an int32 x has no gradient");
  cr_expect_null(dx[3], "an x no y reads has no gradient");
  /* d/da (a*a*i + a*b) = 2 a i + b; d/db = a */
  cr_expect_float_eq(run1(gg, dx[0], 1.5f, 4.0f, 3), 2 * 1.5f * 3 + 4.0f, 1e-5);
  cr_expect_float_eq(run1(gg, dx[1], 1.5f, 4.0f, 3), 1.5f, 1e-5);
  for (int i = 0; i < 4; i++) dfx_free(dx[i]);
  dfx_graph_free(gg);
  dfx_graph_free(g);
  dfx_status_free(st);
}

/* y = a*b + StopGradient(a)*b: d/da is b, not 2b (the second path is
 * blocked although the value flows through it). */
Test(gradients, stop_gradient_blocks_a_path) {
  dfx_graph *g = eu_graph(G_XY GT_OP1("s", "StopGradient", "a", "DT_FLOAT", "") GT_OP2("q", "Mul", "s", "b", "DT_FLOAT", "")
                          GT_OP2("z", "AddV2", "y2", "q", "DT_FLOAT", ""));
  dfx_port yp = {"z", 0}, xp = {"a", 0};
  char *dx[1];
  dfx_graph *gg = NULL;
  cr_assert_eq(dfx_graph_gradients(g, &yp, 1, &xp, 1, NULL, NULL, &gg, dx, NULL), DFX_OK);
  cr_expect_float_eq(run1(gg, dx[0], 1.5f, 4.0f, 3), 4.0f, 1e-6);
  dfx_free(dx[0]);
  dfx_graph_free(gg);
  dfx_graph_free(g);
}

/* x == y: the gradient is the seed itself (named, not dropped). */
Test(gradients, x_is_y) {
  dfx_graph *g = eu_graph(G_XY);
  dfx_port p = {"y2", 0};
  char *dx[1];
  dfx_graph *gg = NULL;
  cr_assert_eq(dfx_graph_gradients(g, &p, 1, &p, 1, NULL, "d", &gg, dx, NULL), DFX_OK);
  cr_assert(dx[0]);
  cr_expect(strncmp(dx[0], "d/", 2) == 0, "named under the prefix: %s", dx[0]);
  cr_expect_float_eq(run1(gg, dx[0], 1, 2, 3), 1.0f, 1e-6);
  dfx_free(dx[0]);
  dfx_graph_free(gg);
  dfx_graph_free(g);
}

static void expect_error(const char *text, const char *y, const char *x, int xk, dfx_code code, const char *needle) {
  dfx_graph *g = eu_graph(text);
  dfx_port yp = {y, 0}, xp = {x, xk};
  char *dx[1] = {(char *)"junk"};
  dfx_graph *gg = (dfx_graph *)&yp;
  dfx_status *st = dfx_status_new();
  cr_expect_eq(dfx_graph_gradients(g, &yp, 1, &xp, 1, NULL, NULL, &gg, dx, st), code, "%s", dfx_status_message(st));
  cr_expect(strstr(dfx_status_message(st), needle), "message '%s' lacks '%s'", dfx_status_message(st), needle);
  cr_expect_null(gg);
  cr_expect_null(dx[0]);
  dfx_status_free(st);
  dfx_graph_free(g);
}

Test(gradients, prevent_gradient_names_node) {
  expect_error(GT_PLACEHOLDER("a", "DT_FLOAT")
               "node { name: \"pg\" op: \"PreventGradient\" input: \"a\" attr { key: \"T\" value { type: DT_FLOAT } }"
               " attr { key: \"message\" value { s: \"no second derivative\" } } }\n"
               GT_OP2("y", "Mul", "pg", "a", "DT_FLOAT", ""),
               "y", "a", 0, DFX_EINVAL, "Node 'pg' (PreventGradient): gradient explicitly disabled: no second derivative");
}

Test(gradients, op_without_gradient_names_node_and_op) {
  expect_error(GT_PLACEHOLDER("a", "DT_FLOAT") GT_OP1("c", "Cholesky", "a", "DT_FLOAT", ""), "c", "a", 0, DFX_EUNIMPL,
               "Node 'c' (Cholesky): no gradient defined for op Cholesky");
}

Test(gradients, bad_ports) {
  expect_error(G_XY, "nope", "a", 0, DFX_ENOTFOUND, "ys[0]: no node named 'nope'");
  expect_error(G_XY, "y", "a", 3, DFX_EINVAL, "xs[0]: 'a:3' but a (Placeholder) has 1 output");
}

/* A non-differentiable op off the path does not matter (only ops between
 * the xs and ys are differentiated). */
Test(gradients, ops_off_the_path_are_ignored) {
  dfx_graph *g = eu_graph(G_XY GT_OP1("c", "Cholesky", "b", "DT_FLOAT", "") GT_OP2("z", "Mul", "a", "c", "DT_FLOAT", ""));
  dfx_port yp = {"y", 0}, xp = {"a", 0};
  char *dx[1];
  dfx_graph *gg = NULL;
  cr_assert_eq(dfx_graph_gradients(g, &yp, 1, &xp, 1, NULL, NULL, &gg, dx, NULL), DFX_OK);
  dfx_free(dx[0]);
  dfx_graph_free(gg);
  dfx_graph_free(g);
}

Test(gradients, grad_ys_dtype_checked) {
  dfx_graph *g = eu_graph(G_XY);
  dfx_port yp = {"y", 0}, xp = {"a", 0}, gy = {"i", 0};
  char *dx[1];
  dfx_graph *gg = NULL;
  dfx_status *st = dfx_status_new();
  cr_expect_eq(dfx_graph_gradients(g, &yp, 1, &xp, 1, &gy, NULL, &gg, dx, st), DFX_EINVAL);
  cr_expect(strstr(dfx_status_message(st), "grad_ys[0] ('i:0') is int32 but ys[0] is float32"), "%s",
            dfx_status_message(st));
  dfx_status_free(st);
  dfx_graph_free(g);
}

/* Allocation failure at every step of differentiating a loop graph: each
 * failing allocation gives DFX_ENOMEM, no output, and no leak (the
 * teardown's check), until the first N that succeeds. */
Test(gradients, out_of_memory_at_every_allocation, .timeout = 240) {
  dfx_graph *g = eu_graph(GT_PLACEHOLDER("a", "DT_FLOAT") GT_PLACEHOLDER("b", "DT_FLOAT")
                          GT_OP2("m", "Mul", "a", "b", "DT_FLOAT", "") GT_OP1("t", "Tanh", "m", "DT_FLOAT", "")
                          GT_OP2("y", "AddV2", "t", "a", "DT_FLOAT", ""));
  dfx_port yp = {"y", 0}, xs[2] = {{"a", 0}, {"b", 0}};
  bool ok = false;
  for (long long n = 1; n < 20000 && !ok; n++) {
    char *dx[2] = {(char *)"junk", (char *)"junk"};
    dfx_graph *gg = NULL;
    eu_alloc.fail_at = eu_alloc.n_allocs + n;
    dfx_code c = dfx_graph_gradients(g, &yp, 1, xs, 2, NULL, NULL, &gg, dx, NULL);
    eu_alloc.fail_at = 0;
    if (c == DFX_OK) {
      ok = true;
      dfx_free(dx[0]);
      dfx_free(dx[1]);
      dfx_graph_free(gg);
      break;
    }
    cr_assert_eq(c, DFX_ENOMEM, "allocation %lld: %s", n, dfx_code_name(c));
    cr_assert(!gg && !dx[0] && !dx[1]);
  }
  cr_assert(ok);
  dfx_graph_free(g);
}
