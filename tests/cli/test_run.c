/* test_run.c - end-to-end tests of `dfexec run`: default outputs, the JSON
 * contract, feeds (literals, .npy, dtype conversion), --output-dir, --trace,
 * --stats, --repeat and the run-time errors. Each test spawns the built
 * executable; tests marked "needs Less" wait for that kernel to be merged. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli_harness.h"
#include "dtype.h"

#define RUN(...) cli_run((const char *const[]){__VA_ARGS__, NULL})

/* Parses r->out as the JSON contract and returns outputs[i]. */
static const js *output_at(const js *doc, int i) { return js_at(js_get(doc, "outputs"), i); }

static js *parse_ok(const cli_result *r) {
  cr_assert_eq(r->status, 0, "exit %d, stderr: %s", r->status, r->err);
  char err[256];
  js *doc = js_parse(r->out, err, sizeof err);
  cr_assert_not_null(doc, "invalid JSON (%s): %s", err, r->out);
  return doc;
}

static double num_at(const js *o, int i) {
  const js *v = js_at(js_get(o, "values"), i);
  cr_assert_not_null(v);
  cr_assert_eq(v->kind, JS_NUM);
  return v->num;
}

/* ---- conformance graphs ---- */

Test(run, switch_n_default_output_text, .timeout = 30) {
  cli_result r = RUN(cli_conformance("switch_n.pbtxt"));
  cr_assert_eq(r.status, 0, "stderr: %s", r.err);
  cr_assert_str_eq(r.out, "Case/merge/_9:0 float32 []\n2.0\n");
  cli_result_free(&r);
}

Test(run, switch_n_json_exact, .timeout = 30) {
  cli_result r = RUN("run", cli_conformance("switch_n.pbtxt"), "--fetch", "Case/merge/_9:0", "--format", "json");
  cr_assert_eq(r.status, 0, "stderr: %s", r.err);
  cr_assert_str_eq(r.out, "{\"outputs\": [{\"name\": \"Case/merge/_9:0\", \"dtype\": \"float32\", \"shape\": [], "
                          "\"values\": [2.0]}]}\n");
  cli_result_free(&r);
}

Test(run, control_flow_v1_true_branch, .timeout = 30) {
  cli_result r = RUN(cli_conformance("control_flow_v1.pbtxt"), "--feed", "Placeholder=[[1,2]]", "--feed",
                     "Placeholder_1=true", "--fetch", "cond/Merge", "--format", "json");
  js *doc = parse_ok(&r);
  const js *o = output_at(doc, 0);
  cr_assert_str_eq(js_get(o, "name")->str, "cond/Merge:0");
  cr_assert_str_eq(js_get(o, "dtype")->str, "float32");
  cr_assert_eq(js_get(o, "shape")->n, 2);
  cr_assert_eq(js_at(js_get(o, "shape"), 0)->num, 1);
  cr_assert_eq(js_at(js_get(o, "shape"), 1)->num, 2);
  cr_assert_float_eq(num_at(o, 0), 0.7, 1e-6);
  cr_assert_float_eq(num_at(o, 1), 1.0, 1e-6);
  js_free(doc);
  cli_result_free(&r);
}

Test(run, control_flow_v1_default_output_false_branch, .timeout = 30) {
  /* The default output is cond/Merge:0; Placeholder + Const broadcasts. */
  cli_result r = RUN(cli_conformance("control_flow_v1.pbtxt"), "--feed", "Placeholder=[[1,2]]", "--feed",
                     "Placeholder_1=false", "--format", "json");
  js *doc = parse_ok(&r);
  cr_assert_eq(js_get(doc, "outputs")->n, 1);
  const js *o = output_at(doc, 0);
  cr_assert_str_eq(js_get(o, "name")->str, "cond/Merge:0");
  cr_assert_float_eq(num_at(o, 0), 1.1, 1e-6);
  cr_assert_float_eq(num_at(o, 3), 2.4, 1e-6);
  js_free(doc);
  cli_result_free(&r);
}

/* Needs the Less kernel (being merged) and Exit fetches in the engine. */
Test(run, graph_while_loop_exit_is_10, .timeout = 30) {
  cli_result r = RUN(cli_conformance("graph-while-loop.pbtxt"), "--format", "json");
  js *doc = parse_ok(&r);
  const js *o = output_at(doc, 0);
  cr_assert_str_eq(js_get(o, "name")->str, "while/Exit:0");
  cr_assert_str_eq(js_get(o, "dtype")->str, "int32");
  cr_assert_eq(num_at(o, 0), 10);
  js_free(doc);
  cli_result_free(&r);
}

/* ---- a loop that runs with today's kernels ---- */

Test(run, shift_loop_default_outputs, .timeout = 30) {
  cli_result r = RUN(cli_data("shift_loop.pbtxt"));
  cr_assert_eq(r.status, 0, "stderr: %s", r.err);
  cr_assert_str_eq(r.out, "bits_final:0 bool [4]\n[False False False False]\nx_final:0 float32 []\n8.0\n");
  cli_result_free(&r);
}

/* An Exit's output lives in the loop's parent frame, so it can be fetched.
 * Fails until the engine's fetch check (core/sched_plan.c) places Exit
 * nodes in their parent frame; today it rejects them as inside the loop. */
Test(run, fetch_exit_of_loop, .timeout = 30) {
  cli_result r = RUN(cli_data("shift_loop.pbtxt"), "--fetch", "while/Exit_1", "--format", "json");
  js *doc = parse_ok(&r);
  cr_assert_eq(num_at(output_at(doc, 0), 0), 8.0);
  js_free(doc);
  cli_result_free(&r);
}

Test(run, timeout_and_max_iterations_allow_normal_runs, .timeout = 30) {
  cli_result r = RUN(cli_data("shift_loop.pbtxt"), "--timeout", "30", "--max-iterations", "10", "--fetch", "x_final");
  cr_assert_eq(r.status, 0, "stderr: %s", r.err);
  cr_assert_str_eq(r.out, "x_final:0 float32 []\n8.0\n");
  cli_result_free(&r);
}

Test(run, max_iterations_error_names_frame, .timeout = 30) {
  cli_result r = RUN(cli_data("shift_loop.pbtxt"), "--max-iterations", "2");
  cr_assert_eq(r.status, 1);
  cr_assert(strncmp(r.err, "dfexec: error: ", 15) == 0, "%s", r.err);
  cr_assert(strstr(r.err, "loop"), "frame not named: %s", r.err);
  cli_result_free(&r);
}

Test(run, trace_is_chrome_json_with_frames, .timeout = 30) {
  const char *path = cli_tmp("trace.json");
  cli_result r = RUN(cli_data("shift_loop.pbtxt"), "--trace", path, "--threads", "2");
  cr_assert_eq(r.status, 0, "stderr: %s", r.err);
  char *text = cli_read(path, NULL), err[256];
  cr_assert_not_null(text);
  js *doc = js_parse(text, err, sizeof err);
  cr_assert_not_null(doc, "trace is not JSON: %s", err);
  const js *ev = js_get(doc, "traceEvents");
  cr_assert(ev && ev->kind == JS_ARR && ev->n > 10);
  int complete = 0, max_iter = -1;
  bool saw_mul_in_loop = false;
  for (int i = 0; i < ev->n; i++) {
    const js *e = js_at(ev, i);
    if (strcmp(js_get(e, "ph")->str, "X") != 0) continue;
    complete++;
    cr_assert(js_get(e, "name")->kind == JS_STR && js_get(e, "cat")->kind == JS_STR);
    cr_assert(js_get(e, "ts")->kind == JS_NUM && js_get(e, "dur")->num >= 0);
    cr_assert_eq(js_get(e, "pid")->num, 1);
    cr_assert(js_get(e, "tid")->kind == JS_NUM);
    const js *args = js_get(e, "args");
    cr_assert_str_eq(js_get(args, "op")->str, js_get(e, "cat")->str);
    cr_assert(js_get(args, "frame")->kind == JS_STR);
    int iter = (int)js_get(args, "iter")->num;
    if (strcmp(js_get(args, "frame")->str, "loop") == 0 && iter > max_iter) max_iter = iter;
    if (strcmp(js_get(e, "name")->str, "while/double") == 0 && strcmp(js_get(args, "frame")->str, "loop") == 0)
      saw_mul_in_loop = true;
  }
  cr_assert_gt(complete, 30);
  cr_assert_eq(max_iter, 3, "iterations 0..3 expected, got max %d", max_iter);
  cr_assert(saw_mul_in_loop);
  js_free(doc);
  free(text);
  cli_result_free(&r);
}

Test(run, stats_and_repeat, .timeout = 30) {
  cli_result r = RUN(cli_data("shift_loop.pbtxt"), "--stats", "--repeat", "3");
  cr_assert_eq(r.status, 0, "stderr: %s", r.err);
  cr_assert(strstr(r.out, "time over 3 runs: min "), "%s", r.out);
  cr_assert(strstr(r.out, "median"));
  cr_assert(strstr(r.out, "per-op statistics (3 runs"), "%s", r.out);
  cr_assert(strstr(r.out, "  Mul "), "%s", r.out);
  cr_assert(strstr(r.out, "per-frame statistics"));
  cr_assert(strstr(r.out, "  loop "), "%s", r.out);
  cli_result_free(&r);
}

Test(run, json_keeps_stdout_clean_with_stats, .timeout = 30) {
  cli_result r = RUN(cli_data("shift_loop.pbtxt"), "--stats", "--repeat", "2", "--format", "json");
  js *doc = parse_ok(&r);
  cr_assert(strstr(r.err, "per-op statistics"));
  js_free(doc);
  cli_result_free(&r);
}

/* ---- feeds ---- */

Test(run, literal_feeds_convert_like_astype, .timeout = 30) {
  cli_result r = RUN(cli_data("feeds.pbtxt"), "--format", "json", "--feed", "i=-2.7", "--fetch", "i_out",
                     "--feed", "h=[0.1, 65519, 1e6]", "--fetch", "h_out", "--feed", "bf=[0.1, 3]", "--fetch",
                     "bf_out", "--feed", "b=2", "--fetch", "b_out", "--feed", "l=[9223372036854775807, -1, true]",
                     "--fetch", "l_out", "--feed", "x=[[1, 2]]", "--fetch", "x2", "--fetch", "d_out");
  js *doc = parse_ok(&r);
  cr_assert_eq(num_at(output_at(doc, 0), 0), -2); /* truncation toward zero */
  const js *h = output_at(doc, 1);
  cr_assert_str_eq(js_get(h, "dtype")->str, "float16");
  /* JSON floats are %.9g of the float32 value: they read back as that float. */
  cr_assert_eq((float)num_at(h, 0), dfx__f16_to_f32(dfx__f32_to_f16(0.1f)));
  cr_assert_eq(num_at(h, 1), 65504.0); /* rounds to nearest even, below the overflow point */
  cr_assert_str_eq(js_at(js_get(h, "values"), 2)->str, "inf");
  const js *bf = output_at(doc, 2);
  cr_assert_eq((float)num_at(bf, 0), dfx__bf16_to_f32(dfx__f32_to_bf16(0.1f)));
  cr_assert_eq(js_at(js_get(output_at(doc, 3), "values"), 0)->kind, JS_BOOL);
  cr_assert(js_at(js_get(output_at(doc, 3), "values"), 0)->b);
  /* int64 values print exactly (a double would round the first). */
  cr_assert(strstr(r.out, "[9223372036854775807, -1, 1]"), "%s", r.out);
  cr_assert_eq(num_at(output_at(doc, 5), 1), 4.0);
  cr_assert_eq(num_at(output_at(doc, 6), 0), 5.0); /* PlaceholderWithDefault needs no feed */
  js_free(doc);
  cli_result_free(&r);
}

Test(run, string_feed_json_escapes, .timeout = 30) {
  cli_result r = RUN(cli_data("feeds.pbtxt"), "--format", "json", "--feed", "s=[\"a\\\"b\\\\\", \"\xff\xc3\xa9\\n\"]",
                     "--fetch", "s_out");
  js *doc = parse_ok(&r);
  /* Text is escaped JSON; bytes that are not UTF-8 come as base64. */
  cr_assert(strstr(r.out, "[\"a\\\"b\\\\\", {\"base64\": \"/8OpCg==\"}]"), "%s", r.out);
  cr_assert_str_eq(js_get(output_at(doc, 0), "dtype")->str, "string");
  js_free(doc);
  cli_result_free(&r);
}

Test(run, nan_and_inf_are_strings, .timeout = 30) {
  cli_result r = RUN(cli_data("feeds.pbtxt"), "--format", "json", "--feed", "u=[nan, inf, -inf, 1e-3]", "--fetch",
                     "u_out");
  js_free(parse_ok(&r));
  cr_assert(strstr(r.out, "\"values\": [\"nan\", \"inf\", \"-inf\", 0.00100000005]"), "%s", r.out);
  cli_result_free(&r);
}

Test(run, npy_feeds_float64_bigendian_fortran, .timeout = 30) {
  double xd[] = {1.5, -2.0, 3.25, 4.0};
  int64_t dims[] = {2, 2};
  const char *xf = cli_tmp("x.npy"), *iff = cli_tmp("i.npy"), *ff = cli_tmp("xf.npy");
  cr_assert(npy_write(xf, "<f8", false, dims, 2, xd, sizeof xd));
  unsigned char be[4] = {0, 0, 1, 2}; /* 258 as a big-endian int32 scalar */
  cr_assert(npy_write(iff, ">i4", false, NULL, 0, be, 4));
  float fd[] = {1, 3, 2, 4}; /* column-major [[1,2],[3,4]] */
  cr_assert(npy_write(ff, "<f4", true, dims, 2, fd, sizeof fd));
  char fx[4200], fi[4200], fu[4200];
  snprintf(fx, sizeof fx, "x=@%s", xf);
  snprintf(fi, sizeof fi, "i=@%s", iff);
  snprintf(fu, sizeof fu, "u=@%s", ff);
  cli_result r = RUN(cli_data("feeds.pbtxt"), "--format", "json", "--feed", fx, "--fetch", "x2", "--feed", fi,
                     "--fetch", "i_out", "--feed", fu, "--fetch", "u_out");
  js *doc = parse_ok(&r);
  const js *x2 = output_at(doc, 0);
  cr_assert_str_eq(js_get(x2, "dtype")->str, "float32");
  cr_assert_eq(num_at(x2, 0), 3.0);
  cr_assert_eq(num_at(x2, 1), -4.0);
  cr_assert_eq(num_at(x2, 2), 6.5);
  cr_assert_eq(num_at(output_at(doc, 1), 0), 258);
  const js *u = output_at(doc, 2);
  for (int i = 0; i < 4; i++) cr_assert_eq(num_at(u, i), i + 1, "element %d", i);
  js_free(doc);
  cli_result_free(&r);
}

Test(run, output_dir_writes_strict_npy, .timeout = 30) {
  const char *dir = cli_tmp("out");
  cli_result r = RUN(cli_data("feeds.pbtxt"), "--output-dir", dir, "--feed", "x=[[1,2],[3,4]]", "--fetch", "x2",
                     "--feed", "h=[1,2,3]", "--fetch", "h_out", "--feed", "bf=[0.1,2]", "--fetch", "bf_out", "--feed",
                     "b=true", "--fetch", "b_out", "--feed", "s=[\"ab\",\"\xc3\xa9\"]", "--fetch", "s_out", "--feed",
                     "l=[1,2,3]", "--fetch", "l_out");
  cr_assert_eq(r.status, 0, "stderr: %s", r.err);
  static const struct { const char *file, *descr; int ndims; int64_t d0; } want[] = {
      {"x2_0.npy", "<f4", 2, 2}, {"h_out_0.npy", "<f2", 1, 3}, {"bf_out_0.npy", "<f4", 1, 2},
      {"b_out_0.npy", "|b1", 0, 0}, {"s_out_0.npy", "<U2", 1, 2}, {"l_out_0.npy", "<i8", 1, 3}};
  for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
    char path[4200], err[512];
    snprintf(path, sizeof path, "%s/%s", dir, want[k].file);
    npy n;
    cr_assert(npy_read_strict(path, &n, err, sizeof err), "%s: %s", want[k].file, err);
    cr_assert_str_eq(n.descr, want[k].descr, "%s", want[k].file);
    cr_assert_eq(n.ndims, want[k].ndims, "%s", want[k].file);
    if (n.ndims) cr_assert_eq(n.dims[0], want[k].d0);
    if (k == 0) {
      float v[4];
      memcpy(v, n.data, sizeof v);
      cr_assert(v[0] == 2 && v[1] == 4 && v[2] == 6 && v[3] == 8);
    }
    if (k == 2) { /* bfloat16 widened exactly to float32 */
      float v;
      memcpy(&v, n.data, 4);
      cr_assert_eq(v, dfx__bf16_to_f32(dfx__f32_to_bf16(0.1f)));
    }
    if (k == 4) {
      uint32_t cp[4];
      memcpy(cp, n.data, sizeof cp);
      cr_assert(cp[0] == 'a' && cp[1] == 'b' && cp[2] == 0xe9 && cp[3] == 0);
    }
    npy_free(&n);
  }
  cli_result_free(&r);
}

Test(run, output_dir_replaces_slashes, .timeout = 30) {
  const char *dir = cli_tmp("out2");
  cli_result r = RUN(cli_conformance("switch_n.pbtxt"), "--output-dir", dir);
  cr_assert_eq(r.status, 0, "stderr: %s", r.err);
  char path[4200], err[512];
  snprintf(path, sizeof path, "%s/Case__merge___9_0.npy", dir);
  npy n;
  cr_assert(npy_read_strict(path, &n, err, sizeof err), "%s", err);
  cr_assert_str_eq(n.descr, "<f4");
  cr_assert_eq(n.ndims, 0);
  npy_free(&n);
  cli_result_free(&r);
}

/* ---- errors ---- */

Test(run, missing_feeds_are_listed, .timeout = 30) {
  cli_result r = RUN(cli_conformance("control_flow_v1.pbtxt"));
  cr_assert_eq(r.status, 1);
  cr_assert(strstr(r.err, "dfexec: error: 2 placeholders need a value"), "%s", r.err);
  cr_assert(strstr(r.err, "Placeholder "), "%s", r.err);
  cr_assert(strstr(r.err, "float32"), "%s", r.err);
  cr_assert(strstr(r.err, "[?,2]"), "%s", r.err);
  cr_assert(strstr(r.err, "Placeholder_1"), "%s", r.err);
  cr_assert(strstr(r.err, "bool"), "%s", r.err);
  cr_assert(strstr(r.err, "--feed 'Placeholder=[[0.0,0.0]]'"), "%s", r.err);
  cr_assert_str_eq(r.out, "");
  cli_result_free(&r);
}

Test(run, only_needed_placeholders_are_required, .timeout = 30) {
  cli_result r = RUN(cli_data("feeds.pbtxt"), "--fetch", "x2");
  cr_assert_eq(r.status, 1);
  cr_assert(strstr(r.err, "1 placeholder needs a value"), "%s", r.err);
  cr_assert(!strstr(r.err, "i_out") && !strstr(r.err, "  h "), "%s", r.err);
  cli_result_free(&r);
}

Test(run, unknown_fetch_is_an_error, .timeout = 30) {
  cli_result r = RUN(cli_conformance("switch_n.pbtxt"), "--fetch", "no/such/node:0");
  cr_assert_eq(r.status, 1);
  cr_assert(strstr(r.err, "dfexec: error: --fetch: no node named 'no/such/node'"), "%s", r.err);
  cli_result_free(&r);
  r = RUN(cli_conformance("switch_n.pbtxt"), "--fetch", "Case/merge/_9:7");
  cr_assert_eq(r.status, 1);
  cr_assert(strstr(r.err, "has 2 outputs"), "%s", r.err);
  cli_result_free(&r);
}

Test(run, feed_shape_and_value_errors, .timeout = 30) {
  cli_result r = RUN(cli_data("feeds.pbtxt"), "--feed", "x=[1,2]", "--fetch", "x2");
  cr_assert_eq(r.status, 1);
  cr_assert(strstr(r.err, "shape [2] but placeholder 'x' has shape [?,2]"), "%s", r.err);
  cli_result_free(&r);
  r = RUN(cli_data("feeds.pbtxt"), "--feed", "i=1e12", "--fetch", "i_out");
  cr_assert_eq(r.status, 1);
  cr_assert(strstr(r.err, "does not fit in int32"), "%s", r.err);
  cli_result_free(&r);
  r = RUN(cli_data("feeds.pbtxt"), "--feed", "i=\"text\"", "--fetch", "i_out");
  cr_assert_eq(r.status, 1);
  cli_result_free(&r);
  r = RUN(cli_data("feeds.pbtxt"), "--feed", "nope=1", "--fetch", "i_out");
  cr_assert_eq(r.status, 1);
  cr_assert(strstr(r.err, "no node named 'nope'"), "%s", r.err);
  cli_result_free(&r);
  r = RUN(cli_data("feeds.pbtxt"), "--feed", "x=@/nonexistent.npy", "--fetch", "x2");
  cr_assert_eq(r.status, 1);
  cli_result_free(&r);
}

Test(run, target_runs_without_fetches, .timeout = 30) {
  cli_result r = RUN(cli_data("feeds.pbtxt"), "--target", "init");
  cr_assert_eq(r.status, 0, "stderr: %s", r.err);
  cr_assert_str_eq(r.out, "(no outputs)\n");
  cli_result_free(&r);
  r = RUN(cli_data("feeds.pbtxt"), "--target", "nothere");
  cr_assert_eq(r.status, 1);
  cli_result_free(&r);
}

/* Unknown names suggest the closest node, for --fetch, --target and --feed. */
Test(run, unknown_names_suggest_the_closest_node, .timeout = 30) {
  const char *g = cli_data("shift_loop.pbtxt");
  cli_result r = RUN(g, "--fetch", "while/LopCond");
  cr_assert_eq(r.status, 1);
  cr_assert(strstr(r.err, "no node named 'while/LopCond' in the graph (did you mean 'while/LoopCond'?)"), "%s", r.err);
  cli_result_free(&r);
  r = RUN(g, "--target", "while/Idenity");
  cr_assert_eq(r.status, 1);
  cr_assert(strstr(r.err, "--target: no node named 'while/Idenity'") && strstr(r.err, "did you mean 'while/Identity"),
            "%s", r.err);
  cli_result_free(&r);
  r = RUN(g, "--feed", "bitz=1");
  cr_assert_eq(r.status, 1);
  cr_assert(strstr(r.err, "--feed: no node named 'bitz' in the graph (did you mean 'bits'?)"), "%s", r.err);
  cli_result_free(&r);
}

/* --output-dir is made (mkdir -p) and checked before the graph is read, so a
 * bad directory fails at once and a good one exists even if the run fails. */
Test(run, output_dir_is_prepared_before_the_run, .timeout = 30) {
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/a/b/c", cli_tmp("outdir_nested"));
  cli_result r = RUN("no-such-graph.pb", "--output-dir", dir);
  cr_assert_eq(r.status, 1);
  struct stat sb;
  cr_assert(stat(dir, &sb) == 0 && S_ISDIR(sb.st_mode), "%s was not created", dir);
  cli_result_free(&r);
  const char *file = cli_tmp("outdir_is_a_file");
  cr_assert(cli_write(file, "x", 1));
  r = RUN(cli_data("shift_loop.pbtxt"), "--output-dir", file);
  cr_assert_eq(r.status, 1);
  cr_assert(strstr(r.err, "is not a directory"), "%s", r.err);
  cr_assert(!strstr(r.out, "while/Exit"), "the run went ahead: %s", r.out);
  cli_result_free(&r);
}

Test(run, version_names_the_library, .timeout = 30) {
  cli_result r = RUN("--version");
  cr_assert_eq(r.status, 0);
  cr_assert(strncmp(r.out, "dfexec ", 7) == 0 && strchr(r.out + 7, '.'), "%s", r.out);
  cli_result_free(&r);
}

/* Exit codes: a malformed option or a literal that does not parse is a
 * usage error (2); a value of the wrong shape, ragged or rectangular, or an
 * unreadable file is an input error (1). */
Test(run, bad_feed_values_all_exit_1, .timeout = 30) {
  const char *g = cli_data("feeds.pbtxt");
  const char *bad[] = {"x=[[1,2],[3]]", "x=[[1,2],[[3,4]]]", "x=[1,2,3]", "x=[[1,2,3]]", "x=@/no/such/file.npy"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    cli_result r = RUN(g, "--feed", bad[i], "--feed", "u=1");
    cr_expect_eq(r.status, 1, "--feed %s: exit %d, stderr %s", bad[i], r.status, r.err);
    cr_expect(strstr(r.err, "--feed x"), "%s", r.err);
    cli_result_free(&r);
  }
  cli_result r = RUN(g, "--feed", "x");
  cr_expect_eq(r.status, 2, "%s", r.err);
  cli_result_free(&r);
  r = RUN(g, "--feed", "x=[[1,2],", "--feed", "u=1");
  cr_expect_eq(r.status, 2, "%s", r.err);
  cli_result_free(&r);
}

/* JSON is lossless: int64 beyond 2^53 printed exactly, and a string element
 * that is not UTF-8 as base64 (a stray byte 0xE9 must not read as 'é'). */
Test(run, json_is_lossless_for_big_ints_and_bytes, .timeout = 30) {
  const char *g = cli_tmp("lossless.pbtxt");
  const char *text =
      "node { name: \"a\" op: \"Const\" attr { key: \"dtype\" value { type: DT_INT64 } } attr { key: \"value\" value {"
      " tensor { dtype: DT_INT64 tensor_shape { dim { size: 2 } } int64_val: 1152921504606846977"
      " int64_val: -9223372036854775807 } } } }\n"
      "node { name: \"u\" op: \"Const\" attr { key: \"dtype\" value { type: DT_UINT64 } } attr { key: \"value\" value {"
      " tensor { dtype: DT_UINT64 tensor_shape { } uint64_val: 18446744073709551615 } } } }\n"
      "node { name: \"s\" op: \"Const\" attr { key: \"dtype\" value { type: DT_STRING } } attr { key: \"value\" value {"
      " tensor { dtype: DT_STRING tensor_shape { dim { size: 3 } } string_val: \"\\351t\\303\\251\" string_val: \"ok\""
      " string_val: \"\\303\\251\" } } } }\n";
  cr_assert(cli_write(g, text, strlen(text)));
  cli_result r = RUN(g, "--format", "json");
  cr_assert_eq(r.status, 0, "%s", r.err);
  cr_assert(strstr(r.out, "[1152921504606846977, -9223372036854775807]"), "%s", r.out);
  cr_assert(strstr(r.out, "[18446744073709551615]"), "%s", r.out);
  cr_assert(strstr(r.out, "[{\"base64\": \"6XTDqQ==\"}, \"ok\", \"\xc3\xa9\"]"), "%s", r.out);
  cli_result_free(&r);
}

/* --seed N: unseeded random ops repeat exactly and change with N; an op with
 * its own seeds keeps them (TF's graph-level seed rule). */
Test(run, seed_makes_unseeded_random_ops_repeat, .timeout = 30) {
  const char *g = cli_tmp("random.pbtxt");
  const char *text =
      "node { name: \"shape\" op: \"Const\" attr { key: \"dtype\" value { type: DT_INT32 } } attr { key: \"value\""
      " value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 1 } } int_val: 4 } } } }\n"
      "node { name: \"free\" op: \"RandomUniform\" input: \"shape\" attr { key: \"T\" value { type: DT_INT32 } }"
      " attr { key: \"dtype\" value { type: DT_FLOAT } } }\n"
      "node { name: \"fixed\" op: \"RandomUniform\" input: \"shape\" attr { key: \"T\" value { type: DT_INT32 } }"
      " attr { key: \"dtype\" value { type: DT_FLOAT } } attr { key: \"seed\" value { i: 5 } }"
      " attr { key: \"seed2\" value { i: 7 } } }\n";
  cr_assert(cli_write(g, text, strlen(text)));
  cli_result a = RUN(g, "--seed", "42", "--fetch", "free", "--fetch", "fixed");
  cli_result b = RUN(g, "--seed", "42", "--fetch", "free", "--fetch", "fixed");
  cli_result c = RUN(g, "--seed", "43", "--fetch", "free", "--fetch", "fixed");
  cli_result d = RUN(g, "--fetch", "free", "--fetch", "fixed");
  cr_assert(a.status == 0 && b.status == 0 && c.status == 0 && d.status == 0, "%s%s%s%s", a.err, b.err, c.err, d.err);
  cr_assert_str_eq(a.out, b.out);
  char *fa = strstr(a.out, "fixed:0"), *fc = strstr(c.out, "fixed:0"), *fd = strstr(d.out, "fixed:0");
  cr_assert(fa && fc && fd);
  cr_expect_str_eq(fa, fc, "an explicitly seeded op must keep its seeds");
  cr_expect_str_eq(fa, fd);
  *fa = *fc = 0;
  cr_expect_str_neq(a.out, c.out, "another graph seed must give other numbers");
  cli_result_free(&a);
  cli_result_free(&b);
  cli_result_free(&c);
  cli_result_free(&d);
  cli_result r = RUN(g, "--seed", "x");
  cr_assert_eq(r.status, 2);
  cli_result_free(&r);
}

/* A loop that never ends: x counts up while the constant predicate holds. */
static const char *endless_loop =
    "node { name: \"x0\" op: \"Const\" attr { key: \"dtype\" value { type: DT_INT32 } } attr { key: \"value\" value {"
    " tensor { dtype: DT_INT32 tensor_shape { } int_val: 0 } } } }\n"
    "node { name: \"t\" op: \"Const\" attr { key: \"dtype\" value { type: DT_BOOL } } attr { key: \"value\" value {"
    " tensor { dtype: DT_BOOL tensor_shape { } bool_val: true } } } }\n"
    "node { name: \"one\" op: \"Const\" attr { key: \"dtype\" value { type: DT_INT32 } } attr { key: \"value\" value {"
    " tensor { dtype: DT_INT32 tensor_shape { } int_val: 1 } } } }\n"
    "node { name: \"w/Enter\" op: \"Enter\" input: \"x0\" attr { key: \"T\" value { type: DT_INT32 } }"
    " attr { key: \"frame_name\" value { s: \"w\" } } }\n"
    "node { name: \"w/t\" op: \"Enter\" input: \"t\" attr { key: \"T\" value { type: DT_BOOL } }"
    " attr { key: \"frame_name\" value { s: \"w\" } } attr { key: \"is_constant\" value { b: true } } }\n"
    "node { name: \"w/one\" op: \"Enter\" input: \"one\" attr { key: \"T\" value { type: DT_INT32 } }"
    " attr { key: \"frame_name\" value { s: \"w\" } } attr { key: \"is_constant\" value { b: true } } }\n"
    "node { name: \"w/Merge\" op: \"Merge\" input: \"w/Enter\" input: \"w/Next\" attr { key: \"T\" value { type: DT_INT32 } }"
    " attr { key: \"N\" value { i: 2 } } }\n"
    "node { name: \"w/Cond\" op: \"LoopCond\" input: \"w/t\" }\n"
    "node { name: \"w/Switch\" op: \"Switch\" input: \"w/Merge\" input: \"w/Cond\" attr { key: \"T\" value { type: DT_INT32 } } }\n"
    "node { name: \"w/Add\" op: \"Add\" input: \"w/Switch:1\" input: \"w/one\" attr { key: \"T\" value { type: DT_INT32 } } }\n"
    "node { name: \"w/Next\" op: \"NextIteration\" input: \"w/Add\" attr { key: \"T\" value { type: DT_INT32 } } }\n"
    "node { name: \"w/Exit\" op: \"Exit\" input: \"w/Switch\" attr { key: \"T\" value { type: DT_INT32 } } }\n";

/* --timeout says where the run was: node, frame and iteration. */
Test(run, timeout_names_frame_and_iteration, .timeout = 30) {
  const char *g = cli_tmp("endless.pbtxt");
  cr_assert(cli_write(g, endless_loop, strlen(endless_loop)));
  cli_result r = RUN(g, "--timeout", "0.2");
  cr_assert_eq(r.status, 1);
  cr_assert(strstr(r.err, "run timed out after ") && strstr(r.err, "in frame 'w', iteration "), "%s", r.err);
  cli_result_free(&r);
}

/* Ctrl-C cancels the run: a message and exit status 130, not a dead process. */
Test(run, ctrl_c_cancels_the_run, .timeout = 30) {
  const char *g = cli_tmp("endless_int.pbtxt");
  cr_assert(cli_write(g, endless_loop, strlen(endless_loop)));
  int errp[2];
  cr_assert(pipe(errp) == 0);
  pid_t pid = fork();
  cr_assert(pid >= 0);
  if (pid == 0) {
    signal(SIGINT, SIG_DFL); /* as an interactive shell starts a command */
    dup2(errp[1], 2);
    close(errp[0]);
    execl(getenv("DFEXEC"), "dfexec", "run", g, (char *)NULL);
    _exit(127);
  }
  close(errp[1]);
  usleep(500 * 1000);
  kill(pid, SIGINT);
  char buf[4096];
  size_t len = 0;
  ssize_t n;
  while (len + 1 < sizeof buf && (n = read(errp[0], buf + len, sizeof buf - 1 - len)) > 0) len += (size_t)n;
  buf[len] = 0;
  close(errp[0]);
  int status;
  cr_assert_eq(waitpid(pid, &status, 0), pid);
  cr_assert(WIFEXITED(status), "killed by signal %d, not cancelled", WTERMSIG(status));
  cr_assert_eq(WEXITSTATUS(status), 130, "%s", buf);
  cr_assert(strstr(buf, "interrupted (Ctrl-C)"), "%s", buf);
}
