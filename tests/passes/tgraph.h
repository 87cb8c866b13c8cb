/* tgraph.h - GraphDef text with tensor constants, for the pass tests whose
 * graphs hold filters and batch-norm parameters (fold_batchnorm, remap),
 * and runs of such graphs with tensor feeds, compared bit for bit or
 * within a tolerance. gtext.h's macros write scalar graphs; these write
 * into a growing buffer, so shapes and values can be chosen at run time. */
#ifndef TGRAPH_H
#define TGRAPH_H

#include <criterion/criterion.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dfexec.h"

typedef struct tg {
  char *s;
  size_t n, cap;
  unsigned seed;
} tg;

static inline void tg_printf(tg *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline void tg_printf(tg *b, const char *fmt, ...) {
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(b->s ? b->s + b->n : NULL, b->s ? b->cap - b->n : 0, fmt, ap);
    va_end(ap);
    if (b->s && (size_t)k < b->cap - b->n) {
      b->n += (size_t)k;
      return;
    }
    b->cap = (b->cap + (size_t)k + 1) * 2;
    b->s = realloc(b->s, b->cap);
    cr_assert(b->s);
  }
}

static inline void tg_free(tg *b) { free(b->s); }

static inline float tg_rand(tg *b, float lo, float hi) {
  b->seed = b->seed * 1103515245u + 12345u;
  return lo + (hi - lo) * (float)((b->seed >> 8) & 0xffff) / 65535.0f;
}

/* Inputs "a,b:1,^c" as input lines. */
static inline void tg_inputs(tg *b, const char *inputs) {
  char buf[512];
  snprintf(buf, sizeof buf, "%s", inputs ? inputs : "");
  for (char *save, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) tg_printf(b, " input: \"%s\"", t);
}

/* A float Const of random values in [lo, hi] (or `vals` when not NULL);
 * `inputs` may add control inputs ("^p"). */
static inline void tg_const(tg *b, const char *name, int nd, const int64_t *dims, float lo, float hi,
                            const float *vals, const char *inputs) {
  int64_t n = 1;
  tg_printf(b, "node { name: \"%s\" op: \"Const\"", name);
  tg_inputs(b, inputs);
  tg_printf(b, " attr { key: \"dtype\" value { type: DT_FLOAT } } attr { key: \"value\" value { tensor {"
               " dtype: DT_FLOAT tensor_shape {");
  for (int i = 0; i < nd; i++) tg_printf(b, " dim { size: %lld }", (long long)dims[i]), n *= dims[i];
  tg_printf(b, " }");
  for (int64_t i = 0; i < n; i++) tg_printf(b, " float_val: %.9g", vals ? vals[i] : tg_rand(b, lo, hi));
  tg_printf(b, " } } } }\n");
}

static inline void tg_placeholder(tg *b, const char *name) {
  tg_printf(b, "node { name: \"%s\" op: \"Placeholder\" attr { key: \"dtype\" value { type: DT_FLOAT } } }\n", name);
}

/* A node with T float and raw attr text `attrs` (may be ""). */
static inline void tg_node(tg *b, const char *name, const char *op, const char *inputs, const char *attrs) {
  tg_printf(b, "node { name: \"%s\" op: \"%s\"", name, op);
  tg_inputs(b, inputs);
  tg_printf(b, " attr { key: \"T\" value { type: DT_FLOAT } } %s }\n", attrs ? attrs : "");
}

#define TG_LIST4(k, a, b_, c, d) \
  " attr { key: \"" k "\" value { list { i: " #a " i: " #b_ " i: " #c " i: " #d " } } }"
#define TG_STR(k, v) " attr { key: \"" k "\" value { s: \"" v "\" } }"
#define TG_BOOL(k, v) " attr { key: \"" k "\" value { b: " #v " } }"
#define TG_FLOAT(k, v) " attr { key: \"" k "\" value { f: " #v " } }"
#define TG_CONV(pad, fmt) TG_LIST4("strides", 1, 1, 1, 1) TG_STR("padding", pad) TG_STR("data_format", fmt)

/* A random float tensor (values in [lo, hi]). */
static inline dfx_tensor *tg_tensor(tg *b, int nd, const int64_t *dims, float lo, float hi) {
  dfx_tensor *t = dfx_tensor_new(DFX_F32, dims, nd);
  cr_assert(t);
  float *p = dfx_tensor_data(t);
  for (int64_t i = 0; i < dfx_tensor_count(t); i++) p[i] = tg_rand(b, lo, hi);
  return t;
}

static inline int tg_ports(char *buf, size_t cap, const char *list, dfx_port *out) {
  int n = 0;
  snprintf(buf, cap, "%s", list ? list : "");
  for (char *save, *tok = strtok_r(buf, ",", &save); tok && n < 8; tok = strtok_r(NULL, ",", &save)) {
    char *colon = strrchr(tok, ':');
    out[n].index = colon ? atoi(colon + 1) : 0;
    if (colon) *colon = 0;
    out[n++].node = tok;
  }
  return n;
}

/* Runs `fetches` on g unoptimised, feeding the comma list `feeds` with
 * vals; out[i] are new tensors. Returns the run's code. */
static inline dfx_code tg_run(const dfx_graph *g, const char *feeds, dfx_tensor **vals, const char *fetches,
                              dfx_tensor **out) {
  char fb[256], pb[256];
  dfx_port fp[8], pp[8];
  int nf = tg_ports(fb, sizeof fb, feeds, fp), np = tg_ports(pb, sizeof pb, fetches, pp);
  dfx_status *st = dfx_status_new();
  dfx_session_options so = {.n_threads = 2, .optimize = "none"};
  dfx_session *s = NULL;
  dfx_code c = dfx_session_new(g, &so, &s, st);
  if (c == DFX_OK) c = dfx_session_run(s, NULL, fp, vals, nf, pp, out, np, NULL, 0, st);
  dfx_session_free(s);
  dfx_status_free(st);
  return c;
}

/* Runs both graphs with the same feeds and compares every fetch: bit for
 * bit when tol is 0, else |a - b| <= tol * (1 + |a|). */
static inline void tg_same(const dfx_graph *before, const dfx_graph *after, const char *feeds, dfx_tensor **vals,
                           const char *fetches, double tol) {
  dfx_tensor *a[8] = {0}, *b[8] = {0};
  cr_assert_eq(tg_run(before, feeds, vals, fetches, a), DFX_OK, "run before");
  cr_assert_eq(tg_run(after, feeds, vals, fetches, b), DFX_OK, "run after");
  char pb[256];
  dfx_port pp[8];
  int np = tg_ports(pb, sizeof pb, fetches, pp);
  for (int i = 0; i < np; i++) {
    cr_assert_eq(dfx_tensor_count(a[i]), dfx_tensor_count(b[i]), "fetch %s: element count", pp[i].node);
    cr_assert_eq(dfx_tensor_ndims(a[i]), dfx_tensor_ndims(b[i]));
    const float *x = dfx_tensor_data(a[i]), *y = dfx_tensor_data(b[i]);
    for (int64_t k = 0; k < dfx_tensor_count(a[i]); k++)
      if (tol == 0)
        cr_assert(memcmp(&x[k], &y[k], sizeof(float)) == 0, "fetch %s [%lld]: %.9g before, %.9g after", pp[i].node,
                  (long long)k, x[k], y[k]);
      else
        cr_assert(fabs((double)x[k] - y[k]) <= tol * (1 + fabs((double)x[k])), "fetch %s [%lld]: %.9g before, %.9g after",
                  pp[i].node, (long long)k, x[k], y[k]);
    dfx_tensor_free(a[i]);
    dfx_tensor_free(b[i]);
  }
}

#endif
