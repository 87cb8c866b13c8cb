/* test_shapes.c - static shape inference (passes/shapes.h): the shape
 * functions op by op (broadcasting, MatMul, convolutions and pools,
 * reductions, Reshape with -1 and with shapes as values, Transpose,
 * Concat, Pack, Split, StridedSlice masks, Squeeze, Tile, Pad, Fill,
 * Gather, OneHot, Range...), loops and conds (Merge joins, back edges),
 * feeds and hints, and malformed graphs, which give unknown, never a
 * crash. Each result reads as the CLI prints it: "[2,?]{values}" or "?". */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eutil.h"
#include "gtext.h"
#include "shapes.h"

TestSuite(shapes, .init = eu_setup, .fini = eu_teardown, .timeout = 30);

/* ---- graph text ---- */

#define ATTR_T(k, t) " attr { key: '" k "' value { type: " t " } }"
#define ATTR_I(k, v) " attr { key: '" k "' value { i: " #v " } }"
#define ATTR_B(k, v) " attr { key: '" k "' value { b: " #v " } }"
#define ATTR_S(k, v) " attr { key: '" k "' value { s: '" v "' } }"
#define ATTR_INTS(k, l) " attr { key: '" k "' value { list { " l " } } }"
/* A placeholder of `shape` (text of dims, e.g. D(2) D(-1)). */
#define D(n) "dim { size: " #n " } "
#define PH(name, t, shape) \
  "node { name: '" name "' op: 'Placeholder'" ATTR_T("dtype", t) " attr { key: 'shape' value { shape { " shape "} } } }\n"
#define PH_ANY(name, t) \
  "node { name: '" name "' op: 'Placeholder'" ATTR_T("dtype", t) " attr { key: 'shape' value { shape { unknown_rank: true } } } }\n"
/* An int32 Const of `shape` with `vals` ("int_val: 1 int_val: 2"). */
#define CI(name, shape, vals) \
  "node { name: '" name "' op: 'Const'" ATTR_T("dtype", "DT_INT32") \
  " attr { key: 'value' value { tensor { dtype: DT_INT32 tensor_shape { " shape "} " vals " } } } }\n"
#define CF(name, shape) \
  "node { name: '" name "' op: 'Const'" ATTR_T("dtype", "DT_FLOAT") \
  " attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape { " shape "} float_val: 1 } } } }\n"
/* A node of op with inputs (" input: 'a' input: 'b'") and extra attrs. */
#define OP(name, op, ins, attrs) "node { name: '" name "' op: '" op "'" ins attrs " }\n"
#define IN(a) " input: '" a "'"
#define F ATTR_T("T", "DT_FLOAT")
#define I32 ATTR_T("T", "DT_INT32")

/* ---- inference and reading results ---- */

static dfx_graph *G;
static dfx_shapes *S;

static void infer_opts(const char *text, const dfx_shapes_opts *o) {
  G = eu_graph(text);
  cr_assert_eq(dfx__shapes_infer(G, o, &S, NULL), DFX_OK);
}

static void infer(const char *text) { infer_opts(text, NULL); }

static void done(void) {
  dfx__shapes_free(S);
  dfx_graph_free(G);
  S = NULL;
  G = NULL;
}

/* "node[:k]" as "[2,?]{1,?}" (value when known) or "?". */
static const char *sh(const char *port) {
  static char buf[8][256];
  static int next;
  char *out = buf[next++ % 8];
  char name[128];
  snprintf(name, sizeof name, "%s", port);
  char *colon = strchr(name, ':');
  int slot = colon ? atoi(colon + 1) : 0;
  if (colon) *colon = 0;
  int id = dfx_graph_node_find(G, name);
  cr_assert_geq(id, 0, "no node %s", name);
  const dfx_tinfo *t = dfx__shapes_output(S, id, slot);
  cr_assert(t, "no output %s", port);
  dfx__pshape_str(&t->shape, out, 256);
  if (t->n_val >= 0) {
    size_t o = strlen(out);
    o += (size_t)snprintf(out + o, 256 - o, "{");
    for (int i = 0; i < t->n_val; i++)
      o += t->val[i] == DFX_VALUE_UNKNOWN ? (size_t)snprintf(out + o, 256 - o, "%s?", i ? "," : "")
                                          : (size_t)snprintf(out + o, 256 - o, "%s%lld", i ? "," : "", (long long)t->val[i]);
    snprintf(out + o, 256 - o, "}");
  }
  return out;
}

#define EXPECT(port, want) cr_expect_str_eq(sh(port), want, "%s", port)

/* ---- elementwise and products ---- */

Test(shapes, broadcasting_follows_numpy_and_assumes_success) {
  infer(PH("x", "DT_FLOAT", D(-1) D(3)) PH("y", "DT_FLOAT", D(4) D(1) D(1)) PH("z", "DT_FLOAT", D(-1) D(1))
            CF("c", D(2) D(1)) CF("d", D(3)) PH("w", "DT_FLOAT", D(2))
        OP("a", "Add", IN("x") IN("y"), F) OP("s", "Sub", IN("c") IN("d"), F) OP("m", "Mul", IN("z") IN("x"), F)
        OP("bad", "Mul", IN("w") IN("d"), F) OP("neg", "Neg", IN("x"), F)
        OP("g", "Greater", IN("x") IN("d"), F));
  EXPECT("a", "[4,?,3]");
  EXPECT("s", "[2,3]");
  EXPECT("m", "[?,3]");
  EXPECT("bad", "?"); /* 2 against 3: the run fails, nothing to claim */
  EXPECT("neg", "[?,3]");
  EXPECT("g", "[?,3]");
  done();
}

Test(shapes, integer_values_flow_through_shape_arithmetic) {
  infer(CI("a", D(2), "int_val: 6 int_val: -7") CI("b", "", "int_val: 2") CI("z", "", "int_val: 0")
        OP("add", "Add", IN("a") IN("b"), I32) OP("fd", "FloorDiv", IN("a") IN("b"), I32)
        OP("fm", "FloorMod", IN("a") IN("b"), I32) OP("mx", "Maximum", IN("a") IN("b"), I32)
        OP("div0", "FloorDiv", IN("a") IN("z"), I32) OP("neg", "Neg", IN("a"), I32)
        OP("cast", "Cast", IN("a"), ATTR_T("SrcT", "DT_INT32") ATTR_T("DstT", "DT_INT64") ATTR_B("Truncate", false))
        OP("prod", "Prod", IN("a") IN("z"), I32 ATTR_T("Tidx", "DT_INT32") ATTR_B("keep_dims", false)));
  EXPECT("add", "[2]{8,-5}");
  EXPECT("fd", "[2]{3,-4}");
  EXPECT("fm", "[2]{0,1}");
  EXPECT("mx", "[2]{6,2}");
  EXPECT("div0", "[2]{?,?}");
  EXPECT("neg", "[2]{-6,7}");
  EXPECT("cast", "[2]{6,-7}");
  EXPECT("prod", "[]{-42}");
  done();
}

Test(shapes, matmul_and_batch_matmul) {
  infer(PH("a", "DT_FLOAT", D(2) D(3)) PH("b", "DT_FLOAT", D(4) D(3)) PH("c", "DT_FLOAT", D(5) D(7))
            PH("x", "DT_FLOAT", D(2) D(1) D(3) D(4)) PH("y", "DT_FLOAT", D(5) D(4) D(6))
        OP("mm", "MatMul", IN("a") IN("b"), F ATTR_B("transpose_a", false) ATTR_B("transpose_b", true))
        OP("bad", "MatMul", IN("a") IN("c"), F)
        OP("bmm", "BatchMatMulV2", IN("x") IN("y"), F ATTR_B("adj_x", false) ATTR_B("adj_y", false)));
  EXPECT("mm", "[2,4]");
  EXPECT("bad", "?");
  EXPECT("bmm", "[2,5,3,6]");
  done();
}

Test(shapes, select_and_select_v2) {
  infer(PH("c", "DT_BOOL", D(-1)) PH("t", "DT_FLOAT", D(4) D(-1)) PH("e", "DT_FLOAT", D(-1) D(5))
            PH("p", "DT_BOOL", D(3) D(1) D(1))
        OP("s", "Select", IN("c") IN("t") IN("e"), F) OP("s2", "SelectV2", IN("p") IN("t") IN("e"), F));
  EXPECT("s", "[4,5]");
  EXPECT("s2", "[3,4,5]");
  done();
}

/* ---- convolutions and pools ---- */

#define CONV(name, x, f, strides, pad, fmt, dil) \
  OP(name, "Conv2D", IN(x) IN(f), F ATTR_INTS("strides", strides) ATTR_S("padding", pad) ATTR_S("data_format", fmt) \
     ATTR_INTS("dilations", dil))

Test(shapes, conv2d_same_valid_strides_dilations_and_nchw) {
  infer(PH("x", "DT_FLOAT", D(1) D(32) D(32) D(3)) PH("f", "DT_FLOAT", D(3) D(3) D(3) D(8))
            PH("xc", "DT_FLOAT", D(-1) D(3) D(32) D(32))
        CONV("same", "x", "f", "i: 1 i: 2 i: 2 i: 1", "SAME", "NHWC", "i: 1 i: 1 i: 1 i: 1")
        CONV("valid", "x", "f", "i: 1 i: 2 i: 2 i: 1", "VALID", "NHWC", "i: 1 i: 1 i: 1 i: 1")
        CONV("nchw", "xc", "f", "i: 1 i: 1 i: 2 i: 2", "VALID", "NCHW", "i: 1 i: 1 i: 2 i: 2")
        CONV("bad", "x", "f", "i: 1 i: 2 i: 1", "SAME", "NHWC", "i: 1 i: 1 i: 1 i: 1")
        OP("dw", "DepthwiseConv2dNative", IN("x") IN("f"),
           F ATTR_INTS("strides", "i: 1 i: 1 i: 1 i: 1") ATTR_S("padding", "SAME") ATTR_S("data_format", "NHWC")));
  EXPECT("same", "[1,16,16,8]");
  EXPECT("valid", "[1,15,15,8]");
  EXPECT("nchw", "[?,8,14,14]"); /* effective window 5: (32 - 5 + 2) / 2 */
  EXPECT("bad", "?");            /* three strides: malformed, unknown */
  EXPECT("dw", "[1,32,32,24]");
  done();
}

Test(shapes, pools_and_bias_add) {
  infer(PH("x", "DT_FLOAT", D(1) D(5) D(5) D(3)) PH("xc", "DT_FLOAT", D(2) D(-1) D(7) D(7)) PH("b", "DT_FLOAT", D(4))
        OP("mp", "MaxPool", IN("x"),
           F ATTR_INTS("ksize", "i: 1 i: 2 i: 2 i: 1") ATTR_INTS("strides", "i: 1 i: 2 i: 2 i: 1") ATTR_S("padding", "VALID"))
        OP("ap", "AvgPool", IN("x"),
           F ATTR_INTS("ksize", "i: 1 i: 2 i: 2 i: 1") ATTR_INTS("strides", "i: 1 i: 2 i: 2 i: 1") ATTR_S("padding", "SAME"))
        OP("ba", "BiasAdd", IN("xc") IN("b"), F ATTR_S("data_format", "NCHW")));
  EXPECT("mp", "[1,2,2,3]");
  EXPECT("ap", "[1,3,3,3]");
  EXPECT("ba", "[2,4,7,7]");
  done();
}

Test(shapes, fused_batch_norm_softmax_topk_argmax) {
  infer(PH("x", "DT_FLOAT", D(2) D(5) D(5) D(-1)) PH("s", "DT_FLOAT", D(6)) CI("k", "", "int_val: 3")
            CI("ax", "", "int_val: 1") PH("l", "DT_FLOAT", D(4) D(10))
        OP("bn", "FusedBatchNormV3", IN("x") IN("s") IN("s") IN("s") IN("s"),
           F ATTR_T("U", "DT_FLOAT") ATTR_B("is_training", false))
        OP("sm", "Softmax", IN("l"), F) OP("tk", "TopKV2", IN("l") IN("k"), F)
        OP("am", "ArgMax", IN("l") IN("ax"), F ATTR_T("Tidx", "DT_INT32") ATTR_T("output_type", "DT_INT64"))
        OP("cs", "Cumsum", IN("l") IN("ax"), F ATTR_T("Tidx", "DT_INT32")));
  EXPECT("bn:0", "[2,5,5,6]");
  EXPECT("bn:1", "[6]");
  EXPECT("bn:5", "?");
  EXPECT("sm", "[4,10]");
  EXPECT("tk:0", "[4,3]");
  EXPECT("tk:1", "[4,3]");
  EXPECT("am", "[4]");
  EXPECT("cs", "[4,10]");
  done();
}

/* ---- reductions and reshapes ---- */

#define SUM(name, x, axes, keep) \
  OP(name, "Sum", IN(x) IN(axes), F ATTR_T("Tidx", "DT_INT32") ATTR_B("keep_dims", keep))

Test(shapes, reductions_with_keep_dims_and_axis_values) {
  infer(PH("x", "DT_FLOAT", D(2) D(3) D(4)) CI("a1", D(1), "int_val: 1") CI("am1", "", "int_val: -1")
            PH("dyn", "DT_INT32", D(1)) CI("bad", D(1), "int_val: 3")
        SUM("keep", "x", "a1", true) SUM("drop", "x", "a1", false) SUM("last", "x", "am1", false)
        SUM("dyn_keep", "x", "dyn", true) SUM("dyn_drop", "x", "dyn", false) SUM("oob", "x", "bad", false));
  EXPECT("keep", "[2,1,4]");
  EXPECT("drop", "[2,4]");
  EXPECT("last", "[2,3]");
  EXPECT("dyn_keep", "[?,?,?]");
  EXPECT("dyn_drop", "?");
  EXPECT("oob", "?");
  done();
}

#define RESHAPE(name, x, s) OP(name, "Reshape", IN(x) IN(s), F ATTR_T("Tshape", "DT_INT32"))
#define SHAPE(name, x) OP(name, "Shape", IN(x), F ATTR_T("out_type", "DT_INT32"))
/* x[k] of an int vector (shrink_axis). */
#define ELEM(name, x, b, e) \
  OP(name, "StridedSlice", IN(x) IN(b) IN(e) IN("one"), ATTR_T("T", "DT_INT32") ATTR_T("Index", "DT_INT32") \
     ATTR_I("shrink_axis_mask", 1))

Test(shapes, reshape_infers_minus_one_and_reads_shapes_as_values) {
  infer(PH("x", "DT_FLOAT", D(2) D(3) D(4)) PH("y", "DT_FLOAT", D(5) D(-1)) PH("u", "DT_FLOAT", D(-1) D(3) D(4))
            CI("m1", D(2), "int_val: -1 int_val: 4") CI("two", D(2), "int_val: -1 int_val: -1")
            CI("wrong", D(2), "int_val: 5 int_val: 5") CI("zero", D(1), "int_val: 0") CI("one", D(1), "int_val: 1")
            CI("minus", "", "int_val: -1")
        RESHAPE("r1", "x", "m1") RESHAPE("r2", "x", "two") RESHAPE("r3", "x", "wrong")
        SHAPE("sy", "y") RESHAPE("r4", "x", "sy")
        SHAPE("su", "u") ELEM("d0", "su", "zero", "one")
        OP("p", "Pack", IN("d0") IN("minus"), I32 ATTR_I("N", 2) ATTR_I("axis", 0)) RESHAPE("r5", "u", "p")
        SHAPE("sx", "x") ELEM("x0", "sx", "zero", "one")
        OP("px", "Pack", IN("x0") IN("minus"), I32 ATTR_I("N", 2) ATTR_I("axis", 0)) RESHAPE("r6", "x", "px"));
  EXPECT("r1", "[6,4]");
  EXPECT("r2", "?"); /* two -1: the run fails */
  EXPECT("r3", "?"); /* 25 elements for 24 */
  EXPECT("sy", "[2]{5,?}");
  EXPECT("r4", "[5,?]");
  EXPECT("su", "[3]{?,3,4}");
  EXPECT("d0", "[]{?}");
  EXPECT("p", "[2]{?,-1}");
  EXPECT("r5", "[?,?]");
  EXPECT("x0", "[]{2}");
  EXPECT("r6", "[2,12]");
  done();
}

Test(shapes, transpose_expand_dims_squeeze) {
  infer(PH("x", "DT_FLOAT", D(2) D(3) D(4)) CI("perm", D(3), "int_val: 2 int_val: 0 int_val: 1")
            CI("badperm", D(3), "int_val: 0 int_val: 0 int_val: 1") CI("m1", "", "int_val: -1")
            PH("o", "DT_FLOAT", D(1) D(3) D(1)) PH("q", "DT_FLOAT", D(-1) D(3) D(1))
        OP("t", "Transpose", IN("x") IN("perm"), F ATTR_T("Tperm", "DT_INT32"))
        OP("tb", "Transpose", IN("x") IN("badperm"), F ATTR_T("Tperm", "DT_INT32"))
        OP("e", "ExpandDims", IN("x") IN("m1"), F ATTR_T("Tdim", "DT_INT32"))
        OP("s_all", "Squeeze", IN("o"), F) OP("s0", "Squeeze", IN("o"), F ATTR_INTS("squeeze_dims", "i: 0"))
        OP("s_unknown", "Squeeze", IN("q"), F) OP("s_listed", "Squeeze", IN("q"), F ATTR_INTS("squeeze_dims", "i: 2"))
        OP("s_bad", "Squeeze", IN("o"), F ATTR_INTS("squeeze_dims", "i: 1")));
  EXPECT("t", "[4,2,3]");
  EXPECT("tb", "?"); /* not a permutation: the run fails */
  EXPECT("e", "[2,3,4,1]");
  EXPECT("s_all", "[3]");
  EXPECT("s0", "[3,1]");
  EXPECT("s_unknown", "?"); /* the ? may or may not be a 1 */
  EXPECT("s_listed", "[?,3]");
  EXPECT("s_bad", "?");
  done();
}

Test(shapes, concat_pack_unpack_split) {
  infer(PH("a", "DT_FLOAT", D(2) D(3)) PH("b", "DT_FLOAT", D(-1) D(5)) CI("ax1", "", "int_val: 1")
            PH("x", "DT_FLOAT", D(4) D(6)) CI("sizes", D(3), "int_val: 1 int_val: -1 int_val: 2")
            CI("v", D(2), "int_val: 7 int_val: 8")
        OP("c", "ConcatV2", IN("a") IN("b") IN("ax1"), F ATTR_I("N", 2) ATTR_T("Tidx", "DT_INT32"))
        OP("cv", "ConcatV2", IN("v") IN("v") IN("zero"), I32 ATTR_I("N", 2) ATTR_T("Tidx", "DT_INT32"))
        CI("zero", "", "int_val: 0")
        OP("p", "Pack", IN("a") IN("a"), F ATTR_I("N", 2) ATTR_I("axis", 1))
        OP("u", "Unpack", IN("a"), F ATTR_I("num", 2) ATTR_I("axis", 0))
        OP("uv", "Unpack", IN("v"), I32 ATTR_I("num", 2) ATTR_I("axis", 0))
        OP("sp", "Split", IN("ax1") IN("x"), F ATTR_I("num_split", 3))
        OP("sv", "SplitV", IN("x") IN("sizes") IN("ax1"), F ATTR_I("num_split", 3) ATTR_T("Tlen", "DT_INT32")));
  EXPECT("c", "[2,8]");
  EXPECT("cv", "[4]{7,8,7,8}");
  EXPECT("p", "[2,2,3]");
  EXPECT("u:1", "[3]");
  EXPECT("uv:1", "[]{8}");
  EXPECT("sp:2", "[4,2]");
  EXPECT("sv:0", "[4,1]");
  EXPECT("sv:1", "[4,3]");
  EXPECT("sv:2", "[4,2]");
  done();
}

#define SS(name, x, b, e, s, masks) \
  OP(name, "StridedSlice", IN(x) IN(b) IN(e) IN(s), F ATTR_T("Index", "DT_INT32") masks)

Test(shapes, strided_slice_with_masks) {
  infer(PH("x", "DT_FLOAT", D(5) D(6) D(7)) PH("u", "DT_FLOAT", D(-1) D(6))
            CI("b3", D(3), "int_val: 1 int_val: 0 int_val: 3") CI("e3", D(3), "int_val: 4 int_val: 0 int_val: 4")
            CI("s3", D(3), "int_val: 1 int_val: 2 int_val: 1") CI("b2", D(2), "int_val: 0 int_val: 1")
            CI("e2", D(2), "int_val: 0 int_val: 2") CI("s2", D(2), "int_val: 1 int_val: 1")
            CI("neg", D(1), "int_val: -1") CI("zero1", D(1), "int_val: 0") CI("one1", D(1), "int_val: 1")
            CI("rb", D(1), "int_val: -1") CI("re", D(1), "int_val: -6") CI("rs", D(1), "int_val: -2")
        /* x[1:4, ::2, 3] */
        SS("a", "x", "b3", "e3", "s3", ATTR_I("begin_mask", 2) ATTR_I("end_mask", 2) ATTR_I("shrink_axis_mask", 4))
        /* x[..., 1] */
        SS("ell", "x", "b2", "e2", "s2", ATTR_I("ellipsis_mask", 1) ATTR_I("shrink_axis_mask", 2))
        /* x[:, None] */
        SS("new", "x", "b2", "e2", "s2", ATTR_I("begin_mask", 1) ATTR_I("end_mask", 1) ATTR_I("new_axis_mask", 2))
        /* x[-1] and u[-1]: a dim of 1 shrunk away, known or not */
        SS("last", "x", "neg", "zero1", "one1", ATTR_I("shrink_axis_mask", 1))
        SS("ulast", "u", "neg", "zero1", "one1", ATTR_I("shrink_axis_mask", 1))
        /* x[-1:-6:-2] */
        SS("rev", "x", "rb", "re", "rs", "")
        /* u[0:1]: the unknown dim stays unknown */
        SS("u01", "u", "zero1", "one1", "one1", ""));
  EXPECT("a", "[3,3]");
  EXPECT("ell", "[5,6]");
  EXPECT("new", "[5,1,6,7]");
  EXPECT("last", "[6,7]");
  EXPECT("ulast", "[6]");
  EXPECT("rev", "[3,6,7]");
  EXPECT("u01", "[?,6]");
  done();
}

Test(shapes, tile_pad_fill_broadcast_to) {
  infer(PH("x", "DT_FLOAT", D(2) D(3)) CI("m", D(2), "int_val: 2 int_val: 2")
            CI("pads", D(2) D(2), "int_val: 1 int_val: 1 int_val: 2 int_val: 0") CI("dims", D(2), "int_val: 2 int_val: 3")
            CI("seven", "", "int_val: 7") CF("zero", "") PH("d", "DT_INT32", D(3)) CI("bt", D(3), "int_val: 4 int_val: 2 int_val: 3")
        OP("t", "Tile", IN("x") IN("m"), F ATTR_T("Tmultiples", "DT_INT32"))
        OP("p", "Pad", IN("x") IN("pads"), F ATTR_T("Tpaddings", "DT_INT32"))
        OP("f", "Fill", IN("dims") IN("zero"), F ATTR_T("index_type", "DT_INT32"))
        OP("fi", "Fill", IN("dims") IN("seven"), I32 ATTR_T("index_type", "DT_INT32"))
        OP("fd", "Fill", IN("d") IN("zero"), F ATTR_T("index_type", "DT_INT32"))
        OP("b", "BroadcastTo", IN("x") IN("bt"), F ATTR_T("Tidx", "DT_INT32")));
  EXPECT("t", "[4,6]");
  EXPECT("p", "[4,5]");
  EXPECT("f", "[2,3]");
  EXPECT("fi", "[2,3]{7,7,7,7,7,7}");
  EXPECT("fd", "[?,?,?]");
  EXPECT("b", "[4,2,3]");
  done();
}

Test(shapes, shape_size_rank_and_broadcast_gradient_args_values) {
  infer(PH("x", "DT_FLOAT", D(-1) D(3)) PH("e", "DT_FLOAT", D(-1) D(0)) PH("a", "DT_FLOAT", D(2) D(3) D(1))
            PH("b", "DT_FLOAT", D(3) D(4))
        SHAPE("s", "x") OP("n", "Size", IN("x"), F ATTR_T("out_type", "DT_INT32"))
        OP("ne", "Size", IN("e"), F ATTR_T("out_type", "DT_INT64")) OP("r", "Rank", IN("x"), F)
        OP("sn", "ShapeN", IN("a") IN("b"), F ATTR_I("N", 2) ATTR_T("out_type", "DT_INT32"))
        OP("bga", "BroadcastGradientArgs", IN("sn:0") IN("sn:1"), I32)
        OP("ba", "BroadcastArgs", IN("sn:0") IN("sn:1"), I32));
  EXPECT("s", "[2]{?,3}");
  EXPECT("n", "[]{?}");
  EXPECT("ne", "[]{0}");
  EXPECT("r", "[]{2}");
  EXPECT("sn:1", "[2]{3,4}");
  EXPECT("bga:0", "[1]{2}");
  EXPECT("bga:1", "[1]{0}");
  EXPECT("ba", "[3]{2,3,4}");
  done();
}

Test(shapes, gather_one_hot_range) {
  infer(PH("p", "DT_FLOAT", D(5) D(6)) PH("i", "DT_INT32", D(2) D(3)) CI("ax1", "", "int_val: 1")
            CI("ten", "", "int_val: 10") PH("idx", "DT_INT32", D(4)) CF("on", "") CI("r0", "", "int_val: 0")
            CI("r1", "", "int_val: 10") CI("r2", "", "int_val: 3") CI("v", D(3), "int_val: 5 int_val: 6 int_val: 7")
            CI("pick", D(2), "int_val: 2 int_val: 0")
            "node { name: 'f0' op: 'Const'" ATTR_T("dtype", "DT_FLOAT") " attr { key: 'value' value { tensor { dtype: "
            "DT_FLOAT tensor_shape {} float_val: 0 } } } }\n"
            "node { name: 'f1' op: 'Const'" ATTR_T("dtype", "DT_FLOAT") " attr { key: 'value' value { tensor { dtype: "
            "DT_FLOAT tensor_shape {} float_val: 1 } } } }\n"
            "node { name: 'fd' op: 'Const'" ATTR_T("dtype", "DT_FLOAT") " attr { key: 'value' value { tensor { dtype: "
            "DT_FLOAT tensor_shape {} float_val: 0.1 } } } }\n"
        OP("g", "GatherV2", IN("p") IN("i") IN("ax1"), ATTR_T("Tparams", "DT_FLOAT") ATTR_T("Tindices", "DT_INT32")
                                                     ATTR_T("Taxis", "DT_INT32"))
        OP("gv", "GatherV2", IN("v") IN("pick") IN("r0"), ATTR_T("Tparams", "DT_INT32") ATTR_T("Tindices", "DT_INT32")
                                                        ATTR_T("Taxis", "DT_INT32"))
        OP("oh", "OneHot", IN("idx") IN("ten") IN("on") IN("on"), F ATTR_I("axis", -1) ATTR_T("TI", "DT_INT32"))
        OP("ri", "Range", IN("r0") IN("r1") IN("r2"), ATTR_T("Tidx", "DT_INT32"))
        OP("rf", "Range", IN("f0") IN("f1") IN("fd"), ATTR_T("Tidx", "DT_FLOAT")));
  EXPECT("g", "[5,2,3]");
  EXPECT("gv", "[2]{7,5}");
  EXPECT("oh", "[4,10]");
  EXPECT("ri", "[4]{0,3,6,9}");
  EXPECT("rf", "[10]");
  done();
}

/* ---- control flow ---- */

Test(shapes, loop_merges_relax_to_a_fixed_point) {
  char *text = NULL, path[4096];
  {
    const char *root = getenv("DFX_CONFORMANCE_DIR");
    snprintf(path, sizeof path, "%s/tf-text/while_loop.pbtxt", root ? root : "");
    FILE *f = root && *root ? fopen(path, "r") : NULL;
    if (!f) cr_skip_test("no tf-text corpus (DFX_CONFORMANCE_DIR)");
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    text = calloc((size_t)n + 1, 1);
    cr_assert(text && fread(text, 1, (size_t)n, f) == (size_t)n);
    fclose(f);
  }
  infer(text);
  free(text);
  EXPECT("while/Merge_1", "[?,2]"); /* [2,2] grows by concat each iteration */
  EXPECT("while/Exit_1", "[?,2]");
  EXPECT("while/Merge", "[]{?}");  /* 0, then 1, 2...: the value is lost, the shape kept */
  EXPECT("while/Less/y", "[]{10}");
  cr_expect_lt(S->rounds, 8);
  cr_expect(!S->widened);
  done();
}

Test(shapes, counter_loop_and_cond_in_loop_keep_scalars) {
  infer(GT_COND_IN_LOOP(5, 10));
  EXPECT("w/Merge", "[]{?}");
  EXPECT("w/c/Merge", "[]{?}");
  EXPECT("w/c/Merge:1", "[]");
  EXPECT("w/Exit", "[]{?}");
  EXPECT("w/limit", "[]{5}");
  done();
}

Test(shapes, a_cond_merge_joins_its_branches) {
  infer(PH("x", "DT_FLOAT", D(2) D(3)) PH("p", "DT_BOOL", "") CF("c", D(2) D(4))
        GT_SWITCH("sw", "x", "p", "DT_FLOAT") OP("t", "Identity", IN("sw:1"), F)
        OP("k", "Identity", IN("c") IN("^t"), F) OP("f", "Neg", IN("sw:0"), F)
        GT_MERGE2("m", "k", "f", "DT_FLOAT", "") GT_MERGE2("same", "f", "sw:1", "DT_FLOAT", ""));
  EXPECT("sw:0", "[2,3]");
  EXPECT("sw:1", "[2,3]");
  EXPECT("m", "[2,?]");
  EXPECT("same", "[2,3]");
  done();
}

/* ---- feeds, hints, malformed graphs ---- */

Test(shapes, feeds_seed_placeholders_and_hide_fed_producers) {
  static const char text[] = PH("x", "DT_FLOAT", D(-1) D(4)) CF("c", D(2) D(2))
      OP("i", "Identity", IN("c"), F) OP("n", "Neg", IN("i"), F) OP("y", "Neg", IN("x"), F)
      "node { name: 'd' op: 'PlaceholderWithDefault' input: 'c'" ATTR_T("dtype", "DT_FLOAT")
      " attr { key: 'shape' value { shape { dim { size: -1 } dim { size: 2 } } } } }\n"
      OP("dn", "Neg", IN("d"), F);
  infer(text);
  EXPECT("y", "[?,4]");
  EXPECT("n", "[2,2]");
  EXPECT("dn", "[2,2]"); /* not fed: its input */
  done();
  const char *fed[] = {"i", "d"};
  dfx_shape_feed feeds[] = {{"x", 0, {.rank = 2, .dims = {3, -1}}}};
  dfx_shapes_opts o = {.fed = fed, .n_fed = 2, .feeds = feeds, .n_feeds = 1};
  infer_opts(text, &o);
  EXPECT("y", "[3,4]");  /* the feed and the placeholder's shape, merged */
  EXPECT("n", "?");      /* a fed Identity can be anything */
  EXPECT("dn", "[?,2]"); /* fed or not: the join of its shape attr and its input */
  done();
}

Test(shapes, output_shapes_hints_only_when_asked) {
  static const char text[] = PH("x", "DT_FLOAT", D(-1) D(4))
      "node { name: 'y' op: 'Neg' input: 'x'" F
      " attr { key: '_output_shapes' value { list { shape { dim { size: 8 } dim { size: 4 } } } } } }\n"
      "node { name: 'z' op: 'Neg' input: 'x'" F
      " attr { key: '_output_shapes' value { list { shape { dim { size: 8 } dim { size: 5 } } } } } }\n";
  infer(text);
  EXPECT("y", "[?,4]");
  done();
  dfx_shapes_opts o = {.use_hints = true};
  infer_opts(text, &o);
  EXPECT("y", "[8,4]");
  EXPECT("z", "[?,4]"); /* a hint that contradicts inference is ignored */
  done();
}

Test(shapes, malformed_graphs_and_unknown_ops_give_unknown) {
  infer(PH("x", "DT_FLOAT", D(2) D(3)) PH_ANY("any", "DT_FLOAT") CI("ax9", "", "int_val: 9")
            CI("ax", "", "int_val: 0")
        "node { name: 'mystery' op: 'NoSuchOp' input: 'x' }\n"
        OP("after", "Neg", IN("mystery"), F)
        OP("c9", "ConcatV2", IN("x") IN("x") IN("ax9"), F ATTR_I("N", 2) ATTR_T("Tidx", "DT_INT32"))
        OP("sp", "Split", IN("ax") IN("x"), F ATTR_I("num_split", 4))
        OP("mp", "MaxPool", IN("x"), F ATTR_INTS("ksize", "i: 1 i: 1 i: 1 i: 1 i: 1") ATTR_INTS("strides", "i: 1 i: 1 i: 1 i: 1")
           ATTR_S("padding", "VALID"))
        OP("u", "Unpack", IN("x"), F ATTR_I("num", 3) ATTR_I("axis", 0))
        OP("na", "Neg", IN("any"), F)
        OP("ssb", "StridedSlice", IN("x") IN("ax") IN("ax") IN("ax"), F ATTR_T("Index", "DT_INT32")));
  EXPECT("after", "?");
  EXPECT("c9", "?");
  EXPECT("sp:0", "?"); /* 2 rows into 4 */
  EXPECT("mp", "?");
  EXPECT("u:0", "?");  /* 2 rows, num 3 */
  EXPECT("na", "?");
  EXPECT("ssb", "?"); /* scalar begin/end/strides */
  EXPECT("x", "[2,3]");
  done();
}

Test(shapes, every_output_is_covered_and_counted) {
  infer(PH("x", "DT_FLOAT", D(2)) PH("y", "DT_FLOAT", D(-1)) OP("a", "Add", IN("x") IN("y"), F)
        OP("u", "Unique", IN("y"), F ATTR_T("out_idx", "DT_INT32")));
  cr_expect_eq(S->n_outputs, 5);
  cr_expect_eq(S->n_known, 2); /* x and a */
  EXPECT("u:0", "[?]");
  EXPECT("u:1", "[?]");
  cr_expect(dfx__shapes_has_fn("Conv2D") && dfx__shapes_has_fn("Merge") && !dfx__shapes_has_fn("NoSuchOp"));
  cr_expect_null(dfx__shapes_output(S, 0, 1));
  done();
}
