/* cudnn_rnn.c - CudnnRNN, CudnnRNNV2 and CudnnRNNV3 on the CPU: the
 * inference forward pass of cuDNN's stacked RNNs (lstm, gru, rnn_tanh,
 * rnn_relu; uni- or bidirectional; linear_input), from the canonical params
 * buffer: first every weight matrix, then every bias vector, each in
 * (layer, direction) order; per (layer, direction) the input matrices
 * W_g [units, in] for each gate g, then the recurrent R_g [units, units];
 * biases likewise b_W g then b_R g. Gate order is cuDNN's: LSTM i, f, c, o;
 * GRU r, z, h (with the recurrent bias inside the reset product). Layout:
 * input [time, batch, in] ([batch, time, in] for V3 time_major false),
 * states [layers * dirs, batch, units], output [.., dirs * units] with the
 * forward half first. V3's sequence_lengths stop each batch row early:
 * later outputs are zero and the backward direction starts at its last
 * valid step. Computed in double; the is_training outputs reserve_space
 * and host_reserved are empty (no dropout or backprop state here). */
#include <math.h>
#include <string.h>

#include "alloc.h"
#include "kernel.h"

enum { RNN_RELU, RNN_TANH, RNN_LSTM, RNN_GRU };

typedef struct rnn_cfg {
  int mode, gates, dirs;
  int64_t T, B, I, U, L;
  bool batch_major; /* V3 time_major false */
} rnn_cfg;

static double load(dfx_dtype t, const void *p, int64_t i) {
  switch (t) {
  case DFX_F64: return ((const double *)p)[i];
  case DFX_F16: return dfx__f16_to_f32(((const uint16_t *)p)[i]);
  case DFX_BF16: return dfx__bf16_to_f32(((const uint16_t *)p)[i]);
  default: return ((const float *)p)[i];
  }
}

static void store(dfx_dtype t, void *p, int64_t i, double v) {
  switch (t) {
  case DFX_F64: ((double *)p)[i] = v; break;
  case DFX_F16: ((uint16_t *)p)[i] = dfx__f32_to_f16((float)v); break;
  case DFX_BF16: ((uint16_t *)p)[i] = dfx__f32_to_bf16((float)v); break;
  default: ((float *)p)[i] = (float)v; break;
  }
}

static double sigm(double x) { return 1.0 / (1.0 + exp(-x)); }

/* Where the weights and biases of (layer l, direction d) start, in elements. */
static int64_t weights_before(const rnn_cfg *c, int64_t l, int d) {
  int64_t n = 0;
  for (int64_t k = 0; k < l * c->dirs + d; k++) {
    int64_t in = k / c->dirs == 0 ? c->I : c->dirs * c->U;
    n += c->gates * c->U * (in + c->U);
  }
  return n;
}

static int64_t params_total(const rnn_cfg *c) {
  return weights_before(c, c->L, 0) + c->L * c->dirs * 2 * c->gates * c->U;
}

/* One direction of one layer over the whole batch. xin: [T][B][in]
 * (time-major scratch), out: [T][B][dirs * U] into which this direction
 * writes its half; h, cst: [B][U] states, updated in place. */
static dfx_code run_dir(dfx_kctx *ctx, const rnn_cfg *c, const double *W, const double *R, const double *bW,
                        const double *bR, int64_t in, int d, const double *xin, double *out, double *h, double *cst,
                        const int32_t *lens, double *gx, double *gh) {
  int64_t G = c->gates, U = c->U;
  for (int64_t b = 0; b < c->B; b++) {
    int64_t len = lens ? lens[b] : c->T;
    for (int64_t s = 0; s < len; s++) {
      int64_t t = d == 0 ? s : len - 1 - s;
      const double *x = xin + (t * c->B + b) * in;
      double *hb = h + b * U, *cb = cst + b * U;
      for (int64_t g = 0; g < G; g++)
        for (int64_t u = 0; u < U; u++) {
          const double *wr = W + (g * U + u) * in, *rr = R + (g * U + u) * U;
          double ax = bW[g * U + u], ah = bR[g * U + u];
          for (int64_t k = 0; k < in; k++) ax += wr[k] * x[k];
          for (int64_t k = 0; k < U; k++) ah += rr[k] * hb[k];
          gx[g * U + u] = ax, gh[g * U + u] = ah;
        }
      for (int64_t u = 0; u < U; u++) {
        double nh;
        switch (c->mode) {
        case RNN_LSTM: {
          double ig = sigm(gx[u] + gh[u]), fg = sigm(gx[U + u] + gh[U + u]);
          double cg = tanh(gx[2 * U + u] + gh[2 * U + u]), og = sigm(gx[3 * U + u] + gh[3 * U + u]);
          cb[u] = fg * cb[u] + ig * cg;
          nh = og * tanh(cb[u]);
          break;
        }
        case RNN_GRU: {
          double r = sigm(gx[u] + gh[u]), z = sigm(gx[U + u] + gh[U + u]);
          double hh = tanh(gx[2 * U + u] + r * gh[2 * U + u]);
          nh = (1 - z) * hh + z * hb[u];
          break;
        }
        case RNN_TANH: nh = tanh(gx[u] + gh[u]); break;
        default: nh = fmax(0.0, gx[u] + gh[u]); break;
        }
        gx[u] = nh; /* gate u of every kind is read above before this write */
      }
      for (int64_t u = 0; u < U; u++) hb[u] = gx[u], out[(t * c->B + b) * c->dirs * U + d * U + u] = gx[u];
    }
    dfx_code code = dfx__kctx_poll(ctx);
    if (code != DFX_OK) return code;
  }
  return DFX_OK;
}

static dfx_code cudnn_rnn(dfx_kctx *ctx, int version) {
  const dfx_tensor *x = ctx->in[0], *h0 = ctx->in[1], *c0 = ctx->in[2], *p = ctx->in[3];
  const dfx_node *n = ctx->node;
  char sb[96];
  rnn_cfg c = {0};
  const char *mode = dfx__attr_str(n, "rnn_mode", "lstm");
  c.mode = !strcmp(mode, "lstm") ? RNN_LSTM : !strcmp(mode, "gru") ? RNN_GRU : !strcmp(mode, "rnn_tanh") ? RNN_TANH : RNN_RELU;
  c.gates = c.mode == RNN_LSTM ? 4 : c.mode == RNN_GRU ? 3 : 1;
  c.dirs = !strcmp(dfx__attr_str(n, "direction", "unidirectional"), "bidirectional") ? 2 : 1;
  if (strcmp(dfx__attr_str(n, "input_mode", "linear_input"), "linear_input") != 0)
    return dfx__kctx_fail(ctx, DFX_EUNIMPL, "only input_mode 'linear_input' is implemented, got '%s'",
                          dfx__attr_str(n, "input_mode", ""));
  if (dfx__attr_bool(n, "is_training", true) && dfx__attr_float(n, "dropout", 0) > 0)
    return dfx__kctx_fail(ctx, DFX_EUNIMPL, "dropout while training is not implemented (set is_training false)");
  if (version == 3 && dfx__attr_int(n, "num_proj", 0) != 0)
    return dfx__kctx_fail(ctx, DFX_EUNIMPL, "num_proj (LSTM projection) is not implemented");
  c.batch_major = version == 3 && !dfx__attr_bool(n, "time_major", true);
  if (x->ndims != 3) return dfx__kctx_fail(ctx, DFX_EINVAL, "RNN input must be a 3-D vector, got %s", DFX_SHAPE_STR(x, sb));
  if (h0->ndims != 3)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "RNN input_h must be a 3-D vector, got %s", DFX_SHAPE_STR(h0, sb));
  c.T = c.batch_major ? x->dims[1] : x->dims[0];
  c.B = c.batch_major ? x->dims[0] : x->dims[1];
  c.I = x->dims[2];
  c.U = h0->dims[2];
  if (h0->dims[0] % c.dirs != 0)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "input_h's first dimension (%lld) must be a multiple of the directions (%d)",
                          (long long)h0->dims[0], c.dirs);
  c.L = h0->dims[0] / c.dirs;
  if (c.L < 1) return dfx__kctx_fail(ctx, DFX_EINVAL, "input_h must hold at least one layer's states, got %s", DFX_SHAPE_STR(h0, sb));
  if (h0->dims[1] != c.B) return dfx__kctx_fail(ctx, DFX_EINVAL, "input_h and input must have the same batch size");
  if (c.mode == RNN_LSTM && !dfx__tensor_same_shape(h0, c0))
    return dfx__kctx_fail(ctx, DFX_EINVAL, "input_h and input_c must have the same shape");
  const int32_t *lens = NULL;
  if (version == 3) {
    const dfx_tensor *sl = ctx->in[4];
    if (sl->ndims != 1 || sl->dims[0] != c.B)
      return dfx__kctx_fail(ctx, DFX_EINVAL, "sequence_lengths must be a vector of %lld lengths, got %s",
                            (long long)c.B, DFX_SHAPE_STR(sl, sb));
    lens = sl->data;
    for (int64_t b = 0; b < c.B; b++)
      if (lens[b] < 0 || lens[b] > c.T)
        return dfx__kctx_fail(ctx, DFX_EINVAL, "sequence_lengths[%lld] = %d is outside [0, %lld]", (long long)b,
                              lens[b], (long long)c.T);
  }
  /* Sizes: every product below is bounded by a checked tensor's count
   * except the params' expected size and the layer scratch. */
  if (c.U > (1 << 20) || c.I > ((int64_t)1 << 30) || c.L > (1 << 16))
    return dfx__kctx_fail(ctx, DFX_ELIMIT, "RNN of %lld units, %lld inputs and %lld layers is too large", (long long)c.U,
                          (long long)c.I, (long long)c.L);
  int64_t want = params_total(&c);
  if (p->ndims != 1 || p->count != want)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "params must be a vector of %lld elements for this %s RNN, got %s", (long long)want,
                          mode, DFX_SHAPE_STR(p, sb));
  dfx_dtype t = x->dtype;
  int64_t od[3] = {c.batch_major ? c.B : c.T, c.batch_major ? c.T : c.B, c.dirs * c.U};
  dfx_tensor *out = dfx__kctx_alloc(ctx, 0, t, 3, od);
  dfx_tensor *oh = out ? dfx__kctx_alloc(ctx, 1, t, 3, h0->dims) : NULL;
  dfx_tensor *oc = NULL;
  if (oh) oc = c.mode == RNN_LSTM ? dfx__kctx_alloc(ctx, 2, t, 3, h0->dims) : dfx__kctx_alloc(ctx, 2, t, 0, NULL);
  const int64_t zero[1] = {0};
  dfx_tensor *rs = oc ? dfx__kctx_alloc(ctx, 3, t, 1, zero) : NULL;
  if (!rs || (ctx->n_out > 4 && !dfx__kctx_alloc(ctx, 4, DFX_I8, 1, zero))) return DFX_ENOMEM;
  if (c.mode != RNN_LSTM) store(t, oc->data, 0, 0);
  /* Scratch (double): the layer input and output sequences, params, states. */
  int64_t seq = c.T * c.B, wmax = c.dirs * c.U > c.I ? c.dirs * c.U : c.I;
  size_t n_in = dfx__mul_size((size_t)seq, (size_t)wmax), n_out = dfx__mul_size((size_t)seq, (size_t)(c.dirs * c.U));
  size_t bytes = dfx__mul_size(n_in + n_out + (size_t)want + 2 * (size_t)(c.B * c.U) + 2 * (size_t)(c.gates * c.U), 8);
  if (bytes > dfx__tensor_limit())
    return dfx__kctx_fail(ctx, DFX_ELIMIT, "RNN scratch of %zu bytes is too large", bytes);
  double *buf = dfx__malloc(bytes ? bytes : 8);
  if (!buf) return dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory for RNN scratch (%zu bytes)", bytes);
  double *xin = buf, *xout = xin + n_in, *par = xout + n_out, *h = par + want, *cs = h + c.B * c.U, *gx = cs + c.B * c.U,
         *gh = gx + c.gates * c.U;
  for (int64_t i = 0; i < want; i++) par[i] = load(t, p->data, i);
  for (int64_t tt = 0; tt < c.T; tt++)
    for (int64_t b = 0; b < c.B; b++)
      for (int64_t k = 0; k < c.I; k++)
        xin[(tt * c.B + b) * c.I + k] = load(t, x->data, (c.batch_major ? b * c.T + tt : tt * c.B + b) * c.I + k);
  int64_t bias0 = weights_before(&c, c.L, 0), in = c.I;
  dfx_code code = DFX_OK;
  for (int64_t l = 0; l < c.L && code == DFX_OK; l++) {
    memset(xout, 0, n_out * sizeof(double));
    for (int d = 0; d < c.dirs && code == DFX_OK; d++) {
      int64_t k = l * c.dirs + d, w = weights_before(&c, l, d);
      const double *W = par + w, *R = W + c.gates * c.U * in;
      const double *bW = par + bias0 + k * 2 * c.gates * c.U, *bR = bW + c.gates * c.U;
      for (int64_t i = 0; i < c.B * c.U; i++) {
        h[i] = load(t, h0->data, k * c.B * c.U + i);
        cs[i] = c.mode == RNN_LSTM ? load(t, c0->data, k * c.B * c.U + i) : 0;
      }
      code = run_dir(ctx, &c, W, R, bW, bR, in, d, xin, xout, h, cs, lens, gx, gh);
      for (int64_t i = 0; i < c.B * c.U; i++) {
        store(t, oh->data, k * c.B * c.U + i, h[i]);
        if (c.mode == RNN_LSTM) store(t, oc->data, k * c.B * c.U + i, cs[i]);
      }
    }
    in = c.dirs * c.U;
    memcpy(xin, xout, n_out * sizeof(double));
  }
  if (code == DFX_OK)
    for (int64_t tt = 0; tt < c.T; tt++)
      for (int64_t b = 0; b < c.B; b++)
        for (int64_t u = 0; u < c.dirs * c.U; u++)
          store(t, out->data, (c.batch_major ? b * c.T + tt : tt * c.B + b) * c.dirs * c.U + u,
                xin[(tt * c.B + b) * c.dirs * c.U + u]);
  dfx__free(buf);
  return code;
}

static dfx_code rnn_v1(dfx_kctx *ctx) { return cudnn_rnn(ctx, 1); }
static dfx_code rnn_v2(dfx_kctx *ctx) { return cudnn_rnn(ctx, 2); }
static dfx_code rnn_v3(dfx_kctx *ctx) { return cudnn_rnn(ctx, 3); }

#define RNN_T "T: {half, bfloat16, float, double}"

static const dfx_kernel_def kernels[] = {
    {"CudnnRNN", RNN_T, rnn_v1, 0, NULL, NULL},
    {"CudnnRNNV2", RNN_T, rnn_v2, 0, NULL, NULL},
    {"CudnnRNNV3", RNN_T, rnn_v3, 0, NULL, NULL},
    {NULL}};

void dfx__kernels_seq_cudnn_rnn(dfx_registry *r);
void dfx__kernels_seq_cudnn_rnn(dfx_registry *r) { dfx__kernels_add(r, kernels); }
