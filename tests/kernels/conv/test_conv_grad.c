/* test_conv_grad.c - the backprop kernels of kernels/conv/conv_grad.c:
 * hand-computed values (VALID and SAME windows, depth multipliers, padding
 * excluded from averages), float64 against float32, and errors. The
 * autodiff tests check the same kernels numerically against the forward
 * ops (tests/autodiff/test_grad_nn.c). */
#include <criterion/criterion.h>

#include "ctest.h"

static dfx_node *node(const char *op, const char *pad, const int64_t *ks) {
  dfx_node *n = kh_node_new(op);
  kh_attr_type(n, "T", DFX_F64);
  kh_attr_ints(n, "strides", ks ? ks : (int64_t[]){1, 1, 1, 1}, 4);
  if (ks) kh_attr_ints(n, "ksize", ks, 4);
  kh_attr_str(n, "padding", pad);
  return n;
}

/* Input 1..9 (1x3x3x1), out_backprop of ones (2x2), VALID: each filter tap
 * sums the 2x2 block of inputs it touched. */
Test(conv_grad, conv2d_backprop_filter_known_values) {
  dfx_node *n = node("Conv2DBackpropFilter", "VALID", NULL);
  dfx_tensor *in[3] = {ct_tensor(DFX_F64, 4, (int64_t[]){1, 3, 3, 1}, (double[]){1, 2, 3, 4, 5, 6, 7, 8, 9}),
                       kh_i32(1, (int64_t[]){4}, (int32_t[]){2, 2, 1, 1}),
                       ct_tensor(DFX_F64, 4, (int64_t[]){1, 2, 2, 1}, (double[]){1, 1, 1, 1})};
  dfx_tensor *o[1];
  ct_run(n, in, 3, o, 1);
  ct_expect(o[0], DFX_F64, 4, (int64_t[]){2, 2, 1, 1}, (double[]){12, 16, 24, 28}, 0, "filter grad");
  ct_free(o, 1);
  /* errors: filter_sizes of the wrong length, out_backprop of the wrong size */
  dfx_tensor *bad_sz = kh_i32(1, (int64_t[]){3}, (int32_t[]){2, 2, 1});
  ct_fail(n, (dfx_tensor *[]){in[0], bad_sz, in[2]}, 3, "filter_sizes must have 4 values");
  dfx_tensor *bad_dy = ct_tensor(DFX_F64, 4, (int64_t[]){1, 3, 2, 1}, (double[]){1, 2, 3, 4, 5, 6});
  ct_fail(n, (dfx_tensor *[]){in[0], in[1], bad_dy}, 3, "the forward op gives 2");
  ct_free(&bad_sz, 1);
  ct_free(&bad_dy, 1);
  ct_free(in, 3);
  kh_node_free(n);
}

/* Depth multiplier 2: tap (a, b, 0, m) gets x[a][b] * dy[m]. */
Test(conv_grad, depthwise_backprop_filter_known_values) {
  dfx_node *n = node("DepthwiseConv2dNativeBackpropFilter", "VALID", NULL);
  dfx_tensor *in[3] = {ct_tensor(DFX_F64, 4, (int64_t[]){1, 2, 2, 1}, (double[]){1, 2, 3, 4}),
                       kh_i32(1, (int64_t[]){4}, (int32_t[]){2, 2, 1, 2}),
                       ct_tensor(DFX_F64, 4, (int64_t[]){1, 1, 1, 2}, (double[]){1, 10})};
  dfx_tensor *o[1];
  ct_run(n, in, 3, o, 1);
  ct_expect(o[0], DFX_F64, 4, (int64_t[]){2, 2, 1, 2}, (double[]){1, 10, 2, 20, 3, 30, 4, 40}, 0, "depthwise");
  ct_free(o, 1);
  ct_free(in, 3);
  kh_node_free(n);
}

/* The window's maximum (4, at index 1) takes the whole gradient. */
Test(conv_grad, max_pool_grad_known_values) {
  dfx_node *n = node("MaxPoolGrad", "VALID", (int64_t[]){1, 2, 2, 1});
  dfx_tensor *in[3] = {ct_tensor(DFX_F64, 4, (int64_t[]){1, 2, 2, 1}, (double[]){1, 4, 3, 2}),
                       ct_tensor(DFX_F64, 4, (int64_t[]){1, 1, 1, 1}, (double[]){4}),
                       ct_tensor(DFX_F64, 4, (int64_t[]){1, 1, 1, 1}, (double[]){5})};
  dfx_tensor *o[1];
  ct_run(n, in, 3, o, 1);
  ct_expect(o[0], DFX_F64, 4, (int64_t[]){1, 2, 2, 1}, (double[]){0, 5, 0, 0}, 0, "max pool grad");
  ct_free(o, 1);
  ct_free(in, 3);
  kh_node_free(n);
}

/* SAME on 3x3 with 2x2 windows, stride 2: windows of 4, 2, 2 and 1 valid
 * inputs (padding is not counted), so gradients 4, 2, 2, 1 give ones. */
Test(conv_grad, avg_pool_grad_excludes_padding) {
  dfx_node *n = node("AvgPoolGrad", "SAME", (int64_t[]){1, 2, 2, 1});
  kh_attr_ints(n, "strides", (int64_t[]){1, 2, 2, 1}, 4);
  dfx_tensor *in[2] = {kh_i32(1, (int64_t[]){4}, (int32_t[]){1, 3, 3, 1}),
                       ct_tensor(DFX_F64, 4, (int64_t[]){1, 2, 2, 1}, (double[]){4, 2, 2, 1})};
  dfx_tensor *o[1];
  ct_run(n, in, 2, o, 1);
  ct_expect(o[0], DFX_F64, 4, (int64_t[]){1, 3, 3, 1}, (double[]){1, 1, 1, 1, 1, 1, 1, 1, 1}, 0, "avg pool grad");
  ct_free(o, 1);
  ct_free(in, 2);
  kh_node_free(n);
}

/* float32 gives the float64 values (accumulation is in double either way). */
Test(conv_grad, float32_matches_float64) {
  unsigned seed = 7;
  double x[2 * 4 * 4 * 3], dy[2 * 2 * 2 * 4];
  for (size_t i = 0; i < sizeof x / sizeof *x; i++) x[i] = ct_rand(&seed);
  for (size_t i = 0; i < sizeof dy / sizeof *dy; i++) dy[i] = ct_rand(&seed);
  dfx_tensor *o64[1], *o32[1];
  for (int k = 0; k < 2; k++) {
    dfx_dtype dt = k ? DFX_F32 : DFX_F64;
    dfx_node *n = node("Conv2DBackpropFilter", "SAME", NULL);
    kh_attr_type(n, "T", dt);
    kh_attr_ints(n, "strides", (int64_t[]){1, 2, 2, 1}, 4);
    dfx_tensor *in[3] = {ct_tensor(dt, 4, (int64_t[]){2, 4, 4, 3}, x), kh_i32(1, (int64_t[]){4}, (int32_t[]){3, 3, 3, 4}),
                         ct_tensor(dt, 4, (int64_t[]){2, 2, 2, 4}, dy)};
    ct_run(n, in, 3, k ? o32 : o64, 1);
    ct_free(in, 3);
    kh_node_free(n);
  }
  double want[3 * 3 * 3 * 4];
  ct_read(o64[0], want);
  ct_expect(o32[0], DFX_F32, 4, (int64_t[]){3, 3, 3, 4}, want, ct_tol(DFX_F32), "f32 vs f64");
  ct_free(o64, 1);
  ct_free(o32, 1);
}
