/* test_pad_diag.c - Pad, PadV2, MirrorPad, Roll, ReverseSequence, Diag,
 * DiagPart, MatrixDiag*, MatrixDiagPart*, MatrixSetDiag*, MatrixBandPart,
 * Where and OneHot against TensorFlow's documented results. */
#include "atest.h"

static void one(dfx_node *n, dfx_tensor **in, int nin, dfx_dtype dt, int nd, const int64_t *dims, const double *v) {
  dfx_tensor *out[1];
  arun(n, in, nin, out);
  acheck(out[0], dt, nd, dims, v);
  dfx__tensor_unref(out[0]);
}

ATEST(pad, pad_and_padv2_all_dtypes) {
  dfx_dtype dts[DFX_DTYPE_END_];
  int ndt = adtypes("Pad", "T", dts);
  for (int di = 0; di < ndt; di++) {
    dfx_dtype dt = dts[di];
    dfx_node *n = kh_node_new("Pad");
    kh_attr_type(n, "T", dt);
    dfx_tensor *in[3] = {avals(dt, 2, (int64_t[]){2, 2}, (double[]){1, 0, 1, 1}),
                         kh_i32(2, (int64_t[]){2, 2}, (int32_t[]){1, 0, 0, 2}), NULL};
    one(n, in, 2, dt, 2, (int64_t[]){3, 4}, (double[]){0, 0, 0, 0, 1, 0, 0, 0, 1, 1, 0, 0});
    kh_node_free(n);
    afree(in, 2);
  }
  ndt = adtypes("PadV2", "T", dts);
  for (int di = 0; di < ndt; di++) {
    dfx_dtype dt = dts[di];
    dfx_node *n = kh_node_new("PadV2");
    kh_attr_type(n, "T", dt);
    kh_attr_type(n, "Tpaddings", DFX_I64);
    dfx_tensor *in[3] = {avals(dt, 2, (int64_t[]){2, 2}, (double[]){0, 1, 1, 0}),
                         kh_i64(2, (int64_t[]){2, 2}, (int64_t[]){0, 1, 1, 0}),
                         avals(dt, 0, NULL, (double[]){1})};
    one(n, in, 3, dt, 2, (int64_t[]){3, 3}, (double[]){1, 0, 1, 1, 1, 0, 1, 1, 1});
    dfx__tensor_unref(in[1]);
    in[1] = kh_i64(2, (int64_t[]){2, 2}, (int64_t[]){0, -1, 1, 0});
    aerr(n, in, 3, "Paddings must be non-negative: 0 -1");
    dfx__tensor_unref(in[1]);
    in[1] = kh_i64(2, (int64_t[]){1, 2}, (int64_t[]){0, 1});
    aerr(n, in, 3, "The first dimension of paddings must be the rank of inputs");
    afree(in, 3);
    kh_node_free(n);
  }
}

ATEST(mirror_pad, reflect_symmetric) {
  dfx_node *n = kh_node_new("MirrorPad");
  kh_attr_type(n, "T", DFX_STRING);
  kh_attr_str(n, "mode", "REFLECT");
  dfx_tensor *in[2] = {avals(DFX_STRING, 2, (int64_t[]){2, 3}, (double[]){1, 2, 3, 4, 5, 6}),
                       kh_i32(2, (int64_t[]){2, 2}, (int32_t[]){1, 1, 2, 2})};
  one(n, in, 2, DFX_STRING, 2, (int64_t[]){4, 7},
      (double[]){6, 5, 4, 5, 6, 5, 4, 3, 2, 1, 2, 3, 2, 1, 6, 5, 4, 5, 6, 5, 4, 3, 2, 1, 2, 3, 2, 1});
  kh_attr_str(n, "mode", "SYMMETRIC");
  one(n, in, 2, DFX_STRING, 2, (int64_t[]){4, 7},
      (double[]){2, 1, 1, 2, 3, 3, 2, 2, 1, 1, 2, 3, 3, 2, 5, 4, 4, 5, 6, 6, 5, 5, 4, 4, 5, 6, 6, 5});
  dfx__tensor_unref(in[1]);
  in[1] = kh_i32(2, (int64_t[]){2, 2}, (int32_t[]){0, 0, 3, 0});
  one(n, in, 2, DFX_STRING, 2, (int64_t[]){2, 6}, (double[]){3, 2, 1, 1, 2, 3, 6, 5, 4, 4, 5, 6});
  kh_attr_str(n, "mode", "REFLECT");
  aerr(n, in, 2, "paddings must be less than the dimension size: 3, 0 not less than 3");
  afree(in, 2);
  kh_node_free(n);
}

ATEST(roll, shifts_and_axes) {
  dfx_node *n = kh_node_new("Roll");
  kh_attr_type(n, "T", DFX_I64);
  kh_attr_type(n, "Tshift", DFX_I32);
  kh_attr_type(n, "Taxis", DFX_I32);
  dfx_tensor *in[3] = {avals(DFX_I64, 1, (int64_t[]){10}, NULL), kh_scalar_i32(2), kh_scalar_i32(0)};
  one(n, in, 3, DFX_I64, 1, (int64_t[]){10}, (double[]){8, 9, 0, 1, 2, 3, 4, 5, 6, 7});
  afree(in, 3);
  in[0] = avals(DFX_I64, 2, (int64_t[]){2, 5}, NULL);
  in[1] = ai32v(2, (int32_t[]){1, 1});
  in[2] = ai32v(2, (int32_t[]){0, 1});
  one(n, in, 3, DFX_I64, 2, (int64_t[]){2, 5}, (double[]){9, 5, 6, 7, 8, 4, 0, 1, 2, 3});
  dfx__tensor_unref(in[1]);
  dfx__tensor_unref(in[2]);
  in[1] = ai32v(2, (int32_t[]){2, -3});
  in[2] = ai32v(2, (int32_t[]){1, -1});
  one(n, in, 3, DFX_I64, 2, (int64_t[]){2, 5}, (double[]){1, 2, 3, 4, 0, 6, 7, 8, 9, 5});
  dfx__tensor_unref(in[2]);
  in[2] = ai32v(2, (int32_t[]){1, 2});
  aerr(n, in, 3, "axis 2 is out of range");
  afree(in, 3);
  kh_node_free(n);
}

ATEST(reverse_sequence, batch_and_seq_dims) {
  dfx_node *n = kh_node_new("ReverseSequence");
  kh_attr_type(n, "T", DFX_F32);
  kh_attr_int(n, "seq_dim", 1);
  dfx_tensor *in[2] = {avals(DFX_F32, 2, (int64_t[]){2, 4}, NULL), ai64v(2, (int64_t[]){3, 1})};
  one(n, in, 2, DFX_F32, 2, (int64_t[]){2, 4}, (double[]){2, 1, 0, 3, 4, 5, 6, 7});
  afree(in, 2);
  kh_attr_int(n, "seq_dim", 0);
  kh_attr_int(n, "batch_dim", 1);
  in[0] = avals(DFX_F32, 2, (int64_t[]){3, 2}, NULL);
  in[1] = ai64v(2, (int64_t[]){2, 3});
  one(n, in, 2, DFX_F32, 2, (int64_t[]){3, 2}, (double[]){2, 5, 0, 3, 4, 1});
  dfx__tensor_unref(in[1]);
  in[1] = ai64v(2, (int64_t[]){2, 4});
  aerr(n, in, 2, "seq_lens(1) > input.dims(0)");
  afree(in, 2);
  kh_node_free(n);
}

ATEST(diag, diag_and_part) {
  dfx_node *n = kh_node_new("Diag");
  kh_attr_type(n, "T", DFX_F64);
  dfx_tensor *x = avals(DFX_F64, 1, (int64_t[]){2}, (double[]){1, 2}), *out[1];
  arun(n, &x, 1, out);
  acheck(out[0], DFX_F64, 2, (int64_t[]){2, 2}, (double[]){1, 0, 0, 2});
  kh_node_free(n);
  n = kh_node_new("DiagPart");
  kh_attr_type(n, "T", DFX_F64);
  one(n, out, 1, DFX_F64, 1, (int64_t[]){2}, (double[]){1, 2});
  aerr(n, &x, 1, "The rank of the tensor should be even and positive, got shape [2]");
  afree(out, 1);
  dfx__tensor_unref(x);
  kh_node_free(n);
}

ATEST(matrix_diag, v1_v2_v3) {
  dfx_node *n = kh_node_new("MatrixDiag");
  kh_attr_type(n, "T", DFX_I32);
  dfx_tensor *x = avals(DFX_I32, 2, (int64_t[]){2, 2}, (double[]){1, 2, 3, 4});
  one(n, &x, 1, DFX_I32, 3, (int64_t[]){2, 2, 2}, (double[]){1, 0, 0, 2, 3, 0, 0, 4});
  kh_node_free(n);
  n = kh_node_new("MatrixDiagPart");
  kh_attr_type(n, "T", DFX_I32);
  dfx__tensor_unref(x);
  x = avals(DFX_I32, 2, (int64_t[]){2, 3}, NULL);
  one(n, &x, 1, DFX_I32, 1, (int64_t[]){2}, (double[]){0, 4});
  kh_node_free(n);
  n = kh_node_new("MatrixSetDiag");
  kh_attr_type(n, "T", DFX_I32);
  dfx_tensor *in[3] = {x, ai32v(2, (int32_t[]){9, 8}), NULL};
  one(n, in, 2, DFX_I32, 2, (int64_t[]){2, 3}, (double[]){9, 1, 2, 3, 8, 5});
  dfx__tensor_unref(in[1]);
  in[1] = ai32v(3, (int32_t[]){9, 8, 7});
  aerr(n, in, 2, "diagonal must have shape");
  dfx__tensor_unref(in[1]);
  dfx__tensor_unref(x);
  kh_node_free(n);

  /* TF's documented band example: k = (-1, 1), RIGHT_LEFT. */
  const double packed[9] = {0, 8, 9, 1, 2, 3, 4, 5, 0};
  const double mat[9] = {1, 8, 0, 4, 2, 9, 0, 5, 3};
  n = kh_node_new("MatrixDiagV3");
  kh_attr_type(n, "T", DFX_BF16);
  dfx_tensor *d5[5] = {avals(DFX_BF16, 2, (int64_t[]){3, 3}, packed), ai32v(2, (int32_t[]){-1, 1}), kh_scalar_i32(-1),
                       kh_scalar_i32(-1), avals(DFX_BF16, 0, NULL, (double[]){0})};
  one(n, d5, 5, DFX_BF16, 2, (int64_t[]){3, 3}, mat);
  kh_node_free(n);
  n = kh_node_new("MatrixDiagPartV3");
  kh_attr_type(n, "T", DFX_BF16);
  dfx_tensor *p3[3] = {avals(DFX_BF16, 2, (int64_t[]){3, 3}, mat), d5[1], d5[4]};
  one(n, p3, 3, DFX_BF16, 2, (int64_t[]){3, 3}, packed);
  dfx__tensor_unref(d5[1]);
  d5[1] = ai32v(2, (int32_t[]){-3, 1});
  p3[1] = d5[1];
  aerr(n, p3, 3, "lower_diag_index is out of bound: -3");
  kh_node_free(n);
  n = kh_node_new("MatrixSetDiagV3");
  kh_attr_type(n, "T", DFX_BF16);
  dfx__tensor_unref(d5[1]);
  d5[1] = ai32v(2, (int32_t[]){-1, 1});
  dfx_tensor *s3[3] = {avals(DFX_BF16, 2, (int64_t[]){3, 3}, (double[]){7, 7, 7, 7, 7, 7, 7, 7, 7}), d5[0], d5[1]};
  one(n, s3, 3, DFX_BF16, 2, (int64_t[]){3, 3}, (double[]){1, 8, 7, 4, 2, 9, 7, 5, 3});
  dfx__tensor_unref(s3[0]);
  dfx__tensor_unref(p3[0]);
  kh_node_free(n);

  /* V2 (LEFT_LEFT), a single superdiagonal in a 3x4 matrix padded with 9. */
  n = kh_node_new("MatrixDiagV2");
  kh_attr_type(n, "T", DFX_BF16);
  dfx__tensor_unref(d5[0]);
  dfx__tensor_unref(d5[1]);
  dfx__tensor_unref(d5[2]);
  dfx__tensor_unref(d5[4]);
  d5[0] = avals(DFX_BF16, 1, (int64_t[]){3}, (double[]){1, 2, 3});
  d5[1] = kh_scalar_i32(1);
  d5[2] = kh_scalar_i32(3);
  d5[4] = avals(DFX_BF16, 0, NULL, (double[]){9});
  one(n, d5, 5, DFX_BF16, 2, (int64_t[]){3, 4}, (double[]){9, 1, 9, 9, 9, 9, 2, 9, 9, 9, 9, 3});
  dfx__tensor_unref(d5[2]);
  d5[2] = kh_scalar_i32(2);
  aerr(n, d5, 5, "The number of rows or columns is not consistent");
  afree(d5, 5);
  kh_node_free(n);
}

ATEST(matrix_band_part, lower_upper) {
  dfx_node *n = kh_node_new("MatrixBandPart");
  kh_attr_type(n, "T", DFX_F32);
  dfx_tensor *in[3] = {avals(DFX_F32, 2, (int64_t[]){4, 4}, NULL), kh_i64(0, NULL, (int64_t[]){1}),
                       kh_i64(0, NULL, (int64_t[]){-1})};
  one(n, in, 3, DFX_F32, 2, (int64_t[]){4, 4}, (double[]){0, 1, 2, 3, 4, 5, 6, 7, 0, 9, 10, 11, 0, 0, 14, 15});
  dfx__tensor_unref(in[2]);
  in[2] = kh_i64(0, NULL, (int64_t[]){0});
  one(n, in, 3, DFX_F32, 2, (int64_t[]){4, 4}, (double[]){0, 0, 0, 0, 4, 5, 0, 0, 0, 9, 10, 0, 0, 0, 14, 15});
  dfx__tensor_unref(in[1]);
  in[1] = kh_i64(0, NULL, (int64_t[]){5});
  aerr(n, in, 3, "num_lower must be negative or less or equal to number of rows (4) got: 5");
  afree(in, 3);
  kh_node_free(n);
}

ATEST(where, bool_float_rank0) {
  dfx_node *n = kh_node_new("Where");
  dfx_tensor *x = kh_bool(2, (int64_t[]){2, 2}, (uint8_t[]){1, 0, 0, 1});
  one(n, &x, 1, DFX_I64, 2, (int64_t[]){2, 2}, (double[]){0, 0, 1, 1});
  dfx__tensor_unref(x);
  kh_attr_type(n, "T", DFX_F32);
  x = kh_f32(1, (int64_t[]){4}, (float[]){0, -0.0f, NAN, 2});
  one(n, &x, 1, DFX_I64, 2, (int64_t[]){2, 1}, (double[]){2, 3});
  dfx__tensor_unref(x);
  x = kh_scalar_f32(3);
  one(n, &x, 1, DFX_I64, 2, (int64_t[]){1, 0}, NULL);
  dfx__tensor_unref(x);
  kh_node_free(n);
}

ATEST(one_hot, axes_and_out_of_range) {
  dfx_node *n = kh_node_new("OneHot");
  kh_attr_type(n, "T", DFX_F32);
  kh_attr_type(n, "TI", DFX_I32);
  dfx_tensor *in[4] = {ai32v(4, (int32_t[]){0, 2, -1, 1}), kh_scalar_i32(3), kh_scalar_f32(5), kh_scalar_f32(-1)};
  one(n, in, 4, DFX_F32, 2, (int64_t[]){4, 3}, (double[]){5, -1, -1, -1, -1, 5, -1, -1, -1, -1, 5, -1});
  kh_attr_int(n, "axis", 0);
  one(n, in, 4, DFX_F32, 2, (int64_t[]){3, 4}, (double[]){5, -1, -1, -1, -1, -1, -1, 5, -1, 5, -1, -1});
  kh_attr_int(n, "axis", 2);
  aerr(n, in, 4, "Expected axis to be -1 or between [0, 2).  But received: 2");
  kh_attr_int(n, "axis", -1);
  dfx__tensor_unref(in[1]);
  in[1] = kh_scalar_i32(-2);
  aerr(n, in, 4, "depth must be non-negative, got: -2");
  afree(in, 4);
  kh_node_free(n);
}
