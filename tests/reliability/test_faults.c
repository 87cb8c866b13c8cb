/* test_faults.c - allocation-failure injection over real graphs: the six
 * tf-text conformance graphs and tf1 graphs with loops, conds, an RNN and a
 * TensorArray. For N = 1, 2, ... the Nth allocation of import + session +
 * run fails; each failure must be a clean DFX_ENOMEM with nothing leaked,
 * and when the run itself failed, the same session must then run correctly
 * (same bytes as a clean run). Graphs with many allocations are sampled with
 * a stride; the loop graphs marked `all` cover every N. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rel.h"
#include "tensor.h"

TestSuite(faults, .init = eu_setup, .fini = eu_teardown, .timeout = 300);

typedef struct {
  const char *name, *dtype;
  int ndims;
  int64_t dims[4];
} feed_spec;

typedef struct {
  const char *path;      /* under the conformance corpus (DFX_CONFORMANCE_DIR) */
  const char *fetches;   /* "a:0,b:1" */
  feed_spec feeds[2];
  int n_feeds;
  int all;               /* cover every N, not a sample */
  int threads;
} fault_case;

static const fault_case cases[] = {
    {"tf-text/while_loop.pbtxt", "while/Exit:0,while/Exit_1:0", {{0}}, 0, 0, 1},
    {"tf-text/nested_loop.pbtxt", "while/Exit:0,while/Exit_1:0", {{0}}, 0, 0, 1},
    {"tf-text/merge_without_loops.pbtxt", "cond/Merge:0,cond/Merge:1,concat:0", {{0}}, 0, 1, 1},
    {"tf-text/control_flow_v1.pbtxt", "cond/Merge:0,cond/Merge:1",
     {{"Placeholder", "float32", 2, {1, 2}}, {"Placeholder_1", "bool", 0, {0}}}, 2, 1, 1},
    {"tf-text/switch_n.pbtxt", "Case/merge/_9:0", {{0}}, 0, 1, 1},
    {"tf-text/graph-while-loop.pbtxt", "while/Exit:0", {{0}}, 0, 1, 1},
    {"tf1/while1/iter_1/frozen_model.pb", "while/Exit:0,while/Exit_1:0", {{0}}, 0, 1, 1},
    {"tf1/while2/a/frozen_model.pb", "while/Exit:0,while/Exit_1:0", {{0}}, 0, 0, 1},
    {"tf1/simplewhile_nested/frozen_model.pb", "output:0",
     {{"input_0", "float32", 2, {2, 2}}, {"input_1", "float32", 2, {3, 3}}}, 2, 0, 1},
    {"tf1/cond/cond_false/frozen_model.pb", "cond/Merge:0", {{0}}, 0, 0, 1},
    {"tf1/tensor_array/getset_sz2_float64_nodynamic_name_noshape/frozen_model.pb",
     "TensorArrayReadV3:0,TensorArrayReadV3_1:0", {{0}}, 0, 0, 1},
    {"tf1/rnn/basicrnncell/dynamic_b1_nIn5_nOut3_ts4_relu_noIS_withTM_float/frozen_model.pb", "concat:0,concat_1:0",
     {{0}}, 0, 0, 1},
    /* With workers the allocation order varies run to run; still clean. */
    {"tf-text/nested_loop.pbtxt", "while/Exit:0,while/Exit_1:0", {{0}}, 0, 0, 3},
};
#define N_CASES ((int)(sizeof cases / sizeof cases[0]))
#define MAX_FETCH 4
#define SAMPLES 3000 /* points per sampled graph: today every graph is covered in full */

typedef struct {
  const fault_case *fc;
  char *text;
  size_t len;
  dfx_port fetch[MAX_FETCH];
  char names[MAX_FETCH][128];
  int n_fetch;
  dfx_port feed[2];
  dfx_tensor *feed_val[2];
} fixture;

static void fixture_open(fixture *f, const fault_case *fc) {
  memset(f, 0, sizeof *f);
  f->fc = fc;
  char path[1024];
  const char *corpus = getenv("DFX_CONFORMANCE_DIR"); /* tests/meson.build: "" when absent */
  if (!corpus || !*corpus) cr_skip_test("no conformance corpus (configure with -Dconformance_dir=DIR)");
  snprintf(path, sizeof path, "%s/%s", corpus, fc->path);
  f->text = rel_read(path, &f->len);
  if (!f->text) cr_skip_test("%s is not available", path);
  char buf[512];
  snprintf(buf, sizeof buf, "%s", fc->fetches);
  for (char *save, *tok = strtok_r(buf, ",", &save); tok && f->n_fetch < MAX_FETCH; tok = strtok_r(NULL, ",", &save)) {
    char *colon = strrchr(tok, ':');
    *colon = 0;
    snprintf(f->names[f->n_fetch], sizeof f->names[0], "%s", tok);
    f->fetch[f->n_fetch] = (dfx_port){f->names[f->n_fetch], atoi(colon + 1)};
    f->n_fetch++;
  }
  /* Feed tensors are made before counting starts and outlive every run. */
  for (int i = 0; i < fc->n_feeds; i++) {
    const feed_spec *fs = &fc->feeds[i];
    dfx_dtype dt = dfx_dtype_from_name(fs->dtype);
    f->feed[i] = (dfx_port){fs->name, 0};
    f->feed_val[i] = dfx_tensor_new(dt, fs->dims, fs->ndims);
    cr_assert(f->feed_val[i]);
    for (int64_t k = 0; k < dfx_tensor_count(f->feed_val[i]); k++) {
      if (dt == DFX_F32) ((float *)dfx_tensor_data(f->feed_val[i]))[k] = 0.5f * (float)(k + 1);
      if (dt == DFX_BOOL) ((uint8_t *)dfx_tensor_data(f->feed_val[i]))[k] = 1;
    }
  }
}

static void fixture_close(fixture *f) {
  for (int i = 0; i < f->fc->n_feeds; i++) dfx_tensor_free(f->feed_val[i]);
  free(f->text);
}

static dfx_code run(fixture *f, dfx_session *s, dfx_tensor **out, dfx_status *st) {
  return dfx_session_run(s, NULL, f->feed, f->feed_val, f->fc->n_feeds, f->fetch, out, f->n_fetch, NULL, 0, st);
}

static void check_same(fixture *f, dfx_tensor **got, dfx_tensor **want, long long n) {
  for (int i = 0; i < f->n_fetch; i++) {
    cr_assert(got[i] && want[i]);
    cr_assert_eq(dfx_tensor_nbytes(got[i]), dfx_tensor_nbytes(want[i]), "N=%lld fetch %d", n, i);
    cr_assert(memcmp(dfx_tensor_data(got[i]), dfx_tensor_data(want[i]), dfx_tensor_nbytes(want[i])) == 0,
              "N=%lld: fetch %s differs from the clean run", n, f->names[i]);
  }
}

/* One attempt with allocation number `n` (counted from now) failing; 0 fails
 * nothing. Returns 1 when everything succeeded. */
static int attempt(fixture *f, long long n, dfx_tensor **want, long long *used) {
  dfx__tensor_cache_flush();
  int baseline = want[0] == NULL; /* this attempt keeps its outputs in want[] */
  long long base_blocks = eu_alloc.live_blocks, start = eu_alloc.n_allocs;
  eu_alloc.fail_at = n ? start + n : 0;
  dfx_status *st = dfx_status_new();
  dfx_graph *g = NULL;
  dfx_session *s = NULL;
  dfx_tensor *out[MAX_FETCH] = {NULL};
  dfx_code c = st ? dfx_graph_import(f->text, f->len, &g, st) : DFX_ENOMEM;
  dfx_session_options o = {.n_threads = f->fc->threads};
  if (c == DFX_OK) c = dfx_session_new(g, &o, &s, st);
  int in_run = c == DFX_OK;
  if (c == DFX_OK) c = run(f, s, out, st);
  int failed_alloc = eu_alloc.fail_at && eu_alloc.n_failed > 0;
  eu_alloc.fail_at = 0;
  if (used) *used = eu_alloc.n_allocs - start;
  if (c == DFX_OK) {
    if (want[0]) check_same(f, out, want, n);
    else
      for (int i = 0; i < f->n_fetch; i++) want[i] = dfx__tensor_ref(out[i]);
  } else {
    cr_assert(c == DFX_ENOMEM, "%s N=%lld: expected DFX_ENOMEM, got %s: %s", f->fc->path, n, dfx_code_name(c),
              st ? dfx_status_message(st) : "");
    cr_assert(failed_alloc, "%s N=%lld: failed without an injected fault", f->fc->path, n);
    for (int i = 0; i < f->n_fetch; i++) cr_assert_null(out[i]);
    if (in_run) { /* the session survives a failed run */
      dfx_code again = run(f, s, out, st);
      cr_assert_eq(again, DFX_OK, "%s N=%lld: rerun after the failure: %s", f->fc->path, n, dfx_status_message(st));
      check_same(f, out, want, n);
    }
  }
  for (int i = 0; i < f->n_fetch; i++) dfx_tensor_free(out[i]);
  dfx_session_free(s);
  dfx_graph_free(g);
  dfx_status_free(st);
  dfx__tensor_cache_flush();
  if (!baseline)
    cr_assert_eq(eu_alloc.live_blocks, base_blocks, "%s N=%lld leaked %lld blocks", f->fc->path, n,
                 eu_alloc.live_blocks - base_blocks);
  eu_alloc.n_failed = 0;
  return c == DFX_OK;
}

ParameterizedTestParameters(faults, every_failure_is_clean) {
  static int idx[N_CASES];
  for (int i = 0; i < N_CASES; i++) idx[i] = i;
  return cr_make_param_array(int, idx, N_CASES);
}

ParameterizedTest(int *ip, faults, every_failure_is_clean) {
  fixture f;
  fixture_open(&f, &cases[*ip]);
  dfx_tensor *want[MAX_FETCH] = {NULL};
  long long total = 0;
  cr_assert(attempt(&f, 0, want, &total), "%s: the clean run failed", f.fc->path);
  cr_assert(attempt(&f, 0, want, &total), "%s: the second clean run failed", f.fc->path);
  long long stride = f.fc->all || total <= SAMPLES ? 1 : total / SAMPLES;
  long long points = 0;
  /* Odd strides shift the sampled points across the whole range. */
  if (stride > 1 && stride % 2 == 0) stride++;
  for (long long n = 1; n <= total + 1; n += stride, points++) attempt(&f, n, want, NULL);
  cr_log_info("%s (%d threads): %lld allocations per clean run, %lld fault points (stride %lld)", f.fc->path,
              f.fc->threads, total, points, stride);
  for (int i = 0; i < f.n_fetch; i++) dfx_tensor_free(want[i]);
  fixture_close(&f);
}
