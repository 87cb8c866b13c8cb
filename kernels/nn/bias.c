/* bias.c - BiasAdd (NHWC/NCHW), BiasAddV1, L2Loss and LRN.
 * BiasAdd views the value as [outer, C, inner] with the channel dim C
 * (inner = 1 for NHWC); integers wrap like TF's T arithmetic. Rows of
 * that view are split over idle threads (dfx__kctx_parallel_for). */
#include <math.h>
#include <string.h>

#include "alloc.h"
#include "kdispatch.h"
#include "kernel.h"
#include "nn_util.h"

/* ---- BiasAdd ---- */

/* Rows [o0, o1) of the [outer, c, inner] view. */
#define DEF_BIAS(NM, T, ADD)                                                                     \
  static void bias_##NM(const T *x, const T *b, T *y, int64_t o0, int64_t o1, int64_t c, int64_t inner) { \
    x += o0 * c * inner;                                                                         \
    y += o0 * c * inner;                                                                         \
    if (inner == 1) {                                                                            \
      for (int64_t o = o0; o < o1; o++, x += c, y += c)                                          \
        for (int64_t j = 0; j < c; j++) y[j] = ADD(x[j], b[j]);                                  \
      return;                                                                                    \
    }                                                                                            \
    for (int64_t o = o0; o < o1; o++)                                                            \
      for (int64_t j = 0; j < c; j++, x += inner, y += inner) {                                  \
        T bj = b[j];                                                                             \
        for (int64_t i = 0; i < inner; i++) y[i] = ADD(x[i], bj);                                \
      }                                                                                          \
  }
#define ADD_F(a, b) ((a) + (b))
#define ADD_I(a, b) (__typeof__(a))((uint64_t)(a) + (uint64_t)(b))
#define ADD_H(a, b) dfx__f32_to_f16(dfx__f16_to_f32(a) + dfx__f16_to_f32(b))
#define ADD_B(a, b) dfx__f32_to_bf16(dfx__bf16_to_f32(a) + dfx__bf16_to_f32(b))
DEF_BIAS(float, float, ADD_F)
DEF_BIAS(double, double, ADD_F)
DEF_BIAS(f16, uint16_t, ADD_H)
DEF_BIAS(bf16, uint16_t, ADD_B)
#define BIAS_INT(DT, T) DEF_BIAS(T, T, ADD_I)
DFX_INT_TYPES(BIAS_INT)

typedef struct bias_job {
  dfx_dtype t;
  const void *x, *b;
  void *y;
  int64_t c, inner;
  dfx_kctx *ctx;
} bias_job;

/* Rows [lo, hi), in runs of about DFX_NN_POLL_WORK elements that stop once
 * the run is cancelled (the kernel polls after the join). */
static void bias_rows(void *arg, int64_t lo, int64_t hi) {
  const bias_job *j = arg;
  int64_t row = j->c * j->inner, step = row >= DFX_NN_POLL_WORK ? 1 : DFX_NN_POLL_WORK / row;
  for (int64_t o = lo; o < hi; o += step) {
    int64_t o1 = hi - o < step ? hi : o + step;
    switch (j->t) {
    case DFX_F32: bias_float(j->x, j->b, j->y, o, o1, j->c, j->inner); break;
    case DFX_F64: bias_double(j->x, j->b, j->y, o, o1, j->c, j->inner); break;
    case DFX_F16: bias_f16(j->x, j->b, j->y, o, o1, j->c, j->inner); break;
    case DFX_BF16: bias_bf16(j->x, j->b, j->y, o, o1, j->c, j->inner); break;
#define C(DT, T) \
  case DT: bias_##T(j->x, j->b, j->y, o, o1, j->c, j->inner); break;
      DFX_INT_TYPES(C)
#undef C
    default: return; /* the row's types string admits no other dtype */
    }
    if (dfx__kctx_cancelled(j->ctx)) return;
  }
}

static dfx_code bias_init(const dfx_node *n, void **state, dfx_status *st) {
  const char *f = dfx__attr_str(n, "data_format", "NHWC");
  if (strcmp(f, "NHWC") && strcmp(f, "NCHW"))
    return dfx__status_set(st, DFX_EINVAL, "Invalid data format: data_format = '%s' (NHWC or NCHW)", f);
  *state = (void *)(intptr_t)(strcmp(f, "NCHW") == 0);
  return DFX_OK;
}

static dfx_code bias_k(dfx_kctx *ctx) {
  const dfx_tensor *x = ctx->in[0], *b = ctx->in[1];
  bool nchw = (intptr_t)ctx->state != 0;
  char b1[96], b2[96];
  if (x->ndims < 2)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Input tensor must be at least 2D: %s", DFX_SHAPE_STR(x, b1));
  if (b->ndims != 1) return dfx__kctx_fail(ctx, DFX_EINVAL, "Biases must be 1D: %s", DFX_SHAPE_STR(b, b1));
  int cd = nchw ? 1 : x->ndims - 1;
  if (b->dims[0] != x->dims[cd])
    return dfx__kctx_fail(ctx, DFX_EINVAL,
                          "Must provide as many biases as the %s dimension of the input tensor: %s vs. %s",
                          nchw ? "channel" : "last", DFX_SHAPE_STR(b, b1), DFX_SHAPE_STR(x, b2));
  dfx_dtype t = (dfx_dtype)x->dtype;
  dfx_tensor *y = dfx__kctx_alloc(ctx, 0, t, x->ndims, x->dims);
  if (!y) return DFX_ENOMEM;
  if (y->count == 0) return DFX_OK; /* the other dims' product may overflow */
  int64_t outer = 1, inner = 1, c = x->dims[cd];
  for (int d = 0; d < cd; d++) outer *= x->dims[d];
  for (int d = cd + 1; d < x->ndims; d++) inner *= x->dims[d];
  bias_job j = {.t = t, .x = x->data, .b = b->data, .y = y->data, .c = c, .inner = inner, .ctx = ctx};
  /* Rows of the [outer, c, inner] view split over idle threads. */
  dfx__kctx_parallel_for(ctx, outer, &(dfx_par_cost){.unit_ns = 0.3 * (double)(c * inner)}, bias_rows, &j);
  return dfx__kctx_poll(ctx);
}

/* ---- L2Loss ---- */

static dfx_code l2loss_k(dfx_kctx *ctx) {
  const dfx_tensor *x = ctx->in[0];
  dfx_dtype t = (dfx_dtype)x->dtype;
  double s = 0;
  for (int64_t i0 = 0; i0 < x->count; i0 += DFX_NN_POLL_WORK) {
    int64_t i1 = x->count - i0 < DFX_NN_POLL_WORK ? x->count : i0 + DFX_NN_POLL_WORK;
    if (t == DFX_F32) {
      const float *p = x->data;
      for (int64_t i = i0; i < i1; i++) s += (double)p[i] * p[i];
    } else {
      for (int64_t i = i0; i < i1; i++) {
        double v = dfx__nn_load(x->data, t, i);
        s += v * v;
      }
    }
    dfx_code rc = dfx__kctx_poll(ctx);
    if (rc != DFX_OK) return rc;
  }
  dfx_tensor *y = dfx__kctx_alloc(ctx, 0, t, 0, NULL);
  if (!y) return DFX_ENOMEM;
  dfx__nn_store(y->data, t, 0, s / 2);
  return DFX_OK;
}

/* ---- LRN: x / (bias + alpha * sum_{|d'-d|<=r} x[d']^2)^beta over the depth dim ---- */

typedef struct lrn_attrs {
  int64_t r;
  double bias, alpha, beta;
} lrn_attrs;

/* TF's constructor check: depth_radius must fit an int (and be >= 0). */
static dfx_code lrn_init(const dfx_node *n, void **state, dfx_status *st) {
  int64_t r = dfx__attr_int(n, "depth_radius", 5);
  if (r < 0 || r > INT32_MAX)
    return dfx__status_set(st, DFX_EINVAL, "depth_radius = %lld must be in [0, %d]", (long long)r, INT32_MAX);
  lrn_attrs *a = dfx__malloc(sizeof *a);
  if (!a) return dfx__status_set(st, DFX_ENOMEM, "out of memory");
  *a = (lrn_attrs){r, dfx__attr_float(n, "bias", 1), dfx__attr_float(n, "alpha", 1), dfx__attr_float(n, "beta", 0.5f)};
  *state = a;
  return DFX_OK;
}

static void lrn_fini(void *state) { dfx__free(state); }

/* The window is clamped to the depth, so a huge depth_radius costs depth^2
 * per row at most (TF's band matrix does the same work). */
static dfx_code lrn_k(dfx_kctx *ctx) {
  const dfx_tensor *x = ctx->in[0];
  const lrn_attrs *a = ctx->state;
  char b1[96];
  if (x->ndims != 4)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "input must be 4-dimensional, got %s", DFX_SHAPE_STR(x, b1));
  dfx_dtype t = (dfx_dtype)x->dtype;
  dfx_tensor *y = dfx__kctx_alloc(ctx, 0, t, 4, x->dims);
  if (!y) return DFX_ENOMEM;
  int64_t depth = x->dims[3], rows = depth ? x->count / depth : 0, r = a->r, done = 0;
  for (int64_t row = 0; row < rows; row++) {
    int64_t base = row * depth;
    for (int64_t d = 0; d < depth; d++) {
      int64_t lo = d - r < 0 ? 0 : d - r, hi = d + r + 1 > depth ? depth : d + r + 1;
      double s = 0;
      for (int64_t e = lo; e < hi; e++) {
        double u = dfx__nn_load(x->data, t, base + e);
        s += u * u;
      }
      double v = dfx__nn_load(x->data, t, base + d);
      dfx__nn_store(y->data, t, base + d, v / pow(a->bias + a->alpha * s, a->beta));
    }
    int64_t w = r < depth ? 2 * r + 1 : depth;
    dfx_code rc = dfx__nn_progress(ctx, &done, depth * w);
    if (rc != DFX_OK) return rc;
  }
  return DFX_OK;
}

/* Real types; complex and quantized have no kernel. */
#define REAL_T "T: {" DFX_NN_FLOAT_T ", " DFX_NN_INT_T "}"

static const dfx_kernel_def kernels[] = {
    {"BiasAdd", REAL_T, bias_k, DFX_KERNEL_CHEAP, bias_init, NULL},
    {"BiasAddV1", REAL_T, bias_k, DFX_KERNEL_CHEAP, NULL, NULL},
    {"L2Loss", "T: {" DFX_NN_FLOAT_T "}", l2loss_k, DFX_KERNEL_CHEAP, NULL, NULL},
    {"LRN", "T: {half, bfloat16, float}", lrn_k, 0, lrn_init, lrn_fini},
    {NULL}};

void dfx__kernels_nn_bias(dfx_registry *r);
void dfx__kernels_nn_bias(dfx_registry *r) { dfx__kernels_add(r, kernels); }
