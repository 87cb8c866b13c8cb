/* test_pbtext_values.c - protobuf text format details: number, string and
 * syntax forms, defaults, error positions, nesting limits, truncation and
 * allocation failures. */
#include "ptest.h"

TestSuite(pbtext_values, .init = setup, .fini = teardown, .timeout = 120);

/* ---- values ---- */

#define TENSOR (&tensorflow__tensor_proto__descriptor)
#define NODE (&tensorflow__node_def__descriptor)
#define ATTR (&tensorflow__attr_value__descriptor)

Test(pbtext_values, every_number_form) {
  Tensorflow__TensorProto *t = (Tensorflow__TensorProto *)parse_ok(TENSOR,
      "dtype: 3\n"
      "float_val: [1, -2.5, 1e-5, 1.5e+3f, 2.f, .25, inf, -inf, nan, Infinity, -INF, NaN, 0x10, 7f, -0]\n"
      "int_val: [0, -1, 2147483647, -2147483648, 0x7fffffff, -0x80000000, 010, 0]\n"
      "int64_val: 9223372036854775807 int64_val: -9223372036854775808, int64_val: -0x10;\n"
      "uint64_val: [18446744073709551615, 0xFFFFFFFFFFFFFFFF]\n"
      "uint32_val: 4294967295\n"
      "double_val: [0.1, 1e308, -1e-308, 5e-324, 1e400, 3, 100000000000000000000000]\n"
      "bool_val: [true, false, True, False, t, f, 1, 0]\n");
  cr_expect_eq(t->dtype, TENSORFLOW__DATA_TYPE__DT_INT32);
  float fv[] = {1, -2.5f, 1e-5f, 1.5e3f, 2, 0.25f, INFINITY, -INFINITY, NAN, INFINITY, -INFINITY, NAN, 16, 7, -0.0f};
  cr_assert_eq(t->n_float_val, sizeof fv / sizeof *fv);
  for (size_t i = 0; i < t->n_float_val; i++) {
    if (isnan(fv[i]))
      cr_expect(isnan(t->float_val[i]), "float_val[%zu]", i);
    else
      cr_expect_eq(t->float_val[i], fv[i], "float_val[%zu] = %g", i, t->float_val[i]);
  }
  cr_expect(signbit(t->float_val[14]), "-0 keeps its sign");
  int32_t iv[] = {0, -1, INT32_MAX, INT32_MIN, INT32_MAX, INT32_MIN, 8, 0};
  cr_assert_eq(t->n_int_val, 8);
  for (size_t i = 0; i < 8; i++) cr_expect_eq(t->int_val[i], iv[i], "int_val[%zu]", i);
  cr_assert_eq(t->n_int64_val, 3);
  cr_expect_eq(t->int64_val[0], INT64_MAX);
  cr_expect_eq(t->int64_val[1], INT64_MIN);
  cr_expect_eq(t->int64_val[2], -16);
  cr_expect_eq(t->uint64_val[0], UINT64_MAX);
  cr_expect_eq(t->uint64_val[1], UINT64_MAX);
  cr_expect_eq(t->uint32_val[0], UINT32_MAX);
  cr_assert_eq(t->n_double_val, 7);
  cr_expect_eq(t->double_val[6], 1e23);
  cr_expect_eq(t->double_val[0], 0.1);
  cr_expect_eq(t->double_val[3], 5e-324);
  cr_expect(isinf(t->double_val[4]));
  protobuf_c_boolean bv[] = {1, 0, 1, 0, 1, 0, 1, 0};
  cr_assert_eq(t->n_bool_val, 8);
  for (size_t i = 0; i < 8; i++) cr_expect_eq(t->bool_val[i], bv[i], "bool_val[%zu]", i);
  check_round_trip(&t->base);
  char *s = print_ok(&t->base);
  cr_expect(strstr(s, "float_val: 1\nfloat_val: -2.5\nfloat_val: 1e-05\nfloat_val: 1500\n"), "%s", s);
  cr_expect(strstr(s, "float_val: inf\nfloat_val: -inf\nfloat_val: nan\n"), "%s", s);
  cr_expect(strstr(s, "float_val: -0\n"), "%s", s);
  cr_expect(strstr(s, "double_val: 0.1\n"), "%s", s);
  cr_expect(strstr(s, "dtype: DT_INT32\n"), "%s", s);
  cr_expect(strstr(s, "int64_val: -9223372036854775808\n"), "%s", s);
  cr_expect(strstr(s, "uint64_val: 18446744073709551615\n"), "%s", s);
  cr_expect(strstr(s, "bool_val: true\nbool_val: false\n"), "%s", s);
  dfx__free(s);
  free_msg(&t->base);
}

/* Random bit patterns: every float and double prints in a form that parses
 * back to the same bits (NaN payloads aside). */
Test(pbtext_values, reals_round_trip_exactly) {
  Tensorflow__TensorProto t = TENSORFLOW__TENSOR_PROTO__INIT;
  enum { N = 20000 };
  float *fv = malloc(N * sizeof *fv);
  double *dv = malloc(N * sizeof *dv);
  uint64_t x = 88172645463325252ull;
  for (size_t i = 0; i < N; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    uint32_t u = (uint32_t)x;
    memcpy(&fv[i], &u, 4);
    memcpy(&dv[i], &x, 8);
    if (isnan(fv[i])) fv[i] = 1.0f / (float)(i + 1);
    if (isnan(dv[i])) dv[i] = 1.0 / (double)(i + 3);
  }
  t.n_float_val = t.n_double_val = N;
  t.float_val = fv;
  t.double_val = dv;
  check_round_trip(&t.base);
  free(fv);
  free(dv);
}

Test(pbtext_values, string_escapes) {
  Tensorflow__TensorProto *t = (Tensorflow__TensorProto *)parse_ok(TENSOR,
      "string_val: \"a\\nb\\t\\\\\\\"\\'\\001\\377\\x41\\101\\r\\a\\b\\f\\v\\?\\0\"\n"
      "string_val: 'single \"quoted\"'\n"
      "string_val: \"con\" 'cat' \"\"\n"
      "string_val: \"\\u00e9\\U0001F600\"\n"
      "string_val: \"\"\n");
  cr_assert_eq(t->n_string_val, 5);
  static const char want0[] = "a\nb\t\\\"'\001\377AA\r\a\b\f\v?";
  cr_assert_eq(t->string_val[0].len, sizeof want0); /* the trailing \0 is data */
  cr_expect(!memcmp(t->string_val[0].data, want0, sizeof want0));
  cr_expect(t->string_val[1].len == 15 && !memcmp(t->string_val[1].data, "single \"quoted\"", 15));
  cr_expect(t->string_val[2].len == 6 && !memcmp(t->string_val[2].data, "concat", 6));
  cr_expect(t->string_val[3].len == 6 && !memcmp(t->string_val[3].data, "\xc3\xa9\xf0\x9f\x98\x80", 6));
  cr_expect_eq(t->string_val[4].len, 0);
  char *s = print_ok(&t->base);
  cr_expect_str_eq(s,
                   "string_val: \"a\\nb\\t\\\\\\\"\\'\\001\\377AA\\r\\007\\010\\014\\013?\\000\"\n"
                   "string_val: \"single \\\"quoted\\\"\"\n"
                   "string_val: \"concat\"\n"
                   "string_val: \"\\303\\251\\360\\237\\230\\200\"\n"
                   "string_val: \"\"\n");
  dfx__free(s);
  check_round_trip(&t->base);
  free_msg(&t->base);
}

Test(pbtext_values, syntax_variants) {
  /* Angle brackets, "field: {", separators, comments, message lists and maps. */
  Tensorflow__NodeDef *n = (Tensorflow__NodeDef *)parse_ok(NODE,
      "# leading comment\n"
      "name: 'n' ; op: \"Op\", # trailing comment\n"
      "input: ['a', \"b:1\"] input: [] input: '^c'\n"
      "attr < key: 'T' value: { type: DT_FLOAT } >\n"
      "attr: [{ key: 'shape' value { shape { dim { size: -1 } dim: < size: 3 name: 'x' > } } },\n"
      "       { key: 'l' value { list { i: [1, 2] type: [DT_INT32, 9] s: 'x' } } }]\n"
      "attr { key: 'z' value { i: 0 } }\n"
      "attr { key: 'e' value { list { } } }\n");
  cr_expect_str_eq(n->name, "n");
  cr_expect_str_eq(n->op, "Op");
  cr_assert_eq(n->n_input, 3);
  cr_expect_str_eq(n->input[2], "^c");
  cr_assert_eq(n->n_attr, 5);
  cr_expect_eq(n->attr[0]->value->type, TENSORFLOW__DATA_TYPE__DT_FLOAT);
  cr_expect_eq(n->attr[1]->value->shape->dim[1]->size, 3);
  cr_expect_str_eq(n->attr[1]->value->shape->dim[1]->name, "x");
  const Tensorflow__AttrValue__ListValue *l = n->attr[2]->value->list;
  cr_expect(l->n_i == 2 && l->i[1] == 2 && l->n_type == 2 && l->type[1] == TENSORFLOW__DATA_TYPE__DT_INT64);
  char *s = print_ok(&n->base);
  cr_expect_str_eq(s,
                   "name: \"n\"\nop: \"Op\"\ninput: \"a\"\ninput: \"b:1\"\ninput: \"^c\"\n"
                   "attr {\n  key: \"T\"\n  value {\n    type: DT_FLOAT\n  }\n}\n"
                   "attr {\n  key: \"shape\"\n  value {\n    shape {\n      dim {\n        size: -1\n      }\n"
                   "      dim {\n        size: 3\n        name: \"x\"\n      }\n    }\n  }\n}\n"
                   "attr {\n  key: \"l\"\n  value {\n    list {\n      s: \"x\"\n      i: 1\n      i: 2\n"
                   "      type: DT_INT32\n      type: DT_INT64\n    }\n  }\n}\n"
                   "attr {\n  key: \"z\"\n  value {\n    i: 0\n  }\n}\n"
                   "attr {\n  key: \"e\"\n  value {\n    list {\n    }\n  }\n}\n");
  dfx__free(s);
  check_round_trip(&n->base);
  free_msg(&n->base);
}

Test(pbtext_values, oneof_defaults_are_printed) {
  /* A oneof member at its default value is still set, and prints. */
  ProtobufCMessage *m = parse_ok(ATTR, "placeholder: ''");
  char *s = print_ok(m);
  cr_expect_str_eq(s, "placeholder: \"\"\n");
  dfx__free(s);
  free_msg(m);
  m = parse_ok(ATTR, "b: false");
  s = print_ok(m);
  cr_expect_str_eq(s, "b: false\n");
  dfx__free(s);
  free_msg(m);
}

Test(pbtext_values, proto3_defaults_are_omitted) {
  ProtobufCMessage *m = parse_ok(TENSOR, "dtype: DT_INVALID version_number: 0 tensor_content: ''");
  char *s = print_ok(m);
  cr_expect_str_eq(s, "");
  dfx__free(s);
  free_msg(m);
  m = parse_ok(TENSOR, "  # nothing but a comment");
  size_t n;
  cr_expect_eq(protobuf_c_message_get_packed_size(m), 0);
  cr_assert_eq(dfx__pbtext_print(m, &s, &n, NULL), DFX_OK);
  cr_expect(n == 0 && s[0] == 0);
  dfx__free(s);
  free_msg(m);
}

/* ---- errors ---- */

Test(pbtext_values, errors_report_line_and_column) {
  expect_error(NODE, "name: 'x'\n  op: \"abc\n", DFX_EINVAL, "2:7", "unterminated string");
  expect_error(NODE, "name: 'x\\'", DFX_EINVAL, "1:7", "unterminated string");
  expect_error(NODE, "name: 'x'\n  bogus: 1\n", DFX_EINVAL, "2:3", "'bogus'");
  expect_error(NODE, "attr { key: 'T' value { type: DT_FLAOT } }", DFX_EINVAL, "1:31", "DT_FLAOT");
  expect_error(NODE, "attr { key: 'T' value { type: DT_FLOAT }\n", DFX_EINVAL, "2:1", "missing '}'");
  expect_error(NODE, "attr { key: 'T' value < type: DT_FLOAT }}", DFX_EINVAL, "1:40", "'}'");
  expect_error(NODE, "name 'x'", DFX_EINVAL, "1:6", "expected ':'");
  expect_error(NODE, "name: 3", DFX_EINVAL, "1:7", "expected string");
  expect_error(NODE, "}", DFX_EINVAL, "1:1", "expected a field name");
  expect_error(NODE, "name: 'x' @", DFX_EINVAL, "1:11", "unexpected character");
  expect_error(NODE, "name: 'a' name: 'b'", DFX_EINVAL, "1:11", "more than once");
  expect_error(NODE, "name: 'a\\000b'", DFX_EINVAL, "1:7", "NUL");
  expect_error(NODE, "name: 'a\\qb'", DFX_EINVAL, "1:7", "invalid escape");
  expect_error(NODE, "input: ['a' 'b',]", DFX_EINVAL, "1:17", "expected string");
  expect_error(NODE, "input: ['a' ; 'b']", DFX_EINVAL, "1:13", "expected ','");
  expect_error(ATTR, "s: 'x'\ni: 3", DFX_EINVAL, "2:1", "oneof");
  expect_error(ATTR, "i: 12abc", DFX_EINVAL, "1:4", "need space");
  expect_error(ATTR, "i: 1.5", DFX_EINVAL, "1:4", "expected integer");
  expect_error(ATTR, "i: 0x", DFX_EINVAL, "1:4", "hex");
  expect_error(ATTR, "i: 09", DFX_EINVAL, "1:4", "invalid digit");
  expect_error(ATTR, "f: 1e", DFX_EINVAL, "1:4", "exponent");
  expect_error(ATTR, "f: infinite", DFX_EINVAL, "1:4", "expected number");
  expect_error(ATTR, "b: yes", DFX_EINVAL, "1:4", "expected bool");
  expect_error(ATTR, "b: 2", DFX_EINVAL, "1:4", "expected bool");
  expect_error(ATTR, "shape: 3", DFX_EINVAL, "1:8", "expected '{'");
  expect_error(TENSOR, "int_val: 2147483648", DFX_ERANGE, "1:10", "int_val");
  expect_error(TENSOR, "int_val: -2147483649", DFX_ERANGE, "1:10", "int_val");
  expect_error(TENSOR, "uint32_val: -1", DFX_ERANGE, "1:13", "uint32_val");
  expect_error(TENSOR, "int64_val: 9223372036854775808", DFX_ERANGE, "1:12", "int64_val");
  expect_error(TENSOR, "uint64_val: 18446744073709551616", DFX_ERANGE, "1:13", "too large");
  expect_error(TENSOR, "dtype: 2147483648", DFX_ERANGE, "1:8", "dtype");
}

/* Builds "variant_val { tensors { variant_val { ... } } }" with `levels`
 * nested messages in a malloc'd string. */
static char *nest(int levels) {
  char *s = malloc((size_t)levels * 16 + 1), *p = s;
  for (int i = 0; i < levels; i++) p += sprintf(p, "%s", i % 2 ? "tensors {" : "variant_val {");
  for (int i = 0; i < levels; i++) *p++ = '}';
  *p = 0;
  return s;
}

Test(pbtext_values, nesting_is_capped) {
  char *s = nest(DFX_PBTEXT_MAX_DEPTH);
  ProtobufCMessage *m = parse_ok(TENSOR, s);
  check_round_trip(m);
  free_msg(m);
  free(s);
  s = nest(DFX_PBTEXT_MAX_DEPTH + 1);
  expect_error(TENSOR, s, DFX_ELIMIT, "1:1113", "nested deeper");
  free(s);
  /* A million levels fail fast at the cap instead of overflowing the stack. */
  s = nest(1000000);
  expect_error(TENSOR, s, DFX_ELIMIT, "1:1113", "nested deeper");
  free(s);
  s = malloc(2000001);
  for (size_t i = 0; i < 1000000; i++) memcpy(s + 2 * i, "[{", 2);
  s[2000000] = 0;
  expect_error(ATTR, s, DFX_EINVAL, "1:1", "expected a field name");
  free(s);
}

Test(pbtext_values, truncated_text_never_crashes) {
  char path[1024];
  size_t len;
  conf_path(path, sizeof path, "tf-text", "control_flow_v1.pbtxt");
  char *text = slurp(path, &len);
  /* Every prefix either parses or fails cleanly; the fixture checks leaks. */
  for (size_t cut = 0; cut < len; cut += 7) {
    ProtobufCMessage *m = NULL;
    dfx_code rc = dfx__pbtext_parse(&tensorflow__graph_def__descriptor, text, cut, &g_pa, &m, &g_st);
    cr_assert((rc == DFX_OK) == (m != NULL), "cut %zu: %s", cut, g_st.msg);
    if (m) free_msg(m);
  }
  free(text);
}

/* ---- allocation failures ---- */

Test(pbtext_values, every_allocation_failure_is_clean) {
  Tensorflow__GraphDef *g = load_tf_text("switch_n");
  char *ref = print_ok(&g->base);
  size_t ref_len = strlen(ref);
  for (long long k = 1;; k++) {
    ProtobufCMessage *m = NULL;
    long long live = g_ta.live_blocks;
    g_ta.fail_at = g_ta.n_allocs + k;
    dfx_code rc = dfx__pbtext_parse(&tensorflow__graph_def__descriptor, ref, ref_len, &g_pa, &m, &g_st);
    g_ta.fail_at = 0;
    if (rc == DFX_OK) {
      free_msg(m);
      cr_expect_gt(k, 3);
      break;
    }
    cr_assert_eq(rc, DFX_ENOMEM, "k=%lld: %s", k, g_st.msg);
    cr_assert_null(m);
    cr_assert_eq(g_ta.live_blocks, live, "k=%lld leaked", k);
  }
  for (long long k = 1;; k++) {
    char *s = NULL;
    long long live = g_ta.live_blocks;
    g_ta.fail_at = g_ta.n_allocs + k;
    dfx_code rc = dfx__pbtext_print(&g->base, &s, NULL, &g_st);
    g_ta.fail_at = 0;
    if (rc == DFX_OK) {
      cr_expect_str_eq(s, ref);
      dfx__free(s);
      break;
    }
    cr_assert_eq(rc, DFX_ENOMEM, "k=%lld: %s", k, g_st.msg);
    cr_assert_null(s);
    cr_assert_eq(g_ta.live_blocks, live, "k=%lld leaked", k);
  }
  dfx__free(ref);
  free_msg(&g->base);
}
