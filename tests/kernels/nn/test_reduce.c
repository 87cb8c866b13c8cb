/* test_reduce.c - Sum/Mean/Prod/Max/Min/EuclideanNorm/All/Any, ArgMax/ArgMin,
 * Cumsum/Cumprod against naive references. */
#include "nn_test.h"

static dfx_code reduce(const char *op, dfx_tensor *x, const int64_t *axes, int nax, bool keep, dfx_dtype tidx,
                       dfx_tensor **out, char *err) {
  dfx_node *n = kh_node_new(op);
  if (strcmp(op, "All") && strcmp(op, "Any")) kh_attr_type(n, "T", (dfx_dtype)x->dtype);
  kh_attr_type(n, "Tidx", tidx);
  kh_attr_bool(n, "keep_dims", keep);
  int64_t d = nax;
  dfx_tensor *a;
  if (tidx == DFX_I64) {
    a = kh_i64(1, &d, axes);
  } else {
    int32_t a32[8];
    for (int i = 0; i < nax; i++) a32[i] = (int32_t)axes[i];
    a = kh_i32(1, &d, a32);
  }
  dfx_tensor *in[2] = {x, a};
  dfx_code c = run1(n, in, 2, out, err);
  dfx__tensor_unref(a);
  kh_node_free(n);
  return c;
}

/* Naive reference: walks every input index and its output index. */
static void ref_reduce(const char *op, const dfx_tensor *x, const bool *red, double *out, int64_t nout) {
  double init = !strcmp(op, "Prod") ? 1 : !strcmp(op, "Max") ? -INFINITY : !strcmp(op, "Min") ? INFINITY : 0;
  int64_t cnt = 1;
  for (int d = 0; d < x->ndims; d++)
    if (red[d]) cnt *= x->dims[d];
  for (int64_t i = 0; i < nout; i++) out[i] = init;
  for (int64_t i = 0; i < x->count; i++) {
    int64_t rem = i, o = 0, mul = 1;
    for (int d = x->ndims - 1; d >= 0; d--) {
      int64_t c = rem % x->dims[d];
      rem /= x->dims[d];
      if (!red[d]) {
        o += c * mul;
        mul *= x->dims[d];
      }
    }
    double v = tget(x, i);
    if (!strcmp(op, "Sum") || !strcmp(op, "Mean")) out[o] += v;
    else if (!strcmp(op, "Prod")) out[o] *= v;
    else if (!strcmp(op, "Max")) out[o] = fmax(out[o], v);
    else if (!strcmp(op, "Min")) out[o] = fmin(out[o], v);
    else out[o] += v * v;
  }
  for (int64_t i = 0; i < nout; i++) {
    if (!strcmp(op, "Mean")) out[i] = dfx__dtype_is_int((dfx_dtype)x->dtype) ? trunc(out[i] / cnt) : out[i] / cnt;
    if (!strcmp(op, "EuclideanNorm")) out[i] = dfx__dtype_is_int((dfx_dtype)x->dtype) ? floor(sqrt(out[i])) : sqrt(out[i]);
  }
}

/* Each op over its declared dtypes, every axis subset, keep_dims, Tidx int32 and int64. */
Test(reduce, matches_reference_all_axis_sets) {
  const char *opsl[] = {"Sum", "Mean", "Prod", "Max", "Min", "EuclideanNorm"};
  int64_t dims[] = {2, 3, 4};
  for (unsigned oi = 0; oi < 6; oi++) {
    dfx_dtype types[DFX_DTYPE_END_];
    int nt = nn_declared(opsl[oi], "T", types);
    for (int ti = 0; ti < nt; ti++) {
      dfx_dtype t = types[ti];
      dfx_tensor *x = nn_rand(t, 3, dims, ti + 1);
      for (int mask = 0; mask < 8; mask++) {
        for (int keep = 0; keep < 2; keep++) {
          int64_t axes[3];
          int nax = 0;
          bool red[3];
          for (int d = 0; d < 3; d++) {
            red[d] = mask >> d & 1;
            if (red[d]) axes[nax++] = (d == 1 ? -2 : d); /* negative axis too */
          }
          dfx_tensor *y = NULL;
          char err[512];
          dfx_code c = reduce(opsl[oi], x, axes, nax, keep, keep ? DFX_I64 : DFX_I32, &y, err);
          cr_assert_eq(c, DFX_OK, "%s: %s", opsl[oi], err);
          cr_assert_eq(y->dtype, t);
          cr_assert_eq(y->ndims, keep ? 3 : 3 - nax);
          double want[24];
          ref_reduce(opsl[oi], x, red, want, y->count);
          for (int64_t i = 0; i < y->count; i++)
            EXPECT_NEAR(tget(y, i), want[i], ttol(t), "%s %s mask %d i %lld got %g want %g", opsl[oi],
                        dfx_dtype_name(t), mask, (long long)i, tget(y, i), want[i]);
          dfx__tensor_unref(y);
        }
      }
      dfx__tensor_unref(x);
    }
  }
}

Test(reduce, larger_patterns) {
  int64_t dims[] = {3, 5, 7, 11};
  dfx_tensor *x = trand(DFX_F32, 4, dims, -2, 2, 9);
  int64_t sets[][2] = {{0, 2}, {1, 3}, {3, -1}, {0, 3}};
  int ns[] = {2, 2, 1, 2};
  for (int s = 0; s < 4; s++) {
    dfx_tensor *y;
    char err[512];
    cr_assert_eq(reduce("Sum", x, sets[s], ns[s], false, DFX_I32, &y, err), DFX_OK, "%s", err);
    bool red[4] = {0};
    for (int k = 0; k < ns[s]; k++) red[(sets[s][k] + 4) % 4] = true;
    double *want = malloc(sizeof(double) * (size_t)y->count);
    ref_reduce("Sum", x, red, want, y->count);
    for (int64_t i = 0; i < y->count; i++) EXPECT_NEAR(tget(y, i), want[i], 1e-5, "set %d i %lld", s, (long long)i);
    free(want);
    dfx__tensor_unref(y);
  }
  dfx__tensor_unref(x);
}

Test(reduce, empty_gives_identities) {
  int64_t dims[] = {0, 3};
  int64_t ax = 0;
  struct {
    const char *op;
    dfx_dtype t;
    double want;
  } cases[] = {{"Sum", DFX_F32, 0},           {"Prod", DFX_F32, 1},      {"Max", DFX_F32, -INFINITY},
               {"Min", DFX_F64, INFINITY},    {"Mean", DFX_F32, NAN},    {"Max", DFX_I32, INT32_MIN},
               {"Min", DFX_I32, INT32_MAX},   {"Min", DFX_U8, 255},      {"Max", DFX_U8, 0},
               {"Prod", DFX_I64, 1},          {"Min", DFX_F16, INFINITY}, {"EuclideanNorm", DFX_F32, 0},
               {"Min", DFX_I8, 127},          {"Max", DFX_I64, (double)INT64_MIN}};
  for (unsigned k = 0; k < sizeof cases / sizeof *cases; k++) {
    dfx_tensor *x = kh_tensor(cases[k].t, 2, dims, NULL), *y;
    char err[512];
    cr_assert_eq(reduce(cases[k].op, x, &ax, 1, false, DFX_I32, &y, err), DFX_OK, "%s", err);
    cr_assert_eq(y->count, 3);
    for (int i = 0; i < 3; i++) EXPECT_NEAR(tget(y, i), cases[k].want, 0, "%s %d", cases[k].op, k);
    dfx__tensor_unref(y);
    dfx__tensor_unref(x);
  }
}

Test(reduce, scalar_and_no_axes) {
  float v = -2.5f;
  dfx_tensor *x = kh_f32(0, NULL, &v), *y;
  char err[512];
  cr_assert_eq(reduce("Sum", x, NULL, 0, false, DFX_I32, &y, err), DFX_OK, "%s", err);
  cr_expect_eq(y->ndims, 0);
  cr_expect_eq(tget(y, 0), -2.5);
  dfx__tensor_unref(y);
  cr_assert_eq(reduce("EuclideanNorm", x, NULL, 0, false, DFX_I32, &y, err), DFX_OK, "%s", err);
  cr_expect_eq(tget(y, 0), 2.5);
  dfx__tensor_unref(y);
  int64_t ax = 0;
  cr_expect_eq(reduce("Sum", x, &ax, 1, false, DFX_I32, &y, err), DFX_EINVAL);
  cr_expect(strstr(err, "Invalid reduction dimension"), "%s", err);
  dfx__tensor_unref(x);
}

Test(reduce, errors) {
  int64_t dims[] = {2, 3};
  dfx_tensor *x = trand(DFX_F32, 2, dims, 0, 1, 1), *y = NULL;
  char err[512];
  int64_t dup[] = {1, -1};
  cr_expect_eq(reduce("Sum", x, dup, 2, false, DFX_I32, &y, err), DFX_EINVAL);
  cr_expect(strstr(err, "duplicate dimension: 1"), "%s", err);
  int64_t bad = 2;
  cr_expect_eq(reduce("Max", x, &bad, 1, false, DFX_I64, &y, err), DFX_EINVAL);
  cr_expect(strstr(err, "Invalid reduction dimension (2 for input with 2 dimension(s)"), "%s", err);
  bad = -3;
  cr_expect_eq(reduce("Mean", x, &bad, 1, false, DFX_I32, &y, err), DFX_EINVAL);
  dfx__tensor_unref(x);
}

Test(reduce, integer_wrap_and_mean_truncates) {
  int64_t d = 3, ax = 0;
  int8_t v[] = {100, 100, -7};
  dfx_tensor *x = kh_tensor(DFX_I8, 1, &d, v), *y;
  char err[512];
  cr_assert_eq(reduce("Sum", x, &ax, 1, false, DFX_I32, &y, err), DFX_OK, "%s", err);
  cr_expect_eq(((int8_t *)y->data)[0], (int8_t)193);
  dfx__tensor_unref(y);
  dfx__tensor_unref(x);
  /* TF sums 8/16/32-bit integers in 64 bits for Mean: no wrap before dividing. */
  x = kh_tensor(DFX_I8, 1, &d, v);
  cr_assert_eq(reduce("Mean", x, &ax, 1, false, DFX_I32, &y, err), DFX_OK, "%s", err);
  cr_expect_eq(((int8_t *)y->data)[0], 64);
  dfx__tensor_unref(y);
  dfx__tensor_unref(x);
  uint16_t u[] = {60000, 60000, 60003};
  x = kh_tensor(DFX_U16, 1, &d, u);
  cr_assert_eq(reduce("Mean", x, &ax, 1, false, DFX_I32, &y, err), DFX_OK, "%s", err);
  cr_expect_eq(((uint16_t *)y->data)[0], 60001);
  dfx__tensor_unref(y);
  dfx__tensor_unref(x);
  int32_t w[] = {7, -2, 0};
  x = kh_i32(1, &d, w);
  cr_assert_eq(reduce("Mean", x, &ax, 1, false, DFX_I32, &y, err), DFX_OK, "%s", err);
  cr_expect_eq(((int32_t *)y->data)[0], 1);
  dfx__tensor_unref(y);
  dfx__tensor_unref(x);
}

Test(reduce, nan_propagates_in_max_min) {
  int64_t d = 3, ax = 0;
  float v[] = {1, NAN, 3};
  dfx_tensor *x = kh_f32(1, &d, v), *y;
  char err[512];
  cr_assert_eq(reduce("Max", x, &ax, 1, false, DFX_I32, &y, err), DFX_OK, "%s", err);
  cr_expect(isnan(tget(y, 0)));
  dfx__tensor_unref(y);
  cr_assert_eq(reduce("Min", x, &ax, 1, false, DFX_I32, &y, err), DFX_OK, "%s", err);
  cr_expect(isnan(tget(y, 0)));
  dfx__tensor_unref(y);
  dfx__tensor_unref(x);
}

Test(reduce, all_any) {
  int64_t dims[] = {2, 3}, ax = 1;
  uint8_t v[] = {1, 1, 1, 1, 0, 1};
  dfx_tensor *x = kh_bool(2, dims, v), *y;
  char err[512];
  cr_assert_eq(reduce("All", x, &ax, 1, true, DFX_I32, &y, err), DFX_OK, "%s", err);
  cr_expect_eq(y->ndims, 2);
  cr_expect_eq(y->dims[1], 1);
  cr_expect_eq(((uint8_t *)y->data)[0], 1);
  cr_expect_eq(((uint8_t *)y->data)[1], 0);
  dfx__tensor_unref(y);
  ax = 0;
  cr_assert_eq(reduce("Any", x, &ax, 1, false, DFX_I32, &y, err), DFX_OK, "%s", err);
  uint8_t want[] = {1, 1, 1};
  cr_expect_arr_eq(y->data, want, 3);
  dfx__tensor_unref(y);
  dfx__tensor_unref(x);
  int64_t e[] = {0};
  x = kh_bool(1, e, NULL);
  cr_assert_eq(reduce("All", x, &ax, 1, false, DFX_I32, &y, err), DFX_OK, "%s", err);
  cr_expect_eq(((uint8_t *)y->data)[0], 1);
  dfx__tensor_unref(y);
  cr_assert_eq(reduce("Any", x, &ax, 1, false, DFX_I32, &y, err), DFX_OK, "%s", err);
  cr_expect_eq(((uint8_t *)y->data)[0], 0);
  dfx__tensor_unref(y);
  dfx__tensor_unref(x);
}

/* ---- ArgMax / ArgMin ---- */

static dfx_code argop(const char *op, dfx_tensor *x, int32_t axis, dfx_dtype ot, dfx_tensor **y, char *err) {
  dfx_node *n = kh_node_new(op);
  kh_attr_type(n, "T", (dfx_dtype)x->dtype);
  kh_attr_type(n, "output_type", ot);
  dfx_tensor *a = kh_scalar_i32(axis);
  dfx_tensor *in[] = {x, a};
  dfx_code c = run1(n, in, 2, y, err);
  dfx__tensor_unref(a);
  kh_node_free(n);
  return c;
}

Test(argmax, ties_lowest_index_and_axes) {
  int64_t dims[] = {2, 3};
  float v[] = {1, 5, 5, 7, 0, 7};
  dfx_tensor *x = kh_f32(2, dims, v), *y;
  char err[512];
  cr_assert_eq(argop("ArgMax", x, 1, DFX_I64, &y, err), DFX_OK, "%s", err);
  cr_expect_eq(y->dtype, DFX_I64);
  cr_expect_eq(((int64_t *)y->data)[0], 1);
  cr_expect_eq(((int64_t *)y->data)[1], 0);
  dfx__tensor_unref(y);
  cr_assert_eq(argop("ArgMin", x, -2, DFX_I32, &y, err), DFX_OK, "%s", err);
  cr_expect_eq(y->dtype, DFX_I32);
  int32_t want[] = {0, 1, 0};
  cr_expect_arr_eq(y->data, want, sizeof want);
  dfx__tensor_unref(y);
  cr_expect_eq(argop("ArgMax", x, 2, DFX_I64, &y, err), DFX_EINVAL);
  dfx__tensor_unref(x);
  int64_t e[] = {2, 0};
  x = kh_f32(2, e, NULL);
  cr_expect_eq(argop("ArgMax", x, 1, DFX_I64, &y, err), DFX_EINVAL);
  cr_expect(strstr(err, "Reduction axis 1 is empty in shape [2,0]"), "%s", err);
  dfx__tensor_unref(x);
  int64_t d3 = 4;
  uint16_t h[] = {dfx__f32_to_f16(1), dfx__f32_to_f16(-2), dfx__f32_to_f16(3), dfx__f32_to_f16(-2)};
  x = kh_tensor(DFX_F16, 1, &d3, h);
  cr_assert_eq(argop("ArgMin", x, 0, DFX_I64, &y, err), DFX_OK, "%s", err);
  cr_expect_eq(y->ndims, 0);
  cr_expect_eq(((int64_t *)y->data)[0], 1);
  dfx__tensor_unref(y);
  dfx__tensor_unref(x);
}

/* ---- Cumsum / Cumprod ---- */

static dfx_code scan(const char *op, dfx_tensor *x, int32_t axis, bool excl, bool rev, dfx_tensor **y, char *err) {
  dfx_node *n = kh_node_new(op);
  kh_attr_type(n, "T", (dfx_dtype)x->dtype);
  kh_attr_bool(n, "exclusive", excl);
  kh_attr_bool(n, "reverse", rev);
  dfx_tensor *a = kh_scalar_i32(axis);
  dfx_tensor *in[] = {x, a};
  dfx_code c = run1(n, in, 2, y, err);
  dfx__tensor_unref(a);
  kh_node_free(n);
  return c;
}

Test(cumsum, exclusive_reverse) {
  int64_t dims[] = {2, 3};
  float v[] = {1, 2, 3, 4, 5, 6};
  dfx_tensor *x = kh_f32(2, dims, v), *y;
  char err[512];
  struct {
    const char *op;
    int axis;
    bool e, r;
    float want[6];
  } cases[] = {{"Cumsum", 1, false, false, {1, 3, 6, 4, 9, 15}},
               {"Cumsum", 1, true, false, {0, 1, 3, 0, 4, 9}},
               {"Cumsum", 1, false, true, {6, 5, 3, 15, 11, 6}},
               {"Cumsum", -1, true, true, {5, 3, 0, 11, 6, 0}},
               {"Cumsum", 0, false, false, {1, 2, 3, 5, 7, 9}},
               {"Cumprod", 1, false, false, {1, 2, 6, 4, 20, 120}},
               {"Cumprod", 1, true, true, {6, 3, 1, 30, 6, 1}},
               {"Cumprod", 0, true, false, {1, 1, 1, 1, 2, 3}}};
  for (unsigned k = 0; k < sizeof cases / sizeof *cases; k++) {
    cr_assert_eq(scan(cases[k].op, x, cases[k].axis, cases[k].e, cases[k].r, &y, err), DFX_OK, "%s", err);
    for (int i = 0; i < 6; i++) cr_expect_eq(((float *)y->data)[i], cases[k].want[i], "case %u i %d", k, i);
    dfx__tensor_unref(y);
  }
  cr_expect_eq(scan("Cumsum", x, 2, false, false, &y, err), DFX_EINVAL);
  dfx__tensor_unref(x);
  int32_t iv[] = {1, 2, 3, 4, 5, 6};
  x = kh_i32(2, dims, iv);
  cr_assert_eq(scan("Cumsum", x, 0, false, false, &y, err), DFX_OK, "%s", err);
  int32_t want[] = {1, 2, 3, 5, 7, 9};
  cr_expect_arr_eq(y->data, want, sizeof want);
  dfx__tensor_unref(y);
  dfx__tensor_unref(x);
}

/* Float32 Sum/Mean fast path (SIMD piece sums, rows or pieces split over
 * threads in reverse order) against the naive double reference: over rows,
 * over everything (several 64 K pieces), and a reduction it does not take
 * (over columns) for contrast. */
Test(reduce, f32_sum_split_matches_naive) {
  struct {
    int nd;
    int64_t d[2];
    int64_t ax[2];
    int nax;
    const char *op;
    bool split;
  } cases[] = {
      {2, {500, 3000}, {1}, 1, "Sum", true},
      {2, {500, 3000}, {1}, 1, "Mean", true},
      {2, {300, 1001}, {0, 1}, 2, "Sum", true}, /* 300300 elements: 5 pieces */
      {2, {300, 1001}, {0, 1}, 2, "Mean", true},
      {2, {300, 1001}, {0}, 1, "Sum", false},
  };
  for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
    dfx_tensor *x = trand(DFX_F32, cases[k].nd, cases[k].d, -3, 5, 21 + (unsigned)k), *y;
    char err[512];
    kh_set_parallel(&kh_par_reverse);
    int before = kh_par_blocks;
    cr_assert_eq(reduce(cases[k].op, x, cases[k].ax, cases[k].nax, false, DFX_I32, &y, err), DFX_OK, "%s", err);
    kh_set_parallel(NULL);
    if (cases[k].split) cr_expect_gt(kh_par_blocks - before, 1, "case %zu did not split", k);
    bool red[2] = {false, false};
    for (int a = 0; a < cases[k].nax; a++) red[cases[k].ax[a]] = true;
    double want[3000];
    ref_reduce(cases[k].op, x, red, want, y->count);
    for (int64_t i = 0; i < y->count; i++)
      cr_assert(fabs(((float *)y->data)[i] - want[i]) <= 1e-5 * (1 + fabs(want[i])), "case %zu [%lld]: %g vs %g", k,
                (long long)i, ((float *)y->data)[i], want[i]);
    dfx__tensor_unref(y);
    dfx__tensor_unref(x);
  }
}
