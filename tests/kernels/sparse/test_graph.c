/* test_graph.c - the sparse family through a whole session: GraphDef text
 * with CTC decoding turned dense (the OCR models' tail), and a beam search
 * whose sparse output is reshaped. */
#include <math.h>

#include "stest.h"

#define TYPE(k, t) " attr { key: \"" k "\" value { type: " t " } }"
#define PH(name, t) "node { name: \"" name "\" op: \"Placeholder\"" TYPE("dtype", t) " }\n"

static const char *ocr_graph =
    PH("logits", "DT_FLOAT") PH("seq", "DT_INT32")
    "node { name: \"dec\" op: \"CTCGreedyDecoder\" input: \"logits\" input: \"seq\""
    " attr { key: \"merge_repeated\" value { b: true } }" TYPE("T", "DT_FLOAT") " }\n"
    "node { name: \"dflt\" op: \"Const\"" TYPE("dtype", "DT_INT64")
    " attr { key: \"value\" value { tensor { dtype: DT_INT64 tensor_shape {} int64_val: -1 } } } }\n"
    "node { name: \"dense\" op: \"SparseToDense\" input: \"dec\" input: \"dec:2\" input: \"dec:1\" input: \"dflt\""
    TYPE("T", "DT_INT64") TYPE("Tindices", "DT_INT64") " }\n"
    "node { name: \"beam\" op: \"CTCBeamSearchDecoder\" input: \"logits\" input: \"seq\""
    " attr { key: \"beam_width\" value { i: 4 } } attr { key: \"top_paths\" value { i: 2 } }" TYPE("T", "DT_FLOAT") " }\n"
    "node { name: \"flat\" op: \"Const\"" TYPE("dtype", "DT_INT64")
    " attr { key: \"value\" value { tensor { dtype: DT_INT64 tensor_shape { dim { size: 1 } } int64_val: -1 } } } }\n"
    "node { name: \"rs\" op: \"SparseReshape\" input: \"beam\" input: \"beam:4\" input: \"flat\" }\n";

Test(sparse_graph, ocr_tail) {
  /* [T=5, B=2, C=4]: element 0 reads a a _ b c -> "abc" (a repeat merged),
   * element 1 (length 3) reads c _ c -> "cc". */
  const int path[2][5] = {{0, 0, 3, 1, 2}, {2, 3, 2, 3, 3}};
  float v[5 * 2 * 4];
  for (int t = 0; t < 5; t++)
    for (int b = 0; b < 2; b++)
      for (int c = 0; c < 4; c++) v[(t * 2 + b) * 4 + c] = c == path[b][t] ? 5.0f : 0.0f;
  const int64_t ld[3] = {5, 2, 4}, sd[1] = {2};
  const int32_t sl[2] = {5, 3};
  dfx_tensor *feeds[2] = {kh_f32(3, ld, v), kh_i32(1, sd, sl)}, *out[4] = {0};
  dfx_port fp[2] = {{"logits", 0}, {"seq", 0}}, fetch[4] = {{"dense", 0}, {"dec", 3}, {"rs", 0}, {"rs", 1}};
  char err[512];
  cr_assert_eq(s_graph_run(ocr_graph, fp, feeds, 2, fetch, out, 4, err), DFX_OK, "%s", err);
  const int64_t dd[2] = {2, 3}, want[6] = {0, 1, 2, 2, 2, -1};
  s_expect_shape(out[0], 2, dd);
  s_expect_i64v(out[0], want, 6);
  const double lp[2] = {-25, -15};
  s_expect_f64v(out[1], lp, 2, 1e-6);
  /* Best beam path per element: the same labelings ("abc", "cc" merged to
   * "c" by merge_repeated's LabelSeq), flattened to positions of [2 * 3]. */
  const int64_t rs_shape[1] = {6}, rs_ind[4] = {0, 1, 2, 3};
  s_expect_i64v(out[3], rs_shape, 1);
  s_expect_i64v(out[2], rs_ind, 4);
  for (int i = 0; i < 4; i++) dfx_tensor_free(out[i]);
  for (int i = 0; i < 2; i++) dfx_tensor_free(feeds[i]);
}
