/* test_graph_import.c - import validation (each rejection names node and op),
 * attr defaults, static frames and Const decoding (tf-semantics §1.3-1.5, §2.5). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "../eutil.h"
#include "../gtext.h"
#include "graph.h"
#include "tensor.h"

TestSuite(graph_import, .init = eu_setup, .fini = eu_teardown);

static void expect_reject(const char *text, dfx_code code, const char *const *needles) {
  char msg[2048];
  dfx_code c = eu_import(text, msg, sizeof msg);
  cr_assert_eq(c, code, "got %s: %s", dfx_code_name(c), msg);
  for (; *needles; needles++) cr_assert(strstr(msg, *needles), "'%s' not in: %s", *needles, msg);
}
#define REJECT(text, code, ...) expect_reject(text, code, (const char *const[]){__VA_ARGS__, NULL})

Test(graph_import, rejects_duplicate_names) {
  REJECT(GT_CONST_I32("a", 1, "") GT_CONST_I32("a", 2, ""), DFX_EINVAL, "'a'", "duplicate");
}

Test(graph_import, rejects_unknown_input_node) {
  REJECT(GT_OP1("b", "Identity", "missing", "DT_INT32", ""), DFX_EINVAL, "'b'", "Unknown input node 'missing'");
}

Test(graph_import, rejects_bad_output_index) {
  REJECT(GT_CONST_I32("a", 1, "") GT_OP1("b", "Identity", "a:3", "DT_INT32", ""), DFX_EINVAL, "'b'", "a:3",
         "1 output");
}

Test(graph_import, rejects_data_input_after_control_input) {
  REJECT(GT_CONST_I32("a", 1, "") GT_CONST_I32("c", 1, "")
             "node { name: \"b\" op: \"Identity\" input: \"^c\" input: \"a\" attr { key: \"T\" value { type: DT_INT32 } } }\n",
         DFX_EINVAL, "'b'", "Control dependencies must come after regular dependencies");
}

Test(graph_import, rejects_cycle_not_closed_by_next_iteration) {
  REJECT(GT_CONST_I32("a", 1, "") GT_OP2("x", "Add", "a", "y", "DT_INT32", "") GT_OP1("y", "Identity", "x", "DT_INT32", ""),
         DFX_EINVAL, "cycle", "NextIteration");
}

Test(graph_import, rejects_dtype_mismatch_on_an_edge) {
  REJECT(GT_CONST_I32("a", 1, "") GT_CONST_F32("f", 1, "") GT_OP2("s", "Add", "a", "f", "DT_INT32", ""), DFX_EINVAL,
         "'s'", "Add", "int32", "float32");
}

Test(graph_import, rejects_exit_without_enter) {
  REJECT(GT_CONST_I32("a", 1, "") GT_OP1("x", "Exit", "a", "DT_INT32", "") GT_OP1("y", "Identity", "x", "DT_INT32", ""),
         DFX_EINVAL, "'x'", "Cannot find a corresponding Enter");
}

Test(graph_import, rejects_inputs_from_different_frames_naming_both) {
  /* `mix` adds a loop-body value to a root-frame constant without an Enter. */
  REJECT(GT_COUNTER_LOOP("w/", 0, 3, 1, 10) GT_CONST_I32("outside", 5, "")
             GT_OP2("w/mix", "Add", "w/Identity", "outside", "DT_INT32", ""),
         DFX_EINVAL, "w/mix", "different frames", "w/while", "(root)");
}

Test(graph_import, rejects_mismatched_parent_frames) {
  REJECT(GT_COUNTER_LOOP("w/", 0, 3, 1, 10) GT_ENTER("w/inner", "w/Identity", "DT_INT32", "x/frame", false, 10)
             GT_CONST_I32("c", 1, "") GT_ENTER("other", "c", "DT_INT32", "x/frame", false, 10)
             GT_OP2("x/add", "Add", "w/inner", "other", "DT_INT32", ""),
         DFX_EINVAL, "Mismatched parent frames", "x/frame");
}

/* Ops no registry knows import as opaque nodes (TensorFlow graphs with
 * custom ops still run where the custom op is not needed): the output
 * count is the largest index a consumer reads, an output's dtype what its
 * consumer expects. */
Test(graph_import, unknown_ops_import_as_opaque_nodes) {
  dfx_graph *g = eu_graph(GT_CONST_I32("a", 1, "") "node { name: \"b\" op: \"Foo\" input: \"a\" }\n"
                          "node { name: \"c\" op: \"Bar\" }\n"
                          GT_OP2("s", "Add", "b:2", "c", "DT_FLOAT", ""));
  const dfx_node *b = &g->nodes[dfx__graph_find(g, "b", (size_t)-1)], *c = &g->nodes[dfx__graph_find(g, "c", (size_t)-1)];
  cr_assert_null(b->def);
  cr_assert_eq(b->n_out, 3, "outputs 0..2, the largest read is 2");
  cr_assert_eq(b->out_types[2], DFX_F32, "from Add's T");
  cr_assert_eq(b->out_types[0], DFX_INVALID, "nobody reads output 0: any dtype");
  cr_assert_eq(c->n_out, 1);
  cr_assert_eq(c->out_types[0], DFX_F32);
  dfx_graph_free(g);
}

Test(graph_import, rejects_zero_parallel_iterations) {
  REJECT(GT_COUNTER_LOOP("w/", 0, 3, 1, 0), DFX_EINVAL, "parallel_iterations", "w/Enter");
}

Test(graph_import, rejects_garbage_bytes) {
  char msg[512];
  const char junk[] = "\x0a\xff\xff\xff\xff\x0f\x01";
  dfx_graph *g = NULL;
  dfx_status *st = dfx_status_new();
  cr_assert_eq(dfx_graph_import(junk, sizeof junk - 1, &g, st), DFX_EINVAL);
  cr_assert_null(g);
  snprintf(msg, sizeof msg, "%s", dfx_status_message(st));
  cr_assert(strstr(msg, "GraphDef"), "%s", msg);
  cr_assert_eq(dfx_graph_import("node { name: \"a\" op: ", 20, &g, st), DFX_EINVAL);
  cr_assert(strstr(dfx_status_message(st), "1:"), "%s", dfx_status_message(st));
  dfx_status_free(st);
}

Test(graph_import, empty_graph_imports) {
  dfx_graph *g = eu_graph("");
  cr_assert_eq(dfx_graph_node_count(g), 0);
  dfx_graph_free(g);
}

Test(graph_import, fills_attr_defaults_and_frames) {
  dfx_graph *g = eu_graph(GT_COUNTER_LOOP("w/", 0, 3, 1, 10)
                              "node { name: \"e2\" op: \"Enter\" input: \"w/start\" attr { key: \"T\" value { type: DT_INT32 } }"
                              " attr { key: \"frame_name\" value { s: \"f2\" } } }\n"
                              GT_OP1("f2/x", "Identity", "e2", "DT_INT32", ""));
  int e2 = dfx_graph_node_find(g, "e2");
  cr_assert_geq(e2, 0);
  cr_assert_eq(dfx__attr_int(&g->nodes[e2], "parallel_iterations", -1), 10);
  cr_assert_eq(dfx__attr_bool(&g->nodes[e2], "is_constant", true), false);
  cr_assert_str_eq(dfx_graph_node_frame(g, e2), "");
  cr_assert_str_eq(dfx_graph_node_frame(g, dfx_graph_node_find(g, "f2/x")), "f2");
  cr_assert_str_eq(dfx_graph_node_frame(g, dfx_graph_node_find(g, "w/add")), "w/while");
  cr_assert_str_eq(dfx_graph_node_frame(g, dfx_graph_node_find(g, "w/Exit")), "w/while");
  cr_assert_eq(dfx_graph_node_num_outputs(g, dfx_graph_node_find(g, "w/Merge")), 2);
  cr_assert_eq(dfx_graph_node_output_dtype(g, dfx_graph_node_find(g, "w/Merge"), 1), DFX_I32);
  dfx_graph_free(g);
}

/* ---- Const decoding (§1.5) ---- */

static dfx_graph *const_graph(const char *tensor_text) {
  char buf[2048];
  snprintf(buf, sizeof buf,
           "node { name: \"c\" op: \"Const\" attr { key: \"dtype\" value { type: %s } }"
           " attr { key: \"value\" value { tensor { %s } } } }\n",
           strstr(tensor_text, "DT_FLOAT") ? "DT_FLOAT"
           : strstr(tensor_text, "DT_STRING") ? "DT_STRING"
           : strstr(tensor_text, "DT_HALF") ? "DT_HALF"
                                              : "DT_INT32",
           tensor_text);
  return eu_graph(buf);
}

static const dfx_tensor *const_value(const dfx_graph *g) { return dfx__attr_tensor(&g->nodes[0], "value"); }

Test(graph_import, const_repeats_last_value_and_zero_fills) {
  dfx_graph *g = const_graph("dtype: DT_FLOAT tensor_shape { dim { size: 2 } dim { size: 2 } } float_val: 1.5 float_val: 2");
  const float *d = const_value(g)->data;
  cr_assert(d[0] == 1.5f && d[1] == 2 && d[2] == 2 && d[3] == 2);
  dfx_graph_free(g);
  g = const_graph("dtype: DT_INT32 tensor_shape { dim { size: 3 } }");
  const int32_t *z = const_value(g)->data;
  cr_assert(z[0] == 0 && z[1] == 0 && z[2] == 0);
  dfx_graph_free(g);
}

Test(graph_import, const_tensor_content_and_size_check) {
  dfx_graph *g = const_graph("dtype: DT_INT32 tensor_shape { dim { size: 2 } } tensor_content: \"\\001\\000\\000\\000\\377\\377\\377\\377\"");
  const int32_t *d = const_value(g)->data;
  cr_assert(d[0] == 1 && d[1] == -1);
  dfx_graph_free(g);
  char msg[1024];
  dfx_code c = eu_import("node { name: \"c\" op: \"Const\" attr { key: \"dtype\" value { type: DT_INT32 } }"
                         " attr { key: \"value\" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 2 } }"
                         " tensor_content: \"\\001\\000\" } } } }",
                         msg, sizeof msg);
  cr_assert_eq(c, DFX_EINVAL, "%s", msg);
  cr_assert(strstr(msg, "'c'") && strstr(msg, "Input size was 2 and expected 8"), "%s", msg);
}

Test(graph_import, const_strings_and_half) {
  dfx_graph *g = const_graph("dtype: DT_STRING tensor_shape { dim { size: 3 } } string_val: \"ab\" string_val: \"\"");
  size_t len;
  const char *s = dfx_tensor_string(const_value(g), 0, &len);
  cr_assert(len == 2 && memcmp(s, "ab", 2) == 0);
  dfx_tensor_string(const_value(g), 2, &len);
  cr_assert_eq(len, 0);
  dfx_graph_free(g);
  /* String tensor_content: varint lengths, then the bytes. */
  g = const_graph("dtype: DT_STRING tensor_shape { dim { size: 2 } } tensor_content: \"\\002\\001hiX\"");
  s = dfx_tensor_string(const_value(g), 1, &len);
  cr_assert(len == 1 && s[0] == 'X');
  dfx_graph_free(g);
  g = const_graph("dtype: DT_HALF tensor_shape { } half_val: 15360"); /* 0x3c00 = 1.0 */
  cr_assert_eq(*(const uint16_t *)const_value(g)->data, 0x3c00);
  dfx_graph_free(g);
}

Test(graph_import, loads_every_tf_text_graph_and_rejects_missing_files) {
  dfx_status *st = dfx_status_new();
  dfx_graph *g = NULL;
  cr_assert_eq(dfx_graph_load("/nonexistent/x.pb", &g, st), DFX_EIO);
  cr_assert(strstr(dfx_status_message(st), "/nonexistent/x.pb"), "%s", dfx_status_message(st));
  dfx_status_free(st);
}
