/* test_grad_builder.c - gradients of a loop made with the public builder
 * (dfx_builder_while), the way examples and training code build graphs:
 * acc <- acc * w, n times, so d acc/dw = n x w^(n-1), d acc/dx = w^n. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "eutil.h"

TestSuite(grad_builder, .init = eu_setup, .fini = eu_teardown, .timeout = 60);

typedef struct names {
  const char *n, *w;
} names;

static dfx_code cond(dfx_builder *b, const char *const *vars, int n_vars, void *ud, const char **pred) {
  const names *nm = ud;
  dfx_bnode *less;
  dfx_code c = dfx_builder_node(b, "Less", "less", (const char *[]){vars[0], nm->n}, 2, &less, NULL);
  *pred = dfx_bnode_name(less);
  return c;
}

static dfx_code body(dfx_builder *b, const char *const *vars, int n_vars, void *ud, const char **next) {
  const names *nm = ud;
  dfx_bnode *one, *inc, *mul;
  dfx_code c;
  if ((c = dfx_builder_const_i32(b, "one", 1, &one, NULL)) ||
      (c = dfx_builder_node(b, "AddV2", "inc", (const char *[]){vars[0], dfx_bnode_name(one)}, 2, &inc, NULL)) ||
      (c = dfx_builder_node(b, "Mul", "mul", (const char *[]){vars[1], nm->w}, 2, &mul, NULL)))
    return c;
  next[0] = dfx_bnode_name(inc);
  next[1] = dfx_bnode_name(mul);
  return DFX_OK;
}

static double run(dfx_graph *g, const char *fetch, double x, double w, int32_t n) {
  dfx_session *s = NULL;
  dfx_status *st = dfx_status_new();
  cr_assert_eq(dfx_session_new(g, NULL, &s, st), DFX_OK, "%s", dfx_status_message(st));
  dfx_tensor *v[3] = {dfx_tensor_new(DFX_F64, NULL, 0), dfx_tensor_new(DFX_F64, NULL, 0), dfx_tensor_new(DFX_I32, NULL, 0)};
  *(double *)dfx_tensor_data(v[0]) = x;
  *(double *)dfx_tensor_data(v[1]) = w;
  *(int32_t *)dfx_tensor_data(v[2]) = n;
  dfx_port feeds[3] = {{"x", 0}, {"w", 0}, {"n", 0}};
  char node[200];
  const char *colon = strrchr(fetch, ':');
  memcpy(node, fetch, (size_t)(colon - fetch));
  node[colon - fetch] = 0;
  dfx_port f = {node, colon[1] - '0'};
  dfx_tensor *out = NULL;
  cr_assert_eq(dfx_session_run(s, NULL, feeds, v, 3, &f, &out, 1, NULL, 0, st), DFX_OK, "%s", dfx_status_message(st));
  double r = *(double *)dfx_tensor_data(out);
  dfx_tensor_free(out);
  for (int i = 0; i < 3; i++) dfx_tensor_free(v[i]);
  dfx_session_free(s);
  dfx_status_free(st);
  return r;
}

Test(grad_builder, power_loop) {
  dfx_builder *b = dfx_builder_new();
  dfx_status *st = dfx_status_new();
  dfx_bnode *x, *w, *n, *zero;
  cr_assert_eq(dfx_builder_placeholder(b, "x", DFX_F64, NULL, 0, &x, st), DFX_OK);
  cr_assert_eq(dfx_builder_placeholder(b, "w", DFX_F64, NULL, 0, &w, st), DFX_OK);
  cr_assert_eq(dfx_builder_placeholder(b, "n", DFX_I32, NULL, 0, &n, st), DFX_OK);
  cr_assert_eq(dfx_builder_const_i32(b, "zero", 0, &zero, st), DFX_OK);
  names nm = {"n", "w"};
  const char *exits[2];
  cr_assert_eq(dfx_builder_while(b, "loop", (const char *[]){"zero", "x"}, 2, 4, cond, body, &nm, exits, st), DFX_OK,
               "%s", dfx_status_message(st));
  dfx_graph *g = NULL, *gg = NULL;
  cr_assert_eq(dfx_builder_to_graph(b, &g, st), DFX_OK, "%s", dfx_status_message(st));
  dfx_port y = {exits[1], 0}, xs[2] = {{"x", 0}, {"w", 0}};
  char *dx[2];
  cr_assert_eq(dfx_graph_gradients(g, &y, 1, xs, 2, NULL, NULL, &gg, dx, st), DFX_OK, "%s", dfx_status_message(st));
  for (int n_it = 0; n_it <= 4; n_it++) {
    double xv = 1.5, wv = 0.8;
    cr_expect(fabs(run(gg, dx[0], xv, wv, n_it) - pow(wv, n_it)) < 1e-12, "d/dx at n=%d", n_it);
    double want = n_it ? n_it * xv * pow(wv, n_it - 1) : 0;
    cr_expect(fabs(run(gg, dx[1], xv, wv, n_it) - want) < 1e-12, "d/dw at n=%d", n_it);
  }
  dfx_free(dx[0]);
  dfx_free(dx[1]);
  dfx_graph_free(gg);
  dfx_graph_free(g);
  dfx_builder_free(b);
  dfx_status_free(st);
}
