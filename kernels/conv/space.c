/* space.c - rearrangements between space, batch and depth: SpaceToBatchND,
 * BatchToSpaceND (and their v1 forms SpaceToBatch/BatchToSpace),
 * SpaceToDepth, DepthToSpace and ExtractImagePatches. All are element copies
 * of contiguous runs, so every dtype (strings included) is supported. */
#include "convutil.h"

#define MAXB 6 /* block dims handled */

/* Reads block_shape (input bi, or a scalar block size when bi < 0) and the
 * [M, 2] paddings/crops (input pi). */
static dfx_code read_blocks(dfx_kctx *ctx, int bi, int64_t bsize, int pi, const char *pname, int64_t *block,
                            int64_t (*pad)[2], int *m) {
  if (bi >= 0) {
    const dfx_tensor *b = ctx->in[bi];
    if (b->ndims != 1) return dfx__kctx_fail(ctx, DFX_EINVAL, "block_shape must be one-dimensional");
    if (b->count > MAXB) return dfx__kctx_fail(ctx, DFX_EUNIMPL, "at most %d block dimensions supported", MAXB);
    *m = (int)b->count;
    for (int i = 0; i < *m; i++) block[i] = dfx__tensor_get_i64(b, i);
  } else {
    *m = 2;
    block[0] = block[1] = bsize;
  }
  const dfx_tensor *p = ctx->in[pi];
  if (p->ndims != 2 || p->dims[0] != *m || p->dims[1] != 2) {
    char b1[96];
    return dfx__kctx_fail(ctx, DFX_EINVAL, "%s should have shape [%d, 2] instead of %s", pname, *m,
                          DFX_SHAPE_STR(p, b1));
  }
  for (int i = 0; i < *m; i++) {
    pad[i][0] = dfx__tensor_get_i64(p, 2 * i);
    pad[i][1] = dfx__tensor_get_i64(p, 2 * i + 1);
    if (block[i] < 1) return dfx__kctx_fail(ctx, DFX_EINVAL, "All values in block_shape must be positive");
    if (pad[i][0] < 0 || pad[i][1] < 0)
      return dfx__kctx_fail(ctx, DFX_EINVAL, "All values in %s must be >= 0", pname);
  }
  if (ctx->in[0]->ndims < 1 + *m)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "input rank should be >= %d instead of %d", 1 + *m, ctx->in[0]->ndims);
  return DFX_OK;
}

/* Shared walk: to_batch copies padded space into batch, otherwise back. */
static dfx_code space_batch(dfx_kctx *ctx, int to_batch, int bi, int64_t bsize, int pi) {
  const dfx_tensor *x = ctx->in[0];
  int64_t block[MAXB], pad[MAXB][2];
  int m = 0;
  dfx_code c = read_blocks(ctx, bi, bsize, pi, to_batch ? "paddings" : "crops", block, pad, &m);
  if (c != DFX_OK) return c;
  int64_t prod = 1, yd[DFX_MAX_DIMS], rest = 1;
  for (int i = 0; i < m; i++) prod *= block[i];
  for (int i = 1 + m; i < x->ndims; i++) rest *= x->dims[i];
  memcpy(yd, x->dims, sizeof(int64_t) * (size_t)x->ndims);
  int64_t B = x->dims[0];
  if (to_batch) {
    yd[0] = B * prod;
    for (int i = 0; i < m; i++) {
      int64_t ps = x->dims[1 + i] + pad[i][0] + pad[i][1];
      if (ps % block[i])
        return dfx__kctx_fail(ctx, DFX_EINVAL, "padded_shape[%d]=%lld is not divisible by block_shape[%d]=%lld", i,
                              (long long)ps, i, (long long)block[i]);
      yd[1 + i] = ps / block[i];
    }
  } else {
    if (B % prod)
      return dfx__kctx_fail(ctx, DFX_EINVAL,
                            "Input batch dimension (%lld) is not divisible by product of block sizes (%lld)",
                            (long long)B, (long long)prod);
    yd[0] = B / prod;
    for (int i = 0; i < m; i++) {
      yd[1 + i] = x->dims[1 + i] * block[i] - pad[i][0] - pad[i][1];
      if (yd[1 + i] < 0)
        return dfx__kctx_fail(ctx, DFX_EINVAL, "Negative output dimension size caused by overly large crop");
    }
  }
  dfx_tensor *y = dfx__kctx_alloc(ctx, 0, (dfx_dtype)x->dtype, x->ndims, yd);
  if (!y) return DFX_ENOMEM;
  /* Walk the batch-side tensor (y when to_batch, else x) in runs of `rest`. */
  const int64_t *bd = to_batch ? yd : x->dims, *sd = to_batch ? x->dims : yd;
  int64_t sb = sd[0], npos = 1;
  for (int i = 0; i < m; i++) npos *= bd[1 + i];
  int64_t nb = bd[0];
  for (int64_t ob = 0; ob < nb; ob++) {
    int64_t b = ob % sb, off = ob / sb, o[MAXB];
    for (int i = m - 1; i >= 0; i--) o[i] = off % block[i], off /= block[i];
    for (int64_t p = 0; p < npos; p++) {
      int64_t r = p, sidx = b, ok = 1, q[MAXB];
      for (int i = m - 1; i >= 0; i--) q[i] = r % bd[1 + i], r /= bd[1 + i];
      for (int i = 0; i < m; i++) {
        int64_t s = q[i] * block[i] + o[i] - pad[i][0];
        if (s < 0 || s >= sd[1 + i]) ok = 0;
        sidx = sidx * sd[1 + i] + (ok ? s : 0);
      }
      int64_t bidx = ob * npos + p;
      if (to_batch) {
        if (ok)
          c = cu_copy(y, bidx * rest, x, sidx * rest, rest);
        else
          cu_zero(y, bidx * rest, rest);
      } else if (ok) {
        c = cu_copy(y, sidx * rest, x, bidx * rest, rest);
      }
      if (c != DFX_OK) return dfx__kctx_fail(ctx, c, "out of memory");
    }
  }
  return DFX_OK;
}

static dfx_code s2b_nd(dfx_kctx *ctx) { return space_batch(ctx, 1, 1, 0, 2); }
static dfx_code b2s_nd(dfx_kctx *ctx) { return space_batch(ctx, 0, 1, 0, 2); }

static dfx_code v1_check(dfx_kctx *ctx, int64_t *bs) {
  *bs = dfx__attr_int(ctx->node, "block_size", 0);
  if (*bs < 2) return dfx__kctx_fail(ctx, DFX_EINVAL, "Block size should be > 1: %lld", (long long)*bs);
  if (ctx->in[0]->ndims != 4) {
    char b[96];
    return dfx__kctx_fail(ctx, DFX_EINVAL, "input should have rank 4 instead of %s", DFX_SHAPE_STR(ctx->in[0], b));
  }
  return DFX_OK;
}
static dfx_code s2b_v1(dfx_kctx *ctx) {
  int64_t bs;
  return v1_check(ctx, &bs) ? DFX_EINVAL : space_batch(ctx, 1, -1, bs, 1);
}
static dfx_code b2s_v1(dfx_kctx *ctx) {
  int64_t bs;
  return v1_check(ctx, &bs) ? DFX_EINVAL : space_batch(ctx, 0, -1, bs, 1);
}

/* SpaceToDepth / DepthToSpace; index maps in NHWC or NCHW. */
static dfx_code space_depth(dfx_kctx *ctx, int to_depth) {
  const dfx_tensor *x = ctx->in[0];
  int64_t bs = dfx__attr_int(ctx->node, "block_size", 0);
  if (bs < 2) return dfx__kctx_fail(ctx, DFX_EINVAL, "Block size should be > 1, but was: %lld", (long long)bs);
  if (x->ndims != 4) {
    char b[96];
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Input rank should be: 4 instead of: %d (%s)", x->ndims,
                          DFX_SHAPE_STR(x, b));
  }
  const char *df = dfx__attr_str(ctx->node, "data_format", "NHWC");
  if (!strcmp(df, "NCHW_VECT_C")) return dfx__kctx_fail(ctx, DFX_EUNIMPL, "NCHW_VECT_C is not supported");
  int nchw = !strcmp(df, "NCHW");
  int64_t B = x->dims[0], H = x->dims[nchw ? 2 : 1], W = x->dims[nchw ? 3 : 2], C = x->dims[nchw ? 1 : 3];
  int64_t oH, oW, oC;
  if (to_depth) {
    if (H % bs || W % bs)
      return dfx__kctx_fail(ctx, DFX_EINVAL, "Image width %lld and height %lld should be divisible by block_size: %lld",
                            (long long)W, (long long)H, (long long)bs);
    oH = H / bs, oW = W / bs, oC = C * bs * bs;
  } else {
    if (C % (bs * bs))
      return dfx__kctx_fail(ctx, DFX_EINVAL, "Input depth dimension %lld should be divisible by: %lld", (long long)C,
                            (long long)(bs * bs));
    oH = H * bs, oW = W * bs, oC = C / (bs * bs);
  }
  int64_t yd[4] = {B, nchw ? oC : oH, nchw ? oH : oW, nchw ? oW : oC};
  dfx_tensor *y = dfx__kctx_alloc(ctx, 0, (dfx_dtype)x->dtype, 4, yd);
  if (!y) return DFX_ENOMEM;
  /* Walk the space side (big spatial, small depth): d = depth of that side. */
  int64_t sH = to_depth ? H : oH, sW = to_depth ? W : oW, sC = to_depth ? C : oC, dC = sC * bs * bs;
  int64_t dH = sH / bs, dW = sW / bs;
  for (int64_t b = 0; b < B; b++)
    for (int64_t h = 0; h < sH; h++)
      for (int64_t w = 0; w < sW; w++) {
        int64_t dh = h / bs, dw = w / bs, dc0 = ((h % bs) * bs + w % bs) * sC;
        if (!nchw) {
          int64_t si = ((b * sH + h) * sW + w) * sC, di = ((b * dH + dh) * dW + dw) * dC + dc0;
          dfx_code c = to_depth ? cu_copy(y, di, x, si, sC) : cu_copy(y, si, x, di, sC);
          if (c != DFX_OK) return dfx__kctx_fail(ctx, c, "out of memory");
        } else {
          for (int64_t c = 0; c < sC; c++) {
            int64_t si = ((b * sC + c) * sH + h) * sW + w, di = ((b * dC + dc0 + c) * dH + dh) * dW + dw;
            dfx_code e = to_depth ? cu_copy(y, di, x, si, 1) : cu_copy(y, si, x, di, 1);
            if (e != DFX_OK) return dfx__kctx_fail(ctx, e, "out of memory");
          }
        }
      }
  return DFX_OK;
}
static dfx_code s2d(dfx_kctx *ctx) { return space_depth(ctx, 1); }
static dfx_code d2s(dfx_kctx *ctx) { return space_depth(ctx, 0); }

static dfx_code extract_patches(dfx_kctx *ctx) {
  const dfx_tensor *x = ctx->in[0];
  int64_t ks[4], st[4], rt[4];
  const dfx_node *n = ctx->node;
  if (cu_ints(n, "ksizes", ks, 4) != 4 || cu_ints(n, "strides", st, 4) != 4 || cu_ints(n, "rates", rt, 4) != 4)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "ksizes, strides and rates must each specify 4 dimensions");
  if (ks[0] != 1 || ks[3] != 1) return dfx__kctx_fail(ctx, DFX_EINVAL, "Only support ksizes across space.");
  if (st[0] != 1 || st[3] != 1) return dfx__kctx_fail(ctx, DFX_EINVAL, "Only support strides across space.");
  if (rt[0] != 1 || rt[3] != 1) return dfx__kctx_fail(ctx, DFX_EINVAL, "Only support rates across space.");
  if (x->ndims != 4) {
    char b[96];
    return dfx__kctx_fail(ctx, DFX_EINVAL, "input must be 4-dimensional%s", DFX_SHAPE_STR(x, b));
  }
  padkind pad = cu_padding(n);
  if (pad != PAD_SAME && pad != PAD_VALID) return dfx__kctx_fail(ctx, DFX_EINVAL, "Invalid padding");
  int64_t B = x->dims[0], H = x->dims[1], W = x->dims[2], D = x->dims[3], oh, ow, ph, pw;
  if (cu_window(ctx, H, ks[1], rt[1], st[1], pad, 0, 0, &oh, &ph) ||
      cu_window(ctx, W, ks[2], rt[2], st[2], pad, 0, 0, &ow, &pw))
    return DFX_EINVAL;
  int64_t yd[4] = {B, oh, ow, ks[1] * ks[2] * D};
  dfx_tensor *y = dfx__kctx_alloc(ctx, 0, (dfx_dtype)x->dtype, 4, yd);
  if (!y) return DFX_ENOMEM;
  int64_t di = 0;
  for (int64_t b = 0; b < B; b++)
    for (int64_t r = 0; r < oh; r++)
      for (int64_t c = 0; c < ow; c++)
        for (int64_t kr = 0; kr < ks[1]; kr++)
          for (int64_t kc = 0; kc < ks[2]; kc++, di += D) {
            int64_t ir = r * st[1] - ph + kr * rt[1], ic = c * st[2] - pw + kc * rt[2];
            if (ir < 0 || ir >= H || ic < 0 || ic >= W) {
              cu_zero(y, di, D);
            } else {
              dfx_code e = cu_copy(y, di, x, ((b * H + ir) * W + ic) * D, D);
              if (e != DFX_OK) return dfx__kctx_fail(ctx, e, "out of memory");
            }
          }
  return DFX_OK;
}


static const dfx_kernel_def kernels[] = {
    {"SpaceToBatchND", NULL, s2b_nd, 0, NULL, NULL},
    {"BatchToSpaceND", NULL, b2s_nd, 0, NULL, NULL},
    {"SpaceToBatch", NULL, s2b_v1, 0, NULL, NULL},
    {"BatchToSpace", NULL, b2s_v1, 0, NULL, NULL},
    {"SpaceToDepth", NULL, s2d, 0, NULL, NULL},
    {"DepthToSpace", NULL, d2s, 0, NULL, NULL},
    {"ExtractImagePatches", NULL, extract_patches, 0, NULL, NULL},
    {NULL}};

void dfx__kernels_conv_space(dfx_registry *r);
void dfx__kernels_conv_space(dfx_registry *r) { dfx__kernels_add(r, kernels); }
