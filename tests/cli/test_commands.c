/* test_commands.c - end-to-end tests of `dfexec info`, `dot` and `convert`,
 * the --help texts and the usage errors (exit status 2). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_harness.h"

#define RUN(...) cli_run((const char *const[]){__VA_ARGS__, NULL})

Test(commands, info_lists_ops_frames_and_missing_kernels, .timeout = 30) {
  cli_result r = RUN("info", cli_conformance("nested_loop.pbtxt"));
  cr_assert_eq(r.status, 0, "stderr: %s", r.err);
  cr_assert(strstr(r.out, "nodes: 41\n"), "%s", r.out);
  cr_assert(strstr(r.out, "  Enter                            4\n"), "%s", r.out);
  cr_assert(strstr(r.out, "frames: 2\n"), "%s", r.out);
  cr_assert(strstr(r.out, "  while/while/while/while/         while/while/             10"), "%s", r.out);
  cr_assert(strstr(r.out, "outputs: 2\n  while/Exit:0                     int32"), "%s", r.out);
  cli_result_free(&r);
}

Test(commands, info_placeholders_and_shapes, .timeout = 30) {
  cli_result r = RUN("info", cli_data("feeds.pbtxt"));
  cr_assert_eq(r.status, 0, "stderr: %s", r.err);
  cr_assert(strstr(r.out, "ops without a kernel: 0\n"), "%s", r.out);
  cr_assert(strstr(r.out, "  x                                float32    [?,2]\n"), "%s", r.out);
  cr_assert(strstr(r.out, "  u                                float32    ?\n"), "%s", r.out);
  cr_assert(strstr(r.out, "  d                                float32    []  (has a default)\n"), "%s", r.out);
  cli_result_free(&r);
}

Test(commands, info_reports_ops_without_kernels, .timeout = 30) {
  const char *g = cli_tmp("unknown_op.pbtxt");
  const char *text = "node { name: \"a\" op: \"NoSuchOp\" }\nnode { name: \"b\" op: \"NoOp\" input: \"^a\" }\n";
  cr_assert(cli_write(g, text, strlen(text)));
  cli_result r = RUN("info", g);
  cr_assert_eq(r.status, 0, "stderr: %s", r.err);
  cr_assert(strstr(r.out, "ops without a kernel: 1\n  NoSuchOp                         used by a\n"), "%s", r.out);
  cli_result_free(&r);
  r = RUN("dot", g);
  cr_assert_eq(r.status, 0, "stderr: %s", r.err);
  cli_result_free(&r);
  /* Unknown ops import (as opaque nodes); a run fails only when it needs one. */
  r = RUN("run", g, "--target", "b");
  cr_assert_eq(r.status, 1);
  cr_assert(strstr(r.err, "'a' (NoSuchOp)") && strstr(r.err, "needed for target 'b'"), "%s", r.err);
  cli_result_free(&r);
}

Test(commands, dot_has_nested_clusters_and_back_edges, .timeout = 30) {
  cli_result r = RUN("dot", cli_conformance("nested_loop.pbtxt"));
  cr_assert_eq(r.status, 0, "stderr: %s", r.err);
  const char *c1 = strstr(r.out, "subgraph cluster_1 {"), *c2 = strstr(r.out, "subgraph cluster_2 {");
  cr_assert(c1 && c2 && c1 < c2, "clusters missing");
  cr_assert(strstr(r.out, "label=\"while/while/while/while/\""));
  cr_assert(strstr(r.out, "[label=\"while/Merge\\nMerge\", shape=invtriangle"), "%s", r.out);
  cr_assert(strstr(r.out, "shape=diamond"));
  cr_assert(strstr(r.out, "[constraint=false, color=blue, fontcolor=blue, label=\"next\"]"));
  cr_assert(strstr(r.out, "[style=dashed"));
  /* cluster_2 is inside cluster_1: it closes before cluster_1 does. */
  int depth = 0, max_depth = 0;
  for (const char *p = r.out; *p; p++) {
    if (*p == '{' && strncmp(p - 1, " {\n", 3) == 0) max_depth = ++depth > max_depth ? depth : max_depth;
    if (*p == '}' && (p[1] == '\n')) depth--;
  }
  cr_assert_geq(max_depth, 3, "clusters are not nested");
  if (!cli_have_program("dot")) {
    cr_log_warn("graphviz 'dot' not installed: skipping the layout check");
  } else {
    const char *in = cli_tmp("g.dot"), *out = cli_tmp("g.svg");
    cr_assert(cli_write(in, r.out, strlen(r.out)));
    char cmd[9000];
    snprintf(cmd, sizeof cmd, "dot -Tsvg '%s' -o '%s' 2>&1", in, out);
    cr_assert_eq(system(cmd), 0, "dot rejected the output");
    size_t len;
    char *svg = cli_read(out, &len);
    cr_assert(svg && strstr(svg, "<svg"));
    free(svg);
  }
  cli_result_free(&r);
}

static size_t file_eq(const char *a, const char *b) {
  size_t la, lb;
  char *x = cli_read(a, &la), *y = cli_read(b, &lb);
  cr_assert(x && y);
  bool eq = la == lb && memcmp(x, y, la) == 0;
  free(x);
  free(y);
  return eq;
}

Test(commands, convert_round_trips_byte_identically, .timeout = 30) {
  static const char *graphs[] = {"control_flow_v1.pbtxt", "nested_loop.pbtxt", "switch_n.pbtxt", "while_loop.pbtxt"};
  for (size_t i = 0; i < sizeof graphs / sizeof graphs[0]; i++) {
    const char *pb1 = cli_tmp("a.pb"), *txt = cli_tmp("b.pbtxt"), *pb2 = cli_tmp("c.pb"), *txt2 = cli_tmp("d.pbtxt");
    const char *norm = cli_tmp("e.pbtxt");
    cli_result r = RUN("convert", cli_conformance(graphs[i]), pb1);
    cr_assert_eq(r.status, 0, "%s: %s", graphs[i], r.err);
    cli_result_free(&r);
    r = RUN("convert", pb1, txt);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cli_result_free(&r);
    r = RUN("convert", txt, pb2);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cli_result_free(&r);
    cr_assert(file_eq(pb1, pb2), "%s: pbtxt -> pb -> pbtxt -> pb differs", graphs[i]);
    r = RUN("convert", pb2, txt2);
    cli_result_free(&r);
    cr_assert(file_eq(txt, txt2), "%s: text output not stable", graphs[i]);
    /* A text-to-text copy normalises to the same printed form. */
    r = RUN("convert", cli_conformance(graphs[i]), norm);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cli_result_free(&r);
    cr_assert(file_eq(norm, txt), "%s: normalised text differs", graphs[i]);
  }
}

Test(commands, convert_errors, .timeout = 30) {
  cli_result r = RUN("convert", cli_conformance("switch_n.pbtxt"), cli_tmp("out.bin"));
  cr_assert_eq(r.status, 2, "unknown output extension must be a usage error");
  cli_result_free(&r);
  const char *bad = cli_tmp("bad.pbtxt");
  cr_assert(cli_write(bad, "node { name: ", 13));
  r = RUN("convert", bad, cli_tmp("bad.pb"));
  cr_assert_eq(r.status, 1);
  cr_assert(strncmp(r.err, "dfexec: error: ", 15) == 0, "%s", r.err);
  cli_result_free(&r);
  r = RUN("convert", "/nonexistent.pb", cli_tmp("x.pbtxt"));
  cr_assert_eq(r.status, 1);
  cli_result_free(&r);
}

Test(commands, help_for_each_command, .timeout = 30) {
  static const char *cmds[][2] = {{"run", "usage: dfexec run"}, {"info", "usage: dfexec info"},
                                  {"dot", "usage: dfexec dot"}, {"convert", "usage: dfexec convert"},
                                  {"optimize", "usage: dfexec optimize"}};
  for (int i = 0; i < 5; i++) {
    cli_result r = RUN(cmds[i][0], "--help");
    cr_assert_eq(r.status, 0, "%s --help", cmds[i][0]);
    cr_assert(strstr(r.out, cmds[i][1]), "%s", r.out);
    cli_result_free(&r);
  }
  cli_result r = RUN("--help");
  cr_assert_eq(r.status, 0);
  cr_assert(strstr(r.out, "dfexec convert IN OUT"));
  cli_result_free(&r);
  r = RUN("run", "--help");
  cr_assert(strstr(r.out, "bfloat16 is written as float32"));
  cli_result_free(&r);
}

Test(commands, usage_errors_exit_2, .timeout = 30) {
  const char *sw = cli_conformance("switch_n.pbtxt");
  const char *const cases[][6] = {
      {NULL},
      {"run", NULL},
      {"info", NULL},
      {"dot", sw, sw, NULL},
      {"convert", sw, NULL},
      {sw, "--bogus", NULL},
      {sw, "--format", "xml", NULL},
      {sw, "--repeat", "0", NULL},
      {sw, "--threads", "many", NULL},
      {sw, "--timeout", "-1", NULL},
      {sw, "--fetch", NULL},
      {sw, "--fetch", ":1", NULL},
      {sw, "--feed", "novalue", NULL},
      {sw, "--feed", "Case/input_0=[1,", NULL},
      {sw, "extra", NULL},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    cli_result r = cli_run(cases[i]);
    cr_assert_eq(r.status, 2, "case %zu: exit %d, stderr %s", i, r.status, r.err);
    cr_assert(r.err[0], "case %zu: no message", i);
    cli_result_free(&r);
  }
}

Test(commands, missing_graph_file_exits_1, .timeout = 30) {
  cli_result r = RUN("/nonexistent/graph.pb");
  cr_assert_eq(r.status, 1);
  cr_assert(strstr(r.err, "dfexec: error: "), "%s", r.err);
  cli_result_free(&r);
  r = RUN("info", "/nonexistent/graph.pb");
  cr_assert_eq(r.status, 1);
  cli_result_free(&r);
}

/* `dfexec ops`: one line per op with a kernel, name first, then ATTR=dtypes. */
Test(commands, ops_lists_kernels_and_dtypes, .timeout = 30) {
  cli_result r = RUN("ops");
  cr_assert_eq(r.status, 0, "%s", r.err);
  cr_assert(strstr(r.out, "\nAdd T=") || strncmp(r.out, "Add T=", 6) == 0, "%s", r.out);
  cr_assert(strstr(r.out, "\nMatMul T=float32,float64,"), "MatMul's dtypes");
  cr_assert(strstr(r.out, "\nSwitch T="), "engine-run ops are listed too");
  cr_assert(strstr(r.out, "\nNoOp\n"), "an op without type attrs is its name alone");
  cr_assert_null(strstr(r.out, "\nNoSuchOp"));
  int lines = 0;
  for (const char *p = r.out; *p; p++) lines += *p == '\n';
  cr_assert_gt(lines, 300);
  cli_result_free(&r);
  r = RUN("ops", "extra");
  cr_assert_eq(r.status, 2);
  cli_result_free(&r);
}

/* info --format json: strict JSON with ops, frames, placeholders and
 * outputs; shapes as lists (-1 unknown dim) or null (unknown rank). */
Test(commands, info_json_is_strict_and_complete, .timeout = 30) {
  cli_result r = RUN("info", cli_data("shift_loop.pbtxt"), "--format", "json");
  cr_assert_eq(r.status, 0, "%s", r.err);
  char err[256];
  js *doc = js_parse(r.out, err, sizeof err);
  cr_assert(doc, "%s: %s", err, r.out);
  cr_assert_gt(js_get(doc, "nodes")->num, 0);
  const js *ops = js_get(doc, "ops"), *frames = js_get(doc, "frames"), *outs = js_get(doc, "outputs");
  cr_assert(ops && ops->kind == JS_ARR && ops->n > 0);
  double total = 0;
  for (int i = 0; i < ops->n; i++) {
    total += js_get(js_at(ops, i), "count")->num;
    cr_assert_eq(js_get(js_at(ops, i), "kernel")->kind, JS_BOOL);
  }
  cr_assert_eq(total, js_get(doc, "nodes")->num, "per-op counts add up to the node count");
  cr_assert(frames && frames->n == 1, "one loop frame");
  cr_assert_eq(js_get(js_at(frames, 0), "parent")->kind, JS_NULL);
  cr_assert(outs && outs->n >= 1);
  bool exit1 = false;
  for (int i = 0; i < outs->n; i++) exit1 |= strcmp(js_get(js_at(outs, i), "name")->str, "x_final:0") == 0;
  cr_assert(exit1, "%s", r.out);
  js_free(doc);
  cli_result_free(&r);

  r = RUN("info", cli_data("feeds.pbtxt"), "--format", "json");
  cr_assert_eq(r.status, 0, "%s", r.err);
  doc = js_parse(r.out, err, sizeof err);
  cr_assert(doc, "%s", err);
  const js *phs = js_get(doc, "placeholders");
  bool x = false, u = false, d = false;
  for (int i = 0; i < phs->n; i++) {
    const js *p = js_at(phs, i), *sh = js_get(p, "shape");
    const char *name = js_get(p, "name")->str;
    if (strcmp(name, "x") == 0) /* [?,2] */
      x = sh->kind == JS_ARR && sh->n == 2 && js_at(sh, 0)->num == -1 && js_at(sh, 1)->num == 2;
    if (strcmp(name, "u") == 0) u = sh->kind == JS_NULL;
    if (strcmp(name, "d") == 0) d = js_get(p, "has_default")->b;
  }
  cr_assert(x && u && d, "x %d u %d d %d: %s", x, u, d, r.out);
  js_free(doc);
  cli_result_free(&r);
  r = RUN("info", cli_data("feeds.pbtxt"), "--format", "yaml");
  cr_assert_eq(r.status, 2);
  cli_result_free(&r);
}
