/* test_cudnn_rnn.c - CudnnRNN/V2/V3 against a naive per-step reference:
 * the params buffer is read front to back with a cursor (all weight
 * matrices per layer and direction, W gates then R gates, then all biases
 * in the same order), and each cell follows cuDNN's documented equations:
 *   LSTM  i,f,o = sigmoid(Wx + Rh + bW + bR), c~ = tanh(..), c = f c + i c~, h = o tanh(c)
 *   GRU   r,z = sigmoid(..), h~ = tanh(W_h x + bW_h + r (R_h h + bR_h)), h = (1 - z) h~ + z h
 *   RNN   h = tanh(..) or relu(..)
 * Every mode, both directions, 1-3 layers, V3 sequence lengths and
 * batch-major input, float/double/half/bfloat16, and TF's checks. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "kharness.h"

static char err[1024];

static void teardown(void) { dfx__tensor_cache_flush(); }
TestSuite(cudnn_rnn, .fini = teardown, .timeout = 120);

static uint64_t rng = 0xDEADBEEFCAFEF00Dull;
static double rnd(void) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return (double)(rng >> 11) / (double)(1ull << 53) * 2 - 1;
}

static const char *modes[] = {"lstm", "gru", "rnn_tanh", "rnn_relu"};
static int gates_of(const char *m) { return !strcmp(m, "lstm") ? 4 : !strcmp(m, "gru") ? 3 : 1; }

typedef struct {
  const char *mode;
  int dirs, L, T, B, I, U, version, batch_major;
  int lens[4];
} rcase;

static int64_t n_params(const rcase *k) {
  int G = gates_of(k->mode);
  int64_t n = 0;
  for (int l = 0; l < k->L; l++)
    for (int d = 0; d < k->dirs; d++) n += (int64_t)G * k->U * ((l ? k->dirs * k->U : k->I) + k->U) + 2 * G * k->U;
  return n;
}

static double sg(double x) { return 1 / (1 + exp(-x)); }

/* Reference forward pass; x [T][B][I] time-major; y [T][B][dirs U];
 * hN, cN [L dirs][B][U]. */
static void reference(const rcase *k, const double *x, const double *h0, const double *c0, const double *P, double *y,
                      double *hN, double *cN) {
  int G = gates_of(k->mode), U = k->U, D = k->dirs, T = k->T, B = k->B;
  double seq[8][4][64], nxt[8][4][64];
  for (int t = 0; t < T; t++)
    for (int b = 0; b < B; b++)
      for (int i = 0; i < k->I; i++) seq[t][b][i] = x[(t * B + b) * k->I + i];
  /* Weight cursor over the front, bias cursor over the back. */
  const double *wc = P;
  int64_t wtotal = 0;
  for (int l = 0; l < k->L; l++) wtotal += (int64_t)D * G * U * ((l ? D * U : k->I) + U);
  const double *bc = P + wtotal;
  int in = k->I;
  for (int l = 0; l < k->L; l++) {
    memset(nxt, 0, sizeof nxt);
    for (int d = 0; d < D; d++) {
      const double *W = wc, *R = wc + G * U * in;
      wc += G * U * (in + U);
      const double *bW = bc, *bR = bc + G * U;
      bc += 2 * G * U;
      int s = l * D + d;
      for (int b = 0; b < B; b++) {
        double h[64], c[64];
        for (int u = 0; u < U; u++) h[u] = h0[(s * B + b) * U + u], c[u] = c0 ? c0[(s * B + b) * U + u] : 0;
        int len = k->version == 3 ? k->lens[b] : T;
        for (int step = 0; step < len; step++) {
          int t = d ? len - 1 - step : step;
          double a[4][64], r[4][64], hn[64];
          for (int g = 0; g < G; g++)
            for (int u = 0; u < U; u++) {
              a[g][u] = bW[g * U + u], r[g][u] = bR[g * U + u];
              for (int i = 0; i < in; i++) a[g][u] += W[(g * U + u) * in + i] * seq[t][b][i];
              for (int j = 0; j < U; j++) r[g][u] += R[(g * U + u) * U + j] * h[j];
            }
          for (int u = 0; u < U; u++) {
            if (!strcmp(k->mode, "lstm")) {
              double ig = sg(a[0][u] + r[0][u]), fg = sg(a[1][u] + r[1][u]), cc = tanh(a[2][u] + r[2][u]),
                     og = sg(a[3][u] + r[3][u]);
              c[u] = fg * c[u] + ig * cc;
              hn[u] = og * tanh(c[u]);
            } else if (!strcmp(k->mode, "gru")) {
              double rg = sg(a[0][u] + r[0][u]), zg = sg(a[1][u] + r[1][u]);
              double hh = tanh(a[2][u] + rg * r[2][u]);
              hn[u] = (1 - zg) * hh + zg * h[u];
            } else if (!strcmp(k->mode, "rnn_tanh")) {
              hn[u] = tanh(a[0][u] + r[0][u]);
            } else {
              hn[u] = fmax(0, a[0][u] + r[0][u]);
            }
          }
          for (int u = 0; u < U; u++) h[u] = hn[u], nxt[t][b][d * U + u] = hn[u];
        }
        for (int u = 0; u < U; u++) hN[(s * B + b) * U + u] = h[u], cN[(s * B + b) * U + u] = c[u];
      }
    }
    in = D * U;
    memcpy(seq, nxt, sizeof seq);
  }
  for (int t = 0; t < T; t++)
    for (int b = 0; b < B; b++)
      for (int u = 0; u < D * U; u++) y[(t * B + b) * D * U + u] = seq[t][b][u];
}

static dfx_tensor *make(dfx_dtype t, int nd, const int64_t *d, const double *v) {
  dfx_tensor *x = dfx__tensor_alloc(t, nd, d, NULL);
  for (int64_t i = 0; i < x->count; i++) switch (t) {
    case DFX_F64: ((double *)x->data)[i] = v[i]; break;
    case DFX_F16: ((uint16_t *)x->data)[i] = dfx__f32_to_f16((float)v[i]); break;
    case DFX_BF16: ((uint16_t *)x->data)[i] = dfx__f32_to_bf16((float)v[i]); break;
    default: ((float *)x->data)[i] = (float)v[i]; break;
    }
  return x;
}

/* Values as the dtype holds them (so the reference sees what the kernel sees). */
static void quantise(dfx_dtype t, double *v, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    v[i] = t == DFX_F32 ? (float)v[i] : t == DFX_F16 ? dfx__f16_to_f32(dfx__f32_to_f16((float)v[i]))
         : t == DFX_BF16 ? dfx__bf16_to_f32(dfx__f32_to_bf16((float)v[i])) : v[i];
}

static void run_case(const rcase *k, dfx_dtype t) {
  int S = k->L * k->dirs, DU = k->dirs * k->U;
  int64_t np = n_params(k);
  static double x[4096], h0[4096], c0[4096], P[65536], y[8192], hN[4096], cN[4096];
  int64_t nx = (int64_t)k->T * k->B * k->I, nh = (int64_t)S * k->B * k->U;
  cr_assert(np <= 65536 && nx <= 4096 && nh <= 4096);
  for (int64_t i = 0; i < nx; i++) x[i] = rnd();
  for (int64_t i = 0; i < nh; i++) h0[i] = rnd() * 0.5, c0[i] = rnd() * 0.5;
  for (int64_t i = 0; i < np; i++) P[i] = rnd() * 0.6;
  quantise(t, x, nx), quantise(t, h0, nh), quantise(t, c0, nh), quantise(t, P, np);
  int lstm = !strcmp(k->mode, "lstm");
  reference(k, x, h0, lstm ? c0 : NULL, P, y, hN, cN);
  /* The kernel's input, batch-major when asked. */
  double xk[4096];
  for (int tt = 0; tt < k->T; tt++)
    for (int b = 0; b < k->B; b++)
      for (int i = 0; i < k->I; i++)
        xk[((k->batch_major ? b * k->T + tt : tt * k->B + b)) * k->I + i] = x[(tt * k->B + b) * k->I + i];
  int64_t xd[3] = {k->batch_major ? k->B : k->T, k->batch_major ? k->T : k->B, k->I}, hd[3] = {S, k->B, k->U},
          pd[1] = {np}, ld[1] = {k->B};
  dfx_tensor *in[5] = {make(t, 3, xd, xk), make(t, 3, hd, h0), make(t, 3, hd, c0), make(t, 1, pd, P),
                       kh_i32(1, ld, k->lens)};
  dfx_tensor *out[5] = {0};
  int no = 0;
  const char *op = k->version == 1 ? "CudnnRNN" : k->version == 2 ? "CudnnRNNV2" : "CudnnRNNV3";
  dfx_node *n = kh_node_new(op);
  kh_attr_type(n, "T", t);
  kh_attr_str(n, "rnn_mode", k->mode);
  kh_attr_str(n, "direction", k->dirs == 2 ? "bidirectional" : "unidirectional");
  kh_attr_bool(n, "is_training", 0);
  if (k->version == 3) kh_attr_bool(n, "time_major", !k->batch_major);
  cr_assert_eq(kh_run(n, in, k->version == 3 ? 5 : 4, out, &no, err, sizeof err), DFX_OK, "%s %s: %s", op, k->mode, err);
  double tol = t == DFX_F64 ? 1e-12 : t == DFX_F32 ? 1e-5 : t == DFX_F16 ? 4e-3 : 3e-2;
  cr_assert(out[0]->dims[2] == DU && out[1]->dims[0] == S);
  for (int tt = 0; tt < k->T; tt++)
    for (int b = 0; b < k->B; b++)
      for (int u = 0; u < DU; u++) {
        double got = dfx__tensor_get_f64(out[0], ((k->batch_major ? b * k->T + tt : tt * k->B + b)) * DU + u);
        double want = y[(tt * k->B + b) * DU + u];
        cr_expect(fabs(got - want) <= tol * fmax(1, fabs(want)), "%s %s dirs=%d L=%d v%d: output t%d b%d u%d %g vs %g",
                  dfx__dtype_tf_name(t), k->mode, k->dirs, k->L, k->version, tt, b, u, got, want);
      }
  for (int64_t i = 0; i < nh; i++) {
    cr_expect(fabs(dfx__tensor_get_f64(out[1], i) - hN[i]) <= tol * fmax(1, fabs(hN[i])), "output_h[%lld]", (long long)i);
    if (lstm)
      cr_expect(fabs(dfx__tensor_get_f64(out[2], i) - cN[i]) <= tol * fmax(1, fabs(cN[i])), "output_c[%lld]", (long long)i);
  }
  for (int i = 0; i < 5; i++) dfx__tensor_unref(in[i]);
  for (int i = 0; i < no; i++) dfx__tensor_unref(out[i]);
  kh_node_free(n);
}

Test(cudnn_rnn, every_mode_direction_and_depth) {
  for (int m = 0; m < 4; m++)
    for (int dirs = 1; dirs <= 2; dirs++)
      for (int L = 1; L <= 3; L += 2) {
        rcase k = {modes[m], dirs, L, 5, 3, 4, 3, 1 + (m + L) % 2, 0, {5, 5, 5}};
        run_case(&k, DFX_F64);
        run_case(&k, DFX_F32);
      }
}

Test(cudnn_rnn, v3_sequence_lengths_and_batch_major) {
  for (int m = 0; m < 4; m++)
    for (int dirs = 1; dirs <= 2; dirs++) {
      rcase k = {modes[m], dirs, 2, 6, 4, 3, 2, 3, 0, {6, 3, 0, 1}};
      run_case(&k, DFX_F64);
      k.batch_major = 1;
      run_case(&k, DFX_F32);
    }
}

Test(cudnn_rnn, half_types) {
  rcase k = {"lstm", 2, 1, 4, 2, 3, 3, 1, 0, {4, 4}};
  run_case(&k, DFX_F16);
  run_case(&k, DFX_BF16);
  rcase g = {"gru", 1, 2, 4, 2, 3, 3, 2, 0, {4, 4}};
  run_case(&g, DFX_F16);
}

Test(cudnn_rnn, empty_sequence) {
  rcase k = {"gru", 2, 1, 0, 2, 3, 2, 1, 0, {0, 0}};
  run_case(&k, DFX_F32);
}

static dfx_code bad(const char *mode, int64_t T, int64_t hlayers, int64_t hb, int64_t cl, int64_t np, const char *input_mode,
                    int v3_len) {
  const int64_t xd[3] = {T < 0 ? 4 : T, 2, 3}, hd[3] = {hlayers, hb, 2}, cd[3] = {cl, hb, 2}, pd[1] = {np}, ld[1] = {2};
  static const double z[4096] = {0};
  const int32_t lens[2] = {v3_len, 1};
  dfx_tensor *in[5] = {make(DFX_F32, T < 0 ? 2 : 3, xd, z), make(DFX_F32, 3, hd, z), make(DFX_F32, 3, cd, z),
                       make(DFX_F32, 1, pd, z), kh_i32(1, ld, lens)};
  dfx_tensor *out[5] = {0};
  int no = 0;
  dfx_node *n = kh_node_new(v3_len ? "CudnnRNNV3" : "CudnnRNN");
  kh_attr_type(n, "T", DFX_F32);
  kh_attr_str(n, "rnn_mode", mode);
  kh_attr_str(n, "input_mode", input_mode);
  dfx_code c = kh_run(n, in, v3_len ? 5 : 4, out, &no, err, sizeof err);
  for (int i = 0; i < 5; i++) dfx__tensor_unref(in[i]);
  for (int i = 0; i < no; i++) dfx__tensor_unref(out[i]);
  kh_node_free(n);
  return c;
}

Test(cudnn_rnn, errors) {
  /* LSTM, 1 layer, 3 inputs, 2 units: 4*2*(3+2) + 2*4*2 = 56 params. */
  cr_expect_eq(bad("lstm", 4, 1, 2, 1, 56, "linear_input", 0), DFX_OK, "%s", err);
  cr_expect_eq(bad("lstm", 4, 1, 2, 1, 55, "linear_input", 0), DFX_EINVAL);
  cr_expect(strstr(err, "params must be a vector of 56 elements"), "%s", err);
  cr_expect_eq(bad("lstm", -1, 1, 2, 1, 56, "linear_input", 0), DFX_EINVAL);
  cr_expect(strstr(err, "RNN input must be a 3-D vector"), "%s", err);
  cr_expect_eq(bad("lstm", 4, 1, 3, 1, 56, "linear_input", 0), DFX_EINVAL);
  cr_expect(strstr(err, "input_h and input must have the same batch size"), "%s", err);
  cr_expect_eq(bad("lstm", 4, 1, 2, 2, 56, "linear_input", 0), DFX_EINVAL);
  cr_expect(strstr(err, "input_h and input_c must have the same shape"), "%s", err);
  cr_expect_eq(bad("gru", 4, 1, 2, 2, 3 * 2 * 5 + 12, "linear_input", 0), DFX_OK, "input_c is unused by gru: %s", err);
  cr_expect_eq(bad("lstm", 4, 0, 2, 0, 0, "linear_input", 0), DFX_EINVAL);
  cr_expect(strstr(err, "at least one layer"), "%s", err);
  cr_expect_eq(bad("lstm", 4, 1, 2, 1, 56, "skip_input", 0), DFX_EUNIMPL);
  cr_expect(strstr(err, "linear_input"), "%s", err);
  cr_expect_eq(bad("lstm", 4, 1, 2, 1, 56, "linear_input", 9), DFX_EINVAL);
  cr_expect(strstr(err, "sequence_lengths[0] = 9"), "%s", err);
}

/* ---- CudnnRNNParamsSize and CudnnRNNCanonicalToParams ---- */

static dfx_node *shape_node(const char *op, const char *mode, int dirs) {
  dfx_node *n = kh_node_new(op);
  kh_attr_type(n, "T", DFX_F32);
  kh_attr_str(n, "rnn_mode", mode);
  kh_attr_str(n, "direction", dirs == 2 ? "bidirectional" : "unidirectional");
  return n;
}

Test(cudnn_rnn, params_size_matches_the_layout) {
  for (int m = 0; m < 4; m++)
    for (int dirs = 1; dirs <= 2; dirs++)
      for (int L = 1; L <= 3; L++) {
        rcase k = {modes[m], dirs, L, 1, 1, 5, 7, 1, 0, {0}};
        for (int s64 = 0; s64 < 2; s64++) {
          dfx_node *n = shape_node("CudnnRNNParamsSize", modes[m], dirs);
          kh_attr_type(n, "S", s64 ? DFX_I64 : DFX_I32);
          dfx_tensor *in[3] = {kh_scalar_i32(L), kh_scalar_i32(7), kh_scalar_i32(5)}, *out[1] = {0};
          int no = 0;
          cr_assert_eq(kh_run(n, in, 3, out, &no, err, sizeof err), DFX_OK, "%s", err);
          cr_expect(out[0]->ndims == 1 && out[0]->count == 1);
          cr_expect_eq(dfx__tensor_get_i64(out[0], 0), n_params(&k), "%s dirs=%d L=%d", modes[m], dirs, L);
          for (int i = 0; i < 3; i++) dfx__tensor_unref(in[i]);
          dfx__tensor_unref(out[0]);
          kh_node_free(n);
        }
      }
}

Test(cudnn_rnn, canonical_to_params_concatenates_weights_then_biases) {
  /* GRU, bidirectional, 2 layers, 3 units, 2 inputs: 24 matrices, 24 biases. */
  int L = 2, D = 2, U = 3, I = 2, G = 3, nm = L * D * 2 * G;
  dfx_tensor *in[3 + 48] = {kh_scalar_i32(L), kh_scalar_i32(U), kh_scalar_i32(I)};
  float next = 0;
  for (int k = 0; k < nm; k++) {
    int l = k / (D * 2 * G), m = k % (2 * G);
    int cols = m < G ? (l ? D * U : I) : U;
    int64_t d[2] = {U, cols};
    float v[64];
    for (int i = 0; i < U * cols; i++) v[i] = next++;
    in[3 + k] = kh_f32(2, d, v);
  }
  for (int k = 0; k < nm; k++) {
    int64_t d[1] = {U};
    float v[3];
    for (int i = 0; i < U; i++) v[i] = next++;
    in[3 + nm + k] = kh_f32(1, d, v);
  }
  for (int v2 = 0; v2 < 2; v2++) {
    dfx_node *n = shape_node(v2 ? "CudnnRNNCanonicalToParamsV2" : "CudnnRNNCanonicalToParams", "gru", D);
    if (v2) kh_attr_int(n, "num_params_weights", nm), kh_attr_int(n, "num_params_biases", nm);
    else kh_attr_int(n, "num_params", nm);
    dfx_tensor *out[1] = {0};
    int no = 0;
    cr_assert_eq(kh_run(n, in, 3 + 2 * nm, out, &no, err, sizeof err), DFX_OK, "%s", err);
    rcase k = {"gru", D, L, 1, 1, I, U, 1, 0, {0}};
    cr_assert_eq(out[0]->count, n_params(&k));
    cr_assert_eq(out[0]->count, (int64_t)next);
    for (int64_t i = 0; i < out[0]->count; i++) cr_expect_eq(((float *)out[0]->data)[i], (float)i, "element %lld", (long long)i);
    dfx__tensor_unref(out[0]);
    kh_node_free(n);
  }
  /* A wrongly sized matrix is refused. */
  dfx_tensor *keep = in[4];
  const int64_t bad_d[1] = {5};
  in[4] = kh_f32(1, bad_d, NULL);
  dfx_node *n = shape_node("CudnnRNNCanonicalToParams", "gru", D);
  kh_attr_int(n, "num_params", nm);
  dfx_tensor *out[1] = {0};
  int no = 0;
  cr_expect_eq(kh_run(n, in, 3 + 2 * nm, out, &no, err, sizeof err), DFX_EINVAL);
  cr_expect(strstr(err, "weights[1] has 5 elements, expected 6"), "%s", err);
  kh_node_free(n);
  dfx__tensor_unref(in[4]);
  in[4] = keep;
  for (int i = 0; i < 3 + 2 * nm; i++) dfx__tensor_unref(in[i]);
}

Test(cudnn_rnn, params_to_canonical_unpacks_in_order) {
  /* LSTM, bidirectional, 2 layers, 2 units, 3 inputs; params 0, 1, 2, ... */
  int L = 2, D = 2, U = 2, I = 3, G = 4, nm = L * D * 2 * G;
  rcase k = {"lstm", D, L, 1, 1, I, U, 1, 0, {0}};
  int64_t np = n_params(&k), pd[1] = {np};
  float p[512];
  cr_assert(np <= 512);
  for (int64_t i = 0; i < np; i++) p[i] = (float)i;
  for (int v2 = 0; v2 < 2; v2++) {
    dfx_node *n = shape_node(v2 ? "CudnnRNNParamsToCanonicalV2" : "CudnnRNNParamsToCanonical", "lstm", D);
    if (v2) kh_attr_int(n, "num_params_weights", nm), kh_attr_int(n, "num_params_biases", nm);
    else kh_attr_int(n, "num_params", nm);
    dfx_tensor *in[4] = {kh_scalar_i32(L), kh_scalar_i32(U), kh_scalar_i32(I), kh_f32(1, pd, p)}, *out[64] = {0};
    int no = 0;
    cr_assert_eq(kh_run(n, in, 4, out, &no, err, sizeof err), DFX_OK, "%s", err);
    cr_assert_eq(no, 2 * nm);
    float next = 0;
    for (int j = 0; j < 2 * nm; j++) {
      int l = j < nm ? j / (D * 2 * G) : 0, m = j % (2 * G);
      int cols = j < nm ? (m < G ? (l ? D * U : I) : U) : 0;
      if (j < nm) cr_expect(out[j]->ndims == 2 && out[j]->dims[0] == U && out[j]->dims[1] == cols, "weights[%d] shape", j);
      else cr_expect(out[j]->ndims == 1 && out[j]->dims[0] == U, "biases[%d] shape", j - nm);
      for (int64_t e = 0; e < out[j]->count; e++) cr_expect_eq(((float *)out[j]->data)[e], next++, "tensor %d elem %lld", j, (long long)e);
    }
    cr_expect_eq(next, (float)np);
    for (int i = 0; i < 4; i++) dfx__tensor_unref(in[i]);
    for (int i = 0; i < no; i++) dfx__tensor_unref(out[i]);
    kh_node_free(n);
  }
}
