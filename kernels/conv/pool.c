/* pool.c - MaxPool, MaxPoolV2, AvgPool, MaxPool3D, AvgPool3D,
 * MaxPoolWithArgmax and Dilation2D. Pools run as 3-D windows over a
 * channels-last layout (2-D ops have a depth of 1); channels-first inputs are
 * moved to channels-last and back. Each window is clamped to the input before
 * it is walked, so the work is bounded by the input and output sizes however
 * large ksize is. Max pooling compares in the element type (halves through
 * float, which is exact; qint8 as int8); averages are taken in double and
 * divide by the number of in-bounds elements of each window. */
#include <float.h>

#include "convutil.h"

typedef struct pparams {
  int nd, clast;
  int64_t N, C, in[3], k[3], stride[3], out[3], padb[3], rate[3];
} pparams;

/* ---- attrs ---- */

/* Pool windows span space only: TF refuses the batch dim, and pooling over
 * depth (a TF CPU special case) is not implemented here. */
static dfx_code check_pool_window(const cu_spec *s, dfx_status *st) {
  int r = s->nd + 2, c = s->clast ? r - 1 : 1;
  char b1[160], b2[160];
  const char *ks = dfx__shape_str(r, s->ks, b1, sizeof b1), *ss = dfx__shape_str(r, s->st, b2, sizeof b2);
  if (s->ks[0] != 1 || s->st[0] != 1)
    return dfx__status_set(st, DFX_EINVAL, "ksize = %s, strides = %s: pooling is not supported on the batch dimension",
                           ks, ss);
  if (s->ks[c] != 1 || s->st[c] != 1)
    return dfx__status_set(st, DFX_EUNIMPL,
                           "ksize = %s, strides = %s: pooling over the depth dimension is not supported", ks, ss);
  return DFX_OK;
}

/* MaxPool, AvgPool, MaxPool3D, AvgPool3D, MaxPoolWithArgmax, Dilation2D and
 * MaxPoolV2 (whose ksize and strides are inputs, checked per run). */
static dfx_code pool_init(const dfx_node *n, void **state, dfx_status *st) {
  cu_spec s = {.nd = strstr(n->op, "3D") ? 3 : 2};
  int r = s.nd + 2, dil = !strcmp(n->op, "Dilation2D"), v2 = !strcmp(n->op, "MaxPoolV2");
  dfx_code c;
  if ((c = cu_format_attr(n, s.nd, &s.clast, st)) || (c = cu_padding_attr(n, &s, st))) return c;
  for (int i = 0; i < r; i++) s.ks[i] = s.dl[i] = 1;
  if (dil) {
    if ((c = cu_window_attr(n, "strides", r, s.st, st)) || (c = cu_window_attr(n, "rates", r, s.dl, st)) ||
        (c = cu_unit_bc("strides", s.st, r, 1, "strides in the batch and depth dimensions must be 1", st)) ||
        (c = cu_unit_bc("rates", s.dl, r, 1, "rates in the batch and depth dimensions must be 1", st)))
      return c;
  } else if (!v2) {
    if ((c = cu_window_attr(n, "ksize", r, s.ks, st)) || (c = cu_window_attr(n, "strides", r, s.st, st)) ||
        (c = check_pool_window(&s, st)))
      return c;
  }
  if (s.pad == PAD_EXPLICIT)
    for (int i = 0; i < 2 * r && !v2; i++)
      if (s.ep[i] >= s.ks[i / 2])
        return dfx__status_set(st, DFX_EINVAL, "explicit_paddings[%d] = %lld must be smaller than ksize[%d] = %lld", i,
                               (long long)s.ep[i], i / 2, (long long)s.ks[i / 2]);
  return cu_spec_state(&s, state, st);
}

/* Window geometry from the node's spec and input x (ks: the window for
 * Dilation2D, whose filter gives it). */
static dfx_code setup(dfx_kctx *ctx, pparams *p, const cu_spec *s, const dfx_tensor *x) {
  int nd = s->nd, r = nd + 2;
  memset(p, 0, sizeof *p);
  p->nd = nd;
  p->clast = s->clast;
  int cax = p->clast ? r - 1 : 1, sp0 = p->clast ? 1 : 2;
  if (x->ndims != r) {
    char b[96];
    return dfx__kctx_fail(ctx, DFX_EINVAL, "input must be %d-dimensional, got %s", r, DFX_SHAPE_STR(x, b));
  }
  p->N = x->dims[0];
  p->C = x->dims[cax];
  int off = 3 - nd;
  for (int i = 0; i < 3; i++) p->in[i] = p->k[i] = p->stride[i] = p->rate[i] = p->out[i] = 1;
  for (int i = 0; i < nd; i++) {
    p->in[off + i] = x->dims[sp0 + i];
    p->k[off + i] = s->ks[sp0 + i];
    p->stride[off + i] = s->st[sp0 + i];
    p->rate[off + i] = s->dl[sp0 + i];
  }
  for (int i = off; i < 3; i++) {
    int d = sp0 + i - off;
    dfx_code c = cu_window(ctx, p->in[i], p->k[i], p->rate[i], p->stride[i], s->pad, s->ep[2 * d], s->ep[2 * d + 1],
                           &p->out[i], &p->padb[i]);
    if (c != DFX_OK) return c;
  }
  return DFX_OK;
}

static void out_dims(const pparams *p, int64_t *d) {
  int r = p->nd + 2, off = 3 - p->nd;
  d[0] = p->N;
  d[p->clast ? r - 1 : 1] = p->C;
  for (int i = 0; i < p->nd; i++) d[(p->clast ? 1 : 2) + i] = p->out[off + i];
}

/* ---- window walks ---- */

/* The in-bounds taps of output position o along dim d: input index
 * base + a * rate for a in [lo, hi) (empty when lo >= hi). */
typedef struct wrange {
  int64_t base, lo, hi;
} wrange;

static inline wrange win_range(const pparams *p, int d, int64_t o) {
  int64_t b = o * p->stride[d] - p->padb[d], r = p->rate[d], in = p->in[d], h;
  wrange w = {b, 0, 0};
  if (r == 1) { /* pools: no division */
    w.lo = b >= 0 ? 0 : -b;
    h = in - b;
  } else {
    w.lo = b >= 0 ? 0 : -b / r + (-b % r != 0);
    h = b >= in ? 0 : (in - 1 - b) / r + 1;
  }
  w.hi = h < p->k[d] ? h : p->k[d];
  return w;
}

static inline int64_t win_len(wrange w) { return w.hi > w.lo ? w.hi - w.lo : 0; }

/* Iterates output rows: n_, o0..o2, yrow (offset of the row's C elements) and
 * the window ranges w0..w2; polls about every CU_POLL_WORK elements read. */
#define FOR_OUT(ctx, p, BODY)                                                                             \
  int64_t work_ = 0;                                                                                      \
  for (int64_t n_ = 0; n_ < (p)->N; n_++)                                                                 \
    for (int64_t o0 = 0; o0 < (p)->out[0]; o0++) {                                                        \
      wrange w0 = win_range(p, 0, o0);                                                                    \
      for (int64_t o1 = 0; o1 < (p)->out[1]; o1++) {                                                      \
        wrange w1 = win_range(p, 1, o1);                                                                  \
        for (int64_t o2 = 0; o2 < (p)->out[2]; o2++) {                                                    \
          wrange w2 = win_range(p, 2, o2);                                                                \
          int64_t yrow = (((n_ * (p)->out[0] + o0) * (p)->out[1] + o1) * (p)->out[2] + o2) * (p)->C;      \
          int64_t taps = win_len(w0) * win_len(w1) * win_len(w2);                                         \
          dfx_code pc_ = cu_tick(ctx, &work_, (taps + 1) * (p)->C);                                       \
          if (pc_ != DFX_OK) return pc_;                                                                  \
          BODY                                                                                            \
        }                                                                                                 \
      }                                                                                                   \
    }
/* Iterates the in-bounds window elements of the current output row: xrow is
 * the input row; a, b, c_ the tap in the window. */
#define FOR_WIN(p, BODY)                                                                                  \
  for (int64_t a = w0.lo; a < w0.hi; a++) {                                                               \
    int64_t i0 = w0.base + a * (p)->rate[0];                                                              \
    for (int64_t b = w1.lo; b < w1.hi; b++) {                                                             \
      int64_t i1 = w1.base + b * (p)->rate[1];                                                            \
      for (int64_t c_ = w2.lo; c_ < w2.hi; c_++) {                                                        \
        int64_t i2 = w2.base + c_ * (p)->rate[2];                                                         \
        int64_t xrow = (((n_ * (p)->in[0] + i0) * (p)->in[1] + i1) * (p)->in[2] + i2) * (p)->C;           \
        BODY                                                                                              \
      }                                                                                                   \
    }                                                                                                     \
  }

/* y[c] = max(y[c], x[c]) over a row of channels, as `x > y ? x : y` (a NaN
 * in x never wins, as in the loops below). float (max_row_f32, picked by
 * _Generic in DEFINE_MAX): 16-wide, branch-free, compiled for AVX-512F,
 * AVX2 and the baseline, chosen at load. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__has_attribute)
/* Not under TSan: its runtime is not up when the loader runs ifunc resolvers. */
#if __has_attribute(target_clones) && !defined(__SANITIZE_THREAD__)
#define POOL_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#endif
#endif
#ifndef POOL_CLONES
#define POOL_CLONES
#endif
typedef float pool_v16 __attribute__((vector_size(64)));
typedef int32_t pool_m16 __attribute__((vector_size(64)));

POOL_CLONES static void max_row_f32(float *y, const float *x, int64_t C) {
  int64_t c = 0;
  for (; c + 16 <= C; c += 16) {
    pool_v16 xv, yv;
    memcpy(&xv, x + c, sizeof xv);
    memcpy(&yv, y + c, sizeof yv);
    pool_m16 m = xv > yv;
    yv = (pool_v16)(((pool_m16)xv & m) | ((pool_m16)yv & ~m));
    memcpy(y + c, &yv, sizeof yv);
  }
  for (; c < C; c++) y[c] = x[c] > y[c] ? x[c] : y[c];
}
#define DEFINE_MAX_ROW(T)                                                    \
  static inline void max_row_##T(T *y, const T *x, int64_t C) {              \
    for (int64_t c = 0; c < C; c++) y[c] = x[c] > y[c] ? x[c] : y[c];        \
  }

/* Max pooling (and Dilation2D when f != NULL: max of x + f[window, c]; its
 * window is the filter's, so the tap's offset fits), starting from `init`.
 * arg: optional flat input index of each maximum (first one wins). One loop
 * per case keeps the plain one branch-free (vectorised). */
#define DEFINE_MAX(T)                                                                                     \
  static dfx_code maxpool_##T(dfx_kctx *ctx, const pparams *p, const T *x, const T *f, T *y, int64_t *arg, \
                              T init) {                                                                   \
    FOR_OUT(ctx, p, {                                                                                     \
      for (int64_t c = 0; c < p->C; c++) {                                                                \
        y[yrow + c] = init;                                                                               \
        if (arg) arg[yrow + c] = -1;                                                                      \
      }                                                                                                   \
      FOR_WIN(p, {                                                                                        \
        const T *xr = x + xrow;                                                                           \
        T *yr = y + yrow;                                                                                 \
        if (arg) {                                                                                        \
          for (int64_t c = 0; c < p->C; c++)                                                              \
            if (arg[yrow + c] < 0 || xr[c] > yr[c]) {                                                     \
              yr[c] = xr[c];                                                                              \
              arg[yrow + c] = xrow + c;                                                                   \
            }                                                                                             \
        } else if (f) {                                                                                   \
          const T *fr = f + ((a * p->k[1] + b) * p->k[2] + c_) * p->C;                                    \
          for (int64_t c = 0; c < p->C; c++) {                                                            \
            T v = (T)(xr[c] + fr[c]);                                                                     \
            yr[c] = v > yr[c] ? v : yr[c];                                                                \
          }                                                                                               \
        } else {                                                                                          \
          _Generic((yr), float *: max_row_f32, default: max_row_##T)(yr, xr, p->C);                       \
        }                                                                                                 \
      })                                                                                                  \
    })                                                                                                    \
    return DFX_OK;                                                                                        \
  }
/* (dtype, C type, max pooling's start, Dilation2D's: TF's NumTraits lowest). */
#define MAX_TYPES(X)                                                                                      \
  X(DFX_I8, int8_t, INT8_MIN, INT8_MIN) X(DFX_I16, int16_t, INT16_MIN, INT16_MIN)                         \
  X(DFX_I32, int32_t, INT32_MIN, INT32_MIN) X(DFX_I64, int64_t, INT64_MIN, INT64_MIN)                     \
  X(DFX_U8, uint8_t, 0, 0) X(DFX_U16, uint16_t, 0, 0) X(DFX_U32, uint32_t, 0, 0) X(DFX_U64, uint64_t, 0, 0) \
  X(DFX_F32, float, -INFINITY, -FLT_MAX) X(DFX_F64, double, -INFINITY, -DBL_MAX)
#define DEF(DT, T, INIT, LOWEST) DEFINE_MAX_ROW(T)
MAX_TYPES(DEF)
#undef DEF
#define DEF(DT, T, INIT, LOWEST) DEFINE_MAX(T)
MAX_TYPES(DEF)
#undef DEF

static dfx_code avgpool(dfx_kctx *ctx, const pparams *p, const double *x, double *y) {
  FOR_OUT(ctx, p, {
    for (int64_t c = 0; c < p->C; c++) y[yrow + c] = 0;
    FOR_WIN(p, {
      for (int64_t c = 0; c < p->C; c++) y[yrow + c] += x[xrow + c];
    })
    for (int64_t c = 0; c < p->C; c++) y[yrow + c] = taps ? y[yrow + c] / (double)taps : 0;
  })
  return DFX_OK;
}

/* Runs a pool: moves channels last, computes into the output (moved back). */
static dfx_code run(dfx_kctx *ctx, const pparams *p, int avg, const dfx_tensor *filt, int want_arg) {
  const dfx_tensor *x = ctx->in[0];
  dfx_dtype dt = (dfx_dtype)x->dtype;
  int r = p->nd + 2;
  int64_t yd[5];
  out_dims(p, yd);
  dfx_tensor *y = dfx__kctx_alloc(ctx, 0, dt, r, yd);
  if (!y) return DFX_ENOMEM;
  dfx_tensor *ta = want_arg ? dfx__kctx_alloc(ctx, 1, (dfx_dtype)ctx->node->out_types[1], r, yd) : NULL;
  if (want_arg && !ta) return DFX_ENOMEM;
  if (y->count == 0) return DFX_OK; /* no window to walk, however many positions */
  if (ta && ta->dtype == DFX_I32 && x->count > INT32_MAX)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Targmax = int32 cannot index an input of %lld elements",
                          (long long)x->count);
  int wide = avg || dt == DFX_F16 || dt == DFX_BF16; /* compute in a double/float buffer */
  size_t es = avg ? sizeof(double) : wide ? sizeof(float) : dfx__dtype_storage(dt);
  int64_t *arg = ta ? dfx__malloc(dfx__mul_size((size_t)ta->count, sizeof(int64_t))) : NULL;
  void *xb = wide ? cu_load(x, avg) : NULL, *fb = (filt && wide) ? cu_load(filt, avg) : NULL;
  /* Max pooling in the element type, channels last: straight into the output. */
  int direct = !wide && p->clast;
  void *xt = NULL, *yb = direct ? NULL : dfx__malloc(dfx__mul_size((size_t)y->count, es));
  void *yw = direct ? y->data : yb;
  const void *xs = wide ? xb : x->data;
  dfx_code code = DFX_ENOMEM;
  if ((wide && !xb) || (filt && wide && !fb) || !yw || (ta && !arg)) goto done;
  if (!p->clast && x->count) {
    xt = dfx__malloc(dfx__mul_size((size_t)x->count, es));
    if (!xt) goto done;
    cu_move_c(xs, xt, p->N, p->C, x->count / (p->N * p->C), es, 1);
    xs = xt;
  }
  const void *fs = filt ? (wide ? fb : filt->data) : NULL;
  if (avg) {
    code = avgpool(ctx, p, xs, yw);
  } else if (wide) {
    float lowest = dt == DFX_F16 ? -65504.0f : dfx__bf16_to_f32(0xff7f); /* the half types' lowest */
    code = maxpool_float(ctx, p, xs, fs, yw, arg, filt ? lowest : -INFINITY);
  } else {
    switch (dt) {
#define CASE(DT, T, INIT, LOWEST) \
  case DT: code = maxpool_##T(ctx, p, xs, fs, yw, arg, filt ? (T)LOWEST : (T)INIT); break;
      MAX_TYPES(CASE)
#undef CASE
    case DFX_QI8: code = maxpool_int8_t(ctx, p, xs, fs, yw, arg, INT8_MIN); break;
    default: code = dfx__kctx_fail(ctx, DFX_EINTERNAL, "%s has no %s loop", ctx->node->op, dfx_dtype_name(dt));
    }
  }
  if (code != DFX_OK) goto done;
  code = DFX_ENOMEM;
  void *ys = yb;
  if (!p->clast) {
    dfx__free(xt);
    xt = dfx__malloc(dfx__mul_size((size_t)y->count, es));
    if (!xt) goto done;
    cu_move_c(yb, xt, p->N, p->C, y->count / (p->N * p->C), es, 0);
    ys = xt;
  }
  if (wide)
    cu_store(y, ys, avg);
  else if (!direct)
    memcpy(y->data, ys, (size_t)y->count * es);
  if (ta) {
    int inc_batch = dfx__attr_bool(ctx->node, "include_batch_in_index", false);
    int64_t per = x->count / p->N;
    for (int64_t i = 0; i < ta->count; i++) {
      int64_t v = arg[i] < 0 ? 0 : inc_batch ? arg[i] : arg[i] % per;
      if (ta->dtype == DFX_I32)
        ((int32_t *)ta->data)[i] = (int32_t)v;
      else
        ((int64_t *)ta->data)[i] = v;
    }
  }
  code = DFX_OK;
done:
  dfx__free(xb), dfx__free(fb), dfx__free(xt), dfx__free(yb), dfx__free(arg);
  if (code == DFX_ENOMEM) return dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory in %s", ctx->node->op);
  return code;
}

static dfx_code pool_attr(dfx_kctx *ctx, int avg, int want_arg) {
  pparams p;
  dfx_code c = setup(ctx, &p, ctx->state, ctx->in[0]);
  return c != DFX_OK ? c : run(ctx, &p, avg, NULL, want_arg);
}

static dfx_code max_pool(dfx_kctx *ctx) { return pool_attr(ctx, 0, 0); }
static dfx_code avg_pool(dfx_kctx *ctx) { return pool_attr(ctx, 1, 0); }
static dfx_code max_pool_argmax(dfx_kctx *ctx) { return pool_attr(ctx, 0, 1); }

/* ksize and strides are inputs: the init-time checks run here, per run. */
static dfx_code max_pool_v2(dfx_kctx *ctx) {
  cu_spec s = *(const cu_spec *)ctx->state;
  int nks = 0, nst = 0;
  if (dfx__kctx_vector_i64(ctx, 1, "ksize", s.ks, 5, &nks) != DFX_OK ||
      dfx__kctx_vector_i64(ctx, 2, "strides", s.st, 5, &nst) != DFX_OK)
    return DFX_EINVAL;
  if (cu_check_window("ksize", s.ks, nks, 4, ctx->st) || cu_check_window("strides", s.st, nst, 4, ctx->st) ||
      check_pool_window(&s, ctx->st))
    return ctx->st->code;
  pparams p;
  dfx_code c = setup(ctx, &p, &s, ctx->in[0]);
  return c != DFX_OK ? c : run(ctx, &p, 0, NULL, 0);
}

static dfx_code dilation2d(dfx_kctx *ctx) {
  const dfx_tensor *x = ctx->in[0], *f = ctx->in[1];
  char b[96];
  if (f->ndims != 3) return dfx__kctx_fail(ctx, DFX_EINVAL, "filter must be 3-dimensional: %s", DFX_SHAPE_STR(f, b));
  if (x->ndims == 4 && f->dims[2] != x->dims[3])
    return dfx__kctx_fail(ctx, DFX_EINVAL, "input and filter must have the same depth: %lld vs %lld",
                          (long long)x->dims[3], (long long)f->dims[2]);
  if (f->dims[0] < 1 || f->dims[1] < 1)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "filter height and width must be positive: %s", DFX_SHAPE_STR(f, b));
  cu_spec s = *(const cu_spec *)ctx->state;
  s.ks[1] = f->dims[0], s.ks[2] = f->dims[1];
  pparams p;
  dfx_code c = setup(ctx, &p, &s, x);
  return c != DFX_OK ? c : run(ctx, &p, 0, f, 0);
}

#define MAX_T "{half, bfloat16, float, double, int32, int64, uint8, int16, int8, uint16, qint8}"
#define FLOATS "{half, bfloat16, float, double}"
#define REAL_T "{half, bfloat16, float, double, int8, int16, int32, int64, uint8, uint16, uint32, uint64}"

static const dfx_kernel_def kernels[] = {
    {"MaxPool", "T: " MAX_T, max_pool, 0, pool_init, dfx__free},
    {"MaxPoolV2", "T: " MAX_T, max_pool_v2, 0, pool_init, dfx__free},
    {"AvgPool", "T: " FLOATS, avg_pool, 0, pool_init, dfx__free},
    {"MaxPool3D", "T: {half, bfloat16, float}", max_pool, 0, pool_init, dfx__free},
    {"AvgPool3D", "T: " FLOATS, avg_pool, 0, pool_init, dfx__free},
    {"MaxPoolWithArgmax", "T: " REAL_T "; Targmax: {int32, int64}", max_pool_argmax, 0, pool_init, dfx__free},
    {"Dilation2D", "T: " REAL_T, dilation2d, 0, pool_init, dfx__free},
    {NULL}};

void dfx__kernels_conv_pool(dfx_registry *r);
void dfx__kernels_conv_pool(dfx_registry *r) { dfx__kernels_add(r, kernels); }
