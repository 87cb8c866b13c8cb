/* convutil.h - helpers shared by the conv family's files: padding and window
 * arithmetic, attr list reading, conversion of tensors to float/double work
 * buffers and back, channel-axis moves and element block copies. All helpers
 * are static (each file gets its own copy of what it uses). */
#ifndef DFX_CONVUTIL_H
#define DFX_CONVUTIL_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "alloc.h"
#include "kdispatch.h"
#include "kernel.h"

typedef enum { PAD_SAME, PAD_VALID, PAD_EXPLICIT, PAD_BAD } padkind;

static inline padkind cu_padding(const dfx_node *n) {
  const char *s = dfx__attr_str(n, "padding", "");
  if (!strcmp(s, "SAME")) return PAD_SAME;
  if (!strcmp(s, "VALID")) return PAD_VALID;
  if (!strcmp(s, "EXPLICIT")) return PAD_EXPLICIT;
  return PAD_BAD;
}

/* Reads a list(int) attr into out[0..n); returns the count or -1 if absent. */
static inline int cu_ints(const dfx_node *n, const char *name, int64_t *out, int max) {
  const dfx_attr_list *l = dfx__attr_list(n, name);
  if (!l) return -1;
  if (l->n > 0 && l->kind != DFX_ATTR_I) return -1;
  int k = l->n < max ? l->n : max;
  for (int i = 0; i < k; i++) out[i] = l->v.i[i];
  return l->n;
}

/* ---- window attrs, checked once when a session plans the node ---- */

/* A node's sliding-window attrs, in data-format order (r = nd + 2 values). */
typedef struct cu_spec {
  int nd, clast;   /* spatial dims; channels-last (NHWC, NDHWC) layout */
  padkind pad;
  int64_t ks[5], st[5], dl[5], ep[10]; /* ksize, strides, dilations/rates, explicit_paddings */
} cu_spec;

/* Hands a copy of s to the node as its kernel state (freed by dfx__free). */
static inline dfx_code cu_spec_state(const cu_spec *s, void **state, dfx_status *st) {
  cu_spec *p = dfx__malloc(sizeof *p);
  if (!p) return dfx__status_set(st, DFX_ENOMEM, "out of memory");
  *p = *s;
  *state = p;
  return DFX_OK;
}

/* Checks r window values (from attr or input `name`): each must be >= 1. */
static inline dfx_code cu_check_window(const char *name, const int64_t *v, int n, int r, dfx_status *st) {
  char b[160];
  if (n != r)
    return dfx__status_set(st, DFX_EINVAL, "%s must have %d values, got %d", name, r, n < 0 ? 0 : n);
  for (int i = 0; i < r; i++)
    if (v[i] < 1)
      return dfx__status_set(st, DFX_EINVAL, "%s = %s: every value must be >= 1, got %lld at index %d", name,
                             dfx__shape_str(r, v, b, sizeof b), (long long)v[i], i);
  return DFX_OK;
}

/* Reads list(int) attr `name` of r values, each >= 1, into out. */
static inline dfx_code cu_window_attr(const dfx_node *n, const char *name, int r, int64_t *out, dfx_status *st) {
  int64_t v[8];
  int k = cu_ints(n, name, v, 8);
  if (k != r) return cu_check_window(name, v, k, r, st);
  memcpy(out, v, sizeof(int64_t) * (size_t)r);
  return cu_check_window(name, out, r, r, st);
}

/* Fails unless v is 1 in the batch and channel dims: `what` ends TF's message. */
static inline dfx_code cu_unit_bc(const char *name, const int64_t *v, int r, int clast, const char *what,
                                  dfx_status *st) {
  if (v[0] == 1 && v[clast ? r - 1 : 1] == 1) return DFX_OK;
  char b[160];
  return dfx__status_set(st, DFX_EINVAL, "%s = %s: %s", name, dfx__shape_str(r, v, b, sizeof b), what);
}

/* data_format: channels last or first; NCHW_VECT_C (quantized int8 blocks) is not implemented. */
static inline dfx_code cu_format_attr(const dfx_node *n, int nd, int *clast, dfx_status *st) {
  const char *df = dfx__attr_str(n, "data_format", nd == 2 ? "NHWC" : "NDHWC");
  if (!strcmp(df, "NHWC") || !strcmp(df, "NDHWC")) *clast = 1;
  else if (!strcmp(df, "NCHW") || !strcmp(df, "NCDHW")) *clast = 0;
  else return dfx__status_set(st, DFX_EUNIMPL, "data_format = '%s' is not supported", df);
  return DFX_OK;
}

/* padding and explicit_paddings (TF's CheckValidPadding): EXPLICIT takes 2 * r
 * non-negative values, zero in the batch and channel dims; others take none. */
static inline dfx_code cu_padding_attr(const dfx_node *n, cu_spec *s, dfx_status *st) {
  int r = s->nd + 2, ne = cu_ints(n, "explicit_paddings", s->ep, 10);
  char b[200];
  s->pad = cu_padding(n);
  if (s->pad == PAD_BAD)
    return dfx__status_set(st, DFX_EINVAL, "padding = '%s' is not supported", dfx__attr_str(n, "padding", ""));
  if (s->pad != PAD_EXPLICIT) {
    if (ne > 0)
      return dfx__status_set(st, DFX_EINVAL,
                             "explicit_paddings must be empty if padding is not EXPLICIT, got %d values", ne);
    memset(s->ep, 0, sizeof s->ep);
    return DFX_OK;
  }
  if (ne != 2 * r)
    return dfx__status_set(st, DFX_EINVAL, "explicit_paddings must contain %d values, got %d", 2 * r, ne < 0 ? 0 : ne);
  const char *ps = dfx__shape_str(2 * r, s->ep, b, sizeof b);
  for (int i = 0; i < 2 * r; i++)
    if (s->ep[i] < 0) return dfx__status_set(st, DFX_EINVAL, "explicit_paddings = %s: all values must be >= 0", ps);
  int c = s->clast ? r - 1 : 1;
  if (s->ep[0] || s->ep[1] || s->ep[2 * c] || s->ep[2 * c + 1])
    return dfx__status_set(st, DFX_EINVAL,
                           "explicit_paddings = %s: padding the batch or depth dimension is not supported", ps);
  return DFX_OK;
}

/* TF's windowed output size, and the padding before, in checked arithmetic:
 * hostile attrs or input sizes fail here instead of wrapping. */
static inline dfx_code cu_window(dfx_kctx *ctx, int64_t in, int64_t k, int64_t dil, int64_t stride, padkind pad,
                                 int64_t pb, int64_t pa, int64_t *out, int64_t *pad_before) {
  if (stride <= 0) return dfx__kctx_fail(ctx, DFX_EINVAL, "Stride must be > 0, but got %lld", (long long)stride);
  if (dil <= 0) return dfx__kctx_fail(ctx, DFX_EINVAL, "Dilation rate must be >= 1, but got %lld", (long long)dil);
  int64_t ek, t = 0;
  bool ovf = __builtin_mul_overflow(k - 1, dil, &ek) || __builtin_add_overflow(ek, 1, &ek);
  *pad_before = 0;
  switch (pad) {
  case PAD_VALID:
    ovf = ovf || __builtin_sub_overflow(in, ek, &t) || __builtin_add_overflow(t, stride, &t);
    *out = t / stride;
    break;
  case PAD_EXPLICIT:
    ovf = ovf || __builtin_add_overflow(in, pb, &t) || __builtin_add_overflow(t, pa, &t) ||
          __builtin_sub_overflow(t, ek, &t) || __builtin_add_overflow(t, stride, &t);
    *out = t / stride;
    *pad_before = pb;
    break;
  default: /* SAME */
    *out = in / stride + (in % stride != 0);
    ovf = ovf || __builtin_mul_overflow(*out - 1, stride, &t) || __builtin_add_overflow(t, ek, &t) ||
          __builtin_sub_overflow(t, in, &t);
    *pad_before = t > 0 ? t / 2 : 0;
  }
  if (ovf)
    return dfx__kctx_fail(ctx, DFX_EINVAL,
                          "window arithmetic overflows int64 [input_size: %lld, filter_size: %lld, dilation: %lld, "
                          "stride: %lld]",
                          (long long)in, (long long)k, (long long)dil, (long long)stride);
  if (*out < 0)
    return dfx__kctx_fail(ctx, DFX_EINVAL,
                          "Computed output size would be negative: %lld [input_size: %lld, "
                          "effective_filter_size: %lld, stride: %lld]",
                          (long long)*out, (long long)in, (long long)ek, (long long)stride);
  return DFX_OK;
}

/* Polls for cancellation and the run's deadline about once per CU_POLL_WORK
 * units of work (elements touched): *work accumulates `add`. */
#define CU_POLL_WORK ((int64_t)1 << 20)
static inline dfx_code cu_tick(dfx_kctx *ctx, int64_t *work, int64_t add) {
  if ((*work += add) < CU_POLL_WORK) return DFX_OK;
  *work = 0;
  return dfx__kctx_poll(ctx);
}

/* New scratch of n elements of `size` bytes, n coming from input values:
 * refused beyond the tensor limit, naming `what`. NULL after recording the
 * error in ctx. */
static inline void *cu_scratch(dfx_kctx *ctx, int64_t n, size_t size, const char *what) {
  size_t bytes = dfx__mul_size((size_t)(n > 0 ? n : 1), size);
  if (bytes > dfx__tensor_limit()) {
    dfx__kctx_fail(ctx, DFX_ELIMIT, "%s = %lld needs more scratch memory than the tensor limit (%zu bytes)", what,
                   (long long)n, dfx__tensor_limit());
    return NULL;
  }
  void *p = dfx__malloc(bytes);
  if (!p) dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory for %s = %lld", what, (long long)n);
  return p;
}

/* ---- work buffers ---- */

static inline float cu_get_f(const dfx_tensor *t, int64_t i) {
  switch ((dfx_dtype)t->dtype) {
  case DFX_F32: return ((const float *)t->data)[i];
  case DFX_F16: return dfx__f16_to_f32(((const uint16_t *)t->data)[i]);
  case DFX_BF16: return dfx__bf16_to_f32(((const uint16_t *)t->data)[i]);
  default: return (float)dfx__tensor_get_f64(t, i);
  }
}

/* New float (dbl=0) or double (dbl=1) copy of t's elements, or NULL. */
static inline void *cu_load(const dfx_tensor *t, int dbl) {
  int64_t n = t->count;
  void *buf = dfx__malloc(dfx__mul_size((size_t)(n ? n : 1), dbl ? sizeof(double) : sizeof(float)));
  if (!buf) return NULL;
  if (dbl) {
    double *d = buf;
    switch ((dfx_dtype)t->dtype) {
#define CU_L(DT, T) \
  case DT:          \
    for (int64_t i = 0; i < n; i++) d[i] = (double)((const T *)t->data)[i]; \
    break;
      DFX_REAL_TYPES(CU_L)
#undef CU_L
    default:
      for (int64_t i = 0; i < n; i++) d[i] = cu_get_f(t, i);
    }
  } else {
    float *f = buf;
    switch ((dfx_dtype)t->dtype) {
    case DFX_F32: memcpy(f, t->data, (size_t)n * sizeof(float)); break;
    case DFX_F16:
      for (int64_t i = 0; i < n; i++) f[i] = dfx__f16_to_f32(((const uint16_t *)t->data)[i]);
      break;
    case DFX_BF16:
      for (int64_t i = 0; i < n; i++) f[i] = dfx__bf16_to_f32(((const uint16_t *)t->data)[i]);
      break;
#define CU_L(DT, T) \
  case DT:          \
    for (int64_t i = 0; i < n; i++) f[i] = (float)((const T *)t->data)[i]; \
    break;
      DFX_INT_TYPES(CU_L) CU_L(DFX_F64, double)
#undef CU_L
    default:
      for (int64_t i = 0; i < n; i++) f[i] = cu_get_f(t, i);
    }
  }
  return buf;
}

/* Stores a float/double work buffer into t (any real or half dtype). */
static inline void cu_store(dfx_tensor *t, const void *buf, int dbl) {
  int64_t n = t->count;
  const float *f = buf;
  const double *d = buf;
#define CU_V(i) (dbl ? d[i] : (double)f[i])
  switch ((dfx_dtype)t->dtype) {
  case DFX_F32:
    for (int64_t i = 0; i < n; i++) ((float *)t->data)[i] = dbl ? (float)d[i] : f[i];
    break;
  case DFX_F64:
    for (int64_t i = 0; i < n; i++) ((double *)t->data)[i] = CU_V(i);
    break;
  case DFX_F16:
    for (int64_t i = 0; i < n; i++) ((uint16_t *)t->data)[i] = dfx__f32_to_f16(dbl ? (float)d[i] : f[i]);
    break;
  case DFX_BF16:
    for (int64_t i = 0; i < n; i++) ((uint16_t *)t->data)[i] = dfx__f32_to_bf16(dbl ? (float)d[i] : f[i]);
    break;
#define CU_S(DT, T)                                        \
  case DT:                                                 \
    for (int64_t i = 0; i < n; i++) {                      \
      double v = CU_V(i);                                  \
      int64_t iv = isfinite(v) && fabs(v) < 9.2e18 ? (int64_t)v : 0; \
      ((T *)t->data)[i] = (T)iv;                           \
    }                                                      \
    break;
    DFX_INT_TYPES(CU_S)
#undef CU_S
  default: break;
  }
#undef CU_V
}

/* Moves the channel axis: [N, C, S] <-> [N, S, C] for elements of es bytes. */
static inline void cu_move_c(const void *src, void *dst, int64_t N, int64_t C, int64_t S, size_t es, int to_last) {
  const char *s = src;
  char *d = dst;
  for (int64_t n = 0; n < N; n++)
    for (int64_t c = 0; c < C; c++)
      for (int64_t i = 0; i < S; i++) {
        int64_t a = (n * C + c) * S + i, b = (n * S + i) * C + c;
        if (to_last)
          memcpy(d + b * es, s + a * es, es);
        else
          memcpy(d + a * es, s + b * es, es);
      }
}

/* Copies n elements from src[si..] to dst[di..] (strings deep-copied). */
static inline dfx_code cu_copy(dfx_tensor *dst, int64_t di, const dfx_tensor *src, int64_t si, int64_t n) {
  if (n <= 0) return DFX_OK;
  if (dst->dtype == DFX_STRING) {
    const dfx_str *s = (const dfx_str *)src->data + si;
    for (int64_t k = 0; k < n; k++) {
      dfx_code c = dfx_tensor_set_string(dst, di + k, s[k].ptr ? s[k].ptr : "", s[k].len);
      if (c != DFX_OK) return c;
    }
    return DFX_OK;
  }
  size_t es = dfx__dtype_storage((dfx_dtype)dst->dtype);
  memcpy((char *)dst->data + (size_t)di * es, (const char *)src->data + (size_t)si * es, (size_t)n * es);
  return DFX_OK;
}

/* Zero of dtype written to n elements at di (strings stay empty). */
static inline void cu_zero(dfx_tensor *dst, int64_t di, int64_t n) {
  if (dst->dtype == DFX_STRING || n <= 0) return;
  size_t es = dfx__dtype_storage((dfx_dtype)dst->dtype);
  memset((char *)dst->data + (size_t)di * es, 0, (size_t)n * es);
}

#endif
