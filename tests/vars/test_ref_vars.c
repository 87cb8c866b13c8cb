/* test_ref_vars.c - TF1 ref variables through whole sessions: VariableV2
 * keeps its value across runs, Assign/AssignAdd/AssignSub act on it and
 * return the new value, IsVariableInitialized, shared_name sharing, one
 * store per session, uninitialised reads named, and concurrent updates
 * that lose nothing. */
#include <uv.h>

#include "vtest.h"

TestSuite(ref_vars, .init = vt_setup, .fini = vt_teardown, .timeout = 60);

static const char *graph =
    VT_VAR("v", 3)
    VT_FVEC("init_val", "1 float_val: 2 float_val: 3")
    VT_FVEC("delta", "10 float_val: 20 float_val: 30")
    VT_OP2("init", "Assign", "v", "init_val", "DT_FLOAT")
    VT_OP2("add", "AssignAdd", "v", "delta", "DT_FLOAT")
    VT_OP2("sub", "AssignSub", "v", "delta", "DT_FLOAT")
    "node { name: \"read\" op: \"Identity\"" VT_IN("v") VT_TYPE("T", "DT_FLOAT") " }\n"
    "node { name: \"is_init\" op: \"IsVariableInitialized\"" VT_IN("v") VT_TYPE("dtype", "DT_FLOAT") " }\n"
    "node { name: \"twice\" op: \"Mul\"" VT_IN("read") VT_IN("read") VT_TYPE("T", "DT_FLOAT") " }\n";

static bool fetch_bool(vt *c, const char *name) {
  dfx_tensor *t = NULL;
  cr_assert_eq(vt_run(c, NULL, NULL, name, &t, NULL), DFX_OK, "%s", dfx_status_message(c->st));
  bool b = *(const uint8_t *)dfx_tensor_data(t);
  dfx_tensor_free(t);
  return b;
}

Test(ref_vars, values_persist_across_runs) {
  vt c = vt_open(graph, 2);
  cr_assert(!fetch_bool(&c, "is_init"));
  cr_assert_eq(vt_run(&c, NULL, NULL, NULL, NULL, "init"), DFX_OK, "%s", dfx_status_message(c.st));
  cr_assert(fetch_bool(&c, "is_init"));
  float v[3];
  vt_fetch_f32(&c, "read", v, 3);
  cr_assert(v[0] == 1 && v[1] == 2 && v[2] == 3);
  /* Each AssignAdd returns the value after its update. */
  vt_fetch_f32(&c, "add", v, 3);
  cr_assert(v[0] == 11 && v[1] == 22 && v[2] == 33, "%g %g %g", v[0], v[1], v[2]);
  vt_fetch_f32(&c, "add", v, 3);
  vt_fetch_f32(&c, "read", v, 3);
  cr_assert(v[0] == 21 && v[1] == 42 && v[2] == 63);
  vt_fetch_f32(&c, "sub", v, 3);
  cr_assert(v[0] == 11 && v[1] == 22 && v[2] == 33);
  vt_fetch_f32(&c, "twice", v, 3);
  cr_assert(v[0] == 121 && v[1] == 484 && v[2] == 1089);
  /* Assign again resets. */
  vt_fetch_f32(&c, "init", v, 3);
  vt_fetch_f32(&c, "read", v, 3);
  cr_assert(v[0] == 1 && v[2] == 3);
  vt_close(&c);
}

Test(ref_vars, a_read_snapshot_is_not_changed_by_a_later_update) {
  /* The fetched value is the caller's: a later AssignAdd in place must not
   * write into it. */
  vt c = vt_open(graph, 1);
  cr_assert_eq(vt_run(&c, NULL, NULL, NULL, NULL, "init"), DFX_OK);
  dfx_tensor *before = NULL;
  cr_assert_eq(vt_run(&c, NULL, NULL, "read", &before, NULL), DFX_OK);
  float v[3];
  vt_fetch_f32(&c, "add", v, 3);
  const float *b = dfx_tensor_data(before);
  cr_assert(b[0] == 1 && b[1] == 2 && b[2] == 3, "snapshot changed: %g %g %g", b[0], b[1], b[2]);
  dfx_tensor_free(before);
  vt_close(&c);
}

Test(ref_vars, sessions_do_not_share_variables) {
  vt a = vt_open(graph, 1);
  dfx_session *s2 = NULL;
  cr_assert_eq(dfx_session_new(a.g, NULL, &s2, a.st), DFX_OK);
  cr_assert_eq(vt_run(&a, NULL, NULL, NULL, NULL, "init"), DFX_OK);
  dfx_port p = {"is_init", 0};
  dfx_tensor *t = NULL;
  cr_assert_eq(dfx_session_run(s2, NULL, NULL, NULL, 0, &p, &t, 1, NULL, 0, a.st), DFX_OK);
  cr_assert_eq(*(const uint8_t *)dfx_tensor_data(t), 0);
  dfx_tensor_free(t);
  dfx_session_free(s2);
  vt_close(&a);
}

Test(ref_vars, update_of_uninitialised_variable_names_it) {
  vt c = vt_open(graph, 1);
  dfx_tensor *t = NULL;
  cr_assert_eq(vt_run(&c, NULL, NULL, "add", &t, NULL), DFX_EPRECOND);
  cr_assert(strstr(dfx_status_message(c.st), "Attempting to use uninitialized value v"), "%s",
            dfx_status_message(c.st));
  cr_assert_null(t);
  vt_close(&c);
}

Test(ref_vars, assign_checks_shape_unless_told_not_to) {
  static const char *g2 =
      VT_VAR("v", 3)
      VT_FVEC("three", "1 float_val: 2 float_val: 3")
      "node { name: \"two\" op: \"Const\"" VT_TYPE("dtype", "DT_FLOAT")
      " attr { key: \"value\" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } } float_val: 7 "
      "float_val: 8 } } } }\n"
      VT_OP2("init", "Assign", "v", "three", "DT_FLOAT")
      VT_OP2("bad", "Assign", "v", "two", "DT_FLOAT")
      "node { name: \"reshape\" op: \"Assign\"" VT_IN("v") VT_IN("two") VT_TYPE("T", "DT_FLOAT")
      " attr { key: \"validate_shape\" value { b: false } } }\n"
      "node { name: \"read\" op: \"Identity\"" VT_IN("v") VT_TYPE("T", "DT_FLOAT") " }\n";
  vt c = vt_open(g2, 1);
  cr_assert_eq(vt_run(&c, NULL, NULL, NULL, NULL, "init"), DFX_OK);
  cr_assert_eq(vt_run(&c, NULL, NULL, NULL, NULL, "bad"), DFX_EINVAL);
  cr_assert(strstr(dfx_status_message(c.st), "lhs shape= [3] rhs shape= [2]"), "%s", dfx_status_message(c.st));
  cr_assert_eq(vt_run(&c, NULL, NULL, NULL, NULL, "reshape"), DFX_OK, "%s", dfx_status_message(c.st));
  float v[2];
  vt_fetch_f32(&c, "read", v, 2);
  cr_assert(v[0] == 7 && v[1] == 8);
  vt_close(&c);
}

Test(ref_vars, shared_name_shares_one_variable) {
  static const char *g2 =
      "node { name: \"a\" op: \"VariableV2\"" VT_TYPE("dtype", "DT_FLOAT") VT_SHAPE1("shape", 3)
      " attr { key: \"shared_name\" value { s: \"w\" } } }\n"
      "node { name: \"b\" op: \"VariableV2\"" VT_TYPE("dtype", "DT_FLOAT") VT_SHAPE1("shape", 3)
      " attr { key: \"shared_name\" value { s: \"w\" } } }\n"
      VT_FVEC("val", "4 float_val: 5 float_val: 6")
      VT_OP2("init", "Assign", "a", "val", "DT_FLOAT")
      "node { name: \"read_b\" op: \"Identity\"" VT_IN("b") VT_TYPE("T", "DT_FLOAT") " }\n";
  vt c = vt_open(g2, 1);
  cr_assert_eq(vt_run(&c, NULL, NULL, NULL, NULL, "init"), DFX_OK);
  float v[3];
  vt_fetch_f32(&c, "read_b", v, 3);
  cr_assert(v[0] == 4 && v[2] == 6);
  vt_close(&c);
}

Test(ref_vars, assign_on_a_plain_tensor_keeps_value_semantics) {
  /* A frozen graph's Assign whose ref is a Const: the output is the value
   * and nothing persists (the behaviour before variables existed). */
  static const char *g2 = VT_FVEC("a", "1 float_val: 2 float_val: 3") VT_FVEC("b", "4 float_val: 5 float_val: 6")
      VT_OP2("asg", "Assign", "a", "b", "DT_FLOAT") VT_OP2("add", "AssignAdd", "a", "b", "DT_FLOAT");
  vt c = vt_open(g2, 1);
  float v[3];
  vt_fetch_f32(&c, "asg", v, 3);
  cr_assert(v[0] == 4 && v[2] == 6);
  vt_fetch_f32(&c, "add", v, 3);
  cr_assert(v[0] == 5 && v[1] == 7 && v[2] == 9);
  vt_fetch_f32(&c, "add", v, 3);
  cr_assert(v[0] == 5 && v[1] == 7 && v[2] == 9);
  vt_close(&c);
}

/* ---- concurrent runs ---- */

typedef struct worker_arg {
  vt *c;
  int n;
  int failures;
} worker_arg;

static void worker(void *p) {
  worker_arg *a = p;
  dfx_status *st = dfx_status_new();
  const char *tg[1] = {"add1"};
  for (int i = 0; i < a->n; i++)
    if (dfx_session_run(a->c->s, NULL, NULL, NULL, 0, NULL, NULL, 0, tg, 1, st) != DFX_OK) a->failures++;
  dfx_status_free(st);
}

Test(ref_vars, concurrent_updates_lose_nothing) {
  static const char *g2 = VT_VAR("v", 3) VT_FVEC("zero", "0 float_val: 0 float_val: 0")
      VT_FVEC("one", "1 float_val: 1 float_val: 1") VT_OP2("init", "Assign", "v", "zero", "DT_FLOAT")
      VT_OP2("add1", "AssignAdd", "v", "one", "DT_FLOAT")
      "node { name: \"read\" op: \"Identity\"" VT_IN("v") VT_TYPE("T", "DT_FLOAT") " }\n"
      "node { name: \"sum\" op: \"AddN\"" VT_IN("read") VT_IN("read") VT_TYPE("T", "DT_FLOAT")
      " attr { key: \"N\" value { i: 2 } } }\n";
  vt c = vt_open(g2, 2);
  cr_assert_eq(vt_run(&c, NULL, NULL, NULL, NULL, "init"), DFX_OK);
  enum { THREADS = 4, PER = 200 };
  uv_thread_t th[THREADS];
  worker_arg args[THREADS];
  for (int i = 0; i < THREADS; i++) {
    args[i] = (worker_arg){&c, PER, 0};
    cr_assert_eq(uv_thread_create(&th[i], worker, &args[i]), 0);
  }
  /* Readers at the same time see whole updates: all three elements equal. */
  for (int i = 0; i < 50; i++) {
    float v[3];
    vt_fetch_f32(&c, "sum", v, 3);
    cr_assert(v[0] == v[1] && v[1] == v[2], "torn read %g %g %g", v[0], v[1], v[2]);
  }
  for (int i = 0; i < THREADS; i++) {
    uv_thread_join(&th[i]);
    cr_assert_eq(args[i].failures, 0);
  }
  float v[3];
  vt_fetch_f32(&c, "read", v, 3);
  cr_assert(v[0] == THREADS * PER && v[2] == THREADS * PER, "%g", v[0]);
  vt_close(&c);
}
