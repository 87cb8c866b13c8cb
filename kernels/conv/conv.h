/* conv.h - conv.c's forward convolution, shared with the fused conv ops of
 * this family (fused_conv.c): the attr checks of Conv2D and the GEMM path
 * with an epilogue that runs on each block of output rows right after the
 * GEMM wrote it, while the block is still in cache. */
#ifndef DFX_CONV_H
#define DFX_CONV_H

#include "convutil.h"

/* Work done on output rows after their GEMM: y holds `rows` output
 * positions of `oc` channels each, channels last (whatever the op's
 * data_format: the move to NCHW comes after), as float, or as double when
 * dbl. ud is the epilogue's own data. */
typedef struct dfx_conv_epilogue {
  void (*fn)(const void *ud, void *y, int64_t rows, int64_t oc, int dbl);
  const void *ud;
} dfx_conv_epilogue;

/* Conv2D's (and Conv3D's, by op name) constructor checks: strides and
 * dilations of r values, >= 1 and 1 in the batch and depth dims, padding
 * and explicit_paddings, data_format. Fills *s; errors name the attr. */
dfx_code dfx__conv_spec(const dfx_node *n, cu_spec *s, dfx_status *st);
/* Runs Conv2D's forward computation for ctx (inputs 0 and 1: input and
 * filter; ctx->state points to a cu_spec, possibly the first member of a
 * larger state) and applies ep (may be NULL) to every output row before
 * storing output 0. Errors as Conv2D's. */
dfx_code dfx__conv_forward(dfx_kctx *ctx, const dfx_conv_epilogue *ep);

/* The same for DepthwiseConv2dNative (the state is a cu_spec too). */
dfx_code dfx__depthwise_forward(dfx_kctx *ctx, const dfx_conv_epilogue *ep);

/* A 2-D depthwise convolution's geometry, channels last: input
 * [N, H, W, C], filter [KH, KW, C, M], output [N, OH, OW, C * M]; strides,
 * dilations and the padding before the first row (pt) and column (pl). */
typedef struct dfx_dw_geom {
  int64_t N, H, W, C, M, KH, KW, OH, OW, sh, sw, dh, dw, pt, pl;
} dfx_dw_geom;

/* depthwise.c: computes output rows [row0, row1) of the flattened
 * (batch, output row) index, float32, and applies ep (may be NULL) to each
 * row. Rows are independent: any split of the range over threads gives
 * the same bits. DFX_ENOMEM if its small scratch cannot be had. */
dfx_code dfx__dw_rows_f32(const dfx_dw_geom *g, const float *x, const float *f, float *y,
                          const dfx_conv_epilogue *ep, int64_t row0, int64_t row1);

#endif
