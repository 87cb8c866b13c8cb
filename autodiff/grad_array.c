/* grad_array.c - gradients of shape and data-movement ops: each moves dy
 * back to where the forward op took its elements from, summing where an
 * element was used several times (Tile, Gather, broadcasts). Index and
 * shape inputs get no gradient. */
#include <string.h>

#include "grad.h"

#define X0 gin(e, node, 0)
#define X1 gin(e, node, 1)
#define Y0 gout(node, 0)
#define BIN(op, a, b) em_binary(e, op, a, b)

static int n_in(const dfx_emit *e, int node) { return e->g->nodes[node].n_in; }

static void g_reshape(dfx_emit *e, int node, const gp *dy, gp *dx) {
  dx[0] = em_reshape(e, dy[0], em_shape(e, X0, DFX_I32));
}

static void g_identity_n(dfx_emit *e, int node, const gp *dy, gp *dx) {
  for (int k = 0; k < n_in(e, node); k++) dx[k] = em_ident(e, dy[k]);
}

static void g_transpose(dfx_emit *e, int node, const gp *dy, gp *dx) {
  gp perm = X1;
  gp in[2] = {dy[0], em_unary(e, "InvertPermutation", perm)};
  em_attr a[2] = {EA_TYPE("T", em_dtype(e, dy[0])), EA_TYPE("Tperm", em_dtype(e, perm))};
  dx[0] = em_op(e, "Transpose", in, 2, a, 2);
}

/* Concat: split dy back into pieces the sizes of the inputs along axis. */
static void concat_grad(dfx_emit *e, int node, const gp *dy, gp *dx, int first, int n, gp axis) {
  gp sizes[n];
  gp ax = BIN("FloorMod", em_cast(e, axis, DFX_I32), em_rank(e, dy[0]));
  em_attr ga[3] = {EA_TYPE("Tparams", DFX_I32), EA_TYPE("Tindices", DFX_I32), EA_TYPE("Taxis", DFX_I32)};
  for (int k = 0; k < n; k++) {
    gp in[3] = {em_shape(e, gin(e, node, first + k), DFX_I32), ax, em_scalar(e, DFX_I32, 0)};
    sizes[k] = em_op(e, "GatherV2", in, 3, ga, 3);
  }
  gp in[3] = {dy[0], em_pack(e, sizes, n, 0), ax};
  em_attr a[3] = {EA_TYPE("T", em_dtype(e, dy[0])), EA_TYPE("Tlen", DFX_I32), EA_INT("num_split", n)};
  int s = em_node(e, "SplitV", NULL, in, 3, a, 3);
  if (s >= 0)
    for (int k = 0; k < n; k++) dx[first + k] = (gp){s, k};
}
static void g_concatv2(dfx_emit *e, int node, const gp *dy, gp *dx) {
  int n = n_in(e, node) - 1;
  concat_grad(e, node, dy, dx, 0, n, gin(e, node, n));
}
static void g_concat(dfx_emit *e, int node, const gp *dy, gp *dx) {
  concat_grad(e, node, dy, dx, 1, n_in(e, node) - 1, X0);
}

/* Split/SplitV: concatenate the outputs' gradients (zeros for unused ones). */
static void split_grad(dfx_emit *e, int node, const gp *dy, gp *dx, int k_value, gp axis) {
  int n = e->g->nodes[node].n_out;
  dx[k_value] = em_concat(e, dy, n, axis);
}
static void g_split(dfx_emit *e, int node, const gp *dy, gp *dx) { split_grad(e, node, dy, dx, 1, X0); }
static void g_splitv(dfx_emit *e, int node, const gp *dy, gp *dx) {
  split_grad(e, node, dy, dx, 0, gin(e, node, 2));
}

static void g_pack(dfx_emit *e, int node, const gp *dy, gp *dx) {
  int n = n_in(e, node);
  em_attr a[3] = {EA_TYPE("T", em_dtype(e, dy[0])), EA_INT("num", n),
                  EA_INT("axis", dfx__attr_int(&e->g->nodes[node], "axis", 0))};
  int u = em_node(e, "Unpack", NULL, dy, 1, a, 3);
  if (u >= 0)
    for (int k = 0; k < n; k++) dx[k] = (gp){u, k};
}
static void g_unpack(dfx_emit *e, int node, const gp *dy, gp *dx) {
  dx[0] = em_pack(e, dy, e->g->nodes[node].n_out, (int)dfx__attr_int(&e->g->nodes[node], "axis", 0));
}

/* Pad dy with zeros back to the input: before = begin, after = rest. */
static gp pad_to(dfx_emit *e, gp g, gp before, gp after) {
  gp parts[2] = {before, after};
  gp paddings = em_pack(e, parts, 2, 1);
  gp in[2] = {g, paddings};
  em_attr a[2] = {EA_TYPE("T", em_dtype(e, g)), EA_TYPE("Tpaddings", em_dtype(e, paddings))};
  return em_op(e, "Pad", in, 2, a, 2);
}
static void g_slice(dfx_emit *e, int node, const gp *dy, gp *dx) {
  gp x = X0, begin = X1;
  dfx_dtype it = em_dtype(e, begin);
  gp after = BIN("Sub", BIN("Sub", em_shape(e, x, it), begin), em_shape(e, Y0, it));
  dx[0] = pad_to(e, dy[0], begin, after);
}

/* StridedSlice: the same slice taken of x's flat element indices says
 * where each element of dy came from; dy is scatter-added there (all masks,
 * negative strides and shrink/new axes included, with no kernel of its
 * own). */
static void g_stridedslice(dfx_emit *e, int node, const gp *dy, gp *dx) {
  gp x = X0, zero = em_scalar(e, DFX_I32, 0), one = em_scalar(e, DFX_I32, 1);
  gp size = em_size(e, x), flat = em_ivec(e, DFX_I32, (int64_t[]){-1}, 1);
  gp idx = em_reshape(e, em_range(e, zero, size, one), em_shape(e, x, DFX_I32));
  gp in[4] = {idx, X1, gin(e, node, 2), gin(e, node, 3)};
  em_attr a[2] = {EA_TYPE("T", DFX_I32), EA_TYPE("Index", em_dtype(e, X1))};
  int s = em_node(e, "StridedSlice", NULL, in, 4, a, 2);
  static const char *const masks[] = {"begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask"};
  for (int k = 0; k < 5; k++) em_copy_attr(e, s, node, masks[k]);
  if (s < 0) return;
  gp in_u[3] = {em_reshape(e, dy[0], flat), em_reshape(e, (gp){s, 0}, flat), size};
  em_attr ua[3] = {EA_TYPE("T", em_dtype(e, dy[0])), EA_TYPE("Tindices", DFX_I32), EA_TYPE("Tnumsegments", DFX_I32)};
  dx[0] = em_reshape(e, em_op(e, "UnsortedSegmentSum", in_u, 3, ua, 3), em_shape(e, x, DFX_I32));
}

/* Pad: slice the input's window back out of dy. */
static void g_pad(dfx_emit *e, int node, const gp *dy, gp *dx) {
  gp p = X1;
  dfx_dtype it = em_dtype(e, p);
  int64_t b0[2] = {0, 0}, s0[2] = {-1, 1};
  gp in_b[3] = {p, em_ivec(e, it, b0, 2), em_ivec(e, it, s0, 2)};
  em_attr sa[2] = {EA_TYPE("T", it), EA_TYPE("Index", it)};
  gp begin = em_reshape(e, em_op(e, "Slice", in_b, 3, sa, 2), em_ivec(e, DFX_I32, (int64_t[]){-1}, 1));
  gp in[3] = {dy[0], begin, em_shape(e, X0, it)};
  em_attr a[2] = {EA_TYPE("T", em_dtype(e, dy[0])), EA_TYPE("Index", it)};
  dx[0] = em_op(e, "Slice", in, 3, a, 2);
}

/* Tile: view dy as [m0, d0, m1, d1, ...] and sum the multiples away. */
static void g_tile(dfx_emit *e, int node, const gp *dy, gp *dx) {
  gp mult = em_cast(e, X1, DFX_I32);
  gp parts[2] = {mult, em_shape(e, X0, DFX_I32)};
  gp split_shape = em_reshape(e, em_pack(e, parts, 2, 1), em_ivec(e, DFX_I32, (int64_t[]){-1}, 1));
  gp axes = em_range(e, em_scalar(e, DFX_I32, 0), em_size(e, split_shape), em_scalar(e, DFX_I32, 2));
  dx[0] = em_reshape(e, em_sum(e, em_reshape(e, dy[0], split_shape), axes, false), em_shape(e, X0, DFX_I32));
}

/* GatherV2 (and Gather, axis 0): scatter-add the rows of dy into the
 * params' gathered axis. For axis a > 0 the index dims of dy are first
 * moved to the front and the result moved back; every rank is taken from
 * the tensors at run time, so only the axis must be a constant. */
static gp slice1(dfx_emit *e, gp v, gp begin, gp size) {
  gp in[3] = {v, em_reshape(e, begin, em_ivec(e, DFX_I32, (int64_t[]){1}, 1)),
              em_reshape(e, size, em_ivec(e, DFX_I32, (int64_t[]){1}, 1))};
  em_attr a[2] = {EA_TYPE("T", DFX_I32), EA_TYPE("Index", DFX_I32)};
  return em_op(e, "Slice", in, 3, a, 2);
}

static gp transpose(dfx_emit *e, gp x, gp perm) {
  gp in[2] = {x, perm};
  em_attr a[2] = {EA_TYPE("T", em_dtype(e, x)), EA_TYPE("Tperm", DFX_I32)};
  return em_op(e, "Transpose", in, 2, a, 2);
}

static void gather_grad(dfx_emit *e, int node, const gp *dy, gp *dx, int64_t axis) {
  gp params = X0, idx = X1;
  gp zero = em_scalar(e, DFX_I32, 0), one = em_scalar(e, DFX_I32, 1), minus1 = em_scalar(e, DFX_I32, -1);
  gp pshape = em_shape(e, params, DFX_I32), prank = em_size(e, pshape);
  gp a = BIN("FloorMod", em_scalar(e, DFX_I32, (double)axis), prank);
  gp a1 = BIN("AddV2", a, one);
  gp ni = em_rank(e, idx), dyrank = em_rank(e, dy[0]);
  /* dy with the index dims first: [I..., outer..., inner...] */
  gp p_parts[3] = {em_range(e, a, BIN("AddV2", a, ni), one), em_range(e, zero, a, one),
                   em_range(e, BIN("AddV2", a, ni), dyrank, one)};
  gp moved = transpose(e, dy[0], em_concat(e, p_parts, 3, zero));
  gp outer = slice1(e, pshape, zero, a), inner = slice1(e, pshape, a1, minus1);
  gp v_parts[3] = {em_reshape(e, em_size(e, idx), em_ivec(e, DFX_I32, (int64_t[]){1}, 1)), outer, inner};
  gp values = em_reshape(e, moved, em_concat(e, v_parts, 3, zero));
  gp flat_idx = em_reshape(e, idx, em_ivec(e, DFX_I32, (int64_t[]){-1}, 1));
  gp rows = em_reshape(e, slice1(e, pshape, a, one), em_ivec(e, DFX_I32, NULL, 0));
  gp in[3] = {values, flat_idx, em_cast(e, rows, em_dtype(e, flat_idx))};
  em_attr ua[3] = {EA_TYPE("T", em_dtype(e, dy[0])), EA_TYPE("Tindices", em_dtype(e, flat_idx)),
                   EA_TYPE("Tnumsegments", em_dtype(e, flat_idx))};
  gp summed = em_op(e, "UnsortedSegmentSum", in, 3, ua, 3); /* [p_a, outer..., inner...] */
  if (axis == 0) {
    dx[0] = summed;
    return;
  }
  gp b_parts[3] = {em_range(e, one, a1, one), em_reshape(e, zero, em_ivec(e, DFX_I32, (int64_t[]){1}, 1)),
                   em_range(e, a1, prank, one)};
  dx[0] = transpose(e, summed, em_concat(e, b_parts, 3, zero));
}
static void g_gatherv2(dfx_emit *e, int node, const gp *dy, gp *dx) {
  const dfx_node *n = &e->g->nodes[node];
  const dfx_node *ax = &e->g->nodes[n->in[2].node];
  const dfx_tensor *t = strcmp(ax->op, "Const") == 0 ? dfx__attr_tensor(ax, "value") : NULL;
  if (!t || t->count != 1 || dfx__attr_int(n, "batch_dims", 0) != 0) {
    em_fail(e, DFX_EUNIMPL, "Node '%s' (GatherV2): gradient needs a constant axis and batch_dims 0", n->name);
    return;
  }
  gather_grad(e, node, dy, dx, dfx__tensor_get_i64(t, 0));
}
static void g_gather(dfx_emit *e, int node, const gp *dy, gp *dx) { gather_grad(e, node, dy, dx, 0); }

static void g_select(dfx_emit *e, int node, const gp *dy, gp *dx) {
  gp c = X0, z = em_zeros_like(e, dy[0]);
  dx[1] = em_select(e, c, dy[0], z);
  dx[2] = em_select(e, c, z, dy[0]);
}
static void g_selectv2(dfx_emit *e, int node, const gp *dy, gp *dx) {
  gp c = X0, z = em_zeros_like(e, dy[0]);
  em_attr a = EA_TYPE("T", em_dtype(e, dy[0]));
  gp in_t[3] = {c, dy[0], z}, in_e[3] = {c, z, dy[0]};
  gp gt = em_op(e, "SelectV2", in_t, 3, &a, 1), ge = em_op(e, "SelectV2", in_e, 3, &a, 1);
  gp unused;
  em_unbroadcast(e, gin(e, node, 1), dy[0], gt, GP_NONE, &dx[1], &unused);
  em_unbroadcast(e, gin(e, node, 2), dy[0], ge, GP_NONE, &dx[2], &unused);
}

static void g_fill(dfx_emit *e, int node, const gp *dy, gp *dx) {
  gp axes = em_range(e, em_scalar(e, DFX_I32, 0), em_rank(e, dy[0]), em_scalar(e, DFX_I32, 1));
  dx[1] = em_sum(e, dy[0], axes, false);
}
static void g_broadcastto(dfx_emit *e, int node, const gp *dy, gp *dx) {
  gp unused;
  em_unbroadcast(e, X0, dy[0], dy[0], GP_NONE, &dx[0], &unused);
}
static void g_reverse(dfx_emit *e, int node, const gp *dy, gp *dx) {
  gp in[2] = {dy[0], X1};
  em_attr a[2] = {EA_TYPE("T", em_dtype(e, dy[0])), EA_TYPE("Tidx", em_dtype(e, X1))};
  dx[0] = em_op(e, "ReverseV2", in, 2, a, 2);
}
static void g_cumsum(dfx_emit *e, int node, const gp *dy, gp *dx) {
  const dfx_node *n = &e->g->nodes[node];
  gp in[2] = {dy[0], X1};
  em_attr a[4] = {EA_TYPE("T", em_dtype(e, dy[0])), EA_TYPE("Tidx", em_dtype(e, X1)),
                  EA_BOOL("exclusive", dfx__attr_bool(n, "exclusive", false)),
                  EA_BOOL("reverse", !dfx__attr_bool(n, "reverse", false))};
  dx[0] = em_op(e, "Cumsum", in, 2, a, 4);
}

const dfx_grad_def dfx__grad_array[] = {
    {"Reshape", g_reshape}, {"ExpandDims", g_reshape}, {"Squeeze", g_reshape}, {"IdentityN", g_identity_n},
    {"Transpose", g_transpose}, {"ConcatV2", g_concatv2}, {"Concat", g_concat}, {"Split", g_split},
    {"SplitV", g_splitv}, {"Pack", g_pack}, {"Unpack", g_unpack}, {"Slice", g_slice},
    {"StridedSlice", g_stridedslice}, {"Pad", g_pad}, {"PadV2", g_pad}, {"Tile", g_tile},
    {"GatherV2", g_gatherv2}, {"Gather", g_gather}, {"Select", g_select}, {"SelectV2", g_selectv2},
    {"Fill", g_fill}, {"BroadcastTo", g_broadcastto}, {"ReverseV2", g_reverse}, {"Cumsum", g_cumsum},
    {"Shape", NULL}, {"ShapeN", NULL}, {"Size", NULL}, {"Rank", NULL}, {"Range", NULL},
    {"RandomUniform", NULL}, {"RandomStandardNormal", NULL}, {"TruncatedNormal", NULL},
    {NULL, NULL},
};
