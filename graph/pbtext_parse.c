/* pbtext_parse.c - protobuf text format to a protobuf-c message.
 * The text is encoded to wire format in one growing buffer, guided only by the
 * descriptors, and protobuf_c_message_unpack builds the message from it; so the
 * result has unpack's exact memory layout and nothing half-built ever exists.
 * Invariant: the first error wins and stops the parse; every token carries the
 * line and column where it starts, which every error message reports. */
#include "pbtext.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <protobuf-c/protobuf-c.h>

#include "alloc.h"
#include "status.h"

/* ---- lexer ---- */

enum tok_kind { TK_EOF, TK_IDENT, TK_INT, TK_FLOAT, TK_STRING, TK_PUNCT };

typedef struct {
  const char *p, *end; /* scan position and end of the text */
  int line, col;       /* position of p, both 1-based */
  enum tok_kind kind;  /* current token */
  const char *tok;     /* its first byte (quotes included for strings) */
  size_t tlen;
  int tline, tcol;
  uint8_t *buf; /* wire-format output */
  size_t len, cap;
  dfx_status *st;
  dfx_code code; /* first error, DFX_OK while none */
} parser;

static dfx_code fail(parser *ps, dfx_code code, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static dfx_code fail(parser *ps, dfx_code code, int line, int col, const char *fmt, ...) {
  if (ps->code != DFX_OK) return ps->code;
  /* 32 bytes short of the status buffer: room for the "line:col: " prefix. */
  char msg[DFX_STATUS_MSG_MAX - 32];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  ps->code = code;
  return dfx__status_set(ps->st, code, "%d:%d: %s", line, col, msg);
}

/* Fails at the current token. */
#define FAIL_TOK(ps, code, ...) fail((ps), (code), (ps)->tline, (ps)->tcol, __VA_ARGS__)

static int is_ident_char(int c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}
static int is_digit(int c) { return c >= '0' && c <= '9'; }
static int is_xdigit(int c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

static void advance(parser *ps, size_t n) {
  for (size_t i = 0; i < n && ps->p < ps->end; i++, ps->p++) {
    if (*ps->p == '\n') {
      ps->line++;
      ps->col = 1;
    } else {
      ps->col++;
    }
  }
}

/* Reads the next token into ps->kind/tok/tlen; a lexical error sets ps->code. */
static dfx_code next(parser *ps) {
  for (;;) {
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' ||
                               *ps->p == '\r' || *ps->p == '\f' || *ps->p == '\v'))
      advance(ps, 1);
    if (ps->p < ps->end && *ps->p == '#') {
      while (ps->p < ps->end && *ps->p != '\n') advance(ps, 1);
      continue;
    }
    break;
  }
  ps->tok = ps->p;
  ps->tline = ps->line;
  ps->tcol = ps->col;
  if (ps->p == ps->end) {
    ps->kind = TK_EOF;
    ps->tlen = 0;
    return DFX_OK;
  }
  const char *s = ps->p, *e = ps->end, *q = s;
  int c = (unsigned char)*s;
  if (is_ident_char(c) && !is_digit(c)) {
    while (q < e && is_ident_char((unsigned char)*q)) q++;
    ps->kind = TK_IDENT;
  } else if (is_digit(c) || (c == '.' && s + 1 < e && is_digit((unsigned char)s[1]))) {
    /* A number may start with '.' (".5"). Its kind only says which readers
     * accept it: an integer token is valid for a float field too. */
    ps->kind = TK_INT;
    if (c == '0' && q + 1 < e && (q[1] == 'x' || q[1] == 'X')) {
      q += 2;
      if (q == e || !is_xdigit((unsigned char)*q))
        return FAIL_TOK(ps, DFX_EINVAL, "\"0x\" must be followed by hex digits");
      while (q < e && is_xdigit((unsigned char)*q)) q++;
    } else {
      while (q < e && is_digit((unsigned char)*q)) q++;
      if (q < e && *q == '.') {
        ps->kind = TK_FLOAT;
        q++;
        while (q < e && is_digit((unsigned char)*q)) q++;
      }
      if (q < e && (*q == 'e' || *q == 'E')) {
        ps->kind = TK_FLOAT;
        q++;
        if (q < e && (*q == '+' || *q == '-')) q++;
        if (q == e || !is_digit((unsigned char)*q))
          return FAIL_TOK(ps, DFX_EINVAL, "exponent has no digits");
        while (q < e && is_digit((unsigned char)*q)) q++;
      }
      if (q < e && (*q == 'f' || *q == 'F')) {
        ps->kind = TK_FLOAT;
        q++;
      }
    }
    if (q < e && (is_ident_char((unsigned char)*q) || *q == '.'))
      return FAIL_TOK(ps, DFX_EINVAL, "need space between number and identifier");
  } else if (c == '"' || c == '\'') {
    /* A string ends at its own quote and never spans lines; a backslash skips
     * the next character (an escaped quote) but not a newline. */
    for (q = s + 1; q < e && *q != c && *q != '\n'; q++)
      if (*q == '\\' && q + 1 < e && q[1] != '\n') q++;
    if (q == e || *q != c) return FAIL_TOK(ps, DFX_EINVAL, "unterminated string");
    q++;
    ps->kind = TK_STRING;
  } else if (c && strchr("{}<>[]:,;-", c)) {
    q = s + 1;
    ps->kind = TK_PUNCT;
  } else if (c >= 0x20 && c < 0x7f) {
    return FAIL_TOK(ps, DFX_EINVAL, "unexpected character '%c'", c);
  } else {
    return FAIL_TOK(ps, DFX_EINVAL, "unexpected byte 0x%02x", (unsigned)c);
  }
  ps->tlen = (size_t)(q - s);
  advance(ps, ps->tlen);
  return DFX_OK;
}

static int is_punct(const parser *ps, char c) { return ps->kind == TK_PUNCT && *ps->tok == c; }

static int tok_is(const parser *ps, const char *word) {
  return ps->kind == TK_IDENT && ps->tlen == strlen(word) && !memcmp(ps->tok, word, ps->tlen);
}

static int tok_is_nocase(const parser *ps, const char *word) {
  return ps->kind == TK_IDENT && ps->tlen == strlen(word) && !strncasecmp(ps->tok, word, ps->tlen);
}

/* Describes the current token for error messages. */
static const char *tok_desc(const parser *ps, char *b, size_t n) {
  if (ps->kind == TK_EOF) return "end of input";
  snprintf(b, n, "'%.*s'", (int)(ps->tlen > 40 ? 40 : ps->tlen), ps->tok);
  return b;
}

static dfx_code expect(parser *ps, char c, const char *what) {
  char b[64];
  if (!is_punct(ps, c)) return FAIL_TOK(ps, DFX_EINVAL, "expected '%c' %s, got %s", c, what, tok_desc(ps, b, sizeof b));
  return next(ps);
}

/* ---- wire buffer ---- */

static dfx_code reserve(parser *ps, size_t extra) {
  if (ps->cap - ps->len >= extra) return DFX_OK;
  size_t ncap = ps->cap ? ps->cap : 256;
  while (ncap - ps->len < extra) {
    /* Doubling must not wrap: past SIZE_MAX / 2 no larger buffer exists. */
    if (ncap > SIZE_MAX / 2) return fail(ps, DFX_ENOMEM, ps->tline, ps->tcol, "message too large");
    ncap *= 2;
  }
  uint8_t *nb = dfx__realloc(ps->buf, ncap);
  if (!nb) return fail(ps, DFX_ENOMEM, ps->tline, ps->tcol, "out of memory encoding the message");
  ps->buf = nb;
  ps->cap = ncap;
  return DFX_OK;
}

static dfx_code put(parser *ps, const void *p, size_t n) {
  if (reserve(ps, n)) return ps->code;
  memcpy(ps->buf + ps->len, p, n);
  ps->len += n;
  return DFX_OK;
}

static size_t varint(uint64_t v, uint8_t *o) {
  size_t n = 0;
  while (v >= 0x80) {
    o[n++] = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  o[n++] = (uint8_t)v;
  return n;
}

static dfx_code put_varint(parser *ps, uint64_t v) {
  uint8_t b[10];
  return put(ps, b, varint(v, b));
}

static dfx_code put_tag(parser *ps, const ProtobufCFieldDescriptor *f, unsigned wire) {
  return put_varint(ps, ((uint64_t)f->id << 3) | wire);
}

/* Length-delimited values are written first and prefixed afterwards: the
 * payload that starts at `start` moves right to make room for its length. */
static dfx_code insert_length(parser *ps, size_t start) {
  uint8_t b[10];
  size_t n = varint(ps->len - start, b);
  if (reserve(ps, n)) return ps->code;
  /* Each nesting level moves its payload once, so encoding costs at most
   * depth x size, with depth bounded by DFX_PBTEXT_MAX_DEPTH; sizing each
   * submessage first would mean a second pass over the text. */
  memmove(ps->buf + start + n, ps->buf + start, ps->len - start);
  memcpy(ps->buf + start, b, n);
  ps->len += n;
  return DFX_OK;
}

/* ---- scalar values ---- */

/* Reads an optional '-' and an integer token into sign and magnitude. */
static dfx_code read_int(parser *ps, int *neg, uint64_t *mag) {
  char b[64];
  *neg = 0;
  if (is_punct(ps, '-')) {
    *neg = 1;
    if (next(ps)) return ps->code;
  }
  if (ps->kind != TK_INT) return FAIL_TOK(ps, DFX_EINVAL, "expected integer, got %s", tok_desc(ps, b, sizeof b));
  const char *s = ps->tok, *e = ps->tok + ps->tlen;
  unsigned base = 10;
  if (e - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    s += 2;
  /* A leading 0 means octal, as in C and protobuf's tokenizer. */
  } else if (e - s > 1 && s[0] == '0') {
    base = 8;
    s++;
  }
  uint64_t v = 0;
  for (; s < e; s++) {
    unsigned d = is_digit((unsigned char)*s) ? (unsigned)(*s - '0') : (unsigned)((*s | 0x20) - 'a' + 10);
    if (d >= base) return FAIL_TOK(ps, DFX_EINVAL, "invalid digit in integer %s", tok_desc(ps, b, sizeof b));
    /* v * base + d would exceed UINT64_MAX: checked before it can wrap. */
    if (v > (UINT64_MAX - d) / base) return FAIL_TOK(ps, DFX_ERANGE, "integer %s is too large", tok_desc(ps, b, sizeof b));
    v = v * base + d;
  }
  *mag = v;
  return DFX_OK;
}

/* Reads a signed integer within [lo, hi] (hi may be UINT64_MAX for uint64). */
static dfx_code read_ranged(parser *ps, const ProtobufCFieldDescriptor *f, int64_t lo, uint64_t hi,
                            uint64_t *bits) {
  int line = ps->tline, col = ps->tcol, neg;
  uint64_t mag;
  if (read_int(ps, &neg, &mag)) return ps->code;
  /* For a negative value the bound is -lo, written -(lo + 1) + 1 so that
   * lo = INT64_MIN is never negated directly (that overflows). "-0" is 0 and
   * fits even an unsigned field. */
  int ok = neg ? (mag == 0 || (lo < 0 && mag <= (uint64_t)(-(lo + 1)) + 1)) : mag <= hi;
  if (!ok) return fail(ps, DFX_ERANGE, line, col, "value out of range for field '%s'", f->name);
  /* Two's complement bits; the callers reinterpret them per field type. */
  *bits = neg ? (uint64_t)0 - mag : mag;
  return next(ps);
}

static dfx_code read_double(parser *ps, const ProtobufCFieldDescriptor *f, double *out) {
  char b[64];
  int neg = 0;
  if (is_punct(ps, '-')) {
    neg = 1;
    if (next(ps)) return ps->code;
  }
  double v;
  /* Hex and octal integers go through read_int; decimal ones, however long,
   * through strtod like any other decimal literal. */
  int radix = ps->kind == TK_INT && ps->tlen > 1 && ps->tok[0] == '0';
  if (radix) {
    uint64_t mag;
    int dummy;
    if (read_int(ps, &dummy, &mag)) return ps->code;
    v = (double)mag;
  } else if (ps->kind == TK_INT || ps->kind == TK_FLOAT) {
    size_t n = ps->tlen;
    if (ps->tok[n - 1] == 'f' || ps->tok[n - 1] == 'F') n--;
    if (n >= sizeof b) return FAIL_TOK(ps, DFX_EINVAL, "number is too long");
    memcpy(b, ps->tok, n);
    b[n] = 0;
    v = strtod(b, NULL); /* the lexer already checked the syntax */
  } else if (tok_is_nocase(ps, "inf") || tok_is_nocase(ps, "infinity")) {
    /* Spelled in any case, as protobuf's text parser accepts them. */
    v = INFINITY;
  } else if (tok_is_nocase(ps, "nan")) {
    v = NAN;
  } else {
    return FAIL_TOK(ps, DFX_EINVAL, "expected number for field '%s', got %s", f->name, tok_desc(ps, b, sizeof b));
  }
  *out = neg ? -v : v;
  return next(ps);
}

/* Decodes one quoted token, appending its bytes to the wire buffer. */
static dfx_code decode_string(parser *ps) {
  const char *s = ps->tok + 1, *e = ps->tok + ps->tlen - 1;
  while (s < e) {
    const char *run = s;
    while (s < e && *s != '\\') s++;
    if (s > run && put(ps, run, (size_t)(s - run))) return ps->code;
    if (s == e) break;
    s++; /* the lexer guarantees a character after each backslash */
    unsigned char c = (unsigned char)*s++;
    uint8_t out[4];
    size_t n = 1;
    switch (c) {
      case 'n': out[0] = '\n'; break;
      case 't': out[0] = '\t'; break;
      case 'r': out[0] = '\r'; break;
      case 'a': out[0] = '\a'; break;
      case 'b': out[0] = '\b'; break;
      case 'f': out[0] = '\f'; break;
      case 'v': out[0] = '\v'; break;
      case '\\': case '\'': case '"': case '?': out[0] = c; break;
      case 'x': case 'X': {
        unsigned v = 0, k = 0;
        for (; k < 2 && s < e && is_xdigit((unsigned char)*s); k++, s++)
          v = v * 16 + (unsigned)(is_digit((unsigned char)*s) ? *s - '0' : (*s | 0x20) - 'a' + 10);
        if (!k) return FAIL_TOK(ps, DFX_EINVAL, "\\x escape without hex digits");
        out[0] = (uint8_t)v;
        break;
      }
      case 'u': case 'U': {
        unsigned k, want = c == 'u' ? 4 : 8;
        uint32_t cp = 0;
        for (k = 0; k < want && s < e && is_xdigit((unsigned char)*s); k++, s++)
          cp = cp * 16 + (uint32_t)(is_digit((unsigned char)*s) ? *s - '0' : (*s | 0x20) - 'a' + 10);
        /* Surrogates and values past U+10FFFF are no code points, so they have
         * no UTF-8 encoding. */
        if (k < want || cp > 0x10ffff || (cp >= 0xd800 && cp < 0xe000))
          return FAIL_TOK(ps, DFX_EINVAL, "invalid \\%c escape", c);
        if (cp < 0x80) {
          out[0] = (uint8_t)cp;
        } else if (cp < 0x800) {
          out[0] = (uint8_t)(0xc0 | cp >> 6), out[1] = (uint8_t)(0x80 | (cp & 0x3f)), n = 2;
        } else if (cp < 0x10000) {
          out[0] = (uint8_t)(0xe0 | cp >> 12), out[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f));
          out[2] = (uint8_t)(0x80 | (cp & 0x3f)), n = 3;
        } else {
          out[0] = (uint8_t)(0xf0 | cp >> 18), out[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3f));
          out[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f)), out[3] = (uint8_t)(0x80 | (cp & 0x3f)), n = 4;
        }
        break;
      }
      default:
        if (c >= '0' && c <= '7') {
          unsigned v = c - '0';
          for (int k = 1; k < 3 && s < e && *s >= '0' && *s <= '7'; k++, s++) v = v * 8 + (unsigned)(*s - '0');
          if (v > 0xff) return FAIL_TOK(ps, DFX_EINVAL, "octal escape above \\377");
          out[0] = (uint8_t)v;
          break;
        }
        return FAIL_TOK(ps, DFX_EINVAL, "invalid escape '\\%c' in string", c);
    }
    if (put(ps, out, n)) return ps->code;
  }
  return DFX_OK;
}

/* Writes one scalar (non-message) value of field f, tag included. */
static dfx_code scalar(parser *ps, const ProtobufCFieldDescriptor *f) {
  char b[64];
  uint64_t bits = 0;
  double d = 0;
  switch (f->type) {
    case PROTOBUF_C_TYPE_INT32: case PROTOBUF_C_TYPE_SINT32: case PROTOBUF_C_TYPE_SFIXED32:
      if (read_ranged(ps, f, INT32_MIN, INT32_MAX, &bits)) return ps->code;
      break;
    case PROTOBUF_C_TYPE_UINT32: case PROTOBUF_C_TYPE_FIXED32:
      if (read_ranged(ps, f, 0, UINT32_MAX, &bits)) return ps->code;
      break;
    case PROTOBUF_C_TYPE_INT64: case PROTOBUF_C_TYPE_SINT64: case PROTOBUF_C_TYPE_SFIXED64:
      if (read_ranged(ps, f, INT64_MIN, INT64_MAX, &bits)) return ps->code;
      break;
    case PROTOBUF_C_TYPE_UINT64: case PROTOBUF_C_TYPE_FIXED64:
      if (read_ranged(ps, f, 0, UINT64_MAX, &bits)) return ps->code;
      break;
    case PROTOBUF_C_TYPE_FLOAT: case PROTOBUF_C_TYPE_DOUBLE:
      if (read_double(ps, f, &d)) return ps->code;
      break;
    case PROTOBUF_C_TYPE_BOOL:
      /* The spellings protobuf's text parser takes for a bool. */
      if (tok_is(ps, "true") || tok_is(ps, "True") || tok_is(ps, "t") ||
          (ps->kind == TK_INT && ps->tlen == 1 && *ps->tok == '1'))
        bits = 1;
      else if (!(tok_is(ps, "false") || tok_is(ps, "False") || tok_is(ps, "f") ||
                 (ps->kind == TK_INT && ps->tlen == 1 && *ps->tok == '0')))
        return FAIL_TOK(ps, DFX_EINVAL, "expected bool for field '%s', got %s", f->name, tok_desc(ps, b, sizeof b));
      if (next(ps)) return ps->code;
      break;
    case PROTOBUF_C_TYPE_ENUM: {
      const ProtobufCEnumDescriptor *ed = f->descriptor;
      /* By name, as printers write enums, or by number, which protobuf's
       * parser also accepts. */
      if (ps->kind == TK_IDENT) {
        char name[128];
        const ProtobufCEnumValue *ev = NULL;
        if (ps->tlen < sizeof name) {
          memcpy(name, ps->tok, ps->tlen);
          name[ps->tlen] = 0;
          ev = protobuf_c_enum_descriptor_get_value_by_name(ed, name);
        }
        if (!ev)
          return FAIL_TOK(ps, DFX_EINVAL, "unknown value %s for enum %s (field '%s')", tok_desc(ps, b, sizeof b),
                          ed->name, f->name);
        bits = (uint64_t)(int64_t)ev->value;
        if (next(ps)) return ps->code;
      } else if (read_ranged(ps, f, INT32_MIN, INT32_MAX, &bits)) {
        return ps->code;
      }
      break;
    }
    case PROTOBUF_C_TYPE_STRING: case PROTOBUF_C_TYPE_BYTES: {
      if (ps->kind != TK_STRING)
        return FAIL_TOK(ps, DFX_EINVAL, "expected string for field '%s', got %s", f->name, tok_desc(ps, b, sizeof b));
      if (put_tag(ps, f, PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED)) return ps->code;
      size_t start = ps->len;
      int line = ps->tline, col = ps->tcol;
      while (ps->kind == TK_STRING) /* adjacent literals concatenate */
        if (decode_string(ps) || next(ps)) return ps->code;
      /* protobuf-c keeps strings as C strings, which cannot hold NUL. */
      if (f->type == PROTOBUF_C_TYPE_STRING && memchr(ps->buf + start, 0, ps->len - start))
        return fail(ps, DFX_EINVAL, line, col, "string field '%s' contains a NUL byte (use a bytes field)", f->name);
      return insert_length(ps, start);
    }
    default:
      return FAIL_TOK(ps, DFX_EINTERNAL, "field '%s' has unsupported type %d", f->name, (int)f->type);
  }
  uint8_t w[8];
  switch (f->type) {
    case PROTOBUF_C_TYPE_SINT32:
      /* ZigZag: 0, -1, 1, -2 ... map to 0, 1, 2, 3 ..., so small negative values
       * stay short varints. The arithmetic shift spreads the sign bit. */
      bits = (uint32_t)(((uint32_t)bits << 1) ^ (uint32_t)((int32_t)bits >> 31));
      break;
    case PROTOBUF_C_TYPE_SINT64:
      bits = (bits << 1) ^ (uint64_t)((int64_t)bits >> 63);
      break;
    case PROTOBUF_C_TYPE_FLOAT: {
      float fv = (float)d; /* protoc also narrows from double */
      uint32_t u;
      memcpy(&u, &fv, 4);
      for (int i = 0; i < 4; i++) w[i] = (uint8_t)(u >> (8 * i));
      if (put_tag(ps, f, PROTOBUF_C_WIRE_TYPE_32BIT)) return ps->code;
      return put(ps, w, 4);
    }
    case PROTOBUF_C_TYPE_DOUBLE:
      memcpy(&bits, &d, 8);
      break;
    default:
      break;
  }
  switch (f->type) {
    case PROTOBUF_C_TYPE_SFIXED32: case PROTOBUF_C_TYPE_FIXED32:
      for (int i = 0; i < 4; i++) w[i] = (uint8_t)(bits >> (8 * i));
      if (put_tag(ps, f, PROTOBUF_C_WIRE_TYPE_32BIT)) return ps->code;
      return put(ps, w, 4);
    case PROTOBUF_C_TYPE_SFIXED64: case PROTOBUF_C_TYPE_FIXED64: case PROTOBUF_C_TYPE_DOUBLE:
      for (int i = 0; i < 8; i++) w[i] = (uint8_t)(bits >> (8 * i));
      if (put_tag(ps, f, PROTOBUF_C_WIRE_TYPE_64BIT)) return ps->code;
      return put(ps, w, 8);
    default:
      /* int32 and enum values are sign-extended to 64 bits, as protobuf does. */
      if (put_tag(ps, f, PROTOBUF_C_WIRE_TYPE_VARINT)) return ps->code;
      return put_varint(ps, bits);
  }
}

/* ---- messages ---- */

static dfx_code fields(parser *ps, const ProtobufCMessageDescriptor *d, char close, int depth, int oline,
                       int ocol);

/* Writes one submessage value: '{' or '<', its fields, the matching close. */
static dfx_code submessage(parser *ps, const ProtobufCFieldDescriptor *f, int depth) {
  char b[64];
  char close = is_punct(ps, '{') ? '}' : is_punct(ps, '<') ? '>' : 0;
  if (!close)
    return FAIL_TOK(ps, DFX_EINVAL, "expected '{' or '<' for field '%s', got %s", f->name, tok_desc(ps, b, sizeof b));
  if (depth + 1 > DFX_PBTEXT_MAX_DEPTH)
    return FAIL_TOK(ps, DFX_ELIMIT, "messages nested deeper than %d levels", DFX_PBTEXT_MAX_DEPTH);
  int oline = ps->tline, ocol = ps->tcol;
  if (put_tag(ps, f, PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED) || next(ps)) return ps->code;
  size_t start = ps->len;
  if (fields(ps, f->descriptor, close, depth + 1, oline, ocol)) return ps->code;
  if (insert_length(ps, start)) return ps->code;
  return next(ps); /* past the close */
}

static dfx_code value(parser *ps, const ProtobufCFieldDescriptor *f, int depth) {
  return f->type == PROTOBUF_C_TYPE_MESSAGE ? submessage(ps, f, depth) : scalar(ps, f);
}

/* Checks that a non-repeated field, or another member of its oneof, was not
 * already given; protobuf's own parser refuses both. */
static dfx_code check_once(parser *ps, const ProtobufCMessageDescriptor *d, const ProtobufCFieldDescriptor *f,
                           uint8_t *seen) {
  size_t i = (size_t)(f - d->fields);
  if (f->label == PROTOBUF_C_LABEL_REPEATED) return DFX_OK;
  if (seen[i])
    return FAIL_TOK(ps, DFX_EINVAL, "non-repeated field '%s' of %s is given more than once", f->name, d->name);
  if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
    for (size_t j = 0; j < d->n_fields; j++) {
      const ProtobufCFieldDescriptor *g = &d->fields[j];
      if (seen[j] && (g->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) && g->quantifier_offset == f->quantifier_offset)
        return FAIL_TOK(ps, DFX_EINVAL, "field '%s' of %s is set along with '%s', another member of its oneof",
                        f->name, d->name, g->name);
    }
  }
  seen[i] = 1;
  return DFX_OK;
}

/* Parses "name: value" entries until `close` (0 means end of input). The open
 * brace's position (oline:ocol) makes "missing '}'" errors point somewhere useful. */
static dfx_code fields(parser *ps, const ProtobufCMessageDescriptor *d, char close, int depth, int oline,
                       int ocol) {
  char b[64];
  /* One flag per field of this message level, for check_once. */
  uint8_t *seen = dfx__calloc(d->n_fields ? d->n_fields : 1, 1);
  if (!seen) return fail(ps, DFX_ENOMEM, ps->tline, ps->tcol, "out of memory");
  for (;;) {
    if (close ? is_punct(ps, close) : ps->kind == TK_EOF) break;
    if (ps->kind == TK_EOF) {
      fail(ps, DFX_EINVAL, ps->tline, ps->tcol, "missing '%c' to close %s opened at %d:%d", close, d->name, oline,
           ocol);
      goto fail;
    }
    if (ps->kind != TK_IDENT) {
      FAIL_TOK(ps, DFX_EINVAL, "expected a field name of %s, got %s", d->name, tok_desc(ps, b, sizeof b));
      goto fail;
    }
    char name[128];
    const ProtobufCFieldDescriptor *f = NULL;
    if (ps->tlen < sizeof name) {
      memcpy(name, ps->tok, ps->tlen);
      name[ps->tlen] = 0;
      f = protobuf_c_message_descriptor_get_field_by_name(d, name);
    }
    if (!f) {
      FAIL_TOK(ps, DFX_EINVAL, "unknown field %s in message %s", tok_desc(ps, b, sizeof b), d->name);
      goto fail;
    }
    if (check_once(ps, d, f, seen) || next(ps)) goto fail;
    if (f->type == PROTOBUF_C_TYPE_MESSAGE) {
      if (is_punct(ps, ':') && next(ps)) goto fail; /* the colon is optional before a message */
    } else if (expect(ps, ':', "after the field name")) {
      goto fail;
    }
    if (f->label == PROTOBUF_C_LABEL_REPEATED && is_punct(ps, '[')) {
      if (next(ps)) goto fail;
      if (!is_punct(ps, ']')) {
        for (;;) {
          if (value(ps, f, depth)) goto fail;
          if (is_punct(ps, ']')) break;
          if (expect(ps, ',', "or ']' in a list")) goto fail;
        }
      }
      if (next(ps)) goto fail;
    } else if (value(ps, f, depth)) {
      goto fail;
    }
    /* The text format allows an optional ',' or ';' after each field. */
    if ((is_punct(ps, ',') || is_punct(ps, ';')) && next(ps)) goto fail;
  }
  for (size_t i = 0; i < d->n_fields; i++) /* proto2 only; unpack would refuse the message */
    if (d->fields[i].label == PROTOBUF_C_LABEL_REQUIRED && !seen[i]) {
      FAIL_TOK(ps, DFX_EINVAL, "missing required field '%s' of %s", d->fields[i].name, d->name);
      goto fail;
    }
  dfx__free(seen);
  return DFX_OK;
fail:
  dfx__free(seen);
  return ps->code;
}

dfx_code dfx__pbtext_parse(const ProtobufCMessageDescriptor *desc, const char *text, size_t len,
                           ProtobufCAllocator *alloc, ProtobufCMessage **out, dfx_status *st) {
  parser ps = {.p = text, .end = text + len, .line = 1, .col = 1, .st = st};
  if (out) *out = NULL;
  if (!desc || !out || (!text && len))
    return dfx__status_set(st, DFX_EINVAL, "pbtext_parse: NULL descriptor, text or output");
  if (next(&ps) || fields(&ps, desc, 0, 0, 1, 1)) goto fail;
  /* An empty message encodes to no bytes, and ps.buf is then NULL: unpack
   * still gets a valid pointer. */
  static const uint8_t empty[1];
  *out = protobuf_c_message_unpack(desc, alloc, ps.len, ps.len ? ps.buf : empty);
  if (!*out) {
    /* The encoding is well formed by construction, so only memory is left. */
    fail(&ps, DFX_ENOMEM, ps.line, ps.col, "protobuf-c could not unpack %s (out of memory)", desc->name);
    goto fail;
  }
  dfx__free(ps.buf);
  return DFX_OK;
fail:
  dfx__free(ps.buf);
  return ps.code;
}
