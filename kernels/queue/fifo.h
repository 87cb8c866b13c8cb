/* fifo.h - the queue family's FIFO queue object (fifo.c), a per-session
 * resource (core/resmgr.h) shared by its kernels (queue.c).
 *
 * Blocking. A dequeue from an empty queue, an enqueue into a full one and a
 * close waiting for earlier enqueues wait on the queue's condition variable,
 * in slices of at most FIFO_SLICE_MS, checking between slices the run's
 * cancellation and deadline (dfx__kctx_poll) and the op's timeout_ms
 * (honoured here; TF documents it as unsupported and ignores it). A waiting
 * kernel holds its thread: the kernels are flagged DFX_KERNEL_BLOCKING, so
 * the scheduler runs them on the session's pool and never inline in front
 * of other ready nodes, and the thread that waits has nothing else queued.
 * What a wait can count on is therefore another run (another caller thread,
 * as TF's queue runners use), or another node of the same run running on
 * another pool thread. With one thread (n_threads 1, or inline_only) a wait
 * that only a later node of the same run could end lasts until the timeout,
 * the run's deadline or a cancel, and then fails with that reason. */
#ifndef DFX_FIFO_H
#define DFX_FIFO_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "kernel.h"
#include "resmgr.h"

#define FIFO_SLICE_MS 10
#define FIFO_MAX_COMPONENTS 64

typedef struct dfx_fifo {
  uv_mutex_t mu;             /* guards every field below it */
  uv_cond_t cv;              /* broadcast on every change: elements in or out, close */
  char *name;                /* shared_name, or the creating node's name */
  int n;                     /* components per element */
  dfx_dtype types[FIFO_MAX_COMPONENTS];
  bool has_shapes;           /* shapes[] given (fully defined), else unconstrained */
  int rank[FIFO_MAX_COMPONENTS];
  int64_t *dims[FIFO_MAX_COMPONENTS];
  int64_t capacity;          /* INT32_MAX when unbounded (TF's kUnbounded) */
  bool closing;              /* a close waits for earlier enqueues; later ones fail */
  bool closed;
  bool cancel_enqueues;      /* closed with cancel_pending_enqueues */
  int pending_enqueues;      /* enqueues waiting for room */
  dfx_tensor ***slots;       /* ring of elements, each n tensor references */
  int64_t head, count, cap;
} dfx_fifo;

extern const dfx_res_kind dfx__fifo_type;

/* FIFOQueueV2's work: the queue of ctx->node's attrs in the session's
 * store (created on first use; an existing one must match the attrs), in
 * *out (borrowed until the session is freed). */
dfx_code dfx__fifo_get(dfx_kctx *ctx, dfx_fifo **out);
/* The queue a handle input names, checked against the session's store;
 * NULL after failing ctx. */
dfx_fifo *dfx__fifo_from_handle(dfx_kctx *ctx, int i);

/* Ring operations; the caller holds q->mu. push_* take the element (an
 * array of q->n references); they fail only when out of memory. */
dfx_code dfx__fifo_push_back(dfx_fifo *q, dfx_tensor **elem);
dfx_code dfx__fifo_push_front(dfx_fifo *q, dfx_tensor **elem);
dfx_tensor **dfx__fifo_pop_front(dfx_fifo *q);
/* Frees an element array and its references. */
void dfx__fifo_elem_free(dfx_fifo *q, dfx_tensor **elem);

/* Waits one slice on q->cv (q->mu held, and held again on return). Returns
 * DFX_OK to look again, or the reason to stop, recorded in ctx: the run was
 * cancelled or is late, or deadline_ns (uv_hrtime; 0: none) has passed
 * while waiting to `what` (for the message). */
dfx_code dfx__fifo_wait(dfx_kctx *ctx, dfx_fifo *q, uint64_t deadline_ns, int64_t timeout_ms, const char *what);

#endif
