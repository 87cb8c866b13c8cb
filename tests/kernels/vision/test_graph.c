/* test_graph.c - the vision family through a whole session: a fed image
 * shifted by ImageProjectiveTransformV3 (constant fill), and fed detections
 * reduced by CombinedNonMaxSuppression, in one GraphDef. */
#include <criterion/criterion.h>
#include <string.h>

#include "dfexec.h"

#define TYPE(k, t) " attr { key: \"" k "\" value { type: " t " } }"
#define STR(k, s) " attr { key: \"" k "\" value { s: \"" s "\" } }"
#define CONST_F(name, shape, vals)                                                                          \
  "node { name: \"" name "\" op: \"Const\"" TYPE("dtype", "DT_FLOAT")                                     \
  " attr { key: \"value\" value { tensor { dtype: DT_FLOAT tensor_shape { " shape " } " vals " } } } }\n"
#define CONST_I(name, shape, vals)                                                                          \
  "node { name: \"" name "\" op: \"Const\"" TYPE("dtype", "DT_INT32")                                     \
  " attr { key: \"value\" value { tensor { dtype: DT_INT32 tensor_shape { " shape " } " vals " } } } }\n"

static const char *graph_text =
    "node { name: \"img\" op: \"Placeholder\"" TYPE("dtype", "DT_FLOAT") " }\n"
    CONST_F("shift", "dim { size: 1 } dim { size: 8 }",
            "float_val: 1 float_val: 0 float_val: -1 float_val: 0 float_val: 1 float_val: 0 float_val: 0 float_val: 0")
    CONST_I("size", "dim { size: 2 }", "int_val: 2 int_val: 3")
    CONST_F("fill", "", "float_val: -7")
    "node { name: \"warped\" op: \"ImageProjectiveTransformV3\" input: \"img\" input: \"shift\" input: \"size\""
    " input: \"fill\"" TYPE("dtype", "DT_FLOAT") STR("interpolation", "NEAREST") STR("fill_mode", "CONSTANT") " }\n"
    "node { name: \"boxes\" op: \"Placeholder\"" TYPE("dtype", "DT_FLOAT") " }\n"
    "node { name: \"scores\" op: \"Placeholder\"" TYPE("dtype", "DT_FLOAT") " }\n"
    CONST_I("per_class", "", "int_val: 2") CONST_I("total", "", "int_val: 3")
    CONST_F("iou", "", "float_val: 0.5") CONST_F("thr", "", "float_val: 0.05")
    "node { name: \"nms\" op: \"CombinedNonMaxSuppression\" input: \"boxes\" input: \"scores\" input: \"per_class\""
    " input: \"total\" input: \"iou\" input: \"thr\" }\n";

Test(vision_graph, warp_and_combined_nms) {
  dfx_status *st = dfx_status_new();
  dfx_graph *g = NULL;
  cr_assert_eq(dfx_graph_import(graph_text, strlen(graph_text), &g, st), DFX_OK, "%s", dfx_status_message(st));
  dfx_session *s = NULL;
  cr_assert_eq(dfx_session_new(g, NULL, &s, st), DFX_OK, "%s", dfx_status_message(st));
  const int64_t id[] = {1, 2, 3, 1}, bd[] = {1, 3, 1, 4}, sd[] = {1, 3, 2};
  const float img[6] = {1, 2, 3, 4, 5, 6};
  /* Boxes 0 and 1 overlap (IoU 0.81); box 2 stands apart and crosses 1. */
  const float boxes[12] = {0, 0, 1, 1, 0, 0, 0.9f, 0.9f, 0.5f, 0.5f, 1.5f, 1.5f};
  const float scores[6] = {0.9f, 0.1f, 0.8f, 0.6f, 0.3f, 0.01f};
  dfx_tensor *feeds[3] = {dfx_tensor_new_copy(DFX_F32, id, 4, img, sizeof img),
                          dfx_tensor_new_copy(DFX_F32, bd, 4, boxes, sizeof boxes),
                          dfx_tensor_new_copy(DFX_F32, sd, 3, scores, sizeof scores)};
  dfx_port fp[3] = {{"img", 0}, {"boxes", 0}, {"scores", 0}};
  dfx_port fetch[5] = {{"warped", 0}, {"nms", 0}, {"nms", 1}, {"nms", 2}, {"nms", 3}};
  dfx_tensor *out[5] = {0};
  cr_assert_eq(dfx_session_run(s, NULL, fp, feeds, 3, fetch, out, 5, NULL, 0, st), DFX_OK, "%s",
               dfx_status_message(st));
  /* Output x reads input x - 1: the first column is the fill value. */
  const float want_w[6] = {-7, 1, 2, -7, 4, 5};
  const float *w = dfx_tensor_data(out[0]);
  for (int i = 0; i < 6; i++) cr_expect_eq(w[i], want_w[i], "warped[%d] = %g", i, (double)w[i]);
  /* Class 0: box 0 (0.9) suppresses box 1 (0.8); box 2 (0.3) kept.
   * Class 1: box 1 (0.6), box 0 (0.1); box 2 under the threshold.
   * Total 3 best: 0.9 c0, 0.6 c1, 0.3 c0; box 2 clipped to [0.5, 1]. */
  const float *sc = dfx_tensor_data(out[2]), *cl = dfx_tensor_data(out[3]), *bx = dfx_tensor_data(out[1]);
  cr_expect(sc[0] == 0.9f && sc[1] == 0.6f && sc[2] == 0.3f, "%g %g %g", (double)sc[0], (double)sc[1], (double)sc[2]);
  cr_expect(cl[0] == 0 && cl[1] == 1 && cl[2] == 0);
  cr_expect(bx[8] == 0.5f && bx[10] == 1.0f && bx[11] == 1.0f);
  cr_expect_eq(*(const int32_t *)dfx_tensor_data(out[4]), 3);
  for (int i = 0; i < 5; i++) dfx_tensor_free(out[i]);
  for (int i = 0; i < 3; i++) dfx_tensor_free(feeds[i]);
  dfx_session_free(s);
  dfx_graph_free(g);
  dfx_status_free(st);
}

/* SampleDistortedBoundingBoxV2 in a session: seeded, so a fresh session
 * repeats the first run's crop, while a second run of the same session
 * draws from further along the stream. */
static const char *sample_text =
    CONST_I("image_size", "dim { size: 3 }", "int_val: 480 int_val: 640 int_val: 3")
    CONST_F("bbs", "dim { size: 1 } dim { size: 1 } dim { size: 4 }",
            "float_val: 0.1 float_val: 0.1 float_val: 0.9 float_val: 0.9")
    CONST_F("cover", "", "float_val: 0.1")
    "node { name: \"crop\" op: \"SampleDistortedBoundingBoxV2\" input: \"image_size\" input: \"bbs\" input: \"cover\""
    TYPE("T", "DT_INT32") " attr { key: \"seed\" value { i: 17 } } attr { key: \"seed2\" value { i: 5 } } }\n";

static void crop_runs(int runs, int32_t out[][6]) {
  dfx_status *st = dfx_status_new();
  dfx_graph *g = NULL;
  cr_assert_eq(dfx_graph_import(sample_text, strlen(sample_text), &g, st), DFX_OK, "%s", dfx_status_message(st));
  dfx_session *s = NULL;
  cr_assert_eq(dfx_session_new(g, NULL, &s, st), DFX_OK, "%s", dfx_status_message(st));
  for (int r = 0; r < runs; r++) {
    dfx_port fetch[2] = {{"crop", 0}, {"crop", 1}};
    dfx_tensor *o[2] = {0};
    cr_assert_eq(dfx_session_run(s, NULL, NULL, NULL, 0, fetch, o, 2, NULL, 0, st), DFX_OK, "%s",
                 dfx_status_message(st));
    memcpy(out[r], dfx_tensor_data(o[0]), 12);
    memcpy(out[r] + 3, dfx_tensor_data(o[1]), 12);
    cr_expect(out[r][0] + out[r][3] <= 480 && out[r][1] + out[r][4] <= 640 && out[r][5] == -1);
    dfx_tensor_free(o[0]);
    dfx_tensor_free(o[1]);
  }
  dfx_session_free(s);
  dfx_graph_free(g);
  dfx_status_free(st);
}

Test(vision_graph, seeded_crop_repeats_per_session_and_advances_per_run) {
  int32_t a[3][6], b[1][6];
  crop_runs(3, a);
  crop_runs(1, b);
  cr_expect(memcmp(a[0], b[0], sizeof b[0]) == 0, "a fresh session repeats the first crop");
  cr_expect(memcmp(a[0], a[1], sizeof a[0]) != 0 || memcmp(a[1], a[2], sizeof a[0]) != 0,
            "later runs draw new crops");
}
