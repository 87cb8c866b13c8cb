/* test_ckpt_graph.c - checkpoints from graphs and sessions: SaveV2 /
 * RestoreV2 / MergeV2Checkpoints kernels in sessions, saving an
 * uninitialised variable refused with its name, dfx_session_save/restore
 * (whole and by name, with a bad checkpoint leaving the session as it
 * was), and issue 16's acceptance: the TF-written checkpoint restored into
 * its .meta graph gives the frozen twin's outputs and the saved value. */
#include "ctest.h"

TestSuite(ckpt_graph, .init = ct_setup, .fini = ct_teardown, .timeout = 60);

#define TYPE(k, t) " attr { key: \"" k "\" value { type: " t " } }"
#define TYPES(k, t) " attr { key: \"" k "\" value { list { type: " t " } } }"
#define IN(s) " input: \"" s "\""
#define STR_CONST(name, shape, vals) \
  "node { name: \"" name "\" op: \"Const\"" TYPE("dtype", "DT_STRING") \
  " attr { key: \"value\" value { tensor { dtype: DT_STRING tensor_shape { " shape " } " vals " } } } }\n"

static const char *graph =
    "node { name: \"v\" op: \"VariableV2\"" TYPE("dtype", "DT_FLOAT")
    " attr { key: \"shape\" value { shape { dim { size: 3 } } } } }\n"
    "node { name: \"val\" op: \"Const\"" TYPE("dtype", "DT_FLOAT")
    " attr { key: \"value\" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 3 } } float_val: 1.5 "
    "float_val: -2 float_val: 7 } } } }\n"
    "node { name: \"init\" op: \"Assign\"" IN("v") IN("val") TYPE("T", "DT_FLOAT") " }\n"
    "node { name: \"read\" op: \"Identity\"" IN("v") TYPE("T", "DT_FLOAT") " }\n"
    "node { name: \"prefix\" op: \"Placeholder\"" TYPE("dtype", "DT_STRING") " }\n"
    STR_CONST("names", "dim { size: 1 }", "string_val: \"v\"")
    STR_CONST("slices", "dim { size: 1 }", "string_val: \"\"")
    "node { name: \"save\" op: \"SaveV2\"" IN("prefix") IN("names") IN("slices") IN("v") TYPES("dtypes", "DT_FLOAT") " }\n"
    "node { name: \"restore\" op: \"RestoreV2\"" IN("prefix") IN("names") IN("slices") TYPES("dtypes", "DT_FLOAT") " }\n"
    "node { name: \"assign_restored\" op: \"Assign\"" IN("v") IN("restore") TYPE("T", "DT_FLOAT") " }\n"
    "node { name: \"restore_int\" op: \"RestoreV2\"" IN("prefix") IN("names") IN("slices") TYPES("dtypes", "DT_INT32") " }\n"
    "node { name: \"srcs\" op: \"Placeholder\"" TYPE("dtype", "DT_STRING") " }\n"
    "node { name: \"merge\" op: \"MergeV2Checkpoints\"" IN("srcs") IN("prefix") " }\n";

static dfx_tensor *str_tensor(const char *s) {
  dfx_tensor *t = dfx__tensor_alloc(DFX_STRING, 0, NULL, NULL);
  dfx_str *p = t->data;
  p->ptr = dfx__strdup(s);
  p->len = strlen(s);
  return t;
}

typedef struct sess {
  dfx_graph *g;
  dfx_session *s;
  dfx_status *st;
} sess;

static sess open_s(const char *text) {
  sess c = {NULL, NULL, dfx_status_new()};
  cr_assert_eq(dfx_graph_import(text, strlen(text), &c.g, c.st), DFX_OK, "%s", dfx_status_message(c.st));
  cr_assert_eq(dfx_session_new(c.g, NULL, &c.s, c.st), DFX_OK, "%s", dfx_status_message(c.st));
  return c;
}
static void close_s(sess *c) {
  dfx_session_free(c->s);
  dfx_graph_free(c->g);
  dfx_status_free(c->st);
}

/* Runs target (and fetches `fetch` into *out when given) with "prefix" fed. */
static dfx_code run_p(sess *c, const char *prefix, const char *target, const char *fetch, dfx_tensor **out) {
  dfx_tensor *p = str_tensor(prefix);
  dfx_port fp = {"prefix", 0}, op = {fetch, 0};
  const char *tg[1] = {target};
  dfx_code r = dfx_session_run(c->s, NULL, &fp, &p, 1, &op, out, fetch ? 1 : 0, tg, target ? 1 : 0, c->st);
  dfx__tensor_unref(p);
  return r;
}

static void expect_v(sess *c, float a, float b, float d) {
  dfx_port p = {"read", 0};
  dfx_tensor *t = NULL;
  cr_assert_eq(dfx_session_run(c->s, NULL, NULL, NULL, 0, &p, &t, 1, NULL, 0, c->st), DFX_OK, "%s",
               dfx_status_message(c->st));
  const float *v = dfx_tensor_data(t);
  cr_assert(v[0] == a && v[1] == b && v[2] == d, "%g %g %g", v[0], v[1], v[2]);
  dfx_tensor_free(t);
}

Test(ckpt_graph, save_and_restore_kernels_round_trip) {
  char prefix[512];
  ct_path(prefix, sizeof prefix, "model");
  sess a = open_s(graph);
  /* Saving before the variable has a value names it. */
  cr_assert_eq(run_p(&a, prefix, "save", NULL, NULL), DFX_EPRECOND);
  cr_assert(strstr(dfx_status_message(a.st), "Attempting to use uninitialized value v"), "%s",
            dfx_status_message(a.st));
  const char *init[1] = {"init"};
  cr_assert_eq(dfx_session_run(a.s, NULL, NULL, NULL, 0, NULL, NULL, 0, init, 1, a.st), DFX_OK);
  cr_assert_eq(run_p(&a, prefix, "save", NULL, NULL), DFX_OK, "%s", dfx_status_message(a.st));
  /* A second session on the same graph restores it through the graph. */
  sess b = open_s(graph);
  cr_assert_eq(run_p(&b, prefix, "assign_restored", NULL, NULL), DFX_OK, "%s", dfx_status_message(b.st));
  expect_v(&b, 1.5f, -2, 7);
  /* A dtype that differs from the saved one is refused. */
  dfx_tensor *t = NULL;
  cr_assert_eq(run_p(&b, prefix, NULL, "restore_int", &t), DFX_EINVAL);
  cr_assert(strstr(dfx_status_message(b.st), "expected dtype int32 does not equal original dtype float32"), "%s",
            dfx_status_message(b.st));
  char missing[512];
  ct_path(missing, sizeof missing, "nothing_here");
  cr_assert_eq(run_p(&b, missing, NULL, "restore", &t), DFX_ENOTFOUND);
  close_s(&a);
  close_s(&b);
}

Test(ckpt_graph, merge_moves_a_bundle_into_place) {
  char tmp[512], dest[512];
  ct_path(tmp, sizeof tmp, "part_tmp");
  ct_path(dest, sizeof dest, "merged");
  sess a = open_s(graph);
  const char *init[1] = {"init"};
  cr_assert_eq(dfx_session_run(a.s, NULL, NULL, NULL, 0, NULL, NULL, 0, init, 1, a.st), DFX_OK);
  cr_assert_eq(run_p(&a, tmp, "save", NULL, NULL), DFX_OK, "%s", dfx_status_message(a.st));
  dfx_tensor *feeds[2] = {str_tensor(dest), str_tensor(tmp)};
  dfx_port fp[2] = {{"prefix", 0}, {"srcs", 0}};
  const char *tg[1] = {"merge"};
  cr_assert_eq(dfx_session_run(a.s, NULL, fp, feeds, 2, NULL, NULL, 0, tg, 1, a.st), DFX_OK, "%s",
               dfx_status_message(a.st));
  char idx[600];
  snprintf(idx, sizeof idx, "%s.index", tmp);
  cr_assert_neq(access(idx, F_OK), 0, "the merged source was not removed");
  dfx_checkpoint *c = NULL;
  cr_assert_eq(dfx_checkpoint_open(dest, &c, a.st), DFX_OK, "%s", dfx_status_message(a.st));
  cr_assert_eq(dfx_checkpoint_count(c), 1);
  dfx_tensor *t = NULL;
  cr_assert_eq(dfx_checkpoint_read(c, "v", &t, a.st), DFX_OK);
  cr_assert_eq(((const float *)dfx_tensor_data(t))[2], 7);
  dfx_tensor_free(t);
  dfx_checkpoint_close(c);
  dfx__tensor_unref(feeds[0]);
  dfx__tensor_unref(feeds[1]);
  close_s(&a);
}

Test(ckpt_graph, session_save_and_restore) {
  char prefix[512];
  ct_path(prefix, sizeof prefix, "sess");
  sess a = open_s(graph);
  const char *init[1] = {"init"};
  cr_assert_eq(dfx_session_run(a.s, NULL, NULL, NULL, 0, NULL, NULL, 0, init, 1, a.st), DFX_OK);
  cr_assert_eq(dfx_session_variable_count(a.s), 1);
  cr_assert_str_eq(dfx_session_variable_name(a.s, 0), "v");
  cr_assert_eq(dfx_session_save(a.s, prefix, a.st), DFX_OK, "%s", dfx_status_message(a.st));
  /* Restored before any run: the VariableV2 node finds the value. */
  sess b = open_s(graph);
  cr_assert_eq(dfx_session_restore(b.s, prefix, NULL, NULL, 0, b.st), DFX_OK, "%s", dfx_status_message(b.st));
  expect_v(&b, 1.5f, -2, 7);
  /* By name into another variable. */
  const char *tn[1] = {"v"}, *vn[1] = {"copy"};
  cr_assert_eq(dfx_session_restore(b.s, prefix, tn, vn, 1, b.st), DFX_OK, "%s", dfx_status_message(b.st));
  dfx_tensor *t = NULL;
  cr_assert_eq(dfx_session_variable_read(b.s, "copy", &t, b.st), DFX_OK);
  cr_assert_eq(((const float *)dfx_tensor_data(t))[0], 1.5f);
  /* A missing key fails and changes nothing. */
  float nine[3] = {9, 9, 9};
  memcpy(dfx_tensor_data(t), nine, sizeof nine);
  cr_assert_eq(dfx_session_variable_assign(b.s, "v", t, b.st), DFX_OK);
  dfx_tensor_free(t);
  const char *tn2[2] = {"v", "w"};
  cr_assert_eq(dfx_session_restore(b.s, prefix, tn2, NULL, 2, b.st), DFX_ENOTFOUND);
  cr_assert(strstr(dfx_status_message(b.st), "Key w not found"), "%s", dfx_status_message(b.st));
  expect_v(&b, 9, 9, 9);
  cr_assert_eq(dfx_session_variable_read(b.s, "nope", &t, b.st), DFX_ENOTFOUND);
  close_s(&a);
  close_s(&b);
}

/* ---- issue 16's acceptance: TF's simple_graph ---- */

static dfx_tensor *vec4(const float *v) {
  int64_t d = 4;
  dfx_tensor *t = dfx_tensor_new(DFX_F32, &d, 1);
  memcpy(dfx_tensor_data(t), v, sizeof(float) * 4);
  return t;
}

/* Runs `output` with the two inputs fed; copies it to out. */
static void run_output(dfx_session *s, const float *a, const float *b, float *out, dfx_status *st) {
  dfx_tensor *f[2] = {vec4(a), vec4(b)};
  dfx_port fp[2] = {{"input_0", 0}, {"input_1", 0}}, op = {"output", 0};
  dfx_tensor *t = NULL;
  cr_assert_eq(dfx_session_run(s, NULL, fp, f, 2, &op, &t, 1, NULL, 0, st), DFX_OK, "%s", dfx_status_message(st));
  memcpy(out, dfx_tensor_data(t), sizeof(float) * 4);
  dfx_tensor_free(t);
  dfx_tensor_free(f[0]);
  dfx_tensor_free(f[1]);
}

Test(ckpt_graph, tf_checkpoint_into_its_meta_graph_matches_the_frozen_twin) {
  char meta[512], prefix[512], frozen[512];
  ct_shared(meta, sizeof meta, "simple_graph/data-all-1000.meta");
  ct_shared(prefix, sizeof prefix, "simple_graph/data-all-1000");
  ct_shared(frozen, sizeof frozen, "simple_graph/frozen_model.pb");
  ct_need(meta);
  ct_need(frozen);
  dfx_status *st = dfx_status_new();
  dfx_metagraph *m = NULL;
  cr_assert_eq(dfx_metagraph_load(meta, &m, st), DFX_OK, "%s", dfx_status_message(st));
  cr_assert_str_eq(dfx_metagraph_saver_filename_tensor(m), "save/Const:0");
  cr_assert_str_eq(dfx_metagraph_saver_restore_op(m), "save/restore_all");
  cr_assert_str_eq(dfx_metagraph_saver_save_tensor(m), "save/control_dependency:0");
  dfx_session *s = NULL;
  cr_assert_eq(dfx_session_new(dfx_metagraph_graph(m), NULL, &s, st), DFX_OK, "%s", dfx_status_message(st));
  /* Before the restore the variable has no value. */
  dfx_port rp = {"Variable/read", 0};
  dfx_tensor *t = NULL;
  cr_assert_eq(dfx_metagraph_restore(m, s, prefix, st), DFX_OK, "%s", dfx_status_message(st));
  cr_assert_eq(dfx_session_run(s, NULL, NULL, NULL, 0, &rp, &t, 1, NULL, 0, st), DFX_OK, "%s",
               dfx_status_message(st));
  const float *v = dfx_tensor_data(t);
  cr_assert(v[0] == 2 && v[1] == 4 && v[2] == 6 && v[3] == 8, "%g %g %g %g", v[0], v[1], v[2], v[3]);
  dfx_tensor_free(t);
  /* The outputs equal the frozen twin's on the same inputs. */
  dfx_graph *fg = NULL;
  dfx_session *fs = NULL;
  cr_assert_eq(dfx_graph_load(frozen, &fg, st), DFX_OK, "%s", dfx_status_message(st));
  cr_assert_eq(dfx_session_new(fg, NULL, &fs, st), DFX_OK, "%s", dfx_status_message(st));
  const float a[4] = {1, -2, 3.5f, 0}, b[4] = {10, 20, -30, 0.25f};
  float got[4], want[4];
  run_output(s, a, b, got, st);
  run_output(fs, a, b, want, st);
  for (int i = 0; i < 4; i++) cr_assert_eq(got[i], want[i], "output[%d]: %g vs frozen %g", i, got[i], want[i]);
  /* The graph's own saver writes what it restored. */
  char out[512];
  ct_path(out, sizeof out, "resaved");
  cr_assert_eq(dfx_metagraph_save(m, s, out, st), DFX_OK, "%s", dfx_status_message(st));
  dfx_checkpoint *c = NULL;
  cr_assert_eq(dfx_checkpoint_open(out, &c, st), DFX_OK, "%s", dfx_status_message(st));
  cr_assert_eq(dfx_checkpoint_read(c, "Variable", &t, st), DFX_OK, "%s", dfx_status_message(st));
  cr_assert_eq(((const float *)dfx_tensor_data(t))[3], 8);
  dfx_tensor_free(t);
  dfx_checkpoint_close(c);
  /* The C API restore gives the same value in a fresh session. */
  dfx_session *s2 = NULL;
  cr_assert_eq(dfx_session_new(dfx_metagraph_graph(m), NULL, &s2, st), DFX_OK);
  cr_assert_eq(dfx_session_restore(s2, prefix, NULL, NULL, 0, st), DFX_OK, "%s", dfx_status_message(st));
  cr_assert_eq(dfx_session_run(s2, NULL, NULL, NULL, 0, &rp, &t, 1, NULL, 0, st), DFX_OK, "%s",
               dfx_status_message(st));
  cr_assert_eq(((const float *)dfx_tensor_data(t))[1], 4);
  dfx_tensor_free(t);
  dfx_session_free(s2);
  dfx_session_free(fs);
  dfx_graph_free(fg);
  dfx_session_free(s);
  dfx_metagraph_free(m);
  dfx_status_free(st);
}

Test(ckpt_graph, metagraph_errors) {
  dfx_status *st = dfx_status_new();
  dfx_metagraph *m = NULL;
  const unsigned char junk[] = {0xff, 0xff, 0xff};
  cr_assert_eq(dfx_metagraph_import(junk, sizeof junk, &m, st), DFX_EINVAL);
  cr_assert_null(m);
  cr_assert(strstr(dfx_status_message(st), "not a valid binary MetaGraphDef"), "%s", dfx_status_message(st));
  cr_assert_eq(dfx_metagraph_import("", 0, &m, st), DFX_EINVAL);
  cr_assert(strstr(dfx_status_message(st), "no graph_def"), "%s", dfx_status_message(st));
  dfx_status_free(st);
}

/* ---- TF1's sharded Saver: temporary shard names, SaveV2, merge ---- */

static const char *sharded_saver =
    "node { name: \"v\" op: \"VariableV2\"" TYPE("dtype", "DT_FLOAT")
    " attr { key: \"shape\" value { shape { dim { size: 3 } } } } }\n"
    "node { name: \"val\" op: \"Const\"" TYPE("dtype", "DT_FLOAT")
    " attr { key: \"value\" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 3 } } float_val: 4 "
    "float_val: 5 float_val: 6 } } } }\n"
    "node { name: \"init\" op: \"Assign\"" IN("v") IN("val") TYPE("T", "DT_FLOAT") " }\n"
    "node { name: \"prefix\" op: \"Placeholder\"" TYPE("dtype", "DT_STRING") " }\n"
    STR_CONST("part", "", "string_val: \"_temp_1234/part\"")
    "node { name: \"tmp\" op: \"StringJoin\"" IN("prefix") IN("part")
    " attr { key: \"N\" value { i: 2 } } attr { key: \"separator\" value { s: \"\" } } }\n"
    "node { name: \"num_shards\" op: \"Const\"" TYPE("dtype", "DT_INT32")
    " attr { key: \"value\" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 1 } } } }\n"
    "node { name: \"shard\" op: \"Const\"" TYPE("dtype", "DT_INT32")
    " attr { key: \"value\" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 0 } } } }\n"
    "node { name: \"fname\" op: \"ShardedFilename\"" IN("tmp") IN("shard") IN("num_shards") " }\n"
    STR_CONST("names", "dim { size: 1 }", "string_val: \"v\"")
    STR_CONST("slices", "dim { size: 1 }", "string_val: \"\"")
    "node { name: \"save\" op: \"SaveV2\"" IN("fname") IN("names") IN("slices") IN("v") TYPES("dtypes", "DT_FLOAT") " }\n"
    "node { name: \"dep\" op: \"Identity\"" IN("fname") IN("^save") TYPE("T", "DT_STRING") " }\n"
    "node { name: \"prefixes\" op: \"Pack\"" IN("dep") TYPE("T", "DT_STRING")
    " attr { key: \"N\" value { i: 1 } } attr { key: \"axis\" value { i: 0 } } }\n"
    "node { name: \"merge\" op: \"MergeV2Checkpoints\"" IN("prefixes") IN("prefix") " }\n"
    "node { name: \"done\" op: \"Identity\"" IN("prefix") IN("^merge") TYPE("T", "DT_STRING") " }\n";

Test(ckpt_graph, sharded_saver_names_saves_and_merges) {
  char prefix[512];
  ct_path(prefix, sizeof prefix, "model.ckpt");
  sess a = open_s(sharded_saver);
  const char *init[1] = {"init"};
  cr_assert_eq(dfx_session_run(a.s, NULL, NULL, NULL, 0, NULL, NULL, 0, init, 1, a.st), DFX_OK);
  /* The shard name TF would make. */
  dfx_tensor *t = NULL;
  cr_assert_eq(run_p(&a, prefix, NULL, "fname", &t), DFX_OK, "%s", dfx_status_message(a.st));
  const dfx_str *s = t->data;
  char want[600];
  snprintf(want, sizeof want, "%s_temp_1234/part-00000-of-00001", prefix);
  cr_assert(s->len == strlen(want) && memcmp(s->ptr, want, s->len) == 0, "%.*s", (int)s->len, s->ptr);
  dfx_tensor_free(t);
  cr_assert_eq(run_p(&a, prefix, NULL, "done", &t), DFX_OK, "%s", dfx_status_message(a.st));
  dfx_tensor_free(t);
  /* The merged checkpoint is at the prefix and the temporary one is gone. */
  dfx_checkpoint *c = NULL;
  cr_assert_eq(dfx_checkpoint_open(prefix, &c, a.st), DFX_OK, "%s", dfx_status_message(a.st));
  cr_assert_eq(dfx_checkpoint_read(c, "v", &t, a.st), DFX_OK);
  cr_assert_eq(((const float *)dfx_tensor_data(t))[1], 5);
  dfx_tensor_free(t);
  dfx_checkpoint_close(c);
  char tmpdir[600];
  snprintf(tmpdir, sizeof tmpdir, "%s_temp_1234", prefix);
  cr_assert_neq(access(tmpdir, F_OK), 0, "the temporary directory was left behind");
  close_s(&a);
}

Test(ckpt_graph, string_join_broadcasts_scalars) {
  static const char *g =
      STR_CONST("a", "dim { size: 2 }", "string_val: \"x\" string_val: \"yy\"")
      STR_CONST("b", "", "string_val: \"-\"")
      STR_CONST("c", "dim { size: 3 }", "string_val: \"p\" string_val: \"q\" string_val: \"r\"")
      "node { name: \"j\" op: \"StringJoin\"" IN("a") IN("b") IN("a")
      " attr { key: \"N\" value { i: 3 } } attr { key: \"separator\" value { s: \"/\" } } }\n"
      "node { name: \"bad\" op: \"StringJoin\"" IN("a") IN("c") " attr { key: \"N\" value { i: 2 } } }\n";
  sess a = open_s(g);
  dfx_port p = {"j", 0};
  dfx_tensor *t = NULL;
  cr_assert_eq(dfx_session_run(a.s, NULL, NULL, NULL, 0, &p, &t, 1, NULL, 0, a.st), DFX_OK, "%s",
               dfx_status_message(a.st));
  const dfx_str *s = t->data;
  cr_assert(s[0].len == 5 && memcmp(s[0].ptr, "x/-/x", 5) == 0);
  cr_assert(s[1].len == 7 && memcmp(s[1].ptr, "yy/-/yy", 7) == 0);
  dfx_tensor_free(t);
  p.node = "bad";
  cr_assert_eq(dfx_session_run(a.s, NULL, NULL, NULL, 0, &p, &t, 1, NULL, 0, a.st), DFX_EINVAL);
  cr_assert(strstr(dfx_status_message(a.st), "Input shapes do not match: [2] vs. [3]"), "%s",
            dfx_status_message(a.st));
  close_s(&a);
}

/* ---- the TF1 SavedModel's MetaGraphDef (the counter) ---- */

/* The bytes of the first meta_graphs entry (field 2) of a SavedModel. */
static const unsigned char *first_meta_graph(const unsigned char *b, size_t n, size_t *len) {
  const unsigned char *p = b, *end = b + n;
  while (p < end) {
    uint64_t key = 0, v = 0;
    int shift = 0;
    while (p < end && (*p & 0x80)) key |= (uint64_t)(*p++ & 0x7f) << (shift += 7, shift - 7);
    key |= (uint64_t)*p++ << shift;
    shift = 0;
    while (p < end && (*p & 0x80)) v |= (uint64_t)(*p++ & 0x7f) << (shift += 7, shift - 7);
    v |= (uint64_t)*p++ << shift;
    if ((key & 7) == 0) continue; /* varint field: v was its value */
    if (key >> 3 == 2) {
      *len = (size_t)v;
      return p;
    }
    p += v;
  }
  return NULL;
}

Test(ckpt_graph, counter_savedmodel_signatures_keep_their_variable) {
  char pb[512], vars[512];
  ct_shared(pb, sizeof pb, "saved_model_counter/00000123/saved_model.pb");
  ct_shared(vars, sizeof vars, "saved_model_counter/00000123/variables/variables");
  ct_need(pb);
  size_t n, mlen = 0;
  unsigned char *b = ct_slurp(pb, &n);
  const unsigned char *mg = first_meta_graph(b, n, &mlen);
  cr_assert(mg, "no meta_graphs in %s", pb);
  dfx_status *st = dfx_status_new();
  dfx_metagraph *m = NULL;
  cr_assert_eq(dfx_metagraph_import(mg, mlen, &m, st), DFX_OK, "%s", dfx_status_message(st));
  free(b);
  cr_assert_eq(dfx_metagraph_tag_count(m), 1);
  cr_assert_str_eq(dfx_metagraph_tag(m, 0), "serve");
  int get = dfx_metagraph_signature_find(m, "get_counter"), incr = dfx_metagraph_signature_find(m, "incr_counter");
  cr_assert(get >= 0 && incr >= 0, "signatures: %d", dfx_metagraph_signature_count(m));
  const char *get_t = NULL, *incr_t = NULL;
  dfx_dtype dt;
  cr_assert_eq(dfx_metagraph_signature_tensor(m, get, 1, 0, NULL, &get_t, &dt, NULL, NULL, st), DFX_OK);
  cr_assert_eq(dt, DFX_F32, "get_counter dtype %d (%s)", (int)dt, get_t);
  cr_assert_eq(dfx_metagraph_signature_tensor(m, incr, 1, 0, NULL, &incr_t, NULL, NULL, NULL, st), DFX_OK);
  cr_assert_eq(dfx_metagraph_signature_tensor(m, incr, 1, 5, NULL, NULL, NULL, NULL, NULL, st), DFX_ERANGE);
  dfx_session *s = NULL;
  cr_assert_eq(dfx_session_new(dfx_metagraph_graph(m), NULL, &s, st), DFX_OK, "%s", dfx_status_message(st));
  cr_assert_eq(dfx_metagraph_restore(m, s, vars, st), DFX_OK, "%s", dfx_status_message(st));
  /* Tensor names are "node:k". */
  char node[256];
  float got[4];
  const char *order[4] = {get_t, incr_t, incr_t, get_t};
  for (int i = 0; i < 4; i++) {
    snprintf(node, sizeof node, "%s", order[i]);
    char *colon = strrchr(node, ':');
    int k = colon ? atoi(colon + 1) : 0;
    if (colon) *colon = 0;
    dfx_port p = {node, k};
    dfx_tensor *t = NULL;
    cr_assert_eq(dfx_session_run(s, NULL, NULL, NULL, 0, &p, &t, 1, NULL, 0, st), DFX_OK, "%s: %s", order[i],
                 dfx_status_message(st));
    got[i] = *(const float *)dfx_tensor_data(t);
    dfx_tensor_free(t);
  }
  /* Restored 0; each incr_counter adds one and returns the new value; the
   * value persists for get_counter. */
  cr_assert(got[0] == 0 && got[1] == 1 && got[2] == 2 && got[3] == 2, "%g %g %g %g", got[0], got[1], got[2],
            got[3]);
  dfx_session_free(s);
  dfx_metagraph_free(m);
  dfx_status_free(st);
}
