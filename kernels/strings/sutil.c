/* sutil.c - helpers of the strings family (sutil.h), and Fingerprint64:
 * farmhashna::Hash64 as FarmHash describes it (three length classes up to
 * 64 bytes, then a 64-byte block loop over a 56-byte state), checked in
 * tests against published Fingerprint64 values. */
#include "sutil.h"

#include <stdio.h>
#include <string.h>

#include "alloc.h"

bool dfx__s_set(dfx_str *s, const char *p, size_t n) {
  dfx__free(s->ptr);
  s->ptr = NULL;
  s->len = 0;
  if (n == 0) return true;
  if (!(s->ptr = dfx__malloc(n))) return false;
  memcpy(s->ptr, p, n);
  s->len = n;
  return true;
}

dfx_code dfx__s_budget(dfx_kctx *ctx, size_t *total, size_t add, const char *what) {
  size_t lim = dfx__tensor_limit();
  if (add > lim || *total > lim - add)
    return dfx__kctx_fail(ctx, DFX_ELIMIT, "%s would need more than %zu bytes of strings (the tensor byte limit)",
                          what, lim);
  *total += add;
  return DFX_OK;
}

dfx_code dfx__sbuf_add(dfx_kctx *ctx, dfx_sbuf *b, const char *p, size_t n) {
  if (n == 0) return DFX_OK;
  if (n > b->cap - b->len) {
    size_t lim = dfx__tensor_limit();
    if (n > lim || b->len > lim - n)
      return dfx__kctx_fail(ctx, DFX_ELIMIT, "a string of more than %zu bytes (the tensor byte limit)", lim);
    size_t need = b->len + n, nc = b->cap ? b->cap : 64;
    while (nc < need) nc = nc > SIZE_MAX / 2 ? need : nc * 2;
    char *np = dfx__realloc(b->p, nc);
    if (!np) return dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory building a string of %zu bytes", need);
    b->p = np;
    b->cap = nc;
  }
  memcpy(b->p + b->len, p, n);
  b->len += n;
  return DFX_OK;
}

void dfx__sbuf_free(dfx_sbuf *b) {
  dfx__free(b->p);
  *b = (dfx_sbuf){0};
}

const char *dfx__s_tf_type(dfx_dtype t) {
  switch (t) {
    case DFX_F32: return "float";
    case DFX_F64: return "double";
    case DFX_F16: return "half";
    default: break;
  }
  /* Otherwise TF's name is its enum name without DT_, in lower case. */
  static const char *const names[DFX_DTYPE_END_] = {
#define XX(name, num, np, tf, size) [num] = np,
      DFX_DTYPE_MAP(XX)
#undef XX
  };
  return t > 0 && t < DFX_DTYPE_END_ && names[t] ? names[t] : "invalid";
}

dfx_code dfx__s_attr_i32(const dfx_node *n, const char *name, int32_t *out, dfx_status *st) {
  const dfx_attr *a = dfx__node_attr(n, name);
  if (!a || a->kind != DFX_ATTR_I) return dfx__status_set(st, DFX_EINVAL, "missing int attr '%s'", name);
  if (a->v.i < INT32_MIN || a->v.i > INT32_MAX)
    return dfx__status_set(st, DFX_EINVAL, "Attr %s has value %lld out of range for an int32", name,
                           (long long)a->v.i);
  *out = (int32_t)a->v.i;
  return DFX_OK;
}

dfx_str dfx__s_attr_bytes(const dfx_node *n, const char *name) {
  const dfx_attr *a = dfx__node_attr(n, name);
  return a && a->kind == DFX_ATTR_S ? a->v.s : (dfx_str){NULL, 0};
}

/* ---- Fingerprint64 (farmhashna::Hash64) ---- */

static const uint64_t K0 = 0xc3a5c85c97cb3127ULL, K1 = 0xb492b66fbe98f273ULL, K2 = 0x9ae16a3b2f90404fULL;

static uint64_t ld64(const char *p) {
  uint64_t v;
  memcpy(&v, p, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  v = __builtin_bswap64(v);
#endif
  return v;
}
static uint64_t ld32(const char *p) {
  uint32_t v;
  memcpy(&v, p, 4);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  v = __builtin_bswap32(v);
#endif
  return v;
}
static uint64_t rot(uint64_t v, int r) { return (v >> r) | (v << (64 - r)); }
static uint64_t shift_mix(uint64_t v) { return v ^ (v >> 47); }

/* Murmur-style mix of two words with multiplier mul. */
static uint64_t mix16(uint64_t u, uint64_t v, uint64_t mul) {
  uint64_t a = shift_mix((u ^ v) * mul);
  uint64_t b = shift_mix((v ^ a) * mul);
  return b * mul;
}

static uint64_t len0to16(const char *s, size_t len) {
  if (len >= 8) {
    uint64_t mul = K2 + len * 2, a = ld64(s) + K2, b = ld64(s + len - 8);
    uint64_t c = rot(b, 37) * mul + a, d = (rot(a, 25) + b) * mul;
    return mix16(c, d, mul);
  }
  if (len >= 4) {
    uint64_t mul = K2 + len * 2;
    return mix16(len + (ld32(s) << 3), ld32(s + len - 4), mul);
  }
  if (len > 0) {
    uint8_t a = (uint8_t)s[0], b = (uint8_t)s[len >> 1], c = (uint8_t)s[len - 1];
    uint32_t y = (uint32_t)a + ((uint32_t)b << 8), z = (uint32_t)len + ((uint32_t)c << 2);
    return shift_mix(y * K2 ^ z * K0) * K2;
  }
  return K2;
}

static uint64_t len17to32(const char *s, size_t len) {
  uint64_t mul = K2 + len * 2, a = ld64(s) * K1, b = ld64(s + 8), c = ld64(s + len - 8) * mul,
           d = ld64(s + len - 16) * K2;
  return mix16(rot(a + b, 43) + rot(c, 30) + d, a + rot(b + K2, 18) + c, mul);
}

static uint64_t len33to64(const char *s, size_t len) {
  uint64_t mul = K2 + len * 2, a = ld64(s) * K2, b = ld64(s + 8), c = ld64(s + len - 8) * mul,
           d = ld64(s + len - 16) * K2;
  uint64_t y = rot(a + b, 43) + rot(c, 30) + d;
  uint64_t z = mix16(y, a + rot(b + K2, 18) + c, mul);
  uint64_t e = ld64(s + 16) * mul, f = ld64(s + 24), g = (y + ld64(s + len - 32)) * mul,
           h = (z + ld64(s + len - 24)) * mul;
  return mix16(rot(e + f, 43) + rot(g, 30) + h, e + rot(f + a, 18) + g, mul);
}

/* A 16-byte mix of the 32 bytes at s with seeds a and b (out[0], out[1]). */
static void weak32(const char *s, uint64_t a, uint64_t b, uint64_t out[2]) {
  uint64_t w = ld64(s), x = ld64(s + 8), y = ld64(s + 16), z = ld64(s + 24);
  a += w;
  b = rot(b + a + z, 21);
  uint64_t c = a;
  a += x;
  a += y;
  b += rot(a, 44);
  out[0] = a + z;
  out[1] = b + c;
}

uint64_t dfx__s_fingerprint64(const char *s, size_t len) {
  if (len <= 16) return len0to16(s, len);
  if (len <= 32) return len17to32(s, len);
  if (len <= 64) return len33to64(s, len);
  const uint64_t seed = 81;
  uint64_t x = seed, y = seed * K1 + 113, z = shift_mix(y * K2 + 113) * K2, v[2] = {0, 0}, w[2] = {0, 0}, t;
  x = x * K2 + ld64(s);
  /* Whole 64-byte blocks, leaving 1 to 64 bytes, then the last 64 bytes. */
  const char *end = s + ((len - 1) / 64) * 64, *last64 = s + len - 64;
  do {
    x = rot(x + y + v[0] + ld64(s + 8), 37) * K1;
    y = rot(y + v[1] + ld64(s + 48), 42) * K1;
    x ^= w[1];
    y += v[0] + ld64(s + 40);
    z = rot(z + w[0], 33) * K1;
    weak32(s, v[1] * K1, x + w[0], v);
    weak32(s + 32, z + w[1], y + ld64(s + 16), w);
    t = z, z = x, x = t;
    s += 64;
  } while (s != end);
  uint64_t mul = K1 + ((z & 0xff) << 1);
  s = last64;
  w[0] += (len - 1) & 63;
  v[0] += w[0];
  w[0] += v[0];
  x = rot(x + y + v[0] + ld64(s + 8), 37) * mul;
  y = rot(y + v[1] + ld64(s + 48), 42) * mul;
  x ^= w[1] * 9;
  y += v[0] * 9 + ld64(s + 40);
  z = rot(z + w[0], 33) * mul;
  weak32(s, v[1] * mul, x + w[0], v);
  weak32(s + 32, z + w[1], y + ld64(s + 16), w);
  t = z, z = x, x = t;
  return mix16(mix16(v[0], w[0], mul) + shift_mix(y) * K0 + z, mix16(v[1], w[1], mul) + x, mul);
}
