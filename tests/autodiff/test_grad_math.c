/* test_grad_math.c - numeric checks of the elementwise, matrix-product and
 * reduction gradients (autodiff/grad_math.c), in float64 and float32, with
 * broadcasting and empty dimensions. */
#include <criterion/criterion.h>

#include "eutil.h"
#include "gcheck.h"
#include "gtext_ad.h"

TestSuite(grad_math, .init = eu_setup, .fini = eu_teardown, .timeout = 120);

static const dfx_dtype BOTH[] = {DFX_F64, DFX_F32};

#define UNARY(op, lo, hi) {op, N1("y", op, "x"), "y", 1, {{"x", S2(2, 3), lo, hi}}}
#define UNARY_EMPTY(op, lo, hi) {op " empty", N1("y", op, "x"), "y", 1, {{"x", S2(0, 3), lo, hi}}}

static const gc_case unary[] = {
    UNARY("Identity", 0, 0), UNARY("Neg", 0, 0), UNARY("Abs", 0.1, 1), UNARY("Square", 0, 0),
    UNARY("Sqrt", 0.5, 2), UNARY("Rsqrt", 0.5, 2), UNARY("Exp", 0, 0), UNARY("Expm1", 0, 0),
    UNARY("Log", 0.5, 2), UNARY("Log1p", 0, 1), UNARY("Reciprocal", 0.5, 2), UNARY("Sin", 0, 0),
    UNARY("Cos", 0, 0), UNARY("Tan", -1, 1), UNARY("Sinh", 0, 0), UNARY("Cosh", 0, 0), UNARY("Atan", -2, 2),
    UNARY("Asin", -0.8, 0.8), UNARY("Acos", -0.8, 0.8), UNARY("Asinh", -2, 2), UNARY("Acosh", 1.5, 3),
    UNARY("Atanh", -0.8, 0.8), UNARY("Tanh", -2, 2), UNARY("Sigmoid", -3, 3), UNARY("Erf", -1.5, 1.5),
    UNARY("Erfc", -1.5, 1.5), UNARY("Sign", 0.1, 1), UNARY_EMPTY("Exp", 0, 0), UNARY_EMPTY("Tanh", 0, 0),
    {"Snapshot", N1("y", "Snapshot", "x"), "y", 1, {{"x", S1(4)}}},
    {"Cast to own dtype via double", "node { name: \"c\" op: \"Cast\"" IN("x") AT("SrcT") " attr { key: \"DstT\" value { type: DT_DOUBLE } } }\n"
     "node { name: \"y\" op: \"Cast\"" IN("c") " attr { key: \"SrcT\" value { type: DT_DOUBLE } }" AT("DstT") " }\n",
     "y", 1, {{"x", S2(2, 2)}}},
    {"AddN with fan-out", "node { name: \"y\" op: \"AddN\"" IN("x") IN("x") IN("z") AT("T") AI("N", 3) " }\n", "y", 2,
     {{"x", S2(2, 3)}, {"z", S2(2, 3)}}},
};

Test(grad_math, unary) { gc_check_all(unary, sizeof unary / sizeof *unary, BOTH, 2); }

#define BINARY(op, sa, sb, lo, hi) {op " " #sa " " #sb, N2("y", op, "a", "b"), "y", 2, {{"a", sa, lo, hi}, {"b", sb, lo, hi}}}
#define BIN_ALL_SHAPES(op, lo, hi)                                                                        \
  BINARY(op, S2(2, 3), S2(2, 3), lo, hi), BINARY(op, S2(2, 3), S1(3), lo, hi),                             \
      BINARY(op, S0, S2(2, 3), lo, hi), BINARY(op, S3(2, 1, 3), S2(4, 1), lo, hi),                        \
      BINARY(op, S2(0, 3), S1(3), lo, hi)

static const gc_case binary[] = {
    BIN_ALL_SHAPES("Add", 0, 0), BIN_ALL_SHAPES("AddV2", 0, 0), BIN_ALL_SHAPES("Sub", 0, 0),
    BIN_ALL_SHAPES("Mul", 0, 0), BIN_ALL_SHAPES("RealDiv", 0.5, 2), BIN_ALL_SHAPES("Div", 0.5, 2),
    BIN_ALL_SHAPES("DivNoNan", 0.5, 2), BIN_ALL_SHAPES("SquaredDifference", 0, 0),
    BIN_ALL_SHAPES("Maximum", 0, 0), BIN_ALL_SHAPES("Minimum", 0, 0), BIN_ALL_SHAPES("Pow", 0.5, 2),
    BIN_ALL_SHAPES("Atan2", 0.5, 2),
    {"Mul x*x (fan-out into one op)", N2("y", "Mul", "a", "a"), "y", 1, {{"a", S2(2, 2)}}},
};

Test(grad_math, binary_broadcasting) { gc_check_all(binary, sizeof binary / sizeof *binary, BOTH, 2); }

#define MM(ta, tb, sa, sb) \
  {"MatMul " #ta #tb, NX("y", "MatMul", IN("a") IN("b"), AB("transpose_a", ta) AB("transpose_b", tb)), "y", 2, {{"a", sa}, {"b", sb}}}
#define BMM(op, ta, tb, sa, sb) \
  {op " " #ta #tb " " #sa " " #sb, NX("y", op, IN("a") IN("b"), AB("adj_x", ta) AB("adj_y", tb)), "y", 2, {{"a", sa}, {"b", sb}}}

static const gc_case matmul[] = {
    MM(false, false, S2(2, 3), S2(3, 4)), MM(false, true, S2(2, 3), S2(4, 3)), MM(true, false, S2(3, 2), S2(3, 4)),
    MM(true, true, S2(3, 2), S2(4, 3)), MM(false, false, S2(0, 3), S2(3, 2)),
    BMM("BatchMatMul", false, false, S3(2, 2, 3), S3(2, 3, 2)), BMM("BatchMatMul", true, true, S3(2, 3, 2), S3(2, 2, 3)),
    BMM("BatchMatMulV2", false, true, S3(2, 2, 3), S3(2, 4, 3)),
    BMM("BatchMatMulV2", false, false, S4(2, 1, 2, 3), S3(3, 3, 2)),
    BMM("BatchMatMulV2", true, false, S2(3, 2), S3(2, 3, 4)),
};

Test(grad_math, matmul) { gc_check_all(matmul, sizeof matmul / sizeof *matmul, BOTH, 2); }

#define RED(op, axes_n, axes, keep, shape, lo, hi)                                                          \
  {op " axes " #axes " keep " #keep " " #shape,                                                            \
   CIV("ax", axes_n, axes) NX("y", op, IN("x") IN("ax"), AB("keep_dims", keep)), "y", 1, {{"x", shape, lo, hi}}}
#define RED_ALL(op, lo, hi)                                                                                 \
  RED(op, 1, IV(1), false, S2(3, 4), lo, hi), RED(op, 2, IV(0) IV(1), false, S2(3, 4), lo, hi),            \
      RED(op, 1, IV(-1), true, S3(2, 3, 2), lo, hi), RED(op, 2, IV(0) IV(2), true, S3(2, 3, 2), lo, hi),   \
      RED(op, 0, , false, S2(2, 3), lo, hi)

static const gc_case reductions[] = {
    RED_ALL("Sum", 0, 0), RED_ALL("Mean", 0, 0), RED_ALL("Max", 0, 0), RED_ALL("Min", 0, 0),
    RED_ALL("Prod", 0.5, 1.5),
    RED("Sum", 1, IV(0), false, S2(0, 3), 0, 0), RED("Mean", 1, IV(1), false, S2(0, 3), 0, 0),
    RED("Prod", 1, IV(0), false, S2(3, 2), -1, 1),
};

Test(grad_math, reductions) { gc_check_all(reductions, sizeof reductions / sizeof *reductions, BOTH, 2); }

/* Prod through an exact zero: the product-of-others form must not divide
 * (the zero element's gradient is the product of the others). */
static const gc_case prod_zero[] = {
    {"Prod with an exact zero", CIV("ax", 1, IV(0)) CIM("mi", 3, 2, IV(1) IV(0) IV(1) IV(1) IV(1) IV(1))
     "node { name: \"m\" op: \"Cast\"" IN("mi") " attr { key: \"SrcT\" value { type: DT_INT32 } }" AT("DstT") " }\n"
     N2("z", "Mul", "x", "m") NX("y", "Prod", IN("z") IN("ax"), AB("keep_dims", false)),
     "y", 1, {{"x", S2(3, 2)}}},
};

Test(grad_math, prod_with_zero) { gc_check_all(prod_zero, 1, BOTH, 2); }
