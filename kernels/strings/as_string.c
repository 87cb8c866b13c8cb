/* as_string.c - AsString: each element formatted as TF 2.x does with
 * absl::StrFormat("%<fill>*.*<conv>", width, precision, x): d / u for
 * integers, f / e (scientific) / g (shortest) for floating and complex
 * parts ("(re,im)"), s for strings, "true"/"false" for bool (width
 * ignored). A string input with no width is forwarded unchanged. Width and
 * precision -1 mean none. Strings are padded here, with spaces only (as
 * absl does; only the '-' fill flag matters), counting bytes, and
 * `precision` truncates them. Numbers go through the C library's printf,
 * whose conversions absl reproduces. */
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "sutil.h"

typedef struct as_state {
  char fmt[16];       /* "%0*.*lld" and the like; unused for bool and string */
  int32_t width, prec;
  bool left;          /* '-' fill: strings pad on the right */
} as_state;

static void as_fini(void *state) { dfx__free(state); }

static bool is_floating(dfx_dtype t) { return dfx__dtype_is_float(t) || dfx__dtype_is_complex(t); }

static dfx_code as_init(const dfx_node *n, void **state, dfx_status *st) {
  dfx_dtype t = dfx__attr_type(n, "T", DFX_INVALID);
  int32_t prec, width;
  dfx_code c;
  if ((c = dfx__s_attr_i32(n, "precision", &prec, st)) || (c = dfx__s_attr_i32(n, "width", &width, st))) return c;
  bool sci = dfx__attr_bool(n, "scientific", false), shortest = dfx__attr_bool(n, "shortest", false);
  dfx_str fill = dfx__s_attr_bytes(n, "fill");
  if (t != DFX_STRING && !is_floating(t)) {
    if (sci || shortest)
      return dfx__status_set(st, DFX_EINVAL, "scientific and shortest format not supported for datatype %s",
                             dfx__s_tf_type(t));
    if (prec >= 0) return dfx__status_set(st, DFX_EINVAL, "precision not supported for datatype %s", dfx__s_tf_type(t));
  }
  if (fill.len > 1) return dfx__status_set(st, DFX_EINVAL, "Fill string must be one or fewer characters");
  if (sci && shortest) return dfx__status_set(st, DFX_EINVAL, "Cannot select both scientific and shortest notation");
  if (fill.len && !strchr(" +-0#", fill.ptr[0]))
    return dfx__status_set(st, DFX_EINVAL, "Fill argument not supported: \"%c\"", fill.ptr[0]);
  as_state *s = dfx__calloc(1, sizeof *s);
  if (!s) return dfx__status_set(st, DFX_ENOMEM, "out of memory");
  s->width = width < 0 ? 0 : width;
  s->prec = prec;
  s->left = fill.len && fill.ptr[0] == '-';
  const char *conv = dfx__dtype_is_int(t) ? (dfx__dtype_is_signed(t) ? "lld" : "llu")
                     : shortest            ? "g"
                     : sci                 ? "e"
                                           : "f";
  snprintf(s->fmt, sizeof s->fmt, "%%%.*s*.*%s", (int)fill.len, fill.len ? fill.ptr : "", conv);
  *state = s;
  return DFX_OK;
}

/* Appends one number formatted with s->fmt to b. */
static dfx_code num(dfx_kctx *ctx, const as_state *s, dfx_sbuf *b, dfx_dtype t, const void *p) {
  char small[512];
  int n;
  long long i = 0;
  unsigned long long u = 0;
  double d = 0;
  switch (t) {
    case DFX_I8: i = *(const int8_t *)p; break;
    case DFX_I16: i = *(const int16_t *)p; break;
    case DFX_I32: i = *(const int32_t *)p; break;
    case DFX_I64: i = *(const int64_t *)p; break;
    case DFX_U8: u = *(const uint8_t *)p; break;
    case DFX_U16: u = *(const uint16_t *)p; break;
    case DFX_U32: u = *(const uint32_t *)p; break;
    case DFX_U64: u = *(const uint64_t *)p; break;
    case DFX_F16: d = dfx__f16_to_f32(*(const uint16_t *)p); break;
    case DFX_BF16: d = dfx__bf16_to_f32(*(const uint16_t *)p); break;
    case DFX_F32: d = *(const float *)p; break;
    default: d = *(const double *)p; break;
  }
  bool is_s = dfx__dtype_is_signed(t), is_u = dfx__dtype_is_int(t) && !is_s;
#define FMT(buf, size)                                              \
  (is_s   ? snprintf(buf, size, s->fmt, s->width, s->prec, i) \
   : is_u ? snprintf(buf, size, s->fmt, s->width, s->prec, u) \
          : snprintf(buf, size, s->fmt, s->width, s->prec, d))
  n = FMT(small, sizeof small);
  if (n < 0) return dfx__kctx_fail(ctx, DFX_EINTERNAL, "formatting failed");
  if ((size_t)n < sizeof small) return dfx__sbuf_add(ctx, b, small, (size_t)n);
  char *big = dfx__malloc((size_t)n + 1);
  if (!big) return dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory formatting a number of %d characters", n);
  FMT(big, (size_t)n + 1);
#undef FMT
  dfx_code c = dfx__sbuf_add(ctx, b, big, (size_t)n);
  dfx__free(big);
  return c;
}

static dfx_code pad(dfx_kctx *ctx, dfx_sbuf *b, size_t n) {
  static const char spaces[64] = "                                                               ";
  dfx_code c = DFX_OK;
  for (; c == DFX_OK && n > 0; n -= n > 63 ? 63 : n) c = dfx__sbuf_add(ctx, b, spaces, n > 63 ? 63 : n);
  return c;
}

static dfx_code as_string_kernel(dfx_kctx *ctx) {
  const as_state *s = ctx->state;
  const dfx_tensor *x = ctx->in[0];
  dfx_dtype t = (dfx_dtype)x->dtype;
  if (t == DFX_STRING && s->width <= 0) {
    dfx__kctx_forward(ctx, 0, 0);
    return DFX_OK;
  }
  /* An upper bound on each element's length: width, precision and the
   * longest %f of a double (309 digits, sign, point), twice for complex. */
  size_t per = (size_t)s->width + (size_t)(s->prec > 0 ? s->prec : 0) + 320, total = 0;
  if (dfx__dtype_is_complex(t)) per = per * 2 + 3;
  dfx_code c = DFX_OK;
  if (t != DFX_STRING && t != DFX_BOOL && x->count > 0 &&
      (c = dfx__s_budget(ctx, &total, dfx__mul_size((size_t)x->count, per), "AsString")))
    return c;
  dfx_tensor *out = dfx__kctx_alloc(ctx, 0, DFX_STRING, x->ndims, x->dims);
  if (!out) return ctx->st->code;
  dfx_str *o = out->data;
  size_t es = t == DFX_STRING || t == DFX_BOOL ? 0 : dfx__dtype_storage(t);
  dfx_sbuf b = {0};
  for (int64_t k = 0; c == DFX_OK && k < x->count; k++) {
    b.len = 0;
    const char *p = (const char *)x->data + (size_t)k * es;
    if (t == DFX_BOOL) {
      bool v = ((const uint8_t *)x->data)[k] != 0;
      c = dfx__sbuf_add(ctx, &b, v ? "true" : "false", v ? 4 : 5);
    } else if (t == DFX_STRING) {
      const dfx_str *v = &((const dfx_str *)x->data)[k];
      size_t shown = s->prec >= 0 && (size_t)s->prec < v->len ? (size_t)s->prec : v->len;
      size_t fill = (size_t)s->width > shown ? (size_t)s->width - shown : 0;
      if ((c = dfx__s_budget(ctx, &total, shown + fill, "AsString"))) break;
      if (!s->left) c = pad(ctx, &b, fill);
      if (!c) c = dfx__sbuf_add(ctx, &b, v->ptr, shown);
      if (!c && s->left) c = pad(ctx, &b, fill);
    } else if (dfx__dtype_is_complex(t)) {
      dfx_dtype part = t == DFX_C64 ? DFX_F32 : DFX_F64;
      size_t ps = dfx__dtype_storage(part);
      c = dfx__sbuf_add(ctx, &b, "(", 1);
      if (!c) c = num(ctx, s, &b, part, p);
      if (!c) c = dfx__sbuf_add(ctx, &b, ",", 1);
      if (!c) c = num(ctx, s, &b, part, p + ps);
      if (!c) c = dfx__sbuf_add(ctx, &b, ")", 1);
    } else {
      c = num(ctx, s, &b, t, p);
    }
    if (!c && !dfx__s_set(&o[k], b.p, b.len)) c = dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory in AsString");
    if (!c) c = str_poll(ctx, k + 1);
  }
  dfx__sbuf_free(&b);
  return c;
}

static const dfx_kernel_def kernels[] = {
    {"AsString",
     "T: {float, double, half, bfloat16, int8, int16, int32, int64, uint8, uint16, uint32, uint64, complex64, "
     "complex128, bool, string}",
     as_string_kernel, 0, as_init, as_fini},
    {NULL}};

void dfx__kernels_strings_as_string(dfx_registry *r);
void dfx__kernels_strings_as_string(dfx_registry *r) { dfx__kernels_add(r, kernels); }
