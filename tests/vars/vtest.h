/* vtest.h - helpers for the variable tests: a graph from text, a session on
 * it, runs by tensor name, and the leak-checking fixture. */
#ifndef VTEST_H
#define VTEST_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "dfexec.h"
#include "lib.h"
#include "op_registry.h"
#include "tensor.h"

#define VT_TYPE(k, t) " attr { key: \"" k "\" value { type: " t " } }"
#define VT_SHAPE1(k, n) " attr { key: \"" k "\" value { shape { dim { size: " #n " } } } }"
#define VT_IN(s) " input: \"" s "\""
/* A VariableV2 of float [n]. */
#define VT_VAR(name, n) "node { name: \"" name "\" op: \"VariableV2\"" VT_TYPE("dtype", "DT_FLOAT") VT_SHAPE1("shape", n) " }\n"
#define VT_FVEC(name, vals)                                                                              \
  "node { name: \"" name "\" op: \"Const\"" VT_TYPE("dtype", "DT_FLOAT")                                 \
  " attr { key: \"value\" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 3 } } float_val: " \
  vals " } } } }\n"
#define VT_PH(name, t) "node { name: \"" name "\" op: \"Placeholder\"" VT_TYPE("dtype", t) " }\n"
#define VT_OP2(name, op, a, b, t) "node { name: \"" name "\" op: \"" op "\"" VT_IN(a) VT_IN(b) VT_TYPE("T", t) " }\n"

typedef struct vt {
  dfx_graph *g;
  dfx_session *s;
  dfx_status *st;
} vt;

static dfx_testalloc vt_alloc;
static inline void vt_setup(void) {
  dfx_status st;
  cr_assert(dfx__lib_registry(&st) != NULL, "registry: %s", st.msg);
  cr_assert_eq(dfx__op_parse_all(&st), DFX_OK, "op registry: %s", st.msg);
  memset(&vt_alloc, 0, sizeof vt_alloc);
  dfx__testalloc_install(&vt_alloc);
}
static inline void vt_teardown(void) {
  dfx__tensor_cache_flush();
  dfx__testalloc_install(NULL);
  if (vt_alloc.live_blocks != 0) {
    fprintf(stderr, "leak check: %lld blocks (%lld bytes) still allocated\n", vt_alloc.live_blocks,
            vt_alloc.live_bytes);
    abort();
  }
}

static inline vt vt_open(const char *text, int threads) {
  vt c = {NULL, NULL, dfx_status_new()};
  cr_assert_eq(dfx_graph_import(text, strlen(text), &c.g, c.st), DFX_OK, "%s", dfx_status_message(c.st));
  dfx_session_options o = {.n_threads = threads};
  cr_assert_eq(dfx_session_new(c.g, &o, &c.s, c.st), DFX_OK, "%s", dfx_status_message(c.st));
  return c;
}
static inline void vt_close(vt *c) {
  dfx_session_free(c->s);
  dfx_graph_free(c->g);
  dfx_status_free(c->st);
}

/* Runs targets (comma-free names) and fetches one tensor (NULL: none).
 * Feeds one float tensor when feed is not NULL. Returns the code. */
static inline dfx_code vt_run(vt *c, const char *feed, dfx_tensor *fv, const char *fetch, dfx_tensor **out,
                              const char *target) {
  dfx_port fp = {feed, 0}, op = {fetch, 0};
  const char *tg[1] = {target};
  if (out) *out = NULL;
  return dfx_session_run(c->s, NULL, &fp, &fv, feed ? 1 : 0, &op, out, fetch ? 1 : 0, tg, target ? 1 : 0, c->st);
}

/* Fetches a float tensor and copies n values to v; fails the test on error. */
static inline void vt_fetch_f32(vt *c, const char *name, float *v, int n) {
  dfx_tensor *t = NULL;
  cr_assert_eq(vt_run(c, NULL, NULL, name, &t, NULL), DFX_OK, "%s: %s", name, dfx_status_message(c->st));
  cr_assert_eq(dfx_tensor_count(t), n, "%s has %lld elements", name, (long long)dfx_tensor_count(t));
  memcpy(v, dfx_tensor_data(t), sizeof(float) * (size_t)n);
  dfx_tensor_free(t);
}

static inline dfx_tensor *vt_vec(const float *v, int n) {
  int64_t d = n;
  dfx_tensor *t = dfx_tensor_new(DFX_F32, &d, 1);
  memcpy(dfx_tensor_data(t), v, sizeof(float) * (size_t)n);
  return t;
}

#endif
