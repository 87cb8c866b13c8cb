/* test_graph.c - the strings family through whole GraphDefs and sessions:
 * the init-then-lookup pattern of TF1 tables (one run initialises, later
 * runs look up), tables shared by runs (also concurrent ones) and private
 * to a session, handles that cross sessions, and a text pipeline of the
 * string ops. Every test ends with the counting allocator back at zero, so
 * the session's store frees its tables. */
#include <uv.h>

#include "eutil.h"
#include "stest.h"

TestSuite(graph, .init = eu_setup, .fini = eu_teardown, .timeout = 60);

/* A table string -> int64 {a: 1, b: 2, c: 3} with default -1, in V2 or V1
 * ops, initialised by "init_all_tables" as tf.compat.v1.tables_initializer
 * builds it. */
#define TABLE_GRAPH(V, HT, INIT, FIND, SIZE)                                                          \
  "node { name: \"table\" op: \"" HT "\"" ST_ATTR_T("key_dtype", "DT_STRING")                        \
      ST_ATTR_T("value_dtype", "DT_INT64") " }\n" ST_CONST_SVEC("keys", 3, "[\"a\", \"b\", \"c\"]")  \
      ST_CONST_IVEC("vals", "DT_INT64", 3, "int64_val", "[1, 2, 3]")                                  \
      "node { name: \"init\" op: \"" INIT "\"" ST_IN("table") ST_IN("keys") ST_IN("vals")            \
      ST_ATTR_T("Tkey", "DT_STRING") ST_ATTR_T("Tval", "DT_INT64") " }\n"                            \
      "node { name: \"init_all_tables\" op: \"NoOp\" input: \"^init\" }\n"                           \
      "node { name: \"x\" op: \"Placeholder\"" ST_ATTR_T("dtype", "DT_STRING") " }\n"                \
      ST_CONST_SCALAR("dflt", "DT_INT64", "int64_val", "-1")                                          \
      "node { name: \"find\" op: \"" FIND "\"" ST_IN("table") ST_IN("x") ST_IN("dflt")               \
      ST_ATTR_T("Tin", "DT_STRING") ST_ATTR_T("Tout", "DT_INT64") " }\n"                             \
      "node { name: \"size\" op: \"" SIZE "\"" ST_IN("table") " }\n"

static const char *V2_GRAPH =
    TABLE_GRAPH(2, "HashTableV2", "InitializeTableV2", "LookupTableFindV2", "LookupTableSizeV2");
static const char *V1_GRAPH = TABLE_GRAPH(1, "HashTable", "InitializeTable", "LookupTableFind", "LookupTableSize");

static int64_t i64_at(const dfx_tensor *t, int64_t i) { return ((const int64_t *)dfx_tensor_data(t))[i]; }

static void lookup(dfx_session *s, const char *q0, const char *q1, const char *q2, int64_t w0, int64_t w1, int64_t w2) {
  const char *q[] = {q0, q1, q2};
  dfx_tensor *x = st_vec(3, q), *out = NULL;
  char msg[2048];
  cr_assert_eq(st_srun(s, "x", &x, "find", &out, NULL, msg, sizeof msg), DFX_OK, "%s", msg);
  cr_expect(i64_at(out, 0) == w0 && i64_at(out, 1) == w1 && i64_at(out, 2) == w2, "%lld %lld %lld",
            (long long)i64_at(out, 0), (long long)i64_at(out, 1), (long long)i64_at(out, 2));
  dfx_tensor_free(out);
  dfx_tensor_free(x);
}

static int64_t table_size(dfx_session *s) {
  dfx_tensor *out = NULL;
  char msg[2048];
  cr_assert_eq(st_srun(s, NULL, NULL, "size", &out, NULL, msg, sizeof msg), DFX_OK, "%s", msg);
  int64_t v = i64_at(out, 0);
  dfx_tensor_free(out);
  return v;
}

static void init_then_lookup(const char *text, int threads) {
  dfx_graph *g = eu_graph(text);
  dfx_session *s = st_session(g, threads);
  char msg[2048];
  cr_expect_eq(table_size(s), 0, "the table exists, empty, before initialisation");
  const char *q[] = {"a"};
  dfx_tensor *x = st_vec(1, q), *out = NULL;
  cr_expect_eq(st_srun(s, "x", &x, "find", &out, NULL, msg, sizeof msg), DFX_EPRECOND);
  cr_expect(strstr(msg, "Table not initialized.") && strstr(msg, "find"), "%s", msg);
  dfx_tensor_free(x);
  /* The initialiser runs as a target, alone; later runs see its work. */
  cr_assert_eq(st_srun(s, NULL, NULL, NULL, NULL, "init_all_tables", msg, sizeof msg), DFX_OK, "%s", msg);
  cr_expect_eq(table_size(s), 3);
  lookup(s, "b", "zz", "a", 2, -1, 1);
  lookup(s, "c", "", "c", 3, -1, 3);
  /* Running the initialiser again is harmless (same data, TF's rule). */
  cr_assert_eq(st_srun(s, NULL, NULL, NULL, NULL, "init_all_tables", msg, sizeof msg), DFX_OK, "%s", msg);
  lookup(s, "a", "b", "c", 1, 2, 3);
  dfx_session_free(s);
  dfx_graph_free(g);
}

Test(graph, v2_init_then_lookup) { init_then_lookup(V2_GRAPH, 1); }
Test(graph, v1_init_then_lookup) { init_then_lookup(V1_GRAPH, 1); }
Test(graph, v2_init_then_lookup_threaded) { init_then_lookup(V2_GRAPH, 4); }

Test(graph, init_and_lookup_in_one_run) {
  /* The lookup waits for the initialiser through a control edge. */
  char text[8192];
  snprintf(text, sizeof text, "%s%s", V2_GRAPH,
           "node { name: \"find2\" op: \"LookupTableFindV2\" input: \"table\" input: \"x\" input: \"dflt\""
           " input: \"^init\"" ST_ATTR_T("Tin", "DT_STRING") ST_ATTR_T("Tout", "DT_INT64") " }\n");
  dfx_graph *g = eu_graph(text);
  dfx_session *s = st_session(g, 2);
  const char *q[] = {"c", "a"};
  dfx_tensor *x = st_vec(2, q), *out = NULL;
  char msg[2048];
  cr_assert_eq(st_srun(s, "x", &x, "find2", &out, NULL, msg, sizeof msg), DFX_OK, "%s", msg);
  cr_expect(i64_at(out, 0) == 3 && i64_at(out, 1) == 1);
  dfx_tensor_free(out);
  dfx_tensor_free(x);
  dfx_session_free(s);
  dfx_graph_free(g);
}

/* ---- one table, many runs ---- */

typedef struct worker {
  dfx_session *s;
  int fails;
} worker;

static void hammer(void *arg) {
  worker *w = arg;
  const char *q[] = {"a", "b", "c", "d"};
  for (int it = 0; it < 200; it++) {
    dfx_tensor *x = st_vec(4, q), *out = NULL;
    dfx_status *st = dfx_status_new();
    dfx_port fp = {"x", 0}, op = {"find", 0};
    if (dfx_session_run(w->s, NULL, &fp, &x, 1, &op, &out, 1, NULL, 0, st) != DFX_OK) w->fails++;
    else if (i64_at(out, 0) != 1 || i64_at(out, 1) != 2 || i64_at(out, 2) != 3 || i64_at(out, 3) != -1) w->fails++;
    dfx_tensor_free(out);
    dfx_tensor_free(x);
    dfx_status_free(st);
  }
}

Test(graph, one_table_shared_by_concurrent_runs) {
  dfx_graph *g = eu_graph(V2_GRAPH);
  dfx_session *s = st_session(g, 4);
  char msg[2048];
  cr_assert_eq(st_srun(s, NULL, NULL, NULL, NULL, "init", msg, sizeof msg), DFX_OK, "%s", msg);
  uv_thread_t t[4];
  worker w[4];
  for (int i = 0; i < 4; i++) {
    w[i] = (worker){s, 0};
    uv_thread_create(&t[i], hammer, &w[i]);
  }
  for (int i = 0; i < 4; i++) {
    uv_thread_join(&t[i]);
    cr_expect_eq(w[i].fails, 0, "thread %d: %d failed lookups", i, w[i].fails);
  }
  dfx_session_free(s);
  dfx_graph_free(g);
}

static void init_race(void *arg) {
  worker *w = arg;
  dfx_status *st = dfx_status_new();
  const char *target = "init";
  if (dfx_session_run(w->s, NULL, NULL, NULL, 0, NULL, NULL, 0, &target, 1, st) != DFX_OK) w->fails++;
  dfx_status_free(st);
}

Test(graph, concurrent_initialisers_fill_the_table_once) {
  dfx_graph *g = eu_graph(V2_GRAPH);
  dfx_session *s = st_session(g, 4);
  uv_thread_t t[4];
  worker w[4];
  for (int i = 0; i < 4; i++) {
    w[i] = (worker){s, 0};
    uv_thread_create(&t[i], init_race, &w[i]);
  }
  for (int i = 0; i < 4; i++) {
    uv_thread_join(&t[i]);
    cr_expect_eq(w[i].fails, 0);
  }
  cr_expect_eq(table_size(s), 3);
  lookup(s, "a", "b", "q", 1, 2, -1);
  dfx_session_free(s);
  dfx_graph_free(g);
}

Test(graph, each_session_has_its_own_tables) {
  dfx_graph *g = eu_graph(V2_GRAPH);
  dfx_session *a = st_session(g, 1), *b = st_session(g, 1);
  char msg[2048];
  cr_assert_eq(st_srun(a, NULL, NULL, NULL, NULL, "init_all_tables", msg, sizeof msg), DFX_OK, "%s", msg);
  lookup(a, "a", "b", "c", 1, 2, 3);
  cr_expect_eq(table_size(b), 0);
  const char *q[] = {"a"};
  dfx_tensor *x = st_vec(1, q), *out = NULL, *h = NULL;
  cr_expect_eq(st_srun(b, "x", &x, "find", &out, NULL, msg, sizeof msg), DFX_EPRECOND, "%s", msg);
  /* A handle fetched from one session names nothing in another. */
  cr_assert_eq(st_srun(a, NULL, NULL, "table", &h, NULL, msg, sizeof msg), DFX_OK, "%s", msg);
  cr_assert_eq(dfx_tensor_dtype(h), DFX_RESOURCE);
  dfx_tensor *feeds[2] = {h, x};
  cr_expect_eq(st_srun(b, "table,x", feeds, "find", &out, NULL, msg, sizeof msg), DFX_ENOTFOUND, "%s", msg);
  cr_expect(strstr(msg, "does not name a table of this session"), "%s", msg);
  /* ... but is good in its own session, fed like any tensor. */
  cr_assert_eq(st_srun(a, "table,x", feeds, "find", &out, NULL, msg, sizeof msg), DFX_OK, "%s", msg);
  cr_expect_eq(i64_at(out, 0), 1);
  dfx_tensor_free(out);
  dfx_tensor_free(h);
  dfx_tensor_free(x);
  dfx_session_free(a);
  dfx_session_free(b);
  dfx_graph_free(g);
}

Test(graph, shared_name_links_two_table_nodes) {
  /* Two HashTableV2 nodes with one shared_name: initialising through one
   * fills what the other reads. */
  const char *text = "node { name: \"t1\" op: \"HashTableV2\"" ST_ATTR_T("key_dtype", "DT_INT64")
      ST_ATTR_T("value_dtype", "DT_STRING") ST_ATTR_S("shared_name", "ids") " }\n"
      "node { name: \"t2\" op: \"HashTableV2\"" ST_ATTR_T("key_dtype", "DT_INT64")
      ST_ATTR_T("value_dtype", "DT_STRING") ST_ATTR_S("shared_name", "ids") " }\n"
      ST_CONST_IVEC("k", "DT_INT64", 2, "int64_val", "[7, 9]") ST_CONST_SVEC("v", 2, "[\"seven\", \"nine\"]")
      "node { name: \"imp\" op: \"LookupTableImportV2\"" ST_IN("t1") ST_IN("k") ST_IN("v")
      ST_ATTR_T("Tin", "DT_INT64") ST_ATTR_T("Tout", "DT_STRING") " }\n"
      ST_CONST_IVEC("q", "DT_INT64", 3, "int64_val", "[9, 8, 7]") ST_CONST_SCALAR("d", "DT_STRING", "string_val", "\"?\"")
      "node { name: \"f\" op: \"LookupTableFindV2\"" ST_IN("t2") ST_IN("q") ST_IN("d")
      ST_ATTR_T("Tin", "DT_INT64") ST_ATTR_T("Tout", "DT_STRING") " }\n";
  dfx_graph *g = eu_graph(text);
  dfx_session *s = st_session(g, 2);
  char msg[2048];
  dfx_tensor *out = NULL;
  cr_assert_eq(st_srun(s, NULL, NULL, NULL, NULL, "imp", msg, sizeof msg), DFX_OK, "%s", msg);
  cr_assert_eq(st_srun(s, NULL, NULL, "f", &out, NULL, msg, sizeof msg), DFX_OK, "%s", msg);
  ST_EXPECT_STRS(out, 3, "nine", "?", "seven");
  dfx_tensor_free(out);
  dfx_session_free(s);
  dfx_graph_free(g);
}

/* ---- the string ops in one text pipeline ---- */

static const char *PIPELINE =
    "node { name: \"x\" op: \"Placeholder\"" ST_ATTR_T("dtype", "DT_STRING") " }\n"
    "node { name: \"clean\" op: \"StaticRegexReplace\"" ST_IN("x") ST_ATTR_S("pattern", "[[:punct:]]")
    ST_ATTR_S("rewrite", "") " }\n"
    ST_CONST_SCALAR("sep", "DT_STRING", "string_val", "\"\"")
    "node { name: \"split\" op: \"StringSplitV2\"" ST_IN("clean") ST_IN("sep") " }\n"
    "node { name: \"vocab\" op: \"HashTableV2\"" ST_ATTR_T("key_dtype", "DT_STRING")
    ST_ATTR_T("value_dtype", "DT_INT64") " }\n"
    ST_CONST_SVEC("words", 3, "[\"Hello\", \"World\", \"the\"]") ST_CONST_IVEC("ids", "DT_INT64", 3, "int64_val", "[0, 1, 2]")
    "node { name: \"init\" op: \"InitializeTableV2\"" ST_IN("vocab") ST_IN("words") ST_IN("ids")
    ST_ATTR_T("Tkey", "DT_STRING") ST_ATTR_T("Tval", "DT_INT64") " }\n"
    ST_CONST_SCALAR("oov", "DT_INT64", "int64_val", "-1")
    "node { name: \"lookup\" op: \"LookupTableFindV2\"" ST_IN("vocab") ST_IN("split:1") ST_IN("oov")
    ST_ATTR_T("Tin", "DT_STRING") ST_ATTR_T("Tout", "DT_INT64") " }\n"
    "node { name: \"bucket\" op: \"StringToHashBucketFast\"" ST_IN("split:1") ST_ATTR_I("num_buckets", 1000) " }\n"
    "node { name: \"text\" op: \"AsString\"" ST_IN("lookup") ST_ATTR_T("T", "DT_INT64") ST_ATTR_I("width", 3) " }\n"
    "node { name: \"back\" op: \"StringToNumber\"" ST_IN("text") ST_ATTR_T("out_type", "DT_INT64") " }\n"
    ST_CONST_SVEC("toks", 3, "[\"a\", \"b\", \"c\"]") ST_CONST_IVEC("rows", "DT_INT64", 2, "int64_val", "[0, 3]")
    "node { name: \"bigrams\" op: \"StringNGrams\"" ST_IN("toks") ST_IN("rows") ST_ATTR_S("separator", "_")
    " attr { key: \"ngram_widths\" value { list { i: 2 } } }" ST_ATTR_S("left_pad", "") ST_ATTR_S("right_pad", "")
    ST_ATTR_I("pad_width", 0) ST_ATTR_B("preserve_short_sequences", false) ST_ATTR_T("Tsplits", "DT_INT64") " }\n";

Test(graph, text_pipeline) {
  dfx_graph *g = eu_graph(PIPELINE);
  dfx_session *s = st_session(g, 2);
  char msg[2048];
  cr_assert_eq(st_srun(s, NULL, NULL, NULL, NULL, "init", msg, sizeof msg), DFX_OK, "%s", msg);
  const char *in[] = {"Hello, World!", "the  test."};
  dfx_tensor *x = st_vec(2, in), *out[7] = {NULL};
  cr_assert_eq(st_srun(s, "x", &x, "clean,split:1,split:2,lookup,bucket,text,back", out, NULL, msg, sizeof msg),
               DFX_OK, "%s", msg);
  ST_EXPECT_STRS(out[0], 2, "Hello World", "the  test");
  ST_EXPECT_STRS(out[1], 4, "Hello", "World", "the", "test");
  cr_expect(i64_at(out[2], 0) == 2 && i64_at(out[2], 1) == 2);
  cr_expect(i64_at(out[3], 0) == 0 && i64_at(out[3], 1) == 1 && i64_at(out[3], 2) == 2 && i64_at(out[3], 3) == -1);
  /* Fingerprint64("Hello") = ...151, ("World") = ...472, ("test") = ...506. */
  cr_expect(i64_at(out[4], 0) == 151 && i64_at(out[4], 1) == 472 && i64_at(out[4], 3) == 506);
  ST_EXPECT_STRS(out[5], 4, "  0", "  1", "  2", " -1");
  cr_expect(i64_at(out[6], 0) == 0 && i64_at(out[6], 1) == 1 && i64_at(out[6], 2) == 2 && i64_at(out[6], 3) == -1);
  for (int i = 0; i < 7; i++) dfx_tensor_free(out[i]);
  dfx_tensor *bi = NULL;
  cr_assert_eq(st_srun(s, NULL, NULL, "bigrams", &bi, NULL, msg, sizeof msg), DFX_OK, "%s", msg);
  ST_EXPECT_STRS(bi, 2, "a_b", "b_c");
  dfx_tensor_free(bi);
  /* A bad string fails the run with TF's message, naming the node. */
  const char *bad[] = {"x", "y"};
  dfx_tensor *y = st_vec(2, bad), *z = NULL;
  cr_expect_eq(st_srun(s, "text", &y, "back", &z, NULL, msg, sizeof msg), DFX_EINVAL);
  cr_expect(strstr(msg, "StringToNumberOp could not correctly convert string: x") && strstr(msg, "back"), "%s", msg);
  dfx_tensor_free(y);
  dfx_tensor_free(x);
  dfx_session_free(s);
  dfx_graph_free(g);
}
