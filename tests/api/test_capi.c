/* test_capi.c - the public graph calls of core/capi_graph.c and misuse of
 * every public entry point: NULL arguments, unknown names, wrong dtypes,
 * _free(NULL). Each test ends with a leak check (eu_teardown). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "eutil.h"
#include "gtext.h"

TestSuite(capi, .init = eu_setup, .fini = eu_teardown, .timeout = 60);

/* x: f32 [2,?]; y: i32 with a default; a loop over i; z = x * 2. */
static const char *G = "node { name: \"x\" op: \"Placeholder\"" GT_TYPE("dtype", "DT_FLOAT")
                       " attr { key: \"shape\" value { shape { dim { size: 2 } dim { size: -1 } } } } }\n"
                       GT_CONST_I32("seven", 7, "")
                       "node { name: \"y\" op: \"PlaceholderWithDefault\" input: \"seven\"" GT_TYPE("dtype", "DT_INT32")
                       " attr { key: \"shape\" value { shape { } } } }\n"
                       GT_CONST_F32("two", 2, "") GT_OP2("z", "Mul", "x", "two", "DT_FLOAT", "")
                       GT_OP2("w", "Add", "y", "seven", "DT_INT32", "")
                       "node { name: \"s\" op: \"Squeeze\" input: \"x\"" GT_TYPE("T", "DT_FLOAT")
                       " attr { key: \"squeeze_dims\" value { list { i: 0 i: 1 } } } }\n"
                       GT_COUNTER_LOOP("w/", 0, 5, 1, 10);

Test(capi, version_matches_header_macros) {
  char want[32];
  snprintf(want, sizeof want, "%d.%d.%d", DFX_VERSION_MAJOR, DFX_VERSION_MINOR, DFX_VERSION_PATCH);
  cr_assert_str_eq(dfx_version(), want);
}

Test(capi, free_functions_accept_null) {
  dfx_free(NULL);
  dfx_graph_free(NULL);
  dfx_session_free(NULL);
  dfx_tensor_free(NULL);
  dfx_status_free(NULL);
  dfx_builder_free(NULL);
  dfx_session_cancel(NULL);
}

Test(capi, placeholders_list_dtype_shape_and_default) {
  dfx_graph *g = eu_graph(G);
  cr_assert_eq(dfx_graph_placeholders(g, NULL, 0), 2);
  dfx_placeholder ph[4];
  cr_assert_eq(dfx_graph_placeholders(g, ph, 1), 2); /* fills only cap entries */
  cr_assert_str_eq(ph[0].name, "x");
  cr_assert_eq(dfx_graph_placeholders(g, ph, 4), 2);
  cr_assert_eq(ph[0].dtype, DFX_F32);
  cr_assert_eq(ph[0].rank, 2);
  cr_assert_eq(ph[0].dims[0], 2);
  cr_assert_eq(ph[0].dims[1], -1);
  cr_assert_eq(ph[0].has_default, 0);
  cr_assert_eq(ph[0].node, dfx_graph_node_find(g, "x"));
  cr_assert_str_eq(ph[1].name, "y");
  cr_assert_eq(ph[1].dtype, DFX_I32);
  cr_assert_eq(ph[1].rank, 0);
  cr_assert_null(ph[1].dims);
  cr_assert_eq(ph[1].has_default, 1);
  cr_assert_eq(dfx_graph_placeholders(NULL, ph, 4), DFX_EINVAL);
  cr_assert_eq(dfx_graph_placeholders(g, NULL, 3), DFX_EINVAL);
  dfx_graph_free(g);
}

Test(capi, attr_reads_by_kind) {
  dfx_graph *g = eu_graph(G);
  dfx_status *st = dfx_status_new();
  int enter = dfx_graph_node_find(g, "w/Enter"), x = dfx_graph_node_find(g, "x");
  int seven = dfx_graph_node_find(g, "seven"), s = dfx_graph_node_find(g, "s");
  int64_t i64;
  int b;
  const char *str;
  size_t len;
  dfx_dtype dt;
  cr_assert_eq(dfx_graph_node_attr_int(g, enter, "parallel_iterations", &i64, st), DFX_OK, "%s", dfx_status_message(st));
  cr_assert_eq(i64, 10);
  cr_assert_eq(dfx_graph_node_attr_bool(g, enter, "is_constant", &b, st), DFX_OK);
  cr_assert_eq(b, 0);
  cr_assert_eq(dfx_graph_node_attr_string(g, enter, "frame_name", &str, &len, st), DFX_OK);
  cr_assert_str_eq(str, "w/while");
  cr_assert_eq(len, 7);
  cr_assert_eq(dfx_graph_node_attr_type(g, enter, "T", &dt, st), DFX_OK);
  cr_assert_eq(dt, DFX_I32);
  cr_assert_str_eq(dfx_graph_node_attr_kind(g, enter, "T"), "type");
  cr_assert_str_eq(dfx_graph_node_attr_kind(g, s, "squeeze_dims"), "list(int)");
  cr_assert_null(dfx_graph_node_attr_kind(g, enter, "nope"));
  int rank;
  const int64_t *dims;
  cr_assert_eq(dfx_graph_node_attr_shape(g, x, "shape", &rank, &dims, st), DFX_OK);
  cr_assert_eq(rank, 2);
  cr_assert_eq(dims[1], -1);
  dfx_tensor *t;
  cr_assert_eq(dfx_graph_node_attr_tensor(g, seven, "value", &t, st), DFX_OK);
  cr_assert_eq(*(int32_t *)dfx_tensor_data(t), 7);
  dfx_tensor_free(t); /* a new reference: the graph keeps its own */
  const int64_t *iv;
  int n;
  cr_assert_eq(dfx_graph_node_attr_ints(g, s, "squeeze_dims", &iv, &n, st), DFX_OK);
  cr_assert_eq(n, 2);
  cr_assert_eq(iv[1], 1);
  /* Names by index; defaults added at import are listed. */
  int na = dfx_graph_node_num_attrs(g, enter), found = 0;
  for (int k = 0; k < na; k++) found += strcmp(dfx_graph_node_attr_name(g, enter, k), "frame_name") == 0;
  cr_assert_eq(found, 1);
  cr_assert_null(dfx_graph_node_attr_name(g, enter, na));
  cr_assert_eq(dfx_graph_node_num_attrs(g, -1), 0);
  /* Misuse. */
  float f;
  cr_assert_eq(dfx_graph_node_attr_float(g, enter, "T", &f, st), DFX_EINVAL);
  cr_assert(strstr(dfx_status_message(st), "type"), "%s", dfx_status_message(st));
  cr_assert_eq(dfx_graph_node_attr_int(g, enter, "nope", &i64, st), DFX_ENOTFOUND);
  cr_assert(strstr(dfx_status_message(st), "nope"), "%s", dfx_status_message(st));
  cr_assert_eq(dfx_graph_node_attr_int(g, 9999, "T", &i64, st), DFX_EINVAL);
  cr_assert_eq(dfx_graph_node_attr_int(NULL, 0, "T", &i64, st), DFX_EINVAL);
  cr_assert_eq(dfx_graph_node_attr_int(g, enter, NULL, &i64, st), DFX_EINVAL);
  cr_assert_eq(dfx_graph_node_attr_int(g, enter, "T", NULL, NULL), DFX_EINVAL);
  const dfx_dtype *tv;
  cr_assert_eq(dfx_graph_node_attr_types(g, s, "squeeze_dims", &tv, &n, NULL), DFX_EINVAL);
  cr_assert_eq(dfx_graph_node_attr_tensor(g, enter, "T", &t, NULL), DFX_EINVAL);
  cr_assert_null(t);
  dfx_status_free(st);
  dfx_graph_free(g);
}

static const char *REMAP_G = GT_PLACEHOLDER("a", "DT_INT32") GT_PLACEHOLDER("b", "DT_INT32")
    GT_CONST_I32("ten", 10, "") GT_OP2("sum", "Add", "a", "ten", "DT_INT32", "")
    GT_OP1("twice", "Identity", "a", "DT_INT32", "") GT_NOOP("gate", "") GT_NOOP("after", GT_INPUT("^gate"))
    GT_OP2("wrap", "Add", "a", "a", "DT_INT32", "") GT_COUNTER_LOOP("w/", 0, 3, 1, 4);

static int32_t run_i32(const dfx_graph *g, const char *fetch, const char *feed, int32_t v) {
  dfx_tensor *f = dfx_tensor_new_copy(DFX_I32, NULL, 0, &v, 4), *out[1];
  char msg[2048];
  cr_assert_eq(eu_run(g, 1, fetch, out, feed, f, msg, sizeof msg), DFX_OK, "%s", msg);
  int32_t r = eu_i32(out[0]);
  dfx_tensor_free(out[0]);
  dfx_tensor_free(f);
  return r;
}

Test(capi, import_ex_prefix_renames_nodes_inputs_and_frames) {
  dfx_status *st = dfx_status_new();
  dfx_import_options o = {.prefix = "m"};
  dfx_graph *g;
  cr_assert_eq(dfx_graph_import_ex(REMAP_G, strlen(REMAP_G), &o, &g, st), DFX_OK, "%s", dfx_status_message(st));
  cr_assert_eq(dfx_graph_node_find(g, "sum"), -1);
  int sum = dfx_graph_node_find(g, "m/sum");
  cr_assert_geq(sum, 0);
  cr_assert_str_eq(dfx_graph_node_input(g, sum, 0).node, "m/a");
  int after = dfx_graph_node_find(g, "m/after");
  cr_assert_eq(dfx_graph_node_control_input(g, after, 0), dfx_graph_node_find(g, "m/gate"));
  cr_assert_str_eq(dfx_graph_node_frame(g, dfx_graph_node_find(g, "m/w/add")), "m/w/while");
  cr_assert_eq(run_i32(g, "m/sum", "m/a", 5), 15);
  cr_assert_eq(run_i32(g, "m/w/Exit", "m/a", 0), 3);
  dfx_graph_free(g);
  /* NULL options is plain import. */
  cr_assert_eq(dfx_graph_import_ex(REMAP_G, strlen(REMAP_G), NULL, &g, st), DFX_OK);
  cr_assert_geq(dfx_graph_node_find(g, "sum"), 0);
  dfx_graph_free(g);
  dfx_status_free(st);
}

Test(capi, import_ex_input_map_replaces_tensors) {
  dfx_status *st = dfx_status_new();
  /* Every consumer of a reads b instead; after's control input moves from
   * gate to twice. */
  dfx_input_map m[] = {{"a:0", "b"}, {"^gate", "^twice"}};
  dfx_import_options o = {.prefix = "p", .input_map = m, .n_input_map = 2};
  dfx_graph *g;
  cr_assert_eq(dfx_graph_import_ex(REMAP_G, strlen(REMAP_G), &o, &g, st), DFX_OK, "%s", dfx_status_message(st));
  int sum = dfx_graph_node_find(g, "p/sum");
  cr_assert_str_eq(dfx_graph_node_input(g, sum, 0).node, "p/b");
  int after = dfx_graph_node_find(g, "p/after");
  cr_assert_eq(dfx_graph_node_control_input(g, after, 0), dfx_graph_node_find(g, "p/twice"));
  cr_assert_eq(run_i32(g, "p/sum", "p/b", 1), 11);
  dfx_graph_free(g);
  /* The replacement node keeps its own inputs, so it can wrap the tensor. */
  dfx_input_map wrap[] = {{"a", "wrap"}};
  dfx_import_options ow = {.input_map = wrap, .n_input_map = 1};
  cr_assert_eq(dfx_graph_import_ex(REMAP_G, strlen(REMAP_G), &ow, &g, st), DFX_OK, "%s", dfx_status_message(st));
  cr_assert_eq(run_i32(g, "sum", "a", 4), 18); /* (4 + 4) + 10 */
  dfx_graph_free(g);
  dfx_status_free(st);
}

Test(capi, import_ex_rejects_bad_options) {
  dfx_status *st = dfx_status_new();
  dfx_graph *g = (dfx_graph *)&g;
  size_t n = strlen(REMAP_G);
  dfx_input_map unknown[] = {{"ghost:0", "b"}};
  dfx_import_options o = {.input_map = unknown, .n_input_map = 1};
  cr_assert_eq(dfx_graph_import_ex(REMAP_G, n, &o, &g, st), DFX_ENOTFOUND);
  cr_assert_null(g);
  cr_assert(strstr(dfx_status_message(st), "ghost"), "%s", dfx_status_message(st));
  dfx_input_map unknown_to[] = {{"a", "ghost"}};
  o.input_map = unknown_to;
  cr_assert_eq(dfx_graph_import_ex(REMAP_G, n, &o, &g, st), DFX_ENOTFOUND);
  dfx_input_map mixed[] = {{"a", "^b"}};
  o.input_map = mixed;
  cr_assert_eq(dfx_graph_import_ex(REMAP_G, n, &o, &g, st), DFX_EINVAL);
  dfx_input_map twice[] = {{"a", "b"}, {"a:0", "ten"}};
  o.input_map = twice;
  o.n_input_map = 2;
  cr_assert_eq(dfx_graph_import_ex(REMAP_G, n, &o, &g, st), DFX_EINVAL);
  cr_assert(strstr(dfx_status_message(st), "twice"), "%s", dfx_status_message(st));
  dfx_input_map nulls[] = {{NULL, "b"}};
  o.input_map = nulls;
  o.n_input_map = 1;
  cr_assert_eq(dfx_graph_import_ex(REMAP_G, n, &o, &g, st), DFX_EINVAL);
  o.input_map = NULL;
  cr_assert_eq(dfx_graph_import_ex(REMAP_G, n, &o, &g, st), DFX_EINVAL);
  /* A dtype mismatch from a remapping is the importer's error. */
  dfx_input_map f32[] = {{"a", "b"}};
  static const char *G2 = GT_PLACEHOLDER("a", "DT_INT32") GT_PLACEHOLDER("b", "DT_FLOAT")
      GT_OP1("i", "Identity", "a", "DT_INT32", "");
  dfx_import_options o2 = {.input_map = f32, .n_input_map = 1};
  cr_assert_eq(dfx_graph_import_ex(G2, strlen(G2), &o2, &g, st), DFX_EINVAL);
  cr_assert(strstr(dfx_status_message(st), "float32"), "%s", dfx_status_message(st));
  /* A prefix that makes invalid names. */
  dfx_import_options bad = {.prefix = "-x"};
  cr_assert_eq(dfx_graph_import_ex(REMAP_G, n, &bad, &g, st), DFX_EINVAL);
  /* NULL arguments and garbage. */
  dfx_import_options none = {0};
  cr_assert_eq(dfx_graph_import_ex(REMAP_G, n, &none, NULL, st), DFX_EINVAL);
  cr_assert_eq(dfx_graph_import_ex(NULL, 5, &none, &g, st), DFX_EINVAL);
  cr_assert_eq(dfx_graph_import_ex("\x0a\x03\x0a\x01", 4, &none, &g, st), DFX_EINVAL);
  cr_assert_eq(dfx_graph_import_ex("node { nme: \"x\" }", 17, &none, &g, st), DFX_EINVAL);
  dfx_status_free(st);
}

Test(capi, import_ex_reads_binary_with_options) {
  /* The binary path, on the conformance graph when it is present. */
  const char *corpus = getenv("DFX_CONFORMANCE_DIR");
  if (!corpus || !*corpus) cr_skip_test("no conformance corpus (configure with -Dconformance_dir=DIR)");
  char path[1024];
  snprintf(path, sizeof path, "%s/tf1/simplewhile_0/frozen_model.pb", corpus);
  FILE *f = fopen(path, "rb");
  if (!f) cr_skip_test("no conformance graph at %s", path);
  static char buf[1 << 16];
  size_t n = fread(buf, 1, sizeof buf, f);
  fclose(f);
  dfx_status *st = dfx_status_new();
  dfx_input_map m[] = {{"input_1", "Variable"}}; /* loop while sum < 2 */
  dfx_import_options o = {.prefix = "imp", .input_map = m, .n_input_map = 1};
  dfx_graph *g;
  cr_assert_eq(dfx_graph_import_ex(buf, n, &o, &g, st), DFX_OK, "%s", dfx_status_message(st));
  cr_assert_eq(dfx_graph_placeholders(g, NULL, 0), 2);
  float in[4] = {0, 0, 0, 0};
  dfx_tensor *x = dfx_tensor_new_copy(DFX_F32, (int64_t[]){2, 2}, 2, in, sizeof in), *out[1];
  char msg[2048];
  cr_assert_eq(eu_run(g, 1, "imp/output", out, "imp/input_0", x, msg, sizeof msg), DFX_OK, "%s", msg);
  cr_assert_float_eq(((float *)dfx_tensor_data(out[0]))[0], 2.0f, 1e-6); /* one step: sum 0 < 2, then 8 */
  dfx_tensor_free(out[0]);
  dfx_tensor_free(x);
  dfx_graph_free(g);
  dfx_status_free(st);
}

Test(capi, misuse_of_core_calls_is_einval_or_safe) {
  dfx_status *st = dfx_status_new();
  dfx_graph *g = (dfx_graph *)&st;
  cr_assert_eq(dfx_graph_import(NULL, 3, &g, st), DFX_EINVAL);
  cr_assert_null(g);
  cr_assert_eq(dfx_graph_import("x", 1, NULL, NULL), DFX_EINVAL);
  cr_assert_eq(dfx_graph_load(NULL, &g, st), DFX_EINVAL);
  cr_assert_eq(dfx_graph_load("/nonexistent/file.pb", &g, st), DFX_EIO);
  cr_assert_null(g);
  cr_assert_eq(dfx_graph_node_count(NULL), 0);
  cr_assert_eq(dfx_graph_node_find(NULL, "x"), -1);
  cr_assert_null(dfx_graph_node_name(NULL, 0));
  dfx_session *s = (dfx_session *)&st;
  cr_assert_eq(dfx_session_new(NULL, NULL, &s, st), DFX_EINVAL);
  cr_assert_null(s);
  g = eu_graph(G);
  cr_assert_eq(dfx_session_new(g, NULL, NULL, st), DFX_EINVAL);
  cr_assert_eq(dfx_session_new(g, NULL, &s, st), DFX_OK, "%s", dfx_status_message(st));
  dfx_tensor *out[1] = {(dfx_tensor *)&st};
  dfx_port fz = {"z", 0}, fx = {"x", 0}, fghost = {"ghost", 0};
  cr_assert_eq(dfx_session_run(NULL, NULL, NULL, NULL, 0, &fz, out, 1, NULL, 0, st), DFX_EINVAL);
  cr_assert_eq(dfx_session_run(s, NULL, NULL, NULL, 0, &fz, NULL, 1, NULL, 0, st), DFX_EINVAL);
  cr_assert_eq(dfx_session_run(s, NULL, NULL, NULL, 0, &fghost, out, 1, NULL, 0, st), DFX_ENOTFOUND);
  cr_assert_null(out[0]);
  /* Wrong dtype feed, wrong shape feed. */
  dfx_tensor *i32 = dfx_tensor_new_copy(DFX_I32, (int64_t[]){2, 1}, 2, (int32_t[]){1, 2}, 8);
  dfx_tensor *f32 = dfx_tensor_new_copy(DFX_F32, (int64_t[]){3, 1}, 2, (float[]){1, 2, 3}, 12);
  cr_assert_eq(dfx_session_run(s, NULL, &fx, &i32, 1, &fz, out, 1, NULL, 0, st), DFX_EINVAL);
  cr_assert(strstr(dfx_status_message(st), "int32"), "%s", dfx_status_message(st));
  cr_assert_eq(dfx_session_run(s, NULL, &fx, &f32, 1, &fz, out, 1, NULL, 0, st), DFX_EINVAL);
  cr_assert_eq(dfx_session_run(s, NULL, &fghost, &f32, 1, &fz, out, 1, NULL, 0, st), DFX_ENOTFOUND);
  const char *tg = "ghost";
  cr_assert_neq(dfx_session_run(s, NULL, NULL, NULL, 0, NULL, NULL, 0, &tg, 1, st), DFX_OK);
  dfx_tensor_free(i32);
  dfx_tensor_free(f32);
  /* Tensors. */
  cr_assert_null(dfx_tensor_new(DFX_F32, (int64_t[]){-1}, 1));
  cr_assert_null(dfx_tensor_new((dfx_dtype)99, NULL, 0));
  cr_assert_null(dfx_tensor_new_copy(DFX_F32, NULL, 0, (float[]){1}, 3)); /* size mismatch */
  cr_assert_eq(dfx_tensor_ndims(NULL), -1);
  cr_assert_eq(dfx_tensor_dtype(NULL), DFX_INVALID);
  cr_assert_eq(dfx_tensor_set_string(NULL, 0, "a", 1), DFX_EINVAL);
  /* Status and names. */
  cr_assert_eq(dfx_status_code(NULL), DFX_EINVAL);
  cr_assert_str_eq(dfx_status_message(NULL), "");
  cr_assert_str_eq(dfx_code_name(DFX_ENOTFOUND), "DFX_ENOTFOUND");
  cr_assert_eq(dfx_dtype_from_name("float32"), DFX_F32);
  cr_assert_eq(dfx_dtype_from_name("nope"), DFX_INVALID);
  cr_assert_eq(dfx_dtype_size(DFX_F64), 8);
  dfx_session_free(s);
  dfx_graph_free(g);
  dfx_status_free(st);
}

Test(capi, port_parse_reads_tensor_names) {
  dfx_status *st = dfx_status_new();
  char buf[64];
  dfx_port p;
  cr_assert_eq(dfx_port_parse("while/Exit:1", buf, sizeof buf, &p, st), DFX_OK, "%s", dfx_status_message(st));
  cr_assert_str_eq(p.node, "while/Exit");
  cr_assert_eq(p.index, 1);
  cr_assert(p.node == buf);
  cr_assert_eq(dfx_port_parse("output", buf, sizeof buf, &p, st), DFX_OK);
  cr_assert_str_eq(p.node, "output");
  cr_assert_eq(p.index, 0);
  const char *bad[] = {"", ":1", "x:", "x:-1", "x:1a", "^x", "x:99999999999"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    cr_expect_eq(dfx_port_parse(bad[i], buf, sizeof buf, &p, st), DFX_EINVAL, "'%s'", bad[i]);
    cr_expect(strstr(dfx_status_message(st), "tensor name"), "'%s': %s", bad[i], dfx_status_message(st));
  }
  cr_assert_eq(dfx_port_parse("a_long_name:0", buf, 4, &p, st), DFX_ERANGE);
  cr_assert_eq(dfx_port_parse(NULL, buf, sizeof buf, &p, st), DFX_EINVAL);
  dfx_status_free(st);
}

/* The graph's outputs by the documented rules: unconsumed root-frame tensors
 * (z, w, s and the loop's Exit), not the loop's inner nodes, not consumed
 * ones, not placeholders read by others. */
Test(capi, graph_outputs_lists_the_sinks) {
  dfx_status *st = dfx_status_new();
  dfx_graph *g = NULL;
  cr_assert_eq(dfx_graph_import(G, strlen(G), &g, st), DFX_OK, "%s", dfx_status_message(st));
  int n = dfx_graph_outputs(g, NULL, 0);
  cr_assert_gt(n, 0);
  dfx_port ports[32];
  cr_assert_leq(n, 32);
  cr_assert_eq(dfx_graph_outputs(g, ports, 32), n);
  bool z = false, w = false, s = false, exit_seen = false;
  for (int i = 0; i < n; i++) {
    int id = dfx_graph_node_find(g, ports[i].node);
    cr_assert_geq(id, 0);
    cr_expect_str_eq(dfx_graph_node_frame(g, id), strcmp(dfx_graph_node_op(g, id), "Exit") == 0
                                                       ? dfx_graph_node_frame(g, id) : "");
    z |= strcmp(ports[i].node, "z") == 0;
    w |= strcmp(ports[i].node, "w") == 0;
    s |= strcmp(ports[i].node, "s") == 0;
    exit_seen |= strcmp(dfx_graph_node_op(g, id), "Exit") == 0;
    cr_expect(strcmp(ports[i].node, "x") != 0 && strcmp(ports[i].node, "seven") != 0, "%s is consumed",
              ports[i].node);
  }
  cr_expect(z && w && s && exit_seen, "z %d w %d s %d exit %d", z, w, s, exit_seen);
  /* A short array gets the first ones, and the count is still the total. */
  cr_assert_eq(dfx_graph_outputs(g, ports, 1), n);
  cr_assert_eq(dfx_graph_outputs(NULL, ports, 1), 0);
  dfx_graph_free(g);
  dfx_status_free(st);
}

/* dfx_tensor_convert: numpy astype where it is defined, DFX_ERANGE where not. */
Test(capi, tensor_convert_is_astype_or_refuses) {
  dfx_status *st = dfx_status_new();
  int64_t dims[1] = {5};
  dfx_tensor *f = dfx_tensor_new(DFX_F64, dims, 1), *o = NULL;
  double fv[5] = {-2.7, -0.5, 0.0, 1.9, 126.99};
  memcpy(dfx_tensor_data(f), fv, sizeof fv);
  cr_assert_eq(dfx_tensor_convert(f, DFX_I8, &o, st), DFX_OK, "%s", dfx_status_message(st));
  const int8_t want_i8[5] = {-2, 0, 0, 1, 126}; /* truncation toward zero */
  cr_assert_arr_eq(dfx_tensor_data(o), want_i8, 5);
  cr_assert_eq(dfx_tensor_ndims(o), 1);
  dfx_tensor_free(o);
  cr_assert_eq(dfx_tensor_convert(f, DFX_BOOL, &o, st), DFX_OK);
  const uint8_t want_b[5] = {1, 1, 0, 1, 1};
  cr_assert_arr_eq(dfx_tensor_data(o), want_b, 5);
  dfx_tensor_free(o);
  /* Out of range and NaN refuse, naming the element. */
  ((double *)dfx_tensor_data(f))[3] = 300;
  cr_assert_eq(dfx_tensor_convert(f, DFX_U8, &o, st), DFX_ERANGE);
  cr_assert(strstr(dfx_status_message(st), "element 0 (-2.7"), "%s", dfx_status_message(st));
  ((double *)dfx_tensor_data(f))[0] = NAN;
  cr_assert_eq(dfx_tensor_convert(f, DFX_I32, &o, st), DFX_ERANGE);
  cr_assert(o == NULL);
  dfx_tensor_free(f);
  /* 64-bit integers keep every bit, both ways. */
  dfx_tensor *big = dfx_tensor_new(DFX_I64, dims, 1);
  int64_t bv[5] = {INT64_MAX, INT64_MIN, -1, 1152921504606846977LL, 0};
  memcpy(dfx_tensor_data(big), bv, sizeof bv);
  cr_assert_eq(dfx_tensor_convert(big, DFX_U64, &o, st), DFX_ERANGE); /* -1 and INT64_MIN do not fit */
  bv[1] = 7;
  bv[2] = 9;
  memcpy(dfx_tensor_data(big), bv, sizeof bv);
  cr_assert_eq(dfx_tensor_convert(big, DFX_U64, &o, st), DFX_OK, "%s", dfx_status_message(st));
  cr_assert_eq(((uint64_t *)dfx_tensor_data(o))[0], (uint64_t)INT64_MAX);
  cr_assert_eq(((uint64_t *)dfx_tensor_data(o))[3], 1152921504606846977ULL);
  dfx_tensor_free(o);
  cr_assert_eq(dfx_tensor_convert(big, DFX_F32, &o, st), DFX_OK);
  cr_assert_eq(((float *)dfx_tensor_data(o))[1], 7.0f);
  dfx_tensor_free(o);
  dfx_tensor_free(big);
  /* Strings are not numbers. */
  dfx_tensor *s = dfx_tensor_new(DFX_STRING, NULL, 0);
  cr_assert_eq(dfx_tensor_convert(s, DFX_F32, &o, st), DFX_EINVAL);
  dfx_tensor_free(s);
  cr_assert_eq(dfx_tensor_convert(NULL, DFX_F32, &o, st), DFX_EINVAL);
  dfx_status_free(st);
}
