/* test_op_coverage.c - every op the TF1 corpus uses (conformance/ops.txt)
 * has both a signature and a kernel, or is a control-flow op handled by the
 * engine itself. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel.h"
#include "lib.h"
#include "op_registry.h"

Test(op_coverage, every_corpus_op_has_a_kernel) {
  const char *corpus = getenv("DFX_CONFORMANCE_DIR");
  if (!corpus || !*corpus) cr_skip_test("no conformance corpus (configure with -Dconformance_dir=DIR)");
  char path[1024];
  snprintf(path, sizeof path, "%s/ops.txt", corpus);
  FILE *f = fopen(path, "r");
  cr_assert(f, "cannot open %s", path);
  dfx_status st;
  const dfx_registry *r = dfx__lib_registry(&st);
  cr_assert(r, "%s", st.msg);
  static const char *engine_ops[] = {"Switch", "Merge", "Enter", "Exit", "NextIteration", "LoopCond", NULL};
  char line[256], missing[4096] = "";
  int n_ops = 0, n_missing = 0;
  while (fgets(line, sizeof line, f)) {
    if (line[0] == '#') continue;
    char op[128];
    if (sscanf(line, "%*d %127s", op) != 1) continue;
    n_ops++;
    int engine = 0;
    for (int i = 0; engine_ops[i]; i++) engine |= strcmp(engine_ops[i], op) == 0;
    if (!dfx__op_get(op) || (!engine && !dfx__registry_has_kernel(r, op))) {
      size_t o = strlen(missing);
      snprintf(missing + o, sizeof missing - o, " %s", op);
      n_missing++;
    }
  }
  fclose(f);
  cr_assert_gt(n_ops, 200, "ops.txt looks truncated (%d ops)", n_ops);
  cr_assert_eq(n_missing, 0, "%d of %d corpus ops lack a kernel:%s", n_missing, n_ops, missing);
}
