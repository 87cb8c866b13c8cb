/* test_graph.c - CudnnRNN through a whole session: a one-unit rnn_relu with
 * its params as a Const, a fed sequence, values worked out by hand. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "dfexec.h"

#define TYPE(k, t) " attr { key: \"" k "\" value { type: " t " } }"

static const char *graph_text =
    "node { name: \"x\" op: \"Placeholder\"" TYPE("dtype", "DT_FLOAT") " }\n"
    "node { name: \"h0\" op: \"Placeholder\"" TYPE("dtype", "DT_FLOAT") " }\n"
    "node { name: \"params\" op: \"Const\"" TYPE("dtype", "DT_FLOAT")
    " attr { key: \"value\" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 4 } }"
    " float_val: 2 float_val: 0.5 float_val: 0.1 float_val: -0.2 } } } }\n"
    "node { name: \"rnn\" op: \"CudnnRNN\" input: \"x\" input: \"h0\" input: \"h0\" input: \"params\""
    TYPE("T", "DT_FLOAT") " attr { key: \"rnn_mode\" value { s: \"rnn_relu\" } }"
    " attr { key: \"is_training\" value { b: false } } }\n";

Test(seq_graph, cudnn_rnn_relu_by_hand) {
  dfx_status *st = dfx_status_new();
  dfx_graph *g = NULL;
  cr_assert_eq(dfx_graph_import(graph_text, strlen(graph_text), &g, st), DFX_OK, "%s", dfx_status_message(st));
  dfx_session *s = NULL;
  cr_assert_eq(dfx_session_new(g, NULL, &s, st), DFX_OK, "%s", dfx_status_message(st));
  const int64_t xd[3] = {3, 1, 1}, hd[3] = {1, 1, 1};
  const float x[3] = {1, 2, -1}, h0 = 0.5f;
  dfx_tensor *feeds[2] = {dfx_tensor_new_copy(DFX_F32, xd, 3, x, sizeof x),
                          dfx_tensor_new_copy(DFX_F32, hd, 3, &h0, sizeof h0)};
  dfx_port fp[2] = {{"x", 0}, {"h0", 0}}, fetch[2] = {{"rnn", 0}, {"rnn", 1}};
  dfx_tensor *out[2] = {0};
  cr_assert_eq(dfx_session_run(s, NULL, fp, feeds, 2, fetch, out, 2, NULL, 0, st), DFX_OK, "%s",
               dfx_status_message(st));
  /* h = relu(2 x + 0.5 h + 0.1 - 0.2): 2.15, 4.975, 0.3875. */
  const float want[3] = {2.15f, 4.975f, 0.3875f};
  const float *y = dfx_tensor_data(out[0]), *h = dfx_tensor_data(out[1]);
  for (int i = 0; i < 3; i++) cr_expect(fabsf(y[i] - want[i]) < 1e-5f, "y[%d] = %g", i, (double)y[i]);
  cr_expect(fabsf(h[0] - want[2]) < 1e-5f, "h = %g", (double)h[0]);
  for (int i = 0; i < 2; i++) dfx_tensor_free(out[i]), dfx_tensor_free(feeds[i]);
  dfx_session_free(s);
  dfx_graph_free(g);
  dfx_status_free(st);
}

/* A ragged batch unbatched to variants and batched back inside one run. */
static const char *ragged_text =
    "node { name: \"splits\" op: \"Placeholder\"" TYPE("dtype", "DT_INT64") " }\n"
    "node { name: \"values\" op: \"Placeholder\"" TYPE("dtype", "DT_FLOAT") " }\n"
    "node { name: \"enc\" op: \"RaggedTensorToVariant\" input: \"splits\" input: \"values\""
    " attr { key: \"RAGGED_RANK\" value { i: 1 } }" TYPE("Tvalues", "DT_FLOAT") TYPE("Tsplits", "DT_INT64")
    " attr { key: \"batched_input\" value { b: true } } }\n"
    "node { name: \"dec\" op: \"RaggedTensorFromVariant\" input: \"enc\""
    " attr { key: \"input_ragged_rank\" value { i: 0 } } attr { key: \"output_ragged_rank\" value { i: 1 } }"
    TYPE("Tvalues", "DT_FLOAT") TYPE("Tsplits", "DT_INT64") " }\n";

Test(seq_graph, ragged_variant_round_trip) {
  dfx_status *st = dfx_status_new();
  dfx_graph *g = NULL;
  cr_assert_eq(dfx_graph_import(ragged_text, strlen(ragged_text), &g, st), DFX_OK, "%s", dfx_status_message(st));
  dfx_session *s = NULL;
  cr_assert_eq(dfx_session_new(g, NULL, &s, st), DFX_OK, "%s", dfx_status_message(st));
  const int64_t sd[1] = {4}, vd[1] = {5}, sp[4] = {0, 3, 3, 5};
  const float v[5] = {1, 2, 3, 4, 5};
  dfx_tensor *feeds[2] = {dfx_tensor_new_copy(DFX_I64, sd, 1, sp, sizeof sp), dfx_tensor_new_copy(DFX_F32, vd, 1, v, sizeof v)};
  dfx_port fp[2] = {{"splits", 0}, {"values", 0}}, fetch[2] = {{"dec", 0}, {"dec", 1}};
  dfx_tensor *out[2] = {0};
  cr_assert_eq(dfx_session_run(s, NULL, fp, feeds, 2, fetch, out, 2, NULL, 0, st), DFX_OK, "%s",
               dfx_status_message(st));
  cr_expect(!memcmp(dfx_tensor_data(out[0]), sp, sizeof sp), "splits come back");
  cr_expect(!memcmp(dfx_tensor_data(out[1]), v, sizeof v), "values come back");
  for (int i = 0; i < 2; i++) dfx_tensor_free(out[i]), dfx_tensor_free(feeds[i]);
  dfx_session_free(s);
  dfx_graph_free(g);
  dfx_status_free(st);
}
