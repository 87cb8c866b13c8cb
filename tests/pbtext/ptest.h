/* ptest.h - fixture and helpers shared by the protobuf text format tests.
 * Every test runs under the counting allocator, and protobuf-c allocates
 * through it too, so the fixture's final check proves nothing leaks, on the
 * error paths as much as on success. Each test file declares its own suite
 * with setup/teardown from here. */
#ifndef PTEST_H
#define PTEST_H

#include <criterion/criterion.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "graph.pb-c.h"
#include "pbtext.h"
#include "status.h"

/* ---- fixture and helpers ---- */

static dfx_testalloc g_ta;
static dfx_status g_st;

static inline void *pa_alloc(void *ud, size_t n) { return dfx__malloc(n); }
static inline void pa_free(void *ud, void *p) { dfx__free(p); }
static ProtobufCAllocator g_pa = {pa_alloc, pa_free, NULL};

static inline void setup(void) {
  memset(&g_ta, 0, sizeof g_ta);
  dfx__testalloc_install(&g_ta);
  dfx__status_clear(&g_st);
}

/* A failed assertion in .fini does not fail a Criterion test, so a leak
 * aborts the test process instead. */
static inline void teardown(void) {
  dfx__testalloc_install(NULL);
  if (g_ta.live_blocks != 0) {
    fprintf(stderr, "leak check: %lld blocks (%lld bytes) still allocated\n", g_ta.live_blocks, g_ta.live_bytes);
    abort();
  }
}


/* Returns the file's bytes in a malloc'd buffer; fails the test if missing. */
static inline char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  cr_assert(f, "cannot open %s", path);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *b = malloc((size_t)n + 1);
  cr_assert(b);
  cr_assert_eq(fread(b, 1, (size_t)n, f), (size_t)n);
  b[n] = 0;
  fclose(f);
  *len = (size_t)n;
  return b;
}

/* A file of the external conformance corpus (tests/meson.build finds it);
 * skips the calling test, visibly, when the corpus is absent. */
static inline void conf_path(char *out, size_t n, const char *sub, const char *name) {
  const char *root = getenv("DFX_CONFORMANCE_DIR");
  if (!root || !*root) cr_skip_test("no conformance corpus (configure with -Dconformance_dir=DIR)");
  snprintf(out, n, "%s/%s/%s", root, sub, name);
}

static inline ProtobufCMessage *parse_ok(const ProtobufCMessageDescriptor *d, const char *text) {
  ProtobufCMessage *m = NULL;
  dfx_code rc = dfx__pbtext_parse(d, text, strlen(text), &g_pa, &m, &g_st);
  cr_assert_eq(rc, DFX_OK, "%s: %s", dfx_code_name(rc), g_st.msg);
  cr_assert(m);
  return m;
}

static inline char *print_ok(const ProtobufCMessage *m) {
  char *s = NULL;
  size_t n = 0;
  dfx_code rc = dfx__pbtext_print(m, &s, &n, &g_st);
  cr_assert_eq(rc, DFX_OK, "%s: %s", dfx_code_name(rc), g_st.msg);
  cr_assert_eq(strlen(s), n);
  return s;
}

/* Packs into a malloc'd buffer (test memory, outside the counted allocator). */
static inline uint8_t *pack(const ProtobufCMessage *m, size_t *len) {
  *len = protobuf_c_message_get_packed_size(m);
  uint8_t *b = malloc(*len + 1);
  cr_assert_eq(protobuf_c_message_pack(m, b), *len);
  return b;
}

static inline void free_msg(ProtobufCMessage *m) { protobuf_c_message_free_unpacked(m, &g_pa); }

/* Prints m, parses the text back, and checks that both pack to the same
 * bytes and that printing the copy gives the same text. */
static inline void check_round_trip(const ProtobufCMessage *m) {
  char *text = print_ok(m);
  ProtobufCMessage *m2 = parse_ok(m->descriptor, text);
  size_t n1, n2;
  uint8_t *b1 = pack(m, &n1), *b2 = pack(m2, &n2);
  cr_assert_eq(n1, n2, "packed sizes differ: %zu vs %zu", n1, n2);
  cr_assert(!memcmp(b1, b2, n1), "packed bytes differ after print/parse");
  char *text2 = print_ok(m2);
  cr_assert_str_eq(text, text2);
  free(b1);
  free(b2);
  dfx__free(text);
  dfx__free(text2);
  free_msg(m2);
}

/* Parses text expecting failure with `code`, a message starting with `pos`
 * ("line:col") and containing `needle`. */
static inline void expect_error(const ProtobufCMessageDescriptor *d, const char *text, dfx_code code, const char *pos,
                         const char *needle) {
  ProtobufCMessage *m = (ProtobufCMessage *)1;
  dfx_code rc = dfx__pbtext_parse(d, text, strlen(text), &g_pa, &m, &g_st);
  cr_expect_eq(rc, code, "got %s (%s) for <<%s>>", dfx_code_name(rc), g_st.msg, text);
  cr_expect_null(m);
  char want[32];
  snprintf(want, sizeof want, "%s: ", pos);
  cr_expect_eq(strncmp(g_st.msg, want, strlen(want)), 0, "message '%s' does not start with '%s'", g_st.msg, want);
  if (needle) cr_expect(strstr(g_st.msg, needle), "message '%s' lacks '%s'", g_st.msg, needle);
}

static inline const Tensorflow__NodeDef *find_node(const Tensorflow__GraphDef *g, const char *name) {
  for (size_t i = 0; i < g->n_node; i++)
    if (!strcmp(g->node[i]->name, name)) return g->node[i];
  cr_assert_fail("no node %s", name);
  return NULL;
}

static inline const Tensorflow__AttrValue *find_attr(const Tensorflow__NodeDef *n, const char *key) {
  for (size_t i = 0; i < n->n_attr; i++)
    if (!strcmp(n->attr[i]->key, key)) return n->attr[i]->value;
  cr_assert_fail("node %s has no attr %s", n->name, key);
  return NULL;
}

/* Parses <corpus>/tf-text/<name>.pbtxt; fails the test if it does not (skips without a corpus). */
static inline Tensorflow__GraphDef *load_tf_text(const char *name) {
  char path[1024], file[256];
  size_t len;
  snprintf(file, sizeof file, "%s.pbtxt", name);
  conf_path(path, sizeof path, "tf-text", file);
  char *text = slurp(path, &len);
  ProtobufCMessage *m = NULL;
  dfx_code rc = dfx__pbtext_parse(&tensorflow__graph_def__descriptor, text, len, &g_pa, &m, &g_st);
  free(text);
  cr_assert_eq(rc, DFX_OK, "%s: %s", name, g_st.msg);
  return (Tensorflow__GraphDef *)m;
}

#endif
