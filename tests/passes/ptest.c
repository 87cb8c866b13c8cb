/* ptest.c - see ptest.h. */
#include "ptest.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eutil.h"
#include "lib.h"
#include "pass.h"

/* Splits "a:1,b" into ports pointing into buf. */
static int split_ports(char *buf, size_t cap, const char *list, dfx_port *out) {
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

void pt_optimize(pt_case *t, const char *text, const char *passes, const char *fetches, const char *feeds,
                 const char *targets) {
  memset(t, 0, sizeof *t);
  t->before = eu_graph(text);
  t->n_fetches = split_ports(t->fetch_buf, sizeof t->fetch_buf, fetches, t->fetches);
  t->n_feeds = split_ports(t->feed_buf, sizeof t->feed_buf, feeds, t->feeds);
  dfx_port tp[8];
  t->n_targets = split_ports(t->target_buf, sizeof t->target_buf, targets, tp);
  for (int i = 0; i < t->n_targets; i++) t->targets[i] = tp[i].node;
  dfx_status st;
  dfx__status_clear(&st);
  const dfx_registry *reg = dfx__lib_registry(&st);
  cr_assert(reg, "%s", st.msg);
  dfx_pass_ports ports = {t->feeds, t->fetches, t->n_feeds, t->n_fetches, t->targets, t->n_targets};
  dfx_pass_report rep;
  dfx_code c = dfx__passes_optimized_copy(t->before, passes, &ports, reg, &t->after, &rep, &st);
  cr_assert_eq(c, DFX_OK, "optimising with '%s': %s", passes, st.msg);
  for (int i = 0; i < rep.n_rows; i++) {
    t->removed += rep.rows[i].counts.removed;
    t->added += rep.rows[i].counts.added;
    t->rewritten += rep.rows[i].counts.rewritten;
  }
  dfx__pass_report_free(&rep);
}

void pt_free(pt_case *t) {
  dfx_graph_free(t->before);
  dfx_graph_free(t->after);
}

bool pt_has(const dfx_graph *g, const char *name) { return dfx_graph_node_find(g, name) >= 0; }

const char *pt_op(const dfx_graph *g, const char *name) {
  const char *op = dfx_graph_node_op(g, dfx_graph_node_find(g, name));
  return op ? op : "";
}

int pt_count(const dfx_graph *g) { return dfx_graph_node_count(g); }

static dfx_code run(const pt_case *t, const dfx_graph *g, const float *feed_vals, dfx_tensor **out, char *msg,
                    size_t n) {
  dfx_status *st = dfx_status_new();
  dfx_session_options so = {.n_threads = 2, .optimize = "none"};
  dfx_session *s = NULL;
  dfx_tensor *feeds[8] = {NULL};
  dfx_code c = dfx_session_new(g, &so, &s, st);
  for (int i = 0; i < t->n_feeds && c == DFX_OK; i++) {
    feeds[i] = dfx_tensor_new(DFX_F32, NULL, 0);
    cr_assert(feeds[i]);
    *(float *)dfx_tensor_data(feeds[i]) = feed_vals[i];
  }
  if (c == DFX_OK)
    c = dfx_session_run(s, NULL, t->feeds, feeds, t->n_feeds, t->fetches, out, t->n_fetches, t->targets,
                        t->n_targets, st);
  snprintf(msg, n, "%s", dfx_status_message(st));
  for (int i = 0; i < t->n_feeds; i++) dfx_tensor_free(feeds[i]);
  dfx_session_free(s);
  dfx_status_free(st);
  return c;
}

dfx_code pt_same_outputs(const pt_case *t, const float *feed_vals) {
  dfx_tensor *a[8] = {NULL}, *b[8] = {NULL};
  char ma[512], mb[512];
  dfx_code ca = run(t, t->before, feed_vals, a, ma, sizeof ma);
  dfx_code cb = run(t, t->after, feed_vals, b, mb, sizeof mb);
  cr_assert_eq(cb, ca, "before: %s / after: %s", ma, mb);
  for (int i = 0; ca == DFX_OK && i < t->n_fetches; i++) {
    cr_assert_eq(dfx_tensor_dtype(a[i]), dfx_tensor_dtype(b[i]), "fetch %d dtype", i);
    cr_assert_eq(dfx_tensor_ndims(a[i]), dfx_tensor_ndims(b[i]), "fetch %d rank", i);
    for (int d = 0; d < dfx_tensor_ndims(a[i]); d++)
      cr_assert_eq(dfx_tensor_dim(a[i], d), dfx_tensor_dim(b[i], d), "fetch %d dim %d", i, d);
    cr_assert_eq(dfx_tensor_nbytes(a[i]), dfx_tensor_nbytes(b[i]));
    cr_assert(memcmp(dfx_tensor_data(a[i]), dfx_tensor_data(b[i]), dfx_tensor_nbytes(a[i])) == 0,
              "fetch '%s:%d' differs after optimisation", t->fetches[i].node, t->fetches[i].index);
  }
  for (int i = 0; i < t->n_fetches; i++) {
    dfx_tensor_free(a[i]);
    dfx_tensor_free(b[i]);
  }
  return ca;
}
