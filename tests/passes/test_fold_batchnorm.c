/* test_fold_batchnorm.c - the fold_batchnorm pass: inference batch norms
 * and per-channel Mul/Add/Sub/BiasAdd by constants after Conv2D,
 * DepthwiseConv2dNative and MatMul fold into the filter and one BiasAdd
 * named as the chain's last node, within float rounding of the original;
 * unread constants go; non-constant filters, read or kept batch norms and
 * constants that vary along another axis stay; conds and loops keep their
 * values and deadness. */
#include <criterion/criterion.h>

#include "eutil.h"
#include "gtext.h"
#include "ptest.h"
#include "tgraph.h"

TestSuite(fold_batchnorm, .init = eu_setup, .fini = eu_teardown, .timeout = 60);

#define TOL 1e-5

/* An inference FusedBatchNormV3 `name` of `x` with constant parameters of
 * c channels (`ctrl` adds control inputs to the constants). */
static void batch_norm(tg *b, const char *name, const char *x, int64_t c, const char *fmt, const char *ctrl) {
  char n[4][64];
  const char *what[4] = {"scale", "offset", "mean", "var"};
  for (int i = 0; i < 4; i++) {
    snprintf(n[i], sizeof n[i], "%s/%s", name, what[i]);
    tg_const(b, n[i], 1, &c, i == 3 ? 0.2f : i == 0 ? 0.5f : -1, i == 3 ? 2 : i == 0 ? 1.5f : 1, NULL, ctrl);
  }
  tg_printf(b,
            "node { name: \"%s\" op: \"FusedBatchNormV3\" input: \"%s\" input: \"%s\" input: \"%s\" input: \"%s\""
            " input: \"%s\" attr { key: \"T\" value { type: DT_FLOAT } } attr { key: \"U\" value { type: DT_FLOAT } }"
            TG_BOOL("is_training", false) TG_FLOAT("epsilon", 0.001) " attr { key: \"data_format\" value { s: \"%s\" } } }\n",
            name, x, n[0], n[1], n[2], n[3], fmt);
}

static dfx_tensor *nhwc_image(tg *b) { return tg_tensor(b, 4, (int64_t[]){2, 6, 5, 3}, -2, 2); }

Test(fold_batchnorm, conv_batch_norm_relu) {
  tg b = {.seed = 1};
  tg_placeholder(&b, "x");
  tg_const(&b, "w", 4, (int64_t[]){3, 3, 3, 4}, -1, 1, NULL, NULL);
  tg_node(&b, "conv", "Conv2D", "x,w", TG_CONV("SAME", "NHWC"));
  batch_norm(&b, "bn", "conv", 4, "NHWC", NULL);
  tg_node(&b, "act", "Relu", "bn", "");
  pt_case t;
  pt_optimize(&t, b.s, "fold_batchnorm", "act", "x", NULL);
  cr_assert_str_eq(pt_op(t.after, "conv"), "Conv2D");
  cr_assert_str_eq(pt_op(t.after, "bn"), "BiasAdd");
  cr_assert_str_eq(pt_op(t.after, "act"), "Relu");
  cr_assert(pt_has(t.after, "conv/folded_filter") && pt_has(t.after, "bn/folded_bias"));
  /* The old filter and the four parameters are read no more. */
  cr_assert(!pt_has(t.after, "w") && !pt_has(t.after, "bn/mean") && !pt_has(t.after, "bn/scale"));
  cr_assert_eq(pt_count(t.after), pt_count(t.before) - 5 + 2);
  cr_assert_str_eq(dfx_graph_node_input(t.after, dfx_graph_node_find(t.after, "conv"), 1).node, "conv/folded_filter");
  dfx_tensor *x = nhwc_image(&b);
  tg_same(t.before, t.after, "x", &x, "act", TOL);
  pt_free(&t);
  /* The default pipeline goes on to fuse all three. */
  pt_optimize(&t, b.s, "default", "act", "x", NULL);
  cr_assert_str_eq(pt_op(t.after, "act"), "_FusedConv2D");
  cr_assert_eq(pt_count(t.after), 4, "x, the filter, the bias and the fused conv");
  tg_same(t.before, t.after, "x", &x, "act", TOL);
  pt_free(&t);
  dfx_tensor_free(x);
  tg_free(&b);
}

/* Keras' folded batch norm: Mul and Add, here after a BiasAdd, with
 * broadcastable shapes ([C] and [1, 1, 1, C]) and a scalar Sub. */
Test(fold_batchnorm, bias_mul_add_sub_chain) {
  tg b = {.seed = 2};
  tg_placeholder(&b, "x");
  tg_const(&b, "w", 4, (int64_t[]){1, 1, 3, 5}, -1, 1, NULL, NULL);
  tg_const(&b, "b0", 1, (int64_t[]){5}, -1, 1, NULL, NULL);
  tg_const(&b, "s", 1, (int64_t[]){5}, 0.5, 2, NULL, NULL);
  tg_const(&b, "o", 4, (int64_t[]){1, 1, 1, 5}, -1, 1, NULL, NULL);
  tg_const(&b, "k", 0, NULL, 0.25, 0.25, NULL, NULL);
  tg_node(&b, "conv", "Conv2D", "x,w", TG_CONV("VALID", "NHWC"));
  tg_node(&b, "biased", "BiasAdd", "conv,b0", "");
  tg_node(&b, "mul", "Mul", "s,biased", "");
  tg_node(&b, "add", "AddV2", "mul,o", "");
  tg_node(&b, "sub", "Sub", "add,k", "");
  pt_case t;
  pt_optimize(&t, b.s, "fold_batchnorm", "sub", "x", NULL);
  cr_assert_str_eq(pt_op(t.after, "sub"), "BiasAdd");
  cr_assert(!pt_has(t.after, "biased") && !pt_has(t.after, "mul") && !pt_has(t.after, "add"));
  cr_assert(!pt_has(t.after, "s") && !pt_has(t.after, "o") && !pt_has(t.after, "k") && !pt_has(t.after, "w"));
  dfx_tensor *x = nhwc_image(&b);
  tg_same(t.before, t.after, "x", &x, "sub", TOL);
  dfx_tensor_free(x);
  pt_free(&t);
  tg_free(&b);
}

Test(fold_batchnorm, depthwise_nchw_and_matmul) {
  /* Depthwise with a channel multiplier of 2: 6 output channels. */
  tg b = {.seed = 3};
  tg_placeholder(&b, "x");
  tg_const(&b, "w", 4, (int64_t[]){3, 3, 3, 2}, -1, 1, NULL, NULL);
  tg_node(&b, "dw", "DepthwiseConv2dNative", "x,w", TG_CONV("SAME", "NHWC"));
  batch_norm(&b, "bn", "dw", 6, "NHWC", NULL);
  tg_node(&b, "act", "Relu6", "bn", "");
  pt_case t;
  pt_optimize(&t, b.s, "fold_batchnorm", "act", "x", NULL);
  cr_assert_str_eq(pt_op(t.after, "bn"), "BiasAdd");
  dfx_tensor *x = nhwc_image(&b);
  tg_same(t.before, t.after, "x", &x, "act", TOL);
  dfx_tensor_free(x);
  pt_free(&t);
  tg_free(&b);
  /* NCHW Conv2D with an NCHW batch norm and a [C, 1, 1] Mul. */
  b = (tg){.seed = 4};
  tg_placeholder(&b, "x");
  tg_const(&b, "w", 4, (int64_t[]){2, 2, 3, 4}, -1, 1, NULL, NULL);
  tg_const(&b, "m", 3, (int64_t[]){4, 1, 1}, -2, 2, NULL, NULL);
  tg_node(&b, "conv", "Conv2D", "x,w", TG_CONV("VALID", "NCHW"));
  batch_norm(&b, "bn", "conv", 4, "NCHW", NULL);
  tg_node(&b, "mul", "Mul", "bn,m", "");
  pt_optimize(&t, b.s, "fold_batchnorm", "mul", "x", NULL);
  cr_assert_str_eq(pt_op(t.after, "mul"), "BiasAdd");
  cr_assert(!pt_has(t.after, "bn"));
  x = tg_tensor(&b, 4, (int64_t[]){2, 3, 6, 5}, -2, 2);
  tg_same(t.before, t.after, "x", &x, "mul", TOL);
  dfx_tensor_free(x);
  pt_free(&t);
  tg_free(&b);
  /* MatMul with transpose_b: the filter is [N, K], scaled by rows. */
  b = (tg){.seed = 5};
  tg_placeholder(&b, "x");
  tg_const(&b, "w", 2, (int64_t[]){3, 4}, -1, 1, NULL, NULL);
  tg_const(&b, "s", 2, (int64_t[]){1, 3}, -2, 2, NULL, NULL);
  tg_const(&b, "o", 1, (int64_t[]){3}, -2, 2, NULL, NULL);
  tg_node(&b, "mm", "MatMul", "x,w", TG_BOOL("transpose_b", true));
  tg_node(&b, "mul", "Mul", "mm,s", "");
  tg_node(&b, "add", "Add", "o,mul", "");
  pt_optimize(&t, b.s, "fold_batchnorm", "add", "x", NULL);
  cr_assert_str_eq(pt_op(t.after, "add"), "BiasAdd");
  x = tg_tensor(&b, 2, (int64_t[]){5, 4}, -2, 2);
  tg_same(t.before, t.after, "x", &x, "add", TOL);
  dfx_tensor_free(x);
  pt_free(&t);
  tg_free(&b);
}

Test(fold_batchnorm, what_stays) {
  pt_case t;
  /* A fed filter. */
  tg b = {.seed = 6};
  tg_placeholder(&b, "x");
  tg_placeholder(&b, "w");
  tg_node(&b, "conv", "Conv2D", "x,w", TG_CONV("SAME", "NHWC"));
  batch_norm(&b, "bn", "conv", 4, "NHWC", NULL);
  pt_optimize(&t, b.s, "fold_batchnorm", "bn", "x,w", NULL);
  cr_assert_eq(t.rewritten, 0);
  pt_free(&t);
  tg_free(&b);
  /* batch_mean is read; then the batch norm is fetched. */
  b = (tg){.seed = 7};
  tg_placeholder(&b, "x");
  tg_const(&b, "w", 4, (int64_t[]){3, 3, 3, 4}, -1, 1, NULL, NULL);
  tg_node(&b, "conv", "Conv2D", "x,w", TG_CONV("SAME", "NHWC"));
  batch_norm(&b, "bn", "conv", 4, "NHWC", NULL);
  tg_node(&b, "peek", "Neg", "bn:1", "");
  pt_optimize(&t, b.s, "fold_batchnorm", "bn,peek", "x", NULL);
  cr_assert_eq(t.rewritten, 0);
  pt_free(&t);
  tg_free(&b);
  b = (tg){.seed = 7};
  tg_placeholder(&b, "x");
  tg_const(&b, "w", 4, (int64_t[]){3, 3, 3, 4}, -1, 1, NULL, NULL);
  tg_node(&b, "conv", "Conv2D", "x,w", TG_CONV("SAME", "NHWC"));
  batch_norm(&b, "bn", "conv", 4, "NHWC", NULL);
  pt_optimize(&t, b.s, "fold_batchnorm", "bn", "x", NULL);
  cr_assert_eq(t.rewritten, 0, "a fetched batch norm may be fetched at outputs a BiasAdd lacks");
  pt_free(&t);
  tg_free(&b);
  /* A Mul whose constant varies along H, and a conv read twice. */
  b = (tg){.seed = 8};
  tg_placeholder(&b, "x");
  tg_const(&b, "w", 4, (int64_t[]){3, 3, 3, 4}, -1, 1, NULL, NULL);
  tg_const(&b, "h", 3, (int64_t[]){6, 1, 1}, -1, 1, NULL, NULL);
  tg_node(&b, "conv", "Conv2D", "x,w", TG_CONV("SAME", "NHWC"));
  tg_node(&b, "mul", "Mul", "conv,h", "");
  tg_node(&b, "conv2", "Conv2D", "x,w", TG_CONV("SAME", "NHWC"));
  tg_const(&b, "s", 1, (int64_t[]){4}, -1, 1, NULL, NULL);
  tg_node(&b, "mul2", "Mul", "conv2,s", "");
  tg_node(&b, "neg2", "Neg", "conv2", "");
  pt_optimize(&t, b.s, "fold_batchnorm", "mul,mul2,neg2", "x", NULL);
  cr_assert_eq(t.rewritten, 0);
  pt_free(&t);
  tg_free(&b);
}

/* One filter, two convs, each with its batch norm: each gets its own
 * folded filter and the shared one goes once neither reads it. */
Test(fold_batchnorm, shared_filter) {
  tg b = {.seed = 9};
  tg_placeholder(&b, "x");
  tg_const(&b, "w", 4, (int64_t[]){3, 3, 3, 4}, -1, 1, NULL, NULL);
  tg_node(&b, "c1", "Conv2D", "x,w", TG_CONV("SAME", "NHWC"));
  tg_node(&b, "c2", "Conv2D", "x,w", TG_CONV("VALID", "NHWC"));
  batch_norm(&b, "bn1", "c1", 4, "NHWC", NULL);
  batch_norm(&b, "bn2", "c2", 4, "NHWC", NULL);
  tg_node(&b, "r1", "Relu", "bn1", "");
  tg_node(&b, "r2", "Relu", "bn2", "");
  pt_case t;
  pt_optimize(&t, b.s, "fold_batchnorm", "r1,r2", "x", NULL);
  cr_assert(!pt_has(t.after, "w"));
  cr_assert(pt_has(t.after, "c1/folded_filter") && pt_has(t.after, "c2/folded_filter"));
  dfx_tensor *x = nhwc_image(&b);
  tg_same(t.before, t.after, "x", &x, "r1,r2", TOL);
  dfx_tensor_free(x);
  pt_free(&t);
  tg_free(&b);
}

/* Both branches of a cond fold; their constants hang off the pivots, so
 * the folded constants must too: the untaken branch stays dead. */
Test(fold_batchnorm, inside_a_cond) {
  tg b = {.seed = 10};
  tg_placeholder(&b, "x");
  tg_printf(&b, "node { name: \"p\" op: \"Placeholder\" attr { key: \"dtype\" value { type: DT_BOOL } } }\n");
  tg_printf(&b, GT_SWITCH("sw", "x", "p", "DT_FLOAT"));
  tg_node(&b, "t", "Identity", "sw:1", "");
  tg_node(&b, "f", "Identity", "sw:0", "");
  tg_const(&b, "wt", 4, (int64_t[]){3, 3, 3, 4}, -1, 1, NULL, "^t");
  tg_node(&b, "ct", "Conv2D", "t,wt", TG_CONV("SAME", "NHWC"));
  batch_norm(&b, "bt", "ct", 4, "NHWC", "^t");
  tg_const(&b, "wf", 4, (int64_t[]){1, 1, 3, 4}, -1, 1, NULL, "^f");
  tg_const(&b, "sf", 1, (int64_t[]){4}, -1, 1, NULL, "^f");
  tg_node(&b, "cf", "Conv2D", "f,wf", TG_CONV("SAME", "NHWC"));
  tg_node(&b, "mf", "Mul", "cf,sf", "");
  tg_printf(&b, GT_MERGE2("merge", "bt", "mf", "DT_FLOAT", ""));
  pt_case t;
  pt_optimize(&t, b.s, "fold_batchnorm", "merge", "x,p", NULL);
  cr_assert_str_eq(pt_op(t.after, "bt"), "BiasAdd");
  cr_assert_str_eq(pt_op(t.after, "mf"), "BiasAdd");
  int id = dfx_graph_node_find(t.after, "ct/folded_filter");
  cr_assert_eq(dfx_graph_node_num_control_inputs(t.after, id), 1);
  cr_assert_str_eq(dfx_graph_node_name(t.after, dfx_graph_node_control_input(t.after, id, 0)), "t");
  dfx_tensor *x = nhwc_image(&b);
  for (int pv = 0; pv < 2; pv++) {
    dfx_tensor *p = dfx_tensor_new(DFX_BOOL, NULL, 0);
    *(uint8_t *)dfx_tensor_data(p) = (uint8_t)pv;
    tg_same(t.before, t.after, "x,p", (dfx_tensor *[]){x, p}, "merge", TOL);
    dfx_tensor_free(p);
  }
  dfx_tensor_free(x);
  pt_free(&t);
  tg_free(&b);
}

/* A loop whose body convolves with a loop-invariant filter (a constant
 * Enter of a Const outside) and normalises with constants inside: the
 * folded filter reads the Enter as a control input, in the loop. */
Test(fold_batchnorm, inside_a_loop) {
  tg b = {.seed = 11};
  tg_placeholder(&b, "x");
  tg_const(&b, "W", 2, (int64_t[]){3, 3}, -0.7f, 0.7f, NULL, NULL);
  tg_printf(&b, GT_CONST_I32("start", 0, "") GT_ENTER("w/Enter", "start", "DT_INT32", "w/while", false, 10)
                    GT_ENTER("w/Enter_h", "x", "DT_FLOAT", "w/while", false, 10)
                        GT_ENTER("w/Enter_W", "W", "DT_FLOAT", "w/while", true, 10)
                            GT_MERGE2("w/Merge", "w/Enter", "w/NextIteration", "DT_INT32", "")
                                GT_MERGE2("w/Merge_h", "w/Enter_h", "w/NextIteration_h", "DT_FLOAT", "")
                                    GT_CONST_I32("w/limit", 4, GT_INPUT("^w/Merge"))
                                        GT_OP2("w/Less", "Less", "w/Merge", "w/limit", "DT_INT32", "")
                                            GT_LOOPCOND("w/LoopCond", "w/Less")
                                                GT_SWITCH("w/Switch", "w/Merge", "w/LoopCond", "DT_INT32")
                                                    GT_SWITCH("w/Switch_h", "w/Merge_h", "w/LoopCond", "DT_FLOAT")
                                                        GT_OP1("w/i", "Identity", "w/Switch:1", "DT_INT32", "")
                                                            GT_OP1("w/h", "Identity", "w/Switch_h:1", "DT_FLOAT", "")
                                                                GT_CONST_I32("w/one", 1, GT_INPUT("^w/i"))
                                                                    GT_OP2("w/add", "Add", "w/i", "w/one", "DT_INT32", ""));
  tg_const(&b, "w/s", 1, (int64_t[]){3}, 0.5f, 1.2f, NULL, "^w/i");
  tg_const(&b, "w/o", 1, (int64_t[]){3}, -0.5f, 0.5f, NULL, "^w/i");
  tg_node(&b, "w/mm", "MatMul", "w/h,w/Enter_W", "");
  tg_node(&b, "w/mul", "Mul", "w/mm,w/s", "");
  tg_node(&b, "w/shift", "Add", "w/mul,w/o", "");
  tg_node(&b, "w/act", "Tanh", "w/shift", "");
  tg_printf(&b, GT_OP1("w/NextIteration", "NextIteration", "w/add", "DT_INT32", "")
                    GT_OP1("w/NextIteration_h", "NextIteration", "w/act", "DT_FLOAT", "")
                        GT_OP1("w/Exit", "Exit", "w/Switch_h", "DT_FLOAT", ""));
  pt_case t;
  pt_optimize(&t, b.s, "fold_batchnorm", "w/Exit", "x", NULL);
  cr_assert_str_eq(pt_op(t.after, "w/shift"), "BiasAdd");
  int id = dfx_graph_node_find(t.after, "w/mm/folded_filter");
  cr_assert(id >= 0);
  cr_assert_str_eq(dfx_graph_node_frame(t.after, id), "w/while");
  cr_assert_str_eq(dfx_graph_node_name(t.after, dfx_graph_node_control_input(t.after, id, 0)), "w/Enter_W");
  dfx_tensor *x = tg_tensor(&b, 2, (int64_t[]){2, 3}, -1, 1);
  tg_same(t.before, t.after, "x", &x, "w/Exit", TOL);
  dfx_tensor_free(x);
  pt_free(&t);
  tg_free(&b);
}
