/* test_slice.c - StridedSlice (masks, ellipsis, new axes, negative strides),
 * Slice, Transpose, ReverseV2, Tile, BroadcastTo against hand-computed
 * TensorFlow results and coordinate references over all copy dtypes. */
#include "atest.h"

static void unravel(int64_t i, int nd, const int64_t *dims, int64_t *c) {
  for (int k = nd - 1; k >= 0; k--) {
    c[k] = i % dims[k];
    i /= dims[k];
  }
}
static int64_t ravel(const int64_t *c, int nd, const int64_t *dims) {
  int64_t i = 0;
  for (int k = 0; k < nd; k++) i = i * dims[k] + c[k];
  return i;
}

typedef struct {
  int n;
  int32_t b[6], e[6], s[6];
  int bm, em, elm, nam, sam;
  int on;
  int64_t od[6];
  double v[32];
  const char *err;
} ss_case;

static dfx_tensor *run_ss(dfx_dtype dt, dfx_tensor *x, const ss_case *c, const char *err) {
  dfx_node *n = kh_node_new("StridedSlice");
  kh_attr_type(n, "T", dt);
  kh_attr_type(n, "Index", DFX_I32);
  kh_attr_int(n, "begin_mask", c->bm);
  kh_attr_int(n, "end_mask", c->em);
  kh_attr_int(n, "ellipsis_mask", c->elm);
  kh_attr_int(n, "new_axis_mask", c->nam);
  kh_attr_int(n, "shrink_axis_mask", c->sam);
  dfx_tensor *in[4] = {x, ai32v(c->n, c->b), ai32v(c->n, c->e), ai32v(c->n, c->s)}, *out[1] = {NULL};
  if (err) aerr(n, in, 4, err);
  else arun(n, in, 4, out);
  afree(in + 1, 3);
  kh_node_free(n);
  return out[0];
}

ATEST(strided_slice, tf_cases) {
  /* x = range(24) reshaped [2,3,4]. */
  static const ss_case cases[] = {
      /* x[1, :, ::-2] */
      {3, {1, 0, 0}, {2, 0, 0}, {1, 1, -2}, 6, 6, 0, 0, 1, 2, {3, 2}, {15, 13, 19, 17, 23, 21}, NULL},
      /* x[..., 1] */
      {2, {0, 1}, {0, 2}, {1, 1}, 0, 0, 1, 0, 2, 2, {2, 3}, {1, 5, 9, 13, 17, 21}, NULL},
      /* x[:, newaxis, 1:, 2] */
      {4, {0, 0, 1, 2}, {0, 0, 0, 3}, {1, 1, 1, 1}, 1, 5, 0, 2, 8, 3, {2, 1, 2}, {6, 10, 18, 22}, NULL},
      /* x[-1:-3:-1, 0, 0] */
      {3, {-1, 0, 0}, {-3, 0, 0}, {-1, 1, 1}, 0, 0, 0, 0, 6, 1, {2}, {12, 0}, NULL},
      /* x[0:100, -100:1, 3] clamps */
      {3, {0, -100, 3}, {100, 1, 4}, {1, 1, 1}, 0, 0, 0, 0, 4, 2, {2, 1}, {3, 15}, NULL},
      /* x[2:1] is empty */
      {1, {2}, {1}, {1}, 0, 0, 0, 0, 0, 3, {0, 3, 4}, {0}, NULL},
      /* x[newaxis, ..., newaxis] with the ellipsis in between */
      {3, {0, 0, 0}, {0, 0, 0}, {1, 1, 1}, 0, 0, 2, 5, 0, 5, {1, 2, 3, 4, 1}, {0}, NULL},
      /* x[1, 2, 3] all shrunk: scalar */
      {3, {1, 2, 3}, {2, 3, 4}, {1, 1, 1}, 0, 0, 0, 0, 7, 0, {0}, {23}, NULL},
      /* x[0, -1, ::3] */
      {3, {0, -1, 0}, {1, 0, 0}, {1, 1, 3}, 4, 4, 0, 0, 3, 1, {2}, {8, 11}, NULL},
      /* x[:, :, 3:0:-1] */
      {3, {0, 0, 3}, {0, 0, 0}, {1, 1, -1}, 3, 3, 0, 0, 0, 3, {2, 3, 3}, {0}, NULL},
      {1, {5}, {6}, {1}, 0, 0, 0, 0, 1, 0, {0}, {0}, "slice index 5 of dimension 0 out of bounds."},
      {1, {0}, {1}, {0}, 0, 0, 0, 0, 0, 0, {0}, {0}, "strides[0] must be non-zero"},
      {4, {0, 0, 0, 0}, {1, 1, 1, 1}, {1, 1, 1, 1}, 0, 0, 0, 0, 0, 0, {0}, {0},
       "Index out of range using input dim 3; input has only 3 dims"},
      {2, {0, 0}, {1, 1}, {1, 1}, 0, 0, 3, 0, 0, 0, {0}, {0}, "Multiple ellipses in slice spec not allowed"},
      {1, {0}, {1}, {-1}, 0, 0, 0, 0, 1, 0, {0}, {0}, "only stride 1 allowed on non-range indexing."},
  };
  const int64_t xd[3] = {2, 3, 4};
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    const ss_case *c = &cases[k];
    dfx_tensor *x = avals(DFX_I32, 3, xd, NULL);
    dfx_tensor *y = run_ss(DFX_I32, x, c, c->err);
    if (!c->err) {
      bool check_vals = c->v[0] != 0 || dfx__shape_count(c->on, c->od) == 0;
      acheck(y, DFX_I32, c->on, c->od, check_vals ? c->v : NULL);
    }
    dfx__tensor_unref(y);
    dfx__tensor_unref(x);
  }
}

ATEST(strided_slice, reversal_all_dtypes) {
  /* x[:, ::-1, 1:3] on [3,4,5] against a coordinate reference. */
  const int64_t xd[3] = {3, 4, 5}, od[3] = {3, 4, 2};
  ss_case c = {3, {0, 0, 1}, {0, 0, 3}, {1, -1, 1}, 3, 3, 0, 0, 0, 3, {3, 4, 2}, {0}, NULL};
  dfx_dtype dts[DFX_DTYPE_END_];
  int ndt = adtypes("StridedSlice", "T", dts);
  for (int di = 0; di < ndt; di++) {
    dfx_dtype dt = dts[di];
    dfx_tensor *x = aseq(dt, 3, xd);
    dfx_tensor *y = run_ss(dt, x, &c, NULL);
    acheck(y, dt, 3, od, NULL);
    for (int64_t e = 0; e < y->count; e++) {
      int64_t q[3];
      unravel(e, 3, od, q);
      q[1] = 3 - q[1];
      q[2] += 1;
      cr_assert_eq(aget(y, e), aval(dt, ravel(q, 3, xd)));
    }
    dfx__tensor_unref(y);
    dfx__tensor_unref(x);
  }
}

ATEST(strided_slice, scalar_input) {
  dfx_tensor *x = kh_scalar_f32(4.5f);
  ss_case c = {1, {0}, {0}, {1}, 0, 0, 1, 0, 0, 0, {0}, {4.5}, NULL};
  dfx_tensor *y = run_ss(DFX_F32, x, &c, NULL);
  acheck(y, DFX_F32, 0, NULL, (double[]){4.5});
  dfx__tensor_unref(y);
  dfx__tensor_unref(x);
}

ATEST(slice, all_dtypes_and_errors) {
  const int64_t xd[3] = {3, 4, 5};
  dfx_dtype dts[DFX_DTYPE_END_];
  int ndt = adtypes("Slice", "T", dts);
  for (int di = 0; di < ndt; di++) {
    dfx_dtype dt = dts[di];
    dfx_node *n = kh_node_new("Slice");
    kh_attr_type(n, "T", dt);
    kh_attr_type(n, "Index", DFX_I64);
    dfx_tensor *in[3] = {aseq(dt, 3, xd), ai64v(3, (int64_t[]){1, 0, 2}), ai64v(3, (int64_t[]){2, -1, 0})}, *out[1];
    arun(n, in, 3, out);
    acheck(out[0], dt, 3, (int64_t[]){2, 4, 0}, NULL);
    dfx__tensor_unref(out[0]);
    dfx__tensor_unref(in[2]);
    in[2] = ai64v(3, (int64_t[]){2, -1, 2});
    arun(n, in, 3, out);
    const int64_t od[3] = {2, 4, 2};
    acheck(out[0], dt, 3, od, NULL);
    for (int64_t e = 0; e < out[0]->count; e++) {
      int64_t q[3];
      unravel(e, 3, od, q);
      q[0] += 1;
      q[2] += 2;
      cr_assert_eq(aget(out[0], e), aval(dt, ravel(q, 3, xd)));
    }
    dfx__tensor_unref(out[0]);
    if (di == 0) {
      dfx__tensor_unref(in[2]);
      in[2] = ai64v(3, (int64_t[]){3, 1, 1});
      aerr(n, in, 3, "Expected size[0] in [0, 2], but got 3");
      dfx__tensor_unref(in[1]);
      in[1] = ai64v(3, (int64_t[]){4, 0, 0});
      aerr(n, in, 3, "Expected begin[0] in [0, 3], but got 4");
      dfx__tensor_unref(in[1]);
      in[1] = ai64v(2, (int64_t[]){0, 0});
      aerr(n, in, 3, "Expected begin and size arguments to be 1-D tensors of size 3");
    }
    afree(in, 3);
    kh_node_free(n);
  }
}

ATEST(transpose, all_perms_all_dtypes) {
  const int64_t xd[3] = {2, 3, 4};
  static const int32_t perms[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  dfx_dtype dts[DFX_DTYPE_END_];
  int ndt = adtypes("Transpose", "T", dts);
  for (int di = 0; di < ndt; di++)
    for (int p = 0; p < 6; p++) {
      dfx_dtype dt = dts[di];
      dfx_node *n = kh_node_new("Transpose");
      kh_attr_type(n, "T", dt);
      dfx_tensor *in[2] = {aseq(dt, 3, xd), ai32v(3, perms[p])}, *out[1];
      arun(n, in, 2, out);
      int64_t od[3] = {xd[perms[p][0]], xd[perms[p][1]], xd[perms[p][2]]};
      acheck(out[0], dt, 3, od, NULL);
      for (int64_t e = 0; e < out[0]->count; e++) {
        int64_t q[3], src[3];
        unravel(e, 3, od, q);
        for (int k = 0; k < 3; k++) src[perms[p][k]] = q[k];
        cr_assert_eq(aget(out[0], e), aval(dt, ravel(src, 3, xd)));
      }
      afree(out, 1);
      afree(in, 2);
      kh_node_free(n);
    }
}

ATEST(transpose, errors_and_scalar) {
  dfx_node *n = kh_node_new("Transpose");
  kh_attr_type(n, "T", DFX_F32);
  kh_attr_type(n, "Tperm", DFX_I64);
  dfx_tensor *in[2] = {avals(DFX_F32, 2, (int64_t[]){2, 3}, NULL), ai64v(2, (int64_t[]){0, 0})}, *out[1];
  aerr(n, in, 2, "1 is missing from {0,0}.");
  dfx__tensor_unref(in[1]);
  in[1] = ai64v(2, (int64_t[]){0, 2});
  aerr(n, in, 2, "2 is out of range [0 .. 2)");
  dfx__tensor_unref(in[1]);
  in[1] = ai64v(3, (int64_t[]){0, 1, 2});
  aerr(n, in, 2, "transpose expects a vector of size 2. But input(1) is a vector of size 3");
  afree(in, 2);
  in[0] = kh_scalar_f32(3);
  in[1] = ai64v(0, NULL);
  arun(n, in, 2, out);
  acheck(out[0], DFX_F32, 0, NULL, (double[]){3});
  afree(out, 1);
  afree(in, 2);
  kh_node_free(n);
}

ATEST(reverse_v2, axes_all_dtypes) {
  const int64_t xd[3] = {2, 3, 4};
  static const int32_t axes[][2] = {{0, -1}, {1, -1}, {2, -1}, {0, 2}, {-1, 1}};
  dfx_dtype dts[DFX_DTYPE_END_];
  int ndt = adtypes("ReverseV2", "T", dts);
  for (int di = 0; di < ndt; di++)
    for (int a = 0; a < 5; a++) {
      dfx_dtype dt = dts[di];
      int na = axes[a][1] == -1 && a < 3 ? 1 : 2;
      bool rev[3] = {false};
      for (int k = 0; k < na; k++) rev[(axes[a][k] + 3) % 3] = true;
      dfx_node *n = kh_node_new("ReverseV2");
      kh_attr_type(n, "T", dt);
      dfx_tensor *in[2] = {aseq(dt, 3, xd), ai32v(na, axes[a])}, *out[1];
      arun(n, in, 2, out);
      acheck(out[0], dt, 3, xd, NULL);
      for (int64_t e = 0; e < out[0]->count; e++) {
        int64_t q[3];
        unravel(e, 3, xd, q);
        for (int k = 0; k < 3; k++)
          if (rev[k]) q[k] = xd[k] - 1 - q[k];
        cr_assert_eq(aget(out[0], e), aval(dt, ravel(q, 3, xd)));
      }
      if (di == 0) {
        dfx__tensor_unref(in[1]);
        in[1] = ai32v(2, (int32_t[]){1, -2});
        aerr(n, in, 2, "axis 1 specified more than once.");
        dfx__tensor_unref(in[1]);
        in[1] = ai32v(1, (int32_t[]){3});
        aerr(n, in, 2, "is out of valid range");
      }
      afree(out, 1);
      afree(in, 2);
      kh_node_free(n);
    }
}

ATEST(tile, all_dtypes) {
  const int64_t xd[2] = {2, 3};
  dfx_dtype dts[DFX_DTYPE_END_];
  int ndt = adtypes("Tile", "T", dts);
  for (int di = 0; di < ndt; di++) {
    dfx_dtype dt = dts[di];
    dfx_node *n = kh_node_new("Tile");
    kh_attr_type(n, "T", dt);
    dfx_tensor *in[2] = {aseq(dt, 2, xd), ai32v(2, (int32_t[]){3, 2})}, *out[1];
    arun(n, in, 2, out);
    const int64_t od[2] = {6, 6};
    acheck(out[0], dt, 2, od, NULL);
    for (int64_t e = 0; e < out[0]->count; e++) {
      int64_t q[2];
      unravel(e, 2, od, q);
      q[0] %= 2;
      q[1] %= 3;
      cr_assert_eq(aget(out[0], e), aval(dt, ravel(q, 2, xd)));
    }
    afree(out, 1);
    dfx__tensor_unref(in[1]);
    in[1] = ai32v(2, (int32_t[]){0, 2});
    arun(n, in, 2, out);
    acheck(out[0], dt, 2, (int64_t[]){0, 6}, NULL);
    afree(out, 1);
    dfx__tensor_unref(in[1]);
    in[1] = ai32v(2, (int32_t[]){-1, 2});
    aerr(n, in, 2, "Expected multiples[0] >= 0, but got -1");
    dfx__tensor_unref(in[1]);
    in[1] = ai32v(1, (int32_t[]){2});
    aerr(n, in, 2, "Expected multiples argument to be a vector of length 2 but got length 1");
    afree(in, 2);
    kh_node_free(n);
  }
}

ATEST(broadcast_to, all_dtypes) {
  const int64_t xd[2] = {3, 1};
  dfx_dtype dts[DFX_DTYPE_END_];
  int ndt = adtypes("BroadcastTo", "T", dts);
  for (int di = 0; di < ndt; di++) {
    dfx_dtype dt = dts[di];
    dfx_node *n = kh_node_new("BroadcastTo");
    kh_attr_type(n, "T", dt);
    dfx_tensor *in[2] = {aseq(dt, 2, xd), ai32v(3, (int32_t[]){2, 3, 4})}, *out[1];
    arun(n, in, 2, out);
    const int64_t od[3] = {2, 3, 4};
    acheck(out[0], dt, 3, od, NULL);
    for (int64_t e = 0; e < out[0]->count; e++) {
      int64_t q[3];
      unravel(e, 3, od, q);
      cr_assert_eq(aget(out[0], e), aval(dt, q[1]));
    }
    afree(out, 1);
    dfx__tensor_unref(in[1]);
    in[1] = ai32v(2, (int32_t[]){3, 0});
    arun(n, in, 2, out);
    acheck(out[0], dt, 2, (int64_t[]){3, 0}, NULL);
    afree(out, 1);
    dfx__tensor_unref(in[1]);
    in[1] = ai32v(2, (int32_t[]){2, 4});
    aerr(n, in, 2, "Unable to broadcast tensor of shape [3,1] to tensor of shape [2,4]");
    afree(in, 2);
    kh_node_free(n);
  }
}
