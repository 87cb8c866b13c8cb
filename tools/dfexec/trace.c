/* trace.c - records the engine's per-node trace callbacks and turns them
 * into --stats tables and --trace Chrome trace files. The callback runs on
 * worker threads, so `mu` guards the event array; everything else is read
 * only after dfx_session_run has returned. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

typedef struct event {
  const char *node, *op, *frame; /* the engine's strings, valid while the session lives */
  int64_t iter, t0, t1;
  int worker;
} event;

typedef struct acc {
  int64_t count, ns, iters; /* iters: highest iteration seen + 1 (frames only) */
} acc;

struct dfx_trace {
  const dfx_graph *g;
  pthread_mutex_t mu; /* guards ev, n, cap, oom during a run */
  event *ev;
  size_t n, cap;
  bool oom;
  acc *by_node;  /* accumulated over runs, per node id */
  acc *by_frame; /* per static frame index */
};

static void on_trace(void *ud, const char *node, const char *op, const char *frame, int64_t iter, int64_t t0,
                     int64_t t1, int worker) {
  dfx_trace *tr = ud;
  pthread_mutex_lock(&tr->mu);
  if (tr->n == tr->cap) {
    size_t nc = tr->cap ? tr->cap * 2 : 1024;
    event *ne = realloc(tr->ev, nc * sizeof *ne);
    if (!ne) {
      tr->oom = true;
      pthread_mutex_unlock(&tr->mu);
      return;
    }
    tr->ev = ne;
    tr->cap = nc;
  }
  tr->ev[tr->n++] = (event){node, op, frame, iter, t0, t1, worker};
  pthread_mutex_unlock(&tr->mu);
}

dfx_trace *dfx__trace_new(const dfx_graph *g) {
  dfx_trace *tr = calloc(1, sizeof *tr);
  if (!tr) return NULL;
  tr->g = g;
  tr->by_node = calloc((size_t)g->n_nodes + 1, sizeof *tr->by_node);
  tr->by_frame = calloc((size_t)g->n_frames + 1, sizeof *tr->by_frame);
  if (!tr->by_node || !tr->by_frame || pthread_mutex_init(&tr->mu, NULL) != 0) {
    free(tr->by_node);
    free(tr->by_frame);
    free(tr);
    return NULL;
  }
  return tr;
}

void dfx__trace_free(dfx_trace *tr) {
  if (!tr) return;
  pthread_mutex_destroy(&tr->mu);
  free(tr->ev);
  free(tr->by_node);
  free(tr->by_frame);
  free(tr);
}

void dfx__trace_attach(dfx_trace *tr, dfx_run_options *ro) {
  tr->n = 0;
  ro->trace = on_trace;
  ro->trace_ud = tr;
}

void dfx__trace_accumulate(dfx_trace *tr) {
  for (size_t i = 0; i < tr->n; i++) {
    const event *e = &tr->ev[i];
    /* The session runs tr->g as it is (the CLI optimises beforehand), so
     * every traced node is one of its nodes. */
    int id = dfx_graph_node_find(tr->g, e->node);
    if (id < 0) continue;
    acc *a = &tr->by_node[id];
    a->count++;
    a->ns += e->t1 - e->t0;
    acc *f = &tr->by_frame[tr->g->nodes[id].frame];
    f->count++;
    f->ns += e->t1 - e->t0;
    if (e->iter + 1 > f->iters) f->iters = e->iter + 1;
  }
}

typedef struct op_row {
  const char *op;
  int64_t count, ns, nodes;
} op_row;

static int by_time(const void *a, const void *b) {
  const op_row *x = a, *y = b;
  if (x->ns != y->ns) return x->ns < y->ns ? 1 : -1;
  return strcmp(x->op, y->op);
}

void dfx__trace_print_stats(dfx_trace *tr, FILE *f, int runs) {
  const dfx_graph *g = tr->g;
  op_row *rows = calloc((size_t)g->n_nodes + 1, sizeof *rows);
  int n = 0;
  int64_t total = 0, calls = 0;
  if (!rows) {
    dfx__cli_error("out of memory printing statistics");
    return;
  }
  for (int i = 0; i < g->n_nodes; i++) {
    const acc *a = &tr->by_node[i];
    if (!a->count) continue;
    int r = 0;
    while (r < n && strcmp(rows[r].op, g->nodes[i].op) != 0) r++;
    if (r == n) rows[n++].op = g->nodes[i].op;
    rows[r].count += a->count;
    rows[r].ns += a->ns;
    rows[r].nodes++;
    total += a->ns;
    calls += a->count;
  }
  qsort(rows, (size_t)n, sizeof *rows, by_time);
  fprintf(f, "per-op statistics (%d run%s, %lld node executions, %.3f ms in kernels):\n", runs,
          runs == 1 ? "" : "s", (long long)calls, (double)total / 1e6);
  fprintf(f, "  %-28s %6s %10s %12s %10s %6s\n", "op", "nodes", "calls", "total ms", "mean us", "%");
  for (int r = 0; r < n; r++)
    fprintf(f, "  %-28s %6lld %10lld %12.3f %10.3f %6.1f\n", rows[r].op, (long long)rows[r].nodes,
            (long long)rows[r].count, (double)rows[r].ns / 1e6, (double)rows[r].ns / 1e3 / (double)rows[r].count,
            total ? 100.0 * (double)rows[r].ns / (double)total : 0.0);
  fprintf(f, "per-frame statistics:\n");
  fprintf(f, "  %-28s %10s %10s %12s\n", "frame", "iterations", "calls", "total ms");
  for (int i = 0; i < g->n_frames; i++) {
    const acc *a = &tr->by_frame[i];
    if (!a->count) continue;
    fprintf(f, "  %-28s %10lld %10lld %12.3f\n", i == 0 ? "(root)" : g->frames[i].name,
            (long long)(i == 0 ? 1 : a->iters), (long long)a->count, (double)a->ns / 1e6);
  }
  if (tr->oom) fprintf(f, "  (some events were lost: out of memory)\n");
  free(rows);
}

/* Chrome's trace event format: one complete ("X") event per node execution,
 * times in microseconds; chrome://tracing and Perfetto both load it. */
bool dfx__trace_write_chrome(dfx_trace *tr, const char *path, char *err, size_t errn) {
  FILE *f = fopen(path, "w");
  if (!f) {
    snprintf(err, errn, "cannot create '%s'", path);
    return false;
  }
  fputs("{\"displayTimeUnit\": \"ns\", \"traceEvents\": [\n", f);
  fputs("{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": 0, \"args\": {\"name\": \"dfexec\"}}", f);
  for (size_t i = 0; i < tr->n; i++) {
    const event *e = &tr->ev[i];
    fputs(",\n{\"name\": ", f);
    dfx__json_string(f, e->node, strlen(e->node));
    fputs(", \"cat\": ", f);
    dfx__json_string(f, e->op, strlen(e->op));
    fprintf(f, ", \"ph\": \"X\", \"ts\": %.3f, \"dur\": %.3f, \"pid\": 1, \"tid\": %d, \"args\": {\"op\": ",
            (double)e->t0 / 1e3, (double)(e->t1 - e->t0) / 1e3, e->worker);
    dfx__json_string(f, e->op, strlen(e->op));
    fputs(", \"frame\": ", f);
    const char *fr = e->frame ? e->frame : "";
    dfx__json_string(f, fr, strlen(fr));
    fprintf(f, ", \"iter\": %lld}}", (long long)e->iter);
  }
  fputs("\n]}\n", f);
  bool ok = !ferror(f);
  if (fclose(f) != 0) ok = false;
  if (!ok) snprintf(err, errn, "error writing '%s'", path);
  return ok;
}
