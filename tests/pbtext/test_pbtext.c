/* test_pbtext.c - protobuf text format on real graphs: the six tf-text
 * graphs (against protoc when installed) and every tf1 binary round trip.
 * Value forms, errors and allocation failures are in test_pbtext_values.c. */
#include "ptest.h"

TestSuite(pbtext, .init = setup, .fini = teardown, .timeout = 120);

/* ---- the six tf-text graphs ---- */

static const struct {
  const char *name;
  size_t nodes;
} tf_text[] = {
    {"control_flow_v1", 15}, {"graph-while-loop", 12}, {"merge_without_loops", 17},
    {"nested_loop", 41},     {"switch_n", 14},         {"while_loop", 21},
};

Test(pbtext, tf_text_graphs_parse_and_round_trip) {
  for (size_t i = 0; i < sizeof tf_text / sizeof *tf_text; i++) {
    Tensorflow__GraphDef *g = load_tf_text(tf_text[i].name);
    cr_expect_eq(g->n_node, tf_text[i].nodes, "%s: %zu nodes", tf_text[i].name, g->n_node);
    for (size_t k = 0; k < g->n_node; k++) cr_expect(g->node[k]->op[0], "%s: node %zu has no op", tf_text[i].name, k);
    check_round_trip(&g->base);
    free_msg(&g->base);
  }
}

Test(pbtext, tf_text_graphs_match_protoc) {
  const char *dir = getenv("DFX_PBTEXT_ORACLE");
  if (!dir) cr_skip_test("protoc was not found at configure time");
  for (size_t i = 0; i < sizeof tf_text / sizeof *tf_text; i++) {
    char path[1024];
    size_t olen, n1, n2;
    snprintf(path, sizeof path, "%s/%s.protoc.pb", dir, tf_text[i].name);
    uint8_t *oracle = (uint8_t *)slurp(path, &olen);
    Tensorflow__GraphDef *g = load_tf_text(tf_text[i].name);
    ProtobufCMessage *o = protobuf_c_message_unpack(&tensorflow__graph_def__descriptor, &g_pa, olen, oracle);
    cr_assert(o, "%s: protoc's output does not unpack", tf_text[i].name);
    uint8_t *b1 = pack(&g->base, &n1), *b2 = pack(o, &n2);
    cr_expect(n1 == n2 && !memcmp(b1, b2, n1), "%s: differs from protoc", tf_text[i].name);
    /* protoc also writes canonical field order, so even its raw bytes match. */
    cr_expect(n1 == olen && !memcmp(b1, oracle, olen), "%s: raw bytes differ from protoc", tf_text[i].name);
    free(b1);
    free(b2);
    free(oracle);
    free_msg(o);
    free_msg(&g->base);
  }
}

/* TensorFlow wrote these files, and the printer writes them back identically
 * once comment lines are dropped and the hand-edited "1.0" is read as TF
 * would print it. */
Test(pbtext, print_matches_tensorflow_layout) {
  for (size_t i = 0; i < sizeof tf_text / sizeof *tf_text; i++) {
    char path[1024], file[256];
    size_t len, o = 0;
    snprintf(file, sizeof file, "%s.pbtxt", tf_text[i].name);
    conf_path(path, sizeof path, "tf-text", file);
    char *text = slurp(path, &len), *want = malloc(len + 1);
    for (char *line = text, *nl; *line; line = nl + 1) {
      nl = strchr(line, '\n');
      if (!nl) nl = line + strlen(line) - 1;
      if (*line == '#' || *line == '\n') continue;
      const char *pos = strstr(line, "float_val: 1.0\n");
      size_t n = (size_t)(nl + 1 - line);
      memcpy(want + o, line, n);
      if (pos == line + n - 15) memmove(want + o + n - 3, "\n", 1), n -= 2;
      o += n;
    }
    want[o] = 0;
    Tensorflow__GraphDef *g = load_tf_text(tf_text[i].name);
    char *got = print_ok(&g->base);
    cr_expect_str_eq(got, want, "%s", tf_text[i].name);
    dfx__free(got);
    free(text);
    free(want);
    free_msg(&g->base);
  }
}

Test(pbtext, switch_n_contents) {
  Tensorflow__GraphDef *g = load_tf_text("switch_n");
  const Tensorflow__NodeDef *n = find_node(g, "Case/branch_index/_3");
  cr_expect_str_eq(n->op, "_SwitchN");
  cr_expect_eq(n->n_input, 2);
  cr_expect_str_eq(n->input[1], "Case/branch_index");
  const Tensorflow__AttrValue *a = find_attr(n, "num_outs");
  cr_expect_eq(a->value_case, TENSORFLOW__ATTR_VALUE__VALUE_I);
  cr_expect_eq(a->i, 3);
  a = find_attr(n, "T");
  cr_expect_eq(a->value_case, TENSORFLOW__ATTR_VALUE__VALUE_TYPE);
  cr_expect_eq(a->type, TENSORFLOW__DATA_TYPE__DT_INT32);
  a = find_attr(find_node(g, "Case/input_0"), "value");
  cr_assert_eq(a->value_case, TENSORFLOW__ATTR_VALUE__VALUE_TENSOR);
  cr_expect_eq(a->tensor->dtype, TENSORFLOW__DATA_TYPE__DT_FLOAT);
  cr_expect_eq(a->tensor->n_float_val, 1);
  cr_expect_eq(a->tensor->float_val[0], 1.0f);
  cr_assert(a->tensor->tensor_shape);
  cr_expect_eq(a->tensor->tensor_shape->n_dim, 0);
  free_msg(&g->base);
}

Test(pbtext, control_flow_v1_contents) {
  Tensorflow__GraphDef *g = load_tf_text("control_flow_v1");
  const Tensorflow__AttrValue *a = find_attr(find_node(g, "Const"), "value");
  const Tensorflow__TensorProto *t = a->tensor;
  cr_assert_eq(t->tensor_shape->n_dim, 2);
  cr_expect_eq(t->tensor_shape->dim[0]->size, 2);
  cr_assert_eq(t->tensor_content.len, 16);
  float v[4];
  memcpy(v, t->tensor_content.data, 16);
  cr_expect_eq(v[0], 0.1f);
  cr_expect_eq(v[3], 0.4f);
  a = find_attr(find_node(g, "Placeholder"), "shape");
  cr_assert_eq(a->value_case, TENSORFLOW__ATTR_VALUE__VALUE_SHAPE);
  cr_expect_eq(a->shape->dim[0]->size, -1);
  cr_assert(g->versions);
  cr_expect_eq(g->versions->producer, 134);
  free_msg(&g->base);
}

Test(pbtext, graph_while_loop_contents) {
  Tensorflow__GraphDef *g = load_tf_text("graph-while-loop");
  cr_expect_str_eq(find_node(g, "while/Exit")->op, "Exit");
  int found = 0;
  for (size_t i = 0; i < g->n_node; i++) {
    const Tensorflow__NodeDef__ExperimentalDebugInfo *di = g->node[i]->experimental_debug_info;
    if (di && di->n_original_node_names == 1 && !strcmp(di->original_node_names[0], "while")) found++;
  }
  cr_expect_gt(found, 0);
  cr_expect(g->library);
  cr_expect_eq(g->versions->producer, 27);
  free_msg(&g->base);
}

/* ---- binary graphs from tf1 ---- */

/* Unpacks a frozen graph, prints it, parses the text and compares the packed
 * bytes with a re-pack of the original. Returns 0 if the file is absent. */
static int binary_round_trip(const char *dir) {
  char path[1024], file[512];
  size_t len, n1, n2;
  snprintf(file, sizeof file, "%s/frozen_model.pb", dir);
  conf_path(path, sizeof path, "tf1", file);
  FILE *f = fopen(path, "rb");
  if (!f) return 0;
  fclose(f);
  uint8_t *raw = (uint8_t *)slurp(path, &len);
  ProtobufCMessage *m = protobuf_c_message_unpack(&tensorflow__graph_def__descriptor, &g_pa, len, raw);
  cr_assert(m, "%s does not unpack", dir);
  cr_expect_eq(m->n_unknown_fields, 0, "%s has unknown fields", dir);
  char *text = print_ok(m);
  ProtobufCMessage *m2 = parse_ok(&tensorflow__graph_def__descriptor, text);
  uint8_t *b1 = pack(m, &n1), *b2 = pack(m2, &n2);
  cr_expect(n1 == n2 && !memcmp(b1, b2, n1), "%s: bytes differ after text round trip", dir);
  char *text2 = print_ok(m2);
  cr_expect_str_eq(text, text2, "%s: printing is not stable", dir);
  free(raw);
  free(b1);
  free(b2);
  dfx__free(text);
  dfx__free(text2);
  free_msg(m);
  free_msg(m2);
  return 1;
}

Test(pbtext, simplewhile_binary_round_trip) { cr_assert(binary_round_trip("simplewhile_0")); }

/* Walks tf1/ (op folders holding case folders) and round-trips every graph. */
static int walk_tf1(const char *rel, int depth) {
  char path[1024], sub[512];
  conf_path(path, sizeof path, "tf1", rel);
  DIR *d = opendir(path);
  if (!d) return 0;
  int n = binary_round_trip(rel);
  struct dirent *e;
  while (depth < 3 && (e = readdir(d))) {
    if (e->d_name[0] == '.') continue;
    snprintf(sub, sizeof sub, "%s%s%s", rel, *rel ? "/" : "", e->d_name);
    n += walk_tf1(sub, depth + 1);
  }
  closedir(d);
  return n;
}

Test(pbtext, all_tf1_binaries_round_trip) {
  int n = walk_tf1("", 0);
  cr_expect_gt(n, 1000, "only %d graphs found", n);
}
