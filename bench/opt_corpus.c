/* opt_corpus.c - dfx-opt-corpus: what the default optimisation pipeline
 * does to a corpus of conformance cases (README's table). For every case:
 * nodes before and after optimising for its feeds and fetches, and the
 * time the passes take; for the largest graphs, the median run time of the
 * graph as given and as optimised (both run unoptimised by the session, in
 * this process, alternating, so machine noise hits both alike).
 *
 *   dfx-opt-corpus [--repeat N] [--top K] [--passes LIST] DIR */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "case.h"
#include "file.h"
#include "scan.h"

typedef struct row {
  const char *name;
  int before, after;
  double opt_ms;
  double run_us[2]; /* median: as given, optimised */
  int timed;
} row;

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static int cmp_int(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

static int by_size(const void *a, const void *b) {
  const row *x = a, *y = b;
  return y->before - x->before;
}

typedef struct loaded {
  case_def c;
  dfx_graph *g, *og;
  dfx_port *feeds, *fetches;
  dfx_tensor **feed_vals;
} loaded;

static void unload(loaded *l) {
  for (int i = 0; l->feed_vals && i < l->c.n_feeds; i++) dfx_tensor_free(l->feed_vals[i]);
  free(l->feed_vals);
  free(l->feeds);
  free(l->fetches);
  dfx_graph_free(l->g);
  dfx_graph_free(l->og);
  case_free(&l->c);
  memset(l, 0, sizeof *l);
}

/* Loads a case and optimises it for its ports; 0 or -1 (skipped, with why). */
static int load(const char *dir, const char *passes, loaded *l, row *r) {
  char err[256];
  outcome o;
  memset(&o, 0, sizeof o);
  memset(l, 0, sizeof *l);
  if (case_load(dir, &l->c, err, sizeof err) != 0) return -1;
  char *path = file_join(dir, l->c.graph);
  dfx_status *st = dfx_status_new();
  int rc = -1;
  if (!path || !st || dfx_graph_load(path, &l->g, st) != DFX_OK) goto done;
  l->feeds = calloc((size_t)l->c.n_feeds + 1, sizeof *l->feeds);
  l->feed_vals = calloc((size_t)l->c.n_feeds + 1, sizeof *l->feed_vals);
  l->fetches = calloc((size_t)l->c.n_fetches + 1, sizeof *l->fetches);
  if (!l->feeds || !l->feed_vals || !l->fetches) goto done;
  if (case_make_feeds(dir, &l->c, l->g, l->feeds, l->feed_vals, &o) != 0) goto done;
  for (int i = 0; i < l->c.n_fetches; i++) l->fetches[i] = (dfx_port){l->c.fetches[i].name, l->c.fetches[i].index};
  dfx_optimize_options oo = {.passes = passes, .feeds = l->feeds, .n_feeds = l->c.n_feeds, .fetches = l->fetches,
                             .n_fetches = l->c.n_fetches};
  dfx_optimize_report rep;
  double t0 = now_us();
  if (dfx_graph_optimize(l->g, &oo, &l->og, &rep, st) != DFX_OK) goto done;
  r->opt_ms = (now_us() - t0) / 1e3;
  r->before = rep.nodes_before;
  r->after = rep.nodes_after;
  dfx_optimize_report_free(&rep);
  rc = 0;
done:
  if (rc != 0) fprintf(stderr, "dfx-opt-corpus: %s: skipped: %s\n", dir, st ? dfx_status_message(st) : "no memory");
  dfx_status_free(st);
  free(path);
  if (rc != 0) unload(l);
  return rc;
}

/* Median run time of each graph of l, alternating runs; 0 or -1. */
static int time_runs(loaded *l, int repeat, row *r) {
  dfx_session_options so = {.optimize = "none"};
  dfx_session *s[2] = {NULL, NULL};
  dfx_status *st = dfx_status_new();
  double *t[2] = {calloc((size_t)repeat, sizeof(double)), calloc((size_t)repeat, sizeof(double))};
  dfx_tensor **out = calloc((size_t)l->c.n_fetches + 1, sizeof *out);
  int rc = -1;
  if (!st || !t[0] || !t[1] || !out || dfx_session_new(l->g, &so, &s[0], st) != DFX_OK ||
      dfx_session_new(l->og, &so, &s[1], st) != DFX_OK)
    goto done;
  for (int k = -1; k < repeat; k++) /* k = -1: warm-up (plans, caches) */
    for (int v = 0; v < 2; v++) {
      double t0 = now_us();
      if (dfx_session_run(s[v], NULL, l->feeds, l->feed_vals, l->c.n_feeds, l->fetches, out, l->c.n_fetches, NULL, 0,
                          st) != DFX_OK)
        goto done;
      if (k >= 0) t[v][k] = now_us() - t0;
      for (int i = 0; i < l->c.n_fetches; i++) dfx_tensor_free(out[i]);
    }
  for (int v = 0; v < 2; v++) {
    qsort(t[v], (size_t)repeat, sizeof(double), cmp_double);
    r->run_us[v] = t[v][repeat / 2];
  }
  r->timed = 1;
  rc = 0;
done:
  if (rc != 0) fprintf(stderr, "dfx-opt-corpus: %s: not timed: %s\n", r->name, st ? dfx_status_message(st) : "");
  dfx_session_free(s[0]);
  dfx_session_free(s[1]);
  dfx_status_free(st);
  free(t[0]);
  free(t[1]);
  free(out);
  return rc;
}

static double median_int(int *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_int);
  return n == 0 ? 0 : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

int main(int argc, char **argv) {
  int repeat = 21, top = 10;
  const char *dir = NULL, *passes = NULL;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--repeat") && i + 1 < argc) repeat = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--top") && i + 1 < argc) top = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--passes") && i + 1 < argc) passes = argv[++i];
    else if (argv[i][0] != '-' && !dir) dir = argv[i];
    else {
      fprintf(stderr, "usage: dfx-opt-corpus [--repeat N] [--top K] [--passes LIST] DIR\n");
      return 2;
    }
  }
  if (!dir || repeat < 1 || top < 0) {
    fprintf(stderr, "usage: dfx-opt-corpus [--repeat N] [--top K] [--passes LIST] DIR\n");
    return 2;
  }
  char **names = NULL;
  int n = 0;
  if (scan_cases(dir, NULL, &names, &n) != 0) {
    fprintf(stderr, "dfx-opt-corpus: cannot read %s\n", dir);
    return 1;
  }
  row *rows = calloc((size_t)n + 1, sizeof *rows);
  int *b = calloc((size_t)n + 1, sizeof(int)), *a = calloc((size_t)n + 1, sizeof(int));
  if (!rows || !b || !a) return 1;
  int m = 0;
  long long tb = 0, ta = 0;
  double opt_ms = 0;
  for (int i = 0; i < n; i++) {
    char *cdir = file_join(dir, names[i]);
    loaded l;
    rows[m].name = names[i];
    if (cdir && load(cdir, passes, &l, &rows[m]) == 0) {
      unload(&l);
      b[m] = rows[m].before;
      a[m] = rows[m].after;
      tb += rows[m].before;
      ta += rows[m].after;
      opt_ms += rows[m].opt_ms;
      m++;
    }
    free(cdir);
  }
  printf("cases: %d of %d\n", m, n);
  printf("nodes, total:            %lld -> %lld (%.1f%% fewer)\n", tb, ta, tb ? 100.0 * (double)(tb - ta) / (double)tb : 0);
  printf("nodes, median per graph: %.1f -> %.1f\n", median_int(b, m), median_int(a, m));
  printf("optimisation time:       %.1f ms in all, %.3f ms per graph\n", opt_ms, m ? opt_ms / m : 0);
  qsort(rows, (size_t)m, sizeof *rows, by_size);
  printf("\n| graph | nodes | optimised | run as given (us) | run optimised (us) | ratio |\n|---|---|---|---|---|---|\n");
  for (int i = 0; i < m && i < top; i++) {
    char *cdir = file_join(dir, rows[i].name);
    loaded l;
    row tmp = rows[i];
    if (cdir && load(cdir, passes, &l, &tmp) == 0) {
      time_runs(&l, repeat, &rows[i]);
      unload(&l);
    }
    free(cdir);
    if (rows[i].timed)
      printf("| %s | %d | %d | %.1f | %.1f | %.2f |\n", rows[i].name, rows[i].before, rows[i].after, rows[i].run_us[0],
             rows[i].run_us[1], rows[i].run_us[1] / rows[i].run_us[0]);
  }
  for (int i = 0; i < n; i++) free(names[i]);
  free(names);
  free(rows);
  free(a);
  free(b);
  return 0;
}
