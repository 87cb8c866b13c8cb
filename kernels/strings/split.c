/* split.c - StringSplit and StringSplitV2: a vector of strings into a
 * sparse [batch, max tokens] string matrix (indices, values, shape).
 *
 * StringSplit (TF's Split): an empty string has no tokens; an empty
 * delimiter makes every byte a token; otherwise every byte of `delimiter`
 * is a separator (a character set, not a substring), and skip_empty drops
 * empty tokens. StringSplitV2 is Python's str.split: a non-empty sep is a
 * substring and every occurrence separates (so "" gives [""]); an empty sep
 * splits on runs of ASCII whitespace and drops leading and trailing ones;
 * after maxsplit splits (< 0: no limit) the rest of the string is the last
 * token (with the whitespace rule, minus its leading whitespace).
 *
 * Both run twice over the input: once to count tokens (and size the
 * outputs), once to fill them. */
#define _GNU_SOURCE /* memmem */
#include <string.h>

#include "sutil.h"

typedef struct sink {
  int64_t row, col;   /* position of the next token */
  int64_t n;          /* tokens so far */
  int64_t *ind;       /* NULL while counting */
  dfx_str *val;
} sink;

static bool emit(sink *s, const char *p, size_t len) {
  if (s->ind) {
    s->ind[2 * s->n] = s->row;
    s->ind[2 * s->n + 1] = s->col;
    if (!dfx__s_set(&s->val[s->n], p, len)) return false;
  }
  s->n++;
  s->col++;
  return true;
}

static bool ws(char ch) { return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\v' || ch == '\f' || ch == '\r'; }

/* StringSplit's tokens of one string. */
static bool split_v1(sink *s, const char *p, size_t n, const bool *set, bool no_delim, bool skip_empty) {
  if (n == 0) return true;
  if (no_delim) {
    for (size_t i = 0; i < n; i++)
      if (!emit(s, p + i, 1)) return false;
    return true;
  }
  size_t start = 0;
  for (size_t i = 0; i <= n; i++)
    if (i == n || set[(unsigned char)p[i]]) {
      if ((i > start || !skip_empty) && !emit(s, p + start, i - start)) return false;
      start = i + 1;
    }
  return true;
}

/* StringSplitV2's tokens of one string (Python's str.split). */
static bool split_v2(sink *s, const char *p, size_t n, const char *sep, size_t sl, int32_t maxsplit) {
  if (maxsplit == 0) return emit(s, p, n);
  int64_t splits = 0;
  if (sl == 0) {
    size_t i = 0;
    while (i < n && ws(p[i])) i++;
    while (i < n) {
      size_t start = i;
      while (i < n && !ws(p[i])) i++;
      if (!emit(s, p + start, i - start)) return false;
      while (i < n && ws(p[i])) i++;
      if (maxsplit > 0 && ++splits == maxsplit) return emit(s, p + i, n - i);
    }
    return true;
  }
  size_t start = 0;
  const char *hit;
  while ((hit = memmem(p + start, n - start, sep, sl))) {
    if (!emit(s, p + start, (size_t)(hit - (p + start)))) return false;
    start = (size_t)(hit - p) + sl;
    if (maxsplit > 0 && ++splits == maxsplit) break;
  }
  return emit(s, p + start, n - start);
}

static dfx_code split_common(dfx_kctx *ctx, bool v2) {
  const dfx_tensor *in = ctx->in[0], *d = ctx->in[1];
  char b[128];
  if (in->ndims != 1)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "input must be a vector, got shape: %s", DFX_SHAPE_STR(in, b));
  if (d->ndims != 0)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "%s must be a scalar, got shape: %s", v2 ? "sep" : "delimiter",
                          DFX_SHAPE_STR(d, b));
  const dfx_str *strs = in->data, *delim = d->data;
  bool set[256] = {false}, skip_empty = dfx__attr_bool(ctx->node, "skip_empty", true);
  for (size_t i = 0; i < delim->len; i++) set[(unsigned char)delim->ptr[i]] = true;
  int64_t maxsplit = dfx__attr_int(ctx->node, "maxsplit", -1);
  int32_t ms = maxsplit < INT32_MIN ? INT32_MIN : maxsplit > INT32_MAX ? INT32_MAX : (int32_t)maxsplit;
  sink s = {0};
  int64_t max_cols = 0, work = 0;
  dfx_code c = DFX_OK;
  for (int pass = 0; pass < 2; pass++) {
    if (pass == 1) {
      int64_t id[2] = {s.n, 2};
      dfx_tensor *ind = dfx__kctx_alloc(ctx, 0, DFX_I64, 2, id);
      dfx_tensor *val = ind ? dfx__kctx_alloc(ctx, 1, DFX_STRING, 1, &s.n) : NULL;
      dfx_tensor *shp = val ? dfx__kctx_alloc(ctx, 2, DFX_I64, 1, (int64_t[]){2}) : NULL;
      if (!shp) return ctx->st->code;
      ((int64_t *)shp->data)[0] = in->count;
      ((int64_t *)shp->data)[1] = max_cols;
      s = (sink){.ind = ind->data, .val = val->data};
    }
    for (int64_t r = 0; r < in->count; r++) {
      s.row = r;
      s.col = 0;
      const char *p = strs[r].ptr ? strs[r].ptr : "";
      bool ok = v2 ? split_v2(&s, p, strs[r].len, delim->ptr, delim->len, ms)
                   : split_v1(&s, p, strs[r].len, set, delim->len == 0, skip_empty);
      if (!ok) return dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory splitting strings");
      if (s.col > max_cols) max_cols = s.col;
      int64_t before = work;
      work += (int64_t)strs[r].len + 1;
      if ((before >> 20) != (work >> 20) && (c = dfx__kctx_poll(ctx))) return c;
    }
  }
  return DFX_OK;
}

static dfx_code split_kernel(dfx_kctx *ctx) { return split_common(ctx, false); }
static dfx_code split_v2_kernel(dfx_kctx *ctx) { return split_common(ctx, true); }

static dfx_code split_v2_init(const dfx_node *n, void **state, dfx_status *st) {
  int32_t ms;
  return dfx__s_attr_i32(n, "maxsplit", &ms, st);
}

static const dfx_kernel_def kernels[] = {
    {"StringSplit", NULL, split_kernel, 0},
    {"StringSplitV2", NULL, split_v2_kernel, 0, split_v2_init},
    {NULL}};

void dfx__kernels_strings_split(dfx_registry *r);
void dfx__kernels_strings_split(dfx_registry *r) { dfx__kernels_add(r, kernels); }
