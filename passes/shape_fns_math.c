/* shape_fns_math.c - shape functions of the math ops (TF's math_ops.cc):
 * elementwise unary and binary ops (numpy broadcasting), Select, AddN,
 * reductions, ArgMax, MatMul and BatchMatMul, scans. Small integer values
 * flow through the arithmetic that shape computations use (Add, Sub, Mul,
 * FloorDiv, FloorMod, Maximum, Minimum, Neg, Cast, Sum, Prod...) with the
 * kernels' semantics; an overflow or a division by zero makes an element
 * unknown rather than guess what the run would do. */
#include <string.h>

#include "shape_fn.h"

#define UNKNOWN DFX_VALUE_UNKNOWN

/* Output 0 has input 0's shape (TF's UnchangedShape, without the value). */
static void unchanged(dfx_shape_ctx *c) { dfx__sctx_set(c, 0, dfx__sctx_in(c, 0)); }

/* Output 0 is input 0, value and all (Identity and friends). */
static void identity(dfx_shape_ctx *c) { dfx__sctx_forward(c, 0, 0); }

static void identity_n(dfx_shape_ctx *c) {
  for (int k = 0; k < c->n_out && k < c->n_in; k++) dfx__sctx_forward(c, k, k);
}

static void ensure_shape(dfx_shape_ctx *c) {
  const dfx_shape *sh = dfx__attr_shape(c->node, "shape");
  dfx_pshape want = sh && sh->rank >= 0 ? dfx__pshape_make(sh->rank, sh->dims) : dfx__pshape_unknown(), m;
  if (!dfx__pshape_merge(dfx__sctx_in(c, 0), &want, &m)) return; /* the run fails */
  if (dfx__pshape_equal(&m, dfx__sctx_in(c, 0))) dfx__sctx_forward(c, 0, 0);
  else dfx__sctx_set(c, 0, &m);
}

/* ---- small integer values ---- */

static bool is_int(dfx_dtype t) { return t == DFX_I32 || t == DFX_I64; }

/* Output 0 gets input 0's shape and a value computed elementwise by f from
 * input 0 (and input 1 when binary), broadcasting only a one-element side:
 * enough for shape arithmetic, no more. */
typedef int64_t (*binop)(int64_t a, int64_t b);

static void set_elementwise(dfx_shape_ctx *c, const dfx_pshape *out, binop f, bool binary) {
  dfx__sctx_set(c, 0, out);
  if (!dfx__pshape_known(out) || !is_int(c->node->out_types[0])) return;
  const dfx_tinfo *a = c->in[0], *b = binary ? c->in[1] : NULL;
  int64_t n = dfx__pshape_count(out);
  if (a->n_val < 0 || (b && b->n_val < 0) || n > DFX_SHAPE_VALUE_MAX) return;
  if ((a->n_val != n && a->n_val != 1) || (b && b->n_val != n && b->n_val != 1)) return;
  int64_t v[DFX_SHAPE_VALUE_MAX];
  for (int64_t i = 0; i < n; i++) {
    int64_t x = a->val[a->n_val == 1 ? 0 : i], y = b ? b->val[b->n_val == 1 ? 0 : i] : 0;
    v[i] = x == UNKNOWN || y == UNKNOWN ? UNKNOWN : f(x, y);
  }
  dfx__sctx_set_value(c, 0, out->rank, out->dims, v);
}

static int64_t op_add(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_add_overflow(a, b, &r) ? UNKNOWN : r;
}
static int64_t op_sub(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_sub_overflow(a, b, &r) ? UNKNOWN : r;
}
static int64_t op_mul(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? UNKNOWN : r;
}
static int64_t op_floordiv(int64_t a, int64_t b) {
  if (b == 0 || (a == INT64_MIN && b == -1)) return UNKNOWN;
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
static int64_t op_floormod(int64_t a, int64_t b) {
  if (b == 0 || (a == INT64_MIN && b == -1)) return UNKNOWN;
  int64_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
static int64_t op_max(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t op_min(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t op_neg(int64_t a, int64_t b) {
  (void)b;
  return a == INT64_MIN ? UNKNOWN : -a;
}
static int64_t op_abs(int64_t a, int64_t b) {
  (void)b;
  return a == INT64_MIN ? UNKNOWN : a < 0 ? -a : a;
}
static int64_t op_copy(int64_t a, int64_t b) {
  (void)b;
  return a;
}

static void neg(dfx_shape_ctx *c) { set_elementwise(c, dfx__sctx_in(c, 0), op_neg, false); }
static void abs_(dfx_shape_ctx *c) { set_elementwise(c, dfx__sctx_in(c, 0), op_abs, false); }

/* Cast keeps integer values that fit the new type (set_value drops those
 * that do not: the kernel would wrap them). */
static void cast(dfx_shape_ctx *c) {
  if (c->n_in > 0 && is_int(dfx__attr_type(c->node, "SrcT", DFX_INVALID))) set_elementwise(c, dfx__sctx_in(c, 0), op_copy, false);
  else unchanged(c);
}

static void fill_like(dfx_shape_ctx *c, int64_t v) {
  const dfx_pshape *s = dfx__sctx_in(c, 0);
  int64_t n = dfx__pshape_count(s), vals[DFX_SHAPE_VALUE_MAX];
  if (!dfx__pshape_known(s) || n > DFX_SHAPE_VALUE_MAX) {
    dfx__sctx_set(c, 0, s);
    return;
  }
  for (int64_t i = 0; i < n; i++) vals[i] = v;
  dfx__sctx_set_value(c, 0, s->rank, s->dims, vals);
}
static void zeros_like(dfx_shape_ctx *c) { fill_like(c, 0); }
static void ones_like(dfx_shape_ctx *c) { fill_like(c, 1); }

/* ---- broadcasting binary ops ---- */

static void broadcast_with(dfx_shape_ctx *c, binop f) {
  dfx_pshape out;
  if (!dfx__pshape_broadcast(dfx__sctx_in(c, 0), dfx__sctx_in(c, 1), &out)) return;
  if (f) set_elementwise(c, &out, f, true);
  else dfx__sctx_set(c, 0, &out);
}

static void broadcast(dfx_shape_ctx *c) { broadcast_with(c, NULL); }

/* _FusedElementwise (the ewfuse pass): inputs of one shape or scalars, so
 * the broadcast of them all. */
static void broadcast_all(dfx_shape_ctx *c) {
  dfx_pshape out = *dfx__sctx_in(c, 0);
  for (int k = 1; k < c->n_in; k++)
    if (!dfx__pshape_broadcast(&out, dfx__sctx_in(c, k), &out)) return;
  dfx__sctx_set(c, 0, &out);
}
static void add(dfx_shape_ctx *c) { broadcast_with(c, op_add); }
static void sub(dfx_shape_ctx *c) { broadcast_with(c, op_sub); }
static void mul(dfx_shape_ctx *c) { broadcast_with(c, op_mul); }
static void floordiv(dfx_shape_ctx *c) { broadcast_with(c, op_floordiv); }
static void floormod(dfx_shape_ctx *c) { broadcast_with(c, op_floormod); }
static void maximum(dfx_shape_ctx *c) { broadcast_with(c, op_max); }
static void minimum(dfx_shape_ctx *c) { broadcast_with(c, op_min); }

/* Equal and NotEqual with incompatible_shape_error false return a scalar
 * for shapes that do not broadcast; TF then knows nothing unless both
 * shapes are fully known. */
static void equality(dfx_shape_ctx *c) {
  if (dfx__attr_bool(c->node, "incompatible_shape_error", true)) {
    broadcast(c);
    return;
  }
  const dfx_pshape *a = dfx__sctx_in(c, 0), *b = dfx__sctx_in(c, 1);
  dfx_pshape out;
  if (!dfx__pshape_known(a) || !dfx__pshape_known(b)) return;
  if (!dfx__pshape_broadcast(a, b, &out)) out = dfx__pshape_scalar();
  dfx__sctx_set(c, 0, &out);
}

/* Both inputs must have the same shape (ApproximateEqual, Cross, the
 * *Grad ops that take two same-shaped tensors). */
static void merge_both(dfx_shape_ctx *c) {
  dfx_pshape m;
  if (dfx__pshape_merge(dfx__sctx_in(c, 0), dfx__sctx_in(c, 1), &m)) dfx__sctx_set(c, 0, &m);
}

/* Betainc: a, b, x have one shape, or are scalars. */
static void betainc(dfx_shape_ctx *c) {
  dfx_pshape out = dfx__pshape_scalar();
  bool any = false;
  for (int k = 0; k < c->n_in; k++) {
    const dfx_pshape *s = dfx__sctx_in(c, k);
    if (s->rank < 0) return;
    if (s->rank == 0) continue;
    if (!any) out = *s;
    else if (!dfx__pshape_merge(&out, s, &out)) return;
    any = true;
  }
  dfx__sctx_set(c, 0, &out);
}

/* Select: t and e have one shape; the condition is that shape, a scalar,
 * or a vector along t's first dim. */
static void select(dfx_shape_ctx *c) {
  dfx_pshape m;
  if (dfx__pshape_merge(dfx__sctx_in(c, 1), dfx__sctx_in(c, 2), &m)) dfx__sctx_set(c, 0, &m);
}

static void select_v2(dfx_shape_ctx *c) {
  dfx_pshape te, out;
  if (!dfx__pshape_broadcast(dfx__sctx_in(c, 1), dfx__sctx_in(c, 2), &te)) return;
  if (dfx__pshape_broadcast(dfx__sctx_in(c, 0), &te, &out)) dfx__sctx_set(c, 0, &out);
}

/* AddN: every input has the output's shape. */
static void add_n(dfx_shape_ctx *c) {
  dfx_pshape m = dfx__pshape_unknown();
  for (int k = 0; k < c->n_in; k++)
    if (!dfx__pshape_merge(&m, dfx__sctx_in(c, k), &m)) return;
  if (strcmp(c->node->op, "AccumulateNV2") == 0) {
    const dfx_shape *sh = dfx__attr_shape(c->node, "shape");
    dfx_pshape a = sh && sh->rank >= 0 ? dfx__pshape_make(sh->rank, sh->dims) : dfx__pshape_unknown();
    if (!dfx__pshape_merge(&m, &a, &m)) return;
  }
  dfx__sctx_set(c, 0, &m);
}

/* ---- reductions ---- */

/* The reduced axes of input 1 against rank r into `axes` (flags); false
 * when unknown or out of range. */
static bool reduced_axes(const dfx_shape_ctx *c, int r, bool *axes) {
  int64_t v[DFX_SHAPE_VALUE_MAX];
  int n;
  if (r < 0 || !dfx__sctx_value(c, 1, v, &n) || dfx__sctx_in(c, 1)->rank > 1) return false;
  memset(axes, 0, sizeof(bool) * DFX_MAX_DIMS);
  for (int i = 0; i < n; i++) {
    int a;
    if (!dfx__axis(v[i], r, &a)) return false;
    axes[a] = true;
  }
  return true;
}

/* Sum, Prod, Max, Min (and their values over a vector), Mean, All, Any. */
static void reduce_with(dfx_shape_ctx *c, binop f) {
  const dfx_pshape *in = dfx__sctx_in(c, 0);
  bool keep = dfx__attr_bool(c->node, "keep_dims", false);
  bool axes[DFX_MAX_DIMS];
  if (!reduced_axes(c, in->rank, axes)) {
    if (keep && in->rank >= 0) {
      dfx_pshape out = dfx__pshape_of_rank(in->rank);
      dfx__sctx_set(c, 0, &out);
    }
    return;
  }
  dfx_pshape out = {.rank = 0};
  for (int i = 0; i < in->rank; i++) {
    if (!axes[i]) out.dims[out.rank++] = in->dims[i];
    else if (keep) out.dims[out.rank++] = 1;
  }
  dfx__sctx_set(c, 0, &out);
  /* A vector value reduced whole (the size from a shape, say). */
  const dfx_tinfo *x = c->in[0];
  if (!f || in->rank != 1 || !axes[0] || x->n_val < 1 || !is_int(c->node->out_types[0])) return;
  int64_t acc = x->val[0];
  for (int i = 1; i < x->n_val && acc != UNKNOWN; i++) acc = x->val[i] == UNKNOWN ? UNKNOWN : f(acc, x->val[i]);
  dfx__sctx_set_value(c, 0, out.rank, out.dims, &acc);
}

static void reduce(dfx_shape_ctx *c) { reduce_with(c, NULL); }
static void reduce_sum(dfx_shape_ctx *c) { reduce_with(c, op_add); }
static void reduce_prod(dfx_shape_ctx *c) { reduce_with(c, op_mul); }
static void reduce_max(dfx_shape_ctx *c) { reduce_with(c, op_max); }
static void reduce_min(dfx_shape_ctx *c) { reduce_with(c, op_min); }

/* ArgMax, ArgMin: the dimension input goes away; a vector gives a scalar. */
static void arg_reduce(dfx_shape_ctx *c) {
  const dfx_pshape *in = dfx__sctx_in(c, 0);
  int64_t dim;
  int d;
  if (in->rank < 0) return;
  if (in->rank <= 1) {
    dfx_pshape s = dfx__pshape_scalar();
    dfx__sctx_set(c, 0, &s);
    return;
  }
  if (!dfx__sctx_scalar(c, 1, &dim)) {
    dfx_pshape out = dfx__pshape_of_rank(in->rank - 1);
    dfx__sctx_set(c, 0, &out);
    return;
  }
  if (!dfx__axis(dim, in->rank, &d)) return;
  dfx_pshape out = {.rank = 0};
  for (int i = 0; i < in->rank; i++)
    if (i != d) out.dims[out.rank++] = in->dims[i];
  dfx__sctx_set(c, 0, &out);
}

/* ---- products ---- */

static void matmul(dfx_shape_ctx *c) {
  dfx_pshape a, b;
  if (!dfx__pshape_with_rank(dfx__sctx_in(c, 0), 2, &a) || !dfx__pshape_with_rank(dfx__sctx_in(c, 1), 2, &b)) return;
  bool ta = dfx__attr_bool(c->node, "transpose_a", false), tb = dfx__attr_bool(c->node, "transpose_b", false);
  int64_t inner;
  if (!dfx__dim_merge(a.dims[ta ? 0 : 1], b.dims[tb ? 1 : 0], &inner)) return;
  dfx_pshape out = {.rank = 2, .dims = {a.dims[ta ? 1 : 0], b.dims[tb ? 0 : 1]}};
  dfx__sctx_set(c, 0, &out);
}

/* BatchMatMul needs equal batch dims; V2 and V3 broadcast them. */
static void batch_matmul_impl(dfx_shape_ctx *c, bool broadcast_batch) {
  const dfx_pshape *a = dfx__sctx_in(c, 0), *b = dfx__sctx_in(c, 1);
  if (a->rank < 2 || b->rank < 2) return;
  bool adj_x = dfx__attr_bool(c->node, "adj_x", false), adj_y = dfx__attr_bool(c->node, "adj_y", false);
  int ra = a->rank, rb = b->rank;
  int64_t inner;
  if (!dfx__dim_merge(a->dims[ra - (adj_x ? 2 : 1)], b->dims[rb - (adj_y ? 1 : 2)], &inner)) return;
  dfx_pshape ba = dfx__pshape_make(ra - 2, a->dims), bb = dfx__pshape_make(rb - 2, b->dims), batch;
  if (broadcast_batch ? !dfx__pshape_broadcast(&ba, &bb, &batch) : !dfx__pshape_merge(&ba, &bb, &batch)) return;
  if (batch.rank + 2 > DFX_MAX_DIMS) return;
  dfx_pshape out = batch;
  out.dims[out.rank++] = a->dims[ra - (adj_x ? 1 : 2)];
  out.dims[out.rank++] = b->dims[rb - (adj_y ? 2 : 1)];
  dfx__sctx_set(c, 0, &out);
}

static void batch_matmul(dfx_shape_ctx *c) { batch_matmul_impl(c, false); }
static void batch_matmul_v2(dfx_shape_ctx *c) { batch_matmul_impl(c, true); }

/* Bincount: a vector of `size` bins. */
static void bincount(dfx_shape_ctx *c) {
  int64_t size;
  dfx_pshape out = dfx__pshape_vector(dfx__sctx_scalar(c, 1, &size) && size >= 0 ? size : DFX_DIM_UNKNOWN);
  dfx__sctx_set(c, 0, &out);
}

const dfx_shape_fn_def dfx__shape_fns_math[] = {
    /* identities */
    {"Identity", identity}, {"Snapshot", identity}, {"StopGradient", identity}, {"PreventGradient", identity},
    {"CheckNumerics", identity}, {"CheckNumericsV2", identity}, {"DebugIdentity", identity}, {"Print", identity},
    {"DeepCopy", identity}, {"IdentityN", identity_n}, {"EnsureShape", ensure_shape},
    /* unary, shape unchanged */
    {"Abs", abs_}, {"Neg", neg}, {"Cast", cast}, {"ZerosLike", zeros_like}, {"OnesLike", ones_like},
    {"Acos", unchanged}, {"Acosh", unchanged}, {"Angle", unchanged}, {"Asin", unchanged}, {"Asinh", unchanged},
    {"Atan", unchanged}, {"Atanh", unchanged}, {"Ceil", unchanged}, {"ComplexAbs", unchanged}, {"Conj", unchanged},
    {"Cos", unchanged}, {"Cosh", unchanged}, {"Digamma", unchanged}, {"Elu", unchanged}, {"Erf", unchanged},
    {"Erfc", unchanged}, {"Erfinv", unchanged}, {"Exp", unchanged}, {"Expm1", unchanged}, {"Floor", unchanged},
    {"Imag", unchanged}, {"Inv", unchanged}, {"Invert", unchanged}, {"IsFinite", unchanged}, {"IsInf", unchanged},
    {"IsNan", unchanged}, {"LeakyRelu", unchanged}, {"Lgamma", unchanged}, {"Log", unchanged},
    {"Log1p", unchanged}, {"LogicalNot", unchanged}, {"Ndtri", unchanged}, {"PopulationCount", unchanged},
    {"Real", unchanged}, {"Reciprocal", unchanged}, {"Relu", unchanged}, {"Relu6", unchanged},
    {"Rint", unchanged}, {"Round", unchanged}, {"Rsqrt", unchanged}, {"Selu", unchanged}, {"Sigmoid", unchanged},
    {"Sign", unchanged}, {"Sin", unchanged}, {"Sinh", unchanged}, {"Softplus", unchanged},
    {"Softsign", unchanged}, {"Sqrt", unchanged}, {"Square", unchanged}, {"Tan", unchanged}, {"Tanh", unchanged},
    {"FakeQuantWithMinMaxArgs", unchanged}, {"FakeQuantWithMinMaxVars", unchanged},
    {"FakeQuantWithMinMaxVarsPerChannel", unchanged}, {"ClipByValue", unchanged}, {"Cumsum", unchanged},
    {"Cumprod", unchanged}, {"CumulativeLogsumexp", unchanged},
    /* gradients of unary ops: the shape of their first input */
    {"EluGrad", unchanged}, {"InvGrad", unchanged}, {"LeakyReluGrad", unchanged}, {"ReciprocalGrad", unchanged},
    {"Relu6Grad", unchanged}, {"ReluGrad", unchanged}, {"RsqrtGrad", unchanged}, {"SeluGrad", unchanged},
    {"SigmoidGrad", unchanged}, {"SoftplusGrad", unchanged}, {"SoftsignGrad", unchanged}, {"SqrtGrad", unchanged},
    {"TanhGrad", unchanged},
    /* binary, broadcasting */
    {"Add", add}, {"AddV2", add}, {"Sub", sub}, {"Mul", mul}, {"FloorDiv", floordiv}, {"FloorMod", floormod},
    {"Maximum", maximum}, {"Minimum", minimum}, {"Atan2", broadcast}, {"BitwiseAnd", broadcast},
    {"BitwiseOr", broadcast}, {"BitwiseXor", broadcast}, {"Complex", broadcast}, {"Div", broadcast},
    {"DivNoNan", broadcast}, {"Greater", broadcast}, {"GreaterEqual", broadcast}, {"Igamma", broadcast},
    {"Igammac", broadcast}, {"LeftShift", broadcast}, {"Less", broadcast}, {"LessEqual", broadcast},
    {"LogicalAnd", broadcast}, {"LogicalOr", broadcast}, {"Mod", broadcast}, {"MulNoNan", broadcast},
    {"NextAfter", broadcast}, {"Polygamma", broadcast}, {"Pow", broadcast}, {"RealDiv", broadcast},
    {"RightShift", broadcast}, {"SquaredDifference", broadcast}, {"TruncateDiv", broadcast},
    {"TruncateMod", broadcast}, {"Xdivy", broadcast}, {"Xlog1py", broadcast}, {"Xlogy", broadcast},
    {"Zeta", broadcast}, {"Equal", equality}, {"NotEqual", equality}, {"ApproximateEqual", merge_both},
    {"Cross", merge_both}, {"Betainc", betainc}, {"Select", select}, {"SelectV2", select_v2},
    {"AddN", add_n}, {"AccumulateNV2", add_n}, {"_FusedElementwise", broadcast_all},
    /* reductions */
    {"Sum", reduce_sum}, {"Prod", reduce_prod}, {"Max", reduce_max}, {"Min", reduce_min}, {"Mean", reduce},
    {"All", reduce}, {"Any", reduce}, {"EuclideanNorm", reduce}, {"ArgMax", arg_reduce}, {"ArgMin", arg_reduce},
    /* products */
    {"MatMul", matmul}, {"BatchMatMul", batch_matmul}, {"BatchMatMulV2", batch_matmul_v2},
    {"BatchMatMulV3", batch_matmul_v2}, {"Bincount", bincount},
    {NULL, NULL}};
