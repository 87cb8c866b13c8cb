/* test_session.c - sessions: pruning, feeds, bad arguments, concurrent runs,
 * cancellation and allocation-failure injection. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>
#include <uv.h>

#include "eutil.h"
#include "gtext.h"
#include "tensor.h"

TestSuite(session, .init = eu_setup, .fini = eu_teardown, .timeout = 60);

/* x (placeholder) feeds two branches; `bad` fails if it ever runs. */
static const char *PRUNE_G =
    GT_PLACEHOLDER("x", "DT_INT32") GT_CONST_I32("one", 1, "") GT_OP2("y", "Add", "x", "one", "DT_INT32", "")
    GT_CONST_F32("zero", 0, "") GT_CONST_F32("f", 1, "") GT_OP2("q", "RealDiv", "f", "zero", "DT_FLOAT", "")
    "node { name: \"bad\" op: \"CheckNumerics\" input: \"q\" attr { key: \"T\" value { type: DT_FLOAT } }"
    " attr { key: \"message\" value { s: \"must not run\" } } }\n";

Test(session, runs_only_what_fetches_need_and_feeds_replace_producers) {
  dfx_graph *g = eu_graph(PRUNE_G);
  dfx_tensor *feed = dfx_tensor_new_copy(DFX_I32, NULL, 0, &(int32_t){41}, 4);
  dfx_tensor *out[1];
  char msg[2048];
  cr_assert_eq(eu_run(g, 1, "y", out, "x", feed, msg, sizeof msg), DFX_OK, "%s", msg);
  cr_assert_eq(eu_i32(out[0]), 42);
  dfx_tensor_free(out[0]);
  /* Feeding y itself: its producer (and x) need not run at all. */
  cr_assert_eq(eu_run(g, 1, "y", out, "y", feed, msg, sizeof msg), DFX_OK, "%s", msg);
  cr_assert_eq(eu_i32(out[0]), 41);
  dfx_tensor_free(out[0]);
  /* The failing branch fails when fetched. */
  cr_assert_eq(eu_run(g, 1, "bad", out, NULL, NULL, msg, sizeof msg), DFX_EINVAL, "%s", msg);
  cr_assert(strstr(msg, "must not run") && strstr(msg, "'bad'"), "%s", msg);
  dfx_tensor_free(feed);
  dfx_graph_free(g);
}

Test(session, missing_feed_names_the_placeholder) {
  dfx_graph *g = eu_graph(PRUNE_G);
  dfx_tensor *out[1];
  char msg[2048];
  cr_assert_eq(eu_run(g, 1, "y", out, NULL, NULL, msg, sizeof msg), DFX_EINVAL, "%s", msg);
  cr_assert(strstr(msg, "placeholder") && strstr(msg, "'x'") && strstr(msg, "int32"), "%s", msg);
  dfx_graph_free(g);
}

Test(session, bad_feeds_and_fetches_are_clear_errors) {
  dfx_graph *g = eu_graph(PRUNE_G);
  dfx_tensor *f32 = dfx_tensor_new_copy(DFX_F32, NULL, 0, &(float){1}, 4);
  dfx_tensor *i32 = dfx_tensor_new_copy(DFX_I32, NULL, 0, &(int32_t){1}, 4);
  dfx_tensor *out[1];
  char msg[2048];
  cr_assert_eq(eu_run(g, 1, "y", out, "x", f32, msg, sizeof msg), DFX_EINVAL, "%s", msg);
  cr_assert(strstr(msg, "float32") && strstr(msg, "int32"), "%s", msg);
  cr_assert_eq(eu_run(g, 1, "nope", out, NULL, NULL, msg, sizeof msg), DFX_ENOTFOUND, "%s", msg);
  cr_assert(strstr(msg, "nope"), "%s", msg);
  cr_assert_eq(eu_run(g, 1, "y:3", out, "x", i32, msg, sizeof msg), DFX_EINVAL, "%s", msg);
  cr_assert_eq(eu_run(g, 1, "y", out, "ghost", i32, msg, sizeof msg), DFX_ENOTFOUND, "%s", msg);
  dfx_tensor_free(f32);
  dfx_tensor_free(i32);
  dfx_graph_free(g);
}

Test(session, feed_shape_must_match_placeholder) {
  dfx_graph *g = eu_graph("node { name: \"x\" op: \"Placeholder\" attr { key: \"dtype\" value { type: DT_FLOAT } }"
                          " attr { key: \"shape\" value { shape { dim { size: -1 } dim { size: 2 } } } } }\n"
                          "node { name: \"y\" op: \"Identity\" input: \"x\" attr { key: \"T\" value { type: DT_FLOAT } } }\n");
  float v[6] = {0};
  dfx_tensor *ok = dfx_tensor_new_copy(DFX_F32, (const int64_t[]){3, 2}, 2, v, sizeof v);
  dfx_tensor *bad = dfx_tensor_new_copy(DFX_F32, (const int64_t[]){2, 3}, 2, v, sizeof v);
  dfx_tensor *out[1];
  char msg[2048];
  cr_assert_eq(eu_run(g, 1, "y", out, "x", ok, msg, sizeof msg), DFX_OK, "%s", msg);
  cr_assert_eq(dfx_tensor_dim(out[0], 0), 3);
  dfx_tensor_free(out[0]);
  cr_assert_eq(eu_run(g, 1, "y", out, "x", bad, msg, sizeof msg), DFX_EINVAL, "%s", msg);
  cr_assert(strstr(msg, "[2,3]") && strstr(msg, "[-1,2]"), "%s", msg);
  dfx_tensor_free(ok);
  dfx_tensor_free(bad);
  dfx_graph_free(g);
}

/* As in TensorFlow, kernels are looked up after pruning: an unknown op or
 * one without a kernel fails only the runs that need it, with the node, the
 * op and the path from the fetch; other runs of the same session work. */
Test(session, unknown_op_fails_only_the_runs_that_need_it) {
  dfx_graph *g = eu_graph(GT_CONST_I32("a", 1, "") "node { name: \"b\" op: \"FrobnicateV9\" input: \"a\" }\n"
                          GT_OP1("c", "Identity", "b", "DT_INT32", "") GT_OP1("d", "Identity", "a", "DT_INT32", ""));
  char msg[2048];
  dfx_tensor *out[1] = {NULL};
  cr_assert_eq(eu_run(g, 1, "d", out, NULL, NULL, msg, sizeof msg), DFX_OK, "%s", msg);
  cr_assert_eq(eu_i32(out[0]), 1);
  dfx_tensor_free(out[0]);
  cr_assert_eq(eu_run(g, 1, "c", out, NULL, NULL, msg, sizeof msg), DFX_EUNIMPL, "%s", msg);
  cr_assert(strstr(msg, "node 'b' (FrobnicateV9)") && strstr(msg, "needed for fetch 'c:0'") &&
                strstr(msg, "path: 'b' -> 'c'"),
            "%s", msg);
  dfx_graph_free(g);
}

/* ---- concurrency ---- */

typedef struct {
  dfx_session *s;
  int runs;
  int failures;
} worker_arg;

static void run_many(void *p) {
  worker_arg *a = p;
  dfx_status *st = dfx_status_new();
  dfx_port f = {"w/Exit", 0};
  for (int i = 0; i < a->runs; i++) {
    dfx_tensor *out = NULL;
    if (dfx_session_run(a->s, NULL, NULL, NULL, 0, &f, &out, 1, NULL, 0, st) != DFX_OK ||
        *(int32_t *)dfx_tensor_data(out) != 3000)
      a->failures++;
    dfx_tensor_free(out);
  }
  dfx_status_free(st);
  dfx__tensor_cache_flush();
}

Test(session, concurrent_runs_of_one_session_match_serial_runs) {
  dfx_graph *g = eu_graph(GT_COUNTER_LOOP("w/", 0, 3000, 3, 10) GT_COUNTER_LOOP("v/", 0, 50, 1, 4));
  dfx_status *st = dfx_status_new();
  dfx_session *s = NULL;
  dfx_session_options o = {.n_threads = 3};
  cr_assert_eq(dfx_session_new(g, &o, &s, st), DFX_OK, "%s", dfx_status_message(st));
  uv_thread_t th[4];
  worker_arg args[4];
  for (int i = 0; i < 4; i++) {
    args[i] = (worker_arg){s, 20, 0};
    uv_thread_create(&th[i], run_many, &args[i]);
  }
  for (int i = 0; i < 4; i++) {
    uv_thread_join(&th[i]);
    cr_expect_eq(args[i].failures, 0, "thread %d had %d failing runs", i, args[i].failures);
  }
  dfx_session_free(s);
  dfx_status_free(st);
  dfx_graph_free(g);
}

static void cancel_soon(void *p) {
  uv_sleep(50);
  dfx_session_cancel(p);
}

Test(session, cancel_from_another_thread_ends_a_long_loop) {
  dfx_graph *g = eu_graph(GT_COUNTER_LOOP("w/", 0, 2000000000, 1, 10));
  dfx_status *st = dfx_status_new();
  dfx_session *s = NULL;
  dfx_session_options o = {.n_threads = 2};
  cr_assert_eq(dfx_session_new(g, &o, &s, st), DFX_OK, "%s", dfx_status_message(st));
  uv_thread_t th;
  uv_thread_create(&th, cancel_soon, s);
  dfx_port f = {"w/Exit", 0};
  dfx_tensor *out = NULL;
  uint64_t t0 = uv_hrtime();
  dfx_code c = dfx_session_run(s, NULL, NULL, NULL, 0, &f, &out, 1, NULL, 0, st);
  uv_thread_join(&th);
  cr_assert_eq(c, DFX_ECANCELED, "%s", dfx_status_message(st));
  cr_assert_lt((uv_hrtime() - t0) / 1000000, 5000, "cancel took too long");
  cr_assert_null(out);
  dfx_session_free(s);
  dfx_status_free(st);
  dfx_graph_free(g);
}

/* ---- allocation failures ---- */

/* Fails allocation N = 1, 2, ... through import, session creation and a run
 * of a graph with a loop and a cond; each failure must be a clean error with
 * nothing leaked, until N is large enough for everything to succeed. */
Test(session, allocation_failures_are_clean_errors, .timeout = 120) {
  static const char *text = GT_COUNTER_LOOP("w/", 0, 20, 1, 4) GT_CONST_BOOL("p", true, "")
      GT_SWITCH("s", "w/Exit", "p", "DT_INT32") GT_OP1("t", "Neg", "s:1", "DT_INT32", "")
      GT_OP1("f", "Identity", "s:0", "DT_INT32", "") GT_MERGE2("m", "f", "t", "DT_INT32", "");
  int succeeded = 0;
  for (long long n = 1; n < 20000 && !succeeded; n++) {
    dfx__tensor_cache_flush();
    long long base_blocks = eu_alloc.live_blocks;
    eu_alloc.fail_at = eu_alloc.n_allocs + n;
    dfx_status *st = dfx_status_new();
    dfx_graph *g = NULL;
    dfx_session *s = NULL;
    dfx_code c = st ? dfx_graph_import(text, strlen(text), &g, st) : DFX_ENOMEM;
    dfx_session_options o = {.n_threads = 1};
    if (c == DFX_OK) c = dfx_session_new(g, &o, &s, st);
    dfx_tensor *out = NULL;
    if (c == DFX_OK) {
      dfx_port f = {"m", 0};
      c = dfx_session_run(s, NULL, NULL, NULL, 0, &f, &out, 1, NULL, 0, st);
    }
    if (c == DFX_OK) {
      cr_assert_eq(eu_i32(out), -20);
      succeeded = 1;
    } else {
      cr_assert(c == DFX_ENOMEM, "N=%lld: expected DFX_ENOMEM, got %s: %s", n, dfx_code_name(c),
                st ? dfx_status_message(st) : "");
      cr_assert_null(out);
    }
    dfx_tensor_free(out);
    dfx_session_free(s);
    dfx_graph_free(g);
    dfx_status_free(st);
    eu_alloc.fail_at = 0;
    dfx__tensor_cache_flush();
    cr_assert_eq(eu_alloc.live_blocks, base_blocks, "N=%lld leaked %lld blocks", n, eu_alloc.live_blocks - base_blocks);
  }
  cr_assert(succeeded, "never succeeded");
}

/* A Const's value is immortal inside its session (core/tensor.h): fetched
 * Consts, their views (Reshape) and forwards (Identity) must still be
 * valid, and right, after the session and the graph are gone. ASan builds
 * turn any mistake here into a use-after-free report. */
#define VEC16 "1 float_val: 2 float_val: 3 float_val: 4 float_val: 5 float_val: 6 float_val: 7 float_val: 8 " \
              "float_val: 9 float_val: 10 float_val: 11 float_val: 12 float_val: 13 float_val: 14 float_val: 15 " \
              "float_val: 16"
static const char *CONSTS_G =
    "node { name: \"w\" op: \"Const\"" GT_TYPE("dtype", "DT_FLOAT")
    " attr { key: \"value\" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 16 } } float_val: " VEC16
    " } } } }\n"
    "node { name: \"shape\" op: \"Const\"" GT_TYPE("dtype", "DT_INT32")
    " attr { key: \"value\" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 2 } } int_val: 4 int_val: 4"
    " } } } }\n"
    "node { name: \"w44\" op: \"Reshape\" input: \"w\" input: \"shape\"" GT_TYPE("T", "DT_FLOAT")
    GT_TYPE("Tshape", "DT_INT32") " }\n"
    GT_OP1("wid", "Identity", "w", "DT_FLOAT", "") GT_CONST_F32("s", 2.5, "")
    GT_OP2("ws", "Mul", "w", "s", "DT_FLOAT", "");

Test(session, fetched_constants_outlive_session_and_graph) {
  dfx_tensor *out[5] = {NULL};
  for (int threads = 1; threads <= 2; threads++) {
    dfx_graph *g = eu_graph(CONSTS_G);
    char msg[2048];
    /* Two runs: the first run's outputs must not change the constant. */
    for (int run = 0; run < 2; run++) {
      for (int k = 0; k < 5; k++) dfx_tensor_free(out[k]);
      cr_assert_eq(eu_run(g, threads, "w,w44,wid,s,ws", out, NULL, NULL, msg, sizeof msg), DFX_OK, "%s", msg);
    }
    dfx_graph_free(g);
    for (int k = 0; k < 3; k++) {
      cr_assert_eq(dfx_tensor_count(out[k]), 16);
      const float *v = dfx_tensor_data(out[k]);
      for (int i = 0; i < 16; i++) cr_assert_eq(v[i], (float)(i + 1), "output %d element %d: %g", k, i, v[i]);
    }
    cr_assert_eq(dfx_tensor_ndims(out[1]), 2);
    cr_assert_eq(eu_f32(out[3]), 2.5f);
    const float *m = dfx_tensor_data(out[4]);
    for (int i = 0; i < 16; i++) cr_assert_eq(m[i], 2.5f * (float)(i + 1));
  }
  for (int k = 0; k < 5; k++) dfx_tensor_free(out[k]);
}

/* Scalar binary ops write into an input that nobody else holds
 * (dfx__kctx_take_unique). Shared inputs (two consumers, a fetch, a fed
 * tensor, a Const) must never be overwritten; errors must not leak. */
static const char *FORWARD_G =
    GT_PLACEHOLDER("p", "DT_INT32") GT_CONST_I32("one", 1, "") GT_CONST_I32("two", 2, "")
    GT_CONST_I32("zero", 0, "")
    GT_OP2("x", "Add", "p", "one", "DT_INT32", "")       /* p is fed: shared with the caller */
    GT_OP2("a", "Mul", "x", "two", "DT_INT32", "")       /* x has three consumers and a fetch */
    GT_OP2("b", "Sub", "x", "one", "DT_INT32", "")
    GT_OP2("c", "Add", "x", "x", "DT_INT32", "")
    GT_OP2("d", "Add", "a", "b", "DT_INT32", "")         /* a and b are private: one is reused */
    GT_OP2("e", "Add", "d", "c", "DT_INT32", "")
    GT_OP2("bad", "FloorDiv", "e", "zero", "DT_INT32", "");

Test(session, scalar_ops_reuse_only_private_inputs) {
  dfx_graph *g = eu_graph(FORWARD_G);
  for (int threads = 1; threads <= 2; threads++) {
    dfx_tensor *feed = dfx_tensor_new_copy(DFX_I32, NULL, 0, &(int32_t){20}, 4);
    dfx_tensor *out[5] = {NULL};
    char msg[2048];
    cr_assert_eq(eu_run(g, threads, "x,a,b,c,e", out, "p", feed, msg, sizeof msg), DFX_OK, "%s", msg);
    /* x = 21, a = 42, b = 20, c = 42, e = a + b + c = 104 */
    const int32_t want[5] = {21, 42, 20, 42, 104};
    for (int k = 0; k < 5; k++) cr_assert_eq(eu_i32(out[k]), want[k], "output %d: %d", k, eu_i32(out[k]));
    cr_assert_eq(eu_i32(feed), 20, "the fed tensor was overwritten");
    for (int k = 0; k < 5; k++) dfx_tensor_free(out[k]);
    /* Division by zero on a reused input: an error, nothing leaked (the
     * fixture's allocator check). */
    cr_assert_eq(eu_run(g, threads, "bad", out, "p", feed, msg, sizeof msg), DFX_EINVAL, "%s", msg);
    cr_assert(strstr(msg, "division by zero") && strstr(msg, "'bad'"), "%s", msg);
    dfx_tensor_free(feed);
  }
  dfx_graph_free(g);
  /* The Consts are intact after all of that. */
  g = eu_graph(FORWARD_G);
  dfx_tensor *feed = dfx_tensor_new_copy(DFX_I32, NULL, 0, &(int32_t){0}, 4), *out[1];
  char msg[2048];
  cr_assert_eq(eu_run(g, 1, "e", out, "p", feed, msg, sizeof msg), DFX_OK, "%s", msg);
  cr_assert_eq(eu_i32(out[0]), 2 + 0 + 2);
  dfx_tensor_free(out[0]);
  dfx_tensor_free(feed);
  dfx_graph_free(g);
}

/* The same for tensors: same-shape elementwise ops write into a private
 * input, in chunks of 4 KiB (3000 floats take three), also when the output
 * has a higher rank than the reused input; fetched and fed tensors stay. */
static const char *VEC_FORWARD_G =
    GT_PLACEHOLDER("p", "DT_FLOAT") GT_PLACEHOLDER("row", "DT_FLOAT")
    GT_OP2("a", "Mul", "p", "p", "DT_FLOAT", "")   /* p is fed: a is new */
    GT_OP2("b", "Add", "a", "p", "DT_FLOAT", "")   /* a is private: reused */
    GT_OP1("c", "Tanh", "b", "DT_FLOAT", "")       /* b is private: in place */
    GT_OP1("d", "Neg", "c", "DT_FLOAT", "")        /* c is fetched too: not reused */
    GT_OP2("e", "Sub", "d", "row", "DT_FLOAT", ""); /* [3000] - [1,3000] is [1,3000] */

Test(session, vector_ops_reuse_only_private_inputs) {
  enum { N = 3000 };
  dfx_graph *g = eu_graph(VEC_FORWARD_G);
  static float pv[N], rv[N];
  for (int i = 0; i < N; i++) {
    pv[i] = (float)(i - 1500) * 0.001f;
    rv[i] = (float)i;
  }
  int64_t d1[1] = {N}, d2[2] = {1, N};
  for (int threads = 1; threads <= 2; threads++) {
    dfx_tensor *feeds[2] = {dfx_tensor_new_copy(DFX_F32, d1, 1, pv, sizeof pv),
                            dfx_tensor_new_copy(DFX_F32, d2, 2, rv, sizeof rv)};
    dfx_session *s = NULL;
    dfx_status *st = dfx_status_new();
    dfx_session_options so = {.n_threads = threads};
    cr_assert_eq(dfx_session_new(g, &so, &s, st), DFX_OK, "%s", dfx_status_message(st));
    dfx_port fp[2] = {{"p", 0}, {"row", 0}}, out_ports[2] = {{"c", 0}, {"e", 0}};
    dfx_tensor *out[2] = {NULL, NULL};
    for (int run = 0; run < 3; run++) { /* later runs meet recycled buffers */
      for (int k = 0; k < 2; k++) dfx_tensor_free(out[k]), out[k] = NULL;
      cr_assert_eq(dfx_session_run(s, NULL, fp, feeds, 2, out_ports, out, 2, NULL, 0, st), DFX_OK, "%s",
                   dfx_status_message(st));
    }
    cr_assert_eq(dfx_tensor_ndims(out[1]), 2);
    cr_assert_eq(dfx_tensor_dim(out[1], 1), N);
    const float *c = dfx_tensor_data(out[0]), *e = dfx_tensor_data(out[1]);
    const float *p0 = dfx_tensor_data(feeds[0]), *r0 = dfx_tensor_data(feeds[1]);
    for (int i = 0; i < N; i++) {
      cr_assert_eq(p0[i], pv[i], "fed p changed at %d", i);
      cr_assert_eq(r0[i], rv[i], "fed row changed at %d", i);
      float b = pv[i] * pv[i] + pv[i];
      cr_assert(fabsf(c[i] - tanhf(b)) < 1e-6f, "c[%d] = %g, want %g", i, c[i], tanhf(b));
      cr_assert(fabsf(e[i] - (-c[i] - rv[i])) < 1e-4f, "e[%d] = %g", i, e[i]);
    }
    for (int k = 0; k < 2; k++) dfx_tensor_free(out[k]);
    dfx_tensor_free(feeds[0]);
    dfx_tensor_free(feeds[1]);
    dfx_session_free(s);
    dfx_status_free(st);
  }
  dfx_graph_free(g);
}

/* Expensive nodes that can overlap do: with 2 threads, 8 independent
 * 192x192 MatMuls are spread over both (queued nodes wake a sleeping thread
 * through dfx__pool_nudge before a long kernel starts). A loaded machine may
 * schedule one thread late, so a few runs are allowed. */
static void note_worker(void *ud, const char *node, const char *op, const char *frame, int64_t iter, int64_t t0,
                        int64_t t1, int worker) {
  (void)node, (void)op, (void)frame, (void)iter, (void)t0, (void)t1;
  if (worker >= 0 && worker < 31) __atomic_or_fetch((unsigned *)ud, 1u << worker, __ATOMIC_RELAXED);
}

Test(session, independent_matmuls_use_both_threads) {
  enum { D = 192, K = 8 };
  const char *g_text =
      GT_PLACEHOLDER("a", "DT_FLOAT")
      GT_OP2("m0", "MatMul", "a", "a", "DT_FLOAT", "") GT_OP2("m1", "MatMul", "a", "a", "DT_FLOAT", "")
      GT_OP2("m2", "MatMul", "a", "a", "DT_FLOAT", "") GT_OP2("m3", "MatMul", "a", "a", "DT_FLOAT", "")
      GT_OP2("m4", "MatMul", "a", "a", "DT_FLOAT", "") GT_OP2("m5", "MatMul", "a", "a", "DT_FLOAT", "")
      GT_OP2("m6", "MatMul", "a", "a", "DT_FLOAT", "") GT_OP2("m7", "MatMul", "a", "a", "DT_FLOAT", "");
  dfx_graph *g = eu_graph(g_text);
  int64_t d[2] = {D, D};
  dfx_tensor *a = dfx_tensor_new(DFX_F32, d, 2);
  float *av = dfx_tensor_data(a);
  for (int i = 0; i < D * D; i++) av[i] = (float)(i % 7) * 0.01f;
  dfx_session_options so = {.n_threads = 2};
  dfx_session *s = NULL;
  dfx_status *st = dfx_status_new();
  cr_assert_eq(dfx_session_new(g, &so, &s, st), DFX_OK, "%s", dfx_status_message(st));
  dfx_port feed = {"a", 0}, fetch[K];
  static const char *names[K] = {"m0", "m1", "m2", "m3", "m4", "m5", "m6", "m7"};
  for (int k = 0; k < K; k++) fetch[k] = (dfx_port){names[k], 0};
  unsigned seen = 0;
  int runs = 0;
  for (; runs < 8 && __builtin_popcount(seen) < 2; runs++) {
    unsigned workers = 0;
    dfx_run_options ro = {.trace = note_worker, .trace_ud = &workers};
    dfx_tensor *out[K] = {NULL};
    cr_assert_eq(dfx_session_run(s, runs == 0 ? NULL : &ro, &feed, &a, 1, fetch, out, K, NULL, 0, st), DFX_OK,
                 "%s", dfx_status_message(st));
    for (int k = 0; k < K; k++) dfx_tensor_free(out[k]);
    seen = workers; /* the first run (untraced) only learns the MatMul's cost */
  }
  cr_assert_geq(__builtin_popcount(seen), 2, "all MatMuls ran on one thread in %d runs (mask %#x)", runs, seen);
  dfx_tensor_free(a);
  dfx_session_free(s);
  dfx_status_free(st);
  dfx_graph_free(g);
}
