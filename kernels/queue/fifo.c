/* fifo.c - FIFO queue objects (fifo.h): creation from FIFOQueueV2's attrs
 * and the match check for a shared name, handle checks, the element ring,
 * and the sliced wait. A queue lives in the session's resource store under
 * (container, shared_name), or (container, "_node/" + node name) when
 * shared_name is empty: like TF's per-kernel queue, it then belongs to its
 * node and persists across the session's runs. */
#include "fifo.h"

#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "step.h"

static void fifo_free(void *obj) {
  dfx_fifo *q = obj;
  while (q->count) dfx__fifo_elem_free(q, dfx__fifo_pop_front(q));
  dfx__free(q->slots);
  for (int i = 0; i < q->n; i++) dfx__free(q->dims[i]);
  dfx__free(q->name);
  uv_cond_destroy(&q->cv);
  uv_mutex_destroy(&q->mu);
  dfx__free(q);
}

const dfx_res_kind dfx__fifo_type = {"FIFOQueue", fifo_free};

/* ---- creation ---- */

typedef struct fifo_spec {
  const char *name;
  const dfx_attr_list *types, *shapes;
  int64_t capacity;
  bool created; /* set by fifo_create: a queue found under the name must match the attrs instead */
} fifo_spec;

static dfx_code fifo_create(void *ud, void **obj, dfx_status *st) {
  fifo_spec *sp = ud;
  dfx_fifo *q = dfx__calloc(1, sizeof *q);
  if (!q) return dfx__status_set(st, DFX_ENOMEM, "out of memory creating a queue");
  if (uv_mutex_init(&q->mu)) {
    dfx__free(q);
    return dfx__status_set(st, DFX_EINTERNAL, "cannot create a mutex");
  }
  if (uv_cond_init(&q->cv)) {
    uv_mutex_destroy(&q->mu);
    dfx__free(q);
    return dfx__status_set(st, DFX_EINTERNAL, "cannot create a condition variable");
  }
  q->n = sp->types->n;
  q->capacity = sp->capacity;
  q->has_shapes = sp->shapes && sp->shapes->n > 0;
  bool ok = (q->name = dfx__strdup(sp->name)) != NULL;
  for (int i = 0; i < q->n; i++) {
    q->types[i] = sp->types->v.type[i];
    if (!q->has_shapes) continue;
    const dfx_shape *s = &sp->shapes->v.shape[i];
    q->rank[i] = s->rank;
    if (ok && !(q->dims[i] = dfx__malloc(sizeof(int64_t) * (size_t)(s->rank + 1)))) ok = false;
    if (ok && s->rank > 0) memcpy(q->dims[i], s->dims, sizeof(int64_t) * (size_t)s->rank);
  }
  if (!ok) {
    fifo_free(q);
    return dfx__status_set(st, DFX_ENOMEM, "out of memory creating a queue");
  }
  *obj = q;
  sp->created = true;
  return DFX_OK;
}

static void types_str(const dfx_dtype *t, int n, char *buf, size_t len) {
  size_t o = (size_t)snprintf(buf, len, "[");
  for (int i = 0; i < n && o < len; i++) o += (size_t)snprintf(buf + o, len - o, "%s%s", i ? ", " : "", dfx_dtype_name(t[i]));
  if (o < len) snprintf(buf + o, len - o, "]");
}

static void shapes_str(const dfx_fifo *q, const dfx_attr_list *want, char *buf, size_t len) {
  size_t o = (size_t)snprintf(buf, len, "[");
  int n = q ? (q->has_shapes ? q->n : 0) : (want ? want->n : 0);
  for (int i = 0; i < n && o < len; i++) {
    char s[128];
    if (q) dfx__shape_str(q->rank[i], q->dims[i], s, sizeof s);
    else dfx__shape_str(want->v.shape[i].rank, want->v.shape[i].dims, s, sizeof s);
    o += (size_t)snprintf(buf + o, len - o, "%s%s", i ? ", " : "", s);
  }
  if (o < len) snprintf(buf + o, len - o, "]");
}

/* TF's MatchesNodeDef checks for a queue found under a shared name. */
static dfx_code fifo_matches(dfx_kctx *ctx, const dfx_fifo *q, const fifo_spec *sp) {
  char a[512], b[512];
  bool same = q->n == sp->types->n;
  for (int i = 0; same && i < q->n; i++) same = q->types[i] == sp->types->v.type[i];
  if (!same) {
    types_str(q->types, q->n, a, sizeof a);
    types_str(sp->types->v.type, sp->types->n, b, sizeof b);
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Shared queue '%s' has component types %s but requested component types were %s",
                          q->name, a, b);
  }
  if (q->capacity != sp->capacity)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Shared queue '%s' has capacity %lld but requested capacity was %lld", q->name,
                          (long long)q->capacity, (long long)sp->capacity);
  bool want_shapes = sp->shapes && sp->shapes->n > 0;
  same = want_shapes == q->has_shapes;
  for (int i = 0; same && want_shapes && i < q->n; i++)
    same = sp->shapes->v.shape[i].rank == q->rank[i] &&
           (q->rank[i] <= 0 || memcmp(sp->shapes->v.shape[i].dims, q->dims[i], sizeof(int64_t) * (size_t)q->rank[i]) == 0);
  if (!same) {
    shapes_str(q, NULL, a, sizeof a);
    shapes_str(NULL, sp->shapes, b, sizeof b);
    return dfx__kctx_fail(ctx, DFX_EINVAL, "Shared queue '%s' has component shapes %s but requested component shapes were %s",
                          q->name, a, b);
  }
  return DFX_OK;
}

dfx_code dfx__fifo_get(dfx_kctx *ctx, dfx_fifo **out) {
  dfx_resmgr *m = ctx->step ? ctx->step->store : NULL;
  if (!m) return dfx__kctx_fail(ctx, DFX_EPRECOND, "queues need a session (no resource store for this run)");
  const dfx_node *nd = ctx->node;
  const char *shared = dfx__attr_str(nd, "shared_name", ""), *container = dfx__attr_str(nd, "container", "");
  char key[600];
  if (!*shared) snprintf(key, sizeof key, "_node/%s", nd->name);
  int64_t cap = dfx__attr_int(nd, "capacity", -1);
  fifo_spec sp = {*shared ? shared : nd->name, dfx__attr_list(nd, "component_types"), dfx__attr_list(nd, "shapes"),
                  cap < 0 || cap > INT32_MAX ? INT32_MAX : cap, false};
  void *obj;
  dfx_code c = dfx__resmgr_lookup_or_create(m, &dfx__fifo_type, container, *shared ? shared : key, fifo_create, &sp,
                                            &obj, ctx->st);
  if (c != DFX_OK) return c;
  if (!sp.created && (c = fifo_matches(ctx, obj, &sp)) != DFX_OK) return c;
  *out = obj;
  return DFX_OK;
}

dfx_fifo *dfx__fifo_from_handle(dfx_kctx *ctx, int i) {
  const dfx_tensor *h = ctx->in[i];
  char b[64];
  if (h->dtype != DFX_RESOURCE || h->count != 1) {
    dfx__kctx_fail(ctx, DFX_EINVAL, "queue handle must be a resource scalar, got %s %s",
                   dfx_dtype_name((dfx_dtype)h->dtype), DFX_SHAPE_STR(h, b));
    return NULL;
  }
  void *obj = ((void *const *)h->data)[0];
  dfx_resmgr *m = ctx->step ? ctx->step->store : NULL;
  if (!obj || !m || !dfx__resmgr_contains(m, &dfx__fifo_type, obj)) {
    dfx__kctx_fail(ctx, DFX_ENOTFOUND, "the handle does not name a queue of this session");
    return NULL;
  }
  return obj;
}

/* ---- the ring ---- */

static dfx_code grow(dfx_fifo *q) {
  if (q->count < q->cap) return DFX_OK;
  int64_t nc = q->cap ? 2 * q->cap : 16;
  size_t bytes = dfx__mul_size((size_t)nc, sizeof *q->slots);
  if (bytes > dfx__tensor_limit()) return DFX_ELIMIT;
  dfx_tensor ***ns = dfx__malloc(bytes);
  if (!ns) return DFX_ENOMEM;
  for (int64_t i = 0; i < q->count; i++) ns[i] = q->slots[(q->head + i) % q->cap];
  dfx__free(q->slots);
  q->slots = ns;
  q->cap = nc;
  q->head = 0;
  return DFX_OK;
}

dfx_code dfx__fifo_push_back(dfx_fifo *q, dfx_tensor **elem) {
  dfx_code c = grow(q);
  if (c != DFX_OK) return c;
  q->slots[(q->head + q->count++) % q->cap] = elem;
  return DFX_OK;
}

dfx_code dfx__fifo_push_front(dfx_fifo *q, dfx_tensor **elem) {
  dfx_code c = grow(q);
  if (c != DFX_OK) return c;
  q->head = (q->head + q->cap - 1) % q->cap;
  q->slots[q->head] = elem;
  q->count++;
  return DFX_OK;
}

dfx_tensor **dfx__fifo_pop_front(dfx_fifo *q) {
  dfx_tensor **e = q->slots[q->head];
  q->head = (q->head + 1) % q->cap;
  q->count--;
  return e;
}

void dfx__fifo_elem_free(dfx_fifo *q, dfx_tensor **elem) {
  if (!elem) return;
  for (int i = 0; i < q->n; i++) dfx__tensor_unref(elem[i]);
  dfx__free(elem);
}

/* ---- waiting ---- */

dfx_code dfx__fifo_wait(dfx_kctx *ctx, dfx_fifo *q, uint64_t deadline_ns, int64_t timeout_ms, const char *what) {
  dfx_code c = dfx__kctx_poll(ctx);
  if (c != DFX_OK) return c;
  uint64_t slice = (uint64_t)FIFO_SLICE_MS * 1000000u, now = uv_hrtime();
  if (deadline_ns) {
    if (now >= deadline_ns)
      return dfx__kctx_fail(ctx, DFX_EDEADLINE, "Timed out after %lld ms waiting to %s FIFOQueue '%s'",
                            (long long)timeout_ms, what, q->name);
    if (deadline_ns - now < slice) slice = deadline_ns - now;
  }
  uv_cond_timedwait(&q->cv, &q->mu, slice);
  return DFX_OK;
}
