/* test_optimize.c - end-to-end tests of `dfexec optimize` and of run's
 * --optimize and --stats: the written graph is smaller where it should be,
 * keeps what runs need, and runs to the same outputs as the original. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_harness.h"

#define RUN(...) cli_run((const char *const[]){__VA_ARGS__, NULL})

/* y = x * (2 + 3) + 0 * unused-later, with a dead branch 'spare' nobody
 * fetches and two identical Negs (one subexpression). */
static const char folding_graph[] =
    "node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }\n"
    "node { name: 'two' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } }"
    " attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 2 } } } }\n"
    "node { name: 'three' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } }"
    " attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 3 } } } }\n"
    "node { name: 'five' op: 'Add' input: 'two' input: 'three' attr { key: 'T' value { type: DT_FLOAT } } }\n"
    "node { name: 'five_id' op: 'Identity' input: 'five' attr { key: 'T' value { type: DT_FLOAT } } }\n"
    "node { name: 'n1' op: 'Neg' input: 'x' attr { key: 'T' value { type: DT_FLOAT } } }\n"
    "node { name: 'n2' op: 'Neg' input: 'x' attr { key: 'T' value { type: DT_FLOAT } } }\n"
    "node { name: 'm' op: 'Mul' input: 'n1' input: 'five_id' attr { key: 'T' value { type: DT_FLOAT } } }\n"
    "node { name: 'y' op: 'Sub' input: 'm' input: 'n2' attr { key: 'T' value { type: DT_FLOAT } } }\n"
    "node { name: 'spare' op: 'Square' input: 'x' attr { key: 'T' value { type: DT_FLOAT } } }\n";

static const char *write_graph(const char *name, const char *text) {
  const char *path = cli_tmp(name);
  cr_assert(cli_write(path, text, strlen(text)));
  return path;
}

static int count_nodes(const char *path) {
  size_t len;
  char *text = cli_read(path, &len);
  cr_assert(text, "cannot read %s", path);
  int n = 0;
  for (const char *p = text; (p = strstr(p, "node {")); p++) n++;
  free(text);
  return n;
}

static bool has_node(const char *path, const char *name) {
  size_t len;
  char *text = cli_read(path, &len);
  cr_assert(text);
  char needle[128];
  snprintf(needle, sizeof needle, "name: \"%s\"\n", name);
  bool found = strstr(text, needle) != NULL;
  free(text);
  return found;
}

/* stdout of `dfexec run GRAPH args...` (must succeed), malloc'd. */
static char *run_out(const char *graph, const char *a1, const char *a2, const char *a3, const char *a4) {
  cli_result r = RUN(graph, a1, a2, a3, a4);
  cr_assert_eq(r.status, 0, "run %s: %s", graph, r.err);
  char *out = r.out;
  r.out = NULL;
  cli_result_free(&r);
  return out;
}

Test(optimize, folds_merges_and_keeps_what_runs_need, .timeout = 30) {
  const char *in = write_graph("fold.pbtxt", folding_graph), *out = cli_tmp("fold_opt.pbtxt");
  cli_result r = RUN("optimize", in, "-o", out);
  cr_assert_eq(r.status, 0, "%s", r.err);
  cr_assert(strstr(r.err, "optimisation: 10 -> "), "%s", r.err);
  cli_result_free(&r);
  /* 'five' becomes a Const in place and 'two', 'three' and 'five_id' go;
   * n2 merges into n1; without --fetch nothing is pruned, so 'spare' (an
   * output) stays. */
  cr_assert_eq(count_nodes(out), 6, "expected x, five, n1, m, y, spare, and no more");
  cr_assert(has_node(out, "x") && has_node(out, "y") && has_node(out, "spare") && has_node(out, "five"));
  cr_assert(!has_node(out, "two") && !has_node(out, "five_id") && !has_node(out, "n2"));
  char *want = run_out(in, "--feed", "x=1.5", "--fetch", "y");
  char *got = run_out(out, "--feed", "x=1.5", "--fetch", "y");
  cr_assert_str_eq(got, want);
  cr_assert(strstr(want, "-6"), "y = -1.5*5 + 1.5 = -6: %s", want);
  free(want);
  free(got);
}

Test(optimize, fetch_prunes_and_passes_choose, .timeout = 30) {
  const char *in = write_graph("prune.pbtxt", folding_graph), *out = cli_tmp("prune_opt.pbtxt");
  cli_result r = RUN("optimize", in, "-o", out, "--fetch", "y");
  cr_assert_eq(r.status, 0, "%s", r.err);
  cli_result_free(&r);
  cr_assert(!has_node(out, "spare"), "--fetch y prunes what y does not need");
  r = RUN("optimize", in, "-o", out, "--passes", "none", "--quiet");
  cr_assert_eq(r.status, 0, "%s", r.err);
  cr_assert_str_eq(r.err, "");
  cli_result_free(&r);
  cr_assert_eq(count_nodes(out), 10);
  r = RUN("optimize", in, "-o", out, "--passes", "cse");
  cr_assert_eq(r.status, 0, "%s", r.err);
  cli_result_free(&r);
  cr_assert_eq(count_nodes(out), 9, "cse alone merges the Negs only");
  /* A fed node is never folded, even when it is a Const. */
  r = RUN("optimize", in, "-o", out, "--fetch", "y", "--feed", "five");
  cr_assert_eq(r.status, 0, "%s", r.err);
  cli_result_free(&r);
  cr_assert(has_node(out, "five"));
}

Test(optimize, list_and_errors, .timeout = 30) {
  cli_result r = RUN("optimize", "--list");
  cr_assert_eq(r.status, 0);
  cr_assert(strstr(r.out, "constfold") && strstr(r.out, "cse") && strstr(r.out, "prune") && strstr(r.out, "identity"),
            "%s", r.out);
  cli_result_free(&r);
  const char *in = write_graph("err.pbtxt", folding_graph);
  const char *const usage[][6] = {
      {"optimize", in, NULL},                                   /* no -o */
      {"optimize", "-o", cli_tmp("e.pb"), NULL},                /* no IN */
      {"optimize", in, "-o", cli_tmp("e.pb"), "--passes", "fold"},
      {in, "--optimize", "cse,nope", NULL},
  };
  for (size_t i = 0; i < sizeof usage / sizeof usage[0]; i++) {
    r = cli_run(usage[i]);
    cr_assert_eq(r.status, 2, "case %zu: exit %d: %s", i, r.status, r.err);
    cli_result_free(&r);
  }
  r = RUN("optimize", in, "-o", cli_tmp("e.pb"), "--passes", "fold");
  cr_assert(strstr(r.err, "unknown pass 'fold'") && strstr(r.err, "constfold"), "%s", r.err);
  cli_result_free(&r);
  r = RUN("optimize", in, "-o", cli_tmp("e.pb"), "--fetch", "nosuch");
  cr_assert_eq(r.status, 1);
  cr_assert(strstr(r.err, "nosuch"), "%s", r.err);
  cli_result_free(&r);
}

/* Loops and conds: the optimised graph, written and read back, runs to the
 * same outputs; run --optimize none agrees with the default. */
Test(optimize, control_flow_graphs_round_trip, .timeout = 60) {
  static const char *graphs[] = {"nested_loop.pbtxt", "while_loop.pbtxt", "graph-while-loop.pbtxt",
                                 "merge_without_loops.pbtxt", "switch_n.pbtxt"};
  for (size_t i = 0; i < sizeof graphs / sizeof graphs[0]; i++) {
    const char *in = cli_conformance(graphs[i]), *out = cli_tmp("cf_opt.pb");
    cli_result r = RUN("optimize", in, "-o", out);
    cr_assert_eq(r.status, 0, "%s: %s", graphs[i], r.err);
    cli_result_free(&r);
    char *want = run_out(in, "--optimize", "none", "--format", "json");
    char *opt = run_out(in, "--format", "json", "--threads", "2");
    char *got = run_out(out, "--optimize", "none", "--format", "json");
    cr_assert_str_eq(opt, want, "%s: default pipeline", graphs[i]);
    cr_assert_str_eq(got, want, "%s: written graph", graphs[i]);
    free(want);
    free(opt);
    free(got);
  }
}

Test(optimize, run_stats_report_the_passes, .timeout = 30) {
  const char *in = write_graph("stats.pbtxt", folding_graph);
  cli_result r = RUN(in, "--feed", "x=1", "--fetch", "y", "--stats");
  cr_assert_eq(r.status, 0, "%s", r.err);
  cr_assert(strstr(r.out, "optimisation: 10 -> "), "%s", r.out);
  cr_assert(strstr(r.out, "constfold"), "%s", r.out);
  cr_assert(strstr(r.out, "per-op statistics"), "%s", r.out);
  cli_result_free(&r);
  r = RUN(in, "--feed", "x=1", "--fetch", "y", "--stats", "--optimize", "none");
  cr_assert_eq(r.status, 0, "%s", r.err);
  cr_assert(strstr(r.out, "optimisation: off"), "%s", r.out);
  cli_result_free(&r);
}
