/* test_list.c - TensorList kernels, run one by one as the engine would and
 * checked against a plain C model of the list (an array of optional rows):
 * creation, set/get with unset elements reading as zeros, push/pop, stack,
 * gather, from-tensor, scatter, split/concat, resize, element shapes, and
 * the errors TF gives (with its messages). A list handed to a changing op
 * while still shared is copied, never changed under its other reader. */
#include <criterion/criterion.h>
#include <string.h>

#include "eutil.h"
#include "kharness.h"

TestSuite(list, .init = eu_setup, .fini = eu_teardown, .timeout = 30);

static dfx_node *node(const char *op) {
  dfx_node *n = kh_node_new(op);
  kh_attr_type(n, "element_dtype", DFX_F32);
  kh_attr_type(n, "shape_type", DFX_I32); /* ops without it ignore it */
  return n;
}

/* Runs op on inputs; returns output k (new) and frees the others. */
static dfx_tensor *run(const char *op, dfx_tensor **in, int n_in, int k) {
  dfx_node *n = node(op);
  dfx_tensor *out[4] = {0};
  int n_out = 0;
  char err[512];
  dfx_code c = kh_run(n, in, n_in, out, &n_out, err, sizeof err);
  kh_node_free(n);
  cr_assert_eq(c, DFX_OK, "%s: %s", op, err);
  for (int i = 0; i < n_out; i++)
    if (i != k) dfx__tensor_unref(out[i]);
  return out[k];
}

static dfx_code run_err(dfx_node *n, dfx_tensor **in, int n_in, char *err, size_t len) {
  dfx_tensor *out[4] = {0};
  int n_out = 0;
  dfx_code c = kh_run(n, in, n_in, out, &n_out, err, len);
  for (int i = 0; i < n_out; i++) dfx__tensor_unref(out[i]);
  kh_node_free(n);
  return c;
}

static dfx_tensor *shape_vec(int rank, const int32_t *d) {
  int64_t n = rank;
  return kh_i32(1, &n, d);
}

static void free_all(dfx_tensor **t, int n) {
  for (int i = 0; i < n; i++) dfx__tensor_unref(t[i]);
}

static void expect_f32(const dfx_tensor *t, int ndims, const int64_t *dims, const float *want) {
  cr_assert_eq(t->dtype, DFX_F32);
  cr_assert_eq(t->ndims, ndims);
  for (int k = 0; k < ndims; k++) cr_assert_eq(t->dims[k], dims[k], "dim %d", k);
  for (int64_t i = 0; i < t->count; i++) cr_expect_float_eq(((float *)t->data)[i], want[i], 0, "element %lld", (long long)i);
}

/* The model: rows of width 2, each set or not. */
typedef struct model {
  int n;
  bool set[8];
  float v[8][2];
} model;

static void model_stack(const model *m, float *out) {
  for (int i = 0; i < m->n; i++)
    for (int k = 0; k < 2; k++) out[i * 2 + k] = m->set[i] ? m->v[i][k] : 0;
}

Test(list, reserve_set_get_stack_with_unset_zeros) {
  int32_t sd[] = {2};
  dfx_tensor *shape = shape_vec(1, sd), *n3 = kh_scalar_i32(3);
  dfx_tensor *in[3] = {shape, n3};
  dfx_tensor *l = run("TensorListReserve", in, 2, 0);
  model m = {.n = 3};
  float rows[2][2] = {{1.5f, -2}, {7, 8}};
  int where[2] = {2, 0};
  for (int j = 0; j < 2; j++) {
    dfx_tensor *idx = kh_scalar_i32(where[j]), *item = kh_f32(1, (int64_t[]){2}, rows[j]);
    dfx_tensor *si[3] = {l, idx, item};
    dfx_tensor *l2 = run("TensorListSetItem", si, 3, 0);
    dfx__tensor_unref(l);
    l = l2;
    m.set[where[j]] = true;
    memcpy(m.v[where[j]], rows[j], sizeof rows[j]);
    free_all((dfx_tensor *[]){idx, item}, 2);
  }
  dfx_tensor *any = kh_scalar_i32(-1);
  dfx_tensor *st_in[2] = {l, any};
  dfx_tensor *stacked = run("TensorListStack", st_in, 2, 0);
  float want[6];
  model_stack(&m, want);
  expect_f32(stacked, 2, (int64_t[]){3, 2}, want);
  for (int i = 0; i < 3; i++) {
    dfx_tensor *idx = kh_scalar_i32(i);
    dfx_tensor *gi[3] = {l, idx, any};
    dfx_tensor *item = run("TensorListGetItem", gi, 3, 0);
    expect_f32(item, 1, (int64_t[]){2}, want + 2 * i);
    free_all((dfx_tensor *[]){idx, item}, 2);
  }
  dfx_tensor *len = run("TensorListLength", (dfx_tensor *[]){l}, 1, 0);
  cr_expect_eq(*(int32_t *)len->data, 3);
  free_all((dfx_tensor *[]){shape, n3, l, any, stacked, len}, 6);
}

Test(list, push_pop_is_a_stack) {
  dfx_tensor *any = kh_scalar_i32(-1), *max = kh_scalar_i32(-1);
  dfx_tensor *l = run("EmptyTensorList", (dfx_tensor *[]){any, max}, 2, 0);
  float ref[5][2];
  for (int j = 0; j < 5; j++) {
    ref[j][0] = (float)j;
    ref[j][1] = (float)(j * j);
    dfx_tensor *item = kh_f32(1, (int64_t[]){2}, ref[j]);
    dfx_tensor *l2 = run("TensorListPushBack", (dfx_tensor *[]){l, item}, 2, 0);
    free_all((dfx_tensor *[]){l, item}, 2);
    l = l2;
  }
  for (int j = 4; j >= 2; j--) {
    dfx_node *n = node("TensorListPopBack");
    dfx_tensor *out[2] = {0};
    int n_out;
    char err[256];
    cr_assert_eq(kh_run(n, (dfx_tensor *[]){l, any}, 2, out, &n_out, err, sizeof err), DFX_OK, "%s", err);
    kh_node_free(n);
    expect_f32(out[1], 1, (int64_t[]){2}, ref[j]);
    dfx__tensor_unref(l);
    dfx__tensor_unref(out[1]);
    l = out[0];
  }
  dfx_tensor *stacked = run("TensorListStack", (dfx_tensor *[]){l, any}, 2, 0);
  expect_f32(stacked, 2, (int64_t[]){2, 2}, &ref[0][0]);
  free_all((dfx_tensor *[]){any, max, l, stacked}, 4);
}

Test(list, from_tensor_gather_and_element_shape) {
  float x[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  dfx_tensor *t = kh_f32(2, (int64_t[]){4, 2}, x), *any = kh_scalar_i32(-1);
  dfx_tensor *l = run("TensorListFromTensor", (dfx_tensor *[]){t, any}, 2, 0);
  int32_t idx[3] = {3, 0, 3};
  dfx_tensor *it = kh_i32(1, (int64_t[]){3}, idx);
  dfx_tensor *g = run("TensorListGather", (dfx_tensor *[]){l, it, any}, 3, 0);
  float want[6];
  for (int j = 0; j < 3; j++) memcpy(want + 2 * j, x + 2 * idx[j], 2 * sizeof(float));
  expect_f32(g, 2, (int64_t[]){3, 2}, want);
  dfx_tensor *all = run("TensorListStack", (dfx_tensor *[]){l, any}, 2, 0);
  expect_f32(all, 2, (int64_t[]){4, 2}, x);
  /* The list keeps the shape it was given (unknown rank): ElementShape is -1. */
  dfx_node *n = kh_node_new("TensorListElementShape");
  kh_attr_type(n, "shape_type", DFX_I32);
  dfx_tensor *out[1];
  int n_out;
  char err[256];
  cr_assert_eq(kh_run(n, (dfx_tensor *[]){l}, 1, out, &n_out, err, sizeof err), DFX_OK, "%s", err);
  kh_node_free(n);
  cr_expect_eq(out[0]->ndims, 0);
  cr_expect_eq(*(int32_t *)out[0]->data, -1);
  free_all((dfx_tensor *[]){t, any, l, it, g, all, out[0]}, 7);
}

Test(list, scatter_split_concat) {
  float x[10];
  for (int i = 0; i < 10; i++) x[i] = (float)(i * 3 - 4);
  dfx_tensor *t = kh_f32(2, (int64_t[]){5, 2}, x), *any = kh_scalar_i32(-1);
  int64_t lens[2] = {2, 3};
  dfx_tensor *lt = kh_i64(1, (int64_t[]){2}, lens);
  dfx_tensor *l = run("TensorListSplit", (dfx_tensor *[]){t, any, lt}, 3, 0);
  dfx_node *n = node("TensorListConcatV2");
  dfx_tensor *out[2];
  int n_out;
  char err[256];
  dfx_tensor *lead = kh_i64(1, (int64_t[]){0}, NULL);
  cr_assert_eq(kh_run(n, (dfx_tensor *[]){l, any, lead}, 3, out, &n_out, err, sizeof err), DFX_OK, "%s", err);
  kh_node_free(n);
  expect_f32(out[0], 2, (int64_t[]){5, 2}, x);
  cr_expect_eq(((int64_t *)out[1]->data)[0], 2);
  cr_expect_eq(((int64_t *)out[1]->data)[1], 3);
  /* Scatter rows 0 and 1 of x to elements 3 and 1 of a list of width-2 rows. */
  int32_t sd[] = {2}, idx[2] = {3, 1};
  dfx_tensor *shape = shape_vec(1, sd), *it = kh_i32(1, (int64_t[]){2}, idx);
  dfx_tensor *t2 = kh_f32(2, (int64_t[]){2, 2}, x);
  dfx_tensor *sl = run("TensorListScatter", (dfx_tensor *[]){t2, it, shape}, 3, 0);
  dfx_tensor *st = run("TensorListStack", (dfx_tensor *[]){sl, any}, 2, 0);
  model m = {.n = 4};
  for (int j = 0; j < 2; j++) {
    m.set[idx[j]] = true;
    memcpy(m.v[idx[j]], x + 2 * j, 2 * sizeof(float));
  }
  float want[8];
  model_stack(&m, want);
  expect_f32(st, 2, (int64_t[]){4, 2}, want);
  free_all((dfx_tensor *[]){t, any, lt, l, out[0], out[1], lead, shape, it, t2, sl, st}, 12);
}

Test(list, shared_list_is_copied_not_changed) {
  int32_t sd[] = {1};
  dfx_tensor *shape = shape_vec(1, sd), *n2 = kh_scalar_i32(2);
  dfx_tensor *l = run("TensorListReserve", (dfx_tensor *[]){shape, n2}, 2, 0);
  dfx_tensor *zero = kh_scalar_i32(0), *item = kh_f32(1, (int64_t[]){1}, (float[]){9});
  dfx_tensor *l2 = run("TensorListSetItem", (dfx_tensor *[]){l, zero, item}, 3, 0);
  cr_expect_neq(l2->dealloc_ud, l->dealloc_ud);
  dfx_tensor *any = kh_scalar_i32(-1);
  dfx_tensor *old = run("TensorListGetItem", (dfx_tensor *[]){l, zero, any}, 3, 0);
  dfx_tensor *neu = run("TensorListGetItem", (dfx_tensor *[]){l2, zero, any}, 3, 0);
  cr_expect_float_eq(*(float *)old->data, 0, 0);
  cr_expect_float_eq(*(float *)neu->data, 9, 0);
  dfx_tensor *rs = kh_scalar_i32(5);
  dfx_tensor *big = run("TensorListResize", (dfx_tensor *[]){l2, rs}, 2, 0);
  dfx_tensor *len = run("TensorListLength", (dfx_tensor *[]){big}, 1, 0);
  cr_expect_eq(*(int32_t *)len->data, 5);
  free_all((dfx_tensor *[]){shape, n2, l, zero, item, l2, any, old, neu, rs, big, len}, 12);
}

Test(list, errors_say_what_tf_says) {
  char err[512];
  dfx_tensor *any = kh_scalar_i32(-1), *max = kh_scalar_i32(-1), *n1 = kh_scalar_i32(1), *five = kh_scalar_i32(5);
  dfx_tensor *empty = run("EmptyTensorList", (dfx_tensor *[]){any, max}, 2, 0);
  cr_expect_neq(run_err(node("TensorListPopBack"), (dfx_tensor *[]){empty, any}, 2, err, sizeof err), DFX_OK);
  cr_expect(strstr(err, "Trying to pop from an empty list."), "%s", err);
  dfx_tensor *item = kh_scalar_f32(1);
  cr_expect_neq(run_err(node("TensorListSetItem"), (dfx_tensor *[]){empty, five, item}, 3, err, sizeof err), DFX_OK);
  cr_expect(strstr(err, "Trying to modify element 5 in a list with 0 elements."), "%s", err);
  dfx_tensor *r = run("TensorListReserve", (dfx_tensor *[]){any, n1}, 2, 0);
  cr_expect_neq(run_err(node("TensorListStack"), (dfx_tensor *[]){r, any}, 2, err, sizeof err), DFX_OK);
  cr_expect(strstr(err, "cannot stack a list of element shape <unknown> with unset elements"), "%s", err);
  dfx_tensor *iv = kh_scalar_i32(3);
  dfx_node *n = node("TensorListPushBack");
  kh_attr_type(n, "element_dtype", DFX_I32);
  cr_expect_neq(run_err(n, (dfx_tensor *[]){r, iv}, 2, err, sizeof err), DFX_OK);
  cr_expect(strstr(err, "Invalid data types; list elements float32 but tried to add int32"), "%s", err);
  cr_expect_neq(run_err(node("TensorListLength"), (dfx_tensor *[]){item}, 1, err, sizeof err), DFX_OK);
  cr_expect(strstr(err, "is not a TensorList"), "%s", err);
  free_all((dfx_tensor *[]){any, max, n1, five, empty, item, r, iv}, 8);
}
