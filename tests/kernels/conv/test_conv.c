/* test_conv.c - Conv2D/Conv3D/DepthwiseConv2dNative and input backprops
 * against a naive direct convolution over every declared dtype, formats,
 * paddings, strides, dilations and groups. */
#include "ctest.h"

typedef struct ccase {
  int nd, clast, depthwise;
  int64_t N, C, in[3], k[3], icg, fout, stride[3], dil[3];
  const char *pad;
  int64_t ep[3][2]; /* explicit pads per spatial dim */
} ccase;

/* Output size and pad-before per spatial dim, computed independently. */
static void geometry(const ccase *c, int64_t *out, int64_t *pb) {
  for (int i = 0; i < c->nd; i++) {
    int64_t ek = (c->k[i] - 1) * c->dil[i] + 1, s = c->stride[i], in = c->in[i];
    if (!strcmp(c->pad, "VALID")) {
      out[i] = (in - ek) / s + 1;
      pb[i] = 0;
    } else if (!strcmp(c->pad, "SAME")) {
      out[i] = (in + s - 1) / s;
      int64_t t = (out[i] - 1) * s + ek - in;
      pb[i] = t > 0 ? t / 2 : 0;
    } else {
      out[i] = (in + c->ep[i][0] + c->ep[i][1] - ek) / s + 1;
      pb[i] = c->ep[i][0];
    }
  }
}

/* Offset of (n, spatial[], ch) in a tensor of the case's format. */
static int64_t off(const ccase *c, const int64_t *sp, int64_t C, int64_t n, const int64_t *pos, int64_t ch) {
  int64_t o = n;
  if (!c->clast) o = o * C + ch;
  for (int i = 0; i < c->nd; i++) o = o * sp[i] + pos[i];
  if (c->clast) o = o * C + ch;
  return o;
}

static void fmt(const ccase *c, const int64_t *sp, int64_t C, int64_t *d) {
  d[0] = c->N;
  d[c->clast ? c->nd + 1 : 1] = C;
  for (int i = 0; i < c->nd; i++) d[(c->clast ? 1 : 2) + i] = sp[i];
}

/* Naive conv: fwd computes y from x; back accumulates dx from dy. */
static void ref(const ccase *c, const double *x, const double *f, double *y, int back, double *dx, const double *dy) {
  int64_t out[3] = {1, 1, 1}, pb[3] = {0};
  geometry(c, out, pb);
  int64_t OC = c->depthwise ? c->C * c->fout : c->fout, G = c->depthwise ? c->C : c->C / c->icg, OCg = OC / G;
  int64_t K = 1;
  for (int i = 0; i < c->nd; i++) K *= c->k[i];
  int64_t P = 1;
  for (int i = 0; i < c->nd; i++) P *= out[i];
  for (int64_t n = 0; n < c->N; n++)
    for (int64_t p = 0; p < P; p++) {
      int64_t o[3], r = p;
      for (int i = c->nd - 1; i >= 0; i--) o[i] = r % out[i], r /= out[i];
      for (int64_t oc = 0; oc < OC; oc++) {
        int64_t g = oc / OCg;
        double s = 0;
        int64_t yo = off(c, out, OC, n, o, oc);
        for (int64_t kk = 0; kk < K; kk++) {
          int64_t kp[3], rr = kk, ip[3];
          int ok = 1;
          for (int i = c->nd - 1; i >= 0; i--) kp[i] = rr % c->k[i], rr /= c->k[i];
          for (int i = 0; i < c->nd; i++) {
            ip[i] = o[i] * c->stride[i] - pb[i] + kp[i] * c->dil[i];
            if (ip[i] < 0 || ip[i] >= c->in[i]) ok = 0;
          }
          if (!ok) continue;
          int64_t icg = c->depthwise ? 1 : c->icg;
          for (int64_t q = 0; q < icg; q++) {
            int64_t ic = g * icg + q;
            int64_t fo = c->depthwise ? (kk * c->C + ic) * c->fout + oc % c->fout : (kk * icg + q) * OC + oc;
            int64_t xo = off(c, c->in, c->C, n, ip, ic);
            if (back)
              dx[xo] += dy[yo] * f[fo];
            else
              s += x[xo] * f[fo];
          }
        }
        if (!back) y[yo] = s;
      }
    }
}

static void run_case(const ccase *c, dfx_dtype dt, unsigned seed) {
  int r = c->nd + 2;
  int64_t out[3] = {1, 1, 1}, pb[3];
  geometry(c, out, pb);
  int64_t OC = c->depthwise ? c->C * c->fout : c->fout;
  int64_t xd[5], fd[5], yd[5];
  fmt(c, c->in, c->C, xd);
  fmt(c, out, OC, yd);
  for (int i = 0; i < c->nd; i++) fd[i] = c->k[i];
  fd[c->nd] = c->depthwise ? c->C : c->icg;
  fd[c->nd + 1] = c->fout;
  int64_t nx = 1, nf = 1, ny = 1;
  for (int i = 0; i < r; i++) nx *= xd[i], nf *= fd[i], ny *= yd[i];
  double *x = calloc((size_t)nx + 1, 8), *f = calloc((size_t)nf + 1, 8), *y = calloc((size_t)ny + 1, 8);
  double *dy = calloc((size_t)ny + 1, 8), *dx = calloc((size_t)nx + 1, 8);
  double scale = dfx__dtype_is_int(dt) ? 10 : 1;
  for (int64_t i = 0; i < nx; i++) x[i] = round(ct_rand(&seed) * scale * 100) / 100;
  for (int64_t i = 0; i < nf; i++) f[i] = round(ct_rand(&seed) * scale * 100) / 100;
  for (int64_t i = 0; i < ny; i++) dy[i] = round(ct_rand(&seed) * scale * 100) / 100;
  dfx_tensor *tx = ct_tensor(dt, r, xd, x), *tf = ct_tensor(dt, r, fd, f), *tdy = ct_tensor(dt, r, yd, dy);
  ct_read(tx, x);
  ct_read(tf, f);
  ct_read(tdy, dy);
  ref(c, x, f, y, 0, NULL, NULL);
  ref(c, NULL, f, NULL, 1, dx, dy);
  const char *fwd_op = c->depthwise ? "DepthwiseConv2dNative" : c->nd == 2 ? "Conv2D" : "Conv3D";
  const char *back_op = c->depthwise ? "DepthwiseConv2dNativeBackpropInput"
                        : c->nd == 2 ? "Conv2DBackpropInput" : "Conv3DBackpropInputV2";
  int64_t st[5] = {1, 1, 1, 1, 1}, dl[5] = {1, 1, 1, 1, 1}, ep[10] = {0};
  int sp0 = c->clast ? 1 : 2;
  for (int i = 0; i < c->nd; i++) {
    st[sp0 + i] = c->stride[i];
    dl[sp0 + i] = c->dil[i];
    ep[2 * (sp0 + i)] = c->ep[i][0];
    ep[2 * (sp0 + i) + 1] = c->ep[i][1];
  }
  const char *df = c->nd == 2 ? (c->clast ? "NHWC" : "NCHW") : (c->clast ? "NDHWC" : "NCDHW");
  double tol = ct_tol(dt) * (dt == DFX_F16 || dt == DFX_BF16 ? 4 : 1);
  for (int back = 0; back < 2; back++) {
    dfx_node *n = kh_node_new(back ? back_op : fwd_op);
    kh_attr_type(n, "T", dt);
    kh_attr_ints(n, "strides", st, r);
    kh_attr_ints(n, "dilations", dl, r);
    kh_attr_str(n, "padding", c->pad);
    kh_attr_str(n, "data_format", df);
    if (!strcmp(c->pad, "EXPLICIT")) kh_attr_ints(n, "explicit_paddings", ep, 2 * r);
    dfx_tensor *o[1] = {0};
    if (!back) {
      dfx_tensor *in[2] = {tx, tf};
      ct_run(n, in, 2, o, 1);
      ct_expect(o[0], dt, r, yd, y, tol * 4, fwd_op);
    } else {
      /* input_sizes is int32, or Tshape for Conv3D: sweep what is declared. */
      dfx_dtype tsh[4] = {DFX_I32};
      int ntsh = c->nd == 3 ? ct_declared(back_op, "Tshape", tsh) : 1;
      for (int k = 0; k < ntsh; k++) {
        double szv[5];
        for (int i = 0; i < r; i++) szv[i] = (double)xd[i];
        dfx_tensor *sz = ct_tensor(tsh[k], 1, (int64_t[]){r}, szv);
        if (c->nd == 3) kh_attr_type(n, "Tshape", tsh[k]);
        dfx_tensor *in[3] = {sz, tf, tdy};
        ct_run(n, in, 3, o, 1);
        ct_expect(o[0], dt, r, xd, dx, tol * 4, back_op);
        dfx__tensor_unref(sz);
        if (k + 1 < ntsh) ct_free(o, 1);
      }
    }
    ct_free(o, 1);
    kh_node_free(n);
  }
  ct_free((dfx_tensor *[]){tx, tf, tdy}, 3);
  free(x), free(f), free(y), free(dy), free(dx);
}

/* The forward op and its input backprop run on the same dtypes. */
static int declared_pair(const char *fwd, const char *back, dfx_dtype *dts) {
  dfx_dtype b[DFX_DTYPE_END_];
  int n = ct_declared(fwd, "T", dts), nb = ct_declared(back, "T", b);
  cr_assert(n == nb && !memcmp(dts, b, sizeof *b * (size_t)n), "%s and %s declare different dtypes", fwd, back);
  return n;
}

Test(conv, conv2d_matrix) {
  const char *pads[] = {"VALID", "SAME", "EXPLICIT"};
  dfx_dtype dts[DFX_DTYPE_END_];
  int nd = declared_pair("Conv2D", "Conv2DBackpropInput", dts);
  unsigned seed = 1;
  for (int pi = 0; pi < 3; pi++)
    for (int clast = 0; clast < 2; clast++)
      for (int cfg = 0; cfg < 5; cfg++) {
        ccase c = {.nd = 2, .clast = clast, .N = 2, .C = 3, .in = {6, 7}, .k = {3, 2}, .icg = 3, .fout = 4,
                   .stride = {1, 1}, .dil = {1, 1}, .pad = pads[pi], .ep = {{1, 2}, {0, 1}}};
        if (cfg == 1) c.stride[0] = 2, c.stride[1] = 3;
        if (cfg == 2) c.dil[0] = 2, c.dil[1] = 2;
        if (cfg == 3) c.C = 6, c.icg = 2, c.fout = 6; /* 3 groups */
        if (cfg == 4) c.k[0] = c.k[1] = 1;             /* 1x1 */
        for (int d = 0; d < nd; d++) run_case(&c, dts[d], seed++);
      }
}

Test(conv, conv3d_and_depthwise) {
  const char *pads[] = {"VALID", "SAME", "EXPLICIT"};
  dfx_dtype d3[DFX_DTYPE_END_], dw[DFX_DTYPE_END_];
  int n3 = declared_pair("Conv3D", "Conv3DBackpropInputV2", d3);
  int nw = declared_pair("DepthwiseConv2dNative", "DepthwiseConv2dNativeBackpropInput", dw);
  unsigned seed = 7;
  for (int pi = 0; pi < 3; pi++)
    for (int clast = 0; clast < 2; clast++)
      for (int cfg = 0; cfg < 3; cfg++) {
        ccase c = {.nd = 3, .clast = clast, .N = 2, .C = 2, .in = {4, 5, 3}, .k = {2, 3, 2}, .icg = 2,
                   .fout = 3, .stride = {1, 1, 1}, .dil = {1, 1, 1}, .pad = pads[pi]};
        if (cfg == 1) c.stride[0] = 2, c.stride[2] = 2;
        if (cfg == 2) c.dil[1] = 2;
        for (int d = 0; d < n3 && pi < 2; d++) run_case(&c, d3[d], seed++); /* Conv3D has no EXPLICIT */
        ccase w = {.nd = 2, .clast = clast, .depthwise = 1, .N = 2, .C = 3, .in = {5, 6}, .k = {3, 3},
                   .fout = 2, .stride = {1, 1}, .dil = {1, 1}, .pad = pads[pi], .ep = {{2, 0}, {1, 1}}};
        if (cfg == 1) w.stride[0] = 2, w.stride[1] = 2;
        if (cfg == 2) w.dil[0] = 2;
        for (int d = 0; d < nw; d++) run_case(&w, dw[d], seed++);
      }
}

/* The float depthwise kernel's paths (depthwise.c): channel counts that use
 * four 16-wide blocks, 16-wide blocks, 4-wide blocks and a scalar tail, multipliers 1 and above
 * (16- and 4-wide axpy plus tail), windows cut by every border, strides,
 * dilations, odd sizes, every padding and both formats; float32 and half
 * take it, double the reference loop. */
Test(conv, depthwise_paths) {
  const char *pads[] = {"VALID", "SAME", "EXPLICIT"};
  static const int64_t cm[][2] = {{1, 1}, {16, 1}, {37, 1}, {4, 1}, {150, 1}, {3, 5}, {2, 17}, {5, 12}, {1, 36}, {20, 2}};
  dfx_dtype dts[] = {DFX_F32, DFX_F64, DFX_F16};
  unsigned seed = 99;
  for (size_t k = 0; k < sizeof cm / sizeof cm[0]; k++)
    for (int cfg = 0; cfg < 5; cfg++) {
      ccase w = {.nd = 2, .clast = cfg != 3, .depthwise = 1, .N = 2, .C = cm[k][0], .in = {7, 9}, .k = {3, 3},
                 .fout = cm[k][1], .stride = {1, 1}, .dil = {1, 1}, .pad = pads[(k + cfg) % 3],
                 .ep = {{2, 1}, {0, 3}}};
      if (cfg == 1) w.stride[0] = 2, w.stride[1] = 3, w.k[1] = 5;
      if (cfg == 2) w.dil[0] = 2, w.dil[1] = 3, w.in[0] = 11;
      if (cfg == 3) w.k[0] = 1, w.k[1] = 4, w.in[0] = 1; /* a 1-D window (har_cnn's shape), NCHW */
      if (cfg == 4) w.in[0] = 5, w.in[1] = 29, w.stride[1] = 2, w.dil[1] = 2; /* rows of 4-position blocks */
      for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++) run_case(&w, dts[d], seed++);
    }
}

/* An empty image with explicit padding still has outputs, all zeros (the
 * padding convolved): the float32 path must not leave them unwritten. */
Test(conv, empty_input_explicit_padding_gives_zeros) {
  const char *ops[] = {"Conv2D", "DepthwiseConv2dNative"};
  for (int k = 0; k < 2; k++) {
    dfx_node *n = kh_node_new(ops[k]);
    kh_attr_type(n, "T", DFX_F32);
    kh_attr_ints(n, "strides", (int64_t[]){1, 1, 1, 1}, 4);
    kh_attr_str(n, "padding", "EXPLICIT");
    kh_attr_ints(n, "explicit_paddings", (int64_t[]){0, 0, 1, 1, 2, 1, 0, 0}, 8);
    dfx_tensor *x = kh_f32(4, (int64_t[]){1, 0, 0, 2}, NULL);
    dfx_tensor *f = kh_f32(4, (int64_t[]){1, 1, 2, 1}, (float[]){1, 2});
    dfx_tensor *o[1];
    ct_run(n, (dfx_tensor *[]){x, f}, 2, o, 1);
    double z[2 * 3 * 2] = {0};
    ct_expect(o[0], DFX_F32, 4, (int64_t[]){1, 2, 3, k ? 2 : 1}, z, 0, ops[k]);
    ct_free(o, 1);
    ct_free((dfx_tensor *[]){x, f}, 2);
    kh_node_free(n);
  }
}

/* Hand-computed: 1x3x3x1 input 1..9, 2x2x1x1 filter of ones, VALID. */
Test(conv, conv2d_known_values) {
  float x[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, f[4] = {1, 1, 1, 1};
  dfx_tensor *in[2] = {kh_f32(4, (int64_t[]){1, 3, 3, 1}, x), kh_f32(4, (int64_t[]){2, 2, 1, 1}, f)};
  dfx_node *n = kh_node_new("Conv2D");
  kh_attr_type(n, "T", DFX_F32);
  kh_attr_ints(n, "strides", (int64_t[]){1, 1, 1, 1}, 4);
  kh_attr_str(n, "padding", "SAME");
  dfx_tensor *o[1];
  ct_run(n, in, 2, o, 1);
  /* SAME pads after: bottom row/right column are partial sums. */
  ct_expect(o[0], DFX_F32, 4, (int64_t[]){1, 3, 3, 1}, (double[]){12, 16, 9, 24, 28, 15, 15, 17, 9}, 0, "same");
  ct_free(o, 1);
  kh_node_free(n);
  ct_free(in, 2);
}

Test(conv, empty_and_errors) {
  dfx_node *n = kh_node_new("Conv2D");
  kh_attr_type(n, "T", DFX_F32);
  kh_attr_ints(n, "strides", (int64_t[]){1, 1, 1, 1}, 4);
  kh_attr_str(n, "padding", "VALID");
  dfx_tensor *x0 = kh_f32(4, (int64_t[]){0, 3, 3, 2}, NULL);
  dfx_tensor *f = kh_f32(4, (int64_t[]){2, 2, 2, 1}, (float[]){1, 2, 3, 4, 5, 6, 7, 8});
  dfx_tensor *o[1];
  ct_run(n, (dfx_tensor *[]){x0, f}, 2, o, 1);
  ct_expect(o[0], DFX_F32, 4, (int64_t[]){0, 2, 2, 1}, NULL, 0, "empty batch");
  ct_free(o, 1);
  dfx_tensor *x3 = kh_f32(4, (int64_t[]){1, 3, 3, 3}, NULL);
  ct_fail(n, (dfx_tensor *[]){x3, f}, 2, "evenly divisible");
  dfx_tensor *xs = kh_f32(4, (int64_t[]){1, 1, 1, 2}, NULL);
  ct_run(n, (dfx_tensor *[]){xs, f}, 2, o, 1); /* (1 - 2 + 1) / 1 = 0: empty, not an error */
  ct_expect(o[0], DFX_F32, 4, (int64_t[]){1, 0, 0, 1}, NULL, 0, "zero size");
  ct_free(o, 1);
  kh_attr_ints(n, "dilations", (int64_t[]){1, 2, 2, 1}, 4);
  ct_fail(n, (dfx_tensor *[]){xs, f}, 2, "negative");
  kh_attr_ints(n, "dilations", (int64_t[]){1, 1, 1, 1}, 4);
  dfx_tensor *x1 = kh_f32(3, (int64_t[]){1, 3, 2}, NULL);
  ct_fail(n, (dfx_tensor *[]){x1, f}, 2, "4-dimensional");
  dfx_tensor *x2 = kh_f32(4, (int64_t[]){1, 3, 3, 2}, NULL);
  memset(x2->data, 0, x2->nbytes);
  dfx_tensor *f0 = kh_f32(4, (int64_t[]){2, 0, 2, 1}, NULL);
  ct_fail(n, (dfx_tensor *[]){x2, f0}, 2, "filter must not have zero elements");
  kh_node_free(n);

  dfx_node *b = kh_node_new("Conv2DBackpropInput");
  kh_attr_type(b, "T", DFX_F32);
  kh_attr_ints(b, "strides", (int64_t[]){1, 1, 1, 1}, 4);
  kh_attr_str(b, "padding", "VALID");
  dfx_tensor *sz = kh_i32(1, (int64_t[]){4}, (int32_t[]){1, 3, 3, 2});
  dfx_tensor *dy = kh_f32(4, (int64_t[]){1, 3, 3, 1}, NULL);
  memset(dy->data, 0, dy->nbytes);
  ct_fail(b, (dfx_tensor *[]){sz, f, dy}, 3, "doesn't match");
  kh_node_free(b);
  ct_free((dfx_tensor *[]){x0, f, x3, xs, x1, x2, sz, dy, f0}, 9);
}
