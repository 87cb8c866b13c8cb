/* test_graph.c - the fft family through a whole session: a GraphDef (text)
 * with RFFT, FFT, IFFT and IRFFT of a fed signal, on one and several threads. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "dfexec.h"
#include "tensor.h"

#define TYPE(k, t) " attr { key: \"" k "\" value { type: " t " } }"

static const char *graph_text =
    "node { name: \"x\" op: \"Placeholder\"" TYPE("dtype", "DT_FLOAT") " }\n"
    "node { name: \"len\" op: \"Const\"" TYPE("dtype", "DT_INT32")
    " attr { key: \"value\" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 1 } } int_val: 6 } } } }\n"
    "node { name: \"spec\" op: \"RFFT\" input: \"x\" input: \"len\"" TYPE("Treal", "DT_FLOAT")
    TYPE("Tcomplex", "DT_COMPLEX64") " }\n"
    "node { name: \"f\" op: \"FFT\" input: \"spec\"" TYPE("Tcomplex", "DT_COMPLEX64") " }\n"
    "node { name: \"g\" op: \"IFFT\" input: \"f\"" TYPE("Tcomplex", "DT_COMPLEX64") " }\n"
    "node { name: \"back\" op: \"IRFFT\" input: \"g\" input: \"len\"" TYPE("Treal", "DT_FLOAT")
    TYPE("Tcomplex", "DT_COMPLEX64") " }\n";

static void run_graph(int threads) {
  dfx_status *st = dfx_status_new();
  dfx_graph *g = NULL;
  cr_assert_eq(dfx_graph_import(graph_text, strlen(graph_text), &g, st), DFX_OK, "%s", dfx_status_message(st));
  dfx_session_options o = {.n_threads = threads};
  dfx_session *s = NULL;
  cr_assert_eq(dfx_session_new(g, &o, &s, st), DFX_OK, "%s", dfx_status_message(st));
  /* Two rows of 8 samples, cropped to fft_length 6. */
  const int64_t d[] = {2, 8};
  float x[16];
  for (int i = 0; i < 16; i++) x[i] = (float)((i * 7) % 5) - 1.5f;
  dfx_tensor *xt = dfx_tensor_new_copy(DFX_F32, d, 2, x, sizeof x);
  dfx_port feed = {"x", 0}, fetch[2] = {{"spec", 0}, {"back", 0}};
  dfx_tensor *out[2] = {NULL, NULL};
  cr_assert_eq(dfx_session_run(s, NULL, &feed, &xt, 1, fetch, out, 2, NULL, 0, st), DFX_OK, "%s",
               dfx_status_message(st));
  cr_assert_eq(dfx_tensor_dtype(out[0]), DFX_C64);
  cr_assert_eq(dfx_tensor_dim(out[0], 1), 4);
  const float *sp = dfx_tensor_data(out[0]), *bk = dfx_tensor_data(out[1]);
  for (int r = 0; r < 2; r++) {
    for (int k = 0; k < 4; k++) { /* naive DFT of the first 6 samples */
      double re = 0, im = 0;
      for (int j = 0; j < 6; j++) {
        re += x[r * 8 + j] * cos(-2 * M_PI * j * k / 6);
        im += x[r * 8 + j] * sin(-2 * M_PI * j * k / 6);
      }
      cr_expect(fabs(sp[2 * (r * 4 + k)] - re) < 1e-4 && fabs(sp[2 * (r * 4 + k) + 1] - im) < 1e-4, "bin %d", k);
    }
    for (int j = 0; j < 6; j++) cr_expect(fabsf(bk[r * 6 + j] - x[r * 8 + j]) < 1e-5, "sample %d", j);
  }
  dfx_tensor_free(out[0]);
  dfx_tensor_free(out[1]);
  dfx_tensor_free(xt);
  dfx_session_free(s);
  dfx_graph_free(g);
  dfx_status_free(st);
}

Test(fft_graph, rfft_fft_ifft_irfft_one_thread) { run_graph(1); }
Test(fft_graph, rfft_fft_ifft_irfft_threads) { run_graph(3); }
