/* test_edit.c - editing a graph (graph/edit.c) and finalising it again
 * (graph/finalize.c): graphs built or changed by edits are held to the same
 * checks as imported ones, run, export, and compact removed nodes. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "../eutil.h"
#include "../gtext.h"
#include "graph.h"
#include "tensor.h"

TestSuite(edit, .init = eu_setup, .fini = eu_teardown);

/* Adds a scalar int32 Const through the edit API. */
static int add_const(dfx_graph *g, const char *name, int32_t v) {
  dfx_status st;
  int id = dfx__graph_add_node(g, name, "Const", &st);
  cr_assert_geq(id, 0, "%s", st.msg);
  dfx_attr a = {.name = "value", .kind = DFX_ATTR_TENSOR, .v.tensor = dfx__tensor_scalar(DFX_I32, &v)};
  cr_assert_eq(dfx__graph_set_attr(g, id, &a, &st), DFX_OK);
  dfx__tensor_unref(a.v.tensor);
  dfx_attr t = {.name = "dtype", .kind = DFX_ATTR_TYPE, .v.type = DFX_I32};
  cr_assert_eq(dfx__graph_set_attr(g, id, &t, &st), DFX_OK);
  return id;
}

static int add_binary(dfx_graph *g, const char *name, const char *op, int a, int b) {
  dfx_status st;
  int id = dfx__graph_add_node(g, name, op, &st);
  cr_assert_geq(id, 0, "%s", st.msg);
  cr_assert_eq(dfx__graph_add_input(g, id, a, 0, &st), DFX_OK);
  cr_assert_eq(dfx__graph_add_input(g, id, b, 0, &st), DFX_OK);
  dfx_attr t = {.name = "T", .kind = DFX_ATTR_TYPE, .v.type = DFX_I32};
  cr_assert_eq(dfx__graph_set_attr(g, id, &t, &st), DFX_OK);
  return id;
}

static int32_t run_i32(const dfx_graph *g, const char *fetch) {
  dfx_tensor *out[1] = {NULL};
  char msg[1024];
  cr_assert_eq(eu_run(g, 1, fetch, out, NULL, NULL, msg, sizeof msg), DFX_OK, "%s", msg);
  int32_t v = eu_i32(out[0]);
  dfx_tensor_free(out[0]);
  return v;
}

Test(edit, a_graph_built_by_edits_finalises_runs_and_exports) {
  dfx_graph *g = dfx__graph_new();
  int a = add_const(g, "a", 4), b = add_const(g, "b", 5);
  add_binary(g, "sum", "Add", a, b);
  cr_assert(!g->final);
  dfx_status st;
  cr_assert_eq(dfx__graph_finalize(g, &st), DFX_OK, "%s", st.msg);
  cr_assert(g->final);
  cr_assert_eq(g->nodes[2].n_out, 1);
  cr_assert_eq(g->nodes[2].out_types[0], DFX_I32, "dtypes derived at finalisation");
  cr_assert_eq(g->nodes[0].n_edges, 1, "consumer edges built");
  cr_assert_eq(run_i32(g, "sum"), 9);
  void *buf;
  size_t len;
  cr_assert_eq(dfx_graph_serialize(g, 1, &buf, &len, &st), DFX_OK);
  cr_assert(strstr(buf, "input: \"a\"") && strstr(buf, "op: \"Add\""), "%s", (char *)buf);
  dfx_free(buf);
  dfx_graph_free(g);
}

Test(edit, rewiring_and_removing_nodes_then_refinalising) {
  dfx_graph *g = eu_graph(GT_CONST_I32("a", 2, "") GT_CONST_I32("b", 3, "") GT_OP2("m", "Mul", "a", "b", "DT_INT32", "")
                              GT_OP1("out", "Identity", "m", "DT_INT32", ""));
  cr_assert_eq(run_i32(g, "out"), 6);
  dfx_status st;
  int a = dfx__graph_find(g, "a", (size_t)-1), m = dfx__graph_find(g, "m", (size_t)-1);
  /* out reads a instead of m; m and b become dead code and are removed. */
  cr_assert_eq(dfx__graph_replace_uses(g, m, 0, a, 0), 1);
  dfx__graph_remove_node(g, m);
  dfx__graph_remove_node(g, dfx__graph_find(g, "b", (size_t)-1));
  cr_assert_eq(dfx__graph_finalize(g, &st), DFX_OK, "%s", st.msg);
  cr_assert_eq(g->n_nodes, 2, "removed nodes are compacted away");
  cr_assert_eq(dfx__graph_find(g, "m", (size_t)-1), -1);
  int out = dfx__graph_find(g, "out", (size_t)-1);
  cr_assert_eq(out, 1, "ids renumbered in order");
  cr_assert_eq(g->nodes[out].in[0].node, dfx__graph_find(g, "a", (size_t)-1));
  cr_assert_eq(run_i32(g, "out"), 2);
  dfx_graph_free(g);
}

Test(edit, finalising_rejects_what_import_rejects) {
  dfx_status st;
  /* A removed node still read by a kept one. */
  dfx_graph *g = eu_graph(GT_CONST_I32("a", 2, "") GT_OP1("b", "Identity", "a", "DT_INT32", ""));
  dfx__graph_remove_node(g, dfx__graph_find(g, "a", (size_t)-1));
  cr_assert_eq(dfx__graph_finalize(g, &st), DFX_EINVAL);
  cr_assert(strstr(st.msg, "'b'") && strstr(st.msg, "removed node 'a'"), "%s", st.msg);
  cr_assert(!g->final);
  dfx_graph_free(g);
  /* A dtype mismatch introduced by an edit. */
  g = eu_graph(GT_CONST_I32("a", 2, "") GT_CONST_F32("f", 1, "") GT_OP1("b", "Identity", "a", "DT_INT32", "")
                   GT_OP1("c", "Neg", "b", "DT_INT32", ""));
  dfx__graph_set_input(g, dfx__graph_find(g, "c", (size_t)-1), 0, dfx__graph_find(g, "f", (size_t)-1), 0);
  cr_assert_eq(dfx__graph_finalize(g, &st), DFX_EINVAL);
  cr_assert(strstr(st.msg, "'c'") && strstr(st.msg, "float32"), "%s", st.msg);
  dfx_graph_free(g);
  /* Names: invalid, duplicate. */
  g = dfx__graph_new();
  cr_assert_eq(dfx__graph_add_node(g, "bad:name", "NoOp", &st), -1);
  cr_assert(strstr(st.msg, "not valid"), "%s", st.msg);
  cr_assert_geq(dfx__graph_add_node(g, "x", "NoOp", &st), 0);
  cr_assert_eq(dfx__graph_add_node(g, "x", "NoOp", &st), -1);
  cr_assert(strstr(st.msg, "duplicate"), "%s", st.msg);
  cr_assert_eq(dfx__graph_add_node(g, "y", "", &st), -1);
  dfx_graph_free(g);
}

Test(edit, names_renames_and_a_growing_index) {
  dfx_graph *g = dfx__graph_new();
  dfx_status st;
  char name[32];
  for (int i = 0; i < 1000; i++) {
    snprintf(name, sizeof name, "n%d", i);
    cr_assert_eq(dfx__graph_add_node(g, name, "NoOp", &st), i, "%s", st.msg);
  }
  for (int i = 0; i < 1000; i += 97) {
    snprintf(name, sizeof name, "n%d", i);
    cr_assert_eq(dfx__graph_find(g, name, (size_t)-1), i);
  }
  char *u = dfx__graph_unique_name(g, "n5");
  cr_assert_str_eq(u, "n5_1");
  dfx__free(u);
  u = dfx__graph_unique_name(g, "fresh");
  cr_assert_str_eq(u, "fresh");
  dfx__free(u);
  cr_assert_eq(dfx__graph_rename(g, 3, "renamed", &st), DFX_OK);
  cr_assert_eq(dfx__graph_find(g, "renamed", (size_t)-1), 3);
  cr_assert_eq(dfx__graph_find(g, "n3", (size_t)-1), -1);
  cr_assert_eq(dfx__graph_rename(g, 4, "n5", &st), DFX_EINVAL);
  cr_assert_eq(dfx__graph_finalize(g, &st), DFX_OK, "%s", st.msg);
  dfx_graph_free(g);
}

Test(edit, attrs_are_replaced_and_removed) {
  dfx_graph *g = eu_graph(GT_CONST_I32("a", 2, ""));
  dfx_status st;
  int32_t seven = 7;
  dfx_attr v = {.name = "value", .kind = DFX_ATTR_TENSOR, .v.tensor = dfx__tensor_scalar(DFX_I32, &seven)};
  cr_assert_eq(dfx__graph_set_attr(g, 0, &v, &st), DFX_OK);
  dfx__tensor_unref(v.v.tensor);
  int n_attrs = g->nodes[0].n_attrs;
  cr_assert_eq(dfx__graph_finalize(g, &st), DFX_OK, "%s", st.msg);
  cr_assert_eq(g->nodes[0].n_attrs, n_attrs, "replaced, not added");
  cr_assert_eq(run_i32(g, "a"), 7);
  dfx__graph_remove_attr(g, 0, "value");
  cr_assert_eq(dfx__graph_finalize(g, &st), DFX_EINVAL, "Const needs its value");
  cr_assert(strstr(st.msg, "value"), "%s", st.msg);
  dfx_graph_free(g);
}

/* Frames are derived again after edits: a loop whose limit is changed by
 * an edit runs to the new limit. */
Test(edit, loops_refinalise_with_their_frames) {
  dfx_graph *g = eu_graph(GT_COUNTER_LOOP("w/", 0, 3, 1, 10));
  cr_assert_eq(run_i32(g, "w/Exit"), 3);
  int frames = g->n_frames;
  dfx_status st;
  int lim = dfx__graph_find(g, "w/limit", (size_t)-1);
  cr_assert_geq(lim, 0, "the counter loop's limit constant");
  int32_t five = 5;
  dfx_attr v = {.name = "value", .kind = DFX_ATTR_TENSOR, .v.tensor = dfx__tensor_scalar(DFX_I32, &five)};
  cr_assert_eq(dfx__graph_set_attr(g, lim, &v, &st), DFX_OK);
  dfx__tensor_unref(v.v.tensor);
  cr_assert_eq(dfx__graph_finalize(g, &st), DFX_OK, "%s", st.msg);
  cr_assert_eq(g->n_frames, frames);
  cr_assert_eq(run_i32(g, "w/Exit"), 5);
  dfx_graph_free(g);
}
