/* logging.c - Assert, Print, PrintV2 and Abort (TF logging_ops).
 * Values are summarised like TF's Tensor::SummarizeValue: nested brackets per
 * dimension, at most `summarize` elements, "..." when truncated. A message
 * stops at a byte bound whatever `summarize` says (-1 prints everything in
 * TF): LOG_MAX_BYTES for Print, the status size for Assert's error, so a
 * huge tensor costs neither that much memory nor that much work. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "misc.h"

/* ---- bounded text buffer ---- */

#define LOG_MAX_BYTES ((size_t)1 << 20)

typedef struct sbuf {
  char *p;
  size_t n, cap, max; /* max: bytes kept; text past it is dropped */
  bool oom, full;     /* full: some text was dropped */
} sbuf;

static void sb_add(sbuf *b, const char *s, size_t len) {
  if (b->oom || b->full) return;
  /* Once a piece does not fit, later ones are dropped too: what is kept is a
   * prefix of the message, never one with a hole in it. */
  if (b->n + len > b->max) {
    b->full = true;
    return;
  }
  if (b->n + len + 1 > b->cap) {
    size_t nc = b->cap ? b->cap * 2 : 256;
    while (nc < b->n + len + 1) nc *= 2;
    char *np = dfx__realloc(b->p, nc);
    if (!np) {
      b->oom = true;
      return;
    }
    b->p = np;
    b->cap = nc;
  }
  memcpy(b->p + b->n, s, len);
  b->n += len;
  b->p[b->n] = 0;
}
static void sb_str(sbuf *b, const char *s) { sb_add(b, s, strlen(s)); }

/* TF's FloatToBuffer/DoubleToBuffer: shortest of %.6g/%.9g (%.15g/%.17g) that round-trips. */
static void fmt_float(char *buf, size_t n, double v, bool is_double) {
  if (isnan(v)) {
    snprintf(buf, n, "nan");
    return;
  }
  if (isinf(v)) {
    snprintf(buf, n, v < 0 ? "-inf" : "inf");
    return;
  }
  if (is_double) {
    snprintf(buf, n, "%.*g", DBL_DIG, v);
    if (strtod(buf, NULL) != v) snprintf(buf, n, "%.*g", DBL_DIG + 2, v);
  } else {
    snprintf(buf, n, "%.*g", FLT_DIG, v);
    if (strtof(buf, NULL) != (float)v) snprintf(buf, n, "%.*g", FLT_DIG + 3, v);
  }
}

/* TF's CEscape: the usual escapes, and octal for any other byte outside
 * printable ASCII. */
static void cescape(sbuf *b, const dfx_str *s) {
  for (size_t i = 0; i < s->len; i++) {
    unsigned char c = (unsigned char)s->ptr[i];
    char tmp[8];
    switch (c) {
      case '\n': sb_str(b, "\\n"); break;
      case '\r': sb_str(b, "\\r"); break;
      case '\t': sb_str(b, "\\t"); break;
      case '\"': sb_str(b, "\\\""); break;
      case '\'': sb_str(b, "\\'"); break;
      case '\\': sb_str(b, "\\\\"); break;
      default:
        if (c < 0x20 || c >= 0x7f) {
          snprintf(tmp, sizeof tmp, "\\%03o", c);
          sb_str(b, tmp);
        } else {
          sb_add(b, (const char *)&c, 1);
        }
    }
  }
}

static void print_elem(sbuf *b, const dfx_tensor *t, int64_t i) {
  char tmp[96];
  switch ((dfx_dtype)t->dtype) {
    case DFX_STRING: cescape(b, &((const dfx_str *)t->data)[i]); return;
    case DFX_F32: fmt_float(tmp, sizeof tmp, ((const float *)t->data)[i], false); break;
    case DFX_F64: fmt_float(tmp, sizeof tmp, ((const double *)t->data)[i], true); break;
    case DFX_F16: fmt_float(tmp, sizeof tmp, dfx__f16_to_f32(((const uint16_t *)t->data)[i]), false); break;
    case DFX_BF16: fmt_float(tmp, sizeof tmp, dfx__bf16_to_f32(((const uint16_t *)t->data)[i]), false); break;
    case DFX_U64: snprintf(tmp, sizeof tmp, "%llu", (unsigned long long)((const uint64_t *)t->data)[i]); break;
    case DFX_C64: {
      dfx_c64 c = ((const dfx_c64 *)t->data)[i];
      char re[32], im[32];
      fmt_float(re, sizeof re, c.re, false);
      fmt_float(im, sizeof im, c.im, false);
      snprintf(tmp, sizeof tmp, "(%s,%s)", re, im);
      break;
    }
    case DFX_C128: {
      dfx_c128 c = ((const dfx_c128 *)t->data)[i];
      char re[32], im[32];
      fmt_float(re, sizeof re, c.re, true);
      fmt_float(im, sizeof im, c.im, true);
      snprintf(tmp, sizeof tmp, "(%s,%s)", re, im);
      break;
    }
    default: snprintf(tmp, sizeof tmp, "%lld", (long long)dfx__tensor_get_i64(t, i)); break;
  }
  sb_str(b, tmp);
}

/* TF's PrintOneDim, stopping once the limit is reached or the buffer is full. */
static void print_dim(sbuf *b, const dfx_tensor *t, int d, int64_t limit, int64_t *idx) {
  if (*idx >= limit || b->full) return;
  int64_t n = t->dims[d];
  if (d == t->ndims - 1) {
    for (int64_t i = 0; i < n && !b->full; i++) {
      if (*idx >= limit) {
        if (d != 0) sb_str(b, "...");
        return;
      }
      if (i > 0) sb_str(b, " ");
      print_elem(b, t, (*idx)++);
    }
    return;
  }
  for (int64_t i = 0; i < n; i++) {
    bool open = false;
    if (*idx < limit) {
      sb_str(b, "[");
      open = true;
    }
    print_dim(b, t, d + 1, limit, idx);
    if (*idx < limit || open) sb_str(b, "]");
    if (!open || b->full) return; /* what is left prints nothing */
  }
}

static void summarize(sbuf *b, const dfx_tensor *t, int64_t max_entries) {
  /* summarize = -1 prints every element in TF; the byte bound still holds. */
  if (max_entries < 0) max_entries = t->count;
  int64_t limit = max_entries < t->count ? max_entries : t->count;
  if (t->ndims == 0) {
    for (int64_t i = 0; i < limit && !b->full; i++) {
      if (i > 0) sb_str(b, " ");
      print_elem(b, t, i);
    }
  } else {
    int64_t idx = 0;
    print_dim(b, t, 0, limit, &idx);
  }
  if (t->count > limit) sb_str(b, "...");
}

/* The summaries of inputs first.. as "[a][b]" (sep between them); "..." ends
 * a cut message. */
static void summarize_inputs(sbuf *b, dfx_kctx *ctx, int first, const char *sep) {
  int64_t sum = dfx__attr_int(ctx->node, "summarize", 3);
  for (int i = first; i < ctx->n_in && !b->full; i++) {
    if (i > first) sb_str(b, sep);
    sb_str(b, "[");
    summarize(b, ctx->in[i], sum);
    sb_str(b, "]");
  }
  if (b->full) { /* room for the mark past the bound */
    b->full = false;
    b->max += 3;
    sb_str(b, "...");
  }
}

/* ---- kernels ---- */

static dfx_code assert_kernel(dfx_kctx *ctx) {
  const dfx_tensor *c = ctx->in[0];
  if (c->count != 1 || c->ndims > 1) {
    char s[64];
    return dfx__kctx_fail(ctx, DFX_EINVAL, "In[0] should be a scalar: %s", DFX_SHAPE_STR(c, s));
  }
  /* The summary is built only on failure: a passing Assert costs nothing. */
  if (((const uint8_t *)c->data)[0]) return DFX_OK;
  /* The message goes into the status, so it is bounded by the status buffer
   * (less room for the "..." mark). */
  sbuf b = {.max = DFX_STATUS_MSG_MAX - 4};
  sb_str(&b, "assertion failed: ");
  summarize_inputs(&b, ctx, 1, " ");
  dfx_code r = b.oom ? dfx__kctx_fail(ctx, DFX_EINVAL, "assertion failed")
                     : dfx__kctx_fail(ctx, DFX_EINVAL, "%s", b.p);
  dfx__free(b.p);
  return r;
}

/* Print keeps a per-node call counter for first_n. */
typedef struct print_state {
  /* Atomic: one node's kernel can run on several threads at once (parallel
   * iterations, concurrent runs), and first_n must count every call once. */
  int64_t calls; /* atomic */
} print_state;

static dfx_code print_init(const dfx_node *n, void **state, dfx_status *st) {
  (void)n;
  (void)st;
  *state = dfx__calloc(1, sizeof(print_state));
  return *state ? DFX_OK : DFX_ENOMEM;
}

static void print_fini(void *state) { dfx__free(state); }

static dfx_code print_kernel(dfx_kctx *ctx) {
  /* Print is an identity on its first input; printing is the side effect. */
  dfx__kctx_forward(ctx, 0, 0);
  print_state *ps = ctx->state;
  int64_t first_n = dfx__attr_int(ctx->node, "first_n", -1);
  if (first_n >= 0 && ps) {
    int64_t k = __atomic_fetch_add(&ps->calls, 1, __ATOMIC_RELAXED);
    if (k >= first_n) return DFX_OK;
  }
  sbuf b = {.max = LOG_MAX_BYTES};
  sb_str(&b, dfx__attr_str(ctx->node, "message", ""));
  summarize_inputs(&b, ctx, 1, "");
  if (!b.oom && b.p) fprintf(stderr, "%s\n", b.p);
  dfx__free(b.p);
  return DFX_OK;
}

/* TF's constructor accepts these streams (and file:// paths, which a library
 * has no business opening); the state is the FILE to write to. */
static dfx_code print_v2_init(const dfx_node *n, void **state, dfx_status *st) {
  static const char *const out[] = {"stdout", "log(info)"}, *const err[] = {"stderr", "log(warning)", "log(error)"};
  const char *stream = dfx__attr_str(n, "output_stream", "stderr");
  FILE *f = NULL;
  for (int i = 0; i < 2; i++)
    if (strcmp(stream, out[i]) == 0) f = stdout;
  for (int i = 0; i < 3; i++)
    if (strcmp(stream, err[i]) == 0) f = stderr;
  *state = f;
  if (f) return DFX_OK;
  if (strncmp(stream, "file://", 7) == 0)
    return dfx__status_set(st, DFX_EUNIMPL, "output_stream '%s': printing to files is not supported", stream);
  return dfx__status_set(st, DFX_EINVAL, "output_stream '%s' is not a valid output stream (stdout, stderr, log(info), "
                         "log(warning), log(error))", stream);
}

static dfx_code print_v2_kernel(dfx_kctx *ctx) {
  const dfx_tensor *t = ctx->in[0];
  if (t->ndims != 0)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Input is expected to be scalar, but got rank %d", t->ndims);
  FILE *f = ctx->state;
  const dfx_str *s = t->data;
  if (s->len) fwrite(s->ptr, 1, s->len, f);
  fputs(dfx__attr_str(ctx->node, "end", "\n"), f);
  /* Flushed per call, so the text interleaves in order with the caller's
   * own output. */
  fflush(f);
  return DFX_OK;
}

/* TF's Abort kills the process; a library must not, so it fails the run instead. */
static dfx_code abort_kernel(dfx_kctx *ctx) {
  /* exit_without_error ends the run as cancelled rather than failed. */
  if (dfx__attr_bool(ctx->node, "exit_without_error", false))
    return dfx__kctx_fail(ctx, DFX_ECANCELED, "Abort op requested exit without error");
  return dfx__kctx_fail(ctx, DFX_EINTERNAL, "Abort_op intentional failure; %s",
                        dfx__attr_str(ctx->node, "error_msg", ""));
}


/* Printed values: every dtype print_elem formats (handles and variants are
 * opaque to it); Print's T is only forwarded. PrintV2 and Abort have no
 * type attrs. */
static const dfx_kernel_def kernels[] = {
    {"Assert", "T: " MISC_DATA_TYPES, assert_kernel, DFX_KERNEL_CHEAP | DFX_KERNEL_STATEFUL, NULL, NULL},
    {"Print", "T: " MISC_ANY_TYPES "; U: " MISC_DATA_TYPES, print_kernel, DFX_KERNEL_STATEFUL, print_init, print_fini},
    {"PrintV2", NULL, print_v2_kernel, DFX_KERNEL_STATEFUL, print_v2_init, NULL},
    {"Abort", NULL, abort_kernel, DFX_KERNEL_STATEFUL, NULL, NULL},
    {NULL}};

void dfx__kernels_misc_logging(dfx_registry *r);
void dfx__kernels_misc_logging(dfx_registry *r) { dfx__kernels_add(r, kernels); }
