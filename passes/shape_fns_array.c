/* shape_fns_array.c - shape functions of TF's array_ops.cc that build or
 * rearrange whole tensors: Shape/ShapeN/Size/Rank (whose values are the
 * shapes themselves), Reshape, ExpandDims, Squeeze, Transpose, Concat,
 * Pack/Unpack, Fill, Tile, Pad, BroadcastTo and the broadcast-argument
 * ops, Range, LinSpace, OneHot, Bitcast. Values move along where the op
 * only moves elements (Reshape, ExpandDims, Concat, Pack, Unpack, Fill),
 * which is how Reshape(x, Pack(Shape(y)[0], -1)) resolves. */
#include <math.h>
#include <string.h>

#include "dtype.h"
#include "shape_fn.h"

#define UNKNOWN DFX_VALUE_UNKNOWN

/* ---- shapes as values ---- */

static void set_shape_value(dfx_shape_ctx *c, int k, const dfx_pshape *s) {
  if (s->rank < 0) return;
  int64_t v[DFX_MAX_DIMS], len = s->rank;
  for (int i = 0; i < s->rank; i++) v[i] = s->dims[i] >= 0 ? s->dims[i] : UNKNOWN;
  dfx__sctx_set_value(c, k, 1, &len, v);
}

static void shape(dfx_shape_ctx *c) { set_shape_value(c, 0, dfx__sctx_in(c, 0)); }

static void shape_n(dfx_shape_ctx *c) {
  for (int k = 0; k < c->n_out && k < c->n_in; k++) set_shape_value(c, k, dfx__sctx_in(c, k));
}

static void size(dfx_shape_ctx *c) {
  int64_t n = dfx__pshape_count(dfx__sctx_in(c, 0));
  dfx__sctx_set_value(c, 0, 0, NULL, (int64_t[]){n >= 0 ? n : UNKNOWN});
}

static void rank(dfx_shape_ctx *c) {
  int r = dfx__sctx_in(c, 0)->rank;
  dfx__sctx_set_value(c, 0, 0, NULL, (int64_t[]){r >= 0 ? r : UNKNOWN});
}

/* Output 0 gets shape s, and input 0's value when it has one with as many
 * elements (the ops here only move elements). */
static void set_moved(dfx_shape_ctx *c, const dfx_pshape *s) {
  const dfx_tinfo *x = c->in[0];
  if (dfx__pshape_known(s) && x->n_val >= 0 && x->n_val == dfx__pshape_count(s))
    dfx__sctx_set_value(c, 0, s->rank, s->dims, x->val);
  else
    dfx__sctx_set(c, 0, s);
}

/* ---- Reshape, ExpandDims, Squeeze, Transpose ---- */

static void reshape(dfx_shape_ctx *c) {
  const dfx_tinfo *t = c->n_in > 1 ? c->in[1] : NULL;
  if (!t || t->shape.rank != 1) return;
  if (t->n_val < 0) {
    dfx_pshape out = dfx__pshape_of_rank(t->shape.dims[0] >= 0 ? (int)t->shape.dims[0] : -1);
    dfx__sctx_set(c, 0, &out);
    return;
  }
  if (t->n_val > DFX_MAX_DIMS) return;
  dfx_pshape out = {.rank = t->n_val};
  int infer = -1;
  int64_t prod = 1;
  bool prod_known = true;
  for (int i = 0; i < t->n_val; i++) {
    int64_t v = t->val[i];
    out.dims[i] = v >= 0 ? v : DFX_DIM_UNKNOWN;
    if (v == -1) {
      if (infer >= 0) return; /* two -1: the run fails */
      infer = i;
    } else if (v < -1 && v != UNKNOWN) {
      return;
    } else if (v == UNKNOWN) {
      prod_known = false;
    } else {
      prod = dfx__dim_mul(prod, v);
      if (prod < 0) prod_known = false;
    }
  }
  int64_t count = dfx__pshape_count(dfx__sctx_in(c, 0));
  if (infer >= 0 && prod_known && prod > 0 && count >= 0) {
    if (count % prod != 0) return;
    out.dims[infer] = count / prod;
  } else if (infer < 0 && prod_known && count >= 0 && prod != count) {
    return;
  }
  set_moved(c, &out);
}

static void expand_dims(dfx_shape_ctx *c) {
  const dfx_pshape *in = dfx__sctx_in(c, 0);
  int64_t dim;
  if (in->rank < 0 || in->rank >= DFX_MAX_DIMS) return;
  if (!dfx__sctx_scalar(c, 1, &dim)) {
    dfx_pshape out = dfx__pshape_of_rank(in->rank + 1);
    dfx__sctx_set(c, 0, &out);
    return;
  }
  int at;
  if (!dfx__axis(dim, in->rank + 1, &at)) return;
  dfx_pshape out = {.rank = in->rank + 1};
  for (int i = 0, j = 0; i < out.rank; i++) out.dims[i] = i == at ? 1 : in->dims[j++];
  set_moved(c, &out);
}

static void squeeze(dfx_shape_ctx *c) {
  const dfx_pshape *in = dfx__sctx_in(c, 0);
  int64_t dims[DFX_MAX_DIMS];
  int n = dfx__sctx_attr_ints(c, "squeeze_dims", dims, DFX_MAX_DIMS);
  bool listed[DFX_MAX_DIMS] = {false};
  if (in->rank < 0 || n < 0) return;
  for (int k = 0; k < n; k++) {
    int a;
    if (!dfx__axis(dims[k], in->rank, &a)) return;
    listed[a] = true;
  }
  dfx_pshape out = {.rank = 0};
  for (int i = 0; i < in->rank; i++) {
    int64_t d = in->dims[i];
    if (listed[i]) {
      if (d >= 0 && d != 1) return; /* the run fails */
      continue;
    }
    if (n == 0 && d == 1) continue;
    if (n == 0 && d < 0) return; /* it may or may not be squeezed */
    out.dims[out.rank++] = d;
  }
  set_moved(c, &out);
}

static void transpose(dfx_shape_ctx *c) {
  const dfx_pshape *in = dfx__sctx_in(c, 0), *perm_shape = dfx__sctx_in(c, 1);
  int64_t perm[DFX_SHAPE_VALUE_MAX];
  int n, r = in->rank;
  if (r < 0 && perm_shape->rank == 1) r = (int)perm_shape->dims[0];
  if (r < 0 || r > DFX_MAX_DIMS) return;
  dfx_pshape out = dfx__pshape_of_rank(r);
  if (dfx__sctx_value(c, 1, perm, &n)) {
    bool seen[DFX_MAX_DIMS] = {false};
    if (n != r) return;
    for (int i = 0; i < r; i++) {
      if (perm[i] < 0 || perm[i] >= r || seen[perm[i]]) return;
      seen[perm[i]] = true;
      out.dims[i] = in->rank == r ? in->dims[perm[i]] : DFX_DIM_UNKNOWN;
    }
  }
  dfx__sctx_set(c, 0, &out);
}

/* ---- Concat, Pack, Unpack ---- */

/* Concatenates inputs [from, to) along the axis given by input `axis_in`
 * (TF's ConcatShapeHelper); values of vectors are joined too. */
static void concat(dfx_shape_ctx *c, int from, int to, int axis_in) {
  int64_t axis;
  int r = -1;
  for (int k = from; k < to; k++)
    if (dfx__sctx_in(c, k)->rank >= 0) r = dfx__sctx_in(c, k)->rank;
  if (r == 0 || to <= from) return;
  dfx_pshape out = dfx__pshape_of_rank(r);
  if (!dfx__sctx_scalar(c, axis_in, &axis)) {
    for (int k = from; k < to; k++)
      if (r >= 0 && dfx__sctx_in(c, k)->rank >= 0 && dfx__sctx_in(c, k)->rank != r) return;
    dfx__sctx_set(c, 0, &out);
    return;
  }
  int a;
  if (r < 0 || !dfx__axis(axis, r, &a)) return;
  out.dims[a] = 0;
  for (int k = from; k < to; k++) {
    const dfx_pshape *s = dfx__sctx_in(c, k);
    if (s->rank < 0) {
      out.dims[a] = DFX_DIM_UNKNOWN;
      continue;
    }
    if (s->rank != r) return;
    for (int i = 0; i < r; i++)
      if (i != a && !dfx__dim_merge(out.dims[i], s->dims[i], &out.dims[i])) return;
    out.dims[a] = dfx__dim_add(out.dims[a], s->dims[a]);
  }
  if (r != 1 || !dfx__pshape_known(&out) || out.dims[0] > DFX_SHAPE_VALUE_MAX) {
    dfx__sctx_set(c, 0, &out);
    return;
  }
  int64_t v[DFX_SHAPE_VALUE_MAX];
  int m = 0;
  for (int k = from; k < to; k++) {
    const dfx_tinfo *t = c->in[k];
    for (int64_t i = 0; i < t->shape.dims[0]; i++) v[m++] = t->n_val >= 0 ? t->val[i] : UNKNOWN;
  }
  dfx__sctx_set_value(c, 0, 1, out.dims, v);
}

static void concat_v2(dfx_shape_ctx *c) { concat(c, 0, c->n_in - 1, c->n_in - 1); }
static void concat_v1(dfx_shape_ctx *c) { concat(c, 1, c->n_in, 0); }

/* ConcatOffset(concat_dim, shape_0..shape_N-1): where each input starts. */
static void concat_offset(dfx_shape_ctx *c) {
  int64_t axis, len = -1;
  for (int k = 1; k < c->n_in; k++)
    if (!dfx__dim_merge(len, dfx__sctx_in(c, k)->rank == 1 ? dfx__sctx_in(c, k)->dims[0] : -1, &len)) return;
  for (int k = 1; k < c->n_in; k++) {
    dfx_pshape v = dfx__pshape_vector(len);
    dfx__sctx_set(c, k - 1, &v);
  }
  int a;
  if (len < 0 || len > DFX_MAX_DIMS || !dfx__sctx_scalar(c, 0, &axis) || !dfx__axis(axis, (int)len, &a)) return;
  int64_t offset = 0;
  for (int k = 1; k < c->n_in; k++) {
    int64_t s[DFX_SHAPE_VALUE_MAX], v[DFX_MAX_DIMS] = {0};
    int n;
    v[a] = offset;
    dfx__sctx_set_value(c, k - 1, 1, &len, v);
    if (!dfx__sctx_value(c, k, s, &n) || n != len) return; /* later offsets unknown */
    offset += s[a];
  }
}

static void pack(dfx_shape_ctx *c) {
  int64_t axis = dfx__attr_int(c->node, "axis", 0);
  dfx_pshape m = dfx__pshape_unknown();
  for (int k = 0; k < c->n_in; k++)
    if (!dfx__pshape_merge(&m, dfx__sctx_in(c, k), &m)) return;
  if (m.rank < 0 || m.rank >= DFX_MAX_DIMS) return;
  int a;
  if (!dfx__axis(axis, m.rank + 1, &a)) return;
  dfx_pshape out = {.rank = m.rank + 1};
  for (int i = 0, j = 0; i < out.rank; i++) out.dims[i] = i == a ? c->n_in : m.dims[j++];
  int64_t per = dfx__pshape_count(&m), v[DFX_SHAPE_VALUE_MAX];
  if (a != 0 || !dfx__pshape_known(&m) || per * c->n_in > DFX_SHAPE_VALUE_MAX) {
    dfx__sctx_set(c, 0, &out);
    return;
  }
  for (int k = 0; k < c->n_in; k++)
    for (int64_t i = 0; i < per; i++) v[k * per + i] = c->in[k]->n_val >= 0 ? c->in[k]->val[i] : UNKNOWN;
  dfx__sctx_set_value(c, 0, out.rank, out.dims, v);
}

static void unpack(dfx_shape_ctx *c) {
  const dfx_pshape *in = dfx__sctx_in(c, 0);
  int64_t num = dfx__attr_int(c->node, "num", -1);
  int a;
  if (in->rank < 1 || !dfx__axis(dfx__attr_int(c->node, "axis", 0), in->rank, &a)) return;
  if (in->dims[a] >= 0 && in->dims[a] != num) return;
  dfx_pshape out = {.rank = 0};
  for (int i = 0; i < in->rank; i++)
    if (i != a) out.dims[out.rank++] = in->dims[i];
  const dfx_tinfo *x = c->in[0];
  int64_t per = dfx__pshape_count(&out);
  for (int k = 0; k < c->n_out; k++) {
    if (a == 0 && x->n_val >= 0 && per >= 0)
      dfx__sctx_set_value(c, k, out.rank, out.dims, x->val + k * per);
    else
      dfx__sctx_set(c, k, &out);
  }
}

/* ---- Fill, Tile, Pad, BroadcastTo ---- */

static void fill(dfx_shape_ctx *c) {
  dfx_pshape out;
  int64_t v;
  if (!dfx__sctx_shape_from_value(c, 0, &out)) return;
  int64_t n = dfx__pshape_count(&out), vals[DFX_SHAPE_VALUE_MAX];
  if (!dfx__pshape_known(&out) || n > DFX_SHAPE_VALUE_MAX || !dfx__sctx_scalar(c, 1, &v)) {
    dfx__sctx_set(c, 0, &out);
    return;
  }
  for (int64_t i = 0; i < n; i++) vals[i] = v;
  dfx__sctx_set_value(c, 0, out.rank, out.dims, vals);
}

/* Empty, ScatterNd and the random ops: the shape is an input's value. */
static void shape_from(dfx_shape_ctx *c, int k) {
  dfx_pshape out;
  if (dfx__sctx_shape_from_value(c, k, &out)) dfx__sctx_set(c, 0, &out);
}
static void shape_from_0(dfx_shape_ctx *c) { shape_from(c, 0); }
static void shape_from_2(dfx_shape_ctx *c) { shape_from(c, 2); }

static void tile(dfx_shape_ctx *c) {
  const dfx_pshape *in = dfx__sctx_in(c, 0), *ms = dfx__sctx_in(c, 1);
  const dfx_tinfo *m = c->n_in > 1 ? c->in[1] : NULL;
  int r = in->rank >= 0 ? in->rank : ms->rank == 1 ? (int)ms->dims[0] : -1;
  if (!m || r < 0 || r > DFX_MAX_DIMS || (ms->rank == 1 && ms->dims[0] >= 0 && ms->dims[0] != r)) return;
  dfx_pshape out = dfx__pshape_of_rank(r);
  for (int i = 0; m->n_val == r && in->rank == r && i < r; i++) {
    if (m->val[i] != UNKNOWN && m->val[i] < 0) return;
    out.dims[i] = m->val[i] == UNKNOWN ? (in->dims[i] == 0 ? 0 : DFX_DIM_UNKNOWN) : dfx__dim_mul(in->dims[i], m->val[i]);
  }
  dfx__sctx_set(c, 0, &out);
}

/* Pad, PadV2, MirrorPad: paddings is [rank, 2]. */
static void pad(dfx_shape_ctx *c) {
  const dfx_pshape *in = dfx__sctx_in(c, 0), *ps = dfx__sctx_in(c, 1);
  const dfx_tinfo *p = c->n_in > 1 ? c->in[1] : NULL;
  int r = in->rank >= 0 ? in->rank : ps->rank == 2 ? (int)ps->dims[0] : -1;
  if (!p || r < 0 || r > DFX_MAX_DIMS || (ps->rank >= 0 && (ps->rank != 2 || (ps->dims[0] >= 0 && ps->dims[0] != r))))
    return;
  dfx_pshape out = dfx__pshape_of_rank(r);
  for (int i = 0; p->n_val == 2 * r && in->rank == r && i < r; i++) {
    int64_t b = p->val[2 * i], e = p->val[2 * i + 1];
    if ((b != UNKNOWN && b < 0) || (e != UNKNOWN && e < 0)) return;
    out.dims[i] = b == UNKNOWN || e == UNKNOWN ? DFX_DIM_UNKNOWN : dfx__dim_add(dfx__dim_add(in->dims[i], b), e);
  }
  dfx__sctx_set(c, 0, &out);
}

static void broadcast_to(dfx_shape_ctx *c) {
  const dfx_pshape *in = dfx__sctx_in(c, 0);
  dfx_pshape out;
  if (!dfx__sctx_shape_from_value(c, 1, &out)) return;
  if (out.rank >= 0 && in->rank > out.rank) return;
  for (int i = 0; out.rank >= 0 && in->rank >= 0 && i < in->rank; i++) {
    int64_t *o = &out.dims[out.rank - in->rank + i], d = in->dims[i];
    if (d >= 0 && d != 1 && !dfx__dim_merge(*o, d, o)) return; /* the input dim is 1 or the target */
  }
  dfx__sctx_set(c, 0, &out);
}

/* ---- the broadcast-argument ops: shapes as values in, values out ---- */

/* The two shape vectors, right-aligned: their length n and element pairs,
 * padded with 1. False when not vectors of known length. */
static bool shape_pairs(const dfx_shape_ctx *c, int *n, int64_t *x, int64_t *y) {
  const dfx_tinfo *a = c->n_in > 1 ? c->in[0] : NULL, *b = c->n_in > 1 ? c->in[1] : NULL;
  if (!a || a->shape.rank != 1 || b->shape.rank != 1 || a->n_val < 0 || b->n_val < 0) return false;
  int na = a->n_val, nb = b->n_val;
  *n = na > nb ? na : nb;
  for (int i = 0; i < *n; i++) {
    x[i] = i - (*n - na) >= 0 ? a->val[i - (*n - na)] : 1;
    y[i] = i - (*n - nb) >= 0 ? b->val[i - (*n - nb)] : 1;
  }
  return true;
}

static void broadcast_args(dfx_shape_ctx *c) {
  const dfx_pshape *a = dfx__sctx_in(c, 0), *b = dfx__sctx_in(c, 1);
  int64_t len = -1, x[DFX_SHAPE_VALUE_MAX], y[DFX_SHAPE_VALUE_MAX], v[DFX_SHAPE_VALUE_MAX];
  int n;
  if (a->rank == 1 && b->rank == 1 && a->dims[0] >= 0 && b->dims[0] >= 0)
    len = a->dims[0] > b->dims[0] ? a->dims[0] : b->dims[0];
  if (!shape_pairs(c, &n, x, y)) {
    dfx_pshape out = dfx__pshape_vector(len);
    dfx__sctx_set(c, 0, &out);
    return;
  }
  for (int i = 0; i < n; i++) {
    if (x[i] != UNKNOWN && y[i] != UNKNOWN && x[i] != y[i] && x[i] != 1 && y[i] != 1) return;
    v[i] = x[i] == 1 ? y[i] : y[i] == 1 ? x[i] : x[i] != UNKNOWN ? x[i] : y[i];
  }
  int64_t nn = n;
  dfx__sctx_set_value(c, 0, 1, &nn, v);
}

/* The reduction indices for the gradients of a broadcast, as the kernel
 * computes them (an axis where a side is 1 is reduced for that side). */
static void broadcast_gradient_args(dfx_shape_ctx *c) {
  int64_t x[DFX_SHAPE_VALUE_MAX], y[DFX_SHAPE_VALUE_MAX], ra[DFX_SHAPE_VALUE_MAX], rb[DFX_SHAPE_VALUE_MAX];
  int n, na = 0, nb = 0;
  dfx_pshape any = dfx__pshape_vector(DFX_DIM_UNKNOWN);
  dfx__sctx_set(c, 0, &any);
  dfx__sctx_set(c, 1, &any);
  if (!shape_pairs(c, &n, x, y)) return;
  for (int i = 0; i < n; i++) {
    if (x[i] == UNKNOWN || y[i] == UNKNOWN) return;
    if (x[i] != y[i] && x[i] != 1 && y[i] != 1) return;
    if (x[i] == 1) ra[na++] = i;
    if (y[i] == 1) rb[nb++] = i;
  }
  int64_t la = na, lb = nb;
  dfx__sctx_set_value(c, 0, 1, &la, ra);
  dfx__sctx_set_value(c, 1, 1, &lb, rb);
}

/* ---- sequences ---- */

static double round_to(dfx_dtype t, double v) {
  if (t == DFX_F16) return dfx__f16_to_f32(dfx__f32_to_f16((float)v));
  if (t == DFX_BF16) return dfx__bf16_to_f32(dfx__f32_to_bf16((float)v));
  if (t == DFX_F32) return (float)v;
  return v;
}

/* Range's length from constant float inputs, computed as the kernel does
 * (in the dtype's precision); -1 when unknown or the run fails. */
static int64_t float_range_len(const dfx_shape_ctx *c, dfx_dtype t) {
  const dfx_tensor *k[3];
  for (int i = 0; i < 3; i++)
    if (!(k[i] = dfx__sctx_const(c, i)) || k[i]->ndims != 0 || k[i]->dtype != t) return -1;
  double s = dfx__tensor_get_f64(k[0], 0), l = dfx__tensor_get_f64(k[1], 0), d = dfx__tensor_get_f64(k[2], 0);
  if (d == 0 || (d > 0 && s > l) || (d < 0 && s < l)) return -1;
  double n = ceil(fabs(round_to(t, round_to(t, l - s) / d)));
  return n >= 0 && n <= 9.2e18 ? (int64_t)n : -1;
}

static void range(dfx_shape_ctx *c) {
  dfx_dtype t = c->node->out_types[0];
  int64_t s, l, d;
  dfx_pshape out = dfx__pshape_vector(DFX_DIM_UNKNOWN);
  if (dfx__dtype_is_float(t)) {
    out.dims[0] = float_range_len(c, t);
    if (out.dims[0] < 0) out.dims[0] = DFX_DIM_UNKNOWN;
  } else if (dfx__sctx_scalar(c, 0, &s) && dfx__sctx_scalar(c, 1, &l) && dfx__sctx_scalar(c, 2, &d)) {
    if (d == 0 || (d > 0 && s > l) || (d < 0 && s < l)) return;
    int64_t span, ad = d < 0 ? -d : d;
    if (d == INT64_MIN || __builtin_sub_overflow(d > 0 ? l : s, d > 0 ? s : l, &span)) return;
    int64_t n = span / ad + (span % ad != 0), v[DFX_SHAPE_VALUE_MAX];
    if (n > DFX_SHAPE_VALUE_MAX) {
      out.dims[0] = n;
    } else {
      for (int64_t i = 0; i < n; i++) v[i] = s + i * d;
      dfx__sctx_set_value(c, 0, 1, &n, v);
      return;
    }
  }
  dfx__sctx_set(c, 0, &out);
}

static void linspace(dfx_shape_ctx *c) {
  int64_t num;
  dfx_pshape out = dfx__pshape_vector(dfx__sctx_scalar(c, 2, &num) && num > 0 ? num : DFX_DIM_UNKNOWN);
  dfx__sctx_set(c, 0, &out);
}

/* OneHot(indices, depth, on, off): a new axis of `depth` at `axis`. */
static void one_hot(dfx_shape_ctx *c) {
  const dfx_pshape *in = dfx__sctx_in(c, 0);
  int64_t depth, axis = dfx__attr_int(c->node, "axis", -1);
  if (in->rank < 0 || in->rank >= DFX_MAX_DIMS || axis < -1 || axis > in->rank) return;
  if (!dfx__sctx_scalar(c, 1, &depth)) depth = DFX_DIM_UNKNOWN;
  else if (depth < 0) return;
  int a = axis == -1 ? in->rank : (int)axis;
  dfx_pshape out = {.rank = in->rank + 1};
  for (int i = 0, j = 0; i < out.rank; i++) out.dims[i] = i == a ? depth : in->dims[j++];
  dfx__sctx_set(c, 0, &out);
}

/* Bitcast: a wider input type gains a last dim, a narrower one loses it. */
static void bitcast(dfx_shape_ctx *c) {
  const dfx_pshape *in = dfx__sctx_in(c, 0);
  dfx_dtype from = dfx__attr_type(c->node, "T", DFX_INVALID), to = dfx__attr_type(c->node, "type", DFX_INVALID);
  size_t a = dfx__dtype_storage(from), b = dfx__dtype_storage(to);
  if (!a || !b || from == DFX_STRING || to == DFX_STRING || in->rank < 0) return;
  dfx_pshape out = *in;
  if (a > b) {
    if (a % b || out.rank >= DFX_MAX_DIMS) return;
    out.dims[out.rank++] = (int64_t)(a / b);
  } else if (a < b) {
    if (b % a || out.rank < 1 || (out.dims[out.rank - 1] >= 0 && out.dims[out.rank - 1] != (int64_t)(b / a))) return;
    out.rank--;
  }
  dfx__sctx_set(c, 0, &out);
}

/* Same shape as input 0 (reversals, rolls, shuffles and similar). */
static void unchanged(dfx_shape_ctx *c) { dfx__sctx_set(c, 0, dfx__sctx_in(c, 0)); }

const dfx_shape_fn_def dfx__shape_fns_array[] = {
    {"Shape", shape}, {"ShapeN", shape_n}, {"Size", size}, {"Rank", rank},
    {"Reshape", reshape}, {"ExpandDims", expand_dims}, {"Squeeze", squeeze},
    {"Transpose", transpose}, {"ConjugateTranspose", transpose},
    {"ConcatV2", concat_v2}, {"Concat", concat_v1}, {"ConcatOffset", concat_offset},
    {"Pack", pack}, {"Unpack", unpack},
    {"Fill", fill}, {"Empty", shape_from_0}, {"ScatterNd", shape_from_2},
    {"Tile", tile}, {"Pad", pad}, {"PadV2", pad}, {"MirrorPad", pad},
    {"BroadcastTo", broadcast_to}, {"BroadcastArgs", broadcast_args},
    {"BroadcastGradientArgs", broadcast_gradient_args},
    {"Range", range}, {"LinSpace", linspace}, {"OneHot", one_hot}, {"Bitcast", bitcast},
    {"Reverse", unchanged}, {"ReverseV2", unchanged}, {"ReverseSequence", unchanged}, {"Roll", unchanged},
    {"MatrixBandPart", unchanged}, {"MatrixSetDiag", unchanged}, {"InvertPermutation", unchanged},
    {"RandomShuffle", unchanged},
    {NULL, NULL}};
