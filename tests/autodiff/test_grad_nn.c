/* test_grad_nn.c - numeric checks of the activation, softmax, cross-entropy,
 * bias and convolution gradients (autodiff/grad_nn.c). */
#include <criterion/criterion.h>

#include "eutil.h"
#include "gcheck.h"
#include "gtext_ad.h"

TestSuite(grad_nn, .init = eu_setup, .fini = eu_teardown, .timeout = 120);

static const dfx_dtype BOTH[] = {DFX_F64, DFX_F32};

/* Values kept away from the kinks (0 for Relu, 0 and 6 for Relu6), where
 * central differences straddle a corner. */
#define ACT(op, shape, attrs) {op " " #shape, NX("y", op, IN("x"), attrs), "y", 1, {{"x", shape, -3, 3}}}
static const gc_case act[] = {
    ACT("Relu", S2(3, 4), ""), ACT("Relu6", S2(3, 4), ""), ACT("Elu", S2(3, 4), ""), ACT("Selu", S2(3, 4), ""),
    ACT("LeakyRelu", S2(3, 4), AF("alpha", 0.1)), ACT("Softplus", S2(3, 4), ""), ACT("Softsign", S2(3, 4), ""),
    ACT("Relu", S2(0, 4), ""), ACT("Softmax", S2(3, 4), ""), ACT("Softmax", S1(5), ""),
    ACT("LogSoftmax", S2(3, 4), ""), ACT("LogSoftmax", S3(2, 2, 3), ""),
    {"Relu6 above 6", NX("y", "Relu6", IN("x"), ""), "y", 1, {{"x", S1(6), 4, 9}}},
};

Test(grad_nn, activations) { gc_check_all(act, sizeof act / sizeof *act, BOTH, 2); }

static const gc_case xent[] = {
    /* labels must be distributions (the op's backprop assumes rows summing
     * to 1, as TF documents), so they are a softmax of the input l */
    {"SoftmaxCrossEntropyWithLogits", N1("p", "Softmax", "l") NX("y", "SoftmaxCrossEntropyWithLogits", IN("f") IN("p"), ""),
     "y", 2, {{"f", S2(3, 4), -2, 2}, {"l", S2(3, 4), -1, 1}}},
    {"SparseSoftmaxCrossEntropyWithLogits",
     "node { name: \"y\" op: \"SparseSoftmaxCrossEntropyWithLogits\"" IN("f") IN("l") AT("T")
     " attr { key: \"Tlabels\" value { type: DT_INT32 } } }\n",
     "y", 2, {{"f", S2(3, 4), -2, 2}, {"l", S1(3), 0, 3, false, true}}},
    {"BiasAdd NHWC", NX("y", "BiasAdd", IN("x") IN("b"), AS("data_format", "NHWC")), "y", 2,
     {{"x", S4(2, 2, 2, 3)}, {"b", S1(3)}}},
    {"BiasAdd NCHW", NX("y", "BiasAdd", IN("x") IN("b"), AS("data_format", "NCHW")), "y", 2,
     {{"x", S4(2, 3, 2, 2)}, {"b", S1(3)}}},
    {"BiasAdd 2-D", NX("y", "BiasAdd", IN("x") IN("b"), ""), "y", 2, {{"x", S2(4, 3)}, {"b", S1(3)}}},
    {"BiasAddV1", NX("y", "BiasAddV1", IN("x") IN("b"), ""), "y", 2, {{"x", S2(4, 3)}, {"b", S1(3)}}},
    {"L2Loss", N1("y", "L2Loss", "x"), "y", 1, {{"x", S2(3, 4)}}},
};

Test(grad_nn, cross_entropy_bias) { gc_check_all(xent, sizeof xent / sizeof *xent, BOTH, 2); }

/* Convolution and pooling: their gradients use the backprop kernels
 * (kernels/conv/conv_grad.c for the filter and pooling ones), checked here
 * against central differences of the forward kernels. */
#define CONV(label, op, xs, fs, strides, pad, df)                                                          \
  {label, NX("y", op, IN("x") IN("f"), AIL("strides", strides) AS("padding", pad) AS("data_format", df)), \
   "y", 2, {{"x", xs}, {"f", fs}}}
#define POOL(label, op, xs, k, strides, pad, df)                                                           \
  {label, NX("y", op, IN("x"), AIL("ksize", k) AIL("strides", strides) AS("padding", pad) AS("data_format", df)), \
   "y", 1, {{"x", xs}}}
static const gc_case conv[] = {
    CONV("Conv2D VALID", "Conv2D", S4(2, 5, 4, 3), S4(3, 2, 3, 2), "i: 1 i: 1 i: 1 i: 1", "VALID", "NHWC"),
    CONV("Conv2D SAME stride 2", "Conv2D", S4(1, 5, 5, 2), S4(3, 3, 2, 3), "i: 1 i: 2 i: 2 i: 1", "SAME", "NHWC"),
    CONV("Depthwise SAME", "DepthwiseConv2dNative", S4(1, 4, 4, 2), S4(3, 3, 2, 2), "i: 1 i: 1 i: 1 i: 1", "SAME",
         "NHWC"),
    CONV("Depthwise VALID stride 2", "DepthwiseConv2dNative", S4(2, 5, 5, 3), S4(2, 2, 3, 1), "i: 1 i: 2 i: 2 i: 1",
         "VALID", "NHWC"),
    POOL("MaxPool VALID", "MaxPool", S4(2, 4, 4, 2), "i: 1 i: 2 i: 2 i: 1", "i: 1 i: 2 i: 2 i: 1", "VALID", "NHWC"),
    POOL("MaxPool SAME overlapping", "MaxPool", S4(1, 5, 5, 2), "i: 1 i: 3 i: 3 i: 1", "i: 1 i: 2 i: 2 i: 1", "SAME",
         "NHWC"),
    POOL("AvgPool SAME", "AvgPool", S4(1, 5, 5, 2), "i: 1 i: 3 i: 3 i: 1", "i: 1 i: 2 i: 2 i: 1", "SAME", "NHWC"),
    POOL("AvgPool VALID", "AvgPool", S4(2, 4, 6, 1), "i: 1 i: 2 i: 3 i: 1", "i: 1 i: 2 i: 3 i: 1", "VALID", "NHWC"),
};

Test(grad_nn, conv_and_pool) { gc_check_all(conv, sizeof conv / sizeof *conv, BOTH, 2); }
