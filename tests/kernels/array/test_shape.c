/* test_shape.c - Reshape, ExpandDims, Squeeze, Shape, ShapeN, Size, Rank,
 * EnsureShape, BroadcastArgs, BroadcastGradientArgs, Fill, Empty, DeepCopy,
 * Range and LinSpace against hand-computed TensorFlow results. */
#include "atest.h"

/* Runs a one-output node with inputs (all borrowed) and checks the output. */
static void one(dfx_node *n, dfx_tensor **in, int nin, dfx_dtype dt, int nd, const int64_t *dims, const double *v) {
  dfx_tensor *out[1];
  arun(n, in, nin, out);
  acheck(out[0], dt, nd, dims, v);
  dfx__tensor_unref(out[0]);
}

ATEST(reshape, infer_and_errors) {
  dfx_dtype dts[DFX_DTYPE_END_];
  int ndt = adtypes("Reshape", "T", dts);
  for (int di = 0; di < ndt; di++) {
    dfx_dtype dt = dts[di];
    dfx_node *n = kh_node_new("Reshape");
    kh_attr_type(n, "T", dt);
    dfx_tensor *in[2] = {aseq(dt, 2, (int64_t[]){2, 3}), ai32v(2, (int32_t[]){3, -1})};
    double want[6];
    for (int i = 0; i < 6; i++) want[i] = aval(dt, i);
    one(n, in, 2, dt, 2, (int64_t[]){3, 2}, want);
    dfx__tensor_unref(in[1]);
    in[1] = ai32v(1, (int32_t[]){-1});
    one(n, in, 2, dt, 1, (int64_t[]){6}, want);
    dfx__tensor_unref(in[1]);
    in[1] = ai32v(2, (int32_t[]){-1, -1});
    aerr(n, in, 2, "only one input size may be -1, not both 0 and 1");
    dfx__tensor_unref(in[1]);
    in[1] = ai32v(2, (int32_t[]){4, -1});
    aerr(n, in, 2, "Input to reshape is a tensor with 6 values, but the requested shape requires a multiple of 4");
    dfx__tensor_unref(in[1]);
    in[1] = ai32v(2, (int32_t[]){4, 2});
    aerr(n, in, 2, "Input to reshape is a tensor with 6 values, but the requested shape has 8");
    dfx__tensor_unref(in[1]);
    in[1] = ai32v(2, (int32_t[]){-2, 3});
    aerr(n, in, 2, "size 0 must be non-negative, not -2");
    afree(in, 2);
    kh_node_free(n);
  }
  dfx_node *n = kh_node_new("Reshape");
  kh_attr_type(n, "T", DFX_F32);
  kh_attr_type(n, "Tshape", DFX_I64);
  dfx_tensor *in[2] = {avals(DFX_F32, 2, (int64_t[]){0, 3}, NULL), ai64v(2, (int64_t[]){-1, 0})};
  one(n, in, 2, DFX_F32, 2, (int64_t[]){3, 0}, NULL);
  dfx__tensor_unref(in[1]);
  in[1] = ai64v(3, (int64_t[]){-1, 3, 1});
  one(n, in, 2, DFX_F32, 3, (int64_t[]){0, 3, 1}, NULL);
  dfx__tensor_unref(in[0]);
  in[0] = kh_scalar_f32(5);
  dfx__tensor_unref(in[1]);
  in[1] = ai64v(0, NULL);
  one(n, in, 2, DFX_F32, 0, NULL, (double[]){5});
  afree(in, 2);
  kh_node_free(n);
}

ATEST(expand_dims, positions) {
  dfx_node *n = kh_node_new("ExpandDims");
  kh_attr_type(n, "T", DFX_STRING);
  dfx_tensor *in[2] = {aseq(DFX_STRING, 2, (int64_t[]){2, 3}), kh_scalar_i32(-1)};
  one(n, in, 2, DFX_STRING, 3, (int64_t[]){2, 3, 1}, (double[]){0, 1, 2, 3, 4, 5});
  dfx__tensor_unref(in[1]);
  in[1] = kh_scalar_i32(-3);
  one(n, in, 2, DFX_STRING, 3, (int64_t[]){1, 2, 3}, NULL);
  dfx__tensor_unref(in[1]);
  in[1] = kh_scalar_i32(1);
  one(n, in, 2, DFX_STRING, 3, (int64_t[]){2, 1, 3}, NULL);
  dfx__tensor_unref(in[1]);
  in[1] = kh_scalar_i32(3);
  aerr(n, in, 2, "Tried to expand dim index 3 for tensor with 2 dimensions.");
  afree(in, 2);
  kh_node_free(n);
}

ATEST(squeeze, all_and_listed) {
  dfx_node *n = kh_node_new("Squeeze");
  kh_attr_type(n, "T", DFX_F16);
  dfx_tensor *x = avals(DFX_F16, 3, (int64_t[]){1, 2, 1}, (double[]){1.5, -2});
  one(n, &x, 1, DFX_F16, 1, (int64_t[]){2}, (double[]){1.5, -2});
  kh_attr_ints(n, "squeeze_dims", (int64_t[]){-1}, 1);
  one(n, &x, 1, DFX_F16, 2, (int64_t[]){1, 2}, NULL);
  kh_attr_ints(n, "squeeze_dims", (int64_t[]){1}, 1);
  aerr(n, &x, 1, "Can not squeeze dim[1], expected a dimension of 1, got 2");
  kh_attr_ints(n, "squeeze_dims", (int64_t[]){3}, 1);
  aerr(n, &x, 1, "Tried to squeeze dim index 3 for tensor with 3 dimensions.");
  dfx__tensor_unref(x);
  kh_node_free(n);
}

ATEST(shape, shape_size_rank) {
  dfx_tensor *x = avals(DFX_BOOL, 3, (int64_t[]){2, 0, 5}, NULL), *out[2];
  dfx_node *n = kh_node_new("Shape");
  kh_attr_type(n, "T", DFX_BOOL);
  one(n, &x, 1, DFX_I32, 1, (int64_t[]){3}, (double[]){2, 0, 5});
  kh_attr_type(n, "out_type", DFX_I64);
  one(n, &x, 1, DFX_I64, 1, (int64_t[]){3}, (double[]){2, 0, 5});
  kh_node_free(n);
  n = kh_node_new("Size");
  kh_attr_type(n, "T", DFX_BOOL);
  one(n, &x, 1, DFX_I32, 0, NULL, (double[]){0});
  kh_node_free(n);
  n = kh_node_new("Rank");
  kh_attr_type(n, "T", DFX_BOOL);
  one(n, &x, 1, DFX_I32, 0, NULL, (double[]){3});
  kh_node_free(n);
  n = kh_node_new("ShapeN");
  kh_attr_int(n, "N", 2);
  kh_attr_type(n, "T", DFX_BOOL);
  kh_attr_type(n, "out_type", DFX_I64);
  dfx_tensor *in[2] = {x, kh_bool(0, NULL, (uint8_t[]){1})};
  cr_assert_eq(arun(n, in, 2, out), 2);
  acheck(out[0], DFX_I64, 1, (int64_t[]){3}, (double[]){2, 0, 5});
  acheck(out[1], DFX_I64, 1, (int64_t[]){0}, NULL);
  afree(out, 2);
  dfx__tensor_unref(in[1]);
  kh_node_free(n);
  n = kh_node_new("EnsureShape");
  kh_attr_type(n, "T", DFX_BOOL);
  kh_attr_shape(n, "shape", 3, (int64_t[]){2, -1, 5});
  one(n, &x, 1, DFX_BOOL, 3, (int64_t[]){2, 0, 5}, NULL);
  kh_attr_shape(n, "shape", 3, (int64_t[]){2, -1, 4});
  aerr(n, &x, 1, "Shape of tensor input [2,0,5] is not compatible with expected shape [2,?,4].");
  kh_attr_shape(n, "shape", -1, NULL);
  one(n, &x, 1, DFX_BOOL, 3, (int64_t[]){2, 0, 5}, NULL);
  kh_node_free(n);
  dfx__tensor_unref(x);
}

ATEST(broadcast_args, args_and_gradient_args) {
  dfx_node *n = kh_node_new("BroadcastArgs");
  dfx_tensor *in[2] = {ai32v(3, (int32_t[]){2, 1, 3}), ai32v(2, (int32_t[]){4, 1})}, *out[2];
  one(n, in, 2, DFX_I32, 1, (int64_t[]){3}, (double[]){2, 4, 3});
  kh_node_free(n);
  n = kh_node_new("BroadcastGradientArgs");
  arun(n, in, 2, out);
  acheck(out[0], DFX_I32, 1, (int64_t[]){1}, (double[]){1});
  acheck(out[1], DFX_I32, 1, (int64_t[]){2}, (double[]){0, 2});
  afree(out, 2);
  afree(in, 2);
  in[0] = ai32v(1, (int32_t[]){1});
  in[1] = ai32v(2, (int32_t[]){1, 1});
  arun(n, in, 2, out);
  acheck(out[0], DFX_I32, 1, (int64_t[]){2}, (double[]){0, 1});
  acheck(out[1], DFX_I32, 1, (int64_t[]){2}, (double[]){0, 1});
  afree(out, 2);
  dfx__tensor_unref(in[1]);
  in[1] = ai32v(1, (int32_t[]){3});
  dfx__tensor_unref(in[0]);
  in[0] = ai32v(1, (int32_t[]){2});
  aerr(n, in, 2, "Incompatible shapes: [2] vs. [3]");
  afree(in, 2);
  kh_node_free(n);
}

ATEST(fill, dtypes_and_errors) {
  dfx_dtype dts[DFX_DTYPE_END_];
  int ndt = adtypes("Fill", "T", dts);
  for (int di = 0; di < ndt; di++) {
    dfx_dtype dt = dts[di];
    dfx_node *n = kh_node_new("Fill");
    kh_attr_type(n, "T", dt);
    kh_attr_type(n, "index_type", DFX_I64);
    dfx_tensor *in[2] = {ai64v(2, (int64_t[]){2, 3}), avals(dt, 0, NULL, (double[]){1})};
    one(n, in, 2, dt, 2, (int64_t[]){2, 3}, (double[]){1, 1, 1, 1, 1, 1});
    dfx__tensor_unref(in[0]);
    in[0] = ai64v(2, (int64_t[]){2, -1});
    aerr(n, in, 2, "must be >= 0");
    dfx__tensor_unref(in[0]);
    in[0] = ai64v(0, NULL);
    one(n, in, 2, dt, 0, NULL, (double[]){1});
    dfx__tensor_unref(in[1]);
    in[1] = avals(dt, 1, (int64_t[]){1}, NULL);
    aerr(n, in, 2, "value must be a scalar, got shape [1]");
    afree(in, 2);
    kh_node_free(n);
  }
}

ATEST(empty, zeros_and_deep_copy) {
  dfx_node *n = kh_node_new("Empty");
  kh_attr_type(n, "dtype", DFX_F64);
  kh_attr_bool(n, "init", 1);
  dfx_tensor *s = ai32v(2, (int32_t[]){2, 2});
  one(n, &s, 1, DFX_F64, 2, (int64_t[]){2, 2}, (double[]){0, 0, 0, 0});
  dfx__tensor_unref(s);
  kh_node_free(n);
  n = kh_node_new("DeepCopy");
  kh_attr_type(n, "T", DFX_STRING);
  dfx_tensor *x = aseq(DFX_STRING, 1, (int64_t[]){3}), *out[1];
  arun(n, &x, 1, out);
  acheck(out[0], DFX_STRING, 1, (int64_t[]){3}, (double[]){0, 1, 2});
  cr_assert_neq(out[0]->data, x->data);
  cr_assert_neq(((dfx_str *)out[0]->data)[1].ptr, ((dfx_str *)x->data)[1].ptr);
  afree(out, 1);
  dfx__tensor_unref(x);
  kh_node_free(n);
}

ATEST(range, ints_floats_errors) {
  dfx_node *n = kh_node_new("Range");
  dfx_tensor *in[3] = {kh_scalar_i32(0), kh_scalar_i32(10), kh_scalar_i32(3)};
  one(n, in, 3, DFX_I32, 1, (int64_t[]){4}, (double[]){0, 3, 6, 9});
  afree(in, 3);
  in[0] = kh_scalar_i32(10), in[1] = kh_scalar_i32(0), in[2] = kh_scalar_i32(-3);
  one(n, in, 3, DFX_I32, 1, (int64_t[]){4}, (double[]){10, 7, 4, 1});
  dfx__tensor_unref(in[1]);
  in[1] = kh_scalar_i32(10);
  one(n, in, 3, DFX_I32, 1, (int64_t[]){0}, NULL);
  dfx__tensor_unref(in[1]);
  in[1] = kh_scalar_i32(11);
  aerr(n, in, 3, "Requires start >= limit when delta < 0: 10/11");
  dfx__tensor_unref(in[2]);
  in[2] = kh_scalar_i32(0);
  aerr(n, in, 3, "Requires delta != 0: 0");
  afree(in, 3);
  kh_node_free(n);

  n = kh_node_new("Range");
  kh_attr_type(n, "Tidx", DFX_F32);
  in[0] = kh_scalar_f32(0), in[1] = kh_scalar_f32(1), in[2] = kh_scalar_f32(0.3f);
  float a = 0.3f, b = a + 0.3f, c = b + 0.3f;
  one(n, in, 3, DFX_F32, 1, (int64_t[]){4}, (double[]){0, a, b, c});
  dfx__tensor_unref(in[1]);
  in[1] = kh_scalar_f32(-1);
  aerr(n, in, 3, "Requires start <= limit when delta > 0");
  afree(in, 3);
  kh_node_free(n);

  n = kh_node_new("Range");
  kh_attr_type(n, "Tidx", DFX_I64);
  in[0] = kh_i64(0, NULL, (int64_t[]){-5}), in[1] = kh_i64(0, NULL, (int64_t[]){5}),
  in[2] = kh_i64(0, NULL, (int64_t[]){4});
  one(n, in, 3, DFX_I64, 1, (int64_t[]){3}, (double[]){-5, -1, 3});
  dfx__tensor_unref(in[1]);
  in[1] = kh_i32(1, (int64_t[]){1}, (int32_t[]){5});
  aerr(n, in, 3, "limit must be a scalar, not shape [1]");
  afree(in, 3);
  kh_node_free(n);
}

ATEST(linspace, values_and_errors) {
  dfx_node *n = kh_node_new("LinSpace");
  kh_attr_type(n, "T", DFX_F64);
  dfx_tensor *in[3] = {avals(DFX_F64, 0, NULL, (double[]){0}), avals(DFX_F64, 0, NULL, (double[]){1}),
                       kh_scalar_i32(5)};
  one(n, in, 3, DFX_F64, 1, (int64_t[]){5}, (double[]){0, 0.25, 0.5, 0.75, 1});
  dfx__tensor_unref(in[2]);
  in[2] = kh_scalar_i32(1);
  one(n, in, 3, DFX_F64, 1, (int64_t[]){1}, (double[]){0});
  dfx__tensor_unref(in[2]);
  in[2] = kh_scalar_i32(0);
  aerr(n, in, 3, "Requires num > 0: 0");
  afree(in, 3);
  kh_node_free(n);
}
