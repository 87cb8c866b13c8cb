/* reduce.c - axis reductions: Sum, Mean, Prod, Max, Min, All, Any, EuclideanNorm.
 * The input's dims are collapsed into alternating runs of kept and reduced
 * dims; one walker per (op, dtype) accumulates into a buffer of the output's
 * size (double for float types, 64-bit integers with wraparound for integers,
 * which truncates to TF's wrapping arithmetic in T), then finalizes into T.
 * Float32 Sum and Mean over whole rows (the reduced dims innermost) or over
 * everything take a fast path: the dispatched SIMD sum (kernels/simd) over
 * pieces of 64 K elements, the pieces combined in double, rows or pieces
 * split over idle threads; the order of the combination is fixed, so the
 * result does not depend on the threads. */
#include <math.h>
#include <string.h>

#include "alloc.h"
#include "kdispatch.h"
#include "kernel.h"
#include "nn_util.h"
#include "simd/simd.h"

typedef enum rop { R_SUM, R_MEAN, R_PROD, R_MAX, R_MIN, R_EUCLID, R_ALL, R_ANY } rop;

/* Collapsed iteration plan: groups of dims, the last one innermost. */
typedef struct walk {
  int ng;
  int64_t n[DFX_MAX_DIMS];
  int64_t ostride[DFX_MAX_DIMS]; /* output stride of a kept group, 0 when reduced */
  bool red[DFX_MAX_DIMS];
} walk;

/* Walks x in row-major order; the inner group either reduces a contiguous row
 * into one accumulator or combines a contiguous row into contiguous ones.
 * Rows go in chunks of at most DFX_NN_POLL_WORK elements, so even one long row
 * polls the run. */
#define DEF_WALK(NAME, T, ACC, LOAD, COMB)                                       \
  static dfx_code NAME(dfx_kctx *ctx, const T *x, ACC *acc, const walk *w) {     \
    int64_t cnt[DFX_MAX_DIMS] = {0}, inner = w->n[w->ng - 1], off = 0, done = 0; \
    bool ired = w->red[w->ng - 1];                                               \
    for (;;) {                                                                   \
      for (int64_t j0 = 0; j0 < inner; j0 += DFX_NN_POLL_WORK) {                     \
        int64_t j1 = inner - j0 < DFX_NN_POLL_WORK ? inner : j0 + DFX_NN_POLL_WORK;      \
        if (ired) {                                                              \
          ACC a = acc[off];                                                      \
          for (int64_t j = j0; j < j1; j++) a = COMB(a, LOAD(x[j]));             \
          acc[off] = a;                                                          \
        } else {                                                                 \
          ACC *o = acc + off;                                                    \
          for (int64_t j = j0; j < j1; j++) o[j] = COMB(o[j], LOAD(x[j]));       \
        }                                                                        \
        dfx_code rc = dfx__nn_progress(ctx, &done, j1 - j0);                     \
        if (rc != DFX_OK) return rc;                                             \
      }                                                                          \
      x += inner;                                                                \
      int g = w->ng - 2;                                                         \
      for (; g >= 0; g--) {                                                      \
        off += w->ostride[g];                                                    \
        if (++cnt[g] < w->n[g]) break;                                           \
        off -= w->ostride[g] * w->n[g];                                          \
        cnt[g] = 0;                                                              \
      }                                                                          \
      if (g < 0) return DFX_OK;                                                  \
    }                                                                            \
  }

#define LD(v) (v)
#define LD_F16(v) ((double)dfx__f16_to_f32(v))
#define LD_BF16(v) ((double)dfx__bf16_to_f32(v))
#define C_ADD(a, v) ((a) + (v))
#define C_MUL(a, v) ((a) * (v))
#define C_SQ(a, v) ((a) + (v) * (v))
#define C_MAX(a, v) ((v) > (a) ? (v) : (a))
#define C_MIN(a, v) ((v) < (a) ? (v) : (a))
#define C_FMAX(a, v) (((v) > (a) || (v) != (v)) && (a) == (a) ? (v) : (a))
#define C_FMIN(a, v) (((v) < (a) || (v) != (v)) && (a) == (a) ? (v) : (a))
#define C_AND(a, v) ((a) & ((v) != 0))
#define C_OR(a, v) ((a) | ((v) != 0))

/* Integers: sums and products wrap in uint64 (the low bits equal T's wrapping
 * result); Max/Min compare in the signed or unsigned 64-bit domain. */
#define LDU(v) ((uint64_t)(v))
#define LDS(v) ((int64_t)(v))
#define INT_WALKS(DT, T)                                    \
  DEF_WALK(sum_##T, T, uint64_t, LDU, C_ADD)                \
  DEF_WALK(prod_##T, T, uint64_t, LDU, C_MUL)               \
  DEF_WALK(sq_##T, T, uint64_t, LDU, C_SQ)
DFX_INT_TYPES(INT_WALKS)
#define SINT_MM(DT, T) DEF_WALK(max_##T, T, int64_t, LDS, C_MAX) DEF_WALK(min_##T, T, int64_t, LDS, C_MIN)
#define UINT_MM(DT, T) DEF_WALK(max_##T, T, uint64_t, LDU, C_MAX) DEF_WALK(min_##T, T, uint64_t, LDU, C_MIN)
DFX_SINT_TYPES(SINT_MM)
DFX_UINT_TYPES(UINT_MM)

#define FLT_WALKS(NM, T, L)                                 \
  DEF_WALK(sum_##NM, T, double, L, C_ADD)                   \
  DEF_WALK(prod_##NM, T, double, L, C_MUL)                  \
  DEF_WALK(sq_##NM, T, double, L, C_SQ)                     \
  DEF_WALK(max_##NM, T, double, L, C_FMAX)                  \
  DEF_WALK(min_##NM, T, double, L, C_FMIN)
FLT_WALKS(float, float, LD)
FLT_WALKS(double, double, LD)
FLT_WALKS(f16, uint16_t, LD_F16)
FLT_WALKS(bf16, uint16_t, LD_BF16)
DEF_WALK(all_b, uint8_t, uint8_t, LD, C_AND)
DEF_WALK(any_b, uint8_t, uint8_t, LD, C_OR)

/* Seeds the accumulators with the reduction's identity. */
static void seed(rop op, dfx_dtype t, void *acc, int64_t n) {
  if (op == R_ALL || op == R_ANY) {
    memset(acc, op == R_ALL, (size_t)n);
    return;
  }
  if (dfx__dtype_is_float(t)) {
    double v = op == R_PROD ? 1.0 : op == R_MAX ? -INFINITY : op == R_MIN ? INFINITY : 0.0;
    for (int64_t i = 0; i < n; i++) ((double *)acc)[i] = v;
    return;
  }
  uint64_t v = op == R_PROD ? 1 : 0;
  if (op == R_MAX || op == R_MIN) {
    int64_t lo, hi;
    dfx__nn_int_limits(t, &lo, &hi);
    bool sgn = dfx__dtype_is_signed(t);
    v = op == R_MAX ? (sgn ? (uint64_t)lo : 0) : (sgn ? (uint64_t)hi : (uint64_t)hi);
    if (!sgn && op == R_MIN && t == DFX_U64) v = UINT64_MAX;
  }
  for (int64_t i = 0; i < n; i++) ((uint64_t *)acc)[i] = v;
}

static dfx_code run_walk(dfx_kctx *ctx, rop op, dfx_dtype t, const void *x, void *acc, const walk *w) {
#define W(NM, CT)                                                        \
  switch (op) {                                                          \
  case R_SUM: case R_MEAN: return sum_##NM(ctx, (const CT *)x, acc, w);  \
  case R_PROD: return prod_##NM(ctx, (const CT *)x, acc, w);             \
  case R_EUCLID: return sq_##NM(ctx, (const CT *)x, acc, w);             \
  case R_MAX: return max_##NM(ctx, (const CT *)x, acc, w);               \
  case R_MIN: return min_##NM(ctx, (const CT *)x, acc, w);               \
  default: return DFX_EINTERNAL;                                         \
  }
  switch (t) {
#define IC(DT, T) case DT: W(T, T)
    DFX_INT_TYPES(IC)
#undef IC
  case DFX_F32: W(float, float)
  case DFX_F64: W(double, double)
  case DFX_F16: W(f16, uint16_t)
  case DFX_BF16: W(bf16, uint16_t)
  case DFX_BOOL: return op == R_ALL ? all_b(ctx, x, acc, w) : any_b(ctx, x, acc, w);
  default: return DFX_EINTERNAL;
  }
#undef W
}

/* Converts accumulators into the output elements. */
static void finish(rop op, dfx_dtype t, const void *accv, void *out, int64_t n, int64_t rcount) {
  if (t == DFX_BOOL) {
    memcpy(out, accv, (size_t)n);
    return;
  }
  if (dfx__dtype_is_float(t)) {
    const double *a = accv;
    for (int64_t i = 0; i < n; i++) {
      double v = a[i];
      if (op == R_MEAN) v /= (double)rcount;
      else if (op == R_EUCLID) v = sqrt(v);
      switch (t) {
      case DFX_F32: ((float *)out)[i] = (float)v; break;
      case DFX_F64: ((double *)out)[i] = v; break;
      case DFX_F16: ((uint16_t *)out)[i] = dfx__f32_to_f16((float)v); break;
      default: ((uint16_t *)out)[i] = dfx__f32_to_bf16((float)v); break;
      }
    }
    return;
  }
  /* TF's integer Mean divides the 64-bit sum (wrapped only for 64-bit T),
   * EuclideanNorm takes the root of the sum wrapped to T. */
  const uint64_t *a = accv;
  bool sgn = dfx__dtype_is_signed(t);
  switch (t) {
#define IC(DT, T)                                                                                  \
  case DT:                                                                                         \
    for (int64_t i = 0; i < n; i++) {                                                              \
      T v = (T)a[i];                                                                               \
      if (op == R_MEAN && rcount > 0)                                                              \
        v = sgn ? (T)((int64_t)a[i] / rcount) : (T)(a[i] / (uint64_t)rcount);                      \
      else if (op == R_EUCLID)                                                                     \
        v = (T)sqrt((double)v);                                                                    \
      ((T *)out)[i] = v;                                                                           \
    }                                                                                              \
    break;
    DFX_INT_TYPES(IC)
#undef IC
  default: break;
  }
}

/* ---- float32 Sum / Mean fast path ---- */

#define RED_PIECE ((int64_t)65536)

typedef struct rs_job {
  const dfx_simd_table *v;
  const float *x;
  double *acc;   /* per row, or per piece for a full reduction */
  int64_t inner; /* row length; for pieces, the input's element count */
  dfx_kctx *ctx;
} rs_job;

/* The sum of x[0..n) as a double of float piece sums, in a fixed order. */
static double piece_sum(const dfx_simd_table *v, const float *x, int64_t n) {
  double s = 0;
  for (int64_t i = 0; i < n; i += RED_PIECE) s += v->sum(x + i, n - i < RED_PIECE ? n - i : RED_PIECE);
  return s;
}

static void rs_rows(void *arg, int64_t lo, int64_t hi) {
  rs_job *j = arg;
  for (int64_t r = lo; r < hi; r++) {
    j->acc[r] = piece_sum(j->v, j->x + r * j->inner, j->inner);
    if (((r - lo) & 255) == 255 && dfx__kctx_cancelled(j->ctx)) return;
  }
}

static void rs_pieces(void *arg, int64_t lo, int64_t hi) {
  rs_job *j = arg;
  for (int64_t p = lo; p < hi; p++) {
    int64_t off = p * RED_PIECE, n = j->inner - off < RED_PIECE ? j->inner - off : RED_PIECE;
    j->acc[p] = j->v->sum(j->x + off, n);
  }
}

/* Handles float32 Sum/Mean when w is [reduced] or [kept, reduced]: fills
 * acc (one double per output) and returns true; false when it does not
 * apply (c untouched) or on failure (*c set). */
static bool sum_f32_fast(dfx_kctx *ctx, rop op, dfx_dtype t, const float *x, double *acc, const walk *w,
                         dfx_code *c) {
  if (t != DFX_F32 || (op != R_SUM && op != R_MEAN)) return false;
  rs_job j = {.v = dfx__simd(), .x = x, .acc = acc, .ctx = ctx};
  if (w->ng == 2 && !w->red[0] && w->red[1]) {
    j.inner = w->n[1];
    dfx__kctx_parallel_for(ctx, w->n[0], &(dfx_par_cost){.unit_ns = 0.1 * (double)j.inner}, rs_rows, &j);
    *c = dfx__kctx_poll(ctx);
    return true;
  }
  if (w->ng != 1 || !w->red[0]) return false;
  int64_t count = w->n[0], pieces = (count + RED_PIECE - 1) / RED_PIECE;
  double one, *part = pieces == 1 ? &one : dfx__malloc(sizeof(double) * (size_t)pieces);
  if (!part) {
    *c = dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory in %s", ctx->node->op);
    return true;
  }
  j.acc = part;
  j.inner = count;
  dfx__kctx_parallel_for(ctx, pieces, &(dfx_par_cost){.unit_ns = 0.1 * (double)RED_PIECE}, rs_pieces, &j);
  double s = 0;
  for (int64_t p = 0; p < pieces; p++) s += part[p];
  acc[0] = s;
  if (part != &one) dfx__free(part);
  *c = dfx__kctx_poll(ctx);
  return true;
}

static dfx_code reduce_run(dfx_kctx *ctx, rop op) {
  const dfx_tensor *x = ctx->in[0];
  dfx_dtype t = (dfx_dtype)x->dtype;
  bool keep = (intptr_t)ctx->state != 0;
  bool red[DFX_MAX_DIMS] = {0};
  dfx_code c = dfx__nn_axes_mask(ctx, 1, x->ndims, red);
  if (c != DFX_OK) return c;
  int64_t odims[DFX_MAX_DIMS];
  int ond = 0;
  /* An empty input may have dims whose product overflows: when the output
   * is not empty, its zero dim is a reduced one and rcount is 0. */
  int64_t rcount = x->count > 0;
  for (int d = 0; d < x->ndims; d++) {
    if (red[d]) {
      rcount *= x->count > 0 ? x->dims[d] : 1;
      if (keep) odims[ond++] = 1;
    } else {
      odims[ond++] = x->dims[d];
    }
  }
  dfx_tensor *y = dfx__kctx_alloc(ctx, 0, t, ond, odims);
  if (!y) return DFX_ENOMEM;
  int64_t n = y->count;
  if (n == 0) return DFX_OK;
  size_t esz = t == DFX_BOOL ? 1 : 8;
  uint64_t small[64];
  void *acc = n <= 64 ? (void *)small : dfx__malloc(dfx__mul_size((size_t)n, esz));
  if (!acc) return dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory in %s", ctx->node->op);
  seed(op, t, acc, n);
  c = DFX_OK;
  if (x->count > 0) {
    walk w = {0};
    for (int d = 0; d < x->ndims; d++) {
      if (x->dims[d] == 1) continue;
      if (w.ng > 0 && w.red[w.ng - 1] == red[d]) {
        w.n[w.ng - 1] *= x->dims[d];
      } else {
        w.n[w.ng] = x->dims[d];
        w.red[w.ng++] = red[d];
      }
    }
    if (w.ng == 0) w.n[w.ng++] = 1;
    int64_t s = 1;
    for (int g = w.ng - 1; g >= 0; g--) {
      w.ostride[g] = w.red[g] ? 0 : s;
      if (!w.red[g]) s *= w.n[g];
    }
    if (!sum_f32_fast(ctx, op, t, x->data, acc, &w, &c)) c = run_walk(ctx, op, t, x->data, acc, &w);
  }
  if (c == DFX_OK) finish(op, t, acc, y->data, n, rcount);
  if (acc != small) dfx__free(acc);
  return c;
}

static dfx_code keep_init(const dfx_node *n, void **state, dfx_status *st) {
  (void)st;
  *state = (void *)(intptr_t)dfx__attr_bool(n, "keep_dims", false);
  return DFX_OK;
}

static dfx_code sum_k(dfx_kctx *ctx) { return reduce_run(ctx, R_SUM); }
static dfx_code mean_k(dfx_kctx *ctx) { return reduce_run(ctx, R_MEAN); }
static dfx_code prod_k(dfx_kctx *ctx) { return reduce_run(ctx, R_PROD); }
static dfx_code max_k(dfx_kctx *ctx) { return reduce_run(ctx, R_MAX); }
static dfx_code min_k(dfx_kctx *ctx) { return reduce_run(ctx, R_MIN); }
static dfx_code euclid_k(dfx_kctx *ctx) { return reduce_run(ctx, R_EUCLID); }
static dfx_code all_k(dfx_kctx *ctx) { return reduce_run(ctx, R_ALL); }
static dfx_code any_k(dfx_kctx *ctx) { return reduce_run(ctx, R_ANY); }

/* Real types only: complex and quantized inputs have no kernel. */
#define REAL_TIDX "T: {" DFX_NN_FLOAT_T ", " DFX_NN_INT_T "}; Tidx: {int32, int64}"

static const dfx_kernel_def kernels[] = {
    {"Sum", REAL_TIDX, sum_k, DFX_KERNEL_CHEAP, keep_init, NULL},
    {"Mean", REAL_TIDX, mean_k, DFX_KERNEL_CHEAP, keep_init, NULL},
    {"Prod", REAL_TIDX, prod_k, DFX_KERNEL_CHEAP, keep_init, NULL},
    {"Max", REAL_TIDX, max_k, DFX_KERNEL_CHEAP, keep_init, NULL},
    {"Min", REAL_TIDX, min_k, DFX_KERNEL_CHEAP, keep_init, NULL},
    {"EuclideanNorm", REAL_TIDX, euclid_k, DFX_KERNEL_CHEAP, keep_init, NULL},
    {"All", "Tidx: {int32, int64}", all_k, DFX_KERNEL_CHEAP, keep_init, NULL},
    {"Any", "Tidx: {int32, int64}", any_k, DFX_KERNEL_CHEAP, keep_init, NULL},
    {NULL}};

void dfx__kernels_nn_reduce(dfx_registry *r);
void dfx__kernels_nn_reduce(dfx_registry *r) { dfx__kernels_add(r, kernels); }
