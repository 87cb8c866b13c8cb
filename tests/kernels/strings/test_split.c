/* test_split.c - StringSplit and StringSplitV2: hand-written cases from
 * TF's semantics (character-set delimiters, empty strings, whitespace runs,
 * maxsplit), shape errors, and random strings against naive references. */
#include "stest.h"

TestSuite(split, .init = st_setup, .fini = st_teardown, .timeout = 60);

typedef struct split_out {
  dfx_tensor *ind, *val, *shape;
} split_out;

static dfx_code split(bool v2, dfx_tensor *in, dfx_tensor *delim, int skip_empty, int64_t maxsplit, split_out *o) {
  dfx_node *n = kh_node_new(v2 ? "StringSplitV2" : "StringSplit");
  if (!v2 && skip_empty >= 0) kh_attr_bool(n, "skip_empty", skip_empty);
  if (v2) kh_attr_int(n, "maxsplit", maxsplit);
  dfx_tensor *ins[2] = {in, delim}, *outs[3] = {NULL, NULL, NULL};
  dfx_code c = st_run(n, ins, 2, outs);
  kh_node_free(n);
  *o = (split_out){outs[0], outs[1], outs[2]};
  return c;
}

static void free_out(split_out *o) {
  dfx__tensor_unref(o->ind);
  dfx__tensor_unref(o->val);
  dfx__tensor_unref(o->shape);
}

/* Checks indices (row, col pairs in order), values and dense shape. */
static void expect(const split_out *o, int64_t rows, int64_t cols, int n, const int64_t *ind, const char *const *vals) {
  cr_assert_eq(o->val->count, n, "got %lld tokens, want %d", (long long)o->val->count, n);
  cr_expect(o->ind->ndims == 2 && o->ind->dims[0] == n && o->ind->dims[1] == 2);
  cr_expect(n == 0 || memcmp(o->ind->data, ind, (size_t)n * 16) == 0, "indices differ");
  for (int i = 0; i < n; i++)
    cr_expect(st_is(o->val, i, vals[i], strlen(vals[i])), "token %d: got '%.*s', want '%s'", i,
              (int)((dfx_str *)o->val->data)[i].len, ((dfx_str *)o->val->data)[i].ptr, vals[i]);
  cr_expect(((int64_t *)o->shape->data)[0] == rows && ((int64_t *)o->shape->data)[1] == cols, "shape [%lld,%lld]",
            (long long)((int64_t *)o->shape->data)[0], (long long)((int64_t *)o->shape->data)[1]);
}

#define IDX(...) ((const int64_t[]){__VA_ARGS__})
#define VALS(...) ((const char *const[]){__VA_ARGS__})

static void case1(const char *const *in, int64_t n_in, const char *delim, int skip, int64_t rows, int64_t cols, int n,
                  const int64_t *ind, const char *const *vals) {
  dfx_tensor *x = st_vec(n_in, in), *d = st_scalar(delim);
  split_out o;
  cr_assert_eq(split(false, x, d, skip, 0, &o), DFX_OK, "%s", st_err);
  expect(&o, rows, cols, n, ind, vals);
  free_out(&o);
  dfx__tensor_unref(x);
  dfx__tensor_unref(d);
}

Test(split, string_split) {
  const char *in[] = {"a b c", "", "d  e"};
  case1(in, 3, " ", -1, 3, 3, 5, IDX(0, 0, 0, 1, 0, 2, 2, 0, 2, 1), VALS("a", "b", "c", "d", "e"));
  /* skip_empty false keeps empty tokens, but "" still has none. */
  case1(in, 3, " ", 0, 3, 3, 6, IDX(0, 0, 0, 1, 0, 2, 2, 0, 2, 1, 2, 2), VALS("a", "b", "c", "d", "", "e"));
  /* An empty delimiter splits into bytes. */
  const char *in2[] = {"ab", "", "c"};
  case1(in2, 3, "", -1, 3, 2, 3, IDX(0, 0, 0, 1, 2, 0), VALS("a", "b", "c"));
  /* A longer delimiter is a set of characters. */
  const char *in3[] = {"a,b;c", "a<>b"};
  case1(in3, 1, ",;", 1, 1, 3, 3, IDX(0, 0, 0, 1, 0, 2), VALS("a", "b", "c"));
  case1(in3 + 1, 1, "<>", 0, 1, 3, 3, IDX(0, 0, 0, 1, 0, 2), VALS("a", "", "b"));
  case1(in3 + 1, 1, "<>", 1, 1, 2, 2, IDX(0, 0, 0, 1), VALS("a", "b"));
  /* Leading and trailing delimiters. */
  const char *in4[] = {",x,"};
  case1(in4, 1, ",", 0, 1, 3, 3, IDX(0, 0, 0, 1, 0, 2), VALS("", "x", ""));
  case1(in4, 1, ",", 1, 1, 1, 1, IDX(0, 0), VALS("x"));
  /* An empty batch. */
  case1(NULL, 0, " ", 1, 0, 0, 0, NULL, NULL);
}

static void case2(const char *s, const char *sep, int64_t maxsplit, int n, const char *const *vals) {
  dfx_tensor *x = st_vec(1, &s), *d = st_scalar(sep);
  split_out o;
  cr_assert_eq(split(true, x, d, -1, maxsplit, &o), DFX_OK, "%s", st_err);
  int64_t ind[64];
  for (int i = 0; i < n; i++) ind[2 * i] = 0, ind[2 * i + 1] = i;
  expect(&o, 1, n, n, ind, vals);
  free_out(&o);
  dfx__tensor_unref(x);
  dfx__tensor_unref(d);
}

Test(split, string_split_v2) {
  case2("1,,2", ",", -1, 3, VALS("1", "", "2"));
  case2("", ",", -1, 1, VALS(""));
  case2("1<>2<>3", "<>", -1, 3, VALS("1", "2", "3"));
  case2("aaa", "aa", -1, 2, VALS("", "a"));
  case2("a,b,c", ",", 1, 2, VALS("a", "b,c"));
  case2("a,b,c", ",", 0, 1, VALS("a,b,c"));
  case2("a,b,c", ",", 5, 3, VALS("a", "b", "c"));
  /* An empty sep splits on whitespace runs and drops empty tokens. */
  case2("  a  b\tc \n", "", -1, 3, VALS("a", "b", "c"));
  case2("   ", "", -1, 0, NULL);
  case2("", "", -1, 0, NULL);
  case2("  a  b  c ", "", 1, 2, VALS("a", "b  c "));
  case2(" a b ", "", 2, 3, VALS("a", "b", "")); /* TF keeps the empty rest */
  case2("  a ", "", 0, 1, VALS("  a "));
  /* Rows of several lengths: the dense shape takes the longest. */
  const char *in[] = {"x y", "", "p q r s"};
  dfx_tensor *x = st_vec(3, in), *d = st_scalar(" ");
  split_out o;
  cr_assert_eq(split(true, x, d, -1, -1, &o), DFX_OK, "%s", st_err);
  expect(&o, 3, 4, 7, IDX(0, 0, 0, 1, 1, 0, 2, 0, 2, 1, 2, 2, 2, 3), VALS("x", "y", "", "p", "q", "r", "s"));
  free_out(&o);
  dfx__tensor_unref(x);
  dfx__tensor_unref(d);
}

Test(split, shape_errors) {
  const char *v[] = {"a", "b"};
  dfx_tensor *m = st_str(2, (int64_t[]){1, 2}, v), *s = st_scalar(" "), *vd = st_vec(2, v), *x = st_vec(2, v);
  split_out o;
  for (int v2 = 0; v2 < 2; v2++) {
    cr_expect_eq(split(v2, m, s, -1, -1, &o), DFX_EINVAL);
    cr_expect(strstr(st_err, "input must be a vector, got shape: [1,2]"), "%s", st_err);
    cr_expect_eq(split(v2, x, vd, -1, -1, &o), DFX_EINVAL);
    cr_expect(strstr(st_err, v2 ? "sep must be a scalar, got shape: [2]" : "delimiter must be a scalar, got shape: [2]"),
              "%s", st_err);
  }
  dfx_node *n = kh_node_new("StringSplitV2");
  kh_attr_int(n, "maxsplit", (int64_t)1 << 40);
  dfx_tensor *ins[2] = {x, s}, *outs[3];
  cr_expect_eq(st_run(n, ins, 2, outs), DFX_EINVAL);
  cr_expect(strstr(st_err, "out of range for an int32"), "%s", st_err);
  kh_node_free(n);
  dfx__tensor_unref(m), dfx__tensor_unref(s), dfx__tensor_unref(vd), dfx__tensor_unref(x);
}

/* ---- random strings against naive references ---- */

static uint64_t rng = 0x9E3779B97F4A7C15ULL;
static unsigned rnd(unsigned n) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return (unsigned)(rng % n);
}

typedef struct toks {
  int n;
  size_t off[256], len[256];
} toks;

/* StringSplit, restated: walk the bytes, cut at any delimiter byte. */
static void ref_v1(const char *s, size_t n, const char *d, bool skip, toks *t) {
  t->n = 0;
  if (n == 0) return;
  size_t start = 0;
  for (size_t i = 0; i <= n; i++) {
    bool cut = i == n;
    if (!cut && *d == 0) { /* empty delimiter: every byte is a token */
      t->off[t->n] = i, t->len[t->n++] = 1;
      continue;
    }
    for (const char *p = d; !cut && *p; p++) cut = s[i] == *p;
    if (!cut) continue;
    if (*d && (i > start || !skip)) t->off[t->n] = start, t->len[t->n++] = i - start;
    start = i + 1;
  }
}

/* Python's str.split(sep, maxsplit) with TF's trailing-rest rule. */
static void ref_v2(const char *s, size_t n, const char *sep, int maxsplit, toks *t) {
  t->n = 0;
  size_t sl = strlen(sep);
  if (maxsplit == 0) {
    t->off[0] = 0, t->len[t->n++] = n;
    return;
  }
  if (sl == 0) {
    size_t i = 0;
    int splits = 0;
    while (i < n && strchr(" \t\n\v\f\r", s[i])) i++;
    while (i < n) {
      size_t j = i;
      while (j < n && !strchr(" \t\n\v\f\r", s[j])) j++;
      t->off[t->n] = i, t->len[t->n++] = j - i;
      i = j;
      while (i < n && strchr(" \t\n\v\f\r", s[i])) i++;
      if (maxsplit > 0 && ++splits == maxsplit) {
        t->off[t->n] = i, t->len[t->n++] = n - i;
        return;
      }
    }
    return;
  }
  size_t start = 0;
  int splits = 0;
  for (size_t i = 0; i + sl <= n;) {
    if (memcmp(s + i, sep, sl) == 0 && !(maxsplit > 0 && splits == maxsplit)) {
      t->off[t->n] = start, t->len[t->n++] = i - start;
      splits++;
      i += sl;
      start = i;
    } else {
      i++;
    }
  }
  t->off[t->n] = start, t->len[t->n++] = n - start;
}

Test(split, random_against_reference) {
  static const char alphabet[] = "ab ,;\t";
  static const char *delims[] = {"", " ", ",", ",;", "ab", "a,"};
  for (int round = 0; round < 300; round++) {
    char strs[6][40];
    const char *ptrs[6];
    int rows = (int)rnd(6);
    for (int r = 0; r < rows; r++) {
      int len = (int)rnd(39);
      for (int k = 0; k < len; k++) strs[r][k] = alphabet[rnd(sizeof alphabet - 1)];
      strs[r][len] = 0;
      ptrs[r] = strs[r];
    }
    const char *d = delims[rnd(6)];
    bool v2 = rnd(2), skip = rnd(2);
    int ms = (int)rnd(5) - 1;
    dfx_tensor *x = st_vec(rows, ptrs), *dt = st_scalar(d);
    split_out o;
    cr_assert_eq(split(v2, x, dt, skip, ms, &o), DFX_OK, "%s", st_err);
    int64_t k = 0, maxc = 0;
    for (int r = 0; r < rows; r++) {
      toks t;
      if (v2) ref_v2(strs[r], strlen(strs[r]), d, ms, &t);
      else ref_v1(strs[r], strlen(strs[r]), d, skip, &t);
      if (t.n > maxc) maxc = t.n;
      for (int j = 0; j < t.n; j++, k++) {
        cr_assert_lt(k, o.val->count, "round %d: too few tokens", round);
        const int64_t *ix = o.ind->data;
        cr_expect(ix[2 * k] == r && ix[2 * k + 1] == j, "round %d token %lld", round, (long long)k);
        cr_expect(st_is(o.val, k, strs[r] + t.off[j], t.len[j]), "round %d ('%s' by '%s', %s, skip %d, max %d) token %d",
                  round, strs[r], d, v2 ? "v2" : "v1", skip, ms, j);
      }
    }
    cr_expect_eq(o.val->count, k, "round %d: token count", round);
    cr_expect(((int64_t *)o.shape->data)[0] == rows && ((int64_t *)o.shape->data)[1] == maxc);
    free_out(&o);
    dfx__tensor_unref(x);
    dfx__tensor_unref(dt);
  }
}

Test(split, many_tokens) {
  /* A 4 MiB string of separators: one token per byte, in one call. */
  size_t n = (size_t)4 << 20;
  char *big = malloc(n + 1);
  memset(big, ',', n);
  big[n] = 0;
  dfx_tensor *x = st_vec(1, (const char *const[]){big}), *d = st_scalar(",");
  split_out o;
  cr_assert_eq(split(false, x, d, 0, 0, &o), DFX_OK, "%s", st_err);
  cr_expect_eq(o.val->count, (int64_t)n + 1);
  free_out(&o);
  cr_assert_eq(split(true, x, d, -1, -1, &o), DFX_OK, "%s", st_err);
  cr_expect_eq(o.val->count, (int64_t)n + 1);
  free_out(&o);
  free(big);
  dfx__tensor_unref(x);
  dfx__tensor_unref(d);
}
