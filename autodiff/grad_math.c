/* grad_math.c - gradients of elementwise math, matrix products and
 * reductions. Binary ops broadcast, so each operand's gradient is summed
 * over the axes it was broadcast along (em_unbroadcast). Formulas are the
 * textbook derivatives, written with ops that have kernels in every float
 * dtype so the numeric checks run in float64. */
#include <string.h>

#include "grad.h"

#define X0 gin(e, node, 0)
#define X1 gin(e, node, 1)
#define Y0 gout(node, 0)
#define BIN(op, a, b) em_binary(e, op, a, b)
#define UN(op, a) em_unary(e, op, a)
#define SC(v) em_scalar(e, em_dtype(e, X0), v)

/* ---- unary ---- */

static void g_identity(dfx_emit *e, int node, const gp *dy, gp *dx) { dx[0] = em_ident(e, dy[0]); }
static void g_neg(dfx_emit *e, int node, const gp *dy, gp *dx) { dx[0] = UN("Neg", dy[0]); }
static void g_abs(dfx_emit *e, int node, const gp *dy, gp *dx) { dx[0] = BIN("Mul", dy[0], UN("Sign", X0)); }
static void g_square(dfx_emit *e, int node, const gp *dy, gp *dx) {
  dx[0] = BIN("Mul", dy[0], BIN("Mul", X0, SC(2)));
}
static void g_sqrt(dfx_emit *e, int node, const gp *dy, gp *dx) { /* dy / (2 sqrt x) */
  dx[0] = BIN("RealDiv", dy[0], BIN("Mul", Y0, SC(2)));
}
static void g_rsqrt(dfx_emit *e, int node, const gp *dy, gp *dx) { /* -dy y^3 / 2 */
  dx[0] = BIN("Mul", dy[0], BIN("Mul", BIN("Mul", Y0, UN("Square", Y0)), SC(-0.5)));
}
static void g_exp(dfx_emit *e, int node, const gp *dy, gp *dx) { dx[0] = BIN("Mul", dy[0], Y0); }
static void g_expm1(dfx_emit *e, int node, const gp *dy, gp *dx) { dx[0] = BIN("Mul", dy[0], UN("Exp", X0)); }
static void g_log(dfx_emit *e, int node, const gp *dy, gp *dx) { dx[0] = BIN("RealDiv", dy[0], X0); }
static void g_log1p(dfx_emit *e, int node, const gp *dy, gp *dx) {
  dx[0] = BIN("RealDiv", dy[0], BIN("AddV2", X0, SC(1)));
}
static void g_reciprocal(dfx_emit *e, int node, const gp *dy, gp *dx) { /* -dy y^2 */
  dx[0] = UN("Neg", BIN("Mul", dy[0], UN("Square", Y0)));
}
static void g_sin(dfx_emit *e, int node, const gp *dy, gp *dx) { dx[0] = BIN("Mul", dy[0], UN("Cos", X0)); }
static void g_cos(dfx_emit *e, int node, const gp *dy, gp *dx) { dx[0] = UN("Neg", BIN("Mul", dy[0], UN("Sin", X0))); }
static void g_tan(dfx_emit *e, int node, const gp *dy, gp *dx) { /* dy / cos^2 x */
  dx[0] = BIN("RealDiv", dy[0], UN("Square", UN("Cos", X0)));
}
static void g_sinh(dfx_emit *e, int node, const gp *dy, gp *dx) { dx[0] = BIN("Mul", dy[0], UN("Cosh", X0)); }
static void g_cosh(dfx_emit *e, int node, const gp *dy, gp *dx) { dx[0] = BIN("Mul", dy[0], UN("Sinh", X0)); }
static void g_atan(dfx_emit *e, int node, const gp *dy, gp *dx) { /* dy / (1 + x^2) */
  dx[0] = BIN("RealDiv", dy[0], BIN("AddV2", UN("Square", X0), SC(1)));
}
static void g_asin(dfx_emit *e, int node, const gp *dy, gp *dx) { /* dy / sqrt(1 - x^2) */
  dx[0] = BIN("RealDiv", dy[0], UN("Sqrt", BIN("Sub", SC(1), UN("Square", X0))));
}
static void g_acos(dfx_emit *e, int node, const gp *dy, gp *dx) {
  dx[0] = UN("Neg", BIN("RealDiv", dy[0], UN("Sqrt", BIN("Sub", SC(1), UN("Square", X0)))));
}
static void g_asinh(dfx_emit *e, int node, const gp *dy, gp *dx) { dx[0] = BIN("RealDiv", dy[0], UN("Cosh", Y0)); }
static void g_acosh(dfx_emit *e, int node, const gp *dy, gp *dx) { dx[0] = BIN("RealDiv", dy[0], UN("Sinh", Y0)); }
static void g_atanh(dfx_emit *e, int node, const gp *dy, gp *dx) { /* dy / (1 - x^2) */
  dx[0] = BIN("RealDiv", dy[0], BIN("Sub", SC(1), UN("Square", X0)));
}
static void g_tanh(dfx_emit *e, int node, const gp *dy, gp *dx) { /* dy (1 - y^2) */
  dx[0] = BIN("Mul", dy[0], BIN("Sub", SC(1), UN("Square", Y0)));
}
static void g_sigmoid(dfx_emit *e, int node, const gp *dy, gp *dx) { /* dy y (1 - y) */
  dx[0] = BIN("Mul", dy[0], BIN("Mul", Y0, BIN("Sub", SC(1), Y0)));
}
static void g_erf(dfx_emit *e, int node, const gp *dy, gp *dx) { /* dy 2/sqrt(pi) exp(-x^2) */
  dx[0] = BIN("Mul", dy[0], BIN("Mul", UN("Exp", UN("Neg", UN("Square", X0))), SC(1.1283791670955126)));
}
static void g_erfc(dfx_emit *e, int node, const gp *dy, gp *dx) {
  dx[0] = BIN("Mul", dy[0], BIN("Mul", UN("Exp", UN("Neg", UN("Square", X0))), SC(-1.1283791670955126)));
}
/* Piecewise-constant functions: derivative zero wherever it exists (TF's
 * Sign gradient); Floor, Ceil, Round and Rint have no gradient at all. */
static void g_zero(dfx_emit *e, int node, const gp *dy, gp *dx) { dx[0] = em_zeros_like(e, X0); }

static void g_cast(dfx_emit *e, int node, const gp *dy, gp *dx) {
  dfx_dtype src = dfx__attr_type(&e->g->nodes[node], "SrcT", DFX_INVALID);
  if (src == DFX_F32 || src == DFX_F64 || src == DFX_F16 || src == DFX_BF16) dx[0] = em_cast(e, dy[0], src);
}

static void g_addn(dfx_emit *e, int node, const gp *dy, gp *dx) {
  int n = e->g->nodes[node].n_in;
  for (int k = 0; k < n; k++) dx[k] = em_ident(e, dy[0]);
}

/* ---- binary, broadcasting ---- */

static void g_add(dfx_emit *e, int node, const gp *dy, gp *dx) { em_unbroadcast(e, X0, X1, dy[0], dy[0], &dx[0], &dx[1]); }
static void g_sub(dfx_emit *e, int node, const gp *dy, gp *dx) {
  em_unbroadcast(e, X0, X1, dy[0], UN("Neg", dy[0]), &dx[0], &dx[1]);
}
static void g_mul(dfx_emit *e, int node, const gp *dy, gp *dx) {
  em_unbroadcast(e, X0, X1, BIN("Mul", dy[0], X1), BIN("Mul", X0, dy[0]), &dx[0], &dx[1]);
}
static void g_div(dfx_emit *e, int node, const gp *dy, gp *dx) { /* dy/y, -dy x / y^2 */
  gp x = X0, y = X1;
  em_unbroadcast(e, x, y, BIN("RealDiv", dy[0], y), BIN("Mul", dy[0], BIN("RealDiv", BIN("RealDiv", UN("Neg", x), y), y)),
                 &dx[0], &dx[1]);
}
static void g_divnonan(dfx_emit *e, int node, const gp *dy, gp *dx) {
  gp x = X0, y = X1;
  em_unbroadcast(e, x, y, BIN("DivNoNan", dy[0], y),
                 BIN("Mul", dy[0], BIN("DivNoNan", BIN("DivNoNan", UN("Neg", x), y), y)), &dx[0], &dx[1]);
}
static void g_sqdiff(dfx_emit *e, int node, const gp *dy, gp *dx) { /* 2 (x - y) dy, and its negation */
  gp t = BIN("Mul", BIN("Mul", BIN("Sub", X0, X1), dy[0]), SC(2));
  em_unbroadcast(e, X0, X1, t, UN("Neg", t), &dx[0], &dx[1]);
}
/* Maximum/Minimum: the gradient goes to the operand that was chosen (x on
 * ties, as TF does). */
static void minmax(dfx_emit *e, int node, const gp *dy, gp *dx, const char *cmp) {
  gp mask = BIN(cmp, X0, X1), z = em_zeros_like(e, dy[0]);
  em_unbroadcast(e, X0, X1, em_select(e, mask, dy[0], z), em_select(e, mask, z, dy[0]), &dx[0], &dx[1]);
}
static void g_maximum(dfx_emit *e, int node, const gp *dy, gp *dx) { minmax(e, node, dy, dx, "GreaterEqual"); }
static void g_minimum(dfx_emit *e, int node, const gp *dy, gp *dx) { minmax(e, node, dy, dx, "LessEqual"); }
static void g_pow(dfx_emit *e, int node, const gp *dy, gp *dx) {
  gp x = X0, y = X1, z = Y0;
  /* dz/dx = y x^(y-1); dz/dy = z log x, taken as 0 where x <= 0 */
  gp gx = BIN("Mul", dy[0], BIN("Mul", y, BIN("Pow", x, BIN("Sub", y, em_ones_like(e, y)))));
  gp pos = BIN("Greater", x, em_zeros_like(e, x));
  gp safe = em_select(e, pos, x, em_ones_like(e, x));
  gp logx = em_select(e, pos, UN("Log", safe), em_zeros_like(e, x));
  gp gy = BIN("Mul", dy[0], BIN("Mul", z, logx));
  em_unbroadcast(e, x, y, gx, gy, &dx[0], &dx[1]);
}
static void g_atan2(dfx_emit *e, int node, const gp *dy, gp *dx) { /* atan2(y, x): inputs are (y, x) */
  gp a = X0, b = X1;
  gp inv = BIN("RealDiv", dy[0], BIN("AddV2", UN("Square", a), UN("Square", b)));
  em_unbroadcast(e, a, b, BIN("Mul", b, inv), BIN("Mul", UN("Neg", a), inv), &dx[0], &dx[1]);
}

/* ---- matrix products ---- */

/* d(A B) for the four transpose settings: with C = op(A) op(B),
 * dA = dC op(B)^T (transposed back when A was), dB likewise. */
static void matmul_grads(dfx_emit *e, const char *op, const char *na, const char *nb, bool ta, bool tb, gp a, gp b,
                         gp g, gp *da, gp *db) {
  if (!ta && !tb) {
    *da = em_matmul(e, op, g, b, na, false, nb, true);
    *db = em_matmul(e, op, a, g, na, true, nb, false);
  } else if (!ta && tb) {
    *da = em_matmul(e, op, g, b, na, false, nb, false);
    *db = em_matmul(e, op, g, a, na, true, nb, false);
  } else if (ta && !tb) {
    *da = em_matmul(e, op, b, g, na, false, nb, true);
    *db = em_matmul(e, op, a, g, na, false, nb, false);
  } else {
    *da = em_matmul(e, op, b, g, na, true, nb, true);
    *db = em_matmul(e, op, g, a, na, true, nb, true);
  }
}

static void g_matmul(dfx_emit *e, int node, const gp *dy, gp *dx) {
  const dfx_node *n = &e->g->nodes[node];
  bool ta = dfx__attr_bool(n, "transpose_a", false), tb = dfx__attr_bool(n, "transpose_b", false);
  matmul_grads(e, "MatMul", "transpose_a", "transpose_b", ta, tb, X0, X1, dy[0], &dx[0], &dx[1]);
}

/* Leading (batch) dims of a shape vector: shape[:-2]. */
static gp batch_dims(dfx_emit *e, gp x) {
  int64_t b = 0, en = -2, s = 1;
  gp in[4] = {em_shape(e, x, DFX_I32), em_ivec(e, DFX_I32, &b, 1), em_ivec(e, DFX_I32, &en, 1), em_ivec(e, DFX_I32, &s, 1)};
  em_attr a[2] = {EA_TYPE("T", DFX_I32), EA_TYPE("Index", DFX_I32)};
  return em_op(e, "StridedSlice", in, 4, a, 2);
}

static void g_batchmatmul(dfx_emit *e, int node, const gp *dy, gp *dx) {
  const dfx_node *n = &e->g->nodes[node];
  bool ta = dfx__attr_bool(n, "adj_x", false), tb = dfx__attr_bool(n, "adj_y", false);
  bool v2 = strcmp(n->op, "BatchMatMul") != 0;
  gp a = X0, b = X1, da, db;
  matmul_grads(e, "BatchMatMulV2", "adj_x", "adj_y", ta, tb, a, b, dy[0], &da, &db);
  if (!v2) {
    dx[0] = da, dx[1] = db;
    return;
  }
  /* V2 broadcasts the batch dims: sum each gradient over the ones its
   * operand was broadcast along, then give it the operand's shape. */
  gp in[2] = {batch_dims(e, a), batch_dims(e, b)};
  em_attr t = EA_TYPE("T", DFX_I32);
  int r = em_node(e, "BroadcastGradientArgs", NULL, in, 2, &t, 1);
  if (r < 0) return;
  dx[0] = em_reshape(e, em_sum(e, da, (gp){r, 0}, false), em_shape(e, a, DFX_I32));
  dx[1] = em_reshape(e, em_sum(e, db, (gp){r, 1}, false), em_shape(e, b, DFX_I32));
}

/* ---- reductions ---- */

/* x's shape with the reduced axes set to 1 (TF's reduced_shape):
 * DynamicStitch([range(rank), axes mod rank], [shape, ones]). */
static gp reduced_shape(dfx_emit *e, gp x, gp axes) {
  gp shape = em_shape(e, x, DFX_I32), rank = em_size(e, shape);
  gp ax = BIN("FloorMod", em_cast(e, axes, DFX_I32), rank);
  gp ones_shape = em_shape(e, ax, DFX_I32);
  gp in_fill[2] = {ones_shape, em_scalar(e, DFX_I32, 1)};
  em_attr tf = EA_TYPE("T", DFX_I32);
  gp ones = em_op(e, "Fill", in_fill, 2, &tf, 1);
  gp idx = em_range(e, em_scalar(e, DFX_I32, 0), rank, em_scalar(e, DFX_I32, 1));
  gp in[4] = {idx, ax, shape, ones};
  em_attr a[2] = {EA_TYPE("T", DFX_I32), EA_INT("N", 2)};
  return em_op(e, "DynamicStitch", in, 4, a, 2);
}

/* dy spread back over x's shape. */
static gp spread(dfx_emit *e, gp x, gp axes, gp dy) {
  gp kept = em_reshape(e, dy, reduced_shape(e, x, axes));
  gp in[2] = {kept, em_shape(e, x, DFX_I32)};
  em_attr a[2] = {EA_TYPE("T", em_dtype(e, dy)), EA_TYPE("Tidx", DFX_I32)};
  return em_op(e, "BroadcastTo", in, 2, a, 2);
}

static void g_sum(dfx_emit *e, int node, const gp *dy, gp *dx) { dx[0] = spread(e, X0, X1, dy[0]); }

static void g_mean(dfx_emit *e, int node, const gp *dy, gp *dx) {
  gp x = X0, zero = em_scalar(e, DFX_I32, 0);
  gp n_in = em_binary(e, "Prod", em_shape(e, x, DFX_I32), zero);
  gp n_out = em_binary(e, "Prod", em_shape(e, Y0, DFX_I32), zero);
  gp factor = BIN("FloorDiv", n_in, BIN("Maximum", n_out, em_scalar(e, DFX_I32, 1)));
  dx[0] = BIN("RealDiv", spread(e, x, X1, dy[0]), em_cast(e, factor, em_dtype(e, x)));
}

/* Max/Min: the gradient is shared equally by the elements equal to the
 * extremum. */
static void g_maxmin(dfx_emit *e, int node, const gp *dy, gp *dx) {
  gp x = X0, axes = X1;
  gp rs = reduced_shape(e, x, axes);
  gp eq = em_cast(e, BIN("Equal", x, em_reshape(e, Y0, rs)), em_dtype(e, x));
  gp count = em_reshape(e, em_sum(e, eq, axes, false), rs);
  dx[0] = BIN("Mul", BIN("RealDiv", eq, count), em_reshape(e, dy[0], rs));
}

/* Prod: d/dx_i = product of the others, computed without division (zeros
 * allowed) as exclusive cumulative products from both ends along the
 * reduced axes, flattened to one after moving them to the front. */
static void g_prod(dfx_emit *e, int node, const gp *dy, gp *dx) {
  gp x = X0, axes = X1, zero = em_scalar(e, DFX_I32, 0);
  gp shape = em_shape(e, x, DFX_I32), rank = em_size(e, shape);
  gp red = em_reshape(e, BIN("FloorMod", em_cast(e, axes, DFX_I32), rank), em_ivec(e, DFX_I32, (int64_t[]){-1}, 1));
  gp all = em_range(e, zero, rank, em_scalar(e, DFX_I32, 1));
  gp in_ld[2] = {all, red};
  em_attr la[2] = {EA_TYPE("T", DFX_I32), EA_TYPE("out_idx", DFX_I32)};
  int ld = em_node(e, "ListDiff", NULL, in_ld, 2, la, 2);
  if (ld < 0) return;
  gp other = {ld, 0};
  gp perm_parts[2] = {red, other};
  gp perm = em_concat(e, perm_parts, 2, zero);
  gp gather_in[3] = {shape, red, zero}, gather_o[3] = {shape, other, zero};
  em_attr ga[3] = {EA_TYPE("Tparams", DFX_I32), EA_TYPE("Tindices", DFX_I32), EA_TYPE("Taxis", DFX_I32)};
  gp n_red = em_binary(e, "Prod", em_op(e, "GatherV2", gather_in, 3, ga, 3), zero);
  gp n_oth = em_binary(e, "Prod", em_op(e, "GatherV2", gather_o, 3, ga, 3), zero);
  gp in_tr[2] = {x, perm};
  em_attr ta[2] = {EA_TYPE("T", em_dtype(e, x)), EA_TYPE("Tperm", DFX_I32)};
  gp xt = em_op(e, "Transpose", in_tr, 2, ta, 2);
  gp flat_shape[2] = {n_red, n_oth};
  gp flat = em_reshape(e, xt, em_pack(e, flat_shape, 2, 0));
  em_attr ca[4] = {EA_TYPE("T", em_dtype(e, x)), EA_TYPE("Tidx", DFX_I32), EA_BOOL("exclusive", true),
                   EA_BOOL("reverse", false)};
  gp in_c[2] = {flat, zero};
  gp left = em_op(e, "Cumprod", in_c, 2, ca, 4);
  ca[3] = EA_BOOL("reverse", true);
  gp right = em_op(e, "Cumprod", in_c, 2, ca, 4);
  gp others = BIN("Mul", left, right);
  /* back to x's layout: un-flatten to the transposed shape, invert perm */
  gp tshape = em_shape(e, xt, DFX_I32);
  gp unflat = em_reshape(e, others, tshape);
  gp inv = em_unary(e, "InvertPermutation", perm);
  gp in_back[2] = {unflat, inv};
  gp back = em_op(e, "Transpose", in_back, 2, ta, 2);
  dx[0] = BIN("Mul", back, spread(e, x, axes, dy[0]));
}

const dfx_grad_def dfx__grad_math[] = {
    {"Identity", g_identity}, {"Snapshot", g_identity}, {"Neg", g_neg}, {"Abs", g_abs},
    {"Square", g_square}, {"Sqrt", g_sqrt}, {"Rsqrt", g_rsqrt}, {"Exp", g_exp}, {"Expm1", g_expm1},
    {"Log", g_log}, {"Log1p", g_log1p}, {"Reciprocal", g_reciprocal}, {"Inv", g_reciprocal},
    {"Sin", g_sin}, {"Cos", g_cos}, {"Tan", g_tan}, {"Sinh", g_sinh}, {"Cosh", g_cosh}, {"Atan", g_atan},
    {"Asin", g_asin}, {"Acos", g_acos}, {"Asinh", g_asinh}, {"Acosh", g_acosh}, {"Atanh", g_atanh},
    {"Tanh", g_tanh}, {"Sigmoid", g_sigmoid}, {"Erf", g_erf}, {"Erfc", g_erfc}, {"Sign", g_zero},
    {"Floor", NULL}, {"Ceil", NULL}, {"Round", NULL}, {"Rint", NULL}, {"Cast", g_cast}, {"AddN", g_addn},
    {"AccumulateNV2", g_addn}, {"Add", g_add}, {"AddV2", g_add}, {"Sub", g_sub}, {"Mul", g_mul},
    {"RealDiv", g_div}, {"Div", g_div}, {"DivNoNan", g_divnonan}, {"SquaredDifference", g_sqdiff},
    {"Maximum", g_maximum}, {"Minimum", g_minimum}, {"Pow", g_pow}, {"Atan2", g_atan2},
    {"MatMul", g_matmul}, {"BatchMatMul", g_batchmatmul}, {"BatchMatMulV2", g_batchmatmul},
    {"Sum", g_sum}, {"Mean", g_mean}, {"Max", g_maxmin}, {"Min", g_maxmin}, {"Prod", g_prod},
    {"FloorDiv", NULL}, {"FloorMod", NULL}, {"TruncateDiv", NULL}, {"TruncateMod", NULL}, {"Mod", NULL},
    {"ZerosLike", NULL}, {"OnesLike", NULL}, {"ArgMax", NULL}, {"ArgMin", NULL},
    {NULL, NULL},
};
