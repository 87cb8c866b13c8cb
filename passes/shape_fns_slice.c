/* shape_fns_slice.c - shape functions of the ops that take parts of a
 * tensor (TF's array_ops.cc): Slice, StridedSlice (TF's
 * ValidateStridedSliceOp, masks and all), Split, SplitV, Gather, GatherV2,
 * GatherNd. Taking parts of a vector value gives a value, which is how a
 * shape's dims become known scalars (Shape(x)[0]). */
#include <string.h>

#include "shape_fn.h"

#define UNKNOWN DFX_VALUE_UNKNOWN

/* Output k holds elements `pick` (count n) of input 0's vector value, as
 * shape `out`; without a value only the shape. */
static void set_picked(dfx_shape_ctx *c, int k, const dfx_pshape *out, const int64_t *pick, int64_t n) {
  const dfx_tinfo *x = c->in[0];
  int64_t v[DFX_SHAPE_VALUE_MAX];
  if (!pick || x->shape.rank != 1 || x->n_val < 0 || n != dfx__pshape_count(out) || n > DFX_SHAPE_VALUE_MAX) {
    dfx__sctx_set(c, k, out);
    return;
  }
  for (int64_t i = 0; i < n; i++) {
    if (pick[i] < 0 || pick[i] >= x->n_val) return; /* the run fails */
    v[i] = x->val[pick[i]];
  }
  dfx__sctx_set_value(c, k, out->rank, out->dims, v);
}

/* ---- Slice ---- */

static void slice(dfx_shape_ctx *c) {
  const dfx_pshape *in = dfx__sctx_in(c, 0);
  const dfx_tinfo *b = c->n_in > 2 ? c->in[1] : NULL, *s = c->n_in > 2 ? c->in[2] : NULL;
  int64_t len = -1;
  if (!b || b->shape.rank > 1 || s->shape.rank > 1) return;
  if (!dfx__dim_merge(b->shape.rank == 1 ? b->shape.dims[0] : -1, s->shape.rank == 1 ? s->shape.dims[0] : -1, &len))
    return;
  int r = in->rank;
  if (len >= 0 && r >= 0 && r != len) return;
  if (r < 0) r = len > DFX_MAX_DIMS ? -1 : (int)len;
  if (r < 0) return;
  dfx_pshape out = dfx__pshape_of_rank(r);
  bool exact = s->n_val == r && b->n_val == r;
  for (int i = 0; s->n_val == r && i < r; i++) {
    int64_t sz = s->val[i], bg = b->n_val == r ? b->val[i] : UNKNOWN;
    if (sz != UNKNOWN && sz < -1) return;
    if (bg != UNKNOWN && bg < 0) return;
    if (sz == -1) out.dims[i] = bg != UNKNOWN && in->rank == r && in->dims[i] >= bg ? in->dims[i] - bg : DFX_DIM_UNKNOWN;
    else out.dims[i] = sz == UNKNOWN ? DFX_DIM_UNKNOWN : sz;
    exact &= bg != UNKNOWN && out.dims[i] >= 0;
  }
  int64_t pick[DFX_SHAPE_VALUE_MAX], n = exact && r == 1 ? out.dims[0] : -1;
  for (int64_t i = 0; i < n && i < DFX_SHAPE_VALUE_MAX; i++) pick[i] = b->val[0] + i;
  set_picked(c, 0, &out, n >= 0 ? pick : NULL, n);
}

/* ---- StridedSlice ---- */

#define NEW_AXIS (-1)
#define SHRINK_AXIS (-2)

typedef struct dense_spec {
  int dims;
  uint64_t begin_mask, end_mask, shrink_mask;
  int64_t begin[DFX_MAX_DIMS], end[DFX_MAX_DIMS], strides[DFX_MAX_DIMS];
  int n_gather;
  int gather[2 * DFX_MAX_DIMS + 32]; /* final dims: a dense index, NEW_AXIS or SHRINK_AXIS */
} dense_spec;

/* TF's BuildDenseSpec: expands the ellipsis (an implicit one at the end)
 * and places new axes; false when the spec has more real dims than the
 * input. */
static bool build_dense(dense_spec *d, int n, const int64_t *begin, const int64_t *end, const int64_t *strides,
                        uint64_t begin_mask, uint64_t end_mask, uint64_t ellipsis_mask, uint64_t new_axis_mask,
                        uint64_t shrink_mask) {
  int after_ellipsis = 0, sparse = n;
  bool seen = false;
  for (int i = 0; i < n; i++) {
    if (seen && (new_axis_mask >> i & 1)) after_ellipsis++;
    if (ellipsis_mask >> i & 1) seen = true;
  }
  if (!seen) ellipsis_mask |= (uint64_t)1 << sparse++;
  int full = 0;
  for (int i = 0; i < sparse; i++) {
    if (ellipsis_mask >> i & 1) {
      int next = d->dims - (sparse - i) + 1 + after_ellipsis;
      if (next > d->dims) next = d->dims;
      for (; full < next; full++) {
        d->begin[full] = d->end[full] = 0;
        d->strides[full] = 1;
        d->begin_mask |= (uint64_t)1 << full;
        d->end_mask |= (uint64_t)1 << full;
        d->gather[d->n_gather++] = full;
      }
    } else if (new_axis_mask >> i & 1) {
      d->gather[d->n_gather++] = NEW_AXIS;
    } else {
      if (full == d->dims) return false;
      d->begin[full] = begin ? begin[i] : 0;
      d->end[full] = end ? end[i] : 0;
      d->strides[full] = strides[i];
      if (begin_mask >> i & 1) d->begin_mask |= (uint64_t)1 << full;
      if (end_mask >> i & 1) d->end_mask |= (uint64_t)1 << full;
      if (shrink_mask >> i & 1) {
        d->gather[d->n_gather++] = SHRINK_AXIS;
        d->shrink_mask |= (uint64_t)1 << full;
      } else {
        d->gather[d->n_gather++] = full;
      }
      full++;
    }
  }
  return true;
}

static int64_t clamp(int64_t x, int64_t lo, int64_t hi) { return x < lo ? lo : x > hi ? hi : x; }

static void strided_slice(dfx_shape_ctx *c) {
  const dfx_pshape *in = dfx__sctx_in(c, 0);
  int64_t begin[DFX_SHAPE_VALUE_MAX], end[DFX_SHAPE_VALUE_MAX], strides[DFX_SHAPE_VALUE_MAX];
  int n, nb, ne;
  if (in->rank < 0 || !dfx__sctx_value(c, 3, strides, &n) || dfx__sctx_in(c, 3)->rank != 1 || n >= 32) return;
  bool begin_valid = dfx__sctx_value(c, 1, begin, &nb), end_valid = dfx__sctx_value(c, 2, end, &ne);
  if ((begin_valid && nb != n) || (end_valid && ne != n)) return;
  uint64_t ellipsis = (uint64_t)dfx__attr_int(c->node, "ellipsis_mask", 0) & 0xffffffffu;
  if (ellipsis & (ellipsis - 1)) return; /* more than one ellipsis */
  dense_spec d = {.dims = in->rank};
  if (!build_dense(&d, n, begin_valid ? begin : NULL, end_valid ? end : NULL, strides,
                   (uint64_t)dfx__attr_int(c->node, "begin_mask", 0) & 0xffffffffu,
                   (uint64_t)dfx__attr_int(c->node, "end_mask", 0) & 0xffffffffu, ellipsis,
                   (uint64_t)dfx__attr_int(c->node, "new_axis_mask", 0) & 0xffffffffu,
                   (uint64_t)dfx__attr_int(c->node, "shrink_axis_mask", 0) & 0xffffffffu))
    return;
  int64_t processing[DFX_MAX_DIMS];
  for (int i = 0; i < d.dims; i++) {
    int64_t *b = &d.begin[i], *e = &d.end[i], s = d.strides[i], dim = in->dims[i];
    bool shrink = d.shrink_mask >> i & 1, bm = d.begin_mask >> i & 1, em = d.end_mask >> i & 1;
    if (s == 0) return;
    if (dim < 0) {
      processing[i] = shrink ? 1 : DFX_DIM_UNKNOWN;
      continue;
    }
    if (shrink && s <= 0) return;
    int64_t lo = s > 0 ? 0 : -1, hi = s > 0 ? dim : dim - 1;
    if (begin_valid && end_valid) {
      if (shrink) {
        int64_t fwd = *b < 0 ? dim + *b : *b;
        if (fwd < 0 || fwd >= dim) return; /* out of bounds: the run fails */
        *b = fwd;
        *e = fwd + 1;
      } else {
        *b = bm ? (s > 0 ? lo : hi) : clamp(*b < 0 ? dim + *b : *b, lo, hi);
        *e = em ? (s > 0 ? hi : lo) : clamp(*e < 0 ? dim + *e : *e, lo, hi);
      }
    }
    int64_t interval = 0;
    bool known = true;
    if (begin_valid && end_valid) interval = *e - *b;
    else if (shrink) interval = 1;
    else if (bm && em && dim > 0) interval = s < 0 ? -dim : dim;
    else known = false;
    if (!known) processing[i] = DFX_DIM_UNKNOWN;
    else if (interval == 0 || ((interval < 0) != (s < 0))) processing[i] = 0;
    else processing[i] = interval / s + (interval % s != 0);
  }
  dfx_pshape out = {.rank = 0};
  for (int k = 0; k < d.n_gather; k++) {
    if (d.gather[k] == SHRINK_AXIS) continue;
    if (out.rank == DFX_MAX_DIMS) return;
    out.dims[out.rank++] = d.gather[k] == NEW_AXIS ? 1 : processing[d.gather[k]];
  }
  if (in->rank != 1 || !begin_valid || !end_valid || processing[0] < 0 || processing[0] > DFX_SHAPE_VALUE_MAX) {
    dfx__sctx_set(c, 0, &out);
    return;
  }
  int64_t pick[DFX_SHAPE_VALUE_MAX];
  for (int64_t i = 0; i < processing[0]; i++) pick[i] = d.begin[0] + i * d.strides[0];
  set_picked(c, 0, &out, pick, processing[0]);
}

/* ---- Split, SplitV ---- */

/* Sets the outputs of a split of input `x` along axis a into pieces of
 * sizes[k] (unknown: -1). */
static void set_pieces(dfx_shape_ctx *c, int x, int a, const int64_t *sizes) {
  const dfx_pshape *in = dfx__sctx_in(c, x);
  const dfx_tinfo *xi = c->in[x];
  int64_t start = 0;
  for (int k = 0; k < c->n_out; k++) {
    dfx_pshape out = *in;
    out.dims[a] = sizes[k];
    int64_t pick[DFX_SHAPE_VALUE_MAX];
    bool vec = x == 0 && in->rank == 1 && xi->n_val >= 0 && start >= 0 && sizes[k] >= 0 && sizes[k] <= DFX_SHAPE_VALUE_MAX;
    for (int64_t i = 0; vec && i < sizes[k]; i++) pick[i] = start + i;
    set_picked(c, k, &out, vec ? pick : NULL, sizes[k]);
    start = start >= 0 && sizes[k] >= 0 ? start + sizes[k] : -1;
  }
}

static void split(dfx_shape_ctx *c) {
  const dfx_pshape *in = dfx__sctx_in(c, 1);
  int64_t axis, num = c->n_out, sizes[DFX_SHAPE_VALUE_MAX * 16];
  int a;
  if (in->rank < 0 || num < 1 || num > (int64_t)(sizeof sizes / sizeof *sizes)) return;
  if (!dfx__sctx_scalar(c, 0, &axis)) {
    dfx_pshape out = dfx__pshape_of_rank(in->rank);
    for (int k = 0; k < c->n_out; k++) dfx__sctx_set(c, k, &out);
    return;
  }
  if (!dfx__axis(axis, in->rank, &a)) return;
  int64_t d = in->dims[a];
  if (d >= 0 && d % num != 0) return;
  for (int k = 0; k < num; k++) sizes[k] = d >= 0 ? d / num : DFX_DIM_UNKNOWN;
  /* Split reads input 1; its vector values are picked by set_pieces only from input 0. */
  set_pieces(c, 1, a, sizes);
}

static void split_v(dfx_shape_ctx *c) {
  const dfx_pshape *in = dfx__sctx_in(c, 0);
  const dfx_tinfo *ss = c->n_in > 2 ? c->in[1] : NULL;
  int64_t axis, sizes[DFX_SHAPE_VALUE_MAX * 16];
  int a, num = c->n_out;
  if (!ss || in->rank < 1 || num < 1 || num > (int)(sizeof sizes / sizeof *sizes)) return;
  if (!dfx__sctx_scalar(c, 2, &axis)) {
    dfx_pshape out = dfx__pshape_of_rank(in->rank);
    for (int k = 0; k < c->n_out; k++) dfx__sctx_set(c, k, &out);
    return;
  }
  if (!dfx__axis(axis, in->rank, &a)) return;
  int64_t d = in->dims[a], total = 0;
  int infer = -1;
  bool all = ss->n_val == num;
  for (int k = 0; k < num; k++) {
    int64_t v = all ? ss->val[k] : UNKNOWN;
    sizes[k] = v >= 0 ? v : DFX_DIM_UNKNOWN;
    if (v == -1) {
      if (infer >= 0) return;
      infer = k;
    } else if (v == UNKNOWN) {
      total = -1;
    } else if (v < -1) {
      return;
    } else if (total >= 0) {
      total = dfx__dim_add(total, v);
    }
  }
  if (infer >= 0 && d >= 0 && total >= 0) {
    if (total > d) return;
    sizes[infer] = d - total;
  } else if (infer < 0 && d >= 0 && total >= 0 && all && total != d) {
    return;
  }
  set_pieces(c, 0, a, sizes);
}

/* ---- Gather, GatherV2, GatherNd ---- */

/* params[:a] + indices[batch:] + params[a+1:]; values when params is a
 * vector value and the indices a value. */
static void gather_at(dfx_shape_ctx *c, int a, int batch) {
  const dfx_pshape *p = dfx__sctx_in(c, 0), *ix = dfx__sctx_in(c, 1);
  if (p->rank < 1 || ix->rank < 0 || batch > ix->rank || batch > a || a >= p->rank) return;
  dfx_pshape out = {.rank = 0};
  if (p->rank - 1 + ix->rank - batch > DFX_MAX_DIMS) return;
  for (int i = 0; i < a; i++) out.dims[out.rank++] = p->dims[i];
  for (int i = batch; i < ix->rank; i++) out.dims[out.rank++] = ix->dims[i];
  for (int i = a + 1; i < p->rank; i++) out.dims[out.rank++] = p->dims[i];
  for (int i = 0; i < batch; i++)
    if (!dfx__dim_merge(out.dims[i], ix->dims[i], &out.dims[i])) return;
  int64_t idx[DFX_SHAPE_VALUE_MAX];
  int n;
  bool vec = p->rank == 1 && dfx__sctx_value(c, 1, idx, &n);
  set_picked(c, 0, &out, vec ? idx : NULL, vec ? n : -1);
}

static void gather(dfx_shape_ctx *c) { gather_at(c, 0, 0); }

static void gather_v2(dfx_shape_ctx *c) {
  const dfx_pshape *p = dfx__sctx_in(c, 0), *ix = dfx__sctx_in(c, 1);
  int64_t axis, batch = dfx__attr_int(c->node, "batch_dims", 0);
  if (batch < 0) batch += ix->rank;
  if (batch < 0 || ix->rank < 0) return;
  int a;
  if (!dfx__sctx_scalar(c, 2, &axis)) {
    if (p->rank >= 1) {
      dfx_pshape out = dfx__pshape_of_rank(p->rank - 1 + ix->rank - (int)batch);
      dfx__sctx_set(c, 0, &out);
    }
    return;
  }
  if (!dfx__axis(axis, p->rank, &a)) return;
  gather_at(c, a, (int)batch);
}

static void gather_nd(dfx_shape_ctx *c) {
  const dfx_pshape *p = dfx__sctx_in(c, 0), *ix = dfx__sctx_in(c, 1);
  if (p->rank < 0 || ix->rank < 1) return;
  int64_t r = ix->dims[ix->rank - 1];
  if (r < 0 || r > p->rank) return;
  dfx_pshape out = {.rank = 0};
  if (ix->rank - 1 + p->rank - r > DFX_MAX_DIMS) return;
  for (int i = 0; i < ix->rank - 1; i++) out.dims[out.rank++] = ix->dims[i];
  for (int i = (int)r; i < p->rank; i++) out.dims[out.rank++] = p->dims[i];
  dfx__sctx_set(c, 0, &out);
}

const dfx_shape_fn_def dfx__shape_fns_slice[] = {
    {"Slice", slice},   {"StridedSlice", strided_slice}, {"Split", split},           {"SplitV", split_v},
    {"Gather", gather}, {"GatherV2", gather_v2},         {"GatherNd", gather_nd},
    {NULL, NULL}};
