/* test_remap.c - the remap pass: Conv2D/MatMul with their BiasAdd or batch
 * norm and activation become _FusedConv2D/_FusedMatMul named as the last
 * node, with the same bits; patterns whose middle is read elsewhere,
 * kept or fed, NCHW, another dtype or device stay; control inputs, conds
 * and loops keep their values and deadness. */
#include <criterion/criterion.h>

#include "eutil.h"
#include "gtext.h"
#include "ptest.h"
#include "tgraph.h"

TestSuite(remap, .init = eu_setup, .fini = eu_teardown, .timeout = 60);

/* x [2, 6, 5, 3] -> conv (3x3x3x4, SAME) -> BiasAdd -> act (none when
 * act is NULL; act "" stops before the BiasAdd). */
static void conv_graph(tg *b, const char *fmt, const char *act, const char *act_attrs) {
  b->seed = 3;
  tg_placeholder(b, "x");
  tg_const(b, "w", 4, (int64_t[]){3, 3, 3, 4}, -1, 1, NULL, NULL);
  tg_const(b, "bias", 1, (int64_t[]){4}, -2, 2, NULL, NULL);
  char attrs[256];
  snprintf(attrs, sizeof attrs, TG_LIST4("strides", 1, 1, 1, 1) TG_STR("padding", "SAME") TG_STR("data_format", "%s"),
           fmt);
  tg_node(b, "conv", "Conv2D", "x,w", attrs);
  if (act && !*act) return;
  snprintf(attrs, sizeof attrs, TG_STR("data_format", "%s"), fmt);
  tg_node(b, "biased", "BiasAdd", "conv,bias", attrs);
  if (act) tg_node(b, "act", act, "biased", act_attrs);
}

static dfx_tensor *image(tg *b, bool nchw) {
  return tg_tensor(b, 4, nchw ? (int64_t[]){2, 3, 6, 5} : (int64_t[]){2, 6, 5, 3}, -2, 2);
}

Test(remap, conv_bias_activation_becomes_one_fused_conv) {
  const char *acts[] = {"Relu", "Relu6", "Elu", "LeakyRelu"};
  for (int a = 0; a < 4; a++) {
    tg b = {0};
    conv_graph(&b, "NHWC", acts[a], a == 3 ? TG_FLOAT("alpha", 0.25) : "");
    pt_case t;
    pt_optimize(&t, b.s, "remap", "act", "x", NULL);
    cr_assert_str_eq(pt_op(t.after, "act"), "_FusedConv2D");
    cr_assert(!pt_has(t.after, "conv") && !pt_has(t.after, "biased"));
    cr_assert_eq(t.removed, 2);
    cr_assert_eq(t.rewritten, 1);
    const int64_t *strides;
    int n;
    int id = dfx_graph_node_find(t.after, "act");
    const dfx_dtype *types;
    cr_assert_eq(dfx_graph_node_attr_types(t.after, id, "TArgs", &types, &n, NULL), DFX_OK);
    cr_assert(n == 1 && types[0] == DFX_F32);
    cr_assert_eq(dfx_graph_node_attr_ints(t.after, id, "strides", &strides, &n, NULL), DFX_OK);
    cr_assert_eq(n, 4);
    dfx_tensor *x = image(&b, false);
    tg_same(t.before, t.after, "x", &x, "act", 0);
    dfx_tensor_free(x);
    pt_free(&t);
    tg_free(&b);
  }
}

Test(remap, conv_bias_alone_and_a_fetched_middle) {
  tg b = {0};
  conv_graph(&b, "NHWC", "Relu", "");
  pt_case t;
  /* The BiasAdd is fetched: it fuses with the conv under its own name,
   * and the Relu stays, reading the fused node. */
  pt_optimize(&t, b.s, "remap", "act,biased", "x", NULL);
  cr_assert_str_eq(pt_op(t.after, "biased"), "_FusedConv2D");
  cr_assert_str_eq(pt_op(t.after, "act"), "Relu");
  cr_assert(!pt_has(t.after, "conv"));
  dfx_tensor *x = image(&b, false);
  tg_same(t.before, t.after, "x", &x, "act,biased", 0);
  pt_free(&t);
  /* Fetched conv: nothing fuses. */
  pt_optimize(&t, b.s, "remap", "act,conv", "x", NULL);
  cr_assert_str_eq(pt_op(t.after, "conv"), "Conv2D");
  cr_assert_str_eq(pt_op(t.after, "biased"), "BiasAdd");
  cr_assert_eq(t.rewritten, 0);
  pt_free(&t);
  dfx_tensor_free(x);
  tg_free(&b);
}

Test(remap, what_stays_unfused) {
  /* The conv read twice. */
  tg b = {0};
  conv_graph(&b, "NHWC", "Relu", "");
  tg_node(&b, "other", "Neg", "conv", "");
  pt_case t;
  pt_optimize(&t, b.s, "remap", "act,other", "x", NULL);
  cr_assert_eq(t.rewritten, 0);
  pt_free(&t);
  tg_free(&b);
  /* NCHW: TensorFlow's CPU kernel would refuse it. */
  b = (tg){0};
  conv_graph(&b, "NCHW", "Relu", "");
  pt_optimize(&t, b.s, "remap", "act", "x", NULL);
  cr_assert_eq(t.rewritten, 0);
  pt_free(&t);
  tg_free(&b);
  /* Another device for the BiasAdd. */
  b = (tg){0};
  b.seed = 1;
  tg_placeholder(&b, "x");
  tg_const(&b, "w", 2, (int64_t[]){3, 2}, -1, 1, NULL, NULL);
  tg_const(&b, "bias", 1, (int64_t[]){2}, -1, 1, NULL, NULL);
  tg_node(&b, "mm", "MatMul", "x,w", "");
  tg_printf(&b, "node { name: \"biased\" op: \"BiasAdd\" input: \"mm\" input: \"bias\" device: \"/device:CPU:1\""
                " attr { key: \"T\" value { type: DT_FLOAT } } }\n");
  pt_optimize(&t, b.s, "remap", "biased", "x", NULL);
  cr_assert_eq(t.rewritten, 0);
  pt_free(&t);
  tg_free(&b);
  /* A Tanh after the BiasAdd: the MatMul and BiasAdd fuse, the Tanh stays. */
  b = (tg){0};
  b.seed = 2;
  tg_placeholder(&b, "x");
  tg_const(&b, "w", 2, (int64_t[]){3, 2}, -1, 1, NULL, NULL);
  tg_const(&b, "bias", 1, (int64_t[]){2}, -1, 1, NULL, NULL);
  tg_node(&b, "mm", "MatMul", "x,w", "");
  tg_node(&b, "biased", "BiasAdd", "mm,bias", "");
  tg_node(&b, "th", "Tanh", "biased", "");
  pt_optimize(&t, b.s, "remap", "th", "x", NULL);
  cr_assert_str_eq(pt_op(t.after, "biased"), "_FusedMatMul");
  cr_assert_str_eq(pt_op(t.after, "th"), "Tanh");
  pt_free(&t);
  tg_free(&b);
  /* float64: no fused kernel for MatMul. */
  pt_optimize(&t,
              GT_PLACEHOLDER("x", "DT_DOUBLE") GT_PLACEHOLDER("w", "DT_DOUBLE") GT_PLACEHOLDER("bias", "DT_DOUBLE")
                  GT_OP2("mm", "MatMul", "x", "w", "DT_DOUBLE", "") GT_OP2("biased", "BiasAdd", "mm", "bias", "DT_DOUBLE", ""),
              "remap", "biased", "x,w,bias", NULL);
  cr_assert_eq(t.rewritten, 0);
  pt_free(&t);
}

Test(remap, matmul_bias_leaky_relu_with_control_inputs) {
  tg b = {0};
  b.seed = 9;
  tg_placeholder(&b, "x");
  tg_printf(&b, "node { name: \"gate\" op: \"NoOp\" }\nnode { name: \"gate2\" op: \"NoOp\" }\n");
  tg_const(&b, "w", 2, (int64_t[]){5, 3}, -1, 1, NULL, NULL);
  tg_const(&b, "bias", 1, (int64_t[]){4}, -1, 1, NULL, NULL);
  tg_node(&b, "mm", "MatMul", "w,x,^gate", TG_BOOL("transpose_a", true));
  tg_node(&b, "biased", "BiasAdd", "mm,bias,^gate2", "");
  tg_node(&b, "act", "LeakyRelu", "biased", TG_FLOAT("alpha", 0.125));
  pt_case t;
  pt_optimize(&t, b.s, "remap", "act", "x", NULL);
  cr_assert_str_eq(pt_op(t.after, "act"), "_FusedMatMul");
  int id = dfx_graph_node_find(t.after, "act");
  cr_assert_eq(dfx_graph_node_num_inputs(t.after, id), 3, "a, b and the bias");
  cr_assert_str_eq(dfx_graph_node_input(t.after, id, 0).node, "w");
  cr_assert_eq(dfx_graph_node_num_control_inputs(t.after, id), 2);
  const char *c0 = dfx_graph_node_name(t.after, dfx_graph_node_control_input(t.after, id, 0));
  const char *c1 = dfx_graph_node_name(t.after, dfx_graph_node_control_input(t.after, id, 1));
  cr_assert(!strcmp(c0, "gate") && !strcmp(c1, "gate2"), "%s %s", c0, c1);
  float alpha = 0;
  cr_assert_eq(dfx_graph_node_attr_float(t.after, id, "leakyrelu_alpha", &alpha, NULL), DFX_OK);
  cr_assert_eq(alpha, 0.125f);
  dfx_tensor *x = tg_tensor(&b, 2, (int64_t[]){5, 4}, -3, 3);
  tg_same(t.before, t.after, "x", &x, "act", 0);
  dfx_tensor_free(x);
  pt_free(&t);
  tg_free(&b);
}

/* Conv2D + an inference FusedBatchNormV3 whose parameters are not constants
 * to fold (placeholders here): the fused op takes them as arguments. */
Test(remap, conv_batch_norm_relu6) {
  tg b = {0};
  conv_graph(&b, "NHWC", "", NULL);
  for (const char *const *p = (const char *[]){"scale", "offset", "mean", "var", NULL}; *p; p++) tg_placeholder(&b, *p);
  tg_printf(&b, "node { name: \"bn\" op: \"FusedBatchNormV3\" input: \"conv\" input: \"scale\" input: \"offset\""
                " input: \"mean\" input: \"var\" attr { key: \"T\" value { type: DT_FLOAT } }"
                " attr { key: \"U\" value { type: DT_FLOAT } }" TG_BOOL("is_training", false)
                    TG_FLOAT("epsilon", 0.001) " }\n");
  tg_node(&b, "act", "Relu6", "bn", "");
  pt_case t;
  pt_optimize(&t, b.s, "remap", "act", "x,scale,offset,mean,var", NULL);
  cr_assert_str_eq(pt_op(t.after, "act"), "_FusedConv2D");
  cr_assert(!pt_has(t.after, "bn") && !pt_has(t.after, "conv"));
  dfx_tensor *v[5] = {image(&b, false), tg_tensor(&b, 1, (int64_t[]){4}, 0.5, 2),
                      tg_tensor(&b, 1, (int64_t[]){4}, -1, 1), tg_tensor(&b, 1, (int64_t[]){4}, -1, 1),
                      tg_tensor(&b, 1, (int64_t[]){4}, 0.1, 2)};
  tg_same(t.before, t.after, "x,scale,offset,mean,var", v, "act", 0);
  pt_free(&t);
  /* batch_mean read: no fusion. */
  tg_node(&b, "peek", "Neg", "bn:1", "");
  pt_optimize(&t, b.s, "remap", "act,peek", "x,scale,offset,mean,var", NULL);
  cr_assert_eq(t.rewritten, 0);
  pt_free(&t);
  for (int i = 0; i < 5; i++) dfx_tensor_free(v[i]);
  tg_free(&b);
}

/* The pattern inside both branches of a cond: its constants hang off the
 * branch pivots. The fused node must be dead exactly when the branch is. */
Test(remap, inside_a_cond) {
  tg b = {0};
  b.seed = 4;
  tg_placeholder(&b, "x");
  tg_printf(&b, "node { name: \"p\" op: \"Placeholder\" attr { key: \"dtype\" value { type: DT_BOOL } } }\n");
  tg_printf(&b, GT_SWITCH("sw", "x", "p", "DT_FLOAT"));
  tg_node(&b, "t", "Identity", "sw:1", "");
  tg_node(&b, "f", "Identity", "sw:0", "");
  tg_const(&b, "w", 2, (int64_t[]){3, 2}, -1, 1, NULL, "^t");
  tg_const(&b, "bias", 1, (int64_t[]){2}, -1, 1, NULL, "^t");
  tg_node(&b, "mm", "MatMul", "t,w", "");
  tg_node(&b, "biased", "BiasAdd", "mm,bias", "");
  tg_node(&b, "act", "Relu", "biased", "");
  tg_const(&b, "w2", 2, (int64_t[]){3, 2}, -1, 1, NULL, "^f");
  tg_node(&b, "mm2", "MatMul", "f,w2", "");
  tg_printf(&b, GT_MERGE2("merge", "act", "mm2", "DT_FLOAT", ""));
  pt_case t;
  pt_optimize(&t, b.s, "remap", "merge", "x,p", NULL);
  cr_assert_str_eq(pt_op(t.after, "act"), "_FusedMatMul");
  dfx_tensor *x = tg_tensor(&b, 2, (int64_t[]){4, 3}, -2, 2);
  for (int pv = 0; pv < 2; pv++) {
    dfx_tensor *p = dfx_tensor_new(DFX_BOOL, NULL, 0);
    *(uint8_t *)dfx_tensor_data(p) = (uint8_t)pv;
    tg_same(t.before, t.after, "x,p", (dfx_tensor *[]){x, p}, "merge", 0);
    dfx_tensor_free(p);
  }
  dfx_tensor_free(x);
  pt_free(&t);
  tg_free(&b);
}

/* The pattern in a while loop's body, applied each iteration: h = relu(h @ W + b). */
Test(remap, inside_a_loop) {
  tg b = {0};
  b.seed = 8;
  tg_placeholder(&b, "x");
  tg_printf(&b, GT_CONST_I32("start", 0, "") GT_ENTER("w/Enter", "start", "DT_INT32", "w/while", false, 10)
                    GT_ENTER("w/Enter_h", "x", "DT_FLOAT", "w/while", false, 10)
                        GT_MERGE2("w/Merge", "w/Enter", "w/NextIteration", "DT_INT32", "")
                            GT_MERGE2("w/Merge_h", "w/Enter_h", "w/NextIteration_h", "DT_FLOAT", "")
                                GT_CONST_I32("w/limit", 5, GT_INPUT("^w/Merge"))
                                    GT_OP2("w/Less", "Less", "w/Merge", "w/limit", "DT_INT32", "")
                                        GT_LOOPCOND("w/LoopCond", "w/Less")
                                            GT_SWITCH("w/Switch", "w/Merge", "w/LoopCond", "DT_INT32")
                                                GT_SWITCH("w/Switch_h", "w/Merge_h", "w/LoopCond", "DT_FLOAT")
                                                    GT_OP1("w/i", "Identity", "w/Switch:1", "DT_INT32", "")
                                                        GT_OP1("w/h", "Identity", "w/Switch_h:1", "DT_FLOAT", "")
                                                            GT_CONST_I32("w/one", 1, GT_INPUT("^w/i"))
                                                                GT_OP2("w/add", "Add", "w/i", "w/one", "DT_INT32", ""));
  tg_const(&b, "w/W", 2, (int64_t[]){3, 3}, -0.8f, 0.8f, NULL, "^w/i");
  tg_const(&b, "w/b", 1, (int64_t[]){3}, -0.5f, 0.5f, NULL, "^w/i");
  tg_node(&b, "w/mm", "MatMul", "w/h,w/W", "");
  tg_node(&b, "w/biased", "BiasAdd", "w/mm,w/b", "");
  tg_node(&b, "w/act", "Elu", "w/biased", "");
  tg_printf(&b, GT_OP1("w/NextIteration", "NextIteration", "w/add", "DT_INT32", "")
                    GT_OP1("w/NextIteration_h", "NextIteration", "w/act", "DT_FLOAT", "")
                        GT_OP1("w/Exit", "Exit", "w/Switch_h", "DT_FLOAT", ""));
  pt_case t;
  pt_optimize(&t, b.s, "remap", "w/Exit", "x", NULL);
  cr_assert_str_eq(pt_op(t.after, "w/act"), "_FusedMatMul");
  dfx_tensor *x = tg_tensor(&b, 2, (int64_t[]){2, 3}, -2, 2);
  tg_same(t.before, t.after, "x", &x, "w/Exit", 0);
  dfx_tensor_free(x);
  pt_free(&t);
  tg_free(&b);
}

/* x [2, 6, 5, 3] -> depthwise (3x3x3x2, SAME, stride 2) -> BiasAdd or
 * FusedBatchNormV3 (parameters fed) -> act: one _FusedDepthwiseConv2dNative
 * named as the last node, with the same bits as the unfused graph. */
Test(remap, depthwise_bias_or_batch_norm_and_activation) {
  const char *acts[] = {NULL, "Relu", "Relu6", "Elu", "LeakyRelu"};
  for (int bn = 0; bn < 2; bn++)
    for (int a = 0; a < 5; a++) {
      tg b = {0};
      b.seed = 11;
      tg_placeholder(&b, "x");
      tg_const(&b, "w", 4, (int64_t[]){3, 3, 3, 2}, -1, 1, NULL, NULL);
      tg_node(&b, "dw", "DepthwiseConv2dNative", "x,w",
              TG_LIST4("strides", 1, 2, 2, 1) TG_STR("padding", "SAME") TG_STR("data_format", "NHWC"));
      const char *feeds = "x";
      if (bn) {
        for (const char *const *p = (const char *[]){"scale", "offset", "mean", "var", NULL}; *p; p++)
          tg_placeholder(&b, *p);
        tg_printf(&b, "node { name: \"mid\" op: \"FusedBatchNormV3\" input: \"dw\" input: \"scale\" input: \"offset\""
                      " input: \"mean\" input: \"var\" attr { key: \"T\" value { type: DT_FLOAT } }"
                      " attr { key: \"U\" value { type: DT_FLOAT } }" TG_BOOL("is_training", false)
                          TG_FLOAT("epsilon", 0.001) " }\n");
        feeds = "x,scale,offset,mean,var";
      } else {
        tg_const(&b, "bias", 1, (int64_t[]){6}, -2, 2, NULL, NULL);
        tg_node(&b, "mid", "BiasAdd", "dw,bias", "");
      }
      const char *last = acts[a] ? "act" : "mid";
      if (acts[a]) tg_node(&b, "act", acts[a], "mid", a == 4 ? TG_FLOAT("alpha", 0.3) : "");
      pt_case t;
      pt_optimize(&t, b.s, "remap", last, feeds, NULL);
      if (bn && !acts[a]) { /* a fetched batch norm has outputs the fused node lacks */
        cr_assert_eq(t.rewritten, 0);
        pt_free(&t);
        tg_free(&b);
        continue;
      }
      cr_assert_str_eq(pt_op(t.after, last), "_FusedDepthwiseConv2dNative", "bn %d act %d", bn, a);
      cr_assert(!pt_has(t.after, "dw"));
      cr_assert_eq(t.rewritten, 1);
      dfx_tensor *v[5] = {image(&b, false), tg_tensor(&b, 1, (int64_t[]){6}, 0.5, 2),
                          tg_tensor(&b, 1, (int64_t[]){6}, -1, 1), tg_tensor(&b, 1, (int64_t[]){6}, -1, 1),
                          tg_tensor(&b, 1, (int64_t[]){6}, 0.1, 2)};
      tg_same(t.before, t.after, feeds, v, last, 0);
      for (int i = 0; i < 5; i++) dfx_tensor_free(v[i]);
      pt_free(&t);
      tg_free(&b);
    }
}
