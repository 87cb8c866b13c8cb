/* test_kernel_registry.c - TF's rows parsed on first lookup: once, safely
 * from many threads, and with out-of-memory reported as such (not as an
 * unknown op). These tests skip eu_setup's dfx__registry_parse_all, so each
 * starts (Criterion forks per test) with no TF row parsed. */
#include <criterion/criterion.h>
#include <string.h>
#include <uv.h>

#include "../eutil.h"
#include "../gtext.h"
#include "kernel.h"
#include "status.h"

static const dfx_registry *reg(void) {
  dfx_status st;
  const dfx_registry *r = dfx__registry_get(&st);
  cr_assert(r, "%s", st.msg);
  return r;
}

Test(kernel_registry, kernel_file_signature_first_then_tf) {
  const dfx_registry *r = reg();
  /* Pack has both: import uses the kernel file's, TF's stays reachable. */
  const dfx_op_def *own = dfx__registry_op_kernel_file(r, "Pack"), *tf = dfx__registry_op_tf(r, "Pack");
  cr_assert(own && tf && own != tf);
#if DFX_TF_OPDEFS_FIRST
  cr_assert_eq(dfx__registry_op(r, "Pack"), tf);
#else
  cr_assert_eq(dfx__registry_op(r, "Pack"), own);
#endif
  /* ApproximateEqual is TF's alone; _Retval is the kernel files' alone. */
  cr_assert_null(dfx__registry_op_kernel_file(r, "ApproximateEqual"));
  cr_assert_eq(dfx__registry_op(r, "ApproximateEqual"), dfx__registry_op_tf(r, "ApproximateEqual"));
  cr_assert_not_null(dfx__registry_op(r, "_Retval"));
  cr_assert_null(dfx__registry_op_tf(r, "_Retval"));
  const dfx_op_def *d = (const dfx_op_def *)1;
  cr_assert_eq(dfx__registry_find_op(r, "NoSuchOp", &d, NULL), DFX_OK);
  cr_assert_null(d);
}

#define N_THREADS 8

typedef struct {
  const dfx_registry *r;
  const dfx_op_def *got;
} racer;

static void race(void *arg) {
  racer *x = arg;
  x->got = dfx__registry_op(x->r, "ApproximateEqual");
}

Test(kernel_registry, first_lookups_from_many_threads_agree) {
  racer x[N_THREADS];
  uv_thread_t t[N_THREADS];
  for (int i = 0; i < N_THREADS; i++) {
    x[i] = (racer){reg(), NULL};
    cr_assert_eq(uv_thread_create(&t[i], race, &x[i]), 0);
  }
  for (int i = 0; i < N_THREADS; i++) uv_thread_join(&t[i]);
  for (int i = 0; i < N_THREADS; i++) cr_assert(x[i].got && x[i].got == x[0].got, "thread %d", i);
  cr_assert_str_eq(x[0].got->name, "ApproximateEqual");
  cr_assert_null(dfx__registry_op_kernel_file(x[0].r, "ApproximateEqual")); /* so the threads parsed TF's row */
}

/* Every allocation of an import that parses a TF row on the way may fail:
 * each failure is DFX_ENOMEM, and some fall inside that parse. Once an
 * import succeeds the row stays parsed, so the loop ends there (and the
 * test does not check for leaks: the parsed row is the registry's). */
Test(kernel_registry, out_of_memory_in_a_first_lookup_is_reported) {
  reg();
  static dfx_testalloc ta;
  dfx__testalloc_install(&ta);
  const char *text =
      GT_CONST_F32("a", 1, "") GT_CONST_F32("b", 2, "") GT_OP2("ae", "ApproximateEqual", "a", "b", "DT_FLOAT", "");
  int in_parse = 0;
  for (long long k = 1;; k++) {
    ta.fail_at = ta.n_allocs + k;
    dfx_status st; /* on the stack: a status allocation must not take the failure */
    dfx_graph *g = NULL;
    dfx_code c = dfx_graph_import(text, strlen(text), &g, &st);
    ta.fail_at = 0;
    dfx_graph_free(g);
    if (c == DFX_OK) break;
    cr_assert_eq(c, DFX_ENOMEM, "allocation %lld: %s", k, st.msg);
    in_parse += strstr(st.msg, "signature of ApproximateEqual") != NULL;
  }
  dfx__testalloc_install(NULL);
  cr_assert_gt(in_parse, 0, "no failure fell inside the lazy parse");
}
