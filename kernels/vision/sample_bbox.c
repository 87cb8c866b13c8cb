/* sample_bbox.c - SampleDistortedBoundingBox (V1: min_object_covered attr)
 * and V2 (an input): TF's crop sampler. Each of max_attempts draws an
 * aspect ratio, a height between the area range's bounds, and an offset;
 * the first crop that covers at least min_object_covered of some box wins,
 * else the whole image. Randomness is TF's: a Philox stream keyed by
 * seed/seed2 (misc/philox.h), max_attempts counters reserved per run,
 * read one uint32 at a time (SimplePhilox), integers drawn by rejection
 * (ExactUniformInt). Outputs begin/size for Slice ([y, x, 0], [h, w, -1])
 * and the crop as a normalised [1, 1, 4] box. */
#include <math.h>
#include <string.h>

#include "alloc.h"
#include "kernel.h"
#include "misc/philox.h"

typedef struct sdbb_state {
  rng_state *rng;
  float aspect[2], area[2], min_covered;
  int64_t max_attempts;
  bool use_image;
} sdbb_state;

typedef struct rect {
  int x0, y0, x1, y1;
} rect;

static float rect_area(rect r) { return (float)((r.x1 - r.x0) * (r.y1 - r.y0)); }

/* A uniform integer in [0, n): TF rejects the low values that would bias
 * the modulo. */
static uint32_t uniform_int(philox *g, uint32_t n) {
  if (n == 0) return philox_one(g) * n;
  if ((n & (n - 1)) == 0) return philox_one(g) & (n - 1);
  uint32_t rem = (UINT32_MAX % n) + 1, r;
  do r = philox_one(g);
  while (r < rem);
  return r % n;
}

/* One attempt: a crop of the given aspect ratio whose area lies in
 * [min_rel, max_rel] of the image, at a random offset; false when the
 * rounding leaves no such crop. */
static bool random_crop(int w, int h, float min_rel, float max_rel, float aspect, philox *g, rect *out) {
  if (max_rel <= 0.0f || aspect <= 0.0f || w <= 0 || h <= 0 || min_rel > max_rel) return false;
  float min_area = min_rel * (float)w * (float)h, max_area = max_rel * (float)w * (float)h;
  int ch = (int)lrintf(sqrtf(min_area / aspect));
  int max_h = (int)lrintf(sqrtf(max_area / aspect));
  if (lrintf((float)max_h * aspect) > w) {
    /* The largest height whose rounded width still fits. */
    max_h = (int)(((double)w + 0.5 - (double)0.0000001f) / (double)aspect);
    if (lrintf((float)max_h * aspect) > w) max_h -= 1;
  }
  if (max_h > h) max_h = h;
  if (ch >= max_h) ch = max_h;
  if (ch < max_h) ch += (int)uniform_int(g, (uint32_t)(max_h - ch + 1));
  int cw = (int)lrintf((float)ch * aspect);
  float area = (float)(cw * ch);
  if (area < min_area) { /* rounding: try one row taller, then one shorter */
    ch += 1;
    cw = (int)lrintf((float)ch * aspect);
    area = (float)(cw * ch);
  }
  if (area > max_area) {
    ch -= 1;
    cw = (int)lrintf((float)ch * aspect);
    area = (float)(cw * ch);
  }
  if (area < min_area || area > max_area || cw > w || ch > h || cw <= 0 || ch <= 0) return false;
  int y = ch < h ? (int)uniform_int(g, (uint32_t)(h - ch)) : 0;
  int x = cw < w ? (int)uniform_int(g, (uint32_t)(w - cw)) : 0;
  *out = (rect){x, y, x + cw, y + ch};
  return true;
}

static bool covers(rect crop, float min_covered, const rect *boxes, int64_t n) {
  if (rect_area(crop) < 1.0f) return false;
  for (int64_t i = 0; i < n; i++) {
    float a = rect_area(boxes[i]);
    if (a < 1.0f) continue;
    rect r = {crop.x0 > boxes[i].x0 ? crop.x0 : boxes[i].x0, crop.y0 > boxes[i].y0 ? crop.y0 : boxes[i].y0,
              crop.x1 < boxes[i].x1 ? crop.x1 : boxes[i].x1, crop.y1 < boxes[i].y1 ? crop.y1 : boxes[i].y1};
    float inter = r.x0 > r.x1 || r.y0 > r.y1 ? 0.0f : rect_area(r);
    if (inter / a >= min_covered) return true;
  }
  return false;
}

static void store_int(dfx_dtype t, void *p, int i, int64_t v) {
  switch (t) {
  case DFX_U8: ((uint8_t *)p)[i] = (uint8_t)v; break; /* T(-1) wraps, as in TF */
  case DFX_I8: ((int8_t *)p)[i] = (int8_t)v; break;
  case DFX_I16: ((int16_t *)p)[i] = (int16_t)v; break;
  case DFX_I32: ((int32_t *)p)[i] = (int32_t)v; break;
  default: ((int64_t *)p)[i] = v; break;
  }
}

static dfx_code sample(dfx_kctx *ctx, int v2) {
  sdbb_state *s = ctx->state;
  const dfx_tensor *isz = ctx->in[0], *bx = ctx->in[1];
  char b[96];
  if (isz->ndims != 1) return dfx__kctx_fail(ctx, DFX_EINVAL, "image_size must be 1-dimensional, got %s", DFX_SHAPE_STR(isz, b));
  if (isz->dims[0] != 3) return dfx__kctx_fail(ctx, DFX_EINVAL, "image_size must contain 3 elements, got %s", DFX_SHAPE_STR(isz, b));
  /* TF reads the sizes as uint64: negative ones fail the bound too. */
  uint64_t hr = (uint64_t)dfx__tensor_get_i64(isz, 0), wr = (uint64_t)dfx__tensor_get_i64(isz, 1);
  if (hr >= INT32_MAX) return dfx__kctx_fail(ctx, DFX_EINVAL, "image height cannot be >= int32 max");
  if (wr >= INT32_MAX) return dfx__kctx_fail(ctx, DFX_EINVAL, "image width cannot be >= int32 max");
  int h = (int)hr, w = (int)wr;
  if (bx->ndims != 3)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "input boxes must be 3-dimensional [batch, num_boxes, coords]: %s",
                          DFX_SHAPE_STR(bx, b));
  if (bx->dims[2] != 4)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "bounding boxes must have shape [4] or [*, 4], got %s", DFX_SHAPE_STR(bx, b));
  float min_covered = s->min_covered;
  if (v2) {
    const dfx_tensor *mc = ctx->in[2];
    if (mc->ndims != 0)
      return dfx__kctx_fail(ctx, DFX_EINVAL, "min_object_covered must be 0-D, got shape %s", DFX_SHAPE_STR(mc, b));
    min_covered = *(const float *)mc->data;
    if (!(min_covered >= 0))
      return dfx__kctx_fail(ctx, DFX_EINVAL, "Min object covered must be non-negative: %g", (double)min_covered);
  }
  int64_t nb = bx->count / 4;
  const float *bv = bx->data;
  rect *boxes = dfx__malloc(sizeof(rect) * (size_t)(nb ? nb : 1));
  if (!boxes) return dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory for %lld boxes", (long long)nb);
  for (int64_t i = 0; i < nb; i++) {
    for (int j = 0; j < 4; j++)
      if (!(bv[4 * i + j] >= 0.0f && bv[4 * i + j] <= 1.0f)) {
        double bad = bv[4 * i + j];
        dfx__free(boxes);
        return dfx__kctx_fail(ctx, DFX_EINVAL, "All bounding box coordinates must be in [0.0, 1.0]: %g", bad);
      }
    boxes[i] = (rect){(int)(bv[4 * i + 1] * (float)w), (int)(bv[4 * i] * (float)h), (int)(bv[4 * i + 3] * (float)w),
                      (int)(bv[4 * i + 2] * (float)h)};
  }
  rect image = {0, 0, w, h};
  if (nb == 0) {
    if (!s->use_image) {
      dfx__free(boxes);
      return dfx__kctx_fail(ctx, DFX_EINVAL, "No bounding boxes provided as input. One must enable "
                                             "use_image_if_no_bounding_boxes if you wish to not provide any bounding boxes.");
    }
    boxes[0] = image;
    nb = 1;
  }
  philox g = dfx__rng_reserve(s->rng, (uint64_t)s->max_attempts);
  rect crop = image;
  for (int64_t i = 0; i < s->max_attempts; i++) {
    float ar = u32_to_float(philox_one(&g)) * (s->aspect[1] - s->aspect[0]) + s->aspect[0];
    rect c;
    if (random_crop(w, h, s->area[0], s->area[1], ar, &g, &c) && covers(c, min_covered, boxes, nb)) {
      crop = c;
      break;
    }
    if ((i & 4095) == 4095) {
      dfx_code code = dfx__kctx_poll(ctx);
      if (code != DFX_OK) {
        dfx__free(boxes);
        return code;
      }
    }
  }
  dfx__free(boxes);
  dfx_dtype t = isz->dtype;
  const int64_t d3[1] = {3}, d114[3] = {1, 1, 4};
  dfx_tensor *begin = dfx__kctx_alloc(ctx, 0, t, 1, d3);
  dfx_tensor *size = begin ? dfx__kctx_alloc(ctx, 1, t, 1, d3) : NULL;
  dfx_tensor *bb = size ? dfx__kctx_alloc(ctx, 2, DFX_F32, 3, d114) : NULL;
  if (!bb) return DFX_ENOMEM;
  store_int(t, begin->data, 0, crop.y0), store_int(t, begin->data, 1, crop.x0), store_int(t, begin->data, 2, 0);
  store_int(t, size->data, 0, crop.y1 - crop.y0), store_int(t, size->data, 1, crop.x1 - crop.x0);
  store_int(t, size->data, 2, -1);
  float *o = bb->data;
  o[0] = (float)crop.y0 / (float)h, o[1] = (float)crop.x0 / (float)w;
  o[2] = (float)crop.y1 / (float)h, o[3] = (float)crop.x1 / (float)w;
  return DFX_OK;
}

static dfx_code sample_v1(dfx_kctx *ctx) { return sample(ctx, 0); }
static dfx_code sample_v2(dfx_kctx *ctx) { return sample(ctx, 1); }

static void sdbb_fini(void *state) {
  sdbb_state *s = state;
  if (!s) return;
  dfx__rng_fini(s->rng);
  dfx__free(s);
}

static dfx_code sdbb_init(const dfx_node *n, void **state, dfx_status *st) {
  const dfx_attr_list *ar = dfx__attr_list(n, "aspect_ratio_range"), *area = dfx__attr_list(n, "area_range");
  if (!ar || ar->n != 2) return dfx__status_set(st, DFX_EINVAL, "Aspect ratio range field must specify 2 dimensions");
  if (!area || area->n != 2) return dfx__status_set(st, DFX_EINVAL, "Area range field must specify 2 dimensions");
  sdbb_state *s = dfx__calloc(1, sizeof *s);
  if (!s) return dfx__status_set(st, DFX_ENOMEM, "out of memory");
  s->aspect[0] = ar->v.f[0], s->aspect[1] = ar->v.f[1];
  s->area[0] = area->v.f[0], s->area[1] = area->v.f[1];
  s->max_attempts = dfx__attr_int(n, "max_attempts", 100);
  s->use_image = dfx__attr_bool(n, "use_image_if_no_bounding_boxes", false);
  s->min_covered = dfx__attr_float(n, "min_object_covered", 0.1f);
  dfx_code c = DFX_OK;
  if (!(s->aspect[0] > 0 && s->aspect[1] > 0))
    c = dfx__status_set(st, DFX_EINVAL, "Aspect ratio range must be non-negative: [%g, %g]", (double)s->aspect[0],
                        (double)s->aspect[1]);
  else if (!(s->area[0] > 0 && s->area[1] > 0))
    c = dfx__status_set(st, DFX_EINVAL, "Area range must be non-negative: [%g, %g]", (double)s->area[0],
                        (double)s->area[1]);
  else if (!(s->area[0] <= 1 && s->area[1] <= 1))
    c = dfx__status_set(st, DFX_EINVAL, "Area range must be less then or equal to 1.0: [%g, %g]", (double)s->area[0],
                        (double)s->area[1]);
  else if (s->max_attempts <= 0 || s->max_attempts > INT32_MAX)
    c = dfx__status_set(st, DFX_EINVAL, "Max attempts must be non-negative: %lld", (long long)s->max_attempts);
  else if (!(s->min_covered >= 0))
    c = dfx__status_set(st, DFX_EINVAL, "Min object covered must be non-negative: %g", (double)s->min_covered);
  else
    c = dfx__rng_init(n, (void **)&s->rng, st);
  if (c != DFX_OK) {
    dfx__free(s);
    return c;
  }
  *state = s;
  return DFX_OK;
}

#define SDBB_T "T: {uint8, int8, int16, int32, int64}"

static const dfx_kernel_def kernels[] = {
    {"SampleDistortedBoundingBox", SDBB_T, sample_v1, DFX_KERNEL_STATEFUL, sdbb_init, sdbb_fini},
    {"SampleDistortedBoundingBoxV2", SDBB_T, sample_v2, DFX_KERNEL_STATEFUL, sdbb_init, sdbb_fini},
    {NULL}};

void dfx__kernels_vision_sample_bbox(dfx_registry *r);
void dfx__kernels_vision_sample_bbox(dfx_registry *r) { dfx__kernels_add(r, kernels); }
