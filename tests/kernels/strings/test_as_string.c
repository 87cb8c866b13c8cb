/* test_as_string.c - AsString: hand-written expectations per dtype and
 * attr, a naive integer formatter over every integer dtype, fill and
 * width, strings padded in bytes, and attr errors at init. */
#include "stest.h"

/* F(.width = 5): a format with TF's defaults (-1) for what is not given. */
#pragma GCC diagnostic ignored "-Woverride-init"
#define F(...) ((fmt){.precision = -1, .width = -1, __VA_ARGS__})

TestSuite(as_string, .init = st_setup, .fini = st_teardown, .timeout = 30);

typedef struct fmt {
  int precision, width;
  bool sci, shortest;
  const char *fill;
} fmt;

static dfx_code as_string(dfx_tensor *x, fmt f, dfx_tensor **out) {
  dfx_node *n = kh_node_new("AsString");
  kh_attr_type(n, "T", (dfx_dtype)x->dtype);
  kh_attr_int(n, "precision", f.precision);
  kh_attr_int(n, "width", f.width);
  kh_attr_bool(n, "scientific", f.sci);
  kh_attr_bool(n, "shortest", f.shortest);
  kh_attr_str(n, "fill", f.fill ? f.fill : "");
  dfx_code c = st_run(n, &x, 1, out);
  kh_node_free(n);
  return c;
}

/* Runs AsString on x (taken) and checks the strings. */
#define CHECK(x, f, n, ...)                                                   \
  do {                                                                        \
    dfx_tensor *in_ = (x), *o_ = NULL;                                        \
    cr_assert_eq(as_string(in_, f, &o_), DFX_OK, "%s", st_err);              \
    cr_assert(dfx__tensor_same_shape(o_, in_));                               \
    ST_EXPECT_STRS(o_, n, __VA_ARGS__);                                       \
    dfx__tensor_unref(o_);                                                    \
    dfx__tensor_unref(in_);                                                   \
  } while (0)

#define V1(n) 1, (int64_t[]){n}

Test(as_string, integers) {
  CHECK(kh_i32(V1(3), (int32_t[]){3, -2, 0}), F(), 3, "3", "-2", "0");
  CHECK(kh_i32(V1(2), (int32_t[]){3, -2}), F(.width = 5), 2, "    3", "   -2");
  CHECK(kh_i32(V1(2), (int32_t[]){3, -2}), F(.width = 5, .fill = "0"), 2, "00003", "-0002");
  CHECK(kh_i32(V1(2), (int32_t[]){3, -2}), F(.width = 5, .fill = "-"), 2, "3    ", "-2   ");
  CHECK(kh_i32(V1(2), (int32_t[]){3, -2}), F(.width = 5, .fill = "+"), 2, "   +3", "   -2");
  CHECK(kh_i32(V1(2), (int32_t[]){3, -2}), F(.width = 1, .fill = " "), 2, " 3", "-2");
  CHECK(kh_i32(V1(1), (int32_t[]){12345}), F(.width = 2), 1, "12345");
  CHECK(kh_i64(V1(2), (int64_t[]){INT64_MIN, INT64_MAX}), F(), 2, "-9223372036854775808",
        "9223372036854775807");
  CHECK(kh_tensor(DFX_U64, V1(1), (uint64_t[]){UINT64_MAX}), F(), 1, "18446744073709551615");
  CHECK(kh_tensor(DFX_I8, V1(2), (int8_t[]){-128, 127}), F(), 2, "-128", "127");
  CHECK(kh_tensor(DFX_U8, V1(1), (uint8_t[]){255}), F(), 1, "255");
  CHECK(kh_tensor(DFX_I16, V1(1), (int16_t[]){-32768}), F(), 1, "-32768");
  CHECK(kh_tensor(DFX_U16, V1(1), (uint16_t[]){65535}), F(), 1, "65535");
  CHECK(kh_tensor(DFX_U32, V1(1), (uint32_t[]){4000000000u}), F(), 1, "4000000000");
  /* Signs are never shown for unsigned types, whatever the fill. */
  CHECK(kh_tensor(DFX_U32, V1(1), (uint32_t[]){7}), F(.width = 3, .fill = "+"), 1, "  7");
  CHECK(kh_tensor(DFX_U8, V1(1), (uint8_t[]){7}), F(.width = 3, .fill = "#"), 1, "  7");
}

/* A naive formatter: digits by division, then sign, then padding. */
static void ref_int(char *buf, bool neg, uint64_t mag, bool is_signed, int width, char fill) {
  char d[32];
  int n = 0;
  do d[n++] = (char)('0' + mag % 10), mag /= 10;
  while (mag);
  char sign = neg ? '-' : (is_signed && fill == '+') ? '+' : (is_signed && fill == ' ') ? ' ' : 0;
  int len = n + (sign != 0), pad = width > len ? width - len : 0, o = 0;
  if (fill != '-' && fill != '0')
    for (int i = 0; i < pad; i++) buf[o++] = ' ';
  if (sign) buf[o++] = sign;
  if (fill == '0')
    for (int i = 0; i < pad; i++) buf[o++] = '0';
  while (n) buf[o++] = d[--n];
  if (fill == '-')
    for (int i = 0; i < pad; i++) buf[o++] = ' ';
  buf[o] = 0;
}

Test(as_string, every_integer_dtype_against_a_naive_formatter) {
  static const dfx_dtype types[] = {DFX_I8, DFX_I16, DFX_I32, DFX_I64, DFX_U8, DFX_U16, DFX_U32, DFX_U64};
  static const char *fills[] = {"", "0", "-", " ", "+", "#"};
  static const int widths[] = {-1, 0, 1, 4, 25};
  uint64_t seed = 88172645463325252ULL;
  for (size_t ti = 0; ti < 8; ti++) {
    dfx_dtype t = types[ti];
    size_t es = dfx__dtype_storage(t);
    int64_t n = 50;
    dfx_tensor *x = dfx__tensor_alloc(t, 1, &n, NULL);
    for (int64_t i = 0; i < n; i++) {
      seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
      uint64_t v = i < 4 ? (uint64_t[]){0, 1, ~(uint64_t)0, (uint64_t)1 << (es * 8 - 1)}[i] : seed >> (i % 60);
      memcpy((char *)x->data + (size_t)i * es, &v, es); /* little-endian: the low bytes */
    }
    for (size_t fi = 0; fi < 6; fi++)
      for (size_t wi = 0; wi < 5; wi++) {
        dfx_tensor *o = NULL;
        cr_assert_eq(as_string(x, F(.width = widths[wi] ? widths[wi] : -1, .fill = fills[fi]), &o), DFX_OK,
                     "%s", st_err);
        for (int64_t i = 0; i < n; i++) {
          bool neg = false, sg = dfx__dtype_is_signed(t);
          uint64_t mag;
          if (sg) {
            int64_t v = dfx__tensor_get_i64(x, i);
            neg = v < 0;
            mag = neg ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
          } else {
            mag = 0;
            memcpy(&mag, (char *)x->data + (size_t)i * es, es);
          }
          char want[64];
          ref_int(want, neg, mag, sg, widths[wi], fills[fi][0]);
          const dfx_str *got = &((dfx_str *)o->data)[i];
          cr_expect(st_is(o, i, want, strlen(want)), "%s fill '%s' width %d: got '%.*s', want '%s'",
                    dfx_dtype_name(t), fills[fi], widths[wi], (int)got->len, got->ptr, want);
        }
        dfx__tensor_unref(o);
      }
    dfx__tensor_unref(x);
  }
}

Test(as_string, floating) {
  float pi[] = {3.1415926f, 2.71828f};
  CHECK(kh_f32(V1(2), pi), F(.precision = 2), 2, "3.14", "2.72");
  CHECK(kh_f32(V1(2), pi), F(), 2, "3.141593", "2.718280");
  CHECK(kh_f32(V1(1), pi), F(.sci = true), 1, "3.141593e+00");
  CHECK(kh_f32(V1(1), pi), F(.shortest = true), 1, "3.14159");
  CHECK(kh_f32(V1(1), pi), F(.shortest = true, .precision = 3), 1, "3.14");
  CHECK(kh_f32(V1(1), pi), F(.width = 10, .precision = 2, .fill = "0"), 1, "0000003.14");
  CHECK(kh_f32(V1(1), pi), F(.width = 8, .precision = 1, .fill = "-"), 1, "3.1     ");
  CHECK(kh_f32(V1(1), pi), F(.precision = 0, .fill = "#"), 1, "3."); /* alternate form keeps the point */
  CHECK(kh_f32(V1(1), pi), F(.precision = 0), 1, "3");
  CHECK(kh_f32(V1(1), pi), F(.precision = 1, .fill = "+"), 1, "+3.1");
  CHECK(kh_f32(V1(3), (float[]){INFINITY, -INFINITY, NAN}), F(), 3, "inf", "-inf", "nan");
  CHECK(kh_f32(V1(1), (float[]){INFINITY}), F(.width = 6, .fill = "0"), 1, "   inf");
  CHECK(kh_tensor(DFX_F64, V1(2), (double[]){1e300, -0.0}), F(.sci = true, .precision = 1), 2, "1.0e+300",
        "-0.0e+00");
  CHECK(kh_tensor(DFX_F64, V1(1), (double[]){0.1}), F(.precision = 20), 1, "0.10000000000000000555");
  CHECK(kh_tensor(DFX_F64, V1(1), (double[]){1e-5}), F(.shortest = true), 1, "1e-05");
  CHECK(kh_tensor(DFX_F16, V1(2), (uint16_t[]){0x3800, 0xc500}), F(), 2, "0.500000", "-5.000000");
  CHECK(kh_tensor(DFX_BF16, V1(1), (uint16_t[]){0x3fc0}), F(.precision = 2), 1, "1.50");
  CHECK(kh_tensor(DFX_C64, V1(2), (float[]){1.5f, -2, 0, 0.25f}), F(.precision = 1), 2, "(1.5,-2.0)",
        "(0.0,0.2)");
  CHECK(kh_tensor(DFX_C128, V1(1), (double[]){-1, 1e10}), F(.sci = true, .precision = 2), 1,
        "(-1.00e+00,1.00e+10)");
  CHECK(kh_tensor(DFX_C64, V1(1), (float[]){1, 2}), F(.width = 4, .precision = 0), 1, "(   1,   2)");
}

Test(as_string, bool_and_string) {
  CHECK(kh_bool(V1(2), (uint8_t[]){1, 0}), F(), 2, "true", "false");
  CHECK(kh_bool(V1(1), (uint8_t[]){1}), F(.width = 10), 1, "true"); /* width is ignored */
  const char *s[] = {"ab", "", "hello"};
  CHECK(st_vec(3, s), F(.width = 4), 3, "  ab", "    ", "hello");
  CHECK(st_vec(3, s), F(.width = 4, .fill = "-"), 3, "ab  ", "    ", "hello");
  CHECK(st_vec(3, s), F(.width = 4, .fill = "0"), 3, "  ab", "    ", "hello"); /* pads with spaces */
  CHECK(st_vec(3, s), F(.width = 3, .precision = 1), 3, "  a", "   ", "  h");
  /* No width: the input is passed through, even with a precision. */
  dfx_tensor *x = st_vec(3, s), *o = NULL;
  cr_assert_eq(as_string(x, F(.precision = 1), &o), DFX_OK, "%s", st_err);
  ST_EXPECT_STRS(o, 3, "ab", "", "hello");
  dfx__tensor_unref(o);
  dfx__tensor_unref(x);
  /* Widths count bytes; embedded NULs are kept. */
  x = st_bytes("a\0b", 3);
  cr_assert_eq(as_string(x, F(.width = 5), &o), DFX_OK, "%s", st_err);
  cr_expect(st_is(o, 0, "  a\0b", 5));
  dfx__tensor_unref(o);
  dfx__tensor_unref(x);
}

Test(as_string, shapes_and_empty) {
  dfx_tensor *x = kh_i32(2, (int64_t[]){2, 0}, NULL), *o = NULL;
  cr_assert_eq(as_string(x, F(), &o), DFX_OK, "%s", st_err);
  cr_expect(o->ndims == 2 && o->dims[0] == 2 && o->dims[1] == 0 && o->dtype == DFX_STRING);
  dfx__tensor_unref(o);
  dfx__tensor_unref(x);
  CHECK(kh_i64(2, (int64_t[]){2, 1}, (int64_t[]){5, 6}), F(), 2, "5", "6");
  CHECK(kh_scalar_i32(-9), F(), 1, "-9");
}

Test(as_string, attr_errors) {
  const struct {
    dfx_dtype t;
    fmt f;
    const char *msg;
  } cases[] = {
      {DFX_I32, F(.precision = 2), "precision not supported for datatype int32"},
      {DFX_BOOL, F(.precision = 0), "precision not supported for datatype bool"},
      {DFX_I64, F(.sci = true), "scientific and shortest format not supported for datatype int64"},
      {DFX_U8, F(.shortest = true), "scientific and shortest format not supported for datatype uint8"},
      {DFX_F32, F(.fill = "ab"), "Fill string must be one or fewer characters"},
      {DFX_F32, F(.sci = true, .shortest = true), "Cannot select both scientific and shortest notation"},
      {DFX_F64, F(.fill = "x"), "Fill argument not supported: \"x\""},
      {DFX_STRING, F(.fill = "*"), "Fill argument not supported: \"*\""},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    dfx_tensor *x = dfx__tensor_zeros(cases[i].t, 0, NULL, NULL), *o = NULL;
    cr_expect_eq(as_string(x, cases[i].f, &o), DFX_EINVAL, "case %zu", i);
    cr_expect(strstr(st_err, cases[i].msg), "case %zu: %s", i, st_err);
    dfx__tensor_unref(x);
  }
  /* TF reads width and precision as int32. */
  dfx_node *n = kh_node_new("AsString");
  kh_attr_type(n, "T", DFX_F32);
  kh_attr_int(n, "width", (int64_t)1 << 32);
  dfx_tensor *x = kh_scalar_f32(1), *o = NULL;
  cr_expect_eq(st_run(n, &x, 1, &o), DFX_EINVAL);
  cr_expect(strstr(st_err, "Attr width has value 4294967296 out of range for an int32"), "%s", st_err);
  kh_node_free(n);
  dfx__tensor_unref(x);
}

Test(as_string, huge_widths_are_held_to_the_tensor_limit) {
  size_t old = dfx_set_max_tensor_bytes((size_t)1 << 20);
  dfx_tensor *x = kh_f32(V1(20), NULL), *o = NULL;
  memset(x->data, 0, x->nbytes);
  cr_expect_eq(as_string(x, F(.width = 100000), &o), DFX_ELIMIT);
  cr_expect(strstr(st_err, "tensor byte limit"), "%s", st_err);
  cr_expect_eq(as_string(x, F(.precision = 2000000000), &o), DFX_ELIMIT);
  dfx__tensor_unref(x);
  const char *s[] = {"a", "b"};
  x = st_vec(2, s);
  cr_expect_eq(as_string(x, F(.width = 1000000), &o), DFX_ELIMIT);
  dfx__tensor_unref(x);
  /* A width that fits is fine. */
  CHECK(kh_i32(V1(1), (int32_t[]){1}), F(.width = 1000), 1,
        "                                                                                                    "
        "                                                                                                    "
        "                                                                                                    "
        "                                                                                                    "
        "                                                                                                    "
        "                                                                                                    "
        "                                                                                                    "
        "                                                                                                    "
        "                                                                                                    "
        "                                                                                                   1");
  dfx_set_max_tensor_bytes(old);
}
