/* test_bench.c - `dfexec bench`: counts, JSON shape, ordered percentiles,
 * random feeds for unfed placeholders, concurrency and duration modes, and
 * its errors (usage 2, graph/run 1). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_harness.h"

#define RUN(...) cli_run((const char *const[]){__VA_ARGS__, NULL})

static double field(const char *json, const char *key) {
  char pat[64];
  snprintf(pat, sizeof pat, "\"%s\": ", key);
  const char *p = strstr(json, pat);
  cr_assert(p, "no %s in %s", key, json);
  return strtod(p + strlen(pat), NULL);
}

Test(bench, json_counts_runs_and_orders_percentiles, .timeout = 60) {
  /* feeds.pbtxt's placeholders are not fed: bench makes random values. */
  cli_result r = RUN("bench", cli_data("feeds.pbtxt"), "--runs", "37", "--warmup", "2", "--format", "json",
                     "--seed", "1");
  cr_assert_eq(r.status, 0, "%s", r.err);
  cr_assert_eq(field(r.out, "runs"), 37);
  cr_assert_eq(field(r.out, "concurrency"), 1);
  double mn = field(r.out, "min"), p50 = field(r.out, "p50"), p90 = field(r.out, "p90"), p99 = field(r.out, "p99"),
         mx = field(r.out, "max");
  cr_assert(mn > 0 && mn <= p50 && p50 <= p90 && p90 <= p99 && p99 <= mx, "%s", r.out);
  cr_assert_gt(field(r.out, "runs_per_second"), 0);
  cli_result_free(&r);
}

Test(bench, concurrency_and_duration, .timeout = 60) {
  cli_result r = RUN("bench", cli_data("shift_loop.pbtxt"), "--duration", "0.3", "--concurrency", "3", "--threads",
                     "2", "--format", "json");
  cr_assert_eq(r.status, 0, "%s", r.err);
  cr_assert_eq(field(r.out, "concurrency"), 3);
  cr_assert_eq(field(r.out, "threads"), 2);
  cr_assert_geq(field(r.out, "runs"), 3, "%s", r.out);
  cr_assert_geq(field(r.out, "seconds"), 0.3);
  cli_result_free(&r);
  r = RUN("bench", cli_data("shift_loop.pbtxt"), "--runs", "20", "--concurrency", "4");
  cr_assert_eq(r.status, 0, "%s", r.err);
  cr_assert(strstr(r.out, ": 20 runs in ") && strstr(r.out, "latency ms: min ") && strstr(r.out, "throughput: "),
            "%s", r.out);
  cli_result_free(&r);
}

Test(bench, errors, .timeout = 60) {
  const char *g = cli_data("feeds.pbtxt");
  const char *const usage[][6] = {
      {"bench", NULL},
      {"bench", g, "--runs", "0", NULL},
      {"bench", g, "--duration", "-1", NULL},
      {"bench", g, "--concurrency", "0", NULL},
      {"bench", g, "--format", "xml", NULL},
      {"bench", g, "--bogus", NULL},
  };
  for (size_t i = 0; i < sizeof usage / sizeof usage[0]; i++) {
    cli_result r = cli_run(usage[i]);
    cr_expect_eq(r.status, 2, "case %zu: %s", i, r.err);
    cli_result_free(&r);
  }
  cli_result r = RUN("bench", g, "--fetch", "nope");
  cr_expect_eq(r.status, 1);
  cr_expect(strstr(r.err, "no node named 'nope'"), "%s", r.err);
  cli_result_free(&r);
  r = RUN("bench", "/no/such/graph.pb");
  cr_expect_eq(r.status, 1);
  cli_result_free(&r);
  /* A run error stops the benchmark with the kernel's message: a Reshape of
   * the random scalar feed to three elements fails on every run. */
  const char *bad = cli_tmp("bench_fails.pbtxt");
  const char *text =
      "node { name: \"x\" op: \"Placeholder\" attr { key: \"dtype\" value { type: DT_FLOAT } }"
      " attr { key: \"shape\" value { shape { } } } }\n"
      "node { name: \"s\" op: \"Const\" attr { key: \"dtype\" value { type: DT_INT32 } } attr { key: \"value\""
      " value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 1 } } int_val: 3 } } } }\n"
      "node { name: \"y\" op: \"Reshape\" input: \"x\" input: \"s\" attr { key: \"T\" value { type: DT_FLOAT } }"
      " attr { key: \"Tshape\" value { type: DT_INT32 } } }\n";
  cr_assert(cli_write(bad, text, strlen(text)));
  r = RUN("bench", bad, "--runs", "3");
  cr_expect_eq(r.status, 1, "%s", r.err);
  cr_expect(strstr(r.err, "warm-up run 1") && strstr(r.err, "'y'"), "%s", r.err);
  cli_result_free(&r);
}
