/* feed.c - turns a --feed argument into a tensor of the dtype the fed port
 * produces. Owns the literal syntax (3, 2.5, true, "s", [[1,2],[3,4]]) and
 * the numpy-astype conversion used for literals and .npy files alike: the
 * source is read element by element as an integer, float or bool and then
 * written in the destination dtype. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "dtype.h"
#include "tensor.h"

/* ---- conversion ---- */

typedef struct num {
  enum { NUM_INT, NUM_UINT, NUM_FLOAT, NUM_BOOL } kind;
  int64_t i;
  uint64_t u;
  double f;
} num;

static num read_num(dfx_dtype t, const void *data, int64_t i) {
  num v = {.kind = NUM_INT};
  switch (t) {
#define INT_CASE(dt, ctype) \
  case dt: v.i = ((const ctype *)data)[i]; break;
    INT_CASE(DFX_I8, int8_t)
    INT_CASE(DFX_QI8, int8_t)
    INT_CASE(DFX_I16, int16_t)
    INT_CASE(DFX_QI16, int16_t)
    INT_CASE(DFX_I32, int32_t)
    INT_CASE(DFX_QI32, int32_t)
    INT_CASE(DFX_I64, int64_t)
    INT_CASE(DFX_U8, uint8_t)
    INT_CASE(DFX_QU8, uint8_t)
    INT_CASE(DFX_U16, uint16_t)
    INT_CASE(DFX_QU16, uint16_t)
    INT_CASE(DFX_U32, uint32_t)
#undef INT_CASE
  case DFX_U64: v.kind = NUM_UINT; v.u = ((const uint64_t *)data)[i]; break;
  case DFX_BOOL: v.kind = NUM_BOOL; v.i = ((const uint8_t *)data)[i] != 0; break;
  case DFX_F32: v.kind = NUM_FLOAT; v.f = ((const float *)data)[i]; break;
  case DFX_F64: v.kind = NUM_FLOAT; v.f = ((const double *)data)[i]; break;
  case DFX_F16: v.kind = NUM_FLOAT; v.f = dfx__f16_to_f32(((const uint16_t *)data)[i]); break;
  case DFX_BF16: v.kind = NUM_FLOAT; v.f = dfx__bf16_to_f32(((const uint16_t *)data)[i]); break;
  /* numpy drops the imaginary part when casting complex to real. */
  case DFX_C64: v.kind = NUM_FLOAT; v.f = ((const float *)data)[2 * i]; break;
  case DFX_C128: v.kind = NUM_FLOAT; v.f = ((const double *)data)[2 * i]; break;
  default: break;
  }
  return v;
}

static double num_f64(num v) {
  return v.kind == NUM_FLOAT ? v.f : v.kind == NUM_UINT ? (double)v.u : (double)v.i;
}

/* Integer destinations wrap like numpy for integer sources; a float source
 * must be finite and fit after truncation, since numpy's result would be
 * meaningless otherwise. */
static bool num_int(num v, double lo, double hi, int64_t *out, uint64_t *uout) {
  if (v.kind != NUM_FLOAT) {
    *out = v.kind == NUM_UINT ? (int64_t)v.u : v.i;
    *uout = v.kind == NUM_UINT ? v.u : (uint64_t)v.i;
    return true;
  }
  double t = trunc(v.f);
  if (!isfinite(t) || t < lo || t > hi) return false;
  if (t >= 9223372036854775808.0) {
    *uout = (uint64_t)t;
    *out = (int64_t)*uout;
  } else {
    *out = (int64_t)t;
    *uout = (uint64_t)*out;
  }
  return true;
}

static bool write_num(dfx_dtype t, void *data, int64_t i, num v) {
  int64_t x = 0;
  uint64_t ux = 0;
  switch (t) {
#define INT_CASE(dt, ctype, lo, hi)                    \
  case dt:                                             \
    if (!num_int(v, lo, hi, &x, &ux)) return false;    \
    ((ctype *)data)[i] = (ctype)ux;                    \
    return true;
    INT_CASE(DFX_I8, int8_t, -128.0, 127.0)
    INT_CASE(DFX_QI8, int8_t, -128.0, 127.0)
    INT_CASE(DFX_I16, int16_t, -32768.0, 32767.0)
    INT_CASE(DFX_QI16, int16_t, -32768.0, 32767.0)
    INT_CASE(DFX_I32, int32_t, -2147483648.0, 2147483647.0)
    INT_CASE(DFX_QI32, int32_t, -2147483648.0, 2147483647.0)
    INT_CASE(DFX_I64, int64_t, -9223372036854775808.0, 9223372036854774784.0)
    INT_CASE(DFX_U8, uint8_t, 0.0, 255.0)
    INT_CASE(DFX_QU8, uint8_t, 0.0, 255.0)
    INT_CASE(DFX_U16, uint16_t, 0.0, 65535.0)
    INT_CASE(DFX_QU16, uint16_t, 0.0, 65535.0)
    INT_CASE(DFX_U32, uint32_t, 0.0, 4294967295.0)
    INT_CASE(DFX_U64, uint64_t, 0.0, 18446744073709549568.0)
#undef INT_CASE
  case DFX_BOOL: ((uint8_t *)data)[i] = v.kind == NUM_FLOAT ? v.f != 0 : (v.i != 0 || v.u != 0); return true;
  case DFX_F32: ((float *)data)[i] = (float)num_f64(v); return true;
  case DFX_F64: ((double *)data)[i] = num_f64(v); return true;
  /* Half types go through float32, rounding to nearest even like TF. */
  case DFX_F16: ((uint16_t *)data)[i] = dfx__f32_to_f16((float)num_f64(v)); return true;
  case DFX_BF16: ((uint16_t *)data)[i] = dfx__f32_to_bf16((float)num_f64(v)); return true;
  case DFX_C64: ((float *)data)[2 * i] = (float)num_f64(v); ((float *)data)[2 * i + 1] = 0; return true;
  case DFX_C128: ((double *)data)[2 * i] = num_f64(v); ((double *)data)[2 * i + 1] = 0; return true;
  default: return false;
  }
}

static void num_str(num v, char *buf, size_t n) {
  if (v.kind == NUM_FLOAT) snprintf(buf, n, "%.17g", v.f);
  else if (v.kind == NUM_UINT) snprintf(buf, n, "%llu", (unsigned long long)v.u);
  else snprintf(buf, n, "%lld", (long long)v.i);
}

dfx_tensor *dfx__feed_convert(dfx_dtype src, const void *data, dfx_dtype dst, int ndims, const int64_t *dims,
                              char *err, size_t errn) {
  dfx_tensor *t = dfx_tensor_new(dst, dims, ndims);
  if (!t) {
    snprintf(err, errn, "cannot make a %s tensor of this shape (too large or out of memory)", dfx_dtype_name(dst));
    return NULL;
  }
  int64_t count = dfx_tensor_count(t);
  if ((src == DFX_STRING) != (dst == DFX_STRING)) {
    snprintf(err, errn, "cannot convert %s values to %s", dfx_dtype_name(src), dfx_dtype_name(dst));
    goto fail;
  }
  if (dst == DFX_STRING) {
    const dfx_str *s = data;
    for (int64_t i = 0; i < count; i++)
      if (dfx_tensor_set_string(t, i, s[i].ptr ? s[i].ptr : "", s[i].len) != DFX_OK) {
        snprintf(err, errn, "out of memory");
        goto fail;
      }
    return t;
  }
  if (dfx_dtype_size(dst) == 0 || (dfx_dtype_size(src) == 0)) {
    snprintf(err, errn, "cannot convert %s values to %s", dfx_dtype_name(src), dfx_dtype_name(dst));
    goto fail;
  }
  void *out = dfx_tensor_data(t);
  for (int64_t i = 0; i < count; i++) {
    num v = read_num(src, data, i);
    if (!write_num(dst, out, i, v)) {
      char vb[64];
      num_str(v, vb, sizeof vb);
      snprintf(err, errn, "value %s (element %lld) does not fit in %s", vb, (long long)i, dfx_dtype_name(dst));
      goto fail;
    }
  }
  return t;
fail:
  dfx_tensor_free(t);
  return NULL;
}

/* ---- literals ---- */

typedef struct lit {
  const char *p, *end;
  int rank;                   /* -1 until the first leaf fixes it */
  int64_t dims[DFX_MAX_DIMS];
  bool dim_set[DFX_MAX_DIMS];
  int64_t n, cap;
  dfx_dtype kind;             /* widest kind seen: BOOL < I64 < F64; or STRING */
  num *vals;
  dfx_str *strs;
  char err[256];
  bool ragged;                /* the failure is a bad shape (exit 1), not bad syntax (exit 2) */
} lit;

static void skip_ws(lit *L) {
  while (L->p < L->end && (*L->p == ' ' || *L->p == '\t' || *L->p == '\n')) L->p++;
}

static bool lit_fail(lit *L, const char *msg) {
  if (!L->err[0]) snprintf(L->err, sizeof L->err, "%s", msg);
  return false;
}

static bool push(lit *L, num v, dfx_str s) {
  if (L->n == L->cap) {
    int64_t nc = L->cap ? L->cap * 2 : 16;
    num *nv = realloc(L->vals, sizeof *nv * (size_t)nc);
    if (nv) L->vals = nv;
    dfx_str *ns = realloc(L->strs, sizeof *ns * (size_t)nc);
    if (ns) L->strs = ns;
    if (!nv || !ns) return lit_fail(L, "out of memory");
    L->cap = nc;
  }
  L->vals[L->n] = v;
  L->strs[L->n++] = s;
  return true;
}

static bool word(lit *L, const char *w) {
  size_t n = strlen(w);
  if ((size_t)(L->end - L->p) < n || memcmp(L->p, w, n) != 0) return false;
  const char *after = L->p + n;
  if (after < L->end && (after[0] == '_' || ((after[0] | 32) >= 'a' && (after[0] | 32) <= 'z'))) return false;
  L->p = after;
  return true;
}

static bool parse_string(lit *L) {
  char q = *L->p++;
  char *buf = malloc((size_t)(L->end - L->p) + 1);
  size_t n = 0;
  if (!buf) return lit_fail(L, "out of memory");
  while (L->p < L->end && *L->p != q) {
    char c = *L->p++;
    if (c == '\\' && L->p < L->end) {
      c = *L->p++;
      c = c == 'n' ? '\n' : c == 't' ? '\t' : c == '0' ? '\0' : c;
    }
    buf[n++] = c;
  }
  if (L->p >= L->end) {
    free(buf);
    return lit_fail(L, "unterminated string");
  }
  L->p++;
  if (L->kind != DFX_STRING && L->n > 0) {
    free(buf);
    return lit_fail(L, "strings and numbers cannot be mixed");
  }
  L->kind = DFX_STRING;
  num z = {.kind = NUM_INT};
  if (!push(L, z, (dfx_str){buf, n})) {
    free(buf);
    return false;
  }
  return true;
}

static bool parse_scalar(lit *L) {
  if (L->p < L->end && (*L->p == '"' || *L->p == '\'')) return parse_string(L);
  if (L->kind == DFX_STRING) return lit_fail(L, "strings and numbers cannot be mixed");
  num v = {.kind = NUM_BOOL};
  bool neg = L->p < L->end && *L->p == '-';
  const char *save = L->p;
  if (neg || (L->p < L->end && *L->p == '+')) L->p++;
  if (!neg && (word(L, "true") || word(L, "True"))) v.i = 1;
  else if (!neg && (word(L, "false") || word(L, "False"))) v.i = 0;
  else if (word(L, "nan") || word(L, "NaN")) v = (num){.kind = NUM_FLOAT, .f = NAN};
  else if (word(L, "inf") || word(L, "Infinity")) v = (num){.kind = NUM_FLOAT, .f = neg ? -INFINITY : INFINITY};
  else {
    L->p = save;
    char buf[128];
    size_t n = 0;
    bool is_float = false;
    while (L->p < L->end && n + 1 < sizeof buf && strchr("0123456789+-.eE", *L->p)) {
      if (strchr(".eE", *L->p)) is_float = true;
      buf[n++] = *L->p++;
    }
    buf[n] = 0;
    char *e;
    if (n == 0) return lit_fail(L, "expected a number, true, false, a string or '['");
    if (is_float) {
      v = (num){.kind = NUM_FLOAT, .f = strtod(buf, &e)};
    } else if (buf[0] != '-' && strtoull(buf, NULL, 10) > (unsigned long long)INT64_MAX) {
      v = (num){.kind = NUM_UINT, .u = strtoull(buf, &e, 10)};
    } else {
      v = (num){.kind = NUM_INT, .i = strtoll(buf, &e, 10)};
    }
    if (*e) return lit_fail(L, "malformed number");
  }
  dfx_dtype k = v.kind == NUM_FLOAT ? DFX_F64 : v.kind == NUM_BOOL ? DFX_BOOL : v.kind == NUM_UINT ? DFX_U64 : DFX_I64;
  /* numpy's promotion for a Python list: bool < int64 < uint64 < float64. */
  if (L->n == 0 || k == DFX_F64 || (k == DFX_U64 && L->kind != DFX_F64) || (k == DFX_I64 && L->kind == DFX_BOOL))
    L->kind = k;
  return push(L, v, (dfx_str){NULL, 0});
}

static bool parse_value(lit *L, int depth) {
  skip_ws(L);
  if (L->p >= L->end) return lit_fail(L, "unexpected end of literal");
  if (*L->p != '[') {
    if (L->rank >= 0 && L->rank != depth) return L->ragged = true, lit_fail(L, "ragged nesting: lists must be rectangular");
    L->rank = depth;
    return parse_scalar(L);
  }
  if (depth >= DFX_MAX_DIMS) return lit_fail(L, "too many nested lists");
  L->p++;
  int64_t count = 0;
  skip_ws(L);
  if (L->p < L->end && *L->p == ']') {
    L->p++;
    if (L->rank >= 0 && L->rank != depth + 1)
      return L->ragged = true, lit_fail(L, "ragged nesting: lists must be rectangular");
    L->rank = depth + 1;
  } else {
    for (;;) {
      if (!parse_value(L, depth + 1)) return false;
      count++;
      skip_ws(L);
      if (L->p < L->end && *L->p == ',') {
        L->p++;
        continue;
      }
      if (L->p < L->end && *L->p == ']') {
        L->p++;
        break;
      }
      return lit_fail(L, "expected ',' or ']'");
    }
  }
  if (L->dim_set[depth] && L->dims[depth] != count)
    return L->ragged = true, lit_fail(L, "ragged lists: sizes differ at one depth");
  L->dim_set[depth] = true;
  L->dims[depth] = count;
  return true;
}

/* Parses the literal and converts it to `dst` (DFX_INVALID: its own kind). */
static dfx_tensor *literal_tensor(const char *s, dfx_dtype dst, char *err, size_t errn, bool *usage) {
  lit L = {.p = s, .end = s + strlen(s), .rank = -1, .kind = DFX_F64};
  dfx_tensor *t = NULL;
  void *buf = NULL;
  *usage = true;
  if (!parse_value(&L, 0)) {
    *usage = !L.ragged;
    goto fail;
  }
  skip_ws(&L);
  if (L.p != L.end) {
    lit_fail(&L, "unexpected text after the value");
    goto fail;
  }
  if (L.n == 0) L.kind = DFX_F64; /* numpy's dtype for [] */
  if (dst == DFX_INVALID) dst = L.kind;
  *usage = false;
  if (L.kind == DFX_STRING) {
    t = dfx__feed_convert(DFX_STRING, L.strs, dst, L.rank, L.dims, L.err, sizeof L.err);
  } else {
    /* Store the values in the literal's own kind, then convert once. */
    size_t es = dfx_dtype_size(L.kind);
    if (!(buf = calloc((size_t)L.n + 1, es))) {
      lit_fail(&L, "out of memory");
      goto fail;
    }
    for (int64_t i = 0; i < L.n; i++) write_num(L.kind, buf, i, L.vals[i]);
    t = dfx__feed_convert(L.kind, buf, dst, L.rank, L.dims, L.err, sizeof L.err);
  }
fail:
  if (!t) snprintf(err, errn, "%s", L.err);
  for (int64_t i = 0; i < L.n && L.strs; i++) free(L.strs[i].ptr);
  free(L.vals);
  free(L.strs);
  free(buf);
  return t;
}

/* ---- the --feed argument ---- */

static bool shape_ok(const dfx_shape *sh, const dfx_tensor *t) {
  if (!sh || sh->rank < 0) return true;
  if (sh->rank != dfx_tensor_ndims(t)) return false;
  for (int d = 0; d < sh->rank; d++)
    if (sh->dims[d] >= 0 && sh->dims[d] != dfx_tensor_dim(t, d)) return false;
  return true;
}

int dfx__feed_parse(const dfx_graph *g, const char *arg, dfx_cli_port *port, dfx_tensor **val) {
  char err[512] = "";
  *val = NULL;
  const char *eq = strchr(arg, '=');
  if (!eq || !dfx__port_parse(arg, (size_t)(eq - arg), port))
    return dfx__cli_usage("run", "--feed '%s': expected NAME[:K]=@FILE.npy or NAME[:K]=LITERAL", arg);
  int id = dfx__graph_find(g, port->node, (size_t)-1);
  if (id < 0) {
    char hint[DFX_SUGGEST_MAX];
    dfx__cli_error("--feed: no node named '%s' in the graph%s", port->node,
                   dfx__graph_suggest(g, port->node, hint, sizeof hint));
    return DFX_EXIT_ERROR;
  }
  const dfx_node *n = &g->nodes[id];
  if (port->index >= n->n_out) {
    dfx__cli_error("--feed: node '%s' (%s) has %d output%s; '%s:%d' does not exist", n->name, n->op, n->n_out,
                   n->n_out == 1 ? "" : "s", n->name, port->index);
    return DFX_EXIT_ERROR;
  }
  dfx_dtype want = n->out_types[port->index];
  const char *v = eq + 1;
  if (v[0] == '@') {
    dfx_dtype dt;
    int nd;
    int64_t dims[DFX_MAX_DIMS];
    void *data;
    if (!dfx__npy_read(v + 1, &dt, &nd, dims, &data, err, sizeof err)) {
      dfx__cli_error("--feed %s: %s", port->node, err);
      return DFX_EXIT_ERROR;
    }
    *val = dfx__feed_convert(dt, data, want == DFX_INVALID ? dt : want, nd, dims, err, sizeof err);
    dfx__npy_free_data(dt, data, dfx__shape_count(nd, dims));
    if (!*val) {
      dfx__cli_error("--feed %s: %s: %s", port->node, v + 1, err);
      return DFX_EXIT_ERROR;
    }
  } else {
    bool usage;
    if (!(*val = literal_tensor(v, want, err, sizeof err, &usage))) {
      /* A literal that does not parse is a usage error (2); one that parses
       * to a bad shape (ragged lists) is an input error (1), exactly like a
       * rectangular value of the wrong shape. */
      if (usage) return dfx__cli_usage("run", "--feed %s: bad literal '%s': %s", port->node, v, err);
      dfx__cli_error("--feed %s: %s", port->node, err);
      return DFX_EXIT_ERROR;
    }
  }
  const dfx_shape *sh = strncmp(n->op, "Placeholder", 11) == 0 ? dfx__attr_shape(n, "shape") : NULL;
  if (!shape_ok(sh, *val)) {
    char a[128], b[128];
    dfx__cli_error("--feed %s: value has shape %s but placeholder '%s' has shape %s", port->node,
                   dfx__shape_str((*val)->ndims, (*val)->dims, a, sizeof a), n->name,
                   dfx__shape_attr_str(sh, b, sizeof b));
    dfx_tensor_free(*val);
    *val = NULL;
    return DFX_EXIT_ERROR;
  }
  return DFX_EXIT_OK;
}
