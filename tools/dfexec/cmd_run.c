/* cmd_run.c - `dfexec run GRAPH`: option parsing, the missing-feed report,
 * the run loop (--repeat, --stats, --trace) and writing the fetched values.
 * Every resource the command makes is released at its single `fail:` label. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "dist.h"
#include "dist_run.h"

static const char run_help[] =
    "usage: dfexec run GRAPH [options]    (or: dfexec GRAPH [options])\n"
    "\n"
    "Runs a GraphDef (.pb or .pbtxt) and prints the fetched tensors. Without\n"
    "--fetch or --target it fetches the graph's outputs: root-frame tensors no\n"
    "node consumes (inputs of _Retval count as outputs; Switch outputs, tf.cond\n"
    "pivots and a Merge's value_index are left out).\n"
    "\n"
    "  --feed NAME[:K]=@FILE.npy   feed a tensor from an .npy file\n"
    "  --feed NAME[:K]=LITERAL     feed a literal: 3, 2.5, true, \"text\", [[1,2],[3,4]]\n"
    "                              values are converted to the placeholder's dtype\n"
    "                              like numpy's astype (floats to ints truncate)\n"
    "  --fetch NAME[:K]            fetch a tensor (repeatable, order kept)\n"
    "  --target NODE               run a node for its effect (repeatable)\n"
    "  --format text|json          output format (default text); json is\n"
    "                              {\"outputs\": [{\"name\", \"dtype\", \"shape\", \"values\"}]}\n"
    "                              (integers exact at any size; NaN and Inf as the strings\n"
    "                              \"nan\", \"inf\", \"-inf\"; a string element that is not UTF-8\n"
    "                              as {\"base64\": \"...\"})\n"
    "  --output-dir DIR            also write each fetch to DIR/<name, / as __>_<K>.npy;\n"
    "                              bfloat16 is written as float32 ('<f4') since numpy has\n"
    "                              no bfloat16; strings as '<U{n}' (or '|S{n}' if not UTF-8)\n"
    "  --threads N                 worker threads (default: number of cores)\n"
    "  --optimize LIST             graph optimisation before running: default (the\n"
    "                              default pipeline), none, or a comma-separated list\n"
    "                              of passes (dfexec optimize --list)\n"
    "  --repeat N                  run N times and report min/median wall time\n"
    "  --stats                     what each optimisation pass did, and per-op and\n"
    "                              per-frame time and counts\n"
    "  --trace FILE.json           Chrome trace of the (last) run, for chrome://tracing\n"
    "                              or Perfetto\n"
    "  --timeout SECONDS           fail a run that takes longer\n"
    "  --max-iterations N          fail when a loop frame runs more iterations\n"
    "  --seed N                    graph-level random seed (TF's set_random_seed): random\n"
    "                              ops the graph left unseeded repeat exactly\n"
    "  --tasks N                   partition the graph over N tasks and run them as\n"
    "                              threads of this process (dfexec partition --help\n"
    "                              says what is placed where); under mpiexec each\n"
    "                              rank runs its own task instead\n"
    "  --random-placement S        with --tasks: place every node at random (seed S)\n"
    "  --help                      this help\n"
    "\n"
    "With --format json, timings and statistics go to stderr so stdout stays JSON.\n"
    "With --stats or --trace every node instance is scheduled and timed, so those\n"
    "runs are slower than plain ones (loops most: their Consts, Identities, Switches\n"
    "and Merges are otherwise run without a trip through the scheduler).\n"
    "Ctrl-C cancels the run cleanly (a second one exits at once).\n"
    "Exit status: 0 success, 1 graph, input or run error (a feed of the wrong\n"
    "shape, ragged or not), 2 usage error (a bad option or a literal that does not parse),\n"
    "130 interrupted by Ctrl-C.\n";

#ifdef DFX_HAVE_MPI
#define run_mpi dfx__dist_run_mpi
static bool rank_zero(dfx_mpi *m) { return dfx__mpi_rank(m) == 0; }
#else
static bool rank_zero(void *m) { return true; }
/* Built without MPI: never called (mpi stays NULL). */
typedef struct dfx_mpi dfx_mpi;
static dfx_code run_mpi(dfx_mpi *m, const dfx_graph *g, const dfx_dist_options *o, const dfx_run_options *ro,
                        int64_t step, const dfx_port *feeds, dfx_tensor *const *feed_vals, int n_feeds,
                        const dfx_port *fetches, dfx_tensor **fetch_vals, int n_fetches, const char *const *targets,
                        int n_targets, dfx_status *st) {
  return DFX_EUNIMPL;
}
#endif

typedef struct run_args {
  const char *graph;
  char **feed_args, **fetch_args, **targets;
  int n_feeds, n_fetches, n_targets;
  bool json, stats;
  const char *output_dir, *trace_path, *optimize;
  long long threads, repeat, max_iterations, seed, tasks, random_seed;
  bool has_seed;
  double timeout;
} run_args;

enum { OPT_FEED = 256, OPT_FETCH, OPT_TARGET, OPT_FORMAT, OPT_OUTDIR, OPT_THREADS, OPT_REPEAT, OPT_STATS,
       OPT_TRACE, OPT_TIMEOUT, OPT_MAXITER, OPT_OPTIMIZE, OPT_SEED, OPT_TASKS, OPT_RANDOM, OPT_HELP };

static const struct option run_opts[] = {
    {"feed", required_argument, NULL, OPT_FEED},          {"fetch", required_argument, NULL, OPT_FETCH},
    {"target", required_argument, NULL, OPT_TARGET},      {"format", required_argument, NULL, OPT_FORMAT},
    {"output-dir", required_argument, NULL, OPT_OUTDIR},  {"threads", required_argument, NULL, OPT_THREADS},
    {"repeat", required_argument, NULL, OPT_REPEAT},      {"stats", no_argument, NULL, OPT_STATS},
    {"trace", required_argument, NULL, OPT_TRACE},        {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"max-iterations", required_argument, NULL, OPT_MAXITER}, {"optimize", required_argument, NULL, OPT_OPTIMIZE},
    {"seed", required_argument, NULL, OPT_SEED},
    {"tasks", required_argument, NULL, OPT_TASKS},        {"random-placement", required_argument, NULL, OPT_RANDOM},
    {"help", no_argument, NULL, OPT_HELP},
    {NULL, 0, NULL, 0}};

/* Returns -1 to continue, or the exit status to stop with. */
static int parse_args(int argc, char **argv, run_args *a) {
  /* Each list can hold at most argc entries. */
  a->feed_args = calloc((size_t)argc, sizeof(char *));
  a->fetch_args = calloc((size_t)argc, sizeof(char *));
  a->targets = calloc((size_t)argc, sizeof(char *));
  if (!a->feed_args || !a->fetch_args || !a->targets) {
    dfx__cli_error("out of memory");
    return DFX_EXIT_ERROR;
  }
  a->repeat = 1;
  opterr = 0;
  optind = 1;
  int c;
  char *end;
  while ((c = getopt_long(argc, argv, ":h", run_opts, NULL)) != -1) {
    switch (c) {
    case OPT_FEED: a->feed_args[a->n_feeds++] = optarg; break;
    case OPT_FETCH: a->fetch_args[a->n_fetches++] = optarg; break;
    case OPT_TARGET: a->targets[a->n_targets++] = optarg; break;
    case OPT_FORMAT:
      if (strcmp(optarg, "json") == 0) a->json = true;
      else if (strcmp(optarg, "text") == 0) a->json = false;
      else return dfx__cli_usage("run", "--format must be 'text' or 'json', not '%s'", optarg);
      break;
    case OPT_OUTDIR: a->output_dir = optarg; break;
    case OPT_THREADS:
      if (!dfx__cli_parse_int(optarg, &a->threads) || a->threads > 1024)
        return dfx__cli_usage("run", "--threads needs a number from 0 to 1024, not '%s'", optarg);
      break;
    case OPT_REPEAT:
      if (!dfx__cli_parse_int(optarg, &a->repeat) || a->repeat < 1 || a->repeat > 1000000)
        return dfx__cli_usage("run", "--repeat needs a positive number, not '%s'", optarg);
      break;
    case OPT_STATS: a->stats = true; break;
    case OPT_OPTIMIZE: {
      char bad[64];
      if (!dfx__cli_passes_valid(optarg, bad, sizeof bad)) return dfx__cli_bad_passes("run", "--optimize", bad);
      a->optimize = optarg;
      break;
    }
    case OPT_TRACE: a->trace_path = optarg; break;
    case OPT_TIMEOUT:
      errno = 0;
      a->timeout = strtod(optarg, &end);
      if (errno || *end || end == optarg || !(a->timeout > 0) || a->timeout > 1e9)
        return dfx__cli_usage("run", "--timeout needs a positive number of seconds, not '%s'", optarg);
      break;
    case OPT_MAXITER:
      if (!dfx__cli_parse_int(optarg, &a->max_iterations) || a->max_iterations < 1)
        return dfx__cli_usage("run", "--max-iterations needs a positive number, not '%s'", optarg);
      break;
    case OPT_SEED:
      if (!dfx__cli_parse_int(optarg, &a->seed))
        return dfx__cli_usage("run", "--seed needs a non-negative integer, not '%s'", optarg);
      a->has_seed = true;
      break;
    case 'h':
    case OPT_TASKS:
      if (!dfx__cli_parse_int(optarg, &a->tasks) || a->tasks < 1 || a->tasks > 4096)
        return dfx__cli_usage("run", "--tasks '%s': expected a number from 1 to 4096", optarg);
      break;
    case OPT_RANDOM:
      if (!dfx__cli_parse_int(optarg, &a->random_seed) || a->random_seed < 1 || a->random_seed > 0x7fffffff)
        return dfx__cli_usage("run", "--random-placement '%s': expected a positive seed", optarg);
      break;
    case OPT_HELP: fputs(run_help, stdout); return DFX_EXIT_OK;
    case ':': return dfx__cli_usage("run", "option '%s' needs a value", argv[optind - 1]);
    default: return dfx__cli_usage("run", "unknown option '%s'", argv[optind - 1]);
    }
  }
  if (optind >= argc) return dfx__cli_usage("run", "missing GRAPH");
  if (optind + 1 < argc) return dfx__cli_usage("run", "unexpected argument '%s'", argv[optind + 1]);
  a->graph = argv[optind];
  return -1;
}

/* ---- missing feeds ---- */

/* An example --feed value for a placeholder: zeros of its dtype and shape
 * (unknown dims as 1), or an .npy file when that literal would be long. */
static void example_value(const dfx_node *n, char *buf, size_t cap) {
  const dfx_shape *sh = dfx__attr_shape(n, "shape");
  dfx_dtype dt = dfx__attr_type(n, "dtype", DFX_F32);
  const char *zero = dt == DFX_BOOL ? "false" : dt == DFX_STRING ? "\"\"" : dfx__dtype_is_float(dt) ? "0.0" : "0";
  int64_t count = 1;
  int rank = sh && sh->rank > 0 ? sh->rank : 0;
  for (int d = 0; d < rank; d++) count *= sh->dims[d] < 0 ? 1 : sh->dims[d];
  if (count > 16 || count == 0) {
    snprintf(buf, cap, "@%s.npy", n->name);
    for (char *p = buf; *p; p++)
      if (*p == '/') *p = '_';
    return;
  }
  /* Nested brackets, printed by counting through the elements. */
  size_t o = 0;
  int64_t idx[DFX_MAX_DIMS] = {0};
  for (int d = 0; d < rank; d++) o += (size_t)snprintf(buf + o, cap - o, "[");
  for (int64_t i = 0; i < count && o < cap; i++) {
    o += (size_t)snprintf(buf + o, cap - o, "%s", zero);
    int d = rank - 1;
    for (; d >= 0; d--) {
      int64_t size = sh->dims[d] < 0 ? 1 : sh->dims[d];
      if (++idx[d] < size) break;
      idx[d] = 0;
      if (o < cap) o += (size_t)snprintf(buf + o, cap - o, "]");
    }
    if (d >= 0 && o < cap) {
      o += (size_t)snprintf(buf + o, cap - o, ",");
      for (int k = d + 1; k < rank && o < cap; k++) o += (size_t)snprintf(buf + o, cap - o, "[");
    }
  }
}

/* Lists the placeholders the run needs but nobody fed; returns their count. */
static int report_missing(const dfx_graph *g, const char *graph_path, const bool *needed, const bool *fed) {
  int missing = 0;
  for (int i = 0; i < g->n_nodes; i++)
    if (needed[i] && !fed[i] && dfx__node_is_placeholder(&g->nodes[i])) missing++;
  if (!missing) return 0;
  dfx__cli_error("%d placeholder%s need%s a value; feed %s with --feed NAME=VALUE:", missing, missing == 1 ? "" : "s",
                 missing == 1 ? "s" : "", missing == 1 ? "it" : "them");
  fprintf(stderr, "  %-32s %-10s %s\n", "name", "dtype", "shape");
  for (int i = 0; i < g->n_nodes; i++) {
    const dfx_node *n = &g->nodes[i];
    if (!needed[i] || fed[i] || !dfx__node_is_placeholder(n)) continue;
    char sb[256];
    fprintf(stderr, "  %-32s %-10s %s\n", n->name, dfx_dtype_name(dfx__attr_type(n, "dtype", DFX_INVALID)),
            dfx__shape_attr_str(dfx__attr_shape(n, "shape"), sb, sizeof sb));
  }
  fprintf(stderr, "example: dfexec run %s", graph_path);
  for (int i = 0; i < g->n_nodes; i++) {
    const dfx_node *n = &g->nodes[i];
    if (!needed[i] || fed[i] || !dfx__node_is_placeholder(n)) continue;
    char ex[512];
    example_value(n, ex, sizeof ex);
    fprintf(stderr, " --feed '%s=%s'", n->name, ex);
  }
  fputc('\n', stderr);
  return missing;
}

/* ---- output ---- */

static double now_sec(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* `mkdir -p DIR` and a writability check, before the graph is even read:
 * a long run must not end in "cannot create output directory". */
static bool prepare_output_dir(const char *dir) {
  size_t n = strlen(dir);
  char *path = malloc(n + 1);
  if (!path) {
    dfx__cli_error("out of memory");
    return false;
  }
  memcpy(path, dir, n + 1);
  bool ok = true;
  for (size_t i = 1; ok && i <= n; i++) {
    if (path[i] != '/' && path[i] != 0) continue;
    char c = path[i];
    path[i] = 0;
    struct stat sb;
    if (stat(path, &sb) != 0 && mkdir(path, 0777) != 0 && errno != EEXIST) {
      dfx__cli_error("--output-dir: cannot create '%s': %s", path, strerror(errno));
      ok = false;
    }
    path[i] = c;
  }
  free(path);
  struct stat sb;
  if (ok && (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))) {
    dfx__cli_error("--output-dir: '%s' is not a directory", dir);
    ok = false;
  }
  if (ok && access(dir, W_OK | X_OK) != 0) {
    dfx__cli_error("--output-dir: cannot write to '%s': %s", dir, strerror(errno));
    ok = false;
  }
  return ok;
}

static bool write_npys(const char *dir, const dfx_cli_port *fetches, dfx_tensor **vals, int n) {
  struct stat sb;
  if (stat(dir, &sb) != 0 && mkdir(dir, 0777) != 0) {
    dfx__cli_error("cannot create output directory '%s': %s", dir, strerror(errno));
    return false;
  }
  for (int i = 0; i < n; i++) {
    size_t len = strlen(dir) + 2 * strlen(fetches[i].node) + 32;
    char *path = malloc(len), err[512];
    if (!path) {
      dfx__cli_error("out of memory");
      return false;
    }
    size_t o = (size_t)snprintf(path, len, "%s/", dir);
    for (const char *p = fetches[i].node; *p; p++) {
      if (*p == '/') {
        path[o++] = '_';
        path[o++] = '_';
      } else {
        path[o++] = *p;
      }
    }
    snprintf(path + o, len - o, "_%d.npy", fetches[i].index);
    bool ok = dfx__npy_write(path, vals[i], err, sizeof err);
    free(path);
    if (!ok) {
      dfx__cli_error("--output-dir: %s", err);
      return false;
    }
  }
  return true;
}

/* ---- the command ---- */

int dfx__cmd_run(int argc, char **argv) {
  run_args a = {0};
  int rc = parse_args(argc, argv, &a);
  dfx_status *st = dfx_status_new();
  dfx_graph *g = NULL, *og = NULL; /* og: g optimised for this run */
  dfx_optimize_report report = {0};
  dfx_session *s = NULL;
  dfx_trace *tr = NULL;
  dfx_interrupt *intr = NULL;
  dfx_mpi *mpi = NULL;
  dfx_cli_port *feeds = NULL, *fetches = NULL;
  dfx_tensor **feed_vals = NULL, **fetch_vals = NULL;
  dfx_port *feed_ports = NULL, *fetch_ports = NULL;
  const char **fetch_names = NULL;
  char **name_bufs = NULL;
  bool *needed = NULL, *fed = NULL;
  int *roots = NULL;
  double *times = NULL;
  int n_fetches = 0, n_feeds_done = 0;
  if (rc >= 0) goto fail;
  if (a.random_seed && !a.tasks) {
    rc = dfx__cli_usage("run", "--random-placement needs --tasks N");
    goto fail;
  }
  if (a.tasks && (a.stats || a.trace_path)) {
    rc = dfx__cli_usage("run", "--stats and --trace do not work with --tasks yet");
    goto fail;
  }
  rc = DFX_EXIT_ERROR;
  if (!st) {
    dfx__cli_error("out of memory");
    goto fail;
  }
  if (a.output_dir && !prepare_output_dir(a.output_dir)) goto fail;
#ifdef DFX_HAVE_MPI
  /* Under mpiexec each rank runs its task; only rank 0 prints, and the
   * ranks first check that they hold the same graph and command line. */
  if (!a.tasks && dfx__mpi_launched()) {
    if (dfx__mpi_new(NULL, NULL, &mpi, st) != DFX_OK) {
      dfx__cli_error("%s", dfx_status_message(st));
      goto fail;
    }
    if (dfx__mpi_rank(mpi) != 0 && (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr))) {
      rc = DFX_EXIT_ERROR;
      goto fail;
    }
    uint64_t h = 0;
    if (dfx_graph_load(a.graph, &g, st) == DFX_OK) {
      h = dfx__dist_graph_hash(g);
      for (int i = 1; i < argc; i++)
        for (const char *q = argv[i]; *q; q++) h = (h ^ (unsigned char)*q) * 1099511628211ull;
    } else {
      dfx__cli_error("%s", dfx_status_message(st));
    }
    dfx_status *hs = dfx_status_new();
    if (dfx__mpi_check_hash(mpi, h, hs) != DFX_OK || !g) {
      if (g) dfx__cli_error("%s", dfx_status_message(hs));
      dfx_status_free(hs);
      goto fail;
    }
    dfx_status_free(hs);
  } else
#endif
  if (dfx_graph_load(a.graph, &g, st) != DFX_OK) {
    dfx__cli_error("%s", dfx_status_message(st));
    goto fail;
  }
  if (!dfx__cli_apply_seed(&g, a.has_seed, a.seed, st)) goto fail;

  /* Feeds, converted to the dtype their port produces. */
  feeds = calloc((size_t)a.n_feeds + 1, sizeof *feeds);
  feed_vals = calloc((size_t)a.n_feeds + 1, sizeof *feed_vals);
  feed_ports = calloc((size_t)a.n_feeds + 1, sizeof *feed_ports);
  fed = calloc((size_t)g->n_nodes + 1, 1);
  needed = calloc((size_t)g->n_nodes + 1, 1);
  if (!feeds || !feed_vals || !feed_ports || !fed || !needed) goto oom;
  for (; n_feeds_done < a.n_feeds; n_feeds_done++) {
    int k = n_feeds_done;
    if ((rc = dfx__feed_parse(g, a.feed_args[k], &feeds[k], &feed_vals[k])) != DFX_EXIT_OK) {
      n_feeds_done++; /* its port name may need freeing */
      goto fail;
    }
    feed_ports[k] = (dfx_port){feeds[k].node, feeds[k].index};
    fed[dfx__graph_find(g, feeds[k].node, (size_t)-1)] = true;
  }
  rc = DFX_EXIT_ERROR;

  /* Fetches: as given, or the graph's outputs. */
  if (a.n_fetches || a.n_targets) {
    if (!(fetches = calloc((size_t)a.n_fetches + 1, sizeof *fetches))) goto oom;
    for (; n_fetches < a.n_fetches; n_fetches++) {
      dfx_cli_port *p = &fetches[n_fetches];
      if (!dfx__port_parse(a.fetch_args[n_fetches], strlen(a.fetch_args[n_fetches]), p)) {
        rc = dfx__cli_usage("run", "--fetch '%s': expected NAME[:K]", a.fetch_args[n_fetches]);
        goto fail;
      }
    }
  } else if (!(fetches = dfx__graph_outputs(g, &n_fetches))) {
    goto oom;
  }
  if (!(roots = calloc((size_t)(n_fetches + a.n_targets) + 1, sizeof *roots))) goto oom;
  if (!dfx__cli_roots(g, fetches, n_fetches, a.targets, a.n_targets, roots)) goto fail;
  dfx__graph_needed(g, roots, n_fetches + a.n_targets, fed, needed);
  if (report_missing(g, a.graph, needed, fed)) goto fail;

  fetch_ports = calloc((size_t)n_fetches + 1, sizeof *fetch_ports);
  fetch_vals = calloc((size_t)n_fetches + 1, sizeof *fetch_vals);
  fetch_names = calloc((size_t)n_fetches + 1, sizeof *fetch_names);
  name_bufs = calloc((size_t)n_fetches + 1, sizeof *name_bufs);
  times = calloc((size_t)a.repeat, sizeof *times);
  if (!fetch_ports || !fetch_vals || !fetch_names || !name_bufs || !times) goto oom;
  for (int i = 0; i < n_fetches; i++) {
    fetch_ports[i] = (dfx_port){fetches[i].node, fetches[i].index};
    size_t len = strlen(fetches[i].node) + 16;
    if (!(name_bufs[i] = malloc(len))) goto oom;
    fetch_names[i] = dfx__port_str(&fetches[i], name_bufs[i], len);
  }

  /* Optimised here rather than by the session, so that --stats can report
   * the passes and --trace sees the nodes the session runs. */
  const dfx_graph *run_g = g;
  if (!a.optimize || strcmp(a.optimize, "none") != 0) {
    dfx_optimize_options oo = {.passes = a.optimize, .feeds = feed_ports, .n_feeds = a.n_feeds, .fetches = fetch_ports,
                               .n_fetches = n_fetches, .targets = (const char *const *)a.targets,
                               .n_targets = a.n_targets};
    if (dfx_graph_optimize(g, &oo, &og, &report, st) != DFX_OK) {
      dfx__cli_error("%s", dfx_status_message(st));
      goto fail;
    }
    run_g = og;
  }
  dfx_session_options so = {.n_threads = (int)a.threads, .optimize = "none"};
  dfx_dist_options dopt = {.n_tasks = (int)a.tasks, .random_seed = (unsigned)a.random_seed,
                           .n_threads = (int)a.threads, .only_task = -1};
  if (!a.tasks && !mpi && dfx_session_new(run_g, &so, &s, st) != DFX_OK) {
    dfx__cli_error("%s", dfx_status_message(st));
    goto fail;
  }
  if (s && (!dfx__interrupt_start(s, &intr) || !dfx__interrupt_watch(intr))) {
    dfx__cli_error("cannot start the Ctrl-C watcher thread");
    goto fail;
  }
  dfx_run_options ro = {.timeout_sec = a.timeout, .max_iterations = a.max_iterations};
  if ((a.stats || a.trace_path) && !(tr = dfx__trace_new(run_g))) goto oom;
  for (long long r = 0; r < a.repeat; r++) {
    for (int i = 0; i < n_fetches; i++) {
      dfx_tensor_free(fetch_vals[i]);
      fetch_vals[i] = NULL;
    }
    if (tr) dfx__trace_attach(tr, &ro);
    double t0 = now_sec();
    dfx_code c = mpi ? run_mpi(mpi, run_g, &dopt, &ro, r + 1, feed_ports, feed_vals, a.n_feeds, fetch_ports, fetch_vals,
                               n_fetches, (const char *const *)a.targets, a.n_targets, st)
                 : a.tasks ? dfx__dist_run_local(run_g, &dopt, &ro, feed_ports, feed_vals, a.n_feeds, fetch_ports,
                                               fetch_vals, n_fetches, (const char *const *)a.targets, a.n_targets, st)
                         : dfx_session_run(s, &ro, feed_ports, feed_vals, a.n_feeds, fetch_ports, fetch_vals, n_fetches,
                                           (const char *const *)a.targets, a.n_targets, st);
    times[r] = now_sec() - t0;
    if (c != DFX_OK && dfx__interrupt_fired(intr)) {
      dfx__cli_error("interrupted (Ctrl-C) after %.3f s of run %lld: %s", times[r], r + 1, dfx_status_message(st));
      rc = DFX_EXIT_INTERRUPTED;
      goto fail;
    }
    if (c != DFX_OK) {
      dfx__cli_error("%s", dfx_status_message(st));
      goto fail;
    }
    if (tr) dfx__trace_accumulate(tr);
  }

  if (mpi && !rank_zero(mpi)) { /* only rank 0 holds the fetches and prints */
    rc = DFX_EXIT_OK;
    goto fail;
  }
  if (a.json) {
    dfx__print_json(stdout, fetch_names, fetch_vals, n_fetches);
  } else {
    for (int i = 0; i < n_fetches; i++) dfx__print_text(stdout, fetch_names[i], fetch_vals[i]);
    if (n_fetches == 0) printf("(no outputs)\n");
  }
  if (a.output_dir && !write_npys(a.output_dir, fetches, fetch_vals, n_fetches)) goto fail;
  FILE *info = a.json ? stderr : stdout;
  if (a.repeat > 1) {
    qsort(times, (size_t)a.repeat, sizeof *times, cmp_double);
    double median = a.repeat % 2 ? times[a.repeat / 2] : (times[a.repeat / 2 - 1] + times[a.repeat / 2]) / 2;
    fprintf(info, "time over %lld runs: min %.3f ms, median %.3f ms\n", a.repeat, times[0] * 1e3, median * 1e3);
  }
  if (a.stats) {
    if (og) dfx__cli_print_optimize_report(info, &report);
    else fprintf(info, "optimisation: off (--optimize none)\n");
    dfx__trace_print_stats(tr, info, (int)a.repeat);
  }
  if (a.trace_path) {
    char err[512];
    if (!dfx__trace_write_chrome(tr, a.trace_path, err, sizeof err)) {
      dfx__cli_error("--trace: %s", err);
      goto fail;
    }
  }
  if (fflush(stdout) != 0) {
    dfx__cli_error("error writing standard output");
    goto fail;
  }
  rc = DFX_EXIT_OK;
  goto fail;
oom:
  dfx__cli_error("out of memory");
  rc = DFX_EXIT_ERROR;
fail:
  for (int i = 0; fetch_vals && i < n_fetches; i++) dfx_tensor_free(fetch_vals[i]);
  for (int i = 0; feed_vals && i < n_feeds_done; i++) dfx_tensor_free(feed_vals[i]);
  for (int i = 0; name_bufs && i < n_fetches; i++) free(name_bufs[i]);
  dfx__interrupt_end(intr); /* before the session it cancels goes */
  dfx_session_free(s);
  dfx__trace_free(tr);
  dfx_optimize_report_free(&report);
  dfx_graph_free(og);
  dfx__ports_free(feeds, n_feeds_done);
  dfx__ports_free(fetches, n_fetches);
  free(feed_vals);
  free(feed_ports);
  free(fetch_ports);
  free(fetch_vals);
  free(fetch_names);
  free(name_bufs);
  free(needed);
  free(fed);
  free(roots);
  free(times);
  dfx_graph_free(g);
  dfx_status_free(st);
  free(a.feed_args);
  free(a.fetch_args);
  free(a.targets);
#ifdef DFX_HAVE_MPI
  dfx__mpi_free(mpi);
#endif
  return rc;
}
