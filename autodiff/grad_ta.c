/* grad_ta.c - gradients of the TensorArray ops (TF1's tensor_array_grad):
 * the gradient of a TensorArray is its companion gradient array
 * (TensorArrayGradV3, found or created by (array, source), with writes
 * that sum), and the float "flow" tensors carry the ordering: a read's
 * gradient is a write into the gradient array, a write's gradient a read
 * from it, a gather's a scatter and a scatter's a gather. Handles and
 * indices get no gradient. Inside a loop the handle and index reach the
 * backward frame through the loop machinery (grad_while.c) like any
 * forward value. */
#include <string.h>

#include "grad.h"

/* TensorArrayGradV3(handle, flow): the gradient array (:0) and its flow (:1). */
static int grad_array(dfx_emit *e, gp handle, gp flow) {
  gp in[2] = {handle, flow};
  em_attr a = {.name = "source", .kind = DFX_ATTR_S};
  const char *src = "gradients";
  a.v.s = (dfx_str){.ptr = (char *)src, .len = strlen(src)};
  return em_node(e, "TensorArrayGradV3", NULL, in, 2, &a, 1);
}

static dfx_dtype value_type(dfx_emit *e, gp g) { return em_dtype(e, g); }

/* Read(handle, index, flow) -> value: write dy into the gradient array. */
static void g_read(dfx_emit *e, int node, const gp *dy, gp *dx) {
  int ga = grad_array(e, gin(e, node, 0), gin(e, node, 2));
  if (ga < 0) return;
  gp in[4] = {{ga, 0}, gin(e, node, 1), dy[0], {ga, 1}};
  em_attr a = EA_TYPE("T", value_type(e, dy[0]));
  dx[2] = em_op(e, "TensorArrayWriteV3", in, 4, &a, 1);
}

/* Write(handle, index, value, flow_in) -> flow_out: read the value's
 * gradient back; the flow's gradient passes through. */
static void g_write(dfx_emit *e, int node, const gp *dy, gp *dx) {
  int ga = grad_array(e, gin(e, node, 0), dy[0]);
  if (ga < 0) return;
  gp in[3] = {{ga, 0}, gin(e, node, 1), {ga, 1}};
  em_attr a = EA_TYPE("dtype", dfx__attr_type(&e->g->nodes[node], "T", DFX_F32));
  dx[2] = em_op(e, "TensorArrayReadV3", in, 3, &a, 1);
  dx[3] = dy[0];
}

/* Gather(handle, indices, flow) -> value: scatter dy into the gradient array. */
static void g_gather(dfx_emit *e, int node, const gp *dy, gp *dx) {
  int ga = grad_array(e, gin(e, node, 0), gin(e, node, 2));
  if (ga < 0) return;
  gp in[4] = {{ga, 0}, gin(e, node, 1), dy[0], {ga, 1}};
  em_attr a = EA_TYPE("T", value_type(e, dy[0]));
  dx[2] = em_op(e, "TensorArrayScatterV3", in, 4, &a, 1);
}

/* Scatter(handle, indices, value, flow_in) -> flow_out: gather the value's
 * gradient; the flow's gradient passes through. */
static void g_scatter(dfx_emit *e, int node, const gp *dy, gp *dx) {
  int ga = grad_array(e, gin(e, node, 0), dy[0]);
  if (ga < 0) return;
  gp in[3] = {{ga, 0}, gin(e, node, 1), {ga, 1}};
  em_attr a = EA_TYPE("dtype", dfx__attr_type(&e->g->nodes[node], "T", DFX_F32));
  dx[2] = em_op(e, "TensorArrayGatherV3", in, 3, &a, 1);
  dx[3] = dy[0];
}

const dfx_grad_def dfx__grad_ta[] = {
    {"TensorArrayReadV3", g_read}, {"TensorArrayWriteV3", g_write}, {"TensorArrayGatherV3", g_gather},
    {"TensorArrayScatterV3", g_scatter}, {"TensorArrayV3", NULL}, {"TensorArraySizeV3", NULL},
    {"TensorArrayCloseV3", NULL}, {"TensorArrayGradV3", NULL},
    {NULL, NULL},
};
