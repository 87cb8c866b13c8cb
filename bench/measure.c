/* measure.c - timing one benchmark row: engine samples and baseline samples
 * interleaved, so load from other processes hits both alike; min and median
 * over the repetitions. Everything outside the timed region (import, session
 * creation, warm-up, checking) is excluded. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"

double bench_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

dfx_tensor *bench_rand_f32(int64_t rows, int64_t cols, float scale, unsigned seed) {
  int64_t dims[2] = {rows, cols};
  dfx_tensor *t = dfx_tensor_new(DFX_F32, dims, 2);
  if (!t) abort();
  float *p = dfx_tensor_data(t);
  uint32_t s = seed * 2654435761u + 1;
  for (int64_t i = 0; i < rows * cols; i++) {
    s = s * 1664525u + 1013904223u;
    p[i] = scale * ((float)(s >> 8) / (float)(1u << 24) * 2.0f - 1.0f);
  }
  return t;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Compares fetch 0 with the expected values; writes a reason into note. */
static int check(const bench_spec *sp, dfx_tensor *t, char *note, size_t len) {
  if (!sp->expect) return 1;
  if (dfx_tensor_dtype(t) != sp->expect_dtype || dfx_tensor_count(t) != sp->expect_count) {
    snprintf(note, len, "result has dtype %s and %lld elements", dfx_dtype_name(dfx_tensor_dtype(t)),
             (long long)dfx_tensor_count(t));
    return 0;
  }
  const void *got = dfx_tensor_data(t);
  for (int64_t i = 0; i < sp->expect_count; i++) {
    double g = sp->expect_dtype == DFX_I32 ? ((const int32_t *)got)[i] : ((const float *)got)[i];
    double e = sp->expect_dtype == DFX_I32 ? ((const int32_t *)sp->expect)[i] : ((const float *)sp->expect)[i];
    if (!(fabs(g - e) <= sp->tol)) {
      snprintf(note, len, "result[%lld] = %g, baseline %g", (long long)i, g, e);
      return 0;
    }
  }
  return 1;
}

static void free_outs(dfx_tensor **out, int n) {
  for (int i = 0; i < n; i++) dfx_tensor_free(out[i]);
}

/* ---- overlap from the run trace ---- */

typedef struct span {
  int64_t t0, t1;
  int worker;
} span;

typedef struct trace_buf {
  span *v;
  int cap;
  int n; /* atomic */
} trace_buf;

static void on_trace(void *ud, const char *node, const char *op, const char *frame, int64_t iter, int64_t t0,
                     int64_t t1, int worker) {
  trace_buf *tb = ud;
  int i = __atomic_fetch_add(&tb->n, 1, __ATOMIC_RELAXED);
  if (i < tb->cap) tb->v[i] = (span){t0, t1, worker};
}

static int cmp_span(const void *a, const void *b) {
  const span *x = a, *y = b;
  return (x->t0 > y->t0) - (x->t0 < y->t0);
}

/* Runs once with a trace and fills r->overlap and r->workers_used. */
static void measure_overlap(dfx_session *s, const bench_spec *sp, bench_row *r, dfx_status *st) {
  trace_buf tb = {.cap = 1 << 22};
  dfx_tensor *out[BENCH_MAX_FETCH];
  tb.v = malloc(sizeof *tb.v * (size_t)tb.cap);
  if (!tb.v) abort();
  dfx_run_options ro = {.trace = on_trace, .trace_ud = &tb};
  dfx_code c = dfx_session_run(s, &ro, sp->feeds, sp->feed_vals, sp->nfeeds, sp->fetch, out, sp->nfetch, NULL, 0, st);
  if (c == DFX_OK) free_outs(out, sp->nfetch);
  int n = tb.n < tb.cap ? tb.n : tb.cap;
  if (c == DFX_OK && n > 0) {
    qsort(tb.v, (size_t)n, sizeof *tb.v, cmp_span);
    double busy = 0, uni = 0;
    int64_t end = INT64_MIN;
    uint64_t seen = 0;
    for (int i = 0; i < n; i++) {
      const span *p = &tb.v[i];
      busy += (double)(p->t1 - p->t0);
      if (p->t1 > end) {
        uni += (double)(p->t1 - (p->t0 > end ? p->t0 : end));
        end = p->t1;
      }
      seen |= 1ull << (p->worker & 63);
    }
    r->overlap = uni > 0 ? busy / uni : 1;
    r->workers_used = __builtin_popcountll(seen);
  }
  free(tb.v);
}

static dfx_code run_once(dfx_session *s, const bench_spec *sp, dfx_tensor **out, dfx_status *st) {
  return dfx_session_run(s, NULL, sp->feeds, sp->feed_vals, sp->nfeeds, sp->fetch, out, sp->nfetch, NULL, 0, st);
}

bench_row *bench_measure(bench_ctx *bc, const bench_spec *sp) {
  if (bc->nrows == BENCH_MAX_ROWS) abort();
  bench_row *r = &bc->rows[bc->nrows++];
  memset(r, 0, sizeof *r);
  snprintf(r->name, sizeof r->name, "%s", sp->name);
  r->group = sp->group;
  r->units = sp->units;
  r->unit = sp->unit;
  r->threads = sp->threads;
  r->overlap = -1;
  int runs = sp->runs > 0 ? sp->runs : 1;
  fprintf(stderr, "  %-22s", sp->name);
  fflush(stderr);

  dfx_status *st = dfx_status_new();
  dfx_graph *g = NULL;
  dfx_session *s = NULL;
  dfx_tensor *out[BENCH_MAX_FETCH];
  dfx_session_options o = {.n_threads = sp->threads, .optimize = sp->optimize};
  double *eng = calloc((size_t)bc->reps, sizeof *eng), *base = calloc((size_t)bc->reps, sizeof *base);
  if (!st || !eng || !base) abort();
  dfx_code c = dfx_graph_import(sp->text, strlen(sp->text), &g, st);
  if (c == DFX_OK) c = dfx_session_new(g, &o, &s, st);
  if (c == DFX_OK) c = run_once(s, sp, out, st); /* warm-up, and the result check */
  if (c != DFX_OK) {
    snprintf(r->note, sizeof r->note, "%s: %.80s", dfx_code_name(c), dfx_status_message(st));
    fprintf(stderr, "FAILED %s\n", r->note);
    goto done;
  }
  r->ok = check(sp, out[0], r->note, sizeof r->note);
  free_outs(out, sp->nfetch);
  if (sp->base) sp->base(sp->base_ud);
  for (int k = 0; k < bc->reps; k++) {
    double t0 = bench_now_ns();
    for (int i = 0; i < runs && c == DFX_OK; i++) {
      c = run_once(s, sp, out, st);
      if (c == DFX_OK) free_outs(out, sp->nfetch);
    }
    eng[k] = (bench_now_ns() - t0) / sp->units;
    if (c != DFX_OK) {
      snprintf(r->note, sizeof r->note, "%s: %.80s", dfx_code_name(c), dfx_status_message(st));
      r->ok = 0;
      goto done;
    }
    t0 = bench_now_ns();
    if (sp->base) sp->base(sp->base_ud);
    base[k] = (bench_now_ns() - t0) / sp->units;
    fputc('.', stderr);
  }
  r->reps = bc->reps;
  if (sp->trace) measure_overlap(s, sp, r, st);
  r->eng_med = median(eng, bc->reps);
  r->eng_min = eng[0];
  r->base_med = sp->base ? median(base, bc->reps) : NAN;
  r->base_min = sp->base ? base[0] : NAN;
  fprintf(stderr, " %.1f ns/%s%s%s\n", r->eng_med, r->unit, r->ok ? "" : "  CHECK FAILED: ", r->note);
done:
  free(eng);
  free(base);
  dfx_session_free(s);
  dfx_graph_free(g);
  dfx_status_free(st);
  return r;
}

const bench_row *bench_find(const bench_ctx *bc, const char *name) {
  for (int i = 0; i < bc->nrows; i++)
    if (strcmp(bc->rows[i].name, name) == 0 && bc->rows[i].reps > 0) return &bc->rows[i];
  return NULL;
}
