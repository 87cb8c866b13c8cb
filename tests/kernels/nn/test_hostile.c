/* test_hostile.c - regressions for hostile inputs to the nn kernels: attrs
 * checked at init, empty inputs whose other dims multiply past int64,
 * scratch sized from the outputs and checked against the tensor limit,
 * exact ordering of 64-bit keys, and long kernels stopping when the run is
 * cancelled or times out. */
#include <uv.h>

#include "nn_test.h"
#include "step.h"

/* kh_run_step with the outputs dropped: these tests look only at the code. */
static dfx_code run_in_step(dfx_node *n, dfx_tensor **in, int nin, dfx_step *step, char *err) {
  dfx_tensor *out[8] = {0};
  dfx_code c = kh_run_step(n, in, nin, out, NULL, step, err, 512);
  unref_all(out, n->n_out);
  return c;
}

/* Nodes whose kernels do more than DFX_NN_POLL_WORK units of work, with inputs. */
typedef struct long_case {
  const char *op;
  dfx_node *n;
  dfx_tensor *in[5];
  int nin;
} long_case;

static int long_cases(long_case *c) {
  int k = 0;
  int64_t big[] = {1024, 1024}, d1 = 1 << 21, b3[] = {8, 256, 256}, sq[] = {64, 16, 16}, d4[] = {1, 64, 64, 256};
  int64_t ch = 256, tk[] = {64, 1 << 15}, ma[] = {256, 4096}, mb[] = {4096, 256};
  /* MatMul on integers (the naive loop: 1 M per row) and batched floats (one gemm per matrix). */
  c[k] = (long_case){"MatMul", kh_node_new("MatMul"), {nn_rand(DFX_I32, 2, ma, 1), nn_rand(DFX_I32, 2, mb, 2)}, 2};
  kh_attr_type(c[k++].n, "T", DFX_I32);
  c[k] = (long_case){"BatchMatMulV2", kh_node_new("BatchMatMulV2"), {nn_rand(DFX_F32, 3, b3, 1), nn_rand(DFX_F32, 3, b3, 2)}, 2};
  kh_attr_type(c[k++].n, "T", DFX_F32);
  c[k] = (long_case){"Sum", kh_node_new("Sum"), {nn_rand(DFX_F32, 1, &d1, 3), kh_scalar_i32(0)}, 2};
  kh_attr_type(c[k++].n, "T", DFX_F32);
  c[k] = (long_case){"Cumsum", kh_node_new("Cumsum"), {nn_rand(DFX_F32, 2, big, 4), kh_scalar_i32(1)}, 2};
  kh_attr_type(c[k++].n, "T", DFX_F32);
  c[k] = (long_case){"ArgMax", kh_node_new("ArgMax"), {nn_rand(DFX_F32, 2, big, 5), kh_scalar_i32(1)}, 2};
  kh_attr_type(c[k++].n, "T", DFX_F32);
  c[k] = (long_case){"Softmax", kh_node_new("Softmax"), {nn_rand(DFX_F32, 2, big, 6)}, 1};
  kh_attr_type(c[k++].n, "T", DFX_F32);
  c[k] = (long_case){"BiasAdd", kh_node_new("BiasAdd"), {nn_rand(DFX_F32, 4, d4, 7), nn_rand(DFX_F32, 1, &ch, 8)}, 2};
  kh_attr_type(c[k++].n, "T", DFX_F32);
  c[k] = (long_case){"L2Loss", kh_node_new("L2Loss"), {nn_rand(DFX_F32, 1, &d1, 9)}, 1};
  kh_attr_type(c[k++].n, "T", DFX_F32);
  c[k] = (long_case){"LRN", kh_node_new("LRN"), {nn_rand(DFX_F32, 4, d4, 10)}, 1};
  kh_attr_type(c[k++].n, "T", DFX_F32);
  c[k] = (long_case){"TopKV2", kh_node_new("TopKV2"), {nn_rand(DFX_F32, 2, tk, 11), kh_scalar_i32(3)}, 2};
  kh_attr_type(c[k++].n, "T", DFX_F32);
  c[k] = (long_case){"MatrixInverse", kh_node_new("MatrixInverse"), {nn_rand(DFX_F64, 3, sq, 12)}, 1};
  kh_attr_type(c[k++].n, "T", DFX_F64);
  for (int i = 0; i < 64; i++) /* diagonally dominant: invertible */
    for (int j = 0; j < 16; j++) ((double *)c[k - 1].in[0]->data)[i * 256 + j * 17] = 100;
  c[k] = (long_case){"FusedBatchNormV3", kh_node_new("FusedBatchNormV3"),
                     {nn_rand(DFX_F32, 4, d4, 13), nn_rand(DFX_F32, 1, &ch, 14), nn_rand(DFX_F32, 1, &ch, 15),
                      nn_rand(DFX_F32, 1, &ch, 16), nn_rand(DFX_F32, 1, &ch, 17)},
                     5};
  kh_attr_type(c[k].n, "T", DFX_F32);
  kh_attr_type(c[k++].n, "U", DFX_F32);
  return k;
}

static void free_cases(long_case *c, int n) {
  for (int i = 0; i < n; i++) {
    unref_all(c[i].in, c[i].nin);
    kh_node_free(c[i].n);
  }
}

Test(nn_hostile, long_kernels_stop_when_the_run_is_cancelled, .timeout = 60) {
  long_case c[16];
  int n = long_cases(c);
  for (int i = 0; i < n; i++) {
    dfx_step step;
    cr_assert_eq(dfx__step_init(&step), DFX_OK);
    char err[512];
    cr_expect_eq(run_in_step(c[i].n, c[i].in, c[i].nin, &step, err), DFX_OK, "%s runs: %s", c[i].op, err);
    dfx__step_cancel(&step);
    cr_expect_eq(run_in_step(c[i].n, c[i].in, c[i].nin, &step, err), DFX_ECANCELED, "%s polls", c[i].op);
    cr_expect(strstr(err, "cancelled"), "%s: %s", c[i].op, err);
    dfx__step_destroy(&step);
  }
  free_cases(c, n);
}

/* A product of two 2000 x 2000 int64 matrices runs the naive loop for
 * seconds; with a 50 ms deadline it must stop well within one. */
Test(nn_hostile, long_matmul_stops_at_the_deadline, .timeout = 30) {
  int64_t d[] = {2000, 2000};
  dfx_tensor *in[] = {nn_rand(DFX_I64, 2, d, 1), nn_rand(DFX_I64, 2, d, 2)};
  dfx_node *n = kh_node_new("MatMul");
  kh_attr_type(n, "T", DFX_I64);
  dfx_step step;
  cr_assert_eq(dfx__step_init(&step), DFX_OK);
  step.t0_ns = uv_hrtime();
  step.deadline_ns = step.t0_ns + 50 * 1000000ull;
  char err[512];
  cr_expect_eq(run_in_step(n, in, 2, &step, err), DFX_EDEADLINE, "%s", err);
  cr_expect(strstr(err, "timed out"), "%s", err);
  cr_expect_lt(uv_hrtime() - step.t0_ns, 1000000000ull, "stopped late");
  dfx__step_destroy(&step);
  unref_all(in, 2);
  kh_node_free(n);
}

/* depth_radius is validated once, at init, naming the attr and value. */
Test(nn_hostile, lrn_depth_radius_checked_at_init) {
  int64_t d[] = {1, 1, 1, 4};
  dfx_tensor *x = nn_rand(DFX_F32, 4, d, 1), *y;
  int64_t bad[] = {-1, (int64_t)INT32_MAX + 1, INT64_MIN};
  for (int i = 0; i < 3; i++) {
    dfx_node *n = kh_node_new("LRN");
    kh_attr_int(n, "depth_radius", bad[i]);
    char err[512], want[64];
    cr_expect_eq(run1(n, &x, 1, &y, err), DFX_EINVAL);
    snprintf(want, sizeof want, "depth_radius = %lld", (long long)bad[i]);
    cr_expect(strstr(err, want), "%s", err);
    kh_node_free(n);
  }
  dfx__tensor_unref(x);
}

/* The pooling-like window of LRN is clamped to the depth: a radius of
 * INT32_MAX sums the whole row once per element and finishes at once. */
Test(nn_hostile, lrn_huge_radius_is_clamped_to_the_depth, .timeout = 5) {
  int64_t d[] = {1, 2, 1, 5};
  dfx_tensor *x = nn_rand(DFX_F32, 4, d, 2), *y;
  dfx_node *n = kh_node_new("LRN");
  kh_attr_int(n, "depth_radius", INT32_MAX);
  char err[512];
  cr_assert_eq(run1(n, &x, 1, &y, err), DFX_OK, "%s", err);
  for (int r = 0; r < 2; r++) {
    double s = 0;
    for (int j = 0; j < 5; j++) s += tget(x, r * 5 + j) * tget(x, r * 5 + j);
    for (int j = 0; j < 5; j++) EXPECT_NEAR(tget(y, r * 5 + j), tget(x, r * 5 + j) / sqrt(1 + s), 1e-5, "%d %d", r, j);
  }
  dfx__tensor_unref(y);
  dfx__tensor_unref(x);
  kh_node_free(n);
}

/* Empty inputs whose other dims multiply past int64: no overflow (UBSan),
 * no loop over the huge dims, the empty result TF gives. */
Test(nn_hostile, empty_inputs_with_huge_dims, .timeout = 10) {
  const int64_t H = (int64_t)1 << 40;
  char err[512];
  dfx_tensor *out[6];
  struct {
    const char *op;
    int nd;
    int64_t dims[5];
    int32_t axis; /* second input, when the op takes one */
    int64_t want_count;
  } cases[] = {
      {"Cumsum", 3, {H, 0, 1 << 20}, 1, 0},
      {"Cumprod", 3, {0, H, H}, 0, 0},
      {"Softmax", 3, {0, H, H}, -1, 0},
      {"MatrixDeterminant", 3, {0, 1 << 20, 1 << 20}, -1, 0},
      {"LogMatrixDeterminant", 3, {0, 1 << 20, 1 << 20}, -1, 0},
  };
  for (unsigned i = 0; i < sizeof cases / sizeof *cases; i++) {
    dfx_node *n = kh_node_new(cases[i].op);
    kh_attr_type(n, "T", DFX_F32);
    dfx_tensor *in[] = {kh_tensor(DFX_F32, cases[i].nd, cases[i].dims, NULL), kh_scalar_i32(cases[i].axis)};
    int nin = n->def->n_in;
    cr_assert_eq(run1(n, in, nin, out, err), DFX_OK, "%s: %s", cases[i].op, err);
    cr_expect_eq(out[0]->count, cases[i].want_count, "%s", cases[i].op);
    unref_all(out, n->n_out);
    unref_all(in, 2);
    kh_node_free(n);
  }
  /* Sum over the two huge dims: their count overflows. */
  int64_t de[] = {0, H, H}, two = 2;
  int32_t axes[] = {1, 2};
  dfx_tensor *sin[] = {kh_f32(3, de, NULL), kh_i32(1, &two, axes)};
  dfx_node *sn = kh_node_new("Mean");
  kh_attr_type(sn, "T", DFX_F32);
  cr_assert_eq(run1(sn, sin, 2, out, err), DFX_OK, "%s", err);
  cr_expect_eq(out[0]->count, 0);
  dfx__tensor_unref(out[0]);
  unref_all(sin, 2);
  kh_node_free(sn);
  /* BiasAdd and FusedBatchNorm with channels first: the spatial dims overflow. */
  int64_t dx[] = {0, 3, H, H}, c = 3;
  dfx_tensor *x = kh_f32(4, dx, NULL), *v[4];
  for (int i = 0; i < 4; i++) v[i] = nn_rand(DFX_F32, 1, &c, i + 1);
  dfx_node *n = kh_node_new("BiasAdd");
  kh_attr_type(n, "T", DFX_F32);
  kh_attr_str(n, "data_format", "NCHW");
  dfx_tensor *bin[] = {x, v[0]};
  cr_assert_eq(run1(n, bin, 2, out, err), DFX_OK, "%s", err);
  cr_expect_eq(out[0]->count, 0);
  dfx__tensor_unref(out[0]);
  kh_node_free(n);
  n = kh_node_new("FusedBatchNormV3");
  kh_attr_type(n, "T", DFX_F32);
  kh_attr_type(n, "U", DFX_F32);
  kh_attr_str(n, "data_format", "NCHW");
  kh_attr_bool(n, "is_training", 0);
  dfx_tensor *fin[] = {x, v[0], v[1], v[2], v[3]};
  cr_assert_eq(run1(n, fin, 5, out, err), DFX_OK, "%s", err);
  cr_expect_eq(out[0]->count, 0);
  cr_expect_eq(out[1]->count, 3);
  unref_all(out, 6);
  kh_node_free(n);
  unref_all(v, 4);
  dfx__tensor_unref(x);
}

/* A tall column: Svd's u and Qr's q are m x 1, so the scratch is too
 * (m x m doubles would be 320 GB). */
Test(nn_hostile, tall_svd_and_qr_scratch_follow_the_outputs, .timeout = 30) {
  int64_t d[] = {200000, 1};
  dfx_tensor *x = nn_rand(DFX_F32, 2, d, 3), *out[3];
  double norm = 0;
  for (int64_t i = 0; i < d[0]; i++) norm += tget(x, i) * tget(x, i);
  norm = sqrt(norm);
  char err[512];
  dfx_node *n = kh_node_new("Svd");
  kh_attr_type(n, "T", DFX_F32);
  cr_assert_eq(run1(n, &x, 1, out, err), DFX_OK, "%s", err);
  EXPECT_NEAR(tget(out[0], 0), norm, 1e-5, "singular value");
  cr_expect_eq(out[1]->dims[1], 1);
  unref_all(out, 3);
  kh_node_free(n);
  n = kh_node_new("Qr");
  kh_attr_type(n, "T", DFX_F32);
  cr_assert_eq(run1(n, &x, 1, out, err), DFX_OK, "%s", err);
  EXPECT_NEAR(fabs(tget(out[1], 0)), norm, 1e-5, "R");
  for (int64_t i = 0; i < d[0]; i += 9973)
    EXPECT_NEAR(tget(out[0], i) * tget(out[1], 0), tget(x, i), 1e-4, "Q R at %lld", (long long)i);
  unref_all(out, 2);
  kh_node_free(n);
  dfx__tensor_unref(x);
}

/* Scratch beyond the tensor size limit fails with a message, not a huge
 * allocation: a 64 x 64 half inverse needs 33 KB of doubles. */
Test(nn_hostile, scratch_is_checked_against_the_tensor_limit) {
  int64_t d[] = {64, 64};
  dfx_tensor *x = nn_rand(DFX_F16, 2, d, 4), *y;
  dfx_node *n = kh_node_new("MatrixInverse");
  kh_attr_type(n, "T", DFX_F16);
  size_t old = dfx_set_max_tensor_bytes(16 << 10);
  char err[512];
  dfx_code c = run1(n, &x, 1, &y, err);
  dfx_set_max_tensor_bytes(old);
  cr_expect_eq(c, DFX_ELIMIT, "%s", err);
  cr_expect(strstr(err, "scratch") && strstr(err, "limit"), "%s", err);
  kh_node_free(n);
  dfx__tensor_unref(x);
}

/* 64-bit keys order exactly (2^53 + 1 > 2^53, which double rounds equal);
 * NaN sorts first; -0 ties +0; a 64-bit k is read whole. */
Test(nn_hostile, topk_orders_64_bit_keys_exactly) {
  int64_t d = 3;
  int64_t v[] = {(int64_t)1 << 53, ((int64_t)1 << 53) + 1, -5};
  uint64_t u[] = {UINT64_MAX - 1, UINT64_MAX, 7};
  float f[] = {-0.0f, NAN, 0.0f};
  struct {
    dfx_dtype t;
    const void *data;
    int32_t want[3];
  } cases[] = {{DFX_I64, v, {1, 0, 2}}, {DFX_U64, u, {1, 0, 2}}, {DFX_F32, f, {1, 0, 2}}};
  char err[512];
  for (int i = 0; i < 3; i++) {
    dfx_tensor *x = kh_tensor(cases[i].t, 1, &d, cases[i].data), *k = kh_scalar_i32(3), *out[2];
    dfx_node *n = kh_node_new("TopKV2");
    kh_attr_type(n, "T", cases[i].t);
    dfx_tensor *in[] = {x, k};
    cr_assert_eq(run1(n, in, 2, out, err), DFX_OK, "%s", err);
    cr_expect_arr_eq(out[1]->data, cases[i].want, sizeof cases[i].want, "%s", dfx_dtype_name(cases[i].t));
    unref_all(out, 2);
    dfx__tensor_unref(k);
    kh_node_free(n);
    n = kh_node_new("NthElement");
    kh_attr_type(n, "T", cases[i].t);
    k = kh_scalar_i32(2);
    in[1] = k;
    cr_assert_eq(run1(n, in, 2, out, err), DFX_OK, "%s", err);
    cr_expect_eq(memcmp(out[0]->data, (const char *)cases[i].data + cases[i].want[0] * dfx_dtype_size(cases[i].t),
                        dfx_dtype_size(cases[i].t)),
                 0, "NthElement %s: the largest", dfx_dtype_name(cases[i].t));
    dfx__tensor_unref(out[0]);
    dfx_tensor *all[] = {x, k};
    unref_all(all, 2);
    kh_node_free(n);
  }
  /* k = 2^32 + 1 as int64 must not read as 1. */
  dfx_tensor *x = kh_tensor(DFX_I64, 1, &d, v), *k = nn_iscalar(DFX_I64, ((int64_t)1 << 32) + 1), *out[2];
  dfx_node *n = kh_node_new("TopKV2");
  kh_attr_type(n, "T", DFX_I64);
  kh_attr_type(n, "Tk", DFX_I64);
  dfx_tensor *in[] = {x, k};
  cr_expect_eq(run1(n, in, 2, out, err), DFX_EINVAL);
  cr_expect(strstr(err, "needed 4294967297"), "%s", err);
  kh_node_free(n);
  dfx__tensor_unref(x);
  dfx__tensor_unref(k);
}
