/* test_rnn.c - LSTMBlockCell / BlockLSTM(V2) / GRUBlockCell against a naive
 * double-precision reference, gate layout checks and shape errors;
 * FakeQuant ops against TF's hand-computed cases. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "mtest.h"

static char err[2048];

static double sg(double x) { return 1 / (1 + exp(-x)); }

static dfx_tensor *ftensor(int nd, const int64_t *d, const float *v) { return kh_f32(nd, d, v); }

/* A tensor of dtype dt (float or half) holding v, which is first rounded to
 * dt in place so the reference sees the kernel's inputs. */
static dfx_tensor *dtensor(dfx_dtype dt, int nd, const int64_t *d, float *v) {
  if (dt == DFX_F32) return kh_f32(nd, d, v);
  dfx_tensor *t = kh_tensor(DFX_F16, nd, d, NULL);
  for (int64_t i = 0; i < t->count; i++) {
    ((uint16_t *)t->data)[i] = dfx__f32_to_f16(v[i]);
    v[i] = dfx__f16_to_f32(((uint16_t *)t->data)[i]);
  }
  return t;
}

/* Outputs round to dt once: half keeps 11 significant bits. */
static double tol_for(dfx_dtype dt, double v) { return dt == DFX_F32 ? 1e-5 : 1e-3 * fmax(1.0, fabs(v)); }

static void fill(float *v, int n, unsigned *seed) {
  for (int i = 0; i < n; i++) {
    *seed = *seed * 1103515245u + 12345u;
    v[i] = (float)((*seed >> 8) % 2001) / 1000.0f - 1.0f;
  }
}

/* Reference LSTM step (gate offsets oi, oc, of, oo). */
static void ref_lstm(int B, int NI, int C, const float *x, const float *csp, const float *hp, const float *w,
                     const float *wci, const float *wcf, const float *wco, const float *b, double fb, double clip,
                     int peep, int ifco, double out[7][64]) {
  int K = NI + C, oc = ifco ? 2 * C : C, of = ifco ? C : 2 * C, oo = 3 * C;
  for (int r = 0; r < B; r++)
    for (int j = 0; j < C; j++) {
      double g[4 * 16];
      for (int q = 0; q < 4 * C; q++) {
        double s = b[q];
        for (int k = 0; k < K; k++) s += (k < NI ? x[r * NI + k] : hp[r * C + k - NI]) * w[k * 4 * C + q];
        g[q] = s;
      }
      double cp = csp[r * C + j], ig = g[j], cig = g[oc + j], fg = g[of + j], og = g[oo + j];
      if (peep) {
        ig += cp * wci[j];
        fg += cp * wcf[j];
      }
      double i = sg(ig), f = sg(fg + fb), ci = tanh(cig), cs = ci * i + cp * f;
      if (clip > 0) cs = fmin(fmax(cs, -clip), clip);
      double o = sg(peep ? og + cs * wco[j] : og), co = tanh(cs);
      double v[7] = {i, cs, f, o, ci, co, co * o};
      for (int k = 0; k < 7; k++) out[k][r * C + j] = v[k];
    }
}

static void lstm_cell_case(dfx_dtype dt) {
  enum { B = 3, NI = 4, C = 5, K = NI + C };
  unsigned seed = 1;
  float x[B * NI], cs[B * C], h[B * C], w[K * 4 * C], wci[C], wcf[C], wco[C], b[4 * C];
  fill(x, B * NI, &seed), fill(cs, B * C, &seed), fill(h, B * C, &seed), fill(w, K * 4 * C, &seed);
  fill(wci, C, &seed), fill(wcf, C, &seed), fill(wco, C, &seed), fill(b, 4 * C, &seed);
  for (int i = 0; i < B * C; i++) cs[i] *= 3; /* so clipping matters */
  int64_t dx[2] = {B, NI}, dc[2] = {B, C}, dw[2] = {K, 4 * C}, dv = C, db = 4 * C;
  dfx_tensor *in[8] = {dtensor(dt, 2, dx, x), dtensor(dt, 2, dc, cs), dtensor(dt, 2, dc, h), dtensor(dt, 2, dw, w),
                       dtensor(dt, 1, &dv, wci), dtensor(dt, 1, &dv, wcf), dtensor(dt, 1, &dv, wco),
                       dtensor(dt, 1, &db, b)};
  struct { float fb, clip; int peep; } cfg[3] = {{1.0f, -1.0f, 0}, {0.5f, 0.3f, 1}, {0.0f, 3.0f, 1}};
  for (int k = 0; k < 3; k++) {
    dfx_node *n = kh_node_new("LSTMBlockCell");
    kh_attr_type(n, "T", dt);
    kh_attr_float(n, "forget_bias", cfg[k].fb);
    kh_attr_float(n, "cell_clip", cfg[k].clip);
    kh_attr_bool(n, "use_peephole", cfg[k].peep);
    dfx_tensor *out[7];
    int n_out;
    cr_assert_eq(kh_run(n, in, 8, out, &n_out, err, sizeof err), DFX_OK, "%s", err);
    cr_assert_eq(n_out, 7);
    double ref[7][64];
    ref_lstm(B, NI, C, x, cs, h, w, wci, wcf, wco, b, cfg[k].fb, cfg[k].clip, cfg[k].peep, 0, ref);
    for (int o = 0; o < 7; o++) {
      cr_expect_eq(out[o]->dtype, dt);
      cr_expect_eq(out[o]->dims[0], B);
      cr_expect_eq(out[o]->dims[1], C);
      for (int i = 0; i < B * C; i++) {
        double got = dfx__tensor_get_f64(out[o], i);
        cr_expect(fabs(got - ref[o][i]) < tol_for(dt, ref[o][i]), "%s cfg %d out %d [%d]: %g vs %g",
                  dfx_dtype_name(dt), k, o, i, got, ref[o][i]);
      }
      dfx__tensor_unref(out[o]);
    }
    kh_node_free(n);
  }
  for (int i = 0; i < 8; i++) dfx__tensor_unref(in[i]);
  dfx__tensor_cache_flush();
}

Test(rnn, lstm_block_cell_matches_reference) {
  cr_expect_eq(declared("LSTMBlockCell", "T"), (uint64_t)1 << DFX_F32 | (uint64_t)1 << DFX_F16);
  FOR_DTYPES(dt, declared("LSTMBlockCell", "T")) lstm_cell_case(dt);
}

Test(rnn, lstm_gate_layout_is_icfo) {
  /* Zero weights: each gate sees only its bias block. */
  int64_t dx[2] = {1, 1}, dc[2] = {1, 1}, dw[2] = {2, 4}, dv = 1, db = 4;
  float z[8] = {0}, one = 1, b[4] = {0.1f, 0.2f, 0.3f, 0.4f};
  dfx_tensor *in[8] = {ftensor(2, dx, z), ftensor(2, dc, &one), ftensor(2, dc, z), ftensor(2, dw, z),
                       ftensor(1, &dv, z), ftensor(1, &dv, z), ftensor(1, &dv, z), ftensor(1, &db, b)};
  dfx_node *n = kh_node_new("LSTMBlockCell");
  kh_attr_type(n, "T", DFX_F32);
  kh_attr_float(n, "forget_bias", 0);
  dfx_tensor *out[7];
  cr_assert_eq(kh_run(n, in, 8, out, NULL, err, sizeof err), DFX_OK, "%s", err);
  cr_expect_float_eq(((float *)out[0]->data)[0], (float)sg(0.1), 1e-6, "i from block 0");
  cr_expect_float_eq(((float *)out[4]->data)[0], (float)tanh(0.2), 1e-6, "ci from block 1");
  cr_expect_float_eq(((float *)out[2]->data)[0], (float)sg(0.3), 1e-6, "f from block 2");
  cr_expect_float_eq(((float *)out[3]->data)[0], (float)sg(0.4), 1e-6, "o from block 3");
  for (int i = 0; i < 7; i++) dfx__tensor_unref(out[i]);
  kh_node_free(n);
  for (int i = 0; i < 8; i++) dfx__tensor_unref(in[i]);
  dfx__tensor_cache_flush();
}

static void block_lstm_case(const char *op, int ifco, dfx_dtype dt) {
  enum { T = 4, B = 2, NI = 3, C = 2, K = NI + C };
  unsigned seed = 7;
  float x[T * B * NI], cs[B * C], h[B * C], w[K * 4 * C], wci[C], wcf[C], wco[C], b[4 * C];
  fill(x, T * B * NI, &seed), fill(cs, B * C, &seed), fill(h, B * C, &seed), fill(w, K * 4 * C, &seed);
  fill(wci, C, &seed), fill(wcf, C, &seed), fill(wco, C, &seed), fill(b, 4 * C, &seed);
  int64_t dx[3] = {T, B, NI}, dc[2] = {B, C}, dw[2] = {K, 4 * C}, dv = C, db = 4 * C, seqlen = 3;
  dfx_tensor *in[9] = {kh_i64(0, NULL, &seqlen), dtensor(dt, 3, dx, x), dtensor(dt, 2, dc, cs), dtensor(dt, 2, dc, h),
                       dtensor(dt, 2, dw, w), dtensor(dt, 1, &dv, wci), dtensor(dt, 1, &dv, wcf),
                       dtensor(dt, 1, &dv, wco), dtensor(dt, 1, &db, b)};
  dfx_node *n = kh_node_new(op);
  kh_attr_type(n, "T", dt);
  kh_attr_bool(n, "use_peephole", 1);
  kh_attr_float(n, "cell_clip", 0.5f);
  dfx_tensor *out[7];
  cr_assert_eq(kh_run(n, in, 9, out, NULL, err, sizeof err), DFX_OK, "%s", err);
  float csp[B * C], hp[B * C];
  memcpy(csp, cs, sizeof csp);
  memcpy(hp, h, sizeof hp);
  for (int t = 0; t < T; t++) {
    double ref[7][64];
    ref_lstm(B, NI, C, x + t * B * NI, csp, hp, w, wci, wcf, wco, b, ifco ? 0.0 : 1.0, 0.5, 1, ifco, ref);
    for (int o = 0; o < 7; o++)
      for (int i = 0; i < B * C; i++) {
        double want = t < 3 ? ref[o][i] : 0.0; /* zero beyond seq_len_max */
        double got = dfx__tensor_get_f64(out[o], t * B * C + i);
        cr_expect(fabs(got - want) < tol_for(dt, want), "%s %s t %d out %d: %g vs %g", op, dfx_dtype_name(dt), t, o,
                  got, want);
      }
    for (int i = 0; i < B * C; i++) {
      csp[i] = (float)ref[1][i];
      hp[i] = (float)ref[6][i];
    }
  }
  for (int i = 0; i < 7; i++) dfx__tensor_unref(out[i]);
  /* Shape errors. */
  dfx_tensor *bad = dtensor(dt, 2, dw, w);
  dfx__tensor_unref(in[8]);
  in[8] = bad;
  cr_expect_eq(kh_run(n, in, 9, out, NULL, err, sizeof err), DFX_EINVAL);
  cr_expect(strstr(err, "b must be 1D") || strstr(err, "b.dim_size(0) != cell_size * 4"), "%s", err);
  kh_node_free(n);
  for (int i = 0; i < 9; i++) dfx__tensor_unref(in[i]);
  dfx__tensor_cache_flush();
}

Test(rnn, block_lstm_matches_stepped_reference) {
  FOR_DTYPES(dt, declared("BlockLSTM", "T")) block_lstm_case("BlockLSTM", 0, dt);
}
Test(rnn, block_lstm_v2_uses_ifco_and_no_forget_bias) {
  FOR_DTYPES(dt, declared("BlockLSTMV2", "T")) block_lstm_case("BlockLSTMV2", 1, dt);
}

Test(rnn, lstm_shape_errors) {
  int64_t dx[2] = {2, 3}, dc[2] = {2, 4}, dw[2] = {6, 16}, dv = 4, db = 16;
  float z[128] = {0};
  dfx_tensor *in[8] = {ftensor(2, dx, z), ftensor(2, dc, z), ftensor(2, dc, z), ftensor(2, dw, z),
                       ftensor(1, &dv, z), ftensor(1, &dv, z), ftensor(1, &dv, z), ftensor(1, &db, z)};
  dfx_node *n = kh_node_new("LSTMBlockCell");
  kh_attr_type(n, "T", DFX_F32);
  dfx_tensor *out[7];
  cr_expect_eq(kh_run(n, in, 8, out, NULL, err, sizeof err), DFX_EINVAL);
  cr_expect(strstr(err, "w.dim_size(0) != input_size + cell_size: 6 vs. 7"), "%s", err);
  kh_node_free(n);
  for (int i = 0; i < 8; i++) dfx__tensor_unref(in[i]);
  dfx__tensor_cache_flush();
}

Test(rnn, gru_block_cell_matches_reference) {
  enum { B = 2, NI = 3, C = 4, K = NI + C };
  unsigned seed = 3;
  float x[B * NI], h[B * C], wru[K * 2 * C], wc[K * C], bru[2 * C], bc[C];
  fill(x, B * NI, &seed), fill(h, B * C, &seed), fill(wru, K * 2 * C, &seed), fill(wc, K * C, &seed);
  fill(bru, 2 * C, &seed), fill(bc, C, &seed);
  int64_t dx[2] = {B, NI}, dh[2] = {B, C}, dwru[2] = {K, 2 * C}, dwc[2] = {K, C}, dbru = 2 * C, dbc = C;
  dfx_tensor *in[6] = {ftensor(2, dx, x), ftensor(2, dh, h), ftensor(2, dwru, wru), ftensor(2, dwc, wc),
                       ftensor(1, &dbru, bru), ftensor(1, &dbc, bc)};
  cr_expect_eq(declared("GRUBlockCell", "T"), (uint64_t)1 << DFX_F32, "float only, as TF");
  dfx_node *n = kh_node_new("GRUBlockCell");
  kh_attr_type(n, "T", DFX_F32);
  dfx_tensor *out[4];
  int n_out;
  cr_assert_eq(kh_run(n, in, 6, out, &n_out, err, sizeof err), DFX_OK, "%s", err);
  cr_assert_eq(n_out, 4);
  for (int r = 0; r < B; r++) {
    double rr[C], uu[C], cc[C];
    for (int j = 0; j < C; j++) {
      double s1 = bru[j], s2 = bru[C + j];
      for (int k = 0; k < K; k++) {
        double v = k < NI ? x[r * NI + k] : h[r * C + k - NI];
        s1 += v * wru[k * 2 * C + j];
        s2 += v * wru[k * 2 * C + C + j];
      }
      rr[j] = sg(s1);
      uu[j] = sg(s2);
    }
    for (int j = 0; j < C; j++) {
      double s = bc[j];
      for (int k = 0; k < K; k++) s += (k < NI ? x[r * NI + k] : h[r * C + k - NI] * rr[k - NI]) * wc[k * C + j];
      cc[j] = tanh(s);
    }
    for (int j = 0; j < C; j++) {
      double hn = uu[j] * h[r * C + j] + (1 - uu[j]) * cc[j];
      double want[4] = {rr[j], uu[j], cc[j], hn};
      for (int o = 0; o < 4; o++)
        cr_expect(fabs(((float *)out[o]->data)[r * C + j] - want[o]) < 1e-5, "out %d", o);
    }
  }
  for (int i = 0; i < 4; i++) dfx__tensor_unref(out[i]);
  dfx__tensor_unref(in[3]);
  in[3] = ftensor(2, dwru, wru);
  cr_expect_eq(kh_run(n, in, 6, out, NULL, err, sizeof err), DFX_EINVAL);
  cr_expect(strstr(err, "w_c.dim_size(1) != cell_size"), "%s", err);
  kh_node_free(n);
  for (int i = 0; i < 6; i++) dfx__tensor_unref(in[i]);
  dfx__tensor_cache_flush();
}

/* ---- FakeQuant (TF's fake_quant_ops_test cases) ---- */

static void fq_args(float mn, float mx, int bits, int narrow, const float *x, const float *want) {
  dfx_node *n = kh_node_new("FakeQuantWithMinMaxArgs");
  kh_attr_float(n, "min", mn);
  kh_attr_float(n, "max", mx);
  kh_attr_int(n, "num_bits", bits);
  kh_attr_bool(n, "narrow_range", narrow);
  int64_t d = 6;
  dfx_tensor *in = kh_f32(1, &d, x), *out;
  cr_assert_eq(kh_run(n, &in, 1, &out, NULL, err, sizeof err), DFX_OK, "%s", err);
  for (int i = 0; i < 6; i++) cr_expect_float_eq(((float *)out->data)[i], want[i], 1e-5, "i=%d", i);
  dfx__tensor_unref(out);
  /* Vars with the same range. */
  kh_node_free(n);
  n = kh_node_new("FakeQuantWithMinMaxVars");
  kh_attr_int(n, "num_bits", bits);
  kh_attr_bool(n, "narrow_range", narrow);
  dfx_tensor *vin[3] = {in, kh_scalar_f32(mn), kh_scalar_f32(mx)};
  cr_assert_eq(kh_run(n, vin, 3, &out, NULL, err, sizeof err), DFX_OK, "%s", err);
  for (int i = 0; i < 6; i++) cr_expect_float_eq(((float *)out->data)[i], want[i], 1e-5, "vars i=%d", i);
  dfx__tensor_unref(out);
  dfx__tensor_unref(vin[1]);
  dfx__tensor_unref(vin[2]);
  kh_node_free(n);
  dfx__tensor_unref(in);
  dfx__tensor_cache_flush();
}

Test(fake_quant, tf_cases) {
  fq_args(-10.0f, 53.75f, 8, 0, (float[]){-10.1f, -10.0f, -9.9f, -9.75f, 53.75f, 53.8f},
          (float[]){-10.0f, -10.0f, -10.0f, -9.75f, 53.75f, 53.75f});
  fq_args(-0.1f, 63.65f, 8, 0, (float[]){-0.1f, 0.0f, 0.1f, 0.25f, 63.75f, 63.8f},
          (float[]){0.0f, 0.0f, 0.0f, 0.25f, 63.75f, 63.75f});
  fq_args(-0.125f, 63.625f, 8, 0, (float[]){-0.26f, -0.25f, -0.24f, 0.0f, 63.5f, 63.6f},
          (float[]){-0.25f, -0.25f, -0.25f, 0.0f, 63.5f, 63.5f});
  fq_args(-0.1f, 63.4f, 8, 1, (float[]){-0.1f, 0.0f, 0.1f, 0.25f, 63.5f, 63.6f},
          (float[]){0.0f, 0.0f, 0.0f, 0.25f, 63.5f, 63.5f});
  /* 4 bits: 0..15, min -0.1 max 7.4 -> scale 0.5, nudged [0, 7.5]. */
  fq_args(-0.1f, 7.4f, 4, 0, (float[]){-0.1f, 0.0f, 0.1f, 0.5f, 7.5f, 7.6f},
          (float[]){0.0f, 0.0f, 0.0f, 0.5f, 7.5f, 7.5f});
}

Test(fake_quant, errors_and_zero_range) {
  dfx_node *n = kh_node_new("FakeQuantWithMinMaxArgs");
  kh_attr_float(n, "min", 1.0f);
  kh_attr_float(n, "max", 1.0f);
  dfx_tensor *x = kh_scalar_f32(0.3f), *out;
  cr_expect_eq(kh_run(n, &x, 1, &out, NULL, err, sizeof err), DFX_EINVAL);
  cr_expect(strstr(err, "min has to be smaller than max"), "%s", err);
  kh_attr_float(n, "min", 0.0f);
  kh_attr_int(n, "num_bits", 17);
  cr_expect_eq(kh_run(n, &x, 1, &out, NULL, err, sizeof err), DFX_EINVAL);
  kh_node_free(n);
  n = kh_node_new("FakeQuantWithMinMaxVars");
  dfx_tensor *z = kh_scalar_f32(0), *in[3] = {x, z, z};
  cr_assert_eq(kh_run(n, in, 3, &out, NULL, err, sizeof err), DFX_OK, "%s", err);
  cr_expect_eq(((float *)out->data)[0], 0.0f, "min == max == 0 gives zeros");
  dfx__tensor_unref(out);
  kh_node_free(n);
  dfx__tensor_unref(z);
  dfx__tensor_unref(x);
  dfx__tensor_cache_flush();
}

Test(fake_quant, per_channel) {
  dfx_node *n = kh_node_new("FakeQuantWithMinMaxVarsPerChannel");
  int64_t d[2] = {3, 2}, dc = 2;
  float x[6] = {-10.1f, -0.1f, -9.75f, 0.1f, 53.8f, 63.8f}, mn[2] = {-10.0f, -0.1f}, mx[2] = {53.75f, 63.65f};
  float want[6] = {-10.0f, 0.0f, -9.75f, 0.0f, 53.75f, 63.75f};
  dfx_tensor *in[3] = {kh_f32(2, d, x), kh_f32(1, &dc, mn), kh_f32(1, &dc, mx)}, *out;
  cr_assert_eq(kh_run(n, in, 3, &out, NULL, err, sizeof err), DFX_OK, "%s", err);
  for (int i = 0; i < 6; i++) cr_expect_float_eq(((float *)out->data)[i], want[i], 1e-5, "i=%d", i);
  dfx__tensor_unref(out);
  dfx__tensor_unref(in[1]);
  int64_t d3 = 3;
  in[1] = kh_f32(1, &d3, x);
  cr_expect_eq(kh_run(n, in, 3, &out, NULL, err, sizeof err), DFX_EINVAL);
  cr_expect(strstr(err, "min has incorrect size, expected 2 was 3"), "%s", err);
  for (int i = 0; i < 3; i++) dfx__tensor_unref(in[i]);
  kh_node_free(n);
  dfx__tensor_cache_flush();
}
