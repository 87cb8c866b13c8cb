/* test_ckpt.c - `dfexec ckpt`: lists a TF-written checkpoint's tensors as
 * "name dtype shape", accepts the .index file's name, --verify reads every
 * tensor (a corrupt shard fails naming it), and usage errors. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_harness.h"

#define RUN(...) cli_run((const char *const[]){__VA_ARGS__, NULL})

static const char *shared_ckpt(const char *rel) {
  static char buf[1024];
  snprintf(buf, sizeof buf, "%s/../shared/checkpoints/%s", getenv("DFX_SOURCE_ROOT"), rel);
  return buf;
}

Test(ckpt_cmd, lists_tensors, .timeout = 30) {
  const char *prefix = shared_ckpt("simple_graph/data-all-1000");
  char idx[1100];
  snprintf(idx, sizeof idx, "%s.index", prefix);
  if (access(idx, R_OK) != 0) cr_skip_test("TF-written fixture %s is absent", idx);
  cli_result r = RUN("ckpt", prefix, "--verify");
  cr_assert_eq(r.status, 0, "stderr: %s", r.err);
  cr_assert_str_eq(r.out, "Variable float32 [4]\n");
  cli_result_free(&r);
  r = RUN("ckpt", idx);
  cr_assert_eq(r.status, 0, "stderr: %s", r.err);
  cr_assert_str_eq(r.out, "Variable float32 [4]\n");
  cli_result_free(&r);
}

Test(ckpt_cmd, verify_names_a_corrupt_shard, .timeout = 30) {
  const char *src = shared_ckpt("simple_graph/data-all-1000");
  char in[1100], out_prefix[1100], path[1200];
  snprintf(in, sizeof in, "%s.index", src);
  if (access(in, R_OK) != 0) cr_skip_test("TF-written fixture %s is absent", in);
  snprintf(out_prefix, sizeof out_prefix, "%s", cli_tmp("copy"));
  size_t n;
  char *b = cli_read(in, &n);
  snprintf(path, sizeof path, "%s.index", out_prefix);
  cr_assert(cli_write(path, b, n));
  free(b);
  snprintf(in, sizeof in, "%s.data-00000-of-00001", src);
  b = cli_read(in, &n);
  b[5] ^= 1;
  snprintf(path, sizeof path, "%s.data-00000-of-00001", out_prefix);
  cr_assert(cli_write(path, b, n));
  free(b);
  cli_result r = RUN("ckpt", out_prefix);
  cr_assert_eq(r.status, 0, "listing does not read data: %s", r.err);
  cli_result_free(&r);
  r = RUN("ckpt", out_prefix, "--verify");
  cr_assert_eq(r.status, 1);
  cr_assert(strstr(r.err, "checksum mismatch for tensor 'Variable'") && strstr(r.err, "copy.data-00000-of-00001"),
            "%s", r.err);
  cli_result_free(&r);
}

Test(ckpt_cmd, usage_errors, .timeout = 30) {
  cli_result r = RUN("ckpt");
  cr_assert_eq(r.status, 2);
  cli_result_free(&r);
  r = RUN("ckpt", "/nonexistent/model");
  cr_assert_eq(r.status, 1);
  cr_assert(strstr(r.err, "/nonexistent/model.index"), "%s", r.err);
  cli_result_free(&r);
  r = RUN("ckpt", "--help");
  cr_assert_eq(r.status, 0);
  cr_assert(strstr(r.out, "usage: dfexec ckpt PREFIX"));
  cli_result_free(&r);
}
