/* cmd_bench.c - `dfexec bench GRAPH`: measure a user's own graph the way
 * onnxruntime_perf_test does. Warm-up runs first (plans, caches, buffer
 * pools), then timed runs on one session, `--concurrency C` of them in flight
 * at once (C threads sharing the session: throughput), until --runs or
 * --duration is reached. Placeholders the fetches need and --feed does not
 * give get random values of their dtype and shape (unknown dims become 1),
 * reproducible with --seed. Reports per-run latency min/p50/p90/p99/max and
 * runs per second, as text or JSON. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "dtype.h"

static const char bench_help[] =
    "usage: dfexec bench GRAPH [options]\n"
    "\n"
    "Times runs of a GraphDef on one session: warm-up, then per-run latency\n"
    "(min, p50, p90, p99, max) and runs per second. Placeholders that are needed\n"
    "and not fed get random values of their dtype and shape (unknown dims are 1).\n"
    "\n"
    "  --feed NAME[:K]=VALUE   as for `dfexec run` (literal or @FILE.npy)\n"
    "  --fetch NAME[:K]        tensors to fetch (default: the graph's outputs)\n"
    "  --target NODE           nodes to run for their effect\n"
    "  --warmup N              untimed runs first (default 5)\n"
    "  --runs N                timed runs (default 100)\n"
    "  --duration S            time runs for S seconds instead of a count\n"
    "  --threads N             session worker threads (default: number of cores)\n"
    "  --concurrency C         runs in flight at once, from C threads (default 1)\n"
    "  --optimize LIST         graph optimisation: default, none, or passes\n"
    "  --seed N                seed for the random feeds and for unseeded random ops\n"
    "  --format text|json      output format (default text)\n"
    "  --help                  this help\n"
    "\n"
    "JSON: {\"runs\", \"concurrency\", \"threads\", \"seconds\", \"runs_per_second\",\n"
    "\"latency_ms\": {\"min\", \"p50\", \"p90\", \"p99\", \"max\", \"mean\"}}.\n"
    "Exit status: 0 success, 1 graph, input or run error, 2 usage error.\n";

typedef struct bench_args {
  const char *graph, *optimize;
  char **feed_args, **fetch_args, **targets;
  int n_feeds, n_fetches, n_targets;
  long long warmup, runs, threads, concurrency, seed;
  double duration;
  bool json, has_seed;
} bench_args;

enum { B_FEED = 256, B_FETCH, B_TARGET, B_WARMUP, B_RUNS, B_DURATION, B_THREADS, B_CONC, B_OPT, B_SEED, B_FORMAT,
       B_HELP };

static const struct option bench_opts[] = {
    {"feed", required_argument, NULL, B_FEED},         {"fetch", required_argument, NULL, B_FETCH},
    {"target", required_argument, NULL, B_TARGET},     {"warmup", required_argument, NULL, B_WARMUP},
    {"runs", required_argument, NULL, B_RUNS},         {"duration", required_argument, NULL, B_DURATION},
    {"threads", required_argument, NULL, B_THREADS},   {"concurrency", required_argument, NULL, B_CONC},
    {"optimize", required_argument, NULL, B_OPT},      {"seed", required_argument, NULL, B_SEED},
    {"format", required_argument, NULL, B_FORMAT},     {"help", no_argument, NULL, B_HELP},
    {NULL, 0, NULL, 0}};

static int parse_args(int argc, char **argv, bench_args *a) {
  a->feed_args = calloc((size_t)argc, sizeof(char *));
  a->fetch_args = calloc((size_t)argc, sizeof(char *));
  a->targets = calloc((size_t)argc, sizeof(char *));
  if (!a->feed_args || !a->fetch_args || !a->targets) {
    dfx__cli_error("out of memory");
    return DFX_EXIT_ERROR;
  }
  a->warmup = 5;
  a->runs = 100;
  a->concurrency = 1;
  opterr = 0;
  optind = 1;
  int c;
  char *end;
  while ((c = getopt_long(argc, argv, ":h", bench_opts, NULL)) != -1) {
    switch (c) {
    case B_FEED: a->feed_args[a->n_feeds++] = optarg; break;
    case B_FETCH: a->fetch_args[a->n_fetches++] = optarg; break;
    case B_TARGET: a->targets[a->n_targets++] = optarg; break;
    case B_WARMUP:
      if (!dfx__cli_parse_int(optarg, &a->warmup) || a->warmup > 1000000)
        return dfx__cli_usage("bench", "--warmup needs a number from 0 to 1000000, not '%s'", optarg);
      break;
    case B_RUNS:
      if (!dfx__cli_parse_int(optarg, &a->runs) || a->runs < 1 || a->runs > 100000000)
        return dfx__cli_usage("bench", "--runs needs a positive number, not '%s'", optarg);
      break;
    case B_DURATION:
      errno = 0;
      a->duration = strtod(optarg, &end);
      if (errno || *end || end == optarg || !(a->duration > 0) || a->duration > 1e6)
        return dfx__cli_usage("bench", "--duration needs a positive number of seconds, not '%s'", optarg);
      break;
    case B_THREADS:
      if (!dfx__cli_parse_int(optarg, &a->threads) || a->threads > 1024)
        return dfx__cli_usage("bench", "--threads needs a number from 0 to 1024, not '%s'", optarg);
      break;
    case B_CONC:
      if (!dfx__cli_parse_int(optarg, &a->concurrency) || a->concurrency < 1 || a->concurrency > 256)
        return dfx__cli_usage("bench", "--concurrency needs a number from 1 to 256, not '%s'", optarg);
      break;
    case B_OPT: {
      char bad[64];
      if (!dfx__cli_passes_valid(optarg, bad, sizeof bad)) return dfx__cli_bad_passes("bench", "--optimize", bad);
      a->optimize = optarg;
      break;
    }
    case B_SEED:
      if (!dfx__cli_parse_int(optarg, &a->seed))
        return dfx__cli_usage("bench", "--seed needs a non-negative integer, not '%s'", optarg);
      a->has_seed = true;
      break;
    case B_FORMAT:
      if (strcmp(optarg, "json") == 0) a->json = true;
      else if (strcmp(optarg, "text") == 0) a->json = false;
      else return dfx__cli_usage("bench", "--format must be 'text' or 'json', not '%s'", optarg);
      break;
    case 'h':
    case B_HELP: fputs(bench_help, stdout); return DFX_EXIT_OK;
    case ':': return dfx__cli_usage("bench", "option '%s' needs a value", argv[optind - 1]);
    default: return dfx__cli_usage("bench", "unknown option '%s'", argv[optind - 1]);
    }
  }
  if (optind >= argc) return dfx__cli_usage("bench", "missing GRAPH");
  if (optind + 1 < argc) return dfx__cli_usage("bench", "unexpected argument '%s'", argv[optind + 1]);
  a->graph = argv[optind];
  return -1;
}

static double now_sec(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* SplitMix64: a small, good generator for the random feeds. */
static uint64_t next_rand(uint64_t *x) {
  uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* A random tensor for placeholder n: floats uniform in [0, 1), integers in
 * [0, 10), booleans fair, strings "0".."9"; unknown dims (and an unknown
 * rank: a scalar) become 1. NULL for dtypes it cannot make. */
static dfx_tensor *random_feed(const dfx_node *n, uint64_t *rng, char *err, size_t errn) {
  const dfx_attr *dt_attr = dfx__node_attr(n, "dtype");
  dfx_dtype dt = dt_attr ? dt_attr->v.type : DFX_INVALID;
  const dfx_shape *sh = dfx__attr_shape(n, "shape");
  int nd = sh && sh->rank > 0 ? sh->rank : 0;
  int64_t dims[DFX_MAX_DIMS];
  for (int d = 0; d < nd; d++) dims[d] = sh->dims[d] < 0 ? 1 : sh->dims[d];
  dfx_tensor *t = dfx_tensor_new(dt, dims, nd);
  if (!t) {
    snprintf(err, errn, "cannot make a random %s tensor for placeholder '%s'; give it with --feed",
             dfx_dtype_name(dt), n->name);
    return NULL;
  }
  int64_t count = dfx_tensor_count(t);
  void *p = dfx_tensor_data(t);
  for (int64_t i = 0; i < count; i++) {
    uint64_t r = next_rand(rng);
    double u = (double)(r >> 11) * 0x1.0p-53;
    switch (dt) {
    case DFX_F32: ((float *)p)[i] = (float)u; break;
    case DFX_F64: ((double *)p)[i] = u; break;
    case DFX_F16: ((uint16_t *)p)[i] = dfx__f32_to_f16((float)u); break;
    case DFX_BF16: ((uint16_t *)p)[i] = dfx__f32_to_bf16((float)u); break;
    case DFX_I32: ((int32_t *)p)[i] = (int32_t)(r % 10); break;
    case DFX_I64: ((int64_t *)p)[i] = (int64_t)(r % 10); break;
    case DFX_U8: ((uint8_t *)p)[i] = (uint8_t)(r % 10); break;
    case DFX_I8: ((int8_t *)p)[i] = (int8_t)(r % 10); break;
    case DFX_I16: ((int16_t *)p)[i] = (int16_t)(r % 10); break;
    case DFX_U16: ((uint16_t *)p)[i] = (uint16_t)(r % 10); break;
    case DFX_BOOL: ((uint8_t *)p)[i] = (uint8_t)(r & 1); break;
    case DFX_STRING: {
      char c = (char)('0' + r % 10);
      if (dfx_tensor_set_string(t, i, &c, 1) != DFX_OK) goto bad;
      break;
    }
    default: goto bad;
    }
  }
  return t;
bad:
  dfx_tensor_free(t);
  snprintf(err, errn, "cannot make a random %s tensor for placeholder '%s'; give it with --feed",
           dfx_dtype_name(dt), n->name);
  return NULL;
}

/* What every bench thread shares. */
typedef struct bench_ctx {
  dfx_session *s;
  const dfx_port *feeds, *fetches;
  dfx_tensor *const *feed_vals;
  int n_feeds, n_fetches, n_targets;
  const char *const *targets;
  long long runs;        /* timed runs to make, or -1 with a deadline */
  double deadline;       /* now_sec() past which no timed run starts (duration mode) */
  long long next;        /* atomic: runs handed out */
  double *lat;           /* one slot per run (runs mode) or growing (duration mode, per thread) */
  pthread_mutex_t mu;    /* guards the first error */
  dfx_code code;
  char msg[1024];
} bench_ctx;

typedef struct bench_thread {
  bench_ctx *b;
  double *lat;           /* duration mode: this thread's latencies */
  long long n, cap;
} bench_thread;

static bool one_run(bench_ctx *b, dfx_status *st, double *secs) {
  dfx_tensor **out = calloc((size_t)b->n_fetches + 1, sizeof *out);
  if (!out) return false;
  double t0 = now_sec();
  dfx_code c = dfx_session_run(b->s, NULL, b->feeds, b->feed_vals, b->n_feeds, b->fetches, out, b->n_fetches,
                               b->targets, b->n_targets, st);
  *secs = now_sec() - t0;
  for (int i = 0; i < b->n_fetches; i++) dfx_tensor_free(out[i]);
  free(out);
  if (c != DFX_OK) {
    pthread_mutex_lock(&b->mu);
    if (b->code == DFX_OK) {
      b->code = c;
      snprintf(b->msg, sizeof b->msg, "%s", dfx_status_message(st));
    }
    pthread_mutex_unlock(&b->mu);
    return false;
  }
  return true;
}

static void *bench_worker(void *arg) {
  bench_thread *t = arg;
  bench_ctx *b = t->b;
  dfx_status *st = dfx_status_new();
  if (!st) return NULL;
  for (;;) {
    if (__atomic_load_n(&b->code, __ATOMIC_RELAXED) != DFX_OK) break;
    long long k = __atomic_fetch_add(&b->next, 1, __ATOMIC_RELAXED);
    if (b->runs >= 0 ? k >= b->runs : now_sec() >= b->deadline) break;
    double secs;
    if (!one_run(b, st, &secs)) break;
    if (b->runs >= 0) {
      b->lat[k] = secs;
    } else {
      if (t->n == t->cap) {
        long long nc = t->cap ? t->cap * 2 : 1024;
        double *nl = realloc(t->lat, sizeof *nl * (size_t)nc);
        if (!nl) break;
        t->lat = nl;
        t->cap = nc;
      }
      t->lat[t->n++] = secs;
    }
  }
  dfx_status_free(st);
  return NULL;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of sorted v[0..n). */
static double pct(const double *v, long long n, double p) {
  long long k = (long long)ceil(p / 100.0 * (double)n) - 1;
  return v[k < 0 ? 0 : k >= n ? n - 1 : k];
}

int dfx__cmd_bench(int argc, char **argv) {
  bench_args a = {0};
  int rc = parse_args(argc, argv, &a);
  dfx_status *st = dfx_status_new();
  dfx_graph *g = NULL;
  dfx_session *s = NULL;
  dfx_cli_port *cports = NULL, *fports = NULL;
  dfx_port *feeds = NULL, *fetches = NULL;
  dfx_tensor **feed_vals = NULL;
  bool *fed = NULL, *needed = NULL;
  int *roots = NULL, n_feeds = 0, n_fetches = 0, n_cports = 0;
  double *lat = NULL;
  bench_thread *th = NULL;
  pthread_t *tids = NULL;
  bench_ctx b = {.code = DFX_OK};
  bool mu_ok = false;
  if (rc >= 0) goto done;
  rc = DFX_EXIT_ERROR;
  if (!st) goto oom;
  if (dfx_graph_load(a.graph, &g, st) != DFX_OK) {
    dfx__cli_error("%s", dfx_status_message(st));
    goto done;
  }
  if (!dfx__cli_apply_seed(&g, a.has_seed, a.seed, st)) goto done;
  /* Feeds as given, then random values for the needed placeholders left. */
  int max_feeds = a.n_feeds + g->n_nodes;
  cports = calloc((size_t)max_feeds + 1, sizeof *cports);
  feeds = calloc((size_t)max_feeds + 1, sizeof *feeds);
  feed_vals = calloc((size_t)max_feeds + 1, sizeof *feed_vals);
  fed = calloc((size_t)g->n_nodes + 1, 1);
  needed = calloc((size_t)g->n_nodes + 1, 1);
  if (!cports || !feeds || !feed_vals || !fed || !needed) goto oom;
  for (; n_feeds < a.n_feeds; n_feeds++) {
    int k = n_feeds;
    n_cports = k + 1; /* its port name may need freeing, even on failure */
    if ((rc = dfx__feed_parse(g, a.feed_args[k], &cports[k], &feed_vals[k])) != DFX_EXIT_OK) goto done;
    feeds[k] = (dfx_port){cports[k].node, cports[k].index};
    fed[dfx__graph_find(g, cports[k].node, (size_t)-1)] = true;
  }
  rc = DFX_EXIT_ERROR;
  if (a.n_fetches || a.n_targets) {
    if (!(fports = calloc((size_t)a.n_fetches + 1, sizeof *fports))) goto oom;
    for (; n_fetches < a.n_fetches; n_fetches++)
      if (!dfx__port_parse(a.fetch_args[n_fetches], strlen(a.fetch_args[n_fetches]), &fports[n_fetches])) {
        rc = dfx__cli_usage("bench", "--fetch '%s': expected NAME[:K]", a.fetch_args[n_fetches]);
        goto done;
      }
  } else if (!(fports = dfx__graph_outputs(g, &n_fetches))) {
    goto oom;
  }
  if (!(fetches = calloc((size_t)n_fetches + 1, sizeof *fetches))) goto oom;
  if (!(roots = calloc((size_t)(n_fetches + a.n_targets) + 1, sizeof *roots))) goto oom;
  for (int i = 0; i < n_fetches; i++) fetches[i] = (dfx_port){fports[i].node, fports[i].index};
  if (!dfx__cli_roots(g, fports, n_fetches, a.targets, a.n_targets, roots)) goto done;
  dfx__graph_needed(g, roots, n_fetches + a.n_targets, fed, needed);
  uint64_t rng = (uint64_t)a.seed * 0x2545F4914F6CDD1Dull + 1;
  for (int i = 0; i < g->n_nodes; i++) {
    if (!needed[i] || fed[i] || !dfx__node_is_placeholder(&g->nodes[i])) continue;
    char err[256];
    if (!(feed_vals[n_feeds] = random_feed(&g->nodes[i], &rng, err, sizeof err))) {
      dfx__cli_error("%s", err);
      goto done;
    }
    feeds[n_feeds++] = (dfx_port){g->nodes[i].name, 0};
  }

  dfx_session_options so = {.n_threads = (int)a.threads, .optimize = a.optimize};
  if (dfx_session_new(g, &so, &s, st) != DFX_OK) {
    dfx__cli_error("%s", dfx_status_message(st));
    goto done;
  }
  b = (bench_ctx){.s = s, .feeds = feeds, .fetches = fetches, .feed_vals = feed_vals, .n_feeds = n_feeds,
                  .n_fetches = n_fetches, .n_targets = a.n_targets, .targets = (const char *const *)a.targets,
                  .code = DFX_OK};
  if (pthread_mutex_init(&b.mu, NULL) != 0) goto oom;
  mu_ok = true;
  /* Warm-up, one at a time: the first run of a signature plans it. */
  for (long long i = 0; i < a.warmup; i++) {
    double secs;
    if (!one_run(&b, st, &secs)) {
      dfx__cli_error("warm-up run %lld: %s", i + 1, b.msg);
      goto done;
    }
  }
  b.runs = a.duration > 0 ? -1 : a.runs;
  if (b.runs > 0 && !(lat = calloc((size_t)b.runs, sizeof *lat))) goto oom;
  b.lat = lat;
  int nt = (int)a.concurrency;
  th = calloc((size_t)nt, sizeof *th);
  tids = calloc((size_t)nt, sizeof *tids);
  if (!th || !tids) goto oom;
  double t0 = now_sec();
  b.deadline = t0 + a.duration;
  int started = 0;
  for (; started < nt; started++) {
    th[started].b = &b;
    if (pthread_create(&tids[started], NULL, bench_worker, &th[started]) != 0) break;
  }
  for (int i = 0; i < started; i++) pthread_join(tids[i], NULL);
  double wall = now_sec() - t0;
  if (started == 0) {
    dfx__cli_error("cannot start a benchmark thread");
    goto done;
  }
  if (b.code != DFX_OK) {
    dfx__cli_error("%s", b.msg);
    goto done;
  }
  long long n = b.runs;
  if (b.runs < 0) { /* duration mode: gather the threads' latencies */
    n = 0;
    for (int i = 0; i < started; i++) n += th[i].n;
    if (n == 0) {
      dfx__cli_error("no run finished within --duration %g s", a.duration);
      goto done;
    }
    if (!(lat = malloc(sizeof *lat * (size_t)n))) goto oom;
    long long o = 0;
    for (int i = 0; i < started; i++) {
      if (th[i].n) memcpy(lat + o, th[i].lat, sizeof *lat * (size_t)th[i].n);
      o += th[i].n;
    }
  }
  qsort(lat, (size_t)n, sizeof *lat, cmp_double);
  double sum = 0;
  for (long long i = 0; i < n; i++) sum += lat[i];
  double ms[6] = {lat[0] * 1e3, pct(lat, n, 50) * 1e3, pct(lat, n, 90) * 1e3, pct(lat, n, 99) * 1e3,
                  lat[n - 1] * 1e3, sum / (double)n * 1e3};
  int threads = a.threads > 0 ? (int)a.threads : 0;
  if (a.json) {
    printf("{\"runs\": %lld, \"concurrency\": %d, \"threads\": %d, \"seconds\": %.6f, \"runs_per_second\": %.3f, "
           "\"latency_ms\": {\"min\": %.6f, \"p50\": %.6f, \"p90\": %.6f, \"p99\": %.6f, \"max\": %.6f, "
           "\"mean\": %.6f}}\n",
           n, nt, threads, wall, (double)n / wall, ms[0], ms[1], ms[2], ms[3], ms[4], ms[5]);
  } else {
    char tbuf[32];
    snprintf(tbuf, sizeof tbuf, "%d", threads);
    printf("%s: %lld runs in %.3f s, concurrency %d, threads %s\n", a.graph, n, wall, nt,
           threads ? tbuf : "default (one per core)");
    printf("latency ms: min %.3f  p50 %.3f  p90 %.3f  p99 %.3f  max %.3f  mean %.3f\n", ms[0], ms[1], ms[2], ms[3],
           ms[4], ms[5]);
    printf("throughput: %.1f runs/s\n", (double)n / wall);
  }
  rc = DFX_EXIT_OK;
  goto done;
oom:
  dfx__cli_error("out of memory");
  rc = DFX_EXIT_ERROR;
done:
  if (th)
    for (int i = 0; i < (int)a.concurrency; i++) free(th[i].lat);
  free(th);
  free(tids);
  free(lat);
  if (mu_ok) pthread_mutex_destroy(&b.mu);
  dfx_session_free(s);
  for (int i = 0; i < n_feeds; i++) dfx_tensor_free(feed_vals ? feed_vals[i] : NULL);
  dfx__ports_free(cports, n_cports);
  dfx__ports_free(fports, n_fetches);
  free(feeds);
  free(fetches);
  free(feed_vals);
  free(fed);
  free(needed);
  free(roots);
  dfx_graph_free(g);
  dfx_status_free(st);
  free(a.feed_args);
  free(a.fetch_args);
  free(a.targets);
  return rc;
}
