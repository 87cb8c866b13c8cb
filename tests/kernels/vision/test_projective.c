/* test_projective.c - ImageProjectiveTransformV2/V3 against a naive
 * reference written from the op's documentation: output (x, y) samples the
 * input at ((a0 x + a1 y + a2) / k, (b0 x + b1 y + b2) / k), k = c0 x + c1 y + 1;
 * fill modes reflect (d c b a | a b c d | d c b a), wrap (TF's scipy-style
 * rule), nearest (clamp) and constant (fill_value); nearest and bilinear
 * interpolation; every declared dtype; TF's checks. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "kharness.h"

static char err[1024];

static void teardown(void) { dfx__tensor_cache_flush(); }
TestSuite(projective, .fini = teardown, .timeout = 60);

static const char *fills[] = {"REFLECT", "WRAP", "CONSTANT", "NEAREST"};

/* Reference coordinate mapping; returns the coordinate, or NAN when the
 * point is outside and has no pixel (constant mode). */
static double ref_map(const char *mode, double c, int len) {
  if (!strcmp(mode, "CONSTANT")) return c;
  if (!strcmp(mode, "REFLECT")) {
    if (len <= 1) return 0;
    if (c < 0 || c > len - 1) {
      /* The pattern [abcd dcba] repeats with period 2 len, mirrored at -0.5. */
      double m = fmod(c, 2.0 * len);
      if (m < 0) m += 2.0 * len;
      if (m >= len) m = 2.0 * len - 1 - m;
      c = m;
    }
  } else if (!strcmp(mode, "WRAP")) {
    if (len <= 1) return 0;
    /* TF (after scipy's 'wrap'): shift by whole lengths, counting in
     * steps of len - 1. */
    if (c < 0) c += len * (trunc(-c / (len - 1)) + 1);
    else if (c > len - 1) c -= len * trunc(c / (len - 1));
  }
  return c < 0 ? 0 : c > len - 1 ? len - 1 : c;
}

typedef struct {
  int b, h, w, c, oh, ow;
} geom;

static double img_val(int i) { return (double)((i * 37) % 23) - 5.0 + (i % 3) * 0.25; }

/* The reference for one output element, in double; *exact says whether the
 * sample was a plain copy (nearest/fill) rather than a blend. */
static double ref_px(const geom *g, const double *img, const float *m, const char *fill, int bilinear, double fv,
                     int b, int y, int x, int c) {
  double k = m[6] * x + m[7] * y + 1.0;
  if (k == 0) return fv;
  double fx = ref_map(fill, (m[0] * x + m[1] * y + m[2]) / k, g->w);
  double fy = ref_map(fill, (m[3] * x + m[4] * y + m[5]) / k, g->h);
#define AT(yy, xx) ((yy) >= 0 && (yy) < g->h && (xx) >= 0 && (xx) < g->w ? img[(((b)*g->h + (yy)) * g->w + (xx)) * g->c + c] : fv)
  if (!bilinear) {
    int ry = (int)round(fy), rx = (int)round(fx);
    return AT(ry, rx);
  }
  int y0 = (int)floor(fy), x0 = (int)floor(fx);
  double wy = fy - y0, wx = fx - x0;
  return (1 - wy) * ((1 - wx) * AT(y0, x0) + wx * AT(y0, x0 + 1)) + wy * ((1 - wx) * AT(y0 + 1, x0) + wx * AT(y0 + 1, x0 + 1));
#undef AT
}

static dfx_tensor *make_img(dfx_dtype t, const geom *g, double *vals) {
  int64_t d[4] = {g->b, g->h, g->w, g->c};
  dfx_tensor *x = dfx__tensor_alloc(t, 4, d, NULL);
  for (int64_t i = 0; i < x->count; i++) {
    double v = img_val((int)i);
    if (t == DFX_U8) v = fabs(v) * 10;
    if (t == DFX_U8 || t == DFX_I32 || t == DFX_I64) v = round(v);
    switch (t) {
    case DFX_U8: ((uint8_t *)x->data)[i] = (uint8_t)v; break;
    case DFX_I32: ((int32_t *)x->data)[i] = (int32_t)v; break;
    case DFX_I64: ((int64_t *)x->data)[i] = (int64_t)v; break;
    case DFX_F16: ((uint16_t *)x->data)[i] = dfx__f32_to_f16((float)v); break;
    case DFX_BF16: ((uint16_t *)x->data)[i] = dfx__f32_to_bf16((float)v); break;
    case DFX_F64: ((double *)x->data)[i] = v; break;
    default: ((float *)x->data)[i] = (float)v; break;
    }
    vals[i] = dfx__tensor_get_f64(x, i);
  }
  return x;
}

static void check(dfx_dtype t, const geom *g, const float *m, int nm, const char *fill, int bilinear, float fv, int v3) {
  double vals[2048];
  dfx_tensor *img = make_img(t, g, vals);
  const int64_t md[2] = {nm, 8}, sd[1] = {2};
  const int32_t shape[2] = {g->oh, g->ow};
  dfx_tensor *in[4] = {img, kh_f32(2, md, m), kh_i32(1, sd, shape), kh_scalar_f32(fv)}, *out[1] = {0};
  int no = 0;
  dfx_node *n = kh_node_new(v3 ? "ImageProjectiveTransformV3" : "ImageProjectiveTransformV2");
  kh_attr_type(n, "dtype", t);
  kh_attr_str(n, "interpolation", bilinear ? "BILINEAR" : "NEAREST");
  kh_attr_str(n, "fill_mode", fill);
  cr_assert_eq(kh_run(n, in, v3 ? 4 : 3, out, &no, err, sizeof err), DFX_OK, "%s", err);
  cr_assert_eq(out[0]->dtype, t);
  cr_assert(out[0]->dims[1] == g->oh && out[0]->dims[2] == g->ow && out[0]->dims[3] == g->c);
  /* The fill value as the image dtype holds it. */
  double fvt = t == DFX_U8 ? (fv < 0 ? 0 : trunc(fv)) : (t == DFX_I32 || t == DFX_I64) ? trunc(fv) : fv;
  if (t == DFX_F16) fvt = dfx__f16_to_f32(dfx__f32_to_f16(fv));
  if (t == DFX_BF16) fvt = dfx__bf16_to_f32(dfx__f32_to_bf16(fv));
  if (!v3) fvt = 0;
  double tol = t == DFX_F16 ? 0.02 : t == DFX_BF16 ? 0.1 : 1e-4;
  if (bilinear && (t == DFX_U8 || t == DFX_I32 || t == DFX_I64)) tol = 1.0; /* truncation of a float blend */
  for (int b = 0; b < g->b; b++)
    for (int y = 0; y < g->oh; y++)
      for (int x = 0; x < g->ow; x++)
        for (int c = 0; c < g->c; c++) {
          const float *mm = nm == 1 ? m : m + 8 * b;
          double want = ref_px(g, vals, mm, fill, bilinear, fvt, b, y, x, c);
          if (bilinear && (t == DFX_U8 || t == DFX_I32 || t == DFX_I64)) want = trunc(want);
          double got = dfx__tensor_get_f64(out[0], (((int64_t)b * g->oh + y) * g->ow + x) * g->c + c);
          cr_expect(fabs(got - want) <= tol * fmax(1, fabs(want)) + 1e-9,
                    "%s %s %s v3=%d at b%d y%d x%d c%d: got %g want %g", dfx__dtype_tf_name(t), fill,
                    bilinear ? "BILINEAR" : "NEAREST", v3, b, y, x, c, got, want);
        }
  for (int i = 0; i < 4; i++) dfx__tensor_unref(in[i]);
  dfx__tensor_unref(out[0]);
  kh_node_free(n);
}

static const dfx_dtype types[] = {DFX_U8, DFX_I32, DFX_I64, DFX_F16, DFX_BF16, DFX_F32, DFX_F64};

Test(projective, translations_every_fill_mode_and_dtype) {
  const geom g = {2, 4, 5, 2, 6, 7};
  /* Per image: a shift by (-2.5, 1.25) and a flip plus shift. */
  const float m[16] = {1, 0, -2.5f, 0, 1, 1.25f, 0, 0, -1, 0, 4.0f, 0, 1, -3.0f, 0, 0};
  for (int ti = 0; ti < 7; ti++)
    for (int f = 0; f < 4; f++)
      for (int bl = 0; bl < 2; bl++) {
        check(types[ti], &g, m, 2, fills[f], bl, 7.5f, 1);
        check(types[ti], &g, m, 1, fills[f], bl, 0, 0);
      }
}

Test(projective, far_outside_and_projective) {
  const geom g = {1, 3, 4, 1, 5, 5};
  /* Large shifts wrap/reflect several periods; a perspective term. */
  const float far[8] = {1, 0, -17.25f, 0, 1, 11.5f, 0, 0};
  const float persp[8] = {0.9f, 0.1f, 0.5f, -0.05f, 1.1f, -0.25f, 0.02f, -0.03f};
  for (int f = 0; f < 4; f++)
    for (int bl = 0; bl < 2; bl++) {
      check(DFX_F32, &g, far, 1, fills[f], bl, -1.0f, 1);
      check(DFX_F64, &g, persp, 1, fills[f], bl, 2.0f, 1);
    }
}

Test(projective, documented_examples) {
  /* A 1x1x3x1 row [1 2 3] shifted left by 2: the output reads x + 2. */
  const int64_t d[4] = {1, 1, 3, 1}, md[2] = {1, 8}, sd[1] = {2};
  const float row[3] = {1, 2, 3}, m[8] = {1, 0, 2, 0, 1, 0, 0, 0};
  const int32_t shape[2] = {1, 3};
  const char *modes[4] = {"REFLECT", "WRAP", "CONSTANT", "NEAREST"};
  /* Output x = 0, 1, 2 reads input 2, 3, 4: reflect (3 2 1 | 1 2 3 | 3 2 1)
   * gives 3 3 2; constant 3 9 9 (fill 9); nearest 3 3 3. Wrap follows TF's
   * (scipy's old) rule, which steps in len - 1: 3 -> 3 - 3 = 0, but
   * 4 -> 4 - 3 * trunc(4 / 2) = -2, clamped to 0: 3 1 1. */
  const float want[4][3] = {{3, 3, 2}, {3, 1, 1}, {3, 9, 9}, {3, 3, 3}};
  for (int f = 0; f < 4; f++) {
    dfx_tensor *in[4] = {kh_f32(4, d, row), kh_f32(2, md, m), kh_i32(1, sd, shape), kh_scalar_f32(9)}, *out[1] = {0};
    int no = 0;
    dfx_node *n = kh_node_new("ImageProjectiveTransformV3");
    kh_attr_type(n, "dtype", DFX_F32);
    kh_attr_str(n, "interpolation", "NEAREST");
    kh_attr_str(n, "fill_mode", modes[f]);
    cr_assert_eq(kh_run(n, in, 4, out, &no, err, sizeof err), DFX_OK, "%s", err);
    const float *o = out[0]->data;
    for (int i = 0; i < 3; i++) cr_expect_eq(o[i], want[f][i], "%s x=%d: %g want %g", modes[f], i, (double)o[i], (double)want[f][i]);
    for (int i = 0; i < 4; i++) dfx__tensor_unref(in[i]);
    dfx__tensor_unref(out[0]);
    kh_node_free(n);
  }
}

static dfx_code run_bad(int rank_img, const int64_t *md, int mnd, const int32_t *shape, int ns, const char *interp,
                        const char *fill, int fv_rank) {
  const int64_t d[4] = {1, 2, 2, 1}, sd[1] = {ns}, fd[1] = {1};
  float z[64] = {0};
  dfx_tensor *in[4] = {kh_f32(rank_img, d, z), kh_f32(mnd, md, z), kh_i32(1, sd, shape),
                       fv_rank ? kh_f32(1, fd, z) : kh_scalar_f32(0)};
  dfx_tensor *out[1] = {0};
  int no = 0;
  dfx_node *n = kh_node_new("ImageProjectiveTransformV3");
  kh_attr_type(n, "dtype", DFX_F32);
  kh_attr_str(n, "interpolation", interp);
  kh_attr_str(n, "fill_mode", fill);
  dfx_code c = kh_run(n, in, 4, out, &no, err, sizeof err);
  for (int i = 0; i < 4; i++) dfx__tensor_unref(in[i]);
  dfx__tensor_unref(out[0]);
  kh_node_free(n);
  return c;
}

Test(projective, errors) {
  const int64_t md[2] = {1, 8}, bad_md[2] = {2, 8}, md7[2] = {1, 7};
  const int32_t ok[2] = {2, 2}, zero[2] = {0, 2}, three[3] = {1, 1, 1};
  cr_expect_eq(run_bad(3, md, 2, ok, 2, "NEAREST", "CONSTANT", 0), DFX_EINVAL);
  cr_expect(strstr(err, "Input images must have rank 4"), "%s", err);
  cr_expect_eq(run_bad(4, bad_md, 2, ok, 2, "NEAREST", "CONSTANT", 0), DFX_EINVAL);
  cr_expect(strstr(err, "num_images x 8 or 1 x 8"), "%s", err);
  cr_expect_eq(run_bad(4, md7, 2, ok, 2, "NEAREST", "CONSTANT", 0), DFX_EINVAL);
  cr_expect_eq(run_bad(4, md, 2, three, 3, "NEAREST", "CONSTANT", 0), DFX_EINVAL);
  cr_expect(strstr(err, "output shape must have two elements"), "%s", err);
  cr_expect_eq(run_bad(4, md, 2, zero, 2, "NEAREST", "CONSTANT", 0), DFX_EINVAL);
  cr_expect(strstr(err, "output dimensions must be positive"), "%s", err);
  cr_expect_eq(run_bad(4, md, 2, ok, 2, "NEAREST", "CONSTANT", 1), DFX_EINVAL);
  cr_expect(strstr(err, "fill_value must be a scalar"), "%s", err);
  cr_expect_eq(run_bad(4, md, 2, ok, 2, "BICUBIC", "CONSTANT", 0), DFX_EINVAL);
  cr_expect(strstr(err, "Invalid interpolation BICUBIC"), "%s", err);
  cr_expect_eq(run_bad(4, md, 2, ok, 2, "NEAREST", "MIRROR", 0), DFX_EINVAL);
  cr_expect(strstr(err, "Invalid mode MIRROR"), "%s", err);
}

Test(projective, hostile_transforms) {
  /* Infinite, NaN and huge coordinates read the fill value or clamp; never crash. */
  const geom g = {1, 2, 2, 1, 3, 3};
  const float inf[8] = {INFINITY, 0, 0, 0, 1, 0, 0, 0}, nan[8] = {NAN, 0, 0, 0, NAN, 0, 0, 0};
  const float huge[8] = {1, 0, 3e30f, 0, 1, -3e30f, 0, 0}, pole[8] = {1, 0, 0, 0, 1, 0, -1, 0};
  const float *ms[4] = {inf, nan, huge, pole};
  double vals[16];
  for (int k = 0; k < 4; k++)
    for (int f = 0; f < 4; f++)
      for (int bl = 0; bl < 2; bl++) {
        dfx_tensor *img = make_img(DFX_F32, &g, vals);
        const int64_t md[2] = {1, 8}, sd[1] = {2};
        const int32_t shape[2] = {3, 3};
        dfx_tensor *in[4] = {img, kh_f32(2, md, ms[k]), kh_i32(1, sd, shape), kh_scalar_f32(5)}, *out[1] = {0};
        int no = 0;
        dfx_node *n = kh_node_new("ImageProjectiveTransformV3");
        kh_attr_type(n, "dtype", DFX_F32);
        kh_attr_str(n, "interpolation", bl ? "BILINEAR" : "NEAREST");
        kh_attr_str(n, "fill_mode", fills[f]);
        cr_expect_eq(kh_run(n, in, 4, out, &no, err, sizeof err), DFX_OK, "%s", err);
        for (int i = 0; i < 4; i++) dfx__tensor_unref(in[i]);
        dfx__tensor_unref(out[0]);
        kh_node_free(n);
      }
}
