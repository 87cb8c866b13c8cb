/* ngrams.c - StringNGrams over a ragged batch (data + row splits), as TF's
 * kernel: for each row and each width w, pad = min(pad_width < 0 ? w - 1 :
 * pad_width, w - 1) pads go on each side and every window of w items
 * becomes one string joined by `separator`; with preserve_short_sequences
 * a non-empty row that made no n-gram makes one of the whole row with
 * pad_width pads on each side. Splits are validated as TF does (first 0,
 * non-decreasing, last = data size). Sizes are int64 here (TF uses int) and
 * every string is sized before it is built, against the tensor limit. */
#include <string.h>

#include "alloc.h"
#include "sutil.h"

typedef struct ng_state {
  dfx_str sep, lpad, rpad;
  int64_t *widths;
  int n_widths;
  int32_t pad_width;
  bool preserve;
} ng_state;

static void ng_fini(void *state) {
  ng_state *s = state;
  if (!s) return;
  dfx__free(s->widths);
  dfx__free(s);
}

static dfx_code ng_init(const dfx_node *n, void **state, dfx_status *st) {
  ng_state *s = dfx__calloc(1, sizeof *s);
  if (!s) return dfx__status_set(st, DFX_ENOMEM, "out of memory");
  dfx_code c = dfx__s_attr_i32(n, "pad_width", &s->pad_width, st);
  const dfx_attr_list *w = dfx__attr_list(n, "ngram_widths");
  s->n_widths = w ? w->n : 0;
  if (!c && s->n_widths && !(s->widths = dfx__calloc((size_t)s->n_widths, sizeof *s->widths)))
    c = dfx__status_set(st, DFX_ENOMEM, "out of memory");
  for (int i = 0; !c && i < s->n_widths; i++) {
    s->widths[i] = w->v.i[i];
    if (s->widths[i] <= 0) c = dfx__status_set(st, DFX_EINVAL, "ngram_widths must contain positive values");
    else if (s->widths[i] > INT32_MAX)
      c = dfx__status_set(st, DFX_EINVAL, "Attr ngram_widths has value %lld out of range for an int32",
                          (long long)s->widths[i]);
  }
  if (c) {
    ng_fini(s);
    return c;
  }
  s->sep = dfx__s_attr_bytes(n, "separator");
  s->lpad = dfx__s_attr_bytes(n, "left_pad");
  s->rpad = dfx__s_attr_bytes(n, "right_pad");
  s->preserve = dfx__attr_bool(n, "preserve_short_sequences", false);
  *state = s;
  return DFX_OK;
}

static int64_t pad_of(const ng_state *s, int64_t w) {
  int64_t p = s->pad_width < 0 ? w - 1 : s->pad_width;
  return p < w - 1 ? p : w - 1;
}

static dfx_code count_of(dfx_kctx *ctx, const ng_state *s, int64_t len, int64_t w, int64_t *out) {
  int64_t pad = pad_of(s, w);
  if (pad > INT32_MAX / 2 - len)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Pad width could lead to integer overflow, got pad_width = %lld",
                          (long long)pad);
  int64_t k = len + 2 * pad - w + 1;
  *out = k > 0 ? k : 0;
  return DFX_OK;
}

/* Appends `times` copies of a then b (either may be empty), polling. */
static dfx_code repeat(dfx_kctx *ctx, dfx_sbuf *b, int64_t times, dfx_str x, dfx_str y) {
  if (x.len + y.len == 0) return DFX_OK;
  dfx_code c = DFX_OK;
  for (int64_t k = 0; !c && k < times; k++) {
    c = dfx__sbuf_add(ctx, b, x.ptr, x.len);
    if (!c) c = dfx__sbuf_add(ctx, b, y.ptr, y.len);
    if (!c) c = str_poll(ctx, k + 1);
  }
  return c;
}

/* TF's CreateNgrams: `num` n-grams of width w over data[0..]. */
static dfx_code make(dfx_kctx *ctx, const ng_state *s, const dfx_str *data, dfx_str *out, int64_t num, int64_t w,
                     size_t *total) {
  dfx_sbuf b = {0};
  dfx_code c = DFX_OK;
  for (int64_t g = 0; !c && g < num; g++) {
    int64_t pad = pad_of(s, w), lp = pad - g > 0 ? pad - g : 0, rp = pad - (num - (g + 1));
    if (rp < 0) rp = 0;
    int64_t nt = w - (lp + rp), first = lp > 0 ? 0 : g - pad;
    /* The size first, with overflow checks: pads, items, separators. */
    size_t size = 0, part;
    bool over = __builtin_mul_overflow((size_t)lp, s->lpad.len, &part) || __builtin_add_overflow(size, part, &size) ||
                __builtin_mul_overflow((size_t)rp, s->rpad.len, &part) || __builtin_add_overflow(size, part, &size) ||
                __builtin_mul_overflow((size_t)(lp + rp + nt - 1), s->sep.len, &part) ||
                __builtin_add_overflow(size, part, &size);
    for (int64_t k = 0; !over && k < nt; k++) over = __builtin_add_overflow(size, data[first + k].len, &size);
    if ((c = dfx__s_budget(ctx, total, over ? SIZE_MAX : size, "StringNGrams"))) break;
    b.len = 0;
    c = repeat(ctx, &b, lp, s->lpad, s->sep);
    for (int64_t k = 0; !c && k < nt - 1; k++) {
      c = dfx__sbuf_add(ctx, &b, data[first + k].ptr, data[first + k].len);
      if (!c) c = dfx__sbuf_add(ctx, &b, s->sep.ptr, s->sep.len);
    }
    if (!c && nt > 0) {
      c = dfx__sbuf_add(ctx, &b, data[first + nt - 1].ptr, data[first + nt - 1].len);
      if (!c) c = repeat(ctx, &b, rp, s->sep, s->rpad);
    } else if (!c && rp > 0) {
      c = repeat(ctx, &b, rp - 1, s->rpad, s->sep);
      if (!c) c = dfx__sbuf_add(ctx, &b, s->rpad.ptr, s->rpad.len);
    }
    if (!c && !dfx__s_set(&out[g], b.p, b.len)) c = dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory in StringNGrams");
    if (!c) c = str_poll(ctx, g + 1);
  }
  dfx__sbuf_free(&b);
  return c;
}

static int64_t split_at(const dfx_tensor *t, int64_t i) {
  return t->dtype == DFX_I32 ? ((const int32_t *)t->data)[i] : ((const int64_t *)t->data)[i];
}
static void split_put(dfx_tensor *t, int64_t i, int64_t v) {
  if (t->dtype == DFX_I32) ((int32_t *)t->data)[i] = (int32_t)v;
  else ((int64_t *)t->data)[i] = v;
}

static dfx_code ngrams_kernel(dfx_kctx *ctx) {
  const ng_state *s = ctx->state;
  const dfx_tensor *data = ctx->in[0], *splits = ctx->in[1];
  if (data->ndims != 1 || splits->ndims != 1)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Shape must be rank 1 but is rank %d (%s)",
                          data->ndims != 1 ? data->ndims : splits->ndims, data->ndims != 1 ? "data" : "data_splits");
  int64_t n_data = data->count, n_splits = splits->count;
  if (n_splits > 0) {
    int64_t prev = split_at(splits, 0);
    if (prev != 0) return dfx__kctx_fail(ctx, DFX_EINVAL, "First split value must be 0, got %lld", (long long)prev);
    for (int64_t i = 1; i < n_splits; i++) {
      int64_t v = split_at(splits, i);
      if (v < prev || v > n_data)
        return dfx__kctx_fail(ctx, DFX_EINVAL, "Invalid split value %lld, must be in [%lld, %lld]", (long long)v,
                              (long long)prev, (long long)n_data);
      prev = v;
    }
    if (prev != n_data)
      return dfx__kctx_fail(ctx, DFX_EINVAL, "Last split value must be data size. Expected %lld, got %lld",
                            (long long)n_data, (long long)prev);
  }
  int64_t rows = n_splits - 1;
  dfx_tensor *osplits = dfx__kctx_alloc(ctx, 1, (dfx_dtype)splits->dtype, 1, &n_splits);
  if (!osplits) return ctx->st->code;
  if (n_data == 0 || n_splits == 0) {
    for (int64_t i = 0; i < n_splits; i++) split_put(osplits, i, 0);
    return dfx__kctx_alloc(ctx, 0, DFX_STRING, data->ndims, data->dims) ? DFX_OK : ctx->st->code;
  }
  dfx_code c;
  int64_t total = 0;
  split_put(osplits, 0, 0);
  for (int64_t i = 1; i <= rows; i++) {
    int64_t len = split_at(splits, i) - split_at(splits, i - 1), k = 0, row = 0;
    for (int w = 0; w < s->n_widths; w++) {
      if ((c = count_of(ctx, s, len, s->widths[w], &k))) return c;
      row += k; /* each k <= len + 2^30: no overflow over int32 widths */
    }
    if (s->preserve && len > 0 && row == 0) row = 1;
    if (row > INT64_MAX - total) return dfx__kctx_fail(ctx, DFX_ELIMIT, "StringNGrams: too many n-grams");
    total += row;
    if (splits->dtype == DFX_I32 && total > INT32_MAX)
      return dfx__kctx_fail(ctx, DFX_ELIMIT, "StringNGrams: %lld n-grams do not fit int32 splits", (long long)total);
    split_put(osplits, i, total);
  }
  dfx_tensor *out = dfx__kctx_alloc(ctx, 0, DFX_STRING, 1, &total);
  if (!out) return ctx->st->code;
  const dfx_str *d = data->data;
  dfx_str *o = out->data;
  size_t bytes = 0;
  for (int64_t i = 0; i < rows; i++) {
    int64_t at = split_at(splits, i), len = split_at(splits, i + 1) - at, start = split_at(osplits, i), pos = start;
    for (int w = 0; w < s->n_widths; w++) {
      int64_t k = 0;
      if ((c = count_of(ctx, s, len, s->widths[w], &k)) || (c = make(ctx, s, d + at, o + pos, k, s->widths[w], &bytes)))
        return c;
      pos += k;
    }
    if (s->preserve && pos == start && len > 0) {
      if (s->pad_width < 0)
        return dfx__kctx_fail(ctx, DFX_EINVAL,
                              "Pad width should be >= 0 when preserve_short_sequences is True and ngram_widths are "
                              "not provided, got %d",
                              s->pad_width);
      if ((c = make(ctx, s, d + at, o + pos, 1, len + 2 * (int64_t)s->pad_width, &bytes))) return c;
    }
  }
  return DFX_OK;
}

static const dfx_kernel_def kernels[] = {
    {"StringNGrams", "Tsplits: {int32, int64}", ngrams_kernel, 0, ng_init, ng_fini}, {NULL}};

void dfx__kernels_strings_ngrams(dfx_registry *r);
void dfx__kernels_strings_ngrams(dfx_registry *r) { dfx__kernels_add(r, kernels); }
