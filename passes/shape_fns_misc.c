/* shape_fns_misc.c - shape functions of the remaining op families: random
 * ops (shape from a value), TensorArray and Stack ops (flows are scalars,
 * elements have the shape their array checks writes against), state updates, data-dependent
 * sizes (Where, Unique, DynamicPartition, segment sums: the unknown dim is
 * where the data decides), linear algebra (Svd, determinants, solves,
 * diagonals), and a few one-offs. */
#include <string.h>

#include "shape_fn.h"

static void set_scalar(dfx_shape_ctx *c, int k) {
  dfx_pshape s = dfx__pshape_scalar();
  dfx__sctx_set(c, k, &s);
}

/* s followed by the dims of t from `from` on; false when too long or unknown. */
static bool concat_tail(const dfx_pshape *s, const dfx_pshape *t, int from, dfx_pshape *out) {
  if (s->rank < 0 || t->rank < 0 || from > t->rank || s->rank + t->rank - from > DFX_MAX_DIMS) return false;
  *out = *s;
  for (int i = from; i < t->rank; i++) out->dims[out->rank++] = t->dims[i];
  return true;
}

/* ---- random ops ---- */

static void random_shape(dfx_shape_ctx *c) {
  dfx_pshape s;
  if (dfx__sctx_shape_from_value(c, 0, &s)) dfx__sctx_set(c, 0, &s);
}

/* RandomGamma(shape, alpha) and RandomPoissonV2(shape, rate): shape ++ the
 * parameter's shape. */
static void random_param(dfx_shape_ctx *c) {
  dfx_pshape s, out;
  if (dfx__sctx_shape_from_value(c, 0, &s) && concat_tail(&s, dfx__sctx_in(c, 1), 0, &out)) dfx__sctx_set(c, 0, &out);
}

static void multinomial(dfx_shape_ctx *c) {
  dfx_pshape logits;
  int64_t n;
  if (!dfx__pshape_with_rank(dfx__sctx_in(c, 0), 2, &logits)) return;
  dfx_pshape out = {.rank = 2, .dims = {logits.dims[0], dfx__sctx_scalar(c, 1, &n) && n >= 0 ? n : DFX_DIM_UNKNOWN}};
  dfx__sctx_set(c, 0, &out);
}

/* ---- TensorArray and Stack ---- */

/* The handle (output 0) carries its creator, so that reads through it,
 * however many Enters and Merges later, find the element_shape every
 * write was checked against; the flow is a scalar. */
static void ta_create(dfx_shape_ctx *c) {
  if (c->n_out > 0) c->out[0].origin = c->node;
  dfx_pshape s = dfx__pshape_scalar();
  dfx__sctx_set(c, c->n_out - 1, &s);
}

static void flow_last(dfx_shape_ctx *c) { set_scalar(c, c->n_out - 1); }
static void flow_0(dfx_shape_ctx *c) { set_scalar(c, 0); }
static void ta_size(dfx_shape_ctx *c) { set_scalar(c, 0); }

/* The element shape of the TensorArrayV3 whose handle is input 0, or an
 * unknown shape. Every write into it was checked against it, and the
 * array only narrows it; so every element read back fits it. */
static dfx_pshape ta_element(const dfx_shape_ctx *c) {
  const dfx_node *o = c->n_in > 0 ? c->in[0]->origin : NULL;
  const dfx_shape *e = o && strcmp(o->op, "TensorArrayV3") == 0 ? dfx__attr_shape(o, "element_shape") : NULL;
  return e && e->rank >= 0 ? dfx__pshape_make(e->rank, e->dims) : dfx__pshape_unknown();
}

static void ta_read(dfx_shape_ctx *c) {
  dfx_pshape e = ta_element(c);
  dfx__sctx_set(c, 0, &e);
}

/* Gather: [len(indices)] ++ the element shape. Which element shape holds
 * depends on the kernel's paths: a gather of n > 0 elements checks them
 * against its own element_shape attr (and they fit the array's); one of
 * none returns that attr when it is fully defined and the array's shape
 * otherwise. */
static void ta_gather(dfx_shape_ctx *c) {
  const dfx_shape *ga = dfx__attr_shape(c->node, "element_shape");
  dfx_pshape idx, out, own = ta_element(c), e;
  dfx_pshape g = ga && ga->rank >= 0 ? dfx__pshape_make(ga->rank, ga->dims) : dfx__pshape_unknown();
  if (!dfx__pshape_with_rank(dfx__sctx_in(c, 1), 1, &idx)) return;
  if (idx.dims[0] > 0) {
    if (!dfx__pshape_merge(&g, &own, &e)) return; /* the run fails */
  } else {
    e = dfx__pshape_known(&g) ? g : own;
  }
  if (concat_tail(&idx, &e, 0, &out)) dfx__sctx_set(c, 0, &out);
}

/* Concat: [?] ++ element_shape_except0, which only a hint vouches for. */
static void ta_concat(dfx_shape_ctx *c) {
  const dfx_shape *e = dfx__attr_shape(c->node, "element_shape_except0");
  dfx_pshape lengths = dfx__pshape_vector(DFX_DIM_UNKNOWN), out;
  dfx__sctx_set(c, 1, &lengths);
  if (!c->hints || !e || e->rank < 0) return;
  dfx_pshape es = dfx__pshape_make(e->rank, e->dims);
  if (concat_tail(&lengths, &es, 0, &out)) dfx__sctx_set(c, 0, &out);
}

/* StackPushV2 returns what it pushed. */
static void stack_push(dfx_shape_ctx *c) { dfx__sctx_forward(c, 0, 1); }

/* ---- state updates: the variable afterwards ---- */

static void like_0(dfx_shape_ctx *c) { dfx__sctx_set(c, 0, dfx__sctx_in(c, 0)); }
static void like_1(dfx_shape_ctx *c) { dfx__sctx_set(c, 0, dfx__sctx_in(c, 1)); }
static void like_3(dfx_shape_ctx *c) { dfx__sctx_set(c, 0, dfx__sctx_in(c, 3)); }

static void like_both(dfx_shape_ctx *c) {
  dfx_pshape m;
  if (dfx__pshape_merge(dfx__sctx_in(c, 0), dfx__sctx_in(c, 1), &m)) dfx__sctx_set(c, 0, &m);
}

/* ---- sizes the data decides ---- */

static void where(dfx_shape_ctx *c) {
  int r = dfx__sctx_in(c, 0)->rank;
  if (r < 0) return;
  dfx_pshape out = {.rank = 2, .dims = {DFX_DIM_UNKNOWN, r}};
  dfx__sctx_set(c, 0, &out);
}

/* Unique(x) -> y [?], idx like x; UniqueWithCounts adds count [?]. */
static void unique(dfx_shape_ctx *c) {
  dfx_pshape any = dfx__pshape_vector(DFX_DIM_UNKNOWN), x;
  if (!dfx__pshape_with_rank(dfx__sctx_in(c, 0), 1, &x)) return;
  dfx__sctx_set(c, 0, &any);
  dfx__sctx_set(c, 1, &x);
  dfx__sctx_set(c, 2, &any);
}

static void list_diff(dfx_shape_ctx *c) {
  dfx_pshape any = dfx__pshape_vector(DFX_DIM_UNKNOWN);
  dfx__sctx_set(c, 0, &any);
  dfx__sctx_set(c, 1, &any);
}

/* DynamicPartition(data, partitions): each part is [?] ++ data's dims
 * after partitions' rank. */
static void dynamic_partition(dfx_shape_ctx *c) {
  const dfx_pshape *d = dfx__sctx_in(c, 0), *p = dfx__sctx_in(c, 1);
  dfx_pshape head = dfx__pshape_vector(DFX_DIM_UNKNOWN), out;
  if (p->rank < 0 || !concat_tail(&head, d, p->rank, &out)) return;
  for (int k = 0; k < c->n_out; k++) dfx__sctx_set(c, k, &out);
}

/* DynamicStitch(indices x N, data x N): [?] ++ data[0]'s dims after indices[0]'s rank. */
static void dynamic_stitch(dfx_shape_ctx *c) {
  int n = c->n_in / 2;
  const dfx_pshape *ix = dfx__sctx_in(c, 0), *d = dfx__sctx_in(c, n);
  dfx_pshape head = dfx__pshape_vector(DFX_DIM_UNKNOWN), out;
  if (n < 1 || ix->rank < 0 || !concat_tail(&head, d, ix->rank, &out)) return;
  dfx__sctx_set(c, 0, &out);
}

static void segment_reduce(dfx_shape_ctx *c) {
  dfx_pshape head = dfx__pshape_vector(DFX_DIM_UNKNOWN), out;
  if (dfx__sctx_in(c, 0)->rank >= 1 && concat_tail(&head, dfx__sctx_in(c, 0), 1, &out)) dfx__sctx_set(c, 0, &out);
}

static void unsorted_segment_reduce(dfx_shape_ctx *c) {
  const dfx_pshape *d = dfx__sctx_in(c, 0), *ids = dfx__sctx_in(c, 1);
  int64_t n;
  dfx_pshape head = dfx__pshape_vector(dfx__sctx_scalar(c, 2, &n) && n >= 0 ? n : DFX_DIM_UNKNOWN), out;
  if (ids->rank < 0 || !concat_tail(&head, d, ids->rank, &out)) return;
  dfx__sctx_set(c, 0, &out);
}

/* ---- linear algebra ---- */

static int64_t dim_min(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  return a < 0 || b < 0 ? DFX_DIM_UNKNOWN : a < b ? a : b;
}

/* input [..., m, n]: s [..., p], u [..., m, m|p], v [..., n, n|p]. */
static void svd(dfx_shape_ctx *c) {
  const dfx_pshape *x = dfx__sctx_in(c, 0);
  if (x->rank < 2) return;
  int r = x->rank;
  int64_t m = x->dims[r - 2], n = x->dims[r - 1], p = dim_min(m, n);
  bool full = dfx__attr_bool(c->node, "full_matrices", false);
  dfx_pshape s = dfx__pshape_make(r - 1, x->dims), u = *x, v = *x;
  s.dims[r - 2] = p;
  u.dims[r - 2] = m;
  u.dims[r - 1] = full ? m : p;
  v.dims[r - 2] = n;
  v.dims[r - 1] = full ? n : p;
  dfx__sctx_set(c, 0, &s);
  /* Without compute_uv TF's shape function says [0] for u and v, but its
   * kernel makes scalars, and dfexec's kernel the batch shape: unknown. */
  if (!dfx__attr_bool(c->node, "compute_uv", true)) return;
  dfx__sctx_set(c, 1, &u);
  dfx__sctx_set(c, 2, &v);
}

/* Square matrices [..., n, n] in; the batch dims out (each output). */
static void determinant(dfx_shape_ctx *c) {
  const dfx_pshape *x = dfx__sctx_in(c, 0);
  int64_t n;
  if (x->rank < 2 || !dfx__dim_merge(x->dims[x->rank - 2], x->dims[x->rank - 1], &n)) return;
  dfx_pshape out = dfx__pshape_make(x->rank - 2, x->dims);
  for (int k = 0; k < c->n_out; k++) dfx__sctx_set(c, k, &out);
}

static void square(dfx_shape_ctx *c) {
  const dfx_pshape *x = dfx__sctx_in(c, 0);
  if (x->rank >= 0 && x->rank < 2) return;
  dfx_pshape out = *x;
  if (x->rank >= 2 && !dfx__dim_merge(x->dims[x->rank - 2], x->dims[x->rank - 1], &out.dims[x->rank - 1])) return;
  if (x->rank >= 2) out.dims[x->rank - 2] = out.dims[x->rank - 1];
  dfx__sctx_set(c, 0, &out);
}

/* MatrixSolve, MatrixTriangularSolve: matrix [..., m, m], rhs [..., m, k]
 * -> [..., m, k] with the batch dims broadcast. */
static void solve(dfx_shape_ctx *c) {
  const dfx_pshape *a = dfx__sctx_in(c, 0), *b = dfx__sctx_in(c, 1);
  if (a->rank < 2 || b->rank < 2) return;
  dfx_pshape ba = dfx__pshape_make(a->rank - 2, a->dims), bb = dfx__pshape_make(b->rank - 2, b->dims), out;
  int64_t m;
  if (!dfx__pshape_broadcast(&ba, &bb, &out) || !dfx__dim_merge(a->dims[a->rank - 1], b->dims[b->rank - 2], &m)) return;
  if (out.rank + 2 > DFX_MAX_DIMS) return;
  out.dims[out.rank++] = m;
  out.dims[out.rank++] = b->dims[b->rank - 1];
  dfx__sctx_set(c, 0, &out);
}

/* Lu(input [..., n, n]) -> lu like input, p [..., n]. */
static void lu(dfx_shape_ctx *c) {
  square(c);
  const dfx_pshape *x = &c->out[0].shape;
  if (x->rank < 2) return;
  dfx_pshape p = dfx__pshape_make(x->rank - 1, x->dims);
  dfx__sctx_set(c, 1, &p);
}

/* MatrixDiag: [..., n] -> [..., n, n]. */
static void matrix_diag(dfx_shape_ctx *c) {
  const dfx_pshape *x = dfx__sctx_in(c, 0);
  if (x->rank < 1 || x->rank >= DFX_MAX_DIMS) return;
  dfx_pshape out = *x;
  out.dims[out.rank] = out.dims[out.rank - 1];
  out.rank++;
  dfx__sctx_set(c, 0, &out);
}

/* MatrixDiagPart: [..., m, n] -> [..., min(m, n)]. */
static void matrix_diag_part(dfx_shape_ctx *c) {
  const dfx_pshape *x = dfx__sctx_in(c, 0);
  if (x->rank < 2) return;
  dfx_pshape out = dfx__pshape_make(x->rank - 1, x->dims);
  out.dims[x->rank - 2] = dim_min(x->dims[x->rank - 2], x->dims[x->rank - 1]);
  dfx__sctx_set(c, 0, &out);
}

/* Diag: [d...] -> [d..., d...]; DiagPart the inverse. */
static void diag(dfx_shape_ctx *c) {
  const dfx_pshape *x = dfx__sctx_in(c, 0);
  if (x->rank < 1 || 2 * x->rank > DFX_MAX_DIMS) return;
  dfx_pshape out = *x;
  for (int i = 0; i < x->rank; i++) out.dims[out.rank++] = x->dims[i];
  dfx__sctx_set(c, 0, &out);
}

static void diag_part(dfx_shape_ctx *c) {
  const dfx_pshape *x = dfx__sctx_in(c, 0);
  if (x->rank < 2 || x->rank % 2) return;
  dfx_pshape out = {.rank = x->rank / 2};
  for (int i = 0; i < out.rank; i++)
    if (!dfx__dim_merge(x->dims[i], x->dims[i + out.rank], &out.dims[i])) return;
  dfx__sctx_set(c, 0, &out);
}

/* ---- one-offs ---- */

static void histogram_fixed_width(dfx_shape_ctx *c) {
  int64_t n;
  dfx_pshape out = dfx__pshape_vector(dfx__sctx_scalar(c, 2, &n) && n >= 0 ? n : DFX_DIM_UNKNOWN);
  dfx__sctx_set(c, 0, &out);
}

/* CompareAndBitpack: [..., n] -> [..., n / 8]. */
static void compare_and_bitpack(dfx_shape_ctx *c) {
  const dfx_pshape *x = dfx__sctx_in(c, 0);
  if (x->rank < 1) return;
  dfx_pshape out = *x;
  int64_t *last = &out.dims[out.rank - 1];
  if (*last >= 0 && *last % 8) return;
  if (*last >= 0) *last /= 8;
  dfx__sctx_set(c, 0, &out);
}

static void parallel_concat(dfx_shape_ctx *c) {
  const dfx_shape *sh = dfx__attr_shape(c->node, "shape");
  if (!sh || sh->rank < 0) return;
  dfx_pshape out = dfx__pshape_make(sh->rank, sh->dims);
  dfx__sctx_set(c, 0, &out);
}

/* RaggedRange: nested splits [n + 1] and values [?]. */
static void ragged_range(dfx_shape_ctx *c) {
  int64_t n = -1;
  for (int k = 0; k < 3 && k < c->n_in; k++) {
    const dfx_pshape *s = dfx__sctx_in(c, k);
    if (s->rank == 1 && !dfx__dim_merge(n, s->dims[0], &n)) return;
  }
  dfx_pshape splits = dfx__pshape_vector(dfx__dim_add(n, 1)), values = dfx__pshape_vector(DFX_DIM_UNKNOWN);
  dfx__sctx_set(c, 0, &splits);
  dfx__sctx_set(c, 1, &values);
}

const dfx_shape_fn_def dfx__shape_fns_misc[] = {
    {"RandomUniform", random_shape}, {"RandomUniformInt", random_shape}, {"RandomStandardNormal", random_shape},
    {"TruncatedNormal", random_shape}, {"RandomGamma", random_param}, {"RandomPoissonV2", random_param},
    {"RandomPoisson", random_param}, {"Multinomial", multinomial},
    {"TensorArrayV3", ta_create}, {"TensorArrayGradV3", flow_last}, {"TensorArrayWriteV3", flow_0},
    {"TensorArrayScatterV3", flow_0}, {"TensorArraySplitV3", flow_0}, {"TensorArraySizeV3", ta_size},
    {"TensorArrayReadV3", ta_read}, {"TensorArrayGatherV3", ta_gather}, {"TensorArrayConcatV3", ta_concat}, {"StackPushV2", stack_push},
    {"Assign", like_1}, {"AssignAdd", like_both}, {"AssignSub", like_both}, {"ScatterUpdate", like_0},
    {"ScatterAdd", like_0}, {"ScatterSub", like_0}, {"ScatterMul", like_0}, {"ScatterDiv", like_0},
    {"ScatterMax", like_0}, {"ScatterMin", like_0}, {"ScatterNdUpdate", like_0}, {"ScatterNdAdd", like_0},
    {"ScatterNdSub", like_0}, {"SparseTensorDenseAdd", like_3},
    {"Where", where}, {"Unique", unique}, {"UniqueWithCounts", unique}, {"ListDiff", list_diff},
    {"DynamicPartition", dynamic_partition}, {"DynamicStitch", dynamic_stitch},
    {"ParallelDynamicStitch", dynamic_stitch}, {"SegmentSum", segment_reduce}, {"SegmentMean", segment_reduce},
    {"SegmentMax", segment_reduce}, {"SegmentMin", segment_reduce}, {"SegmentProd", segment_reduce},
    {"UnsortedSegmentSum", unsorted_segment_reduce}, {"UnsortedSegmentMax", unsorted_segment_reduce},
    {"UnsortedSegmentMin", unsorted_segment_reduce}, {"UnsortedSegmentProd", unsorted_segment_reduce},
    {"Svd", svd}, {"MatrixDeterminant", determinant}, {"LogMatrixDeterminant", determinant},
    {"MatrixInverse", square}, {"Cholesky", square}, {"MatrixSolve", solve}, {"MatrixTriangularSolve", solve},
    {"Lu", lu}, {"MatrixDiag", matrix_diag}, {"MatrixDiagPart", matrix_diag_part}, {"Diag", diag},
    {"DiagPart", diag_part}, {"HistogramFixedWidth", histogram_fixed_width},
    {"CompareAndBitpack", compare_and_bitpack}, {"ParallelConcat", parallel_concat},
    {"RaggedRange", ragged_range},
    {NULL, NULL}};
