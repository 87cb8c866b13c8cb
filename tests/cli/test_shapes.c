/* test_shapes.c - end-to-end tests of `dfexec info --shapes`: every node's
 * outputs with dtype, inferred shape and known values, --feed-shape
 * seeding placeholders, --no-hints, loops, and the usage errors. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "cli_harness.h"

#define RUN(...) cli_run((const char *const[]){__VA_ARGS__, NULL})

/* x [?,2] -> Neg -> y; its Shape s and s[1]; a hinted node h. */
static const char graph[] =
    "node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } }"
    " attr { key: 'shape' value { shape { dim { size: -1 } dim { size: 2 } } } } }\n"
    "node { name: 'y' op: 'Neg' input: 'x' attr { key: 'T' value { type: DT_FLOAT } } }\n"
    "node { name: 's' op: 'Shape' input: 'y' attr { key: 'T' value { type: DT_FLOAT } }"
    " attr { key: 'out_type' value { type: DT_INT32 } } }\n"
    "node { name: 'h' op: 'Neg' input: 'x' attr { key: 'T' value { type: DT_FLOAT } }"
    " attr { key: '_output_shapes' value { list { shape { dim { size: 8 } dim { size: 2 } } } } } }\n"
    "node { name: 'u' op: 'NoSuchOp' input: 'x' }\n";

static const char *write_graph(void) {
  const char *g = cli_tmp("shapes.pbtxt");
  cr_assert(cli_write(g, graph, strlen(graph)));
  return g;
}

Test(cli_shapes, info_shapes_prints_every_output, .timeout = 30) {
  cli_result r = RUN("info", "--shapes", write_graph());
  cr_assert_eq(r.status, 0, "stderr: %s", r.err);
  cr_assert(strstr(r.out, "\nshapes: 2 of 4 outputs fully known (50.0%), 3 of 5 nodes;"), "%s", r.out);
  cr_assert(strstr(r.out, "\n  x                                Placeholder          float32[?,2]\n"), "%s", r.out);
  cr_assert(strstr(r.out, "\n  y                                Neg                  float32[?,2]\n"), "%s", r.out);
  cr_assert(strstr(r.out, "\n  s                                Shape                int32[2]{?,2}\n"), "%s", r.out);
  cr_assert(strstr(r.out, "\n  h                                Neg                  float32[8,2]\n"), "%s", r.out);
  cr_assert(strstr(r.out, "\n  u                                NoSuchOp            \n"), "%s", r.out);
  cli_result_free(&r);
}

Test(cli_shapes, feed_shape_seeds_a_placeholder_and_implies_shapes, .timeout = 30) {
  cli_result r = RUN("info", write_graph(), "--feed-shape", "x=[3,2]");
  cr_assert_eq(r.status, 0, "stderr: %s", r.err);
  cr_assert(strstr(r.out, "  y                                Neg                  float32[3,2]\n"), "%s", r.out);
  cr_assert(strstr(r.out, "  s                                Shape                int32[2]{3,2}\n"), "%s", r.out);
  cli_result_free(&r);
  r = RUN("info", write_graph(), "--feed-shape", "x:0=[?, 2]", "--no-hints");
  cr_assert_eq(r.status, 0, "stderr: %s", r.err);
  cr_assert(strstr(r.out, "  h                                Neg                  float32[?,2]\n"), "%s", r.out);
  cli_result_free(&r);
}

Test(cli_shapes, without_shapes_nothing_is_inferred, .timeout = 30) {
  cli_result r = RUN("info", write_graph());
  cr_assert_eq(r.status, 0, "stderr: %s", r.err);
  cr_assert(!strstr(r.out, "shapes:"), "%s", r.out);
  cli_result_free(&r);
}

Test(cli_shapes, loops_settle, .timeout = 30) {
  cli_result r = RUN("info", "--shapes", cli_conformance("while_loop.pbtxt"));
  cr_assert_eq(r.status, 0, "stderr: %s", r.err);
  cr_assert(strstr(r.out, "  while/Exit_1                     Exit                 float32[?,2]\n"), "%s", r.out);
  cr_assert(strstr(r.out, "  while/Merge                      Merge                int32[]{?} int32[]\n"), "%s", r.out);
  cli_result_free(&r);
  r = RUN("info", "--shapes", cli_conformance("nested_loop.pbtxt"));
  cr_assert_eq(r.status, 0, "stderr: %s", r.err);
  cr_assert(strstr(r.out, "\nshapes: "), "%s", r.out);
  cr_assert(!strstr(r.out, "loops widened"), "%s", r.out);
  cli_result_free(&r);
}

Test(cli_shapes, usage_and_graph_errors, .timeout = 30) {
  const char *g = write_graph();
  const char *const usage[][5] = {
      {"info", "--shapes", NULL},
      {"info", g, "--feed-shape", "x", NULL},
      {"info", g, "--feed-shape", "x=[2,", NULL},
      {"info", g, "--feed-shape", "x=[a]", NULL},
      {"info", g, "--feed-shape", "=[2]", NULL},
      {"info", g, "--feed-shape", NULL},
      {"info", g, "--bogus", NULL},
      {"info", g, g, NULL},
  };
  for (size_t i = 0; i < sizeof usage / sizeof usage[0]; i++) {
    cli_result r = cli_run(usage[i]);
    cr_assert_eq(r.status, 2, "case %zu: exit %d, stderr %s", i, r.status, r.err);
    cr_assert(strstr(r.err, "dfexec: error: "), "case %zu: %s", i, r.err);
    cli_result_free(&r);
  }
  cli_result r = RUN("info", g, "--feed-shape", "xx=[2,2]");
  cr_assert_eq(r.status, 1);
  cr_assert(strstr(r.err, "no tensor 'xx:0'") && strstr(r.err, "did you mean 'x'"), "%s", r.err);
  cli_result_free(&r);
  r = RUN("info", g, "--feed-shape", "x:3=[2,2]");
  cr_assert_eq(r.status, 1, "%s", r.err);
  cli_result_free(&r);
  r = RUN("info", "--help");
  cr_assert_eq(r.status, 0);
  cr_assert(strstr(r.out, "--feed-shape NAME[:K]=[d0,d1]"), "%s", r.out);
  cli_result_free(&r);
}
