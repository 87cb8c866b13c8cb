/* sendrecv.c - _Send and _Recv, the two halves of an edge between tasks
 * (dist/partition.c writes them; TF's sendrecv_ops.cc). Both run even when
 * their instance is dead (DFX_KERNEL_TRANSFER): the deadness travels with
 * the key. _Recv is asynchronous: it asks the rendezvous for its value and
 * returns; the rendezvous completes it from whichever thread delivers the
 * value, and the executor resumes it without a thread having waited. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "kernel.h"
#include "rendezvous.h"
#include "step.h"

typedef struct xfer {
  int src_task, dst_task;
  size_t prefix_len;
  char prefix[]; /* "send_device;incarnation;recv_device;tensor_name;" */
} xfer;

/* The task index in a device name ("/job:worker/replica:0/task:3/..."), 0 when none. */
static int device_task(const char *dev) {
  const char *p = strstr(dev, "task:");
  return p ? atoi(p + 5) : 0;
}

static dfx_code xfer_init(const dfx_node *node, void **state, dfx_status *st) {
  const char *sd = dfx__attr_str(node, "send_device", ""), *rd = dfx__attr_str(node, "recv_device", "");
  const char *name = dfx__attr_str(node, "tensor_name", "");
  if (!*name) return dfx__status_set(st, DFX_EINVAL, "attr 'tensor_name' is empty");
  int64_t inc = dfx__attr_int(node, "send_device_incarnation", 0);
  int n = snprintf(NULL, 0, "%s;%016llx;%s;%s;", sd, (unsigned long long)inc, rd, name);
  xfer *x = dfx__malloc(sizeof *x + (size_t)n + 1);
  if (!x) return dfx__status_set(st, DFX_ENOMEM, "out of memory");
  snprintf(x->prefix, (size_t)n + 1, "%s;%016llx;%s;%s;", sd, (unsigned long long)inc, rd, name);
  x->prefix_len = (size_t)n;
  x->src_task = device_task(sd);
  x->dst_task = device_task(rd);
  *state = x;
  return DFX_OK;
}

static void xfer_fini(void *state) { dfx__free(state); }

/* The full key: the prefix plus "frame_id:iter" (rendezvous.h). */
static char *make_key(dfx_kctx *ctx, const xfer *x, char *small, size_t n_small) {
  size_t need = x->prefix_len + 48;
  char *k = need <= n_small ? small : dfx__malloc(need);
  if (!k) return NULL;
  memcpy(k, x->prefix, x->prefix_len);
  snprintf(k + x->prefix_len, need - x->prefix_len, "%llx:%lld", (unsigned long long)ctx->frame_id,
           (long long)ctx->iter);
  return k;
}

static dfx_code no_rendezvous(dfx_kctx *ctx) {
  return dfx__kctx_fail(ctx, DFX_EPRECOND,
                        "a partitioned graph's transfer op runs only in a partitioned run (dfexec run --tasks N, or "
                        "under mpiexec), not on its own");
}

static dfx_code send_kernel(dfx_kctx *ctx) {
  const xfer *x = ctx->state;
  dfx_rendezvous *r = ctx->step ? ctx->step->rendezvous : NULL;
  if (!r) return no_rendezvous(ctx);
  char small[256], *key = make_key(ctx, x, small, sizeof small);
  if (!key) return dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory");
  bool dead = ctx->input_dead || !ctx->in[0];
  dfx_code c = r->vt->send(r, ctx->step->step_id, x->dst_task, key, dead ? NULL : ctx->in[0], dead, ctx->st);
  if (key != small) dfx__free(key);
  return c;
}

static void recv_done(void *ud, dfx_code code, const char *msg, dfx_tensor *value, bool is_dead) {
  dfx_async *a = ud;
  if (code != DFX_OK) {
    dfx__status_set(&a->st, code, "%s", msg);
    dfx__tensor_unref(value);
  } else if (is_dead) {
    a->is_dead = true;
  } else {
    a->out[0] = value;
  }
  dfx__async_done(a);
}

static dfx_code recv_kernel(dfx_kctx *ctx) {
  const xfer *x = ctx->state;
  dfx_rendezvous *r = ctx->step ? ctx->step->rendezvous : NULL;
  if (!r) return no_rendezvous(ctx);
  dfx_async *a = dfx__kctx_defer(ctx);
  if (!a) return dfx__kctx_fail(ctx, DFX_EINTERNAL, "_Recv needs an executor that supports asynchronous kernels");
  char small[256], *key = make_key(ctx, x, small, sizeof small);
  if (!key) {
    dfx__status_set(&a->st, DFX_ENOMEM, "out of memory");
    dfx__async_done(a);
    return DFX_OK;
  }
  r->vt->recv(r, ctx->step->step_id, x->src_task, key, recv_done, a);
  if (key != small) dfx__free(key);
  return DFX_OK;
}

static const dfx_kernel_def kernels[] = {
    {"_Send", NULL, send_kernel, DFX_KERNEL_CHEAP | DFX_KERNEL_STATEFUL | DFX_KERNEL_TRANSFER, xfer_init, xfer_fini},
    {"_Recv", NULL, recv_kernel,
     DFX_KERNEL_CHEAP | DFX_KERNEL_STATEFUL | DFX_KERNEL_TRANSFER | DFX_KERNEL_ASYNC, xfer_init, xfer_fini},
    {NULL}};

void dfx__kernels_dist(dfx_registry *r);
void dfx__kernels_dist(dfx_registry *r) { dfx__kernels_add(r, kernels); }
