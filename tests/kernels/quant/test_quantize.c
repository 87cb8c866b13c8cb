/* test_quantize.c - QuantizeV2 and Dequantize against naive references that
 * follow TF's documented formulas (tf.quantization.quantize / dequantize)
 * element by element in float, as TF computes them: every quantized dtype,
 * the three modes, both round modes, narrow_range, per-channel axis,
 * ensure_minimum_range, bfloat16 output, TF's documented examples, and the
 * error checks. */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <string.h>

#include "kharness.h"

static char err[1024];

static void teardown(void) { dfx__tensor_cache_flush(); }
TestSuite(quant, .fini = teardown, .timeout = 60);

static const dfx_dtype qtypes[] = {DFX_QI8, DFX_QU8, DFX_QI16, DFX_QU16, DFX_QI32};
static const char *modes[] = {"MIN_COMBINED", "MIN_FIRST", "SCALED"};

/* ---- the reference: the type's range, then TF's formulas ---- */

static void range_of(dfx_dtype t, double *lo, double *hi, int *bits) {
  switch (t) {
  case DFX_QI8: *lo = -128, *hi = 127, *bits = 8; break;
  case DFX_QU8: *lo = 0, *hi = 255, *bits = 8; break;
  case DFX_QI16: *lo = -32768, *hi = 32767, *bits = 16; break;
  case DFX_QU16: *lo = 0, *hi = 65535, *bits = 16; break;
  default: *lo = -2147483648.0, *hi = 2147483647.0, *bits = 32; break;
  }
}

static double clampd(double v, double lo, double hi) { return v < lo ? lo : v > hi ? hi : v; }

/* The range QuantizeV2 uses: min(0, min), and max pushed past min by
 * ensure_minimum_range * max(1, |min|, |max|), never below 0. */
static void ref_range(float mn, float mx, float ens, float *lo, float *hi) {
  *lo = mn < 0 ? mn : 0.0f;
  float big = fabsf(mn) > fabsf(mx) ? fabsf(mn) : fabsf(mx);
  if (big < 1) big = 1;
  float m = *lo + big * ens;
  *hi = mx > m ? mx : m;
  if (*hi < 0) *hi = 0;
}

/* One element: out = quantize(x) for range [mn, mx] (already nudged), with
 * the documented formula of each mode. Returns the level; omn and omx get the
 * output range. */
static double ref_q(dfx_dtype t, const char *mode, int even, int narrow, float x, float lo, float hi, float *omn,
                    float *omx) {
  double tl, th;
  int bits;
  range_of(t, &tl, &th, &bits);
  *omn = lo, *omx = hi;
  if (!strcmp(mode, "MIN_COMBINED")) {
    /* out = (in - min) * range(T) / (max - min), minus (range(T) + 1) / 2 if signed. */
    float scale = (float)((th - tl) / (double)(hi - lo));
    float c = x > hi ? hi : x < lo ? lo : x;
    float v = (c - lo) * scale;
    if (tl < 0) return clampd(roundf(v - (float)((th - tl + 1) / 2)), tl, th);
    return clampd(floorf(v + 0.5f), tl, th);
  }
  if (!strcmp(mode, "MIN_FIRST")) {
    /* quantized = round(in * scale) - round(min * scale) + lowest, clamped. */
    float scale = hi == lo ? 0 : (float)((ldexp(1, bits) - 1.0) / (double)(hi - lo));
    float v = roundf(x * scale) - (roundf(lo * scale) - (float)tl);
    double upper = th > 2147483520.0 ? 2147483520.0 : th;
    return clampd(v, tl, upper);
  }
  /* SCALED: scale from whichever side is tighter; the range is then the
   * type's range over scale. */
  float mino = (float)(tl + (narrow ? 1 : 0)), maxo = (float)th;
  float s1 = mino * lo > 0 ? mino / lo : FLT_MAX, s2 = maxo * hi > 0 ? maxo / hi : FLT_MAX;
  float s = s1 < s2 ? s1 : s2;
  *omn = mino / s, *omx = maxo / s;
  float c = x > *omx ? *omx : x < *omn ? *omn : x;
  float v = c * s;
  return clampd(even ? rintf(v) : roundf(v), tl, th);
}

/* Dequantize one level q, per the documented formulas. */
static float ref_dq(dfx_dtype t, const char *mode, int narrow, double q, float lo, float hi) {
  double tl, th;
  int bits;
  range_of(t, &tl, &th, &bits);
  if (!strcmp(mode, "MIN_COMBINED")) {
    float half = tl < 0 ? ((float)th - (float)tl + 1.0f) / 2.0f : 0.0f;
    return ((float)q + half) * ((hi - lo) / ((float)th - (float)tl)) + lo;
  }
  if (!strcmp(mode, "MIN_FIRST")) {
    float step = (float)((double)(hi - lo) / (ldexp(1, bits) - 1.0));
    float min_rounded = hi == lo ? lo : roundf(lo / step) * step;
    return (min_rounded - (float)tl * step) + (float)q * step;
  }
  float mino = (float)(tl + (narrow ? 1 : 0));
  float s = tl == 0 ? hi / (float)th : fmaxf(lo / mino, hi / (float)th);
  return (float)q * s;
}

static double get_q(const dfx_tensor *t, int64_t i) { return (double)dfx__tensor_get_i64(t, i); }

/* ---- runners ---- */

static dfx_node *qnode(dfx_dtype t, const char *mode, int even, int narrow, int64_t axis, float ens) {
  dfx_node *n = kh_node_new("QuantizeV2");
  kh_attr_type(n, "T", t);
  kh_attr_str(n, "mode", mode);
  kh_attr_str(n, "round_mode", even ? "HALF_TO_EVEN" : "HALF_AWAY_FROM_ZERO");
  kh_attr_bool(n, "narrow_range", narrow);
  kh_attr_int(n, "axis", axis);
  kh_attr_float(n, "ensure_minimum_range", ens);
  return n;
}

static dfx_node *dqnode(dfx_dtype t, const char *mode, int narrow, int64_t axis, dfx_dtype out) {
  dfx_node *n = kh_node_new("Dequantize");
  kh_attr_type(n, "T", t);
  kh_attr_str(n, "mode", mode);
  kh_attr_bool(n, "narrow_range", narrow);
  kh_attr_int(n, "axis", axis);
  kh_attr_type(n, "dtype", out);
  return n;
}

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static double rnd(void) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return (double)(rng >> 11) / (double)(1ull << 53);
}

/* Quantizes x [3,4] with ranges per `axis` and checks every level and the
 * output ranges against the reference; then dequantizes the result and
 * checks that against the reference too. */
static void check_case(dfx_dtype t, const char *mode, int even, int narrow, int64_t axis, float ens) {
  const int64_t d[] = {3, 4};
  float x[12];
  for (int i = 0; i < 12; i++) x[i] = (float)(rnd() * 8 - 3.5);
  x[0] = 100, x[1] = -100, x[2] = 0, x[3] = 0.5f; /* out of range on both sides, zero */
  int ns = axis < 0 ? 1 : (int)d[axis];
  float mn[4], mx[4];
  for (int s = 0; s < ns; s++) mn[s] = (float)(-rnd() * 4), mx[s] = (float)(rnd() * 4 + 0.1);
  if (ns > 1) mn[1] = 0.5f, mx[1] = 0.5f; /* collapsed range: nudged apart */
  const int64_t rd[] = {ns};
  dfx_tensor *in[3] = {kh_f32(2, d, x), kh_f32(axis < 0 ? 0 : 1, rd, mn), kh_f32(axis < 0 ? 0 : 1, rd, mx)};
  dfx_tensor *out[3] = {0};
  int no = 0;
  dfx_node *n = qnode(t, mode, even, narrow, axis, ens);
  cr_assert_eq(kh_run(n, in, 3, out, &no, err, sizeof err), DFX_OK, "%s %s: %s", dfx__dtype_tf_name(t), mode, err);
  cr_assert_eq(out[0]->dtype, t);
  cr_assert_eq(out[1]->count, ns);
  const float *omn = out[1]->data, *omx = out[2]->data;
  float rlo[4], rhi[4];
  for (int i = 0; i < 12; i++) {
    int s = axis == 0 ? i / 4 : axis == 1 ? i % 4 : 0;
    float lo, hi, emn, emx;
    ref_range(mn[s], mx[s], ens, &lo, &hi);
    double want = ref_q(t, mode, even, narrow, x[i], lo, hi, &emn, &emx);
    cr_expect_eq(get_q(out[0], i), want, "%s %s even=%d narrow=%d axis=%lld elem %d (x=%g): got %g want %g",
                 dfx__dtype_tf_name(t), mode, even, narrow, (long long)axis, i, (double)x[i], get_q(out[0], i), want);
    cr_expect(omn[s] == emn && omx[s] == emx, "range of slice %d: got [%g, %g] want [%g, %g]", s, (double)omn[s],
              (double)omx[s], (double)emn, (double)emx);
    rlo[s] = emn, rhi[s] = emx;
  }
  /* Dequantize with the output range, per the same axis. */
  dfx_node *m = dqnode(t, mode, narrow, axis, DFX_F32);
  dfx_tensor *din[3] = {out[0], out[1], out[2]}, *dout[1] = {0};
  cr_assert_eq(kh_run(m, din, 3, dout, &no, err, sizeof err), DFX_OK, "%s", err);
  const float *y = dout[0]->data;
  for (int i = 0; i < 12; i++) {
    int s = axis == 0 ? i / 4 : axis == 1 ? i % 4 : 0;
    float want = ref_dq(t, mode, narrow, get_q(out[0], i), rlo[s], rhi[s]);
    cr_expect(fabsf(y[i] - want) <= 1e-6f * fmaxf(1, fabsf(want)), "dequantize %s %s elem %d: got %.9g want %.9g",
              dfx__dtype_tf_name(t), mode, i, (double)y[i], (double)want);
    /* A round trip stays within one level of the clamped input (MIN_FIRST
     * rounds the minimum too: two). */
    float c = x[i] < rlo[s] ? rlo[s] : x[i] > rhi[s] ? rhi[s] : x[i];
    double tl, th;
    int bits;
    range_of(t, &tl, &th, &bits);
    double level = (rhi[s] - rlo[s]) / (th - tl);
    cr_expect(fabs(y[i] - c) <= 2.01 * level + 1e-6, "round trip elem %d: %g -> %g", i, (double)c, (double)y[i]);
  }
  for (int i = 0; i < 3; i++) dfx__tensor_unref(in[i]), dfx__tensor_unref(out[i]);
  dfx__tensor_unref(dout[0]);
  kh_node_free(n);
  kh_node_free(m);
}

Test(quant, every_dtype_mode_and_round_mode) {
  for (int ti = 0; ti < 5; ti++)
    for (int mi = 0; mi < 3; mi++)
      for (int narrow = 0; narrow < 2; narrow++)
        for (int even = 0; even < (mi == 2 ? 2 : 1); even++) check_case(qtypes[ti], modes[mi], even, narrow, -1, 0.01f);
}

Test(quant, per_channel_axis) {
  for (int ti = 0; ti < 5; ti++)
    for (int mi = 0; mi < 3; mi += 2)
      for (int64_t axis = 0; axis < 2; axis++) {
        check_case(qtypes[ti], modes[mi], 0, 0, axis, 0.01f);
        check_case(qtypes[ti], modes[mi], mi == 2, 1, axis, 0.01f);
      }
}

Test(quant, ensure_minimum_range) {
  for (int mi = 0; mi < 3; mi++) {
    check_case(DFX_QU8, modes[mi], 0, 0, -1, 0.0f);
    check_case(DFX_QI8, modes[mi], 0, 0, -1, 0.5f);
  }
}

/* ---- TF's documented examples, computed by hand ---- */

static void quantize1(dfx_dtype t, const char *mode, int even, float mn, float mx, const float *x, int nx,
                      double *q, float *omn, float *omx) {
  const int64_t d[] = {nx};
  dfx_tensor *in[3] = {kh_f32(1, d, x), kh_scalar_f32(mn), kh_scalar_f32(mx)}, *out[3] = {0};
  int no = 0;
  dfx_node *n = qnode(t, mode, even, 0, -1, 0.01f);
  cr_assert_eq(kh_run(n, in, 3, out, &no, err, sizeof err), DFX_OK, "%s", err);
  for (int i = 0; i < nx; i++) q[i] = get_q(out[0], i);
  *omn = *(float *)out[1]->data, *omx = *(float *)out[2]->data;
  for (int i = 0; i < 3; i++) dfx__tensor_unref(in[i]), dfx__tensor_unref(out[i]);
  kh_node_free(n);
}

Test(quant, documented_examples) {
  double q[4];
  float lo, hi;
  /* MIN_COMBINED, quint8, [0, 6]: multiply by 255/6. */
  const float a[] = {0, 3, 6, 7};
  quantize1(DFX_QU8, "MIN_COMBINED", 0, 0, 6, a, 4, q, &lo, &hi);
  cr_expect(q[0] == 0 && q[1] == 128 && q[2] == 255 && q[3] == 255, "%g %g %g %g", q[0], q[1], q[2], q[3]);
  /* Same as qint8: shifted down by 128 (127.5 - 128 rounds away from zero). */
  quantize1(DFX_QI8, "MIN_COMBINED", 0, 0, 6, a, 4, q, &lo, &hi);
  cr_expect(q[0] == -128 && q[1] == -1 && q[2] == 127, "%g %g %g", q[0], q[1], q[2]);
  /* SCALED qint8 [-127, 127]: scale 1; ties away from zero or to even. */
  const float b[] = {2.5f, -2.5f, 3.5f, -200};
  quantize1(DFX_QI8, "SCALED", 0, -127, 127, b, 4, q, &lo, &hi);
  cr_expect(q[0] == 3 && q[1] == -3 && q[2] == 4 && q[3] == -128, "%g %g %g %g", q[0], q[1], q[2], q[3]);
  cr_expect(lo == -128 && hi == 127, "[%g, %g]", (double)lo, (double)hi);
  quantize1(DFX_QI8, "SCALED", 1, -127, 127, b, 4, q, &lo, &hi);
  cr_expect(q[0] == 2 && q[1] == -2 && q[2] == 4, "%g %g %g", q[0], q[1], q[2]);
  /* SCALED quint8 [-1, 10]: the negative side is dropped, scale 25.5. */
  const float c[] = {-1, 10, 5};
  quantize1(DFX_QU8, "SCALED", 0, -1, 10, c, 3, q, &lo, &hi);
  cr_expect(q[0] == 0 && q[1] == 255 && q[2] == 128, "%g %g %g", q[0], q[1], q[2]);
  cr_expect(lo == 0 && hi == 10, "[%g, %g]", (double)lo, (double)hi);
  /* MIN_FIRST quint8 [0, 255]: scale 1. */
  const float e[] = {0, 17.4f, 255, 300};
  quantize1(DFX_QU8, "MIN_FIRST", 0, 0, 255, e, 4, q, &lo, &hi);
  cr_expect(q[0] == 0 && q[1] == 17 && q[2] == 255 && q[3] == 255, "%g %g %g %g", q[0], q[1], q[2], q[3]);
  /* A collapsed range [2, 2] becomes [0, 2]. */
  quantize1(DFX_QU8, "MIN_COMBINED", 0, 2, 2, a, 1, q, &lo, &hi);
  cr_expect(lo == 0 && hi == 2, "[%g, %g]", (double)lo, (double)hi);
}

static float dequantize1(dfx_dtype t, const char *mode, int narrow, float mn, float mx, int64_t level) {
  const int64_t d[] = {1};
  dfx_tensor *x = dfx__tensor_alloc(t, 1, d, NULL);
  memset(x->data, 0, x->nbytes);
  switch (t) {
  case DFX_QI8: *(int8_t *)x->data = (int8_t)level; break;
  case DFX_QU8: *(uint8_t *)x->data = (uint8_t)level; break;
  case DFX_QI16: *(int16_t *)x->data = (int16_t)level; break;
  case DFX_QU16: *(uint16_t *)x->data = (uint16_t)level; break;
  default: *(int32_t *)x->data = (int32_t)level; break;
  }
  dfx_tensor *in[3] = {x, kh_scalar_f32(mn), kh_scalar_f32(mx)}, *out[1] = {0};
  int no = 0;
  dfx_node *n = dqnode(t, mode, narrow, -1, DFX_F32);
  cr_assert_eq(kh_run(n, in, 3, out, &no, err, sizeof err), DFX_OK, "%s", err);
  float v = *(float *)out[0]->data;
  for (int i = 0; i < 3; i++) dfx__tensor_unref(in[i]);
  dfx__tensor_unref(out[0]);
  kh_node_free(n);
  return v;
}

Test(quant, dequantize_documented_values) {
  cr_expect_float_eq(dequantize1(DFX_QU8, "MIN_COMBINED", 0, 0, 6, 255), 6.0f, 1e-6);
  cr_expect_float_eq(dequantize1(DFX_QU8, "MIN_COMBINED", 0, 0, 6, 0), 0.0f, 1e-6);
  cr_expect_float_eq(dequantize1(DFX_QI8, "MIN_COMBINED", 0, -1, 1, -128), -1.0f, 1e-6);
  cr_expect_float_eq(dequantize1(DFX_QI8, "MIN_COMBINED", 0, -1, 1, 127), 1.0f, 1e-6);
  /* SCALED qint8 [-1, 1]: scale max(-1/-128, 1/127) = 1/127. */
  cr_expect_float_eq(dequantize1(DFX_QI8, "SCALED", 0, -1, 1, -128), -128.0f / 127, 1e-6);
  cr_expect_float_eq(dequantize1(DFX_QI8, "SCALED", 1, -1, 1, 127), 1.0f, 1e-6);
  /* SCALED quint8 [0, 255]: the level itself. */
  cr_expect_float_eq(dequantize1(DFX_QU8, "SCALED", 0, 0, 255, 77), 77.0f, 1e-6);
  /* MIN_FIRST quint8 [0, 1]: level / 255. */
  cr_expect_float_eq(dequantize1(DFX_QU8, "MIN_FIRST", 0, 0, 1, 255), 1.0f, 1e-6);
  cr_expect_float_eq(dequantize1(DFX_QU8, "MIN_FIRST", 0, 0, 1, 51), 0.2f, 1e-6);
  /* qint32 SCALED keeps large levels. */
  cr_expect_float_eq(dequantize1(DFX_QI32, "SCALED", 0, -2147483648.0f, 2147483648.0f, 1 << 20), 1048576.0f, 1);
  cr_expect_float_eq(dequantize1(DFX_QU16, "MIN_COMBINED", 0, 0, 65535, 1234), 1234.0f, 1e-3);
}

Test(quant, dequantize_bfloat16) {
  const int64_t d[] = {4};
  const uint8_t lv[] = {0, 1, 100, 255};
  dfx_tensor *in[3] = {kh_tensor(DFX_QU8, 1, d, lv), kh_scalar_f32(-1), kh_scalar_f32(3)}, *out[1] = {0};
  int no = 0;
  dfx_node *n = dqnode(DFX_QU8, "MIN_COMBINED", 0, -1, DFX_BF16);
  cr_assert_eq(kh_run(n, in, 3, out, &no, err, sizeof err), DFX_OK, "%s", err);
  cr_assert_eq(out[0]->dtype, DFX_BF16);
  for (int i = 0; i < 4; i++) {
    float want = ref_dq(DFX_QU8, "MIN_COMBINED", 0, lv[i], -1, 3);
    float got = dfx__bf16_to_f32(((uint16_t *)out[0]->data)[i]);
    cr_expect(fabsf(got - want) <= fabsf(want) / 256 + 1e-6f, "elem %d: %g vs %g", i, (double)got, (double)want);
  }
  for (int i = 0; i < 3; i++) dfx__tensor_unref(in[i]);
  dfx__tensor_unref(out[0]);
  kh_node_free(n);
}

Test(quant, empty_tensor) {
  const int64_t d[] = {0, 3};
  dfx_tensor *in[3] = {kh_f32(2, d, NULL), kh_scalar_f32(-1), kh_scalar_f32(1)}, *out[3] = {0};
  int no = 0;
  dfx_node *n = qnode(DFX_QI8, "SCALED", 0, 0, -1, 0.01f);
  cr_assert_eq(kh_run(n, in, 3, out, &no, err, sizeof err), DFX_OK, "%s", err);
  cr_expect_eq(out[0]->count, 0);
  for (int i = 0; i < 3; i++) dfx__tensor_unref(in[i]), dfx__tensor_unref(out[i]);
  kh_node_free(n);
}

/* ---- errors ---- */

static dfx_code run_q(dfx_node *n, dfx_tensor *x, dfx_tensor *mn, dfx_tensor *mx) {
  dfx_tensor *in[3] = {x, mn, mx}, *out[3] = {0};
  int no = 0;
  dfx_code c = kh_run(n, in, 3, out, &no, err, sizeof err);
  for (int i = 0; i < 3; i++) dfx__tensor_unref(in[i]), dfx__tensor_unref(out[i]);
  kh_node_free(n);
  return c;
}

Test(quant, errors) {
  const int64_t d[] = {2, 3}, r3[] = {3}, r2[] = {2};
  float x[6] = {0}, three[3] = {-1, -1, -1}, pos[3] = {1, 1, 1};
  cr_expect_eq(run_q(qnode(DFX_QU8, "MIN_COMBINED", 0, 0, -1, 0.01f), kh_f32(2, d, x), kh_scalar_f32(2), kh_scalar_f32(1)),
               DFX_EINVAL);
  cr_expect(strstr(err, "input_max_range must be larger than input_min_range"), "%s", err);
  cr_expect_eq(run_q(qnode(DFX_QU8, "MIN_COMBINED", 1, 0, -1, 0.01f), kh_f32(2, d, x), kh_scalar_f32(0), kh_scalar_f32(1)),
               DFX_EINVAL);
  cr_expect(strstr(err, "HALF_TO_EVEN"), "%s", err);
  cr_expect_eq(run_q(qnode(DFX_QI8, "SCALED", 0, 0, 2, 0.01f), kh_f32(2, d, x), kh_f32(1, r3, three), kh_f32(1, r3, pos)),
               DFX_EINVAL);
  cr_expect(strstr(err, "Axis must be less than input dimension(2), got 2"), "%s", err);
  cr_expect_eq(run_q(qnode(DFX_QI8, "SCALED", 0, 0, 1, 0.01f), kh_f32(2, d, x), kh_f32(1, r2, three), kh_f32(1, r3, pos)),
               DFX_EINVAL);
  cr_expect(strstr(err, "input_min_range must have as many elements"), "%s", err);
  cr_expect_eq(run_q(qnode(DFX_QU8, "MIN_FIRST", 0, 0, 1, 0.01f), kh_f32(2, d, x), kh_f32(1, r3, three), kh_f32(1, r3, pos)),
               DFX_EUNIMPL);
  cr_expect(strstr(err, "MIN_FIRST mode is not implemented"), "%s", err);
  const uint8_t q[6] = {0};
  cr_expect_eq(run_q(dqnode(DFX_QU8, "SCALED", 0, 1, DFX_F32), kh_tensor(DFX_QU8, 2, d, q), kh_f32(1, r3, three),
                     kh_f32(1, r2, pos)),
               DFX_EINVAL);
  cr_expect(strstr(err, "input_max_tensor must have as many elements"), "%s", err);
  cr_expect_eq(run_q(dqnode(DFX_QU8, "MIN_COMBINED", 0, -1, DFX_F32), kh_tensor(DFX_QU8, 2, d, q), kh_f32(1, r3, three),
                     kh_scalar_f32(1)),
               DFX_EINVAL);
  cr_expect(strstr(err, "input_min_tensor must have as many elements"), "%s", err);
}

/* Infinite and NaN ranges or inputs: never undefined behaviour (UBSan
 * checks the float-to-integer conversions), levels stay in the type. */
Test(quant, hostile_ranges_and_inputs) {
  const float specials[] = {INFINITY, -INFINITY, NAN, 3e38f, -3e38f, 0.0f, 1e-38f};
  const int64_t d[1] = {7};
  for (int ti = 0; ti < 5; ti++)
    for (int mi = 0; mi < 3; mi++)
      for (int a = 0; a < 7; a++)
        for (int b = 0; b < 7; b++) {
          dfx_tensor *in[3] = {kh_f32(1, d, specials), kh_scalar_f32(specials[a]), kh_scalar_f32(specials[b])};
          dfx_tensor *out[3] = {0};
          int no = 0;
          dfx_node *n = qnode(qtypes[ti], modes[mi], 0, 0, -1, 0.01f);
          dfx_code c = kh_run(n, in, 3, out, &no, err, sizeof err);
          cr_expect(c == DFX_OK || c == DFX_EINVAL, "%s", err);
          if (c == DFX_OK) {
            dfx_node *m = dqnode(qtypes[ti], modes[mi], 0, -1, DFX_F32);
            dfx_tensor *din[3] = {out[0], in[1], in[2]}, *dout[1] = {0};
            cr_expect_eq(kh_run(m, din, 3, dout, &no, err, sizeof err), DFX_OK, "%s", err);
            dfx__tensor_unref(dout[0]);
            kh_node_free(m);
          }
          for (int i = 0; i < 3; i++) dfx__tensor_unref(in[i]), dfx__tensor_unref(out[i]);
          kh_node_free(n);
        }
}
