/* test_ew_fused.c - _FusedElementwise against the kernels it stands for,
 * run one node after the other: the same bits for every opcode (float and
 * double, over values that reach NaN, infinities, -0 and the activations'
 * tails), for chains and trees with scalar operands across block
 * boundaries, an empty tensor and a scalar-only program; and what init
 * and a run refuse. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kharness.h"

static const char *const binary_ops[] = {"Add", "AddV2", "Sub", "Mul", "RealDiv", "Div", "Maximum", "Minimum",
                                         "SquaredDifference"};
static const char *const unary_ops[] = {"Neg", "Abs", "Square", "Reciprocal", "Inv", "Sqrt", "Rsqrt",
                                        "Exp", "Expm1", "Log", "Log1p", "Tanh", "Sigmoid", "Relu",
                                        "Relu6", "Elu", "Selu", "Softplus", "Softsign"};
#define NB (int)(sizeof binary_ops / sizeof binary_ops[0])
#define NU (int)(sizeof unary_ops / sizeof unary_ops[0])

/* n values: random over [-12, 12] (past Softplus' and tanh's tails), with
 * special values mixed in. */
static dfx_tensor *values(dfx_dtype t, int nd, const int64_t *dims, unsigned seed) {
  static const double specials[] = {0.0, -0.0, 1.0, -1.0, 6.0, 7.0, 1e-5, -1e-5, 40.0, -40.0, 100.0, -100.0,
                                    INFINITY, -INFINITY, NAN};
  dfx_tensor *x = kh_tensor(t, nd, dims, NULL);
  cr_assert(x);
  for (int64_t i = 0; i < x->count; i++) {
    seed = seed * 1103515245u + 12345u;
    double v = (i % 7 == 3) ? specials[(seed >> 8) % (sizeof specials / sizeof specials[0])]
                            : -12.0 + 24.0 * (double)((seed >> 8) & 0xffff) / 65535.0;
    if (t == DFX_F32)
      ((float *)x->data)[i] = (float)v;
    else
      ((double *)x->data)[i] = v;
  }
  return x;
}

static dfx_tensor *run_ok(dfx_node *n, dfx_tensor **in, int n_in) {
  dfx_tensor *o[2] = {0};
  char err[512] = "";
  int n_out = 0;
  cr_assert_eq(kh_run(n, in, n_in, o, &n_out, err, sizeof err), DFX_OK, "%s: %s", n->op, err);
  return o[0];
}

static dfx_tensor *run_op(const char *op, dfx_dtype t, dfx_tensor **in, int n_in) {
  dfx_node *n = kh_node_new(op);
  kh_attr_type(n, "T", t);
  dfx_tensor *o = run_ok(n, in, n_in);
  kh_node_free(n);
  return o;
}

static dfx_node *fused(dfx_dtype t, int n_in, const char *const *ops, const int64_t *refs, int n_ops) {
  dfx_node *n = kh_node_new("_FusedElementwise");
  kh_attr_type(n, "T", t);
  kh_attr_int(n, "N", n_in);
  kh_attr_strs(n, "ops", ops, n_ops);
  kh_attr_ints(n, "operands", refs, 2 * n_ops);
  return n;
}

static void same_bits(const dfx_tensor *got, const dfx_tensor *want, const char *what) {
  cr_assert_eq(got->dtype, want->dtype, "%s: dtype", what);
  cr_assert_eq(got->ndims, want->ndims, "%s: rank", what);
  for (int d = 0; d < got->ndims; d++) cr_assert_eq(got->dims[d], want->dims[d], "%s: dim %d", what, d);
  size_t es = got->dtype == DFX_F64 ? 8 : 4;
  for (int64_t i = 0; i < got->count; i++) {
    /* Any NaN equals any NaN: which payload and sign a NaN carries depends
     * on operand order inside a vectorised loop (the unfused kernels run
     * the SIMD loops), and TensorFlow does not define it either. */
    double g = es == 8 ? ((const double *)got->data)[i] : ((const float *)got->data)[i];
    double w = es == 8 ? ((const double *)want->data)[i] : ((const float *)want->data)[i];
    if (isnan(g) && isnan(w)) continue;
    cr_assert(memcmp((char *)got->data + i * es, (char *)want->data + i * es, es) == 0,
              "%s: element %lld differs: %.17g vs %.17g", what, (long long)i, g, w);
  }
}

Test(ew_fused, every_opcode_gives_the_unfused_bits) {
  const dfx_dtype types[] = {DFX_F32, DFX_F64};
  int64_t dims[2] = {3, 337}; /* several blocks and a ragged last one */
  for (int ti = 0; ti < 2; ti++) {
    dfx_dtype t = types[ti];
    dfx_tensor *x = values(t, 2, dims, 1), *y = values(t, 2, dims, 2);
    for (int k = 0; k < NB + NU; k++) {
      bool bin = k < NB;
      const char *op = bin ? binary_ops[k] : unary_ops[k - NB];
      dfx_tensor *want = run_op(op, t, (dfx_tensor *[]){x, y}, bin ? 2 : 1);
      dfx_node *f = fused(t, bin ? 2 : 1, &op, (int64_t[]){0, bin ? 1 : -1}, 1);
      dfx_tensor *got = run_ok(f, (dfx_tensor *[]){x, y}, bin ? 2 : 1);
      char what[64];
      snprintf(what, sizeof what, "%s %s", op, t == DFX_F32 ? "float" : "double");
      same_bits(got, want, what);
      dfx__tensor_unref(got);
      dfx__tensor_unref(want);
      kh_node_free(f);
    }
    dfx__tensor_unref(x);
    dfx__tensor_unref(y);
  }
}

/* ((x * a + b) -> Tanh) * c, a and c scalars, b a tensor; and a tree:
 * Sigmoid(x) * Tanh(y) + Relu(x - y). */
static void chain_and_tree(dfx_dtype t, int nd, const int64_t *dims) {
  dfx_tensor *x = values(t, nd, dims, 5), *b = values(t, nd, dims, 6), *y = values(t, nd, dims, 7);
  dfx_tensor *a = values(t, 0, NULL, 8), *c = values(t, 0, NULL, 9);
  dfx_tensor *s1 = run_op("Mul", t, (dfx_tensor *[]){x, a}, 2), *s2 = run_op("AddV2", t, (dfx_tensor *[]){s1, b}, 2);
  dfx_tensor *s3 = run_op("Tanh", t, &s2, 1), *want = run_op("Mul", t, (dfx_tensor *[]){c, s3}, 2);
  /* Inputs: x, a, b, c; steps 4..7. */
  const char *ops[] = {"Mul", "AddV2", "Tanh", "Mul"};
  dfx_node *f = fused(t, 4, ops, (int64_t[]){0, 1, 4, 2, 5, -1, 3, 6}, 4);
  dfx_tensor *got = run_ok(f, (dfx_tensor *[]){x, a, b, c}, 4);
  same_bits(got, want, "chain");
  for (dfx_tensor **p = (dfx_tensor *[]){s1, s2, s3, want, got, NULL}; *p; p++) dfx__tensor_unref(*p);
  kh_node_free(f);

  dfx_tensor *g = run_op("Sigmoid", t, &x, 1), *h = run_op("Tanh", t, &y, 1);
  dfx_tensor *gh = run_op("Mul", t, (dfx_tensor *[]){g, h}, 2), *d = run_op("Sub", t, (dfx_tensor *[]){x, y}, 2);
  dfx_tensor *r = run_op("Relu", t, &d, 1);
  want = run_op("Add", t, (dfx_tensor *[]){gh, r}, 2);
  const char *tops[] = {"Sigmoid", "Tanh", "Mul", "Sub", "Relu", "Add"};
  /* Inputs: x, y; steps 2..7. */
  f = fused(t, 2, tops, (int64_t[]){0, -1, 1, -1, 2, 3, 0, 1, 5, -1, 4, 6}, 6);
  got = run_ok(f, (dfx_tensor *[]){x, y}, 2);
  same_bits(got, want, "tree");
  for (dfx_tensor **p = (dfx_tensor *[]){g, h, gh, d, r, want, got, x, b, y, a, c, NULL}; *p; p++)
    dfx__tensor_unref(*p);
  kh_node_free(f);
}

Test(ew_fused, chains_and_trees_with_scalars_give_the_unfused_bits) {
  int64_t big[1] = {1000003}, odd[3] = {2, 3, 43}, one[1] = {1}, empty[2] = {4, 0};
  for (int ti = 0; ti < 2; ti++) {
    dfx_dtype t = ti ? DFX_F64 : DFX_F32;
    chain_and_tree(t, 1, big);
    chain_and_tree(t, 3, odd);
    chain_and_tree(t, 1, one);
    chain_and_tree(t, 2, empty);
    chain_and_tree(t, 0, NULL); /* only scalars */
  }
}

static void init_fails(dfx_node *f, int n_in, const char *msg) {
  dfx_tensor *x = values(DFX_F32, 0, NULL, 1);
  dfx_tensor *in[4] = {x, x, x, x}, *o[2] = {0};
  char err[512] = "";
  int n_out = 0;
  cr_assert_neq(kh_run(f, in, n_in, o, &n_out, err, sizeof err), DFX_OK);
  cr_assert(strstr(err, msg), "message '%s' lacks '%s'", err, msg);
  dfx__tensor_unref(x);
  kh_node_free(f);
}

Test(ew_fused, refuses_bad_programs_and_shapes) {
  const char *add = "Add", *neg = "Neg", *bad = "MatMul";
  init_fails(fused(DFX_F32, 2, &bad, (int64_t[]){0, 1}, 1), 2, "'MatMul', is not an elementwise op");
  init_fails(fused(DFX_F32, 2, &add, (int64_t[]){0, 2}, 1), 2, "operand 1 is 2");
  init_fails(fused(DFX_F32, 1, &neg, (int64_t[]){0, 0}, 1), 1, "-1 (a unary op)");
  dfx_node *f = kh_node_new("_FusedElementwise");
  kh_attr_type(f, "T", DFX_F32);
  kh_attr_int(f, "N", 1);
  kh_attr_strs(f, "ops", &neg, 1);
  kh_attr_ints(f, "operands", (int64_t[]){0}, 1);
  init_fails(f, 1, "2 ints per op");
  /* Shapes that do not broadcast: the unfused op's message. */
  f = fused(DFX_F32, 2, &add, (int64_t[]){0, 1}, 1);
  dfx_tensor *x = values(DFX_F32, 1, (int64_t[]){3}, 1), *y = values(DFX_F32, 1, (int64_t[]){4}, 2), *o[2] = {0};
  char err[512] = "";
  int n_out = 0;
  cr_assert_eq(kh_run(f, (dfx_tensor *[]){x, y}, 2, o, &n_out, err, sizeof err), DFX_EINVAL);
  cr_assert(strstr(err, "Incompatible shapes: [3] vs. [4]"), "%s", err);
  dfx__tensor_unref(x);
  dfx__tensor_unref(y);
  kh_node_free(f);
}

/* Inputs whose shapes broadcast (what a run can bring when the pass saw
 * unknown dims): Tanh(x * y) + z with x [2,1,5], y [3,1], z [5], and
 * x [1,5] * y [5] (one count, two ranks). */
Test(ew_fused, broadcasting_inputs_give_the_unfused_bits) {
  for (int ti = 0; ti < 2; ti++) {
    dfx_dtype t = ti ? DFX_F64 : DFX_F32;
    dfx_tensor *x = values(t, 3, (int64_t[]){2, 1, 5}, 1), *y = values(t, 2, (int64_t[]){3, 1}, 2);
    dfx_tensor *z = values(t, 1, (int64_t[]){5}, 3);
    dfx_tensor *m = run_op("Mul", t, (dfx_tensor *[]){x, y}, 2), *th = run_op("Tanh", t, &m, 1);
    dfx_tensor *want = run_op("Add", t, (dfx_tensor *[]){th, z}, 2);
    const char *ops[] = {"Mul", "Tanh", "Add"};
    dfx_node *f = fused(t, 3, ops, (int64_t[]){0, 1, 3, -1, 4, 2}, 3);
    dfx_tensor *got = run_ok(f, (dfx_tensor *[]){x, y, z}, 3);
    same_bits(got, want, "broadcast tree");
    for (dfx_tensor **p = (dfx_tensor *[]){x, y, z, m, th, want, got, NULL}; *p; p++) dfx__tensor_unref(*p);
    kh_node_free(f);
    /* An empty tensor meeting a broadcast one. */
    x = values(t, 2, (int64_t[]){0, 5}, 4);
    y = values(t, 2, (int64_t[]){1, 5}, 5);
    want = run_op("Mul", t, (dfx_tensor *[]){x, y}, 2);
    const char *mul = "Mul";
    f = fused(t, 2, &mul, (int64_t[]){0, 1}, 1);
    got = run_ok(f, (dfx_tensor *[]){x, y}, 2);
    same_bits(got, want, "empty");
    for (dfx_tensor **p = (dfx_tensor *[]){x, y, want, got, NULL}; *p; p++) dfx__tensor_unref(*p);
    kh_node_free(f);
    x = values(t, 2, (int64_t[]){1, 5}, 4);
    y = values(t, 1, (int64_t[]){5}, 5);
    want = run_op("Sub", t, (dfx_tensor *[]){y, x}, 2);
    const char *sub = "Sub";
    f = fused(t, 2, &sub, (int64_t[]){1, 0}, 1);
    got = run_ok(f, (dfx_tensor *[]){x, y}, 2);
    same_bits(got, want, "ranks");
    for (dfx_tensor **p = (dfx_tensor *[]){x, y, want, got, NULL}; *p; p++) dfx__tensor_unref(*p);
    kh_node_free(f);
  }
}

/* Programs the pass does not write but the op allows: a value read twice
 * and late (its block buffer must stay until its last use), an unused
 * step, and a long chain that runs in two block buffers. */
Test(ew_fused, values_read_late_and_long_chains) {
  int64_t dims[1] = {700};
  dfx_tensor *x = values(DFX_F32, 1, dims, 3);
  dfx_tensor *s0 = run_op("Neg", DFX_F32, &x, 1), *s1 = run_op("Exp", DFX_F32, &x, 1);
  dfx_tensor *s2 = run_op("Add", DFX_F32, (dfx_tensor *[]){s0, s1}, 2);
  dfx_tensor *want = run_op("Mul", DFX_F32, (dfx_tensor *[]){s2, s0}, 2);
  /* Input x; steps 1..5: Neg, Exp, Sqrt (unused), Add, Mul. */
  const char *ops[] = {"Neg", "Exp", "Sqrt", "Add", "Mul"};
  dfx_node *f = fused(DFX_F32, 1, ops, (int64_t[]){0, -1, 0, -1, 0, -1, 1, 2, 4, 1}, 5);
  dfx_tensor *got = run_ok(f, &x, 1);
  same_bits(got, want, "late use");
  for (dfx_tensor **p = (dfx_tensor *[]){s0, s1, s2, want, got, NULL}; *p; p++) dfx__tensor_unref(*p);
  kh_node_free(f);
  /* 300 steps: Sigmoid, then Add x, alternately. */
  enum { K = 300 };
  const char *cops[K];
  int64_t refs[2 * K];
  dfx_tensor *v = dfx__tensor_ref(x);
  for (int k = 0; k < K; k++) {
    bool add = k % 2;
    cops[k] = add ? "Add" : "Sigmoid";
    refs[2 * k] = k == 0 ? 0 : k; /* step k - 1 is reference 1 + (k - 1) */
    refs[2 * k + 1] = add ? 0 : -1;
    dfx_tensor *nv = add ? run_op("Add", DFX_F32, (dfx_tensor *[]){v, x}, 2) : run_op("Sigmoid", DFX_F32, &v, 1);
    dfx__tensor_unref(v);
    v = nv;
  }
  f = fused(DFX_F32, 1, cops, refs, K);
  got = run_ok(f, &x, 1);
  same_bits(got, v, "long chain");
  dfx__tensor_unref(got);
  dfx__tensor_unref(v);
  dfx__tensor_unref(x);
  kh_node_free(f);
}
