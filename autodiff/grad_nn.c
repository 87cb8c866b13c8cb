/* grad_nn.c - gradients of activations, softmax and cross-entropy, bias,
 * convolution and pooling. Activation gradients are written with
 * elementwise ops (Select on the active region) rather than TF's fused
 * *Grad kernels, which dfexec does not have; they compute the same values. */
#include <string.h>

#include "grad.h"

#define X0 gin(e, node, 0)
#define X1 gin(e, node, 1)
#define Y0 gout(node, 0)
#define BIN(op, a, b) em_binary(e, op, a, b)
#define UN(op, a) em_unary(e, op, a)
#define SC(v) em_scalar(e, em_dtype(e, X0), v)

static gp where_positive(dfx_emit *e, gp test, gp yes, gp no) {
  return em_select(e, BIN("Greater", test, em_zeros_like(e, test)), yes, no);
}

static void g_relu(dfx_emit *e, int node, const gp *dy, gp *dx) {
  dx[0] = where_positive(e, Y0, dy[0], em_zeros_like(e, dy[0]));
}
static void g_relu6(dfx_emit *e, int node, const gp *dy, gp *dx) { /* 0 < x < 6 */
  gp x = X0, z = em_zeros_like(e, dy[0]);
  gp inside = BIN("LogicalAnd", BIN("Greater", x, em_zeros_like(e, x)), BIN("Less", x, SC(6)));
  dx[0] = em_select(e, inside, dy[0], z);
}
static void g_elu(dfx_emit *e, int node, const gp *dy, gp *dx) { /* y > 0: dy, else dy (y + 1) */
  gp y = Y0;
  dx[0] = where_positive(e, y, dy[0], BIN("Mul", dy[0], BIN("AddV2", y, SC(1))));
}
static void g_selu(dfx_emit *e, int node, const gp *dy, gp *dx) {
  const double scale = 1.0507009873554804934193349852946, alpha = 1.6732632423543772848170429916717;
  gp y = Y0;
  dx[0] = where_positive(e, y, BIN("Mul", dy[0], SC(scale)), BIN("Mul", dy[0], BIN("AddV2", y, SC(scale * alpha))));
}
static void g_leakyrelu(dfx_emit *e, int node, const gp *dy, gp *dx) {
  double alpha = dfx__attr_float(&e->g->nodes[node], "alpha", 0.2f);
  gp x = X0;
  dx[0] = where_positive(e, x, dy[0], BIN("Mul", dy[0], SC(alpha)));
}
static void g_softplus(dfx_emit *e, int node, const gp *dy, gp *dx) { dx[0] = BIN("Mul", dy[0], UN("Sigmoid", X0)); }
static void g_softsign(dfx_emit *e, int node, const gp *dy, gp *dx) { /* dy / (1 + |x|)^2 */
  dx[0] = BIN("RealDiv", dy[0], UN("Square", BIN("AddV2", UN("Abs", X0), SC(1))));
}

static gp last_axis(dfx_emit *e) { return em_ivec(e, DFX_I32, (int64_t[]){-1}, 1); }

static void g_softmax(dfx_emit *e, int node, const gp *dy, gp *dx) { /* (dy - sum(dy y)) y */
  gp y = Y0;
  gp s = em_sum(e, BIN("Mul", dy[0], y), last_axis(e), true);
  dx[0] = BIN("Mul", BIN("Sub", dy[0], s), y);
}
static void g_logsoftmax(dfx_emit *e, int node, const gp *dy, gp *dx) { /* dy - exp(y) sum(dy) */
  gp s = em_sum(e, dy[0], last_axis(e), true);
  dx[0] = BIN("Sub", dy[0], BIN("Mul", UN("Exp", Y0), s));
}

/* Cross-entropy ops return (loss, backprop); backprop is the loss's
 * gradient already. The backprop output itself is treated as constant
 * (its gradient, a second derivative, is not propagated). */
static gp expand_last(dfx_emit *e, gp x) {
  gp in[2] = {x, em_scalar(e, DFX_I32, -1)};
  em_attr a[2] = {EA_TYPE("T", em_dtype(e, x)), EA_TYPE("Tdim", DFX_I32)};
  return em_op(e, "ExpandDims", in, 2, a, 2);
}
static void g_xent(dfx_emit *e, int node, const gp *dy, gp *dx) {
  gp d = expand_last(e, dy[0]);
  dx[0] = BIN("Mul", d, gout(node, 1));
  gp x = X0;
  em_attr t = EA_TYPE("T", em_dtype(e, x));
  gp logsm = em_op(e, "LogSoftmax", &x, 1, &t, 1);
  dx[1] = BIN("Mul", d, UN("Neg", logsm));
}
static void g_sparse_xent(dfx_emit *e, int node, const gp *dy, gp *dx) {
  dx[0] = BIN("Mul", expand_last(e, dy[0]), gout(node, 1));
}

/* BiasAdd: the bias gradient sums dy over every axis but the channel one. */
static void g_biasadd(dfx_emit *e, int node, const gp *dy, gp *dx) {
  const char *df = dfx__attr_str(&e->g->nodes[node], "data_format", "NHWC");
  dx[0] = em_ident(e, dy[0]);
  gp rank = em_rank(e, dy[0]), one = em_scalar(e, DFX_I32, 1);
  gp axes;
  if (strcmp(df, "NCHW") == 0) {
    gp parts[2] = {em_ivec(e, DFX_I32, (int64_t[]){0}, 1), em_range(e, em_scalar(e, DFX_I32, 2), rank, one)};
    axes = em_concat(e, parts, 2, em_scalar(e, DFX_I32, 0));
  } else {
    axes = em_range(e, em_scalar(e, DFX_I32, 0), BIN("Sub", rank, one), one);
  }
  dx[1] = em_sum(e, dy[0], axes, false);
}

static void g_l2loss(dfx_emit *e, int node, const gp *dy, gp *dx) { dx[0] = BIN("Mul", X0, dy[0]); }

/* ---- convolution and pooling: their backprop ops, same attrs ---- */

static void copy_attrs(dfx_emit *e, int to, int from, const char *const *names) {
  for (int k = 0; names[k]; k++) em_copy_attr(e, to, from, names[k]);
}
static const char *const conv_attrs[] = {"strides", "padding", "explicit_paddings", "data_format", "dilations",
                                         "use_cudnn_on_gpu", NULL};

static void conv_like(dfx_emit *e, int node, const gp *dy, gp *dx, const char *bin, const char *bfilt) {
  gp x = X0, f = X1;
  em_attr t = EA_TYPE("T", em_dtype(e, x));
  gp in_i[3] = {em_shape(e, x, DFX_I32), f, dy[0]};
  int a = em_node(e, bin, NULL, in_i, 3, &t, 1);
  copy_attrs(e, a, node, conv_attrs);
  gp in_f[3] = {x, em_shape(e, f, DFX_I32), dy[0]};
  int b = em_node(e, bfilt, NULL, in_f, 3, &t, 1);
  copy_attrs(e, b, node, conv_attrs);
  if (a >= 0 && b >= 0) dx[0] = (gp){a, 0}, dx[1] = (gp){b, 0};
}
static void g_conv2d(dfx_emit *e, int node, const gp *dy, gp *dx) {
  conv_like(e, node, dy, dx, "Conv2DBackpropInput", "Conv2DBackpropFilter");
}
static void g_depthwise(dfx_emit *e, int node, const gp *dy, gp *dx) {
  conv_like(e, node, dy, dx, "DepthwiseConv2dNativeBackpropInput", "DepthwiseConv2dNativeBackpropFilter");
}

static const char *const pool_attrs[] = {"ksize", "strides", "padding", "data_format", NULL};
static void g_maxpool(dfx_emit *e, int node, const gp *dy, gp *dx) {
  gp in[3] = {X0, Y0, dy[0]};
  em_attr t = EA_TYPE("T", em_dtype(e, dy[0]));
  int a = em_node(e, "MaxPoolGrad", NULL, in, 3, &t, 1);
  copy_attrs(e, a, node, pool_attrs);
  if (a >= 0) dx[0] = (gp){a, 0};
}
static void g_avgpool(dfx_emit *e, int node, const gp *dy, gp *dx) {
  gp in[2] = {em_shape(e, X0, DFX_I32), dy[0]};
  em_attr t = EA_TYPE("T", em_dtype(e, dy[0]));
  int a = em_node(e, "AvgPoolGrad", NULL, in, 2, &t, 1);
  copy_attrs(e, a, node, pool_attrs);
  if (a >= 0) dx[0] = (gp){a, 0};
}

const dfx_grad_def dfx__grad_nn[] = {
    {"Relu", g_relu}, {"Relu6", g_relu6}, {"Elu", g_elu}, {"Selu", g_selu}, {"LeakyRelu", g_leakyrelu},
    {"Softplus", g_softplus}, {"Softsign", g_softsign}, {"Softmax", g_softmax}, {"LogSoftmax", g_logsoftmax},
    {"SoftmaxCrossEntropyWithLogits", g_xent}, {"SparseSoftmaxCrossEntropyWithLogits", g_sparse_xent},
    {"BiasAdd", g_biasadd}, {"BiasAddV1", g_biasadd}, {"L2Loss", g_l2loss}, {"Conv2D", g_conv2d},
    {"DepthwiseConv2dNative", g_depthwise}, {"MaxPool", g_maxpool}, {"AvgPool", g_avgpool},
    {NULL, NULL},
};
