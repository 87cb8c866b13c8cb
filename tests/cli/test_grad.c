/* test_grad.c - end-to-end tests of `dfexec grad`: the names printed in
 * --x order (None for an unconnected x), the written graph runs to the
 * right gradient values, and usage and graph errors. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_harness.h"

#define RUN(...) cli_run((const char *const[]){__VA_ARGS__, NULL})

/* loss = sum((x * W + b)^2) over a vector; u is not used. */
static const char graph[] =
    "node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }\n"
    "node { name: 'W' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }\n"
    "node { name: 'b' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }\n"
    "node { name: 'u' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }\n"
    "node { name: 'xw' op: 'Mul' input: 'x' input: 'W' attr { key: 'T' value { type: DT_FLOAT } } }\n"
    "node { name: 'z' op: 'Add' input: 'xw' input: 'b' attr { key: 'T' value { type: DT_FLOAT } } }\n"
    "node { name: 'sq' op: 'Square' input: 'z' attr { key: 'T' value { type: DT_FLOAT } } }\n"
    "node { name: 'ax' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } }"
    " attr { key: 'value' value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 1 } } int_val: 0 } } } }\n"
    "node { name: 'loss' op: 'Sum' input: 'sq' input: 'ax' attr { key: 'T' value { type: DT_FLOAT } } }\n";

Test(grad, prints_names_in_x_order_and_writes_a_runnable_graph, .timeout = 60) {
  const char *in = cli_tmp("g.pbtxt"), *out = cli_tmp("grad.pbtxt");
  cr_assert(cli_write(in, graph, strlen(graph)));
  cli_result r = RUN("grad", in, "--y", "loss", "--x", "b,u", "--x", "W", "-o", out);
  cr_assert_eq(r.status, 0, "%s", r.err);
  char b_name[256], w_name[256];
  cr_assert_eq(sscanf(r.out, "%255s\nNone\n%255s\n", b_name, w_name), 2, "output: %s", r.out);
  cr_expect(strchr(b_name, ':') && strchr(w_name, ':'), "%s", r.out);
  cr_expect(strstr(r.out, "\nNone\n"), "u is unconnected: %s", r.out);
  /* d/db = 2 (xW + b), d/dW = 2 (xW + b) x: x = [1, 2], W = [3, 1], b = [0.5, -1]
   * gives z = [3.5, 1], db = [7, 2], dW = [7, 4]. */
  cli_result v = RUN("run", out, "--feed", "x=[1,2]", "--feed", "W=[3,1]", "--feed", "b=[0.5,-1]", "--fetch", b_name,
                     "--fetch", w_name, "--format", "json");
  cr_assert_eq(v.status, 0, "%s", v.err);
  char err[128];
  js *j = js_parse(v.out, err, sizeof err);
  cr_assert(j, "%s", err);
  const js *outs = js_get(j, "outputs");
  const js *db = js_get(js_at(outs, 0), "values"), *dw = js_get(js_at(outs, 1), "values");
  cr_expect_float_eq(js_at(db, 0)->num, 7, 1e-5);
  cr_expect_float_eq(js_at(db, 1)->num, 2, 1e-5);
  cr_expect_float_eq(js_at(dw, 0)->num, 7, 1e-5);
  cr_expect_float_eq(js_at(dw, 1)->num, 4, 1e-5);
  js_free(j);
  cli_result_free(&v);
  cli_result_free(&r);
}

Test(grad, errors, .timeout = 60) {
  const char *in = cli_tmp("g.pbtxt"), *out = cli_tmp("grad.pb");
  cr_assert(cli_write(in, graph, strlen(graph)));
  cli_result r = RUN("grad", in, "--x", "W", "-o", out);
  cr_expect_eq(r.status, 2);
  cr_expect(strstr(r.err, "missing --y"), "%s", r.err);
  cli_result_free(&r);
  r = RUN("grad", in, "--y", "loss", "--x", "nope", "-o", out);
  cr_expect_eq(r.status, 1);
  cr_expect(strstr(r.err, "xs[0]: no node named 'nope'"), "%s", r.err);
  cli_result_free(&r);
  r = RUN("grad", in, "--y", "loss", "--x", "W:x", "-o", out);
  cr_expect_eq(r.status, 2);
  cli_result_free(&r);
  r = RUN("grad", "--help");
  cr_expect_eq(r.status, 0);
  cr_expect(strstr(r.out, "usage: dfexec grad"));
  cli_result_free(&r);
}
