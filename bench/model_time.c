/* model_time.c - dfx-model-time: how long a model case (conformance
 * layout: case.json, frozen graph, feeds, expected fetches) takes to run
 * under two optimisation settings, in one process, alternating run by run
 * so machine noise hits both alike. Each setting is a session's `optimize`
 * list, exactly as a program would pass it (dfx_session_options). Before
 * timing, each setting's outputs are compared with the case's expected
 * values and with each other: the largest absolute and relative
 * differences are printed, so a faster setting that is wrong shows.
 *
 *   dfx-model-time [--repeat N] [--threads N] [--a LIST] [--b LIST] CASE_DIR...
 *
 * --a defaults to the pipeline without the fusion passes, --b to the
 * default pipeline. Prints one table row per case: median and minimum run
 * time of each, and b / a of the medians. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "case.h"
#include "file.h"
#include "values.h"

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

typedef struct diff {
  double abs, rel; /* largest |got - want| and |got - want| / max(|want|, 1e-6) */
} diff;

static void diff_add(diff *d, double got, double want) {
  if (isnan(got) && isnan(want)) return;
  double a = fabs(got - want), r = a / fmax(fabs(want), 1e-6);
  if (!(a <= d->abs)) d->abs = a; /* a NaN difference shows as NaN */
  if (!(r <= d->rel)) d->rel = r;
}

static double elem(const dfx_tensor *t, int64_t i) {
  const void *p = dfx_tensor_data(t);
  switch (dfx_tensor_dtype(t)) {
  case DFX_F32: return ((const float *)p)[i];
  case DFX_F64: return ((const double *)p)[i];
  case DFX_I32: return ((const int32_t *)p)[i];
  case DFX_I64: return (double)((const int64_t *)p)[i];
  default: return NAN;
  }
}

/* Compares out (the fetches) with the expected values files; 0, or -1. */
static int check_expected(const char *dir, const case_def *c, dfx_tensor **out, diff *d) {
  for (int i = 0; i < c->n_fetches; i++) {
    char *path = file_join(dir, c->fetches[i].values), err[256];
    values v;
    int rc = path ? values_load(path, 0, &v, err, sizeof err) : -1;
    free(path);
    if (rc != 0) return -1;
    if (v.n != dfx_tensor_count(out[i])) {
      values_free(&v);
      return -1;
    }
    for (int64_t k = 0; k < v.n; k++) diff_add(d, elem(out[i], k), v.v[k].d);
    values_free(&v);
  }
  return 0;
}

typedef struct setting {
  const char *list;
  dfx_session *s;
  double *t;
  diff want; /* against the expected values */
} setting;

static int run_case(const char *dir, int repeat, int threads, setting *set) {
  char err[256];
  case_def c;
  outcome o;
  memset(&o, 0, sizeof o);
  if (case_load(dir, &c, err, sizeof err) != 0) {
    fprintf(stderr, "dfx-model-time: %s: %s\n", dir, err);
    return -1;
  }
  dfx_status *st = dfx_status_new();
  dfx_graph *g = NULL;
  char *path = file_join(dir, c.graph);
  dfx_port *feeds = calloc((size_t)c.n_feeds + 1, sizeof *feeds), *fetches = calloc((size_t)c.n_fetches + 1, sizeof *fetches);
  dfx_tensor **vals = calloc((size_t)c.n_feeds + 1, sizeof *vals);
  dfx_tensor **out[2] = {calloc((size_t)c.n_fetches + 1, sizeof(dfx_tensor *)),
                         calloc((size_t)c.n_fetches + 1, sizeof(dfx_tensor *))};
  int rc = -1;
  if (!st || !path || !feeds || !fetches || !vals || !out[0] || !out[1]) goto done;
  if (dfx_graph_load(path, &g, st) != DFX_OK) goto done;
  if (case_make_feeds(dir, &c, g, feeds, vals, &o) != 0) goto done;
  for (int i = 0; i < c.n_fetches; i++) fetches[i] = (dfx_port){c.fetches[i].name, c.fetches[i].index};
  for (int v = 0; v < 2; v++) {
    dfx_session_options so = {.n_threads = threads, .optimize = set[v].list};
    set[v].want = (diff){0, 0};
    if (dfx_session_new(g, &so, &set[v].s, st) != DFX_OK) goto done;
  }
  /* Warm-up runs (plans, caches) whose outputs are checked. */
  diff between = {0, 0};
  for (int v = 0; v < 2; v++) {
    if (dfx_session_run(set[v].s, NULL, feeds, vals, c.n_feeds, fetches, out[v], c.n_fetches, NULL, 0, st) != DFX_OK)
      goto done;
    if (check_expected(dir, &c, out[v], &set[v].want) != 0) set[v].want = (diff){NAN, NAN};
  }
  for (int i = 0; i < c.n_fetches; i++)
    for (int64_t k = 0; k < dfx_tensor_count(out[0][i]) && k < dfx_tensor_count(out[1][i]); k++)
      diff_add(&between, elem(out[1][i], k), elem(out[0][i], k));
  for (int v = 0; v < 2; v++)
    for (int i = 0; i < c.n_fetches; i++) dfx_tensor_free(out[v][i]), out[v][i] = NULL;
  for (int k = 0; k < repeat; k++)
    for (int v0 = 0; v0 < 2; v0++) {
      int v = k % 2 ? 1 - v0 : v0; /* a, b, b, a, a, b, ...: neither always goes first */
      double t0 = now_us();
      if (dfx_session_run(set[v].s, NULL, feeds, vals, c.n_feeds, fetches, out[v], c.n_fetches, NULL, 0, st) != DFX_OK)
        goto done;
      set[v].t[k] = now_us() - t0;
      for (int i = 0; i < c.n_fetches; i++) dfx_tensor_free(out[v][i]), out[v][i] = NULL;
    }
  double med[2], min[2];
  for (int v = 0; v < 2; v++) {
    qsort(set[v].t, (size_t)repeat, sizeof(double), cmp_double);
    med[v] = set[v].t[repeat / 2];
    min[v] = set[v].t[0];
  }
  const char *name = strrchr(dir, '/');
  name = name && name[1] ? name + 1 : dir;
  printf("| %s | %.0f | %.0f | %.0f | %.0f | %.3f | %.1e / %.1e | %.1e / %.1e | %.1e / %.1e |\n", name, med[0],
         min[0], med[1], min[1], med[1] / med[0], set[0].want.abs, set[0].want.rel, set[1].want.abs, set[1].want.rel,
         between.abs, between.rel);
  fflush(stdout);
  rc = 0;
done:
  if (rc != 0) fprintf(stderr, "dfx-model-time: %s: %s\n", dir, st ? dfx_status_message(st) : "out of memory");
  for (int v = 0; v < 2; v++) {
    dfx_session_free(set[v].s);
    set[v].s = NULL;
    for (int i = 0; out[v] && i < c.n_fetches; i++) dfx_tensor_free(out[v][i]);
    free(out[v]);
  }
  for (int i = 0; vals && i < c.n_feeds; i++) dfx_tensor_free(vals[i]);
  free(vals);
  free(feeds);
  free(fetches);
  free(path);
  dfx_graph_free(g);
  dfx_status_free(st);
  case_free(&c);
  return rc;
}

int main(int argc, char **argv) {
  int repeat = 21, threads = 0, first = 0;
  setting set[2] = {{.list = "prune,identity,constfold,cse"}, {.list = "default"}};
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--repeat") && i + 1 < argc) repeat = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--a") && i + 1 < argc) set[0].list = argv[++i];
    else if (!strcmp(argv[i], "--b") && i + 1 < argc) set[1].list = argv[++i];
    else if (argv[i][0] != '-') {
      first = i;
      break;
    } else {
      first = 0;
      break;
    }
  }
  if (!first || repeat < 1) {
    fprintf(stderr, "usage: dfx-model-time [--repeat N] [--threads N] [--a LIST] [--b LIST] CASE_DIR...\n");
    return 2;
  }
  set[0].t = calloc((size_t)repeat, sizeof(double));
  set[1].t = calloc((size_t)repeat, sizeof(double));
  if (!set[0].t || !set[1].t) return 1;
  printf("a = %s\nb = %s\n%d runs each, alternating, %d threads (0: all cores)\n\n", set[0].list, set[1].list, repeat,
         threads);
  printf("| case | a median (us) | a min | b median (us) | b min | b / a | a vs expected (abs / rel) | b vs expected "
         "| b vs a |\n|---|---|---|---|---|---|---|---|---|\n");
  int failed = 0;
  for (int i = first; i < argc; i++) failed |= run_case(argv[i], repeat, threads, set) != 0;
  free(set[0].t);
  free(set[1].t);
  return failed;
}
