/* test_to_number.c - StringToNumber: hand-written tables of accepted and
 * refused strings per out_type (TF's safe_strto* and double-conversion
 * grammar), rounding, and the error text. */
#include <float.h>

#include "stest.h"

TestSuite(to_number, .init = st_setup, .fini = st_teardown, .timeout = 30);

static dfx_code convert(const char *s, size_t len, dfx_dtype t, dfx_tensor **out) {
  dfx_node *n = kh_node_new("StringToNumber");
  kh_attr_type(n, "out_type", t);
  dfx_tensor *x = st_bytes(s, len);
  dfx_code c = st_run(n, &x, 1, out);
  dfx__tensor_unref(x);
  kh_node_free(n);
  return c;
}

/* Parses s as t; true with the value in *v (as double or int64). */
static bool ok_int(const char *s, dfx_dtype t, int64_t *v) {
  dfx_tensor *o = NULL;
  if (convert(s, strlen(s), t, &o) != DFX_OK) return false;
  switch (t) {
    case DFX_I32: *v = ((int32_t *)o->data)[0]; break;
    case DFX_U32: *v = ((uint32_t *)o->data)[0]; break;
    default: *v = ((int64_t *)o->data)[0]; break;
  }
  dfx__tensor_unref(o);
  return true;
}
static bool ok_float(const char *s, dfx_dtype t, double *v) {
  dfx_tensor *o = NULL;
  if (convert(s, strlen(s), t, &o) != DFX_OK) return false;
  *v = t == DFX_F32 ? ((float *)o->data)[0] : ((double *)o->data)[0];
  dfx__tensor_unref(o);
  return true;
}

Test(to_number, integers) {
  static const struct {
    const char *s;
    dfx_dtype t;
    bool ok;
    int64_t v;
  } cases[] = {
      {"123", DFX_I32, true, 123},
      {" 42 ", DFX_I32, true, 42},
      {"\t7\n", DFX_I32, true, 7},
      {"\v\f\r8", DFX_I64, true, 8},
      {"007", DFX_I32, true, 7},
      {"-0", DFX_I32, true, 0},
      {"-2147483648", DFX_I32, true, INT32_MIN},
      {"2147483647", DFX_I32, true, INT32_MAX},
      {"2147483648", DFX_I32, false, 0},
      {"-2147483649", DFX_I32, false, 0},
      {"9223372036854775807", DFX_I64, true, INT64_MAX},
      {"-9223372036854775808", DFX_I64, true, INT64_MIN},
      {"9223372036854775808", DFX_I64, false, 0},
      {"99999999999999999999", DFX_I64, false, 0},
      {"4294967295", DFX_U32, true, 4294967295LL},
      {"4294967296", DFX_U32, false, 0},
      {"-1", DFX_U32, false, 0},
      {"-0", DFX_U64, false, 0},
      {"18446744073709551615", DFX_U64, true, -1},
      {"18446744073709551616", DFX_U64, false, 0},
      {"+1", DFX_I32, false, 0},
      {"1.0", DFX_I32, false, 0},
      {"1e3", DFX_I64, false, 0},
      {"", DFX_I32, false, 0},
      {"   ", DFX_I32, false, 0},
      {"-", DFX_I64, false, 0},
      {"0x10", DFX_I32, false, 0},
      {"1 2", DFX_I32, false, 0},
      {"- 1", DFX_I32, false, 0},
      {"12a", DFX_U64, false, 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    int64_t v = 0;
    bool ok = ok_int(cases[i].s, cases[i].t, &v);
    cr_expect_eq(ok, cases[i].ok, "'%s' as %s: %s", cases[i].s, dfx_dtype_name(cases[i].t), st_err);
    if (ok && cases[i].ok) cr_expect_eq(v, cases[i].v, "'%s': %lld", cases[i].s, (long long)v);
  }
}

Test(to_number, floating) {
  static const struct {
    const char *s;
    bool ok;
    double f, d; /* expected as float and as double */
  } cases[] = {
      {"3.25", true, 3.25, 3.25},
      {"  -1.5e3 ", true, -1500, -1500},
      {".5", true, 0.5, 0.5},
      {"5.", true, 5, 5},
      {"-.25E+1", true, -2.5, -2.5},
      {"+.5e-1", true, 0.05f, 0.05},
      {"0x1A", true, 26, 26},
      {"-0X10", true, -16, -16},
      {"0xfFfFfFfFfFfFfFfFf", true, 0x1p68f, 0x1p68}, /* 2^68 - 1 rounds to 2^68 */
      {"007.5", true, 7.5, 7.5},
      {"1e400", true, INFINITY, INFINITY},
      {"-1e400", true, -INFINITY, -INFINITY},
      {"1e-50", true, 0, 1e-50},
      {"0.1", true, 0.1f, 0.1},
      {"16777217", true, 16777216, 16777217}, /* a tie: to even in float */
      {"3.4028235e38", true, FLT_MAX, 3.4028235e38},
      {"1.7976931348623157e308", true, INFINITY, DBL_MAX},
      {"2.2250738585072014e-308", true, 0, 2.2250738585072014e-308},
      {"   ", true, 0, 0}, /* only spaces: double-conversion's empty value */
      {"0", true, 0, 0},
      {"", false, 0, 0},
      {"infinity", false, 0, 0},
      {"1e", false, 0, 0},
      {"1e+", false, 0, 0},
      {"e5", false, 0, 0},
      {".", false, 0, 0},
      {".e1", false, 0, 0},
      {"1,5", false, 0, 0},
      {"- 1", false, 0, 0},
      {"--1", false, 0, 0},
      {"0x", false, 0, 0},
      {"0x1p3", false, 0, 0}, /* no hex floats */
      {"0x1.8", false, 0, 0},
      {"1.5f", false, 0, 0},
      {"nan x", false, 0, 0},
      {"1 e5", false, 0, 0},
      {"0.000000000000000000000000000001", false, 0, 0}, /* 32 bytes: too long for TF */
      {"0.00000000000000000000000000001", true, 1e-29f, 1e-29},
  };
  for (int k = 0; k < 2; k++) {
    dfx_dtype t = k ? DFX_F64 : DFX_F32;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
      double v = 0;
      bool ok = ok_float(cases[i].s, t, &v);
      cr_expect_eq(ok, cases[i].ok, "'%s' as %s: %s", cases[i].s, dfx_dtype_name(t), st_err);
      double want = k ? cases[i].d : (double)(float)cases[i].f;
      if (ok && cases[i].ok) cr_expect(v == want, "'%s' as %s: %.17g, want %.17g", cases[i].s, dfx_dtype_name(t), v, want);
    }
  }
  /* Case-insensitive inf and nan, signed. */
  const char *specials[] = {"inf", "-INF", "+Inf", " nan ", "-NaN"};
  for (int i = 0; i < 5; i++) {
    double v;
    cr_assert(ok_float(specials[i], DFX_F32, &v), "%s", specials[i]);
    cr_expect(i < 3 ? isinf(v) && (v < 0) == (i == 1) : isnan(v) && (signbit(v) != 0) == (i == 4), "%s", specials[i]);
  }
}

Test(to_number, error_text_and_shapes) {
  dfx_tensor *o = NULL;
  cr_expect_eq(convert("abc", 3, DFX_F32, &o), DFX_EINVAL);
  cr_expect(strstr(st_err, "StringToNumberOp could not correctly convert string: abc"), "%s", st_err);
  /* TF prints the C string, up to a NUL; the NUL makes it invalid. */
  cr_expect_eq(convert("12\0" "3", 4, DFX_I32, &o), DFX_EINVAL);
  cr_expect(strstr(st_err, "convert string: 12") && !strstr(st_err, "123"), "%s", st_err);
  const char *v[] = {"1", "-2", "3", "40"};
  dfx_node *n = kh_node_new("StringToNumber");
  kh_attr_type(n, "out_type", DFX_I64);
  dfx_tensor *x = st_str(2, (int64_t[]){2, 2}, v);
  cr_assert_eq(st_run(n, &x, 1, &o), DFX_OK, "%s", st_err);
  cr_expect(o->ndims == 2 && memcmp(o->data, (int64_t[]){1, -2, 3, 40}, 32) == 0);
  dfx__tensor_unref(o);
  dfx__tensor_unref(x);
  x = st_str(1, (int64_t[]){0}, NULL);
  cr_assert_eq(st_run(n, &x, 1, &o), DFX_OK, "%s", st_err);
  cr_expect(o->count == 0 && o->dtype == DFX_I64);
  dfx__tensor_unref(o);
  dfx__tensor_unref(x);
  /* The default out_type is float. */
  kh_node_free(n);
  n = kh_node_new("StringToNumber");
  x = st_vec(1, v);
  cr_assert_eq(st_run(n, &x, 1, &o), DFX_OK, "%s", st_err);
  cr_expect(o->dtype == DFX_F32 && ((float *)o->data)[0] == 1.0f);
  dfx__tensor_unref(o);
  dfx__tensor_unref(x);
  kh_node_free(n);
}
