/* case_run.c - running one case in the current process.
 * Load the graph, open a fresh session, feed every placeholder, fetch every
 * output and compare. Everything is freed before returning, so a crash in
 * teardown is still seen by the runner as this case's crash. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "case.h"
#include "compare.h"
#include "file.h"
#include "values.h"
#include "dist_run.h"

/* The op of the fetched node, for "mismatch: <op>" groups. */
static const char *fetch_op(const dfx_graph *g, const char *name) {
  const char *op = dfx_graph_node_op(g, dfx_graph_node_find(g, name));
  return op ? op : "?";
}

int case_make_feeds(const char *dir, const case_def *c, const dfx_graph *g, dfx_port *ports, dfx_tensor **vals,
                      outcome *o) {
  char err[256] = "";
  for (int i = 0; i < c->n_feeds; i++) {
    const case_tensor *f = &c->feeds[i];
    dfx_dtype dt = f->dtype;
    ports[i] = (dfx_port){ f->name, f->index };
    if (dt == DFX_INVALID) {
      /* dtype null: the placeholder's own output type. */
      int node = dfx_graph_node_find(g, f->name);
      dt = node >= 0 ? dfx_graph_node_output_dtype(g, node, f->index) : DFX_INVALID;
      if (dt == DFX_INVALID) {
        outcome_add_reason(o, "error: feed node not in graph");
        outcome_add_detail(o, "feed '%s:%d' is not in the graph", f->name, f->index);
        return -1;
      }
    }
    values v;
    char *path = file_join(dir, f->values);
    int rc = path ? values_load(path, dt == DFX_STRING, &v, err, sizeof err) : -1;
    free(path);
    if (rc == 0) {
      vals[i] = values_to_tensor(&v, dt, f->dims, f->ndims, err, sizeof err);
      values_free(&v);
    }
    if (rc != 0 || !vals[i]) {
      outcome_add_reason(o, "error: bad feed values");
      outcome_add_detail(o, "feed '%s:%d': %s", f->name, f->index, *err ? err : "out of memory");
      return -1;
    }
  }
  return 0;
}

/* Compares fetch i against its values file; adds reasons on a difference.
 * Returns 1 when values differ (worth tracing), else 0. */
static int check_fetch(const char *dir, const case_def *c, const dfx_graph *g, int i, const dfx_tensor *got,
                        outcome *o) {
  const case_tensor *f = &c->fetches[i];
  char err[256] = "";
  values want;
  int as_strings = f->dtype == DFX_STRING || (f->dtype == DFX_INVALID && dfx_tensor_dtype(got) == DFX_STRING);
  char *path = file_join(dir, f->values);
  int rc = path ? values_load(path, as_strings, &want, err, sizeof err) : -1;
  free(path);
  if (rc != 0) {
    outcome_add_reason(o, "error: bad expected values");
    outcome_add_detail(o, "fetch '%s:%d': %s", f->name, f->index, *err ? err : "out of memory");
    return 0;
  }
  compare_result r;
  switch (compare_tensor(got, f->dtype, f->dims, f->ndims, &want, c->random, &r)) {
  case COMPARE_OK: break;
  case COMPARE_DTYPE: outcome_add_reason(o, "dtype mismatch"); break;
  case COMPARE_SHAPE: outcome_add_reason(o, "shape mismatch"); break;
  case COMPARE_VALUE: outcome_add_reason(o, "mismatch: %s", fetch_op(g, f->name)); break;
  case COMPARE_ERROR: outcome_add_reason(o, "error: bad expected values"); break;
  }
  if (r.kind != COMPARE_OK) outcome_add_detail(o, "fetch '%s:%d' (%s): %s", f->name, f->index, fetch_op(g, f->name), r.msg);
  values_free(&want);
  return r.kind == COMPARE_VALUE;
}

/* Replaces *g by its optimised form after a round trip through the
 * GraphDef wire format. */
static dfx_code via_graphdef(const char *passes, const dfx_port *feeds, int n_feeds, const dfx_port *fetches,
                             int n_fetches, dfx_graph **g, dfx_status *st) {
  dfx_optimize_options oo = { .passes = passes, .feeds = feeds, .n_feeds = n_feeds, .fetches = fetches,
                              .n_fetches = n_fetches };
  dfx_graph *og = NULL, *back = NULL;
  void *buf = NULL;
  size_t len = 0;
  dfx_code code = dfx_graph_optimize(*g, &oo, &og, NULL, st);
  if (code == DFX_OK) code = dfx_graph_serialize(og, 0, &buf, &len, st);
  if (code == DFX_OK) code = dfx_graph_import(buf, len, &back, st);
  dfx_free(buf);
  dfx_graph_free(og);
  if (code != DFX_OK) return code;
  dfx_graph_free(*g);
  *g = back;
  return DFX_OK;
}

void case_run(const char *dir, const case_cfg *cfg, outcome *o) {
  case_def c;
  dfx_graph *g = NULL;
  dfx_session *s = NULL;
  dfx_status *st = dfx_status_new();
  dfx_port *feeds = NULL, *fetches = NULL;
  dfx_tensor **feed_vals = NULL, **fetch_vals = NULL;
  char err[256] = "";
  char *graph_path = NULL;
  dfx_code code;

  memset(o, 0, sizeof *o);
  if (case_load(dir, &c, err, sizeof err) != 0) {
    outcome_add_reason(o, "error: bad case.json");
    outcome_add_detail(o, "%s", err);
    goto fail;
  }
  if (!st || !(graph_path = file_join(dir, c.graph))) {
    outcome_add_reason(o, "error: out of memory");
    goto fail;
  }
  if ((code = dfx_graph_load(graph_path, &g, st)) != DFX_OK) {
    /* The loader names the file first; the path would split every group. */
    const char *msg = dfx_status_message(st);
    size_t plen = strlen(graph_path);
    if (!strncmp(msg, graph_path, plen) && !strncmp(msg + plen, ": ", 2)) msg += plen + 2;
    outcome_from_error(o, code, msg);
    goto fail;
  }
  feeds = calloc((size_t)c.n_feeds + 1, sizeof *feeds);
  feed_vals = calloc((size_t)c.n_feeds + 1, sizeof *feed_vals);
  fetches = calloc((size_t)c.n_fetches, sizeof *fetches);
  fetch_vals = calloc((size_t)c.n_fetches, sizeof *fetch_vals);
  if (!feeds || !feed_vals || !fetches || !fetch_vals) {
    outcome_add_reason(o, "error: out of memory");
    goto fail;
  }
  if (case_make_feeds(dir, &c, g, feeds, feed_vals, o) != 0) goto fail;
  for (int i = 0; i < c.n_fetches; i++) fetches[i] = (dfx_port){ c.fetches[i].name, c.fetches[i].index };
  if (cfg->via_graphdef && (code = via_graphdef(cfg->optimize, feeds, c.n_feeds, fetches, c.n_fetches, &g, st)) != DFX_OK) {
    outcome_from_error(o, code, dfx_status_message(st));
    goto fail;
  }
  dfx_session_options so = { .n_threads = cfg->threads, .optimize = cfg->via_graphdef ? "none" : cfg->optimize };
  dfx_run_options ro = { .timeout_sec = cfg->timeout };
  if (cfg->tasks > 0) { /* partitioned: every task a thread of this process */
    dfx_dist_options dopt = { .n_tasks = cfg->tasks, .random_seed = (unsigned)cfg->random_seed,
                              .n_threads = cfg->threads, .only_task = -1 };
    code = dfx__dist_run_local(g, &dopt, &ro, feeds, feed_vals, c.n_feeds, fetches, fetch_vals, c.n_fetches, NULL, 0, st);
    if (code != DFX_OK) {
      outcome_from_error(o, code, dfx_status_message(st));
      goto fail;
    }
    for (int i = 0; i < c.n_fetches; i++) check_fetch(dir, &c, g, i, fetch_vals[i], o);
    o->pass = o->n_reasons == 0;
    goto fail;
  }
  if ((code = dfx_session_new(g, &so, &s, st)) != DFX_OK) {
    outcome_from_error(o, code, dfx_status_message(st));
    goto fail;
  }
  code = dfx_session_run(s, &ro, feeds, feed_vals, c.n_feeds, fetches, fetch_vals, c.n_fetches, NULL, 0, st);
  if (code != DFX_OK) {
    outcome_from_error(o, code, dfx_status_message(st));
    goto fail;
  }
  int mismatched = 0;
  for (int i = 0; i < c.n_fetches; i++) mismatched |= check_fetch(dir, &c, g, i, fetch_vals[i], o);
  if (mismatched) case_trace(dir, &c, g, s, cfg, feeds, feed_vals, o);
  o->pass = o->n_reasons == 0;
fail:
  for (int i = 0; feed_vals && i < c.n_feeds; i++) dfx_tensor_free(feed_vals[i]);
  for (int i = 0; fetch_vals && i < c.n_fetches; i++) dfx_tensor_free(fetch_vals[i]);
  free(feeds);
  free(feed_vals);
  free(fetches);
  free(fetch_vals);
  dfx_session_free(s);
  dfx_graph_free(g);
  dfx_status_free(st);
  free(graph_path);
  case_free(&c);
}
