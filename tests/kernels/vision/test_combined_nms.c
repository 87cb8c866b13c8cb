/* test_combined_nms.c - CombinedNonMaxSuppression against a naive reference:
 * per class, repeatedly take the best remaining box above the score
 * threshold and drop it if it overlaps a kept one by more than the IoU
 * threshold; then repeatedly take the best kept detection over all classes.
 * Shared (q = 1) and per-class (q = classes) boxes, pad_per_class,
 * clip_boxes, both caps, thresholds, ties, empty batches, and the errors. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "kharness.h"

static char err[1024];

static void teardown(void) { dfx__tensor_cache_flush(); }
TestSuite(combined_nms, .fini = teardown, .timeout = 60);

static uint64_t rng = 0x2545F4914F6CDD1Dull;
static double rnd(void) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return (double)(rng >> 11) / (double)(1ull << 53);
}

/* Intersection over union of two boxes given by any two opposite corners. */
static double ref_iou(const float *a, const float *b) {
  double ay0 = fmin(a[0], a[2]), ay1 = fmax(a[0], a[2]), ax0 = fmin(a[1], a[3]), ax1 = fmax(a[1], a[3]);
  double by0 = fmin(b[0], b[2]), by1 = fmax(b[0], b[2]), bx0 = fmin(b[1], b[3]), bx1 = fmax(b[1], b[3]);
  double aa = (ay1 - ay0) * (ax1 - ax0), ab = (by1 - by0) * (bx1 - bx0);
  if (aa <= 0 || ab <= 0) return 0;
  double h = fmin(ay1, by1) - fmax(ay0, by0), w = fmin(ax1, bx1) - fmax(ax0, bx0);
  double in = (h > 0 ? h : 0) * (w > 0 ? w : 0);
  return in / (aa + ab - in);
}

typedef struct {
  int batch, anchors, q, classes, max_per_class, max_total, pad, clip;
  float iou, score;
} nms_case;

#define MAXK 64

static void run_case(const nms_case *k) {
  int64_t bd[4] = {k->batch, k->anchors, k->q, 4}, sd[3] = {k->batch, k->anchors, k->classes};
  int nb = k->batch * k->anchors * k->q * 4, ns = k->batch * k->anchors * k->classes;
  float boxes[4096], scores[1024];
  cr_assert(nb <= 4096 && ns <= 1024);
  for (int i = 0; i < nb; i += 4) {
    float y = (float)(rnd() * 1.2 - 0.1), x = (float)(rnd() * 1.2 - 0.1);
    float h = (float)(rnd() * 0.5), w = (float)(rnd() * 0.5);
    if (i % 12 == 4) boxes[i] = y + h, boxes[i + 1] = x + w, boxes[i + 2] = y, boxes[i + 3] = x; /* flipped */
    else boxes[i] = y, boxes[i + 1] = x, boxes[i + 2] = y + h, boxes[i + 3] = x + w;
  }
  for (int i = 0; i < ns; i++) scores[i] = (float)((int)(rnd() * 20) / 20.0); /* many ties */
  dfx_tensor *in[6] = {kh_f32(4, bd, boxes), kh_f32(3, sd, scores), kh_scalar_i32(k->max_per_class),
                       kh_scalar_i32(k->max_total), kh_scalar_f32(k->iou), kh_scalar_f32(k->score)};
  dfx_tensor *out[4] = {0};
  int no = 0;
  dfx_node *n = kh_node_new("CombinedNonMaxSuppression");
  kh_attr_bool(n, "pad_per_class", k->pad);
  kh_attr_bool(n, "clip_boxes", k->clip);
  cr_assert_eq(kh_run(n, in, 6, out, &no, err, sizeof err), DFX_OK, "%s", err);
  int rows = k->max_total;
  if (k->pad && k->max_per_class * k->classes < rows) rows = k->max_per_class * k->classes;
  cr_assert_eq(out[0]->dims[1], rows);
  cr_assert_eq(out[1]->dims[1], rows);
  const float *ob = out[0]->data, *os = out[1]->data, *oc = out[2]->data;
  const int32_t *ov = out[3]->data;
  for (int b = 0; b < k->batch; b++) {
    /* Per class: kept anchors in selection order. */
    int kept[16][MAXK], nk[16] = {0};
    for (int c = 0; c < k->classes; c++) {
      int used[MAXK] = {0};
      for (;;) {
        int best = -1;
        for (int a = 0; a < k->anchors; a++) {
          float s = scores[(b * k->anchors + a) * k->classes + c];
          if (used[a] || !(s > k->score)) continue;
          if (best < 0 || s > scores[(b * k->anchors + best) * k->classes + c]) best = a;
        }
        if (best < 0 || nk[c] >= k->max_per_class) break;
        used[best] = 1;
        const float *bb = boxes + ((b * k->anchors + best) * k->q + (k->q > 1 ? c : 0)) * 4;
        int ok = 1;
        for (int j = 0; j < nk[c]; j++)
          if (ref_iou(bb, boxes + ((b * k->anchors + kept[c][j]) * k->q + (k->q > 1 ? c : 0)) * 4) > k->iou) ok = 0;
        if (ok) kept[c][nk[c]++] = best;
      }
    }
    /* Merge: best score first, then lower class, then earlier pick. */
    int taken[16] = {0}, r = 0;
    for (; r < rows; r++) {
      int bc = -1;
      for (int c = 0; c < k->classes; c++) {
        if (taken[c] >= nk[c]) continue;
        float s = scores[(b * k->anchors + kept[c][taken[c]]) * k->classes + c];
        if (bc < 0 || s > scores[(b * k->anchors + kept[bc][taken[bc]]) * k->classes + bc]) bc = c;
      }
      if (bc < 0) break;
      int a = kept[bc][taken[bc]++];
      const float *bb = boxes + ((b * k->anchors + a) * k->q + (k->q > 1 ? bc : 0)) * 4;
      float ws = scores[(b * k->anchors + a) * k->classes + bc];
      cr_expect_eq(os[b * rows + r], ws, "batch %d row %d score %g want %g", b, r, (double)os[b * rows + r], (double)ws);
      cr_expect_eq(oc[b * rows + r], (float)bc, "batch %d row %d class %g want %d", b, r, (double)oc[b * rows + r], bc);
      for (int j = 0; j < 4; j++) {
        float want = k->clip ? fminf(fmaxf(bb[j], 0), 1) : bb[j];
        cr_expect_eq(ob[(b * rows + r) * 4 + j], want, "batch %d row %d coord %d", b, r, j);
      }
    }
    cr_expect_eq(ov[b], r, "batch %d: %d valid, want %d", b, ov[b], r);
    for (int z = r; z < rows; z++) {
      cr_expect(os[b * rows + z] == 0 && oc[b * rows + z] == 0, "padding row %d", z);
      for (int j = 0; j < 4; j++) cr_expect(ob[(b * rows + z) * 4 + j] == 0);
    }
  }
  for (int i = 0; i < 6; i++) dfx__tensor_unref(in[i]);
  for (int i = 0; i < 4; i++) dfx__tensor_unref(out[i]);
  kh_node_free(n);
}

Test(combined_nms, against_reference) {
  static const nms_case cases[] = {
      {2, 20, 1, 3, 5, 10, 0, 1, 0.5f, 0.1f},  {2, 20, 3, 3, 5, 10, 0, 1, 0.5f, 0.1f},
      {1, 30, 1, 4, 3, 100, 1, 1, 0.3f, 0.0f}, {1, 30, 4, 4, 3, 100, 0, 0, 0.3f, -1.0f},
      {3, 10, 2, 2, 20, 4, 1, 0, 0.7f, 0.5f},  {1, 40, 1, 1, 40, 40, 0, 1, 0.0f, 0.2f},
      {1, 40, 1, 2, 40, 40, 0, 1, 1.0f, 0.0f}, {2, 5, 1, 5, 1, 3, 1, 1, 0.5f, 0.9f},
      {0, 5, 1, 5, 1, 3, 0, 1, 0.5f, 0.9f},    {1, 0, 1, 3, 2, 6, 1, 1, 0.5f, 0.0f},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_case(&cases[i]);
}

Test(combined_nms, documented_example) {
  /* Two overlapping boxes of class 0 (IoU 0.81) and one apart; class 1 on the
   * third box only: [box0 c0 0.9], [box2 c1 0.8], [box2 c0 0.7]. */
  const int64_t bd[] = {1, 3, 1, 4}, sd[] = {1, 3, 2};
  const float boxes[] = {0, 0, 1, 1, 0, 0, 0.9f, 0.9f, 0, 2, 1, 3};
  const float scores[] = {0.9f, 0.0f, 0.85f, 0.0f, 0.7f, 0.8f};
  dfx_tensor *in[6] = {kh_f32(4, bd, boxes), kh_f32(3, sd, scores), kh_scalar_i32(5), kh_scalar_i32(5),
                       kh_scalar_f32(0.5f), kh_scalar_f32(0.1f)};
  dfx_tensor *out[4] = {0};
  int no = 0;
  dfx_node *n = kh_node_new("CombinedNonMaxSuppression");
  kh_attr_bool(n, "clip_boxes", false);
  cr_assert_eq(kh_run(n, in, 6, out, &no, err, sizeof err), DFX_OK, "%s", err);
  const float *os = out[1]->data, *oc = out[2]->data, *ob = out[0]->data;
  cr_expect_eq(*(int32_t *)out[3]->data, 3);
  cr_expect(os[0] == 0.9f && oc[0] == 0 && os[1] == 0.8f && oc[1] == 1 && os[2] == 0.7f && oc[2] == 0);
  cr_expect(ob[4 + 1] == 2 && ob[4 + 3] == 3, "class-1 box is the third box, not clipped");
  cr_expect(os[3] == 0 && os[4] == 0);
  for (int i = 0; i < 6; i++) dfx__tensor_unref(in[i]);
  for (int i = 0; i < 4; i++) dfx__tensor_unref(out[i]);
  kh_node_free(n);
}

static dfx_code run_bad(const int64_t *bd, int bnd, const int64_t *sd, int snd, int mpc, int mt, float iou,
                        dfx_tensor *mpc_t) {
  float z[64] = {0};
  dfx_tensor *in[6] = {kh_f32(bnd, bd, z), kh_f32(snd, sd, z), mpc_t ? mpc_t : kh_scalar_i32(mpc), kh_scalar_i32(mt),
                       kh_scalar_f32(iou), kh_scalar_f32(0)};
  dfx_tensor *out[4] = {0};
  int no = 0;
  dfx_node *n = kh_node_new("CombinedNonMaxSuppression");
  dfx_code c = kh_run(n, in, 6, out, &no, err, sizeof err);
  for (int i = 0; i < 6; i++) dfx__tensor_unref(in[i]);
  for (int i = 0; i < 4; i++) dfx__tensor_unref(out[i]);
  kh_node_free(n);
  return c;
}

Test(combined_nms, errors) {
  const int64_t bd[] = {1, 2, 1, 4}, sd[] = {1, 2, 3}, bad_q[] = {1, 2, 2, 4}, bad5[] = {1, 2, 1, 5};
  const int64_t sd2[] = {2, 2, 3}, sd_n[] = {1, 3, 3}, v[] = {1};
  cr_expect_eq(run_bad(bd, 3, sd, 3, 1, 1, 0.5f, NULL), DFX_EINVAL);
  cr_expect(strstr(err, "boxes must be 4-D"), "%s", err);
  cr_expect_eq(run_bad(bd, 4, sd, 2, 1, 1, 0.5f, NULL), DFX_EINVAL);
  cr_expect(strstr(err, "scores must be 3-D"), "%s", err);
  cr_expect_eq(run_bad(bd, 4, sd2, 3, 1, 1, 0.5f, NULL), DFX_EINVAL);
  cr_expect(strstr(err, "same batch size"), "%s", err);
  cr_expect_eq(run_bad(bd, 4, sd, 3, 0, 1, 0.5f, NULL), DFX_EINVAL);
  cr_expect(strstr(err, "max_size_per_class must be positive"), "%s", err);
  cr_expect_eq(run_bad(bd, 4, sd, 3, 1, 0, 0.5f, NULL), DFX_EINVAL);
  cr_expect(strstr(err, "max_total_size must be > 0"), "%s", err);
  cr_expect_eq(run_bad(bd, 4, sd, 3, 1, 1, 1.5f, NULL), DFX_EINVAL);
  cr_expect(strstr(err, "iou_threshold must be in [0, 1]"), "%s", err);
  cr_expect_eq(run_bad(bad_q, 4, sd, 3, 1, 1, 0.5f, NULL), DFX_EINVAL);
  cr_expect(strstr(err, "third dimension of boxes must be either 1 or 3"), "%s", err);
  cr_expect_eq(run_bad(bad5, 4, sd, 3, 1, 1, 0.5f, NULL), DFX_EINVAL);
  cr_expect(strstr(err, "4 columns"), "%s", err);
  cr_expect_eq(run_bad(bd, 4, sd_n, 3, 1, 1, 0.5f, NULL), DFX_EINVAL);
  cr_expect(strstr(err, "scores has incompatible shape"), "%s", err);
  const int32_t one = 1;
  cr_expect_eq(run_bad(bd, 4, sd, 3, 1, 1, 0.5f, kh_i32(1, v, &one)), DFX_EINVAL);
  cr_expect(strstr(err, "max_size_per_class must be 0-D"), "%s", err);
}

Test(combined_nms, huge_max_total_is_refused) {
  const int64_t bd[] = {1, 2, 1, 4}, sd[] = {1, 2, 3};
  dfx_set_max_tensor_bytes((size_t)1 << 30);
  cr_expect_eq(run_bad(bd, 4, sd, 3, 1, 2147483647, 0.5f, NULL), DFX_ELIMIT, "%s", err);
}
