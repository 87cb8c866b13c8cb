/* nms.c - NonMaxSuppression v1..v5: greedy selection by score with TF's
 * order (higher score first, then lower index), IoU over corner-normalised
 * boxes, score threshold, soft-NMS (Gaussian decay, V5) and padding (V4/V5).
 * Half inputs are computed in float. The selection does up to boxes x
 * max_output_size IoUs, so it polls for cancellation. */
#include "convutil.h"

typedef struct cand {
  int64_t idx;
  float score;
  int64_t begin; /* selected boxes already compared against */
} cand;

/* a before b: higher score, then lower index. */
static int before(const cand *a, const cand *b) {
  return a->score > b->score || (a->score == b->score && a->idx < b->idx);
}

static void heap_push(cand *h, int64_t *n, cand c) {
  int64_t i = (*n)++;
  while (i > 0) {
    int64_t p = (i - 1) / 2;
    if (!before(&c, &h[p])) break;
    h[i] = h[p];
    i = p;
  }
  h[i] = c;
}

static cand heap_pop(cand *h, int64_t *n) {
  cand top = h[0], last = h[--(*n)];
  int64_t i = 0;
  for (;;) {
    int64_t l = 2 * i + 1, best = i;
    const cand *bc = &last;
    if (l < *n && before(&h[l], bc)) best = l, bc = &h[l];
    if (l + 1 < *n && before(&h[l + 1], bc)) best = l + 1;
    if (best == i) break;
    h[i] = h[best];
    i = best;
  }
  if (*n > 0) h[i] = last;
  return top;
}

static float iou(const float *b, int64_t i, int64_t j) {
  const float *p = b + 4 * i, *q = b + 4 * j;
  float ymin_i = fminf(p[0], p[2]), xmin_i = fminf(p[1], p[3]), ymax_i = fmaxf(p[0], p[2]), xmax_i = fmaxf(p[1], p[3]);
  float ymin_j = fminf(q[0], q[2]), xmin_j = fminf(q[1], q[3]), ymax_j = fmaxf(q[0], q[2]), xmax_j = fmaxf(q[1], q[3]);
  float area_i = (ymax_i - ymin_i) * (xmax_i - xmin_i), area_j = (ymax_j - ymin_j) * (xmax_j - xmin_j);
  if (area_i <= 0 || area_j <= 0) return 0;
  float iymin = fmaxf(ymin_i, ymin_j), ixmin = fmaxf(xmin_i, xmin_j);
  float iymax = fminf(ymax_i, ymax_j), ixmax = fminf(xmax_i, xmax_j);
  float inter = fmaxf(iymax - iymin, 0.0f) * fmaxf(ixmax - ixmin, 0.0f);
  return inter / (area_i + area_j - inter);
}

static dfx_code input_scalar(dfx_kctx *ctx, int i, const char *what, float *v) {
  const dfx_tensor *t = ctx->in[i];
  if (t->ndims != 0) {
    char b[96];
    return dfx__kctx_fail(ctx, DFX_EINVAL, "%s must be 0-D, got shape %s", what, DFX_SHAPE_STR(t, b));
  }
  *v = cu_get_f(t, 0);
  return DFX_OK;
}

/* version 1..5; pad: V4/V5 pad_to_max_output_size. */
static dfx_code nms(dfx_kctx *ctx, int version) {
  const dfx_tensor *boxes = ctx->in[0], *scores = ctx->in[1], *mo = ctx->in[2];
  char b[96];
  if (boxes->ndims != 2) return dfx__kctx_fail(ctx, DFX_EINVAL, "boxes must be 2-D%s", DFX_SHAPE_STR(boxes, b));
  int64_t nb = boxes->dims[0];
  if (boxes->dims[1] != 4) return dfx__kctx_fail(ctx, DFX_EINVAL, "boxes must have 4 columns");
  if (scores->ndims != 1) return dfx__kctx_fail(ctx, DFX_EINVAL, "scores must be 1-D%s", DFX_SHAPE_STR(scores, b));
  if (scores->dims[0] != nb)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "scores has incompatible shape");
  if (mo->ndims != 0)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "max_output_size must be 0-D, got shape %s", DFX_SHAPE_STR(mo, b));
  int64_t max_out = dfx__tensor_get_i64(mo, 0);
  float thr = 0.5f, score_thr = -INFINITY, sigma = 0;
  if (version == 1) {
    thr = dfx__attr_float(ctx->node, "iou_threshold", 0.5f); /* checked at init */
  } else if (input_scalar(ctx, 3, "iou_threshold", &thr)) {
    return DFX_EINVAL;
  }
  if (version >= 3 && input_scalar(ctx, 4, "score_threshold", &score_thr)) return DFX_EINVAL;
  if (version == 5 && input_scalar(ctx, 5, "soft_nms_sigma", &sigma)) return DFX_EINVAL;
  /* TF 1.x checks the range only in V1/V2 (V3+ graphs with other values run). */
  if (version == 2 && !(thr >= 0 && thr <= 1))
    return dfx__kctx_fail(ctx, DFX_EINVAL, "iou_threshold must be in [0, 1]");
  if (!(sigma >= 0)) return dfx__kctx_fail(ctx, DFX_EINVAL, "soft_nms_sigma must be non-negative");
  if (max_out < 0) return dfx__kctx_fail(ctx, DFX_EINVAL, "max_output_size must be non-negative");
  int pad = version >= 4 && dfx__attr_bool(ctx->node, "pad_to_max_output_size", false);
  int soft = sigma > 0;
  float scale = soft ? -0.5f / sigma : 0;

  float *bx = cu_load(boxes, 0), *sc = cu_load(scores, 0);
  cand *heap = dfx__malloc(sizeof(cand) * (size_t)(nb ? nb : 1));
  int64_t cap = max_out < nb ? max_out : nb;
  int64_t *sel = dfx__malloc(sizeof(int64_t) * (size_t)(cap ? cap : 1));
  float *sel_sc = dfx__malloc(sizeof(float) * (size_t)(cap ? cap : 1));
  dfx_code code = DFX_OK;
  if (!bx || !sc || !heap || !sel || !sel_sc) {
    code = dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory");
    goto done;
  }
  int64_t hn = 0, ns = 0, work = 0;
  for (int64_t i = 0; i < nb; i++)
    if (sc[i] > score_thr) heap_push(heap, &hn, (cand){i, sc[i], 0});
  while (ns < max_out && hn > 0) {
    cand c = heap_pop(heap, &hn);
    if ((code = cu_tick(ctx, &work, ns - c.begin + 1)) != DFX_OK) goto done;
    float orig = c.score;
    int hard = 0;
    for (int64_t j = ns - 1; j >= c.begin; j--) {
      float sim = iou(bx, c.idx, sel[j]);
      c.score *= sim <= thr ? expf(scale * sim * sim) : 0.0f;
      if (!soft && sim > thr) {
        hard = 1;
        break;
      }
      if (c.score <= score_thr) break;
    }
    c.begin = ns;
    if (hard) continue;
    if (c.score == orig) {
      sel[ns] = c.idx;
      sel_sc[ns++] = c.score;
    } else if (c.score > score_thr) {
      heap_push(heap, &hn, c);
    }
  }
  int64_t n_out = pad ? max_out : ns;
  dfx_tensor *ti = dfx__kctx_alloc(ctx, 0, DFX_I32, 1, &n_out);
  if (!ti) {
    code = DFX_ENOMEM;
    goto done;
  }
  for (int64_t i = 0; i < n_out; i++) ((int32_t *)ti->data)[i] = i < ns ? (int32_t)sel[i] : 0;
  int k = 1;
  if (version == 5) { /* scores of the selected boxes, then zeros */
    dfx_tensor *ts = dfx__kctx_alloc(ctx, k++, (dfx_dtype)scores->dtype, 1, &n_out);
    if (!ts) {
      code = DFX_ENOMEM;
      goto done;
    }
    for (int64_t i = 0; i < n_out; i++) {
      float v = i < ns ? sel_sc[i] : 0;
      if (ts->dtype == DFX_F16)
        ((uint16_t *)ts->data)[i] = dfx__f32_to_f16(v);
      else
        ((float *)ts->data)[i] = v;
    }
  }
  if (version >= 4) {
    int32_t v = (int32_t)ns;
    dfx_tensor *tv = dfx__kctx_alloc(ctx, k, DFX_I32, 0, NULL);
    if (!tv) {
      code = DFX_ENOMEM;
      goto done;
    }
    *(int32_t *)tv->data = v;
  }
done:
  dfx__free(bx), dfx__free(sc), dfx__free(heap), dfx__free(sel), dfx__free(sel_sc);
  return code;
}

static dfx_code nms1_init(const dfx_node *n, void **state, dfx_status *st) {
  (void)state;
  float thr = dfx__attr_float(n, "iou_threshold", 0.5f);
  if (!(thr >= 0 && thr <= 1))
    return dfx__status_set(st, DFX_EINVAL, "iou_threshold = %g: it must be in [0, 1]", (double)thr);
  return DFX_OK;
}

static dfx_code nms1(dfx_kctx *ctx) { return nms(ctx, 1); }
static dfx_code nms2(dfx_kctx *ctx) { return nms(ctx, 2); }
static dfx_code nms3(dfx_kctx *ctx) { return nms(ctx, 3); }
static dfx_code nms4(dfx_kctx *ctx) { return nms(ctx, 4); }
static dfx_code nms5(dfx_kctx *ctx) { return nms(ctx, 5); }

#define NMS_T "T: {half, float}; T_threshold: {half, float}"

static const dfx_kernel_def kernels[] = {
    {"NonMaxSuppression", "", nms1, 0, nms1_init, NULL}, /* no type attrs: float only */
    {"NonMaxSuppressionV2", NMS_T, nms2, 0, NULL, NULL},
    {"NonMaxSuppressionV3", NMS_T, nms3, 0, NULL, NULL},
    {"NonMaxSuppressionV4", NMS_T, nms4, 0, NULL, NULL},
    {"NonMaxSuppressionV5", "T: {half, float}", nms5, 0, NULL, NULL},
    {NULL}};

void dfx__kernels_conv_nms(dfx_registry *r);
void dfx__kernels_conv_nms(dfx_registry *r) { dfx__kernels_add(r, kernels); }
