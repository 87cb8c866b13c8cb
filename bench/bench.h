/* bench.h - shared pieces of dfx-bench: the measured-row table, the run
 * specification every case fills in, and the sizes chosen by --quick. */
#ifndef BENCH_H
#define BENCH_H

#include <stdint.h>

#include "dfexec.h"

#define BENCH_MAX_ROWS 96
#define BENCH_MAX_FETCH 64

/* One measured line of the results table. Times are ns per unit. */
typedef struct bench_row {
  char name[48];     /* "counter/t1" */
  const char *group; /* the --case name */
  int threads;       /* engine threads actually used */
  double units;      /* units of work per timed sample */
  const char *unit;  /* "iter", "node", "matmul" */
  double eng_min, eng_med, base_min, base_med;
  int reps;
  int ok; /* 1: ran and the engine's result matched the baseline's */
  /* From one extra traced run (spec.trace): sum of node execution times over
   * the length of their union (1 = nothing ever overlapped), and how many
   * distinct threads executed nodes. -1 when not traced. */
  double overlap;
  int workers_used;
  char note[96];
} bench_row;

/* What one row runs: a graph, its feeds and fetches, and the C baseline that
 * does the same work as `runs` engine runs. */
typedef struct bench_spec {
  const char *name;
  const char *group;
  const char *text; /* GraphDef text */
  int threads;      /* 0: all cores */
  int nfeeds;
  dfx_port feeds[4];
  dfx_tensor *feed_vals[4];
  int nfetch;
  dfx_port fetch[BENCH_MAX_FETCH];
  int runs; /* session runs per timed sample (0 = 1) */
  double units;
  const char *unit;
  void (*base)(void *ud);
  void *base_ud;
  /* Optional check of fetch 0 of the last run: count elements of dtype
   * DFX_I32 or DFX_F32 at `expect`, compared with tolerance `tol`. */
  dfx_dtype expect_dtype;
  const void *expect;
  int64_t expect_count;
  double tol;
  int trace; /* 1: after timing, do one traced run to measure overlap */
  const char *optimize; /* the session's pass list (dfx_session_options.optimize); NULL: default */
} bench_spec;

/* Sizes: full run or --quick smoke run. */
typedef struct bench_sizes {
  int32_t counter, rnn, mm256, nested_o, nested_m, nested_i, cond, par, frames, frames_cheap, chain_runs, fan_runs,
      mem_small, mem_big, licm;
} bench_sizes;

/* Case 9: allocation behaviour of a long counter loop (memcase.c). */
typedef struct bench_mem {
  int threads;
  int ok;
  int64_t n_small, n_big;
  double alloc_bytes_per_iter; /* total bytes allocated per iteration, steady state */
  double allocs_per_iter;      /* allocation calls per iteration */
  double live_per_iter;        /* growth of the run's peak live bytes per iteration */
  long long calls_small, calls_big; /* allocation calls during each run */
  long long bytes_small, bytes_big; /* bytes allocated during each run */
  long long retained_small;    /* live bytes left behind by the small run */
  long long retained_big;      /* ... and by the big run */
  long hwm_small_kb, hwm_big_kb; /* VmHWM during each run (peak reset before it) */
  long maxrss_kb;              /* getrusage ru_maxrss of the child process */
  long long setup_allocs;      /* allocation calls for import + session: proves the hook is live */
  double ns_per_iter;          /* big run */
  char note[96];
} bench_mem;

typedef struct bench_ctx {
  int reps;
  int quick;
  bench_sizes sz;
  bench_row rows[BENCH_MAX_ROWS];
  int nrows;
  bench_mem mem[2];
  int nmem;
} bench_ctx;

/* Imports, builds a session, warms up, then times `reps` interleaved engine
 * and baseline samples and appends a row. Returns the row (never NULL). */
bench_row *bench_measure(bench_ctx *bc, const bench_spec *sp);
/* Row by name, or NULL when it did not run. */
const bench_row *bench_find(const bench_ctx *bc, const char *name);
double bench_now_ns(void);
/* New f32 tensor of the given shape filled with values in [-scale, scale). */
dfx_tensor *bench_rand_f32(int64_t rows, int64_t cols, float scale, unsigned seed);

/* Registers every case; cases.c. */
typedef struct bench_case {
  const char *name;
  const char *what;
  void (*run)(bench_ctx *bc);
} bench_case;
extern const bench_case bench_cases[];

#endif
