/* stress_par.c - intra-op parallelism under concurrency, without Criterion
 * so it runs under ThreadSanitizer (tools/bootstrap.sh). Several threads run
 * a graph of large kernels (MatMul split into blocks, BatchMatMul over
 * batches, Tanh, Sigmoid, broadcast Add, Sum, Softmax) on one shared
 * multi-threaded session while its pool lends idle threads to the kernels;
 * every result is compared with a single-threaded session's. Exit status 0
 * means all runs agreed; the last line is "N passed, M failed". */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "dfexec.h"
#include "gtext.h"

#define D 256
static const char *GRAPH =
    GT_PLACEHOLDER("x", "DT_FLOAT") GT_PLACEHOLDER("W", "DT_FLOAT") GT_PLACEHOLDER("b", "DT_FLOAT")
    GT_PLACEHOLDER("xb", "DT_FLOAT")
    GT_OP2("mm", "MatMul", "x", "W", "DT_FLOAT", "")
    GT_OP2("add", "Add", "mm", "b", "DT_FLOAT", "")
    GT_OP1("tanh", "Tanh", "add", "DT_FLOAT", "")
    GT_OP2("mm2", "MatMul", "tanh", "W", "DT_FLOAT", "")
    GT_OP1("sig", "Sigmoid", "mm2", "DT_FLOAT", "")
    GT_OP1("sm", "Softmax", "sig", "DT_FLOAT", "")
    GT_OP2("bmm", "BatchMatMulV2", "xb", "W", "DT_FLOAT", "")
    GT_CONST_I32("axis", 1, "")
    "node { name: \"sum\" op: \"Sum\" input: \"bmm\" input: \"axis\"" GT_TYPE("T", "DT_FLOAT")
    GT_TYPE("Tidx", "DT_INT32") " }\n";

#define NF 3
static const dfx_port FETCH[NF] = {{"sm", 0}, {"sum", 0}, {"tanh", 0}};

typedef struct {
  dfx_session *s;
  dfx_tensor *const *feeds;
  int runs;
  dfx_tensor **want;
  int bad;
} job;

static const dfx_port FEEDS[4] = {{"x", 0}, {"W", 0}, {"b", 0}, {"xb", 0}};

static int run_once(dfx_session *s, dfx_tensor *const *feeds, dfx_tensor **out) {
  dfx_status *st = dfx_status_new();
  dfx_code c = dfx_session_run(s, NULL, FEEDS, feeds, 4, FETCH, out, NF, NULL, 0, st);
  if (c != DFX_OK) fprintf(stderr, "run failed: %s\n", dfx_status_message(st));
  dfx_status_free(st);
  return c == DFX_OK;
}

static int same(dfx_tensor *const *a, dfx_tensor *const *b) {
  for (int f = 0; f < NF; f++) {
    const float *x = dfx_tensor_data(a[f]), *y = dfx_tensor_data(b[f]);
    int64_t n = dfx_tensor_count(a[f]);
    if (n != dfx_tensor_count(b[f])) return 0;
    for (int64_t i = 0; i < n; i++)
      if (!(fabsf(x[i] - y[i]) <= 1e-4f * (1 + fabsf(y[i])))) {
        fprintf(stderr, "fetch %d element %lld: %g vs %g\n", f, (long long)i, x[i], y[i]);
        return 0;
      }
  }
  return 1;
}

static void worker(void *p) {
  job *j = p;
  for (int i = 0; i < j->runs; i++) {
    dfx_tensor *out[NF] = {0};
    if (!run_once(j->s, j->feeds, out) || !same(out, j->want)) j->bad++;
    for (int f = 0; f < NF; f++) dfx_tensor_free(out[f]);
  }
}

static dfx_tensor *rnd(int nd, const int64_t *dims, unsigned seed, float scale) {
  dfx_tensor *t = dfx_tensor_new(DFX_F32, dims, nd);
  float *v = dfx_tensor_data(t);
  for (int64_t i = 0; i < dfx_tensor_count(t); i++) {
    seed = seed * 1103515245u + 12345u;
    v[i] = ((float)(seed >> 8) / (float)(1u << 24) * 2 - 1) * scale;
  }
  return t;
}

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 3, runs = argc > 2 ? atoi(argv[2]) : 10;
  if (threads > 16) threads = 16;
  dfx_status *st = dfx_status_new();
  dfx_graph *g = NULL;
  if (dfx_graph_import(GRAPH, strlen(GRAPH), &g, st) != DFX_OK) {
    fprintf(stderr, "import: %s\n", dfx_status_message(st));
    return 1;
  }
  int64_t dx[] = {D, D}, db[] = {D}, dxb[] = {4, 64, D};
  dfx_tensor *feeds[4] = {rnd(2, dx, 1, 1), rnd(2, dx, 2, 0.1f), rnd(1, db, 3, 0.5f), rnd(3, dxb, 4, 1)};
  dfx_session *serial = NULL, *shared = NULL;
  dfx_session_options o1 = {.n_threads = 1}, o3 = {.n_threads = 3};
  if (dfx_session_new(g, &o1, &serial, st) || dfx_session_new(g, &o3, &shared, st)) {
    fprintf(stderr, "session: %s\n", dfx_status_message(st));
    return 1;
  }
  dfx_tensor *want[NF] = {0};
  if (!run_once(serial, feeds, want)) return 1;
  /* One caller alone first: the pool's threads are idle, so kernels split. */
  job solo = {shared, feeds, runs, want, 0};
  worker(&solo);
  uv_thread_t th[16];
  job jobs[16];
  for (int i = 0; i < threads; i++) {
    jobs[i] = (job){shared, feeds, runs, want, 0};
    uv_thread_create(&th[i], worker, &jobs[i]);
  }
  int bad = solo.bad;
  for (int i = 0; i < threads; i++) {
    uv_thread_join(&th[i]);
    bad += jobs[i].bad;
  }
  for (int f = 0; f < NF; f++) dfx_tensor_free(want[f]);
  for (int i = 0; i < 4; i++) dfx_tensor_free(feeds[i]);
  dfx_session_free(serial);
  dfx_session_free(shared);
  dfx_graph_free(g);
  dfx_status_free(st);
  int total = (threads + 1) * runs;
  printf("%d threads x %d runs (+%d alone)\n", threads, runs, runs);
  printf("%d passed, %d failed\n", total - bad, bad);
  return bad ? 1 : 0;
}
