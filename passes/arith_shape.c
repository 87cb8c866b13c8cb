/* arith_shape.c - the `arith` pass's layout rules (arith.h): a Transpose,
 * Reshape, Squeeze, ExpandDims, Slice, StridedSlice, Tile or Pad that
 * returns its input unchanged, a pair that undoes itself (two Transposes,
 * ExpandDims then Squeeze of that axis and back), and a Reshape of a
 * Reshape (the inner one is skipped). Each needs constant operands and
 * usually x's rank or dims: both to know the result is x and to know the
 * original could not have failed (a rewrite must not hide an error). */
#include <string.h>

#include "arith.h"

static bool is_perm(const int64_t *p, int n) {
  bool seen[DFX_MAX_DIMS * 2] = {false};
  for (int j = 0; j < n; j++) {
    if (p[j] < 0 || p[j] >= n || seen[p[j]]) return false;
    seen[p[j]] = true;
  }
  return true;
}

static bool rank_is(const dfx_arith *a, int i, int k, int rank) {
  dfx_static_shape s;
  return dfx__arith_shape(a, i, k, &s) && s.rank == rank;
}

/* Transpose(x, identity) -> x; Transpose(Transpose(x, p1), p2) -> x when
 * p1[p2[j]] == j. x's rank must equal the permutation's length (else the
 * original fails). */
static int rule_transpose(dfx_arith *a, int i) {
  int64_t p[DFX_MAX_DIMS * 2], p1[DFX_MAX_DIMS * 2];
  int n = dfx__arith_ints(dfx__arith_const(a, i, 1), false, p);
  if (n < 0 || !is_perm(p, n)) return 0;
  bool identity = true;
  for (int j = 0; j < n; j++) identity &= p[j] == j;
  if (identity) return rank_is(a, i, 0, n) ? dfx__arith_forward(a, i, (int[]){0}, 1) : 0;
  const dfx_node *m = dfx__arith_src(a, i, 0);
  int mid = a->c->g->nodes[i].in[0].node;
  if (strcmp(m->op, "Transpose") != 0 || dfx__arith_ints(dfx__arith_const(a, mid, 1), false, p1) != n ||
      !is_perm(p1, n) || !rank_is(a, mid, 0, n))
    return 0;
  for (int j = 0; j < n; j++)
    if (p1[p[j]] != j) return 0;
  return dfx__arith_forward(a, i, (int[]){0, 0}, 2);
}

/* A Reshape target: its dims, where the one -1 is (or -1), and the product
 * of the other dims. False for a target TensorFlow would reject. */
typedef struct target {
  int n, wild;
  int64_t dims[DFX_MAX_DIMS * 2];
  int64_t known;
} target;

static bool read_target(const dfx_tensor *t, target *s) {
  if ((s->n = dfx__arith_ints(t, false, s->dims)) < 0) return false;
  s->wild = -1;
  s->known = 1;
  for (int d = 0; d < s->n; d++) {
    if (s->dims[d] == -1 && s->wild < 0) s->wild = d;
    else if (s->dims[d] < 0) return false;
    else if (s->dims[d] > 0 && s->known > INT64_MAX / s->dims[d]) return false;
    else s->known *= s->dims[d];
  }
  return true;
}

/* Reshape(x, s) where s is x's own shape: every dim of s equals x's known
 * dim, except at most one -1 standing for a dim of x, the others then
 * having a non-zero product (so -1 resolves to that dim and never fails). */
static bool reshape_to_self(const dfx_arith *a, int i, const target *s) {
  dfx_static_shape x;
  if (!dfx__arith_shape(a, i, 0, &x) || x.rank != s->n) return false;
  for (int d = 0; d < s->n; d++)
    if (d != s->wild && x.dims[d] != s->dims[d]) return false;
  return s->wild < 0 || s->known > 0;
}

/* Reshape(Reshape(x, s1), s2) -> Reshape(x, s2) when it fails exactly when
 * the pair does: the result depends only on x's size, and every size s2
 * accepts s1 accepts too. */
static bool inner_reshape_redundant(const target *s1, const target *s2) {
  if (s2->wild < 0) /* s2 accepts exactly its product */
    return s1->wild < 0 ? s1->known == s2->known : s1->known > 0 && s2->known % s1->known == 0;
  return s1->wild >= 0 && s1->known > 0 && s2->known > 0 && s2->known % s1->known == 0;
}

static int rule_reshape(dfx_arith *a, int i) {
  target s2, s1;
  if (!read_target(dfx__arith_const(a, i, 1), &s2)) return 0;
  if (reshape_to_self(a, i, &s2)) return dfx__arith_forward(a, i, (int[]){0}, 1);
  const dfx_node *m = dfx__arith_src(a, i, 0);
  int mid = a->c->g->nodes[i].in[0].node;
  if (strcmp(m->op, "Reshape") != 0 || !read_target(dfx__arith_const(a, mid, 1), &s1) ||
      !inner_reshape_redundant(&s1, &s2))
    return 0;
  return dfx__arith_bypass(a, i, 0, 0);
}

/* The one axis a Squeeze names, or false. */
static bool squeeze_axis(const dfx_node *n, int64_t *axis) {
  const dfx_attr_list *l = dfx__attr_list(n, "squeeze_dims");
  if (!l || l->n != 1 || l->kind != DFX_ATTR_I) return false;
  *axis = l->v.i[0];
  return true;
}

/* ExpandDims' axis (a scalar or one-element constant), or false. */
static bool expand_axis(const dfx_arith *a, int i, int64_t *axis) {
  int64_t v[DFX_MAX_DIMS * 2];
  if (dfx__arith_ints(dfx__arith_const(a, i, 1), true, v) != 1) return false;
  *axis = v[0];
  return true;
}

/* Squeeze(x) -> x when x's dims are all known and none is 1;
 * Squeeze(ExpandDims(x, e), [s]) -> x when both name the same new axis. */
static int rule_squeeze(dfx_arith *a, int i) {
  const dfx_node *n = &a->c->g->nodes[i];
  const dfx_attr_list *dims = dfx__attr_list(n, "squeeze_dims");
  dfx_static_shape x;
  if (!dims || dims->n == 0) {
    if (!dfx__arith_shape(a, i, 0, &x) || !dfx__static_shape_full(&x)) return 0;
    for (int d = 0; d < x.rank; d++)
      if (x.dims[d] == 1) return 0;
    return dfx__arith_forward(a, i, (int[]){0}, 1);
  }
  int64_t s, e;
  int mid = n->in[0].node;
  if (strcmp(dfx__arith_src(a, i, 0)->op, "ExpandDims") != 0 || !squeeze_axis(n, &s) || !expand_axis(a, mid, &e))
    return 0;
  if (dfx__arith_shape(a, mid, 0, &x)) {
    int r = x.rank; /* ExpandDims takes e in [-r-1, r]; the Squeeze sees rank r+1 */
    if (e < -r - 1 || e > r || s < -r - 1 || s > r) return 0;
    if ((e < 0 ? e + r + 1 : e) != (s < 0 ? s + r + 1 : s)) return 0;
  } else if (e != s || (e != 0 && e != -1)) {
    return 0; /* without x's rank only the two axes valid for any rank */
  }
  return dfx__arith_forward(a, i, (int[]){0, 0}, 2);
}

/* ExpandDims(Squeeze(x, [s]), e) -> x when x's dim s is known to be 1 and e
 * puts it back where it was. */
static int rule_expand_dims(dfx_arith *a, int i) {
  const dfx_node *n = &a->c->g->nodes[i];
  int mid = n->in[0].node;
  int64_t s, e;
  dfx_static_shape x;
  if (strcmp(dfx__arith_src(a, i, 0)->op, "Squeeze") != 0 || !squeeze_axis(&a->c->g->nodes[mid], &s) ||
      !expand_axis(a, i, &e) || !dfx__arith_shape(a, mid, 0, &x) || x.rank < 1)
    return 0;
  int r = x.rank;
  if (s < -r || s >= r || e < -r || e >= r) return 0;
  int64_t sn = s < 0 ? s + r : s, en = e < 0 ? e + r : e;
  if (sn != en || x.dims[sn] != 1) return 0;
  return dfx__arith_forward(a, i, (int[]){0, 0}, 2);
}

/* Slice(x, zeros, size) -> x when each size is -1 or x's known dim. */
static int rule_slice(dfx_arith *a, int i) {
  int64_t begin[DFX_MAX_DIMS * 2], size[DFX_MAX_DIMS * 2];
  int n = dfx__arith_ints(dfx__arith_const(a, i, 1), false, begin);
  dfx_static_shape x;
  if (n < 0 || dfx__arith_ints(dfx__arith_const(a, i, 2), false, size) != n || !dfx__arith_shape(a, i, 0, &x) ||
      x.rank != n)
    return 0;
  for (int d = 0; d < n; d++)
    if (begin[d] != 0 || (size[d] != -1 && size[d] != x.dims[d])) return 0;
  return dfx__arith_forward(a, i, (int[]){0}, 1);
}

/* StridedSlice taking all of x: no ellipsis, new or shrunk axes, stride 1
 * everywhere, each begin masked or 0, each end masked or at least x's known
 * dim (TensorFlow clamps it); dims past the spec are taken whole. */
static int rule_strided_slice(dfx_arith *a, int i) {
  const dfx_node *n = &a->c->g->nodes[i];
  int64_t b[DFX_MAX_DIMS * 2], e[DFX_MAX_DIMS * 2], s[DFX_MAX_DIMS * 2];
  int len = dfx__arith_ints(dfx__arith_const(a, i, 1), false, b);
  dfx_static_shape x;
  if (len < 0 || dfx__arith_ints(dfx__arith_const(a, i, 2), false, e) != len ||
      dfx__arith_ints(dfx__arith_const(a, i, 3), false, s) != len || !dfx__arith_shape(a, i, 0, &x) || x.rank < len)
    return 0;
  if (dfx__attr_int(n, "ellipsis_mask", 0) || dfx__attr_int(n, "new_axis_mask", 0) ||
      dfx__attr_int(n, "shrink_axis_mask", 0))
    return 0;
  int64_t bm = dfx__attr_int(n, "begin_mask", 0), em = dfx__attr_int(n, "end_mask", 0);
  for (int d = 0; d < len; d++) {
    if (s[d] != 1) return 0;
    if (!(bm >> d & 1) && b[d] != 0) return 0;
    if (!(em >> d & 1) && (x.dims[d] < 0 || e[d] < x.dims[d])) return 0;
  }
  return dfx__arith_forward(a, i, (int[]){0}, 1);
}

/* Tile(x, ones) -> x (x's rank must match the multiples). */
static int rule_tile(dfx_arith *a, int i) {
  int64_t m[DFX_MAX_DIMS * 2];
  int n = dfx__arith_ints(dfx__arith_const(a, i, 1), false, m);
  if (n < 0 || !rank_is(a, i, 0, n)) return 0;
  for (int d = 0; d < n; d++)
    if (m[d] != 1) return 0;
  return dfx__arith_forward(a, i, (int[]){0}, 1);
}

/* Pad/PadV2/MirrorPad(x, zeros[r, 2]) -> x (x's rank must be r). */
static int rule_pad(dfx_arith *a, int i) {
  const dfx_tensor *p = dfx__arith_const(a, i, 1);
  if (!p || (p->dtype != DFX_I32 && p->dtype != DFX_I64) || p->ndims != 2 || p->dims[1] != 2 ||
      !rank_is(a, i, 0, (int)p->dims[0]))
    return 0;
  for (int64_t k = 0; k < p->count; k++)
    if (dfx__tensor_get_i64(p, k) != 0) return 0;
  return dfx__arith_forward(a, i, (int[]){0}, 1);
}

const dfx_arith_rule dfx__arith_shape_rules[] = {
    {"Transpose", rule_transpose},
    {"Reshape", rule_reshape},
    {"Squeeze", rule_squeeze},
    {"ExpandDims", rule_expand_dims},
    {"Slice", rule_slice},
    {"StridedSlice", rule_strided_slice},
    {"Tile", rule_tile},
    {"Pad", rule_pad},
    {"PadV2", rule_pad},
    {"MirrorPad", rule_pad},
    {NULL, NULL},
};
