/* select.c - Select (TF1 condition rules), SelectV2 (full broadcasting), AddN,
 * AccumulateNV2, ClipByValue, ZerosLike, OnesLike and CheckNumerics.
 * Select copies elements of any dtype (strings deep-copied); AddN sums
 * left to right in T, rounding half types after every addition as TF does. */
#include <math.h>
#include <string.h>

#include "alloc.h"
#include "ew.h"

static dfx_code fail_out(dfx_kctx *ctx, dfx_code c) {
  dfx__tensor_unref(ctx->out[0]);
  ctx->out[0] = NULL;
  return c;
}

static bool copy_str(dfx_str *d, const dfx_str *s) {
  d->len = 0;
  d->ptr = NULL;
  if (!s->len) return true;
  d->ptr = dfx__malloc(s->len);
  if (!d->ptr) return false;
  memcpy(d->ptr, s->ptr, s->len);
  d->len = s->len;
  return true;
}

/* ---- Select / SelectV2 ---- */

/* o[io] = c[ia] ? t[ib] : e[ic] for io in [lo, hi), with the 3-operand
 * broadcast bc (operands c, t, e). False when out of memory for strings. */
static bool select_range(const dfx_bcast *bc, int64_t lo, int64_t hi, const uint8_t *c, const dfx_tensor *t,
                         const dfx_tensor *e, dfx_tensor *o) {
  if (t->dtype == DFX_STRING) {
    const dfx_str *pt = t->data, *pe = e->data;
    dfx_str *po = o->data;
    bool ok = true;
    EW_LOOP3(bc, lo, hi, {
      if (ok) ok = copy_str(&po[io], c[ia] ? &pt[ib] : &pe[ic]);
    });
    return ok;
  }
#define SEL(T)                                                \
  {                                                           \
    const T *restrict pt = t->data, *restrict pe = e->data;   \
    T *restrict po = o->data;                                 \
    EW_LOOP3(bc, lo, hi, po[io] = c[ia] ? pt[ib] : pe[ic]);   \
    return true;                                              \
  }
  /* Declared dtypes have a fixed size of 1 to 16 bytes, or are strings. */
  switch (dfx__dtype_storage((dfx_dtype)t->dtype)) {
    case 1: SEL(uint8_t)
    case 2: SEL(uint16_t)
    case 4: SEL(uint32_t)
    case 8: SEL(uint64_t)
    /* 16 bytes: complex128, the only storage that size. */
    default: SEL(dfx_c128)
  }
#undef SEL
}

static dfx_code select_bcast(dfx_kctx *ctx, const dfx_bcast *bc, const uint8_t *c, const dfx_tensor *t,
                             const dfx_tensor *e, dfx_tensor *o) {
  const int64_t n = bc->count, grain = dfx__bcast_grain(bc, EW_POLL_GRAIN);
  for (int64_t lo = 0; lo < n; lo += grain) {
    dfx_code code = lo > 0 ? dfx__kctx_poll(ctx) : DFX_OK;
    if (code != DFX_OK) return fail_out(ctx, code);
    if (!select_range(bc, lo, n - lo > grain ? lo + grain : n, c, t, e, o))
      return fail_out(ctx, dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory copying strings"));
  }
  return DFX_OK;
}

static dfx_code select_common(dfx_kctx *ctx, bool v2) {
  const dfx_tensor *c = ctx->in[0], *t = ctx->in[1], *e = ctx->in[2];
  char b1[128], b2[128];
  if (c->dtype != DFX_BOOL) return dfx__kctx_fail(ctx, DFX_EINVAL, "condition must be bool");
  if (t->dtype != e->dtype) return dfx__kctx_fail(ctx, DFX_EINVAL, "'then' and 'else' must have the same dtype");
  const dfx_tensor *ops3[3] = {c, t, e};
  if (!v2) {
    if (!dfx__tensor_same_shape(t, e))
      return dfx__kctx_fail(ctx, DFX_EINVAL, "'then' and 'else' must have the same size.  but received: %s vs. %s",
                            DFX_SHAPE_STR(t, b1), DFX_SHAPE_STR(e, b2));
    if (c->ndims == 0) {
      /* TF1 Select with a scalar condition picks a whole tensor: share it. */
      dfx__kctx_forward(ctx, *(const uint8_t *)c->data ? 1 : 2, 0);
      return DFX_OK;
    }
    if (!dfx__tensor_same_shape(c, t)) {
      if (c->ndims != 1)
        return dfx__kctx_fail(ctx, DFX_EINVAL,
                              "'condition' must be a scalar, a vector or have the same shape as 'then'; "
                              "condition %s vs. then %s",
                              DFX_SHAPE_STR(c, b1), DFX_SHAPE_STR(t, b2));
      if (t->ndims < 1)
        return dfx__kctx_fail(ctx, DFX_EINVAL, "'then' must be at least a vector, but saw shape: %s",
                              DFX_SHAPE_STR(t, b1));
      if (t->dims[0] != c->dims[0])
        return dfx__kctx_fail(ctx, DFX_EINVAL,
                              "Number of batches of 'then' must match size of 'condition', but saw: %lld vs. %lld",
                              (long long)t->dims[0], (long long)c->dims[0]);
      /* A vector condition selects whole rows: view it as [n, 1, ..., 1]. */
      /* A stack copy of the header only: data is still c's, and cv is never
       * referenced or freed. */
      dfx_tensor cv = *c;
      cv.ndims = t->ndims;
      for (int d = 1; d < t->ndims; d++) cv.dims[d] = 1;
      const dfx_tensor *ops3b[3] = {&cv, t, e};
      dfx_bcast bc;
      if (!dfx__bcast_init(&bc, 3, ops3b)) return dfx__bcast_fail(ctx, c, t);
      dfx_tensor *o = dfx__kctx_alloc(ctx, 0, (dfx_dtype)t->dtype, t->ndims, t->dims);
      if (!o) return dfx_status_code(ctx->st);
      return select_bcast(ctx, &bc, c->data, t, e, o);
    }
  } else if (c->ndims == 0 && dfx__tensor_same_shape(t, e)) {
    dfx__kctx_forward(ctx, *(const uint8_t *)c->data ? 1 : 2, 0);
    return DFX_OK;
  }
  dfx_bcast bc;
  if (!dfx__bcast_init(&bc, 3, ops3)) {
    if (!dfx__tensor_same_shape(t, e)) return dfx__bcast_fail(ctx, t, e);
    return dfx__bcast_fail(ctx, c, t);
  }
  dfx_tensor *o = dfx__kctx_alloc(ctx, 0, (dfx_dtype)t->dtype, bc.ndims, bc.dims);
  if (!o) return dfx_status_code(ctx->st);
  return select_bcast(ctx, &bc, c->data, t, e, o);
}

static dfx_code k_select(dfx_kctx *ctx) { return select_common(ctx, false); }
static dfx_code k_select_v2(dfx_kctx *ctx) { return select_common(ctx, true); }

/* ---- AddN / AccumulateNV2 ---- */

/* o[i] = in[0][i] + in[1][i] + ... left to right, for i in [lo, hi). */
static void addn_range(dfx_dtype t, void *o, const dfx_tensor *const *in, int n, int64_t lo, int64_t hi) {
  switch (t) {
#define C(DT, T, ADD)                                                       \
  case DT: {                                                                \
    T *restrict po = o;                                                     \
    const T *restrict p0 = in[0]->data;                                     \
    for (int64_t i = lo; i < hi; i++) po[i] = p0[i];                        \
    for (int k = 1; k < n; k++) {                                           \
      const T *restrict pk = in[k]->data;                                   \
      for (int64_t i = lo; i < hi; i++) po[i] = ADD(T, po[i], pk[i]);       \
    }                                                                       \
    return;                                                                 \
  }
#define IADD(T, a, b) EW_WADD(T, a, b)
#define FADD(T, a, b) ((a) + (b))
#define HADD(T, a, b) dfx__f32_to_f16(dfx__f16_to_f32(a) + dfx__f16_to_f32(b))
#define BADD(T, a, b) dfx__f32_to_bf16(dfx__bf16_to_f32(a) + dfx__bf16_to_f32(b))
#define CADD(T, a, b) ((T){(a).re + (b).re, (a).im + (b).im})
#define CI(DT, T) C(DT, T, IADD)
    DFX_INT_TYPES(CI)
    C(DFX_F32, float, FADD)
    C(DFX_F64, double, FADD)
    C(DFX_F16, uint16_t, HADD)
    C(DFX_BF16, uint16_t, BADD)
    C(DFX_C64, dfx_c64, CADD)
    C(DFX_C128, dfx_c128, CADD)
#undef CI
#undef C
    default: return; /* not declared */
  }
}

/* Whether a tensor of x's shape has shape s (dims of -1 match any size). */
static bool shape_matches(const dfx_shape *s, const dfx_tensor *x) {
  if (s->rank != x->ndims) return false;
  for (int d = 0; d < s->rank; d++)
    if (s->dims[d] != -1 && s->dims[d] != x->dims[d]) return false;
  return true;
}

/* AccumulateNV2: checks its shape attr once; the state is that shape when
 * its rank is known (TF's shape function merges it with the inputs'). */
static dfx_code accumulate_init(const dfx_node *n, void **state, dfx_status *st) {
  const dfx_attr *a = dfx__node_attr(n, "shape");
  *state = NULL;
  if (!a || a->kind != DFX_ATTR_SHAPE || a->v.shape.rank < 0) return DFX_OK;
  if (a->v.shape.rank > DFX_MAX_DIMS)
    return dfx__status_set(st, DFX_EINVAL, "attr shape has rank %d (at most %d supported)", a->v.shape.rank,
                           DFX_MAX_DIMS);
  for (int d = 0; d < a->v.shape.rank; d++)
    if (a->v.shape.dims[d] < -1)
      return dfx__status_set(st, DFX_EINVAL, "attr shape has dim %d = %lld", d, (long long)a->v.shape.dims[d]);
  *state = (void *)&a->v.shape; /* the node outlives its kernel state */
  return DFX_OK;
}

static dfx_code k_addn(dfx_kctx *ctx) {
  int n = ctx->n_in;
  if (n < 1) return dfx__kctx_fail(ctx, DFX_EINVAL, "AddN needs at least one input");
  const dfx_tensor *x0 = ctx->in[0];
  for (int k = 1; k < n; k++) {
    if (ctx->in[k]->dtype != x0->dtype) return dfx__kctx_fail(ctx, DFX_EINVAL, "AddN inputs differ in dtype");
    if (!dfx__tensor_same_shape(ctx->in[k], x0)) {
      char b1[128], b2[128];
      return dfx__kctx_fail(ctx, DFX_EINVAL,
                            "Inputs to operation %s of type %s must have the same size and shape.  Input 0: %s != "
                            "input %d: %s",
                            ctx->node->name, ctx->node->op, DFX_SHAPE_STR(x0, b1), k, DFX_SHAPE_STR(ctx->in[k], b2));
    }
  }
  const dfx_shape *want = ctx->state; /* AccumulateNV2's shape attr, when it is known */
  if (want && !shape_matches(want, x0)) {
    char b1[128], b2[128];
    return dfx__kctx_fail(ctx, DFX_EINVAL, "AccumulateNV2: inputs have shape %s but attr shape is %s",
                          DFX_SHAPE_STR(x0, b1), dfx__shape_str(want->rank, want->dims, b2, sizeof b2));
  }
  if (n == 1) {
    /* One input is its own sum: share it rather than copy. */
    dfx__kctx_forward(ctx, 0, 0);
    return DFX_OK;
  }
  dfx_tensor *o = dfx__kctx_alloc(ctx, 0, (dfx_dtype)x0->dtype, x0->ndims, x0->dims);
  if (!o) return dfx_status_code(ctx->st);
  /* Chunks of about EW_POLL_GRAIN additions, with a poll between them. */
  /* Each element costs n - 1 additions, so the element grain shrinks with n. */
  const int64_t cnt = x0->count, grain = EW_POLL_GRAIN / n > 0 ? EW_POLL_GRAIN / n : 1;
  for (int64_t lo = 0; lo < cnt; lo += grain) {
    dfx_code c = lo > 0 ? dfx__kctx_poll(ctx) : DFX_OK;
    if (c != DFX_OK) return fail_out(ctx, c);
    addn_range((dfx_dtype)x0->dtype, o->data, (const dfx_tensor *const *)ctx->in, n, lo,
               cnt - lo > grain ? lo + grain : cnt);
  }
  return DFX_OK;
}

/* ---- ClipByValue ---- */

/* o[i] = x[i] clipped, for i in [i0, i1); the bounds are scalars or shaped
 * like x. min with the upper bound first, then max with the lower
 * bound (TF's order). */
static void clip_range(const dfx_tensor *x, const dfx_tensor *mn, const dfx_tensor *mx, dfx_tensor *o, int64_t i0,
                       int64_t i1) {
  const int64_t sl = mn->ndims ? 1 : 0, sh = mx->ndims ? 1 : 0;
  /* With l > h the order decides: the result is l, as in TF. A NaN in x
   * fails both comparisons and passes through. */
  switch ((dfx_dtype)x->dtype) {
#define C(DT, T)                                                      \
  case DT: {                                                          \
    const T *px = x->data, *pl = mn->data, *ph = mx->data;            \
    T *po = o->data;                                                  \
    for (int64_t i = i0; i < i1; i++) {                               \
      T v = px[i], l = pl[i * sl], h = ph[i * sh];                    \
      v = h < v ? h : v;                                              \
      po[i] = v < l ? l : v;                                          \
    }                                                                 \
    return;                                                           \
  }
    DFX_REAL_TYPES(C)
#undef C
    default: { /* half types */
      const bool h16 = x->dtype == DFX_F16;
      const uint16_t *px = x->data, *pl = mn->data, *ph = mx->data;
      uint16_t *po = o->data;
      for (int64_t i = i0; i < i1; i++) {
        float v = h16 ? dfx__f16_to_f32(px[i]) : dfx__bf16_to_f32(px[i]);
        float l = h16 ? dfx__f16_to_f32(pl[i * sl]) : dfx__bf16_to_f32(pl[i * sl]);
        float h = h16 ? dfx__f16_to_f32(ph[i * sh]) : dfx__bf16_to_f32(ph[i * sh]);
        /* the result is one of the inputs: copy its bits */
        uint16_t r = px[i];
        if (h < v) {
          v = h;
          r = ph[i * sh];
        }
        if (v < l) r = pl[i * sl];
        po[i] = r;
      }
    }
  }
}

static dfx_code k_clip(dfx_kctx *ctx) {
  const dfx_tensor *x = ctx->in[0], *mn = ctx->in[1], *mx = ctx->in[2];
  char b1[128], b2[128], b3[128];
  if (mn->dtype != x->dtype || mx->dtype != x->dtype)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "ClipByValue inputs must have the same dtype");
  if ((mn->ndims != 0 && !dfx__tensor_same_shape(mn, x)) || (mx->ndims != 0 && !dfx__tensor_same_shape(mx, x)))
    return dfx__kctx_fail(ctx, DFX_EINVAL,
                          "clip_value_min and clip_value_max must be either scalars or have the same shape as t: "
                          "t shape: %s clip_value_min shape: %s clip_value_max shape: %s",
                          DFX_SHAPE_STR(x, b1), DFX_SHAPE_STR(mn, b2), DFX_SHAPE_STR(mx, b3));
  dfx_tensor *o = dfx__kctx_alloc(ctx, 0, (dfx_dtype)x->dtype, x->ndims, x->dims);
  if (!o) return dfx_status_code(ctx->st);
  for (int64_t i = 0; i < x->count; i += EW_POLL_GRAIN) {
    dfx_code c = i > 0 ? dfx__kctx_poll(ctx) : DFX_OK;
    if (c != DFX_OK) return fail_out(ctx, c);
    clip_range(x, mn, mx, o, i, x->count - i > EW_POLL_GRAIN ? i + EW_POLL_GRAIN : x->count);
  }
  return DFX_OK;
}

/* ---- ZerosLike / OnesLike / CheckNumerics ---- */

static dfx_code k_zeros_like(dfx_kctx *ctx) {
  const dfx_tensor *x = ctx->in[0]; /* declared dtypes: zero bytes are zero (strings: empty) */
  dfx_tensor *o = dfx__kctx_alloc(ctx, 0, (dfx_dtype)x->dtype, x->ndims, x->dims);
  if (!o) return dfx_status_code(ctx->st);
  memset(o->data, 0, o->nbytes);
  return DFX_OK;
}

static dfx_code k_ones_like(dfx_kctx *ctx) {
  const dfx_tensor *x = ctx->in[0];
  dfx_tensor *o = dfx__kctx_alloc(ctx, 0, (dfx_dtype)x->dtype, x->ndims, x->dims);
  if (!o) return dfx_status_code(ctx->st);
  const int64_t n = x->count;
  switch ((dfx_dtype)x->dtype) {
#define C(DT, T)                                             \
  case DT:                                                   \
    for (int64_t i = 0; i < n; i++) ((T *)o->data)[i] = 1;   \
    return DFX_OK;
    DFX_REAL_TYPES(C)
    C(DFX_BOOL, uint8_t)
#undef C
    case DFX_F16:
      /* 1.0 as IEEE half (0x3c00) and as bfloat16 (0x3f80, float's top half). */
      for (int64_t i = 0; i < n; i++) ((uint16_t *)o->data)[i] = 0x3c00;
      return DFX_OK;
    case DFX_BF16:
      for (int64_t i = 0; i < n; i++) ((uint16_t *)o->data)[i] = 0x3f80;
      return DFX_OK;
    case DFX_C64:
      for (int64_t i = 0; i < n; i++) ((dfx_c64 *)o->data)[i] = (dfx_c64){1, 0};
      return DFX_OK;
    case DFX_C128:
      for (int64_t i = 0; i < n; i++) ((dfx_c128 *)o->data)[i] = (dfx_c128){1, 0};
      return DFX_OK;
    default:
      return fail_out(ctx, dfx__ew_unsupported(ctx, (dfx_dtype)x->dtype));
  }
}

static dfx_code k_check_numerics(dfx_kctx *ctx) {
  const dfx_tensor *x = ctx->in[0];
  bool has_nan = false, has_inf = false;
  for (int64_t lo = 0; lo < x->count; lo += EW_POLL_GRAIN) {
    dfx_code c = lo > 0 ? dfx__kctx_poll(ctx) : DFX_OK;
    if (c != DFX_OK) return c;
    const int64_t hi = x->count - lo > EW_POLL_GRAIN ? lo + EW_POLL_GRAIN : x->count;
    for (int64_t i = lo; i < hi; i++) {
      double v = dfx__tensor_get_f64(x, i); /* the four float types */
      has_nan |= isnan(v) != 0;
      has_inf |= isinf(v) != 0;
    }
  }
  if (has_nan || has_inf)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "%s : Tensor had %s values", dfx__attr_str(ctx->node, "message", ""),
                          has_nan && has_inf ? "Inf and NaN" : has_nan ? "NaN" : "Inf");
  dfx__kctx_forward(ctx, 0, 0);
  return DFX_OK;
}

/* Select and ZerosLike move elements by size: every dtype but resource and
 * variant. */
#define T_ANY_DATA                                                                                            \
  "T: {" EW_TY_FSU ", bool, string, complex64, complex128, qint8, quint8, qint16, quint16, qint32}"
#define T_ADDN "T: {" EW_TY_FSU ", complex64, complex128}"
static const dfx_kernel_def kernels[] = {
    {"Select", T_ANY_DATA, k_select, DFX_KERNEL_CHEAP, NULL, NULL},
    {"SelectV2", T_ANY_DATA, k_select_v2, DFX_KERNEL_CHEAP, NULL, NULL},
    {"AddN", T_ADDN, k_addn, DFX_KERNEL_CHEAP, NULL, NULL},
    {"AccumulateNV2", T_ADDN, k_addn, DFX_KERNEL_CHEAP, accumulate_init, NULL},
    {"ClipByValue", "T: {" EW_TY_FSU "}", k_clip, DFX_KERNEL_CHEAP, NULL, NULL},
    {"ZerosLike", T_ANY_DATA, k_zeros_like, DFX_KERNEL_CHEAP, NULL, NULL},
    {"OnesLike", "T: {" EW_TY_FSU ", bool, complex64, complex128}", k_ones_like, DFX_KERNEL_CHEAP, NULL, NULL},
    /* Stateful as in TF's OpDef: it must run (and fail the step) even when
     * its input is constant. */
    {"CheckNumerics", "T: {" EW_TY_F "}", k_check_numerics, DFX_KERNEL_CHEAP | DFX_KERNEL_STATEFUL, NULL, NULL},
    {NULL}};

void dfx__kernels_math_select(dfx_registry *r);
void dfx__kernels_math_select(dfx_registry *r) { dfx__kernels_add(r, kernels); }
