/* stress_rel.c - load test: T threads each make R runs on shared sessions
 * over control-flow graphs (the tf-text while/nested/cond graphs, a tf1
 * dynamic RNN and a two-variable loop with a cond), cycling through them;
 * every result must equal, byte for byte, a serial single-threaded run.
 * Plain C (no Criterion) so it runs under ThreadSanitizer.
 *   stress_rel [threads [runs]]     (default 8 x 100)
 * Graph files come from $DFX_SOURCE_ROOT/../shared/conformance; missing ones
 * are skipped. Exit status 0 when every run agreed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "dfexec.h"
#include "loopgraph.h"

#define MAX_FETCH 3

typedef struct {
  const char *file; /* NULL: the built-in loop graph */
  const char *fetch[MAX_FETCH];
  const char *feed; /* one float32 [1,2] placeholder, plus a bool "<feed>_1" */
} gspec;

static const gspec specs[] = {
    {NULL, {"w/Exit", "w/Exit_1"}, NULL},
    {"tf-text/while_loop.pbtxt", {"while/Exit", "while/Exit_1"}, NULL},
    {"tf-text/nested_loop.pbtxt", {"while/Exit", "while/Exit_1"}, NULL},
    {"tf-text/merge_without_loops.pbtxt", {"cond/Merge", "concat"}, NULL},
    {"tf-text/control_flow_v1.pbtxt", {"cond/Merge"}, "Placeholder"},
    {"tf1/rnn/basicrnncell/dynamic_b1_nIn5_nOut3_ts4_relu_noIS_withTM_float/frozen_model.pb", {"concat", "concat_1"},
     NULL},
    {"tf1/simplewhile_nested/frozen_model.pb", {"output"}, "input_"},
};
#define N_SPECS ((int)(sizeof specs / sizeof specs[0]))

typedef struct {
  const gspec *spec;
  dfx_graph *g;
  dfx_session *shared;
  dfx_port fetch[MAX_FETCH], feed[2];
  dfx_tensor *feed_val[2];
  int n_fetch, n_feed;
  dfx_tensor *want[MAX_FETCH];
} gcase;

static gcase cases[N_SPECS];
static int n_cases;

static int run(gcase *c, dfx_session *s, dfx_tensor **out) {
  dfx_status *st = dfx_status_new();
  dfx_code code = dfx_session_run(s, NULL, c->feed, c->feed_val, c->n_feed, c->fetch, out, c->n_fetch, NULL, 0, st);
  if (code != DFX_OK) fprintf(stderr, "%s: %s\n", c->spec->file ? c->spec->file : "loop", dfx_status_message(st));
  dfx_status_free(st);
  return code == DFX_OK;
}

static int same(const dfx_tensor *a, const dfx_tensor *b) {
  return dfx_tensor_nbytes(a) == dfx_tensor_nbytes(b) &&
         memcmp(dfx_tensor_data(a), dfx_tensor_data(b), dfx_tensor_nbytes(a)) == 0;
}

static dfx_tensor *feed_tensor(const char *name) {
  if (strcmp(name, "Placeholder_1") == 0) return dfx_tensor_new_copy(DFX_BOOL, NULL, 0, &(uint8_t){1}, 1);
  int64_t dims[2] = {1, 2};
  if (strcmp(name, "input_0") == 0) dims[0] = 2, dims[1] = 2;
  if (strcmp(name, "input_1") == 0) dims[0] = 3, dims[1] = 3;
  dfx_tensor *t = dfx_tensor_new(DFX_F32, dims, 2);
  for (int64_t i = 0; i < dfx_tensor_count(t); i++) ((float *)dfx_tensor_data(t))[i] = 0.25f * (float)(i + 1);
  return t;
}

static int open_case(gcase *c, const gspec *spec) {
  static const char *loop_text = LOOP_GRAPH(300);
  dfx_status *st = dfx_status_new();
  c->spec = spec;
  dfx_code code;
  if (spec->file) {
    char path[4096];
    const char *corpus = getenv("DFX_CONFORMANCE_DIR"); /* tests/meson.build: "" when absent */
    snprintf(path, sizeof path, "%s/%s", corpus && *corpus ? corpus : "(no conformance corpus)", spec->file);
    code = dfx_graph_load(path, &c->g, st);
    if (code != DFX_OK) {
      fprintf(stderr, "skipping %s: %s\n", spec->file, dfx_status_message(st));
      dfx_status_free(st);
      return 0;
    }
  } else {
    code = dfx_graph_import(loop_text, strlen(loop_text), &c->g, st);
  }
  for (int i = 0; i < MAX_FETCH && spec->fetch[i]; i++) c->fetch[c->n_fetch++] = (dfx_port){spec->fetch[i], 0};
  if (spec->fetch[0] && strcmp(spec->fetch[0], "cond/Merge") == 0 && spec->feed) c->fetch[c->n_fetch++] = (dfx_port){"cond/Merge", 1};
  if (spec->feed) {
    static char names[N_SPECS][2][64];
    int k = (int)(spec - specs);
    snprintf(names[k][0], 64, "%s%s", spec->feed, strcmp(spec->feed, "input_") == 0 ? "0" : "");
    snprintf(names[k][1], 64, "%s%s", spec->feed, strcmp(spec->feed, "input_") == 0 ? "1" : "_1");
    for (int i = 0; i < 2; i++) {
      c->feed[i] = (dfx_port){names[k][i], 0};
      c->feed_val[i] = feed_tensor(names[k][i]);
    }
    c->n_feed = 2;
  }
  dfx_session *serial = NULL;
  dfx_session_options o1 = {.n_threads = 1}, o4 = {.n_threads = 4};
  if (code != DFX_OK || dfx_session_new(c->g, &o1, &serial, st) || dfx_session_new(c->g, &o4, &c->shared, st)) {
    fprintf(stderr, "%s: %s\n", spec->file ? spec->file : "loop", dfx_status_message(st));
    exit(1);
  }
  if (!run(c, serial, c->want)) exit(1);
  if (!spec->file && (*(int32_t *)dfx_tensor_data(c->want[0]) != 300 || ((float *)dfx_tensor_data(c->want[1]))[255] != 300)) {
    fprintf(stderr, "loop graph: wrong serial result\n");
    exit(1);
  }
  dfx_session_free(serial);
  dfx_status_free(st);
  return 1;
}

typedef struct {
  int id, runs, bad;
} job;

static void worker(void *p) {
  job *j = p;
  for (int r = 0; r < j->runs; r++) {
    gcase *c = &cases[(j->id + r) % n_cases];
    dfx_tensor *out[MAX_FETCH] = {NULL};
    int ok = run(c, c->shared, out);
    for (int i = 0; ok && i < c->n_fetch; i++) ok = same(out[i], c->want[i]);
    if (!ok) j->bad++;
    for (int i = 0; i < c->n_fetch; i++) dfx_tensor_free(out[i]);
  }
}

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 8, runs = argc > 2 ? atoi(argv[2]) : 100;
  if (threads < 1 || threads > 64 || runs < 1) {
    fprintf(stderr, "usage: stress_rel [threads (1-64) [runs]]\n");
    return 2;
  }
  for (int i = 0; i < N_SPECS; i++)
    if (open_case(&cases[n_cases], &specs[i])) n_cases++;
  uv_thread_t th[64];
  job jobs[64];
  uint64_t t0 = uv_hrtime();
  for (int i = 0; i < threads; i++) {
    jobs[i] = (job){i, runs, 0};
    uv_thread_create(&th[i], worker, &jobs[i]);
  }
  int bad = 0;
  for (int i = 0; i < threads; i++) {
    uv_thread_join(&th[i]);
    bad += jobs[i].bad;
  }
  double secs = (double)(uv_hrtime() - t0) / 1e9;
  for (int i = 0; i < n_cases; i++) {
    for (int k = 0; k < cases[i].n_fetch; k++) dfx_tensor_free(cases[i].want[k]);
    for (int k = 0; k < cases[i].n_feed; k++) dfx_tensor_free(cases[i].feed_val[k]);
    dfx_session_free(cases[i].shared);
    dfx_graph_free(cases[i].g);
  }
  printf("%d graphs; %d threads x %d runs in %.1fs\n", n_cases, threads, runs, secs);
  printf("%d passed, %d failed\n", threads * runs - bad, bad);
  return bad ? 1 : 0;
}
