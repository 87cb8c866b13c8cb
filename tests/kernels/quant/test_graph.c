/* test_graph.c - the quantization family through a whole session: a conv
 * weight stored as quint8 (MIN_FIRST, as TF's graph transforms write it),
 * dequantized and fed to Conv2D; checked against a naive convolution with
 * weights dequantized by the documented formula. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dfexec.h"

#define TYPE(k, t) " attr { key: \"" k "\" value { type: " t " } }"
#define STR(k, s) " attr { key: \"" k "\" value { s: \"" s "\" } }"

/* Weight [2,2,1,2] (HWIO) as 8 levels; range [-0.5, 1.5]. */
static const int levels[8] = {0, 255, 17, 128, 200, 64, 99, 3};
static const float wmin = -0.5f, wmax = 1.5f;

static char *graph_text(void) {
  static char buf[4096];
  char lv[128] = "";
  for (int i = 0; i < 8; i++) snprintf(lv + strlen(lv), sizeof lv - strlen(lv), " int_val: %d", levels[i]);
  snprintf(buf, sizeof buf,
           "node { name: \"x\" op: \"Placeholder\"" TYPE("dtype", "DT_FLOAT") " }\n"
           "node { name: \"wq\" op: \"Const\"" TYPE("dtype", "DT_QUINT8")
           " attr { key: \"value\" value { tensor { dtype: DT_QUINT8 tensor_shape { dim { size: 2 } dim { size: 2 }"
           " dim { size: 1 } dim { size: 2 } }%s } } } }\n"
           "node { name: \"wmin\" op: \"Const\"" TYPE("dtype", "DT_FLOAT")
           " attr { key: \"value\" value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: %.9g } } } }\n"
           "node { name: \"wmax\" op: \"Const\"" TYPE("dtype", "DT_FLOAT")
           " attr { key: \"value\" value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: %.9g } } } }\n"
           "node { name: \"w\" op: \"Dequantize\" input: \"wq\" input: \"wmin\" input: \"wmax\"" TYPE("T", "DT_QUINT8")
           STR("mode", "MIN_FIRST") " }\n"
           "node { name: \"y\" op: \"Conv2D\" input: \"x\" input: \"w\"" TYPE("T", "DT_FLOAT")
           " attr { key: \"strides\" value { list { i: 1 i: 1 i: 1 i: 1 } } }" STR("padding", "VALID") " }\n",
           lv, (double)wmin, (double)wmax);
  return buf;
}

Test(quant_graph, min_first_weight_feeds_conv2d) {
  const char *text = graph_text();
  dfx_status *st = dfx_status_new();
  dfx_graph *g = NULL;
  cr_assert_eq(dfx_graph_import(text, strlen(text), &g, st), DFX_OK, "%s", dfx_status_message(st));
  dfx_session *s = NULL;
  cr_assert_eq(dfx_session_new(g, NULL, &s, st), DFX_OK, "%s", dfx_status_message(st));
  const int64_t d[] = {1, 3, 3, 1};
  float x[9];
  for (int i = 0; i < 9; i++) x[i] = (float)i * 0.25f - 1.0f;
  dfx_tensor *xt = dfx_tensor_new_copy(DFX_F32, d, 4, x, sizeof x);
  dfx_port feed = {"x", 0}, fetch = {"y", 0};
  dfx_tensor *out = NULL;
  cr_assert_eq(dfx_session_run(s, NULL, &feed, &xt, 1, &fetch, &out, 1, NULL, 0, st), DFX_OK, "%s",
               dfx_status_message(st));
  /* MIN_FIRST: step = (max - min) / 255, min rounded to a whole step. */
  float step = (wmax - wmin) / 255.0f, base = roundf(wmin / step) * step;
  float w[8];
  for (int i = 0; i < 8; i++) w[i] = base + (float)levels[i] * step;
  cr_assert_eq(dfx_tensor_dim(out, 1), 2);
  cr_assert_eq(dfx_tensor_dim(out, 3), 2);
  const float *y = dfx_tensor_data(out);
  for (int oy = 0; oy < 2; oy++)
    for (int ox = 0; ox < 2; ox++)
      for (int oc = 0; oc < 2; oc++) {
        double acc = 0;
        for (int ky = 0; ky < 2; ky++)
          for (int kx = 0; kx < 2; kx++) acc += x[(oy + ky) * 3 + ox + kx] * w[(ky * 2 + kx) * 2 + oc];
        float got = y[(oy * 2 + ox) * 2 + oc];
        cr_expect(fabs(got - acc) < 1e-5, "y[%d,%d,%d] = %g, want %g", oy, ox, oc, (double)got, acc);
      }
  dfx_tensor_free(out);
  dfx_tensor_free(xt);
  dfx_session_free(s);
  dfx_graph_free(g);
  dfx_status_free(st);
}
