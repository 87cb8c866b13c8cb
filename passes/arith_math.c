/* arith_math.c - the `arith` pass's elementwise rules (arith.h): neutral
 * operands (x*1, x+0, x-0, x/1, BiasAdd of zeros), involutions
 * (Neg(Neg x)), casts that change nothing, identity-like ops and an AddN of
 * one input.
 *
 * Exactness notes. x*1 and x/1 are exact in IEEE arithmetic, NaN and
 * infinities included; integer +0, *1, /1 and -(-x) (two's complement wraps
 * back) are exact. x+0 is not exact for x = -0.0 (the sum is +0.0), nor x-0
 * with the 0 being -0.0; Grappler's constant folding rewrites both anyway
 * (IsZeros accepts either sign), so TensorFlow's own results show -0.0
 * there, and this pass follows it. Not done: Reciprocal(Reciprocal x), which
 * Grappler removes but which rounds (1/(1/x) != x for many floats, and
 * integer 1/(1/2) divides by zero); complex operands (x*(1+0i) turns an
 * infinite part into NaN); x+x -> 2*x (exact but adds a node); strings. */
#include <string.h>

#include "arith.h"

static bool real_or_int(dfx_dtype t) {
  switch (t) {
    case DFX_F16: case DFX_BF16: case DFX_F32: case DFX_F64:
    case DFX_I8: case DFX_I16: case DFX_I32: case DFX_I64:
    case DFX_U8: case DFX_U16: case DFX_U32: case DFX_U64:
      return true;
    default:
      return false;
  }
}

static bool all_equal(const dfx_tensor *t, double v) {
  for (int64_t e = 0; e < t->count; e++)
    if (dfx__tensor_get_f64(t, e) != v) return false;
  return true;
}

/* Whether broadcasting x against the constant c gives x's shape: c is a
 * scalar, or each of c's dims (aligned to the right) is 1 or equals x's
 * known dim, and c has no more dims than x. */
static bool broadcast_keeps_x(const dfx_arith *a, int i, int xk, const dfx_tensor *c) {
  if (c->ndims == 0) return true;
  dfx_static_shape x;
  if (!dfx__arith_shape(a, i, xk, &x) || x.rank < c->ndims) return false;
  for (int j = 1; j <= c->ndims; j++) {
    int64_t cd = c->dims[c->ndims - j], xd = x.dims[x.rank - j];
    if (cd != 1 && xd != cd) return false;
  }
  return true;
}

/* x op c -> x where c is all `neutral` (and c op x -> x when `either`). */
static int neutral(dfx_arith *a, int i, double value, bool either) {
  const dfx_node *n = &a->c->g->nodes[i];
  if (n->n_in != 2 || !real_or_int(n->out_types[0])) return 0;
  for (int side = 1; side >= (either ? 0 : 1); side--) {
    const dfx_tensor *c = dfx__arith_const(a, i, side);
    if (c && c->dtype == n->out_types[0] && all_equal(c, value) && broadcast_keeps_x(a, i, 1 - side, c))
      return dfx__arith_forward(a, i, (int[]){1 - side}, 1);
  }
  return 0;
}

static int rule_mul(dfx_arith *a, int i) { return neutral(a, i, 1, true); }
static int rule_add(dfx_arith *a, int i) { return neutral(a, i, 0, true); }
static int rule_sub(dfx_arith *a, int i) { return neutral(a, i, 0, false); }
static int rule_div(dfx_arith *a, int i) { return neutral(a, i, 1, false); }

/* BiasAdd(x, zeros) -> x: the output always has x's shape, but the op fails
 * unless the bias matches x's channel dim, so that dim must be known. */
static int rule_bias_add(dfx_arith *a, int i) {
  const dfx_node *n = &a->c->g->nodes[i];
  const dfx_tensor *b = dfx__arith_const(a, i, 1);
  dfx_static_shape x;
  if (n->n_in != 2 || !real_or_int(n->out_types[0]) || !b || b->dtype != n->out_types[0] || b->ndims != 1 ||
      !all_equal(b, 0) || !dfx__arith_shape(a, i, 0, &x) || x.rank < 2)
    return 0;
  bool nchw = strcmp(dfx__attr_str(n, "data_format", "NHWC"), "NCHW") == 0;
  if (nchw && x.rank < 3) return 0;
  int64_t channels = x.dims[nchw ? 1 : x.rank - 1];
  return channels == b->dims[0] ? dfx__arith_forward(a, i, (int[]){0}, 1) : 0;
}

/* f(f(x)) -> x for an f that is its own inverse, exactly. */
static int involution(dfx_arith *a, int i) {
  const dfx_node *n = &a->c->g->nodes[i];
  const dfx_node *m = dfx__arith_src(a, i, 0);
  if (n->n_in != 1 || strcmp(m->op, n->op) != 0 || m->n_in != 1) return 0;
  return dfx__arith_forward(a, i, (int[]){0, 0}, 2);
}

/* Whether every value of type `from` survives a cast to `to` and back
 * unchanged (up to a signalling NaN, which a float round trip quiets). */
static bool widens_exactly(dfx_dtype from, dfx_dtype to) {
  static const struct {
    dfx_dtype from;
    dfx_dtype to[10];
  } table[] = {
      {DFX_BOOL, {DFX_I8, DFX_I16, DFX_I32, DFX_I64, DFX_U8, DFX_U16, DFX_U32, DFX_U64, DFX_F32, DFX_F64}},
      {DFX_I8, {DFX_I16, DFX_I32, DFX_I64, DFX_F16, DFX_BF16, DFX_F32, DFX_F64}},
      {DFX_U8, {DFX_I16, DFX_I32, DFX_I64, DFX_U16, DFX_U32, DFX_U64, DFX_F16, DFX_BF16, DFX_F32, DFX_F64}},
      {DFX_I16, {DFX_I32, DFX_I64, DFX_F32, DFX_F64}},
      {DFX_U16, {DFX_I32, DFX_I64, DFX_U32, DFX_U64, DFX_F32, DFX_F64}},
      {DFX_I32, {DFX_I64, DFX_F64}},
      {DFX_U32, {DFX_I64, DFX_U64, DFX_F64}},
      {DFX_F16, {DFX_F32, DFX_F64}},
      {DFX_BF16, {DFX_F32, DFX_F64}},
      {DFX_F32, {DFX_F64}},
  };
  for (size_t r = 0; r < sizeof table / sizeof table[0]; r++)
    if (table[r].from == from)
      for (int k = 0; k < 10 && table[r].to[k]; k++)
        if (table[r].to[k] == to) return true;
  return false;
}

/* Cast to its own type -> x; Cast(Cast(x, A->B), B->A) -> x when A->B
 * loses nothing (int32->int64->int32, float->double->float, ...). */
static int rule_cast(dfx_arith *a, int i) {
  const dfx_node *n = &a->c->g->nodes[i];
  dfx_dtype src = dfx__attr_type(n, "SrcT", DFX_INVALID), dst = dfx__attr_type(n, "DstT", DFX_INVALID);
  if (n->n_in != 1 || src == DFX_INVALID) return 0;
  if (src == dst) return dfx__arith_forward(a, i, (int[]){0}, 1);
  const dfx_node *m = dfx__arith_src(a, i, 0);
  if (strcmp(m->op, "Cast") != 0 || m->n_in != 1) return 0;
  dfx_dtype m_src = dfx__attr_type(m, "SrcT", DFX_INVALID), m_dst = dfx__attr_type(m, "DstT", DFX_INVALID);
  if (m_dst != src || m_src != dst || !widens_exactly(m_src, m_dst)) return 0;
  return dfx__arith_forward(a, i, (int[]){0, 0}, 2);
}

/* Ops that only differ from Identity in gradients or memory. */
static int rule_identity_like(dfx_arith *a, int i) {
  return a->c->g->nodes[i].n_in == 1 ? dfx__arith_forward(a, i, (int[]){0}, 1) : 0;
}

/* EnsureShape(x, shape) -> x when x's known shape already satisfies it
 * (otherwise the op's error must stay). */
static int rule_ensure_shape(dfx_arith *a, int i) {
  const dfx_node *n = &a->c->g->nodes[i];
  const dfx_shape *want = dfx__attr_shape(n, "shape");
  dfx_static_shape x;
  if (n->n_in != 1 || !want) return 0;
  if (want->rank >= 0) {
    if (!dfx__arith_shape(a, i, 0, &x) || x.rank != want->rank) return 0;
    for (int d = 0; d < x.rank; d++)
      if (want->dims[d] >= 0 && x.dims[d] != want->dims[d]) return 0;
  }
  return dfx__arith_forward(a, i, (int[]){0}, 1);
}

static int rule_add_n(dfx_arith *a, int i) {
  return a->c->g->nodes[i].n_in == 1 ? dfx__arith_forward(a, i, (int[]){0}, 1) : 0;
}

const dfx_arith_rule dfx__arith_math_rules[] = {
    {"Mul", rule_mul},
    {"Add", rule_add},
    {"AddV2", rule_add},
    {"Sub", rule_sub},
    {"Div", rule_div},
    {"RealDiv", rule_div},
    {"BiasAdd", rule_bias_add},
    {"BiasAddV1", rule_bias_add},
    {"Neg", involution},
    {"LogicalNot", involution},
    {"Invert", involution},
    {"Conj", involution},
    {"Cast", rule_cast},
    {"StopGradient", rule_identity_like},
    {"PreventGradient", rule_identity_like},
    {"Snapshot", rule_identity_like},
    {"EnsureShape", rule_ensure_shape},
    {"AddN", rule_add_n},
    {NULL, NULL},
};
