/* remap.c - the `remap` pass (Grappler's remapper, its CPU patterns): a
 * contraction, the BiasAdd or inference batch norm that follows it and an
 * optional activation become one fused node:
 *
 *   Conv2D + BiasAdd [+ Relu|Relu6|Elu|LeakyRelu]         -> _FusedConv2D
 *   Conv2D + FusedBatchNorm[V2|V3] (is_training false)
 *          [+ Relu|Relu6|Elu|LeakyRelu]                     -> _FusedConv2D
 *   DepthwiseConv2dNative + BiasAdd | FusedBatchNorm[V2|V3]
 *          [+ Relu|Relu6|Elu|LeakyRelu]          -> _FusedDepthwiseConv2dNative
 *   MatMul + BiasAdd [+ Relu|Relu6|Elu|LeakyRelu]         -> _FusedMatMul
 *
 * The fused node takes the name (and id) of the pattern's last node, so a
 * fetch of the final value keeps working; the nodes before it go. It reads
 * the contraction's inputs and the bias or batch-norm parameters, and takes
 * the control inputs of every node it replaces, so it waits for the same
 * things and is dead exactly when the last node was. Its kernel gives the
 * same bits as the nodes it replaces (kernels/fused_epilogue.h).
 *
 * A pattern fuses only when each node but the last has that one consumer,
 * is not kept or fed, and all run in one frame on one device, with T
 * float32 and a kernel for it. Like TF's CPU remapper: Conv2D only in NHWC
 * (TensorFlow's CPU kernel has no NCHW), no Tanh or Sigmoid (TF fuses those
 * only on GPU or oneDNN). The exception is DepthwiseConv2dNative: TF's
 * _FusedDepthwiseConv2dNative kernel is oneDNN's (on by default in x86
 * builds since TF 2.9), and fusing it saves MobileNets a pass over every
 * depthwise output; the depthwise conv is also NHWC only here. So a graph
 * this pass wrote (`dfexec optimize`) runs in TensorFlow on a CPU with
 * oneDNN. Default: the kernels are exact and faster. */
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "rewrite.h"

typedef enum { K_CONV, K_DEPTHWISE, K_MATMUL } contraction_kind;

typedef struct pattern {
  int contraction, mid, act; /* act -1 when there is none; the last node is act, else mid */
  contraction_kind kind;
  bool bn;
} pattern;

static const char *const fused_op[] = {"_FusedConv2D", "_FusedDepthwiseConv2dNative", "_FusedMatMul"};

static bool is_op(const dfx_node *n, const char *op) { return strcmp(n->op, op) == 0; }

static bool is_activation(const dfx_node *n) {
  return is_op(n, "Relu") || is_op(n, "Relu6") || is_op(n, "Elu") || is_op(n, "LeakyRelu");
}

static bool is_batch_norm(const dfx_node *n) {
  return is_op(n, "FusedBatchNorm") || is_op(n, "FusedBatchNormV2") || is_op(n, "FusedBatchNormV3");
}

static bool f32(const dfx_node *n, const char *attr) { return dfx__attr_type(n, attr, DFX_INVALID) == DFX_F32; }

/* Whether only output 0 (y) of a batch norm is read. */
static bool only_y_used(const dfx_node *bn) {
  for (int e = 0; e < bn->n_edges; e++)
    if (bn->edges[e].src_slot != 0) return false;
  return true;
}

/* Whether the registry has a float32 kernel for the fused op (no registry:
 * TensorFlow's CPU kernels are the target, and they have one). */
static bool kernel_ok(const dfx_pass_ctx *c, const char *op) {
  return !c->reg || (dfx__registry_kernel_types(c->reg, op, "T") >> DFX_F32 & 1);
}

/* Matches the pattern that starts at contraction i. */
static bool match(const dfx_pass_ctx *c, int i, pattern *p) {
  const dfx_graph *g = c->g;
  const dfx_node *x = &g->nodes[i];
  if (is_op(x, "Conv2D")) p->kind = K_CONV;
  else if (is_op(x, "DepthwiseConv2dNative")) p->kind = K_DEPTHWISE;
  else if (is_op(x, "MatMul")) p->kind = K_MATMUL;
  else return false;
  bool conv = p->kind != K_MATMUL;
  if (x->removed || !f32(x, "T")) return false;
  /* The BiasAdd or batch norm must add along the conv's channels. */
  const char *fmt = conv ? dfx__attr_str(x, "data_format", "NHWC") : "NHWC";
  if (strcmp(fmt, "NHWC") != 0) return false; /* TensorFlow's CPU kernel has only NHWC */
  if (!kernel_ok(c, fused_op[p->kind])) return false;
  int slot;
  p->contraction = i;
  p->mid = dfx__rewrite_sole_consumer(c, i, &slot);
  p->act = -1;
  if (p->mid < 0 || slot != 0) return false;
  const dfx_node *m = &g->nodes[p->mid];
  if (!dfx__rewrite_same_place(x, m) || dfx__pass_fed(c, m->name) || !f32(m, "T")) return false;
  p->bn = conv && is_batch_norm(m);
  if (p->bn) {
    if (dfx__attr_bool(m, "is_training", true) || strcmp(dfx__attr_str(m, "data_format", "NHWC"), fmt) != 0 ||
        (m->def && dfx__op_def_attr(m->def, "U") && !f32(m, "U")) || !only_y_used(m))
      return false;
    /* A kept batch norm may be fetched at an output the fused node lacks. */
    if (dfx__pass_keeps(c, m->name)) return false;
  } else if (!is_op(m, "BiasAdd") || strcmp(dfx__attr_str(m, "data_format", "NHWC"), fmt) != 0) {
    return false;
  }
  int a = dfx__rewrite_sole_consumer(c, p->mid, &slot);
  if (a >= 0 && slot == 0 && is_activation(&g->nodes[a]) && f32(&g->nodes[a], "T") &&
      dfx__rewrite_same_place(m, &g->nodes[a]) && !dfx__pass_fed(c, g->nodes[a].name))
    p->act = a;
  return true;
}

static const char *const conv_attrs[] = {"strides", "padding", "explicit_paddings", "data_format", "dilations",
                                         "use_cudnn_on_gpu", NULL};
static const char *const depthwise_attrs[] = {"strides", "padding", "explicit_paddings", "data_format", "dilations",
                                              NULL};
static const char *const matmul_attrs[] = {"transpose_a", "transpose_b", NULL};
static const char *const *const attrs_of[] = {conv_attrs, depthwise_attrs, matmul_attrs};

static dfx_code set_fused_ops(dfx_graph *g, int id, const char *first, const char *act, dfx_status *st) {
  dfx_str ops[2] = {{(char *)first, strlen(first)}, {(char *)(act ? act : ""), act ? strlen(act) : 0}};
  dfx_attr a = {.name = "fused_ops", .kind = DFX_ATTR_LIST, .v.list = {.kind = DFX_ATTR_S, .n = act ? 2 : 1}};
  a.v.list.v.s = ops;
  return dfx__graph_set_attr(g, id, &a, st);
}

/* Rebuilds the pattern's last node as the fused op (see top). */
static dfx_code fuse(dfx_pass_ctx *c, const pattern *p) {
  dfx_graph *g = c->g;
  dfx_status *st = c->st;
  int last = p->act >= 0 ? p->act : p->mid;
  int n_args = p->bn ? 4 : 1;
  dfx_input in[6];
  in[0] = g->nodes[p->contraction].in[0];
  in[1] = g->nodes[p->contraction].in[1];
  for (int k = 0; k < n_args; k++) in[2 + k] = g->nodes[p->mid].in[1 + k];
  dfx_rewrite_ids ctrl = {0};
  dfx_code rc = dfx__rewrite_ids_add_ctrl(&ctrl, g, p->contraction);
  if (rc == DFX_OK) rc = dfx__rewrite_ids_add_ctrl(&ctrl, g, p->mid);
  if (rc == DFX_OK && p->act >= 0) rc = dfx__rewrite_ids_add_ctrl(&ctrl, g, p->act);
  /* What the last node's own attrs say, read before it is emptied. */
  const char *act = p->act >= 0 ? g->nodes[p->act].op : NULL;
  char act_op[16] = "";
  if (act) snprintf(act_op, sizeof act_op, "%s", act);
  float alpha = p->act >= 0 ? dfx__attr_float(&g->nodes[p->act], "alpha", 0.2f) : 0.2f;
  float eps = p->bn ? dfx__attr_float(&g->nodes[p->mid], "epsilon", 1e-4f) : 1e-4f;
  if (rc != DFX_OK) goto done;
  if ((rc = dfx__rewrite_reset(g, last, fused_op[p->kind], st)) != DFX_OK) goto done;
  for (int k = 0; k < 2 + n_args && rc == DFX_OK; k++) rc = dfx__graph_add_input(g, last, in[k].node, in[k].slot, st);
  for (int k = 0; k < ctrl.n && rc == DFX_OK; k++) rc = dfx__graph_add_input(g, last, ctrl.ids[k], -1, st);
  if (rc == DFX_OK) rc = dfx__rewrite_set_type(g, last, "T", DFX_F32, st);
  for (const char *const *a = attrs_of[p->kind]; *a && rc == DFX_OK; a++)
    rc = dfx__rewrite_copy_attr(g, last, p->contraction, *a, st);
  if (rc == DFX_OK) rc = dfx__rewrite_set_int(g, last, "num_args", n_args, st);
  if (rc == DFX_OK && p->kind == K_CONV) { /* the other two type their args by T */
    dfx_dtype targs[4] = {DFX_F32, DFX_F32, DFX_F32, DFX_F32};
    dfx_attr a = {.name = "TArgs", .kind = DFX_ATTR_LIST, .v.list = {.kind = DFX_ATTR_TYPE, .n = n_args}};
    a.v.list.v.type = targs;
    rc = dfx__graph_set_attr(g, last, &a, st);
  }
  if (rc == DFX_OK) rc = set_fused_ops(g, last, p->bn ? "FusedBatchNorm" : "BiasAdd", act ? act_op : NULL, st);
  if (rc == DFX_OK && p->bn) {
    dfx_attr a = {.name = "epsilon", .kind = DFX_ATTR_F, .v.f = eps};
    rc = dfx__graph_set_attr(g, last, &a, st);
  }
  if (rc == DFX_OK && act && !strcmp(act_op, "LeakyRelu")) {
    dfx_attr a = {.name = "leakyrelu_alpha", .kind = DFX_ATTR_F, .v.f = alpha};
    rc = dfx__graph_set_attr(g, last, &a, st);
  }
  if (rc != DFX_OK) goto done;
  dfx__graph_remove_node(g, p->contraction);
  c->counts.removed++;
  if (last != p->mid) {
    dfx__graph_remove_node(g, p->mid);
    c->counts.removed++;
  }
  c->counts.rewritten++;
done:
  dfx__rewrite_ids_free(&ctrl);
  return rc == DFX_ENOMEM ? dfx__status_set(st, DFX_ENOMEM, "out of memory") : rc;
}

static dfx_code remap_run(dfx_pass_ctx *c) {
  int n = c->g->n_nodes;
  for (int i = 0; i < n; i++) {
    pattern p;
    if (!match(c, i, &p)) continue;
    dfx_code rc = fuse(c, &p);
    if (rc != DFX_OK) return rc;
  }
  return DFX_OK;
}

const dfx_pass dfx__pass_remap = {
    .name = "remap",
    .purpose = "fuse Conv2D/MatMul with their BiasAdd or batch norm and activation into _FusedConv2D/_FusedMatMul",
    .run = remap_run,
    .in_default = true,
};
