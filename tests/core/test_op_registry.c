/* test_op_registry.c - the op registry (core/op_registry.c): TF's rows and
 * the internal ones, parsed on first lookup: once, safely from many
 * threads, and with out-of-memory reported as such (not as an unknown op).
 * These tests skip eu_setup's dfx__op_parse_all, so each starts (Criterion
 * forks per test) with no row parsed. */
#include <criterion/criterion.h>
#include <string.h>
#include <uv.h>

#include "../eutil.h"
#include "../gtext.h"
#include "op_registry.h"
#include "status.h"

Test(op_registry, tf_rows_internal_rows_and_unknown_ops) {
  /* Pack is TensorFlow's; _Retval and _SwitchN are internal; both parse. */
  const dfx_op_def *pack = dfx__op_get("Pack");
  cr_assert(pack);
  cr_assert_str_eq(pack->name, "Pack");
  cr_assert_eq(pack->n_in, 1);
  cr_assert_str_eq(pack->in[0].number_attr, "N");
  const dfx_op_attr *n = dfx__op_def_attr(pack, "N");
  cr_assert(n && n->has_min && n->min == 1, "Pack's N >= 1 (TF's has_minimum)");
  const dfx_op_def *ret = dfx__op_get("_Retval");
  cr_assert(ret && ret->n_in == 1 && ret->n_out == 0);
  const dfx_op_def *sw = dfx__op_get("_SwitchN");
  cr_assert(sw && sw->out[0].number_attr && strcmp(sw->out[0].number_attr, "num_outs") == 0);
  /* A second lookup returns the same parsed definition. */
  cr_assert_eq(dfx__op_get("Pack"), pack);
  const dfx_op_def *d = (const dfx_op_def *)1;
  cr_assert_eq(dfx__op_find("NoSuchOp", &d, NULL), DFX_OK);
  cr_assert_null(d);
  /* The listing covers both tables, each name once. */
  int count = dfx__op_count(), seen_pack = 0, seen_retval = 0;
  cr_assert_gt(count, 1563);
  for (int i = 0; i < count; i++) {
    seen_pack += strcmp(dfx__op_name(i), "Pack") == 0;
    seen_retval += strcmp(dfx__op_name(i), "_Retval") == 0;
  }
  cr_assert_eq(seen_pack, 1);
  cr_assert_eq(seen_retval, 1);
  cr_assert_null(dfx__op_name(count));
}

#define N_THREADS 8

typedef struct {
  const dfx_op_def *got;
} racer;

static void race(void *arg) {
  racer *x = arg;
  x->got = dfx__op_get("ApproximateEqual");
}

Test(op_registry, first_lookups_from_many_threads_agree) {
  racer x[N_THREADS];
  uv_thread_t t[N_THREADS];
  for (int i = 0; i < N_THREADS; i++) {
    x[i] = (racer){NULL};
    cr_assert_eq(uv_thread_create(&t[i], race, &x[i]), 0);
  }
  for (int i = 0; i < N_THREADS; i++) uv_thread_join(&t[i]);
  for (int i = 0; i < N_THREADS; i++) cr_assert(x[i].got && x[i].got == x[0].got, "thread %d", i);
  cr_assert_str_eq(x[0].got->name, "ApproximateEqual");
}

/* Every allocation of an import that parses a TF row on the way may fail:
 * each failure is DFX_ENOMEM, and some fall inside that parse. Once an
 * import succeeds the row stays parsed, so the loop ends there (and the
 * test does not check for leaks: the parsed row is the registry's). */
Test(op_registry, out_of_memory_in_a_first_lookup_is_reported) {
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
