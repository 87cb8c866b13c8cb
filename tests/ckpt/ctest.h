/* ctest.h - shared helpers of the checkpoint tests: the leak-checking
 * fixture, a fresh temporary directory per test, the TF-written fixtures
 * under ../shared/checkpoints (tests skip, visibly, when absent) and small
 * file edits for the corruption tests. */
#ifndef CTEST_H
#define CTEST_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc.h"
#include "dfexec.h"
#include "lib.h"
#include "op_registry.h"
#include "tensor.h"

static dfx_testalloc ct_alloc;
static char ct_dir[256];

static inline void ct_setup(void) {
  dfx_status st;
  cr_assert(dfx__lib_registry(&st) != NULL, "registry: %s", st.msg);
  cr_assert_eq(dfx__op_parse_all(&st), DFX_OK, "op registry: %s", st.msg);
  snprintf(ct_dir, sizeof ct_dir, "/tmp/dfx_ckpt_XXXXXX");
  cr_assert(mkdtemp(ct_dir) != NULL);
  memset(&ct_alloc, 0, sizeof ct_alloc);
  dfx__testalloc_install(&ct_alloc);
}
static inline void ct_teardown(void) {
  dfx__tensor_cache_flush();
  dfx__testalloc_install(NULL);
  char cmd[512];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", ct_dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", ct_dir);
  if (ct_alloc.live_blocks != 0) {
    fprintf(stderr, "leak check: %lld blocks (%lld bytes) still allocated\n", ct_alloc.live_blocks,
            ct_alloc.live_bytes);
    abort();
  }
}

/* path = ct_dir/name */
static inline const char *ct_path(char *buf, size_t n, const char *name) {
  snprintf(buf, n, "%s/%s", ct_dir, name);
  return buf;
}

/* The shared TF-written fixture file `rel` (under checkpoints/), or skip. */
static inline const char *ct_shared(char *buf, size_t n, const char *rel) {
  const char *root = getenv("DFX_SOURCE_ROOT");
  snprintf(buf, n, "%s/../shared/checkpoints/%s", root ? root : ".", rel);
  return buf;
}
static inline void ct_need(const char *path) {
  if (access(path, R_OK) != 0) cr_skip_test("TF-written fixture %s is absent", path);
}

/* Reads/writes a whole file (test-side, plain malloc). */
static inline unsigned char *ct_slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  cr_assert(f, "cannot open %s", path);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *b = malloc((size_t)n + 1);
  cr_assert(fread(b, 1, (size_t)n, f) == (size_t)n);
  fclose(f);
  *len = (size_t)n;
  return b;
}
static inline void ct_spit(const char *path, const void *b, size_t len) {
  FILE *f = fopen(path, "wb");
  cr_assert(f, "cannot write %s", path);
  cr_assert(len == 0 || fwrite(b, 1, len, f) == len);
  fclose(f);
}

#endif
