/* matmul.c - MatMul, BatchMatMul and BatchMatMulV2 (broadcast batch dims).
 * Row-major operands; float/double/complex go to OpenBLAS gemm (one call per
 * batch matrix), half types are widened to float and use sgemm, integers use
 * a naive i-k-j loop with wrapping arithmetic. MatMul's transpose_a/b only
 * transpose; BatchMatMul's adj_x/y conjugate complex operands too.
 *
 * Intra-op parallelism: float and complex products run through
 * dfx__kctx_parallel_for, over batch matrices when there are several, else
 * over blocks of rows of the output (columns when it is wider than tall),
 * one single-threaded BLAS call per block: OpenBLAS stays pinned to one
 * thread (exec/session.c) and the pool's idle threads do the splitting. */
#include <cblas.h>
#include <string.h>

#include "alloc.h"
#include "kdispatch.h"
#include "kernel.h"
#include "nn_util.h"

typedef struct mm_attrs {
  bool ta, tb;
  bool conj; /* transposed operands are conjugated (adj_x/adj_y) */
} mm_attrs;

/* Row i of C[m,n] = op(A) op(B); op(A) is A[m,k] (lda k) or A^T with A[k,m] (lda m). */
#define DEF_NAIVE(T)                                                                                  \
  static void naive_##T(const T *a, const T *b, T *ci, int64_t i, int64_t m, int64_t n, int64_t k, bool ta, \
                        bool tb) {                                                                    \
    for (int64_t j = 0; j < n; j++) ci[j] = 0;                                                        \
    for (int64_t p = 0; p < k; p++) {                                                                 \
      uint64_t av = (uint64_t)(ta ? a[p * m + i] : a[i * k + p]);                                     \
      if (!tb) {                                                                                      \
        const T *bp = b + p * n;                                                                      \
        for (int64_t j = 0; j < n; j++) ci[j] = (T)((uint64_t)ci[j] + av * (uint64_t)bp[j]);           \
      } else {                                                                                        \
        for (int64_t j = 0; j < n; j++) ci[j] = (T)((uint64_t)ci[j] + av * (uint64_t)b[j * k + p]);    \
      }                                                                                               \
    }                                                                                                 \
  }
#define NAIVE_INT(DT, T) DEF_NAIVE(T)
DFX_INT_TYPES(NAIVE_INT)

static void widen(const uint16_t *x, float *y, int64_t n, bool bf) {
  for (int64_t i = 0; i < n; i++) y[i] = bf ? dfx__bf16_to_f32(x[i]) : dfx__f16_to_f32(x[i]);
}

/* One matrix product of half or integer types; `tmp` holds (m*k + k*n +
 * m*n) floats for half types.
 * Integer products poll the run every few rows (*done counts the work). */
static dfx_code gemm(dfx_kctx *ctx, dfx_dtype t, const void *a, const void *b, void *c, int64_t m, int64_t n,
                     int64_t k, const mm_attrs *s, float *tmp, int64_t *done) {
  bool ta = s->ta, tb = s->tb;
  if (m == 0 || n == 0) return DFX_OK;
  size_t es = dfx_dtype_size(t);
  if (k == 0) {
    memset(c, 0, (size_t)(m * n) * es);
    return dfx__nn_progress(ctx, done, m * n);
  }
  /* Half types only (blas_batched takes float and complex). */
  enum CBLAS_TRANSPOSE tra = ta ? CblasTrans : CblasNoTrans, trb = tb ? CblasTrans : CblasNoTrans;
  int lda = (int)(ta ? m : k), ldb = (int)(tb ? k : n);
  switch (t) {
  case DFX_F16:
  case DFX_BF16: {
    bool bf = t == DFX_BF16;
    float *fa = tmp, *fb = tmp + m * k, *fc = fb + k * n;
    widen(a, fa, m * k, bf);
    widen(b, fb, k * n, bf);
    cblas_sgemm(CblasRowMajor, tra, trb, (int)m, (int)n, (int)k, 1.0f, fa, lda, fb, ldb, 0.0f, fc, (int)n);
    uint16_t *o = c;
    for (int64_t i = 0; i < m * n; i++) o[i] = bf ? dfx__f32_to_bf16(fc[i]) : dfx__f32_to_f16(fc[i]);
    break;
  }
#define C(DT, T)                                                           \
  case DT:                                                                 \
    for (int64_t i = 0; i < m; i++) {                                      \
      naive_##T(a, b, (T *)c + i * n, i, m, n, k, ta, tb);                 \
      dfx_code rc = dfx__nn_progress(ctx, done, n * k);                    \
      if (rc != DFX_OK) return rc;                                         \
    }                                                                      \
    return DFX_OK;
    DFX_INT_TYPES(C)
#undef C
  default: break;
  }
  /* m*n is an output element count; times k it may pass int64: saturate. */
  int64_t mn = m * n, work;
  if (__builtin_mul_overflow(mn, k, &work)) work = INT64_MAX;
  return dfx__nn_progress(ctx, done, work);
}

/* ---- BLAS products, split for parallel_for ---- */

static bool blas_dtype(dfx_dtype t) { return t == DFX_F32 || t == DFX_F64 || t == DFX_C64 || t == DFX_C128; }

/* Estimated ns per multiply-add on one core: a conservative rate of
 * single-threaded sgemm (AVX2/AVX-512 reach 50-100 flops/ns), half that
 * for doubles, four real ones per complex. */
static double fma_ns(dfx_dtype t) {
  double f32 = 1.0 / 32;
  return t == DFX_F32 ? f32 : t == DFX_F64 ? 2 * f32 : t == DFX_C64 ? 4 * f32 : 8 * f32;
}

typedef struct mm_job {
  dfx_dtype t;
  size_t es;
  const char *x, *y;
  char *z;
  int64_t m, n, k;
  int64_t xmat, ymat; /* elements per batch matrix of x and y */
  const mm_attrs *s;
  /* Batch broadcasting (batched()): strides in matrices, 0 along size-1 dims. */
  int nb;
  const int64_t *ob, *sx, *sy;
  bool by_rows;        /* one product split by rows (else by columns) */
} mm_job;

/* C[i0:i1, j0:j1] of one product; a, b, c point at the whole matrices. */
static void blas_block(const mm_job *j, const char *a, const char *b, char *c, int64_t i0, int64_t i1, int64_t j0,
                       int64_t j1) {
  const mm_attrs *s = j->s;
  int64_t m = i1 - i0, n = j1 - j0, k = j->k;
  size_t es = j->es;
  enum CBLAS_TRANSPOSE tr = s->conj ? CblasConjTrans : CblasTrans;
  enum CBLAS_TRANSPOSE tra = s->ta ? tr : CblasNoTrans, trb = s->tb ? tr : CblasNoTrans;
  int lda = (int)(s->ta ? j->m : k), ldb = (int)(s->tb ? k : j->n), ldc = (int)j->n;
  /* Row i0 of op(A) starts at a[i0 * lda] untransposed, at column i0 of A
   * transposed; likewise column j0 of op(B). */
  a += (size_t)(s->ta ? i0 : i0 * k) * es;
  b += (size_t)(s->tb ? j0 * k : j0) * es;
  c += (size_t)(i0 * j->n + j0) * es;
  static const double one[2] = {1, 0}, zero[2] = {0, 0};
  static const float onef[2] = {1, 0}, zerof[2] = {0, 0};
  switch (j->t) {
  case DFX_C64:
    cblas_cgemm(CblasRowMajor, tra, trb, (int)m, (int)n, (int)k, onef, a, lda, b, ldb, zerof, c, ldc);
    break;
  case DFX_C128:
    cblas_zgemm(CblasRowMajor, tra, trb, (int)m, (int)n, (int)k, one, a, lda, b, ldb, zero, c, ldc);
    break;
  case DFX_F32:
    cblas_sgemm(CblasRowMajor, tra, trb, (int)m, (int)n, (int)k, 1.0f, (const float *)a, lda, (const float *)b, ldb,
                0.0f, (float *)c, ldc);
    break;
  default:
    cblas_dgemm(CblasRowMajor, tra, trb, (int)m, (int)n, (int)k, 1.0, (const double *)a, lda, (const double *)b, ldb,
                0.0, (double *)c, ldc);
    break;
  }
}

/* Rows (or columns) [begin, end) of the single product. */
static void split_block(void *arg, int64_t begin, int64_t end) {
  const mm_job *j = arg;
  if (j->by_rows)
    blas_block(j, j->x, j->y, j->z, begin, end, 0, j->n);
  else
    blas_block(j, j->x, j->y, j->z, 0, j->m, begin, end);
}

/* Batch matrices [begin, end), each a whole product. */
static void batch_block(void *arg, int64_t begin, int64_t end) {
  const mm_job *j = arg;
  for (int64_t bi = begin; bi < end; bi++) {
    /* Unravel bi over the output batch dims into x's and y's matrix offsets. */
    int64_t ox = 0, oy = 0, rest = bi;
    for (int i = j->nb - 1; i >= 0; i--) {
      int64_t d = rest % j->ob[i];
      rest /= j->ob[i];
      ox += d * j->sx[i];
      oy += d * j->sy[i];
    }
    blas_block(j, j->x + (size_t)(ox * j->xmat) * j->es, j->y + (size_t)(oy * j->ymat) * j->es,
               j->z + (size_t)(bi * j->m * j->n) * j->es, 0, j->m, 0, j->n);
  }
}

/* Every product of a float or complex batch, spread over idle threads. */
static dfx_code blas_batched(dfx_kctx *ctx, mm_job *j, int64_t batches) {
  double per_row = fma_ns(j->t) * (double)j->n * (double)j->k;
  if (j->k == 0) {
    memset(j->z, 0, (size_t)(batches * j->m * j->n) * j->es);
  } else if (batches > 1) {
    dfx__kctx_parallel_for(ctx, batches, &(dfx_par_cost){.unit_ns = per_row * (double)j->m, .blocks_per_thread = 2},
                           batch_block, j);
  } else {
    /* sgemm packs the operand it streams once per call: one block per
     * thread, cut along the longer side of the output. */
    j->by_rows = j->m >= j->n;
    int64_t len = j->by_rows ? j->m : j->n;
    double unit = j->by_rows ? per_row : fma_ns(j->t) * (double)j->m * (double)j->k;
    dfx__kctx_parallel_for(ctx, len, &(dfx_par_cost){.unit_ns = unit, .grain = 16, .blocks_per_thread = 1},
                           split_block, j);
  }
  return dfx__kctx_poll(ctx);
}

static dfx_code mm_init(const dfx_node *n, void **state, dfx_status *st) {
  mm_attrs *s = dfx__malloc(sizeof *s);
  if (!s) return dfx__status_set(st, DFX_ENOMEM, "out of memory");
  bool v1 = strcmp(n->op, "MatMul") == 0;
  s->ta = dfx__attr_bool(n, v1 ? "transpose_a" : "adj_x", false);
  s->tb = dfx__attr_bool(n, v1 ? "transpose_b" : "adj_y", false);
  s->conj = !v1;
  *state = s;
  return DFX_OK;
}

static void mm_fini(void *state) { dfx__free(state); }

/* Shared body: x batch dims bx[0..nb), y batch dims by[0..nb) (already
 * rank-aligned with 1s), output batch ob. */
static dfx_code batched(dfx_kctx *ctx, int nb, const int64_t *bx, const int64_t *by, const int64_t *ob) {
  const dfx_tensor *x = ctx->in[0], *y = ctx->in[1];
  const mm_attrs *s = ctx->state;
  dfx_dtype t = (dfx_dtype)x->dtype;
  int64_t xr = x->dims[x->ndims - 2], xc = x->dims[x->ndims - 1];
  int64_t yr = y->dims[y->ndims - 2], yc = y->dims[y->ndims - 1];
  int64_t m = s->ta ? xc : xr, k = s->ta ? xr : xc, k2 = s->tb ? yc : yr, n = s->tb ? yr : yc;
  char b1[96], b2[96];
  if (k != k2) {
    if (strcmp(ctx->node->op, "MatMul") == 0)
      return dfx__kctx_fail(ctx, DFX_EINVAL, "Matrix size-incompatible: In[0]: %s, In[1]: %s",
                            DFX_SHAPE_STR(x, b1), DFX_SHAPE_STR(y, b2));
    return dfx__kctx_fail(ctx, DFX_EINVAL, "In[0] mismatch In[1] shape: %lld vs. %lld: %s %s %s %s",
                          (long long)k, (long long)k2, DFX_SHAPE_STR(x, b1), DFX_SHAPE_STR(y, b2),
                          s->ta ? "true" : "false", s->tb ? "true" : "false");
  }
  if (m > INT32_MAX || n > INT32_MAX || k > INT32_MAX)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "matrix dimensions too large for BLAS");
  int64_t od[DFX_MAX_DIMS];
  for (int i = 0; i < nb; i++) od[i] = ob[i];
  od[nb] = m;
  od[nb + 1] = n;
  dfx_tensor *z = dfx__kctx_alloc(ctx, 0, t, nb + 2, od);
  if (!z) return DFX_ENOMEM;
  if (z->count == 0) return DFX_OK;
  float *tmp = NULL;
  if (t == DFX_F16 || t == DFX_BF16) {
    /* Each term is at most an operand's element count (the output is not empty). */
    size_t bytes = dfx__mul_size((size_t)(m * k + k * n + m * n), sizeof(float));
    if (bytes > dfx__tensor_limit())
      return dfx__kctx_fail(ctx, DFX_ELIMIT, "%s: float scratch of %zu bytes exceeds the tensor size limit",
                            ctx->node->op, bytes);
    tmp = dfx__malloc(bytes);
    if (!tmp) return dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory in %s", ctx->node->op);
  }
  size_t es = dfx_dtype_size(t);
  int64_t batches = 1;
  for (int i = 0; i < nb; i++) batches *= ob[i];
  /* Broadcast strides (in matrices): 0 along size-1 dims. */
  int64_t sx[DFX_MAX_DIMS], sy[DFX_MAX_DIMS], ax = 1, ay = 1;
  for (int i = nb - 1; i >= 0; i--) {
    sx[i] = bx[i] == 1 ? 0 : ax;
    sy[i] = by[i] == 1 ? 0 : ay;
    ax *= bx[i];
    ay *= by[i];
  }
  const char *xd = x->data, *yd = y->data;
  char *zd = z->data;
  if (blas_dtype(t)) {
    mm_job j = {.t = t, .es = es, .x = xd, .y = yd, .z = zd, .m = m, .n = n, .k = k, .xmat = xr * xc,
                .ymat = yr * yc, .s = s, .nb = nb, .ob = ob, .sx = sx, .sy = sy};
    return blas_batched(ctx, &j, batches);
  }
  int64_t cnt[DFX_MAX_DIMS] = {0}, ox = 0, oy = 0;
  dfx_code rc = DFX_OK;
  for (int64_t bi = 0, done = 0; bi < batches && rc == DFX_OK; bi++) {
    rc = gemm(ctx, t, xd + (size_t)(ox * xr * xc) * es, yd + (size_t)(oy * yr * yc) * es,
              zd + (size_t)(bi * m * n) * es, m, n, k, s, tmp, &done);
    for (int i = nb - 1; i >= 0; i--) {
      ox += sx[i];
      oy += sy[i];
      if (++cnt[i] < ob[i]) break;
      ox -= sx[i] * ob[i];
      oy -= sy[i] * ob[i];
      cnt[i] = 0;
    }
  }
  dfx__free(tmp);
  return rc;
}

static dfx_code matmul_k(dfx_kctx *ctx) {
  const dfx_tensor *a = ctx->in[0], *b = ctx->in[1];
  char buf[96];
  if (a->ndims != 2)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "In[0] is not a matrix. Instead it has shape %s", DFX_SHAPE_STR(a, buf));
  if (b->ndims != 2)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "In[1] is not a matrix. Instead it has shape %s", DFX_SHAPE_STR(b, buf));
  return batched(ctx, 0, NULL, NULL, NULL);
}

static dfx_code bmm_common(dfx_kctx *ctx, bool v2) {
  const dfx_tensor *x = ctx->in[0], *y = ctx->in[1];
  char b1[96], b2[96];
  if (x->ndims < 2) return dfx__kctx_fail(ctx, DFX_EINVAL, "In[0] ndims must be >= 2: %d", x->ndims);
  if (y->ndims < 2) return dfx__kctx_fail(ctx, DFX_EINVAL, "In[1] ndims must be >= 2: %d", y->ndims);
  int64_t bx[DFX_MAX_DIMS], by[DFX_MAX_DIMS], ob[DFX_MAX_DIMS];
  if (!v2) {
    if (x->ndims != y->ndims)
      return dfx__kctx_fail(ctx, DFX_EINVAL, "In[0] and In[1] has different ndims: %s vs. %s", DFX_SHAPE_STR(x, b1),
                            DFX_SHAPE_STR(y, b2));
    for (int i = 0; i < x->ndims - 2; i++)
      if (x->dims[i] != y->dims[i])
        return dfx__kctx_fail(ctx, DFX_EINVAL, "In[0].dim(%d) and In[1].dim(%d) must be the same: %s vs %s", i, i,
                              DFX_SHAPE_STR(x, b1), DFX_SHAPE_STR(y, b2));
  }
  int nb = (x->ndims > y->ndims ? x->ndims : y->ndims) - 2;
  for (int i = 0; i < nb; i++) {
    int ix = i - (nb - (x->ndims - 2)), iy = i - (nb - (y->ndims - 2));
    bx[i] = ix >= 0 ? x->dims[ix] : 1;
    by[i] = iy >= 0 ? y->dims[iy] : 1;
    if (bx[i] != by[i] && bx[i] != 1 && by[i] != 1)
      return dfx__kctx_fail(ctx, DFX_EINVAL, "In[0] and In[1] must have compatible batch dimensions: %s vs. %s",
                            DFX_SHAPE_STR(x, b1), DFX_SHAPE_STR(y, b2));
    ob[i] = bx[i] == 1 ? by[i] : bx[i];
  }
  return batched(ctx, nb, bx, by, ob);
}

static dfx_code bmm_k(dfx_kctx *ctx) { return bmm_common(ctx, false); }
static dfx_code bmm2_k(dfx_kctx *ctx) { return bmm_common(ctx, true); }

/* Every dtype TF allows for each op. */
#define MM_T "T: {" DFX_NN_FLOAT_T ", complex64, complex128, "
static const dfx_kernel_def kernels[] = {
    {"MatMul", MM_T "int32, int64, uint8, uint16, uint32, uint64}", matmul_k, 0, mm_init, mm_fini},
    {"BatchMatMul", MM_T "int32, int64}", bmm_k, 0, mm_init, mm_fini},
    {"BatchMatMulV2", MM_T "int16, int32, int64, uint8, uint16, uint32, uint64}", bmm2_k, 0, mm_init, mm_fini},
    {NULL}};

void dfx__kernels_nn_matmul(dfx_registry *r);
void dfx__kernels_nn_matmul(dfx_registry *r) { dfx__kernels_add(r, kernels); }
