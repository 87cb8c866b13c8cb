/* test_cast.c - Cast (x86 float->int semantics, half rounding, Truncate, bool)
 * and Bitcast shape rules. */
#include "dtype.h"
#include "mt.h"

static dfx_code run_cast(dfx_tensor *x, dfx_dtype dst, int truncate, dfx_tensor **out, char *err) {
  dfx_node *n = kh_node_new("Cast");
  kh_attr_type(n, "SrcT", (dfx_dtype)x->dtype);
  kh_attr_type(n, "DstT", dst);
  if (truncate) kh_attr_bool(n, "Truncate", 1);
  dfx_tensor *in[1] = {x}, *outs[1] = {0};
  int nout;
  dfx_code c = kh_run(n, in, 1, outs, &nout, err, 256);
  kh_node_free(n);
  *out = outs[0];
  return c;
}

/* Every SrcT x DstT pair the kernels declare, on small values: complex ->
 * real keeps the real part, real -> complex has a zero imaginary part. */
Test(cast, all_pairs_small_values) {
  const double v[] = {0, 1, 5, 100, 0, 3, 64};
  int64_t d[2] = {7, 1};
  int runs = 0;
  MT_FOR_DTYPES(s, mt_declared("Cast", "SrcT"))
  MT_FOR_DTYPES(t, mt_declared("Cast", "DstT")) {
    dfx_tensor *x = mt_tensor(s, 2, d, v), *o;
    char err[256];
    cr_assert_eq(run_cast(x, t, 0, &o, err), DFX_OK, "%s -> %s: %s", dfx_dtype_name(s), dfx_dtype_name(t), err);
    cr_assert_eq(o->dtype, t);
    mt_expect_shape(o, 2, d);
    for (int i = 0; i < 7; i++) {
      double re = 0, im = 0, gre = 0, gim = 0;
      if (mt_is_complex(s))
        mt_cget(x, i, &re, &im);
      else
        re = dfx__tensor_get_f64(x, i);
      if (!mt_is_complex(t)) im = 0;
      if (t == DFX_BOOL) re = re != 0;
      if (mt_is_complex(t))
        mt_cget(o, i, &gre, &gim);
      else
        gre = dfx__tensor_get_f64(o, i);
      cr_expect(gre == re && gim == im, "%s -> %s [%d]: %g%+gi, want %g%+gi", dfx_dtype_name(s), dfx_dtype_name(t),
                i, gre, gim, re, im);
    }
    dfx__tensor_unref(o);
    dfx__tensor_unref(x);
    runs++;
  }
  cr_expect_eq(runs, 15 * 15);
}

Test(cast, float_to_int_x86_semantics) {
  int64_t d[1] = {8};
  const double v[] = {NAN, 3e9, -3e9, -1.7, 1.7, 300.5, -1, 1e20};
  dfx_tensor *x = mt_tensor(DFX_F32, 1, d, v), *o;
  char err[256];
  cr_assert_eq(run_cast(x, DFX_I32, 0, &o, err), DFX_OK);
  const int32_t w32[] = {INT32_MIN, INT32_MIN, INT32_MIN, -1, 1, 300, -1, INT32_MIN};
  for (int i = 0; i < 8; i++) cr_expect_eq(((int32_t *)o->data)[i], w32[i], "i32 [%d]", i);
  dfx__tensor_unref(o);
  cr_assert_eq(run_cast(x, DFX_I64, 0, &o, err), DFX_OK);
  const int64_t w64[] = {INT64_MIN, 3000000000LL, -3000000000LL, -1, 1, 300, -1, INT64_MIN};
  for (int i = 0; i < 8; i++) cr_expect_eq(((int64_t *)o->data)[i], w64[i], "i64 [%d]", i);
  dfx__tensor_unref(o);
  cr_assert_eq(run_cast(x, DFX_U8, 0, &o, err), DFX_OK);
  const uint8_t wu8[] = {0, 0, 0, 255, 1, 44, 255, 0};
  for (int i = 0; i < 8; i++) cr_expect_eq(((uint8_t *)o->data)[i], wu8[i], "u8 [%d]", i);
  dfx__tensor_unref(o);
  cr_assert_eq(run_cast(x, DFX_I16, 0, &o, err), DFX_OK);
  cr_expect_eq(((int16_t *)o->data)[5], 300);
  dfx__tensor_unref(o);
  cr_assert_eq(run_cast(x, DFX_U32, 0, &o, err), DFX_OK);
  const uint32_t wu32[] = {0, 3000000000u, (uint32_t)-3000000000LL, 0xffffffffu, 1, 300, 0xffffffffu, 0};
  for (int i = 0; i < 8; i++) cr_expect_eq(((uint32_t *)o->data)[i], wu32[i], "u32 [%d]", i);
  dfx__tensor_unref(o);
  dfx__tensor_unref(x);
  /* 100000 -> int16 wraps through int32 (TF issue #12235: -31072). */
  const double big[] = {100000, 1e19};
  int64_t d2[1] = {2};
  x = mt_tensor(DFX_F64, 1, d2, big);
  cr_assert_eq(run_cast(x, DFX_I16, 0, &o, err), DFX_OK);
  cr_expect_eq(((int16_t *)o->data)[0], -31072);
  dfx__tensor_unref(o);
  cr_assert_eq(run_cast(x, DFX_U64, 0, &o, err), DFX_OK);
  cr_expect_eq(((uint64_t *)o->data)[1], UINT64_C(10000000000000000000));
  dfx__tensor_unref(o);
  dfx__tensor_unref(x);
}

Test(cast, bool_and_rounding) {
  int64_t d[1] = {4};
  const double v[] = {2, NAN, 0, -0.0};
  dfx_tensor *x = mt_tensor(DFX_F32, 1, d, v), *o;
  char err[256];
  cr_assert_eq(run_cast(x, DFX_BOOL, 0, &o, err), DFX_OK);
  const uint8_t wb[] = {1, 1, 0, 0};
  for (int i = 0; i < 4; i++) cr_expect_eq(((uint8_t *)o->data)[i], wb[i]);
  dfx__tensor_unref(o);
  dfx__tensor_unref(x);
  /* int64 2^53 + 1 -> float64 rounds to even; 2049 -> half rounds to 2048. */
  int64_t iv[2] = {(INT64_C(1) << 53) + 1, 2049};
  int64_t d2[1] = {2};
  x = kh_i64(1, d2, iv);
  cr_assert_eq(run_cast(x, DFX_F64, 0, &o, err), DFX_OK);
  cr_expect_eq(((double *)o->data)[0], 9007199254740992.0);
  dfx__tensor_unref(o);
  cr_assert_eq(run_cast(x, DFX_F16, 0, &o, err), DFX_OK);
  cr_expect_eq(dfx__f16_to_f32(((uint16_t *)o->data)[1]), 2048.0f);
  dfx__tensor_unref(o);
  dfx__tensor_unref(x);
}

Test(cast, truncate_attr) {
  int64_t d[1] = {2};
  const float v[2] = {1.0f + 3.0f / 256, -1.0f - 3.0f / 256}; /* 1 + 3*2^-8: rounds up, truncates down */
  dfx_tensor *x = kh_f32(1, d, v), *o;
  char err[256];
  cr_assert_eq(run_cast(x, DFX_BF16, 0, &o, err), DFX_OK);
  cr_expect_eq(((uint16_t *)o->data)[0], 0x3f82);
  dfx__tensor_unref(o);
  cr_assert_eq(run_cast(x, DFX_BF16, 1, &o, err), DFX_OK);
  cr_expect_eq(((uint16_t *)o->data)[0], 0x3f81);
  cr_expect_eq(((uint16_t *)o->data)[1], 0xbf81);
  dfx__tensor_unref(o);
  dfx__tensor_unref(x);
  /* double -> float truncation */
  const double dv[1] = {1.0 + 3.0 * pow(2, -25)};
  int64_t d1[1] = {1};
  x = mt_tensor(DFX_F64, 1, d1, dv);
  cr_assert_eq(run_cast(x, DFX_F32, 0, &o, err), DFX_OK);
  cr_expect_eq(((float *)o->data)[0], 1.0f + 0x1p-23f); /* 0.75 ulp rounds up */
  dfx__tensor_unref(o);
  cr_assert_eq(run_cast(x, DFX_F32, 1, &o, err), DFX_OK);
  cr_expect_eq(((float *)o->data)[0], 1.0f);
  dfx__tensor_unref(o);
  dfx__tensor_unref(x);
  /* TF truncates double -> half but not double -> bfloat16 (its CAST_FUNCTORS
   * list): 1 + 3*2^-9, 0.75 bfloat16 ulp, rounds up even with Truncate. */
  const double dv2[1] = {1.0 + 3.0 / 512};
  x = mt_tensor(DFX_F64, 1, d1, dv2);
  cr_assert_eq(run_cast(x, DFX_BF16, 1, &o, err), DFX_OK);
  cr_expect_eq(((uint16_t *)o->data)[0], 0x3f81, "f64 -> bf16 rounds: %#x", ((uint16_t *)o->data)[0]);
  dfx__tensor_unref(o);
  dfx__tensor_unref(x);
  const double dv3[1] = {1.0 + 3.0 / 2048}; /* 1.5 half ulps: rounds to 2, truncates to 1 */
  x = mt_tensor(DFX_F64, 1, d1, dv3);
  cr_assert_eq(run_cast(x, DFX_F16, 1, &o, err), DFX_OK);
  cr_expect_eq(dfx__f16_to_f32(((uint16_t *)o->data)[0]), 1.0f + 1.0f / 1024);
  dfx__tensor_unref(o);
  cr_assert_eq(run_cast(x, DFX_F16, 0, &o, err), DFX_OK);
  cr_expect_eq(dfx__f16_to_f32(((uint16_t *)o->data)[0]), 1.0f + 2.0f / 1024);
  dfx__tensor_unref(o);
  dfx__tensor_unref(x);
  /* half -> bfloat16 is not truncated either: 1 + 3*2^-9 rounds up. */
  x = mt_tensor(DFX_F16, 1, d1, dv2);
  cr_assert_eq(run_cast(x, DFX_BF16, 1, &o, err), DFX_OK);
  cr_expect_eq(((uint16_t *)o->data)[0], 0x3f81, "f16 -> bf16 rounds: %#x", ((uint16_t *)o->data)[0]);
  dfx__tensor_unref(o);
  dfx__tensor_unref(x);
  /* complex128 -> complex64 truncates both parts. */
  dfx_tensor *c = dfx__tensor_alloc(DFX_C128, 1, d1, NULL);
  ((dfx_c128 *)c->data)[0] = (dfx_c128){1.0 + 3.0 * pow(2, -25), -(1.0 + 3.0 * pow(2, -25))};
  cr_assert_eq(run_cast(c, DFX_C64, 1, &o, err), DFX_OK);
  cr_expect(((dfx_c64 *)o->data)[0].re == 1.0f && ((dfx_c64 *)o->data)[0].im == -1.0f);
  dfx__tensor_unref(o);
  cr_assert_eq(run_cast(c, DFX_C64, 0, &o, err), DFX_OK);
  cr_expect(((dfx_c64 *)o->data)[0].re == 1.0f + 0x1p-23f && ((dfx_c64 *)o->data)[0].im == -1.0f - 0x1p-23f);
  dfx__tensor_unref(o);
  dfx__tensor_unref(c);
}

Test(cast, same_type_forwards_and_string_fails) {
  int64_t d[1] = {3};
  dfx_tensor *x = mt_tensor(DFX_I32, 1, d, NULL), *o;
  char err[256];
  cr_assert_eq(run_cast(x, DFX_I32, 0, &o, err), DFX_OK);
  cr_expect_eq(o, x);
  dfx__tensor_unref(o);
  dfx__tensor_unref(x);
  x = dfx__tensor_alloc(DFX_STRING, 1, d, NULL);
  cr_expect_eq(run_cast(x, DFX_F32, 0, &o, err), DFX_EUNIMPL);
  cr_expect(strstr(err, "no Cast kernel for SrcT=string"), "%s", err); /* refused when the node is planned */
  dfx__tensor_unref(x);
}

static dfx_code run_bitcast(dfx_tensor *x, dfx_dtype dst, dfx_tensor **out, char *err) {
  dfx_node *n = kh_node_new("Bitcast");
  kh_attr_type(n, "T", (dfx_dtype)x->dtype);
  kh_attr_type(n, "type", dst);
  dfx_tensor *in[1] = {x}, *outs[1] = {0};
  int nout;
  dfx_code c = kh_run(n, in, 1, outs, &nout, err, 256);
  kh_node_free(n);
  *out = outs[0];
  return c;
}

Test(bitcast, shapes_and_bytes) {
  int64_t d[1] = {2};
  const float fv[2] = {1.0f, -2.5f};
  dfx_tensor *x = kh_f32(1, d, fv), *o;
  char err[256];
  cr_assert_eq(run_bitcast(x, DFX_U8, &o, err), DFX_OK, "%s", err);
  int64_t w1[2] = {2, 4};
  mt_expect_shape(o, 2, w1);
  cr_expect_eq(memcmp(o->data, fv, 8), 0);
  /* and back */
  dfx_tensor *b;
  cr_assert_eq(run_bitcast(o, DFX_F32, &b, err), DFX_OK, "%s", err);
  mt_expect_shape(b, 1, d);
  cr_expect_eq(((float *)b->data)[1], -2.5f);
  dfx__tensor_unref(b);
  cr_expect_eq(run_bitcast(o, DFX_I16, &b, err), DFX_EINVAL); /* last dim must be exactly 2 */
  dfx__tensor_unref(o);
  cr_assert_eq(run_bitcast(x, DFX_I16, &b, err), DFX_OK, "%s", err);
  int64_t w2[2] = {2, 2};
  mt_expect_shape(b, 2, w2);
  dfx__tensor_unref(b);
  cr_assert_eq(run_bitcast(x, DFX_I32, &o, err), DFX_OK);
  mt_expect_shape(o, 1, d);
  cr_expect_eq(((int32_t *)o->data)[0], 0x3f800000);
  dfx__tensor_unref(o);
  cr_assert_eq(run_bitcast(x, DFX_F64, &o, err), DFX_OK); /* [2] f32 -> [] f64 */
  cr_expect_eq(o->ndims, 0);
  dfx__tensor_unref(o);
  /* [2] f32 -> complex128 needs a last dim of 4 */
  cr_expect_eq(run_bitcast(x, DFX_C128, &o, err), DFX_EINVAL);
  cr_expect(strstr(err, "Cannot bitcast from DT_FLOAT to DT_COMPLEX128: shape [2]"), "%s", err);
  dfx__tensor_unref(x);
  x = kh_scalar_f32(1);
  cr_expect_eq(run_bitcast(x, DFX_F64, &o, err), DFX_EINVAL);
  cr_assert_eq(run_bitcast(x, DFX_U16, &o, err), DFX_OK);
  int64_t w3[1] = {2};
  mt_expect_shape(o, 1, w3);
  dfx__tensor_unref(o);
  dfx__tensor_unref(x);
  int64_t d0[2] = {0, 2};
  x = mt_tensor(DFX_U16, 2, d0, NULL);
  cr_assert_eq(run_bitcast(x, DFX_I32, &o, err), DFX_OK);
  int64_t w4[1] = {0};
  mt_expect_shape(o, 1, w4);
  dfx__tensor_unref(o);
  dfx__tensor_unref(x);
}

/* Every declared T x type pair keeps the bytes; the last dim grows or
 * shrinks by the size ratio. */
Test(bitcast, every_declared_pair) {
  int runs = 0;
  MT_FOR_DTYPES(s, mt_declared("Bitcast", "T"))
  MT_FOR_DTYPES(t, mt_declared("Bitcast", "type")) {
    const int64_t ss = (int64_t)dfx_dtype_size(s), ts = (int64_t)dfx_dtype_size(t);
    int64_t din[2] = {2, ss < ts ? ts / ss : 1}, dout[2] = {2, ss > ts ? ss / ts : 1};
    dfx_tensor *x = dfx__tensor_alloc(s, ss < ts ? 2 : 1, din, NULL), *o;
    for (size_t i = 0; i < x->nbytes; i++) ((unsigned char *)x->data)[i] = (unsigned char)(i * 37 + 5);
    char err[256];
    cr_assert_eq(run_bitcast(x, t, &o, err), DFX_OK, "%s -> %s: %s", dfx_dtype_name(s), dfx_dtype_name(t), err);
    cr_assert_eq(o->dtype, t);
    mt_expect_shape(o, ss > ts ? 2 : 1, dout);
    cr_assert_eq(o->nbytes, x->nbytes);
    cr_expect_eq(memcmp(o->data, x->data, x->nbytes), 0, "%s -> %s", dfx_dtype_name(s), dfx_dtype_name(t));
    dfx__tensor_unref(o);
    dfx__tensor_unref(x);
    runs++;
  }
  cr_expect_eq(runs, 19 * 19);
}
