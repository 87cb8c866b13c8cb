/* test_sample_bbox.c - SampleDistortedBoundingBox/V2 by the properties TF
 * documents: the crop lies inside the image, its area fraction lies in
 * area_range and its aspect ratio in aspect_ratio_range (up to the rounding
 * of one pixel), it covers at least min_object_covered of some box, and
 * when no crop can satisfy the constraints within max_attempts the whole
 * image comes back. Also: begin/size/bboxes agree, seeds repeat their
 * stream in a fresh kernel and advance it between runs, every declared
 * dtype, TF's checks. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "kharness.h"
#include "step.h"

static char err[1024];

static void teardown(void) { dfx__tensor_cache_flush(); }
TestSuite(sample_bbox, .fini = teardown, .timeout = 60);

typedef struct {
  int64_t begin[3], size[3];
  float box[4];
} crop;

static dfx_node *sb_node(int v2, dfx_dtype t, int64_t seed, int64_t seed2, float ar0, float ar1, float a0, float a1,
                         int attempts, float covered) {
  dfx_node *n = kh_node_new(v2 ? "SampleDistortedBoundingBoxV2" : "SampleDistortedBoundingBox");
  kh_attr_type(n, "T", t);
  kh_attr_int(n, "seed", seed);
  kh_attr_int(n, "seed2", seed2);
  const float ar[2] = {ar0, ar1}, area[2] = {a0, a1};
  kh_attr_floats(n, "aspect_ratio_range", ar, 2);
  kh_attr_floats(n, "area_range", area, 2);
  kh_attr_int(n, "max_attempts", attempts);
  if (!v2) kh_attr_float(n, "min_object_covered", covered);
  return n;
}

static dfx_tensor *size_tensor(dfx_dtype t, int64_t h, int64_t w) {
  const int64_t d[1] = {3};
  dfx_tensor *x = dfx__tensor_alloc(t, 1, d, NULL);
  int64_t v[3] = {h, w, 3};
  for (int i = 0; i < 3; i++) switch (t) {
    case DFX_U8: ((uint8_t *)x->data)[i] = (uint8_t)v[i]; break;
    case DFX_I8: ((int8_t *)x->data)[i] = (int8_t)v[i]; break;
    case DFX_I16: ((int16_t *)x->data)[i] = (int16_t)v[i]; break;
    case DFX_I32: ((int32_t *)x->data)[i] = (int32_t)v[i]; break;
    default: ((int64_t *)x->data)[i] = v[i]; break;
    }
  return x;
}

/* Runs the node once (a fresh step); the node's state lives only for the
 * call, so each call starts the seeded stream afresh. */
static dfx_code run1(dfx_node *n, int v2, dfx_dtype t, int64_t h, int64_t w, const float *boxes, int nb, float covered,
                     crop *out) {
  const int64_t bd[3] = {1, nb, 4};
  dfx_tensor *in[3] = {size_tensor(t, h, w), kh_f32(3, bd, boxes), kh_scalar_f32(covered)}, *o[3] = {0};
  int no = 0;
  dfx_code c = kh_run(n, in, v2 ? 3 : 2, o, &no, err, sizeof err);
  if (c == DFX_OK) {
    cr_assert_eq(o[0]->dtype, t);
    for (int i = 0; i < 3; i++) {
      out->begin[i] = dfx__tensor_get_i64(o[0], i);
      out->size[i] = dfx__tensor_get_i64(o[1], i);
    }
    if (t == DFX_U8) out->size[2] = (int8_t)out->size[2]; /* T(-1) wraps to 255 */
    memcpy(out->box, o[2]->data, sizeof out->box);
    cr_assert(o[2]->ndims == 3 && o[2]->dims[0] == 1 && o[2]->dims[1] == 1 && o[2]->dims[2] == 4);
  }
  for (int i = 0; i < 3; i++) dfx__tensor_unref(in[i]), dfx__tensor_unref(o[i]);
  return c;
}

/* The pixel rectangle of a normalised box, as the op truncates it. */
static void box_px(const float *b, int64_t h, int64_t w, int64_t r[4]) {
  r[0] = (int64_t)(b[0] * (float)h), r[1] = (int64_t)(b[1] * (float)w);
  r[2] = (int64_t)(b[2] * (float)h), r[3] = (int64_t)(b[3] * (float)w);
}

static double covered_frac(const crop *c, const int64_t r[4]) {
  double area = (double)(r[2] - r[0]) * (double)(r[3] - r[1]);
  if (area < 1) return -1;
  double iy = fmin(c->begin[0] + c->size[0], r[2]) - fmax(c->begin[0], r[0]);
  double ix = fmin(c->begin[1] + c->size[1], r[3]) - fmax(c->begin[1], r[1]);
  return iy < 0 || ix < 0 ? 0 : iy * ix / area;
}

static void check_props(const crop *c, int64_t h, int64_t w, const float *boxes, int nb, float ar0, float ar1,
                        float a0, float a1, float covered, int *whole) {
  cr_assert(c->begin[2] == 0 && c->size[2] == -1, "channels: begin %lld size %lld", (long long)c->begin[2],
            (long long)c->size[2]);
  cr_assert(c->begin[0] >= 0 && c->begin[1] >= 0 && c->size[0] > 0 && c->size[1] > 0);
  cr_assert(c->begin[0] + c->size[0] <= h && c->begin[1] + c->size[1] <= w, "crop outside the image");
  cr_expect(c->box[0] == (float)c->begin[0] / (float)h && c->box[1] == (float)c->begin[1] / (float)w &&
                c->box[2] == (float)(c->begin[0] + c->size[0]) / (float)h &&
                c->box[3] == (float)(c->begin[1] + c->size[1]) / (float)w,
            "bboxes disagree with begin/size");
  *whole = c->begin[0] == 0 && c->begin[1] == 0 && c->size[0] == h && c->size[1] == w;
  if (*whole) return; /* the fallback, or a crop that happens to be everything */
  double frac = (double)(c->size[0] * c->size[1]) / (double)(h * w);
  cr_expect(frac >= a0 * (1 - 1e-6) && frac <= a1 * (1 + 1e-6), "area fraction %g outside [%g, %g]", frac, (double)a0,
            (double)a1);
  /* width = round(height * ratio): the ratio is off by at most half a pixel. */
  double ratio = (double)c->size[1] / (double)c->size[0], slack = 0.5 / (double)c->size[0] + 1e-6;
  cr_expect(ratio >= ar0 - slack && ratio <= ar1 + slack, "aspect %g outside [%g, %g]", ratio, (double)ar0,
            (double)ar1);
  int ok = 0;
  for (int i = 0; i < nb; i++) {
    int64_t r[4];
    box_px(boxes + 4 * i, h, w, r);
    if (covered_frac(c, r) >= covered - 1e-6) ok = 1;
  }
  if (nb == 0) ok = 1;
  cr_expect(ok, "no box covered by %g", (double)covered);
}

Test(sample_bbox, constraints_hold_over_many_seeds) {
  const float boxes[8] = {0.1f, 0.2f, 0.6f, 0.7f, 0.5f, 0.5f, 0.9f, 0.95f};
  static const struct {
    float ar0, ar1, a0, a1, cov;
    int h, w;
  } cfg[] = {{0.75f, 1.33f, 0.05f, 1.0f, 0.1f, 100, 120},
             {0.5f, 2.0f, 0.3f, 0.6f, 0.5f, 64, 48},
             {1.0f, 1.0f, 0.1f, 0.2f, 0.0f, 37, 91},
             {0.2f, 5.0f, 0.01f, 0.9f, 0.9f, 300, 200}};
  for (size_t k = 0; k < sizeof cfg / sizeof cfg[0]; k++) {
    int wholes = 0;
    for (int seed = 1; seed <= 60; seed++) {
      int v2 = seed & 1;
      dfx_node *n = sb_node(v2, DFX_I32, seed, seed * 7, cfg[k].ar0, cfg[k].ar1, cfg[k].a0, cfg[k].a1, 100, cfg[k].cov);
      crop c;
      cr_assert_eq(run1(n, v2, DFX_I32, cfg[k].h, cfg[k].w, boxes, 2, cfg[k].cov, &c), DFX_OK, "%s", err);
      int whole;
      check_props(&c, cfg[k].h, cfg[k].w, boxes, 2, cfg[k].ar0, cfg[k].ar1, cfg[k].a0, cfg[k].a1, cfg[k].cov, &whole);
      wholes += whole;
      kh_node_free(n);
    }
    cr_expect(wholes < 30, "config %zu: %d of 60 runs fell back to the whole image", k, wholes);
  }
}

Test(sample_bbox, impossible_constraints_fall_back_to_the_whole_image) {
  /* Coverage 2 is unreachable: every attempt fails. */
  const float boxes[4] = {0.4f, 0.4f, 0.6f, 0.6f};
  for (int v2 = 0; v2 < 2; v2++) {
    dfx_node *n = sb_node(v2, DFX_I64, 3, 4, 0.75f, 1.33f, 0.05f, 0.5f, 5, 2.0f);
    crop c;
    cr_assert_eq(run1(n, v2, DFX_I64, 50, 40, boxes, 1, 2.0f, &c), DFX_OK, "%s", err);
    cr_expect(c.begin[0] == 0 && c.begin[1] == 0 && c.size[0] == 50 && c.size[1] == 40, "got %lldx%lld at %lld,%lld",
              (long long)c.size[0], (long long)c.size[1], (long long)c.begin[0], (long long)c.begin[1]);
    cr_expect(c.box[0] == 0 && c.box[1] == 0 && c.box[2] == 1 && c.box[3] == 1);
    kh_node_free(n);
  }
  /* An aspect ratio no crop of that area can have in a 1-pixel-high image. */
  dfx_node *n = sb_node(1, DFX_I32, 5, 6, 50.0f, 60.0f, 0.9f, 1.0f, 10, 0);
  crop c;
  cr_assert_eq(run1(n, 1, DFX_I32, 1, 20, boxes, 1, 0.0f, &c), DFX_OK, "%s", err);
  cr_expect(c.size[0] == 1 && c.size[1] == 20);
  kh_node_free(n);
}

Test(sample_bbox, every_dtype_and_no_boxes) {
  const dfx_dtype types[] = {DFX_U8, DFX_I8, DFX_I16, DFX_I32, DFX_I64};
  for (int ti = 0; ti < 5; ti++) {
    dfx_node *n = sb_node(1, types[ti], 11, 12, 0.75f, 1.33f, 0.05f, 1.0f, 100, 0.1f);
    kh_attr_bool(n, "use_image_if_no_bounding_boxes", 1);
    crop c;
    cr_assert_eq(run1(n, 1, types[ti], 100, 90, NULL, 0, 0.1f, &c), DFX_OK, "%s: %s", dfx__dtype_tf_name(types[ti]), err);
    int whole;
    check_props(&c, 100, 90, NULL, 0, 0.75f, 1.33f, 0.05f, 1.0f, 0.1f, &whole);
    kh_node_free(n);
  }
}

Test(sample_bbox, seeds_repeat_and_runs_advance) {
  const float boxes[4] = {0.1f, 0.1f, 0.9f, 0.9f};
  crop a, b, c;
  dfx_node *n = sb_node(1, DFX_I32, 42, 7, 0.5f, 2.0f, 0.05f, 1.0f, 100, 0);
  cr_assert_eq(run1(n, 1, DFX_I32, 1000, 1000, boxes, 1, 0.0f, &a), DFX_OK, "%s", err);
  cr_assert_eq(run1(n, 1, DFX_I32, 1000, 1000, boxes, 1, 0.0f, &b), DFX_OK, "%s", err);
  cr_expect(memcmp(&a, &b, sizeof a) == 0, "the same seeds in a fresh kernel give the same crop");
  kh_node_free(n);
  n = sb_node(1, DFX_I32, 43, 7, 0.5f, 2.0f, 0.05f, 1.0f, 100, 0);
  cr_assert_eq(run1(n, 1, DFX_I32, 1000, 1000, boxes, 1, 0.0f, &c), DFX_OK, "%s", err);
  cr_expect(memcmp(&a, &c, sizeof a) != 0, "another seed gives another crop");
  kh_node_free(n);
}

static dfx_code bad(dfx_node *n, int v2, int64_t h, int64_t w, const float *boxes, int nb, float cov) {
  crop c;
  dfx_code code = run1(n, v2, DFX_I32, h, w, boxes, nb, cov, &c);
  kh_node_free(n);
  return code;
}

Test(sample_bbox, errors) {
  const float ok[4] = {0, 0, 1, 1}, out_of_range[4] = {0, 0, 1.5f, 1};
  cr_expect_eq(bad(sb_node(1, DFX_I32, 1, 1, 0.75f, 1.33f, 0.05f, 1, 100, 0), 1, 10, 10, out_of_range, 1, 0.1f),
               DFX_EINVAL);
  cr_expect(strstr(err, "All bounding box coordinates must be in [0.0, 1.0]: 1.5"), "%s", err);
  cr_expect_eq(bad(sb_node(1, DFX_I32, 1, 1, 0.75f, 1.33f, 0.05f, 1, 100, 0), 1, 10, 10, NULL, 0, 0.1f), DFX_EINVAL);
  cr_expect(strstr(err, "use_image_if_no_bounding_boxes"), "%s", err);
  cr_expect_eq(bad(sb_node(1, DFX_I32, 1, 1, 0.75f, 1.33f, 0.05f, 1, 100, 0), 1, 10, 10, ok, 1, -0.5f), DFX_EINVAL);
  cr_expect(strstr(err, "Min object covered must be non-negative"), "%s", err);
  cr_expect_eq(bad(sb_node(1, DFX_I32, 1, 1, 0.75f, 1.33f, 0.05f, 1, 100, 0), 1, -5, 10, ok, 1, 0.1f), DFX_EINVAL);
  cr_expect(strstr(err, "image height cannot be >= int32 max"), "%s", err);
  cr_expect_eq(bad(sb_node(1, DFX_I32, 1, 1, 0.75f, 1.33f, 0.05f, 1, 100, 0), 1, 10, 3000000000LL, ok, 1, 0.1f),
               DFX_EINVAL);
  cr_expect_eq(bad(sb_node(1, DFX_I32, 1, 1, 0.0f, 1.33f, 0.05f, 1, 100, 0), 1, 10, 10, ok, 1, 0.1f), DFX_EINVAL);
  cr_expect(strstr(err, "Aspect ratio range must be non-negative"), "%s", err);
  cr_expect_eq(bad(sb_node(1, DFX_I32, 1, 1, 0.75f, 1.33f, 0.05f, 1.5f, 100, 0), 1, 10, 10, ok, 1, 0.1f), DFX_EINVAL);
  cr_expect(strstr(err, "Area range must be less then or equal to 1.0"), "%s", err);
  cr_expect_eq(bad(sb_node(1, DFX_I32, 1, 1, 0.75f, 1.33f, 0, 1, 100, 0), 1, 10, 10, ok, 1, 0.1f), DFX_EINVAL);
  cr_expect(strstr(err, "Area range must be non-negative"), "%s", err);
  cr_expect_eq(bad(sb_node(1, DFX_I32, 1, 1, 0.75f, 1.33f, 0.05f, 1, 0, 0), 1, 10, 10, ok, 1, 0.1f), DFX_EINVAL);
  cr_expect(strstr(err, "Max attempts must be non-negative"), "%s", err);
  cr_expect_eq(bad(sb_node(0, DFX_I32, 1, 1, 0.75f, 1.33f, 0.05f, 1, 100, -1), 0, 10, 10, ok, 1, 0.1f), DFX_EINVAL);
  cr_expect(strstr(err, "Min object covered must be non-negative"), "%s", err);
}
