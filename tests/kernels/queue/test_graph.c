/* test_graph.c - queues through whole sessions: a queue persists across
 * runs of one session (and is freed with it), a dequeue blocked in one run
 * is served by an enqueue in another, or by one in the same run on the
 * pool, and stops on timeout_ms, the run's timeout and dfx_session_cancel.
 * Also the tf.data boundary: IteratorV2/IteratorGetNext have no kernels by
 * design; feeding IteratorGetNext's outputs cuts the iterator out, and not
 * feeding them is an error that names the feed to add. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "alloc.h"
#include "dfexec.h"
#include "lib.h"
#include "op_registry.h"
#include "tensor.h"

#define TYPE(k, t) " attr { key: \"" k "\" value { type: " t " } }"
#define TYPES1(k, t) " attr { key: \"" k "\" value { list { type: " t " } } }"

static dfx_testalloc ta;
/* The registries are process-wide: built before counting. A leak aborts
 * (Criterion does not fail a test for an assertion in .fini). */
static void setup(void) {
  dfx_status st;
  cr_assert(dfx__lib_registry(&st) != NULL, "registry: %s", st.msg);
  cr_assert_eq(dfx__op_parse_all(&st), DFX_OK, "op registry: %s", st.msg);
  memset(&ta, 0, sizeof ta);
  dfx__testalloc_install(&ta);
}
static void teardown(void) {
  dfx__tensor_cache_flush();
  dfx__testalloc_install(NULL);
  if (ta.live_blocks != 0) {
    fprintf(stderr, "leak check: %lld blocks (%lld bytes) still allocated\n", ta.live_blocks, ta.live_bytes);
    abort();
  }
}
TestSuite(queue_graph, .init = setup, .fini = teardown, .timeout = 60);

static const char *queue_graph =
    "node { name: \"q\" op: \"FIFOQueueV2\"" TYPES1("component_types", "DT_FLOAT")
    " attr { key: \"shapes\" value { list { shape { } } } } attr { key: \"capacity\" value { i: 4 } } }\n"
    "node { name: \"x\" op: \"Placeholder\"" TYPE("dtype", "DT_FLOAT") " }\n"
    "node { name: \"enq\" op: \"QueueEnqueueV2\" input: \"q\" input: \"x\"" TYPES1("Tcomponents", "DT_FLOAT") " }\n"
    "node { name: \"deq\" op: \"QueueDequeueV2\" input: \"q\"" TYPES1("component_types", "DT_FLOAT") " }\n"
    "node { name: \"deq_t\" op: \"QueueDequeueV2\" input: \"q\"" TYPES1("component_types", "DT_FLOAT")
    " attr { key: \"timeout_ms\" value { i: 50 } } }\n"
    "node { name: \"two\" op: \"Const\"" TYPE("dtype", "DT_INT32")
    " attr { key: \"value\" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 2 } } } }\n"
    "node { name: \"deq2\" op: \"QueueDequeueManyV2\" input: \"q\" input: \"two\"" TYPES1("component_types", "DT_FLOAT")
    " }\n"
    "node { name: \"size\" op: \"QueueSizeV2\" input: \"q\" }\n"
    "node { name: \"close\" op: \"QueueCloseV2\" input: \"q\" }\n";

typedef struct ctx {
  dfx_graph *g;
  dfx_session *s;
  dfx_status *st;
} ctx;

static ctx open_session(const char *text, int threads) {
  ctx c = {NULL, NULL, dfx_status_new()};
  cr_assert_eq(dfx_graph_import(text, strlen(text), &c.g, c.st), DFX_OK, "%s", dfx_status_message(c.st));
  dfx_session_options o = {.n_threads = threads};
  cr_assert_eq(dfx_session_new(c.g, &o, &c.s, c.st), DFX_OK, "%s", dfx_status_message(c.st));
  return c;
}

static void close_session(ctx *c) {
  dfx_session_free(c->s);
  dfx_graph_free(c->g);
  dfx_status_free(c->st);
}

static dfx_code put(ctx *c, float v) {
  dfx_tensor *t = dfx_tensor_new(DFX_F32, NULL, 0);
  *(float *)dfx_tensor_data(t) = v;
  dfx_port feed = {"x", 0};
  const char *target = "enq";
  dfx_code code = dfx_session_run(c->s, NULL, &feed, &t, 1, NULL, NULL, 0, &target, 1, c->st);
  dfx_tensor_free(t);
  return code;
}

static dfx_code fetch(ctx *c, const char *node, const dfx_run_options *ro, dfx_tensor **out) {
  dfx_port p = {node, 0};
  return dfx_session_run(c->s, ro, NULL, NULL, 0, &p, out, 1, NULL, 0, c->st);
}

static float take_f32(dfx_tensor *t) {
  float v = *(float *)dfx_tensor_data(t);
  dfx_tensor_free(t);
  return v;
}

Test(queue_graph, persists_across_runs) {
  ctx c = open_session(queue_graph, 2);
  for (int k = 1; k <= 3; k++) cr_assert_eq(put(&c, (float)k), DFX_OK, "%s", dfx_status_message(c.st));
  dfx_tensor *t;
  cr_assert_eq(fetch(&c, "size", NULL, &t), DFX_OK, "%s", dfx_status_message(c.st));
  cr_expect_eq(*(int32_t *)dfx_tensor_data(t), 3);
  dfx_tensor_free(t);
  cr_assert_eq(fetch(&c, "deq", NULL, &t), DFX_OK, "%s", dfx_status_message(c.st));
  cr_expect_eq(take_f32(t), 1.0f);
  cr_assert_eq(fetch(&c, "deq2", NULL, &t), DFX_OK, "%s", dfx_status_message(c.st));
  cr_expect_eq(dfx_tensor_dim(t, 0), 2);
  cr_expect_eq(((float *)dfx_tensor_data(t))[1], 3.0f);
  dfx_tensor_free(t);
  /* Elements left in the queue are freed with the session (teardown checks). */
  cr_assert_eq(put(&c, 9), DFX_OK, "%s", dfx_status_message(c.st));
  close_session(&c);
}

Test(queue_graph, timeout_ms_and_run_timeout) {
  ctx c = open_session(queue_graph, 2);
  dfx_tensor *t;
  cr_expect_eq(fetch(&c, "deq_t", NULL, &t), DFX_EDEADLINE);
  cr_expect(strstr(dfx_status_message(c.st), "Timed out after 50 ms waiting to dequeue from FIFOQueue 'q'"), "%s",
            dfx_status_message(c.st));
  dfx_run_options ro = {.timeout_sec = 0.05};
  cr_expect_eq(fetch(&c, "deq", &ro, &t), DFX_EDEADLINE, "%s", dfx_status_message(c.st));
  /* The queue still works after the failed waits. */
  cr_assert_eq(put(&c, 5), DFX_OK, "%s", dfx_status_message(c.st));
  cr_assert_eq(fetch(&c, "deq", NULL, &t), DFX_OK, "%s", dfx_status_message(c.st));
  cr_expect_eq(take_f32(t), 5.0f);
  close_session(&c);
}

/* A dequeue run blocked on an empty queue, on its own thread. */
typedef struct waiter {
  ctx *c;
  dfx_code code;
  float value;
  char msg[512];
} waiter;

static void run_dequeue(void *arg) {
  waiter *w = arg;
  dfx_status *st = dfx_status_new();
  dfx_port p = {"deq", 0};
  dfx_tensor *t = NULL;
  w->code = dfx_session_run(w->c->s, NULL, NULL, NULL, 0, &p, &t, 1, NULL, 0, st);
  snprintf(w->msg, sizeof w->msg, "%s", dfx_status_message(st));
  if (t) w->value = take_f32(t);
  dfx_status_free(st);
}

Test(queue_graph, another_run_unblocks_a_dequeue) {
  int threads[] = {1, 2};
  for (int i = 0; i < 2; i++) {
    ctx c = open_session(queue_graph, threads[i]);
    waiter w = {&c, DFX_EINTERNAL, 0, ""};
    uv_thread_t th;
    cr_assert_eq(uv_thread_create(&th, run_dequeue, &w), 0);
    uv_sleep(50);
    cr_assert_eq(put(&c, 7), DFX_OK, "%s", dfx_status_message(c.st));
    uv_thread_join(&th);
    cr_expect_eq(w.code, DFX_OK, "%s", w.msg);
    cr_expect_eq(w.value, 7.0f);
    close_session(&c);
  }
}

Test(queue_graph, cancel_stops_a_blocked_dequeue) {
  ctx c = open_session(queue_graph, 2);
  waiter w = {&c, DFX_OK, 0, ""};
  uv_thread_t th;
  cr_assert_eq(uv_thread_create(&th, run_dequeue, &w), 0);
  uv_sleep(50);
  dfx_session_cancel(c.s);
  uv_thread_join(&th);
  cr_expect_eq(w.code, DFX_ECANCELED, "%s", w.msg);
  close_session(&c);
}

/* One run that both dequeues (fetch) and enqueues (target): with a pool the
 * dequeue waits on a worker while the enqueue runs elsewhere. */
Test(queue_graph, same_run_producer_and_consumer) {
  ctx c = open_session(queue_graph, 3);
  for (int k = 0; k < 20; k++) {
    dfx_tensor *x = dfx_tensor_new(DFX_F32, NULL, 0), *t = NULL;
    *(float *)dfx_tensor_data(x) = (float)k;
    dfx_port feed = {"x", 0}, p = {"deq", 0};
    const char *target = "enq";
    cr_assert_eq(dfx_session_run(c.s, NULL, &feed, &x, 1, &p, &t, 1, &target, 1, c.st), DFX_OK, "%s",
                 dfx_status_message(c.st));
    cr_expect_eq(take_f32(t), (float)k);
    dfx_tensor_free(x);
  }
  const char *target = "close";
  cr_assert_eq(dfx_session_run(c.s, NULL, NULL, NULL, 0, NULL, NULL, 0, &target, 1, c.st), DFX_OK, "%s",
               dfx_status_message(c.st));
  dfx_tensor *t;
  cr_expect_eq(fetch(&c, "deq", NULL, &t), DFX_ERANGE);
  cr_expect(strstr(dfx_status_message(c.st), "is closed and has insufficient elements"), "%s", dfx_status_message(c.st));
  cr_expect_eq(put(&c, 1), DFX_ECANCELED);
  close_session(&c);
}

/* ---- the tf.data boundary ---- */

static const char *iterator_graph =
    "node { name: \"it\" op: \"IteratorV2\" attr { key: \"shared_name\" value { s: \"\" } }"
    " attr { key: \"container\" value { s: \"\" } }"
    " attr { key: \"output_types\" value { list { type: DT_FLOAT type: DT_INT32 } } }"
    " attr { key: \"output_shapes\" value { list { shape { dim { size: 2 } } shape { } } } } }\n"
    "node { name: \"next\" op: \"IteratorGetNext\" input: \"it\""
    " attr { key: \"output_types\" value { list { type: DT_FLOAT type: DT_INT32 } } }"
    " attr { key: \"output_shapes\" value { list { shape { dim { size: 2 } } shape { } } } } }\n"
    "node { name: \"sq\" op: \"Mul\" input: \"next\" input: \"next\"" TYPE("T", "DT_FLOAT") " }\n"
    "node { name: \"k\" op: \"Cast\" input: \"next:1\"" TYPE("SrcT", "DT_INT32") TYPE("DstT", "DT_FLOAT")
    " attr { key: \"Truncate\" value { b: false } } }\n"
    "node { name: \"out\" op: \"Mul\" input: \"sq\" input: \"k\"" TYPE("T", "DT_FLOAT") " }\n";

Test(queue_graph, iterator_get_next_fed_or_named) {
  ctx c = open_session(iterator_graph, 2);
  const int64_t two = 2;
  float xv[2] = {3, -2};
  int32_t kv = 5;
  dfx_tensor *vals[2] = {dfx_tensor_new_copy(DFX_F32, &two, 1, xv, sizeof xv),
                         dfx_tensor_new_copy(DFX_I32, NULL, 0, &kv, sizeof kv)},
             *t = NULL;
  dfx_port feeds[2] = {{"next", 0}, {"next", 1}}, p = {"out", 0};
  cr_assert_eq(dfx_session_run(c.s, NULL, feeds, vals, 2, &p, &t, 1, NULL, 0, c.st), DFX_OK, "%s",
               dfx_status_message(c.st));
  cr_expect_eq(((float *)dfx_tensor_data(t))[0], 45.0f);
  cr_expect_eq(((float *)dfx_tensor_data(t))[1], 20.0f);
  dfx_tensor_free(t);
  /* Unfed, the iterator would have to run: the error names the feed. */
  cr_expect_eq(dfx_session_run(c.s, NULL, NULL, NULL, 0, &p, &t, 1, NULL, 0, c.st), DFX_EUNIMPL);
  const char *m = dfx_status_message(c.st);
  cr_expect(strstr(m, "'next' (IteratorGetNext) reads input data from outside the graph: feed 'next:0' instead"),
            "%s", m);
  /* Feeding only one output is not enough when the other is needed. */
  cr_expect_eq(dfx_session_run(c.s, NULL, feeds, vals, 1, &p, &t, 1, NULL, 0, c.st), DFX_EUNIMPL);
  cr_expect(strstr(dfx_status_message(c.st), "IteratorGetNext"), "%s", dfx_status_message(c.st));
  dfx_tensor_free(vals[0]);
  dfx_tensor_free(vals[1]);
  close_session(&c);
}
