/* test_builder.c - the graph builder (graph/builder*.c): nodes, scopes and
 * attrs, inference of type attrs (inputs before defaults), validation at
 * finalisation, the builder's graph being what export writes, handles
 * across node-array growth, serialisation round trips, sticky errors,
 * allocation failures, and one builder-made session run from several
 * threads. The while/cond helpers and forward references are tested in
 * test_builder_loops.c. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "butil.h"
#include "eutil.h"
#include "tensor.h"

TestSuite(builder, .init = eu_setup, .fini = eu_teardown, .timeout = 60);

/* ---- plain graphs ---- */

Test(builder, builds_runs_and_infers_type_attrs) {
  dfx_builder *b = dfx_builder_new();
  const char *a = ci32(b, "a", 40), *two = ci32(b, "two", 2);
  op2(b, "Add", "sum", a, two); /* no T given: inferred as int32 */
  cr_assert_eq(dfx_builder_node_count(b), 3);
  dfx_graph *g = finish(b);
  cr_assert_eq(fetch_i32(g, "sum"), 42);
  dfx_dtype t;
  OK(dfx_graph_node_attr_type(g, dfx_graph_node_find(g, "sum"), "T", &t, NULL));
  cr_assert_eq(t, DFX_I32);
  dfx_graph_free(g);
  /* The builder can grow and be finalised again. */
  op2(b, "Mul", "prod", "sum", "two");
  g = finish(b);
  cr_assert_eq(fetch_i32(g, "prod"), 84);
  dfx_graph_free(g);
  dfx_builder_free(b);
}

Test(builder, names_scopes_and_outputs) {
  dfx_builder *b = dfx_builder_new();
  const char *a = ci32(b, NULL, 1);
  cr_assert_str_eq(a, "Const");
  cr_assert_str_eq(ci32(b, NULL, 2), "Const_1");
  cr_assert_str_eq(dfx_builder_scope(b), "");
  cr_assert_str_eq(dfx_builder_scope(NULL), "");
  OK(dfx_builder_scope_push(b, "layer", NULL));
  OK(dfx_builder_scope_push(b, "inner", NULL));
  cr_assert_str_eq(dfx_builder_scope(b), "layer/inner/");
  cr_assert_str_eq(op2(b, "Identity", "id", a, NULL), "layer/inner/id");
  OK(dfx_builder_scope_pop(b, NULL));
  cr_assert_str_eq(dfx_builder_scope(b), "layer/");
  dfx_bnode *n;
  OK(dfx_builder_node(b, "Identity", NULL, &a, 1, &n, NULL));
  cr_assert_str_eq(nm(n), "layer/Identity");
  OK(dfx_builder_scope_pop(b, NULL));
  cr_assert_eq(dfx_builder_scope_pop(b, NULL), DFX_EINVAL);
  cr_assert_str_eq(dfx_builder_scope(b), "");
  cr_assert_eq(dfx_builder_find(b, "layer/inner/id") != NULL, 1);
  cr_assert_null(dfx_builder_find(b, "id"));
  cr_assert_str_eq(dfx_bnode_output(n, 0), "layer/Identity");
  cr_assert_str_eq(dfx_bnode_output(n, 3), "layer/Identity:3");
  cr_assert_null(dfx_bnode_output(n, -1));
  cr_assert_null(dfx_builder_pivot(b)); /* root: no pivot */
  /* Scope misuse, and the scope error is sticky. */
  cr_assert_eq(dfx_builder_scope_push(b, "a/b", NULL), DFX_EINVAL);
  char msg[2048];
  cr_assert_eq(finish_err(b, msg, sizeof msg), DFX_EINVAL);
  cr_assert(strstr(msg, "scope_pop"), "the first error is kept: %s", msg);
  dfx_builder_free(b);
}

Test(builder, control_inputs_go_after_data_inputs) {
  dfx_builder *b = dfx_builder_new();
  const char *a = ci32(b, "a", 3), *c = ci32(b, "c", 4);
  OK(dfx_builder_node(b, "NoOp", "gate", NULL, 0, NULL, NULL));
  dfx_bnode *n;
  OK(dfx_builder_node(b, "Add", "s", (const char *[]){"^gate", a}, 2, &n, NULL));
  OK(dfx_bnode_add_input(n, c));
  OK(dfx_bnode_set_device(n, "/device:CPU:0"));
  dfx_graph *g = finish(b);
  int s = dfx_graph_node_find(g, "s");
  cr_assert_eq(dfx_graph_node_num_inputs(g, s), 2);
  cr_assert_eq(dfx_graph_node_num_control_inputs(g, s), 1);
  cr_assert_str_eq(dfx_graph_node_input(g, s, 1).node, "c");
  cr_assert_eq(fetch_i32(g, "s"), 7);
  dfx_graph_free(g);
  dfx_builder_free(b);
}

Test(builder, every_attr_kind_round_trips) {
  dfx_builder *b = dfx_builder_new();
  dfx_bnode *n;
  /* An op dfexec does not know keeps any attrs; finalise would refuse it,
   * so read the attrs back from the serialised text instead. */
  OK(dfx_builder_node(b, "NoOp", "n", NULL, 0, &n, NULL));
  OK(dfx_bnode_attr_int(n, "i", -5));
  OK(dfx_bnode_attr_float(n, "f", 0.5f));
  OK(dfx_bnode_attr_bool(n, "b", 1));
  OK(dfx_bnode_attr_string(n, "s", "hi"));
  OK(dfx_bnode_attr_bytes(n, "raw", "a\0b", 3));
  OK(dfx_bnode_attr_type(n, "t", DFX_F64));
  OK(dfx_bnode_attr_shape(n, "shape", (int64_t[]){2, -1}, 2));
  OK(dfx_bnode_attr_shape(n, "unknown", NULL, -1));
  OK(dfx_bnode_attr_ints(n, "li", (int64_t[]){1, 2, 3}, 3));
  OK(dfx_bnode_attr_floats(n, "lf", (float[]){1.5f}, 1));
  OK(dfx_bnode_attr_types(n, "lt", (dfx_dtype[]){DFX_I32, DFX_BOOL}, 2));
  OK(dfx_bnode_attr_int(n, "i", 7)); /* replaces */
  dfx_tensor *str = dfx_tensor_new(DFX_STRING, (int64_t[]){2}, 1);
  OK(dfx_tensor_set_string(str, 1, "xyz", 3));
  OK(dfx_bnode_attr_tensor(n, "ts", str));
  dfx_tensor_free(str);
  dfx_tensor *u8 = dfx_tensor_new_copy(DFX_U8, (int64_t[]){3}, 1, (uint8_t[]){1, 2, 255}, 3);
  OK(dfx_bnode_attr_tensor(n, "tu8", u8));
  dfx_tensor_free(u8);
  dfx_graph *g = finish(b); /* NoOp ignores unknown attrs at import */
  int k = dfx_graph_node_find(g, "n");
  int64_t i;
  float f;
  int bo, rank, cnt;
  const char *s;
  size_t len;
  dfx_dtype t;
  const int64_t *dims, *li;
  const dfx_dtype *lt;
  OK(dfx_graph_node_attr_int(g, k, "i", &i, NULL));
  cr_assert_eq(i, 7);
  OK(dfx_graph_node_attr_float(g, k, "f", &f, NULL));
  cr_assert_eq(f, 0.5f);
  OK(dfx_graph_node_attr_bool(g, k, "b", &bo, NULL));
  cr_assert_eq(bo, 1);
  OK(dfx_graph_node_attr_string(g, k, "s", &s, &len, NULL));
  cr_assert_str_eq(s, "hi");
  OK(dfx_graph_node_attr_string(g, k, "raw", &s, &len, NULL));
  cr_assert_eq(len, 3);
  cr_assert_eq(memcmp(s, "a\0b", 3), 0);
  OK(dfx_graph_node_attr_type(g, k, "t", &t, NULL));
  cr_assert_eq(t, DFX_F64);
  OK(dfx_graph_node_attr_shape(g, k, "shape", &rank, &dims, NULL));
  cr_assert_eq(rank, 2);
  cr_assert_eq(dims[1], -1);
  OK(dfx_graph_node_attr_shape(g, k, "unknown", &rank, &dims, NULL));
  cr_assert_eq(rank, -1);
  OK(dfx_graph_node_attr_ints(g, k, "li", &li, &cnt, NULL));
  cr_assert_eq(cnt, 3);
  cr_assert_eq(li[2], 3);
  OK(dfx_graph_node_attr_types(g, k, "lt", &lt, &cnt, NULL));
  cr_assert_eq(lt[1], DFX_BOOL);
  cr_assert_str_eq(dfx_graph_node_attr_kind(g, k, "lf"), "list(float)");
  dfx_tensor *tt;
  OK(dfx_graph_node_attr_tensor(g, k, "ts", &tt, NULL));
  cr_assert_eq(dfx_tensor_count(tt), 2);
  cr_assert_eq(memcmp(dfx_tensor_string(tt, 1, &len), "xyz", 3), 0);
  dfx_tensor_free(tt);
  OK(dfx_graph_node_attr_tensor(g, k, "tu8", &tt, NULL));
  cr_assert_eq(((uint8_t *)dfx_tensor_data(tt))[2], 255);
  dfx_tensor_free(tt);
  dfx_graph_free(g);
  dfx_builder_free(b);
}

Test(builder, attr_setter_misuse_is_sticky) {
  dfx_builder *b = dfx_builder_new();
  dfx_bnode *n;
  OK(dfx_builder_node(b, "NoOp", "n", NULL, 0, &n, NULL));
  cr_assert_eq(dfx_bnode_attr_int(NULL, "i", 1), DFX_EINVAL);
  cr_assert_eq(dfx_bnode_attr_type(n, "t", (dfx_dtype)77), DFX_EINVAL);
  cr_assert_eq(dfx_bnode_attr_shape(n, "s", (int64_t[]){-3}, 1), DFX_EINVAL);
  cr_assert_eq(dfx_bnode_attr_ints(n, "l", NULL, 2), DFX_EINVAL);
  cr_assert_eq(dfx_bnode_attr_string(n, NULL, "x"), DFX_EINVAL);
  cr_assert_eq(dfx_bnode_attr_tensor(n, "t", NULL), DFX_EINVAL);
  cr_assert_eq(dfx_bnode_add_input(n, ""), DFX_EINVAL);
  cr_assert_eq(dfx_bnode_add_input(NULL, "x"), DFX_EINVAL);
  char msg[2048];
  cr_assert_eq(finish_err(b, msg, sizeof msg), DFX_EINVAL);
  cr_assert(strstr(msg, "invalid dtype") && strstr(msg, "'n'"), "the first error is kept: %s", msg);
  void *buf = (void *)msg;
  size_t len = 1;
  cr_assert_eq(dfx_builder_serialize(b, 1, &buf, &len, NULL), DFX_EINVAL);
  cr_assert_null(buf);
  cr_assert_eq(len, 0);
  dfx_builder_free(b);
}

Test(builder, node_misuse_fails_at_once) {
  dfx_status *st = dfx_status_new();
  dfx_bnode *n = (dfx_bnode *)st;
  cr_assert_eq(dfx_builder_node(NULL, "NoOp", "x", NULL, 0, &n, st), DFX_EINVAL);
  cr_assert_null(n);
  dfx_builder *b = dfx_builder_new();
  cr_assert_eq(dfx_builder_node(b, NULL, "x", NULL, 0, &n, st), DFX_EINVAL);
  cr_assert_eq(dfx_builder_node(b, "NoOp", "x", NULL, 2, &n, st), DFX_EINVAL);
  cr_assert_eq(dfx_builder_node(b, "Identity", "x", (const char *[]){NULL}, 1, &n, st), DFX_EINVAL);
  cr_assert_eq(dfx_builder_node(b, "Identity", "x", (const char *[]){"^"}, 1, &n, st), DFX_EINVAL);
  cr_assert_eq(dfx_builder_node(b, "NoOp", "a:1", NULL, 0, &n, st), DFX_EINVAL);
  cr_assert_eq(dfx_builder_node(b, "NoOp", "", NULL, 0, &n, st), DFX_EINVAL);
  /* TensorFlow's name rule is checked when the node is added. */
  cr_assert_eq(dfx_builder_node(b, "NoOp", "-x", NULL, 0, &n, st), DFX_EINVAL);
  cr_assert(strstr(dfx_status_message(st), "not valid"), "%s", dfx_status_message(st));
  dfx_builder_free(b);
  b = dfx_builder_new();
  OK(dfx_builder_node(b, "NoOp", "x", NULL, 0, NULL, st));
  cr_assert_eq(dfx_builder_node(b, "NoOp", "x", NULL, 0, &n, st), DFX_EINVAL);
  cr_assert(strstr(dfx_status_message(st), "already used"), "%s", dfx_status_message(st));
  cr_assert_null(n);
  cr_assert_eq(dfx_builder_placeholder(b, "p", (dfx_dtype)0, NULL, 0, &n, st), DFX_EINVAL);
  cr_assert_eq(dfx_builder_const(b, "c", NULL, &n, st), DFX_EINVAL);
  cr_assert_eq(dfx_builder_const_i32(NULL, "c", 1, &n, st), DFX_EINVAL);
  cr_assert_eq(dfx_builder_to_graph(b, NULL, st), DFX_EINVAL);
  cr_assert_eq(dfx_builder_to_graph(NULL, (dfx_graph **)&n, st), DFX_EINVAL);
  cr_assert_eq(dfx_builder_serialize(b, 0, NULL, NULL, st), DFX_EINVAL);
  cr_assert_eq(dfx_builder_save(b, NULL, st), DFX_EINVAL);
  cr_assert_eq(dfx_builder_node_count(NULL), 0);
  cr_assert_str_eq(dfx_bnode_name(NULL), "");
  cr_assert_null(dfx_builder_find(b, NULL));
  dfx_builder_free(b);
  dfx_status_free(st);
}

/* Errors found only by the importer, at finalisation. */
Test(builder, finalisation_validates_against_op_signatures) {
  char msg[2048];
  struct {
    const char *what;
    dfx_code code;
    const char *needle;
  } cases[] = {
      {"unknown op's input count", DFX_EINVAL, "expects 2 data inputs"},
      {"unknown input", DFX_EINVAL, "ghost"},
      {"input count", DFX_EINVAL, "expects 2 data inputs"},
      {"dtype mismatch", DFX_EINVAL, "float32"},
      {"bad output index", DFX_EINVAL, "a:3"},
      {"missing attr", DFX_EINVAL, "k"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    dfx_builder *b = dfx_builder_new();
    const char *a = ci32(b, "a", 1);
    dfx_bnode *f;
    OK(dfx_builder_const_f32(b, "f", 1, &f, NULL));
    switch (i) {
      case 0: OK(dfx_builder_node(b, "Sub", "k", &a, 1, NULL, NULL)); break;
      case 1: op2(b, "Add", "k", a, "ghost"); break;
      case 2: OK(dfx_builder_node(b, "Add", "k", &a, 1, NULL, NULL)); break;
      case 3: op2(b, "Add", "k", a, nm(f)); break;
      case 4: op2(b, "Add", "k", a, "a:3"); break;
      case 5: OK(dfx_builder_node(b, "Const", "k", NULL, 0, NULL, NULL)); break; /* no dtype/value */
    }
    cr_assert_eq(finish_err(b, msg, sizeof msg), cases[i].code, "%s: %s", cases[i].what, msg);
    cr_assert(strstr(msg, cases[i].needle), "%s: %s", cases[i].what, msg);
    void *buf;
    size_t len;
    cr_assert_eq(dfx_builder_serialize(b, 0, &buf, &len, NULL), cases[i].code, "%s", cases[i].what);
    dfx_builder_free(b);
  }
}

/* ---- type inference ---- */

static dfx_dtype attr_t(const dfx_graph *g, const char *node, const char *attr) {
  dfx_dtype t = DFX_INVALID;
  OK(dfx_graph_node_attr_type(g, dfx_graph_node_find(g, node), attr, &t, NULL));
  return t;
}

Test(builder, type_attrs_come_from_inputs_before_defaults) {
  dfx_builder *b = dfx_builder_new();
  dfx_tensor *xt = dfx_tensor_new_copy(DFX_F32, (int64_t[]){2, 2}, 2, (float[]){1, 2, 3, 4}, 16);
  OK(dfx_builder_const(b, "x", xt, NULL, NULL));
  dfx_tensor_free(xt);
  OK(dfx_builder_const_i64(b, "axis", 1, NULL, NULL));
  OK(dfx_builder_const_i64(b, "lo", 2, NULL, NULL));
  OK(dfx_builder_const_i64(b, "hi", 7, NULL, NULL));
  OK(dfx_builder_const_i64(b, "step", 2, NULL, NULL));
  op2(b, "Sum", "sum", "x", "axis");      /* Tidx = int32 by default; the int64 axis decides */
  OK(dfx_builder_node(b, "Range", "range", (const char *[]){"lo", "hi", "step"}, 3, NULL, NULL));
  op2(b, "Size", "size", "x", NULL);      /* out_type: no input uses it, so its default */
  OK(dfx_builder_node(b, "MyCustomOp", "custom", NULL, 0, NULL, NULL));
  op2(b, "Sum", "sum_custom", "x", "custom"); /* an op dfexec does not know says nothing */
  OK(dfx_builder_node(b, "AddN", "triple", (const char *[]){"x", "x", "x"}, 3, NULL, NULL));
  dfx_graph *g = finish(b);
  cr_assert_eq(attr_t(g, "sum", "Tidx"), DFX_I64);
  cr_assert_eq(attr_t(g, "sum", "T"), DFX_F32);
  cr_assert_eq(attr_t(g, "range", "Tidx"), DFX_I64);
  cr_assert_eq(attr_t(g, "size", "out_type"), DFX_I32);
  cr_assert_eq(attr_t(g, "sum_custom", "Tidx"), DFX_I32);
  int64_t n;
  OK(dfx_graph_node_attr_int(g, dfx_graph_node_find(g, "triple"), "N", &n, NULL));
  cr_assert_eq(n, 3);
  dfx_tensor *out[2];
  char msg[2048];
  cr_assert_eq(eu_run(g, 2, "sum,range", out, NULL, NULL, msg, sizeof msg), DFX_OK, "%s", msg);
  cr_assert_eq(((float *)dfx_tensor_data(out[0]))[1], 7.0f);
  cr_assert_eq(dfx_tensor_dtype(out[1]), DFX_I64);
  cr_assert_eq(dfx_tensor_count(out[1]), 3);
  cr_assert_eq(((int64_t *)dfx_tensor_data(out[1]))[2], 6);
  dfx_tensor_free(out[0]);
  dfx_tensor_free(out[1]);
  dfx_graph_free(g);
  /* An attr the node sets is never overridden by inference. */
  dfx_bnode *bad;
  OK(dfx_builder_node(b, "Sum", "bad", (const char *[]){"x", "axis"}, 2, &bad, NULL));
  OK(dfx_bnode_attr_type(bad, "Tidx", DFX_I32));
  cr_assert_eq(finish_err(b, msg, sizeof msg), DFX_EINVAL);
  cr_assert(strstr(msg, "'bad'") && strstr(msg, "int64"), "%s", msg);
  dfx_builder_free(b);
}

/* ---- the builder's graph ---- */

/* What the builder hands out, what it serialises and what import makes of
 * that are one graph: the same nodes with the same attrs, defaults and
 * inferred attrs included. */
Test(builder, graph_is_what_export_writes) {
  dfx_builder *b = small_loop_builder();
  dfx_bnode *n;
  OK(dfx_builder_node(b, "Sum", "total", (const char *[]){"loop/Exit", "zero"}, 2, NULL, NULL));
  OK(dfx_builder_node(b, "NoOp", "attrs", NULL, 0, &n, NULL));
  OK(dfx_bnode_attr_bytes(n, "raw", "a\0b", 3));
  OK(dfx_bnode_attr_shape(n, "unknown", NULL, -1));
  OK(dfx_bnode_attr_ints(n, "empty", NULL, 0));
  OK(dfx_bnode_attr_types(n, "lt", (dfx_dtype[]){DFX_I64, DFX_BOOL}, 2));
  dfx_tensor *str = dfx_tensor_new(DFX_STRING, (int64_t[]){2}, 1);
  OK(dfx_tensor_set_string(str, 0, "xyz", 3));
  OK(dfx_bnode_attr_tensor(n, "ts", str));
  dfx_tensor_free(str);
  OK(dfx_bnode_set_device(n, "/device:CPU:0"));
  dfx_graph *g = finish(b);
  for (int text = 0; text < 2; text++) {
    void *from_b, *from_g, *again;
    size_t lb, lg, la;
    dfx_graph *back;
    OK(dfx_builder_serialize(b, text, &from_b, &lb, NULL));
    OK(dfx_graph_serialize(g, text, &from_g, &lg, NULL));
    OK(dfx_graph_import(from_b, lb, &back, NULL));
    OK(dfx_graph_serialize(back, text, &again, &la, NULL));
    cr_assert(lb == lg && memcmp(from_b, from_g, lb) == 0, "text %d: builder and its graph differ", text);
    cr_assert(lb == la && memcmp(from_b, again, lb) == 0, "text %d: import changed the graph", text);
    if (text) cr_assert(strstr(from_b, "keep_dims"), "defaults are written: %s", (char *)from_b);
    for (int i = 0; i < dfx_graph_node_count(g); i++)
      cr_assert_eq(dfx_graph_node_num_attrs(back, i), dfx_graph_node_num_attrs(g, i), "%s", dfx_graph_node_name(g, i));
    dfx_graph_free(back);
    dfx_free(from_b);
    dfx_free(from_g);
    dfx_free(again);
  }
  cr_assert_str_eq(dfx_graph_node_attr_kind(g, dfx_graph_node_find(g, "attrs"), "empty"), "list()");
  dfx_graph_free(g);
  dfx_builder_free(b);
}

Test(builder, handles_outlive_node_array_growth) {
  dfx_builder *b = dfx_builder_new();
  dfx_bnode *first, *last = NULL;
  OK(dfx_builder_const_i32(b, "first", 1, &first, NULL));
  const char *name = dfx_bnode_name(first), *prev = name;
  for (int i = 0; i < 1000; i++) {
    OK(dfx_builder_node(b, "Identity", NULL, &prev, 1, &last, NULL));
    prev = nm(last);
  }
  cr_assert_eq(dfx_builder_node_count(b), 1001);
  cr_assert_eq(dfx_builder_find(b, "first"), first);
  cr_assert_str_eq(name, "first");
  cr_assert_str_eq(dfx_bnode_output(first, 2), "first:2");
  OK(dfx_bnode_attr_int(first, "_mark", 7));
  OK(dfx_bnode_add_input(last, "^first"));
  dfx_graph *g = finish(b);
  int64_t mark;
  OK(dfx_graph_node_attr_int(g, dfx_graph_node_find(g, "first"), "_mark", &mark, NULL));
  cr_assert_eq(mark, 7);
  cr_assert_eq(dfx_graph_node_control_input(g, dfx_graph_node_find(g, prev), 0), 0);
  cr_assert_eq(fetch_i32(g, prev), 1);
  dfx_graph_free(g);
  dfx_builder_free(b);
}

/* ---- serialisation ---- */


Test(builder, serialize_text_and_binary_round_trip) {
  dfx_builder *b = small_loop_builder();
  dfx_status *st = dfx_status_new();
  void *txt, *bin, *txt2;
  size_t tlen, blen, tlen2;
  OK(dfx_builder_serialize(b, 1, &txt, &tlen, st));
  OK(dfx_builder_serialize(b, 0, &bin, &blen, st));
  cr_assert_eq(strlen(txt), tlen);
  cr_assert(strstr(txt, "op: \"LoopCond\""), "%s", (char *)txt);
  dfx_graph *gt, *gb;
  OK(dfx_graph_import(txt, tlen, &gt, st));
  OK(dfx_graph_import(bin, blen, &gb, st));
  cr_assert_eq(dfx_graph_node_count(gt), dfx_builder_node_count(b));
  cr_assert_eq(dfx_graph_node_count(gb), dfx_builder_node_count(b));
  cr_assert_eq(fetch_i32(gt, "loop/Exit"), 5);
  cr_assert_eq(fetch_i32(gb, "loop/Exit"), 5);
  /* Printing is deterministic. */
  OK(dfx_builder_serialize(b, 1, &txt2, &tlen2, st));
  cr_assert_eq(tlen, tlen2);
  cr_assert_eq(memcmp(txt, txt2, tlen), 0);
  /* Save and load by file name (text for .pbtxt, binary for .pb). */
  char path[256];
  snprintf(path, sizeof path, "/tmp/dfx_builder_test_%d.pb", (int)getpid());
  OK(dfx_builder_save(b, path, st));
  dfx_graph *gf;
  OK(dfx_graph_load(path, &gf, st));
  cr_assert_eq(fetch_i32(gf, "loop/Exit"), 5);
  remove(path);
  cr_assert_eq(dfx_builder_save(b, "/nonexistent/dir/x.pb", st), DFX_EIO);
  dfx_graph_free(gf);
  dfx_free(txt);
  dfx_free(txt2);
  dfx_free(bin);
  dfx_graph_free(gt);
  dfx_graph_free(gb);
  dfx_builder_free(b);
  dfx_status_free(st);
}

/* ---- allocation failures ---- */

static dfx_code build_and_finish(void) {
  dfx_builder *b = dfx_builder_new();
  if (!b) return DFX_ENOMEM;
  dfx_bnode *z, *l, *n;
  const char *ex[1];
  dfx_graph *g = NULL;
  dfx_code c;
  void *txt = NULL, *bin = NULL;
  size_t len;
  if ((c = dfx_builder_const_i32(b, "z", 0, &z, NULL)) || (c = dfx_builder_const_i32(b, "l", 3, &l, NULL))) goto done;
  const char *zn = dfx_bnode_name(z);
  loop_ud u = {dfx_bnode_name(l), 1, NULL};
  if ((c = dfx_builder_scope_push(b, "s", NULL)) ||
      (c = dfx_builder_while(b, NULL, &zn, 1, 1, count_cond, count_body, &u, ex, NULL)) ||
      (c = dfx_builder_scope_pop(b, NULL)))
    goto done;
  /* A forward reference, an inferred defaulted attr and attrs of several kinds. */
  if ((c = dfx_builder_node(b, "Sum", "sum", (const char *[]){ex[0], "axis"}, 2, &n, NULL)) ||
      (c = dfx_builder_const_i64(b, "axis", 0, NULL, NULL)) || (c = dfx_bnode_attr_bool(n, "keep_dims", 1)) ||
      (c = dfx_bnode_attr_string(n, "_note", "x")) || (c = dfx_bnode_attr_shape(n, "_s", (int64_t[]){2}, 1)) ||
      (c = dfx_bnode_attr_types(n, "_t", (dfx_dtype[]){DFX_F32}, 1)))
    goto done;
  if ((c = dfx_builder_to_graph(b, &g, NULL)) || (c = dfx_builder_serialize(b, 1, &txt, &len, NULL))) goto done;
  c = dfx_builder_serialize(b, 0, &bin, &len, NULL);
done:
  dfx_free(bin);
  dfx_free(txt);
  dfx_graph_free(g);
  dfx_builder_free(b);
  return c;
}

Test(builder, allocation_failures_are_clean, .timeout = 120) {
  dfx_code c = DFX_ENOMEM;
  long long n;
  for (n = 1; c != DFX_OK && n < 20000; n++) {
    eu_alloc.fail_at = eu_alloc.n_allocs + n;
    c = build_and_finish();
    dfx__tensor_cache_flush(); /* freed tensor structs wait in a per-thread cache */
    cr_assert(c == DFX_OK || c == DFX_ENOMEM, "fail_at %lld: %s", n, dfx_code_name(c));
    cr_assert_eq(eu_alloc.live_blocks, 0, "fail_at %lld leaked %lld blocks", n, eu_alloc.live_blocks);
  }
  eu_alloc.fail_at = 0;
  cr_assert_eq(c, DFX_OK, "never succeeded");
  cr_assert_gt(n, 10);
}

/* ---- one builder-made session, many threads ---- */

typedef struct run_arg {
  dfx_session *s;
  int id;
  int bad;
} run_arg;

static void *runner(void *p) {
  run_arg *a = p;
  dfx_status *st = dfx_status_new();
  for (int k = 0; k < 50; k++) {
    int32_t lim = a->id * 7 + k % 5;
    dfx_tensor *f = dfx_tensor_new_copy(DFX_I32, NULL, 0, &lim, 4), *out[1] = {NULL};
    dfx_port feed = {"lim", 0}, fetch = {"loop/Exit_1", 0};
    dfx_code c = dfx_session_run(a->s, NULL, &feed, &f, 1, &fetch, out, 1, NULL, 0, st);
    /* acc = 0 + 1 + ... + (lim - 1) */
    if (c != DFX_OK || *(int32_t *)dfx_tensor_data(out[0]) != lim * (lim - 1) / 2) a->bad++;
    dfx_tensor_free(out[0]);
    dfx_tensor_free(f);
  }
  dfx_status_free(st);
  dfx__tensor_cache_flush();
  return NULL;
}

Test(builder, concurrent_runs_of_a_builder_made_session, .timeout = 120) {
  dfx_builder *b = dfx_builder_new();
  dfx_bnode *lim;
  OK(dfx_builder_placeholder(b, "lim", DFX_I32, NULL, 0, &lim, NULL));
  const char *vars[2] = {ci32(b, "i0", 0), ci32(b, "acc0", 0)}, *ex[2];
  loop_ud u = {dfx_bnode_name(lim), 1, NULL};
  OK(dfx_builder_while(b, "loop", vars, 2, 4, count_cond, count_body, &u, ex, NULL));
  dfx_graph *g = finish(b);
  dfx_builder_free(b); /* graphs do not depend on their builder */
  dfx_session *s;
  dfx_session_options o = {.n_threads = 2};
  OK(dfx_session_new(g, &o, &s, NULL));
  enum { N = 6 };
  pthread_t th[N];
  run_arg args[N];
  for (int i = 0; i < N; i++) {
    args[i] = (run_arg){s, i, 0};
    cr_assert_eq(pthread_create(&th[i], NULL, runner, &args[i]), 0);
  }
  for (int i = 0; i < N; i++) {
    pthread_join(th[i], NULL);
    cr_assert_eq(args[i].bad, 0, "thread %d had %d wrong results", i, args[i].bad);
  }
  dfx_session_free(s);
  dfx_graph_free(g);
}
