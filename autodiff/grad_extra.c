/* grad_extra.c - gradients of the less common differentiable ops of the
 * corpus: segment sums, rolls and the block rearrangements (each the other's
 * inverse), diagonal ops, GatherNd, ReverseSequence, Cumprod, Cross,
 * MatrixInverse, Lgamma/Digamma, and conv2d_transpose (Conv2DBackpropInput
 * as a forward op). */
#include <string.h>

#include "grad.h"

#define X0 gin(e, node, 0)
#define X1 gin(e, node, 1)
#define Y0 gout(node, 0)
#define BIN(op, a, b) em_binary(e, op, a, b)
#define UN(op, a) em_unary(e, op, a)

static void copy_attrs(dfx_emit *e, int to, int from, const char *const *names) {
  for (int k = 0; names[k]; k++) em_copy_attr(e, to, from, names[k]);
}

/* Segment sums: each data row goes to one segment, so its gradient is that
 * segment's row of dy (ids must be valid: negative ids are not handled). */
static void g_segment_sum(dfx_emit *e, int node, const gp *dy, gp *dx) {
  gp ids = X1;
  gp in[3] = {dy[0], ids, em_scalar(e, DFX_I32, 0)};
  em_attr a[3] = {EA_TYPE("Tparams", em_dtype(e, dy[0])), EA_TYPE("Tindices", em_dtype(e, ids)),
                  EA_TYPE("Taxis", DFX_I32)};
  dx[0] = em_op(e, "GatherV2", in, 3, a, 3);
}

static void g_roll(dfx_emit *e, int node, const gp *dy, gp *dx) {
  gp in[3] = {dy[0], UN("Neg", X1), gin(e, node, 2)};
  em_attr a[3] = {EA_TYPE("T", em_dtype(e, dy[0])), EA_TYPE("Tshift", em_dtype(e, X1)),
                  EA_TYPE("Taxis", em_dtype(e, gin(e, node, 2)))};
  dx[0] = em_op(e, "Roll", in, 3, a, 3);
}

static void inverse_op(dfx_emit *e, int node, const gp *dy, gp *dx, const char *op, const char *const *attrs) {
  em_attr t = EA_TYPE("T", em_dtype(e, dy[0]));
  int id = em_node(e, op, NULL, dy, 1, &t, 1);
  copy_attrs(e, id, node, attrs);
  if (id >= 0) dx[0] = (gp){id, 0};
}
static const char *const block_attrs[] = {"block_size", "data_format", NULL};
static void g_depth_to_space(dfx_emit *e, int node, const gp *dy, gp *dx) {
  inverse_op(e, node, dy, dx, "SpaceToDepth", block_attrs);
}
static void g_space_to_depth(dfx_emit *e, int node, const gp *dy, gp *dx) {
  inverse_op(e, node, dy, dx, "DepthToSpace", block_attrs);
}
static void batch_space(dfx_emit *e, int node, const gp *dy, gp *dx, const char *op, const char *third) {
  gp in[3] = {dy[0], X1, gin(e, node, 2)};
  em_attr a[3] = {EA_TYPE("T", em_dtype(e, dy[0])), EA_TYPE("Tblock_shape", em_dtype(e, X1)),
                  EA_TYPE(third, em_dtype(e, gin(e, node, 2)))};
  dx[0] = em_op(e, op, in, 3, a, 3);
}
static void g_space_to_batch(dfx_emit *e, int node, const gp *dy, gp *dx) {
  batch_space(e, node, dy, dx, "BatchToSpaceND", "Tcrops");
}
static void g_batch_to_space(dfx_emit *e, int node, const gp *dy, gp *dx) {
  batch_space(e, node, dy, dx, "SpaceToBatchND", "Tpaddings");
}

static void g_diag(dfx_emit *e, int node, const gp *dy, gp *dx) { dx[0] = UN("DiagPart", dy[0]); }
static void g_diag_part(dfx_emit *e, int node, const gp *dy, gp *dx) { dx[0] = UN("Diag", dy[0]); }
static void g_matrix_diag(dfx_emit *e, int node, const gp *dy, gp *dx) { dx[0] = UN("MatrixDiagPart", dy[0]); }
static void g_matrix_diag_part(dfx_emit *e, int node, const gp *dy, gp *dx) { dx[0] = UN("MatrixDiag", dy[0]); }
static void g_matrix_set_diag(dfx_emit *e, int node, const gp *dy, gp *dx) {
  gp in[2] = {dy[0], em_zeros_like(e, X1)};
  em_attr t = EA_TYPE("T", em_dtype(e, dy[0]));
  dx[0] = em_op(e, "MatrixSetDiag", in, 2, &t, 1);
  dx[1] = UN("MatrixDiagPart", dy[0]);
}

static void g_gather_nd(dfx_emit *e, int node, const gp *dy, gp *dx) {
  gp idx = X1;
  dfx_dtype it = em_dtype(e, idx);
  gp in[3] = {idx, dy[0], em_shape(e, X0, it)};
  em_attr a[2] = {EA_TYPE("T", em_dtype(e, dy[0])), EA_TYPE("Tindices", it)};
  dx[0] = em_op(e, "ScatterNd", in, 3, a, 2);
}

static void g_reverse_sequence(dfx_emit *e, int node, const gp *dy, gp *dx) {
  gp in[2] = {dy[0], X1};
  em_attr a[2] = {EA_TYPE("T", em_dtype(e, dy[0])), EA_TYPE("Tlen", em_dtype(e, X1))};
  int id = em_node(e, "ReverseSequence", NULL, in, 2, a, 2);
  static const char *const attrs[] = {"seq_dim", "batch_dim", NULL};
  copy_attrs(e, id, node, attrs);
  if (id >= 0) dx[0] = (gp){id, 0};
}

/* Cumprod: d/dx_i = sum over outputs j using x_i of dy_j y_j / x_i, TF's
 * formula (x must have no zeros). */
static void g_cumprod(dfx_emit *e, int node, const gp *dy, gp *dx) {
  const dfx_node *n = &e->g->nodes[node];
  bool exclusive = dfx__attr_bool(n, "exclusive", false), reverse = dfx__attr_bool(n, "reverse", false);
  gp in[2] = {BIN("Mul", Y0, dy[0]), X1};
  em_attr a[4] = {EA_TYPE("T", em_dtype(e, dy[0])), EA_TYPE("Tidx", em_dtype(e, X1)), EA_BOOL("exclusive", exclusive),
                  EA_BOOL("reverse", !reverse)};
  dx[0] = BIN("RealDiv", em_op(e, "Cumsum", in, 2, a, 4), X0);
}

static void g_cross(dfx_emit *e, int node, const gp *dy, gp *dx) {
  dx[0] = BIN("Cross", X1, dy[0]);
  dx[1] = BIN("Cross", dy[0], X0);
}

/* d(A^-1) = -A^-T dY A^-T. */
static void g_matrix_inverse(dfx_emit *e, int node, const gp *dy, gp *dx) {
  if (dfx__attr_bool(&e->g->nodes[node], "adjoint", false)) {
    em_fail(e, DFX_EUNIMPL, "Node '%s' (MatrixInverse): gradient with adjoint = true is not implemented",
            e->g->nodes[node].name);
    return;
  }
  gp y = Y0;
  gp t = em_matmul(e, "BatchMatMulV2", y, dy[0], "adj_x", true, "adj_y", false);
  dx[0] = UN("Neg", em_matmul(e, "BatchMatMulV2", t, y, "adj_x", false, "adj_y", true));
}

static void g_lgamma(dfx_emit *e, int node, const gp *dy, gp *dx) { dx[0] = BIN("Mul", dy[0], UN("Digamma", X0)); }
static void g_digamma(dfx_emit *e, int node, const gp *dy, gp *dx) {
  gp x = X0;
  dx[0] = BIN("Mul", dy[0], BIN("Polygamma", em_ones_like(e, x), x));
}
static void g_check_numerics(dfx_emit *e, int node, const gp *dy, gp *dx) { dx[0] = em_ident(e, dy[0]); }

/* conv2d_transpose: out = Conv2DBackpropInput(sizes, filter, x). */
static void g_conv_transpose(dfx_emit *e, int node, const gp *dy, gp *dx) {
  static const char *const attrs[] = {"strides", "padding", "explicit_paddings", "data_format", "dilations",
                                      "use_cudnn_on_gpu", NULL};
  gp f = X1, x = gin(e, node, 2);
  em_attr t = EA_TYPE("T", em_dtype(e, dy[0]));
  gp in_f[3] = {dy[0], em_shape(e, f, DFX_I32), x};
  int a = em_node(e, "Conv2DBackpropFilter", NULL, in_f, 3, &t, 1);
  copy_attrs(e, a, node, attrs);
  gp in_x[2] = {dy[0], f};
  int b = em_node(e, "Conv2D", NULL, in_x, 2, &t, 1);
  copy_attrs(e, b, node, attrs);
  if (a >= 0 && b >= 0) dx[1] = (gp){a, 0}, dx[2] = (gp){b, 0};
}

static void g_polygamma(dfx_emit *e, int node, const gp *dy, gp *dx) { /* d/dx psi^(n)(x) = psi^(n+1)(x) */
  gp a = X0;
  dx[1] = BIN("Mul", dy[0], BIN("Polygamma", BIN("AddV2", a, em_ones_like(e, a)), X1));
}

/* dy with two trailing unit dims, to scale matrices. */
static gp expand2(dfx_emit *e, gp x) {
  gp m1 = em_scalar(e, DFX_I32, -1);
  em_attr a[2] = {EA_TYPE("T", em_dtype(e, x)), EA_TYPE("Tdim", DFX_I32)};
  gp in1[2] = {x, m1};
  gp once = em_op(e, "ExpandDims", in1, 2, a, 2);
  gp in2[2] = {once, m1};
  return em_op(e, "ExpandDims", in2, 2, a, 2);
}
static gp inverse_t(dfx_emit *e, gp m) { /* A^-T */
  em_attr a[2] = {EA_TYPE("T", em_dtype(e, m)), EA_BOOL("adjoint", true)};
  return em_op(e, "MatrixInverse", &m, 1, a, 2);
}
/* d det(A) = det(A) A^-T; d log|det A| = A^-T. */
static void g_matrix_determinant(dfx_emit *e, int node, const gp *dy, gp *dx) {
  dx[0] = BIN("Mul", expand2(e, BIN("Mul", dy[0], Y0)), inverse_t(e, X0));
}
static void g_log_matrix_determinant(dfx_emit *e, int node, const gp *dy, gp *dx) {
  dx[0] = BIN("Mul", expand2(e, dy[1]), inverse_t(e, X0));
}

static void g_matrix_band_part(dfx_emit *e, int node, const gp *dy, gp *dx) {
  gp in[3] = {dy[0], X1, gin(e, node, 2)};
  em_attr a[2] = {EA_TYPE("T", em_dtype(e, dy[0])), EA_TYPE("Tindex", em_dtype(e, X1))};
  dx[0] = em_op(e, "MatrixBandPart", in, 3, a, 2);
}

/* DynamicStitch(indices[N], data[N]): data k's gradient gathers dy at its
 * indices (an index stitched twice keeps the later one, so the earlier
 * one's gradient is not masked: indices are assumed distinct). */
static void g_dynamic_stitch(dfx_emit *e, int node, const gp *dy, gp *dx) {
  int n = e->g->nodes[node].n_in / 2;
  em_attr a[3] = {EA_TYPE("Tparams", em_dtype(e, dy[0])), EA_TYPE("Tindices", DFX_I32), EA_TYPE("Taxis", DFX_I32)};
  for (int k = 0; k < n; k++) {
    gp in[3] = {dy[0], gin(e, node, k), em_scalar(e, DFX_I32, 0)};
    dx[n + k] = em_op(e, "GatherV2", in, 3, a, 3);
  }
}

/* DynamicPartition: stitch the outputs' gradients back by the positions
 * each partition took. */
static void g_dynamic_partition(dfx_emit *e, int node, const gp *dy, gp *dx) {
  int n = e->g->nodes[node].n_out;
  gp parts = X1, zero = em_scalar(e, DFX_I32, 0), one = em_scalar(e, DFX_I32, 1);
  gp pos = em_reshape(e, em_range(e, zero, em_size(e, parts), one), em_shape(e, parts, DFX_I32));
  gp in_p[2] = {pos, parts};
  em_attr pa[2] = {EA_TYPE("T", DFX_I32), EA_INT("num_partitions", n)};
  int p = em_node(e, "DynamicPartition", NULL, in_p, 2, pa, 2);
  if (p < 0) return;
  gp in[2 * n];
  for (int k = 0; k < n; k++) in[k] = (gp){p, k}, in[n + k] = dy[k];
  em_attr sa[2] = {EA_TYPE("T", em_dtype(e, dy[0])), EA_INT("N", n)};
  gp flat = em_op(e, "DynamicStitch", in, 2 * n, sa, 2);
  /* partitions may have fewer dims than data: rows keep the data's tail */
  gp dshape = em_shape(e, X0, DFX_I32);
  dx[0] = em_reshape(e, flat, dshape);
}

static void g_scatter_nd(dfx_emit *e, int node, const gp *dy, gp *dx) {
  gp in[2] = {dy[0], X0};
  em_attr a[2] = {EA_TYPE("Tparams", em_dtype(e, dy[0])), EA_TYPE("Tindices", em_dtype(e, X0))};
  dx[1] = em_op(e, "GatherNd", in, 2, a, 2);
}

static void g_sparse_dense_add(dfx_emit *e, int node, const gp *dy, gp *dx) {
  gp in[2] = {dy[0], X0};
  em_attr a[2] = {EA_TYPE("Tparams", em_dtype(e, dy[0])), EA_TYPE("Tindices", em_dtype(e, X0))};
  dx[1] = em_op(e, "GatherNd", in, 2, a, 2);
  dx[3] = em_ident(e, dy[0]);
}

const dfx_grad_def dfx__grad_extra[] = {
    {"UnsortedSegmentSum", g_segment_sum}, {"SegmentSum", g_segment_sum}, {"Roll", g_roll},
    {"DepthToSpace", g_depth_to_space}, {"SpaceToDepth", g_space_to_depth}, {"SpaceToBatchND", g_space_to_batch},
    {"BatchToSpaceND", g_batch_to_space}, {"Diag", g_diag}, {"DiagPart", g_diag_part},
    {"MatrixDiag", g_matrix_diag}, {"MatrixDiagPart", g_matrix_diag_part}, {"MatrixSetDiag", g_matrix_set_diag},
    {"GatherNd", g_gather_nd}, {"ReverseSequence", g_reverse_sequence}, {"Cumprod", g_cumprod},
    {"Cross", g_cross}, {"MatrixInverse", g_matrix_inverse}, {"Lgamma", g_lgamma}, {"Digamma", g_digamma},
    {"CheckNumerics", g_check_numerics}, {"Conv2DBackpropInput", g_conv_transpose}, {"Polygamma", g_polygamma},
    {"MatrixDeterminant", g_matrix_determinant}, {"LogMatrixDeterminant", g_log_matrix_determinant},
    {"MatrixBandPart", g_matrix_band_part}, {"DynamicStitch", g_dynamic_stitch},
    {"ParallelDynamicStitch", g_dynamic_stitch}, {"DynamicPartition", g_dynamic_partition},
    {"ScatterNd", g_scatter_nd}, {"SparseTensorDenseAdd", g_sparse_dense_add},
    {NULL, NULL},
};
