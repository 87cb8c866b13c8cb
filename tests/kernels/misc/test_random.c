/* test_random.c - random ops: TF-stream values for seeded runs, repeatability,
 * per-run advance, distribution moments, shapes and errors. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "mtest.h"

static char err[2048];

/* Runs a node several times with one init state (one session, several runs). */
typedef struct runner {
  dfx_node *n;
  const dfx_kernel_def *k;
  void *state;
  dfx_step step;
} runner;

static void rn_open(runner *r, dfx_node *n) {
  dfx_status st;
  int expected;
  r->n = n;
  cr_assert_eq(dfx__node_fill_defaults(n, n->def, &st), DFX_OK);
  cr_assert_eq(dfx__node_resolve_types(n, n->def, &expected, &st), DFX_OK, "%s", st.msg);
  r->k = dfx__registry_kernel_for(dfx__lib_registry(&st), n, &st);
  cr_assert(r->k, "%s", st.msg);
  r->state = NULL;
  if (r->k->init) cr_assert_eq(r->k->init(n, &r->state, &st), DFX_OK);
  dfx__step_init(&r->step);
}

static dfx_code rn_run(runner *r, dfx_tensor **in, int n_in, dfx_tensor **out) {
  dfx_status st;
  dfx__status_clear(&st);
  out[0] = NULL;
  dfx_kctx ctx = {.node = r->n, .n_in = n_in, .in = in, .n_out = r->n->n_out, .out = out, .state = r->state,
                  .step = &r->step, .frame = "", .st = &st};
  dfx_code c = r->k->fn(&ctx);
  snprintf(err, sizeof err, "%s", st.msg);
  if (c != DFX_OK) {
    dfx__tensor_unref(out[0]);
    out[0] = NULL;
  }
  return c;
}

static void rn_close(runner *r) {
  if (r->k->fini) r->k->fini(r->state);
  dfx__step_destroy(&r->step);
  kh_node_free(r->n);
  dfx__tensor_cache_flush();
}

static dfx_node *rnode(const char *op, dfx_dtype dt, int64_t seed, int64_t seed2) {
  dfx_node *n = kh_node_new(op);
  if (dt) kh_attr_type(n, strcmp(op, "RandomUniformInt") == 0 ? "Tout" : "dtype", dt);
  kh_attr_type(n, "T", DFX_I32);
  kh_attr_int(n, "seed", seed);
  kh_attr_int(n, "seed2", seed2);
  return n;
}

static dfx_tensor *shape1(int64_t a) {
  int64_t d = 1;
  int32_t v = (int32_t)a;
  return kh_i32(1, &d, &v);
}

/* One fresh-state run of a float random op with `n` outputs. */
static dfx_tensor *fresh(const char *op, dfx_dtype dt, int64_t seed, int64_t seed2, int64_t n) {
  runner r;
  rn_open(&r, rnode(op, dt, seed, seed2));
  dfx_tensor *s = shape1(n), *out;
  cr_assert_eq(rn_run(&r, &s, 1, &out), DFX_OK, "%s", err);
  dfx__tensor_unref(s);
  rn_close(&r);
  return out;
}

Test(random, uniform_matches_tf_streams) {
  /* Values TensorFlow produced for these seeds (first elements). */
  dfx_tensor *f = fresh("RandomUniform", DFX_F32, 12345, 0, 8);
  const float wf[4] = {0.95503247f, 0.99933827f, 0.58270466f, 0.31823349f};
  for (int i = 0; i < 4; i++) cr_expect_float_eq(((float *)f->data)[i], wf[i], 1e-7, "i=%d", i);
  dfx__tensor_unref(f);
  dfx_tensor *d = fresh("RandomUniform", DFX_F64, 12345, 1, 5);
  const double wd[4] = {0.82788747, 0.54196982, 0.11127723, 0.76539488};
  for (int i = 0; i < 4; i++) cr_expect_float_eq(((double *)d->data)[i], wd[i], 1e-8, "i=%d", i);
  dfx__tensor_unref(d);
  dfx_tensor *h = fresh("RandomUniform", DFX_F16, 12345, 1, 5);
  const float wh[4] = {0.75585938f, 0.54199219f, 0.97656250f, 0.70410156f};
  for (int i = 0; i < 4; i++) cr_expect_eq(dfx__f16_to_f32(((uint16_t *)h->data)[i]), wh[i], "i=%d", i);
  dfx__tensor_unref(h);
}

Test(random, seeded_repeatable_and_advancing) {
  const char *ops[] = {"RandomUniform", "RandomStandardNormal", "TruncatedNormal"};
  for (int o = 0; o < 3; o++) {
    dfx_tensor *a = fresh(ops[o], DFX_F32, 7, 3, 33), *b = fresh(ops[o], DFX_F32, 7, 3, 33);
    cr_expect(memcmp(a->data, b->data, a->nbytes) == 0, "%s: fresh states repeat", ops[o]);
    runner r;
    rn_open(&r, rnode(ops[o], DFX_F32, 7, 3));
    dfx_tensor *s = shape1(33), *c1, *c2;
    cr_assert_eq(rn_run(&r, &s, 1, &c1), DFX_OK, "%s", err);
    cr_assert_eq(rn_run(&r, &s, 1, &c2), DFX_OK, "%s", err);
    cr_expect(memcmp(c1->data, a->data, a->nbytes) == 0);
    cr_expect(memcmp(c1->data, c2->data, a->nbytes) != 0, "%s: the second run differs", ops[o]);
    dfx__tensor_unref(s);
    dfx__tensor_unref(c1);
    dfx__tensor_unref(c2);
    rn_close(&r);
    dfx__tensor_unref(a);
    dfx__tensor_unref(b);
  }
  /* Unseeded: two fresh states differ. */
  dfx_tensor *a = fresh("RandomUniform", DFX_F32, 0, 0, 16), *b = fresh("RandomUniform", DFX_F32, 0, 0, 16);
  cr_expect(memcmp(a->data, b->data, a->nbytes) != 0);
  dfx__tensor_unref(a);
  dfx__tensor_unref(b);
}

static void moments(const dfx_tensor *t, double *mean, double *var, double *mn, double *mx) {
  double s = 0, s2 = 0;
  *mn = INFINITY;
  *mx = -INFINITY;
  for (int64_t i = 0; i < t->count; i++) {
    double v = dfx__tensor_get_f64(t, i);
    s += v;
    s2 += v * v;
    if (v < *mn) *mn = v;
    if (v > *mx) *mx = v;
  }
  *mean = s / (double)t->count;
  *var = s2 / (double)t->count - *mean * *mean;
}

Test(random, distributions_have_right_moments) {
  const dfx_dtype dts[4] = {DFX_F32, DFX_F64, DFX_F16, DFX_BF16};
  for (int k = 0; k < 4; k++) {
    double m, v, mn, mx;
    dfx_tensor *u = fresh("RandomUniform", dts[k], 1, 2, 20000);
    cr_expect_eq(u->dtype, dts[k]);
    moments(u, &m, &v, &mn, &mx);
    cr_expect(fabs(m - 0.5) < 0.02 && fabs(v - 1.0 / 12) < 0.01 && mn >= 0 && mx < 1, "uniform %d: %g %g", k, m, v);
    dfx__tensor_unref(u);
    dfx_tensor *nrm = fresh("RandomStandardNormal", dts[k], 1, 2, 20000);
    moments(nrm, &m, &v, &mn, &mx);
    cr_expect(fabs(m) < 0.03 && fabs(v - 1) < 0.05 && mx > 3, "normal %d: %g %g", k, m, v);
    dfx__tensor_unref(nrm);
    dfx_tensor *t = fresh("TruncatedNormal", dts[k], 1, 2, 20000);
    moments(t, &m, &v, &mn, &mx);
    /* Variance of N(0,1) truncated to (-2, 2) is 0.7737. */
    cr_expect(fabs(m) < 0.03 && fabs(v - 0.7737) < 0.04 && mn >= -2 && mx <= 2 && (k > 1 || (mn > -2 && mx < 2)), "truncated %d: %g %g", k, m, v);
    dfx__tensor_unref(t);
  }
}

static dfx_code uniform_int(dfx_dtype dt, int64_t lo, int64_t hi, int64_t n, int64_t seed, dfx_tensor **out) {
  runner r;
  rn_open(&r, rnode("RandomUniformInt", dt, seed, 0));
  dfx_tensor *in[3] = {shape1(n), kh_tensor(dt, 0, NULL, NULL), kh_tensor(dt, 0, NULL, NULL)};
  if (dt == DFX_I32) {
    ((int32_t *)in[1]->data)[0] = (int32_t)lo;
    ((int32_t *)in[2]->data)[0] = (int32_t)hi;
  } else {
    ((int64_t *)in[1]->data)[0] = lo;
    ((int64_t *)in[2]->data)[0] = hi;
  }
  dfx_code c = rn_run(&r, in, 3, out);
  for (int i = 0; i < 3; i++) dfx__tensor_unref(in[i]);
  rn_close(&r);
  return c;
}

Test(random, uniform_int_range_and_errors) {
  dfx_tensor *o;
  cr_assert_eq(uniform_int(DFX_I32, -3, 4, 5000, 5, &o), DFX_OK, "%s", err);
  int seen[7] = {0};
  for (int64_t i = 0; i < o->count; i++) {
    int32_t v = ((int32_t *)o->data)[i];
    cr_assert(v >= -3 && v < 4, "v=%d", v);
    seen[v + 3]++;
  }
  for (int k = 0; k < 7; k++) cr_expect(seen[k] > 550 && seen[k] < 900, "bucket %d: %d", k, seen[k]);
  dfx__tensor_unref(o);
  cr_assert_eq(uniform_int(DFX_I64, -((int64_t)1 << 40), (int64_t)1 << 40, 1000, 5, &o), DFX_OK, "%s", err);
  int64_t mx = 0;
  for (int64_t i = 0; i < o->count; i++) {
    int64_t v = ((int64_t *)o->data)[i];
    cr_assert(v >= -((int64_t)1 << 40) && v < ((int64_t)1 << 40));
    if (llabs(v) > mx) mx = llabs(v);
  }
  cr_expect(mx > ((int64_t)1 << 38), "uses the full 64-bit range");
  dfx__tensor_unref(o);
  cr_expect_eq(uniform_int(DFX_I32, 4, 4, 3, 5, &o), DFX_EINVAL);
  cr_expect(strstr(err, "Need minval < maxval: 4 >= 4"), "%s", err);
  cr_expect_eq(uniform_int(DFX_I32, 4, 4, 0, 5, &o), DFX_OK, "empty output skips the check");
  cr_expect_eq(o->count, 0);
  dfx__tensor_unref(o);
}

Test(random, shapes_and_errors) {
  runner r;
  rn_open(&r, rnode("RandomUniform", DFX_F32, 1, 1));
  int64_t d3 = 3;
  int32_t sv[3] = {2, 0, 4};
  dfx_tensor *s = kh_i32(1, &d3, sv), *out;
  cr_assert_eq(rn_run(&r, &s, 1, &out), DFX_OK, "%s", err);
  cr_expect_eq(out->ndims, 3);
  cr_expect_eq(out->count, 0);
  dfx__tensor_unref(out);
  dfx__tensor_unref(s);
  sv[1] = -1;
  s = kh_i32(1, &d3, sv);
  cr_expect_eq(rn_run(&r, &s, 1, &out), DFX_EINVAL);
  dfx__tensor_unref(s);
  s = kh_i32(0, NULL, sv);
  cr_expect_eq(rn_run(&r, &s, 1, &out), DFX_EINVAL);
  dfx__tensor_unref(s);
  s = kh_i32(1, (int64_t[]){0}, sv);
  cr_assert_eq(rn_run(&r, &s, 1, &out), DFX_OK, "%s", err);
  cr_expect_eq(out->ndims, 0, "empty shape vector gives a scalar");
  dfx__tensor_unref(out);
  dfx__tensor_unref(s);
  rn_close(&r);
}

Test(random, shuffle_permutes_rows) {
  runner r;
  dfx_node *n = kh_node_new("RandomShuffle");
  kh_attr_type(n, "T", DFX_I32);
  kh_attr_int(n, "seed", 9);
  rn_open(&r, n);
  int64_t d[2] = {50, 2};
  int32_t v[100];
  for (int i = 0; i < 50; i++) v[2 * i] = i, v[2 * i + 1] = 1000 + i;
  dfx_tensor *x = kh_i32(2, d, v), *o1, *o2;
  cr_assert_eq(rn_run(&r, &x, 1, &o1), DFX_OK, "%s", err);
  cr_assert_eq(rn_run(&r, &x, 1, &o2), DFX_OK, "%s", err);
  int seen[50] = {0}, moved = 0;
  for (int i = 0; i < 50; i++) {
    int32_t a = ((int32_t *)o1->data)[2 * i], b = ((int32_t *)o1->data)[2 * i + 1];
    cr_assert(a >= 0 && a < 50 && b == 1000 + a, "rows stay intact");
    seen[a]++;
    moved += a != i;
  }
  for (int i = 0; i < 50; i++) cr_expect_eq(seen[i], 1);
  cr_expect(moved > 30);
  cr_expect(memcmp(o1->data, o2->data, o1->nbytes) != 0, "runs advance");
  dfx__tensor_unref(o1);
  dfx__tensor_unref(o2);
  dfx__tensor_unref(x);
  dfx_tensor *sc = kh_scalar_i32(5);
  cr_assert_eq(rn_run(&r, &sc, 1, &o1), DFX_OK, "%s", err);
  cr_expect_eq(((int32_t *)o1->data)[0], 5);
  dfx__tensor_unref(o1);
  dfx__tensor_unref(sc);
  rn_close(&r);
}

static dfx_tensor *param_run(const char *op, dfx_tensor *param, int64_t n, dfx_dtype out_dt) {
  runner r;
  dfx_node *nd = kh_node_new(op);
  kh_attr_type(nd, "S", DFX_I32);
  if (strcmp(op, "RandomGamma") == 0)
    kh_attr_type(nd, "T", (dfx_dtype)param->dtype);
  else if (strcmp(op, "RandomPoissonV2") == 0) {
    kh_attr_type(nd, "R", (dfx_dtype)param->dtype);
    kh_attr_type(nd, "dtype", out_dt);
  } else
    kh_attr_type(nd, "dtype", (dfx_dtype)param->dtype);
  kh_attr_int(nd, "seed", 3);
  rn_open(&r, nd);
  dfx_tensor *in[2] = {shape1(n), param}, *out;
  cr_assert_eq(rn_run(&r, in, 2, &out), DFX_OK, "%s", err);
  dfx__tensor_unref(in[0]);
  rn_close(&r);
  return out;
}

Test(random, gamma_and_poisson_moments) {
  int64_t d3 = 3;
  float alpha[3] = {0.5f, 1.0f, 4.0f};
  dfx_tensor *a = kh_f32(1, &d3, alpha), *g = param_run("RandomGamma", a, 20000, DFX_INVALID);
  cr_expect_eq(g->ndims, 2);
  cr_expect_eq(g->dims[0], 20000);
  cr_expect_eq(g->dims[1], 3);
  for (int k = 0; k < 3; k++) {
    double s = 0, s2 = 0;
    for (int i = 0; i < 20000; i++) {
      double v = ((float *)g->data)[i * 3 + k];
      cr_assert(v >= 0);
      s += v;
      s2 += v * v;
    }
    double m = s / 20000, var = s2 / 20000 - m * m;
    cr_expect(fabs(m - alpha[k]) < 0.05 * alpha[k] + 0.02, "gamma mean %g vs %g", m, alpha[k]);
    cr_expect(fabs(var - alpha[k]) < 0.1 * alpha[k] + 0.03, "gamma var %g vs %g", var, alpha[k]);
  }
  dfx__tensor_unref(g);
  dfx__tensor_unref(a);
  double rate[3] = {0.0, 3.0, 50.0};
  dfx_tensor *rt = kh_tensor(DFX_F64, 1, &d3, rate);
  dfx_tensor *p = param_run("RandomPoissonV2", rt, 20000, DFX_I64);
  cr_expect_eq(p->dtype, DFX_I64);
  for (int k = 0; k < 3; k++) {
    double s = 0, s2 = 0;
    for (int i = 0; i < 20000; i++) {
      double v = (double)((int64_t *)p->data)[i * 3 + k];
      s += v;
      s2 += v * v;
    }
    double m = s / 20000, var = s2 / 20000 - m * m;
    cr_expect(fabs(m - rate[k]) < 0.03 * rate[k] + 0.01, "poisson mean %g vs %g", m, rate[k]);
    cr_expect(fabs(var - rate[k]) < 0.08 * rate[k] + 0.01, "poisson var %g vs %g", var, rate[k]);
  }
  dfx__tensor_unref(p);
  p = param_run("RandomPoisson", rt, 10, DFX_INVALID);
  cr_expect_eq(p->dtype, DFX_F64);
  dfx__tensor_unref(p);
  dfx__tensor_unref(rt);
}

Test(random, multinomial_frequencies_and_errors) {
  runner r;
  dfx_node *n = kh_node_new("Multinomial");
  kh_attr_type(n, "T", DFX_F32);
  kh_attr_type(n, "output_dtype", DFX_I32);
  kh_attr_int(n, "seed", 4);
  rn_open(&r, n);
  int64_t d[2] = {2, 3};
  float lg[6] = {0, logf(3), -INFINITY, 5, 5, 5};
  dfx_tensor *in[2] = {kh_f32(2, d, lg), kh_scalar_i32(12000)}, *o;
  cr_assert_eq(rn_run(&r, in, 2, &o), DFX_OK, "%s", err);
  cr_expect_eq(o->dims[0], 2);
  cr_expect_eq(o->dims[1], 12000);
  int c[2][3] = {{0}};
  for (int b = 0; b < 2; b++)
    for (int s = 0; s < 12000; s++) c[b][((int32_t *)o->data)[b * 12000 + s]]++;
  cr_expect(fabs(c[0][0] / 12000.0 - 0.25) < 0.02 && c[0][2] == 0, "%d %d %d", c[0][0], c[0][1], c[0][2]);
  for (int k = 0; k < 3; k++) cr_expect(fabs(c[1][k] / 12000.0 - 1.0 / 3) < 0.02);
  dfx__tensor_unref(o);
  dfx__tensor_unref(in[1]);
  in[1] = kh_scalar_i32(-1);
  cr_expect_eq(rn_run(&r, in, 2, &o), DFX_EINVAL);
  cr_expect(strstr(err, "num_samples should be nonnegative, got -1"), "%s", err);
  dfx__tensor_unref(in[0]);
  in[0] = kh_f32(1, d, lg);
  cr_expect_eq(rn_run(&r, in, 2, &o), DFX_EINVAL);
  cr_expect(strstr(err, "logits should be a matrix"), "%s", err);
  dfx__tensor_unref(in[0]);
  dfx__tensor_unref(in[1]);
  rn_close(&r);
}
