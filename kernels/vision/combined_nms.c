/* combined_nms.c - CombinedNonMaxSuppression: per batch, greedy NMS for each
 * class separately (boxes [batch, anchors, q, 4] with q 1 = shared boxes or
 * q = classes; scores [batch, anchors, classes]), then the best detections
 * over all classes, capped per class and in total, optionally clipped to
 * [0, 1] and padded with zeros. TF leaves the order of equal scores to its
 * heap and std::sort; here ties go to the lower anchor within a class and
 * the lower class (then rank) across classes. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "kernel.h"

typedef struct det {
  int64_t box;  /* anchor index */
  float score;
  int64_t cls;
  int64_t pos;  /* class * per_class + rank: the tie order across classes */
} det;

/* TF's IoU: corners in any order, empty boxes overlap nothing. */
static float iou(const float *p, const float *q) {
  float ymin_i = fminf(p[0], p[2]), xmin_i = fminf(p[1], p[3]), ymax_i = fmaxf(p[0], p[2]), xmax_i = fmaxf(p[1], p[3]);
  float ymin_j = fminf(q[0], q[2]), xmin_j = fminf(q[1], q[3]), ymax_j = fmaxf(q[0], q[2]), xmax_j = fmaxf(q[1], q[3]);
  float area_i = (ymax_i - ymin_i) * (xmax_i - xmin_i), area_j = (ymax_j - ymin_j) * (xmax_j - xmin_j);
  if (area_i <= 0 || area_j <= 0) return 0;
  float inter = fmaxf(fminf(ymax_i, ymax_j) - fmaxf(ymin_i, ymin_j), 0.0f) *
                fmaxf(fminf(xmax_i, xmax_j) - fmaxf(xmin_i, xmin_j), 0.0f);
  return inter / (area_i + area_j - inter);
}

/* Higher score first, then lower pos. */
static int det_cmp(const void *a, const void *b) {
  const det *x = a, *y = b;
  if (x->score != y->score) return x->score > y->score ? -1 : 1;
  return (x->pos > y->pos) - (x->pos < y->pos);
}

static dfx_code scalar_in(dfx_kctx *ctx, int i, const char *what, double *v) {
  const dfx_tensor *t = ctx->in[i];
  if (t->ndims != 0) {
    char b[96];
    return dfx__kctx_fail(ctx, DFX_EINVAL, "%s must be 0-D, got shape %s", what, DFX_SHAPE_STR(t, b));
  }
  *v = dfx__tensor_get_f64(t, 0);
  return DFX_OK;
}

/* Greedy NMS of one class in one batch into out[0..*n): candidates above the
 * threshold in score order, each kept unless it overlaps a kept one by more
 * than iou_thr. cand is scratch for `anchors` entries. */
static void nms_class(const float *boxes, const float *scores, int64_t anchors, int64_t q, int64_t classes, int64_t c,
                      int64_t per_class, float score_thr, float iou_thr, det *cand, det *out, int64_t *n) {
  int64_t nc = 0, cb = q > 1 ? c : 0;
  for (int64_t i = 0; i < anchors; i++) {
    float s = scores[i * classes + c];
    if (s > score_thr) cand[nc++] = (det){i, s, c, i};
  }
  if (nc > 1) qsort(cand, (size_t)nc, sizeof *cand, det_cmp);
  int64_t k = 0;
  for (int64_t i = 0; i < nc && k < per_class; i++) {
    const float *bi = boxes + (cand[i].box * q + cb) * 4;
    bool keep = true;
    for (int64_t j = k - 1; j >= 0 && keep; j--) keep = !(iou(bi, boxes + (out[j].box * q + cb) * 4) > iou_thr);
    if (keep) out[k] = cand[i], out[k].pos = c * per_class + k, k++;
  }
  *n = k;
}

static dfx_code combined_nms(dfx_kctx *ctx) {
  const dfx_tensor *boxes = ctx->in[0], *scores = ctx->in[1];
  char b[96];
  if (boxes->ndims != 4) return dfx__kctx_fail(ctx, DFX_EINVAL, "boxes must be 4-D, got shape %s", DFX_SHAPE_STR(boxes, b));
  if (scores->ndims != 3)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "scores must be 3-D, got shape %s", DFX_SHAPE_STR(scores, b));
  if (boxes->dims[0] != scores->dims[0])
    return dfx__kctx_fail(ctx, DFX_EINVAL, "boxes and scores must have same batch size");
  double mpc = 0, mts = 0, iou_d = 0, sc_d = 0;
  dfx_code c;
  if ((c = scalar_in(ctx, 2, "max_size_per_class", &mpc)) != DFX_OK) return c;
  if (mpc <= 0) return dfx__kctx_fail(ctx, DFX_EINVAL, "max_size_per_class must be positive");
  if ((c = scalar_in(ctx, 3, "max_total_size", &mts)) != DFX_OK) return c;
  if (mts <= 0) return dfx__kctx_fail(ctx, DFX_EINVAL, "max_total_size must be > 0");
  if ((c = scalar_in(ctx, 4, "iou_threshold", &iou_d)) != DFX_OK) return c;
  if ((c = scalar_in(ctx, 5, "score_threshold", &sc_d)) != DFX_OK) return c;
  if (!(iou_d >= 0 && iou_d <= 1)) return dfx__kctx_fail(ctx, DFX_EINVAL, "iou_threshold must be in [0, 1]");
  int64_t batch = boxes->dims[0], anchors = boxes->dims[1], q = boxes->dims[2], classes = scores->dims[2];
  if (q != 1 && q != classes)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "third dimension of boxes must be either 1 or %lld", (long long)classes);
  if (boxes->dims[3] != 4) return dfx__kctx_fail(ctx, DFX_EINVAL, "boxes must have 4 columns");
  if (scores->dims[1] != anchors) return dfx__kctx_fail(ctx, DFX_EINVAL, "scores has incompatible shape");
  bool pad_per_class = dfx__attr_bool(ctx->node, "pad_per_class", false);
  bool clip = dfx__attr_bool(ctx->node, "clip_boxes", true);
  int64_t max_per_class = (int64_t)mpc, max_total = (int64_t)mts;
  int64_t per_class = max_per_class < anchors ? max_per_class : anchors;
  /* The output rows: max_total, or with pad_per_class at most
   * max_per_class * classes (capped at INT32_MAX as TF does). */
  int64_t rows = max_total;
  if (pad_per_class) {
    int64_t cap = INT32_MAX;
    if (classes == 0 || max_per_class <= INT32_MAX / classes) cap = max_per_class * classes;
    if (cap < rows) rows = cap;
  }
  int64_t ob[3] = {batch, rows, 4};
  int64_t oc3 = dfx__shape_count(3, ob);
  if (oc3 < 0 || (uint64_t)oc3 > dfx__tensor_limit() / 4)
    return dfx__kctx_fail(ctx, DFX_ELIMIT, "output of %lld x %lld detections is too large", (long long)batch,
                          (long long)rows);
  /* Scratch: one candidate per anchor and the kept ones of every class
   * (per_class <= anchors, so no more than a batch row of scores). */
  size_t slots = dfx__mul_size((size_t)per_class, (size_t)classes);
  if (batch == 0) slots = 0;
  if (dfx__mul_size(slots, sizeof(det)) > dfx__tensor_limit())
    return dfx__kctx_fail(ctx, DFX_ELIMIT, "%lld classes x %lld boxes is too large", (long long)classes,
                          (long long)per_class);
  dfx_tensor *ot = dfx__kctx_alloc(ctx, 0, DFX_F32, 3, ob);
  dfx_tensor *os = ot ? dfx__kctx_alloc(ctx, 1, DFX_F32, 2, ob) : NULL;
  dfx_tensor *oc = os ? dfx__kctx_alloc(ctx, 2, DFX_F32, 2, ob) : NULL;
  dfx_tensor *ov = oc ? dfx__kctx_alloc(ctx, 3, DFX_I32, 1, ob) : NULL;
  if (!ov) return DFX_ENOMEM;
  float *obx = ot->data, *osc = os->data, *ocl = oc->data;
  int32_t *ovd = ov->data;
  size_t nout = (size_t)(batch * rows);
  if (nout) {
    memset(obx, 0, nout * 4 * sizeof(float));
    memset(osc, 0, nout * sizeof(float));
    memset(ocl, 0, nout * sizeof(float));
  }
  det *cand = dfx__malloc(sizeof(det) * (size_t)(anchors && batch ? anchors : 1));
  det *all = dfx__malloc(sizeof(det) * (slots ? slots : 1));
  if (!cand || !all) {
    dfx__free(cand), dfx__free(all);
    return dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory for %lld candidates", (long long)anchors);
  }
  const float *bx = boxes->data, *sc = scores->data;
  for (int64_t bi = 0; bi < batch && c == DFX_OK; bi++) {
    const float *bb = bx + bi * anchors * q * 4, *sb = sc + bi * anchors * classes;
    int64_t n = 0;
    for (int64_t k = 0; k < classes && c == DFX_OK; k++) {
      int64_t got;
      nms_class(bb, sb, anchors, q, classes, k, per_class, (float)sc_d, (float)iou_d, cand, all + n, &got);
      n += got;
      c = dfx__kctx_poll(ctx);
    }
    if (c != DFX_OK) break;
    if (n > 1) qsort(all, (size_t)n, sizeof *all, det_cmp);
    int64_t keep = n < rows ? n : rows;
    ovd[bi] = (int32_t)keep;
    for (int64_t r = 0; r < keep; r++) {
      const float *src = bb + (all[r].box * q + (q > 1 ? all[r].cls : 0)) * 4;
      float *dst = obx + (bi * rows + r) * 4;
      for (int j = 0; j < 4; j++) dst[j] = clip ? fmaxf(fminf(src[j], 1.0f), 0.0f) : src[j];
      osc[bi * rows + r] = all[r].score;
      ocl[bi * rows + r] = (float)all[r].cls;
    }
  }
  dfx__free(cand), dfx__free(all);
  return c;
}

static const dfx_kernel_def kernels[] = {
    {"CombinedNonMaxSuppression", "", combined_nms, 0, NULL, NULL}, /* float only */
    {NULL}};

void dfx__kernels_vision_combined_nms(dfx_registry *r);
void dfx__kernels_vision_combined_nms(dfx_registry *r) { dfx__kernels_add(r, kernels); }
