/* test_savedmodel.c - SavedModel and MetaGraphDef containers: a plain
 * GraphDef reader given one says what it is (tags, signatures) instead of
 * "not a valid binary GraphDef"; the GraphDef inside comes out and the two
 * Keras SavedModels in ../shared/savedmodels (an MLP through
 * StatefulPartitionedCall, four stacked LSTMs as functional While loops
 * over TensorLists) import and lower to plain v1 control flow that saves
 * and reloads. Their values need the variables, which are not read here. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../eutil.h"
#include "graph.h"
#include "graph_import.h"
#include "pballoc.h"
#include "pbtext.h"
#include "saved_model.pb-c.h"
#include "savedmodel.h"

TestSuite(savedmodel, .init = eu_setup, .fini = eu_teardown, .timeout = 120);

/* The model's saved_model.pb, read whole (NULL when the shared models are absent). */
static char *model(const char *name, size_t *len) {
  const char *root = getenv("DFX_SOURCE_ROOT");
  char path[1024];
  snprintf(path, sizeof path, "%s/../shared/savedmodels/%s/saved_model.pb", root ? root : "..", name);
  char *data = NULL;
  dfx_status st;
  if (dfx__read_file(path, &data, len, &st) != DFX_OK) return NULL;
  return data;
}

static int count_op(const dfx_graph *g, const char *op) {
  int n = 0;
  for (int i = 0; i < dfx_graph_node_count(g); i++) n += strcmp(dfx_graph_node_op(g, i), op) == 0;
  return n;
}

Test(savedmodel, graphdef_reader_says_what_a_savedmodel_is) {
  size_t len;
  char *data = model("tf2_keras_mlp", &len);
  if (!data) cr_skip_test("no ../shared/savedmodels");
  dfx_graph *g = NULL;
  dfx_status *st = dfx_status_new();
  cr_assert_eq(dfx_graph_import(data, len, &g, st), DFX_EINVAL);
  const char *m = dfx_status_message(st);
  cr_expect(strstr(m, "this is a TensorFlow SavedModel, not a GraphDef"), "%s", m);
  cr_expect(strstr(m, "tags {serve}"), "%s", m);
  cr_expect(strstr(m, "signature 'serving_default' (dense_input=serving_default_dense_input:0 -> "
                      "dense_2=StatefulPartitionedCall:0)"), "%s", m);
  cr_expect(strstr(m, "dfexec convert"), "%s", m);
  dfx_status_free(st);
  dfx__free(data);
}

Test(savedmodel, graphdef_reader_says_what_a_metagraphdef_is) {
  const char *text =
      "meta_info_def { tags: \"serve\" tags: \"gpu\" }\n"
      "graph_def { node { name: \"x\" op: \"Placeholder\" attr { key: \"dtype\" value { type: DT_FLOAT } } } }\n"
      "signature_def { key: \"predict\" value { inputs { key: \"in\" value { name: \"x:0\" dtype: DT_FLOAT } }"
      " outputs { key: \"out\" value { name: \"x:0\" } } } }\n";
  ProtobufCMessage *msg = NULL;
  dfx_status *st = dfx_status_new();
  cr_assert_eq(dfx__pbtext_parse(&tensorflow__meta_graph_def__descriptor, text, strlen(text), &dfx__pb_allocator, &msg,
                                 st), DFX_OK, "%s", dfx_status_message(st));
  size_t n = protobuf_c_message_get_packed_size(msg);
  uint8_t *buf = dfx__malloc(n + 1);
  protobuf_c_message_pack(msg, buf);
  protobuf_c_message_free_unpacked(msg, &dfx__pb_allocator);
  dfx_graph *g = NULL;
  cr_assert_neq(dfx_graph_import(buf, n, &g, st), DFX_OK);
  const char *m = dfx_status_message(st);
  cr_expect(strstr(m, "this is a TensorFlow MetaGraphDef, not a GraphDef: meta graph 0: tags {serve,gpu}, 1 nodes"), "%s", m);
  cr_expect(strstr(m, "signature 'predict' (in=x:0 -> out=x:0)"), "%s", m);
  /* Its graph comes out by tag set; a wrong tag set names the ones there. */
  cr_expect_eq(dfx__savedmodel_import(buf, n, "serve,gpu", &g, st), DFX_OK, "%s", dfx_status_message(st));
  cr_expect_eq(dfx_graph_node_count(g), 1);
  dfx_graph_free(g);
  cr_expect_eq(dfx__savedmodel_import(buf, n, "serve", &g, st), DFX_EINVAL);
  cr_expect(strstr(dfx_status_message(st), "no meta graph has the tags {serve}; the tag sets are: {serve,gpu}"), "%s",
            dfx_status_message(st));
  dfx__free(buf);
  dfx_status_free(st);
}

/* The model's graph lowered with no optimisation; its op counts checked. */
static void lowers(const char *name, int loops) {
  size_t len;
  char *data = model(name, &len);
  if (!data) cr_skip_test("no ../shared/savedmodels");
  dfx_status *st = dfx_status_new();
  dfx_graph *g = NULL, *low = NULL, *back = NULL;
  cr_assert_eq(dfx__savedmodel_import(data, len, NULL, &g, st), DFX_OK, "%s", dfx_status_message(st));
  dfx__free(data);
  cr_expect_gt(count_op(g, "StatefulPartitionedCall"), 0);
  dfx_optimize_options o = {.passes = "none"};
  cr_assert_eq(dfx_graph_optimize(g, &o, &low, NULL, st), DFX_OK, "%s", dfx_status_message(st));
  const char *functional[] = {"While", "StatelessWhile", "If", "StatelessIf", "PartitionedCall",
                              "StatefulPartitionedCall"};
  for (int k = 0; k < 6; k++) cr_expect_eq(count_op(low, functional[k]), 0, "%s left", functional[k]);
  cr_expect_eq(count_op(low, "LoopCond"), loops);
  cr_expect_eq(count_op(low, "Enter"), count_op(low, "Exit"));
  char path[] = "/tmp/dfx_sm_XXXXXX.pb";
  int fd = mkstemps(path, 3);
  cr_assert(fd >= 0);
  close(fd);
  cr_assert_eq(dfx_graph_save(low, path, st), DFX_OK, "%s", dfx_status_message(st));
  cr_expect_eq(dfx_graph_load(path, &back, st), DFX_OK, "%s", dfx_status_message(st));
  unlink(path);
  cr_expect_eq(dfx_graph_node_count(back), dfx_graph_node_count(low));
  dfx_graph_free(back);
  dfx_graph_free(low);
  dfx_graph_free(g);
  dfx_status_free(st);
}

Test(savedmodel, keras_mlp_imports_and_lowers) { lowers("tf2_keras_mlp", 0); }
Test(savedmodel, keras_lstm_imports_and_lowers_to_four_loops) { lowers("tf2_keras_lstm", 4); }

Test(savedmodel, loading_a_savedmodel_directory_says_what_it_is) {
  const char *root = getenv("DFX_SOURCE_ROOT");
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/../shared/savedmodels/tf2_keras_lstm", root ? root : "..");
  size_t len;
  char *data = model("tf2_keras_lstm", &len);
  if (!data) cr_skip_test("no ../shared/savedmodels");
  dfx__free(data);
  dfx_graph *g = NULL;
  dfx_status *st = dfx_status_new();
  cr_assert_eq(dfx_graph_load(dir, &g, st), DFX_EINVAL);
  cr_expect(strstr(dfx_status_message(st), "is a SavedModel directory; its saved_model.pb: this is a TensorFlow SavedModel"),
            "%s", dfx_status_message(st));
  cr_expect(strstr(dfx_status_message(st), "signature 'serving_default' (lstm_input="), "%s", dfx_status_message(st));
  cr_assert_eq(dfx_graph_load("/", &g, st), DFX_EIO);
  cr_expect(strstr(dfx_status_message(st), "is a directory, not a GraphDef file"), "%s", dfx_status_message(st));
  dfx_status_free(st);
}
