/* slice.c - StridedSlice, Slice, Transpose, ReverseV2, Tile, BroadcastTo.
 * Each op maps its output box onto the input with per-dim element strides
 * (possibly zero or negative) and hands the copy to dfx__arr_strided, which
 * merges contiguous dims and memcpy's innermost runs. */
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "autil.h"


/* Copies the box `dims` (rank r) of x starting at soff with strides ss into a
 * new output 0 of shape (on, od). `what` names the input values that size the
 * output. Only Tile and BroadcastTo make more elements than x has; they
 * repeat every element of x the same number of times, so a string output
 * holds x's bytes times out / in. */
static dfx_code box_out(dfx_kctx *ctx, int on, const int64_t *od, int r, const int64_t *dims, int64_t soff,
                        const int64_t *ss, const char *what) {
  const dfx_tensor *x = ctx->in[0];
  if (on > DFX_MAX_DIMS)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "output rank %d exceeds the supported maximum %d", on, DFX_MAX_DIMS);
  int64_t count = dfx__shape_count(on, od);
  /* Only an output larger than x can hold more string bytes than x does. */
  if (x->dtype == DFX_STRING && x->count && (count < 0 || count > x->count) &&
      dfx__arr_str_budget(ctx, what, 0, count < 0 ? -1 : count / x->count, dfx__arr_str_bytes(x)))
    return ctx->st->code;
  dfx_tensor *y = dfx__arr_alloc(ctx, 0, (dfx_dtype)x->dtype, on, od, what);
  if (!y) return ctx->st->code;
  int64_t ds[2 * DFX_MAX_DIMS];
  dfx__arr_strides(r, dims, ds);
  return dfx__arr_strided(ctx, y, 0, ds, x, soff, ss, r, dims);
}

/* ---- StridedSlice: TensorFlow's sparse -> dense spec expansion ---- */

/* The masks are int32 bit sets, so a spec has at most 32 entries; one is
 * kept for the implicit ellipsis added below. */
#define SS_MAX 32
enum { NEW_AXIS = -1, SHRINK_AXIS = -2 };

/* The five masks, checked once at init: TF reads them as int32. */
typedef struct {
  uint32_t begin, end, ellipsis, new_axis, shrink;
} ss_masks;

static dfx_code strided_slice_init(const dfx_node *n, void **state, dfx_status *st) {
  static const char *const names[5] = {"begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask",
                                       "shrink_axis_mask"};
  uint32_t m[5];
  for (int i = 0; i < 5; i++) {
    int64_t v = dfx__attr_int(n, names[i], 0);
    if (v < INT32_MIN || v > INT32_MAX)
      return dfx__status_set(st, DFX_EINVAL, "attr %s = %lld does not fit in int32", names[i], (long long)v);
    m[i] = (uint32_t)v;
  }
  /* More than one bit set. */
  if (m[2] & (m[2] - 1))
    return dfx__status_set(st, DFX_EINVAL, "Multiple ellipses in slice spec not allowed (attr ellipsis_mask = %d)",
                           (int)m[2]);
  /* Read-only after init, so concurrent calls of the kernel may share it. */
  ss_masks *s = dfx__malloc(sizeof *s);
  if (!s) return dfx__status_set(st, DFX_ENOMEM, "out of memory");
  *s = (ss_masks){m[0], m[1], m[2], m[3], m[4]};
  *state = s;
  return DFX_OK;
}

static void strided_slice_fini(void *state) { dfx__free(state); }

static dfx_code strided_slice_kernel(dfx_kctx *ctx) {
  const dfx_tensor *x = ctx->in[0], *tb = ctx->in[1], *te = ctx->in[2], *ts = ctx->in[3];
  char b1[64], b2[64], b3[64];
  if (tb->ndims != 1 || te->ndims != 1 || ts->ndims != 1 || tb->count != te->count || tb->count != ts->count)
    return dfx__kctx_fail(ctx, DFX_EINVAL,
                          "Expected begin, end, and strides to be 1D equal size tensors, but got shapes %s, %s, and %s "
                          "instead.",
                          DFX_SHAPE_STR(tb, b1), DFX_SHAPE_STR(te, b2), DFX_SHAPE_STR(ts, b3));
  if (tb->count > SS_MAX - 1)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "StridedSlice spec has %lld entries, at most %d supported",
                          (long long)tb->count, SS_MAX - 1);
  const ss_masks *mk = ctx->state;
  uint64_t bm = mk->begin, em = mk->end, elm = mk->ellipsis, nam = mk->new_axis, sam = mk->shrink;
  int sdims = (int)tb->count, r = x->ndims;
  int64_t sb[SS_MAX], se[SS_MAX], sst[SS_MAX];
  for (int i = 0; i < sdims; i++) {
    sb[i] = dfx__tensor_get_i64(tb, i);
    se[i] = dfx__tensor_get_i64(te, i);
    sst[i] = dfx__tensor_get_i64(ts, i);
  }
  /* Count new axes after the ellipsis; add an implicit trailing ellipsis. */
  int add_after = 0;
  bool seen = false;
  for (int i = 0; i < sdims; i++) {
    if (seen && ((nam >> i) & 1)) add_after++;
    if ((elm >> i) & 1) seen = true;
  }
  if (!seen) {
    elm |= (uint64_t)1 << sdims;
    sb[sdims] = se[sdims] = 0;
    sst[sdims] = 1;
    sdims++;
  }
  int64_t db[DFX_MAX_DIMS], de[DFX_MAX_DIMS], dst[DFX_MAX_DIMS];
  unsigned dbm = 0, dem = 0, dsm = 0;
  /* gather[] lists the output dims in order: the dense dim each one shows,
   * or NEW_AXIS (size 1); a shrunk dim is listed but makes no output dim. */
  int gather[SS_MAX + DFX_MAX_DIMS], ng = 0, full = 0;
  for (int i = 0; i < sdims; i++) {
    if ((elm >> i) & 1) {
      /* The ellipsis spans the dense dims that the entries after it do not use:
       * sdims - i - 1 of them follow, add_after of those (new axes) use none. */
      int next = r - (sdims - i) + 1 + add_after;
      if (next > r) next = r;
      for (; full < next; full++) {
        db[full] = de[full] = 0;
        dst[full] = 1;
        dbm |= 1u << full;
        dem |= 1u << full;
        gather[ng++] = full;
      }
    } else if ((nam >> i) & 1) {
      gather[ng++] = NEW_AXIS;
    } else {
      if (full == r)
        return dfx__kctx_fail(ctx, DFX_EINVAL, "Index out of range using input dim %d; input has only %d dims", full, r);
      db[full] = sb[i];
      de[full] = se[i];
      dst[full] = sst[i];
      if ((bm >> i) & 1) dbm |= 1u << full;
      if ((em >> i) & 1) dem |= 1u << full;
      if ((sam >> i) & 1) {
        dsm |= 1u << full;
        gather[ng++] = SHRINK_AXIS;
      } else {
        gather[ng++] = full;
      }
      full++;
    }
  }
  /* Canonicalise begin/end per dense dim and compute the processing shape. */
  int64_t pd[DFX_MAX_DIMS], xs[DFX_MAX_DIMS], ss[DFX_MAX_DIMS], soff = 0;
  dfx__arr_strides(r, x->dims, xs);
  for (int i = 0; i < r; i++) {
    int64_t st = dst[i], dim = x->dims[i], bi = db[i], ei = de[i];
    if (st == 0) return dfx__kctx_fail(ctx, DFX_EINVAL, "strides[%d] must be non-zero", i);
    bool shrink = (dsm >> i) & 1;
    if (shrink && st <= 0) return dfx__kctx_fail(ctx, DFX_EINVAL, "only stride 1 allowed on non-range indexing.");
    if (shrink) {
      int64_t f = bi < 0 ? dim + bi : bi;
      if (f < 0 || f >= dim)
        return dfx__kctx_fail(ctx, DFX_EINVAL, "slice index %lld of dimension %d out of bounds.", (long long)bi, i);
      bi = f;
      ei = f + 1;
    } else {
      /* TF's canonical range: [0, dim] for a positive stride, [-1, dim - 1] for
       * a negative one (-1 being "before element 0"); a masked begin or end takes
       * the extreme of that range in the stride's direction. */
      int64_t lo = st > 0 ? 0 : -1, hi = st > 0 ? dim : dim - 1;
      if ((dbm >> i) & 1) bi = st > 0 ? lo : hi;
      else {
        bi = bi < 0 ? dim + bi : bi;
        bi = bi < lo ? lo : bi > hi ? hi : bi;
      }
      if ((dem >> i) & 1) ei = st > 0 ? hi : lo;
      else {
        ei = ei < 0 ? dim + ei : ei;
        ei = ei < lo ? lo : ei > hi ? hi : ei;
      }
    }
    int64_t len = ei - bi;
    /* ceil(len / st) when they point the same way, else nothing is selected. */
    if (len == 0 || ((len < 0) != (st < 0))) pd[i] = 0;
    else pd[i] = len / st + (len % st != 0);
    /* A stride may be anything (INT64_MIN); with two or more elements it is
     * below the dim, so the element stride cannot overflow. */
    ss[i] = pd[i] > 1 ? xs[i] * st : xs[i];
    if (pd[i] > 0) soff += bi * xs[i];
  }
  int64_t od[SS_MAX + DFX_MAX_DIMS];
  int on = 0;
  for (int k = 0; k < ng; k++) {
    if (gather[k] >= 0) od[on++] = pd[gather[k]];
    else if (gather[k] == NEW_AXIS) od[on++] = 1;
  }
  /* Nothing is read from an empty box: an offset past the input is moot. */
  if (dfx__arr_prod(pd, 0, r) == 0) soff = 0;
  return box_out(ctx, on, od, r, pd, soff, ss, "StridedSlice");
}

/* ---- Slice ---- */

static dfx_code slice_kernel(dfx_kctx *ctx) {
  const dfx_tensor *x = ctx->in[0], *tb = ctx->in[1], *tz = ctx->in[2];
  int r = x->ndims;
  char b1[64], b2[64];
  if (tb->ndims != 1 || tz->ndims != 1 || tb->count != r || tz->count != r)
    return dfx__kctx_fail(ctx, DFX_EINVAL,
                          "Expected begin and size arguments to be 1-D tensors of size %d, but got shapes %s and %s "
                          "instead.",
                          r, DFX_SHAPE_STR(tb, b1), DFX_SHAPE_STR(tz, b2));
  int64_t od[DFX_MAX_DIMS], xs[DFX_MAX_DIMS], soff = 0;
  dfx__arr_strides(r, x->dims, xs);
  for (int i = 0; i < r; i++) {
    int64_t b = dfx__tensor_get_i64(tb, i), s = dfx__tensor_get_i64(tz, i), dim = x->dims[i];
    if (b < 0 || b > dim)
      return dfx__kctx_fail(ctx, DFX_EINVAL, "Expected begin[%d] in [0, %lld], but got %lld", i, (long long)dim,
                            (long long)b);
    /* size -1 means "to the end", TF's rule. */
    if (s == -1) s = dim - b;
    if (s < 0 || s > dim - b)
      return dfx__kctx_fail(ctx, DFX_EINVAL, "Expected size[%d] in [0, %lld], but got %lld", i, (long long)(dim - b),
                            (long long)s);
    od[i] = s;
    soff += b * xs[i];
  }
  return box_out(ctx, r, od, r, od, soff, xs, "Slice");
}

/* ---- Transpose ---- */

static dfx_code transpose_kernel(dfx_kctx *ctx) {
  const dfx_tensor *x = ctx->in[0], *tp = ctx->in[1];
  int r = x->ndims;
  char b[64];
  if (tp->ndims != 1) return dfx__kctx_fail(ctx, DFX_EINVAL, "perm must be rank 1, got shape %s", DFX_SHAPE_STR(tp, b));
  if (tp->count != r)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "transpose expects a vector of size %d. But input(1) is a vector of size %lld",
                          r, (long long)tp->count);
  int64_t perm[DFX_MAX_DIMS], od[DFX_MAX_DIMS], xs[DFX_MAX_DIMS], ss[DFX_MAX_DIMS];
  bool seen[DFX_MAX_DIMS] = {false};
  dfx__arr_strides(r, x->dims, xs);
  for (int i = 0; i < r; i++) {
    perm[i] = dfx__tensor_get_i64(tp, i);
    if (perm[i] < 0 || perm[i] >= r)
      return dfx__kctx_fail(ctx, DFX_EINVAL, "%lld is out of range [0 .. %d)", (long long)perm[i], r);
    seen[perm[i]] = true;
    od[i] = x->dims[perm[i]];
    /* Output dim i walks input dim perm[i]: its extent and its stride. */
    ss[i] = xs[perm[i]];
  }
  for (int i = 0; i < r; i++)
    /* perm must be a permutation: r in-range values with none missing. */
    if (!seen[i]) {
      char p[128];
      size_t o = 0;
      for (int k = 0; k < r && o < sizeof p; k++) o += (size_t)snprintf(p + o, sizeof p - o, k ? ",%lld" : "%lld", (long long)perm[k]);
      return dfx__kctx_fail(ctx, DFX_EINVAL, "%d is missing from {%s}.", i, p);
    }
  return box_out(ctx, r, od, r, od, 0, ss, "Transpose");
}

/* ---- ReverseV2 ---- */

static dfx_code reverse_kernel(dfx_kctx *ctx) {
  const dfx_tensor *x = ctx->in[0], *ta = ctx->in[1];
  int r = x->ndims;
  if (ta->ndims != 1) return dfx__kctx_fail(ctx, DFX_EINVAL, "'dims' must be 1-dimension, not %d", ta->ndims);
  bool rev[DFX_MAX_DIMS] = {false};
  for (int64_t i = 0; i < ta->count; i++) {
    int64_t a = dfx__tensor_get_i64(ta, i), c = a < 0 ? a + r : a;
    if (c < 0 || c >= r)
      return dfx__kctx_fail(ctx, DFX_EINVAL, "'axis'[%lld] = %lld is out of valid range [0, %d", (long long)i,
                            (long long)a, r - 1);
    if (rev[c]) return dfx__kctx_fail(ctx, DFX_EINVAL, "axis %lld specified more than once.", (long long)c);
    rev[c] = true;
  }
  int64_t xs[DFX_MAX_DIMS], ss[DFX_MAX_DIMS], soff = 0;
  dfx__arr_strides(r, x->dims, xs);
  for (int i = 0; i < r; i++) {
    ss[i] = rev[i] ? -xs[i] : xs[i];
    /* A reversed dim starts at its last element and steps backwards. */
    if (rev[i] && x->dims[i] > 0) soff += (x->dims[i] - 1) * xs[i];
  }
  if (x->count == 0) soff = 0;
  return box_out(ctx, r, x->dims, r, x->dims, soff, ss, "ReverseV2");
}

/* ---- Tile and BroadcastTo ---- */

static dfx_code tile_kernel(dfx_kctx *ctx) {
  const dfx_tensor *x = ctx->in[0], *tm = ctx->in[1];
  int r = x->ndims;
  if (tm->ndims != 1 || tm->count != r)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Expected multiples argument to be a vector of length %d but got length %lld",
                          r, tm->ndims == 1 ? (long long)tm->count : (long long)tm->ndims);
  /* Output dim i splits into (multiple, dim): the multiple has source stride 0. */
  int64_t od[DFX_MAX_DIMS], bd[2 * DFX_MAX_DIMS], ss[2 * DFX_MAX_DIMS], xs[DFX_MAX_DIMS];
  dfx__arr_strides(r, x->dims, xs);
  for (int i = 0; i < r; i++) {
    int64_t m = dfx__tensor_get_i64(tm, i);
    if (m < 0) return dfx__kctx_fail(ctx, DFX_EINVAL, "Expected multiples[%d] >= 0, but got %lld", i, (long long)m);
    if (__builtin_mul_overflow(m, x->dims[i], &od[i]))
      return dfx__kctx_fail(ctx, DFX_ELIMIT, "multiples[%d] = %lld overflows the output dim", i, (long long)m);
    bd[2 * i] = m;
    bd[2 * i + 1] = x->dims[i];
    ss[2 * i] = 0;
    ss[2 * i + 1] = xs[i];
  }
  return box_out(ctx, r, od, 2 * r, bd, 0, ss, "Tile multiples");
}

static dfx_code broadcast_to_kernel(dfx_kctx *ctx) {
  const dfx_tensor *x = ctx->in[0], *tsh = ctx->in[1];
  char b1[128], b2[128];
  if (tsh->ndims != 1)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "shape must be a vector, got shape %s", DFX_SHAPE_STR(tsh, b1));
  int64_t od[DFX_MAX_DIMS], xs[DFX_MAX_DIMS], ss[DFX_MAX_DIMS];
  int on;
  if (dfx__kctx_vector_i64(ctx, 1, "shape", od, DFX_MAX_DIMS, &on)) return DFX_EINVAL;
  int r = x->ndims;
  bool ok = r <= on;
  dfx__arr_strides(r, x->dims, xs);
  for (int i = 0; i < on; i++) {
    int j = i - (on - r);
    if (od[i] < 0) ok = false;
    if (j < 0) {
      ss[i] = 0;
    } else {
      /* Leading new dims and dims of 1 broadcast: stride 0 re-reads one element. */
      ss[i] = x->dims[j] == 1 ? 0 : xs[j];
      if (x->dims[j] != od[i] && x->dims[j] != 1) ok = false;
    }
  }
  if (!ok)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Unable to broadcast tensor of shape %s to tensor of shape %s",
                          DFX_SHAPE_STR(x, b1), dfx__shape_str(on, od, b2, sizeof b2));
  return box_out(ctx, on, od, on, od, 0, ss, "BroadcastTo shape");
}

static const dfx_kernel_def kernels[] = {
    {"StridedSlice", DFX_ARR_T_COPY "; Index: {int16, int32, int64}", strided_slice_kernel, DFX_KERNEL_CHEAP,
     strided_slice_init, strided_slice_fini},
    {"Slice", DFX_ARR_T_COPY "; Index: " DFX_ARR_I32_64, slice_kernel, DFX_KERNEL_CHEAP, NULL, NULL},
    {"Transpose", DFX_ARR_T_COPY "; Tperm: " DFX_ARR_I32_64, transpose_kernel, DFX_KERNEL_CHEAP, NULL, NULL},
    {"ReverseV2",
     "T: {uint8, int8, uint16, int16, int32, uint32, int64, uint64, bool, bfloat16, half, float, double, complex64, "
     "complex128, string}; Tidx: " DFX_ARR_I32_64, reverse_kernel, DFX_KERNEL_CHEAP, NULL, NULL},
    {"Tile", DFX_ARR_T_COPY "; Tmultiples: " DFX_ARR_I32_64, tile_kernel, DFX_KERNEL_CHEAP, NULL, NULL},
    {"BroadcastTo", DFX_ARR_T_COPY "; Tidx: " DFX_ARR_I32_64, broadcast_to_kernel, DFX_KERNEL_CHEAP, NULL, NULL},
    {NULL}};

void dfx__kernels_array_slice(dfx_registry *r);
void dfx__kernels_array_slice(dfx_registry *r) { dfx__kernels_add(r, kernels); }
