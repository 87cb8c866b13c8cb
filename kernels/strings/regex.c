/* regex.c - StaticRegexReplace (pattern and rewrite attrs, compiled once
 * per node) and RegexReplace (scalar pattern and rewrite inputs, compiled
 * per call), with RE2 as TensorFlow uses it: RE2::GlobalReplace when
 * replace_global, else RE2::Replace of the first match; \0..\9 in the
 * rewrite name groups, and a rewrite naming a group the pattern lacks
 * leaves the string unchanged. Before each string is rewritten its largest
 * possible result (each match adds the rewrite's literal bytes plus, per
 * group reference, at most the input's length) is counted against the
 * tensor byte limit, since RE2 builds the result without a bound. */
#include <stdio.h>

#include "alloc.h"
#include "re2_shim.h"
#include "sutil.h"

typedef struct rx_state {
  dfx_re2 *re;
  dfx_str rewrite;
} rx_state;

static void rx_fini(void *state) {
  rx_state *s = state;
  if (!s) return;
  dfx__re2_free(s->re);
  dfx__free(s);
}

static dfx_code rx_init(const dfx_node *n, void **state, dfx_status *st) {
  dfx_str pat = dfx__s_attr_bytes(n, "pattern");
  char err[512];
  dfx_re2 *re = dfx__re2_new(pat.ptr, pat.len, err, sizeof err);
  if (!re)
    return dfx__status_set(st, DFX_EINVAL, "Invalid pattern: %.*s, error: %s", (int)(pat.len > 1000 ? 1000 : pat.len),
                           pat.ptr ? pat.ptr : "", err);
  rx_state *s = dfx__calloc(1, sizeof *s);
  if (!s) {
    dfx__re2_free(re);
    return dfx__status_set(st, DFX_ENOMEM, "out of memory");
  }
  s->re = re;
  s->rewrite = dfx__s_attr_bytes(n, "rewrite");
  *state = s;
  return DFX_OK;
}

/* The largest output RE2 can make from `len` input bytes (saturating). */
static size_t bound(size_t len, dfx_str rw, bool global) {
  size_t lit = 0, refs = 0;
  for (size_t i = 0; i < rw.len; i++) {
    if (rw.ptr[i] == '\\' && i + 1 < rw.len && rw.ptr[i + 1] >= '0' && rw.ptr[i + 1] <= '9') refs++, i++;
    else lit++;
  }
  size_t matches = global ? len + 1 : 1, r = len, t;
  if (__builtin_mul_overflow(matches, lit, &t) || __builtin_add_overflow(r, t, &r) ||
      __builtin_mul_overflow(refs, len, &t) || __builtin_add_overflow(r, t, &r))
    return SIZE_MAX;
  return r;
}

static dfx_code replace_all(dfx_kctx *ctx, const dfx_re2 *re, dfx_str rw) {
  const dfx_tensor *x = ctx->in[0];
  bool global = dfx__attr_bool(ctx->node, "replace_global", true);
  dfx_tensor *out = dfx__kctx_alloc(ctx, 0, DFX_STRING, x->ndims, x->dims);
  if (!out) return ctx->st->code;
  const dfx_str *in = x->data;
  dfx_str *o = out->data;
  size_t total = 0;
  int64_t work = 0;
  for (int64_t k = 0; k < x->count; k++) {
    dfx_code c = dfx__s_budget(ctx, &total, bound(in[k].len, rw, global), "RegexReplace");
    if (c) return c;
    char *res = NULL;
    size_t rlen = 0;
    int r = dfx__re2_replace(re, in[k].ptr, in[k].len, rw.ptr, rw.len, global, &res, &rlen);
    if (r < 0) return dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory in RegexReplace");
    if (r > 0) {
      o[k].ptr = res;
      o[k].len = rlen;
    } else if (!dfx__s_set(&o[k], in[k].ptr, in[k].len)) {
      return dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory in RegexReplace");
    }
    int64_t before = work;
    work += (int64_t)in[k].len + 1;
    if ((before >> 20) != (work >> 20) && (c = dfx__kctx_poll(ctx))) return c;
  }
  return DFX_OK;
}

static dfx_code static_regex_kernel(dfx_kctx *ctx) {
  const rx_state *s = ctx->state;
  return replace_all(ctx, s->re, s->rewrite);
}

static dfx_code regex_kernel(dfx_kctx *ctx) {
  const dfx_tensor *pt = ctx->in[1], *rt = ctx->in[2];
  char b[128], err[512];
  if (pt->ndims != 0)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Pattern must be scalar, but received %s", DFX_SHAPE_STR(pt, b));
  const dfx_str *pat = pt->data;
  dfx_re2 *re = dfx__re2_new(pat->ptr, pat->len, err, sizeof err);
  if (!re)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Invalid pattern: %.*s, error: %s", (int)(pat->len > 1000 ? 1000 : pat->len),
                          pat->ptr ? pat->ptr : "", err);
  dfx_code c = rt->ndims != 0 ? dfx__kctx_fail(ctx, DFX_EINVAL, "Rewrite must be scalar, but received %s",
                                               DFX_SHAPE_STR(rt, b))
                              : replace_all(ctx, re, *(const dfx_str *)rt->data);
  dfx__re2_free(re);
  return c;
}

static const dfx_kernel_def kernels[] = {
    {"StaticRegexReplace", NULL, static_regex_kernel, 0, rx_init, rx_fini},
    {"RegexReplace", NULL, regex_kernel, 0},
    {NULL}};

void dfx__kernels_strings_regex(dfx_registry *r);
void dfx__kernels_strings_regex(dfx_registry *r) { dfx__kernels_add(r, kernels); }
