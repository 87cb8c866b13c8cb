/* shape_fns_nn.c - shape functions of TF's nn_ops.cc and image_ops.cc:
 * convolutions and pools (SAME/VALID/EXPLICIT padding, strides,
 * dilations, NHWC/NCHW and their 3-D forms), their gradients, BiasAdd,
 * softmaxes and losses, FusedBatchNorm, TopK, resizes, space/depth and
 * space/batch moves, NonMaxSuppression, the fused RNN cells. The windowed
 * size follows TF's GetWindowedOutputSizeFromDimsV2. */
#include <string.h>

#include "shape_fn.h"

enum { PAD_VALID, PAD_SAME, PAD_EXPLICIT, PAD_BAD };

static int padding(const dfx_shape_ctx *c) {
  const char *p = dfx__attr_str(c->node, "padding", "");
  return strcmp(p, "VALID") == 0 ? PAD_VALID : strcmp(p, "SAME") == 0 ? PAD_SAME : strcmp(p, "EXPLICIT") == 0 ? PAD_EXPLICIT : PAD_BAD;
}

/* One output size of a window of size k (dilation d) moved by s over `in`
 * padded by pb and pa: -1 when unknown; false when the run fails. */
static bool window(int64_t in, int64_t k, int64_t s, int64_t d, int pad, int64_t pb, int64_t pa, int64_t *out) {
  *out = DFX_DIM_UNKNOWN;
  if (s <= 0 || d < 1 || pad == PAD_BAD) return false;
  if (in < 0) return true;
  if (pad == PAD_SAME) {
    *out = (in + s - 1) / s;
    return true;
  }
  if (pad == PAD_VALID) pb = pa = 0;
  if (pb < 0 || pa < 0) return false;
  if (k < 0) return true;
  int64_t eff = (k - 1) * d + 1, avail = in + pb + pa;
  if (k < 1 || avail < eff) return false; /* a negative size: TF rejects it */
  *out = (avail - eff + s) / s;
  return true;
}

/* Where N, C and the spatial dims sit in a rank-r tensor of this format
 * (0 channels last, 1 channels first). */
static int dim_n(int fmt, int r) { return (void)fmt, (void)r, 0; }
static int dim_c(int fmt, int r) { return fmt ? 1 : r - 1; }
static int dim_sp(int fmt, int i) { return fmt ? 2 + i : 1 + i; }

/* ---- convolutions ---- */

/* Conv2D and Conv3D (spatial = 2 or 3): filter [spatial..., in, out]. */
static void conv(dfx_shape_ctx *c, int spatial, bool depthwise) {
  int r = spatial + 2, fmt = dfx__sctx_data_format(c), pad = padding(c);
  dfx_pshape x, f;
  int64_t strides[8], dil[8] = {1, 1, 1, 1, 1, 1, 1, 1}, ex[16];
  if (fmt < 0 || !dfx__pshape_with_rank(dfx__sctx_in(c, 0), r, &x) || !dfx__pshape_with_rank(dfx__sctx_in(c, 1), r, &f))
    return;
  if (dfx__sctx_attr_ints(c, "strides", strides, 8) != r) return;
  int nd = dfx__sctx_attr_ints(c, "dilations", dil, 8); /* absent: all 1 */
  if (nd >= 0 && nd != r) return;
  int nex = pad == PAD_EXPLICIT ? dfx__sctx_attr_ints(c, "explicit_paddings", ex, 16) : 0;
  if (pad == PAD_EXPLICIT && nex != 2 * r) return;
  int64_t in_c = x.dims[dim_c(fmt, r)], f_in = f.dims[spatial], f_out = f.dims[spatial + 1], out_c;
  if (depthwise) {
    if (!dfx__dim_merge(in_c, f_in, &in_c)) return;
    out_c = dfx__dim_mul(in_c, f_out);
  } else {
    if (in_c >= 0 && f_in > 0) { /* grouped: the groups must divide both depths */
      if (in_c % f_in != 0) return;
      int64_t groups = in_c / f_in;
      if (groups > 0 && f_out >= 0 && f_out % groups != 0) return;
    }
    out_c = f_out;
  }
  dfx_pshape out = dfx__pshape_of_rank(r);
  out.dims[dim_n(fmt, r)] = x.dims[dim_n(fmt, r)];
  out.dims[dim_c(fmt, r)] = out_c;
  for (int i = 0; i < spatial; i++) {
    int di = dim_sp(fmt, i);
    int64_t pb = pad == PAD_EXPLICIT ? ex[2 * di] : 0, pa = pad == PAD_EXPLICIT ? ex[2 * di + 1] : 0;
    if (!window(x.dims[di], f.dims[i], strides[di], dil[di], pad, pb, pa, &out.dims[di])) return;
  }
  dfx__sctx_set(c, 0, &out);
}

static void conv2d(dfx_shape_ctx *c) { conv(c, 2, false); }
static void conv3d(dfx_shape_ctx *c) { conv(c, 3, false); }
static void depthwise_conv2d(dfx_shape_ctx *c) { conv(c, 2, true); }

/* The backprop ops whose output shape is an input's value (input_sizes,
 * filter_sizes, orig_input_shape), of rank r. */
static void sized_by(dfx_shape_ctx *c, int k, int r) {
  dfx_pshape s;
  if (dfx__sctx_shape_from_value(c, k, &s) && dfx__pshape_with_rank(&s, r, &s)) dfx__sctx_set(c, 0, &s);
}
static void sized_by_0_rank4(dfx_shape_ctx *c) { sized_by(c, 0, 4); }
static void sized_by_1_rank4(dfx_shape_ctx *c) { sized_by(c, 1, 4); }
static void sized_by_0_rank5(dfx_shape_ctx *c) { sized_by(c, 0, 5); }
static void sized_by_1_rank5(dfx_shape_ctx *c) { sized_by(c, 1, 5); }

/* Output 0 has input k's shape. */
static void like_0(dfx_shape_ctx *c) { dfx__sctx_set(c, 0, dfx__sctx_in(c, 0)); }
static void like_1(dfx_shape_ctx *c) { dfx__sctx_set(c, 0, dfx__sctx_in(c, 1)); }

/* ---- pools ---- */

/* MaxPool, AvgPool (2-D, window over C too for MaxPool), their 3-D forms;
 * ksize and strides from attrs, or from inputs 1 and 2 (MaxPoolV2). */
static void pool(dfx_shape_ctx *c, int spatial, bool from_inputs, bool window_depth) {
  int r = spatial + 2, fmt = dfx__sctx_data_format(c), pad = padding(c);
  dfx_pshape x;
  int64_t ks[DFX_SHAPE_VALUE_MAX], st[DFX_SHAPE_VALUE_MAX];
  int nk, ns;
  if (fmt < 0 || pad == PAD_EXPLICIT || !dfx__pshape_with_rank(dfx__sctx_in(c, 0), r, &x)) return;
  if (from_inputs) {
    if (!dfx__sctx_value(c, 1, ks, &nk) || !dfx__sctx_value(c, 2, st, &ns)) return;
  } else {
    nk = dfx__sctx_attr_ints(c, "ksize", ks, DFX_SHAPE_VALUE_MAX);
    ns = dfx__sctx_attr_ints(c, "strides", st, DFX_SHAPE_VALUE_MAX);
  }
  if (nk != r || ns != r) return;
  dfx_pshape out = x;
  for (int i = 0; i < spatial; i++) {
    int di = dim_sp(fmt, i);
    if (!window(x.dims[di], ks[di], st[di], 1, pad, 0, 0, &out.dims[di])) return;
  }
  int dc = dim_c(fmt, r);
  if (window_depth && !window(x.dims[dc], ks[dc], st[dc], 1, pad, 0, 0, &out.dims[dc])) return;
  dfx__sctx_set(c, 0, &out);
}

static void max_pool(dfx_shape_ctx *c) { pool(c, 2, false, true); }
static void max_pool_v2(dfx_shape_ctx *c) { pool(c, 2, true, true); }
static void avg_pool(dfx_shape_ctx *c) { pool(c, 2, false, false); }
static void pool3d(dfx_shape_ctx *c) { pool(c, 3, false, false); }

static void max_pool_with_argmax(dfx_shape_ctx *c) {
  pool(c, 2, false, true);
  dfx__sctx_set(c, 1, &c->out[0].shape);
}

/* ---- bias, softmax, losses, normalisation ---- */

static void bias_add(dfx_shape_ctx *c) {
  const dfx_pshape *x = dfx__sctx_in(c, 0);
  dfx_pshape b;
  int fmt = strcmp(c->node->op, "BiasAddV1") == 0 ? 0 : dfx__sctx_data_format(c);
  if (fmt < 0 || x->rank < (fmt ? 3 : 2) || !dfx__pshape_with_rank(dfx__sctx_in(c, 1), 1, &b)) return;
  dfx_pshape out = *x;
  int ci = fmt ? 1 : x->rank - 1;
  if (!dfx__dim_merge(out.dims[ci], b.dims[0], &out.dims[ci])) return;
  dfx__sctx_set(c, 0, &out);
}

static void bias_add_grad(dfx_shape_ctx *c) {
  const dfx_pshape *x = dfx__sctx_in(c, 0);
  int fmt = dfx__sctx_data_format(c);
  if (fmt < 0 || x->rank < (fmt ? 3 : 2)) return;
  dfx_pshape out = dfx__pshape_vector(x->dims[fmt ? 1 : x->rank - 1]);
  dfx__sctx_set(c, 0, &out);
}

static void softmax(dfx_shape_ctx *c) {
  if (dfx__sctx_in(c, 0)->rank != 0) like_0(c);
}

static void scalar(dfx_shape_ctx *c) {
  dfx_pshape s = dfx__pshape_scalar();
  dfx__sctx_set(c, 0, &s);
}

static void softmax_xent(dfx_shape_ctx *c) {
  dfx_pshape a, b, m;
  if (!dfx__pshape_with_rank(dfx__sctx_in(c, 0), 2, &a) || !dfx__pshape_with_rank(dfx__sctx_in(c, 1), 2, &b) ||
      !dfx__pshape_broadcast(&a, &b, &m))
    return;
  dfx_pshape loss = dfx__pshape_vector(m.dims[0]);
  dfx__sctx_set(c, 0, &loss);
  dfx__sctx_set(c, 1, &m);
}

static void sparse_softmax_xent(dfx_shape_ctx *c) {
  dfx_pshape f, l;
  int64_t batch;
  if (!dfx__pshape_with_rank(dfx__sctx_in(c, 0), 2, &f) || !dfx__pshape_with_rank(dfx__sctx_in(c, 1), 1, &l) ||
      !dfx__dim_merge(f.dims[0], l.dims[0], &batch))
    return;
  f.dims[0] = batch;
  dfx_pshape loss = dfx__pshape_vector(batch);
  dfx__sctx_set(c, 0, &loss);
  dfx__sctx_set(c, 1, &f);
}

static void in_top_k(dfx_shape_ctx *c) {
  dfx_pshape p, t;
  int64_t batch;
  if (!dfx__pshape_with_rank(dfx__sctx_in(c, 0), 2, &p) || !dfx__pshape_with_rank(dfx__sctx_in(c, 1), 1, &t) ||
      !dfx__dim_merge(p.dims[0], t.dims[0], &batch))
    return;
  dfx_pshape out = dfx__pshape_vector(batch);
  dfx__sctx_set(c, 0, &out);
}

/* FusedBatchNorm (V2, V3): y like x with C merged with scale and offset
 * (and mean and variance when not training); the statistics are [C]. */
static void fused_batch_norm(dfx_shape_ctx *c) {
  const dfx_pshape *x = dfx__sctx_in(c, 0);
  int fmt = dfx__sctx_data_format(c);
  if (fmt < 0 || (x->rank >= 0 && x->rank != 4 && x->rank != 5)) return;
  const char *f = dfx__attr_str(c->node, "data_format", "NHWC");
  int r = x->rank >= 0 ? x->rank : strcmp(f, "NDHWC") == 0 || strcmp(f, "NCDHW") == 0 ? 5 : 4;
  dfx_pshape y;
  if (!dfx__pshape_with_rank(x, r, &y)) return;
  bool training = dfx__attr_bool(c->node, "is_training", true);
  int ci = fmt ? 1 : r - 1, n_vec = training && dfx__attr_float(c->node, "exponential_avg_factor", 1.0f) == 1.0f ? 3 : 5;
  for (int k = 1; k < n_vec && k < c->n_in; k++) {
    dfx_pshape v;
    if (!dfx__pshape_with_rank(dfx__sctx_in(c, k), 1, &v) || !dfx__dim_merge(y.dims[ci], v.dims[0], &y.dims[ci])) return;
  }
  dfx__sctx_set(c, 0, &y);
  dfx_pshape v = dfx__pshape_vector(y.dims[ci]);
  for (int k = 1; k < 5; k++) dfx__sctx_set(c, k, &v);
}

static void lrn(dfx_shape_ctx *c) {
  dfx_pshape x;
  if (dfx__pshape_with_rank(dfx__sctx_in(c, 0), 4, &x)) dfx__sctx_set(c, 0, &x);
}

/* ---- TopK, NthElement ---- */

static void top_k(dfx_shape_ctx *c) {
  const dfx_pshape *x = dfx__sctx_in(c, 0);
  int64_t k;
  if (x->rank < 1) return;
  if (strcmp(c->node->op, "TopK") == 0) k = dfx__attr_int(c->node, "k", -1);
  else if (!dfx__sctx_scalar(c, 1, &k)) k = DFX_DIM_UNKNOWN;
  if (k < 0) k = DFX_DIM_UNKNOWN;
  int64_t last = x->dims[x->rank - 1];
  if (k >= 0 && last >= 0 && last < k) return;
  dfx_pshape out = *x;
  out.dims[out.rank - 1] = k;
  dfx__sctx_set(c, 0, &out);
  dfx__sctx_set(c, 1, &out);
}

static void nth_element(dfx_shape_ctx *c) {
  const dfx_pshape *x = dfx__sctx_in(c, 0);
  if (x->rank < 1) return;
  dfx_pshape out = dfx__pshape_make(x->rank - 1, x->dims);
  dfx__sctx_set(c, 0, &out);
}

/* ---- images ---- */

/* Resize*(images [N, H, W, C], size [2]). */
static void resize(dfx_shape_ctx *c) {
  dfx_pshape x, size;
  if (!dfx__pshape_with_rank(dfx__sctx_in(c, 0), 4, &x) || !dfx__sctx_shape_from_value(c, 1, &size) ||
      !dfx__pshape_with_rank(&size, 2, &size))
    return;
  x.dims[1] = size.dims[0];
  x.dims[2] = size.dims[1];
  dfx__sctx_set(c, 0, &x);
}

static void crop_and_resize(dfx_shape_ctx *c) {
  dfx_pshape img, boxes, ind, size;
  int64_t n;
  if (!dfx__pshape_with_rank(dfx__sctx_in(c, 0), 4, &img) || !dfx__pshape_with_rank(dfx__sctx_in(c, 1), 2, &boxes) ||
      !dfx__pshape_with_rank(dfx__sctx_in(c, 2), 1, &ind) || !dfx__dim_merge(boxes.dims[0], ind.dims[0], &n) ||
      !dfx__sctx_shape_from_value(c, 3, &size) || !dfx__pshape_with_rank(&size, 2, &size))
    return;
  dfx_pshape out = {.rank = 4, .dims = {n, size.dims[0], size.dims[1], img.dims[3]}};
  dfx__sctx_set(c, 0, &out);
}

/* ExtractImagePatches and Dilation2D: windows with rates. */
static void patches(dfx_shape_ctx *c, bool dilation2d) {
  dfx_pshape x;
  int64_t ks[4] = {1, 1, 1, 1}, st[4], rt[4];
  int pad = padding(c);
  if (!dfx__pshape_with_rank(dfx__sctx_in(c, 0), 4, &x) || pad == PAD_EXPLICIT) return;
  if (dfx__sctx_attr_ints(c, "strides", st, 4) != 4 || dfx__sctx_attr_ints(c, "rates", rt, 4) != 4) return;
  dfx_pshape out = x;
  if (dilation2d) {
    dfx_pshape f;
    if (!dfx__pshape_with_rank(dfx__sctx_in(c, 1), 3, &f) || !dfx__dim_merge(x.dims[3], f.dims[2], &out.dims[3])) return;
    ks[1] = f.dims[0];
    ks[2] = f.dims[1];
  } else {
    if (dfx__sctx_attr_ints(c, "ksizes", ks, 4) != 4) return;
    out.dims[3] = dfx__dim_mul(dfx__dim_mul(x.dims[3], ks[1]), ks[2]);
  }
  for (int i = 1; i <= 2; i++)
    if (!window(x.dims[i], ks[i], st[i], rt[i], pad, 0, 0, &out.dims[i])) return;
  dfx__sctx_set(c, 0, &out);
}
static void extract_image_patches(dfx_shape_ctx *c) { patches(c, false); }
static void dilation2d(dfx_shape_ctx *c) { patches(c, true); }

/* SpaceToDepth and DepthToSpace (block_size, NHWC or NCHW). */
static void space_depth(dfx_shape_ctx *c, bool to_depth) {
  int fmt = dfx__sctx_data_format(c);
  int64_t b = dfx__attr_int(c->node, "block_size", 0);
  dfx_pshape x;
  if (fmt < 0 || b < 2 || !dfx__pshape_with_rank(dfx__sctx_in(c, 0), 4, &x)) return;
  dfx_pshape out = x;
  int ci = dim_c(fmt, 4);
  for (int i = 0; i < 2; i++) {
    int64_t d = x.dims[dim_sp(fmt, i)];
    if (to_depth && d >= 0 && d % b) return;
    out.dims[dim_sp(fmt, i)] = d < 0 ? d : to_depth ? d / b : dfx__dim_mul(d, b);
  }
  int64_t ch = x.dims[ci];
  if (!to_depth && ch >= 0 && ch % (b * b)) return;
  out.dims[ci] = ch < 0 ? ch : to_depth ? dfx__dim_mul(ch, b * b) : ch / (b * b);
  dfx__sctx_set(c, 0, &out);
}
static void space_to_depth(dfx_shape_ctx *c) { space_depth(c, true); }
static void depth_to_space(dfx_shape_ctx *c) { space_depth(c, false); }

/* SpaceToBatchND(input, block_shape, paddings) and BatchToSpaceND(input,
 * block_shape, crops); the V1 ops carry block_size as an attr over the two
 * spatial dims of a 4-D input. */
static void space_batch(dfx_shape_ctx *c, bool to_batch, bool v1) {
  const dfx_pshape *x = dfx__sctx_in(c, 0);
  int64_t block[DFX_MAX_DIMS], pads[DFX_SHAPE_VALUE_MAX];
  int m, np;
  if (v1) {
    int64_t b = dfx__attr_int(c->node, "block_size", 0);
    m = 2;
    block[0] = block[1] = b;
    if (b < 1 || !dfx__sctx_value(c, 1, pads, &np)) return;
  } else {
    int64_t bv[DFX_SHAPE_VALUE_MAX];
    if (!dfx__sctx_value(c, 1, bv, &m) || m > DFX_MAX_DIMS || !dfx__sctx_value(c, 2, pads, &np)) return;
    memcpy(block, bv, sizeof(int64_t) * (size_t)m);
  }
  if (np != 2 * m || x->rank < m + 1 || (v1 && x->rank != 4)) return;
  dfx_pshape out = *x;
  int64_t prod = 1;
  for (int i = 0; i < m; i++) {
    if (block[i] < 1 || pads[2 * i] < 0 || pads[2 * i + 1] < 0) return;
    prod = dfx__dim_mul(prod, block[i]);
    int64_t d = x->dims[1 + i];
    if (d < 0) continue;
    if (to_batch) {
      int64_t padded = d + pads[2 * i] + pads[2 * i + 1];
      if (padded % block[i]) return;
      out.dims[1 + i] = padded / block[i];
    } else {
      int64_t full = dfx__dim_mul(d, block[i]) - pads[2 * i] - pads[2 * i + 1];
      if (full < 0) return;
      out.dims[1 + i] = full;
    }
  }
  if (prod < 1) return;
  int64_t n = x->dims[0];
  if (!to_batch && n >= 0 && n % prod) return;
  out.dims[0] = n < 0 ? n : to_batch ? dfx__dim_mul(n, prod) : n / prod;
  dfx__sctx_set(c, 0, &out);
}
static void space_to_batch_nd(dfx_shape_ctx *c) { space_batch(c, true, false); }
static void batch_to_space_nd(dfx_shape_ctx *c) { space_batch(c, false, false); }
static void space_to_batch(dfx_shape_ctx *c) { space_batch(c, true, true); }
static void batch_to_space(dfx_shape_ctx *c) { space_batch(c, false, true); }

/* ---- NonMaxSuppression ---- */

static void nms(dfx_shape_ctx *c) {
  int64_t max_out;
  bool padded = dfx__attr_bool(c->node, "pad_to_max_output_size", false);
  dfx_pshape sel = dfx__pshape_vector(padded && dfx__sctx_scalar(c, 2, &max_out) && max_out >= 0 ? max_out
                                                                                               : DFX_DIM_UNKNOWN);
  dfx_pshape s = dfx__pshape_scalar();
  dfx__sctx_set(c, 0, &sel);
  if (strcmp(c->node->op, "NonMaxSuppressionV5") == 0) {
    dfx__sctx_set(c, 1, &sel);
    dfx__sctx_set(c, 2, &s);
  } else {
    dfx__sctx_set(c, 1, &s);
  }
}

/* ---- fused RNN cells ---- */

static void lstm_block_cell(dfx_shape_ctx *c) {
  dfx_pshape x, cs;
  if (!dfx__pshape_with_rank(dfx__sctx_in(c, 0), 2, &x) || !dfx__pshape_with_rank(dfx__sctx_in(c, 1), 2, &cs)) return;
  dfx_pshape out = {.rank = 2, .dims = {x.dims[0], cs.dims[1]}};
  for (int k = 0; k < c->n_out; k++) dfx__sctx_set(c, k, &out);
}

static void gru_block_cell(dfx_shape_ctx *c) {
  dfx_pshape x, h;
  if (!dfx__pshape_with_rank(dfx__sctx_in(c, 0), 2, &x) || !dfx__pshape_with_rank(dfx__sctx_in(c, 1), 2, &h)) return;
  dfx_pshape out = {.rank = 2, .dims = {x.dims[0], h.dims[1]}};
  for (int k = 0; k < c->n_out; k++) dfx__sctx_set(c, k, &out);
}

/* BlockLSTM(seq_len_max, x [T, B, I], cs_prev, h_prev, w, wci, wcf, wco, b [4C]). */
static void block_lstm(dfx_shape_ctx *c) {
  dfx_pshape x, b;
  if (!dfx__pshape_with_rank(dfx__sctx_in(c, 1), 3, &x) || !dfx__pshape_with_rank(dfx__sctx_in(c, 8), 1, &b)) return;
  if (b.dims[0] >= 0 && b.dims[0] % 4) return;
  dfx_pshape out = {.rank = 3, .dims = {x.dims[0], x.dims[1], b.dims[0] >= 0 ? b.dims[0] / 4 : DFX_DIM_UNKNOWN}};
  for (int k = 0; k < c->n_out; k++) dfx__sctx_set(c, k, &out);
}

const dfx_shape_fn_def dfx__shape_fns_nn[] = {
    {"Conv2D", conv2d}, {"Conv3D", conv3d}, {"DepthwiseConv2dNative", depthwise_conv2d},
    {"Conv2DBackpropInput", sized_by_0_rank4}, {"Conv2DBackpropFilter", sized_by_1_rank4},
    {"DepthwiseConv2dNativeBackpropInput", sized_by_0_rank4},
    {"DepthwiseConv2dNativeBackpropFilter", sized_by_1_rank4},
    {"Conv3DBackpropInputV2", sized_by_0_rank5}, {"Conv3DBackpropFilterV2", sized_by_1_rank5},
    {"Conv3DBackpropInput", like_0}, {"Conv3DBackpropFilter", like_1},
    {"AvgPoolGrad", sized_by_0_rank4}, {"MaxPoolGrad", like_0}, {"MaxPoolGradV2", like_0},
    {"MaxPool", max_pool}, {"MaxPoolV2", max_pool_v2}, {"AvgPool", avg_pool}, {"MaxPool3D", pool3d},
    {"AvgPool3D", pool3d}, {"MaxPoolWithArgmax", max_pool_with_argmax},
    {"BiasAdd", bias_add}, {"BiasAddV1", bias_add}, {"BiasAddGrad", bias_add_grad},
    {"Softmax", softmax}, {"LogSoftmax", softmax}, {"L2Loss", scalar},
    {"SoftmaxCrossEntropyWithLogits", softmax_xent},
    {"SparseSoftmaxCrossEntropyWithLogits", sparse_softmax_xent}, {"InTopK", in_top_k}, {"InTopKV2", in_top_k},
    {"FusedBatchNorm", fused_batch_norm}, {"FusedBatchNormV2", fused_batch_norm},
    {"FusedBatchNormV3", fused_batch_norm}, {"LRN", lrn},
    {"TopK", top_k}, {"TopKV2", top_k}, {"NthElement", nth_element},
    {"ResizeBilinear", resize}, {"ResizeNearestNeighbor", resize}, {"ResizeBicubic", resize},
    {"ResizeArea", resize}, {"CropAndResize", crop_and_resize},
    {"ExtractImagePatches", extract_image_patches}, {"Dilation2D", dilation2d},
    {"AdjustContrastv2", like_0}, {"AdjustHue", like_0}, {"AdjustSaturation", like_0}, {"HSVToRGB", like_0},
    {"RGBToHSV", like_0}, {"DrawBoundingBoxes", like_0}, {"DrawBoundingBoxesV2", like_0},
    {"SpaceToDepth", space_to_depth}, {"DepthToSpace", depth_to_space},
    {"SpaceToBatchND", space_to_batch_nd}, {"BatchToSpaceND", batch_to_space_nd},
    {"SpaceToBatch", space_to_batch}, {"BatchToSpace", batch_to_space},
    {"NonMaxSuppression", nms}, {"NonMaxSuppressionV2", nms}, {"NonMaxSuppressionV3", nms},
    {"NonMaxSuppressionV4", nms}, {"NonMaxSuppressionV5", nms},
    {"LSTMBlockCell", lstm_block_cell}, {"GRUBlockCell", gru_block_cell}, {"BlockLSTM", block_lstm},
    {NULL, NULL}};
