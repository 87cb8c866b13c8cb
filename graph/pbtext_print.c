/* pbtext_print.c - a protobuf-c message to TensorFlow-style text format.
 * The walk reads fields at their descriptor offsets and prints a field exactly
 * when protobuf_c_message_pack would write it, so printing then parsing packs
 * to the same bytes. Output is deterministic: descriptor order, fixed
 * indentation, and numbers in the shortest form that reads back exactly. */
#include "pbtext.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <protobuf-c/protobuf-c.h>

#include "alloc.h"
#include "status.h"

typedef struct {
  char *data;
  size_t len, cap;
  int oom; /* sticky: once an append fails, later ones do nothing */
} sbuf;

static void append(sbuf *b, const char *s, size_t n) {
  if (b->oom) return;
  /* One byte more than n: data stays NUL-terminated after every append. */
  if (b->cap - b->len < n + 1) {
    size_t ncap = b->cap ? b->cap : 1024;
    while (ncap - b->len < n + 1) {
      if (ncap > SIZE_MAX / 2) {
        b->oom = 1;
        return;
      }
      ncap *= 2;
    }
    char *nd = dfx__realloc(b->data, ncap);
    if (!nd) {
      b->oom = 1;
      return;
    }
    b->data = nd;
    b->cap = ncap;
  }
  if (n) memcpy(b->data + b->len, s, n); /* s may be NULL when n is 0 */
  b->len += n;
  b->data[b->len] = 0;
}

static void put_str(sbuf *b, const char *s) { append(b, s, strlen(s)); }

static void put_fmt(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put_fmt(sbuf *b, const char *fmt, ...) {
  /* Big enough for any integer these callers format (20 digits and a sign);
   * a longer result would be cut, never overrun. */
  char tmp[64];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (n > 0) append(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

static void indent(sbuf *b, int depth) {
  static const char spaces[] = "                                ";
  for (int n = 2 * depth; n > 0; n -= 32) append(b, spaces, n < 32 ? (size_t)n : 32);
}

/* ---- scalars ---- */

/* Formats with the fewest significant digits (from 6 up) that read back to the
 * same value through the parser's path, strtod then narrowing for floats.
 * Checking that path, not strtof, keeps print and parse in agreement. */
static void fmt_real(char *out, size_t n, double v, int is_float) {
  if (isnan(v)) {
    snprintf(out, n, "nan");
    return;
  }
  if (isinf(v)) {
    snprintf(out, n, v < 0 ? "-inf" : "inf");
    return;
  }
  /* 17 significant digits always read back to the same double (9 to the same
   * float), so the loop returns by p = 17 at the latest. */
  for (int p = 6; p <= 17; p++) {
    snprintf(out, n, "%.*g", p, v);
    double back = strtod(out, NULL);
    if (is_float ? (float)back == (float)v : back == v) return;
  }
}

/* Writes s as a quoted C-escaped string, octal for other bytes (protobuf's
 * CEscape), so any byte sequence survives the trip through text. */
static void quote(sbuf *b, const uint8_t *s, size_t n) {
  append(b, "\"", 1);
  size_t run = 0;
  for (size_t i = 0; i < n; i++) {
    uint8_t c = s[i];
    const char *esc = NULL;
    char oct[5];
    switch (c) {
      case '\n': esc = "\\n"; break;
      case '\r': esc = "\\r"; break;
      case '\t': esc = "\\t"; break;
      case '"': esc = "\\\""; break;
      case '\'': esc = "\\'"; break;
      case '\\': esc = "\\\\"; break;
      default:
        if (c < 0x20 || c >= 0x7f) {
          /* Always three digits: a digit that follows cannot be read as part of the
           * escape, which a shorter octal or a hex escape would allow. */
          snprintf(oct, sizeof oct, "\\%03o", c);
          esc = oct;
        }
    }
    if (!esc) continue;
    append(b, (const char *)s + run, i - run);
    put_str(b, esc);
    run = i + 1;
  }
  append(b, (const char *)s + run, n - run);
  append(b, "\"", 1);
}

static void scalar(sbuf *b, const ProtobufCFieldDescriptor *f, const void *p) {
  char tmp[40];
  switch (f->type) {
    case PROTOBUF_C_TYPE_INT32: case PROTOBUF_C_TYPE_SINT32: case PROTOBUF_C_TYPE_SFIXED32:
      put_fmt(b, "%" PRId32, *(const int32_t *)p);
      break;
    case PROTOBUF_C_TYPE_UINT32: case PROTOBUF_C_TYPE_FIXED32:
      put_fmt(b, "%" PRIu32, *(const uint32_t *)p);
      break;
    case PROTOBUF_C_TYPE_INT64: case PROTOBUF_C_TYPE_SINT64: case PROTOBUF_C_TYPE_SFIXED64:
      put_fmt(b, "%" PRId64, *(const int64_t *)p);
      break;
    case PROTOBUF_C_TYPE_UINT64: case PROTOBUF_C_TYPE_FIXED64:
      put_fmt(b, "%" PRIu64, *(const uint64_t *)p);
      break;
    case PROTOBUF_C_TYPE_FLOAT:
      fmt_real(tmp, sizeof tmp, *(const float *)p, 1);
      put_str(b, tmp);
      break;
    case PROTOBUF_C_TYPE_DOUBLE:
      fmt_real(tmp, sizeof tmp, *(const double *)p, 0);
      put_str(b, tmp);
      break;
    case PROTOBUF_C_TYPE_BOOL:
      put_str(b, *(const protobuf_c_boolean *)p ? "true" : "false");
      break;
    case PROTOBUF_C_TYPE_ENUM: {
      int32_t v = *(const int32_t *)p;
      const ProtobufCEnumValue *ev = protobuf_c_enum_descriptor_get_value(f->descriptor, v);
      if (ev)
        put_str(b, ev->name);
      else
        put_fmt(b, "%" PRId32, v); /* open enums may hold numbers without a name */
      break;
    }
    case PROTOBUF_C_TYPE_STRING: {
      const char *s = *(const char *const *)p;
      quote(b, (const uint8_t *)(s ? s : ""), s ? strlen(s) : 0);
      break;
    }
    case PROTOBUF_C_TYPE_BYTES: {
      const ProtobufCBinaryData *bd = p;
      quote(b, bd->data, bd->len);
      break;
    }
    default:
      break; /* messages are printed by the caller */
  }
}

/* ---- presence, mirroring protobuf_c_message_pack ---- */

static int is_zeroish(const ProtobufCFieldDescriptor *f, const void *p) {
  switch (f->type) {
    case PROTOBUF_C_TYPE_BOOL: return !*(const protobuf_c_boolean *)p;
    case PROTOBUF_C_TYPE_INT32: case PROTOBUF_C_TYPE_SINT32: case PROTOBUF_C_TYPE_SFIXED32:
    case PROTOBUF_C_TYPE_UINT32: case PROTOBUF_C_TYPE_FIXED32: case PROTOBUF_C_TYPE_ENUM:
      return *(const uint32_t *)p == 0;
    case PROTOBUF_C_TYPE_INT64: case PROTOBUF_C_TYPE_SINT64: case PROTOBUF_C_TYPE_SFIXED64:
    case PROTOBUF_C_TYPE_UINT64: case PROTOBUF_C_TYPE_FIXED64:
      return *(const uint64_t *)p == 0;
    case PROTOBUF_C_TYPE_FLOAT: return *(const float *)p == 0; /* -0.0 too, as pack does */
    case PROTOBUF_C_TYPE_DOUBLE: return *(const double *)p == 0;
    case PROTOBUF_C_TYPE_STRING: {
      const char *s = *(const char *const *)p;
      return !s || !*s;
    }
    case PROTOBUF_C_TYPE_BYTES: return ((const ProtobufCBinaryData *)p)->len == 0;
    case PROTOBUF_C_TYPE_MESSAGE: return *(const void *const *)p == NULL;
  }
  return 1;
}

/* Returns how many values of field f the message holds as pack would write
 * them (0 or 1 for singular fields). */
static size_t count(const ProtobufCMessage *m, const ProtobufCFieldDescriptor *f) {
  const char *base = (const char *)m;
  const void *p = base + f->offset, *q = base + f->quantifier_offset;
  int ptr_type = f->type == PROTOBUF_C_TYPE_MESSAGE || f->type == PROTOBUF_C_TYPE_STRING;
  const void *ptr = ptr_type ? *(const void *const *)p : NULL;
  switch (f->label) {
    case PROTOBUF_C_LABEL_REQUIRED:
      return 1;
    case PROTOBUF_C_LABEL_REPEATED:
      return *(const size_t *)q;
    default:
      if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
        /* A oneof's quantifier holds the id of the member that is set; a string or
         * message member set to NULL or to its default is not written by pack. */
        if (*(const uint32_t *)q != f->id) return 0;
        return !ptr_type || (ptr && ptr != f->default_value);
      }
      /* proto2 optional: scalars have a has_ flag, pointers count when set to
       * something other than the default. Otherwise (proto3) a scalar at its zero
       * value is skipped, as pack skips it. */
      if (f->label == PROTOBUF_C_LABEL_OPTIONAL)
        return ptr_type ? ptr && ptr != f->default_value : *(const protobuf_c_boolean *)q != 0;
      return !is_zeroish(f, p);
  }
}

/* The stride of a repeated field's array, as protobuf-c lays it out:
 * protobuf_c_boolean is an int, 32-bit kinds and enums take 4 bytes. */
static size_t elt_size(ProtobufCType t) {
  switch (t) {
    case PROTOBUF_C_TYPE_INT64: case PROTOBUF_C_TYPE_SINT64: case PROTOBUF_C_TYPE_SFIXED64:
    case PROTOBUF_C_TYPE_UINT64: case PROTOBUF_C_TYPE_FIXED64: case PROTOBUF_C_TYPE_DOUBLE:
      return 8;
    case PROTOBUF_C_TYPE_BOOL: return sizeof(protobuf_c_boolean);
    case PROTOBUF_C_TYPE_STRING: case PROTOBUF_C_TYPE_MESSAGE: return sizeof(void *);
    case PROTOBUF_C_TYPE_BYTES: return sizeof(ProtobufCBinaryData);
    default: return 4;
  }
}

/* ---- messages ---- */

static dfx_code message(sbuf *b, const ProtobufCMessage *m, int depth, dfx_status *st) {
  const ProtobufCMessageDescriptor *d = m->descriptor;
  /* The printer recurses once per level, so depth bounds its stack use; the
   * parser refuses the same depth, so anything it built prints. */
  if (depth > DFX_PBTEXT_MAX_DEPTH)
    return dfx__status_set(st, DFX_ELIMIT, "pbtext_print: %s nested deeper than %d levels", d->name,
                           DFX_PBTEXT_MAX_DEPTH);
  for (unsigned i = 0; i < d->n_fields; i++) {
    const ProtobufCFieldDescriptor *f = &d->fields[i];
    size_t n = count(m, f);
    const char *p = (const char *)m + f->offset;
    if (f->label == PROTOBUF_C_LABEL_REPEATED) p = *(const char *const *)p;
    for (size_t k = 0; k < n; k++, p += elt_size(f->type)) {
      indent(b, depth);
      put_str(b, f->name);
      if (f->type != PROTOBUF_C_TYPE_MESSAGE) {
        put_str(b, ": ");
        scalar(b, f, p);
        put_str(b, "\n");
        continue;
      }
      put_str(b, " {\n");
      const ProtobufCMessage *sub = *(const ProtobufCMessage *const *)p;
      if (sub) { /* a NULL required or repeated entry packs as empty */
        dfx_code rc = message(b, sub, depth + 1, st);
        if (rc) return rc;
      }
      indent(b, depth);
      put_str(b, "}\n");
    }
  }
  return DFX_OK;
}

dfx_code dfx__pbtext_print(const ProtobufCMessage *msg, char **out, size_t *len, dfx_status *st) {
  sbuf b = {0};
  dfx_code rc;
  if (out) *out = NULL;
  if (len) *len = 0;
  if (!msg || !out) return dfx__status_set(st, DFX_EINVAL, "pbtext_print: NULL message or output");
  /* Appends never fail one by one: the sticky oom flag is checked once, after
   * the whole message is printed. */
  append(&b, "", 0); /* an empty message still yields a valid string */
  rc = message(&b, msg, 0, st);
  if (rc) goto fail;
  if (b.oom) {
    rc = dfx__status_set(st, DFX_ENOMEM, "pbtext_print: out of memory printing %s", msg->descriptor->name);
    goto fail;
  }
  *out = b.data;
  if (len) *len = b.len;
  return DFX_OK;
fail:
  dfx__free(b.data);
  return rc;
}
