/* test_ngrams.c - StringNGrams: TF's documented cases, random ragged
 * batches against a naive reference (windows over the padded row), both
 * splits dtypes, split validation, and hostile pads. */
#include "stest.h"

TestSuite(ngrams, .init = st_setup, .fini = st_teardown, .timeout = 60);

typedef struct ngcfg {
  const char *sep, *lpad, *rpad;
  const int64_t *widths;
  int n_widths;
  int64_t pad_width;
  bool preserve;
  dfx_dtype tsplits;
} ngcfg;

static dfx_code ngrams(const ngcfg *c, dfx_tensor *data, dfx_tensor *splits, dfx_tensor **out) {
  dfx_node *n = kh_node_new("StringNGrams");
  kh_attr_str(n, "separator", c->sep);
  kh_attr_str(n, "left_pad", c->lpad);
  kh_attr_str(n, "right_pad", c->rpad);
  kh_attr_ints(n, "ngram_widths", c->widths, c->n_widths);
  kh_attr_int(n, "pad_width", c->pad_width);
  kh_attr_bool(n, "preserve_short_sequences", c->preserve);
  kh_attr_type(n, "Tsplits", (dfx_dtype)splits->dtype);
  dfx_tensor *in[2] = {data, splits};
  dfx_code code = st_run(n, in, 2, out);
  kh_node_free(n);
  return code;
}

static dfx_tensor *splits_of(dfx_dtype t, int n, const int64_t *v) {
  int64_t d = n;
  dfx_tensor *s = dfx__tensor_alloc(t, 1, &d, NULL);
  for (int i = 0; i < n; i++) {
    if (t == DFX_I32) ((int32_t *)s->data)[i] = (int32_t)v[i];
    else ((int64_t *)s->data)[i] = v[i];
  }
  return s;
}
static int64_t split_at(const dfx_tensor *s, int64_t i) {
  return s->dtype == DFX_I32 ? ((int32_t *)s->data)[i] : ((int64_t *)s->data)[i];
}

/* Runs and checks the n-grams and their row splits. */
static void check(const ngcfg *c, int n_data, const char *const *data, int n_splits, const int64_t *splits, int n_out,
                  const char *const *want, const int64_t *want_splits) {
  for (int k = 0; k < 2; k++) {
    dfx_tensor *d = st_vec(n_data, data), *s = splits_of(k ? DFX_I64 : DFX_I32, n_splits, splits), *o[2] = {0};
    cr_assert_eq(ngrams(c, d, s, o), DFX_OK, "%s", st_err);
    cr_assert_eq(o[0]->count, n_out, "%lld n-grams, want %d", (long long)o[0]->count, n_out);
    for (int i = 0; i < n_out; i++)
      cr_expect(st_is(o[0], i, want[i], strlen(want[i])), "n-gram %d: '%.*s', want '%s'", i,
                (int)((dfx_str *)o[0]->data)[i].len, ((dfx_str *)o[0]->data)[i].ptr, want[i]);
    cr_assert_eq(o[1]->count, n_splits);
    cr_expect_eq(o[1]->dtype, s->dtype);
    for (int i = 0; i < n_splits; i++) cr_expect_eq(split_at(o[1], i), want_splits[i], "split %d", i);
    dfx__tensor_unref(o[0]), dfx__tensor_unref(o[1]), dfx__tensor_unref(d), dfx__tensor_unref(s);
  }
}

#define W(...) (const int64_t[]){__VA_ARGS__}, (int)(sizeof((const int64_t[]){__VA_ARGS__}) / 8)
#define S(...) ((const char *const[]){__VA_ARGS__})
#define I(...) ((const int64_t[]){__VA_ARGS__})

Test(ngrams, documented_cases) {
  const char *const *data = S("aa", "bb", "cc", "dd", "ee", "ff");
  ngcfg c = {"|", "LP", "RP", W(3), 0, false};
  check(&c, 6, data, 3, I(0, 4, 6), 2, S("aa|bb|cc", "bb|cc|dd"), I(0, 2, 2));
  c.pad_width = -1; /* width - 1 pads */
  check(&c, 6, data, 3, I(0, 4, 6), 10,
        S("LP|LP|aa", "LP|aa|bb", "aa|bb|cc", "bb|cc|dd", "cc|dd|RP", "dd|RP|RP", "LP|LP|ee", "LP|ee|ff", "ee|ff|RP",
          "ff|RP|RP"),
        I(0, 6, 10));
  c.pad_width = 1;
  check(&c, 6, data, 3, I(0, 4, 6), 6, S("LP|aa|bb", "aa|bb|cc", "bb|cc|dd", "cc|dd|RP", "LP|ee|ff", "ee|ff|RP"),
        I(0, 4, 6));
  /* Short rows: kept whole, with pad_width pads, when preserving. */
  c = (ngcfg){"|", "LP", "RP", W(3), 0, true};
  check(&c, 6, data, 3, I(0, 4, 6), 3, S("aa|bb|cc", "bb|cc|dd", "ee|ff"), I(0, 2, 3));
  /* Several widths, in the order given; an empty row in the middle. */
  c = (ngcfg){" ", "", "", W(2, 1), 0, false};
  check(&c, 3, S("a", "b", "c"), 4, I(0, 2, 2, 3), 4, S("a b", "a", "b", "c"), I(0, 3, 3, 4));
  /* Pads only: a row shorter than its pads still yields padded n-grams. */
  c = (ngcfg){"|", "L", "R", W(3), -1, false};
  check(&c, 1, S("x"), 2, I(0, 1), 3, S("L|L|x", "L|x|R", "x|R|R"), I(0, 3));
  /* An empty separator and empty pads. */
  c = (ngcfg){"", "", "", W(2), 1, false};
  check(&c, 2, S("a", "b"), 2, I(0, 2), 3, S("a", "ab", "b"), I(0, 3));
}

Test(ngrams, empty_inputs) {
  ngcfg c = {"|", "L", "R", W(2), -1, false};
  check(&c, 0, NULL, 3, I(0, 0, 0), 0, NULL, I(0, 0, 0));
  check(&c, 0, NULL, 0, NULL, 0, NULL, NULL);
  /* No splits but some data: TF gives an output of the data's shape (empty strings). */
  dfx_tensor *d = st_vec(2, S("a", "b")), *s = splits_of(DFX_I64, 0, NULL), *o[2];
  cr_assert_eq(ngrams(&c, d, s, o), DFX_OK, "%s", st_err);
  cr_expect(o[0]->count == 2 && st_is(o[0], 0, "", 0) && o[1]->count == 0);
  dfx__tensor_unref(o[0]), dfx__tensor_unref(o[1]), dfx__tensor_unref(d), dfx__tensor_unref(s);
}

/* ---- random batches against the padded-window reference ---- */

static uint64_t rng = 0x2545F4914F6CDD1DULL;
static unsigned rnd(unsigned n) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return (unsigned)(rng % n);
}

/* Appends the n-grams of one row for width w with `pad` pads a side. */
static void ref_row(char out[][128], int *n_out, const char *const *row, int len, int64_t w, int64_t pad,
                    const ngcfg *c) {
  const char *padded[64];
  int n = 0;
  for (int64_t i = 0; i < pad; i++) padded[n++] = c->lpad;
  for (int i = 0; i < len; i++) padded[n++] = row[i];
  for (int64_t i = 0; i < pad; i++) padded[n++] = c->rpad;
  for (int start = 0; start + w <= n; start++) {
    char *o = out[(*n_out)++];
    o[0] = 0;
    for (int64_t k = 0; k < w; k++) {
      if (k) strcat(o, c->sep);
      strcat(o, padded[start + k]);
    }
  }
}

Test(ngrams, random_against_reference) {
  static const char *words[] = {"a", "bb", "", "ccc", "d"};
  static const char *seps[] = {"", " ", "--"};
  for (int round = 0; round < 400; round++) {
    int rows = (int)rnd(5), n_data = 0;
    int64_t splits[8] = {0};
    const char *data[40];
    for (int r = 0; r < rows; r++) {
      int len = (int)rnd(6);
      for (int k = 0; k < len; k++) data[n_data++] = words[rnd(5)];
      splits[r + 1] = n_data;
    }
    int64_t widths[3];
    int nw = (int)rnd(3) + (round % 7 != 0);
    for (int k = 0; k < nw; k++) widths[k] = 1 + rnd(4);
    ngcfg c = {seps[rnd(3)], rnd(2) ? "<s>" : "", rnd(2) ? "</s>" : "", widths, nw, (int64_t)rnd(4) - 1,
               (bool)rnd(2)};
    if (c.preserve && nw == 0) c.pad_width = rnd(3);
    /* The reference. */
    static char want[400][128];
    int n_want = 0;
    int64_t want_splits[8] = {0};
    for (int r = 0; r < rows && n_data > 0; r++) {
      int len = (int)(splits[r + 1] - splits[r]), before = n_want;
      for (int k = 0; k < nw; k++) {
        int64_t w = widths[k], pad = c.pad_width < 0 ? w - 1 : c.pad_width;
        if (pad > w - 1) pad = w - 1;
        ref_row(want, &n_want, data + splits[r], len, w, pad, &c);
      }
      if (c.preserve && len > 0 && n_want == before)
        ref_row(want, &n_want, data + splits[r], len, len + 2 * c.pad_width, c.pad_width, &c);
      want_splits[r + 1] = n_want;
    }
    dfx_tensor *d = st_vec(n_data, data), *s = splits_of(round & 1 ? DFX_I32 : DFX_I64, rows + 1, splits), *o[2];
    cr_assert_eq(ngrams(&c, d, s, o), DFX_OK, "round %d: %s", round, st_err);
    cr_assert_eq(o[0]->count, n_data ? n_want : 0, "round %d: %lld n-grams, want %d", round, (long long)o[0]->count,
                 n_want);
    for (int i = 0; i < n_want && n_data; i++)
      cr_expect(st_is(o[0], i, want[i], strlen(want[i])), "round %d n-gram %d: '%.*s' want '%s'", round, i,
                (int)((dfx_str *)o[0]->data)[i].len, ((dfx_str *)o[0]->data)[i].ptr, want[i]);
    for (int r = 0; r <= rows && n_data; r++) cr_expect_eq(split_at(o[1], r), want_splits[r], "round %d", round);
    dfx__tensor_unref(o[0]), dfx__tensor_unref(o[1]), dfx__tensor_unref(d), dfx__tensor_unref(s);
  }
}

/* ---- errors ---- */

static void expect_error(const ngcfg *c, int n_data, int n_splits, const int64_t *splits, dfx_code code,
                         const char *msg) {
  const char *data[] = {"a", "b", "c", "d"};
  dfx_tensor *d = st_vec(n_data, data), *s = splits_of(DFX_I64, n_splits, splits), *o[2];
  cr_expect_eq(ngrams(c, d, s, o), code, "%s", st_err);
  cr_expect(strstr(st_err, msg), "want '%s': %s", msg, st_err);
  dfx__tensor_unref(d), dfx__tensor_unref(s);
}

Test(ngrams, errors) {
  ngcfg c = {"|", "L", "R", W(2), -1, false};
  expect_error(&c, 3, 2, I(1, 3), DFX_EINVAL, "First split value must be 0, got 1");
  expect_error(&c, 3, 3, I(0, 2, 1), DFX_EINVAL, "Invalid split value 1, must be in [2, 3]");
  expect_error(&c, 3, 3, I(0, 4, 4), DFX_EINVAL, "Invalid split value 4, must be in [0, 3]");
  expect_error(&c, 3, 2, I(0, 2), DFX_EINVAL, "Last split value must be data size. Expected 3, got 2");
  c.widths = I(0);
  expect_error(&c, 3, 2, I(0, 3), DFX_EINVAL, "ngram_widths must contain positive values");
  c = (ngcfg){"|", "L", "R", NULL, 0, -1, true};
  expect_error(&c, 3, 2, I(0, 3), DFX_EINVAL, "Pad width should be >= 0 when preserve_short_sequences is True");
  c = (ngcfg){"|", "L", "R", W(INT32_MAX), (int64_t)1 << 30, false};
  expect_error(&c, 3, 2, I(0, 3), DFX_EINVAL, "Pad width could lead to integer overflow, got pad_width = 1073741824");
  c.pad_width = (int64_t)1 << 31;
  expect_error(&c, 3, 2, I(0, 3), DFX_EINVAL, "Attr pad_width has value 2147483648 out of range for an int32");
  /* Ranks: TF's shape function wants vectors. */
  dfx_tensor *d = st_str(2, (int64_t[]){1, 1}, S("a")), *s = splits_of(DFX_I64, 2, I(0, 1)), *o[2];
  c = (ngcfg){"|", "L", "R", W(1), 0, false};
  cr_expect_eq(ngrams(&c, d, s, o), DFX_EINVAL);
  cr_expect(strstr(st_err, "Shape must be rank 1 but is rank 2"), "%s", st_err);
  dfx__tensor_unref(d), dfx__tensor_unref(s);
}

Test(ngrams, huge_pads_are_held_to_the_tensor_limit) {
  size_t old = dfx_set_max_tensor_bytes((size_t)64 << 20);
  /* 10^5 pads of 100 bytes a side: every n-gram is ~10 MB and there are
   * ~10^5 of them. */
  char pad[101];
  memset(pad, 'p', 100);
  pad[100] = 0;
  ngcfg c = {"", pad, pad, W(100001), 100000, false};
  expect_error(&c, 2, 2, I(0, 2), DFX_ELIMIT, "tensor byte limit");
  /* The same with empty pads and separator is cheap and fine. */
  c.lpad = c.rpad = "";
  const char *data[] = {"a", "b"};
  dfx_tensor *d = st_vec(2, data), *s = splits_of(DFX_I64, 2, I(0, 2)), *o[2];
  cr_assert_eq(ngrams(&c, d, s, o), DFX_OK, "%s", st_err);
  cr_expect_eq(o[0]->count, 2 + 200000 - 100001 + 1);
  dfx__tensor_unref(o[0]), dfx__tensor_unref(o[1]), dfx__tensor_unref(d), dfx__tensor_unref(s);
  dfx_set_max_tensor_bytes(old);
}
