/* test_grad_array.c - numeric checks of the shape and data-movement
 * gradients (autodiff/grad_array.c). */
#include <criterion/criterion.h>

#include "eutil.h"
#include "gcheck.h"
#include "gtext_ad.h"

TestSuite(grad_array, .init = eu_setup, .fini = eu_teardown, .timeout = 120);

static const dfx_dtype BOTH[] = {DFX_F64, DFX_F32};
#define TSHAPE " attr { key: \"Tshape\" value { type: DT_INT32 } }"
#define TIDX(k) " attr { key: \"" k "\" value { type: DT_INT32 } }"

static const gc_case cases[] = {
    {"Reshape", CIV("s", 2, IV(3) IV(-1)) NX("y", "Reshape", IN("x") IN("s"), TSHAPE), "y", 1, {{"x", S2(2, 3)}}},
    {"ExpandDims", CIS("d", 1) NX("y", "ExpandDims", IN("x") IN("d"), TIDX("Tdim")), "y", 1, {{"x", S2(2, 3)}}},
    {"Squeeze", NX("y", "Squeeze", IN("x"), ""), "y", 1, {{"x", S3(2, 1, 3)}}},
    {"Transpose", CIV("p", 3, IV(2) IV(0) IV(1)) NX("y", "Transpose", IN("x") IN("p"), TIDX("Tperm")), "y", 1,
     {{"x", S3(2, 3, 4)}}},
    {"ConcatV2 axis 1", CIS("a", 1) NX("y", "ConcatV2", IN("x") IN("z") IN("a"), AI("N", 2) TIDX("Tidx")), "y", 2,
     {{"x", S2(2, 3)}, {"z", S2(2, 1)}}},
    {"ConcatV2 axis -1 with an empty piece",
     CIS("a", -1) NX("y", "ConcatV2", IN("x") IN("z") IN("w") IN("a"), AI("N", 3) TIDX("Tidx")), "y", 3,
     {{"x", S2(2, 3)}, {"z", S2(2, 0)}, {"w", S2(2, 2)}}},
    {"Concat (axis first)", CIS("a", 0) NX("y", "Concat", IN("a") IN("x") IN("z"), AI("N", 2)), "y", 2,
     {{"x", S2(2, 3)}, {"z", S2(1, 3)}}},
    {"Split, one output used", CIS("a", 1) NX("s", "Split", IN("a") IN("x"), AI("num_split", 3)) N1("y", "Identity", "s:1"),
     "y", 1, {{"x", S2(2, 6)}}},
    {"Split, two outputs summed", CIS("a", 0) NX("s", "Split", IN("a") IN("x"), AI("num_split", 2)) N2("y", "Mul", "s:0", "s:1"),
     "y", 1, {{"x", S2(4, 3)}}},
    {"SplitV", CIV("sz", 2, IV(1) IV(3)) CIS("a", 1)
     NX("s", "SplitV", IN("x") IN("sz") IN("a"), AI("num_split", 2) TIDX("Tlen")) N1("y", "Square", "s:1"), "y", 1,
     {{"x", S2(2, 4)}}},
    {"Pack axis 1", NX("y", "Pack", IN("x") IN("z"), AI("N", 2) AI("axis", 1)), "y", 2, {{"x", S2(2, 3)}, {"z", S2(2, 3)}}},
    {"Unpack", NX("u", "Unpack", IN("x"), AI("num", 3) AI("axis", 0)) N2("y", "Mul", "u:0", "u:2"), "y", 1,
     {{"x", S2(3, 2)}}},
    {"Slice", CIV("b", 2, IV(1) IV(0)) CIV("n", 2, IV(2) IV(-1)) NX("y", "Slice", IN("x") IN("b") IN("n"), TIDX("Index")),
     "y", 1, {{"x", S2(4, 3)}}},
    {"StridedSlice stride 2", CIV("b", 2, IV(0) IV(1)) CIV("e", 2, IV(3) IV(4)) CIV("s", 2, IV(2) IV(1))
     NX("y", "StridedSlice", IN("x") IN("b") IN("e") IN("s"), TIDX("Index")), "y", 1, {{"x", S2(4, 4)}}},
    {"StridedSlice negative stride, shrink axis", CIV("b", 2, IV(-1) IV(2)) CIV("e", 2, IV(0) IV(3)) CIV("s", 2, IV(-1) IV(1))
     NX("y", "StridedSlice", IN("x") IN("b") IN("e") IN("s"), TIDX("Index") AI("end_mask", 1) AI("shrink_axis_mask", 2)),
     "y", 1, {{"x", S2(3, 4)}}},
    {"StridedSlice new axis and begin mask", CIV("b", 2, IV(0) IV(1)) CIV("e", 2, IV(0) IV(3)) CIV("s", 2, IV(1) IV(1))
     NX("y", "StridedSlice", IN("x") IN("b") IN("e") IN("s"), TIDX("Index") AI("new_axis_mask", 1)), "y", 1,
     {{"x", S1(5)}}},
    {"Pad", CIM("p", 2, 2, IV(1) IV(0) IV(2) IV(1)) NX("y", "Pad", IN("x") IN("p"), TIDX("Tpaddings")), "y", 1,
     {{"x", S2(2, 3)}}},
    {"Tile", CIV("m", 2, IV(2) IV(3)) NX("y", "Tile", IN("x") IN("m"), TIDX("Tmultiples")), "y", 1, {{"x", S2(2, 2)}}},
    {"GatherV2 axis 0, repeated indices", CIV("i", 4, IV(2) IV(0) IV(2) IV(1)) CIS("a", 0)
     "node { name: \"y\" op: \"GatherV2\"" IN("x") IN("i") IN("a") AT("Tparams") TIDX("Tindices") TIDX("Taxis") " }\n",
     "y", 1, {{"x", S2(3, 2)}}},
    {"GatherV2 matrix indices", CIM("i", 2, 2, IV(1) IV(1) IV(0) IV(2)) CIS("a", 0)
     "node { name: \"y\" op: \"GatherV2\"" IN("x") IN("i") IN("a") AT("Tparams") TIDX("Tindices") TIDX("Taxis") " }\n",
     "y", 1, {{"x", S1(3)}}},
    {"GatherV2 axis 1, matrix indices", CIM("i", 2, 2, IV(2) IV(0) IV(2) IV(1)) CIS("a", 1)
     "node { name: \"y\" op: \"GatherV2\"" IN("x") IN("i") IN("a") AT("Tparams") TIDX("Tindices") TIDX("Taxis") " }\n",
     "y", 1, {{"x", S3(2, 3, 2)}}},
    {"GatherV2 axis -1", CIV("i", 3, IV(1) IV(1) IV(0)) CIS("a", -1)
     "node { name: \"y\" op: \"GatherV2\"" IN("x") IN("i") IN("a") AT("Tparams") TIDX("Tindices") TIDX("Taxis") " }\n",
     "y", 1, {{"x", S2(3, 2)}}},
    {"Select", "node { name: \"c\" op: \"Greater\"" IN("x") IN("z") AT("T") " }\n" NX("y", "Select", IN("c") IN("x") IN("z"), ""),
     "y", 2, {{"x", S2(2, 3)}, {"z", S2(2, 3)}}},
    {"SelectV2 broadcasting", "node { name: \"c\" op: \"Greater\"" IN("x") IN("z") AT("T") " }\n"
     NX("y", "SelectV2", IN("c") IN("x") IN("w"), ""), "y", 3, {{"x", S2(2, 3)}, {"z", S2(2, 3)}, {"w", S1(3)}}},
    {"Fill", CIV("d", 2, IV(2) IV(3)) NX("y", "Fill", IN("d") IN("v"), TIDX("index_type")), "y", 1, {{"v", S0}}},
    {"BroadcastTo", CIV("s", 3, IV(2) IV(2) IV(3)) NX("y", "BroadcastTo", IN("x") IN("s"), TIDX("Tidx")), "y", 1,
     {{"x", S2(1, 3)}}},
    {"ReverseV2", CIV("a", 1, IV(1)) NX("y", "ReverseV2", IN("x") IN("a"), TIDX("Tidx")), "y", 1, {{"x", S2(2, 3)}}},
    {"Cumsum", CIS("a", 1) NX("y", "Cumsum", IN("x") IN("a"), TIDX("Tidx")), "y", 1, {{"x", S2(2, 3)}}},
    {"Cumsum exclusive reverse", CIS("a", 0) NX("y", "Cumsum", IN("x") IN("a"), TIDX("Tidx") AB("exclusive", true) AB("reverse", true)),
     "y", 1, {{"x", S2(3, 2)}}},
    {"IdentityN", "node { name: \"n\" op: \"IdentityN\"" IN("x") IN("z") " attr { key: \"T\" value { list { type: $T type: $T } } } }\n"
     N2("y", "Mul", "n:0", "n:1"), "y", 2, {{"x", S1(3)}, {"z", S1(3)}}},
};

Test(grad_array, data_movement) { gc_check_all(cases, sizeof cases / sizeof *cases, BOTH, 2); }
