/* fft.c - FFT/IFFT, FFT2D/IFFT2D, FFT3D/IFFT3D (complex to complex over the
 * innermost 1-3 dims, same shape out), RFFT/RFFT2D/RFFT3D (real to the
 * Hermitian half spectrum) and IRFFT/IRFFT2D/IRFFT3D (back), as TF's CPU
 * kernels: dims before the transformed ones are batch dims; tensors are
 * row-major and transformed one axis at a time (fft.h has the engine and the
 * library choice). The real transforms take fft_length as TF's kernel does:
 * each transformed input dim is cropped to fft_length[i] (to
 * fft_length[i]/2+1 for IRFFT's innermost) and must be at least that long
 * unless empty; zero-padding to a longer length is done by the graph (TF's
 * Python wrapper adds a Pad), not here. An empty input with a non-empty
 * output gives zeros (TF leaves that output unset). Inverses scale by 1/n,
 * n the product of the transform lengths; IRFFT transforms the outer axes
 * first and ignores the imaginary parts the innermost c2r cannot represent
 * (bin 0 and, for even lengths, bin n/2), like DUCC's c2r. */
#include <string.h>

#include "fft.h"

#define POLL_GRAIN ((int64_t)1 << 20)

/* Counts `n` elements of work and polls each time the count crosses a grain. */
static dfx_code work_done(dfx_kctx *ctx, int64_t *done, int64_t n) {
  int64_t before = *done;
  *done += n;
  return before / POLL_GRAIN != *done / POLL_GRAIN ? dfx__kctx_poll(ctx) : DFX_OK;
}

static size_t celem(dfx_dtype dt) { return dt == DFX_C64 ? 2 * sizeof(float) : 2 * sizeof(double); }

/* The element offset, in a row-major tensor of dims src[0..nd), of line
 * `line` (a number over walk[0..nd-1), the last dim excluded). */
static int64_t line_offset(int64_t line, int nd, const int64_t *walk, const int64_t *src) {
  int64_t off = 0, stride = src[nd - 1];
  for (int d = nd - 2; d >= 0; d--) {
    off += (line % walk[d]) * stride;
    line /= walk[d];
    stride *= src[d];
  }
  return off;
}

/* Transforms every line of complex tensor t along axis ax, in place. */
static dfx_code fft_axis(dfx_kctx *ctx, dfx_tensor *t, int ax, bool inverse, int64_t *done) {
  int64_t n = t->dims[ax], inner = 1;
  if (n <= 1 || t->count == 0) return DFX_OK;
  for (int d = ax + 1; d < t->ndims; d++) inner *= t->dims[d];
  int64_t outer = t->count / n / inner;
  size_t es = celem((dfx_dtype)t->dtype);
  dfx_fft_plan p;
  if (dfx__fft_plan_init(&p, n, inverse, t->dtype == DFX_C64, ctx) != DFX_OK) return ctx->st->code;
  char *line = p.line;
  dfx_code c = DFX_OK;
  for (int64_t o = 0; o < outer && c == DFX_OK; o++)
    for (int64_t i = 0; i < inner && c == DFX_OK; i++) {
      char *x = (char *)t->data + (size_t)(o * n * inner + i) * es;
      for (int64_t k = 0; k < n; k++) memcpy(line + (size_t)k * es, x + (size_t)(k * inner) * es, es);
      dfx__fft_plan_run(&p);
      for (int64_t k = 0; k < n; k++) memcpy(x + (size_t)(k * inner) * es, line + (size_t)k * es, es);
      c = work_done(ctx, done, n);
    }
  dfx__fft_plan_destroy(&p);
  return c;
}

static void scale(dfx_tensor *t, double s) {
  if (t->dtype == DFX_C64 || t->dtype == DFX_F32) {
    float *v = t->data, f = (float)s;
    for (size_t i = 0; i < t->nbytes / sizeof(float); i++) v[i] *= f;
  } else {
    double *v = t->data;
    for (size_t i = 0; i < t->nbytes / sizeof(double); i++) v[i] *= s;
  }
}

static dfx_code check_rank(dfx_kctx *ctx, int rank) {
  char b[128];
  if (ctx->in[0]->ndims >= rank) return DFX_OK;
  return dfx__kctx_fail(ctx, DFX_EINVAL, "Input must have rank of at least %d but got: %s", rank,
                        DFX_SHAPE_STR(ctx->in[0], b));
}

/* ---- complex to complex ---- */

static dfx_code c2c(dfx_kctx *ctx, int rank, bool forward) {
  if (check_rank(ctx, rank)) return ctx->st->code;
  dfx_tensor *out = dfx__kctx_take_unique(ctx, 0);
  if (out) {
    ctx->out[0] = out;
  } else {
    const dfx_tensor *in = ctx->in[0];
    if (!(out = dfx__kctx_alloc(ctx, 0, (dfx_dtype)in->dtype, in->ndims, in->dims))) return ctx->st->code;
    if (in->nbytes) memcpy(out->data, in->data, in->nbytes);
  }
  if (out->count == 0) return DFX_OK;
  int64_t done = 0, total = 1;
  for (int a = 0; a < rank; a++) {
    total *= out->dims[out->ndims - 1 - a];
    if (fft_axis(ctx, out, out->ndims - 1 - a, !forward, &done)) return ctx->st->code;
  }
  if (!forward) scale(out, 1.0 / (double)total);
  return DFX_OK;
}

static dfx_code fft1(dfx_kctx *ctx) { return c2c(ctx, 1, true); }
static dfx_code fft2(dfx_kctx *ctx) { return c2c(ctx, 2, true); }
static dfx_code fft3(dfx_kctx *ctx) { return c2c(ctx, 3, true); }
static dfx_code ifft1(dfx_kctx *ctx) { return c2c(ctx, 1, false); }
static dfx_code ifft2(dfx_kctx *ctx) { return c2c(ctx, 2, false); }
static dfx_code ifft3(dfx_kctx *ctx) { return c2c(ctx, 3, false); }

/* ---- real transforms ---- */

/* Reads fft_length into L and checks the input dims against it; fills the
 * output dims (od, the input's rank). */
static dfx_code real_dims(dfx_kctx *ctx, int rank, bool forward, int64_t *L, int64_t *od) {
  const dfx_tensor *in = ctx->in[0], *fl = ctx->in[1];
  if (check_rank(ctx, rank)) return ctx->st->code;
  if (fl->ndims != 1 || fl->dims[0] != rank)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "fft_length must have shape [%d]", rank);
  int nd = in->ndims;
  memcpy(od, in->dims, sizeof(int64_t) * (size_t)nd);
  for (int i = 0; i < rank; i++) {
    int32_t v = ((const int32_t *)fl->data)[i];
    if (v < 0) return dfx__kctx_fail(ctx, DFX_EINVAL, "fft_length[%d] must >= 0, but got: %d", i, v);
    L[i] = v;
    bool inner = i == rank - 1;
    int64_t need = !forward && inner ? L[i] / 2 + 1 : L[i], have = in->dims[nd - rank + i];
    if (have != 0 && have < need)
      return dfx__kctx_fail(ctx, DFX_EINVAL, "Input dimension %d must have length of at least %lld but got: %lld",
                            nd - rank + i, (long long)need, (long long)have);
    od[nd - rank + i] = forward && inner && L[i] != 0 ? L[i] / 2 + 1 : L[i];
  }
  return DFX_OK;
}

static dfx_code rfft(dfx_kctx *ctx, int rank) {
  const dfx_tensor *in = ctx->in[0];
  int64_t L[3] = {0}, od[DFX_MAX_DIMS];
  if (real_dims(ctx, rank, true, L, od)) return ctx->st->code;
  bool f32 = in->dtype == DFX_F32;
  int nd = in->ndims;
  dfx_tensor *out = dfx__kctx_alloc(ctx, 0, f32 ? DFX_C64 : DFX_C128, nd, od);
  if (!out) return ctx->st->code;
  if (out->count == 0) return DFX_OK;
  memset(out->data, 0, out->nbytes);
  if (in->count == 0) return DFX_OK;
  int64_t n = L[rank - 1], h = od[nd - 1], lines = out->count / h, done = 0;
  size_t es = celem((dfx_dtype)out->dtype);
  dfx_fft_plan p;
  if (dfx__fft_plan_init(&p, n, false, f32, ctx) != DFX_OK) return ctx->st->code;
  dfx_code c = DFX_OK;
  for (int64_t l = 0; l < lines && c == DFX_OK; l++) {
    int64_t off = line_offset(l, nd, od, in->dims);
    for (int64_t k = 0; k < n; k++) {
      if (f32) {
        ((float *)p.line)[2 * k] = ((const float *)in->data)[off + k];
        ((float *)p.line)[2 * k + 1] = 0;
      } else {
        ((double *)p.line)[2 * k] = ((const double *)in->data)[off + k];
        ((double *)p.line)[2 * k + 1] = 0;
      }
    }
    dfx__fft_plan_run(&p);
    memcpy((char *)out->data + (size_t)(l * h) * es, p.line, (size_t)h * es);
    c = work_done(ctx, &done, n);
  }
  dfx__fft_plan_destroy(&p);
  for (int i = rank - 2; i >= 0 && c == DFX_OK; i--) c = fft_axis(ctx, out, nd - rank + i, false, &done);
  return c;
}

static dfx_code irfft(dfx_kctx *ctx, int rank) {
  const dfx_tensor *in = ctx->in[0];
  int64_t L[3] = {0}, od[DFX_MAX_DIMS], wd[DFX_MAX_DIMS];
  if (real_dims(ctx, rank, false, L, od)) return ctx->st->code;
  bool f32 = in->dtype == DFX_C64;
  int nd = in->ndims;
  dfx_tensor *out = dfx__kctx_alloc(ctx, 0, f32 ? DFX_F32 : DFX_F64, nd, od);
  if (!out) return ctx->st->code;
  if (out->count == 0) return DFX_OK;
  if (in->count == 0) {
    memset(out->data, 0, out->nbytes);
    return DFX_OK;
  }
  /* The cropped half spectrum, transformed along the outer axes in place. */
  int64_t n = L[rank - 1], h = n / 2 + 1, total = 1, done = 0;
  memcpy(wd, od, sizeof wd);
  wd[nd - 1] = h;
  for (int i = 0; i < rank; i++) total *= L[i];
  dfx_code c;
  dfx_tensor *w = dfx__tensor_alloc((dfx_dtype)in->dtype, nd, wd, &c);
  if (!w) return dfx__kctx_fail(ctx, c, "cannot allocate the %lld-element IRFFT work buffer", (long long)out->count);
  size_t es = celem((dfx_dtype)in->dtype);
  int64_t lines = w->count / h;
  for (int64_t l = 0; l < lines; l++)
    memcpy((char *)w->data + (size_t)(l * h) * es,
           (const char *)in->data + (size_t)line_offset(l, nd, wd, in->dims) * es, (size_t)h * es);
  c = DFX_OK;
  for (int i = 0; i < rank - 1 && c == DFX_OK; i++) c = fft_axis(ctx, w, nd - rank + i, true, &done);
  dfx_fft_plan p;
  if (c == DFX_OK && (c = dfx__fft_plan_init(&p, n, true, f32, ctx)) == DFX_OK) {
    const double s = 1.0 / (double)total;
    const float sf = (float)s;
    for (int64_t l = 0; l < lines && c == DFX_OK; l++) {
      const char *src = (const char *)w->data + (size_t)(l * h) * es;
      char *line = p.line;
      memcpy(line, src, (size_t)h * es);
      for (int64_t k = h; k < n; k++) { /* the conjugate-symmetric upper half */
        memcpy(line + (size_t)k * es, src + (size_t)(n - k) * es, es);
        if (f32) ((float *)line)[2 * k + 1] *= -1;
        else ((double *)line)[2 * k + 1] *= -1;
      }
      dfx__fft_plan_run(&p);
      for (int64_t t = 0; t < n; t++) {
        if (f32) ((float *)out->data)[l * n + t] = ((const float *)line)[2 * t] * sf;
        else ((double *)out->data)[l * n + t] = ((const double *)line)[2 * t] * s;
      }
      c = work_done(ctx, &done, n);
    }
    dfx__fft_plan_destroy(&p);
  }
  dfx__tensor_unref(w);
  return c;
}

static dfx_code rfft1(dfx_kctx *ctx) { return rfft(ctx, 1); }
static dfx_code rfft2(dfx_kctx *ctx) { return rfft(ctx, 2); }
static dfx_code rfft3(dfx_kctx *ctx) { return rfft(ctx, 3); }
static dfx_code irfft1(dfx_kctx *ctx) { return irfft(ctx, 1); }
static dfx_code irfft2(dfx_kctx *ctx) { return irfft(ctx, 2); }
static dfx_code irfft3(dfx_kctx *ctx) { return irfft(ctx, 3); }

#define CTYPES "Tcomplex: {complex64, complex128}"
#define R32 "Treal: {float}; Tcomplex: {complex64}"
#define R64 "Treal: {double}; Tcomplex: {complex128}"

static const dfx_kernel_def kernels[] = {
    {"FFT", CTYPES, fft1, 0},        {"FFT2D", CTYPES, fft2, 0},      {"FFT3D", CTYPES, fft3, 0},
    {"IFFT", CTYPES, ifft1, 0},      {"IFFT2D", CTYPES, ifft2, 0},    {"IFFT3D", CTYPES, ifft3, 0},
    {"RFFT", R32, rfft1, 0},         {"RFFT", R64, rfft1, 0},         {"RFFT2D", R32, rfft2, 0},
    {"RFFT2D", R64, rfft2, 0},       {"RFFT3D", R32, rfft3, 0},       {"RFFT3D", R64, rfft3, 0},
    {"IRFFT", R32, irfft1, 0},       {"IRFFT", R64, irfft1, 0},       {"IRFFT2D", R32, irfft2, 0},
    {"IRFFT2D", R64, irfft2, 0},     {"IRFFT3D", R32, irfft3, 0},     {"IRFFT3D", R64, irfft3, 0},
    {NULL}};

void dfx__kernels_fft_fft(dfx_registry *r);
void dfx__kernels_fft_fft(dfx_registry *r) { dfx__kernels_add(r, kernels); }
