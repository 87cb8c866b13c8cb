/* test_fold_pad.c - the fold_pad pass: a zero Pad read only by a
 * convolution becomes the convolution's EXPLICIT padding (added to any it
 * had), with the same bits as before, for Conv2D and DepthwiseConv2dNative
 * in both formats, PadV2 with 0, and the fused ops; what must stay (a
 * non-zero PadV2 constant, batch or channel padding, a second reader, a
 * fetched Pad, SAME convolutions, a non-constant paddings input) stays; a
 * Pad's control inputs move to the convolution. */
#include <criterion/criterion.h>

#include "eutil.h"
#include "gtext.h"
#include "ptest.h"
#include "tgraph.h"

TestSuite(fold_pad, .init = eu_setup, .fini = eu_teardown, .timeout = 60);

/* An int32 Const `name` of shape [4, 2] holding p. */
static void pads_const(tg *b, const char *name, const int *p) {
  tg_printf(b,
            "node { name: \"%s\" op: \"Const\" attr { key: \"dtype\" value { type: DT_INT32 } }"
            " attr { key: \"value\" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 4 } dim { size: 2 } }"
            " int_val: %d int_val: %d int_val: %d int_val: %d int_val: %d int_val: %d int_val: %d int_val: %d } } } }\n",
            name, p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]);
}

typedef struct pcase {
  const char *conv, *fmt, *padding, *pad_op;
  int pads[8];
  float pad_value; /* PadV2 */
  bool second_reader, fetch_pad, ctrl;
} pcase;

/* x -> Pad -> conv (3x3 filter, strides 1,2 along H,W, output "conv");
 * returns whether the pass folded the Pad, checking the outputs agree. */
static bool run_case(const pcase *pc) {
  tg b = {0};
  b.seed = 5;
  bool nchw = !strcmp(pc->fmt, "NCHW"), dw = strstr(pc->conv, "Depthwise") != NULL;
  bool fused = pc->conv[0] == '_';
  tg_placeholder(&b, "x");
  tg_printf(&b, "node { name: \"gate\" op: \"NoOp\" }\n");
  tg_const(&b, "w", 4, (int64_t[]){3, 3, 3, dw ? 2 : 4}, -1, 1, NULL, NULL);
  pads_const(&b, "paddings", pc->pads);
  if (!strcmp(pc->pad_op, "PadV2")) {
    tg_printf(&b, "node { name: \"cv\" op: \"Const\" attr { key: \"dtype\" value { type: DT_FLOAT } }"
                  " attr { key: \"value\" value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: %g } } } }\n",
              pc->pad_value);
    tg_node(&b, "pad", "PadV2", pc->ctrl ? "x,paddings,cv,^gate" : "x,paddings,cv", "");
  } else {
    tg_node(&b, "pad", "Pad", pc->ctrl ? "x,paddings,^gate" : "x,paddings", "");
  }
  char attrs[512];
  int64_t h = nchw ? 2 : 1;
  snprintf(attrs, sizeof attrs,
           " attr { key: \"strides\" value { list { i: 1 i: %d i: %d i: 1 } } }" TG_STR("padding", "%s")
               TG_STR("data_format", "%s") "%s",
           nchw ? 1 : 1, nchw ? 1 : 2, pc->padding, pc->fmt,
           !strcmp(pc->padding, "EXPLICIT")
               ? (nchw ? " attr { key: \"explicit_paddings\" value { list { i: 0 i: 0 i: 0 i: 0 i: 1 i: 0 i: 2 i: 1 } } }"
                       : " attr { key: \"explicit_paddings\" value { list { i: 0 i: 0 i: 1 i: 0 i: 2 i: 1 i: 0 i: 0 } } }")
               : "");
  (void)h;
  if (nchw) /* NCHW strides: [1, 1, 1, 2] */
    snprintf(attrs, sizeof attrs,
             " attr { key: \"strides\" value { list { i: 1 i: 1 i: 1 i: 2 } } }" TG_STR("padding", "%s")
                 TG_STR("data_format", "%s") "%s",
             pc->padding, pc->fmt,
             !strcmp(pc->padding, "EXPLICIT")
                 ? " attr { key: \"explicit_paddings\" value { list { i: 0 i: 0 i: 0 i: 0 i: 1 i: 0 i: 2 i: 1 } } }"
                 : "");
  if (fused) {
    tg_const(&b, "bias", 1, (int64_t[]){dw ? 6 : 4}, -1, 1, NULL, NULL);
    char full[800];
    snprintf(full, sizeof full,
             "%s attr { key: \"fused_ops\" value { list { s: \"BiasAdd\" s: \"Relu6\" } } }"
             " attr { key: \"num_args\" value { i: 1 } }%s",
             attrs, dw ? "" : " attr { key: \"TArgs\" value { list { type: DT_FLOAT } } }");
    tg_node(&b, "conv", pc->conv, "pad,w,bias", full);
  } else {
    tg_node(&b, "conv", pc->conv, "pad,w", attrs);
  }
  if (pc->second_reader) tg_node(&b, "other", "Neg", "pad", "");
  const char *fetches = pc->second_reader ? "conv,other" : pc->fetch_pad ? "conv,pad" : "conv";
  pt_case t;
  pt_optimize(&t, b.s, "fold_pad", fetches, "x", NULL);
  bool folded = !pt_has(t.after, "pad");
  if (folded) {
    int id = dfx_graph_node_find(t.after, "conv");
    const char *padding;
    cr_assert_eq(dfx_graph_node_attr_string(t.after, id, "padding", &padding, NULL, NULL), DFX_OK);
    cr_assert_str_eq(padding, "EXPLICIT");
    cr_assert_str_eq(dfx_graph_node_input(t.after, id, 0).node, "x");
    if (pc->ctrl) {
      cr_assert_eq(dfx_graph_node_num_control_inputs(t.after, id), 1);
      cr_assert_str_eq(dfx_graph_node_name(t.after, dfx_graph_node_control_input(t.after, id, 0)), "gate");
    }
  }
  int64_t xd[4] = {2, 6, 7, 3};
  if (nchw) xd[1] = 3, xd[2] = 6, xd[3] = 7;
  dfx_tensor *v = tg_tensor(&b, 4, xd, -2, 2);
  tg_same(t.before, t.after, "x", &v, fetches, 0);
  dfx_tensor_free(v);
  pt_free(&t);
  tg_free(&b);
  return folded;
}

#define SPATIAL_NHWC {0, 0, 1, 2, 0, 3, 0, 0}
#define SPATIAL_NCHW {0, 0, 0, 0, 1, 2, 0, 3}

Test(fold_pad, zero_pads_become_explicit_padding) {
  const char *convs[] = {"Conv2D", "DepthwiseConv2dNative", "_FusedConv2D", "_FusedDepthwiseConv2dNative"};
  for (int k = 0; k < 4; k++)
    for (int explicit_ = 0; explicit_ < 2; explicit_++) {
      pcase c = {convs[k], "NHWC", explicit_ ? "EXPLICIT" : "VALID", "Pad", SPATIAL_NHWC};
      cr_assert(run_case(&c), "%s %s", convs[k], c.padding);
    }
  pcase nchw = {"Conv2D", "NCHW", "EXPLICIT", "Pad", SPATIAL_NCHW};
  cr_assert(run_case(&nchw));
  pcase dwn = {"DepthwiseConv2dNative", "NCHW", "VALID", "Pad", SPATIAL_NCHW};
  cr_assert(run_case(&dwn));
  pcase v2 = {"Conv2D", "NHWC", "VALID", "PadV2", SPATIAL_NHWC, 0.0f};
  cr_assert(run_case(&v2));
  pcase ctrl = {"DepthwiseConv2dNative", "NHWC", "VALID", "Pad", SPATIAL_NHWC, .ctrl = true};
  cr_assert(run_case(&ctrl));
}

Test(fold_pad, what_stays) {
  pcase one = {"Conv2D", "NHWC", "VALID", "PadV2", SPATIAL_NHWC, 1.0f};
  cr_assert(!run_case(&one), "PadV2 with 1");
  pcase negz = {"Conv2D", "NHWC", "VALID", "PadV2", SPATIAL_NHWC, -0.0f};
  cr_assert(!run_case(&negz), "PadV2 with -0");
  pcase chan = {"Conv2D", "NHWC", "VALID", "Pad", {0, 0, 1, 1, 0, 0, 1, 2}}; /* 6 channels: 2 groups */
  cr_assert(!run_case(&chan), "channel padding");
  pcase batch = {"DepthwiseConv2dNative", "NHWC", "VALID", "Pad", {1, 0, 1, 1, 0, 0, 0, 0}};
  cr_assert(!run_case(&batch), "batch padding");
  pcase same = {"Conv2D", "NHWC", "SAME", "Pad", SPATIAL_NHWC};
  cr_assert(!run_case(&same), "SAME");
  pcase two = {"Conv2D", "NHWC", "VALID", "Pad", SPATIAL_NHWC, .second_reader = true};
  cr_assert(!run_case(&two), "second reader");
  pcase kept = {"Conv2D", "NHWC", "VALID", "Pad", SPATIAL_NHWC, .fetch_pad = true};
  cr_assert(!run_case(&kept), "fetched Pad");
}

/* paddings fed at run time: nothing to fold. */
Test(fold_pad, fed_paddings_stay) {
  tg b = {0};
  tg_placeholder(&b, "x");
  tg_printf(&b, "node { name: \"paddings\" op: \"Placeholder\" attr { key: \"dtype\" value { type: DT_INT32 } } }\n");
  tg_const(&b, "w", 4, (int64_t[]){3, 3, 3, 4}, -1, 1, NULL, NULL);
  tg_node(&b, "pad", "Pad", "x,paddings", "");
  tg_node(&b, "conv", "Conv2D", "pad,w", TG_CONV("VALID", "NHWC"));
  pt_case t;
  pt_optimize(&t, b.s, "fold_pad", "conv", "x,paddings", NULL);
  cr_assert(pt_has(t.after, "pad"));
  cr_assert_eq(t.rewritten, 0);
  pt_free(&t);
  tg_free(&b);
}
