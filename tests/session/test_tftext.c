/* test_tftext.c - the six TensorFlow test graphs of conformance/tf-text give
 * the values listed in that folder's README, on 1 and 2 threads. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eutil.h"

TestSuite(tftext, .init = eu_setup, .fini = eu_teardown, .timeout = 60);

static dfx_graph *load(const char *file) {
  char path[1024];
  const char *corpus = getenv("DFX_CONFORMANCE_DIR");
  if (!corpus || !*corpus) cr_skip_test("no conformance corpus (configure with -Dconformance_dir=DIR)");
  snprintf(path, sizeof path, "%s/tf-text/%s", corpus, file);
  dfx_status *st = dfx_status_new();
  dfx_graph *g = NULL;
  cr_assert_eq(dfx_graph_load(path, &g, st), DFX_OK, "%s", dfx_status_message(st));
  dfx_status_free(st);
  return g;
}

static void expect_all_f32(const dfx_tensor *t, float v, int ndims, const int64_t *dims) {
  cr_assert_eq(dfx_tensor_dtype(t), DFX_F32);
  cr_assert_eq(dfx_tensor_ndims(t), ndims);
  for (int i = 0; i < ndims; i++) cr_assert_eq(dfx_tensor_dim(t, i), dims[i], "dim %d", i);
  const float *d = dfx_tensor_data(t);
  for (int64_t i = 0; i < dfx_tensor_count(t); i++) cr_assert_eq(d[i], v, "element %lld", (long long)i);
}

Test(tftext, graph_while_loop) {
  dfx_graph *g = load("graph-while-loop.pbtxt");
  for (int th = 1; th <= 2; th++) {
    dfx_tensor *out[1];
    char msg[2048];
    cr_assert_eq(eu_run(g, th, "while/Exit:0", out, NULL, NULL, msg, sizeof msg), DFX_OK, "%s", msg);
    cr_assert_eq(eu_i32(out[0]), 10);
    dfx_tensor_free(out[0]);
  }
  dfx_graph_free(g);
}

Test(tftext, while_loop_growing_concat) {
  dfx_graph *g = load("while_loop.pbtxt");
  for (int th = 1; th <= 2; th++) {
    dfx_tensor *out[2];
    char msg[2048];
    cr_assert_eq(eu_run(g, th, "while/Exit:0,while/Exit_1:0", out, NULL, NULL, msg, sizeof msg), DFX_OK, "%s", msg);
    cr_assert_eq(eu_i32(out[0]), 10);
    expect_all_f32(out[1], 1.0f, 2, (const int64_t[]){2048, 2});
    dfx_tensor_free(out[0]);
    dfx_tensor_free(out[1]);
  }
  dfx_graph_free(g);
}

Test(tftext, nested_loop) {
  dfx_graph *g = load("nested_loop.pbtxt");
  for (int th = 1; th <= 2; th++) {
    dfx_tensor *out[2];
    char msg[2048];
    cr_assert_eq(eu_run(g, th, "while/Exit:0,while/Exit_1:0", out, NULL, NULL, msg, sizeof msg), DFX_OK, "%s", msg);
    cr_assert_eq(eu_i32(out[0]), 3);
    expect_all_f32(out[1], 1.0f, 3, (const int64_t[]){8, 1, 1});
    dfx_tensor_free(out[0]);
    dfx_tensor_free(out[1]);
  }
  dfx_graph_free(g);
}

Test(tftext, merge_without_loops) {
  dfx_graph *g = load("merge_without_loops.pbtxt");
  dfx_tensor *out[3];
  char msg[2048];
  cr_assert_eq(eu_run(g, 2, "cond/Merge:0,cond/Merge:1,concat:0", out, NULL, NULL, msg, sizeof msg), DFX_OK, "%s", msg);
  expect_all_f32(out[0], 1.0f, 3, (const int64_t[]){1, 2, 1});
  cr_assert_eq(eu_i32(out[1]), 1);
  expect_all_f32(out[2], 1.0f, 3, (const int64_t[]){1, 2, 2});
  for (int i = 0; i < 3; i++) dfx_tensor_free(out[i]);
  dfx_graph_free(g);
}

static void run_cf_v1(dfx_graph *g, int pred, float *got, int64_t *rows, int32_t *idx) {
  dfx_status *st = dfx_status_new();
  dfx_session *s = NULL;
  cr_assert_eq(dfx_session_new(g, NULL, &s, st), DFX_OK, "%s", dfx_status_message(st));
  float x[2] = {1, 2};
  uint8_t p = (uint8_t)pred;
  dfx_tensor *fx = dfx_tensor_new_copy(DFX_F32, (const int64_t[]){1, 2}, 2, x, sizeof x);
  dfx_tensor *fp = dfx_tensor_new_copy(DFX_BOOL, NULL, 0, &p, 1);
  dfx_port feeds[2] = {{"Placeholder", 0}, {"Placeholder_1", 0}};
  dfx_tensor *vals[2] = {fx, fp};
  dfx_port fetch[2] = {{"cond/Merge", 0}, {"cond/Merge", 1}};
  dfx_tensor *out[2];
  cr_assert_eq(dfx_session_run(s, NULL, feeds, vals, 2, fetch, out, 2, NULL, 0, st), DFX_OK, "%s",
               dfx_status_message(st));
  *rows = dfx_tensor_dim(out[0], 0);
  memcpy(got, dfx_tensor_data(out[0]), dfx_tensor_nbytes(out[0]));
  *idx = eu_i32(out[1]);
  dfx_tensor_free(out[0]);
  dfx_tensor_free(out[1]);
  dfx_tensor_free(fx);
  dfx_tensor_free(fp);
  dfx_session_free(s);
  dfx_status_free(st);
}

Test(tftext, control_flow_v1_both_branches) {
  dfx_graph *g = load("control_flow_v1.pbtxt");
  float got[8];
  int64_t rows;
  int32_t idx;
  run_cf_v1(g, 1, got, &rows, &idx);
  cr_assert_eq(rows, 1);
  cr_assert_float_eq(got[0], 0.7f, 1e-6);
  cr_assert_float_eq(got[1], 1.0f, 1e-6);
  cr_assert_eq(idx, 1);
  run_cf_v1(g, 0, got, &rows, &idx);
  cr_assert_eq(rows, 2);
  const float want[4] = {1.1f, 2.2f, 1.3f, 2.4f};
  for (int i = 0; i < 4; i++) cr_assert_float_eq(got[i], want[i], 1e-6);
  cr_assert_eq(idx, 0);
  dfx_graph_free(g);
}

Test(tftext, switch_n) {
  dfx_graph *g = load("switch_n.pbtxt");
  dfx_tensor *out[1];
  char msg[2048];
  cr_assert_eq(eu_run(g, 1, "Case/merge/_9:0", out, NULL, NULL, msg, sizeof msg), DFX_OK, "%s", msg);
  cr_assert_eq(eu_f32(out[0]), 2.0f);
  dfx_tensor_free(out[0]);
  dfx_graph_free(g);
}
