/* test_setop.c - DenseToDenseSetOperation against naive membership tests
 * over every op and declared dtype, strings, and shape errors. */
#include "stest.h"

static dfx_node *set_node(dfx_dtype t, const char *op) {
  dfx_node *n = kh_node_new("DenseToDenseSetOperation");
  kh_attr_type(n, "T", t);
  kh_attr_str(n, "set_operation", op);
  return n;
}

static bool has(const double *row, int n, double x) {
  for (int i = 0; i < n; i++)
    if (row[i] == x) return true;
  return false;
}

Test(setop, reference_sweep) {
  const dfx_dtype dts[] = {DFX_I8, DFX_I16, DFX_I32, DFX_I64, DFX_U8, DFX_U16};
  const char *ops[4] = {"a-b", "b-a", "intersection", "union"};
  /* Groups [2, 2]; set1 rows of 4, set2 rows of 3, with repeats. */
  const double a[16] = {5, 1, 5, 3, 2, 2, 2, 2, 9, 8, 7, 6, 0, 4, 4, 1};
  const double b[12] = {3, 4, 5, 2, 7, 2, 1, 1, 1, 4, 0, 3};
  const int64_t ad[3] = {2, 2, 4}, bd[3] = {2, 2, 3};
  for (size_t t = 0; t < sizeof dts / sizeof dts[0]; t++)
    for (int o = 0; o < 4; o++) {
      int64_t want_ind[64 * 3], k = 0, largest = 0;
      double want_val[64];
      for (int g = 0; g < 4; g++) {
        const double *ra = a + g * 4, *rb = b + g * 3;
        int64_t p = 0;
        for (int x = 0; x <= 9; x++) {
          bool ia = has(ra, 4, x), ib = has(rb, 3, x);
          bool in = o == 0 ? ia && !ib : o == 1 ? ib && !ia : o == 2 ? ia && ib : ia || ib;
          if (!in) continue;
          want_ind[k * 3] = g / 2, want_ind[k * 3 + 1] = g % 2, want_ind[k * 3 + 2] = p++;
          want_val[k++] = x;
        }
        if (p > largest) largest = p;
      }
      dfx_node *n = set_node(dts[t], ops[o]);
      dfx_tensor *in[2] = {s_from_doubles(dts[t], 3, ad, a), s_from_doubles(dts[t], 3, bd, b)}, *out[3] = {0};
      char err[512];
      cr_assert_eq(s_run(n, in, 2, out, err), DFX_OK, "%s", err);
      const int64_t id[2] = {k, 3}, sh[3] = {2, 2, largest};
      s_expect_shape(out[0], 2, id);
      s_expect_i64v(out[0], want_ind, k * 3);
      cr_assert_eq(out[1]->dtype, dts[t]);
      s_expect_f64v(out[1], want_val, k, 0);
      s_expect_i64v(out[2], sh, 3);
      s_unref_all(out, 3);
      s_unref_all(in, 2);
      kh_node_free(n);
    }
}

Test(setop, strings_and_errors) {
  const char *a[4] = {"pear", "apple", "fig", "apple"}, *b[2] = {"fig", "kiwi"};
  const int64_t ad[2] = {1, 4}, bd[2] = {1, 2};
  dfx_node *n = set_node(DFX_STRING, "union");
  dfx_tensor *in[2] = {s_str(2, ad, a), s_str(2, bd, b)}, *out[3] = {0};
  char err[512];
  cr_assert_eq(s_run(n, in, 2, out, err), DFX_OK, "%s", err);
  const char *want[4] = {"apple", "fig", "kiwi", "pear"};
  cr_assert_eq(out[1]->count, 4);
  for (int i = 0; i < 4; i++) {
    size_t len;
    const char *s = dfx_tensor_string(out[1], i, &len);
    cr_expect(len == strlen(want[i]) && memcmp(s, want[i], len) == 0, "[%d]", i);
  }
  const int64_t sh[2] = {1, 4};
  s_expect_i64v(out[2], sh, 2);
  s_unref_all(out, 3);
  s_unref_all(in, 2);
  kh_node_free(n);
  n = set_node(DFX_I32, "a-b");
  const int64_t d1[1] = {3}, d23[2] = {2, 3}, d33[2] = {3, 3};
  const int32_t z[9] = {0};
  in[0] = kh_i32(1, d1, z), in[1] = kh_i32(2, d23, z);
  s_expect_err(n, in, 2, "Shape [3] has rank 1 < 2");
  s_unref_all(in, 2);
  in[0] = kh_i32(2, d23, z), in[1] = kh_i32(2, d33, z);
  s_expect_err(n, in, 2, "Mismatched shapes [2] vs [3]");
  s_unref_all(in, 2);
  kh_node_free(n);
  /* An unknown set_operation is refused when the kernel is made. */
  n = set_node(DFX_I32, "xor");
  in[0] = kh_i32(2, d23, z), in[1] = kh_i32(2, d23, z);
  s_expect_err(n, in, 2, "Invalid set_operation xor.");
  s_unref_all(in, 2);
  kh_node_free(n);
}
