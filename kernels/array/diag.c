/* diag.c - Diag, DiagPart, MatrixDiag, MatrixDiagPart, MatrixSetDiag (v1, v2,
 * v3 with k ranges, num_rows/num_cols, padding and alignment), MatrixBandPart.
 * Batched matrices are the trailing two dims; diagonal d holds elements
 * (i, i + d), stored at row (upper - d) of the packed diagonal tensor. */
#include <stdio.h>
#include <string.h>

#include "autil.h"

/* Diag and DiagPart: TF's dtypes, all plain copies here. */
#define DIAG_TYPES "T: {bfloat16, half, float, double, int32, int64, complex64, complex128}"

/* ---- Diag / DiagPart ---- */

static dfx_code diag_kernel(dfx_kctx *ctx) {
  const dfx_tensor *x = ctx->in[0];
  int r = x->ndims;
  if (r < 1) return dfx__kctx_fail(ctx, DFX_EINVAL, "Input must be at least rank 1, got 0");
  if (2 * r > DFX_MAX_DIMS) return dfx__kctx_fail(ctx, DFX_EINVAL, "Diag output rank %d too large", 2 * r);
  int64_t od[DFX_MAX_DIMS];
  memcpy(od, x->dims, sizeof(int64_t) * (size_t)r);
  memcpy(od + r, x->dims, sizeof(int64_t) * (size_t)r);
  /* The output has count^2 elements: far more than the input. */
  dfx_tensor *y = dfx__arr_alloc(ctx, 0, (dfx_dtype)x->dtype, 2 * r, od, "Diag of the input's shape");
  if (!y) return ctx->st->code;
  size_t es = dfx__dtype_storage((dfx_dtype)x->dtype);
  int64_t work = 0;
  /* Flattened, the output is a count x count matrix with x on its diagonal:
   * row i is zero except for element i. */
  for (int64_t i = 0; i < x->count; i++) {
    char *row = (char *)y->data + (size_t)(i * x->count) * es;
    memset(row, 0, (size_t)x->count * es);
    memcpy(row + (size_t)i * es, (const char *)x->data + (size_t)i * es, es);
    dfx_code c = dfx__arr_tick(ctx, &work, x->count);
    if (c) return c;
  }
  return DFX_OK;
}

static dfx_code diag_part_kernel(dfx_kctx *ctx) {
  const dfx_tensor *x = ctx->in[0];
  int r = x->ndims, k = r / 2;
  char b[128];
  if (r == 0 || r % 2)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "The rank of the tensor should be even and positive, got shape %s",
                          DFX_SHAPE_STR(x, b));
  for (int i = 0; i < k; i++)
    /* DiagPart takes a [d..., d...] tensor: the second half of the dims must
     * repeat the first. */
    if (x->dims[i] != x->dims[i + k])
      return dfx__kctx_fail(ctx, DFX_EINVAL, "Invalid shape %s: dimensions %d and %d do not match.", DFX_SHAPE_STR(x, b),
                            i, i + k);
  dfx_tensor *y = dfx__kctx_alloc(ctx, 0, (dfx_dtype)x->dtype, k, x->dims);
  if (!y) return DFX_ENOMEM;
  size_t es = dfx__dtype_storage((dfx_dtype)x->dtype);
  for (int64_t i = 0; i < y->count; i++)
    /* The inverse of Diag: element (i, i) of the flattened count x count view. */
    memcpy((char *)y->data + (size_t)i * es, (const char *)x->data + (size_t)(i * y->count + i) * es, es);
  return DFX_OK;
}

/* ---- batched diagonals ---- */

typedef struct {
  int64_t lower, upper, rows, cols, max_len;
  bool left_super, left_sub;
} dspec;

/* Diagonal d of a rows x cols matrix starts at (max(-d, 0), max(d, 0)), so
 * it has min(rows + min(d, 0), cols - max(d, 0)) elements. */
static int64_t diag_len(const dspec *s, int64_t d) {
  int64_t a = s->rows + (d < 0 ? d : 0), b = s->cols - (d > 0 ? d : 0);
  return a < b ? a : b;
}
/* Where a diagonal shorter than max_len starts in its packed row: at 0 when
 * left-aligned, else pushed right so that it ends at max_len. */
static int64_t diag_off(const dspec *s, int64_t d) {
  bool left = (d >= 0 && s->left_super) || (d <= 0 && s->left_sub);
  return left ? 0 : s->max_len - diag_len(s, d);
}

static dfx_code read_align(dfx_kctx *ctx, dspec *s) {
  const char *a = dfx__attr_str(ctx->node, "align", "LEFT_LEFT");
  if (strcmp(a, "LEFT_LEFT") == 0) s->left_super = s->left_sub = true;
  else if (strcmp(a, "LEFT_RIGHT") == 0) s->left_super = true, s->left_sub = false;
  else if (strcmp(a, "RIGHT_LEFT") == 0) s->left_super = false, s->left_sub = true;
  else if (strcmp(a, "RIGHT_RIGHT") == 0) s->left_super = s->left_sub = false;
  else return dfx__kctx_fail(ctx, DFX_EINVAL, "Unknown align '%s'", a);
  return DFX_OK;
}

static dfx_code read_k(dfx_kctx *ctx, int i, dspec *s) {
  const dfx_tensor *k = ctx->in[i];
  char b[64];
  if (k->ndims > 1 || k->count < 1 || k->count > 2)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "diag_index must be a scalar or vector with one or two elements, got %s",
                          DFX_SHAPE_STR(k, b));
  s->lower = dfx__tensor_get_i64(k, 0);
  s->upper = k->count == 2 ? dfx__tensor_get_i64(k, 1) : s->lower;
  if (s->lower > s->upper)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "lower_diag_index must not be larger than upper_diag_index: %lld > %lld",
                          (long long)s->lower, (long long)s->upper);
  return DFX_OK;
}

static dfx_code need_scalar(dfx_kctx *ctx, int i, const char *what) {
  if (ctx->in[i]->count == 1) return DFX_OK;
  char b[64];
  return dfx__kctx_fail(ctx, DFX_EINVAL, "%s must be a scalar, got shape %s", what, DFX_SHAPE_STR(ctx->in[i], b));
}

/* Visits every stored diagonal element of batch matrix `bt`: body gets the
 * flat matrix index midx (i * cols + j) and the flat packed index pidx. */
/* Element n of diagonal d is matrix element (n, n + d) for d >= 0 and
 * (n - d, n) below the main diagonal. A single diagonal (nd == 1) has no
 * row index in the packed tensor. */
#define FOR_DIAG(s, nd, body)                                                            \
  for (int64_t d = (s)->lower; d <= (s)->upper; d++) {                                   \
    int64_t len = diag_len(s, d), off = diag_off(s, d), row = (s)->upper - d;            \
    (void)row;                                                                           \
    for (int64_t n = 0; n < len; n++) {                                                  \
      int64_t mi = d >= 0 ? n : n - d, mj = d >= 0 ? n + d : n;                          \
      int64_t midx = mi * (s)->cols + mj, pidx = ((nd) > 1 ? row * (s)->max_len : 0) + n + off; \
      body;                                                                              \
    }                                                                                    \
  }

/* A string output filled with padv holds a copy of it in every element no
 * diagonal element lands on (batch matrices of s), plus at most the bytes of
 * x (each element of x lands at most once). */
static dfx_code pad_check(dfx_kctx *ctx, const dspec *s, int64_t batch, int on, const int64_t *od,
                          const dfx_tensor *x, const dfx_tensor *padv, const char *what) {
  if (x->dtype != DFX_STRING || !padv) return DFX_OK;
  /* count - batch * stored is the number of output elements left at padv. */
  int64_t count = dfx__shape_count(on, od), stored = 0;
  for (int64_t d = s->lower; d <= s->upper; d++) stored += diag_len(s, d) > 0 ? diag_len(s, d) : 0;
  return dfx__arr_str_budget(ctx, what, dfx__arr_str_bytes(x), count < 0 ? -1 : count - batch * stored,
                             dfx__arr_str_len(padv, 0));
}

/* Sets every element of y to padv, or to zero (strings: empty) without one. */
static dfx_code pad_fill(dfx_kctx *ctx, dfx_tensor *y, const dfx_tensor *padv) {
  if (padv) return dfx__arr_fill(ctx, y, 0, y->count, padv, 0);
  if (y->dtype != DFX_STRING) memset(y->data, 0, y->nbytes);
  return DFX_OK;
}

/* Shared by MatrixDiag{,V2,V3}: builds batched matrices from diagonals. */
static dfx_code matrix_diag(dfx_kctx *ctx, int version) {
  const dfx_tensor *x = ctx->in[0];
  /* v1 and v2 pack every diagonal left-aligned (TF's behaviour before the
   * align attr); v3 reads align, whose OpDef default is RIGHT_LEFT. */
  dspec s = {0, 0, -1, -1, 0, true, true};
  const dfx_tensor *padv = NULL;
  if (version >= 2) {
    if (read_k(ctx, 1, &s) || need_scalar(ctx, 2, "num_rows") || need_scalar(ctx, 3, "num_cols") ||
        need_scalar(ctx, 4, "padding_value"))
      return DFX_EINVAL;
    s.rows = dfx__tensor_get_i64(ctx->in[2], 0);
    s.cols = dfx__tensor_get_i64(ctx->in[3], 0);
    padv = ctx->in[4];
    if (version == 3 && read_align(ctx, &s)) return DFX_EINVAL;
  }
  int r = x->ndims;
  int64_t nd = s.upper - s.lower + 1;
  char b[64];
  if (r < (nd > 1 ? 2 : 1))
    return dfx__kctx_fail(ctx, DFX_EINVAL, "diagonal must be at least %s, received shape: %s",
                          nd > 1 ? "2-dim for a range of diagonals" : "1-dim", DFX_SHAPE_STR(x, b));
  if (nd > 1 && x->dims[r - 2] != nd)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "The number of diagonals provided in the input does not match the lower_diag_index and upper_diag_index range.");
  s.max_len = x->dims[r - 1];
  /* The smallest matrix that holds every given diagonal at full length.
   * -1 asks for inference (both unknown: the larger, square); TF requires at
   * least one of rows and cols to be that minimum. */
  int64_t lo0 = s.lower > 0 ? s.lower : 0, up0 = s.upper < 0 ? s.upper : 0;
  int64_t min_rows = s.max_len - up0, min_cols = s.max_len + lo0;
  if (s.rows == -1 && s.cols == -1) s.rows = s.cols = min_rows > min_cols ? min_rows : min_cols;
  else if (s.rows == -1) s.rows = min_rows;
  else if (s.cols == -1) s.cols = min_cols;
  /* The longest diagonal in [lower, upper] must be exactly max_len: both
   * sides at least their minimum, and one of them equal to it (TF's check). */
  if (!(s.rows == min_rows || s.cols == min_cols) || s.rows < min_rows || s.cols < min_cols)
    return dfx__kctx_fail(ctx, DFX_EINVAL,
                          "The number of rows or columns is not consistent with the specified d_lower, d_upper, and "
                          "diagonal.");
  int br = r - (nd > 1 ? 2 : 1);
  if (br + 2 > DFX_MAX_DIMS) return dfx__kctx_fail(ctx, DFX_EINVAL, "MatrixDiag output rank too large");
  int64_t od[DFX_MAX_DIMS];
  memcpy(od, x->dims, sizeof(int64_t) * (size_t)br);
  od[br] = s.rows;
  od[br + 1] = s.cols;
  char what[96];
  snprintf(what, sizeof what, "MatrixDiag num_rows %lld, num_cols %lld", (long long)s.rows, (long long)s.cols);
  int64_t batch = dfx__arr_prod(x->dims, 0, br);
  dfx_code c = pad_check(ctx, &s, batch, br + 2, od, x, padv, what);
  dfx_tensor *y = c ? NULL : dfx__arr_alloc(ctx, 0, (dfx_dtype)x->dtype, br + 2, od, what);
  if (!y || (c = pad_fill(ctx, y, padv))) return ctx->st->code;
  /* Matrix bt of the output and diagonal block bt of x: msz and psz
   * elements apart. */
  int64_t msz = s.rows * s.cols, psz = nd * s.max_len, work = 0;
  for (int64_t bt = 0; bt < batch; bt++) {
    FOR_DIAG(&s, nd, if ((c = dfx__arr_copy(ctx, y, bt * msz + midx, x, bt * psz + pidx, 1))) return c);
    if ((c = dfx__arr_tick(ctx, &work, msz + 1))) return c;
  }
  return DFX_OK;
}

static dfx_code matrix_diag_kernel(dfx_kctx *ctx) { return matrix_diag(ctx, 1); }
static dfx_code matrix_diag_v2_kernel(dfx_kctx *ctx) { return matrix_diag(ctx, 2); }
static dfx_code matrix_diag_v3_kernel(dfx_kctx *ctx) { return matrix_diag(ctx, 3); }

/* The longest diagonal in [lower, upper] of a rows x cols matrix. */
static int64_t max_diag_len(const dspec *s) {
  int64_t a = s->rows + (s->upper < 0 ? s->upper : 0), b = s->cols - (s->lower > 0 ? s->lower : 0);
  int64_t m = a < b ? a : b;
  return m < 0 ? 0 : m;
}

/* Validates k against an input of rows x cols (MatrixDiagPart/SetDiag). */
static dfx_code check_k(dfx_kctx *ctx, const dspec *s) {
  /* TF's bound: -rows < k < cols; k = 0 is always valid, even for an empty
   * matrix. */
  if (!((-s->rows < s->lower && s->lower < s->cols) || s->lower == 0))
    return dfx__kctx_fail(ctx, DFX_EINVAL, "lower_diag_index is out of bound: %lld. It must be between %lld and %lld",
                          (long long)s->lower, (long long)-s->rows, (long long)s->cols);
  if (!((-s->rows < s->upper && s->upper < s->cols) || s->upper == 0))
    return dfx__kctx_fail(ctx, DFX_EINVAL, "upper_diag_index is out of bound: %lld. It must be between %lld and %lld",
                          (long long)s->upper, (long long)-s->rows, (long long)s->cols);
  return DFX_OK;
}

static dfx_code matrix_diag_part(dfx_kctx *ctx, int version) {
  const dfx_tensor *x = ctx->in[0];
  dspec s = {0, 0, 0, 0, 0, true, true};
  const dfx_tensor *padv = NULL;
  int r = x->ndims;
  char b[64];
  if (r < 2) return dfx__kctx_fail(ctx, DFX_EINVAL, "input must be at least 2-dim, received shape: %s", DFX_SHAPE_STR(x, b));
  s.rows = x->dims[r - 2];
  s.cols = x->dims[r - 1];
  if (version >= 2) {
    if (read_k(ctx, 1, &s) || need_scalar(ctx, 2, "padding_value")) return DFX_EINVAL;
    padv = ctx->in[2];
    if (version == 3 && read_align(ctx, &s)) return DFX_EINVAL;
    if (check_k(ctx, &s)) return DFX_EINVAL;
  }
  int64_t nd = s.upper - s.lower + 1;
  s.max_len = max_diag_len(&s);
  int64_t od[DFX_MAX_DIMS];
  int on = r - 2;
  memcpy(od, x->dims, sizeof(int64_t) * (size_t)on);
  if (nd > 1) od[on++] = nd;
  od[on++] = s.max_len;
  if (on > DFX_MAX_DIMS) return dfx__kctx_fail(ctx, DFX_EINVAL, "MatrixDiagPart output rank too large");
  int64_t batch = dfx__arr_prod(x->dims, 0, r - 2);
  dfx_code c = pad_check(ctx, &s, batch, on, od, x, padv, "MatrixDiagPart k");
  dfx_tensor *y = c ? NULL : dfx__arr_alloc(ctx, 0, (dfx_dtype)x->dtype, on, od, "MatrixDiagPart k");
  if (!y || (c = pad_fill(ctx, y, padv))) return ctx->st->code;
  int64_t msz = s.rows * s.cols, psz = nd * s.max_len, work = 0;
  for (int64_t bt = 0; bt < batch; bt++) {
    FOR_DIAG(&s, nd, if ((c = dfx__arr_copy(ctx, y, bt * psz + pidx, x, bt * msz + midx, 1))) return c);
    if ((c = dfx__arr_tick(ctx, &work, psz + 1))) return c;
  }
  return DFX_OK;
}

static dfx_code matrix_diag_part_kernel(dfx_kctx *ctx) { return matrix_diag_part(ctx, 1); }
static dfx_code matrix_diag_part_v2_kernel(dfx_kctx *ctx) { return matrix_diag_part(ctx, 2); }
static dfx_code matrix_diag_part_v3_kernel(dfx_kctx *ctx) { return matrix_diag_part(ctx, 3); }

static dfx_code matrix_set_diag(dfx_kctx *ctx, int version) {
  const dfx_tensor *x = ctx->in[0], *dg = ctx->in[1];
  dspec s = {0, 0, 0, 0, 0, true, true};
  int r = x->ndims;
  char b1[128], b2[128];
  if (r < 2) return dfx__kctx_fail(ctx, DFX_EINVAL, "input must be at least 2-dim, received shape: %s", DFX_SHAPE_STR(x, b1));
  s.rows = x->dims[r - 2];
  s.cols = x->dims[r - 1];
  if (version >= 2) {
    if (read_k(ctx, 2, &s)) return DFX_EINVAL;
    if (version == 3 && read_align(ctx, &s)) return DFX_EINVAL;
    if (check_k(ctx, &s)) return DFX_EINVAL;
  }
  int64_t nd = s.upper - s.lower + 1;
  s.max_len = max_diag_len(&s);
  /* The diagonal must be input.shape[:-2] + ([num_diags] if a range) + [max_len]. */
  int wr = r - 2 + (nd > 1) + 1;
  bool ok = dg->ndims == wr && dg->dims[wr - 1] == s.max_len && (nd == 1 || dg->dims[wr - 2] == nd);
  for (int i = 0; ok && i < r - 2; i++) ok = dg->dims[i] == x->dims[i];
  if (!ok)
    return dfx__kctx_fail(ctx, DFX_EINVAL,
                          "diagonal must have shape input.shape[:-2] + [num_diags] + [max_diag_len], but received input "
                          "shape: %s and diagonal shape: %s",
                          DFX_SHAPE_STR(x, b1), DFX_SHAPE_STR(dg, b2));
  dfx_tensor *y = dfx__kctx_alloc(ctx, 0, (dfx_dtype)x->dtype, r, x->dims);
  if (!y) return DFX_ENOMEM;
  /* Start from a full copy of the input; only the diagonals are replaced. */
  dfx_code c = dfx__arr_copy(ctx, y, 0, x, 0, x->count);
  if (c) return c;
  int64_t batch = dfx__arr_prod(x->dims, 0, r - 2), msz = s.rows * s.cols, psz = nd * s.max_len, work = 0;
  for (int64_t bt = 0; bt < batch; bt++) {
    FOR_DIAG(&s, nd, if ((c = dfx__arr_copy(ctx, y, bt * msz + midx, dg, bt * psz + pidx, 1))) return c);
    if ((c = dfx__arr_tick(ctx, &work, psz + 1))) return c;
  }
  return DFX_OK;
}

static dfx_code matrix_set_diag_kernel(dfx_kctx *ctx) { return matrix_set_diag(ctx, 1); }
static dfx_code matrix_set_diag_v2_kernel(dfx_kctx *ctx) { return matrix_set_diag(ctx, 2); }
static dfx_code matrix_set_diag_v3_kernel(dfx_kctx *ctx) { return matrix_set_diag(ctx, 3); }

static dfx_code band_part_kernel(dfx_kctx *ctx) {
  const dfx_tensor *x = ctx->in[0];
  int r = x->ndims;
  char b[64];
  if (r < 2) return dfx__kctx_fail(ctx, DFX_EINVAL, "input must be at least 2-dim, received shape: %s", DFX_SHAPE_STR(x, b));
  int64_t m = x->dims[r - 2], n = x->dims[r - 1];
  if (ctx->in[1]->ndims != 0)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "num_lower must be scalar, got shape %s", DFX_SHAPE_STR(ctx->in[1], b));
  if (ctx->in[2]->ndims != 0)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "num_upper must be scalar, got shape %s", DFX_SHAPE_STR(ctx->in[2], b));
  int64_t lo = dfx__tensor_get_i64(ctx->in[1], 0), up = dfx__tensor_get_i64(ctx->in[2], 0);
  if (lo > m)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "num_lower must be negative or less or equal to number of rows (%lld) got: %lld",
                          (long long)m, (long long)lo);
  if (up > n)
    return dfx__kctx_fail(ctx, DFX_EINVAL,
                          "num_upper must be negative or less or equal to number of columns (%lld) got: %lld",
                          (long long)n, (long long)up);
  dfx_tensor *y = dfx__kctx_alloc(ctx, 0, (dfx_dtype)x->dtype, r, x->dims);
  if (!y) return DFX_ENOMEM;
  if (y->dtype != DFX_STRING) memset(y->data, 0, y->nbytes);
  int64_t batch = dfx__arr_prod(x->dims, 0, r - 2), work = 0;
  /* Each row keeps the contiguous column range [i - lo, i + up]. */
  for (int64_t bt = 0; bt < batch; bt++)
    for (int64_t i = 0; i < m; i++) {
      /* A negative count keeps the whole lower (or upper) triangle, TF's rule. */
      int64_t j0 = lo < 0 ? 0 : i - lo, j1 = up < 0 ? n : i + up + 1;
      if (j0 < 0) j0 = 0;
      if (j1 > n) j1 = n;
      int64_t base = (bt * m + i) * n;
      dfx_code c = j1 > j0 ? dfx__arr_copy(ctx, y, base + j0, x, base + j0, j1 - j0) : DFX_OK;
      if (c || (c = dfx__arr_tick(ctx, &work, n + 1))) return c;
    }
  return DFX_OK;
}

static const dfx_kernel_def kernels[] = {
    {"Diag", DIAG_TYPES, diag_kernel, DFX_KERNEL_CHEAP, NULL, NULL},
    {"DiagPart", DIAG_TYPES, diag_part_kernel, DFX_KERNEL_CHEAP, NULL, NULL},
    {"MatrixDiag", DFX_ARR_T_COPY, matrix_diag_kernel, DFX_KERNEL_CHEAP, NULL, NULL},
    {"MatrixDiagV2", DFX_ARR_T_COPY, matrix_diag_v2_kernel, DFX_KERNEL_CHEAP, NULL, NULL},
    {"MatrixDiagV3", DFX_ARR_T_COPY, matrix_diag_v3_kernel, DFX_KERNEL_CHEAP, NULL, NULL},
    {"MatrixDiagPart", DFX_ARR_T_COPY, matrix_diag_part_kernel, DFX_KERNEL_CHEAP, NULL, NULL},
    {"MatrixDiagPartV2", DFX_ARR_T_COPY, matrix_diag_part_v2_kernel, DFX_KERNEL_CHEAP, NULL, NULL},
    {"MatrixDiagPartV3", DFX_ARR_T_COPY, matrix_diag_part_v3_kernel, DFX_KERNEL_CHEAP, NULL, NULL},
    {"MatrixSetDiag", DFX_ARR_T_COPY, matrix_set_diag_kernel, DFX_KERNEL_CHEAP, NULL, NULL},
    {"MatrixSetDiagV2", DFX_ARR_T_COPY, matrix_set_diag_v2_kernel, DFX_KERNEL_CHEAP, NULL, NULL},
    {"MatrixSetDiagV3", DFX_ARR_T_COPY, matrix_set_diag_v3_kernel, DFX_KERNEL_CHEAP, NULL, NULL},
    {"MatrixBandPart", DFX_ARR_T_COPY "; Tindex: {int32, int64}", band_part_kernel, DFX_KERNEL_CHEAP, NULL, NULL},
    {NULL}};

void dfx__kernels_array_diag(dfx_registry *r);
void dfx__kernels_array_diag(dfx_registry *r) { dfx__kernels_add(r, kernels); }
