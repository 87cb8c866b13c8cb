/* test_queue.c - FIFO queue kernels on one shared step with a resource
 * store (as a session provides): FIFO order, Enqueue/EnqueueMany/Dequeue/
 * DequeueMany/DequeueUpTo, close semantics, TF's checks and messages,
 * shared names, handles from elsewhere, strings, timeouts and cancellation,
 * and producer/consumer threads against a reference sequence. */
#include <criterion/criterion.h>
#include <string.h>
#include <uv.h>

#include "alloc.h"
#include "kharness.h"
#include "resmgr.h"
#include "step.h"

static dfx_step step;
static char err[1024];

static void setup(void) {
  cr_assert_eq(dfx__step_init(&step), DFX_OK);
  step.store = dfx__resmgr_new();
  cr_assert(step.store);
}
static void teardown(void) {
  dfx__resmgr_free(step.store);
  dfx__step_destroy(&step);
  dfx__tensor_cache_flush();
}
TestSuite(queue, .init = setup, .fini = teardown, .timeout = 60);

/* ---- helpers ---- */

static dfx_node *qnode(const char *op, const dfx_dtype *types, int n, const char *attr) {
  dfx_node *nd = kh_node_new(op);
  if (attr) kh_attr_types(nd, attr, types, n);
  return nd;
}

/* A FIFOQueueV2 named `node_name` (shared_name may be NULL); shapes per
 * component with rank[i] dims from dims (NULL: none given). */
static dfx_tensor *make_queue(const char *node_name, const char *shared, const dfx_dtype *types, int n, int64_t cap,
                              const int *rank, const int64_t (*dims)[4], dfx_code want) {
  dfx_node *nd = qnode("FIFOQueueV2", types, n, "component_types");
  dfx__free(nd->name);
  nd->name = dfx__strdup(node_name);
  if (shared) kh_attr_str(nd, "shared_name", shared);
  kh_attr_int(nd, "capacity", cap);
  if (rank) { /* a list(shape) attr, built in place of a list(int) one */
    int64_t zeros[8] = {0};
    kh_attr_ints(nd, "shapes", zeros, n);
    dfx_attr *a = &nd->attrs[nd->n_attrs - 1];
    dfx__free(a->v.list.v.i);
    a->v.list.kind = DFX_ATTR_SHAPE;
    a->v.list.v.shape = dfx__calloc((size_t)n, sizeof(dfx_shape));
    for (int i = 0; i < n; i++) {
      a->v.list.v.shape[i].rank = rank[i];
      a->v.list.v.shape[i].dims = dfx__malloc(sizeof(int64_t) * 4);
      memcpy(a->v.list.v.shape[i].dims, dims[i], sizeof(int64_t) * 4);
    }
  }
  dfx_tensor *h = NULL;
  dfx_code c = kh_run_step(nd, NULL, 0, &h, NULL, &step, err, sizeof err);
  cr_assert_eq(c, want, "FIFOQueueV2: %s", err);
  kh_node_free(nd);
  return h;
}

static dfx_code enqueue(dfx_tensor *h, dfx_tensor **comps, int n, bool many, int64_t timeout_ms) {
  dfx_dtype types[8];
  for (int i = 0; i < n; i++) types[i] = (dfx_dtype)comps[i]->dtype;
  dfx_node *nd = qnode(many ? "QueueEnqueueManyV2" : "QueueEnqueueV2", types, n, "Tcomponents");
  kh_attr_int(nd, "timeout_ms", timeout_ms);
  dfx_tensor *in[9] = {h};
  for (int i = 0; i < n; i++) in[1 + i] = comps[i];
  dfx_code c = kh_run_step(nd, in, n + 1, NULL, NULL, &step, err, sizeof err);
  kh_node_free(nd);
  return c;
}

/* kind: 0 Dequeue, 1 DequeueMany, 2 DequeueUpTo. */
static dfx_code dequeue(dfx_tensor *h, const dfx_dtype *types, int n, int kind, int32_t count, int64_t timeout_ms,
                        dfx_tensor **out) {
  static const char *ops[] = {"QueueDequeueV2", "QueueDequeueManyV2", "QueueDequeueUpToV2"};
  dfx_node *nd = qnode(ops[kind], types, n, "component_types");
  kh_attr_int(nd, "timeout_ms", timeout_ms);
  dfx_tensor *cnt = kh_scalar_i32(count), *in[2] = {h, cnt};
  for (int i = 0; i < n; i++) out[i] = NULL;
  dfx_code c = kh_run_step(nd, in, kind ? 2 : 1, out, NULL, &step, err, sizeof err);
  dfx__tensor_unref(cnt);
  kh_node_free(nd);
  return c;
}

static dfx_code close_q(dfx_tensor *h, bool cancel) {
  dfx_node *nd = kh_node_new("QueueCloseV2");
  kh_attr_bool(nd, "cancel_pending_enqueues", cancel);
  dfx_code c = kh_run_step(nd, &h, 1, NULL, NULL, &step, err, sizeof err);
  kh_node_free(nd);
  return c;
}

static int32_t size_q(dfx_tensor *h) {
  dfx_node *nd = kh_node_new("QueueSizeV2");
  dfx_tensor *o = NULL;
  cr_assert_eq(kh_run_step(nd, &h, 1, &o, NULL, &step, err, sizeof err), DFX_OK, "%s", err);
  int32_t v = ((int32_t *)o->data)[0];
  dfx__tensor_unref(o);
  kh_node_free(nd);
  return v;
}

static bool is_closed(dfx_tensor *h) {
  dfx_node *nd = kh_node_new("QueueIsClosedV2");
  dfx_tensor *o = NULL;
  cr_assert_eq(kh_run_step(nd, &h, 1, &o, NULL, &step, err, sizeof err), DFX_OK, "%s", err);
  bool v = ((uint8_t *)o->data)[0];
  dfx__tensor_unref(o);
  kh_node_free(nd);
  return v;
}

static const dfx_dtype F_I[] = {DFX_F32, DFX_I32};

/* ---- order and shapes ---- */

Test(queue, fifo_order_single_and_many) {
  const int rank[] = {1, 0};
  const int64_t dims[][4] = {{2}, {0}};
  dfx_tensor *h = make_queue("q", NULL, F_I, 2, -1, rank, dims, DFX_OK);
  /* Reference: a plain array of (float pair, int) in FIFO order. */
  float ref_f[64][2];
  int32_t ref_i[64];
  int nref = 0, taken = 0;
  for (int k = 0; k < 3; k++) {
    float f[2] = {(float)k, (float)k + 0.5f};
    int32_t i = 100 + k;
    int64_t two = 2;
    dfx_tensor *c[2] = {kh_f32(1, &two, f), kh_i32(0, NULL, &i)};
    cr_assert_eq(enqueue(h, c, 2, false, -1), DFX_OK, "%s", err);
    memcpy(ref_f[nref], f, sizeof f);
    ref_i[nref++] = i;
    dfx__tensor_unref(c[0]);
    dfx__tensor_unref(c[1]);
  }
  /* EnqueueMany of 4 rows. */
  int64_t d2[] = {4, 2}, d1[] = {4};
  float fm[8];
  int32_t im[4];
  for (int r = 0; r < 4; r++) {
    fm[2 * r] = 10.0f + (float)r;
    fm[2 * r + 1] = -(float)r;
    im[r] = 200 + r;
    memcpy(ref_f[nref], fm + 2 * r, sizeof(float) * 2);
    ref_i[nref++] = im[r];
  }
  dfx_tensor *c[2] = {kh_f32(2, d2, fm), kh_i32(1, d1, im)};
  cr_assert_eq(enqueue(h, c, 2, true, -1), DFX_OK, "%s", err);
  dfx__tensor_unref(c[0]);
  dfx__tensor_unref(c[1]);
  cr_expect_eq(size_q(h), 7);
  /* One Dequeue, a DequeueMany of 4, a DequeueUpTo of 10 after close. */
  dfx_tensor *o[2];
  cr_assert_eq(dequeue(h, F_I, 2, 0, 0, -1, o), DFX_OK, "%s", err);
  cr_expect_eq(o[0]->ndims, 1);
  cr_expect_eq(((float *)o[0]->data)[1], ref_f[taken][1]);
  cr_expect_eq(((int32_t *)o[1]->data)[0], ref_i[taken]);
  taken++;
  dfx__tensor_unref(o[0]);
  dfx__tensor_unref(o[1]);
  cr_assert_eq(dequeue(h, F_I, 2, 1, 4, -1, o), DFX_OK, "%s", err);
  cr_expect_eq(o[0]->dims[0], 4);
  cr_expect_eq(o[0]->dims[1], 2);
  cr_expect_eq(o[1]->ndims, 1);
  for (int r = 0; r < 4; r++, taken++) {
    cr_expect_eq(((float *)o[0]->data)[2 * r], ref_f[taken][0]);
    cr_expect_eq(((float *)o[0]->data)[2 * r + 1], ref_f[taken][1]);
    cr_expect_eq(((int32_t *)o[1]->data)[r], ref_i[taken]);
  }
  dfx__tensor_unref(o[0]);
  dfx__tensor_unref(o[1]);
  cr_expect_not(is_closed(h));
  cr_assert_eq(close_q(h, false), DFX_OK, "%s", err);
  cr_expect(is_closed(h));
  cr_expect_eq(dequeue(h, F_I, 2, 1, 3, -1, o), DFX_ERANGE);
  cr_expect(strstr(err, "FIFOQueue 'q' is closed and has insufficient elements (requested 3, current size 2)"), "%s", err);
  cr_assert_eq(dequeue(h, F_I, 2, 2, 10, -1, o), DFX_OK, "%s", err);
  cr_expect_eq(o[0]->dims[0], 2);
  for (int r = 0; r < 2; r++, taken++) cr_expect_eq(((int32_t *)o[1]->data)[r], ref_i[taken]);
  cr_expect_eq(taken, nref);
  dfx__tensor_unref(o[0]);
  dfx__tensor_unref(o[1]);
  cr_expect_eq(dequeue(h, F_I, 2, 2, 1, -1, o), DFX_ERANGE);
  cr_expect_eq(dequeue(h, F_I, 2, 0, 0, -1, o), DFX_ERANGE);
  cr_expect(strstr(err, "(requested 1, current size 0)"), "%s", err);
  dfx__tensor_unref(h);
}

Test(queue, close_rules) {
  dfx_tensor *h = make_queue("q", NULL, F_I, 1, 2, NULL, NULL, DFX_OK), *o[1];
  dfx_tensor *v = kh_scalar_f32(1);
  cr_assert_eq(enqueue(h, &v, 1, false, -1), DFX_OK, "%s", err);
  cr_assert_eq(close_q(h, false), DFX_OK, "%s", err);
  cr_expect_eq(enqueue(h, &v, 1, false, -1), DFX_ECANCELED);
  cr_expect(strstr(err, "FIFOQueue 'q' is closed."), "%s", err);
  cr_expect_eq(close_q(h, false), DFX_ECANCELED);
  cr_expect(strstr(err, "Queue 'q' is already closed."), "%s", err);
  cr_expect_eq(close_q(h, true), DFX_OK, "%s", err); /* closing again with cancel is fine */
  /* Elements enqueued before the close can still be dequeued. */
  cr_assert_eq(dequeue(h, F_I, 1, 0, 0, -1, o), DFX_OK, "%s", err);
  cr_expect_eq(((float *)o[0]->data)[0], 1.0f);
  dfx__tensor_unref(o[0]);
  dfx__tensor_unref(v);
  dfx__tensor_unref(h);
}

Test(queue, checks_and_messages) {
  const int rank[] = {1};
  const int64_t dims[][4] = {{3}};
  dfx_tensor *h = make_queue("q", NULL, F_I, 1, -1, rank, dims, DFX_OK), *o[2];
  int64_t two = 2, d23[] = {2, 3};
  dfx_tensor *bad_shape = kh_f32(1, &two, NULL), *bad_type = kh_i32(1, &two, NULL), *many = kh_f32(2, d23, NULL);
  dfx_tensor *scalar = kh_scalar_f32(1);
  cr_expect_eq(enqueue(h, &bad_shape, 1, false, -1), DFX_EINVAL);
  cr_expect(strstr(err, "Shape mismatch in tuple component 0. Expected [3], got [2]"), "%s", err);
  cr_expect_eq(enqueue(h, &bad_type, 1, false, -1), DFX_EINVAL);
  cr_expect(strstr(err, "Type mismatch in tuple component 0. Expected float32, got int32"), "%s", err);
  cr_expect_eq(enqueue(h, &bad_shape, 1, true, -1), DFX_EINVAL);
  cr_expect(strstr(err, "Shape mismatch in tuple component 0. Expected [2,3], got [2]") ||
                strstr(err, "Shape mismatch in tuple component 0. Expected [2, 3], got [2]"),
            "%s", err);
  cr_expect_eq(enqueue(h, &scalar, 1, true, -1), DFX_EINVAL);
  cr_assert_eq(enqueue(h, &many, 1, true, -1), DFX_OK, "%s", err);
  dfx_tensor *two_comps[2] = {many, many};
  cr_expect_eq(enqueue(h, two_comps, 2, false, -1), DFX_EINVAL);
  cr_expect(strstr(err, "Wrong number of components in tuple. Expected 1, got 2"), "%s", err);
  cr_expect_eq(dequeue(h, F_I, 1, 1, -1, -1, o), DFX_EINVAL);
  cr_expect(strstr(err, "DequeueManyOp requested -1 < 0 elements"), "%s", err);
  cr_expect_eq(dequeue(h, F_I, 1, 2, -5, -1, o), DFX_EINVAL);
  cr_expect(strstr(err, "DequeueUpToOp requested -5 < 0 elements"), "%s", err);
  const dfx_dtype wrong[] = {DFX_F64};
  cr_expect_eq(dequeue(h, wrong, 1, 0, 0, -1, o), DFX_EINVAL);
  cr_expect(strstr(err, "Signature mismatch"), "%s", err);
  /* DequeueMany 0: empty batch of the component shape, without waiting. */
  cr_assert_eq(dequeue(h, F_I, 1, 1, 0, -1, o), DFX_OK, "%s", err);
  cr_expect_eq(o[0]->ndims, 2);
  cr_expect_eq(o[0]->dims[0], 0);
  cr_expect_eq(o[0]->dims[1], 3);
  dfx__tensor_unref(o[0]);
  cr_expect_eq(size_q(h), 2);
  /* Empty EnqueueMany is a no-op. */
  int64_t d03[] = {0, 3};
  dfx_tensor *none = kh_f32(2, d03, NULL);
  cr_expect_eq(enqueue(h, &none, 1, true, -1), DFX_OK, "%s", err);
  cr_expect_eq(size_q(h), 2);
  /* Without shapes: no DequeueMany, and EnqueueMany rows must agree. */
  dfx_tensor *u = make_queue("u", NULL, F_I, 2, -1, NULL, NULL, DFX_OK);
  int64_t d3 = 3;
  dfx_tensor *c2[2] = {many, kh_i32(1, &d3, NULL)};
  cr_expect_eq(enqueue(u, c2, 2, true, -1), DFX_EINVAL);
  cr_expect(strstr(err, "All input tensors must have the same size in the 0th dimension. Component 1 has 3, and "
                        "should have 2"), "%s", err);
  cr_expect_eq(dequeue(u, F_I, 2, 1, 1, -1, o), DFX_EINVAL);
  cr_expect(strstr(err, "require the components to have specified shapes"), "%s", err);
  dfx__tensor_unref(c2[1]);
  dfx_tensor *vals[] = {bad_shape, bad_type, many, scalar, none, u, h};
  for (int i = 0; i < 7; i++) dfx__tensor_unref(vals[i]);
}

Test(queue, bad_attrs_and_handles) {
  /* Shapes count and full definition are checked when the node is planned. */
  const int rank[] = {1, 1};
  const int64_t dims[][4] = {{-1}, {2}};
  make_queue("a", NULL, F_I, 2, -1, rank, dims, DFX_EINVAL);
  cr_expect(strstr(err, "fully defined"), "%s", err);
  make_queue("b", NULL, F_I, 1, -1, rank + 1, dims + 1, DFX_OK);
  dfx_tensor *h = make_queue("c", NULL, F_I, 2, -1, NULL, NULL, DFX_OK);
  /* A forged handle is refused, not followed. */
  int x = 0;
  dfx_tensor *fake = dfx__tensor_alloc(DFX_RESOURCE, 0, NULL, NULL);
  ((void **)fake->data)[0] = &x;
  cr_expect_eq(size_q(h), 0);
  dfx_node *nd = kh_node_new("QueueSizeV2");
  dfx_tensor *o = NULL;
  cr_expect_eq(kh_run_step(nd, &fake, 1, &o, NULL, &step, err, sizeof err), DFX_ENOTFOUND);
  cr_expect(strstr(err, "does not name a queue of this session"), "%s", err);
  /* Outside a session there is no store. */
  cr_expect_eq(kh_run(nd, &h, 1, &o, NULL, err, sizeof err), DFX_ENOTFOUND);
  kh_node_free(nd);
  dfx__tensor_unref(fake);
  dfx__tensor_unref(h);
}

Test(queue, shared_names) {
  dfx_tensor *a = make_queue("n1", "shared", F_I, 2, 5, NULL, NULL, DFX_OK);
  dfx_tensor *b = make_queue("n2", "shared", F_I, 2, 5, NULL, NULL, DFX_OK);
  cr_expect_eq(((void **)a->data)[0], ((void **)b->data)[0], "one queue under one shared_name");
  dfx_tensor *c = make_queue("n1", NULL, F_I, 2, 5, NULL, NULL, DFX_OK);
  dfx_tensor *d = make_queue("n1", NULL, F_I, 2, 5, NULL, NULL, DFX_OK);
  cr_expect_eq(((void **)c->data)[0], ((void **)d->data)[0], "the node's own queue persists");
  cr_expect_neq(((void **)a->data)[0], ((void **)c->data)[0]);
  make_queue("n3", "shared", F_I, 2, 6, NULL, NULL, DFX_EINVAL);
  cr_expect(strstr(err, "Shared queue 'shared' has capacity 5 but requested capacity was 6"), "%s", err);
  make_queue("n3", "shared", F_I, 1, 5, NULL, NULL, DFX_EINVAL);
  cr_expect(strstr(err, "Shared queue 'shared' has component types [float32, int32] but requested component types "
                        "were [float32]"), "%s", err);
  const int rank[] = {0, 0};
  const int64_t dims[][4] = {{0}, {0}};
  make_queue("n3", "shared", F_I, 2, 5, rank, dims, DFX_EINVAL);
  cr_expect(strstr(err, "has component shapes [] but requested component shapes were [[], []]"), "%s", err);
  dfx__tensor_unref(a);
  dfx__tensor_unref(b);
  dfx__tensor_unref(c);
  dfx__tensor_unref(d);
}

Test(queue, strings_and_dtypes) {
  const dfx_dtype types[] = {DFX_STRING, DFX_C128, DFX_BOOL, DFX_I64};
  const int rank[] = {1, 0, 0, 1};
  const int64_t dims[][4] = {{2}, {0}, {0}, {1}};
  dfx_tensor *h = make_queue("s", NULL, types, 4, -1, rank, dims, DFX_OK), *o[4];
  for (int k = 0; k < 3; k++) {
    int64_t d2[] = {1, 2}, d1[] = {1}, d11[] = {1, 1};
    dfx_tensor *s = dfx__tensor_zeros(DFX_STRING, 2, d2, NULL);
    char a[16], b[16];
    snprintf(a, sizeof a, "row%d", k);
    snprintf(b, sizeof b, "x%dy", k * 7);
    dfx_tensor_set_string(s, 0, a, strlen(a));
    dfx_tensor_set_string(s, 1, b, strlen(b));
    double cz[2] = {k, -k};
    uint8_t bo = k & 1;
    int64_t l = 1000 + k;
    dfx_tensor *c[4] = {s, kh_tensor(DFX_C128, 1, d1, cz), kh_bool(1, d1, &bo), kh_i64(2, d11, &l)};
    cr_assert_eq(enqueue(h, c, 4, true, -1), DFX_OK, "%s", err);
    for (int i = 0; i < 4; i++) dfx__tensor_unref(c[i]);
  }
  cr_assert_eq(dequeue(h, types, 4, 1, 3, -1, o), DFX_OK, "%s", err);
  for (int k = 0; k < 3; k++) {
    char a[16];
    size_t len;
    snprintf(a, sizeof a, "row%d", k);
    const char *got = dfx_tensor_string(o[0], 2 * k, &len);
    cr_expect(len == strlen(a) && memcmp(got, a, len) == 0, "row %d", k);
    cr_expect_eq(((double *)o[1]->data)[2 * k + 1], -k);
    cr_expect_eq(((uint8_t *)o[2]->data)[k], k & 1);
    cr_expect_eq(((int64_t *)o[3]->data)[k], 1000 + k);
  }
  for (int i = 0; i < 4; i++) dfx__tensor_unref(o[i]);
  dfx__tensor_unref(h);
}

/* ---- blocking ---- */

Test(queue, timeouts) {
  dfx_tensor *h = make_queue("t", NULL, F_I, 1, 1, NULL, NULL, DFX_OK), *o[1];
  dfx_tensor *v = kh_scalar_f32(1);
  uint64_t t0 = uv_hrtime();
  cr_expect_eq(dequeue(h, F_I, 1, 0, 0, 50, o), DFX_EDEADLINE);
  double ms = (double)(uv_hrtime() - t0) / 1e6;
  cr_expect(ms >= 45 && ms < 2000, "waited %.1f ms", ms);
  cr_expect(strstr(err, "Timed out after 50 ms waiting to dequeue from FIFOQueue 't'"), "%s", err);
  cr_assert_eq(enqueue(h, &v, 1, false, 20), DFX_OK, "%s", err);
  cr_expect_eq(enqueue(h, &v, 1, false, 20), DFX_EDEADLINE); /* full: capacity 1 */
  cr_expect(strstr(err, "waiting to enqueue into"), "%s", err);
  cr_expect_eq(size_q(h), 1);
  dfx__tensor_unref(v);
  dfx__tensor_unref(h);
}

Test(queue, cancel_and_run_deadline_stop_a_wait) {
  dfx_tensor *h = make_queue("c", NULL, F_I, 1, -1, NULL, NULL, DFX_OK), *o[1];
  dfx__step_cancel(&step);
  cr_expect_eq(dequeue(h, F_I, 1, 0, 0, -1, o), DFX_ECANCELED, "%s", err);
  step.cancelled = 0;
  step.deadline_ns = uv_hrtime() + 30 * 1000000u;
  cr_expect_eq(dequeue(h, F_I, 1, 0, 0, -1, o), DFX_EDEADLINE, "%s", err);
  step.deadline_ns = 0;
  dfx__tensor_unref(h);
}

/* Producer and consumer threads through a queue of capacity 3, with
 * DequeueMany batches larger than the capacity; the consumer must see
 * 0..N-1 in order. */
typedef struct pc {
  dfx_tensor *h;
  int n;
} pc;

static void producer(void *arg) {
  pc *p = arg;
  for (int k = 0; k < p->n; k++) {
    float f = (float)k;
    dfx_tensor *v = kh_scalar_f32(f);
    dfx_dtype t = DFX_F32;
    dfx_node *nd = qnode("QueueEnqueueV2", &t, 1, "Tcomponents");
    dfx_tensor *in[2] = {p->h, v};
    char e[256];
    dfx_code c = kh_run_step(nd, in, 2, NULL, NULL, &step, e, sizeof e);
    kh_node_free(nd);
    dfx__tensor_unref(v);
    if (c != DFX_OK) return;
  }
}

Test(queue, producer_consumer_threads) {
  const int rank[] = {0};
  const int64_t dims[][4] = {{0}};
  dfx_tensor *h = make_queue("pc", NULL, F_I, 1, 3, rank, dims, DFX_OK), *o[1];
  pc p = {h, 200};
  uv_thread_t th;
  cr_assert_eq(uv_thread_create(&th, producer, &p), 0);
  int next = 0;
  while (next < p.n) {
    int want = next % 3 == 0 ? 7 : 1;
    if (next + want > p.n) want = p.n - next;
    cr_assert_eq(dequeue(h, F_I, 1, want > 1 ? 1 : 0, want, 10000, o), DFX_OK, "%s", err);
    for (int k = 0; k < want; k++, next++) cr_assert_eq(((float *)o[0]->data)[k], (float)next);
    dfx__tensor_unref(o[0]);
  }
  uv_thread_join(&th);
  cr_expect_eq(size_q(h), 0);
  dfx__tensor_unref(h);
}

/* A close wakes a blocked dequeuer (OutOfRange) and, with
 * cancel_pending_enqueues, a blocked enqueuer (Cancelled). */
static dfx_code waiter_code;
static char waiter_err[512];
static void blocked_dequeue(void *arg) {
  dfx_tensor *o[1] = {NULL};
  dfx_node *nd = qnode("QueueDequeueV2", F_I, 1, "component_types");
  waiter_code = kh_run_step(nd, (dfx_tensor **)&arg, 1, o, NULL, &step, waiter_err, sizeof waiter_err);
  kh_node_free(nd);
}
static void blocked_enqueue(void *arg) {
  dfx_tensor *v = kh_scalar_f32(2), *in[2] = {arg, v};
  dfx_node *nd = qnode("QueueEnqueueV2", F_I, 1, "Tcomponents");
  waiter_code = kh_run_step(nd, in, 2, NULL, NULL, &step, waiter_err, sizeof waiter_err);
  kh_node_free(nd);
  dfx__tensor_unref(v);
}

Test(queue, close_wakes_waiters) {
  dfx_tensor *h = make_queue("w", NULL, F_I, 1, 1, NULL, NULL, DFX_OK);
  uv_thread_t th;
  waiter_code = DFX_OK;
  cr_assert_eq(uv_thread_create(&th, blocked_dequeue, h), 0);
  uv_sleep(50);
  cr_assert_eq(close_q(h, false), DFX_OK, "%s", err);
  uv_thread_join(&th);
  cr_expect_eq(waiter_code, DFX_ERANGE, "%s", waiter_err);
  dfx_tensor *h2 = make_queue("w2", NULL, F_I, 1, 1, NULL, NULL, DFX_OK), *v = kh_scalar_f32(1);
  cr_assert_eq(enqueue(h2, &v, 1, false, -1), DFX_OK, "%s", err);
  cr_assert_eq(uv_thread_create(&th, blocked_enqueue, h2), 0);
  uv_sleep(50);
  cr_assert_eq(close_q(h2, true), DFX_OK, "%s", err);
  uv_thread_join(&th);
  cr_expect_eq(waiter_code, DFX_ECANCELED, "%s", waiter_err);
  cr_expect(strstr(waiter_err, "Enqueue operation was cancelled"), "%s", waiter_err);
  cr_expect_eq(size_q(h2), 1);
  dfx__tensor_unref(v);
  dfx__tensor_unref(h);
  dfx__tensor_unref(h2);
}

/* A plain close waits for an enqueue already blocked on a full queue; that
 * enqueue completes once a dequeue makes room. */
static void do_close(void *arg) {
  dfx_node *nd = kh_node_new("QueueCloseV2");
  waiter_code = kh_run_step(nd, (dfx_tensor **)&arg, 1, NULL, NULL, &step, waiter_err, sizeof waiter_err);
  kh_node_free(nd);
}

Test(queue, close_waits_for_pending_enqueue) {
  dfx_tensor *h = make_queue("p", NULL, F_I, 1, 1, NULL, NULL, DFX_OK), *v = kh_scalar_f32(1), *o[1];
  cr_assert_eq(enqueue(h, &v, 1, false, -1), DFX_OK, "%s", err);
  uv_thread_t enq, cls;
  cr_assert_eq(uv_thread_create(&enq, blocked_enqueue, h), 0);
  uv_sleep(50);
  cr_assert_eq(uv_thread_create(&cls, do_close, h), 0);
  uv_sleep(50);
  cr_expect_not(is_closed(h), "the close waits behind the pending enqueue");
  cr_assert_eq(dequeue(h, F_I, 1, 0, 0, -1, o), DFX_OK, "%s", err);
  dfx__tensor_unref(o[0]);
  uv_thread_join(&enq);
  uv_thread_join(&cls);
  cr_expect(is_closed(h));
  cr_expect_eq(size_q(h), 1, "the pending enqueue went in before the close");
  dfx__tensor_unref(v);
  dfx__tensor_unref(h);
}
