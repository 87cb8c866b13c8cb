/* test_pack.c - Pack, Unpack, ConcatV2, Concat, ParallelConcat, Split, SplitV
 * against coordinate-based references over all copy dtypes. */
#include "atest.h"

static void unravel(int64_t i, int nd, const int64_t *dims, int64_t *c) {
  for (int k = nd - 1; k >= 0; k--) {
    c[k] = dims[k] ? i % dims[k] : 0;
    i = dims[k] ? i / dims[k] : 0;
  }
}
static int64_t ravel(const int64_t *c, int nd, const int64_t *dims) {
  int64_t i = 0;
  for (int k = 0; k < nd; k++) i = i * dims[k] + c[k];
  return i;
}

ATEST(pack, all_dtypes_shapes_axes) {
  static const int64_t shapes[][3] = {{2, 3, 0}, {4, 0, 0}, {0, 2, 0}, {2, 1, 3}};
  static const int ranks[] = {2, 1, 2, 3};
  dfx_dtype dts[DFX_DTYPE_END_];
  int ndt = adtypes("Pack", "T", dts);
  for (int di = 0; di < ndt; di++)
    for (int s = 0; s < 4; s++)
      for (int r0 = ranks[s], axis = -(r0 + 1); axis <= r0; axis++) {
        dfx_dtype dt = dts[di];
        const int N = 3;
        dfx_node *n = kh_node_new("Pack");
        kh_attr_int(n, "N", N);
        kh_attr_type(n, "T", dt);
        kh_attr_int(n, "axis", axis);
        dfx_tensor *in[3];
        for (int i = 0; i < N; i++) {
          in[i] = dfx__tensor_zeros(dt, r0, shapes[s], NULL);
          for (int64_t e = 0; e < in[i]->count; e++) aset(in[i], e, aval(dt, e * 3 + i));
        }
        dfx_tensor *out[1];
        arun(n, in, N, out);
        int a = axis < 0 ? axis + r0 + 1 : axis;
        int64_t od[4];
        for (int k = 0, j = 0; k <= r0; k++) od[k] = k == a ? N : shapes[s][j++];
        acheck(out[0], dt, r0 + 1, od, NULL);
        for (int64_t e = 0; e < out[0]->count; e++) {
          int64_t c[4], ic[4];
          unravel(e, r0 + 1, od, c);
          for (int k = 0, j = 0; k <= r0; k++)
            if (k != a) ic[j++] = c[k];
          cr_assert_eq(aget(out[0], e), aval(dt, ravel(ic, r0, shapes[s]) * 3 + c[a]));
        }
        afree(out, 1);
        afree(in, N);
        kh_node_free(n);
      }
}

ATEST(pack, scalars_and_errors) {
  dfx_node *n = kh_node_new("Pack");
  kh_attr_int(n, "N", 2);
  kh_attr_type(n, "T", DFX_I32);
  dfx_tensor *in[2] = {kh_scalar_i32(7), kh_scalar_i32(9)}, *out[1];
  arun(n, in, 2, out);
  acheck(out[0], DFX_I32, 1, (int64_t[]){2}, (double[]){7, 9});
  afree(out, 1);
  kh_attr_int(n, "axis", 1);
  aerr(n, in, 2, "axis = 1 not in [-1, 1)");
  afree(in, 2);
  kh_attr_int(n, "axis", 0);
  in[0] = ai32v(2, (int32_t[]){1, 2});
  in[1] = ai32v(3, (int32_t[]){1, 2, 3});
  aerr(n, in, 2, "Shapes of all inputs must match: values[0].shape = [2] != values[1].shape = [3]");
  afree(in, 2);
  kh_node_free(n);
}

ATEST(unpack, all_dtypes_axes) {
  const int64_t dims[3] = {2, 3, 4};
  dfx_dtype dts[DFX_DTYPE_END_];
  int ndt = adtypes("Unpack", "T", dts);
  for (int di = 0; di < ndt; di++)
    for (int axis = -3; axis < 3; axis++) {
      dfx_dtype dt = dts[di];
      int a = axis < 0 ? axis + 3 : axis;
      dfx_node *n = kh_node_new("Unpack");
      kh_attr_int(n, "num", dims[a]);
      kh_attr_type(n, "T", dt);
      kh_attr_int(n, "axis", axis);
      dfx_tensor *x = aseq(dt, 3, dims), *out[4];
      int nout = arun(n, &x, 1, out);
      cr_assert_eq(nout, dims[a]);
      int64_t od[2];
      for (int k = 0, j = 0; k < 3; k++)
        if (k != a) od[j++] = dims[k];
      for (int o = 0; o < nout; o++) {
        acheck(out[o], dt, 2, od, NULL);
        for (int64_t e = 0; e < out[o]->count; e++) {
          int64_t c[2], ic[3];
          unravel(e, 2, od, c);
          for (int k = 0, j = 0; k < 3; k++) ic[k] = k == a ? o : c[j++];
          cr_assert_eq(aget(out[o], e), aval(dt, ravel(ic, 3, dims)));
        }
      }
      afree(out, nout);
      dfx__tensor_unref(x);
      kh_node_free(n);
    }
}

ATEST(unpack, errors) {
  dfx_node *n = kh_node_new("Unpack");
  kh_attr_int(n, "num", 3);
  kh_attr_type(n, "T", DFX_F32);
  dfx_tensor *x = avals(DFX_F32, 2, (int64_t[]){2, 3}, NULL);
  aerr(n, &x, 1, "Input shape axis 0 must equal 3, got shape [2,3]");
  kh_attr_int(n, "axis", 2);
  aerr(n, &x, 1, "axis = 2 not in [-2, 2)");
  dfx__tensor_unref(x);
  kh_node_free(n);
}

/* Concatenates three inputs whose axis sizes are 2, 0 and 3. */
static void concat_case(const char *op, dfx_dtype dt, int axis, dfx_dtype tidx) {
  const int64_t base[3] = {2, 3, 2};
  const int64_t sz[3] = {2, 0, 3};
  int a = axis < 0 ? axis + 3 : axis;
  dfx_tensor *xs[3];
  int64_t d[3][3];
  for (int i = 0; i < 3; i++) {
    memcpy(d[i], base, sizeof base);
    d[i][a] = sz[i];
    xs[i] = dfx__tensor_zeros(dt, 3, d[i], NULL);
    for (int64_t e = 0; e < xs[i]->count; e++) aset(xs[i], e, aval(dt, e + 10 * i));
  }
  dfx_tensor *ax = aint(tidx, -1, (int64_t[]){axis});
  dfx_node *n = kh_node_new(op);
  kh_attr_int(n, "N", 3);
  kh_attr_type(n, "T", dt);
  dfx_tensor *in[4], *out[1];
  if (strcmp(op, "ConcatV2") == 0) {
    kh_attr_type(n, "Tidx", tidx);
    memcpy(in, xs, sizeof xs);
    in[3] = ax;
  } else {
    in[0] = ax;
    memcpy(in + 1, xs, sizeof xs);
  }
  arun(n, in, 4, out);
  int64_t od[3];
  memcpy(od, base, sizeof base);
  od[a] = 5;
  acheck(out[0], dt, 3, od, NULL);
  for (int64_t e = 0; e < out[0]->count; e++) {
    int64_t c[3];
    unravel(e, 3, od, c);
    int src = c[a] < 2 ? 0 : 2;
    c[a] -= src == 0 ? 0 : 2;
    cr_assert_eq(aget(out[0], e), aval(dt, ravel(c, 3, d[src]) + 10 * src), "%s axis %d e %lld", op, axis, (long long)e);
  }
  afree(out, 1);
  afree(xs, 3);
  dfx__tensor_unref(ax);
  kh_node_free(n);
}

ATEST(concat, all_dtypes_axes) {
  dfx_dtype dts[DFX_DTYPE_END_], its[DFX_DTYPE_END_];
  int ndt = adtypes("ConcatV2", "T", dts), nit = adtypes("ConcatV2", "Tidx", its);
  dfx_dtype dts2[DFX_DTYPE_END_]; /* Concat shares the sweep: same declared set */
  cr_assert_eq(adtypes("Concat", "T", dts2), ndt);
  cr_assert_arr_eq(dts2, dts, sizeof(dfx_dtype) * (size_t)ndt);
  for (int di = 0; di < ndt; di++)
    for (int axis = -3; axis < 3; axis++) {
      for (int ii = 0; ii < nit; ii++) concat_case("ConcatV2", dts[di], axis, its[ii]);
      concat_case("Concat", dts[di], axis, DFX_I32);
    }
}

ATEST(concat, errors) {
  dfx_node *n = kh_node_new("ConcatV2");
  kh_attr_int(n, "N", 2);
  kh_attr_type(n, "T", DFX_F32);
  dfx_tensor *in[3] = {avals(DFX_F32, 2, (int64_t[]){2, 3}, NULL), avals(DFX_F32, 2, (int64_t[]){3, 3}, NULL),
                       kh_scalar_i32(1)};
  aerr(n, in, 3, "ConcatOp : Dimensions of inputs should match: shape[0] = [2,3] vs. shape[1] = [3,3]");
  dfx__tensor_unref(in[2]);
  in[2] = kh_scalar_i32(2);
  aerr(n, in, 3, "ConcatOp : Expected concatenating dimensions in the range [-2, 2), but got 2");
  dfx__tensor_unref(in[1]);
  in[1] = avals(DFX_F32, 1, (int64_t[]){3}, NULL);
  dfx__tensor_unref(in[2]);
  in[2] = kh_scalar_i32(0);
  aerr(n, in, 3, "ConcatOp : Ranks of all input tensors should match: shape[0] = [2,3] vs. shape[1] = [3]");
  afree(in, 3);
  in[0] = kh_scalar_f32(1);
  in[1] = kh_scalar_f32(2);
  in[2] = kh_scalar_i32(-1);
  aerr(n, in, 3, "Can't concatenate scalars");
  afree(in, 3);
  kh_node_free(n);
}

ATEST(parallel_concat, stacks_rows) {
  dfx_node *n = kh_node_new("ParallelConcat");
  kh_attr_int(n, "N", 2);
  kh_attr_type(n, "T", DFX_F32);
  kh_attr_shape(n, "shape", 2, (int64_t[]){2, 2});
  dfx_tensor *in[2] = {avals(DFX_F32, 2, (int64_t[]){1, 2}, (double[]){1, 2}),
                       avals(DFX_F32, 2, (int64_t[]){1, 2}, (double[]){3, 4})},
             *out[1];
  arun(n, in, 2, out);
  acheck(out[0], DFX_F32, 2, (int64_t[]){2, 2}, (double[]){1, 2, 3, 4});
  afree(out, 1);
  afree(in, 2);
  kh_node_free(n);
}

/* Checks outputs of a split of a [4,6,2] sequence along a into sizes sz. */
static void check_split(dfx_tensor **out, int nout, dfx_dtype dt, int a, const int64_t *sz) {
  const int64_t dims[3] = {4, 6, 2};
  int64_t start = 0;
  for (int o = 0; o < nout; o++) {
    int64_t od[3] = {4, 6, 2};
    od[a] = sz[o];
    acheck(out[o], dt, 3, od, NULL);
    for (int64_t e = 0; e < out[o]->count; e++) {
      int64_t c[3];
      unravel(e, 3, od, c);
      c[a] += start;
      cr_assert_eq(aget(out[o], e), aval(dt, ravel(c, 3, dims)));
    }
    start += sz[o];
  }
}

ATEST(split, all_dtypes_axes) {
  const int64_t dims[3] = {4, 6, 2};
  dfx_dtype dts[DFX_DTYPE_END_];
  int ndt = adtypes("Split", "T", dts);
  dfx_dtype dts2[DFX_DTYPE_END_]; /* SplitV shares the sweep: same declared set */
  cr_assert_eq(adtypes("SplitV", "T", dts2), ndt);
  cr_assert_arr_eq(dts2, dts, sizeof(dfx_dtype) * (size_t)ndt);
  for (int di = 0; di < ndt; di++)
    for (int axis = -3; axis < 3; axis++) {
      dfx_dtype dt = dts[di];
      int a = axis < 0 ? axis + 3 : axis;
      int ns = (int)dims[a] / 2;
      dfx_node *n = kh_node_new("Split");
      kh_attr_int(n, "num_split", ns);
      kh_attr_type(n, "T", dt);
      dfx_tensor *in[2] = {kh_scalar_i32(axis), aseq(dt, 3, dims)}, *out[8];
      int nout = arun(n, in, 2, out);
      int64_t sz[8] = {2, 2, 2, 2, 2, 2, 2, 2};
      check_split(out, nout, dt, a, sz);
      afree(out, nout);
      afree(in, 2);
      kh_node_free(n);

      n = kh_node_new("SplitV");
      kh_attr_int(n, "num_split", 3);
      kh_attr_type(n, "T", dt);
      kh_attr_type(n, "Tlen", DFX_I32);
      int32_t spl[3] = {1, -1, 0};
      dfx_tensor *in2[3] = {aseq(dt, 3, dims), ai32v(3, spl), kh_scalar_i32(axis)};
      nout = arun(n, in2, 3, out);
      int64_t sz2[3] = {1, dims[a] - 1, 0};
      check_split(out, nout, dt, a, sz2);
      afree(out, nout);
      afree(in2, 3);
      kh_node_free(n);
    }
}

ATEST(split, errors) {
  dfx_node *n = kh_node_new("Split");
  kh_attr_int(n, "num_split", 4);
  kh_attr_type(n, "T", DFX_F32);
  dfx_tensor *in[2] = {kh_scalar_i32(0), avals(DFX_F32, 1, (int64_t[]){6}, NULL)};
  aerr(n, in, 2, "Number of ways to split should evenly divide the split dimension, but got split_dim 0 (size = 6) and num_split 4");
  dfx__tensor_unref(in[0]);
  in[0] = kh_scalar_i32(1);
  aerr(n, in, 2, "-1 <= split_dim < 1 but got 1");
  kh_node_free(n);
  n = kh_node_new("SplitV");
  kh_attr_int(n, "num_split", 2);
  kh_attr_type(n, "T", DFX_F32);
  kh_attr_type(n, "Tlen", DFX_I64);
  dfx_tensor *in2[3] = {in[1], ai64v(2, (int64_t[]){-1, -1}), kh_scalar_i32(0)};
  aerr(n, in2, 3, "There can only be one -1 in the input.");
  dfx__tensor_unref(in2[1]);
  in2[1] = ai64v(2, (int64_t[]){2, 3});
  aerr(n, in2, 3, "Determined shape must either match input shape along split_dim exactly");
  dfx__tensor_unref(in2[1]);
  in2[1] = ai64v(2, (int64_t[]){8, -1});
  aerr(n, in2, 3, "Determined shape must either match");
  dfx__tensor_unref(in2[1]);
  dfx__tensor_unref(in2[2]);
  afree(in, 2);
  kh_node_free(n);
}
