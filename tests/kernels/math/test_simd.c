/* test_simd.c - every dispatched SIMD table (kernels/simd) against scalar
 * references in double precision, and the elementwise kernels' parallel
 * path (blocks run in reverse order, in place and not) against the serial
 * one. */
#include <float.h>
#include <stdlib.h>

#include "mt.h"
#include "simd/simd.h"

static const char *const ISAS[] = {"base", "avx2", "avx512"};

/* Error of got against want in units of float ulp at want. */
static double ulps(float got, double want) {
  if (isnan(want)) return isnan(got) ? 0 : 1e9;
  if (isinf(want)) return got == (float)want ? 0 : 1e9;
  float w = (float)fabs(want);
  double ulp = w < FLT_MIN ? FLT_TRUE_MIN : (double)(nextafterf(w, INFINITY) - w);
  return fabs((double)got - want) / ulp;
}

/* Odd values across the interesting ranges, plus the specials. */
static float *sweep(int *n_out) {
  enum { N = 40000 };
  static float v[N + 8];
  for (int i = 0; i < N; i++) v[i] = -100.0f + 200.0f * (float)i / (N - 1);
  const float sp[8] = {0.0f, -0.0f, 1e-6f, -1e-30f, INFINITY, -INFINITY, NAN, 88.0f};
  memcpy(v + N, sp, sizeof sp);
  *n_out = N + 8;
  return v;
}

Test(simd, tables_match_the_references) {
  int n;
  const float *x = sweep(&n);
  float *y = malloc(sizeof(float) * (size_t)n);
  int tested = 0;
  for (size_t k = 0; k < sizeof ISAS / sizeof *ISAS; k++) {
    const dfx_simd_table *t = dfx__simd_get(ISAS[k]);
    if (!t) continue;
    tested++;
    cr_expect_str_eq(t->isa, ISAS[k]);
    double worst_tanh = 0, worst_sig = 0, worst_exp = 0;
    t->vtanh(x, y, n);
    for (int i = 0; i < n; i++) {
      double e = ulps(y[i], tanh((double)x[i]));
      if (e > worst_tanh) worst_tanh = e;
      cr_assert(isnan(x[i]) || (y[i] >= -1 && y[i] <= 1), "%s tanh(%g) = %g", t->isa, x[i], y[i]);
    }
    t->vsigmoid(x, y, n);
    for (int i = 0; i < n; i++) {
      double want = 1 / (1 + exp(-(double)x[i]));
      /* Below about -87 the exact value is subnormal: compare absolutely. */
      double e = x[i] < -80 ? (fabs(y[i] - want) < 1e-37 ? 0 : 1e9) : ulps(y[i], want);
      if (e > worst_sig) worst_sig = e;
    }
    t->vexp(x, y, n);
    for (int i = 0; i < n; i++) {
      double want = exp((double)x[i]);
      double e = want < FLT_MIN ? (y[i] <= FLT_MIN ? 0 : 1e9) : want > FLT_MAX ? (isinf(y[i]) ? 0 : 1e9)
                                                                              : ulps(y[i], want);
      if (e > worst_exp) worst_exp = e;
    }
    cr_expect(worst_tanh <= 8, "%s: tanh worst %.1f ulp", t->isa, worst_tanh);
    cr_expect(worst_sig <= 4, "%s: sigmoid worst %.1f ulp", t->isa, worst_sig);
    cr_expect(worst_exp <= 3, "%s: exp worst %.1f ulp", t->isa, worst_exp);
    /* Saturation and the specials as TF: tanh(+-inf) = +-1, NaN passes. */
    float sp[3] = {INFINITY, -INFINITY, NAN}, so[3];
    t->vtanh(sp, so, 3);
    cr_expect(so[0] == 1 && so[1] == -1 && isnan(so[2]), "%s tanh specials %g %g %g", t->isa, so[0], so[1], so[2]);
    t->vsigmoid(sp, so, 3);
    cr_expect(so[0] == 1 && so[1] == 0 && isnan(so[2]), "%s sigmoid specials %g %g %g", t->isa, so[0], so[1], so[2]);
    /* In place. */
    float ip[5] = {-2, -0.5f, 0, 0.5f, 2};
    t->vtanh(ip, ip, 5);
    for (int i = 0; i < 5; i++) cr_expect(ulps(ip[i], tanh(-2 + (i == 1 ? 1.5 : i == 2 ? 2 : i == 3 ? 2.5 : i == 4 ? 4 : 0))) <= 8);
  }
  cr_expect_geq(tested, 1);
  free(y);
}

Test(simd, binary_sum_max_exact) {
  enum { N = 1037 };
  float a[N], b[N], o[N];
  for (int i = 0; i < N; i++) {
    a[i] = (float)((i * 37) % 101) / 7 - 5;
    b[i] = (float)((i * 53) % 89) / 3 - 11 + (i == 5 ? 0 : 0.25f);
  }
  b[7] = NAN;
  a[9] = NAN;
  for (size_t k = 0; k < sizeof ISAS / sizeof *ISAS; k++) {
    const dfx_simd_table *t = dfx__simd_get(ISAS[k]);
    if (!t) continue;
    for (int op = 0; op < DFX_SIMD_NOPS; op++)
      for (int sa = 0; sa < 2; sa++)
        for (int sb = 0; sb < 2; sb++) {
          t->binary((dfx_simd_op)op, a, sa, b, sb, o, N);
          for (int i = 0; i < N; i++) {
            float x = a[sa ? i : 0], y = b[sb ? i : 0], want;
            switch (op) {
            case DFX_SIMD_ADD: want = x + y; break;
            case DFX_SIMD_SUB: want = x - y; break;
            case DFX_SIMD_MUL: want = x * y; break;
            case DFX_SIMD_DIV: want = x / y; break;
            case DFX_SIMD_MAX: want = isnan(x) || isnan(y) ? NAN : x > y ? x : y; break;
            default: want = isnan(x) || isnan(y) ? NAN : x < y ? x : y; break;
            }
            cr_assert(o[i] == want || (isnan(o[i]) && isnan(want)), "%s op %d sa %d sb %d [%d]: %g vs %g", t->isa,
                      op, sa, sb, i, o[i], want);
          }
        }
    double s = 0;
    float m = -INFINITY;
    for (int i = 10; i < N; i++) {
      s += a[i];
      m = a[i] > m ? a[i] : m;
    }
    for (int len = 1; len < N - 10; len += 97) {
      double sl = 0;
      float ml = -INFINITY;
      for (int i = 10; i < 10 + len; i++) {
        sl += a[i];
        ml = a[i] > ml ? a[i] : ml;
      }
      cr_expect(fabs(t->sum(a + 10, len) - sl) <= 1e-5 * (1 + fabs(sl)) * len, "%s sum %d", t->isa, len);
      cr_expect_eq(t->max(a + 10, len), ml, "%s max %d", t->isa, len);
    }
    cr_expect(isnan(t->max(a, N)), "%s: max keeps NaN", t->isa);
    float e[N], tot = t->exp_shift_sum(a + 10, 2.0f, e, 100);
    double want = 0;
    for (int i = 0; i < 100; i++) {
      cr_expect(ulps(e[i], exp((double)(a[10 + i] - 2.0f))) <= 3, "%s exp_shift %g", t->isa, a[10 + i]);
      want += exp((double)a[10 + i] - 2.0);
    }
    cr_expect(fabs(tot - want) <= 1e-5 * want);
    t->scale(a, 0.5f, o, 11);
    for (int i = 0; i < 11; i++) cr_expect(o[i] == a[i] * 0.5f || (isnan(o[i]) && isnan(a[i])));
  }
}

/* The parallel path (blocks in reverse order) gives the serial results,
 * for SIMD-backed and scalar-loop kernels, copying and in place. */
Test(simd, unary_parallel_matches_serial) {
  const char *ops[] = {"Tanh", "Sigmoid", "Abs", "Exp", "Relu", "IsNan"};
  int64_t d[1] = {300007}; /* enough work for the cheapest op (0.1 ns) to split */
  for (size_t k = 0; k < sizeof ops / sizeof *ops; k++)
    for (int own = 0; own < 2; own++) {
      dfx_tensor *x = dfx__tensor_alloc(DFX_F32, 1, d, NULL);
      float *xv = x->data;
      for (int64_t i = 0; i < d[0]; i++) xv[i] = (float)((i * 7919) % 2001 - 1000) / 97;
      xv[17] = NAN;
      dfx_tensor *in[1] = {x}, *want, *got;
      char err[256];
      mt_par = NULL;
      cr_assert_eq(mt_run(ops[k], DFX_F32, in, 1, &want, err, sizeof err), DFX_OK, "%s", err);
      dfx_node *n = kh_node_new(ops[k]);
      kh_attr_type(n, "T", DFX_F32);
      dfx_step step;
      cr_assert_eq(dfx__step_init(&step), DFX_OK);
      mt_par = &kh_par_reverse;
      int before = kh_par_blocks;
      cr_assert_eq(mt_run_in_step(n, &step, own, in, 1, &got, err, sizeof err), DFX_OK, "%s", err);
      mt_par = NULL;
      cr_expect_gt(kh_par_blocks - before, 1, "%s did not split", ops[k]);
      bool bool_out = strcmp(ops[k], "IsNan") == 0; /* another dtype: never in place */
      cr_expect_eq(in[0] == NULL, own == 1 && !bool_out, "%s: in place %d", ops[k], own);
      cr_assert_eq(got->nbytes, want->nbytes);
      cr_expect(memcmp(got->data, want->data, want->nbytes) == 0, "%s own %d: parallel differs", ops[k], own);
      dfx__step_destroy(&step);
      kh_node_free(n);
      dfx__tensor_unref(got);
      dfx__tensor_unref(want);
      dfx__tensor_unref(in[0]);
    }
}

static float ref_bin(const char *op, float x, float y) {
  if (!strcmp(op, "Add")) return x + y;
  if (!strcmp(op, "Sub")) return x - y;
  if (!strcmp(op, "Mul")) return x * y;
  if (!strcmp(op, "RealDiv")) return x / y;
  if (isnan(x) || isnan(y)) return NAN;
  if (!strcmp(op, "Maximum")) return x > y ? x : y;
  return x < y ? x : y;
}

/* Float binary ops with broadcasting, serial and split (blocks in reverse,
 * in place when the shapes match), against a naive broadcast loop. */
Test(simd, binary_broadcast_parallel) {
  const char *ops[] = {"Add", "Sub", "Mul", "RealDiv", "Maximum", "Minimum"};
  struct {
    int na, nb;
    int64_t da[2], db[2];
  } shapes[] = {
      {2, 1, {300, 257}, {257}},      /* row broadcast */
      {2, 2, {300, 1}, {1, 257}},     /* outer product */
      {2, 2, {300, 257}, {300, 257}}, /* same shapes */
      {1, 2, {1}, {300, 257}},        /* scalar x */
      {2, 2, {300, 257}, {300, 1}},   /* column broadcast: inner stride 0 */
  };
  for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
    for (size_t k = 0; k < sizeof ops / sizeof *ops; k++)
      for (int mode = 0; mode < 3; mode++) { /* serial, split, split in place */
        dfx_tensor *x = dfx__tensor_alloc(DFX_F32, shapes[s].na, shapes[s].da, NULL);
        dfx_tensor *y = dfx__tensor_alloc(DFX_F32, shapes[s].nb, shapes[s].db, NULL);
        float *xv = x->data, *yv = y->data;
        for (int64_t i = 0; i < x->count; i++) xv[i] = (float)((i * 31) % 97) / 9 - 5;
        for (int64_t i = 0; i < y->count; i++) yv[i] = (float)((i * 17) % 89) / 7 - 6 + 0.5f;
        xv[3 % x->count] = NAN;
        float *xs = malloc(sizeof(float) * (size_t)x->count);
        memcpy(xs, xv, sizeof(float) * (size_t)x->count);
        dfx_node *n = kh_node_new(ops[k]);
        kh_attr_type(n, "T", DFX_F32);
        dfx_step step;
        cr_assert_eq(dfx__step_init(&step), DFX_OK);
        dfx_tensor *in[2] = {x, y}, *o;
        char err[256];
        mt_par = mode ? &kh_par_reverse : NULL;
        int before = kh_par_blocks;
        cr_assert_eq(mt_run_in_step(n, &step, mode == 2, in, 2, &o, err, sizeof err), DFX_OK, "%s", err);
        mt_par = NULL;
        if (mode) cr_expect_gt(kh_par_blocks - before, 1, "%s shape %zu did not split", ops[k], s);
        /* Naive broadcast over the 2-d output. */
        int64_t rows = o->ndims == 2 ? o->dims[0] : 1, cols = o->dims[o->ndims - 1];
        const float *ov = o->data;
        for (int64_t r = 0; r < rows; r++)
          for (int64_t c = 0; c < cols; c++) {
            int64_t ia, ib;
            const int64_t *da = shapes[s].da, *db = shapes[s].db;
            if (shapes[s].na == 1) ia = 0;
            else ia = (da[0] == 1 ? 0 : r) * da[1] + (da[1] == 1 ? 0 : c);
            if (shapes[s].nb == 1) ib = c;
            else ib = (db[0] == 1 ? 0 : r) * db[1] + (db[1] == 1 ? 0 : c);
            float want = ref_bin(ops[k], xs[ia], yv[ib]), got = ov[r * cols + c];
            cr_assert(got == want || (isnan(got) && isnan(want)), "%s shape %zu mode %d (%lld,%lld): %g vs %g",
                      ops[k], s, mode, (long long)r, (long long)c, got, want);
          }
        free(xs);
        dfx__step_destroy(&step);
        kh_node_free(n);
        dfx__tensor_unref(o);
        for (int i = 0; i < 2; i++) dfx__tensor_unref(in[i]);
      }
}

/* Integer division by zero found by one block fails the kernel. */
Test(simd, binary_parallel_element_error) {
  int64_t d[1] = {200000};
  dfx_tensor *x = dfx__tensor_alloc(DFX_I32, 1, d, NULL), *y = dfx__tensor_alloc(DFX_I32, 1, d, NULL);
  for (int64_t i = 0; i < d[0]; i++) {
    ((int32_t *)x->data)[i] = (int32_t)i;
    ((int32_t *)y->data)[i] = i == 150000 ? 0 : 3;
  }
  dfx_node *n = kh_node_new("FloorDiv");
  kh_attr_type(n, "T", DFX_I32);
  dfx_step step;
  cr_assert_eq(dfx__step_init(&step), DFX_OK);
  dfx_tensor *in[2] = {x, y}, *o;
  char err[256];
  mt_par = &kh_par_reverse;
  cr_expect_eq(mt_run_in_step(n, &step, false, in, 2, &o, err, sizeof err), DFX_EINVAL);
  mt_par = NULL;
  cr_expect(strstr(err, "division by zero"), "%s", err);
  dfx__step_destroy(&step);
  kh_node_free(n);
  dfx__tensor_unref(x);
  dfx__tensor_unref(y);
}

/* Cast split over threads (blocks in reverse) gives the serial bytes. */
Test(simd, cast_parallel_matches_serial) {
  dfx_dtype pairs[][2] = {{DFX_F32, DFX_I32}, {DFX_F32, DFX_F16}, {DFX_I64, DFX_F32}, {DFX_F32, DFX_F64}};
  int64_t d[1] = {100003};
  for (size_t k = 0; k < sizeof pairs / sizeof *pairs; k++) {
    dfx_tensor *x = dfx__tensor_alloc(pairs[k][0], 1, d, NULL);
    for (int64_t i = 0; i < d[0]; i++) {
      double v = (double)((i * 7919) % 20001 - 10000) / 7;
      if (pairs[k][0] == DFX_F32) ((float *)x->data)[i] = (float)v;
      else ((int64_t *)x->data)[i] = (int64_t)(v * 1e6);
    }
    dfx_tensor *outs[2];
    for (int par = 0; par < 2; par++) {
      dfx_node *n = kh_node_new("Cast");
      kh_attr_type(n, "SrcT", pairs[k][0]);
      kh_attr_type(n, "DstT", pairs[k][1]);
      dfx_step step;
      cr_assert_eq(dfx__step_init(&step), DFX_OK);
      dfx_tensor *in[1] = {x};
      char err[256];
      mt_par = par ? &kh_par_reverse : NULL;
      int before = kh_par_blocks;
      cr_assert_eq(mt_run_in_step(n, &step, false, in, 1, &outs[par], err, sizeof err), DFX_OK, "%s", err);
      mt_par = NULL;
      if (par) cr_expect_gt(kh_par_blocks - before, 1, "cast %zu did not split", k);
      dfx__step_destroy(&step);
      kh_node_free(n);
    }
    cr_assert_eq(outs[0]->nbytes, outs[1]->nbytes);
    cr_expect(memcmp(outs[0]->data, outs[1]->data, outs[0]->nbytes) == 0, "cast %zu differs", k);
    dfx__tensor_unref(outs[0]);
    dfx__tensor_unref(outs[1]);
    dfx__tensor_unref(x);
  }
}
