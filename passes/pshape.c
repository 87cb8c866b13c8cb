/* pshape.c - partial shapes (shapes.h): building, comparing, merging,
 * relaxing and broadcasting them, and dim arithmetic that keeps an unknown
 * dim unknown. Every function accepts any pshape, including ones a bad
 * graph produced, and never reads past dims[DFX_MAX_DIMS - 1]. */
#include <stdio.h>

#include "shapes.h"

dfx_pshape dfx__pshape_unknown(void) { return (dfx_pshape){.rank = -1}; }

dfx_pshape dfx__pshape_of_rank(int r) {
  dfx_pshape s = {.rank = r >= 0 && r <= DFX_MAX_DIMS ? r : -1};
  for (int i = 0; i < s.rank; i++) s.dims[i] = DFX_DIM_UNKNOWN;
  return s;
}

dfx_pshape dfx__pshape_make(int r, const int64_t *dims) {
  dfx_pshape s = dfx__pshape_of_rank(r);
  for (int i = 0; i < s.rank; i++) s.dims[i] = dims[i] >= 0 ? dims[i] : DFX_DIM_UNKNOWN;
  return s;
}

dfx_pshape dfx__pshape_scalar(void) { return (dfx_pshape){.rank = 0}; }

dfx_pshape dfx__pshape_vector(int64_t d) {
  dfx_pshape s = {.rank = 1};
  s.dims[0] = d >= 0 ? d : DFX_DIM_UNKNOWN;
  return s;
}

bool dfx__pshape_known(const dfx_pshape *s) {
  if (s->rank < 0) return false;
  for (int i = 0; i < s->rank; i++)
    if (s->dims[i] < 0) return false;
  return true;
}

int64_t dfx__pshape_count(const dfx_pshape *s) {
  if (s->rank < 0) return -1;
  int64_t n = 1;
  bool unknown = false;
  for (int i = 0; i < s->rank; i++) {
    if (s->dims[i] == 0) return 0;
    if (s->dims[i] < 0) unknown = true;
    else if (!unknown && __builtin_mul_overflow(n, s->dims[i], &n)) unknown = true;
  }
  return unknown ? -1 : n;
}

bool dfx__dim_merge(int64_t a, int64_t b, int64_t *out) {
  if (a >= 0 && b >= 0 && a != b) return false;
  *out = a >= 0 ? a : b;
  return true;
}

bool dfx__pshape_compatible(const dfx_pshape *a, const dfx_pshape *b) {
  dfx_pshape tmp;
  return dfx__pshape_merge(a, b, &tmp);
}

bool dfx__pshape_equal(const dfx_pshape *a, const dfx_pshape *b) {
  if (a->rank != b->rank) return false;
  for (int i = 0; i < a->rank; i++)
    if (a->dims[i] != b->dims[i]) return false;
  return true;
}

bool dfx__pshape_merge(const dfx_pshape *a, const dfx_pshape *b, dfx_pshape *out) {
  if (a->rank < 0 || b->rank < 0) {
    *out = a->rank < 0 ? *b : *a;
    return true;
  }
  if (a->rank != b->rank) return false;
  dfx_pshape m = {.rank = a->rank};
  for (int i = 0; i < a->rank; i++)
    if (!dfx__dim_merge(a->dims[i], b->dims[i], &m.dims[i])) return false;
  *out = m;
  return true;
}

void dfx__pshape_relax(dfx_pshape *a, const dfx_pshape *b) {
  if (a->rank != b->rank || b->rank < 0) {
    *a = dfx__pshape_unknown();
    return;
  }
  for (int i = 0; i < a->rank; i++)
    if (a->dims[i] != b->dims[i]) a->dims[i] = DFX_DIM_UNKNOWN;
}

bool dfx__pshape_with_rank(const dfx_pshape *s, int r, dfx_pshape *out) {
  if (r < 0 || r > DFX_MAX_DIMS) return false;
  if (s->rank < 0) {
    *out = dfx__pshape_of_rank(r);
    return true;
  }
  if (s->rank != r) return false;
  *out = *s;
  return true;
}

/* One broadcast dim given that the op succeeds: a known dim other than 1
 * wins (the other must be 1 or equal), a 1 yields the other. */
static bool broadcast_dim(int64_t x, int64_t y, int64_t *out) {
  if (x >= 0 && y >= 0) {
    if (x == y || y == 1) *out = x;
    else if (x == 1) *out = y;
    else return false;
  } else if (x == 1) {
    *out = y;
  } else if (y == 1) {
    *out = x;
  } else {
    *out = x >= 0 ? x : y; /* both unknown: unknown */
  }
  return true;
}

bool dfx__pshape_broadcast(const dfx_pshape *a, const dfx_pshape *b, dfx_pshape *out) {
  if (a->rank < 0 || b->rank < 0) {
    *out = dfx__pshape_unknown();
    return true;
  }
  int r = a->rank > b->rank ? a->rank : b->rank;
  dfx_pshape o = {.rank = r};
  for (int i = 0; i < r; i++) {
    int ia = i - (r - a->rank), ib = i - (r - b->rank);
    int64_t x = ia >= 0 ? a->dims[ia] : 1, y = ib >= 0 ? b->dims[ib] : 1;
    if (!broadcast_dim(x, y, &o.dims[i])) return false;
  }
  *out = o;
  return true;
}

int64_t dfx__dim_add(int64_t a, int64_t b) {
  int64_t r;
  if (a < 0 || b < 0 || __builtin_add_overflow(a, b, &r)) return DFX_DIM_UNKNOWN;
  return r;
}

int64_t dfx__dim_mul(int64_t a, int64_t b) {
  int64_t r;
  if (a == 0 || b == 0) return 0;
  if (a < 0 || b < 0 || __builtin_mul_overflow(a, b, &r)) return DFX_DIM_UNKNOWN;
  return r;
}

const char *dfx__pshape_str(const dfx_pshape *s, char *buf, size_t n) {
  if (n == 0) return buf;
  if (s->rank < 0) {
    snprintf(buf, n, "?");
    return buf;
  }
  size_t o = (size_t)snprintf(buf, n, "[");
  for (int i = 0; i < s->rank && o < n; i++) {
    if (s->dims[i] < 0) o += (size_t)snprintf(buf + o, n - o, "%s?", i ? "," : "");
    else o += (size_t)snprintf(buf + o, n - o, "%s%lld", i ? "," : "", (long long)s->dims[i]);
  }
  if (o < n) snprintf(buf + o, n - o, "]");
  return buf;
}
