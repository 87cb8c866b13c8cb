/* test_fused_conv.c - _FusedConv2D against the kernels it stands for, run
 * one after the other: Conv2D, then BiasAdd or FusedBatchNormV3
 * (inference), then the activation. The fused kernel promises the same
 * bits (fused_epilogue.h), over random odd shapes, both data formats,
 * every padding, strides, dilations, 1x1 filters and every pattern; then
 * what init and a run refuse. */
#include "ctest.h"

static const char *const acts[] = {NULL, "Relu", "Relu6", "Elu", "LeakyRelu"};

/* Runs n on in[], returns its output 0 (new) and frees any others. */
static dfx_tensor *run1(dfx_node *n, dfx_tensor **in, int n_in) {
  dfx_tensor *o[8] = {0};
  char err[512] = "";
  int n_out = 0;
  cr_assert_eq(kh_run(n, in, n_in, o, &n_out, err, sizeof err), DFX_OK, "%s: %s", n->op, err);
  ct_free(o + 1, n_out - 1);
  return o[0];
}

static dfx_tensor *rand_tensor(dfx_dtype dt, int nd, const int64_t *dims, double scale, double shift, unsigned *seed) {
  int64_t n = 1;
  for (int i = 0; i < nd; i++) n *= dims[i];
  double *v = calloc((size_t)n + 1, sizeof *v);
  for (int64_t i = 0; i < n; i++) v[i] = ct_rand(seed) * scale + shift;
  dfx_tensor *t = ct_tensor(dt, nd, dims, v);
  free(v);
  return t;
}

static void same_bits(const dfx_tensor *got, const dfx_tensor *want, const char *what) {
  cr_assert_eq(got->dtype, want->dtype, "%s: dtype", what);
  cr_assert_eq(got->ndims, want->ndims, "%s: rank", what);
  for (int i = 0; i < got->ndims; i++) cr_assert_eq(got->dims[i], want->dims[i], "%s: dim %d", what, i);
  for (int64_t i = 0; i < got->count; i++)
    cr_assert(dfx__tensor_get_f64(got, i) == dfx__tensor_get_f64(want, i) ||
                  (isnan(dfx__tensor_get_f64(got, i)) && isnan(dfx__tensor_get_f64(want, i))),
              "%s: [%lld] fused %.9g, unfused %.9g", what, (long long)i, dfx__tensor_get_f64(got, i),
              dfx__tensor_get_f64(want, i));
}

typedef struct fcase {
  int nchw, depthwise; /* depthwise: O is the channel multiplier */
  int64_t N, H, W, C, KH, KW, O, sh, sw, dh, dw;
  const char *pad;
} fcase;

static void conv_attrs(dfx_node *n, const fcase *c, dfx_dtype dt) {
  int64_t st[4] = {1, 1, 1, 1}, dl[4] = {1, 1, 1, 1}, ep[8] = {0};
  int h = c->nchw ? 2 : 1;
  st[h] = c->sh, st[h + 1] = c->sw, dl[h] = c->dh, dl[h + 1] = c->dw;
  ep[2 * h] = 1, ep[2 * h + 1] = 2, ep[2 * h + 3] = 1; /* top 1, bottom 2, left 0, right 1 */
  kh_attr_type(n, "T", dt);
  kh_attr_ints(n, "strides", st, 4);
  kh_attr_ints(n, "dilations", dl, 4);
  kh_attr_str(n, "padding", c->pad);
  kh_attr_str(n, "data_format", c->nchw ? "NCHW" : "NHWC");
  if (!strcmp(c->pad, "EXPLICIT")) kh_attr_ints(n, "explicit_paddings", ep, 8);
}

/* One case, one pattern: act indexes acts[]; bn picks FusedBatchNorm. */
static void run_case(const fcase *c, dfx_dtype dt, int bn, int act, unsigned seed) {
  int64_t xd[4] = {c->N, c->H, c->W, c->C};
  if (c->nchw) xd[1] = c->C, xd[2] = c->H, xd[3] = c->W;
  int64_t fd[4] = {c->KH, c->KW, c->C, c->O}, vd[1] = {c->depthwise ? c->C * c->O : c->O};
  dfx_tensor *x = rand_tensor(dt, 4, xd, 3, 0, &seed), *f = rand_tensor(dt, 4, fd, 1, 0, &seed);
  dfx_tensor *args[4];
  int n_args = bn ? 4 : 1;
  for (int i = 0; i < n_args; i++) /* variance (i == 3) stays positive */
    args[i] = rand_tensor(dt, 1, vd, i == 3 ? 0.5 : 2, i == 3 ? 0.6 : 0, &seed);

  dfx_node *conv = kh_node_new(c->depthwise ? "DepthwiseConv2dNative" : "Conv2D");
  conv_attrs(conv, c, dt);
  dfx_tensor *y = run1(conv, (dfx_tensor *[]){x, f}, 2);
  dfx_node *mid;
  if (bn) {
    mid = kh_node_new("FusedBatchNormV3");
    kh_attr_type(mid, "T", dt);
    kh_attr_type(mid, "U", dt);
    kh_attr_float(mid, "epsilon", 0.001f);
    kh_attr_bool(mid, "is_training", 0);
    kh_attr_str(mid, "data_format", c->nchw ? "NCHW" : "NHWC");
  } else {
    mid = kh_node_new("BiasAdd");
    kh_attr_type(mid, "T", dt);
    kh_attr_str(mid, "data_format", c->nchw ? "NCHW" : "NHWC");
  }
  dfx_tensor *min[5] = {y, args[0], args[1], args[2], args[3]};
  dfx_tensor *want = run1(mid, min, 1 + n_args);
  if (acts[act]) {
    dfx_node *a = kh_node_new(acts[act]);
    kh_attr_type(a, "T", dt);
    if (act == 4) kh_attr_float(a, "alpha", 0.3f);
    dfx_tensor *w2 = run1(a, (dfx_tensor *[]){want}, 1);
    dfx__tensor_unref(want);
    want = w2;
    kh_node_free(a);
  }

  dfx_node *fz = kh_node_new(c->depthwise ? "_FusedDepthwiseConv2dNative" : "_FusedConv2D");
  conv_attrs(fz, c, dt);
  const char *ops[2] = {bn ? "FusedBatchNorm" : "BiasAdd", acts[act]};
  kh_attr_strs(fz, "fused_ops", ops, acts[act] ? 2 : 1);
  kh_attr_int(fz, "num_args", n_args);
  if (!c->depthwise) kh_attr_types(fz, "TArgs", (dfx_dtype[]){dt, dt, dt, dt}, n_args);
  if (bn) kh_attr_float(fz, "epsilon", 0.001f);
  if (act == 4) kh_attr_float(fz, "leakyrelu_alpha", 0.3f);
  dfx_tensor *fin[6] = {x, f, args[0], args[1], args[2], args[3]};
  dfx_tensor *got = run1(fz, fin, 2 + n_args);
  char what[160];
  snprintf(what, sizeof what, "%s%s %s pad %s stride %lldx%lld dil %lldx%lld %s+%s dtype %d", c->depthwise ? "depthwise " : "", c->nchw ? "NCHW" : "NHWC",
           c->KH == 1 ? "1x1" : "kxk", c->pad, (long long)c->sh, (long long)c->sw, (long long)c->dh,
           (long long)c->dw, ops[0], acts[act] ? acts[act] : "-", dt);
  same_bits(got, want, what);

  ct_free((dfx_tensor *[]){got, want, y, x, f}, 5);
  ct_free(args, n_args);
  kh_node_free(conv);
  kh_node_free(mid);
  kh_node_free(fz);
}

Test(fused_conv, matches_the_unfused_kernels) {
  const char *pads[] = {"VALID", "SAME", "EXPLICIT"};
  dfx_dtype dts[DFX_DTYPE_END_];
  int n_dt = ct_declared("_FusedConv2D", "T", dts);
  unsigned seed = 11;
  for (int nchw = 0; nchw < 2; nchw++)
    for (int pi = 0; pi < 3; pi++)
      for (int cfg = 0; cfg < 5; cfg++) {
        fcase c = {.nchw = nchw, .N = 2, .H = 7, .W = 9, .C = 3, .KH = 3, .KW = 2, .O = 5,
                   .sh = 1, .sw = 1, .dh = 1, .dw = 1, .pad = pads[pi]};
        if (cfg == 1) c.sh = 2, c.sw = 3;
        if (cfg == 2) c.dh = 2, c.dw = 3;
        if (cfg == 3) c.KH = c.KW = 1, c.H = 65, c.W = 33, c.O = 19; /* the direct path, several blocks; vector epilogue */
        if (cfg == 4) c.N = 1, c.H = 1, c.W = 1, c.C = 1, c.KH = c.KW = 1, c.O = 1;
        for (int d = 0; d < n_dt; d++)
          for (int bn = 0; bn < 2; bn++)
            for (int act = 0; act < 5; act++) {
              if (bn && dts[d] != DFX_F32) continue; /* FusedBatchNorm has no double kernel to compare with */
              run_case(&c, dts[d], bn, act, seed++);
            }
      }
}

/* _FusedDepthwiseConv2dNative over the depthwise kernel's paths: channel
 * counts for the 16-wide, 4-wide and scalar loops, multipliers 1 and more,
 * strides, dilations, every padding, both formats. */
Test(fused_conv, depthwise_matches_the_unfused_kernels) {
  const char *pads[] = {"VALID", "SAME", "EXPLICIT"};
  static const int64_t cm[][2] = {{16, 1}, {21, 1}, {3, 1}, {3, 4}, {2, 20}};
  dfx_dtype dts[DFX_DTYPE_END_];
  int n_dt = ct_declared("_FusedDepthwiseConv2dNative", "T", dts);
  unsigned seed = 23;
  for (size_t k = 0; k < sizeof cm / sizeof cm[0]; k++)
    for (int nchw = 0; nchw < 2; nchw++)
      for (int cfg = 0; cfg < 3; cfg++) {
        fcase c = {.nchw = nchw, .depthwise = 1, .N = 2, .H = 7, .W = 9, .C = cm[k][0], .KH = 3, .KW = 3,
                   .O = cm[k][1], .sh = 1, .sw = 1, .dh = 1, .dw = 1, .pad = pads[(k + cfg) % 3]};
        if (cfg == 1) c.sh = 2, c.sw = 3;
        if (cfg == 2) c.dh = 2, c.dw = 3;
        for (int d = 0; d < n_dt; d++)
          for (int bn = 0; bn < 2; bn++)
            for (int act = 0; act < 5; act++) {
              if (bn && dts[d] != DFX_F32) continue;
              run_case(&c, dts[d], bn, act, seed++);
            }
      }
}

static dfx_node *fused_node(const char *const *ops, int n_ops, int num_args) {
  dfx_node *n = kh_node_new("_FusedConv2D");
  fcase c = {.sh = 1, .sw = 1, .dh = 1, .dw = 1, .pad = "VALID"};
  conv_attrs(n, &c, DFX_F32);
  kh_attr_strs(n, "fused_ops", ops, n_ops);
  kh_attr_int(n, "num_args", num_args);
  kh_attr_types(n, "TArgs", (dfx_dtype[]){DFX_F32, DFX_F32, DFX_F32, DFX_F32}, num_args);
  return n;
}

Test(fused_conv, init_refuses_what_tf_refuses) {
  dfx_node *n = fused_node((const char *[]){"BiasAdd", "Tanh"}, 2, 1);
  ct_init_fails(n, "Fusion is not implemented: [BiasAdd,Tanh]");
  kh_node_free(n);
  n = fused_node(NULL, 0, 1);
  ct_init_fails(n, "must have at least one fused op");
  kh_node_free(n);
  n = fused_node((const char *[]){"BiasAdd"}, 1, 2);
  ct_init_fails(n, "with BiasAdd must have one extra argument: bias");
  kh_node_free(n);
  n = fused_node((const char *[]){"FusedBatchNorm", "Relu"}, 2, 1);
  ct_init_fails(n, "four extra arguments");
  kh_node_free(n);
  n = fused_node((const char *[]){"BiasAdd"}, 1, 1);
  kh_attr_str(n, "filter_format", "OIHW");
  ct_init_fails(n, "filter_format");
  kh_node_free(n);
}

Test(fused_conv, run_checks_the_arguments) {
  dfx_node *n = fused_node((const char *[]){"BiasAdd", "Relu"}, 2, 1);
  dfx_tensor *x = kh_f32(4, (int64_t[]){1, 3, 3, 2}, NULL), *f = kh_f32(4, (int64_t[]){2, 2, 2, 4}, NULL);
  memset(x->data, 0, x->nbytes);
  memset(f->data, 0, f->nbytes);
  dfx_tensor *b3 = kh_f32(1, (int64_t[]){3}, (float[]){1, 2, 3});
  ct_fail(n, (dfx_tensor *[]){x, f, b3}, 3, "one value per output channel");
  dfx_tensor *b2d = kh_f32(2, (int64_t[]){2, 4}, NULL);
  memset(b2d->data, 0, b2d->nbytes);
  ct_fail(n, (dfx_tensor *[]){x, f, b2d}, 3, "must be 1 except the last dimension");
  dfx_tensor *f3 = kh_f32(3, (int64_t[]){2, 2, 2}, NULL);
  ct_fail(n, (dfx_tensor *[]){x, f3, b3}, 3, "filter must be 4-dimensional");
  /* A [1, 4] bias is fine, as in TF; an empty batch gives an empty output. */
  dfx_tensor *b14 = kh_f32(2, (int64_t[]){1, 4}, (float[]){-1, 0, 1, 2});
  dfx_tensor *x0 = kh_f32(4, (int64_t[]){0, 3, 3, 2}, NULL);
  dfx_tensor *o[1];
  ct_run(n, (dfx_tensor *[]){x0, f, b14}, 3, o, 1);
  ct_expect(o[0], DFX_F32, 4, (int64_t[]){0, 2, 2, 4}, NULL, 0, "empty batch");
  ct_free(o, 1);
  ct_run(n, (dfx_tensor *[]){x, f, b14}, 3, o, 1);
  double want[16];
  for (int i = 0; i < 16; i++) want[i] = i % 4 < 2 ? 0 : i % 4 - 1; /* relu(0 + bias) */
  ct_expect(o[0], DFX_F32, 4, (int64_t[]){1, 2, 2, 4}, want, 0, "zero input");
  ct_free(o, 1);
  ct_free((dfx_tensor *[]){x, f, b3, b2d, f3, b14, x0}, 7);
  kh_node_free(n);
}

/* _FusedDepthwiseConv2dNative: what init and a run refuse, and the vector
 * epilogue on values the random cases never hold (NaN, both clamps):
 * a 1x1 filter of ones over 16 channels, bias 0, Relu6. */
Test(fused_conv, depthwise_refusals_and_special_values) {
  dfx_node *n = kh_node_new("_FusedDepthwiseConv2dNative");
  fcase c = {.sh = 1, .sw = 1, .dh = 1, .dw = 1, .pad = "VALID"};
  conv_attrs(n, &c, DFX_F32);
  kh_attr_strs(n, "fused_ops", (const char *[]){"BiasAdd", "Tanh"}, 2);
  kh_attr_int(n, "num_args", 1);
  ct_init_fails(n, "Fusion is not implemented: [BiasAdd,Tanh]");
  kh_attr_strs(n, "fused_ops", (const char *[]){"BiasAdd", "Relu6"}, 2);
  kh_attr_int(n, "num_args", 2);
  ct_init_fails(n, "with BiasAdd must have one extra argument: bias");
  kh_attr_int(n, "num_args", 1);
  float xv[16], ones[16], zeros[16] = {0};
  for (int i = 0; i < 16; i++) xv[i] = (float)(i - 5), ones[i] = 1;
  xv[0] = NAN, xv[1] = -0.0f, xv[15] = 100;
  dfx_tensor *x = kh_f32(4, (int64_t[]){1, 1, 1, 16}, xv), *f = kh_f32(4, (int64_t[]){1, 1, 16, 1}, ones);
  dfx_tensor *b16 = kh_f32(1, (int64_t[]){16}, zeros), *b3 = kh_f32(1, (int64_t[]){3}, zeros);
  ct_fail(n, (dfx_tensor *[]){x, f, b3}, 3, "one value per output channel");
  dfx_tensor *o[1];
  ct_run(n, (dfx_tensor *[]){x, f, b16}, 3, o, 1);
  const float *y = o[0]->data;
  cr_assert(isnan(y[0]), "NaN passes through Relu6");
  cr_assert(y[1] == 0, "-0 in, 0 out: got %g", y[1]);
  for (int i = 2; i < 16; i++) {
    float want = i - 5 < 0 ? 0 : i - 5 > 6 ? 6 : (float)(i - 5);
    if (i == 15) want = 6;
    cr_assert_eq(y[i], want, "[%d] %g want %g", i, y[i], want);
  }
  ct_free(o, 1);
  ct_free((dfx_tensor *[]){x, f, b16, b3}, 4);
  kh_node_free(n);
}
