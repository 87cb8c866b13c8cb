/* test_types.c - the dtypes the misc kernel rows declare. Every type attr of
 * every op of the family is declared (none left to "any"), within what
 * TensorFlow allows; a TF-allowed dtype a row leaves out is refused at
 * kernel lookup with a message naming the attr and the dtype; and the sweeps
 * run every declared dtype (read from the registry, so they cover exactly
 * the declared sets) against naive references: a Philox stream written out
 * here for the seeded ops, element copies for the containers. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "mtest.h"
#include "op_registry.h"

static char err[2048];
static dfx_step step;

static void setup(void) { dfx__step_init(&step); }
static void teardown(void) {
  dfx__step_destroy(&step);
  dfx__tensor_cache_flush();
}
TestSuite(types, .init = setup, .fini = teardown, .timeout = 60);

static const char *const family[] = {
    "RandomUniform", "RandomStandardNormal", "TruncatedNormal", "RandomUniformInt", "RandomShuffle", "RandomGamma",
    "RandomPoisson", "RandomPoissonV2", "Multinomial", "TensorArrayV3", "TensorArrayV2", "TensorArrayGradV3",
    "TensorArrayGradWithShape", "TensorArrayGradV2", "TensorArrayWriteV3", "TensorArrayWriteV2", "TensorArrayReadV3",
    "TensorArrayReadV2", "TensorArraySizeV3", "TensorArraySizeV2", "TensorArrayCloseV3", "TensorArrayCloseV2",
    "TensorArrayGatherV3", "TensorArrayGatherV2", "TensorArrayScatterV3", "TensorArrayScatterV2",
    "TensorArrayConcatV3", "TensorArrayConcatV2", "TensorArraySplitV3", "TensorArraySplitV2", "StackV2",
    "StackPushV2", "StackPopV2", "StackCloseV2", "Stack", "StackPush", "StackPop", "StackClose", "Assert", "Print",
    "PrintV2", "Abort", "LSTMBlockCell", "BlockLSTM", "BlockLSTMV2", "GRUBlockCell", "FakeQuantWithMinMaxArgs",
    "FakeQuantWithMinMaxVars", "FakeQuantWithMinMaxVarsPerChannel"};
#define N_FAMILY (int)(sizeof family / sizeof family[0])

/* ---- declarations and refusals ---- */

static bool is_type_attr(const dfx_op_attr *a) {
  return a->kind == DFX_ATTR_TYPE || (a->kind == DFX_ATTR_LIST && a->elem == DFX_ATTR_TYPE);
}

static uint64_t tf_allowed(const dfx_op_attr *a) {
  uint64_t m = 0;
  for (int t = 1; t < DFX_DTYPE_END_; t++)
    if (dfx__dtype_valid(t) && (!a->allowed || a->allowed >> t & 1)) m |= (uint64_t)1 << t;
  return m;
}

/* A node of op whose type attrs hold their lowest declared dtype, except
 * `attr`, which holds `bad` (one element for a list). */
static dfx_node *typed_node(const char *op, const char *attr, dfx_dtype bad) {
  dfx_node *n = kh_node_new(op);
  for (int i = 0; i < n->def->n_attrs; i++) {
    const dfx_op_attr *a = &n->def->attrs[i];
    if (!is_type_attr(a)) continue;
    dfx_dtype t = bad;
    if (!attr || strcmp(a->name, attr) != 0) FOR_DTYPES(u, declared(op, a->name) & tf_allowed(a)) {
        t = u;
        break;
      }
    if (a->kind == DFX_ATTR_TYPE)
      kh_attr_type(n, a->name, t);
    else
      kh_attr_types(n, a->name, &t, 1);
  }
  return n;
}

Test(types, every_type_attr_is_declared_within_tf) {
  dfx_status st;
  const dfx_registry *r = dfx__lib_registry(&st);
  int n_attrs = 0;
  for (int o = 0; o < N_FAMILY; o++) {
    const dfx_op_def *d = dfx__op_get(family[o]);
    cr_assert(d && dfx__registry_has_kernel(r, family[o]), "%s", family[o]);
    for (int i = 0; i < d->n_attrs; i++) {
      if (!is_type_attr(&d->attrs[i])) continue;
      uint64_t m = declared(family[o], d->attrs[i].name), tf = tf_allowed(&d->attrs[i]);
      cr_expect_neq(m, ~(uint64_t)0, "%s: %s is left to any dtype", family[o], d->attrs[i].name);
      cr_expect(m & tf, "%s: %s declares no dtype TF allows", family[o], d->attrs[i].name);
      n_attrs++;
    }
    dfx_node *n = typed_node(family[o], NULL, DFX_INVALID);
    cr_expect(dfx__registry_kernel_for(r, n, &st), "%s: %s", family[o], st.msg);
    kh_node_free(n);
  }
  cr_expect_eq(n_attrs, 45, "type attrs of the family: %d", n_attrs);
}

Test(types, undeclared_tf_dtypes_are_refused_by_name) {
  dfx_status st;
  const dfx_registry *r = dfx__lib_registry(&st);
  int refused = 0;
  for (int o = 0; o < N_FAMILY; o++) {
    const dfx_op_def *d = dfx__op_get(family[o]);
    for (int i = 0; i < d->n_attrs; i++) {
      const dfx_op_attr *a = &d->attrs[i];
      if (!is_type_attr(a)) continue;
      FOR_DTYPES(bad, tf_allowed(a) & ~declared(family[o], a->name)) {
        dfx_node *n = typed_node(family[o], a->name, bad);
        dfx__status_clear(&st);
        cr_expect_null(dfx__registry_kernel_for(r, n, &st), "%s %s=%s", family[o], a->name, dfx_dtype_name(bad));
        cr_expect_eq(st.code, DFX_EUNIMPL);
        char want[64];
        snprintf(want, sizeof want, " %s=%s ", a->name, dfx_dtype_name(bad));
        cr_expect(strstr(st.msg, want), "%s: %s", family[o], st.msg);
        kh_node_free(n);
        refused++;
      }
    }
  }
  /* variant in RandomShuffle, TensorArray* (14 attrs), Assert, Print's U and
   * resource in TensorArray*, Assert, Print's U. */
  cr_expect_eq(refused, 2 * 14 + 1 + 2 * 2, "refused: %d", refused);
}

/* ---- a naive Philox-4x32-10 stream (TF's GuardedPhiloxRandom layout) ---- */

typedef struct rstream {
  uint32_t key[2], ctr[4], buf[4];
  int used;
} rstream;

/* The stream of a fresh node with these seeds, from 128-bit block `block`. */
static rstream rs_open(uint64_t seed, uint64_t seed2, uint64_t block) {
  return (rstream){.key = {(uint32_t)seed, (uint32_t)(seed >> 32)},
                   .ctr = {(uint32_t)block, (uint32_t)(block >> 32), (uint32_t)seed2, (uint32_t)(seed2 >> 32)},
                   .used = 4};
}

static uint32_t rs_next(rstream *r) {
  if (r->used == 4) {
    uint32_t c[4] = {r->ctr[0], r->ctr[1], r->ctr[2], r->ctr[3]}, k0 = r->key[0], k1 = r->key[1];
    for (int round = 0; round < 10; round++) {
      uint64_t p0 = (uint64_t)0xD2511F53u * c[0], p1 = (uint64_t)0xCD9E8D57u * c[2];
      uint32_t n[4] = {(uint32_t)(p1 >> 32) ^ c[1] ^ k0, (uint32_t)p1, (uint32_t)(p0 >> 32) ^ c[3] ^ k1, (uint32_t)p0};
      memcpy(c, n, sizeof c);
      k0 += 0x9E3779B9u;
      k1 += 0xBB67AE85u;
    }
    memcpy(r->buf, c, sizeof c);
    if (++r->ctr[0] == 0) r->ctr[1]++;
    r->used = 0;
  }
  return r->buf[r->used++];
}

/* TF's uniform [0, 1) conversions, per output dtype. */
static double unit(rstream *r, dfx_dtype dt) {
  uint32_t x = rs_next(r);
  switch (dt) {
    case DFX_F16: return dfx__f16_to_f32((uint16_t)(0x3c00 | (x & 0x3ff))) - 1.0;
    case DFX_BF16: return dfx__bf16_to_f32((uint16_t)(0x3f80 | (x & 0x7f))) - 1.0;
    case DFX_F64: {
      uint64_t bits = (uint64_t)1023 << 52 | (uint64_t)(x & 0xfffff) << 32 | rs_next(r);
      double d;
      memcpy(&d, &bits, 8);
      return d - 1.0;
    }
    default: {
      uint32_t bits = 0x3f800000u | (x & 0x7fffff);
      float f;
      memcpy(&f, &bits, 4);
      return f - 1.0f;
    }
  }
}

/* Box-Muller on the next samples: float dtypes draw 2 uint32, double 4. */
static void normal_pair(rstream *r, dfx_dtype dt, double v[2]) {
  dfx_dtype ut = dt == DFX_F64 ? DFX_F64 : DFX_F32;
  double u1 = unit(r, ut), u2 = unit(r, ut);
  double lo = 1e-7;
  if (u1 < lo) u1 = lo;
  double rad = sqrt(-2.0 * log(u1)), th = 2 * M_PI * u2;
  v[0] = sin(th) * rad;
  v[1] = cos(th) * rad;
}

enum { UNIFORM, NORMAL, TRUNCATED };

static void ref_float_random(int kind, dfx_dtype dt, uint64_t seed, uint64_t seed2, int64_t n, double *out) {
  int group = dt == DFX_F64 ? 2 : 4;
  rstream r = rs_open(seed, seed2, 0);
  for (int64_t i = 0; i < n; i += group) {
    double g[4];
    if (kind == UNIFORM) {
      for (int j = 0; j < group; j++) g[j] = unit(&r, dt);
    } else if (kind == NORMAL) {
      for (int j = 0; j < group; j += 2) normal_pair(&r, dt, g + j);
    } else { /* each group starts at its own 256 reserved counters per output */
      r = rs_open(seed, seed2, (uint64_t)(i / group) * (uint64_t)(group * 64));
      for (int k = 0; k < group;) {
        double v[2];
        normal_pair(&r, dt, v);
        for (int j = 0; j < 2 && k < group; j++)
          if (fabs(v[j]) < 2.0) g[k++] = v[j];
      }
    }
    for (int j = 0; j < group && i + j < n; j++) out[i + j] = g[j];
  }
}

static dfx_tensor *shape_vec(dfx_dtype t, int64_t n) {
  int64_t one = 1;
  dfx_tensor *s = kh_tensor(t, 1, &one, NULL);
  if (t == DFX_I32)
    ((int32_t *)s->data)[0] = (int32_t)n;
  else
    ((int64_t *)s->data)[0] = n;
  return s;
}

static dfx_node *seeded(const char *op, int64_t seed, int64_t seed2) {
  dfx_node *n = kh_node_new(op);
  kh_attr_int(n, "seed", seed);
  kh_attr_int(n, "seed2", seed2);
  return n;
}

Test(types, float_random_matches_reference_streams) {
  const char *ops[3] = {"RandomUniform", "RandomStandardNormal", "TruncatedNormal"};
  enum { N = 11 };
  int runs = 0;
  for (int o = 0; o < 3; o++)
    FOR_DTYPES(dt, declared(ops[o], "dtype")) FOR_DTYPES(st, declared(ops[o], "T")) {
        dfx_node *n = seeded(ops[o], 99, 5);
        kh_attr_type(n, "dtype", dt);
        kh_attr_type(n, "T", st);
        dfx_tensor *s = shape_vec(st, N), *out;
        cr_assert_eq(kh_run_step(n, &s, 1, &out, NULL, &step, err, sizeof err), DFX_OK, "%s", err);
        cr_assert_eq(out->dtype, dt);
        cr_assert_eq(out->count, N);
        double want[N];
        ref_float_random(o, dt, 99, 5, N, want);
        double tol = dt == DFX_F64 ? 1e-12 : dt == DFX_F32 ? 1e-5 : 1e-2;
        if (o == UNIFORM) tol = 0; /* exact */
        for (int i = 0; i < N; i++) {
          double got = dfx__tensor_get_f64(out, i);
          cr_expect(fabs(got - want[i]) <= tol * fmax(1.0, fabs(want[i])), "%s %s/%s [%d]: %.9g vs %.9g", ops[o],
                    dfx_dtype_name(dt), dfx_dtype_name(st), i, got, want[i]);
        }
        dfx__tensor_unref(out);
        dfx__tensor_unref(s);
        kh_node_free(n);
        runs++;
      }
  cr_expect_eq(runs, 3 * 4 * 2);
}

Test(types, uniform_int_matches_reference_stream) {
  enum { N = 9 };
  int runs = 0;
  FOR_DTYPES(dt, declared("RandomUniformInt", "Tout")) FOR_DTYPES(st, declared("RandomUniformInt", "T")) {
      int64_t lo = dt == DFX_I32 ? -5 : -((int64_t)1 << 40), hi = dt == DFX_I32 ? 1000 : ((int64_t)1 << 40) + 7;
      dfx_node *n = seeded("RandomUniformInt", 3, 8);
      kh_attr_type(n, "Tout", dt);
      kh_attr_type(n, "T", st);
      dfx_tensor *in[3] = {shape_vec(st, N), kh_tensor(dt, 0, NULL, NULL), kh_tensor(dt, 0, NULL, NULL)}, *out;
      if (dt == DFX_I32) {
        ((int32_t *)in[1]->data)[0] = (int32_t)lo;
        ((int32_t *)in[2]->data)[0] = (int32_t)hi;
      } else {
        ((int64_t *)in[1]->data)[0] = lo;
        ((int64_t *)in[2]->data)[0] = hi;
      }
      cr_assert_eq(kh_run_step(n, in, 3, &out, NULL, &step, err, sizeof err), DFX_OK, "%s", err);
      rstream r = rs_open(3, 8, 0);
      for (int i = 0; i < N; i++) {
        uint64_t bits = rs_next(&r);
        if (dt == DFX_I64) bits |= (uint64_t)rs_next(&r) << 32;
        int64_t want = dt == DFX_I32 ? (int64_t)(int32_t)((uint32_t)lo + (uint32_t)bits % (uint32_t)(hi - lo))
                                     : lo + (int64_t)(bits % (uint64_t)(hi - lo));
        cr_expect_eq(dfx__tensor_get_i64(out, i), want, "%s/%s [%d]", dfx_dtype_name(dt), dfx_dtype_name(st), i);
      }
      dfx__tensor_unref(out);
      for (int i = 0; i < 3; i++) dfx__tensor_unref(in[i]);
      kh_node_free(n);
      runs++;
    }
  cr_expect_eq(runs, 4);
}

Test(types, shuffle_moves_rows_of_every_declared_dtype) {
  enum { ROWS = 6, COLS = 2 };
  int64_t perm[ROWS], d[2] = {ROWS, COLS};
  for (int i = 0; i < ROWS; i++) perm[i] = i;
  rstream r = rs_open(21, 4, 0); /* Fisher-Yates, one uint32 per draw */
  for (int i = ROWS - 1; i > 0; i--) {
    int64_t j = rs_next(&r) % (uint32_t)(i + 1), t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
  }
  int runs = 0;
  FOR_DTYPES(t, declared("RandomShuffle", "T")) {
    dfx_node *n = seeded("RandomShuffle", 21, 4);
    kh_attr_type(n, "T", t);
    dfx_tensor *x = mk_elems(t, 2, d, 1), *out;
    cr_assert_eq(kh_run_step(n, &x, 1, &out, NULL, &step, err, sizeof err), DFX_OK, "%s", err);
    for (int i = 0; i < ROWS; i++)
      cr_expect(elems_eq(out, i * COLS, x, perm[i] * COLS, COLS), "%s row %d", dfx_dtype_name(t), i);
    dfx__tensor_unref(out);
    dfx__tensor_unref(x);
    kh_node_free(n);
    runs++;
  }
  cr_expect_eq(runs, 22);
}

/* ---- parameterised random ops: every dtype pair repeats the double stream ---- */

static dfx_tensor *vec_of(dfx_dtype t, int n, const double *v) {
  int64_t d = n;
  dfx_tensor *x = kh_tensor(t, 1, &d, NULL);
  for (int i = 0; i < n; i++) switch (t) {
      case DFX_F16: ((uint16_t *)x->data)[i] = dfx__f32_to_f16((float)v[i]); break;
      case DFX_BF16: ((uint16_t *)x->data)[i] = dfx__f32_to_bf16((float)v[i]); break;
      case DFX_F32: ((float *)x->data)[i] = (float)v[i]; break;
      case DFX_F64: ((double *)x->data)[i] = v[i]; break;
      case DFX_I8: ((int8_t *)x->data)[i] = (int8_t)v[i]; break;
      case DFX_U8: ((uint8_t *)x->data)[i] = (uint8_t)v[i]; break;
      case DFX_I16: ((int16_t *)x->data)[i] = (int16_t)v[i]; break;
      case DFX_U16: ((uint16_t *)x->data)[i] = (uint16_t)v[i]; break;
      case DFX_I32: ((int32_t *)x->data)[i] = (int32_t)v[i]; break;
      case DFX_U32: ((uint32_t *)x->data)[i] = (uint32_t)v[i]; break;
      case DFX_I64: ((int64_t *)x->data)[i] = (int64_t)v[i]; break;
      case DFX_U64: ((uint64_t *)x->data)[i] = (uint64_t)v[i]; break;
      default: cr_assert_fail("no value for %s", dfx_dtype_name(t));
    }
  return x;
}

/* The value a double sample becomes when stored as dt. */
static double as_dtype(double v, dfx_dtype dt) {
  switch (dt) {
    case DFX_F16: return dfx__f16_to_f32(dfx__f32_to_f16((float)v));
    case DFX_F32: return (float)v;
    default: return v;
  }
}

/* Runs op with shape [ns] of dtype S and parameters p; out dtype via attr. */
static dfx_tensor *param_run(const char *op, dfx_dtype S, dfx_tensor *p, const char *pattr, const char *oattr,
                             dfx_dtype odt) {
  dfx_node *n = seeded(op, 17, 2);
  kh_attr_type(n, "S", S);
  kh_attr_type(n, pattr, (dfx_dtype)p->dtype);
  if (oattr) kh_attr_type(n, oattr, odt);
  dfx_tensor *in[2] = {shape_vec(S, 400), p}, *out;
  cr_assert_eq(kh_run_step(n, in, 2, &out, NULL, &step, err, sizeof err), DFX_OK, "%s %s", op, err);
  dfx__tensor_unref(in[0]);
  kh_node_free(n);
  return out;
}

static void column_mean(const dfx_tensor *t, int np, int k, double want, double tol) {
  double s = 0;
  int64_t rows = t->count / np;
  for (int64_t i = 0; i < rows; i++) s += dfx__tensor_get_f64(t, i * np + k);
  cr_expect(fabs(s / (double)rows - want) < tol, "mean %g vs %g", s / (double)rows, want);
}

Test(types, gamma_every_dtype_repeats_the_double_stream) {
  const double alpha[2] = {0.5, 3.0};
  dfx_tensor *a64 = vec_of(DFX_F64, 2, alpha), *base = param_run("RandomGamma", DFX_I32, a64, "T", NULL, 0);
  column_mean(base, 2, 0, 0.5, 0.1);
  column_mean(base, 2, 1, 3.0, 0.3);
  int runs = 0;
  FOR_DTYPES(S, declared("RandomGamma", "S")) FOR_DTYPES(T, declared("RandomGamma", "T")) {
      dfx_tensor *a = vec_of(T, 2, alpha), *g = param_run("RandomGamma", S, a, "T", NULL, 0);
      cr_assert_eq(g->dtype, T);
      cr_assert_eq(g->count, base->count);
      for (int64_t i = 0; i < g->count; i++)
        cr_assert_eq(dfx__tensor_get_f64(g, i), as_dtype(dfx__tensor_get_f64(base, i), T), "%s/%s [%lld]",
                     dfx_dtype_name(S), dfx_dtype_name(T), (long long)i);
      dfx__tensor_unref(g);
      dfx__tensor_unref(a);
      runs++;
    }
  cr_expect_eq(runs, 6);
  dfx__tensor_unref(base);
  dfx__tensor_unref(a64);
}

Test(types, poisson_every_dtype_repeats_the_double_stream) {
  const double rate[3] = {0, 1, 30}; /* Knuth and PTRS */
  dfx_tensor *r64 = vec_of(DFX_F64, 3, rate), *base = param_run("RandomPoissonV2", DFX_I32, r64, "R", "dtype", DFX_I64);
  column_mean(base, 3, 1, 1.0, 0.2);
  column_mean(base, 3, 2, 30.0, 1.0);
  int runs = 0;
  FOR_DTYPES(S, declared("RandomPoissonV2", "S")) FOR_DTYPES(R, declared("RandomPoissonV2", "R"))
      FOR_DTYPES(D, declared("RandomPoissonV2", "dtype")) {
    dfx_tensor *r = vec_of(R, 3, rate), *p = param_run("RandomPoissonV2", S, r, "R", "dtype", D);
    cr_assert_eq(p->dtype, D);
    for (int64_t i = 0; i < p->count; i++)
      cr_assert_eq(dfx__tensor_get_f64(p, i), dfx__tensor_get_f64(base, i), "V2 %s/%s/%s", dfx_dtype_name(S),
                   dfx_dtype_name(R), dfx_dtype_name(D));
    dfx__tensor_unref(p);
    dfx__tensor_unref(r);
    runs++;
  }
  FOR_DTYPES(S, declared("RandomPoisson", "S")) FOR_DTYPES(D, declared("RandomPoisson", "dtype")) {
      dfx_tensor *r = vec_of(D, 3, rate), *p = param_run("RandomPoisson", S, r, "dtype", NULL, 0);
      cr_assert_eq(p->dtype, D);
      for (int64_t i = 0; i < p->count; i++)
        cr_assert_eq(dfx__tensor_get_f64(p, i), dfx__tensor_get_f64(base, i), "%s/%s", dfx_dtype_name(S),
                     dfx_dtype_name(D));
      dfx__tensor_unref(p);
      dfx__tensor_unref(r);
      runs++;
    }
  cr_expect_eq(runs, 2 * 5 * 5 + 2 * 3);
  dfx__tensor_unref(base);
  dfx__tensor_unref(r64);
}

static dfx_tensor *multinomial(dfx_dtype T, dfx_dtype odt) {
  const double lg[6] = {0, 1, 2, 2, 2, 0};
  int64_t d[2] = {2, 3};
  dfx_tensor *v = vec_of(T, 6, lg), *x = dfx__tensor_reshaped(v, 2, d), *in[2] = {x, kh_scalar_i32(600)}, *out;
  dfx_node *n = seeded("Multinomial", 6, 1);
  kh_attr_type(n, "T", T);
  kh_attr_type(n, "output_dtype", odt);
  cr_assert_eq(kh_run_step(n, in, 2, &out, NULL, &step, err, sizeof err), DFX_OK, "%s", err);
  dfx__tensor_unref(v);
  dfx__tensor_unref(x);
  dfx__tensor_unref(in[1]);
  kh_node_free(n);
  return out;
}

Test(types, multinomial_every_dtype_draws_the_same_classes) {
  dfx_tensor *base = multinomial(DFX_F64, DFX_I64);
  double z = 1 + exp(1) + exp(2);
  int c[3] = {0};
  for (int s = 0; s < 600; s++) c[((int64_t *)base->data)[s]]++;
  for (int k = 0; k < 3; k++) cr_expect(fabs(c[k] / 600.0 - exp(k) / z) < 0.06, "class %d: %d", k, c[k]);
  int runs = 0;
  FOR_DTYPES(T, declared("Multinomial", "T")) FOR_DTYPES(O, declared("Multinomial", "output_dtype")) {
      dfx_tensor *m = multinomial(T, O);
      cr_assert_eq(m->dtype, O);
      for (int64_t i = 0; i < m->count; i++)
        cr_assert_eq(dfx__tensor_get_i64(m, i), ((int64_t *)base->data)[i], "%s/%s", dfx_dtype_name(T),
                     dfx_dtype_name(O));
      dfx__tensor_unref(m);
      runs++;
    }
  cr_expect_eq(runs, 12 * 2);
  dfx__tensor_unref(base);
}

/* ---- TensorArrays and stacks: elements come back as they went in ---- */

static const char *const ta_elem_ops[][2] = {
    {"TensorArray", "dtype"}, {"TensorArrayWrite", "T"},  {"TensorArrayRead", "dtype"}, {"TensorArrayGather", "dtype"},
    {"TensorArrayScatter", "T"}, {"TensorArrayConcat", "dtype"}, {"TensorArraySplit", "T"}};

/* Runs TensorArray<kind><ver> with element dtype t on in[], one flow input added. */
static dfx_code taop(const char *kind, const char *ver, dfx_dtype t, dfx_tensor **in, int n_in, dfx_tensor **out) {
  char op[64];
  snprintf(op, sizeof op, "TensorArray%s%s", kind, ver);
  dfx_node *n = kh_node_new(op);
  for (size_t k = 0; k < sizeof ta_elem_ops / sizeof ta_elem_ops[0]; k++)
    if (strcmp(ta_elem_ops[k][0] + 11, kind) == 0) kh_attr_type(n, ta_elem_ops[k][1], t);
  if (!*kind) kh_attr_bool(n, "clear_after_read", 0);
  dfx_tensor *flow = kh_scalar_f32(0), *all[8];
  memcpy(all, in, sizeof *in * (size_t)n_in);
  all[n_in] = flow;
  dfx_code c = kh_run_step(n, all, n_in + (*kind ? 1 : 0), out, NULL, &step, err, sizeof err);
  if (c == DFX_OK && (!strcmp(kind, "Write") || !strcmp(kind, "Scatter") || !strcmp(kind, "Split")))
    dfx__tensor_unref(out[0]); /* the flow */
  dfx__tensor_unref(flow);
  kh_node_free(n);
  return c;
}

static dfx_tensor *ta_new(const char *ver, dfx_dtype t, int size) {
  dfx_tensor *sz = kh_scalar_i32(size), *out[2] = {NULL, NULL};
  cr_assert_eq(taop("", ver, t, &sz, 1, out), DFX_OK, "%s", err);
  dfx__tensor_unref(sz);
  dfx__tensor_unref(out[1]);
  return out[0];
}

Test(types, tensor_array_rows_declare_one_set) {
  uint64_t m = declared("TensorArrayV3", "dtype");
  for (size_t k = 0; k < sizeof ta_elem_ops / sizeof ta_elem_ops[0]; k++)
    for (int v = 2; v <= 3; v++) {
      char op[64];
      snprintf(op, sizeof op, "%sV%d", ta_elem_ops[k][0], v);
      cr_expect_eq(declared(op, ta_elem_ops[k][1]), m, "%s", op);
    }
}

Test(types, tensor_array_round_trips_every_declared_dtype) {
  int64_t d32[2] = {3, 2}, d3 = 3, d2 = 2, l[2] = {1, 2};
  int32_t perm[3] = {2, 0, 1}, ident[3] = {0, 1, 2};
  dfx_tensor *pi = kh_i32(1, &d3, perm), *ii = kh_i32(1, &d3, ident), *lens = kh_i64(1, &d2, l), *idx1 = kh_scalar_i32(1);
  int runs = 0;
  for (int v = 2; v <= 3; v++) {
    const char *ver = v == 2 ? "V2" : "V3";
    FOR_DTYPES(t, declared("TensorArrayV3", "dtype")) {
      dfx_tensor *x = mk_elems(t, 2, d32, 5), *h = ta_new(ver, t, 3), *o[2];
      dfx_tensor *in[3] = {h, pi, x};
      cr_assert_eq(taop("Scatter", ver, t, in, 3, o), DFX_OK, "%s %s", dfx_dtype_name(t), err);
      in[1] = idx1;
      cr_assert_eq(taop("Read", ver, t, in, 2, o), DFX_OK, "%s", err);
      cr_expect(o[0]->ndims == 1 && elems_eq(o[0], 0, x, 2 * 2, 2), "%s read", dfx_dtype_name(t)); /* slot 1 = row 2 */
      dfx__tensor_unref(o[0]);
      in[1] = ii;
      cr_assert_eq(taop("Gather", ver, t, in, 2, o), DFX_OK, "%s", err);
      for (int i = 0; i < 3; i++) cr_expect(elems_eq(o[0], 2 * i, x, 2 * ((i + 1) % 3), 2), "%s gather %d", dfx_dtype_name(t), i);
      dfx__tensor_unref(o[0]);
      cr_assert_eq(taop("Concat", ver, t, in, 1, o), DFX_OK, "%s", err);
      cr_expect(o[0]->count == 6 && elems_eq(o[0], 2, x, 4, 2), "%s concat", dfx_dtype_name(t));
      dfx__tensor_unref(o[0]);
      dfx__tensor_unref(o[1]);
      dfx__tensor_unref(h);
      /* Split, then Write over nothing (size 2 + dynamic is not needed: slot 1 is split's). */
      h = ta_new(ver, t, 2);
      dfx_tensor *sin[3] = {h, x, lens};
      cr_assert_eq(taop("Split", ver, t, sin, 3, o), DFX_OK, "%s %s", dfx_dtype_name(t), err);
      cr_assert_eq(taop("Concat", ver, t, sin, 1, o), DFX_OK, "%s", err);
      cr_expect(o[0]->count == 6 && elems_eq(o[0], 0, x, 0, 6), "%s split/concat", dfx_dtype_name(t));
      dfx__tensor_unref(o[0]);
      dfx__tensor_unref(o[1]);
      dfx__tensor_unref(h);
      h = ta_new(ver, t, 2);
      dfx_tensor *w = mk_elems(t, 0, NULL, 9), *win[3] = {h, idx1, w};
      cr_assert_eq(taop("Write", ver, t, win, 3, o), DFX_OK, "%s %s", dfx_dtype_name(t), err);
      cr_assert_eq(taop("Read", ver, t, win, 2, o), DFX_OK, "%s", err);
      cr_expect(elems_eq(o[0], 0, w, 0, 1), "%s write/read", dfx_dtype_name(t));
      dfx__tensor_unref(o[0]);
      dfx__tensor_unref(w);
      dfx__tensor_unref(h);
      dfx__tensor_unref(x);
      runs++;
    }
  }
  cr_expect_eq(runs, 2 * 21);
  dfx__tensor_unref(pi);
  dfx__tensor_unref(ii);
  dfx__tensor_unref(lens);
  dfx__tensor_unref(idx1);
}

static dfx_code stack_op(const char *op, const char *attr, dfx_dtype t, dfx_tensor **in, int n_in, dfx_tensor **out) {
  dfx_node *n = kh_node_new(op);
  if (attr) kh_attr_type(n, attr, t);
  dfx_code c = kh_run_step(n, in, n_in, out, NULL, &step, err, sizeof err);
  kh_node_free(n);
  return c;
}

Test(types, stacks_hold_every_declared_dtype) {
  static const char *const ops[2][4] = {{"StackV2", "StackPushV2", "StackPopV2", "StackCloseV2"},
                                        {"Stack", "StackPush", "StackPop", "StackClose"}};
  int runs = 0;
  for (int v = 0; v < 2; v++) {
    cr_expect_eq(declared(ops[v][1], "T"), declared(ops[v][0], "elem_type"));
    cr_expect_eq(declared(ops[v][2], "elem_type"), declared(ops[v][0], "elem_type"));
    FOR_DTYPES(t, declared(ops[v][0], "elem_type")) {
      int64_t d2 = 2;
      dfx_tensor *sz = kh_scalar_i32(-1), *h, *x = mk_elems(t, 1, &d2, 1), *y = mk_elems(t, 0, NULL, 2), *o;
      cr_assert_eq(stack_op(ops[v][0], "elem_type", t, &sz, v ? 0 : 1, &h), DFX_OK, "%s", err);
      dfx_tensor *in[2] = {h, x};
      cr_assert_eq(stack_op(ops[v][1], "T", t, in, 2, &o), DFX_OK, "%s %s", dfx_dtype_name(t), err);
      dfx__tensor_unref(o);
      in[1] = y;
      cr_assert_eq(stack_op(ops[v][1], "T", t, in, 2, &o), DFX_OK, "%s", err);
      dfx__tensor_unref(o);
      cr_assert_eq(stack_op(ops[v][2], "elem_type", t, &h, 1, &o), DFX_OK, "%s", err);
      cr_expect(o->ndims == 0 && elems_eq(o, 0, y, 0, 1), "%s pop 1", dfx_dtype_name(t));
      dfx__tensor_unref(o);
      cr_assert_eq(stack_op(ops[v][2], "elem_type", t, &h, 1, &o), DFX_OK, "%s", err);
      cr_expect(o->count == 2 && elems_eq(o, 0, x, 0, 2), "%s pop 2", dfx_dtype_name(t));
      dfx__tensor_unref(o);
      cr_expect_eq(stack_op(ops[v][3], NULL, t, &h, 1, NULL), DFX_OK, "%s", err);
      dfx__tensor_unref(sz);
      dfx__tensor_unref(h);
      dfx__tensor_unref(x);
      dfx__tensor_unref(y);
      runs++;
    }
  }
  cr_expect_eq(runs, 2 * 23);
}

/* ---- logging: values print as TF prints them ---- */

/* [1, 0] of dtype t, and how TF prints it. */
static dfx_tensor *one_zero(dfx_dtype t, const char **text) {
  int64_t d2 = 2;
  *text = "1 0";
  if (t == DFX_STRING) {
    const char *v[2] = {"1", "0"};
    return mk_str(1, &d2, v);
  }
  dfx_tensor *x = dfx__tensor_zeros(t, 1, &d2, NULL);
  unsigned char *p = x->data;
  switch (t) {
    case DFX_F32: ((float *)p)[0] = 1; break;
    case DFX_F64: ((double *)p)[0] = 1; break;
    case DFX_F16: ((uint16_t *)p)[0] = 0x3c00; break;
    case DFX_BF16: ((uint16_t *)p)[0] = 0x3f80; break;
    case DFX_C64: ((float *)p)[0] = 1, *text = "(1,0) (0,0)"; break;
    case DFX_C128: ((double *)p)[0] = 1, *text = "(1,0) (0,0)"; break;
    default: p[0] = 1; break; /* integers, bool and quantized: little-endian 1 */
  }
  return x;
}

Test(types, assert_prints_every_declared_dtype) {
  int runs = 0;
  FOR_DTYPES(t, declared("Assert", "T")) {
    const char *text;
    uint8_t no = 0;
    dfx_tensor *in[2] = {kh_bool(0, NULL, &no), one_zero(t, &text)};
    dfx_node *n = kh_node_new("Assert");
    kh_attr_types(n, "T", &t, 1);
    cr_expect_eq(kh_run_step(n, in, 2, NULL, NULL, &step, err, sizeof err), DFX_EINVAL);
    char want[64];
    snprintf(want, sizeof want, "assertion failed: [%s]", text);
    cr_expect_str_eq(err, want, "%s", dfx_dtype_name(t));
    dfx__tensor_unref(in[0]);
    dfx__tensor_unref(in[1]);
    kh_node_free(n);
    runs++;
  }
  cr_expect_eq(runs, 21);
}

Test(types, print_prints_every_declared_dtype_and_forwards_any) {
  char path[] = "/tmp/test_types_XXXXXX";
  int fd = mkstemp(path), saved = dup(2);
  cr_assert(fd >= 0 && saved >= 0);
  fflush(stderr);
  dup2(fd, 2);
  char want[4096] = "";
  FOR_DTYPES(u, declared("Print", "U")) {
    const char *text;
    dfx_tensor *in[2] = {kh_scalar_i32(7), one_zero(u, &text)}, *o;
    dfx_node *n = kh_node_new("Print");
    kh_attr_type(n, "T", DFX_I32);
    kh_attr_types(n, "U", &u, 1);
    kh_attr_str(n, "message", "m");
    cr_expect_eq(kh_run_step(n, in, 2, &o, NULL, &step, err, sizeof err), DFX_OK, "%s", err);
    dfx__tensor_unref(o);
    snprintf(want + strlen(want), sizeof want - strlen(want), "m[%s]\n", text);
    dfx__tensor_unref(in[0]);
    dfx__tensor_unref(in[1]);
    kh_node_free(n);
  }
  fflush(stderr);
  dup2(saved, 2);
  char got[4096] = "";
  ssize_t k = pread(fd, got, sizeof got - 1, 0);
  cr_assert(k > 0);
  got[k] = 0;
  cr_expect_str_eq(got, want);
  close(fd);
  close(saved);
  unlink(path);
  int runs = 0;
  FOR_DTYPES(t, declared("Print", "T")) {
    int64_t d2 = 2;
    dfx_tensor *x = mk_elems(t, 1, &d2, 0), *o;
    dfx_node *n = kh_node_new("Print");
    kh_attr_type(n, "T", t);
    kh_attr_types(n, "U", (dfx_dtype[]){DFX_I32}, 0);
    kh_attr_int(n, "first_n", 0);
    cr_assert_eq(kh_run_step(n, &x, 1, &o, NULL, &step, err, sizeof err), DFX_OK, "%s", err);
    cr_expect_eq(o, x, "%s is forwarded", dfx_dtype_name(t));
    dfx__tensor_unref(o);
    dfx__tensor_unref(x);
    kh_node_free(n);
    runs++;
  }
  cr_expect_eq(runs, 23);
}
