/* rnn.c - fused RNN cells: LSTMBlockCell, BlockLSTM (ICFO gate layout),
 * BlockLSTMV2 (IFCO, no forget bias) and GRUBlockCell. Inputs are row-major
 * [batch, features] (BlockLSTM: [time, batch, features]); w is
 * [input + cell, gates * cell]. half inputs are computed in float. Shape
 * sums and products are checked before use (a zero-size input may carry any
 * other dim), and an empty batch or cell does no work at all. */
#include <cblas.h>
#include <limits.h>
#include <math.h>
#include <string.h>

#include "alloc.h"
#include "kernel.h"

/* Widens t to a new float array (NULL when out of memory). */
/* Everything is computed in float: half inputs are widened once up front
 * and the results rounded back in store(). */
static float *to_f32(const dfx_tensor *t) {
  float *p = dfx__malloc(sizeof(float) * (size_t)(t->count ? t->count : 1));
  if (!p) return NULL;
  for (int64_t i = 0; i < t->count; i++) p[i] = (float)dfx__tensor_get_f64(t, i);
  return p;
}

static void store(dfx_tensor *t, int64_t off, const float *v, int64_t n) {
  if (t->dtype == DFX_F32) {
    memcpy((float *)t->data + off, v, sizeof(float) * (size_t)n);
  } else {
    for (int64_t i = 0; i < n; i++) ((uint16_t *)t->data)[off + i] = dfx__f32_to_f16(v[i]);
  }
}

static inline float sigm(float x) { return 1.0f / (1.0f + expf(-x)); }

typedef struct lstm_args {
  int64_t batch, input, cell;
  float forget_bias, cell_clip;
  bool peephole, ifco;
} lstm_args;

/* One LSTM step. xh: [batch, input + cell] with h_prev already in place;
 * g: [batch, 4 * cell] scratch; outputs i, cs, f, o, ci, co, h each [batch, cell]. */
static void lstm_step(const lstm_args *a, const float *xh, const float *cs_prev, const float *w, const float *wci,
                      const float *wcf, const float *wco, const float *b, float *g, float *out[7]) {
  int64_t B = a->batch, C = a->cell, K = a->input + a->cell;
  /* gates = [x, h_prev] . w + b: the bias is laid into g first and sgemm
   * accumulates onto it (beta = 1). */
  for (int64_t r = 0; r < B; r++) memcpy(g + r * 4 * C, b, sizeof(float) * (size_t)(4 * C));
  if (B && C && K)
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)B, (int)(4 * C), (int)K, 1.0f, xh, (int)K, w,
                (int)(4 * C), 1.0f, g, (int)(4 * C));
  /* Offsets of i, ci, f, o in a gate row. */
  int64_t oi = 0, oc = a->ifco ? 2 * C : C, of = a->ifco ? C : 2 * C, oo = 3 * C;
  for (int64_t r = 0; r < B; r++) {
    const float *gr = g + r * 4 * C, *cp = cs_prev + r * C;
    for (int64_t j = 0; j < C; j++) {
      float ig = gr[oi + j], cig = gr[oc + j], fg = gr[of + j], og = gr[oo + j];
      if (a->peephole) {
        ig += cp[j] * wci[j];
        fg += cp[j] * wcf[j];
      }
      /* TF's LSTMBlockCell: cs = ci * i + cs_prev * f, clipped to +-cell_clip
       * when that is positive; the output peephole reads the new cs, the input
       * and forget ones the previous; h = tanh(cs) * o. The seven outputs are
       * TF's, in its order. */
      float i = sigm(ig), f = sigm(fg + a->forget_bias), ci = tanhf(cig);
      float cs = ci * i + cp[j] * f;
      if (a->cell_clip > 0) cs = cs > a->cell_clip ? a->cell_clip : cs < -a->cell_clip ? -a->cell_clip : cs;
      float o = sigm(a->peephole ? og + cs * wco[j] : og), co = tanhf(cs);
      int64_t k = r * C + j;
      out[0][k] = i;
      out[1][k] = cs;
      out[2][k] = f;
      out[3][k] = o;
      out[4][k] = ci;
      out[5][k] = co;
      out[6][k] = co * o;
    }
  }
}

/* K = input + cell and C4 = 4 * cell, failing ctx when either overflows or
 * exceeds what BLAS takes (int). Matching weights then bound both by data. */
static bool dims_overflow(dfx_kctx *ctx, int64_t input, int64_t cell, int64_t *K, int64_t *C4) {
  if (__builtin_add_overflow(input, cell, K) || __builtin_mul_overflow(cell, 4, C4) || *K > INT_MAX || *C4 > INT_MAX) {
    dfx__kctx_fail(ctx, DFX_EINVAL, "input_size %lld and cell_size %lld are too large", (long long)input,
                   (long long)cell);
    return true;
  }
  return false;
}

/* Validates cs_prev/h_prev/w/wci/wcf/wco/b (inputs base..base+6) against x. */
static dfx_code lstm_check(dfx_kctx *ctx, int base, int64_t batch, int64_t input, int64_t *cell) {
  const dfx_tensor *cs = ctx->in[base], *h = ctx->in[base + 1], *w = ctx->in[base + 2], *b = ctx->in[base + 6];
  if (cs->ndims != 2) return dfx__kctx_fail(ctx, DFX_EINVAL, "cs_prev must be 2D");
  int64_t C = cs->dims[1];
  if (cs->dims[0] != batch)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "cs_prev.dims(0) != batch_size: %lld vs. %lld", (long long)cs->dims[0],
                          (long long)batch);
  if (h->ndims != 2) return dfx__kctx_fail(ctx, DFX_EINVAL, "h_prev must be 2D");
  if (h->dims[0] != batch)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "h_prev.dims(0) != batch_size: %lld vs. %lld", (long long)h->dims[0],
                          (long long)batch);
  if (h->dims[1] != C)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "h_prev.dims(1) != cell_size: %lld vs. %lld", (long long)h->dims[1],
                          (long long)C);
  int64_t K, C4;
  if (dims_overflow(ctx, input, C, &K, &C4)) return ctx->st->code;
  if (w->ndims != 2) return dfx__kctx_fail(ctx, DFX_EINVAL, "w must be 2D");
  if (w->dims[0] != K)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "w.dim_size(0) != input_size + cell_size: %lld vs. %lld",
                          (long long)w->dims[0], (long long)K);
  if (w->dims[1] != C4)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "w.dim_size(1) != cell_size * 4: %lld vs. %lld", (long long)w->dims[1],
                          (long long)C4);
  if (b->ndims != 1) return dfx__kctx_fail(ctx, DFX_EINVAL, "b must be 1D");
  if (b->dims[0] != C4)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "b.dim_size(0) != cell_size * 4: %lld vs. %lld", (long long)b->dims[0],
                          (long long)C4);
  const char *pn[3] = {"wci", "wcf", "wco"};
  for (int k = 0; k < 3; k++) {
    const dfx_tensor *p = ctx->in[base + 3 + k];
    if (p->count < C && dfx__attr_bool(ctx->node, "use_peephole", false))
      return dfx__kctx_fail(ctx, DFX_EINVAL, "%s must have cell_size (%lld) elements", pn[k], (long long)C);
  }
  *cell = C;
  return DFX_OK;
}

/* Shared body: seq = false for LSTMBlockCell (x [B, NI]), true for BlockLSTM(V2). */
static dfx_code lstm_run(dfx_kctx *ctx, bool seq, bool v2) {
  int base = seq ? 2 : 1;
  const dfx_tensor *x = ctx->in[base - 1];
  int64_t T = 1, max_t = 1;
  if (seq) {
    if (x->ndims != 3) return dfx__kctx_fail(ctx, DFX_EINVAL, "x must be 3D");
    T = x->dims[0];
    if (ctx->in[0]->count != 1 || ctx->in[0]->ndims != 0)
      return dfx__kctx_fail(ctx, DFX_EINVAL, "seq_len_max must be a scalar");
    max_t = dfx__tensor_get_i64(ctx->in[0], 0);
    /* seq_len_max beyond the input's time steps is clamped, and a negative one
     * means no step at all. */
    if (max_t > T) max_t = T;
    if (max_t < 0) max_t = 0;
  } else if (x->ndims != 2) {
    return dfx__kctx_fail(ctx, DFX_EINVAL, "x must be 2D");
  }
  lstm_args a = {.batch = x->dims[seq], .input = x->dims[seq + 1]};
  dfx_code c = lstm_check(ctx, base, a.batch, a.input, &a.cell);
  if (c != DFX_OK) return c;
  a.forget_bias = v2 ? 0.0f : dfx__attr_float(ctx->node, "forget_bias", 1.0f);
  a.cell_clip = dfx__attr_float(ctx->node, "cell_clip", v2 ? 0.0f : 3.0f);
  a.peephole = dfx__attr_bool(ctx->node, "use_peephole", false);
  a.ifco = v2;
  int64_t B = a.batch, C = a.cell, NI = a.input, K = NI + C, BC = B * C;
  int64_t od[3] = {T, B, C};
  dfx_dtype dt = (dfx_dtype)x->dtype;
  dfx_tensor *outs[7];
  for (int k = 0; k < 7; k++) {
    outs[k] = seq ? dfx__kctx_alloc(ctx, k, dt, 3, od) : dfx__kctx_alloc(ctx, k, dt, 2, od + 1);
    if (!outs[k]) return ctx->st->code;
    /* Zeroed: time steps from seq_len_max on are left at zero, as in TF. */
    memset(outs[k]->data, 0, outs[k]->nbytes);
  }
  if (BC == 0) return DFX_OK; /* however long the sequence, nothing to compute */
  /* BLAS takes int dimensions; K and 4 * cell were checked in lstm_check. */
  if (B > INT_MAX) return dfx__kctx_fail(ctx, DFX_EINVAL, "batch size %lld is too large", (long long)B);
  float *xf = to_f32(x), *cs0 = to_f32(ctx->in[base]), *h0 = to_f32(ctx->in[base + 1]);
  float *w = to_f32(ctx->in[base + 2]), *wci = to_f32(ctx->in[base + 3]), *wcf = to_f32(ctx->in[base + 4]);
  float *wco = to_f32(ctx->in[base + 5]), *b = to_f32(ctx->in[base + 6]);
  float *xh = dfx__malloc(sizeof(float) * (size_t)(B * K + 1)), *g = dfx__malloc(sizeof(float) * (size_t)(4 * BC + 1));
  float *buf = dfx__malloc(sizeof(float) * (size_t)(7 * BC + 1)), *prev_cs = dfx__malloc(sizeof(float) * (size_t)(BC + 1));
  if (!xf || !cs0 || !h0 || !w || !wci || !wcf || !wco || !b || !xh || !g || !buf || !prev_cs) {
    c = dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory in LSTM");
  } else {
    float *o[7];
    for (int k = 0; k < 7; k++) o[k] = buf + k * BC;
    memcpy(prev_cs, cs0, sizeof(float) * (size_t)BC);
    /* Each row of xh is [x_t, h_(t-1)]: the h part is rewritten after every
     * step, the x part before it, so one matrix product serves each step. */
    for (int64_t r = 0; r < B; r++) memcpy(xh + r * K + NI, h0 + r * C, sizeof(float) * (size_t)C);
    for (int64_t t = 0; t < max_t && c == DFX_OK; t++) {
      if ((c = dfx__kctx_poll(ctx)) != DFX_OK) break;
      for (int64_t r = 0; r < B; r++) memcpy(xh + r * K, xf + (t * B + r) * NI, sizeof(float) * (size_t)NI);
      lstm_step(&a, xh, prev_cs, w, wci, wcf, wco, b, g, o);
      for (int k = 0; k < 7; k++) store(outs[k], t * BC, o[k], BC);
      memcpy(prev_cs, o[1], sizeof(float) * (size_t)BC);
      for (int64_t r = 0; r < B; r++) memcpy(xh + r * K + NI, o[6] + r * C, sizeof(float) * (size_t)C);
    }
  }
  float *fr[12] = {xf, cs0, h0, w, wci, wcf, wco, b, xh, g, buf, prev_cs};
  for (int k = 0; k < 12; k++) dfx__free(fr[k]);
  return c;
}

static dfx_code lstm_cell_kernel(dfx_kctx *ctx) { return lstm_run(ctx, false, false); }
static dfx_code block_lstm_kernel(dfx_kctx *ctx) { return lstm_run(ctx, true, false); }
static dfx_code block_lstm_v2_kernel(dfx_kctx *ctx) { return lstm_run(ctx, true, true); }

static dfx_code gru_kernel(dfx_kctx *ctx) {
  const dfx_tensor *x = ctx->in[0], *h = ctx->in[1], *wru = ctx->in[2], *wc = ctx->in[3], *bru = ctx->in[4],
                   *bc = ctx->in[5];
  if (x->ndims != 2) return dfx__kctx_fail(ctx, DFX_EINVAL, "x must be 2D");
  if (h->ndims != 2) return dfx__kctx_fail(ctx, DFX_EINVAL, "h_prev must be 2D");
  int64_t B = x->dims[0], NI = x->dims[1], C = h->dims[1], K, C4;
  if (dims_overflow(ctx, NI, C, &K, &C4)) return ctx->st->code;
  struct {
    const dfx_tensor *t;
    int dim;
    int64_t want;
    const char *msg;
  } chk[] = {{h, 0, B, "h_prev.dims(0) != batch_size"},  {wru, 0, K, "w_ru.dim_size(0) != input_size + cell_size"},
             {wru, 1, 2 * C, "w_ru.dim_size(1) != cell_size * 2"}, {wc, 0, K, "w_c.dim_size(0) != input_size + cell_size"},
             {wc, 1, C, "w_c.dim_size(1) != cell_size"},       {bru, 0, 2 * C, "b_ru.dim_size(0) != cell_size * 2"},
             {bc, 0, C, "b_c.dim_size(0) != cell_size"}};
  for (size_t k = 0; k < sizeof chk / sizeof chk[0]; k++) {
    int64_t have = chk[k].dim < chk[k].t->ndims ? chk[k].t->dims[chk[k].dim] : -1;
    if (have != chk[k].want || chk[k].t->ndims != (chk[k].t == bru || chk[k].t == bc ? 1 : 2))
      return dfx__kctx_fail(ctx, DFX_EINVAL, "%s: %lld vs. %lld", chk[k].msg, (long long)have, (long long)chk[k].want);
  }
  int64_t od[2] = {B, C};
  dfx_tensor *outs[4];
  for (int k = 0; k < 4; k++)
    if (!(outs[k] = dfx__kctx_alloc(ctx, k, (dfx_dtype)x->dtype, 2, od))) return ctx->st->code;
  if (B * C == 0) return DFX_OK;
  if (B > INT_MAX) return dfx__kctx_fail(ctx, DFX_EINVAL, "batch size %lld is too large", (long long)B);
  float *xf = to_f32(x), *hf = to_f32(h), *w1 = to_f32(wru), *w2 = to_f32(wc), *b1 = to_f32(bru), *b2 = to_f32(bc);
  float *xh = dfx__malloc(sizeof(float) * (size_t)(B * K + 1)), *ru = dfx__malloc(sizeof(float) * (size_t)(2 * B * C + 1));
  float *o = dfx__malloc(sizeof(float) * (size_t)(4 * B * C + 1));
  dfx_code c = DFX_OK;
  if (!xf || !hf || !w1 || !w2 || !b1 || !b2 || !xh || !ru || !o) {
    c = dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory in GRUBlockCell");
  } else {
    float *r = o, *u = o + B * C, *cc = o + 2 * B * C, *hn = o + 3 * B * C;
    /* TF's GRUBlockCell: r, u = sigmoid([x, h] . w_ru + b_ru), then
     * c = tanh([x, r * h] . w_c + b_c) and h_new = u * h + (1 - u) * c. */
    for (int64_t i = 0; i < B; i++) {
      memcpy(xh + i * K, xf + i * NI, sizeof(float) * (size_t)NI);
      memcpy(xh + i * K + NI, hf + i * C, sizeof(float) * (size_t)C);
      memcpy(ru + i * 2 * C, b1, sizeof(float) * (size_t)(2 * C));
    }
    if (B && C && K)
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)B, (int)(2 * C), (int)K, 1.0f, xh, (int)K, w1,
                  (int)(2 * C), 1.0f, ru, (int)(2 * C));
    for (int64_t i = 0; i < B; i++)
      for (int64_t j = 0; j < C; j++) {
        r[i * C + j] = sigm(ru[i * 2 * C + j]);
        u[i * C + j] = sigm(ru[i * 2 * C + C + j]);
        xh[i * K + NI + j] = hf[i * C + j] * r[i * C + j];
        cc[i * C + j] = b2[j];
      }
    if (B && C && K)
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)B, (int)C, (int)K, 1.0f, xh, (int)K, w2, (int)C,
                  1.0f, cc, (int)C);
    for (int64_t k = 0; k < B * C; k++) {
      cc[k] = tanhf(cc[k]);
      hn[k] = u[k] * hf[k] + (1 - u[k]) * cc[k];
    }
    for (int k = 0; k < 4; k++) store(outs[k], 0, o + k * B * C, B * C);
  }
  float *fr[9] = {xf, hf, w1, w2, b1, b2, xh, ru, o};
  for (int k = 0; k < 9; k++) dfx__free(fr[k]);
  return c;
}

#define LSTM_TYPES "T: {half, float}"

static const dfx_kernel_def kernels[] = {
    /* Not cheap: each step is a BLAS product, so the policy may send it to the
     * pool (exec/policy.h). */
    {"LSTMBlockCell", LSTM_TYPES, lstm_cell_kernel, 0, NULL, NULL},
    {"BlockLSTM", LSTM_TYPES, block_lstm_kernel, 0, NULL, NULL},
    {"BlockLSTMV2", LSTM_TYPES, block_lstm_v2_kernel, 0, NULL, NULL},
    {"GRUBlockCell", "T: {float}", gru_kernel, 0, NULL, NULL},
    {NULL}};

void dfx__kernels_misc_rnn(dfx_registry *r);
void dfx__kernels_misc_rnn(dfx_registry *r) { dfx__kernels_add(r, kernels); }
