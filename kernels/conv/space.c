/* space.c - rearrangements between space, batch and depth: SpaceToBatchND,
 * BatchToSpaceND (and their v1 forms SpaceToBatch/BatchToSpace),
 * SpaceToDepth, DepthToSpace and ExtractImagePatches. All are element copies
 * of contiguous runs, so every dtype with fixed-size elements (and strings) is
 * supported. Shape products from block sizes, paddings and crops are checked
 * for overflow; loops stop early on empty outputs, so their trip counts follow
 * the data. */
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
    if (block[i] < 1)
      return dfx__kctx_fail(ctx, DFX_EINVAL, "All values in block_shape must be positive, got %lld",
                            (long long)block[i]);
    pad[i][0] = dfx__tensor_get_i64(p, 2 * i);
    pad[i][1] = dfx__tensor_get_i64(p, 2 * i + 1);
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
  int64_t prod = 1, yd[DFX_MAX_DIMS], rest = 1, ps;
  for (int i = 0; i < m; i++)
    if (__builtin_mul_overflow(prod, block[i], &prod))
      return dfx__kctx_fail(ctx, DFX_EINVAL, "the product of block_shape overflows (block_shape[%d] = %lld)", i,
                            (long long)block[i]);
  memcpy(yd, x->dims, sizeof(int64_t) * (size_t)x->ndims);
  int64_t B = x->dims[0];
  if (to_batch) {
    if (__builtin_mul_overflow(B, prod, &yd[0]))
      return dfx__kctx_fail(ctx, DFX_EINVAL, "output batch %lld * %lld overflows", (long long)B, (long long)prod);
    for (int i = 0; i < m; i++) {
      if (__builtin_add_overflow(x->dims[1 + i], pad[i][0], &ps) || __builtin_add_overflow(ps, pad[i][1], &ps))
        return dfx__kctx_fail(ctx, DFX_EINVAL, "padded size of dimension %d overflows (paddings %lld, %lld)", 1 + i,
                              (long long)pad[i][0], (long long)pad[i][1]);
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
      if (__builtin_mul_overflow(x->dims[1 + i], block[i], &ps))
        return dfx__kctx_fail(ctx, DFX_EINVAL, "dimension %d times block_shape[%d] = %lld overflows", 1 + i, i,
                              (long long)block[i]);
      yd[1 + i] = ps - pad[i][0] - pad[i][1]; /* crops are >= 0: no overflow */
      if (yd[1 + i] < 0)
        return dfx__kctx_fail(ctx, DFX_EINVAL, "Negative output dimension size caused by overly large crop");
    }
  }
  dfx_tensor *y = dfx__kctx_alloc(ctx, 0, (dfx_dtype)x->dtype, x->ndims, yd);
  if (!y) return DFX_ENOMEM;
  if (y->count == 0 || x->count == 0) { /* zeros (or nothing): skip the walk, whose positions may be many */
    cu_zero(y, 0, y->count);
    return DFX_OK;
  }
  for (int i = 1 + m; i < x->ndims; i++) rest *= x->dims[i];
  /* Walk the batch-side tensor (y when to_batch, else x) in runs of `rest`. */
  const int64_t *bd = to_batch ? yd : x->dims, *sd = to_batch ? x->dims : yd;
  int64_t sb = sd[0], npos = 1;
  for (int i = 0; i < m; i++) npos *= bd[1 + i];
  int64_t nb = bd[0], work = 0;
  for (int64_t ob = 0; ob < nb; ob++) {
    if ((c = cu_tick(ctx, &work, npos * rest)) != DFX_OK) return c;
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

/* block_size (SpaceToBatch, BatchToSpace, SpaceToDepth, DepthToSpace): > 1,
 * and its square must fit; data_format, where the op has one, NHWC or NCHW. */
static dfx_code block_init(const dfx_node *n, void **state, dfx_status *st) {
  (void)state;
  int64_t bs = dfx__attr_int(n, "block_size", 0), sq;
  if (bs < 2) return dfx__status_set(st, DFX_EINVAL, "block_size = %lld: it should be > 1", (long long)bs);
  if (__builtin_mul_overflow(bs, bs, &sq))
    return dfx__status_set(st, DFX_EINVAL, "block_size = %lld is too large (its square overflows)", (long long)bs);
  const char *df = dfx__attr_str(n, "data_format", "NHWC");
  if (strcmp(df, "NHWC") && strcmp(df, "NCHW"))
    return dfx__status_set(st, DFX_EUNIMPL, "data_format = '%s' is not supported", df);
  return DFX_OK;
}

static dfx_code space_batch_v1(dfx_kctx *ctx, int to_batch) {
  if (ctx->in[0]->ndims != 4) {
    char b[96];
    return dfx__kctx_fail(ctx, DFX_EINVAL, "input should have rank 4 instead of %s", DFX_SHAPE_STR(ctx->in[0], b));
  }
  return space_batch(ctx, to_batch, -1, dfx__attr_int(ctx->node, "block_size", 0), 1);
}
static dfx_code s2b_v1(dfx_kctx *ctx) { return space_batch_v1(ctx, 1); }
static dfx_code b2s_v1(dfx_kctx *ctx) { return space_batch_v1(ctx, 0); }

/* SpaceToDepth / DepthToSpace; index maps in NHWC or NCHW. */
static dfx_code space_depth(dfx_kctx *ctx, int to_depth) {
  const dfx_tensor *x = ctx->in[0];
  int64_t bs = dfx__attr_int(ctx->node, "block_size", 0), bs2 = bs * bs; /* checked at init */
  if (x->ndims != 4) {
    char b[96];
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Input rank should be: 4 instead of: %d (%s)", x->ndims,
                          DFX_SHAPE_STR(x, b));
  }
  int nchw = !strcmp(dfx__attr_str(ctx->node, "data_format", "NHWC"), "NCHW");
  int64_t B = x->dims[0], H = x->dims[nchw ? 2 : 1], W = x->dims[nchw ? 3 : 2], C = x->dims[nchw ? 1 : 3];
  int64_t oH, oW, oC;
  if (to_depth) {
    if (H % bs || W % bs)
      return dfx__kctx_fail(ctx, DFX_EINVAL, "Image width %lld and height %lld should be divisible by block_size: %lld",
                            (long long)W, (long long)H, (long long)bs);
    oH = H / bs, oW = W / bs;
    if (__builtin_mul_overflow(C, bs2, &oC))
      return dfx__kctx_fail(ctx, DFX_EINVAL, "output depth %lld * block_size^2 overflows", (long long)C);
  } else {
    if (C % bs2)
      return dfx__kctx_fail(ctx, DFX_EINVAL, "Input depth dimension %lld should be divisible by: %lld", (long long)C,
                            (long long)bs2);
    oC = C / bs2;
    if (__builtin_mul_overflow(H, bs, &oH) || __builtin_mul_overflow(W, bs, &oW))
      return dfx__kctx_fail(ctx, DFX_EINVAL, "output size %lld x %lld times block_size %lld overflows", (long long)H,
                            (long long)W, (long long)bs);
  }
  int64_t yd[4] = {B, nchw ? oC : oH, nchw ? oH : oW, nchw ? oW : oC};
  dfx_tensor *y = dfx__kctx_alloc(ctx, 0, (dfx_dtype)x->dtype, 4, yd);
  if (!y) return DFX_ENOMEM;
  if (y->count == 0) return DFX_OK;
  /* Walk the space side (big spatial, small depth): d = depth of that side. */
  int64_t sH = to_depth ? H : oH, sW = to_depth ? W : oW, sC = to_depth ? C : oC, dC = sC * bs2;
  int64_t dH = sH / bs, dW = sW / bs, work = 0;
  dfx_code c;
  for (int64_t b = 0; b < B; b++)
    for (int64_t h = 0; h < sH; h++) {
      if ((c = cu_tick(ctx, &work, sW * sC)) != DFX_OK) return c;
      for (int64_t w = 0; w < sW; w++) {
        int64_t dh = h / bs, dw = w / bs, dc0 = ((h % bs) * bs + w % bs) * sC;
        if (!nchw) {
          int64_t si = ((b * sH + h) * sW + w) * sC, di = ((b * dH + dh) * dW + dw) * dC + dc0;
          c = to_depth ? cu_copy(y, di, x, si, sC) : cu_copy(y, si, x, di, sC);
          if (c != DFX_OK) return dfx__kctx_fail(ctx, c, "out of memory");
        } else {
          for (int64_t k = 0; k < sC; k++) {
            int64_t si = ((b * sC + k) * sH + h) * sW + w, di = ((b * dC + dc0 + k) * dH + dh) * dW + dw;
            c = to_depth ? cu_copy(y, di, x, si, 1) : cu_copy(y, si, x, di, 1);
            if (c != DFX_OK) return dfx__kctx_fail(ctx, c, "out of memory");
          }
        }
      }
    }
  return DFX_OK;
}
static dfx_code s2d(dfx_kctx *ctx) { return space_depth(ctx, 1); }
static dfx_code d2s(dfx_kctx *ctx) { return space_depth(ctx, 0); }

/* ksizes, strides and rates: 4 values each, >= 1, 1 in the batch and depth dims. */
static dfx_code patches_init(const dfx_node *n, void **state, dfx_status *st) {
  cu_spec s = {.nd = 2, .clast = 1, .pad = cu_padding(n)};
  dfx_code c;
  if ((c = cu_window_attr(n, "ksizes", 4, s.ks, st)) || (c = cu_window_attr(n, "strides", 4, s.st, st)) ||
      (c = cu_window_attr(n, "rates", 4, s.dl, st)) ||
      (c = cu_unit_bc("ksizes", s.ks, 4, 1, "only ksizes across space are supported", st)) ||
      (c = cu_unit_bc("strides", s.st, 4, 1, "only strides across space are supported", st)) ||
      (c = cu_unit_bc("rates", s.dl, 4, 1, "only rates across space are supported", st)))
    return c;
  if (s.pad != PAD_SAME && s.pad != PAD_VALID)
    return dfx__status_set(st, DFX_EINVAL, "padding = '%s' is not supported", dfx__attr_str(n, "padding", ""));
  return cu_spec_state(&s, state, st);
}

static dfx_code extract_patches(dfx_kctx *ctx) {
  const dfx_tensor *x = ctx->in[0];
  const cu_spec *s = ctx->state;
  const int64_t *ks = s->ks, *st = s->st, *rt = s->dl;
  if (x->ndims != 4) {
    char b[96];
    return dfx__kctx_fail(ctx, DFX_EINVAL, "input must be 4-dimensional%s", DFX_SHAPE_STR(x, b));
  }
  int64_t B = x->dims[0], H = x->dims[1], W = x->dims[2], D = x->dims[3], oh = 0, ow = 0, ph = 0, pw = 0, depth;
  if (cu_window(ctx, H, ks[1], rt[1], st[1], s->pad, 0, 0, &oh, &ph) ||
      cu_window(ctx, W, ks[2], rt[2], st[2], s->pad, 0, 0, &ow, &pw))
    return DFX_EINVAL;
  if (__builtin_mul_overflow(ks[1], ks[2], &depth) || __builtin_mul_overflow(depth, D, &depth))
    return dfx__kctx_fail(ctx, DFX_EINVAL, "output depth %lld * %lld * %lld overflows", (long long)ks[1],
                          (long long)ks[2], (long long)D);
  int64_t yd[4] = {B, oh, ow, depth};
  dfx_tensor *y = dfx__kctx_alloc(ctx, 0, (dfx_dtype)x->dtype, 4, yd);
  if (!y) return DFX_ENOMEM;
  if (y->count == 0) return DFX_OK;
  int64_t di = 0, work = 0;
  dfx_code e;
  for (int64_t b = 0; b < B; b++)
    for (int64_t r = 0; r < oh; r++) {
      if ((e = cu_tick(ctx, &work, ow * depth)) != DFX_OK) return e;
      for (int64_t c = 0; c < ow; c++)
        for (int64_t kr = 0; kr < ks[1]; kr++)
          for (int64_t kc = 0; kc < ks[2]; kc++, di += D) {
            int64_t ir = r * st[1] - ph + kr * rt[1], ic = c * st[2] - pw + kc * rt[2];
            if (ir < 0 || ir >= H || ic < 0 || ic >= W) {
              cu_zero(y, di, D);
            } else if ((e = cu_copy(y, di, x, ((b * H + ir) * W + ic) * D, D)) != DFX_OK) {
              return dfx__kctx_fail(ctx, e, "out of memory");
            }
          }
    }
  return DFX_OK;
}

/* Every dtype with fixed-size elements, and strings (not resource or variant). */
#define COPY_T                                                                                              \
  "T: {float, double, int32, uint8, int16, int8, string, complex64, int64, bool, qint8, quint8, qint32, "  \
  "bfloat16, qint16, quint16, uint16, complex128, half, uint32, uint64}"
#define IDX(a) "; " a ": {int32, int64}"

static const dfx_kernel_def kernels[] = {
    {"SpaceToBatchND", COPY_T IDX("Tblock_shape") IDX("Tpaddings"), s2b_nd, 0, NULL, NULL},
    {"BatchToSpaceND", COPY_T IDX("Tblock_shape") IDX("Tcrops"), b2s_nd, 0, NULL, NULL},
    {"SpaceToBatch", COPY_T IDX("Tpaddings"), s2b_v1, 0, block_init, NULL},
    {"BatchToSpace", COPY_T IDX("Tidx"), b2s_v1, 0, block_init, NULL},
    {"SpaceToDepth", COPY_T, s2d, 0, block_init, NULL},
    {"DepthToSpace", COPY_T, d2s, 0, block_init, NULL},
    {"ExtractImagePatches", "T: {bfloat16, half, float, double, int8, int16, int32, int64, uint8, uint16, uint32, "
                            "uint64, complex64, complex128, bool}",
     extract_patches, 0, patches_init, dfx__free},
    {NULL}};

void dfx__kernels_conv_space(dfx_registry *r);
void dfx__kernels_conv_space(dfx_registry *r) { dfx__kernels_add(r, kernels); }
