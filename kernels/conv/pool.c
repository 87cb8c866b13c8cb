/* pool.c - MaxPool, MaxPoolV2, AvgPool, MaxPool3D, AvgPool3D,
 * MaxPoolWithArgmax and Dilation2D. Pools run as 3-D windows over a
 * channels-last layout (2-D ops have a depth of 1); channels-first inputs are
 * moved to channels-last and back. Max pooling compares in the element type
 * (halves through float, which is exact); averages are taken in double and
 * divide by the number of in-bounds elements of each window. */
#include "convutil.h"

typedef struct pparams {
  int nd, clast;
  int64_t N, C, in[3], k[3], stride[3], out[3], padb[3], rate[3];
} pparams;

/* ksize/strides as read from attrs or inputs; r = nd + 2. */
static dfx_code setup(dfx_kctx *ctx, pparams *p, int nd, const int64_t *ks, int nks, const int64_t *st, int nst,
                      const int64_t *rates, const dfx_tensor *x, int allow_explicit) {
  const dfx_node *n = ctx->node;
  int r = nd + 2;
  memset(p, 0, sizeof *p);
  p->nd = nd;
  const char *df = dfx__attr_str(n, "data_format", nd == 2 ? "NHWC" : "NDHWC");
  p->clast = df[0] && df[1] != 'C';
  int cax = p->clast ? r - 1 : 1, sp0 = p->clast ? 1 : 2;
  if (x->ndims != r) {
    char b[96];
    return dfx__kctx_fail(ctx, DFX_EINVAL, "input must be %d-dimensional, got %s", r, DFX_SHAPE_STR(x, b));
  }
  if (nks != r)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Sliding window ksize field must specify %d dimensions", r);
  if (nst != r)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Sliding window stride field must specify %d dimensions", r);
  for (int i = 0; i < r; i++)
    if (ks[i] <= 0) return dfx__kctx_fail(ctx, DFX_EINVAL, "Sliding window ksize for dimension %d was zero.", i);
  if (ks[0] != 1 || st[0] != 1)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Pooling is not yet supported on the batch dimension.");
  if (ks[cax] != 1 || st[cax] != 1)
    return dfx__kctx_fail(ctx, DFX_EUNIMPL, "Pooling over the depth dimension is not supported");
  padkind pad = cu_padding(n);
  if (pad == PAD_BAD || (pad == PAD_EXPLICIT && !allow_explicit))
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Invalid padding '%s'", dfx__attr_str(n, "padding", ""));
  int64_t ep[10] = {0};
  if (pad == PAD_EXPLICIT) {
    int ne = cu_ints(n, "explicit_paddings", ep, 10);
    if (ne != 2 * r)
      return dfx__kctx_fail(ctx, DFX_EINVAL, "explicit_paddings attribute must contain %d values, but got: %d",
                            2 * r, ne < 0 ? 0 : ne);
    for (int i = 0; i < 2 * r; i++)
      if (ep[i] < 0) return dfx__kctx_fail(ctx, DFX_EINVAL, "All explicit padding values must be nonnegative");
  }
  p->N = x->dims[0];
  p->C = x->dims[cax];
  int off = 3 - nd;
  for (int i = 0; i < 3; i++) p->in[i] = p->k[i] = p->stride[i] = p->rate[i] = 1;
  for (int i = 0; i < nd; i++) {
    p->in[off + i] = x->dims[sp0 + i];
    p->k[off + i] = ks[sp0 + i];
    p->stride[off + i] = st[sp0 + i];
    if (rates) p->rate[off + i] = rates[sp0 + i];
  }
  for (int i = 0; i < 3; i++) {
    int64_t pb = i >= off ? ep[2 * (sp0 + i - off)] : 0, pa = i >= off ? ep[2 * (sp0 + i - off) + 1] : 0;
    if (pad == PAD_EXPLICIT && (pb >= p->k[i] || pa >= p->k[i]))
      return dfx__kctx_fail(ctx, DFX_EINVAL, "Explicit padding must be smaller than the window size");
    dfx_code c = cu_window(ctx, p->in[i], p->k[i], p->rate[i], p->stride[i], i >= off ? pad : PAD_VALID, pb, pa,
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

/* Iterates output rows: n, o[3], base offset of the output row (C elements). */
#define FOR_OUT(p, BODY)                                                                                  \
  for (int64_t n_ = 0; n_ < (p)->N; n_++)                                                                 \
    for (int64_t o0 = 0; o0 < (p)->out[0]; o0++)                                                          \
      for (int64_t o1 = 0; o1 < (p)->out[1]; o1++)                                                        \
        for (int64_t o2 = 0; o2 < (p)->out[2]; o2++) {                                                    \
          int64_t yrow = (((n_ * (p)->out[0] + o0) * (p)->out[1] + o1) * (p)->out[2] + o2) * (p)->C;      \
          BODY                                                                                            \
        }
/* Iterates the in-bounds window elements of the current output row. */
#define FOR_WIN(p, BODY)                                                                                  \
  for (int64_t a = 0; a < (p)->k[0]; a++) {                                                               \
    int64_t i0 = o0 * (p)->stride[0] - (p)->padb[0] + a * (p)->rate[0];                                   \
    if (i0 < 0 || i0 >= (p)->in[0]) continue;                                                             \
    for (int64_t b = 0; b < (p)->k[1]; b++) {                                                             \
      int64_t i1 = o1 * (p)->stride[1] - (p)->padb[1] + b * (p)->rate[1];                                 \
      if (i1 < 0 || i1 >= (p)->in[1]) continue;                                                           \
      for (int64_t c_ = 0; c_ < (p)->k[2]; c_++) {                                                        \
        int64_t i2 = o2 * (p)->stride[2] - (p)->padb[2] + c_ * (p)->rate[2];                              \
        if (i2 < 0 || i2 >= (p)->in[2]) continue;                                                         \
        int64_t xrow = (((n_ * (p)->in[0] + i0) * (p)->in[1] + i1) * (p)->in[2] + i2) * (p)->C;           \
        int64_t fk = (a * (p)->k[1] + b) * (p)->k[2] + c_;                                                \
        (void)fk;                                                                                         \
        BODY                                                                                              \
      }                                                                                                   \
    }                                                                                                     \
  }

/* Max pooling (and Dilation2D when f != NULL: max of x + f[window, c]). arg:
 * optional flat input index of each maximum (first one wins). */
#define DEFINE_MAX(T, LOWEST)                                                                             \
  static void maxpool_##T(const pparams *p, const T *x, const T *f, T *y, int64_t *arg) {                 \
    FOR_OUT(p, {                                                                                          \
      for (int64_t c = 0; c < p->C; c++) {                                                                \
        y[yrow + c] = LOWEST;                                                                             \
        if (arg) arg[yrow + c] = -1;                                                                      \
      }                                                                                                   \
      FOR_WIN(p, {                                                                                        \
        for (int64_t c = 0; c < p->C; c++) {                                                              \
          T v = f ? (T)(x[xrow + c] + f[fk * p->C + c]) : x[xrow + c];                                    \
          if (arg ? (arg[yrow + c] < 0 || v > y[yrow + c]) : v > y[yrow + c]) {                           \
            y[yrow + c] = v;                                                                              \
            if (arg) arg[yrow + c] = xrow + c;                                                            \
          }                                                                                               \
        }                                                                                                 \
      })                                                                                                  \
    })                                                                                                    \
  }
DEFINE_MAX(int8_t, INT8_MIN)
DEFINE_MAX(int16_t, INT16_MIN)
DEFINE_MAX(int32_t, INT32_MIN)
DEFINE_MAX(int64_t, INT64_MIN)
DEFINE_MAX(uint8_t, 0)
DEFINE_MAX(uint16_t, 0)
DEFINE_MAX(uint32_t, 0)
DEFINE_MAX(uint64_t, 0)
DEFINE_MAX(float, -INFINITY)
DEFINE_MAX(double, -INFINITY)

static void avgpool(const pparams *p, const double *x, double *y) {
  FOR_OUT(p, {
    int64_t cnt = 0;
    for (int64_t c = 0; c < p->C; c++) y[yrow + c] = 0;
    FOR_WIN(p, {
      cnt++;
      for (int64_t c = 0; c < p->C; c++) y[yrow + c] += x[xrow + c];
    })
    for (int64_t c = 0; c < p->C; c++) y[yrow + c] = cnt ? y[yrow + c] / (double)cnt : 0;
  })
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
  int64_t *arg = NULL;
  if (want_arg) {
    dfx_dtype at = (dfx_dtype)ctx->node->out_types[1];
    dfx_tensor *ta = dfx__kctx_alloc(ctx, 1, at, r, yd);
    if (!ta) return DFX_ENOMEM;
    arg = dfx__malloc((size_t)(ta->count ? ta->count : 1) * sizeof(int64_t));
  }
  int wide = avg || dt == DFX_F16 || dt == DFX_BF16; /* compute in a double/float buffer */
  size_t es = avg ? sizeof(double) : wide ? sizeof(float) : dfx__dtype_storage(dt);
  void *xb = wide ? cu_load(x, avg) : NULL, *fb = (filt && wide) ? cu_load(filt, avg) : NULL;
  void *xt = NULL, *yb = dfx__malloc((size_t)(y->count ? y->count : 1) * es);
  const void *xs = wide ? xb : x->data;
  if ((wide && !xb) || (filt && wide && !fb) || !yb || (want_arg && !arg)) goto oom;
  if (!p->clast && x->count) {
    xt = dfx__malloc((size_t)x->count * es);
    if (!xt) goto oom;
    cu_move_c(xs, xt, p->N, p->C, x->count / (p->N * p->C), es, 1);
    xs = xt;
  }
  const void *fs = filt ? (wide ? fb : filt->data) : NULL;
  if (avg) {
    avgpool(p, xs, yb);
  } else if (wide) {
    maxpool_float(p, xs, fs, yb, arg);
  } else {
    switch (dt) {
#define CASE(DT, T) \
  case DT: maxpool_##T(p, xs, fs, yb, arg); break;
      DFX_REAL_TYPES(CASE)
#undef CASE
    default: goto unsupported;
    }
  }
  void *ys = yb;
  if (!p->clast && y->count) {
    dfx__free(xt);
    xt = dfx__malloc((size_t)y->count * es);
    if (!xt) goto oom;
    cu_move_c(yb, xt, p->N, p->C, y->count / (p->N * p->C), es, 0);
    ys = xt;
  }
  if (wide)
    cu_store(y, ys, avg);
  else if (y->count)
    memcpy(y->data, ys, (size_t)y->count * es);
  if (want_arg) {
    dfx_tensor *ta = ctx->out[1];
    int inc_batch = dfx__attr_bool(ctx->node, "include_batch_in_index", false);
    int64_t per = x->count / (p->N ? p->N : 1);
    for (int64_t i = 0; i < ta->count; i++) {
      int64_t v = arg[i] < 0 ? 0 : inc_batch ? arg[i] : arg[i] % per;
      if (ta->dtype == DFX_I32)
        ((int32_t *)ta->data)[i] = (int32_t)v;
      else
        ((int64_t *)ta->data)[i] = v;
    }
  }
  dfx__free(xb), dfx__free(fb), dfx__free(xt), dfx__free(yb), dfx__free(arg);
  return DFX_OK;
oom:
  dfx__free(xb), dfx__free(fb), dfx__free(xt), dfx__free(yb), dfx__free(arg);
  return dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory in %s", ctx->node->op);
unsupported:
  dfx__free(xb), dfx__free(fb), dfx__free(xt), dfx__free(yb), dfx__free(arg);
  return dfx__kctx_fail(ctx, DFX_EINVAL, "%s does not support %s", ctx->node->op, dfx_dtype_name(dt));
}

static dfx_code pool_attr(dfx_kctx *ctx, int nd, int avg, int allow_explicit) {
  int64_t ks[8], st[8];
  int nks = cu_ints(ctx->node, "ksize", ks, 8), nst = cu_ints(ctx->node, "strides", st, 8);
  pparams p;
  dfx_code c = setup(ctx, &p, nd, ks, nks, st, nst, NULL, ctx->in[0], allow_explicit);
  return c != DFX_OK ? c : run(ctx, &p, avg, NULL, 0);
}

static dfx_code max_pool(dfx_kctx *ctx) { return pool_attr(ctx, 2, 0, 1); }
static dfx_code avg_pool(dfx_kctx *ctx) { return pool_attr(ctx, 2, 1, 0); }
static dfx_code max_pool3d(dfx_kctx *ctx) { return pool_attr(ctx, 3, 0, 0); }
static dfx_code avg_pool3d(dfx_kctx *ctx) { return pool_attr(ctx, 3, 1, 0); }

static dfx_code max_pool_v2(dfx_kctx *ctx) {
  int64_t ks[8], st[8];
  int nks = 0, nst = 0;
  if (dfx__kctx_vector_i64(ctx, 1, "ksize", ks, 8, &nks) != DFX_OK ||
      dfx__kctx_vector_i64(ctx, 2, "strides", st, 8, &nst) != DFX_OK)
    return DFX_EINVAL;
  pparams p;
  dfx_code c = setup(ctx, &p, 2, ks, nks, st, nst, NULL, ctx->in[0], 0);
  return c != DFX_OK ? c : run(ctx, &p, 0, NULL, 0);
}

static dfx_code max_pool_argmax(dfx_kctx *ctx) {
  int64_t ks[8], st[8];
  int nks = cu_ints(ctx->node, "ksize", ks, 8), nst = cu_ints(ctx->node, "strides", st, 8);
  pparams p;
  dfx_code c = setup(ctx, &p, 2, ks, nks, st, nst, NULL, ctx->in[0], 0);
  return c != DFX_OK ? c : run(ctx, &p, 0, NULL, 1);
}

static dfx_code dilation2d(dfx_kctx *ctx) {
  const dfx_tensor *x = ctx->in[0], *f = ctx->in[1];
  int64_t st[8], rt[8];
  int nst = cu_ints(ctx->node, "strides", st, 8), nrt = cu_ints(ctx->node, "rates", rt, 8);
  if (nrt != 4) return dfx__kctx_fail(ctx, DFX_EINVAL, "Sliding window rates field must specify 4 dimensions");
  if (f->ndims != 3) {
    char b[96];
    return dfx__kctx_fail(ctx, DFX_EINVAL, "filter must be 3-dimensional: %s", DFX_SHAPE_STR(f, b));
  }
  if (x->ndims == 4 && f->dims[2] != x->dims[3])
    return dfx__kctx_fail(ctx, DFX_EINVAL, "input and filter must have the same depth: %lld vs %lld",
                          (long long)x->dims[3], (long long)f->dims[2]);
  if (rt[0] != 1 || rt[3] != 1)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Current implementation does not yet support rates in the batch and depth dimensions.");
  int64_t ks[4] = {1, f->dims[0], f->dims[1], 1};
  pparams p;
  dfx_code c = setup(ctx, &p, 2, ks, 4, st, nst, rt, x, 0);
  return c != DFX_OK ? c : run(ctx, &p, 0, f, 0);
}

#define POOL2D "ksize: list(int) >= 4; strides: list(int) >= 4; padding: string"
#define POOL3D "ksize: list(int) >= 5; strides: list(int) >= 5; padding: string; data_format: string = 'NDHWC'"
#define MAXT "{half, bfloat16, float, double, int32, int64, uint8, int16, int8, uint16, uint32, uint64} = DT_FLOAT"
#define REALT "{float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, uint64}"


static const dfx_kernel_def kernels[] = {
    {"MaxPool", NULL, max_pool, 0, NULL, NULL},
    {"MaxPoolV2", NULL, max_pool_v2, 0, NULL, NULL},
    {"AvgPool", NULL, avg_pool, 0, NULL, NULL},
    {"MaxPool3D", NULL, max_pool3d, 0, NULL, NULL},
    {"AvgPool3D", NULL, avg_pool3d, 0, NULL, NULL},
    {"MaxPoolWithArgmax", NULL, max_pool_argmax, 0, NULL, NULL},
    {"Dilation2D", NULL, dilation2d, 0, NULL, NULL},
    {NULL}};

void dfx__kernels_conv_pool(dfx_registry *r);
void dfx__kernels_conv_pool(dfx_registry *r) { dfx__kernels_add(r, kernels); }
