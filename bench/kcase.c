/* kcase.c - case 11, `--case kernels`: one kernel per graph (Tanh, Sigmoid,
 * Add with a broadcast row, Sum over rows, Softmax, MatMul 64/256/1024) on
 * 1 and 2 engine threads, each against the fastest honest C (host.c) on 1
 * and 2 threads, so the ratio shows what intra-op parallelism and the SIMD
 * loops leave on the table, and the next regression shows. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "bgen.h"
#include "host.h"

#define NM(buf, ...) (snprintf(buf, sizeof buf, __VA_ARGS__), buf)

enum { K_TANH, K_SIGMOID, K_ADD, K_SUM, K_SOFTMAX, K_MATMUL };

typedef struct kb {
  int kind, threads, runs;
  const float *x, *b;
  float *y;
  int64_t rows, cols;
} kb;

/* Rows [lo, hi) of the kernel's work. */
static void kb_range(void *arg, int64_t lo, int64_t hi) {
  const kb *u = arg;
  int64_t c = u->cols, off = lo * c, n = (hi - lo) * c;
  switch (u->kind) {
  case K_TANH: host_tanh(u->x + off, u->y + off, n); break;
  case K_SIGMOID: host_sigmoid(u->x + off, u->y + off, n); break;
  case K_ADD: host_add_row(u->x + off, u->b, u->y + off, hi - lo, c); break;
  case K_SUM: host_row_sum(u->x + off, u->y + lo, hi - lo, c); break;
  case K_SOFTMAX: host_softmax(u->x + off, u->y + off, hi - lo, c); break;
  default: host_sgemm_rows(u->x, u->b, u->y, (int)c, lo, hi); break;
  }
}

static void kb_base(void *ud) {
  kb *u = ud;
  for (int r = 0; r < u->runs; r++) {
    if (u->threads == 1)
      kb_range(u, 0, u->rows);
    else
      host_par2(kb_range, u, u->rows, 16);
  }
}

typedef struct kdef {
  const char *name;
  int kind;
  int64_t d; /* rows = cols = d */
  int runs, quick_runs;
} kdef;

static void run_kernel(bench_ctx *bc, const kdef *k) {
  bgen_buf g = {0};
  bgen_placeholder(&g, "x", "DT_FLOAT");
  bgen_placeholder(&g, "b", "DT_FLOAT");
  switch (k->kind) {
  case K_TANH: bgen_op1(&g, "out", "Tanh", "x", "DT_FLOAT", NULL); break;
  case K_SIGMOID: bgen_op1(&g, "out", "Sigmoid", "x", "DT_FLOAT", NULL); break;
  case K_ADD: bgen_op2(&g, "out", "Add", "x", "b", "DT_FLOAT", NULL); break;
  case K_SUM:
    bgen_const_i32(&g, "axis", 1, NULL);
    bgen_op2(&g, "out", "Sum", "x", "axis", "DT_FLOAT", NULL);
    break;
  case K_SOFTMAX: bgen_op1(&g, "out", "Softmax", "x", "DT_FLOAT", NULL); break;
  default: bgen_op2(&g, "out", "MatMul", "x", "b", "DT_FLOAT", NULL); break;
  }
  int64_t d = k->d;
  dfx_tensor *x = bench_rand_f32(d, d, 2.0f, 11);
  dfx_tensor *b = k->kind == K_MATMUL ? bench_rand_f32(d, d, 1.0f, 12) : bench_rand_f32(1, d, 1.0f, 12);
  int64_t out_n = k->kind == K_SUM ? d : d * d;
  float *y = malloc(sizeof(float) * (size_t)out_n), *expect = malloc(sizeof(float) * (size_t)out_n);
  int runs = bc->quick ? k->quick_runs : k->runs;
  kb u = {k->kind, 1, 1, dfx_tensor_data(x), dfx_tensor_data(b), y, d, d};
  kb_base(&u);
  memcpy(expect, y, sizeof(float) * (size_t)out_n);
  u.runs = runs;
  /* The Add's b is [d]: reshape the [1, d] feed by feeding a rank-1 tensor. */
  dfx_tensor *b_feed = b;
  if (k->kind == K_ADD) {
    int64_t dims[1] = {d};
    b_feed = dfx_tensor_new_copy(DFX_F32, dims, 1, dfx_tensor_data(b), sizeof(float) * (size_t)d);
  }
  /* Rows: 1 thread, 2 threads, and 2 threads with intra-op parallelism off
   * (DFX_INTRA_OP=0 is read when a session starts its pool): the last two
   * in one process show what parallel_for itself gains. */
  for (int row = 0; row < 3; row++) {
    char name[48];
    int threads = row == 0 ? 1 : 2;
    u.threads = threads;
    if (row == 2) setenv("DFX_INTRA_OP", "0", 1);
    bench_spec sp = {.name = row == 2 ? NM(name, "kernels/%s/t2-nointra", k->name)
                                      : NM(name, "kernels/%s/t%d", k->name, threads),
                     .group = "kernels", .text = g.s,
                     .threads = threads, .nfeeds = 2, .nfetch = 1, .fetch = {{"out", 0}}, .runs = runs,
                     .units = runs, .unit = "op", .base = kb_base, .base_ud = &u, .expect_dtype = DFX_F32,
                     .expect = expect, .expect_count = out_n, .tol = k->kind == K_MATMUL ? 1e-2 : 1e-3};
    sp.feeds[0] = (dfx_port){"x", 0};
    sp.feed_vals[0] = x;
    sp.feeds[1] = (dfx_port){"b", 0};
    sp.feed_vals[1] = b_feed;
    bench_measure(bc, &sp);
    if (row == 2) unsetenv("DFX_INTRA_OP");
  }
  if (b_feed != b) dfx_tensor_free(b_feed);
  dfx_tensor_free(x);
  dfx_tensor_free(b);
  free(y);
  free(expect);
  bgen_free(&g);
}

void bench_case_kernels(bench_ctx *bc) {
  static const kdef defs[] = {
      {"tanh-1M", K_TANH, 1024, 40, 4},       {"sigmoid-1M", K_SIGMOID, 1024, 40, 4},
      {"add-bcast-1M", K_ADD, 1024, 40, 4},   {"sum-rows-1M", K_SUM, 1024, 40, 4},
      {"softmax-1M", K_SOFTMAX, 1024, 20, 2}, {"matmul-64", K_MATMUL, 64, 2000, 100},
      {"matmul-256", K_MATMUL, 256, 60, 4},   {"matmul-1024", K_MATMUL, 1024, 2, 1},
  };
  for (size_t i = 0; i < sizeof defs / sizeof *defs; i++) run_kernel(bc, &defs[i]);
}
