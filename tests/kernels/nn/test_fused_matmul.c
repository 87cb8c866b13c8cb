/* test_fused_matmul.c - _FusedMatMul against the kernels it stands for,
 * run one after the other (MatMul, BiasAdd, the activation): the same bits
 * for every transpose, pattern and odd size, an empty inner dimension, and
 * what init and a run refuse. */
#include "nn_test.h"

static const char *const acts[] = {NULL, "Relu", "Relu6", "Elu", "LeakyRelu"};

static dfx_tensor *run_ok(dfx_node *n, dfx_tensor **in, int n_in) {
  dfx_tensor *o[4] = {0};
  char err[512] = "";
  int n_out = 0;
  cr_assert_eq(kh_run(n, in, n_in, o, &n_out, err, sizeof err), DFX_OK, "%s: %s", n->op, err);
  return o[0];
}

static dfx_node *fused(bool ta, bool tb, const char *act, int num_args) {
  dfx_node *n = kh_node_new("_FusedMatMul");
  kh_attr_type(n, "T", DFX_F32);
  kh_attr_bool(n, "transpose_a", ta);
  kh_attr_bool(n, "transpose_b", tb);
  const char *ops[2] = {"BiasAdd", act};
  kh_attr_strs(n, "fused_ops", ops, act ? 2 : 1);
  kh_attr_int(n, "num_args", num_args);
  return n;
}

static void one(int64_t m, int64_t k, int64_t n, bool ta, bool tb, int act, unsigned seed) {
  int64_t ad[2] = {ta ? k : m, ta ? m : k}, bd[2] = {tb ? n : k, tb ? k : n};
  dfx_tensor *a = trand(DFX_F32, 2, ad, -2, 2, seed), *b = trand(DFX_F32, 2, bd, -2, 2, seed + 1);
  dfx_tensor *bias = trand(DFX_F32, 1, &n, -3, 3, seed + 2);
  dfx_node *mm = kh_node_new("MatMul");
  kh_attr_type(mm, "T", DFX_F32);
  kh_attr_bool(mm, "transpose_a", ta);
  kh_attr_bool(mm, "transpose_b", tb);
  dfx_tensor *p = run_ok(mm, (dfx_tensor *[]){a, b}, 2);
  dfx_node *ba = kh_node_new("BiasAdd");
  kh_attr_type(ba, "T", DFX_F32);
  dfx_tensor *want = run_ok(ba, (dfx_tensor *[]){p, bias}, 2);
  if (acts[act]) {
    dfx_node *an = kh_node_new(acts[act]);
    kh_attr_type(an, "T", DFX_F32);
    dfx_tensor *w2 = run_ok(an, (dfx_tensor *[]){want}, 1);
    dfx__tensor_unref(want);
    want = w2;
    kh_node_free(an);
  }
  dfx_node *fz = fused(ta, tb, acts[act], 1);
  dfx_tensor *got = run_ok(fz, (dfx_tensor *[]){a, b, bias}, 3);
  cr_assert_eq(got->ndims, 2);
  cr_assert(got->dims[0] == m && got->dims[1] == n);
  cr_assert(memcmp(got->data, want->data, want->nbytes) == 0, "m %lld k %lld n %lld ta %d tb %d %s: not the same bits",
            (long long)m, (long long)k, (long long)n, ta, tb, acts[act] ? acts[act] : "BiasAdd");
  for (dfx_tensor **t = (dfx_tensor *[]){a, b, bias, p, want, got, NULL}; *t; t++) dfx__tensor_unref(*t);
  kh_node_free(mm);
  kh_node_free(ba);
  kh_node_free(fz);
}

Test(fused_matmul, matches_the_unfused_kernels) {
  static const int64_t sizes[][3] = {{1, 1, 1}, {1, 29, 64}, {8, 29, 13}, {7, 1, 5}, {33, 65, 17}, {200, 3, 300}};
  unsigned seed = 5;
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
    for (int t = 0; t < 4; t++)
      for (int act = 0; act < 5; act++) one(sizes[s][0], sizes[s][1], sizes[s][2], t & 1, t & 2, act, seed += 3);
}

Test(fused_matmul, empty_inner_dimension_gives_the_activated_bias) {
  dfx_node *n = fused(false, false, "Relu6", 1);
  dfx_tensor *a = kh_f32(2, (int64_t[]){2, 0}, NULL), *b = kh_f32(2, (int64_t[]){0, 3}, NULL);
  dfx_tensor *bias = kh_f32(1, (int64_t[]){3}, (float[]){-1, 2, 9});
  dfx_tensor *z = run_ok(n, (dfx_tensor *[]){a, b, bias}, 3);
  float want[6] = {0, 2, 6, 0, 2, 6};
  cr_assert(memcmp(z->data, want, sizeof want) == 0);
  for (dfx_tensor **t = (dfx_tensor *[]){a, b, bias, z, NULL}; *t; t++) dfx__tensor_unref(*t);
  kh_node_free(n);
}

static void fails(dfx_node *n, dfx_tensor **in, int n_in, const char *sub) {
  dfx_tensor *o[4] = {0};
  char err[512] = "";
  int n_out = 0;
  cr_assert_neq(kh_run(n, in, n_in, o, &n_out, err, sizeof err), DFX_OK, "should fail: %s", sub);
  cr_assert(strstr(err, sub), "message '%s' lacks '%s'", err, sub);
}

Test(fused_matmul, errors) {
  dfx_tensor *a = trand(DFX_F32, 2, (int64_t[]){2, 3}, -1, 1, 1), *b = trand(DFX_F32, 2, (int64_t[]){3, 4}, -1, 1, 2);
  dfx_tensor *b5 = trand(DFX_F32, 2, (int64_t[]){5, 4}, -1, 1, 3), *bias = trand(DFX_F32, 1, (int64_t[]){4}, -1, 1, 4);
  dfx_tensor *bias3 = trand(DFX_F32, 1, (int64_t[]){3}, -1, 1, 5), *v = trand(DFX_F32, 1, (int64_t[]){3}, -1, 1, 6);
  dfx_node *n = fused(false, false, "Relu", 1);
  fails(n, (dfx_tensor *[]){a, b5, bias}, 3, "Matrix size-incompatible");
  fails(n, (dfx_tensor *[]){a, b, bias3}, 3, "one value per output channel");
  fails(n, (dfx_tensor *[]){v, b, bias}, 3, "In[0] is not a matrix");
  kh_node_free(n);
  n = fused(false, false, "Sigmoid", 1);
  fails(n, (dfx_tensor *[]){a, b, bias}, 3, "Fusion is not implemented: [BiasAdd,Sigmoid]");
  kh_node_free(n);
  n = fused(false, false, NULL, 2);
  fails(n, (dfx_tensor *[]){a, b, bias, bias}, 4, "one extra argument");
  kh_node_free(n);
  n = kh_node_new("_FusedMatMul");
  kh_attr_type(n, "T", DFX_F32);
  kh_attr_strs(n, "fused_ops", (const char *[]){"FusedBatchNorm"}, 1);
  kh_attr_int(n, "num_args", 4);
  fails(n, (dfx_tensor *[]){a, b, bias, bias, bias, bias}, 6, "Fusion is not implemented: [FusedBatchNorm]");
  kh_node_free(n);
  for (dfx_tensor **t = (dfx_tensor *[]){a, b, b5, bias, bias3, v, NULL}; *t; t++) dfx__tensor_unref(*t);
}
