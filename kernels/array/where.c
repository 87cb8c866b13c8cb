/* where.c - Where (coordinates of true/nonzero elements, row-major order,
 * int64 [num_true, rank]) and OneHot (off_value fill, then on_value at each
 * in-range index; out-of-range indices leave their row all off). */
#include <stdio.h>
#include <string.h>

#include "autil.h"


/* "True" is nonzero, as TF's Where reads any dtype; a complex number is
 * true when either part is nonzero. */
static bool nonzero(const dfx_tensor *x, int64_t i) {
  switch ((dfx_dtype)x->dtype) {
    case DFX_C64: return ((const float *)x->data)[2 * i] != 0 || ((const float *)x->data)[2 * i + 1] != 0;
    case DFX_C128: return ((const double *)x->data)[2 * i] != 0 || ((const double *)x->data)[2 * i + 1] != 0;
    case DFX_F16: case DFX_BF16: case DFX_F32: case DFX_F64: return dfx__tensor_get_f64(x, i) != 0;
    default: return dfx__tensor_get_i64(x, i) != 0;
  }
}

static dfx_code where_kernel(dfx_kctx *ctx) {
  const dfx_tensor *x = ctx->in[0];
  int r = x->ndims;
  int64_t n = 0, work = 0;
  /* Two passes: the output's row count is the number of true elements, so
   * it must be known before the output can be allocated. */
  for (int64_t i = 0; i < x->count; i++) n += nonzero(x, i);
  int64_t od[2] = {n, r};
  dfx_tensor *y = dfx__kctx_alloc(ctx, 0, DFX_I64, 2, od);
  if (!y) return DFX_ENOMEM;
  int64_t *o = y->data, c[DFX_MAX_DIMS] = {0};
  for (int64_t i = 0; i < x->count; i++) {
    if (nonzero(x, i)) {
      memcpy(o, c, sizeof(int64_t) * (size_t)r);
      o += r;
    }
    int k = r - 1;
    /* c is i's coordinate, kept by an odometer instead of dividing i. */
    for (; k >= 0 && ++c[k] == x->dims[k]; k--) c[k] = 0;
    /* Polls once per innermost row, so a check per element is not needed. */
    dfx_code rc = k < r - 1 ? dfx__arr_tick(ctx, &work, x->dims[r - 1]) : DFX_OK;
    if (rc) return rc;
  }
  return DFX_OK;
}

/* axis is -1 (last) or an output dim. */
static dfx_code one_hot_init(const dfx_node *n, void **state, dfx_status *st) {
  (void)state;
  return dfx__arr_attr_range(n, "axis", -1, DFX_MAX_DIMS - 1, st);
}

static dfx_code one_hot_kernel(dfx_kctx *ctx) {
  const dfx_tensor *ix = ctx->in[0], *td = ctx->in[1], *on = ctx->in[2], *off = ctx->in[3];
  char b[64];
  int r = ix->ndims;
  int64_t axis = dfx__attr_int(ctx->node, "axis", -1);
  if (axis != -1 && (axis < 0 || axis > r))
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Expected axis to be -1 or between [0, %d).  But received: %lld", r + 1,
                          (long long)axis);
  if (td->ndims != 0) return dfx__kctx_fail(ctx, DFX_EINVAL, "depth must be a scalar, but got: %s", DFX_SHAPE_STR(td, b));
  if (on->ndims != 0) return dfx__kctx_fail(ctx, DFX_EINVAL, "on_value must be a scalar, but got: %s", DFX_SHAPE_STR(on, b));
  if (off->ndims != 0)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "off_value must be a scalar, but got: %s", DFX_SHAPE_STR(off, b));
  int64_t depth = dfx__tensor_get_i64(td, 0);
  if (depth < 0) return dfx__kctx_fail(ctx, DFX_EINVAL, "depth must be non-negative, got: %lld", (long long)depth);
  if (r + 1 > DFX_MAX_DIMS) return dfx__kctx_fail(ctx, DFX_EINVAL, "OneHot output rank too large");
  int a = axis == -1 ? r : (int)axis;
  int64_t od[DFX_MAX_DIMS];
  for (int i = 0, j = 0; i <= r; i++) od[i] = i == a ? depth : ix->dims[j++];
  char what[64];
  snprintf(what, sizeof what, "OneHot depth %lld", (long long)depth);
  int64_t count = dfx__shape_count(r + 1, od);
  if (on->dtype == DFX_STRING) { /* off everywhere, plus at most one on per index */
    uint64_t bytes = 0;
    bool ok = count >= 0 && dfx__arr_str_add(&bytes, (uint64_t)count, dfx__arr_str_len(off, 0)) &&
              dfx__arr_str_add(&bytes, (uint64_t)ix->count, dfx__arr_str_len(on, 0));
    dfx_code c = dfx__arr_str_limit(ctx, ok, bytes, what);
    if (c) return c;
  }
  dfx_tensor *y = dfx__arr_alloc(ctx, 0, (dfx_dtype)on->dtype, r + 1, od, what);
  if (!y) return ctx->st->code;
  dfx_code c = dfx__arr_fill(ctx, y, 0, y->count, off, 0);
  if (c) return c;
  /* The output is [prefix, depth, suffix]: index (p, s) with value v sets
   * element (p, v, s); any other v leaves its row all off. */
  int64_t suffix = dfx__arr_prod(ix->dims, a, r), prefix = dfx__arr_prod(ix->dims, 0, a), work = 0;
  for (int64_t p = 0; p < prefix; p++) {
    for (int64_t s = 0; s < suffix; s++) {
      int64_t v = dfx__tensor_get_i64(ix, p * suffix + s);
      if (v >= 0 && v < depth && (c = dfx__arr_copy(ctx, y, (p * depth + v) * suffix + s, on, 0, 1))) return c;
    }
    if ((c = dfx__arr_tick(ctx, &work, suffix + 1))) return c;
  }
  return DFX_OK;
}

static const dfx_kernel_def kernels[] = {
    {"Where",
     "T: {float, double, int32, uint8, int16, int8, complex64, int64, qint8, quint8, qint32, bfloat16, qint16, "
     "quint16, uint16, complex128, half, uint32, uint64, bool}",
     where_kernel, DFX_KERNEL_CHEAP, NULL, NULL},
    {"OneHot", "T: " DFX_ARR_COPY_TYPES "; TI: {uint8, int8, int32, int64}", one_hot_kernel, DFX_KERNEL_CHEAP,
     one_hot_init, NULL},
    {NULL}};

void dfx__kernels_array_where(dfx_registry *r);
void dfx__kernels_array_where(dfx_registry *r) { dfx__kernels_add(r, kernels); }
