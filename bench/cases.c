/* cases.c - the benchmark cases of issue 6. Each case writes its graph in
 * TF1's lowering (bgen.c), its C baseline (baseline.c) and the expected
 * result, then lets bench_measure time it once per thread setting. Loop
 * invariants always enter through constant Enters. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baseline.h"
#include "bench.h"
#include "bgen.h"

#define NM(buf, ...) (snprintf(buf, sizeof buf, __VA_ARGS__), buf)
#define FEED(sp, i, name, t) ((sp).feeds[i] = (dfx_port){name, 0}, (sp).feed_vals[i] = (t))

static const char *thr_name(int threads) { return threads == 0 ? "tall" : threads == 1 ? "t1" : "t2"; }

/* Root-frame counter loop `i = 0; while i < n: i += 1` under prefix P. */
static void gen_counter(bgen_buf *b, const char *P, int32_t n, int pi) {
  char start[64];
  bgen_const_i32(b, NM(start, "%sstart", P), 0, NULL);
  bgen_var v[1] = {{start, "DT_INT32", ""}};
  bgen_while(b, P, pi, n, NULL, v, 1, NULL, NULL, 0, NULL, NULL);
}

/* ---- 1. counter loop ---- */

typedef struct {
  int32_t n, got;
} counter_ud;
static void counter_base(void *ud) {
  counter_ud *u = ud;
  u->got = base_counter(u->n);
}

static void case_counter(bench_ctx *bc) {
  bgen_buf b = {0};
  gen_counter(&b, "w/", bc->sz.counter, 10);
  counter_ud u = {bc->sz.counter, 0};
  int threads[2] = {1, 0};
  for (int k = 0; k < 2; k++) {
    char name[48];
    bench_spec sp = {.name = NM(name, "counter/%s", thr_name(threads[k])), .group = "counter", .text = b.s,
                     .threads = threads[k], .nfetch = 1, .fetch = {{"w/Exit_0", 0}}, .units = u.n, .unit = "iter",
                     .base = counter_base, .base_ud = &u, .expect_dtype = DFX_I32, .expect = &u.n,
                     .expect_count = 1};
    bench_measure(bc, &sp);
  }
  bgen_free(&b);
}

/* ---- 2. RNN cell and 3. 256x256 matmul + tanh ---- */

/* h = tanh(h @ inv_0 [+ inv_1]). ud non-NULL: add inv_1 (the RNN's x). */
static void mm_tanh_body(bgen_buf *b, const char *P, void *ud, bgen_var *vars) {
  char n1[128], n2[128], n3[128];
  bgen_op2(b, NM(n1, "%sMatMul", P), "MatMul", NM(n2, "%sIdentity_1", P), NM(n3, "%sinv_0", P), "DT_FLOAT", NULL);
  if (ud) {
    bgen_op2(b, NM(n1, "%sadd_x", P), "Add", NM(n2, "%sMatMul", P), NM(n3, "%sinv_1", P), "DT_FLOAT", NULL);
    bgen_op1(b, NM(n1, "%sTanh", P), "Tanh", NM(n2, "%sadd_x", P), "DT_FLOAT", NULL);
  } else {
    bgen_op1(b, NM(n1, "%sTanh", P), "Tanh", NM(n2, "%sMatMul", P), "DT_FLOAT", NULL);
  }
  snprintf(vars[1].next, sizeof vars[1].next, "%sTanh", P);
}

/* One loop over h with W (and x) as invariants, under prefix P. */
static void gen_mm_loop(bgen_buf *b, const char *P, int32_t n, int with_x) {
  char start[64];
  bgen_const_i32(b, NM(start, "%sstart", P), 0, NULL);
  bgen_var v[2] = {{start, "DT_INT32", ""}, {"h0", "DT_FLOAT", ""}};
  const char *inv[2] = {"W", "x"}, *inv_t[2] = {"DT_FLOAT", "DT_FLOAT"};
  bgen_while(b, P, 10, n, NULL, v, 2, inv, inv_t, with_x ? 2 : 1, mm_tanh_body, with_x ? "x" : NULL);
}

typedef struct {
  int32_t n;
  int d, rnn;
  const float *W, *x, *h0;
  float *h, *tmp;
  int threads;    /* 2: the two-thread baseline (sgemm and tanh split by rows) */
  int sgemm_only; /* the "sgemm alone" row: n products, no tanh */
} mm_ud;
static void mm_base(void *ud) {
  mm_ud *u = ud;
  size_t hsz = (size_t)(u->rnn ? 1 : u->d) * (size_t)u->d;
  memcpy(u->h, u->h0, hsz * sizeof(float));
  if (u->rnn)
    base_rnn(u->n, u->d, u->W, u->x, u->h, u->tmp);
  else if (u->sgemm_only)
    base_sgemm_alone(u->n, u->d, u->W, u->h, u->tmp);
  else
    base_mm_tanh_threads(u->n, u->d, u->W, u->h, u->tmp, u->threads);
}

static void run_mm(bench_ctx *bc, const char *group, int rnn, int d, int32_t n, float wscale) {
  bgen_buf b = {0};
  bgen_placeholder(&b, "h0", "DT_FLOAT");
  bgen_placeholder(&b, "W", "DT_FLOAT");
  if (rnn) bgen_placeholder(&b, "x", "DT_FLOAT");
  gen_mm_loop(&b, "w/", n, rnn);
  int hr = rnn ? 1 : d;
  dfx_tensor *h0 = bench_rand_f32(hr, d, 1.0f, 1), *W = bench_rand_f32(d, d, wscale, 2),
             *x = bench_rand_f32(1, d, 0.5f, 3);
  float *h = malloc((size_t)hr * d * sizeof(float)), *tmp = malloc((size_t)hr * d * sizeof(float));
  mm_ud u = {n, d, rnn, dfx_tensor_data(W), dfx_tensor_data(x), dfx_tensor_data(h0), h, tmp, 1, 0};
  mm_base(&u);
  float *expect = malloc((size_t)hr * d * sizeof(float));
  memcpy(expect, h, (size_t)hr * d * sizeof(float));
  /* Rows: 1 thread, all threads (baseline on as many, 2 here), and for the
   * square case the 1-thread loop against sgemm alone (the BLAS limit). */
  /* Row 3: all threads with intra-op parallelism off (DFX_INTRA_OP=0, read
   * when the session starts its pool), to compare in one process. */
  int threads[4] = {1, 0, 1, 0}, nrows = rnn ? 2 : 4;
  for (int k = 0; k < nrows; k++) {
    char name[48];
    u.threads = threads[k] == 1 ? 1 : 2;
    u.sgemm_only = k == 2;
    if (k == 3) setenv("DFX_INTRA_OP", "0", 1);
    bench_spec sp = {.name = k == 2   ? NM(name, "%s/t1-vs-sgemm", group)
                             : k == 3 ? NM(name, "%s/tall-nointra", group)
                                      : NM(name, "%s/%s", group, thr_name(threads[k])),
                     .group = group, .text = b.s,
                     .threads = threads[k], .nfetch = 1, .fetch = {{"w/Exit_1", 0}}, .units = n, .unit = "iter",
                     .base = mm_base, .base_ud = &u, .expect_dtype = DFX_F32, .expect = expect,
                     .expect_count = (int64_t)hr * d, .tol = 1e-3, .trace = 1};
    if (k == 2) sp.expect = NULL; /* sgemm alone computes something else */
    FEED(sp, 0, "h0", h0);
    FEED(sp, 1, "W", W);
    sp.nfeeds = 2;
    if (rnn) {
      FEED(sp, 2, "x", x);
      sp.nfeeds = 3;
    }
    bench_measure(bc, &sp);
    if (k == 3) unsetenv("DFX_INTRA_OP");
  }
  free(expect);
  free(h);
  free(tmp);
  dfx_tensor_free(h0);
  dfx_tensor_free(W);
  dfx_tensor_free(x);
  bgen_free(&b);
}

static void case_rnn(bench_ctx *bc) { run_mm(bc, "rnn", 1, 64, bc->sz.rnn, 0.1f); }
static void case_mm256(bench_ctx *bc) { run_mm(bc, "mm256", 0, 256, bc->sz.mm256, 0.05f); }

/* ---- 4. three nested loops ---- */

/* Level 0 (outer) and 1 (middle) each run the next loop and add an invariant
 * to its result; level 2 (inner) adds invariant a. Invariants a, b, c enter
 * every level through a chain of constant Enters. */
typedef struct {
  const int32_t *n;
  int level;
} nest_ud;

static void nest_body(bgen_buf *b, const char *P, void *ud, bgen_var *vars) {
  const nest_ud *u = ud;
  char n1[256], n2[256], cp[128], start[256], acc[256], inv[3][256];
  if (u->level == 2) {
    bgen_op2(b, NM(n1, "%sacc", P), "Add", NM(n2, "%sIdentity_1", P), NM(acc, "%sinv_0", P), "DT_FLOAT", NULL);
    snprintf(vars[1].next, sizeof vars[1].next, "%sacc", P);
    return;
  }
  NM(cp, "%s%c/", P, "mi"[u->level]);
  bgen_const_i32(b, NM(start, "%sstart_%c", P, "mi"[u->level]), 0, NM(n1, "%sIdentity_0", P));
  bgen_var v[2] = {{start, "DT_INT32", ""}, {NM(acc, "%sIdentity_1", P), "DT_FLOAT", ""}};
  const char *invs[3] = {NM(inv[0], "%sinv_0", P), NM(inv[1], "%sinv_1", P), NM(inv[2], "%sinv_2", P)};
  const char *ts[3] = {"DT_FLOAT", "DT_FLOAT", "DT_FLOAT"};
  nest_ud cu = {u->n, u->level + 1};
  bgen_while(b, cp, 10, u->n[u->level + 1], NULL, v, 2, invs, ts, 3, nest_body, &cu);
  bgen_op2(b, NM(n1, "%sacc", P), "Add", NM(n2, "%sExit_1", cp), invs[u->level == 0 ? 2 : 1], "DT_FLOAT", NULL);
  snprintf(vars[1].next, sizeof vars[1].next, "%sacc", P);
}

typedef struct {
  int32_t n[3];
  float got;
} nested_ud;
static void nested_base(void *ud) {
  nested_ud *u = ud;
  u->got = base_nested(u->n[0], u->n[1], u->n[2], 1, 2, 3);
}

static void case_nested(bench_ctx *bc) {
  nested_ud u = {{bc->sz.nested_o, bc->sz.nested_m, bc->sz.nested_i}, 0};
  bgen_buf b = {0};
  bgen_const_f32(&b, "a", 1, NULL);
  bgen_const_f32(&b, "b", 2, NULL);
  bgen_const_f32(&b, "c", 3, NULL);
  bgen_const_i32(&b, "n/start", 0, NULL);
  bgen_const_f32(&b, "n/acc0", 0, NULL);
  bgen_var v[2] = {{"n/start", "DT_INT32", ""}, {"n/acc0", "DT_FLOAT", ""}};
  const char *invs[3] = {"a", "b", "c"}, *ts[3] = {"DT_FLOAT", "DT_FLOAT", "DT_FLOAT"};
  nest_ud nu = {u.n, 0};
  bgen_while(&b, "n/", 10, u.n[0], NULL, v, 2, invs, ts, 3, nest_body, &nu);
  nested_base(&u);
  float expect = u.got;
  int threads[2] = {1, 0};
  for (int k = 0; k < 2; k++) {
    char name[48];
    bench_spec sp = {.name = NM(name, "nested/%s", thr_name(threads[k])), .group = "nested", .text = b.s,
                     .threads = threads[k], .nfetch = 1, .fetch = {{"n/Exit_1", 0}},
                     .units = (double)u.n[0] * u.n[1] * u.n[2], .unit = "iter", .base = nested_base, .base_ud = &u,
                     .expect_dtype = DFX_F32, .expect = &expect, .expect_count = 1, .tol = 0.5};
    bench_measure(bc, &sp);
  }
  bgen_free(&b);
}

/* ---- 5. cond in the loop body ---- */

/* x = (i % 2 == 0) ? x + 3 : x - 1, lowered as tf.cond does it. */
static void cond_body(bgen_buf *b, const char *P, void *ud, bgen_var *vars) {
  char n1[128], n2[128], n3[128], id0[128];
  NM(id0, "%sIdentity_0", P);
  bgen_const_i32(b, NM(n1, "%stwo", P), 2, id0);
  bgen_const_i32(b, NM(n1, "%szero", P), 0, id0);
  bgen_op2(b, NM(n1, "%sFloorMod", P), "FloorMod", id0, NM(n2, "%stwo", P), "DT_INT32", NULL);
  bgen_op2(b, NM(n1, "%sEqual", P), "Equal", NM(n2, "%sFloorMod", P), NM(n3, "%szero", P), "DT_INT32", NULL);
  bgen_op2(b, NM(n1, "%scond/Switch", P), "Switch", NM(n2, "%sEqual", P), NM(n3, "%sEqual", P), "DT_BOOL", NULL);
  bgen_op1(b, NM(n1, "%scond/switch_t", P), "Identity", NM(n2, "%scond/Switch:1", P), "DT_BOOL", NULL);
  bgen_op1(b, NM(n1, "%scond/switch_f", P), "Identity", NM(n2, "%scond/Switch:0", P), "DT_BOOL", NULL);
  bgen_op1(b, NM(n1, "%scond/pred_id", P), "Identity", NM(n2, "%sEqual", P), "DT_BOOL", NULL);
  bgen_op2(b, NM(n1, "%scond/Switch_1", P), "Switch", NM(n2, "%sIdentity_1", P), NM(n3, "%scond/pred_id", P),
           "DT_INT32", NULL);
  bgen_const_i32(b, NM(n1, "%scond/three", P), 3, NM(n2, "%scond/switch_t", P));
  bgen_op2(b, NM(n1, "%scond/add", P), "Add", NM(n2, "%scond/Switch_1:1", P), NM(n3, "%scond/three", P), "DT_INT32",
           NULL);
  bgen_const_i32(b, NM(n1, "%scond/one", P), 1, NM(n2, "%scond/switch_f", P));
  bgen_op2(b, NM(n1, "%scond/sub", P), "Sub", NM(n2, "%scond/Switch_1:0", P), NM(n3, "%scond/one", P), "DT_INT32",
           NULL);
  bgen_merge2(b, NM(n1, "%scond/Merge", P), NM(n2, "%scond/sub", P), NM(n3, "%scond/add", P), "DT_INT32");
  snprintf(vars[1].next, sizeof vars[1].next, "%scond/Merge", P);
}

static void cond_base(void *ud) {
  counter_ud *u = ud;
  u->got = base_cond(u->n);
}

static void case_cond(bench_ctx *bc) {
  bgen_buf b = {0};
  bgen_const_i32(&b, "w/start", 0, NULL);
  bgen_const_i32(&b, "w/x0", 0, NULL);
  bgen_var v[2] = {{"w/start", "DT_INT32", ""}, {"w/x0", "DT_INT32", ""}};
  bgen_while(&b, "w/", 10, bc->sz.cond, NULL, v, 2, NULL, NULL, 0, cond_body, NULL);
  counter_ud u = {bc->sz.cond, 0};
  cond_base(&u);
  int32_t expect = u.got;
  int threads[2] = {1, 0};
  for (int k = 0; k < 2; k++) {
    char name[48];
    bench_spec sp = {.name = NM(name, "cond/%s", thr_name(threads[k])), .group = "cond", .text = b.s,
                     .threads = threads[k], .nfetch = 1, .fetch = {{"w/Exit_1", 0}}, .units = u.n, .unit = "iter",
                     .base = cond_base, .base_ud = &u, .expect_dtype = DFX_I32, .expect = &expect,
                     .expect_count = 1};
    bench_measure(bc, &sp);
  }
  bgen_free(&b);
}

/* ---- 6. parallel_iterations with independent heavy iterations ---- */

/* last = A @ B each iteration; only the counter carries a dependency. */
static void par_body(bgen_buf *b, const char *P, void *ud, bgen_var *vars) {
  char n1[128], n2[128], n3[128], n4[128];
  bgen_op2(b, NM(n1, "%sMatMul", P), "MatMul", NM(n2, "%sinv_0", P), NM(n3, "%sinv_1", P), "DT_FLOAT",
           NM(n4, "%sIdentity_0", P));
  snprintf(vars[1].next, sizeof vars[1].next, "%sMatMul", P);
}

typedef struct {
  int32_t n;
  int d, threads;
  const float *A, *B, *W, *h0;
  float *out, *h1, *h2, *tmp;
} par_ud;
static void par_base(void *ud) {
  par_ud *u = ud;
  base_matmuls(u->n, u->d, u->A, u->B, u->out, u->threads);
}

static void case_parallel(bench_ctx *bc) {
  const int d = 128;
  int32_t n = bc->sz.par;
  dfx_tensor *A = bench_rand_f32(d, d, 1, 4), *B = bench_rand_f32(d, d, 1, 5);
  float *out = malloc(2 * (size_t)d * d * sizeof(float));
  par_ud u = {n, d, 1, dfx_tensor_data(A), dfx_tensor_data(B), NULL, NULL, out, NULL, NULL, NULL};
  base_matmuls(1, d, u.A, u.B, out, 1);
  float *expect = malloc((size_t)d * d * sizeof(float));
  memcpy(expect, out, (size_t)d * d * sizeof(float));
  int pis[2] = {1, 10};
  for (int p = 0; p < 2; p++) {
    bgen_buf b = {0};
    bgen_placeholder(&b, "A", "DT_FLOAT");
    bgen_placeholder(&b, "B", "DT_FLOAT");
    bgen_const_i32(&b, "w/start", 0, NULL);
    bgen_var v[2] = {{"w/start", "DT_INT32", ""}, {"A", "DT_FLOAT", ""}};
    const char *invs[2] = {"A", "B"}, *ts[2] = {"DT_FLOAT", "DT_FLOAT"};
    bgen_while(&b, "w/", pis[p], n, NULL, v, 2, invs, ts, 2, par_body, NULL);
    for (int t = 1; t <= 2; t++) {
      char name[48];
      par_ud *pu = &u;
      pu->threads = t;
      bench_spec sp = {.name = NM(name, "parallel/pi%d/t%d", pis[p], t), .group = "parallel", .text = b.s,
                       .threads = t, .nfeeds = 2, .nfetch = 1, .fetch = {{"w/Exit_1", 0}}, .units = n,
                       .unit = "iter", .base = par_base, .base_ud = pu, .expect_dtype = DFX_F32, .expect = expect,
                       .expect_count = (int64_t)d * d, .tol = 1e-3, .trace = 1};
      FEED(sp, 0, "A", A);
      FEED(sp, 1, "B", B);
      bench_measure(bc, &sp);
    }
    bgen_free(&b);
  }
  free(expect);
  free(out);
  dfx_tensor_free(A);
  dfx_tensor_free(B);
}

/* ---- 7. two independent loops side by side ---- */

static void frames_base(void *ud) {
  par_ud *u = ud;
  if (u->W) {
    memcpy(u->h1, u->h0, (size_t)u->d * u->d * sizeof(float));
    memcpy(u->h2, u->h0, (size_t)u->d * u->d * sizeof(float));
    base_two_loops(u->n, u->d, u->W, u->h1, u->h2, u->tmp, u->threads);
  } else {
    base_two_counters(u->n, u->threads);
  }
}

static void case_frames(bench_ctx *bc) {
  const int d = 128;
  int32_t n = bc->sz.frames, nc = bc->sz.frames_cheap;
  dfx_tensor *W = bench_rand_f32(d, d, 0.1f, 6), *h0 = bench_rand_f32(d, d, 1, 7);
  size_t dd = (size_t)d * d;
  float *h1 = malloc(dd * sizeof(float)), *h2 = malloc(dd * sizeof(float)), *tmp = malloc(2 * dd * sizeof(float));
  par_ud u = {n, d, 1, NULL, NULL, dfx_tensor_data(W), dfx_tensor_data(h0), NULL, h1, h2, tmp};
  frames_base(&u);
  float *expect = malloc(dd * sizeof(float));
  memcpy(expect, h1, dd * sizeof(float));
  bgen_buf b = {0};
  bgen_placeholder(&b, "h0", "DT_FLOAT");
  bgen_placeholder(&b, "W", "DT_FLOAT");
  gen_mm_loop(&b, "a/", n, 0);
  gen_mm_loop(&b, "b/", n, 0);
  par_ud uc = {nc, 0, 1, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
  int32_t expect_c = nc;
  bgen_buf bcnt = {0};
  gen_counter(&bcnt, "a/", nc, 10);
  gen_counter(&bcnt, "b/", nc, 10);
  for (int t = 1; t <= 2; t++) {
    char name[48];
    u.threads = t;
    bench_spec sp = {.name = NM(name, "frames/mm/t%d", t), .group = "frames", .text = b.s, .threads = t,
                     .nfeeds = 2, .nfetch = 2, .fetch = {{"a/Exit_1", 0}, {"b/Exit_1", 0}}, .units = 2.0 * n,
                     .unit = "iter", .base = frames_base, .base_ud = &u, .expect_dtype = DFX_F32, .expect = expect,
                     .expect_count = (int64_t)dd, .tol = 1e-3, .trace = 1};
    FEED(sp, 0, "h0", h0);
    FEED(sp, 1, "W", W);
    bench_measure(bc, &sp);
  }
  for (int t = 1; t <= 2; t++) {
    char name[48];
    uc.threads = t;
    bench_spec sp = {.name = NM(name, "frames/ctr/t%d", t), .group = "frames", .text = bcnt.s, .threads = t,
                     .nfetch = 2, .fetch = {{"a/Exit_0", 0}, {"b/Exit_0", 0}}, .units = 2.0 * nc, .unit = "iter",
                     .base = frames_base, .base_ud = &uc, .expect_dtype = DFX_I32, .expect = &expect_c,
                     .expect_count = 1, .trace = 1};
    bench_measure(bc, &sp);
  }
  bgen_free(&b);
  bgen_free(&bcnt);
  free(expect);
  free(h1);
  free(h2);
  free(tmp);
  dfx_tensor_free(W);
  dfx_tensor_free(h0);
}

/* ---- 8. dispatch: a chain of cheap nodes and a fan-out of matmuls ---- */

#define CHAIN 1000
#define FAN 64

typedef struct {
  int runs;
  float got;
} chain_ud;
static void chain_base(void *ud) {
  chain_ud *u = ud;
  for (int i = 0; i < u->runs; i++) u->got = base_chain(CHAIN);
}

static void case_chain(bench_ctx *bc) {
  bgen_buf b = {0};
  char n1[64], n2[64];
  /* x is fed on every run, as the C baseline takes its start value, so
   * constant folding cannot compute the chain before the run. */
  bgen_placeholder(&b, "x", "DT_FLOAT");
  bgen_const_f32(&b, "one", 1, NULL);
  for (int i = 0; i < CHAIN; i++)
    bgen_op2(&b, NM(n1, "c%d", i), "Add", i ? NM(n2, "c%d", i - 1) : "x", "one", "DT_FLOAT", NULL);
  chain_ud u = {bc->sz.chain_runs, 0};
  float expect = CHAIN;
  dfx_tensor *x0 = dfx_tensor_new(DFX_F32, NULL, 0);
  *(float *)dfx_tensor_data(x0) = 0;
  int threads[2] = {1, 0};
  for (int k = 0; k < 2; k++) {
    char name[48];
    NM(n1, "c%d", CHAIN - 1);
    bench_spec sp = {.name = NM(name, "chain/%s", thr_name(threads[k])), .group = "chain", .text = b.s,
                     .threads = threads[k], .nfeeds = 1, .nfetch = 1, .fetch = {{n1, 0}}, .runs = u.runs,
                     .units = (double)u.runs * CHAIN, .unit = "node", .base = chain_base, .base_ud = &u,
                     .expect_dtype = DFX_F32, .expect = &expect, .expect_count = 1};
    FEED(sp, 0, "x", x0);
    bench_measure(bc, &sp);
  }
  dfx_tensor_free(x0);
  bgen_free(&b);

  /* 64 independent 128x128 matmuls from the same two inputs. */
  const int d = 128;
  static char names[FAN][16];
  bgen_placeholder(&b, "A", "DT_FLOAT");
  bgen_placeholder(&b, "B", "DT_FLOAT");
  for (int i = 0; i < FAN; i++) bgen_op2(&b, NM(names[i], "mm%d", i), "MatMul", "A", "B", "DT_FLOAT", NULL);
  dfx_tensor *A = bench_rand_f32(d, d, 1, 8), *B = bench_rand_f32(d, d, 1, 9);
  float *out = malloc(2 * (size_t)d * d * sizeof(float));
  par_ud pu = {bc->sz.fan_runs * FAN, d, 1, dfx_tensor_data(A), dfx_tensor_data(B), NULL, NULL, out, NULL, NULL,
               NULL};
  base_matmuls(1, d, pu.A, pu.B, out, 1);
  float *expect_m = malloc((size_t)d * d * sizeof(float));
  memcpy(expect_m, out, (size_t)d * d * sizeof(float));
  for (int t = 1; t <= 2; t++) {
    char name[48];
    pu.threads = t;
    bench_spec sp = {.name = NM(name, "fanout/t%d", t), .group = "chain", .text = b.s, .threads = t, .nfeeds = 2,
                     .nfetch = FAN, .runs = bc->sz.fan_runs, .units = (double)bc->sz.fan_runs * FAN,
                     .unit = "matmul", .base = par_base, .base_ud = &pu, .expect_dtype = DFX_F32,
                     .expect = expect_m, .expect_count = (int64_t)d * d, .tol = 1e-3, .trace = 1};
    for (int i = 0; i < FAN; i++) sp.fetch[i] = (dfx_port){names[i], 0};
    FEED(sp, 0, "A", A);
    FEED(sp, 1, "B", B);
    bench_measure(bc, &sp);
  }
  bgen_free(&b);
  free(expect_m);
  free(out);
  dfx_tensor_free(A);
  dfx_tensor_free(B);
}

/* ---- 10. loop-invariant work: acc += A @ B, the product the same each time ---- */

/* acc = acc + A @ B, with A and B entered as constants and nothing tying the
 * product to the iteration: the licm pass computes it once, in front of
 * the loop. */
static void inv_body(bgen_buf *b, const char *P, void *ud, bgen_var *vars) {
  char n1[128], n2[128], n3[128];
  bgen_op2(b, NM(n1, "%sMatMul", P), "MatMul", NM(n2, "%sinv_0", P), NM(n3, "%sinv_1", P), "DT_FLOAT", NULL);
  bgen_op2(b, NM(n1, "%sacc", P), "Add", NM(n2, "%sIdentity_1", P), NM(n3, "%sMatMul", P), "DT_FLOAT", NULL);
  snprintf(vars[1].next, sizeof vars[1].next, "%sacc", P);
}

typedef struct {
  int32_t n;
  int d;
  const float *A, *B;
  float *acc, *tmp;
} inv_ud;
static void inv_base(void *ud) {
  inv_ud *u = ud;
  base_invariant_mm(u->n, u->d, u->A, u->B, u->acc, u->tmp);
}

/* The same graph run as given ("none") and with the licm pass: the C
 * baseline is the hoisted loop, one product and n additions. */
static void case_licm(bench_ctx *bc) {
  const int d = 128;
  int32_t n = bc->sz.licm;
  size_t dd = (size_t)d * d;
  dfx_tensor *A = bench_rand_f32(d, d, 0.1f, 10), *B = bench_rand_f32(d, d, 0.1f, 11);
  float *acc = malloc(dd * sizeof(float)), *tmp = malloc(dd * sizeof(float)), *expect = malloc(dd * sizeof(float));
  inv_ud u = {n, d, dfx_tensor_data(A), dfx_tensor_data(B), acc, tmp};
  inv_base(&u);
  memcpy(expect, acc, dd * sizeof(float));
  bgen_buf b = {0};
  bgen_placeholder(&b, "A", "DT_FLOAT");
  bgen_placeholder(&b, "B", "DT_FLOAT");
  bgen_const_i32(&b, "w/start", 0, NULL);
  bgen_var v[2] = {{"w/start", "DT_INT32", ""}, {"A", "DT_FLOAT", ""}};
  const char *invs[2] = {"A", "B"}, *ts[2] = {"DT_FLOAT", "DT_FLOAT"};
  bgen_while(&b, "w/", 10, n, NULL, v, 2, invs, ts, 2, inv_body, NULL);
  const char *opts[2] = {"none", "licm"};
  for (int k = 0; k < 2; k++) {
    char name[48];
    bench_spec sp = {.name = NM(name, "licm/%s/t1", opts[k]), .group = "licm", .text = b.s, .threads = 1,
                     .nfeeds = 2, .nfetch = 1, .fetch = {{"w/Exit_1", 0}}, .units = n, .unit = "iter",
                     .base = inv_base, .base_ud = &u, .expect_dtype = DFX_F32, .expect = expect,
                     .expect_count = (int64_t)dd, .tol = 1e-3, .optimize = opts[k]};
    FEED(sp, 0, "A", A);
    FEED(sp, 1, "B", B);
    bench_measure(bc, &sp);
  }
  bgen_free(&b);
  free(expect);
  free(acc);
  free(tmp);
  dfx_tensor_free(A);
  dfx_tensor_free(B);
}

void bench_case_memory(bench_ctx *bc); /* memcase.c */
void bench_case_kernels(bench_ctx *bc); /* kcase.c */
void bench_case_ewchain(bench_ctx *bc); /* ewcase.c */

/* Memory runs first: it forks before any engine object exists. */
const bench_case bench_cases[] = {
    {"memory", "9. counter loop: bytes allocated and retained per iteration, peak RSS", bench_case_memory},
    {"counter", "1. i < n: i += 1 (int32 scalars)", case_counter},
    {"rnn", "2. h = tanh(h @ W + x), h 1x64, W 64x64 invariant", case_rnn},
    {"mm256", "3. h = tanh(h @ W), 256x256 float32", case_mm256},
    {"nested", "4. outer x middle x inner loops, invariants at each level", case_nested},
    {"cond", "5. cond on i % 2 inside the body (FloorMod, Equal, Switch/Merge)", case_cond},
    {"parallel", "6. independent 128x128 matmul per iteration, parallel_iterations 1 vs 10", case_parallel},
    {"frames", "7. two independent loops side by side", case_frames},
    {"chain", "8. 1000 chained scalar Adds; fan-out of 64 matmuls", case_chain},
    {"licm", "10. acc += A @ B (128x128, invariant), run as given vs with the licm pass", case_licm},
    {"kernels", "11. single kernels (Tanh, Sigmoid, Add, Sum, Softmax, MatMul) vs host-compiled C, 1 and 2 threads",
     bench_case_kernels},
    {"ewchain", "12. y = tanh(x * a + b) * c over 1M floats: as given vs the ewfuse pass", bench_case_ewchain},
    {NULL, NULL, NULL},
};
