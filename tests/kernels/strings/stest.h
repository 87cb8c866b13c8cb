/* stest.h - helpers shared by the strings family's tests: string tensors
 * from C strings (or bytes with lengths), element checks, a kernel run on a
 * step that has a session resource store, and whole-graph runs through
 * the public API (feeds, fetches and targets on one session). */
#ifndef STEST_H
#define STEST_H

#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "kharness.h"
#include "lib.h"
#include "resmgr.h"
#include "step.h"

/* String tensor of shape dims from NUL-terminated C strings. */
static inline dfx_tensor *st_str(int ndims, const int64_t *dims, const char *const *v) {
  dfx_tensor *t = dfx__tensor_alloc(DFX_STRING, ndims, dims, NULL);
  dfx_str *s = t->data;
  for (int64_t i = 0; i < t->count; i++) {
    s[i].len = strlen(v[i]);
    s[i].ptr = s[i].len ? dfx__malloc(s[i].len) : NULL;
    if (s[i].len) memcpy(s[i].ptr, v[i], s[i].len);
  }
  return t;
}
/* A vector of n C strings. */
static inline dfx_tensor *st_vec(int64_t n, const char *const *v) { return st_str(1, &n, v); }
static inline dfx_tensor *st_scalar(const char *v) { return st_str(0, NULL, &v); }
/* A string scalar of `len` bytes (embedded NULs allowed). */
static inline dfx_tensor *st_bytes(const char *p, size_t len) {
  dfx_tensor *t = dfx__tensor_alloc(DFX_STRING, 0, NULL, NULL);
  dfx_str *s = t->data;
  s->len = len;
  s->ptr = len ? dfx__malloc(len) : NULL;
  if (len) memcpy(s->ptr, p, len);
  return t;
}

/* Whether element i of a string tensor holds exactly `want` (len bytes). */
static inline bool st_is(const dfx_tensor *t, int64_t i, const char *want, size_t len) {
  const dfx_str *s = &((const dfx_str *)t->data)[i];
  return s->len == len && (len == 0 || memcmp(s->ptr, want, len) == 0);
}
/* Checks every element against C strings, naming the first difference. */
#define ST_EXPECT_STRS(t, n, ...)                                                                          \
  do {                                                                                                     \
    const char *want_[] = {__VA_ARGS__};                                                                   \
    cr_assert_eq((t)->dtype, DFX_STRING);                                                                  \
    cr_assert_eq((t)->count, (int64_t)(n), "count %lld, want %d", (long long)(t)->count, (int)(n));      \
    for (int64_t i_ = 0; i_ < (int64_t)(n); i_++) {                                                        \
      const dfx_str *s_ = &((const dfx_str *)(t)->data)[i_];                                               \
      cr_expect(st_is((t), i_, want_[i_], strlen(want_[i_])), "element %lld: got '%.*s', want '%s'",       \
                (long long)i_, (int)s_->len, s_->ptr ? s_->ptr : "", want_[i_]);                         \
    }                                                                                                      \
  } while (0)

/* ---- kernels on a step with a resource store ---- */

static dfx_step st_step;
static dfx_resmgr *st_store;
static char st_err[2048];

static inline void st_setup(void) {
  dfx__step_init(&st_step);
  st_store = dfx__resmgr_new();
  st_step.store = st_store;
}
static inline void st_teardown(void) {
  dfx__step_destroy(&st_step);
  dfx__resmgr_free(st_store);
  st_store = NULL;
  dfx__tensor_cache_flush();
}

/* Runs node n on st_step; outputs in out (caller frees), message in st_err. */
static inline dfx_code st_run(dfx_node *n, dfx_tensor **in, int n_in, dfx_tensor **out) {
  return kh_run_step(n, in, n_in, out, NULL, &st_step, st_err, sizeof st_err);
}

/* ---- whole graphs through a session ---- */

/* Parses "a,b:1" into ports (names point into buf). */
static inline int st_ports(char *buf, dfx_port *ports, int max) {
  int n = 0;
  for (char *save, *tok = strtok_r(buf, ",", &save); tok && n < max; tok = strtok_r(NULL, ",", &save)) {
    char *colon = strrchr(tok, ':');
    ports[n].index = 0;
    if (colon) {
      *colon = 0;
      ports[n].index = atoi(colon + 1);
    }
    ports[n++].node = tok;
  }
  return n;
}

/* One run of session s: feeds (names "x,y" with values), fetches ("a,b:1")
 * into out, targets ("init,t2"). Any list may be NULL or "". */
static inline dfx_code st_srun(dfx_session *s, const char *feeds, dfx_tensor **feed_vals, const char *fetches,
                               dfx_tensor **out, const char *targets, char *msg, size_t msglen) {
  char fb[512] = "", ob[512] = "", tb[512] = "";
  dfx_port fp[16], op[16];
  const char *tn[16];
  int nf = 0, no = 0, nt = 0;
  if (feeds) snprintf(fb, sizeof fb, "%s", feeds), nf = st_ports(fb, fp, 16);
  if (fetches) snprintf(ob, sizeof ob, "%s", fetches), no = st_ports(ob, op, 16);
  if (targets) {
    snprintf(tb, sizeof tb, "%s", targets);
    for (char *save, *tok = strtok_r(tb, ",", &save); tok && nt < 16; tok = strtok_r(NULL, ",", &save)) tn[nt++] = tok;
  }
  dfx_status *st = dfx_status_new();
  dfx_code c = dfx_session_run(s, NULL, fp, feed_vals, nf, op, out, no, tn, nt, st);
  if (msg) snprintf(msg, msglen, "%s", dfx_status_message(st));
  dfx_status_free(st);
  return c;
}

static inline dfx_session *st_session(const dfx_graph *g, int n_threads) {
  dfx_session_options o = {.n_threads = n_threads};
  dfx_session *s = NULL;
  dfx_status *st = dfx_status_new();
  cr_assert_eq(dfx_session_new(g, &o, &s, st), DFX_OK, "%s", dfx_status_message(st));
  dfx_status_free(st);
  return s;
}

/* GraphDef text pieces. */
#define ST_ATTR_S(k, v) " attr { key: \"" k "\" value { s: \"" v "\" } }"
#define ST_ATTR_I(k, v) " attr { key: \"" k "\" value { i: " #v " } }"
#define ST_ATTR_B(k, v) " attr { key: \"" k "\" value { b: " #v " } }"
#define ST_ATTR_T(k, t) " attr { key: \"" k "\" value { type: " t " } }"
#define ST_IN(s) " input: \"" s "\""
/* A string vector Const from a text list of quoted values: "\"a\" \"b\"" (n of them). */
#define ST_CONST_SVEC(name, n, vals)                                                                   \
  "node { name: \"" name "\" op: \"Const\"" ST_ATTR_T("dtype", "DT_STRING")                          \
  " attr { key: \"value\" value { tensor { dtype: DT_STRING tensor_shape { dim { size: " #n " } }"   \
  " string_val: " vals " } } } }\n"
#define ST_CONST_IVEC(name, dt, n, field, vals)                                                       \
  "node { name: \"" name "\" op: \"Const\"" ST_ATTR_T("dtype", dt)                                    \
  " attr { key: \"value\" value { tensor { dtype: " dt " tensor_shape { dim { size: " #n " } }"     \
  " " field ": " vals " } } } }\n"
#define ST_CONST_SCALAR(name, dt, field, val)                                                          \
  "node { name: \"" name "\" op: \"Const\"" ST_ATTR_T("dtype", dt)                                    \
  " attr { key: \"value\" value { tensor { dtype: " dt " tensor_shape {} " field ": " val " } } } }\n"

#endif
