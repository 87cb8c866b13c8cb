/* test_compare.c - comparison, logical and bitwise kernels. */
#include "dtype.h"
#include "mt.h"

static dfx_tensor *run_xy(const char *op, dfx_dtype t, dfx_tensor *x, dfx_tensor *y, dfx_code want, char *err) {
  dfx_tensor *in[2] = {x, y}, *o = NULL;
  dfx_code c = mt_run(op, t, in, 2, &o, err, 256);
  cr_assert_eq(c, want, "%s: %d (%s)", op, c, err);
  return o;
}

/* The orderings and equalities on every dtype each declares (strings in
 * equal_bool_and_string), broadcasting [3,1] against [3]. */
Test(compare, orderings_broadcast_all_types) {
  const char *opsl[] = {"Less", "LessEqual", "Greater", "GreaterEqual", "Equal", "NotEqual"};
  int64_t dx[2] = {3, 1}, dy[1] = {3};
  const double xv[] = {1, 2, 3}, yv[] = {3, 2, 1};
  int runs = 0;
  for (int o = 0; o < 6; o++) {
    MT_FOR_DTYPES(t, mt_declared(opsl[o], "T")) {
      if (t == DFX_STRING) continue;
      dfx_tensor *x = mt_tensor(t, 2, dx, xv), *y = mt_tensor(t, 1, dy, yv);
      char err[256];
      dfx_tensor *out = run_xy(opsl[o], t, x, y, DFX_OK, err);
      cr_assert_eq(out->dtype, DFX_BOOL);
      int64_t od[2] = {3, 3};
      mt_expect_shape(out, 2, od);
      for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
          /* From the stored values: bool makes 1, 2 and 3 all true. Complex
           * parts are v and -v/2, so comparing real parts decides. */
          double a = mt_is_complex(t) ? xv[i] : dfx__tensor_get_f64(x, i);
          double b = mt_is_complex(t) ? yv[j] : dfx__tensor_get_f64(y, j);
          int w = o == 0 ? a < b : o == 1 ? a <= b : o == 2 ? a > b : o == 3 ? a >= b : o == 4 ? a == b : a != b;
          cr_expect_eq(((uint8_t *)out->data)[i * 3 + j], w, "%s %s [%d,%d]", opsl[o], dfx_dtype_name(t), i, j);
        }
      dfx__tensor_unref(out);
      dfx__tensor_unref(x);
      dfx__tensor_unref(y);
      runs++;
    }
  }
  cr_expect_geq(runs, 6 * 12 + 2 * 6, "%d op/dtype pairs", runs);
}

/* Bitwise ops and shifts on every declared integer dtype, against int64
 * arithmetic wrapped to the dtype's width. */
static double wrap(dfx_dtype t, int64_t v) {
  int bits = (int)dfx_dtype_size(t) * 8;
  uint64_t m = bits == 64 ? ~UINT64_C(0) : (UINT64_C(1) << bits) - 1, u = (uint64_t)v & m;
  if (!mt_is_unsigned(t) && bits < 64 && u >> (bits - 1)) return (double)(int64_t)(u | ~m);
  return mt_is_unsigned(t) ? (double)u : (double)(int64_t)u;
}

Test(compare, bitwise_every_declared_dtype) {
  const char *opsl[] = {"BitwiseAnd", "BitwiseOr", "BitwiseXor", "LeftShift", "RightShift", "Invert"};
  int64_t d[1] = {6};
  const double sx[] = {12, -8, 1, -1, 5, 100}, ux[] = {12, 8, 1, 255, 5, 100}, yv[] = {10, 2, 3, 0, 5, 1};
  for (int o = 0; o < 6; o++)
    MT_FOR_DTYPES(t, mt_declared(opsl[o], "T")) {
      dfx_tensor *x = mt_tensor(t, 1, d, mt_is_unsigned(t) ? ux : sx), *y = mt_tensor(t, 1, d, yv), *out;
      char err[256];
      dfx_tensor *in[2] = {x, y};
      cr_assert_eq(mt_run(opsl[o], t, in, o == 5 ? 1 : 2, &out, err, sizeof err), DFX_OK, "%s", err);
      cr_assert_eq(out->dtype, t);
      for (int i = 0; i < 6; i++) {
        int64_t a = dfx__tensor_get_i64(x, i), b = dfx__tensor_get_i64(y, i);
        int64_t r = o == 0 ? a & b : o == 1 ? a | b : o == 2 ? a ^ b : o == 3 ? (int64_t)((uint64_t)a << b)
                    : o == 4 ? a >> b : ~a;
        cr_expect_eq(dfx__tensor_get_f64(out, i), wrap(t, r), "%s %s [%d]", opsl[o], dfx_dtype_name(t), i);
      }
      dfx__tensor_unref(out);
      dfx__tensor_unref(x);
      dfx__tensor_unref(y);
    }
}

Test(compare, nan_compares_false) {
  int64_t d[1] = {2};
  const double xv[] = {NAN, 1}, yv[] = {NAN, NAN};
  const char *opsl[] = {"Less", "LessEqual", "Greater", "GreaterEqual", "Equal", "NotEqual"};
  for (int o = 0; o < 6; o++) {
    dfx_tensor *x = mt_tensor(DFX_F32, 1, d, xv), *y = mt_tensor(DFX_F32, 1, d, yv);
    char err[256];
    dfx_tensor *out = run_xy(opsl[o], DFX_F32, x, y, DFX_OK, err);
    int w = o == 5;
    cr_expect_eq(((uint8_t *)out->data)[0], w, "%s", opsl[o]);
    cr_expect_eq(((uint8_t *)out->data)[1], w, "%s", opsl[o]);
    dfx__tensor_unref(out);
    dfx__tensor_unref(x);
    dfx__tensor_unref(y);
  }
}

Test(compare, equal_bool_and_string) {
  int64_t d[1] = {4};
  const double xv[] = {0, 0, 1, 1}, yv[] = {0, 1, 0, 1};
  dfx_tensor *x = mt_tensor(DFX_BOOL, 1, d, xv), *y = mt_tensor(DFX_BOOL, 1, d, yv);
  char err[256];
  dfx_tensor *out = run_xy("Equal", DFX_BOOL, x, y, DFX_OK, err);
  const uint8_t w[] = {1, 0, 0, 1};
  for (int i = 0; i < 4; i++) cr_expect_eq(((uint8_t *)out->data)[i], w[i]);
  dfx__tensor_unref(out);
  dfx__tensor_unref(x);
  dfx__tensor_unref(y);

  int64_t d3[1] = {3};
  dfx_tensor *s1 = dfx__tensor_alloc(DFX_STRING, 1, d3, NULL), *s2 = dfx__tensor_alloc(DFX_STRING, 0, NULL, NULL);
  dfx_tensor_set_string(s1, 0, "ab", 2);
  dfx_tensor_set_string(s1, 1, "abc", 3);
  dfx_tensor_set_string(s2, 0, "abc", 3);
  out = run_xy("NotEqual", DFX_STRING, s1, s2, DFX_OK, err);
  cr_expect_eq(((uint8_t *)out->data)[0], 1);
  cr_expect_eq(((uint8_t *)out->data)[1], 0);
  cr_expect_eq(((uint8_t *)out->data)[2], 1); /* "" != "abc" */
  dfx__tensor_unref(out);
  dfx__tensor_unref(s1);
  dfx__tensor_unref(s2);
}

Test(compare, equal_incompatible_shape_error_attr) {
  int64_t d2[1] = {2}, d3[1] = {3};
  dfx_tensor *in[2] = {mt_tensor(DFX_I32, 1, d2, NULL), mt_tensor(DFX_I32, 1, d3, NULL)};
  char err[256];
  for (int ne = 0; ne < 2; ne++) {
    dfx_node *n = kh_node_new(ne ? "NotEqual" : "Equal");
    kh_attr_type(n, "T", DFX_I32);
    dfx_tensor *outs[1] = {0};
    int nout;
    cr_expect_eq(kh_run(n, in, 2, outs, &nout, err, sizeof err), DFX_EINVAL);
    cr_expect(strstr(err, "Incompatible shapes: [2] vs. [3]"), "%s", err);
    kh_attr_bool(n, "incompatible_shape_error", 0);
    cr_assert_eq(kh_run(n, in, 2, outs, &nout, err, sizeof err), DFX_OK, "%s", err);
    cr_expect_eq(outs[0]->ndims, 0);
    cr_expect_eq(((uint8_t *)outs[0]->data)[0], ne);
    dfx__tensor_unref(outs[0]);
    kh_node_free(n);
  }
  dfx__tensor_unref(in[0]);
  dfx__tensor_unref(in[1]);
}

Test(compare, logical_ops) {
  int64_t dx[2] = {2, 1}, dy[1] = {2};
  const double xv[] = {0, 1}, yv[] = {0, 1};
  dfx_tensor *x = mt_tensor(DFX_BOOL, 2, dx, xv), *y = mt_tensor(DFX_BOOL, 1, dy, yv);
  char err[256];
  dfx_tensor *a = run_xy("LogicalAnd", DFX_INVALID, x, y, DFX_OK, err);
  dfx_tensor *o = run_xy("LogicalOr", DFX_INVALID, x, y, DFX_OK, err);
  const uint8_t wa[] = {0, 0, 0, 1}, wo[] = {0, 1, 1, 1};
  for (int i = 0; i < 4; i++) {
    cr_expect_eq(((uint8_t *)a->data)[i], wa[i]);
    cr_expect_eq(((uint8_t *)o->data)[i], wo[i]);
  }
  dfx_tensor *in[1] = {x}, *nt;
  cr_assert_eq(mt_run("LogicalNot", DFX_INVALID, in, 1, &nt, err, sizeof err), DFX_OK, "%s", err);
  cr_expect_eq(((uint8_t *)nt->data)[0], 1);
  cr_expect_eq(((uint8_t *)nt->data)[1], 0);
  mt_expect_shape(nt, 2, dx);
  dfx__tensor_unref(nt);
  dfx__tensor_unref(a);
  dfx__tensor_unref(o);
  dfx__tensor_unref(x);
  dfx__tensor_unref(y);
}

Test(compare, bitwise_and_shifts) {
  int64_t d[1] = {6};
  const double xv[] = {12, -8, 1, -1, 5, 100}, yv[] = {10, 2, 31, 40, -3, 1};
  dfx_tensor *x = mt_tensor(DFX_I32, 1, d, xv), *y = mt_tensor(DFX_I32, 1, d, yv);
  char err[256];
  dfx_tensor *o;
  o = run_xy("BitwiseAnd", DFX_I32, x, y, DFX_OK, err);
  for (int i = 0; i < 6; i++) cr_expect_eq(((int32_t *)o->data)[i], (int32_t)xv[i] & (int32_t)yv[i]);
  dfx__tensor_unref(o);
  o = run_xy("BitwiseOr", DFX_I32, x, y, DFX_OK, err);
  for (int i = 0; i < 6; i++) cr_expect_eq(((int32_t *)o->data)[i], (int32_t)xv[i] | (int32_t)yv[i]);
  dfx__tensor_unref(o);
  o = run_xy("BitwiseXor", DFX_I32, x, y, DFX_OK, err);
  for (int i = 0; i < 6; i++) cr_expect_eq(((int32_t *)o->data)[i], (int32_t)xv[i] ^ (int32_t)yv[i]);
  dfx__tensor_unref(o);
  /* Shift amounts clamp to [0, 31]. */
  o = run_xy("LeftShift", DFX_I32, x, y, DFX_OK, err);
  const int32_t wl[] = {12 << 10, -32, INT32_MIN, INT32_MIN, 5, 200};
  for (int i = 0; i < 6; i++) cr_expect_eq(((int32_t *)o->data)[i], wl[i], "lshift %d", i);
  dfx__tensor_unref(o);
  o = run_xy("RightShift", DFX_I32, x, y, DFX_OK, err);
  const int32_t wr[] = {0, -2, 0, -1, 5, 50};
  for (int i = 0; i < 6; i++) cr_expect_eq(((int32_t *)o->data)[i], wr[i], "rshift %d", i);
  dfx__tensor_unref(o);
  dfx__tensor_unref(x);
  dfx__tensor_unref(y);

  const double ux[] = {200, 1, 255, 3, 4, 5}, uy[] = {1, 7, 9, 0, 2, 200};
  x = mt_tensor(DFX_U8, 1, d, ux);
  y = mt_tensor(DFX_U8, 1, d, uy);
  o = run_xy("LeftShift", DFX_U8, x, y, DFX_OK, err);
  const uint8_t wul[] = {144, 128, 128, 3, 16, 128};
  for (int i = 0; i < 6; i++) cr_expect_eq(((uint8_t *)o->data)[i], wul[i], "u8 lshift %d", i);
  dfx__tensor_unref(o);
  o = run_xy("RightShift", DFX_U8, x, y, DFX_OK, err);
  const uint8_t wur[] = {100, 0, 1, 3, 1, 0};
  for (int i = 0; i < 6; i++) cr_expect_eq(((uint8_t *)o->data)[i], wur[i], "u8 rshift %d", i);
  dfx__tensor_unref(o);
  dfx_tensor *in[1] = {x};
  cr_assert_eq(mt_run("Invert", DFX_U8, in, 1, &o, err, sizeof err), DFX_OK, "%s", err);
  for (int i = 0; i < 6; i++) cr_expect_eq(((uint8_t *)o->data)[i], (uint8_t)~(uint8_t)ux[i]);
  dfx__tensor_unref(o);
  dfx__tensor_unref(x);
  dfx__tensor_unref(y);
  /* Bitwise ops reject floats at the signature. */
  x = mt_tensor(DFX_F32, 1, d, NULL);
  y = mt_tensor(DFX_F32, 1, d, NULL);
  o = run_xy("BitwiseAnd", DFX_F32, x, y, DFX_EINVAL, err);
  dfx__tensor_unref(x);
  dfx__tensor_unref(y);
}

Test(compare, empty_and_scalar) {
  int64_t d0[1] = {0};
  dfx_tensor *x = mt_tensor(DFX_F32, 1, d0, NULL), *y = kh_scalar_f32(1);
  char err[256];
  dfx_tensor *o = run_xy("Less", DFX_F32, x, y, DFX_OK, err);
  mt_expect_shape(o, 1, d0);
  dfx__tensor_unref(o);
  dfx__tensor_unref(x);
  x = kh_scalar_f32(0.5f);
  o = run_xy("Less", DFX_F32, x, y, DFX_OK, err);
  cr_expect_eq(o->ndims, 0);
  cr_expect_eq(((uint8_t *)o->data)[0], 1);
  dfx__tensor_unref(o);
  dfx__tensor_unref(x);
  dfx__tensor_unref(y);
}
