/* test_resize.c - image resizing and CropAndResize: hand-computed TensorFlow
 * values for each coordinate mode and a naive bicubic reference, over every
 * dtype the kernels declare; errors. */
#include "ctest.h"

static dfx_tensor *img(dfx_dtype dt, int64_t h, int64_t w, int64_t c) {
  int64_t n = h * w * c;
  double *v = calloc((size_t)n + 1, 8);
  for (int64_t i = 0; i < n; i++) v[i] = (double)(i + 1);
  dfx_tensor *t = ct_tensor(dt, 4, (int64_t[]){1, h, w, c}, v);
  free(v);
  return t;
}

static dfx_tensor *resize(const char *op, dfx_tensor *x, int32_t oh, int32_t ow, int align, int half) {
  dfx_node *n = kh_node_new(op);
  kh_attr_type(n, "T", (dfx_dtype)x->dtype);
  kh_attr_bool(n, "align_corners", align);
  if (strcmp(op, "ResizeArea")) kh_attr_bool(n, "half_pixel_centers", half);
  dfx_tensor *sz = kh_i32(1, (int64_t[]){2}, (int32_t[]){oh, ow}), *o[1];
  ct_run(n, (dfx_tensor *[]){x, sz}, 2, o, 1);
  kh_node_free(n);
  dfx__tensor_unref(sz);
  return o[0];
}

#define CHECK(t, dt, h, w, ...)                                                                      \
  do {                                                                                               \
    dfx_tensor *t_ = (t);                                                                            \
    ct_expect(t_, dt, 4, (int64_t[]){1, h, w, 1}, (double[]){__VA_ARGS__}, 1e-6, #t);                \
    dfx__tensor_unref(t_);                                                                           \
  } while (0)

Test(resize, bilinear_modes) {
  dfx_dtype dts[DFX_DTYPE_END_];
  int nd = ct_declared("ResizeBilinear", "T", dts);
  for (int d = 0; d < nd; d++) {
    dfx_tensor *x = img(dts[d], 2, 2, 1);
    CHECK(resize("ResizeBilinear", x, 4, 4, 0, 0), DFX_F32, 4, 4, 1, 1.5, 2, 2, 2, 2.5, 3, 3, 3, 3.5, 4, 4, 3, 3.5,
          4, 4);
    CHECK(resize("ResizeBilinear", x, 4, 4, 0, 1), DFX_F32, 4, 4, 1, 1.25, 1.75, 2, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75,
          3.25, 3.5, 3, 3.25, 3.75, 4);
    CHECK(resize("ResizeBilinear", x, 3, 3, 1, 0), DFX_F32, 3, 3, 1, 1.5, 2, 2, 2.5, 3, 3, 3.5, 4);
    dfx__tensor_unref(x);
  }
}

Test(resize, nearest_modes) {
  dfx_dtype dts[DFX_DTYPE_END_];
  int nd = ct_declared("ResizeNearestNeighbor", "T", dts);
  for (int d = 0; d < nd; d++) {
    dfx_tensor *x = img(dts[d], 3, 3, 1);
    CHECK(resize("ResizeNearestNeighbor", x, 2, 2, 0, 0), dts[d], 2, 2, 1, 2, 4, 5);
    CHECK(resize("ResizeNearestNeighbor", x, 2, 2, 0, 1), dts[d], 2, 2, 1, 3, 7, 9);
    CHECK(resize("ResizeNearestNeighbor", x, 2, 2, 1, 0), dts[d], 2, 2, 1, 3, 7, 9);
    CHECK(resize("ResizeNearestNeighbor", x, 4, 4, 0, 1), dts[d], 4, 4, 1, 2, 2, 3, 4, 5, 5, 6, 4, 5, 5, 6, 7, 8, 8,
          9);
    dfx__tensor_unref(x);
  }
}

Test(resize, area) {
  dfx_dtype dts[DFX_DTYPE_END_];
  int nd = ct_declared("ResizeArea", "T", dts);
  for (int d = 0; d < nd; d++) {
    dfx_tensor *x = img(dts[d], 4, 4, 1);
    CHECK(resize("ResizeArea", x, 2, 2, 0, 0), DFX_F32, 2, 2, 3.5, 5.5, 11.5, 13.5);
    dfx_tensor *r = img(dts[d], 1, 3, 1);
    CHECK(resize("ResizeArea", r, 1, 2, 0, 0), DFX_F32, 1, 2, 2.0 / 1.5, 4.0 / 1.5);
    CHECK(resize("ResizeArea", r, 1, 6, 0, 0), DFX_F32, 1, 6, 1, 1, 2, 2, 3, 3);
    ct_free((dfx_tensor *[]){x, r}, 2);
  }
}

static double keys(double a, double x) {
  x = fabs(x);
  if (x <= 1) return ((a + 2) * x - (a + 3)) * x * x + 1;
  if (x < 2) return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
  return 0;
}

/* Naive bicubic: separable Keys kernel at the table-quantised offset. */
static void ref_bicubic(const double *x, int64_t H, int64_t W, int64_t oh, int64_t ow, int align, int half,
                        double *y) {
  double a = half ? -0.5 : -0.75;
  double hs = align && oh > 1 ? (double)(H - 1) / (oh - 1) : (double)H / oh;
  double ws = align && ow > 1 ? (double)(W - 1) / (ow - 1) : (double)W / ow;
  for (int64_t i = 0; i < oh; i++)
    for (int64_t j = 0; j < ow; j++) {
      double fy = half ? (i + 0.5) * hs - 0.5 : i * hs, fx = half ? (j + 0.5) * ws - 0.5 : j * ws;
      int64_t ly = (int64_t)floor(fy), lx = (int64_t)floor(fx);
      double dy = rint((fy - ly) * 1024) / 1024, dx = rint((fx - lx) * 1024) / 1024;
      double s = 0, wsum = 0;
      for (int p = -1; p <= 2; p++)
        for (int q = -1; q <= 2; q++) {
          int64_t yy = ly + p, xx = lx + q;
          double w = keys(a, p - dy) * keys(a, q - dx);
          if (half && (yy < 0 || yy >= H || xx < 0 || xx >= W)) continue;
          yy = yy < 0 ? 0 : yy >= H ? H - 1 : yy;
          xx = xx < 0 ? 0 : xx >= W ? W - 1 : xx;
          s += w * x[yy * W + xx];
          wsum += w;
        }
      y[i * ow + j] = half ? s / wsum : s;
    }
}

Test(resize, bicubic_vs_reference) {
  unsigned seed = 5;
  int64_t H = 5, W = 4;
  dfx_dtype dts[DFX_DTYPE_END_];
  int nd = ct_declared("ResizeBicubic", "T", dts);
  for (int d = 0; d < nd; d++) {
    double xv[20];
    for (int i = 0; i < 20; i++) xv[i] = (ct_rand(&seed) + 1) * 50; /* >= 0: uint8 too */
    dfx_tensor *x = ct_tensor(dts[d], 4, (int64_t[]){1, H, W, 1}, xv);
    ct_read(x, xv);
    int64_t sizes[3][2] = {{8, 7}, {3, 2}, {5, 9}};
    for (int s = 0; s < 3; s++)
      for (int mode = 0; mode < 3; mode++) {
        int align = mode == 1, half = mode == 2;
        double want[100];
        ref_bicubic(xv, H, W, sizes[s][0], sizes[s][1], align, half, want);
        dfx_tensor *y = resize("ResizeBicubic", x, (int32_t)sizes[s][0], (int32_t)sizes[s][1], align, half);
        ct_expect(y, DFX_F32, 4, (int64_t[]){1, sizes[s][0], sizes[s][1], 1}, want, 1e-4, "bicubic");
        dfx__tensor_unref(y);
      }
    dfx__tensor_unref(x);
  }
}

Test(resize, errors) {
  dfx_tensor *x = img(DFX_F32, 2, 2, 1);
  dfx_node *n = kh_node_new("ResizeBilinear");
  kh_attr_type(n, "T", DFX_F32);
  kh_attr_bool(n, "align_corners", 1);
  kh_attr_bool(n, "half_pixel_centers", 1);
  dfx_tensor *sz = kh_i32(1, (int64_t[]){2}, (int32_t[]){3, 3});
  ct_fail(n, (dfx_tensor *[]){x, sz}, 2, "half_pixel_centers");
  kh_attr_bool(n, "align_corners", 0);
  dfx_tensor *bad = kh_i32(1, (int64_t[]){2}, (int32_t[]){0, 3});
  ct_fail(n, (dfx_tensor *[]){x, bad}, 2, "positive");
  dfx_tensor *bad3 = kh_i32(1, (int64_t[]){3}, (int32_t[]){1, 2, 3});
  ct_fail(n, (dfx_tensor *[]){x, bad3}, 2, "two elements");
  kh_node_free(n);
  ct_free((dfx_tensor *[]){x, sz, bad, bad3}, 4);
}

static dfx_tensor *crop(dfx_tensor *im, const float *boxes, int nb, const int32_t *bi, int32_t ch, int32_t cw,
                        const char *method, float ext) {
  dfx_node *n = kh_node_new("CropAndResize");
  kh_attr_type(n, "T", (dfx_dtype)im->dtype);
  kh_attr_str(n, "method", method);
  kh_attr_float(n, "extrapolation_value", ext);
  dfx_tensor *tb = kh_f32(2, (int64_t[]){nb, 4}, boxes), *ti = kh_i32(1, (int64_t[]){nb}, bi);
  dfx_tensor *cs = kh_i32(1, (int64_t[]){2}, (int32_t[]){ch, cw}), *o[1] = {0};
  char err[256];
  int n_out;
  dfx_code c = kh_run(n, (dfx_tensor *[]){im, tb, ti, cs}, 4, o, &n_out, err, sizeof err);
  kh_node_free(n);
  ct_free((dfx_tensor *[]){tb, ti, cs}, 3);
  return c == DFX_OK ? o[0] : NULL;
}

static void crop_cases(dfx_dtype dt) {
  dfx_tensor *x = img(dt, 3, 3, 1);
  float b1[4] = {0, 0, 1, 1}, b2[4] = {0, 0, 0.5f, 0.5f}, b3[4] = {0.25f, 0.25f, 0.75f, 0.75f}, b4[4] = {-1, -1, 0, 0};
  int32_t i0 = 0, i1 = 1;
  dfx_tensor *y = crop(x, b1, 1, &i0, 3, 3, "bilinear", 0);
  ct_expect(y, DFX_F32, 4, (int64_t[]){1, 3, 3, 1}, (double[]){1, 2, 3, 4, 5, 6, 7, 8, 9}, 1e-6, "identity");
  dfx__tensor_unref(y);
  y = crop(x, b2, 1, &i0, 3, 3, "bilinear", 0);
  ct_expect(y, DFX_F32, 4, (int64_t[]){1, 3, 3, 1}, (double[]){1, 1.5, 2, 2.5, 3, 3.5, 4, 4.5, 5}, 1e-6, "half box");
  dfx__tensor_unref(y);
  y = crop(x, b2, 1, &i0, 3, 3, "nearest", 0);
  ct_expect(y, DFX_F32, 4, (int64_t[]){1, 3, 3, 1}, (double[]){1, 2, 2, 4, 5, 5, 4, 5, 5}, 1e-6, "nearest");
  dfx__tensor_unref(y);
  y = crop(x, b3, 1, &i0, 1, 1, "bilinear", 0);
  ct_expect(y, DFX_F32, 4, (int64_t[]){1, 1, 1, 1}, (double[]){5}, 1e-6, "center");
  dfx__tensor_unref(y);
  y = crop(x, b4, 1, &i0, 2, 2, "bilinear", 7);
  ct_expect(y, DFX_F32, 4, (int64_t[]){1, 2, 2, 1}, (double[]){7, 7, 7, 1}, 1e-6, "extrapolate");
  dfx__tensor_unref(y);
  cr_assert_null(crop(x, b1, 1, &i1, 2, 2, "bilinear", 0));
  cr_assert_null(crop(x, b1, 1, &i0, 0, 2, "bilinear", 0));
  dfx__tensor_unref(x);
}

Test(resize, crop_and_resize) {
  dfx_dtype dts[DFX_DTYPE_END_];
  int nd = ct_declared("CropAndResize", "T", dts);
  for (int d = 0; d < nd; d++) crop_cases(dts[d]);
}
