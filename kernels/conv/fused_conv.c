/* fused_conv.c - _FusedConv2D and _FusedDepthwiseConv2dNative: Conv2D (or
 * DepthwiseConv2dNative) followed by BiasAdd or an inference
 * FusedBatchNorm, and optionally Relu, Relu6, Elu or LeakyRelu (TF's CPU
 * patterns, fused_epilogue.h), as Grappler's remapper and dfexec's remap
 * pass write it. The convolution is Conv2D's (or DepthwiseConv2dNative's)
 * own (conv.h); the epilogue runs on each block of output rows right after
 * it is computed. NHWC and NCHW
 * (TF's CPU kernel only takes NHWC); float and double. */
#include "conv.h"
#include "fused_epilogue.h"

typedef struct fused_conv {
  cu_spec spec; /* first: dfx__conv_forward reads the state as a cu_spec */
  fe_spec fe;
} fused_conv;

static dfx_code fused_conv_init(const dfx_node *n, void **state, dfx_status *st) {
  fused_conv s;
  dfx_code c = dfx__conv_spec(n, &s.spec, st);
  if (c == DFX_OK) c = fe_parse(n, "Conv2D", 1, &s.fe, st);
  if (c == DFX_OK && strcmp(dfx__attr_str(n, "filter_format", "HWIO"), "HWIO") != 0)
    c = dfx__status_set(st, DFX_EUNIMPL, "filter_format = '%s' is not supported (only HWIO)",
                        dfx__attr_str(n, "filter_format", ""));
  if (c != DFX_OK) return c;
  fused_conv *p = dfx__malloc(sizeof *p);
  if (!p) return dfx__status_set(st, DFX_ENOMEM, "out of memory");
  *p = s;
  *state = p;
  return DFX_OK;
}

static dfx_code fused_conv_k(dfx_kctx *ctx) {
  const fused_conv *s = ctx->state;
  const dfx_tensor *f = ctx->in[1];
  char b[96];
  /* The argument count depends on the filter's output depth: check the
   * filter here (Conv2D's checks follow in dfx__conv_forward). */
  if (f->ndims != 4) return dfx__kctx_fail(ctx, DFX_EINVAL, "filter must be 4-dimensional: %s", DFX_SHAPE_STR(f, b));
  fe_args a;
  dfx_code c = fe_args_init(ctx, &s->fe, 2, f->dims[3], &a);
  if (c == DFX_OK) {
    dfx_conv_epilogue ep = {fe_apply, &a};
    c = dfx__conv_forward(ctx, &ep);
  }
  fe_args_free(&a);
  return c;
}

static dfx_code fused_depthwise_init(const dfx_node *n, void **state, dfx_status *st) {
  fused_conv s;
  dfx_code c = dfx__conv_spec(n, &s.spec, st);
  if (c == DFX_OK) c = fe_parse(n, "DepthwiseConv2dNative", 1, &s.fe, st);
  if (c != DFX_OK) return c;
  fused_conv *p = dfx__malloc(sizeof *p);
  if (!p) return dfx__status_set(st, DFX_ENOMEM, "out of memory");
  *p = s;
  *state = p;
  return DFX_OK;
}

/* _FusedDepthwiseConv2dNative: the output depth is the filter's
 * in_channels * channel_multiplier. */
static dfx_code fused_depthwise_k(dfx_kctx *ctx) {
  const fused_conv *s = ctx->state;
  const dfx_tensor *f = ctx->in[1];
  char b[96];
  if (f->ndims != 4) return dfx__kctx_fail(ctx, DFX_EINVAL, "filter must be 4-dimensional: %s", DFX_SHAPE_STR(f, b));
  int64_t oc;
  if (__builtin_mul_overflow(f->dims[2], f->dims[3], &oc))
    return dfx__kctx_fail(ctx, DFX_EINVAL, "output depth %lld * %lld overflows", (long long)f->dims[2],
                          (long long)f->dims[3]);
  fe_args a;
  dfx_code c = fe_args_init(ctx, &s->fe, 2, oc, &a);
  if (c == DFX_OK) {
    dfx_conv_epilogue ep = {fe_apply, &a};
    c = dfx__depthwise_forward(ctx, &ep);
  }
  fe_args_free(&a);
  return c;
}

static const dfx_kernel_def kernels[] = {
    {"_FusedConv2D", "T: {float, double}; TArgs: {float, double}", fused_conv_k, 0, fused_conv_init, dfx__free},
    {"_FusedDepthwiseConv2dNative", "T: {float, double}", fused_depthwise_k, 0, fused_depthwise_init, dfx__free},
    {NULL}};

void dfx__kernels_conv_fused(dfx_registry *r);
void dfx__kernels_conv_fused(dfx_registry *r) { dfx__kernels_add(r, kernels); }
