/* test_color.c - colour ops against textbook HSV conversions and naive
 * contrast, plus DrawBoundingBoxes by hand, over every declared dtype. */
#include "ctest.h"

static void hsv_ref(double r, double g, double b, double *h, double *s, double *v) {
  double mx = fmax(r, fmax(g, b)), mn = fmin(r, fmin(g, b)), d = mx - mn;
  *v = mx;
  *s = mx > 0 ? d / mx : 0;
  if (d <= 0) *h = 0;
  else if (mx == r) *h = fmod((g - b) / d + 6, 6) / 6;
  else if (mx == g) *h = ((b - r) / d + 2) / 6;
  else *h = ((r - g) / d + 4) / 6;
}

static void rgb_ref(double h, double s, double v, double *o) {
  double hh = fmod(h, 1) * 6, c = v * s, x = c * (1 - fabs(fmod(hh, 2) - 1)), m = v - c, r = 0, g = 0, b = 0;
  int k = (int)hh;
  switch (k) {
  case 0: r = c, g = x; break;
  case 1: r = x, g = c; break;
  case 2: g = c, b = x; break;
  case 3: g = x, b = c; break;
  case 4: r = x, b = c; break;
  default: r = c, b = x;
  }
  o[0] = r + m, o[1] = g + m, o[2] = b + m;
}

#define NPIX 40

static void pixels(double *v, unsigned seed) {
  for (int i = 0; i < NPIX * 3; i++) v[i] = (ct_rand(&seed) + 1) / 2;
  double fixed[] = {1, 0, 0, 0, 1, 0, 0, 0, 1, 0.5, 0.5, 0.5, 0, 0, 0, 0.2, 0.4, 0.6};
  memcpy(v, fixed, sizeof fixed);
}

static dfx_tensor *run_op(const char *op, dfx_tensor *x, dfx_tensor *arg) {
  dfx_node *n = kh_node_new(op);
  kh_attr_type(n, "T", (dfx_dtype)x->dtype);
  dfx_tensor *o[1];
  ct_run(n, (dfx_tensor *[]){x, arg}, arg ? 2 : 1, o, 1);
  kh_node_free(n);
  return o[0];
}

/* Ops tested together must declare the same dtypes; returns them. */
static int declared_same(const char *a, const char *b, dfx_dtype *dts) {
  dfx_dtype o[DFX_DTYPE_END_];
  int n = ct_declared(a, "T", dts), m = ct_declared(b, "T", o);
  cr_assert(n == m && !memcmp(dts, o, sizeof *o * (size_t)n), "%s and %s declare different dtypes", a, b);
  return n;
}

Test(color, rgb_hsv_round_trip) {
  dfx_dtype dts[DFX_DTYPE_END_];
  int nd = declared_same("RGBToHSV", "HSVToRGB", dts);
  for (int d = 0; d < nd; d++) {
    double v[NPIX * 3], want[NPIX * 3];
    pixels(v, 9);
    dfx_tensor *x = ct_tensor(dts[d], 2, (int64_t[]){NPIX, 3}, v);
    ct_read(x, v);
    for (int i = 0; i < NPIX; i++) hsv_ref(v[3 * i], v[3 * i + 1], v[3 * i + 2], &want[3 * i], &want[3 * i + 1], &want[3 * i + 2]);
    dfx_tensor *h = run_op("RGBToHSV", x, NULL);
    ct_expect(h, dts[d], 2, (int64_t[]){NPIX, 3}, want, ct_tol(dts[d]) * 2, "rgb->hsv");
    double hv[NPIX * 3], back[NPIX * 3];
    ct_read(h, hv);
    for (int i = 0; i < NPIX; i++) rgb_ref(hv[3 * i], hv[3 * i + 1], hv[3 * i + 2], &back[3 * i]);
    dfx_tensor *r = run_op("HSVToRGB", h, NULL);
    ct_expect(r, dts[d], 2, (int64_t[]){NPIX, 3}, back, ct_tol(dts[d]) * 2, "hsv->rgb");
    ct_free((dfx_tensor *[]){x, h, r}, 3);
  }
}

Test(color, adjust_hue_and_saturation) {
  double v[NPIX * 3];
  pixels(v, 21);
  float deltas[] = {0, 1.0f / 3, -0.7f, 2.25f}, scales[] = {0, 0.5f, 1.7f};
  dfx_dtype dts[DFX_DTYPE_END_];
  int nd = declared_same("AdjustHue", "AdjustSaturation", dts);
  for (int di = 0; di < nd; di++) {
    dfx_dtype dt = dts[di];
    int half = dt == DFX_F16;
    dfx_tensor *x = ct_tensor(dt, 3, (int64_t[]){4, NPIX / 4, 3}, v);
    double xv[NPIX * 3], want[NPIX * 3];
    ct_read(x, xv);
    for (int k = 0; k < 4; k++) {
      for (int i = 0; i < NPIX; i++) {
        double h, s, vv;
        hsv_ref(xv[3 * i], xv[3 * i + 1], xv[3 * i + 2], &h, &s, &vv);
        h = fmod(h + deltas[k] + 10, 1);
        rgb_ref(h, s, vv, &want[3 * i]);
      }
      dfx_tensor *d = kh_scalar_f32(deltas[k]), *y = run_op("AdjustHue", x, d);
      ct_expect(y, dt, 3, (int64_t[]){4, NPIX / 4, 3}, want, half ? 1e-2 : 1e-5, "hue");
      ct_free((dfx_tensor *[]){d, y}, 2);
    }
    for (int k = 0; k < 3; k++) {
      for (int i = 0; i < NPIX; i++) {
        double h, s, vv;
        hsv_ref(xv[3 * i], xv[3 * i + 1], xv[3 * i + 2], &h, &s, &vv);
        s = fmin(1, fmax(0, s * scales[k]));
        rgb_ref(h, s, vv, &want[3 * i]);
      }
      dfx_tensor *d = kh_scalar_f32(scales[k]), *y = run_op("AdjustSaturation", x, d);
      ct_expect(y, dt, 3, (int64_t[]){4, NPIX / 4, 3}, want, half ? 1e-2 : 1e-5, "saturation");
      ct_free((dfx_tensor *[]){d, y}, 2);
    }
    dfx_tensor *bad = kh_f32(2, (int64_t[]){2, 2}, (float[]){1, 2, 3, 4}), *d = kh_scalar_f32(0.1f);
    dfx_node *n = kh_node_new("AdjustHue");
    kh_attr_type(n, "T", DFX_F32);
    ct_fail(n, (dfx_tensor *[]){bad, d}, 2, "at least 3-D");
    kh_node_free(n);
    ct_free((dfx_tensor *[]){x, bad, d}, 3);
  }
}

Test(color, adjust_contrast) {
  dfx_dtype dts[DFX_DTYPE_END_];
  int nd = ct_declared("AdjustContrastv2", "T", dts);
  for (int d = 0; d < nd; d++) {
    unsigned seed = 4;
    double v[2 * 3 * 4 * 2], want[48];
    for (int i = 0; i < 48; i++) v[i] = ct_rand(&seed);
    dfx_tensor *x = ct_tensor(dts[d], 4, (int64_t[]){2, 3, 4, 2}, v);
    ct_read(x, v);
    for (int b = 0; b < 2; b++)
      for (int c = 0; c < 2; c++) {
        double m = 0;
        for (int i = 0; i < 12; i++) m += v[b * 24 + i * 2 + c];
        m /= 12;
        for (int i = 0; i < 12; i++) want[b * 24 + i * 2 + c] = (v[b * 24 + i * 2 + c] - m) * 1.5 + m;
      }
    dfx_tensor *f = kh_scalar_f32(1.5f), *y = run_op("AdjustContrastv2", x, f);
    ct_expect(y, dts[d], 4, (int64_t[]){2, 3, 4, 2}, want, dts[d] == DFX_F16 ? 1e-2 : 1e-5, "contrast");
    ct_free((dfx_tensor *[]){x, f, y}, 3);
  }
}

/* A box over rows 0..3 and cols 1..3 (0.25 * 4 = 1, 0.75 * 4 = 3) of a 4x5
 * image: its outline gets the colour (V2: 0.5; V1's default table on one
 * channel: 1), the rest stays 0. */
Test(color, draw_bounding_boxes) {
  const char *ops[] = {"DrawBoundingBoxes", "DrawBoundingBoxesV2"};
  static const int outline[20] = {0, 1, 1, 1, 0, 0, 1, 0, 1, 0, 0, 1, 0, 1, 0, 0, 1, 1, 1, 0};
  for (int v2 = 0; v2 < 2; v2++) {
    dfx_dtype dts[DFX_DTYPE_END_];
    int nd = ct_declared(ops[v2], "T", dts);
    for (int d = 0; d < nd; d++) {
      dfx_tensor *x = ct_tensor(dts[d], 4, (int64_t[]){1, 4, 5, 1}, (double[20]){0});
      dfx_tensor *b = kh_f32(3, (int64_t[]){1, 1, 4}, (float[]){0, 0.25f, 1, 0.75f});
      dfx_tensor *c = kh_f32(2, (int64_t[]){1, 1}, (float[]){0.5f});
      dfx_node *n = kh_node_new(ops[v2]);
      kh_attr_type(n, "T", dts[d]);
      dfx_tensor *o[1];
      ct_run(n, (dfx_tensor *[]){x, b, c}, 2 + v2, o, 1);
      double want[20];
      for (int i = 0; i < 20; i++) want[i] = outline[i] * (v2 ? 0.5 : 1);
      ct_expect(o[0], dts[d], 4, (int64_t[]){1, 4, 5, 1}, want, 0, ops[v2]);
      ct_free(o, 1);
      if (v2) { /* an empty colour table falls back to the default one */
        dfx_tensor *c0 = kh_f32(2, (int64_t[]){0, 1}, NULL);
        ct_run(n, (dfx_tensor *[]){x, b, c0}, 3, o, 1);
        for (int i = 0; i < 20; i++) want[i] = outline[i];
        ct_expect(o[0], dts[d], 4, (int64_t[]){1, 4, 5, 1}, want, 0, "default colours");
        ct_free((dfx_tensor *[]){o[0], c0}, 2);
      }
      kh_node_free(n);
      ct_free((dfx_tensor *[]){x, b, c}, 3);
    }
  }
}
