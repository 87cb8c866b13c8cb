/* print.c - writes fetched tensors for people (numpy-style text) and for
 * tools (the JSON contract documented in `dfexec run --help`). Text output
 * follows numpy's defaults: 75-column lines, floats with the fewest digits
 * that read back (at most 8 decimals), decimal points aligned, and arrays of
 * more than 1000 elements summarised by their first and last 3 entries per
 * dimension. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "dtype.h"

#define LINE_WIDTH 75
#define EDGE_ITEMS 3
#define SUMMARY_THRESHOLD 1000

/* Any real element as a double (complex: the real part). */
static double elem_f64(const dfx_tensor *t, int64_t i) {
  const void *d = dfx_tensor_data(t);
  switch (dfx_tensor_dtype(t)) {
  case DFX_F32: return ((const float *)d)[i];
  case DFX_F64: return ((const double *)d)[i];
  case DFX_F16: return dfx__f16_to_f32(((const uint16_t *)d)[i]);
  case DFX_BF16: return dfx__bf16_to_f32(((const uint16_t *)d)[i]);
  case DFX_C64: return ((const float *)d)[2 * i];
  case DFX_C128: return ((const double *)d)[2 * i];
  default: return 0;
  }
}

static double elem_imag(const dfx_tensor *t, int64_t i) {
  const void *d = dfx_tensor_data(t);
  return dfx_tensor_dtype(t) == DFX_C64 ? ((const float *)d)[2 * i + 1] : ((const double *)d)[2 * i + 1];
}

/* Integers print exactly: unsigned 64-bit values go through their own path. */
static void fmt_int(const dfx_tensor *t, int64_t i, char *buf, size_t n) {
  dfx_dtype dt = dfx_tensor_dtype(t);
  if (dt == DFX_U64) snprintf(buf, n, "%llu", (unsigned long long)((const uint64_t *)dfx_tensor_data(t))[i]);
  else snprintf(buf, n, "%lld", (long long)dfx__tensor_get_i64(t, i));
}

/* v rounded to dtype dt's precision (what reading back the text gives). */
static double round_to(dfx_dtype dt, double v) {
  switch (dt) {
  case DFX_F32: case DFX_C64: return (float)v;
  case DFX_F16: return dfx__f16_to_f32(dfx__f32_to_f16((float)v));
  case DFX_BF16: return dfx__bf16_to_f32(dfx__f32_to_bf16((float)v));
  default: return v;
  }
}

/* Digits a float of dtype dt needs to read back as the same value. */
static int needed_digits(double v, dfx_dtype dt, bool sci, int cap) {
  char buf[64];
  for (int p = 0; p < cap; p++) {
    snprintf(buf, sizeof buf, sci ? "%.*e" : "%.*f", p, v);
    if (round_to(dt, strtod(buf, NULL)) == round_to(dt, v)) return p;
  }
  return cap;
}

/* ---- text ---- */

typedef struct view {
  const dfx_tensor *t;
  int nd;
  int64_t dims[DFX_MAX_DIMS], strides[DFX_MAX_DIMS];
  bool summarise;
  bool sci;         /* floats in scientific notation */
  int prec;         /* float digits after the point (capped at 8) */
  int int_w, frac_w, width;
  FILE *f;
  int col;
} view;

/* Formats element i without padding; for floats *dot is the split point. */
static void fmt_elem(const view *v, int64_t i, char *buf, size_t n) {
  dfx_dtype dt = dfx_tensor_dtype(v->t);
  if (dt == DFX_BOOL) {
    snprintf(buf, n, "%s", ((const uint8_t *)dfx_tensor_data(v->t))[i] ? "True" : "False");
  } else if (dt == DFX_STRING) {
    size_t len, o = 0;
    const unsigned char *s = (const unsigned char *)dfx_tensor_string(v->t, i, &len);
    o += (size_t)snprintf(buf, n, "b'");
    for (size_t j = 0; j < len && o + 8 < n; j++) {
      unsigned c = s[j];
      if (c == '\'' || c == '\\') o += (size_t)snprintf(buf + o, n - o, "\\%c", c);
      else if (c == '\n') o += (size_t)snprintf(buf + o, n - o, "\\n");
      else if (c < 0x20 || c >= 0x7f) o += (size_t)snprintf(buf + o, n - o, "\\x%02x", c);
      else buf[o++] = (char)c;
    }
    snprintf(buf + o, n - o, "'");
  } else if (dfx__dtype_is_complex(dt)) {
    snprintf(buf, n, "%g%+gj", elem_f64(v->t, i), elem_imag(v->t, i));
  } else if (dfx__dtype_is_float(dt)) {
    double x = elem_f64(v->t, i);
    if (isnan(x) || isinf(x)) {
      snprintf(buf, n, "%s", isnan(x) ? "nan" : x > 0 ? "inf" : "-inf");
      return;
    }
    snprintf(buf, n, v->sci ? "%.*e" : "%.*f", v->prec, x);
    /* Positional: trailing zeros of the fraction go and the point stays
     * ("1."), as numpy. Scientific keeps one precision for all elements. */
    char *dot = strchr(buf, '.');
    if (v->sci) {
      char *e = strchr(buf, 'e');
      if (!dot && e) memmove(e + 1, e, strlen(e) + 1), *e = '.';
      return;
    }
    if (!dot) {
      strcat(buf, ".");
    } else {
      char *z = buf + strlen(buf);
      while (z > dot + 1 && z[-1] == '0') z--;
      *z = 0;
    }
  } else {
    fmt_int(v->t, i, buf, n);
  }
}

/* Calls fn on every displayed element in row-major order. */
static void each_shown(view *v, int d, int64_t base, void (*fn)(view *, int64_t)) {
  if (d == v->nd) {
    fn(v, base);
    return;
  }
  int64_t n = v->dims[d];
  for (int64_t i = 0; i < n; i++) {
    if (v->summarise && n > 2 * EDGE_ITEMS && i == EDGE_ITEMS) i = n - EDGE_ITEMS;
    each_shown(v, d + 1, base + i * v->strides[d], fn);
  }
}

static double g_max, g_min; /* scratch for float_scan (single-threaded CLI) */
static bool g_any;

static void float_scan(view *v, int64_t i) {
  double x = fabs(elem_f64(v->t, i));
  if (!isfinite(x)) return;
  if (x > g_max) g_max = x;
  if (x != 0 && (!g_any || x < g_min)) {
    g_min = x;
    g_any = true;
  }
}

static void prec_scan(view *v, int64_t i) {
  double x = elem_f64(v->t, i);
  if (!isfinite(x)) return;
  int p = needed_digits(x, dfx_tensor_dtype(v->t), v->sci, 8);
  if (p > v->prec) v->prec = p;
}

static void width_scan(view *v, int64_t i) {
  char buf[512];
  fmt_elem(v, i, buf, sizeof buf);
  int len = (int)strlen(buf);
  const char *dot = strchr(buf, '.');
  if (dot && dfx__dtype_is_float(dfx_tensor_dtype(v->t))) {
    int ip = (int)(dot - buf), fp = len - ip;
    if (ip > v->int_w) v->int_w = ip;
    if (fp > v->frac_w) v->frac_w = fp;
  } else if (len > v->width) {
    v->width = len;
  }
}

static void put_elem(view *v, int64_t i) {
  char buf[512];
  fmt_elem(v, i, buf, sizeof buf);
  const char *dot = strchr(buf, '.');
  int w;
  if (dot && dfx__dtype_is_float(dfx_tensor_dtype(v->t))) {
    int ip = (int)(dot - buf), fp = (int)strlen(buf) - ip;
    w = fprintf(v->f, "%*s%s%*s", v->int_w - ip, "", buf, v->frac_w - fp, "");
  } else if (dfx_tensor_dtype(v->t) == DFX_STRING) {
    w = fprintf(v->f, "%s", buf);
  } else {
    w = fprintf(v->f, "%*s", v->width, buf);
  }
  v->col += w;
}

static void put_rec(view *v, int d, int64_t base) {
  fputc('[', v->f);
  v->col++;
  int64_t n = v->dims[d];
  int elem_w = v->width > v->int_w + v->frac_w ? v->width : v->int_w + v->frac_w;
  for (int64_t i = 0; i < n; i++) {
    bool gap = v->summarise && n > 2 * EDGE_ITEMS && i == EDGE_ITEMS;
    if (i > 0) {
      if (d == v->nd - 1) {
        /* Wrap before an element that would pass the line width. */
        int next = gap ? 3 : elem_w;
        if (v->col + 1 + next + (v->nd - d) > LINE_WIDTH) {
          fprintf(v->f, "\n%*s", d + 1, "");
          v->col = d + 1;
        } else {
          fputc(' ', v->f);
          v->col++;
        }
      } else {
        for (int k = 0; k < v->nd - 1 - d; k++) fputc('\n', v->f);
        fprintf(v->f, "%*s", d + 1, "");
        v->col = d + 1;
      }
    }
    if (gap) {
      fputs("...", v->f);
      v->col += 3;
      i = n - EDGE_ITEMS - 1;
      continue;
    }
    if (d + 1 == v->nd) put_elem(v, base + i * v->strides[d]);
    else put_rec(v, d + 1, base + i * v->strides[d]);
  }
  fputc(']', v->f);
  v->col++;
}

static void scalar_text(FILE *f, const dfx_tensor *t) {
  dfx_dtype dt = dfx_tensor_dtype(t);
  char buf[512];
  if (dfx__dtype_is_float(dt)) {
    double x = elem_f64(t, 0);
    if (!isfinite(x)) {
      fprintf(f, "%s\n", isnan(x) ? "nan" : x > 0 ? "inf" : "-inf");
      return;
    }
    /* numpy's repr of a scalar: shortest round-trip digits, "2.0" not "2.". */
    int p = needed_digits(x, dt, false, 17);
    bool huge = fabs(x) >= 1e16 || (x != 0 && fabs(x) < 1e-4);
    if (huge) snprintf(buf, sizeof buf, "%.*e", needed_digits(x, dt, true, 17), x);
    else snprintf(buf, sizeof buf, "%.*f", p > 0 ? p : 1, x);
    fprintf(f, "%s\n", buf);
    return;
  }
  view v = {.t = t, .nd = 0, .f = f};
  fmt_elem(&v, 0, buf, sizeof buf);
  fprintf(f, "%s\n", buf);
}

void dfx__print_text(FILE *f, const char *name, const dfx_tensor *t) {
  char shape[256];
  fprintf(f, "%s %s %s\n", name, dfx_dtype_name(dfx_tensor_dtype(t)), dfx__shape_str(t->ndims, t->dims, shape, sizeof shape));
  if (t->ndims == 0) {
    scalar_text(f, t);
    return;
  }
  view v = {.t = t, .nd = t->ndims, .f = f, .summarise = dfx_tensor_count(t) > SUMMARY_THRESHOLD};
  for (int d = v.nd - 1; d >= 0; d--) {
    v.dims[d] = t->dims[d];
    v.strides[d] = d == v.nd - 1 ? 1 : v.strides[d + 1] * t->dims[d + 1];
  }
  if (dfx_tensor_count(t) == 0) {
    /* numpy prints an empty array as [] nested to its rank. */
    for (int d = 0; d < v.nd; d++) fputc('[', f);
    for (int d = 0; d < v.nd; d++) fputc(']', f);
    fputc('\n', f);
    return;
  }
  if (dfx__dtype_is_float(dfx_tensor_dtype(t))) {
    g_max = g_min = 0;
    g_any = false;
    each_shown(&v, 0, 0, float_scan);
    v.sci = g_max >= 1e8 || (g_any && (g_min < 1e-4 || g_max / g_min > 1e3));
    each_shown(&v, 0, 0, prec_scan);
  }
  each_shown(&v, 0, 0, width_scan);
  put_rec(&v, 0, 0);
  fputc('\n', f);
}

/* ---- JSON ---- */

void dfx__json_string(FILE *f, const char *s, size_t len) {
  const unsigned char *u = (const unsigned char *)s;
  fputc('"', f);
  for (size_t i = 0; i < len;) {
    unsigned c = u[i];
    if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
    else if (c == '\n') fputs("\\n", f);
    else if (c == '\t') fputs("\\t", f);
    else if (c == '\r') fputs("\\r", f);
    else if (c < 0x20 || c == 0x7f) fprintf(f, "\\u%04x", c);
    else if (c < 0x80) fputc((int)c, f);
    else {
      /* Copy a valid UTF-8 sequence; escape a stray byte as \u00XX. */
      size_t k = c >= 0xc2 && c < 0xe0 ? 2 : c >= 0xe0 && c < 0xf0 ? 3 : c >= 0xf0 && c < 0xf5 ? 4 : 0;
      bool ok = k > 0 && i + k <= len;
      uint32_t cp = c & (0x7f >> k);
      for (size_t j = 1; ok && j < k; j++) {
        ok = (u[i + j] & 0xc0) == 0x80;
        cp = cp << 6 | (u[i + j] & 0x3f);
      }
      if (ok) ok = (k != 3 || cp >= 0x800) && (k != 4 || (cp >= 0x10000 && cp <= 0x10ffff)) && !(cp >= 0xd800 && cp < 0xe000);
      if (!ok) {
        fprintf(f, "\\u%04x", c);
        i++;
        continue;
      }
      fwrite(u + i, 1, k, f);
      i += k;
      continue;
    }
    i++;
  }
  fputc('"', f);
}

/* Whether s[0..len) is valid UTF-8 (no overlongs, surrogates or code
 * points past U+10FFFF). */
static bool valid_utf8(const unsigned char *u, size_t len) {
  for (size_t i = 0; i < len;) {
    unsigned c = u[i];
    if (c < 0x80) {
      i++;
      continue;
    }
    size_t k = c >= 0xc2 && c < 0xe0 ? 2 : c >= 0xe0 && c < 0xf0 ? 3 : c >= 0xf0 && c < 0xf5 ? 4 : 0;
    if (k == 0 || i + k > len) return false;
    uint32_t cp = c & (0x7f >> k);
    for (size_t j = 1; j < k; j++) {
      if ((u[i + j] & 0xc0) != 0x80) return false;
      cp = cp << 6 | (u[i + j] & 0x3f);
    }
    if ((k == 3 && cp < 0x800) || (k == 4 && (cp < 0x10000 || cp > 0x10ffff)) || (cp >= 0xd800 && cp < 0xe000))
      return false;
    i += k;
  }
  return true;
}

/* A string element: a JSON string when it is text (valid UTF-8), else
 * {"base64": "..."} so that bytes and characters can never be confused
 * (the byte 0xE9 and the character U+00E9 would both print as "\u00e9"). */
static void json_bytes(FILE *f, const char *s, size_t len) {
  static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const unsigned char *u = (const unsigned char *)s;
  if (valid_utf8(u, len)) {
    dfx__json_string(f, s, len);
    return;
  }
  fputs("{\"base64\": \"", f);
  for (size_t i = 0; i < len; i += 3) {
    uint32_t v = (uint32_t)u[i] << 16 | (i + 1 < len ? (uint32_t)u[i + 1] << 8 : 0) | (i + 2 < len ? u[i + 2] : 0);
    fputc(b64[v >> 18 & 63], f);
    fputc(b64[v >> 12 & 63], f);
    fputc(i + 1 < len ? b64[v >> 6 & 63] : '=', f);
    fputc(i + 2 < len ? b64[v & 63] : '=', f);
  }
  fputs("\"}", f);
}

static void json_float(FILE *f, double x, bool single) {
  if (isnan(x)) {
    fputs("\"nan\"", f);
    return;
  }
  if (isinf(x)) {
    fputs(x > 0 ? "\"inf\"" : "\"-inf\"", f);
    return;
  }
  char buf[64];
  snprintf(buf, sizeof buf, single ? "%.9g" : "%.17g", x);
  /* %g leaves whole numbers bare ("1"); add ".0" so they read as floats. */
  if (!strpbrk(buf, ".eE")) strcat(buf, ".0");
  fputs(buf, f);
}

static void json_values(FILE *f, const dfx_tensor *t) {
  dfx_dtype dt = dfx_tensor_dtype(t);
  int64_t n = dfx_tensor_count(t);
  fputc('[', f);
  for (int64_t i = 0; i < n; i++) {
    if (i) fputs(", ", f);
    if (dt == DFX_BOOL) {
      fputs(((const uint8_t *)dfx_tensor_data(t))[i] ? "true" : "false", f);
    } else if (dt == DFX_STRING) {
      size_t len;
      const char *s = dfx_tensor_string(t, i, &len);
      json_bytes(f, s, len);
    } else if (dfx__dtype_is_complex(dt)) {
      fputc('[', f);
      json_float(f, elem_f64(t, i), dt == DFX_C64);
      fputs(", ", f);
      json_float(f, elem_imag(t, i), dt == DFX_C64);
      fputc(']', f);
    } else if (dfx__dtype_is_float(dt)) {
      json_float(f, elem_f64(t, i), dt != DFX_F64);
    } else {
      char buf[32];
      fmt_int(t, i, buf, sizeof buf);
      fputs(buf, f);
    }
  }
  fputc(']', f);
}

void dfx__print_json(FILE *f, const char *const *names, dfx_tensor *const *vals, int n) {
  fputs("{\"outputs\": [", f);
  for (int i = 0; i < n; i++) {
    const dfx_tensor *t = vals[i];
    fputs(i ? ", {\"name\": " : "{\"name\": ", f);
    dfx__json_string(f, names[i], strlen(names[i]));
    fprintf(f, ", \"dtype\": \"%s\", \"shape\": [", dfx_dtype_name(dfx_tensor_dtype(t)));
    for (int d = 0; d < dfx_tensor_ndims(t); d++) fprintf(f, "%s%lld", d ? ", " : "", (long long)dfx_tensor_dim(t, d));
    fputs("], \"values\": ", f);
    json_values(f, t);
    fputc('}', f);
  }
  fputs("]}\n", f);
}
