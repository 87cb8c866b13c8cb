/* test_res_vars.c - TF2 resource variables through whole sessions:
 * VarHandleOp + AssignVariableOp / ReadVariableOp persist across runs,
 * AssignAdd/SubVariableOp, VarIsInitializedOp, ResourceGather against a
 * hand-computed gather, DestroyResourceOp, and the errors TF gives for an
 * uninitialised read and a wrong dtype. */
#include "vtest.h"

TestSuite(res_vars, .init = vt_setup, .fini = vt_teardown, .timeout = 60);

#define HANDLE(name, shared, t)                                                                         \
  "node { name: \"" name "\" op: \"VarHandleOp\"" VT_TYPE("dtype", t)                                   \
  " attr { key: \"shape\" value { shape { dim { size: 3 } } } } attr { key: \"shared_name\" value { s: \"" \
  shared "\" } } }\n"
#define RES_OP2(name, op, a, b, t) \
  "node { name: \"" name "\" op: \"" op "\"" VT_IN(a) VT_IN(b) VT_TYPE("dtype", t) " }\n"

static const char *graph =
    HANDLE("h", "w", "DT_FLOAT")
    HANDLE("h2", "w", "DT_FLOAT")
    VT_FVEC("val", "1 float_val: 2 float_val: 3")
    VT_FVEC("delta", "0.5 float_val: 0.5 float_val: 0.5")
    RES_OP2("assign", "AssignVariableOp", "h", "val", "DT_FLOAT")
    RES_OP2("add", "AssignAddVariableOp", "h", "delta", "DT_FLOAT")
    RES_OP2("sub", "AssignSubVariableOp", "h2", "delta", "DT_FLOAT")
    "node { name: \"read\" op: \"ReadVariableOp\"" VT_IN("h2") VT_TYPE("dtype", "DT_FLOAT") " }\n"
    "node { name: \"bad_read\" op: \"ReadVariableOp\"" VT_IN("h") VT_TYPE("dtype", "DT_INT32") " }\n"
    "node { name: \"is_init\" op: \"VarIsInitializedOp\"" VT_IN("h") " }\n"
    "node { name: \"idx\" op: \"Const\"" VT_TYPE("dtype", "DT_INT32")
    " attr { key: \"value\" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 2 } dim { size: 2 } } "
    "int_val: 2 int_val: 0 int_val: 1 int_val: 2 } } } }\n"
    "node { name: \"gather\" op: \"ResourceGather\"" VT_IN("h") VT_IN("idx") VT_TYPE("dtype", "DT_FLOAT")
    VT_TYPE("Tindices", "DT_INT32") " }\n"
    "node { name: \"destroy\" op: \"DestroyResourceOp\"" VT_IN("h") " }\n";

static bool fetch_bool(vt *c, const char *name) {
  dfx_tensor *t = NULL;
  cr_assert_eq(vt_run(c, NULL, NULL, name, &t, NULL), DFX_OK, "%s", dfx_status_message(c->st));
  bool b = *(const uint8_t *)dfx_tensor_data(t);
  dfx_tensor_free(t);
  return b;
}

Test(res_vars, assign_read_update_persist) {
  vt c = vt_open(graph, 2);
  cr_assert(!fetch_bool(&c, "is_init"));
  cr_assert_eq(vt_run(&c, NULL, NULL, NULL, NULL, "assign"), DFX_OK, "%s", dfx_status_message(c.st));
  cr_assert(fetch_bool(&c, "is_init"));
  float v[4];
  vt_fetch_f32(&c, "read", v, 3);
  cr_assert(v[0] == 1 && v[1] == 2 && v[2] == 3);
  for (int i = 0; i < 3; i++) cr_assert_eq(vt_run(&c, NULL, NULL, NULL, NULL, "add"), DFX_OK);
  cr_assert_eq(vt_run(&c, NULL, NULL, NULL, NULL, "sub"), DFX_OK);
  vt_fetch_f32(&c, "read", v, 3);
  cr_assert(v[0] == 2 && v[1] == 3 && v[2] == 4, "%g %g %g", v[0], v[1], v[2]);
  /* gather rows [[2,0],[1,2]] of [2,3,4]. */
  vt_fetch_f32(&c, "gather", v, 4);
  cr_assert(v[0] == 4 && v[1] == 2 && v[2] == 3 && v[3] == 4, "%g %g %g %g", v[0], v[1], v[2], v[3]);
  cr_assert_eq(vt_run(&c, NULL, NULL, NULL, NULL, "destroy"), DFX_OK);
  cr_assert(!fetch_bool(&c, "is_init"));
  vt_close(&c);
}

Test(res_vars, uninitialised_read_and_wrong_dtype_fail) {
  vt c = vt_open(graph, 1);
  dfx_tensor *t = NULL;
  cr_assert_eq(vt_run(&c, NULL, NULL, "read", &t, NULL), DFX_EPRECOND);
  cr_assert(strstr(dfx_status_message(c.st), "resource variable w") &&
                strstr(dfx_status_message(c.st), "uninitialized"),
            "%s", dfx_status_message(c.st));
  cr_assert_eq(vt_run(&c, NULL, NULL, NULL, NULL, "add"), DFX_EPRECOND);
  cr_assert_eq(vt_run(&c, NULL, NULL, NULL, NULL, "assign"), DFX_OK);
  cr_assert_eq(vt_run(&c, NULL, NULL, "bad_read", &t, NULL), DFX_EINVAL);
  cr_assert(strstr(dfx_status_message(c.st), "wrong dtype"), "%s", dfx_status_message(c.st));
  vt_close(&c);
}

Test(res_vars, handle_from_another_session_is_refused) {
  vt a = vt_open(graph, 1);
  dfx_port hp = {"h", 0};
  dfx_tensor *h = NULL;
  cr_assert_eq(dfx_session_run(a.s, NULL, NULL, NULL, 0, &hp, &h, 1, NULL, 0, a.st), DFX_OK, "%s",
               dfx_status_message(a.st));
  dfx_session *s2 = NULL;
  cr_assert_eq(dfx_session_new(a.g, NULL, &s2, a.st), DFX_OK);
  /* Feeding session 1's handle into session 2's read. */
  dfx_port rp = {"read", 0}, feed = {"h2", 0};
  dfx_tensor *out = NULL;
  cr_assert_eq(dfx_session_run(s2, NULL, &feed, &h, 1, &rp, &out, 1, NULL, 0, a.st), DFX_ENOTFOUND);
  cr_assert(strstr(dfx_status_message(a.st), "does not name a variable of this session"), "%s",
            dfx_status_message(a.st));
  dfx_tensor_free(h);
  dfx_session_free(s2);
  vt_close(&a);
}
