/* fold_pad.c - the `fold_pad` pass: a zero Pad whose only reader is a
 * convolution becomes that convolution's own padding (Keras writes
 * ZeroPadding2D + a VALID convolution for every strided MobileNet layer):
 *
 *   Pad | PadV2 (constant_values 0)  ->  Conv2D | DepthwiseConv2dNative |
 *   _FusedConv2D | _FusedDepthwiseConv2dNative with padding VALID or EXPLICIT
 *   becomes the convolution reading the Pad's input, with padding EXPLICIT
 *   and explicit_paddings = its own (if any) + the Pad's
 *
 * The convolution pads with zeros exactly where the Pad put them, so the
 * result is the same bits, and the padded copy is never made. Only when
 * the paddings are a constant (a plain Const or a loop invariant), pad
 * nothing along the batch and channel dims, are >= 0, and the Pad is
 * float32, has that one consumer at its input 0, is neither kept nor fed
 * and runs in the consumer's frame on its device. The convolution takes
 * the Pad's control inputs, so it waits for what the Pad waited for.
 * PadV2's constant must be +0 (a -0 border would change the sign of an
 * all-border sum). Default: it saves a copy of the tensor, and all four
 * ops take EXPLICIT padding in TensorFlow's op registry, so the result
 * still imports there. */
#include <math.h>
#include <string.h>

#include "alloc.h"
#include "rewrite.h"

static bool is_op(const dfx_node *n, const char *op) { return strcmp(n->op, op) == 0; }

static bool is_conv(const dfx_node *n) {
  return is_op(n, "Conv2D") || is_op(n, "DepthwiseConv2dNative") || is_op(n, "_FusedConv2D") ||
         is_op(n, "_FusedDepthwiseConv2dNative");
}

/* The constant a data input reads, or NULL. */
static const dfx_tensor *const_input(const dfx_pass_ctx *c, dfx_input in) {
  int via, src = dfx__rewrite_const_source(c, in, &via);
  return src < 0 ? NULL : dfx__attr_tensor(&c->g->nodes[src], "value");
}

/* The Pad's [4, 2] paddings as int64 in pads[8], or false. */
static bool read_pads(const dfx_tensor *t, int64_t *pads) {
  if (!t || t->ndims != 2 || t->dims[0] != 4 || t->dims[1] != 2) return false;
  if (t->dtype != DFX_I32 && t->dtype != DFX_I64) return false;
  for (int i = 0; i < 8; i++) {
    pads[i] = t->dtype == DFX_I32 ? ((const int32_t *)t->data)[i] : ((const int64_t *)t->data)[i];
    if (pads[i] < 0) return false;
  }
  return true;
}

/* Folds Pad node i into its consumer when the rule (top) allows. */
static dfx_code try_fold(dfx_pass_ctx *c, int i) {
  dfx_graph *g = c->g;
  const dfx_node *p = &g->nodes[i];
  bool v2 = is_op(p, "PadV2");
  if (p->removed || !(v2 || is_op(p, "Pad")) || dfx__attr_type(p, "T", DFX_INVALID) != DFX_F32) return DFX_OK;
  int slot, k = dfx__rewrite_sole_consumer(c, i, &slot);
  if (k < 0 || slot != 0 || !is_conv(&g->nodes[k]) || !dfx__rewrite_same_place(p, &g->nodes[k])) return DFX_OK;
  const dfx_node *conv = &g->nodes[k];
  if (dfx__attr_type(conv, "T", DFX_INVALID) != DFX_F32) return DFX_OK;
  if (v2) {
    const dfx_tensor *cv = p->n_in > 2 ? const_input(c, p->in[2]) : NULL;
    if (!cv || cv->dtype != DFX_F32 || cv->count != 1) return DFX_OK;
    float z = *(const float *)cv->data;
    if (z != 0 || signbit(z)) return DFX_OK;
  }
  int64_t pads[8];
  if (!read_pads(const_input(c, p->in[1]), pads)) return DFX_OK;
  const char *df = dfx__attr_str(conv, "data_format", "NHWC");
  int ch = !strcmp(df, "NHWC") ? 3 : !strcmp(df, "NCHW") ? 1 : -1;
  if (ch < 0 || pads[0] || pads[1] || pads[2 * ch] || pads[2 * ch + 1]) return DFX_OK;
  const char *padding = dfx__attr_str(conv, "padding", "");
  if (!strcmp(padding, "EXPLICIT")) {
    const dfx_attr_list *ep = dfx__attr_list(conv, "explicit_paddings");
    if (!ep || ep->kind != DFX_ATTR_I || ep->n != 8) return DFX_OK; /* malformed: the kernel says why */
    for (int d = 0; d < 8; d++)
      if (__builtin_add_overflow(pads[d], ep->v.i[d], &pads[d])) return DFX_OK;
  } else if (strcmp(padding, "VALID") != 0) {
    return DFX_OK;
  }

  dfx_rewrite_ids ctrl = {0};
  dfx_input from = p->in[0];
  dfx_code rc = dfx__rewrite_ids_add_ctrl(&ctrl, g, i);
  if (rc == DFX_OK) {
    dfx__graph_set_input(g, k, 0, from.node, from.slot);
    rc = dfx__rewrite_set_str(g, k, "padding", "EXPLICIT", c->st);
  }
  if (rc == DFX_OK) {
    dfx_attr a = {.name = "explicit_paddings", .kind = DFX_ATTR_LIST, .v.list = {.kind = DFX_ATTR_I, .n = 8}};
    a.v.list.v.i = pads;
    rc = dfx__graph_set_attr(g, k, &a, c->st);
  }
  for (int j = 0; j < ctrl.n && rc == DFX_OK; j++) rc = dfx__graph_add_input(g, k, ctrl.ids[j], -1, c->st);
  if (rc == DFX_OK) {
    dfx__graph_remove_node(g, i);
    c->counts.removed++;
    c->counts.rewritten++;
  }
  dfx__rewrite_ids_free(&ctrl);
  return rc == DFX_ENOMEM ? dfx__status_set(c->st, DFX_ENOMEM, "out of memory") : rc;
}

static dfx_code fold_pad_run(dfx_pass_ctx *c) {
  int n = c->g->n_nodes;
  for (int i = 0; i < n; i++) {
    dfx_code rc = try_fold(c, i);
    if (rc != DFX_OK) return rc;
  }
  return DFX_OK;
}

const dfx_pass dfx__pass_fold_pad = {
    .name = "fold_pad",
    .purpose = "fold a zero Pad into the convolution that reads it (its padding becomes EXPLICIT)",
    .run = fold_pad_run,
    .in_default = true,
};
