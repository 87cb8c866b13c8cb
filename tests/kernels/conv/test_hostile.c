/* test_hostile.c - regressions for hostile attrs and inputs in the conv
 * family: window attrs refused at init (naming the attr and its value),
 * shape arithmetic that would overflow, loops and scratch bounded by the data
 * rather than by attrs or input values, and long kernels stopping when the
 * run's deadline has passed. */
#include <stdint.h>
#include <uv.h>

#include "ctest.h"

#define BIG ((int64_t)1 << 40)

/* ---- attrs checked when a session plans the node ---- */

/* An attr to set: a list(int) (n >= 0 values), an int or bool (n == -1), a
 * string (s), a float (n == -2, value f) or a type (n == -3, v[0]). */
typedef struct hattr {
  const char *name;
  int n;
  int64_t v[10];
  const char *s;
  float f;
} hattr;

typedef struct icase {
  const char *op;
  hattr a[4];
  const char *want; /* in init's message */
} icase;

#define L4(a, b, c, d) 4, {a, b, c, d}
#define L5(a, b, c, d, e) 5, {a, b, c, d, e}
#define STR(v) 0, {0}, v
#define ST1 {"strides", L4(1, 1, 1, 1)}

static const icase init_cases[] = {
    {"Conv2D", {{"strides", L4(1, 0, 1, 1)}}, "strides = [1,0,1,1]: every value must be >= 1"},
    {"Conv2D", {{"strides", L4(1, -3, 1, 1)}}, "strides = [1,-3,1,1]: every value must be >= 1"},
    {"Conv2D", {{"strides", 3, {1, 1, 1}}}, "strides must have 4 values, got 3"},
    {"Conv2D", {{"strides", L4(2, 1, 1, 1)}}, "strides = [2,1,1,1]: strides in the batch and depth"},
    {"Conv2D", {ST1, {"dilations", L4(1, 1, 1, 2)}}, "dilations = [1,1,1,2]: dilations in the batch and depth"},
    {"Conv2D", {{"strides", L4(1, 2, 1, 1)}, {"data_format", STR("NCHW")}}, "strides = [1,2,1,1]: strides in the"},
    {"Conv2D", {ST1, {"dilations", L4(1, 0, 1, 1)}}, "dilations = [1,0,1,1]: every value must be >= 1"},
    {"Conv2D",
     {ST1, {"padding", STR("EXPLICIT")}, {"explicit_paddings", L4(0, 0, 1, 1)}},
     "explicit_paddings must contain 8 values, got 4"},
    {"Conv2D",
     {ST1, {"padding", STR("EXPLICIT")}, {"explicit_paddings", 8, {0, 0, 1, -1, 0, 0, 0, 0}}},
     "explicit_paddings = [0,0,1,-1,0,0,0,0]: all values must be >= 0"},
    {"Conv2D",
     {ST1, {"padding", STR("EXPLICIT")}, {"explicit_paddings", 8, {1, 0, 0, 0, 0, 0, 0, 0}}},
     "padding the batch or depth dimension is not supported"},
    {"Conv2D",
     {ST1, {"padding", STR("VALID")}, {"explicit_paddings", 8, {0}}},
     "explicit_paddings must be empty if padding is not EXPLICIT"},
    {"Conv2DBackpropInput", {{"strides", L4(1, 1, 0, 1)}}, "strides = [1,1,0,1]"},
    {"DepthwiseConv2dNative", {ST1, {"dilations", L4(1, 1, 1, 3)}}, "dilations = [1,1,1,3]"},
    {"Conv3D", {{"strides", L5(1, 1, 1, 0, 1)}}, "strides = [1,1,1,0,1]: every value must be >= 1"},
    {"Conv3DBackpropInputV2", {{"strides", L5(1, 1, 1, 1, 2)}}, "strides = [1,1,1,1,2]: strides in the batch"},
    {"MaxPool", {{"ksize", L4(1, 0, 2, 1)}, ST1}, "ksize = [1,0,2,1]: every value must be >= 1"},
    {"MaxPool", {{"ksize", L4(1, 2, 2, 1)}, {"strides", L5(1, 1, 1, 1, 1)}}, "strides must have 4 values, got 5"},
    {"MaxPool", {{"ksize", L4(2, 1, 1, 1)}, ST1}, "pooling is not supported on the batch dimension"},
    {"MaxPool", {{"ksize", L4(1, 1, 1, 2)}, ST1}, "pooling over the depth dimension is not supported"},
    {"MaxPool", {{"ksize", L4(1, 2, 2, 1)}, ST1, {"data_format", STR("NCHW_VECT_C")}},
     "data_format = 'NCHW_VECT_C' is not supported"},
    {"MaxPool",
     {{"ksize", L4(1, 2, 2, 1)}, ST1, {"padding", STR("EXPLICIT")}, {"explicit_paddings", 8, {0, 0, 2, 0, 0, 0, 0, 0}}},
     "explicit_paddings[2] = 2 must be smaller than ksize[1] = 2"},
    {"MaxPoolV2", {{"data_format", STR("NCHW_VECT_C")}}, "data_format = 'NCHW_VECT_C' is not supported"},
    {"AvgPool", {{"ksize", L4(1, 2, 2, 1)}, {"strides", L4(1, 1, INT64_MIN, 1)}}, "every value must be >= 1"},
    {"AvgPool3D", {{"ksize", L5(1, 2, 2, 2, 1)}, {"strides", L5(1, 1, -1, 1, 1)}}, "strides = [1,1,-1,1,1]"},
    {"MaxPool3D", {{"ksize", L5(1, 1, 1, 1, 3)}, {"strides", L5(1, 1, 1, 1, 1)}}, "over the depth dimension"},
    {"MaxPoolWithArgmax", {{"ksize", L4(1, 2, 2, 1)}, {"strides", L4(1, 1, 0, 1)}}, "strides = [1,1,0,1]"},
    {"Dilation2D", {ST1, {"rates", L4(1, 0, 1, 1)}}, "rates = [1,0,1,1]: every value must be >= 1"},
    {"Dilation2D", {ST1, {"rates", L4(2, 1, 1, 1)}}, "rates = [2,1,1,1]: rates in the batch and depth"},
    {"Dilation2D", {{"strides", L4(1, 1, 1, 2)}, {"rates", L4(1, 1, 1, 1)}}, "strides = [1,1,1,2]"},
    {"ExtractImagePatches",
     {{"ksizes", L4(1, 0, 1, 1)}, ST1, {"rates", L4(1, 1, 1, 1)}},
     "ksizes = [1,0,1,1]: every value must be >= 1"},
    {"ExtractImagePatches",
     {{"ksizes", L4(1, 2, 2, 1)}, ST1, {"rates", L4(1, 1, 1, 2)}},
     "rates = [1,1,1,2]: only rates across space"},
    {"ExtractImagePatches", {{"ksizes", L4(1, 2, 2, 1)}, ST1, {"rates", 3, {1, 1, 1}}}, "rates must have 4 values"},
    {"SpaceToDepth", {{"block_size", -1, {(int64_t)1 << 32}}}, "block_size = 4294967296 is too large"},
    {"DepthToSpace", {{"block_size", -1, {INT64_MAX}}}, "block_size = 9223372036854775807 is too large"},
    {"SpaceToDepth", {{"block_size", -1, {2}}, {"data_format", STR("NCHW_VECT_C")}}, "'NCHW_VECT_C' is not supported"},
    {"SpaceToBatch", {{"block_size", -1, {(int64_t)1 << 33}}}, "block_size = 8589934592 is too large"},
    {"BatchToSpace", {{"block_size", -1, {(int64_t)1 << 32}}}, "is too large"},
    {"ResizeBilinear", {{"align_corners", -1, {1}}, {"half_pixel_centers", -1, {1}}}, "align_corners = true"},
    {"ResizeBicubic", {{"align_corners", -1, {1}}, {"half_pixel_centers", -1, {1}}}, "align_corners must be false"},
    {"ResizeNearestNeighbor", {{"align_corners", -1, {1}}, {"half_pixel_centers", -1, {1}}}, "half_pixel_centers"},
    {"NonMaxSuppression", {{"iou_threshold", -2, .f = 1.5f}}, "iou_threshold = 1.5: it must be in [0, 1]"},
};

static dfx_node *node_with(const char *op, const hattr *a, int na) {
  dfx_node *n = kh_node_new(op);
  if (dfx__op_def_attr(n->def, "T")) kh_attr_type(n, "T", DFX_F32);
  for (int i = 0; i < na && a[i].name; i++) {
    const dfx_op_attr *d = dfx__op_def_attr(n->def, a[i].name);
    cr_assert_not_null(d, "%s has no attr %s", op, a[i].name);
    if (a[i].s)
      kh_attr_str(n, a[i].name, a[i].s);
    else if (a[i].n == -2)
      kh_attr_float(n, a[i].name, a[i].f);
    else if (a[i].n == -3)
      kh_attr_type(n, a[i].name, (dfx_dtype)a[i].v[0]);
    else if (a[i].n == -1 && d->kind == DFX_ATTR_B)
      kh_attr_bool(n, a[i].name, (int)a[i].v[0]);
    else if (a[i].n == -1)
      kh_attr_int(n, a[i].name, a[i].v[0]);
    else
      kh_attr_ints(n, a[i].name, a[i].v, a[i].n);
  }
  return n;
}

Test(conv_hostile, window_attrs_refused_at_init) {
  for (size_t i = 0; i < sizeof init_cases / sizeof init_cases[0]; i++) {
    dfx_node *n = node_with(init_cases[i].op, init_cases[i].a, 4);
    if (!dfx__node_attr(n, "padding") && dfx__op_def_attr(n->def, "padding")) kh_attr_str(n, "padding", "SAME");
    ct_init_fails(n, init_cases[i].want);
    kh_node_free(n);
  }
}

/* ---- shape arithmetic that would overflow int64 ---- */

static dfx_tensor *f32z(int nd, const int64_t *dims) {
  dfx_tensor *t = kh_f32(nd, dims, NULL);
  memset(t->data, 0, t->nbytes);
  return t;
}

/* Runs op (T float) with attrs a on the inputs (taken) and expects an error containing want. */
static void expect_error(const char *op, const hattr *a, int na, dfx_tensor **in, int n_in, const char *want) {
  dfx_node *n = node_with(op, a, na);
  ct_fail(n, in, n_in, want);
  kh_node_free(n);
  ct_free(in, n_in);
}

Test(conv_hostile, shape_arithmetic_overflow_fails_cleanly) {
  int64_t x4[4] = {1, 4, 4, 1};
  /* Conv2D: (3 - 1) * 2^62 overflows the effective filter size. */
  expect_error("Conv2D", (hattr[]){{"strides", L4(1, 1, 1, 1)}, {"dilations", L4(1, (int64_t)1 << 62, 1, 1)},
                                   {"padding", STR("SAME")}},
               3, (dfx_tensor *[]){f32z(4, x4), f32z(4, (int64_t[]){3, 1, 1, 1})}, 2, "window arithmetic overflows");
  /* MaxPool: SAME padding of an INT64_MAX window overflows. */
  expect_error("MaxPool", (hattr[]){{"ksize", L4(1, INT64_MAX, 1, 1)}, {"strides", L4(1, 1, 1, 1)},
                                    {"padding", STR("SAME")}},
               3, (dfx_tensor *[]){f32z(4, x4)}, 1, "window arithmetic overflows");
  /* Dilation2D: rate 2^62 over a 3-tap filter. */
  expect_error("Dilation2D", (hattr[]){{"strides", L4(1, 1, 1, 1)}, {"rates", L4(1, (int64_t)1 << 62, 1, 1)},
                                       {"padding", STR("SAME")}},
               3, (dfx_tensor *[]){f32z(4, x4), f32z(3, (int64_t[]){3, 1, 1})}, 2, "window arithmetic overflows");
  /* ExtractImagePatches: ksizes 2^32 x 2^32 makes the patch depth overflow. */
  expect_error("ExtractImagePatches", (hattr[]){{"ksizes", L4(1, (int64_t)1 << 32, (int64_t)1 << 32, 1)},
                                                {"strides", L4(1, 1, 1, 1)}, {"rates", L4(1, 1, 1, 1)},
                                                {"padding", STR("SAME")}},
               4, (dfx_tensor *[]){f32z(4, x4)}, 1, "output depth");
  /* SpaceToBatchND: the product of the block sizes, then batch * block. */
  hattr i64[2] = {{"Tblock_shape", -3, {DFX_I64}}, {"Tpaddings", -3, {DFX_I64}}};
  expect_error("SpaceToBatchND", i64, 1,
               (dfx_tensor *[]){f32z(4, x4), kh_i64(1, (int64_t[]){2}, (int64_t[]){(int64_t)1 << 32, (int64_t)1 << 32}),
                                kh_i32(2, (int64_t[]){2, 2}, (int32_t[]){0, 0, 0, 0})},
               3, "the product of block_shape overflows");
  expect_error("SpaceToBatchND", i64, 1,
               (dfx_tensor *[]){f32z(4, (int64_t[]){4, 4, 1, 1}),
                                kh_i64(1, (int64_t[]){1}, (int64_t[]){(int64_t)1 << 62}),
                                kh_i32(2, (int64_t[]){1, 2}, (int32_t[]){0, 0})},
               3, "output batch");
  expect_error("SpaceToBatchND", i64, 2,
               (dfx_tensor *[]){f32z(4, x4), kh_i64(1, (int64_t[]){1}, (int64_t[]){2}),
                                kh_i64(2, (int64_t[]){1, 2}, (int64_t[]){INT64_MAX, 1})},
               3, "padded size of dimension 1 overflows");
  /* BatchToSpaceND: an empty batch passes the divisibility check; 4 * 2^61 does not fit. */
  expect_error("BatchToSpaceND", i64, 1,
               (dfx_tensor *[]){f32z(4, (int64_t[]){0, 4, 4, 1}),
                                kh_i64(1, (int64_t[]){1}, (int64_t[]){(int64_t)1 << 61}),
                                kh_i32(2, (int64_t[]){1, 2}, (int32_t[]){0, 0})},
               3, "times block_shape[0]");
  /* DepthToSpace / SpaceToDepth with block 2^31 on empty tensors. */
  expect_error("DepthToSpace", (hattr[]){{"block_size", -1, {(int64_t)1 << 31}}}, 1,
               (dfx_tensor *[]){f32z(4, (int64_t[]){1, (int64_t)1 << 33, 1, 0})}, 1, "times block_size");
  expect_error("SpaceToDepth", (hattr[]){{"block_size", -1, {(int64_t)1 << 31}}}, 1,
               (dfx_tensor *[]){f32z(4, (int64_t[]){1, 0, 0, 4})}, 1, "output depth");
  /* DepthwiseConv2dNativeBackpropInput: channels 2^31 - 1 x multiplier 2^40 (empty filter). */
  expect_error("DepthwiseConv2dNativeBackpropInput",
               (hattr[]){{"strides", L4(1, 1, 1, 1)}, {"padding", STR("VALID")}}, 2,
               (dfx_tensor *[]){kh_i32(1, (int64_t[]){4}, (int32_t[]){1, 1, 1, INT32_MAX}),
                                f32z(4, (int64_t[]){0, 1, INT32_MAX, BIG}), f32z(4, (int64_t[]){1, 1, 1, 0})},
               3, "output depth 2147483647 * 1099511627776 overflows");
}

/* ---- work bounded by the data ---- */

/* ksize and strides of 2^40 (MaxPoolV2's int32 inputs: 2^31 - 1) with SAME
 * padding on a 4x4 input: every window clamps to the whole input, so each
 * output is the max (mean) of all 16 values. Before clamping, this walked
 * 2^80 window positions. */
Test(conv_hostile, huge_pool_window_is_clamped_to_the_input, .timeout = 20) {
  uint64_t t0 = uv_hrtime();
  float v[16];
  double mx = -INFINITY, sum = 0;
  for (int i = 0; i < 16; i++) v[i] = (float)((i * 7) % 11) - 3, mx = fmax(mx, v[i]), sum += v[i];
  dfx_tensor *x = kh_f32(4, (int64_t[]){1, 4, 4, 1}, v);
  dfx_tensor *x3 = kh_f32(5, (int64_t[]){1, 1, 4, 4, 1}, v);
  const char *ops[] = {"MaxPool", "AvgPool", "MaxPool3D", "AvgPool3D", "MaxPoolV2"};
  for (int op = 0; op < 5; op++)
    for (int big_stride = 0; big_stride < 2; big_stride++) {
      int r = op == 2 || op == 3 ? 5 : 4;
      int64_t ks[5] = {1, BIG, BIG, 1, 1}, st[5] = {1, 1, 1, 1, 1}, yd[5] = {1, 1, 1, 1, 1};
      if (r == 5) ks[1] = 1, ks[3] = BIG;
      for (int i = 1; i < r - 1; i++) {
        if (big_stride) st[i] = BIG;
        yd[i] = r == 5 && i == 1 ? 1 : big_stride ? 1 : 4;
      }
      dfx_node *n = kh_node_new(ops[op]);
      kh_attr_type(n, "T", DFX_F32);
      kh_attr_str(n, "padding", "SAME");
      dfx_tensor *o[1], *in[3] = {r == 5 ? x3 : x, NULL, NULL};
      if (op == 4) {
        int32_t k32[4], s32[4];
        for (int i = 0; i < 4; i++) k32[i] = ks[i] == BIG ? INT32_MAX : 1, s32[i] = st[i] == BIG ? INT32_MAX : 1;
        in[1] = kh_i32(1, (int64_t[]){4}, k32), in[2] = kh_i32(1, (int64_t[]){4}, s32);
      } else {
        kh_attr_ints(n, "ksize", ks, r);
        kh_attr_ints(n, "strides", st, r);
      }
      ct_run(n, in, op == 4 ? 3 : 1, o, 1);
      double want[16];
      for (int i = 0; i < 16; i++) want[i] = op == 1 || op == 3 ? sum / 16 : mx;
      ct_expect(o[0], DFX_F32, r, yd, want, 1e-6, ops[op]);
      ct_free(o, 1);
      ct_free(in + 1, op == 4 ? 2 : 0);
      kh_node_free(n);
    }
  ct_free((dfx_tensor *[]){x, x3}, 2);
  cr_assert_lt(uv_hrtime() - t0, 5000000000ull, "clamped windows must be quick");
}

/* No channels but 2^60 positions: the output is empty, and no loop walks the
 * positions (each case would run for years otherwise). Output sizes that are
 * input values (resize, crop) are not allocated for either. */
Test(conv_hostile, empty_outputs_skip_their_loops, .timeout = 20) {
  int64_t huge[4] = {1, (int64_t)1 << 30, (int64_t)1 << 30, 0};
  struct {
    const char *op;
    hattr a[4];
    int n_in;
  } cases[] = {
      {"MaxPool", {{"ksize", L4(1, 1, 1, 1)}, {"strides", L4(1, 1, 1, 1)}, {"padding", STR("VALID")}}, 1},
      {"AvgPool", {{"ksize", L4(1, 2, 2, 1)}, {"strides", L4(1, 1, 1, 1)}, {"padding", STR("SAME")}}, 1},
      {"SpaceToDepth", {{"block_size", -1, {2}}}, 1},
      {"DepthToSpace", {{"block_size", -1, {2}}}, 1},
      {"ExtractImagePatches",
       {{"ksizes", L4(1, 1, 1, 1)}, {"strides", L4(1, 1, 1, 1)}, {"rates", L4(1, 1, 1, 1)}, {"padding", STR("VALID")}},
       1},
      {"SpaceToBatchND", {{NULL}}, 3},
      {"BatchToSpaceND", {{NULL}}, 3},
      {"ResizeBilinear", {{NULL}}, 2},
      {"ResizeNearestNeighbor", {{NULL}}, 2},
      {"ResizeBicubic", {{NULL}}, 2},
      {"ResizeArea", {{NULL}}, 2},
      {"CropAndResize", {{NULL}}, 4},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    dfx_node *n = node_with(cases[i].op, cases[i].a, 4);
    int resize = !strncmp(cases[i].op, "Resize", 6), crop = !strcmp(cases[i].op, "CropAndResize");
    dfx_tensor *in[4] = {f32z(4, resize || crop ? (int64_t[]){1, 2, 2, 0} : huge)};
    if (cases[i].n_in == 3) {
      in[1] = kh_i32(1, (int64_t[]){2}, (int32_t[]){1, 1});
      in[2] = kh_i32(2, (int64_t[]){2, 2}, (int32_t[]){0, 0, 0, 0});
    }
    if (resize) in[1] = kh_i32(1, (int64_t[]){2}, (int32_t[]){1 << 30, 1 << 30});
    if (crop) {
      in[1] = kh_f32(2, (int64_t[]){1, 4}, (float[]){0, 0, 1, 1});
      in[2] = kh_i32(1, (int64_t[]){1}, (int32_t[]){0});
      in[3] = kh_i32(1, (int64_t[]){2}, (int32_t[]){1 << 30, 1 << 30});
    }
    dfx_tensor *o[1];
    ct_run(n, in, cases[i].n_in, o, 1);
    cr_assert_eq(o[0]->count, 0, "%s", cases[i].op);
    ct_free(o, 1);
    ct_free(in, cases[i].n_in);
    kh_node_free(n);
  }
}

/* Scratch sized from input values is held to the tensor limit: a 100000-row
 * resize of a one-column image fits the limit as output (400 kB) but its
 * per-row weights (2.4 MB) do not. Outputs sized by values (NMS padding)
 * meet the same limit in dfx__kctx_alloc. */
Test(conv_hostile, value_sized_scratch_meets_the_tensor_limit) {
  size_t old = dfx_set_max_tensor_bytes((size_t)1 << 20);
  dfx_node *n = kh_node_new("ResizeBilinear");
  kh_attr_type(n, "T", DFX_F32);
  dfx_tensor *in[2] = {f32z(4, (int64_t[]){1, 2, 1, 1}), kh_i32(1, (int64_t[]){2}, (int32_t[]){100000, 1})};
  ct_fail(n, in, 2, "output height = 100000 needs more scratch memory than the tensor limit");
  kh_node_free(n);
  ct_free(in, 2);
  n = kh_node_new("NonMaxSuppressionV4");
  kh_attr_type(n, "T", DFX_F32);
  kh_attr_type(n, "T_threshold", DFX_F32);
  kh_attr_bool(n, "pad_to_max_output_size", 1);
  dfx_tensor *nin[5] = {f32z(2, (int64_t[]){1, 4}), f32z(1, (int64_t[]){1}), kh_scalar_i32(INT32_MAX),
                        kh_scalar_f32(0.5f), kh_scalar_f32(0)};
  ct_fail(n, nin, 5, "[2147483647]");
  kh_node_free(n);
  ct_free(nin, 5);
  dfx_set_max_tensor_bytes(old);
}

/* NaN and huge box coordinates: no float-to-int conversion out of range (UB);
 * a NaN box draws nothing, nor does one whose edges all lie outside the
 * image. A NaN pixel in AdjustSaturation takes TF's fallback branch (all
 * channels v - s * v) instead of an int cast of a NaN hue. */
Test(conv_hostile, nan_and_huge_coordinates) {
  dfx_tensor *x = f32z(4, (int64_t[]){1, 3, 3, 1});
  dfx_tensor *b = kh_f32(3, (int64_t[]){1, 2, 4}, (float[]){NAN, 0, 1, 1, -1e30f, -1e30f, 1e30f, 1e30f});
  dfx_node *n = kh_node_new("DrawBoundingBoxes");
  kh_attr_type(n, "T", DFX_F32);
  dfx_tensor *o[1];
  ct_run(n, (dfx_tensor *[]){x, b}, 2, o, 1);
  ct_expect(o[0], DFX_F32, 4, (int64_t[]){1, 3, 3, 1}, (double[9]){0}, 0, "boxes outside the image draw nothing");
  ct_free(o, 1);
  kh_node_free(n);
  n = kh_node_new("AdjustSaturation");
  kh_attr_type(n, "T", DFX_F32);
  dfx_tensor *px = kh_f32(3, (int64_t[]){1, 1, 3}, (float[]){NAN, 0.5f, 0.25f}), *sc = kh_scalar_f32(0.5f);
  ct_run(n, (dfx_tensor *[]){px, sc}, 2, o, 1);
  const float *p = o[0]->data;
  cr_assert(isfinite(p[0]) && p[0] == p[1] && p[1] == p[2], "fallback: %g %g %g", p[0], p[1], p[2]);
  ct_free(o, 1);
  kh_node_free(n);
  ct_free((dfx_tensor *[]){x, b, px, sc}, 4);
}

/* ---- long kernels stop when the run's deadline has passed ---- */

typedef struct lcase {
  const char *op;
  hattr a[4];
  int n_in;
  dfx_tensor *(*inputs)(int i); /* input i */
} lcase;

static dfx_tensor *img512(int i) { return i == 0 ? f32z(4, (int64_t[]){1, 512, 512, 1}) : NULL; }
static dfx_tensor *img256(int i) { return i == 0 ? f32z(4, (int64_t[]){1, 256, 256, 1}) : NULL; }
static dfx_tensor *img_2m(int i) {
  if (i == 0) return f32z(4, (int64_t[]){1, 2048, 1024, 1});
  return i == 1 ? kh_i32(1, (int64_t[]){2}, (int32_t[]){2, 2}) : kh_i32(2, (int64_t[]){2, 2}, (int32_t[]){0, 0, 0, 0});
}
static dfx_tensor *conv_in(int i) {
  return i == 0 ? f32z(4, (int64_t[]){1, 256, 256, 16}) : f32z(4, (int64_t[]){3, 3, 16, 16});
}
static dfx_tensor *depthwise_in(int i) { return i == 0 ? conv_in(0) : f32z(4, (int64_t[]){3, 3, 16, 1}); }
static dfx_tensor *dil_in(int i) { return i == 0 ? img512(0) : f32z(3, (int64_t[]){32, 32, 1}); }
static dfx_tensor *resize_in(int i) {
  return i == 0 ? f32z(4, (int64_t[]){1, 4, 4, 1}) : kh_i32(1, (int64_t[]){2}, (int32_t[]){2048, 1024});
}
static dfx_tensor *crop_in(int i) {
  switch (i) {
  case 0: return f32z(4, (int64_t[]){1, 4, 4, 1});
  case 1: return kh_f32(2, (int64_t[]){1, 4}, (float[]){0, 0, 1, 1});
  case 2: return kh_i32(1, (int64_t[]){1}, (int32_t[]){0});
  default: return kh_i32(1, (int64_t[]){2}, (int32_t[]){2048, 1024});
  }
}
/* 2000 disjoint boxes: NMS compares each with every selected one. */
static dfx_tensor *nms_in(int i) {
  enum { NB = 2000 };
  if (i == 0) {
    dfx_tensor *t = f32z(2, (int64_t[]){NB, 4});
    for (int k = 0; k < NB; k++) ((float *)t->data)[4 * k] = (float)k, ((float *)t->data)[4 * k + 2] = (float)k + 0.5f,
                                  ((float *)t->data)[4 * k + 3] = 1;
    return t;
  }
  if (i == 1) {
    dfx_tensor *t = f32z(1, (int64_t[]){NB});
    for (int k = 0; k < NB; k++) ((float *)t->data)[k] = 1.0f - (float)k / NB;
    return t;
  }
  return i == 2 ? kh_scalar_i32(NB) : kh_scalar_f32(i == 3 ? 0.5f : -1);
}
static dfx_tensor *boxes_in(int i) {
  if (i == 0) return f32z(4, (int64_t[]){1, 512, 512, 1});
  dfx_tensor *t = kh_f32(3, (int64_t[]){1, 2000, 4}, NULL);
  for (int k = 0; k < 8000; k++) ((float *)t->data)[k] = k % 4 < 2 ? 0.0f : 1.0f;
  return t;
}

static const lcase long_cases[] = {
    {"MaxPool", {{"ksize", L4(1, 64, 64, 1)}, {"strides", L4(1, 1, 1, 1)}, {"padding", STR("SAME")}}, 1, img512},
    {"AvgPool", {{"ksize", L4(1, 64, 64, 1)}, {"strides", L4(1, 1, 1, 1)}, {"padding", STR("SAME")}}, 1, img512},
    {"Dilation2D", {{"strides", L4(1, 1, 1, 1)}, {"rates", L4(1, 1, 1, 1)}, {"padding", STR("SAME")}}, 2, dil_in},
    {"Conv2D", {{"strides", L4(1, 1, 1, 1)}, {"padding", STR("SAME")}}, 2, conv_in},
    {"DepthwiseConv2dNative", {{"strides", L4(1, 1, 1, 1)}, {"padding", STR("SAME")}}, 2, depthwise_in},
    {"ExtractImagePatches",
     {{"ksizes", L4(1, 8, 8, 1)}, {"strides", L4(1, 1, 1, 1)}, {"rates", L4(1, 1, 1, 1)}, {"padding", STR("SAME")}},
     1, img256},
    {"SpaceToDepth", {{"block_size", -1, {2}}}, 1, img_2m},
    {"SpaceToBatchND", {{NULL}}, 3, img_2m},
    {"ResizeBilinear", {{NULL}}, 2, resize_in},
    {"ResizeNearestNeighbor", {{NULL}}, 2, resize_in},
    {"ResizeBicubic", {{NULL}}, 2, resize_in},
    {"ResizeArea", {{NULL}}, 2, resize_in},
    {"CropAndResize", {{NULL}}, 4, crop_in},
    {"NonMaxSuppressionV3", {{NULL}}, 5, nms_in},
    {"DrawBoundingBoxes", {{NULL}}, 2, boxes_in},
};

Test(conv_hostile, long_kernels_stop_at_the_deadline, .timeout = 60) {
  for (size_t i = 0; i < sizeof long_cases / sizeof long_cases[0]; i++) {
    const lcase *c = &long_cases[i];
    dfx_node *n = node_with(c->op, c->a, 4);
    if (dfx__op_def_attr(n->def, "T_threshold")) kh_attr_type(n, "T_threshold", DFX_F32);
    dfx_tensor *in[5];
    for (int k = 0; k < c->n_in; k++) in[k] = c->inputs(k);
    char err[256];
    dfx_code code = ct_run_late(n, in, c->n_in, err, sizeof err);
    cr_assert_eq(code, DFX_EDEADLINE, "%s: %s (%s)", c->op, dfx_code_name(code), err);
    cr_assert(strstr(err, "timed out"), "%s: %s", c->op, err);
    ct_free(in, c->n_in);
    kh_node_free(n);
  }
}
