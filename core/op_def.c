/* op_def.c - parser for the signature notation described in op_def.h.
 * Errors here are bugs in a table (hand-written or generated) and come back
 * as DFX_EINTERNAL naming the op. All parse state lives in a cursor on the
 * caller's stack, so parsing is re-entrant and needs no lock. */
#include "op_def.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "dtype.h"
#include "status.h"

typedef struct {
  const char *p;   /* next character */
  const char *op;  /* for messages */
  dfx_status *st;  /* may be NULL */
  dfx_code code;   /* the first failure, kept apart from st so it survives st == NULL */
} cursor;

static void skip_ws(cursor *c) {
  while (*c->p && isspace((unsigned char)*c->p)) c->p++;
}

/* Only the first failure is recorded: later ones are knock-on effects of a
 * cursor left mid-token. "%.20s" shows where the parser stopped. */
static int fail(cursor *c, const char *what) {
  if (c->code == DFX_OK)
    c->code = dfx__status_set(c->st, DFX_EINTERNAL, "op signature of %s: %s near \"%.20s\"", c->op, what, c->p);
  return -1;
}

static int oom(cursor *c) {
  if (c->code == DFX_OK) c->code = dfx__status_set(c->st, DFX_ENOMEM, "out of memory parsing the signature of %s", c->op);
  return -1;
}

/* Consumes `s` (after blanks) when the text continues with it. */
static bool accept(cursor *c, const char *s) {
  skip_ws(c);
  size_t n = strlen(s);
  if (strncmp(c->p, s, n) != 0) return false;
  c->p += n;
  return true;
}

static int expect_str(cursor *c, const char *s) { return accept(c, s) ? 0 : fail(c, "unexpected text"); }

static int expect(cursor *c, char ch) {
  char s[2] = {ch, 0};
  return expect_str(c, s);
}

/* Reads an identifier ([A-Za-z0-9_]+) into buf; most words (dtypes, kinds,
 * attr references) are only compared, so they need no allocation. */
static int word(cursor *c, char *buf, size_t cap) {
  skip_ws(c);
  const char *s = c->p;
  while (isalnum((unsigned char)*c->p) || *c->p == '_') c->p++;
  size_t n = (size_t)(c->p - s);
  if (n == 0 || n >= cap) return fail(c, "expected a name");
  memcpy(buf, s, n);
  buf[n] = 0;
  return 0;
}

static char *dup_word(cursor *c, const char *w) {
  char *r = dfx__strdup(w);
  if (!r) oom(c);
  return r;
}

/* Reads an identifier into a new string. */
static char *ident(cursor *c) {
  char buf[128];
  return word(c, buf, sizeof buf) ? NULL : dup_word(c, buf);
}

/* Reads a dtype name ("float", "int32", "DT_HALF", ...). */
static int dtype_word(cursor *c, dfx_dtype *t) {
  char w[32];
  if (word(c, w, sizeof w)) return -1;
  *t = dfx__dtype_parse(w);
  return *t == DFX_INVALID ? fail(c, "unknown dtype") : 0;
}

/* ---- arguments ---- */

static void free_arg(dfx_op_arg *a) {
  dfx__free(a->name);
  dfx__free(a->type_attr);
  dfx__free(a->number_attr);
  dfx__free(a->type_list_attr);
}

/* One argument "name: [N *] [Ref(]word[)]". The attrs are parsed first, so
 * the word resolves at once: a type attr, a list(type) attr or a dtype. */
static int parse_arg(cursor *c, const dfx_op_def *d, dfx_op_arg *a) {
  memset(a, 0, sizeof *a);
  char w[128];
  if (!(a->name = ident(c)) || expect(c, ':') || word(c, w, sizeof w)) return -1;
  /* "N * T": N must be an int attr, and the repeated word follows the star. */
  if (accept(c, "*")) {
    const dfx_op_attr *num = dfx__op_def_attr(d, w);
    if (!num || num->kind != DFX_ATTR_I) return fail(c, "number attr is not an int attr");
    if (!(a->number_attr = dup_word(c, w)) || word(c, w, sizeof w)) return -1;
  }
  if (strcmp(w, "Ref") == 0) {
    a->is_ref = true;
    if (expect(c, '(') || word(c, w, sizeof w) || expect(c, ')')) return -1;
  }
  const dfx_op_attr *at = dfx__op_def_attr(d, w);
  if (at && at->kind == DFX_ATTR_TYPE) return (a->type_attr = dup_word(c, w)) ? 0 : -1;
  /* TF's ArgDef never combines number_attr with type_list_attr, so "N * L"
   * with L a list(type) attr falls through and fails as an unknown dtype. */
  if (at && at->kind == DFX_ATTR_LIST && at->elem == DFX_ATTR_TYPE && !a->number_attr)
    return (a->type_list_attr = dup_word(c, w)) ? 0 : -1;
  a->type = dfx__dtype_parse(w);
  return a->type == DFX_INVALID ? fail(c, "argument type is neither a dtype nor a type attr") : 0;
}

static int parse_args(cursor *c, const dfx_op_def *d, const char *end, dfx_op_arg **out, int *n) {
  *out = NULL;
  *n = 0;
  skip_ws(c);
  int cap = 0;
  while (c->p < end) {
    if (*n == cap) {
      cap = cap ? cap * 2 : 4;
      dfx_op_arg *na = dfx__realloc(*out, sizeof **out * (size_t)cap);
      if (!na) return oom(c);
      *out = na;
    }
    int r = parse_arg(c, d, &(*out)[*n]);
    /* parse_arg zeroed the slot first, so free_arg on it is safe. */
    (*n)++; /* counted even when half-built, so the caller frees its strings */
    if (r) return -1;
    accept(c, ",");
    skip_ws(c);
  }
  return 0;
}

/* ---- values: numbers, strings, shapes, tensors, lists ---- */

/* Copies the next number-like token (digits, sign, '.', letters for
 * exponents, inf and nan) into buf. */
static int token(cursor *c, char *buf, size_t cap) {
  skip_ws(c);
  const char *s = c->p;
  while (isalnum((unsigned char)*c->p) || *c->p == '-' || *c->p == '+' || *c->p == '.') c->p++;
  size_t len = (size_t)(c->p - s);
  if (len == 0 || len >= cap) return fail(c, "expected a number");
  memcpy(buf, s, len);
  buf[len] = 0;
  return 0;
}

static int parse_int(cursor *c, int64_t *v) {
  char buf[32], *e;
  if (token(c, buf, sizeof buf)) return -1;
  errno = 0;
  *v = strtoll(buf, &e, 10);
  /* errno catches ERANGE: a value beyond int64 is an error, not a clamp. */
  return *e || errno ? fail(c, "bad integer") : 0;
}

/* strtod reads "inf", "-inf", "nan" and exponents ("1e-05") as TF writes them. */
static int parse_double(cursor *c, double *v) {
  char buf[64], *e;
  if (token(c, buf, sizeof buf)) return -1;
  *v = strtod(buf, &e);
  return *e ? fail(c, "bad float") : 0;
}

/* 'text' with the escapes \\ \' \n \t \r \xHH into a new NUL-terminated dfx_str. */
static int parse_quoted(cursor *c, dfx_str *out) {
  if (expect(c, '\'')) return -1;
  const char *s = c->p;
  /* First find the closing quote, stepping over escapes so \' does not end the
   * string. Escapes only shrink the text, so raw + 1 bytes hold the result. */
  while (*c->p && *c->p != '\'') c->p += c->p[0] == '\\' && c->p[1] ? 2 : 1;
  if (!*c->p) return fail(c, "unterminated string");
  size_t raw = (size_t)(c->p - s);
  char *buf = dfx__malloc(raw + 1);
  if (!buf) return oom(c);
  size_t n = 0;
  for (const char *q = s; q < c->p; q++) {
    if (*q != '\\') {
      buf[n++] = *q;
      continue;
    }
    switch (*++q) {
      case '\\':
      case '\'': buf[n++] = *q; break;
      case 'n': buf[n++] = '\n'; break;
      case 't': buf[n++] = '\t'; break;
      case 'r': buf[n++] = '\r'; break;
      case 'x':
        if (isxdigit((unsigned char)q[1]) && isxdigit((unsigned char)q[2])) {
          char hex[3] = {q[1], q[2], 0};
          buf[n++] = (char)strtol(hex, NULL, 16);
          q += 2;
          break;
        }
        /* fall through */
      default:
        dfx__free(buf);
        return fail(c, "unknown escape in string");
    }
  }
  buf[n] = 0;
  c->p++;
  out->ptr = buf;
  out->len = n;
  return 0;
}

/* "unknown" (unknown rank) or "[d, ...]" with d >= -1 (-1: unknown dim). */
static int parse_shape(cursor *c, dfx_shape *sh) {
  sh->rank = 0;
  sh->dims = NULL;
  if (accept(c, "unknown")) {
    sh->rank = -1;
    return 0;
  }
  if (expect(c, '[')) return -1;
  int64_t dims[DFX_MAX_DIMS];
  while (!accept(c, "]")) {
    /* The bound protects the stack array, and no tensor can have more dims. */
    if (sh->rank == DFX_MAX_DIMS) return fail(c, "shape too long");
    if (parse_int(c, &dims[sh->rank])) return -1;
    if (dims[sh->rank++] < -1) return fail(c, "dimension below -1");
    accept(c, ",");
  }
  if (sh->rank) {
    if (!(sh->dims = dfx__malloc(sizeof(int64_t) * (size_t)sh->rank))) return oom(c);
    memcpy(sh->dims, dims, sizeof(int64_t) * (size_t)sh->rank);
  }
  return 0;
}

/* Stores one element of a tensor default; integer dtypes take the integer
 * spelling so int64 values keep all their bits. */
static int tensor_put(dfx_tensor *t, int64_t i, const char *text) {
  char *e;
  int64_t iv = strtoll(text, &e, 10);
  bool is_int = !*e, is_float = t->dtype == DFX_F32 || t->dtype == DFX_F64;
  double fv = is_int ? (double)iv : strtod(text, &e);
  if (*e || (!is_int && !is_float)) return -1;
#define PUT(dt, ctype, v) \
  case dt: ((ctype *)t->data)[i] = (ctype)(v); return 0;
  switch ((dfx_dtype)t->dtype) {
    PUT(DFX_I8, int8_t, iv) PUT(DFX_I16, int16_t, iv) PUT(DFX_I32, int32_t, iv) PUT(DFX_I64, int64_t, iv)
    PUT(DFX_U8, uint8_t, iv) PUT(DFX_U16, uint16_t, iv) PUT(DFX_U32, uint32_t, iv) PUT(DFX_U64, uint64_t, iv)
    PUT(DFX_F32, float, fv) PUT(DFX_F64, double, fv)
    case DFX_BOOL: ((bool *)t->data)[i] = iv != 0; return 0;
    default: return -1;
  }
#undef PUT
}

/* tensor(dtype, shape, v, ...): values fill the tensor in row-major order and
 * the last one repeats, TF's TensorProto rule; no values means zeros. */
static int parse_tensor(cursor *c, dfx_tensor **out) {
  *out = NULL;
  dfx_dtype t;
  dfx_shape sh = {0};
  if (expect_str(c, "tensor(") || dtype_word(c, &t) || expect(c, ',') || parse_shape(c, &sh)) goto fail;
  dfx_code code = DFX_OK;
  /* A tensor needs a known shape; zeros are the fill when no value is given. */
  if (sh.rank < 0 || !(*out = dfx__tensor_zeros(t, sh.rank, sh.dims, &code))) {
    if (code == DFX_ENOMEM) oom(c);
    else fail(c, "bad tensor shape or dtype");
    goto fail;
  }
  char buf[64] = "";
  int64_t k = 0;
  for (; accept(c, ","); k++)
    if (k >= (*out)->count || token(c, buf, sizeof buf) || tensor_put(*out, k, buf)) {
      fail(c, "bad tensor value");
      goto fail;
    }
  /* buf still holds the last value's text: writing it into the remaining
   * elements is TF's last-value-repeats rule. It parsed once, so it cannot
   * fail now. */
  for (; k > 0 && k < (*out)->count; k++) tensor_put(*out, k, buf);
  if (expect(c, ')')) goto fail;
  dfx__free(sh.dims);
  return 0;
fail:
  dfx__free(sh.dims);
  dfx__tensor_unref(*out);
  *out = NULL;
  return -1;
}

/* One value of a scalar kind into v (v->kind set even on failure, so
 * dfx__attr_clear frees what was built). */
static int parse_value(cursor *c, dfx_attr_kind kind, dfx_attr *v) {
  v->kind = kind;
  double d;
  switch (kind) {
    case DFX_ATTR_S: return parse_quoted(c, &v->v.s);
    case DFX_ATTR_I: return parse_int(c, &v->v.i);
    case DFX_ATTR_F:
      if (parse_double(c, &d)) return -1;
      /* A float attr is 32-bit in TF's AttrValue; the text is read as double and
       * rounded once. */
      v->v.f = (float)d;
      return 0;
    case DFX_ATTR_B:
      if (accept(c, "true")) v->v.b = true;
      else if (accept(c, "false")) v->v.b = false;
      else return fail(c, "expected true or false");
      return 0;
    case DFX_ATTR_TYPE: return dtype_word(c, &v->v.type);
    case DFX_ATTR_SHAPE: return parse_shape(c, &v->v.shape);
    case DFX_ATTR_TENSOR: return parse_tensor(c, &v->v.tensor);
    default: return fail(c, "no default possible for this attr kind");
  }
}

/* Appends item to list l (an empty list takes the item's kind) and takes its
 * contents; the union members all start at item->v, so one memcpy moves any. */
static int list_push(cursor *c, dfx_attr_list *l, dfx_attr *item) {
  size_t esz = dfx__attr_elem_size(item->kind);
  void *nv = dfx__realloc(l->v.i, esz * (size_t)(l->n + 1));
  if (!nv) {
    dfx__attr_clear(item);
    return oom(c);
  }
  l->v.i = nv;
  l->kind = item->kind;
  /* Moved, not copied: the list owns item's buffers now, and the caller must
   * not clear item. */
  memcpy((char *)nv + esz * (size_t)l->n++, &item->v, esz);
  return 0;
}

/* "[v, ...]" of element kind `elem` into v, a DFX_ATTR_LIST. */
static int parse_list(cursor *c, dfx_attr_kind elem, dfx_attr *v) {
  v->kind = DFX_ATTR_LIST;
  if (expect(c, '[')) return -1;
  while (!accept(c, "]")) {
    dfx_attr item = {0};
    if (parse_value(c, elem, &item)) {
      dfx__attr_clear(&item);
      return -1;
    }
    if (list_push(c, &v->v.list, &item)) return -1;
    accept(c, ",");
  }
  return 0;
}

/* ---- attrs ---- */

/* "{float, int32}" into a->allowed, or "{'SAME', 'VALID'}" into a->allowed_s;
 * returns the element kind (TYPE or S), or DFX_ATTR_NONE after an error. */
static dfx_attr_kind parse_set(cursor *c, dfx_op_attr *a) {
  if (expect(c, '{')) return DFX_ATTR_NONE;
  skip_ws(c);
  bool strings = *c->p == '\'';
  if (strings) a->allowed_s.kind = DFX_ATTR_LIST;
  do {
    if (strings) {
      dfx_attr item = {.kind = DFX_ATTR_S};
      if (parse_quoted(c, &item.v.s) || list_push(c, &a->allowed_s.v.list, &item)) return DFX_ATTR_NONE;
    } else {
      dfx_dtype t;
      if (dtype_word(c, &t)) return DFX_ATTR_NONE;
      /* A bit per dtype: every dtype value is below DFX_DTYPE_END_ (24), so a
       * uint32 holds the set. */
      a->allowed |= 1u << t;
    }
  } while (accept(c, ","));
  return expect(c, '}') ? DFX_ATTR_NONE : strings ? DFX_ATTR_S : DFX_ATTR_TYPE;
}

/* kind := scalar | list(scalar) | set | list(set); fills kind, elem and type. */
static int parse_kind(cursor *c, dfx_op_attr *a) {
  bool list = accept(c, "list(");
  dfx_attr_kind k = DFX_ATTR_NONE;
  skip_ws(c);
  if (*c->p == '{') {
    if ((k = parse_set(c, a)) == DFX_ATTR_NONE) return -1;
  } else {
    char w[16];
    if (word(c, w, sizeof w)) return -1;
    /* The kinds an attr may declare run from string to func (attr.h). */
    /* Matching kind names against attr.c's table keeps one spelling of each
     * kind for parsing and for messages. */
    for (dfx_attr_kind i = DFX_ATTR_S; i <= DFX_ATTR_FUNC; i++)
      if (strcmp(dfx__attr_kind_name(i), w) == 0) k = i;
    if (k == DFX_ATTR_NONE) return fail(c, "unknown attr type");
  }
  if (list && expect(c, ')')) return -1;
  a->kind = list ? DFX_ATTR_LIST : k;
  a->elem = list ? k : DFX_ATTR_NONE;
  static const char *const list_names[] = {
      [DFX_ATTR_S] = "list(string)", [DFX_ATTR_I] = "list(int)",       [DFX_ATTR_F] = "list(float)",
      [DFX_ATTR_B] = "list(bool)",   [DFX_ATTR_TYPE] = "list(type)",   [DFX_ATTR_SHAPE] = "list(shape)",
      [DFX_ATTR_TENSOR] = "list(tensor)", [DFX_ATTR_FUNC] = "list(func)"};
  a->type = list ? list_names[k] : dfx__attr_kind_name(k);
  return 0;
}

static int parse_attrs(cursor *c, dfx_op_def *d) {
  int cap = 0;
  skip_ws(c);
  while (*c->p) {
    if (d->n_attrs == cap) {
      cap = cap ? cap * 2 : 4;
      dfx_op_attr *na = dfx__realloc(d->attrs, sizeof *na * (size_t)cap);
      if (!na) return oom(c);
      d->attrs = na;
    }
    /* Counted before parsing, and zeroed, so dfx__op_def_free releases a
     * half-parsed attr too. */
    dfx_op_attr *a = &d->attrs[d->n_attrs++];
    memset(a, 0, sizeof *a);
    if (!(a->name = ident(c)) || expect(c, ':') || parse_kind(c, a)) return -1;
    if (accept(c, ">=")) {
      a->has_min = true;
      if (parse_int(c, &a->min)) return -1;
    }
    if (accept(c, "=")) {
      a->has_default = true;
      if (a->kind == DFX_ATTR_LIST ? parse_list(c, a->elem, &a->def) : parse_value(c, a->kind, &a->def)) return -1;
    }
    if (!accept(c, ";") && (skip_ws(c), *c->p)) return fail(c, "expected ';'");
    skip_ws(c);
  }
  return 0;
}

dfx_code dfx__op_def_parse(const dfx_op_src *src, dfx_op_def **out, dfx_status *st) {
  *out = NULL;
  dfx_op_def *d = dfx__calloc(1, sizeof *d);
  if (!d || !(d->name = dfx__strdup(src->name))) {
    dfx__free(d);
    return dfx__status_set(st, DFX_ENOMEM, "out of memory");
  }
  d->flags = src->flags;
  cursor c = {.p = src->attrs ? src->attrs : "", .op = src->name, .st = st};
  /* Attrs first: parse_arg resolves each argument's word against them (a type
   * attr, a list(type) attr, or else a dtype). */
  if (parse_attrs(&c, d)) goto fail;
  c.p = src->args ? src->args : "";
  const char *arrow = strstr(c.p, "->");
  if (parse_args(&c, d, arrow ? arrow : c.p + strlen(c.p), &d->in, &d->n_in)) goto fail;
  if (arrow) {
    c.p = arrow + 2;
    if (parse_args(&c, d, c.p + strlen(c.p), &d->out, &d->n_out)) goto fail;
  }
  *out = d;
  return DFX_OK;
fail:
  dfx__op_def_free(d);
  return c.code;
}

void dfx__op_def_free(dfx_op_def *d) {
  if (!d) return;
  for (int i = 0; i < d->n_in; i++) free_arg(&d->in[i]);
  for (int i = 0; i < d->n_out; i++) free_arg(&d->out[i]);
  for (int i = 0; i < d->n_attrs; i++) {
    dfx__free(d->attrs[i].name);
    dfx__attr_clear(&d->attrs[i].def);
    dfx__attr_clear(&d->attrs[i].allowed_s);
  }
  dfx__free(d->in);
  dfx__free(d->out);
  dfx__free(d->attrs);
  dfx__free(d->name);
  dfx__free(d);
}

const dfx_op_attr *dfx__op_def_attr(const dfx_op_def *d, const char *name) {
  /* An arg's attr references are optional (NULL), and callers pass them as is. */
  if (!name) return NULL;
  for (int i = 0; i < d->n_attrs; i++)
    if (strcmp(d->attrs[i].name, name) == 0) return &d->attrs[i];
  return NULL;
}

/* The generator sorts rows by Python's string order, which for these ASCII
 * names is strcmp's: any other order would make bsearch miss ops. */
static int cmp_row(const void *key, const void *row) { return strcmp(key, ((const dfx_op_src *)row)->name); }

const dfx_op_src *dfx__op_table_tf_find(const char *name) {
  return bsearch(name, dfx__op_table_tf, (size_t)dfx__op_table_tf_count, sizeof dfx__op_table_tf[0], cmp_row);
}
