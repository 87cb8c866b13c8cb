/* test_kernel_registry.c - kernels by op and dtype (core/kernel_registry.c)
 * on registries filled with test rows: choosing a row by the node's type
 * attrs, the message when no row takes them, and the table errors sealing
 * reports (overlapping rows, a bad types string, a kernel without a
 * signature). Registries live for the process (the C allocator), so these
 * tests run without the counting allocator. */
#include <criterion/criterion.h>
#include <string.h>

#include "kernel.h"
#include "lib.h"
#include "status.h"

static dfx_code k_float(dfx_kctx *ctx) {
  (void)ctx;
  return DFX_OK;
}
static dfx_code k_int(dfx_kctx *ctx) {
  (void)ctx;
  return DFX_OK;
}

/* A node of `op` whose attr `attr` is dtype t (or, with list != 0, a list
 * of two dtypes t and t2). Static storage: the node only lives for a test. */
static dfx_node *node_with(const char *op, const char *attr, dfx_dtype t, int list, dfx_dtype t2) {
  static dfx_node n;
  static dfx_attr a;
  static dfx_dtype types[2];
  memset(&n, 0, sizeof n);
  memset(&a, 0, sizeof a);
  n.name = "x";
  n.op = (char *)op;
  a.name = (char *)attr;
  if (list) {
    types[0] = t;
    types[1] = t2;
    a.kind = DFX_ATTR_LIST;
    a.v.list.kind = DFX_ATTR_TYPE;
    a.v.list.n = 2;
    a.v.list.v.type = types;
  } else {
    a.kind = DFX_ATTR_TYPE;
    a.v.type = t;
  }
  n.attrs = &a;
  n.n_attrs = 1;
  return &n;
}

Test(kernel_registry, rows_are_chosen_by_dtype) {
  static const dfx_kernel_def rows[] = {{"Add", "T: {float, double}", k_float, DFX_KERNEL_CHEAP},
                                        {"Add", "T: {int32, int64}", k_int, 0},
                                        {"IdentityN", "T: {float, int32}", k_float, 0},
                                        {NULL}};
  dfx_registry *r = dfx__registry_new();
  dfx__kernels_add(r, rows);
  dfx_status st;
  dfx__status_clear(&st);
  cr_assert_eq(dfx__registry_seal(r, &st), DFX_OK, "%s", st.msg);
  cr_assert_eq(dfx__registry_kernel_for(r, node_with("Add", "T", DFX_F64, 0, 0), &st)->fn, k_float);
  cr_assert_eq(dfx__registry_kernel_for(r, node_with("Add", "T", DFX_I64, 0, 0), &st)->fn, k_int);
  /* No row takes complex64: the message names the op, attr, value and what exists. */
  cr_assert_null(dfx__registry_kernel_for(r, node_with("Add", "T", DFX_C64, 0, 0), &st));
  cr_assert_eq(st.code, DFX_EUNIMPL);
  cr_assert(strstr(st.msg, "T=complex64") && strstr(st.msg, "float32") && strstr(st.msg, "int64"), "%s", st.msg);
  /* A list(type) attr is constrained element by element. */
  cr_assert(dfx__registry_kernel_for(r, node_with("IdentityN", "T", DFX_F32, 1, DFX_I32), &st));
  cr_assert_null(dfx__registry_kernel_for(r, node_with("IdentityN", "T", DFX_F32, 1, DFX_STRING), &st));
  cr_assert(strstr(st.msg, "T=string"), "%s", st.msg);
  /* An op with no kernel at all. */
  cr_assert_null(dfx__registry_kernel_for(r, node_with("Sub", "T", DFX_F32, 0, 0), &st));
  cr_assert(strstr(st.msg, "no kernel for this op"), "%s", st.msg);
  /* The union over rows, for `dfexec ops` and messages. */
  uint64_t m = dfx__registry_kernel_types(r, "Add", "T");
  cr_assert_eq(m, (1ull << DFX_F32) | (1ull << DFX_F64) | (1ull << DFX_I32) | (1ull << DFX_I64));
  cr_assert_eq(dfx__registry_count(r), 2);
  cr_assert_str_eq(dfx__registry_op_name(r, 0), "Add");
  cr_assert_str_eq(dfx__registry_op_name(r, 1), "IdentityN");
  cr_assert_null(dfx__registry_op_name(r, 2));
}

Test(kernel_registry, a_row_without_types_takes_every_dtype) {
  static const dfx_kernel_def rows[] = {{"Neg", NULL, k_float, 0}, {NULL}};
  dfx_registry *r = dfx__registry_new();
  dfx__kernels_add(r, rows);
  dfx_status st;
  cr_assert_eq(dfx__registry_seal(r, &st), DFX_OK, "%s", st.msg);
  cr_assert(dfx__registry_kernel_for(r, node_with("Neg", "T", DFX_C128, 0, 0), &st));
  cr_assert_eq(dfx__registry_kernel_types(r, "Neg", "T"), ~(uint64_t)0);
}

static void expect_seal_error(const dfx_kernel_def *rows, dfx_code code, const char *needle) {
  dfx_registry *r = dfx__registry_new();
  dfx__kernels_add(r, rows);
  dfx_status st;
  dfx__status_clear(&st);
  cr_assert_eq(dfx__registry_seal(r, &st), code, "%s", st.msg);
  cr_assert(strstr(st.msg, needle), "'%s' not in: %s", needle, st.msg);
}

Test(kernel_registry, table_errors_are_reported_at_seal) {
  static const dfx_kernel_def overlap[] = {
      {"Add", "T: {float, int32}", k_float, 0}, {"Add", "T: {int32}", k_int, 0}, {NULL}};
  expect_seal_error(overlap, DFX_EINTERNAL, "two kernels for the same dtypes");
  static const dfx_kernel_def untyped_twice[] = {{"Add", NULL, k_float, 0}, {"Add", NULL, k_int, 0}, {NULL}};
  expect_seal_error(untyped_twice, DFX_EINTERNAL, "two kernels for the same dtypes");
  static const dfx_kernel_def bad_types[] = {{"Add", "T: {float, flaot}", k_float, 0}, {NULL}};
  expect_seal_error(bad_types, DFX_EINTERNAL, "bad types string");
  static const dfx_kernel_def no_brace[] = {{"Add", "T: float", k_float, 0}, {NULL}};
  expect_seal_error(no_brace, DFX_EINTERNAL, "bad types string");
  static const dfx_kernel_def not_a_type_attr[] = {{"Add", "N: {float}", k_float, 0}, {NULL}};
  expect_seal_error(not_a_type_attr, DFX_EINTERNAL, "'N', which is not a type attr");
  static const dfx_kernel_def beyond_tf[] = {{"Relu", "T: {float, string}", k_float, 0}, {NULL}};
  expect_seal_error(beyond_tf, DFX_EINTERNAL, "declares T=string, which TensorFlow's OpDef does not allow");
  static const dfx_kernel_def unknown_op[] = {{"NoSuchOpAnywhere", NULL, k_float, 0}, {NULL}};
  expect_seal_error(unknown_op, DFX_EINTERNAL, "NoSuchOpAnywhere has a kernel but no signature");
}

/* The library's own registry seals, and every row it holds is for an op
 * with a signature (seal checks that). */
Test(kernel_registry, the_library_registry_seals) {
  dfx_status st;
  const dfx_registry *r = dfx__lib_registry(&st);
  cr_assert(r, "%s", st.msg);
  cr_assert_gt(dfx__registry_count(r), 300);
  cr_assert(dfx__registry_has_kernel(r, "MatMul"));
  cr_assert(!dfx__registry_has_kernel(r, "Switch"), "control ops are the engine's, not kernels");
}

/* With several rows, the message names an attr whose value no row takes
 * (not whichever attr the last row happened to refuse), or the combination
 * when each value alone has a row. */
Test(kernel_registry, refusals_name_the_attr_no_row_takes) {
  static const dfx_kernel_def rows[] = {{"Cast", "SrcT: {float}; DstT: {int32}", k_float, 0},
                                        {"Cast", "SrcT: {int32}; DstT: {float}", k_int, 0},
                                        {NULL}};
  dfx_registry *r = dfx__registry_new();
  dfx__kernels_add(r, rows);
  dfx_status st;
  dfx__status_clear(&st);
  cr_assert_eq(dfx__registry_seal(r, &st), DFX_OK, "%s", st.msg);
  static dfx_node n;
  static dfx_attr a[2];
  memset(&n, 0, sizeof n);
  n.op = "Cast";
  a[0] = (dfx_attr){.name = "SrcT", .kind = DFX_ATTR_TYPE, .v.type = DFX_STRING};
  a[1] = (dfx_attr){.name = "DstT", .kind = DFX_ATTR_TYPE, .v.type = DFX_I32};
  n.attrs = a;
  n.n_attrs = 2;
  cr_assert_null(dfx__registry_kernel_for(r, &n, &st));
  cr_assert(strstr(st.msg, "SrcT=string"), "%s", st.msg);
  a[0].v.type = DFX_F32;
  a[1].v.type = DFX_F32;
  cr_assert_null(dfx__registry_kernel_for(r, &n, &st));
  cr_assert(strstr(st.msg, "combination SrcT=float32, DstT=float32"), "%s", st.msg);
  a[1].v.type = DFX_I32;
  cr_assert_eq(dfx__registry_kernel_for(r, &n, &st)->fn, k_float);
}
