/* test_grad_extra.c - numeric checks of the gradients in
 * autodiff/grad_extra.c. */
#include <criterion/criterion.h>

#include "eutil.h"
#include "gcheck.h"
#include "gtext_ad.h"

TestSuite(grad_extra, .init = eu_setup, .fini = eu_teardown, .timeout = 120);

static const dfx_dtype BOTH[] = {DFX_F64, DFX_F32};
#define TI(k) " attr { key: \"" k "\" value { type: DT_INT32 } }"

static const gc_case cases[] = {
    {"UnsortedSegmentSum", CIV("ids", 4, IV(1) IV(0) IV(1) IV(2)) CIS("k", 3)
     NX("y", "UnsortedSegmentSum", IN("x") IN("ids") IN("k"), TI("Tindices") TI("Tnumsegments")), "y", 1, {{"x", S2(4, 2)}}},
    {"SegmentSum", CIV("ids", 4, IV(0) IV(0) IV(1) IV(3)) NX("y", "SegmentSum", IN("x") IN("ids"), TI("Tindices")), "y", 1,
     {{"x", S2(4, 2)}}},
    {"Roll", CIV("s", 2, IV(1) IV(-2)) CIV("a", 2, IV(0) IV(1)) NX("y", "Roll", IN("x") IN("s") IN("a"), TI("Tshift") TI("Taxis")),
     "y", 1, {{"x", S2(3, 4)}}},
    {"DepthToSpace", NX("y", "DepthToSpace", IN("x"), AI("block_size", 2)), "y", 1, {{"x", S4(1, 2, 2, 8)}}},
    {"SpaceToDepth", NX("y", "SpaceToDepth", IN("x"), AI("block_size", 2)), "y", 1, {{"x", S4(1, 4, 4, 2)}}},
    {"SpaceToBatchND", CIV("b", 2, IV(2) IV(2)) CIM("p", 2, 2, IV(0) IV(0) IV(1) IV(1))
     NX("y", "SpaceToBatchND", IN("x") IN("b") IN("p"), TI("Tblock_shape") TI("Tpaddings")), "y", 1, {{"x", S4(1, 4, 2, 1)}}},
    {"BatchToSpaceND", CIV("b", 2, IV(2) IV(2)) CIM("c", 2, 2, IV(0) IV(0) IV(0) IV(1))
     NX("y", "BatchToSpaceND", IN("x") IN("b") IN("c"), TI("Tblock_shape") TI("Tcrops")), "y", 1, {{"x", S4(4, 2, 2, 1)}}},
    {"Diag", N1("y", "Diag", "x"), "y", 1, {{"x", S1(3)}}},
    {"DiagPart", N1("y", "DiagPart", "x"), "y", 1, {{"x", S2(3, 3)}}},
    {"MatrixDiag", N1("y", "MatrixDiag", "x"), "y", 1, {{"x", S2(2, 3)}}},
    {"MatrixDiagPart", N1("y", "MatrixDiagPart", "x"), "y", 1, {{"x", S3(2, 3, 3)}}},
    {"MatrixSetDiag", N2("y", "MatrixSetDiag", "x", "d"), "y", 2, {{"x", S3(2, 3, 3)}, {"d", S2(2, 3)}}},
    {"GatherNd", CIM("i", 3, 2, IV(0) IV(1) IV(2) IV(0) IV(0) IV(1))
     "node { name: \"y\" op: \"GatherNd\"" IN("x") IN("i") AT("Tparams") TI("Tindices") " }\n", "y", 1, {{"x", S2(3, 2)}}},
    {"ReverseSequence", CIV("l", 2, IV(3) IV(1))
     NX("y", "ReverseSequence", IN("x") IN("l"), TI("Tlen") AI("seq_dim", 1) AI("batch_dim", 0)), "y", 1, {{"x", S3(2, 4, 2)}}},
    {"Cumprod", CIS("a", 1) NX("y", "Cumprod", IN("x") IN("a"), TI("Tidx")), "y", 1, {{"x", S2(2, 4), 0.5, 1.5}}},
    {"Cumprod exclusive reverse", CIS("a", 0) NX("y", "Cumprod", IN("x") IN("a"), TI("Tidx") AB("exclusive", true) AB("reverse", true)),
     "y", 1, {{"x", S2(3, 2), 0.5, 1.5}}},
    {"Cross", N2("y", "Cross", "a", "b"), "y", 2, {{"a", S2(2, 3)}, {"b", S2(2, 3)}}},
    {"MatrixInverse", NX("y", "MatrixInverse", IN("x"), ""), "y", 1, {{"x", S3(2, 3, 3), 2, 3}}},
    {"Lgamma", N1("y", "Lgamma", "x"), "y", 1, {{"x", S1(4), 0.5, 3}}},
    {"Digamma", N1("y", "Digamma", "x"), "y", 1, {{"x", S1(4), 0.5, 3}}},
    {"CheckNumerics", NX("y", "CheckNumerics", IN("x"), AS("message", "bad")), "y", 1, {{"x", S1(3)}}},
    {"Conv2DBackpropInput (conv2d_transpose)", CIV("sz", 4, IV(1) IV(5) IV(5) IV(2))
     NX("y", "Conv2DBackpropInput", IN("sz") IN("f") IN("x"), AIL("strides", "i: 1 i: 2 i: 2 i: 1") AS("padding", "SAME")),
     "y", 2, {{"f", S4(3, 3, 2, 3)}, {"x", S4(1, 3, 3, 3)}}},
    {"Polygamma", "node { name: \"one\" op: \"OnesLike\"" IN("x") AT("T") " }\n" N2("y", "Polygamma", "one", "x"), "y", 1,
     {{"x", S1(3), 0.5, 3}}},
    {"MatrixDeterminant", N1("y", "MatrixDeterminant", "x"), "y", 1, {{"x", S3(2, 3, 3), 1, 3}}},
    {"LogMatrixDeterminant", N1("d", "LogMatrixDeterminant", "x") N1("y", "Identity", "d:1"), "y", 1,
     {{"x", S2(3, 3), 1, 3}}},
    {"MatrixBandPart", CIS("lo", 1) CIS("up", 0) NX("y", "MatrixBandPart", IN("x") IN("lo") IN("up"), TI("Tindex")), "y", 1,
     {{"x", S2(3, 4)}}},
    {"DynamicStitch", CIV("i0", 2, IV(0) IV(2)) CIV("i1", 2, IV(1) IV(3))
     "node { name: \"y\" op: \"DynamicStitch\"" IN("i0") IN("i1") IN("a") IN("b") AT("T") AI("N", 2) " }\n", "y", 2,
     {{"a", S2(2, 2)}, {"b", S2(2, 2)}}},
    {"DynamicPartition", CIV("p", 4, IV(1) IV(0) IV(1) IV(1))
     "node { name: \"d\" op: \"DynamicPartition\"" IN("x") IN("p") AT("T") AI("num_partitions", 2) " }\n"
     N2("y", "Mul", "d:1", "d:1"), "y", 1, {{"x", S2(4, 2)}}},
    {"ScatterNd", CIM("i", 2, 1, IV(3) IV(1)) CIV("s", 2, IV(4) IV(2))
     "node { name: \"y\" op: \"ScatterNd\"" IN("i") IN("u") IN("s") AT("T") TI("Tindices") " }\n", "y", 1,
     {{"u", S2(2, 2)}}},
    {"SparseTensorDenseAdd", CIM("i", 2, 2, IV(0) IV(1) IV(2) IV(0)) CIV("s", 2, IV(3) IV(2))
     "node { name: \"y\" op: \"SparseTensorDenseAdd\"" IN("i") IN("v") IN("s") IN("b") AT("T") TI("Tindices") " }\n", "y", 2,
     {{"v", S1(2)}, {"b", S2(3, 2)}}},
};

Test(grad_extra, less_common_ops) { gc_check_all(cases, sizeof cases / sizeof *cases, BOTH, 2); }
