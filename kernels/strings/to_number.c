/* to_number.c - StringToNumber with TF's parsers (tsl numbers.cc):
 * integers: optional ASCII whitespace, an optional '-' (none for unsigned;
 * '+' is never accepted), decimal digits, optional whitespace, nothing
 * else, no overflow. float/double: double-conversion's grammar with
 * leading/trailing whitespace, hex integers ("0x1F"), case-insensitive
 * "inf"/"nan" (not "infinity"), signs before the number only; strings of
 * 32 bytes or more are refused, and one of only whitespace reads as 0.
 * The value is the correctly rounded float or double, computed by the C
 * library's strtof/strtod on the validated, locale-free text. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sutil.h"

static bool ws(char ch) { return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\v' || ch == '\f' || ch == '\r'; }
static bool digit(char ch) { return ch >= '0' && ch <= '9'; }
static bool xdigit(char ch) { return digit(ch) || (ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F'); }

/* safe_strto64 / safe_strtou64 with bounds [lo, hi]. */
static bool parse_int(const char *p, size_t n, bool is_signed, int64_t lo, uint64_t hi, uint64_t *mag, bool *neg) {
  size_t i = 0;
  while (i < n && ws(p[i])) i++;
  *neg = false;
  if (is_signed && i < n && p[i] == '-') *neg = true, i++;
  if (i >= n || !digit(p[i])) return false;
  uint64_t lim = *neg ? (uint64_t)0 - (uint64_t)lo : hi, v = 0;
  for (; i < n && digit(p[i]); i++) {
    unsigned dg = (unsigned)(p[i] - '0');
    if (v > (lim - dg) / 10) return false;
    v = v * 10 + dg;
  }
  while (i < n && ws(p[i])) i++;
  *mag = v;
  return i == n;
}

/* double-conversion's StringToDouble with TF's flags. Writes a clean copy
 * of the number (sign, digits and exponent only, or "0x" digits) to buf
 * for strtod; *special is 1 for inf, 2 for nan, 3 for all-space (0). */
static bool parse_float(const char *p, size_t n, char *buf, bool *neg, int *special) {
  size_t i = 0, o = 0;
  *neg = false;
  *special = 0;
  if (n == 0 || n >= 32) return false;
  while (i < n && ws(p[i])) i++;
  if (i == n) return *special = 3, true;
  if (p[i] == '+' || p[i] == '-') {
    *neg = p[i++] == '-';
    if (i == n || ws(p[i])) return false;
  }
  const char *word = NULL;
  if ((p[i] | 0x20) == 'i') word = "inf", *special = 1;
  if ((p[i] | 0x20) == 'n') word = "nan", *special = 2;
  if (word) {
    for (int k = 0; k < 3; k++, i++)
      if (i == n || (p[i] | 0x20) != word[k]) return false;
    while (i < n && ws(p[i])) i++;
    return i == n;
  }
  if (p[i] == '0' && i + 1 < n && (p[i + 1] | 0x20) == 'x') {
    i += 2;
    if (i == n || !xdigit(p[i])) return false;
    buf[o++] = '0', buf[o++] = 'x';
    while (i < n && xdigit(p[i])) buf[o++] = p[i++];
    while (i < n && ws(p[i])) i++;
    buf[o] = 0;
    return i == n;
  }
  int digits = 0;
  long frac = 0; /* digits after the point, folded into the exponent */
  while (i < n && digit(p[i])) buf[o++] = p[i++], digits++;
  if (i < n && p[i] == '.') {
    i++;
    while (i < n && digit(p[i])) buf[o++] = p[i++], digits++, frac++;
  }
  if (digits == 0) return false;
  long ex = 0;
  if (i < n && (p[i] | 0x20) == 'e') {
    i++;
    bool eneg = false;
    if (i < n && (p[i] == '+' || p[i] == '-')) eneg = p[i++] == '-';
    if (i == n || !digit(p[i])) return false;
    for (; i < n && digit(p[i]); i++) /* saturates, as double-conversion does */
      if (ex < 100000000) ex = ex * 10 + (p[i] - '0');
    if (eneg) ex = -ex;
  }
  while (i < n && ws(p[i])) i++;
  if (i != n) return false;
  /* o <= 30 digits; the exponent needs at most 32 more bytes. */
  snprintf(buf + o, 40, "e%ld", ex - frac);
  return true;
}

static dfx_code to_number_kernel(dfx_kctx *ctx) {
  const dfx_tensor *x = ctx->in[0];
  dfx_dtype t = ctx->node->out_types[0];
  dfx_tensor *out = dfx__kctx_alloc(ctx, 0, t, x->ndims, x->dims);
  if (!out) return ctx->st->code;
  const dfx_str *s = x->data;
  for (int64_t k = 0; k < x->count; k++) {
    const char *p = s[k].ptr ? s[k].ptr : "";
    size_t n = s[k].len;
    bool ok, neg;
    if (t == DFX_F32 || t == DFX_F64) {
      char buf[80];
      int special;
      ok = parse_float(p, n, buf, &neg, &special);
      double d = special == 1 ? INFINITY : special == 2 ? NAN : 0.0;
      if (ok) {
        if (t == DFX_F32) {
          float f = special ? (float)d : strtof(buf, NULL);
          ((float *)out->data)[k] = neg ? -f : f;
        } else {
          double v = special ? d : strtod(buf, NULL);
          ((double *)out->data)[k] = neg ? -v : v;
        }
      }
    } else {
      uint64_t mag;
      bool sg = t == DFX_I32 || t == DFX_I64;
      int64_t lo = t == DFX_I32 ? INT32_MIN : INT64_MIN;
      uint64_t hi = t == DFX_I32 ? INT32_MAX : t == DFX_I64 ? INT64_MAX : t == DFX_U32 ? UINT32_MAX : UINT64_MAX;
      ok = parse_int(p, n, sg, lo, hi, &mag, &neg);
      if (ok) {
        uint64_t v = neg ? (uint64_t)0 - mag : mag; /* two's complement of the magnitude */
        switch (t) {
          case DFX_I32: ((int32_t *)out->data)[k] = (int32_t)(uint32_t)v; break;
          case DFX_I64: ((int64_t *)out->data)[k] = (int64_t)v; break;
          case DFX_U32: ((uint32_t *)out->data)[k] = (uint32_t)v; break;
          default: ((uint64_t *)out->data)[k] = v; break;
        }
      }
    }
    if (!ok) {
      size_t shown = strnlen(p, n); /* TF prints the C string: up to a NUL */
      return dfx__kctx_fail(ctx, DFX_EINVAL, "StringToNumberOp could not correctly convert string: %.*s",
                            (int)(shown > 1000 ? 1000 : shown), p);
    }
    dfx_code c = str_poll(ctx, k + 1);
    if (c) return c;
  }
  return DFX_OK;
}

static const dfx_kernel_def kernels[] = {
    {"StringToNumber", "out_type: {float, double, int32, int64, uint32, uint64}", to_number_kernel, 0}, {NULL}};

void dfx__kernels_strings_to_number(dfx_registry *r);
void dfx__kernels_strings_to_number(dfx_registry *r) { dfx__kernels_add(r, kernels); }
