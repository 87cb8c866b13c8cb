/* eutil.c - engine test helpers (see eutil.h). */
#include "eutil.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel.h"
#include "lib.h"
#include "op_registry.h"
#include "tensor.h"

dfx_testalloc eu_alloc;

void eu_setup(void) {
  dfx_status st;
  /* The kernel and op registries are process-wide: build the one, and parse
   * every row the other would parse on first lookup, before counting
   * allocations. */
  cr_assert(dfx__lib_registry(&st) != NULL, "registry: %s", st.msg);
  cr_assert_eq(dfx__op_parse_all(&st), DFX_OK, "op registry: %s", st.msg);
  memset(&eu_alloc, 0, sizeof eu_alloc);
  dfx__testalloc_install(&eu_alloc);
}

/* Criterion does not count a failed assertion in a .fini fixture as a test
 * failure, so a leak aborts the test process instead: the test then shows as
 * crashed and the suite fails. */
void eu_teardown(void) {
  dfx__tensor_cache_flush();
  dfx__testalloc_install(NULL);
  if (eu_alloc.live_blocks != 0) {
    fprintf(stderr, "leak check: %lld blocks (%lld bytes) still allocated at the end of the test\n",
            eu_alloc.live_blocks, eu_alloc.live_bytes);
    abort();
  }
}

dfx_code eu_import(const char *text, char *msg, size_t msglen) {
  dfx_status *st = dfx_status_new();
  dfx_graph *g = NULL;
  dfx_code c = dfx_graph_import(text, strlen(text), &g, st);
  if (msg) snprintf(msg, msglen, "%s", dfx_status_message(st));
  dfx_graph_free(g);
  dfx_status_free(st);
  return c;
}

dfx_graph *eu_graph(const char *text) {
  dfx_status *st = dfx_status_new();
  dfx_graph *g = NULL;
  dfx_code c = dfx_graph_import(text, strlen(text), &g, st);
  cr_assert_eq(c, DFX_OK, "import failed: %s", dfx_status_message(st));
  dfx_status_free(st);
  return g;
}

dfx_code eu_run(const dfx_graph *g, int n_threads, const char *fetches, dfx_tensor **out, const char *feed_name,
                dfx_tensor *feed, char *msg, size_t msglen) {
  dfx_status *st = dfx_status_new();
  dfx_session_options o = {.n_threads = n_threads};
  dfx_session *s = NULL;
  dfx_code c = dfx_session_new(g, &o, &s, st);
  if (c == DFX_OK) {
    char buf[512];
    snprintf(buf, sizeof buf, "%s", fetches);
    dfx_port ports[16];
    int n = 0;
    for (char *save, *tok = strtok_r(buf, ",", &save); tok && n < 16; tok = strtok_r(NULL, ",", &save)) {
      char *colon = strrchr(tok, ':');
      ports[n].index = 0;
      if (colon) {
        *colon = 0;
        ports[n].index = atoi(colon + 1);
      }
      ports[n++].node = tok;
    }
    dfx_port fp = {feed_name, 0};
    if (feed_name && strchr(feed_name, ':')) {
      static char fname[128];
      snprintf(fname, sizeof fname, "%s", feed_name);
      *strrchr(fname, ':') = 0;
      fp.node = fname;
      fp.index = atoi(strrchr(feed_name, ':') + 1);
    }
    c = dfx_session_run(s, NULL, feed_name ? &fp : NULL, feed_name ? &feed : NULL, feed_name ? 1 : 0, ports, out, n,
                        NULL, 0, st);
  }
  if (msg) snprintf(msg, msglen, "%s", dfx_status_message(st));
  dfx_session_free(s);
  dfx_status_free(st);
  return c;
}

int32_t eu_i32(const dfx_tensor *t) {
  cr_assert(t && dfx_tensor_dtype(t) == DFX_I32 && dfx_tensor_count(t) == 1, "expected an int32 scalar");
  return *(const int32_t *)dfx_tensor_data(t);
}

float eu_f32(const dfx_tensor *t) {
  cr_assert(t && dfx_tensor_dtype(t) == DFX_F32 && dfx_tensor_count(t) >= 1, "expected float32");
  return *(const float *)dfx_tensor_data(t);
}
