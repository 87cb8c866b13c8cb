/* ewcase.c - case 11: a chain of elementwise ops over a large tensor,
 * y = tanh(x * a + b) * c (a, b, c scalars), run as given (four kernels,
 * each a pass over memory) and with the ewfuse pass (one _FusedElementwise,
 * one pass). The baseline is the one C loop the fused node stands for. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baseline.h"
#include "bench.h"
#include "bgen.h"

typedef struct {
  int64_t n;
  const float *x;
  float *y;
} ew_ud;

static const float EW_A = 0.75f, EW_B = -0.25f, EW_C = 1.5f;

static void ew_base(void *ud) {
  ew_ud *u = ud;
  base_ew_chain(u->n, u->x, EW_A, EW_B, EW_C, u->y);
}

void bench_case_ewchain(bench_ctx *bc);
void bench_case_ewchain(bench_ctx *bc) {
  const int64_t rows = bc->quick ? 64 : 1024, cols = 1024, n = rows * cols;
  dfx_tensor *x = bench_rand_f32(rows, cols, 3.0f, 12);
  float *y = malloc((size_t)n * sizeof(float)), *expect = malloc((size_t)n * sizeof(float));
  if (!y || !expect) abort();
  ew_ud u = {n, dfx_tensor_data(x), y};
  ew_base(&u);
  memcpy(expect, y, (size_t)n * sizeof(float));
  bgen_buf b = {0};
  /* The placeholder's shape lets static shape inference prove the chain's
   * shapes, which the pass needs. */
  bgen_printf(&b,
              "node { name: \"x\" op: \"Placeholder\" attr { key: \"dtype\" value { type: DT_FLOAT } }"
              " attr { key: \"shape\" value { shape { dim { size: %lld } dim { size: %lld } } } } }\n",
              (long long)rows, (long long)cols);
  bgen_const_f32(&b, "a", EW_A, NULL);
  bgen_const_f32(&b, "b", EW_B, NULL);
  bgen_const_f32(&b, "c", EW_C, NULL);
  bgen_op2(&b, "mul", "Mul", "x", "a", "DT_FLOAT", NULL);
  bgen_op2(&b, "add", "AddV2", "mul", "b", "DT_FLOAT", NULL);
  bgen_op1(&b, "th", "Tanh", "add", "DT_FLOAT", NULL);
  bgen_op2(&b, "y", "Mul", "th", "c", "DT_FLOAT", NULL);
  const char *opts[2] = {"none", "ewfuse"};
  for (int k = 0; k < 2; k++) {
    char name[48];
    snprintf(name, sizeof name, "ewchain/%s/t1", opts[k]);
    bench_spec sp = {.name = name, .group = "ewchain", .text = b.s, .threads = 1, .nfeeds = 1, .nfetch = 1,
                     .fetch = {{"y", 0}}, .units = (double)n, .unit = "elem", .base = ew_base, .base_ud = &u,
                     .expect_dtype = DFX_F32, .expect = expect, .expect_count = n, .tol = 1e-6,
                     .optimize = opts[k]};
    sp.feeds[0] = (dfx_port){"x", 0};
    sp.feed_vals[0] = x;
    bench_measure(bc, &sp);
  }
  bgen_free(&b);
  free(expect);
  free(y);
  dfx_tensor_free(x);
}
