/* test_shapes_corpus.c - static shape inference (passes/shapes.h) checked
 * against real runs over the whole conformance corpus (DFX_CONFORMANCE_DIR;
 * skipped without it). For each case, with the case's feeds:
 *  - every tensor TensorFlow recorded (fetches and intermediates, loop
 *    bodies included) must have a shape compatible with the inferred one;
 *  - every root-frame tensor a run can fetch is fetched from dfexec itself
 *    and must match too, and so must every inferred integer value.
 * A fully known inferred shape must be the actual one exactly (that is
 * what compatible means then). It prints the coverage: how many outputs
 * have a fully known shape, without and with TF's _output_shapes hints. */
#define _XOPEN_SOURCE 700 /* nftw */
#include <criterion/criterion.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "case.h"
#include "graph.h"
#include "shapes.h"

#define MAX_REPORTED 40
#define CASE_BUDGET_SEC 30.0

typedef struct totals {
  int cases, skipped_cases, outputs, known, known_hinted, tf_checked, run_checked, values_checked, unfetchable;
  int bad;
  char report[MAX_REPORTED][400];
} totals;

static totals T;

static double now_sec(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void mismatch(const char *dir, const dfx_graph *g, int node, int slot, const dfx_tinfo *t, const char *what,
                     int ndims, const int64_t *dims) {
  char inf[128], act[128];
  dfx_pshape a = dfx__pshape_make(ndims, dims);
  if (T.bad < MAX_REPORTED)
    snprintf(T.report[T.bad], sizeof T.report[0], "%s: '%s:%d' (%s): inferred %s, %s %s", dir, g->nodes[node].name,
             slot, g->nodes[node].op, dfx__pshape_str(&t->shape, inf, sizeof inf), what,
             dfx__pshape_str(&a, act, sizeof act));
  T.bad++;
}

/* Whether an actual shape fits the inferred one. */
static bool fits(const dfx_pshape *s, int ndims, const int64_t *dims) {
  if (s->rank < 0) return true;
  if (s->rank != ndims) return false;
  for (int i = 0; i < ndims; i++)
    if (s->dims[i] >= 0 && s->dims[i] != dims[i]) return false;
  return true;
}

/* Checks TensorFlow's recorded tensors (shapes only). */
static void check_tf(const char *dir, const dfx_graph *g, const dfx_shapes *s, const case_tensor *ts, int n) {
  for (int i = 0; i < n; i++) {
    int id = dfx__graph_find(g, ts[i].name, (size_t)-1);
    const dfx_tinfo *t = id >= 0 ? dfx__shapes_output(s, id, ts[i].index) : NULL;
    if (!t) continue;
    T.tf_checked++;
    if (!fits(&t->shape, ts[i].ndims, ts[i].dims)) mismatch(dir, g, id, ts[i].index, t, "TensorFlow saw", ts[i].ndims, ts[i].dims);
  }
}

/* Checks one fetched tensor, value included. */
static void check_run(const char *dir, const dfx_graph *g, const dfx_shapes *s, dfx_port p, const dfx_tensor *v) {
  int id = dfx__graph_find(g, p.node, (size_t)-1);
  const dfx_tinfo *t = dfx__shapes_output(s, id, p.index);
  int64_t dims[DFX_MAX_DIMS];
  int nd = dfx_tensor_ndims(v);
  for (int d = 0; d < nd; d++) dims[d] = dfx_tensor_dim(v, d);
  T.run_checked++;
  if (!fits(&t->shape, nd, dims)) {
    mismatch(dir, g, id, p.index, t, "dfexec computed", nd, dims);
    return;
  }
  if (t->n_val < 0) return;
  T.values_checked++;
  dfx_dtype dt = dfx_tensor_dtype(v);
  const void *data = dfx_tensor_data(v);
  for (int i = 0; i < t->n_val; i++) {
    int64_t x = dt == DFX_I32 ? ((const int32_t *)data)[i] : dt == DFX_I64 ? ((const int64_t *)data)[i] : INT64_MIN;
    if (t->val[i] != DFX_VALUE_UNKNOWN && t->val[i] != x) {
      mismatch(dir, g, id, p.index, t, "value differs (element ~ shown as dims) at", 1, (int64_t[]){i});
      return;
    }
  }
}

typedef struct runner {
  const char *dir;
  const dfx_graph *g;
  const dfx_shapes *s;
  dfx_session *sess;
  const dfx_port *feeds;
  dfx_tensor *const *feed_vals;
  int n_feeds;
  double deadline;
} runner;

/* Fetches ports[0..n); a failing set is halved until the tensors that
 * cannot be fetched (dead, no kernel, a failing node) are alone. */
static void run_ports(runner *r, const dfx_port *ports, int n) {
  if (n == 0) return;
  if (now_sec() > r->deadline) {
    T.unfetchable += n;
    return;
  }
  dfx_tensor **vals = calloc((size_t)n, sizeof *vals);
  cr_assert(vals);
  dfx_run_options ro = {.timeout_sec = 10};
  if (dfx_session_run(r->sess, &ro, r->feeds, r->feed_vals, r->n_feeds, ports, vals, n, NULL, 0, NULL) == DFX_OK) {
    for (int i = 0; i < n; i++) {
      check_run(r->dir, r->g, r->s, ports[i], vals[i]);
      dfx_tensor_free(vals[i]);
    }
  } else if (n == 1) {
    T.unfetchable++;
  } else {
    run_ports(r, ports, n / 2);
    run_ports(r, ports + n / 2, n - n / 2);
  }
  free(vals);
}

/* Nodes whose outputs may be dead (downstream of a Switch, no Merge or
 * Exit in between): fetching them could fail the whole run. */
static void mark_conditional(const dfx_graph *g, char *cond) {
  for (bool changed = true; changed;) {
    changed = false;
    for (int i = 0; i < g->n_nodes; i++) {
      const dfx_node *n = &g->nodes[i];
      bool c = n->ctrl == DFX_CTRL_SWITCH;
      if (n->ctrl != DFX_CTRL_MERGE && n->ctrl != DFX_CTRL_EXIT)
        for (int k = 0; !c && k < n->n_in + n->n_ctrl; k++) c = cond[n->in[k].node];
      if (c && !cond[i]) cond[i] = changed = true;
    }
  }
}

static void check_case(const char *dir) {
  case_def c;
  char err[256];
  if (case_load(dir, &c, err, sizeof err) != 0) return;
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, c.graph);
  dfx_graph *g = NULL;
  dfx_port *feeds = calloc((size_t)c.n_feeds + 1, sizeof *feeds);
  dfx_tensor **feed_vals = calloc((size_t)c.n_feeds + 1, sizeof *feed_vals);
  dfx_shape_feed *sf = calloc((size_t)c.n_feeds + 1, sizeof *sf);
  outcome o = {0};
  dfx_shapes *s = NULL, *hinted = NULL;
  dfx_session *sess = NULL;
  cr_assert(feeds && feed_vals && sf);
  if (dfx_graph_load(path, &g, NULL) != DFX_OK || case_make_feeds(dir, &c, g, feeds, feed_vals, &o) != 0) {
    T.skipped_cases++;
    goto done;
  }
  for (int i = 0; i < c.n_feeds; i++) {
    int64_t dims[DFX_MAX_DIMS];
    for (int d = 0; d < dfx_tensor_ndims(feed_vals[i]); d++) dims[d] = dfx_tensor_dim(feed_vals[i], d);
    sf[i] = (dfx_shape_feed){feeds[i].node, feeds[i].index, dfx__pshape_make(dfx_tensor_ndims(feed_vals[i]), dims)};
  }
  dfx_shapes_opts plain = {.feeds = sf, .n_feeds = c.n_feeds}, hints = plain;
  hints.use_hints = true;
  cr_assert_eq(dfx__shapes_infer(g, &plain, &s, NULL), DFX_OK);
  cr_assert_eq(dfx__shapes_infer(g, &hints, &hinted, NULL), DFX_OK);
  T.cases++;
  T.outputs += s->n_outputs;
  T.known += s->n_known;
  T.known_hinted += hinted->n_known;
  check_tf(dir, g, s, c.fetches, c.n_fetches);
  check_tf(dir, g, s, c.inters, c.n_inters);
  check_tf(dir, g, hinted, c.fetches, c.n_fetches);
  check_tf(dir, g, hinted, c.inters, c.n_inters);

  dfx_session_options so = {.n_threads = 1, .optimize = "none"};
  if (dfx_session_new(g, &so, &sess, NULL) != DFX_OK) goto done;
  char *cond = calloc((size_t)g->n_nodes + 1, 1);
  dfx_port *ports = calloc((size_t)s->n_outputs + 1, sizeof *ports);
  cr_assert(cond && ports);
  mark_conditional(g, cond);
  int n = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    const dfx_node *nd = &g->nodes[i];
    int frame = nd->ctrl == DFX_CTRL_EXIT ? g->frames[nd->frame].parent : nd->frame;
    if (frame != 0 || cond[i]) continue;
    for (int k = 0; k < nd->n_out; k++)
      if (nd->out_types[k] != DFX_RESOURCE && nd->out_types[k] != DFX_VARIANT)
        ports[n++] = (dfx_port){nd->name, k};
  }
  runner r = {dir, g, s, sess, feeds, feed_vals, c.n_feeds, now_sec() + CASE_BUDGET_SEC};
  run_ports(&r, ports, n);
  free(cond);
  free(ports);
done:
  dfx_session_free(sess);
  dfx__shapes_free(s);
  dfx__shapes_free(hinted);
  for (int i = 0; i < c.n_feeds; i++) dfx_tensor_free(feed_vals[i]);
  free(feeds);
  free(feed_vals);
  free(sf);
  dfx_graph_free(g);
  case_free(&c);
}

static int visit(const char *path, const struct stat *sb, int type, struct FTW *ftw) {
  (void)sb;
  (void)ftw;
  size_t n = strlen(path);
  if (type != FTW_F || n < 10 || strcmp(path + n - 10, "/case.json") != 0) return 0;
  char dir[4096];
  snprintf(dir, sizeof dir, "%.*s", (int)(n - 10), path);
  check_case(dir);
  return 0;
}

Test(shapes_corpus, inferred_shapes_hold_in_every_run, .timeout = 1200) {
  const char *root = getenv("DFX_CONFORMANCE_DIR");
  if (!root || !*root) cr_skip_test("DFX_CONFORMANCE_DIR is not set: no corpus");
  char tf1[4096];
  snprintf(tf1, sizeof tf1, "%s/tf1", root);
  struct stat sb;
  if (stat(tf1, &sb) != 0) cr_skip_test("no corpus at %s", tf1);
  memset(&T, 0, sizeof T);
  cr_assert_eq(nftw(tf1, visit, 16, FTW_PHYS), 0);
  fprintf(stderr,
          "shape inference over %d cases (%d skipped): %d of %d outputs fully known (%.1f%%), %d (%.1f%%) with "
          "TF's hints; checked %d TF tensors, %d fetched tensors (%d values); %d tensors not fetchable\n",
          T.cases, T.skipped_cases, T.known, T.outputs, 100.0 * T.known / (T.outputs ? T.outputs : 1), T.known_hinted,
          100.0 * T.known_hinted / (T.outputs ? T.outputs : 1), T.tf_checked, T.run_checked, T.values_checked,
          T.unfetchable);
  for (int i = 0; i < T.bad && i < MAX_REPORTED; i++) fprintf(stderr, "  %s\n", T.report[i]);
  cr_assert_gt(T.cases, 1100);
  cr_assert_eq(T.bad, 0, "%d tensors contradict their inferred shapes (listed above)", T.bad);
}
