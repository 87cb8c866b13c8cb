/* queue.c - FIFOQueueV2, QueueEnqueueV2, QueueEnqueueManyV2,
 * QueueDequeueV2, QueueDequeueManyV2, QueueDequeueUpToV2, QueueCloseV2,
 * QueueSizeV2 and QueueIsClosedV2, with TF's FIFOQueue semantics and
 * messages (fifo.h has the blocking rules). Elements are tuples of
 * references to immutable tensors; EnqueueMany slices rows out of its
 * inputs (row-major, rows along dim 0) and DequeueMany/UpTo stacks rows
 * into new tensors. A DequeueMany takes elements as they come (so a batch
 * larger than the capacity completes), and puts them back in front if the
 * queue closes first, as TF does. */
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "fifo.h"

/* Every dtype whose elements have storage a queue can copy. */
#define QUEUE_TYPES                                                                                           \
  "{bool, int8, uint8, int16, uint16, int32, uint32, int64, uint64, half, bfloat16, float, double, complex64, " \
  "complex128, qint8, quint8, qint16, quint16, qint32, string}"

static uint64_t deadline_of(dfx_kctx *ctx, int64_t *ms) {
  *ms = dfx__attr_int(ctx->node, "timeout_ms", -1);
  return *ms >= 0 ? uv_hrtime() + (uint64_t)*ms * 1000000u : 0;
}

/* ---- FIFOQueueV2 ---- */

static dfx_code fifo_init(const dfx_node *n, void **state, dfx_status *st) {
  const dfx_attr_list *t = dfx__attr_list(n, "component_types"), *s = dfx__attr_list(n, "shapes");
  int nt = t ? t->n : 0, ns = s ? s->n : 0;
  if (nt > FIFO_MAX_COMPONENTS)
    return dfx__status_set(st, DFX_EUNIMPL, "queues of more than %d components are not supported (got %d)",
                           FIFO_MAX_COMPONENTS, nt);
  if (ns != 0 && ns != nt)
    return dfx__status_set(st, DFX_EINVAL, "shapes has %d entries but component_types has %d: give one per component or none",
                           ns, nt);
  for (int i = 0; i < ns; i++) {
    bool full = s->v.shape[i].rank >= 0;
    for (int d = 0; full && d < s->v.shape[i].rank; d++) full = s->v.shape[i].dims[d] >= 0;
    if (!full) {
      char b[128];
      return dfx__status_set(st, DFX_EINVAL, "FIFOQueue needs fully defined shapes, component %d has shape %s", i,
                             dfx__shape_str(s->v.shape[i].rank, s->v.shape[i].dims, b, sizeof b));
    }
  }
  return DFX_OK;
}

static dfx_code fifo_kernel(dfx_kctx *ctx) {
  dfx_fifo *q;
  if (dfx__fifo_get(ctx, &q) != DFX_OK) return ctx->st->code;
  dfx_tensor *h = dfx__kctx_alloc(ctx, 0, DFX_RESOURCE, 0, NULL);
  if (!h) return ctx->st->code;
  ((void **)h->data)[0] = q;
  return DFX_OK;
}

/* ---- enqueue ---- */

static bool same_dims(int rank, const int64_t *dims, const dfx_tensor *t, int skip) {
  if (t->ndims != rank + skip) return false;
  for (int d = 0; d < rank; d++)
    if (t->dims[d + skip] != dims[d]) return false;
  return true;
}

/* TF's ValidateTuple / ValidateManyTuple over inputs 1..n. */
static dfx_code validate(dfx_kctx *ctx, const dfx_fifo *q, bool many, int64_t *batch) {
  int n = ctx->n_in - 1;
  char a[128], b[128];
  if (n != q->n)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Wrong number of components in tuple. Expected %d, got %d", q->n, n);
  for (int i = 0; i < n; i++) {
    const dfx_tensor *t = ctx->in[1 + i];
    if (t->dtype != q->types[i])
      return dfx__kctx_fail(ctx, DFX_EINVAL, "Type mismatch in tuple component %d. Expected %s, got %s", i,
                            dfx_dtype_name(q->types[i]), dfx_dtype_name((dfx_dtype)t->dtype));
    if (many && t->ndims < 1)
      return dfx__kctx_fail(ctx, DFX_EINVAL, "EnqueueMany requires each component to have rank >= 1, component %d "
                            "has shape %s", i, DFX_SHAPE_STR(t, a));
  }
  *batch = many ? ctx->in[1]->dims[0] : 1;
  for (int i = 0; i < n; i++) {
    const dfx_tensor *t = ctx->in[1 + i];
    if (q->has_shapes && (!same_dims(q->rank[i], q->dims[i], t, many) || (many && t->dims[0] != *batch))) {
      int64_t want[DFX_MAX_DIMS + 1];
      want[0] = *batch;
      memcpy(want + many, q->dims[i], sizeof(int64_t) * (size_t)q->rank[i]);
      return dfx__kctx_fail(ctx, DFX_EINVAL, "Shape mismatch in tuple component %d. Expected %s, got %s", i,
                            dfx__shape_str(q->rank[i] + many, want, a, sizeof a), DFX_SHAPE_STR(t, b));
    }
    if (many && !q->has_shapes && t->dims[0] != *batch)
      return dfx__kctx_fail(ctx, DFX_EINVAL, "All input tensors must have the same size in the 0th dimension. "
                            "Component %d has %lld, and should have %lld", i, (long long)t->dims[0], (long long)*batch);
  }
  return DFX_OK;
}

/* Copies row r of src (rows along dim 0) into dst, or dst into row r of
 * src when `into`; strings deeply. False when out of memory. */
static bool copy_row(dfx_tensor *row, dfx_tensor *whole, int64_t r, bool into) {
  int64_t per = row->count;
  if (whole->dtype != DFX_STRING) {
    size_t bytes = row->nbytes;
    char *w = (char *)whole->data + (size_t)r * bytes;
    if (bytes) memcpy(into ? w : row->data, into ? row->data : w, bytes);
    return true;
  }
  dfx_str *w = (dfx_str *)whole->data + r * per, *e = row->data;
  dfx_str *dst = into ? w : e, *src = into ? e : w;
  for (int64_t k = 0; k < per; k++) {
    dst[k].len = 0;
    dst[k].ptr = src[k].len ? dfx__malloc(src[k].len) : NULL;
    if (src[k].len && !dst[k].ptr) return false;
    if (src[k].len) memcpy(dst[k].ptr, src[k].ptr, src[k].len);
    dst[k].len = src[k].len;
  }
  return true;
}

/* New element array (n references), from the inputs or row r of each. */
static dfx_tensor **make_elem(dfx_kctx *ctx, const dfx_fifo *q, bool many, int64_t r) {
  dfx_tensor **e = dfx__calloc((size_t)q->n, sizeof *e);
  if (!e) return NULL;
  for (int i = 0; i < q->n; i++) {
    dfx_tensor *t = ctx->in[1 + i];
    if (!many) {
      e[i] = dfx__tensor_ref(t);
      continue;
    }
    dfx_code c;
    if (!(e[i] = t->dtype == DFX_STRING ? dfx__tensor_zeros((dfx_dtype)t->dtype, t->ndims - 1, t->dims + 1, &c)
                                         : dfx__tensor_alloc((dfx_dtype)t->dtype, t->ndims - 1, t->dims + 1, &c)) ||
        !copy_row(e[i], t, r, false)) {
      dfx__fifo_elem_free((dfx_fifo *)q, e);
      return NULL;
    }
  }
  return e;
}

static dfx_code enqueue(dfx_kctx *ctx, bool many) {
  dfx_fifo *q = dfx__fifo_from_handle(ctx, 0);
  if (!q) return ctx->st->code;
  int64_t batch, ms;
  if (validate(ctx, q, many, &batch) != DFX_OK) return ctx->st->code;
  if (batch == 0) return DFX_OK;
  /* Elements are built before taking the lock: the copies may be large. */
  dfx_tensor ***elems = dfx__calloc((size_t)batch, sizeof *elems);
  if (!elems) return dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory enqueueing %lld elements", (long long)batch);
  dfx_code c = DFX_OK;
  for (int64_t r = 0; r < batch && c == DFX_OK; r++) {
    if (!(elems[r] = make_elem(ctx, q, many, r)))
      c = dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory slicing element %lld", (long long)r);
    else if (((r + 1) & 0xfff) == 0)
      c = dfx__kctx_poll(ctx);
  }
  uint64_t deadline = deadline_of(ctx, &ms);
  int64_t done = 0;
  uv_mutex_lock(&q->mu);
  /* An enqueue that comes while a close waits is behind it: it fails. */
  if (c == DFX_OK && (q->closed || q->closing)) c = dfx__kctx_fail(ctx, DFX_ECANCELED, "FIFOQueue '%s' is closed.", q->name);
  q->pending_enqueues++;
  while (c == DFX_OK && done < batch) {
    if (q->cancel_enqueues) c = dfx__kctx_fail(ctx, DFX_ECANCELED, "Enqueue operation was cancelled");
    else if (q->closed) c = dfx__kctx_fail(ctx, DFX_ECANCELED, "FIFOQueue '%s' is closed.", q->name);
    else if (q->count < q->capacity) {
      if ((c = dfx__fifo_push_back(q, elems[done])) != DFX_OK)
        dfx__kctx_fail(ctx, c, "out of memory growing FIFOQueue '%s' past %lld elements", q->name, (long long)q->count);
      else elems[done++] = NULL;
      uv_cond_broadcast(&q->cv);
    } else {
      c = dfx__fifo_wait(ctx, q, deadline, ms, "enqueue into");
    }
  }
  q->pending_enqueues--;
  uv_cond_broadcast(&q->cv);
  uv_mutex_unlock(&q->mu);
  for (int64_t r = 0; r < batch; r++) dfx__fifo_elem_free(q, elems[r]);
  dfx__free(elems);
  return c;
}

static dfx_code enqueue_kernel(dfx_kctx *ctx) { return enqueue(ctx, false); }
static dfx_code enqueue_many_kernel(dfx_kctx *ctx) { return enqueue(ctx, true); }

/* ---- dequeue ---- */

/* The op's component_types must be the queue's (TF's MatchSignature). */
static dfx_code check_out_types(dfx_kctx *ctx, const dfx_fifo *q) {
  const dfx_attr_list *t = dfx__attr_list(ctx->node, "component_types");
  bool same = t && t->n == q->n;
  for (int i = 0; same && i < q->n; i++) same = t->v.type[i] == q->types[i];
  if (same) return DFX_OK;
  char a[512], b[512];
  size_t o = 0;
  for (int i = 0; t && i < t->n && o < sizeof a; i++)
    o += (size_t)snprintf(a + o, sizeof a - o, "%s%s", i ? ", " : "", dfx_dtype_name(t->v.type[i]));
  if (!t || !t->n) a[0] = 0;
  o = 0;
  for (int i = 0; i < q->n && o < sizeof b; i++)
    o += (size_t)snprintf(b + o, sizeof b - o, "%s%s", i ? ", " : "", dfx_dtype_name(q->types[i]));
  return dfx__kctx_fail(ctx, DFX_EINVAL, "Signature mismatch: the op dequeues [%s] but FIFOQueue '%s' holds [%s]", a,
                        q->name, b);
}

static dfx_code dequeue_kernel(dfx_kctx *ctx) {
  dfx_fifo *q = dfx__fifo_from_handle(ctx, 0);
  if (!q || check_out_types(ctx, q)) return ctx->st->code;
  int64_t ms;
  uint64_t deadline = deadline_of(ctx, &ms);
  dfx_tensor **e = NULL;
  dfx_code c = DFX_OK;
  uv_mutex_lock(&q->mu);
  while (!e && c == DFX_OK) {
    if (q->count > 0) e = dfx__fifo_pop_front(q);
    else if (q->closed)
      c = dfx__kctx_fail(ctx, DFX_ERANGE, "FIFOQueue '%s' is closed and has insufficient elements (requested 1, "
                         "current size 0)", q->name);
    else c = dfx__fifo_wait(ctx, q, deadline, ms, "dequeue from");
  }
  if (e) uv_cond_broadcast(&q->cv);
  uv_mutex_unlock(&q->mu);
  if (!e) return c;
  for (int i = 0; i < q->n; i++) ctx->out[i] = e[i]; /* the element's references become the outputs */
  dfx__free(e);
  return DFX_OK;
}

/* Stacks k elements into new outputs [k] + shape. On failure nothing is
 * consumed: the caller still owns the elements. */
static dfx_code stack_outputs(dfx_kctx *ctx, const dfx_fifo *q, dfx_tensor ***elems, int64_t k) {
  for (int i = 0; i < q->n; i++) {
    int64_t dims[DFX_MAX_DIMS];
    if (q->rank[i] + 1 > DFX_MAX_DIMS)
      return dfx__kctx_fail(ctx, DFX_EINVAL, "component %d of rank %d cannot be batched (at most %d dims)", i,
                            q->rank[i], DFX_MAX_DIMS);
    dims[0] = k;
    memcpy(dims + 1, q->dims[i], sizeof(int64_t) * (size_t)q->rank[i]);
    dfx_tensor *o = dfx__kctx_alloc(ctx, i, q->types[i], q->rank[i] + 1, dims);
    if (!o) return ctx->st->code;
    if (q->types[i] == DFX_STRING) memset(o->data, 0, o->nbytes);
    for (int64_t r = 0; r < k; r++)
      if (!copy_row(elems[r][i], o, r, true)) return dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory batching strings");
  }
  return DFX_OK;
}

static dfx_code dequeue_many(dfx_kctx *ctx, bool up_to) {
  dfx_fifo *q = dfx__fifo_from_handle(ctx, 0);
  if (!q || check_out_types(ctx, q)) return ctx->st->code;
  const dfx_tensor *nt = ctx->in[1];
  char b[64];
  if (nt->count != 1 || nt->ndims != 0)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "n must be a scalar, got shape %s", DFX_SHAPE_STR(nt, b));
  int64_t n = ((const int32_t *)nt->data)[0], ms;
  if (n < 0)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "%s requested %lld < 0 elements", up_to ? "DequeueUpToOp" : "DequeueManyOp",
                          (long long)n);
  if (!q->has_shapes)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "FIFOQueue's DequeueMany and DequeueUpTo require the components to have "
                          "specified shapes.");
  if (n == 0) return stack_outputs(ctx, q, NULL, 0);
  dfx_tensor ***got = dfx__calloc((size_t)n, sizeof *got); /* n <= INT32_MAX pointers */
  if (!got) return dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory dequeueing %lld elements", (long long)n);
  uint64_t deadline = deadline_of(ctx, &ms);
  int64_t have = 0;
  dfx_code c = DFX_OK;
  bool finished = false;
  uv_mutex_lock(&q->mu);
  while (c == DFX_OK && !finished) {
    if (q->count > 0 && have < n) {
      while (q->count > 0 && have < n) got[have++] = dfx__fifo_pop_front(q);
      uv_cond_broadcast(&q->cv); /* room for blocked enqueues */
      finished = have == n;
    } else if (q->closed) {
      if (up_to && have > 0) {
        finished = true;
      } else {
        c = dfx__kctx_fail(ctx, DFX_ERANGE, "FIFOQueue '%s' is closed and has insufficient elements (requested %lld, "
                           "current size %lld)", q->name, (long long)n, (long long)(q->count + have));
      }
    } else {
      c = dfx__fifo_wait(ctx, q, deadline, ms, "dequeue from");
    }
  }
  if (c == DFX_OK) c = stack_outputs(ctx, q, got, have);
  if (c != DFX_OK) /* the batch goes back in front, in order */
    for (int64_t r = have - 1; r >= 0; r--)
      if (dfx__fifo_push_front(q, got[r]) == DFX_OK) got[r] = NULL;
  uv_cond_broadcast(&q->cv);
  uv_mutex_unlock(&q->mu);
  for (int64_t r = 0; r < have; r++) dfx__fifo_elem_free(q, got[r]);
  dfx__free(got);
  return c;
}

static dfx_code dequeue_many_kernel(dfx_kctx *ctx) { return dequeue_many(ctx, false); }
static dfx_code dequeue_up_to_kernel(dfx_kctx *ctx) { return dequeue_many(ctx, true); }

/* ---- close, size ---- */

static dfx_code close_kernel(dfx_kctx *ctx) {
  dfx_fifo *q = dfx__fifo_from_handle(ctx, 0);
  if (!q) return ctx->st->code;
  bool cancel = dfx__attr_bool(ctx->node, "cancel_pending_enqueues", false);
  dfx_code c = DFX_OK;
  uv_mutex_lock(&q->mu);
  if (cancel) {
    q->closed = q->cancel_enqueues = true;
  } else if (q->closed || q->closing) {
    c = dfx__kctx_fail(ctx, DFX_ECANCELED, "Queue '%s' is already closed.", q->name);
  } else {
    /* TF queues a plain close behind the enqueues already waiting: they
     * finish first, and enqueues that come later fail. */
    q->closing = true;
    while (q->pending_enqueues > 0 && !q->closed && c == DFX_OK) c = dfx__fifo_wait(ctx, q, 0, -1, "close");
    q->closing = false;
    if (c == DFX_OK) q->closed = true;
  }
  uv_cond_broadcast(&q->cv);
  uv_mutex_unlock(&q->mu);
  return c;
}

static dfx_code size_kernel(dfx_kctx *ctx) {
  dfx_fifo *q = dfx__fifo_from_handle(ctx, 0);
  if (!q) return ctx->st->code;
  dfx_tensor *o = dfx__kctx_alloc(ctx, 0, DFX_I32, 0, NULL);
  if (!o) return ctx->st->code;
  uv_mutex_lock(&q->mu);
  ((int32_t *)o->data)[0] = (int32_t)q->count;
  uv_mutex_unlock(&q->mu);
  return DFX_OK;
}

static dfx_code is_closed_kernel(dfx_kctx *ctx) {
  dfx_fifo *q = dfx__fifo_from_handle(ctx, 0);
  if (!q) return ctx->st->code;
  dfx_tensor *o = dfx__kctx_alloc(ctx, 0, DFX_BOOL, 0, NULL);
  if (!o) return ctx->st->code;
  uv_mutex_lock(&q->mu);
  ((uint8_t *)o->data)[0] = q->closed;
  uv_mutex_unlock(&q->mu);
  return DFX_OK;
}

#define BLOCKS (DFX_KERNEL_STATEFUL | DFX_KERNEL_BLOCKING)

static const dfx_kernel_def kernels[] = {
    {"FIFOQueueV2", "component_types: " QUEUE_TYPES, fifo_kernel, DFX_KERNEL_STATEFUL, fifo_init},
    {"QueueEnqueueV2", "Tcomponents: " QUEUE_TYPES, enqueue_kernel, BLOCKS},
    {"QueueEnqueueManyV2", "Tcomponents: " QUEUE_TYPES, enqueue_many_kernel, BLOCKS},
    {"QueueDequeueV2", "component_types: " QUEUE_TYPES, dequeue_kernel, BLOCKS},
    {"QueueDequeueManyV2", "component_types: " QUEUE_TYPES, dequeue_many_kernel, BLOCKS},
    {"QueueDequeueUpToV2", "component_types: " QUEUE_TYPES, dequeue_up_to_kernel, BLOCKS},
    {"QueueCloseV2", NULL, close_kernel, BLOCKS},
    {"QueueSizeV2", NULL, size_kernel, DFX_KERNEL_STATEFUL},
    {"QueueIsClosedV2", NULL, is_closed_kernel, DFX_KERNEL_STATEFUL},
    {NULL}};

void dfx__kernels_queue_queue(dfx_registry *r);
void dfx__kernels_queue_queue(dfx_registry *r) { dfx__kernels_add(r, kernels); }
