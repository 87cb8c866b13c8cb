/* test_regex.c - StaticRegexReplace and RegexReplace: RE2 syntax and
 * rewrite rules (groups, \0, empty matches advancing by UTF-8 characters),
 * first-only versus global, bad patterns at init or run, and the output
 * bound held to the tensor limit. */
#include "stest.h"

TestSuite(regex, .init = st_setup, .fini = st_teardown, .timeout = 30);

/* StaticRegexReplace of one string; the result in out (new C string). */
static dfx_code rx(const char *in, size_t len, const char *pat, const char *rw, bool global, char *out, size_t cap) {
  dfx_node *n = kh_node_new("StaticRegexReplace");
  kh_attr_str(n, "pattern", pat);
  kh_attr_str(n, "rewrite", rw);
  kh_attr_bool(n, "replace_global", global);
  dfx_tensor *x = st_bytes(in, len), *o = NULL;
  dfx_code c = st_run(n, &x, 1, &o);
  if (c == DFX_OK) {
    dfx_str *s = o->data;
    cr_assert_lt(s->len, cap);
    memcpy(out, s->ptr ? s->ptr : "", s->len);
    out[s->len] = 0;
  }
  dfx__tensor_unref(o);
  dfx__tensor_unref(x);
  kh_node_free(n);
  return c;
}

#define EXPECT_RX(in, pat, rw, global, want)                                               \
  do {                                                                                     \
    char got_[512];                                                                        \
    cr_assert_eq(rx(in, strlen(in), pat, rw, global, got_, sizeof got_), DFX_OK, "%s", st_err); \
    cr_expect_str_eq(got_, want, "'%s' ~ s/%s/%s/%s", in, pat, rw, global ? "g" : "");   \
  } while (0)

Test(regex, replacements) {
  EXPECT_RX("hello world", "o", "0", true, "hell0 w0rld");
  EXPECT_RX("hello world", "o", "0", false, "hell0 world");
  EXPECT_RX("nothing here", "xyz", "!", true, "nothing here");
  EXPECT_RX("john@example", "(\\w+)@(\\w+)", "\\2 at \\1", true, "example at john");
  EXPECT_RX("a1b22c333", "\\d+", "<\\0>", true, "a<1>b<22>c<333>");
  EXPECT_RX("a1b22c333", "\\d+", "<\\0>", false, "a<1>b22c333");
  EXPECT_RX("a\\b", "\\\\", "\\\\\\\\", true, "a\\\\b"); /* \\ in a rewrite is one backslash */
  /* Empty matches: one at every character boundary (UTF-8 characters). */
  EXPECT_RX("abc", "", "-", true, "-a-b-c-");
  EXPECT_RX("h\xc3\xa9!", "", ".", true, ".h.\xc3\xa9.!.");
  EXPECT_RX("abc", "x*", "-", true, "-a-b-c-");
  EXPECT_RX("abc", "", "-", false, "-abc");
  /* RE2 syntax: classes, case folding, non-greedy, anchors, \b. */
  EXPECT_RX("ABC abc", "(?i)b", "x", true, "AxC axc");
  EXPECT_RX("<a><b>", "<.*?>", "[]", true, "[][]");
  EXPECT_RX("<a><b>", "<.*>", "[]", true, "[]");
  EXPECT_RX("  padded  ", "^\\s+|\\s+$", "", true, "padded");
  EXPECT_RX("Hello, World!", "[[:punct:]]", "", true, "Hello World");
  EXPECT_RX("cat catalog", "\\bcat\\b", "dog", true, "dog catalog");
  EXPECT_RX("x\ny", "(?s).", "_", true, "___");
  EXPECT_RX("x\ny", ".", "_", true, "_\n_");
  EXPECT_RX("\xce\xb1\xce\xb2", "\\p{Greek}", "g", true, "gg");
  /* A rewrite naming a group the pattern lacks changes nothing (RE2). */
  EXPECT_RX("abc", "b", "\\1", true, "abc");
  EXPECT_RX("abc", "(b)", "[\\1\\1]", true, "a[bb]c");
  /* Embedded NULs are bytes like others. */
  char got[64];
  cr_assert_eq(rx("a\0b\0", 4, "\\x00", "-", true, got, sizeof got), DFX_OK, "%s", st_err);
  cr_expect_str_eq(got, "a-b-");
}

Test(regex, shapes_and_many_elements) {
  const char *v[] = {"aa", "ba", "", "cab", "a", "xyz"};
  dfx_node *n = kh_node_new("StaticRegexReplace");
  kh_attr_str(n, "pattern", "a");
  kh_attr_str(n, "rewrite", "A");
  dfx_tensor *x = st_str(2, (int64_t[]){2, 3}, v), *o = NULL;
  cr_assert_eq(st_run(n, &x, 1, &o), DFX_OK, "%s", st_err); /* replace_global defaults to true */
  cr_expect(o->ndims == 2 && o->dims[0] == 2 && o->dims[1] == 3);
  ST_EXPECT_STRS(o, 6, "AA", "bA", "", "cAb", "A", "xyz");
  dfx__tensor_unref(o);
  dfx__tensor_unref(x);
  x = st_str(1, (int64_t[]){0}, NULL);
  cr_assert_eq(st_run(n, &x, 1, &o), DFX_OK, "%s", st_err);
  cr_expect_eq(o->count, 0);
  dfx__tensor_unref(o);
  dfx__tensor_unref(x);
  kh_node_free(n);
}

Test(regex, bad_patterns) {
  char got[64];
  cr_expect_eq(rx("abc", 3, "(", "", true, got, sizeof got), DFX_EINVAL);
  cr_expect(strstr(st_err, "Invalid pattern: (, error: missing ): ("), "%s", st_err);
  cr_expect_eq(rx("abc", 3, "a{2,1}", "", true, got, sizeof got), DFX_EINVAL);
  cr_expect(strstr(st_err, "Invalid pattern: a{2,1}, error: invalid repetition size: {2,1}"), "%s", st_err);
  cr_expect_eq(rx("abc", 3, "a**", "", true, got, sizeof got), DFX_EINVAL);
  cr_expect(strstr(st_err, "error: bad repetition operator: **"), "%s", st_err);
  /* Backreferences are not RE2 syntax. */
  cr_expect_eq(rx("aa", 2, "(a)\\1", "", true, got, sizeof got), DFX_EINVAL, "%s", st_err);
}

static dfx_code dyn(dfx_tensor *x, dfx_tensor *p, dfx_tensor *r, bool global, dfx_tensor **o) {
  dfx_node *n = kh_node_new("RegexReplace");
  kh_attr_bool(n, "replace_global", global);
  dfx_tensor *in[3] = {x, p, r};
  dfx_code c = st_run(n, in, 3, o);
  kh_node_free(n);
  return c;
}

Test(regex, regex_replace_with_tensor_pattern) {
  const char *v[] = {"a-b-c", "--"};
  dfx_tensor *x = st_vec(2, v), *p = st_scalar("-+"), *r = st_scalar("+"), *o = NULL;
  cr_assert_eq(dyn(x, p, r, true, &o), DFX_OK, "%s", st_err);
  ST_EXPECT_STRS(o, 2, "a+b+c", "+");
  dfx__tensor_unref(o);
  cr_assert_eq(dyn(x, p, r, false, &o), DFX_OK, "%s", st_err);
  ST_EXPECT_STRS(o, 2, "a+b-c", "+");
  dfx__tensor_unref(o);
  dfx_tensor *pv = st_vec(2, v), *bad = st_scalar("[");
  cr_expect_eq(dyn(x, pv, r, true, &o), DFX_EINVAL);
  cr_expect(strstr(st_err, "Pattern must be scalar, but received [2]"), "%s", st_err);
  cr_expect_eq(dyn(x, p, pv, true, &o), DFX_EINVAL);
  cr_expect(strstr(st_err, "Rewrite must be scalar, but received [2]"), "%s", st_err);
  cr_expect_eq(dyn(x, bad, r, true, &o), DFX_EINVAL);
  cr_expect(strstr(st_err, "Invalid pattern: [, error: missing ]: ["), "%s", st_err);
  dfx_tensor *all[] = {x, p, r, pv, bad};
  for (int i = 0; i < 5; i++) dfx__tensor_unref(all[i]);
}

Test(regex, output_bound_is_held_to_the_tensor_limit) {
  size_t old = dfx_set_max_tensor_bytes((size_t)1 << 20);
  /* 10^4 empty matches, each replaced by 1000 bytes: 10 MB. */
  char *in = malloc(10000), rw[1001], got[8];
  memset(in, 'x', 10000);
  memset(rw, 'r', 1000);
  rw[1000] = 0;
  cr_expect_eq(rx(in, 10000, "", rw, true, got, sizeof got), DFX_ELIMIT);
  cr_expect(strstr(st_err, "tensor byte limit"), "%s", st_err);
  /* First-match-only stays small and is fine. */
  dfx_node *n = kh_node_new("StaticRegexReplace");
  kh_attr_str(n, "pattern", "");
  kh_attr_str(n, "rewrite", rw);
  kh_attr_bool(n, "replace_global", false);
  dfx_tensor *x = st_bytes(in, 10000), *o = NULL;
  cr_assert_eq(st_run(n, &x, 1, &o), DFX_OK, "%s", st_err);
  cr_expect_eq(((dfx_str *)o->data)->len, 11000);
  dfx__tensor_unref(o);
  dfx__tensor_unref(x);
  kh_node_free(n);
  free(in);
  dfx_set_max_tensor_bytes(old);
}
