/* test_nms.c - NonMaxSuppression v1..v5 on TensorFlow's documented cases,
 * over every declared T and T_threshold. */
#include "ctest.h"

static const float boxes[6][4] = {{0, 0, 1, 1},     {0, 0.1f, 1, 1.1f},   {0, -0.1f, 1, 0.9f},
                                  {0, 10, 1, 11},   {0, 10.1f, 1, 11.1f}, {0, 100, 1, 101}};
static const float flipped[6][4] = {{1, 1, 0, 0},   {0, 0.1f, 1, 1.1f},   {0, 0.9f, 1, -0.1f},
                                    {0, 10, 1, 11}, {1, 10.1f, 0, 11.1f}, {1, 101, 0, 100}};
static const float scores[6] = {0.9f, 0.75f, 0.6f, 0.95f, 0.5f, 0.3f};

static const char *ops[] = {"", "NonMaxSuppression", "NonMaxSuppressionV2", "NonMaxSuppressionV3",
                            "NonMaxSuppressionV4", "NonMaxSuppressionV5"};

/* Runs version v with boxes and scores of dtype dt and thresholds of tt
 * (V2..V4); out receives up to 3 outputs. */
static void run_t(int v, const float (*bx)[4], int32_t max_out, float iou, float sthr, float sigma, int pad,
                  dfx_dtype dt, dfx_dtype tt, dfx_tensor **out) {
  dfx_node *n = kh_node_new(ops[v]);
  double bd[24], sd[6];
  for (int i = 0; i < 24; i++) bd[i] = bx[i / 4][i % 4];
  for (int i = 0; i < 6; i++) sd[i] = scores[i];
  dfx_tensor *in[6];
  in[0] = ct_tensor(dt, 2, (int64_t[]){6, 4}, bd);
  in[1] = ct_tensor(dt, 1, (int64_t[]){6}, sd);
  in[2] = kh_scalar_i32(max_out);
  int n_in = 3;
  if (v == 1) {
    kh_attr_float(n, "iou_threshold", iou);
  } else {
    kh_attr_type(n, "T", dt);
    if (v < 5) kh_attr_type(n, "T_threshold", tt);
    double s[3] = {iou, sthr, sigma};
    for (int k = 0; k < (v == 2 ? 1 : v == 5 ? 3 : 2); k++) in[n_in++] = ct_tensor(v == 5 ? dt : tt, 0, NULL, &s[k]);
  }
  if (v >= 4) kh_attr_bool(n, "pad_to_max_output_size", pad);
  ct_run(n, in, n_in, out, v == 5 ? 3 : v == 4 ? 2 : 1);
  kh_node_free(n);
  ct_free(in, n_in);
}

static void run(int v, const float (*bx)[4], int32_t max_out, float iou, float sthr, float sigma, int pad,
                dfx_dtype dt, dfx_tensor **out) {
  run_t(v, bx, max_out, iou, sthr, sigma, pad, dt, DFX_F32, out);
}

#define IDX(t, n, ...) ct_expect(t, DFX_I32, 1, (int64_t[]){n}, (double[]){__VA_ARGS__}, 0, "indices")

Test(nms, three_clusters_all_versions) {
  for (int v = 1; v <= 5; v++) {
    dfx_dtype ts[DFX_DTYPE_END_] = {DFX_F32}, tts[DFX_DTYPE_END_] = {DFX_F32};
    int nt = v > 1 ? ct_declared(ops[v], "T", ts) : 1;
    int ntt = v > 1 && v < 5 ? ct_declared(ops[v], "T_threshold", tts) : 1;
    for (int t = 0; t < nt; t++)
      for (int tt = 0; tt < ntt; tt++)
        for (int f = 0; f < 2; f++) {
          dfx_tensor *o[3] = {0};
          run_t(v, f ? flipped : boxes, 3, 0.5f, -INFINITY, 0, 0, ts[t], tts[tt], o);
          IDX(o[0], 3, 3, 0, 5);
          if (v == 5)
            ct_expect(o[1], ts[t], 1, (int64_t[]){3}, (double[]){0.95, 0.9, 0.3}, ct_tol(ts[t]), "scores");
          ct_free(o, 3);
        }
  }
  dfx_tensor *o[3] = {0};
  run(3, boxes, 3, 0.5f, 0.4f, 0, 0, DFX_F32, o);
  IDX(o[0], 2, 3, 0);
  ct_free(o, 3);
  run(3, boxes, 2, 0.5f, -INFINITY, 0, 0, DFX_F16, o);
  IDX(o[0], 2, 3, 0);
  ct_free(o, 3);
  run(2, boxes, 0, 0.5f, 0, 0, 0, DFX_F32, o);
  IDX(o[0], 0, 0);
  ct_free(o, 3);
  run(3, boxes, 6, 1.0f, -INFINITY, 0, 0, DFX_F32, o); /* nothing overlaps more than 1 */
  IDX(o[0], 6, 3, 0, 1, 2, 4, 5);
  ct_free(o, 3);
}

Test(nms, v4_padding) {
  dfx_tensor *o[3] = {0};
  run(4, boxes, 6, 0.5f, 0.0f, 0, 1, DFX_F32, o);
  IDX(o[0], 6, 3, 0, 5, 0, 0, 0);
  ct_expect(o[1], DFX_I32, 0, NULL, (double[]){3}, 0, "valid");
  ct_free(o, 3);
  run(4, boxes, 6, 0.5f, 0.0f, 0, 0, DFX_F32, o);
  IDX(o[0], 3, 3, 0, 5);
  ct_free(o, 3);
}

Test(nms, v5_soft) {
  dfx_tensor *o[3] = {0};
  run(5, boxes, 6, 1.0f, 0.0f, 0.5f, 0, DFX_F32, o);
  IDX(o[0], 6, 3, 0, 1, 5, 4, 2);
  ct_expect(o[1], DFX_F32, 1, (int64_t[]){6}, (double[]){0.95, 0.9, 0.384, 0.3, 0.256, 0.197}, 2e-3, "scores");
  ct_expect(o[2], DFX_I32, 0, NULL, (double[]){6}, 0, "valid");
  ct_free(o, 3);
  run(5, boxes, 6, 0.5f, 0.0f, 0.0f, 1, DFX_F32, o);
  IDX(o[0], 6, 3, 0, 5, 0, 0, 0);
  ct_expect(o[1], DFX_F32, 1, (int64_t[]){6}, (double[]){0.95, 0.9, 0.3, 0, 0, 0}, 1e-6, "hard scores");
  ct_free(o, 3);
}

Test(nms, errors) {
  dfx_node *n = kh_node_new("NonMaxSuppressionV3");
  kh_attr_type(n, "T", DFX_F32);
  kh_attr_type(n, "T_threshold", DFX_F32);
  dfx_tensor *b = kh_f32(2, (int64_t[]){1, 3}, (float[]){0, 0, 1}), *s = kh_f32(1, (int64_t[]){1}, (float[]){1});
  dfx_tensor *m = kh_scalar_i32(1), *t = kh_scalar_f32(0.5f), *bad = kh_scalar_f32(1.5f);
  ct_fail(n, (dfx_tensor *[]){b, s, m, t, t}, 5, "4 columns");
  dfx_tensor *b4 = kh_f32(2, (int64_t[]){1, 4}, (float[]){0, 0, 1, 1});
  kh_node_free(n);
  n = kh_node_new("NonMaxSuppressionV2");
  kh_attr_type(n, "T", DFX_F32);
  kh_attr_type(n, "T_threshold", DFX_F32);
  ct_fail(n, (dfx_tensor *[]){b4, s, m, bad}, 4, "iou_threshold");
  kh_node_free(n);
  n = kh_node_new("NonMaxSuppressionV3");
  kh_attr_type(n, "T", DFX_F32);
  kh_attr_type(n, "T_threshold", DFX_F32);
  dfx_tensor *s2 = kh_f32(1, (int64_t[]){2}, (float[]){1, 2});
  ct_fail(n, (dfx_tensor *[]){b4, s2, m, t, t}, 5, "incompatible");
  kh_node_free(n);
  ct_free((dfx_tensor *[]){b, s, m, t, bad, b4, s2}, 7);
}
