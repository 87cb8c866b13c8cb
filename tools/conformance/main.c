/* main.c - dfx-conformance: runs a corpus of TensorFlow graphs with their
 * expected outputs and reports passed/total with failures grouped by
 * reason. The last line on stdout is always "N passed, M failed", which CI
 * tools read; the exit status is 1 only below --min-pass (2: usage). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "file.h"
#include "report.h"
#include "runner.h"
#include "scan.h"

typedef struct opts {
  const char *json, *filter, *dir, *optimize;
  int threads, jobs, verbose, no_fork, via_graphdef, tasks, random_seed;
  double timeout;
  long min_pass;  /* -1: no floor */
} opts;

static void usage(FILE *f) {
  fprintf(f,
          "usage: dfx-conformance [--json REPORT.json] [--threads N] [--jobs N] [--filter SUBSTR]\n"
          "                       [--timeout SEC] [--min-pass N] [--optimize LIST] [--via-graphdef]\n"
          "                       [--tasks N [--random-placement SEED]]\n"
          "                       [--verbose] [--no-fork] DIR\n"
          "Runs every case (a directory with a case.json) under DIR, each in its own\n"
          "process, and prints passed/total with the failures grouped by reason.\n"
          "  --json FILE     also write a JSON report\n"
          "  --threads N     session worker threads per case (default 0: engine default)\n"
          "  --jobs N        cases run at once (default 2)\n"
          "  --filter S      only cases whose path contains S\n"
          "  --timeout SEC   per-case run deadline (default 60)\n"
          "  --min-pass N    exit 1 when fewer than N cases pass\n"
          "  --optimize L    graph optimisation: default (as sessions do), none, or a\n"
          "                  comma-separated list of passes\n"
          "  --via-graphdef  optimise for the case's feeds and fetches, write the graph\n"
          "                  as a GraphDef, and run that re-imported graph unoptimised\n"
          "  --verbose       one line per case\n"
          "  --no-fork       run cases in this process (for debuggers)\n");
}

/* Parses a whole decimal integer in [lo, hi]. */
static int parse_long(const char *s, long lo, long hi, long *out) {
  char *end;
  long v = strtol(s, &end, 10);
  if (!*s || *end || v < lo || v > hi) return -1;
  *out = v;
  return 0;
}

static int parse_args(int argc, char **argv, opts *o) {
  *o = (opts){ .jobs = 2, .timeout = 60, .min_pass = -1 };
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
    long v;
    if (!strcmp(a, "--verbose") || !strcmp(a, "-v")) o->verbose = 1;
    else if (!strcmp(a, "--no-fork")) o->no_fork = 1;
    else if (!strcmp(a, "--via-graphdef")) o->via_graphdef = 1;
    else if (!strcmp(a, "--help") || !strcmp(a, "-h")) return 1;
    else if (a[0] == '-' && a[1] == '-' && !val) {
      fprintf(stderr, "dfx-conformance: %s needs a value\n", a);
      return -1;
    } else if (!strcmp(a, "--json")) o->json = argv[++i];
    else if (!strcmp(a, "--filter")) o->filter = argv[++i];
    else if (!strcmp(a, "--optimize")) o->optimize = argv[++i];
    else if (!strcmp(a, "--tasks") || !strcmp(a, "--random-placement")) {
      if (parse_long(val, 1, 1000000, &v) != 0) {
        fprintf(stderr, "dfx-conformance: bad value for %s: %s\n", a, val);
        return -1;
      }
      if (!strcmp(a, "--tasks")) o->tasks = (int)v;
      else o->random_seed = (int)v;
      i++;
    } else if (!strcmp(a, "--threads") || !strcmp(a, "--jobs") || !strcmp(a, "--min-pass")) {
      if (parse_long(val, 0, 1000000, &v) != 0) {
        fprintf(stderr, "dfx-conformance: bad value for %s: %s\n", a, val);
        return -1;
      }
      if (!strcmp(a, "--threads")) o->threads = (int)v;
      else if (!strcmp(a, "--jobs")) o->jobs = v > 64 ? 64 : (int)v;
      else o->min_pass = v;
      i++;
    } else if (!strcmp(a, "--timeout")) {
      char *end;
      o->timeout = strtod(val, &end);
      if (*end || !(o->timeout > 0 && o->timeout < 1e6)) {
        fprintf(stderr, "dfx-conformance: bad timeout: %s\n", val);
        return -1;
      }
      i++;
    } else if (a[0] == '-' && a[1]) {
      fprintf(stderr, "dfx-conformance: unknown option %s\n", a);
      return -1;
    } else if (o->dir) {
      fprintf(stderr, "dfx-conformance: more than one DIR\n");
      return -1;
    } else o->dir = a;
  }
  if (!o->dir) {
    fprintf(stderr, "dfx-conformance: no DIR given\n");
    return -1;
  }
  if (o->jobs == 0) o->no_fork = 1;
  return 0;
}

int main(int argc, char **argv) {
  opts o;
  char **names = NULL;
  int n = 0, status = 2, a = parse_args(argc, argv, &o);
  case_result *results = NULL;
  report rep = { 0 };
  if (a != 0) {
    usage(a > 0 ? stdout : stderr);
    return a > 0 ? 0 : 2;
  }
  if (scan_cases(o.dir, o.filter, &names, &n) != 0) {
    fprintf(stderr, "dfx-conformance: cannot read %s\n", o.dir);
    goto fail;
  }
  if (!(results = calloc((size_t)n + 1, sizeof *results))) goto fail;
  for (int i = 0; i < n; i++) {
    results[i].name = names[i][0] ? names[i] : (char *)o.dir;
    if (!(results[i].dir = file_join(o.dir, names[i]))) goto fail;
  }
  printf("running %d cases from %s\n", n, o.dir);
  runner_cfg rc = {
    .run = { .threads = o.threads, .timeout = o.timeout, .optimize = o.optimize, .via_graphdef = o.via_graphdef,
             .tasks = o.tasks, .random_seed = o.random_seed },
    .jobs = o.no_fork ? 0 : o.jobs,
    /* Loading and comparing also take time: allow a margin over the run
     * deadline before the child is killed. */
    .wall_limit = o.timeout * 1.25 + 10,
    .quiet_children = !o.verbose,
  };
  if (runner_run(results, n, &rc, report_progress, &o.verbose) != 0)
    fprintf(stderr, "dfx-conformance: cannot start cases (fork failed); unfinished cases fail\n");
  for (int i = 0; i < n; i++) outcome_sanitize(&results[i].out);
  if (report_build(&rep, results, n) != 0) goto fail;
  report_print(&rep, stdout);
  if (o.json && report_write_json(&rep, o.json) != 0) fprintf(stderr, "dfx-conformance: cannot write %s\n", o.json);
  status = 0;
  if (o.min_pass >= 0) {
    if (rep.passed < o.min_pass) {
      printf("below floor %ld\n", o.min_pass);
      status = 1;
    } else {
      printf("floor %ld: ok\n", o.min_pass);
    }
  }
fail:
  if (status == 2) fprintf(stderr, "dfx-conformance: giving up (see above, or out of memory)\n");
  printf("%d passed, %d failed\n", rep.passed, n - rep.passed);
  report_free(&rep);
  for (int i = 0; results && i < n; i++) free(results[i].dir);
  free(results);
  scan_free(names, n);
  return status;
}
