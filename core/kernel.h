/* kernel.h - the kernel author's API: context, registration tables, helpers.
 *
 * A kernel file (kernels/<family>/<file>.c) holds one sentinel-terminated
 * table of kernels, each row naming its op and the dtypes it handles, and a
 * registration function its family's register.c calls (kernels/all.c lists
 * the families). Op signatures are not declared here: every op's comes from
 * TensorFlow's registry (op_registry.h).
 *
 *   static const dfx_kernel_def kernels[] = {
 *     {"Add", "T: {float, double, int32, int64}", add_kernel, DFX_KERNEL_CHEAP},
 *     {NULL}};
 *   void dfx__kernels_math_binary(dfx_registry *r) { dfx__kernels_add(r, kernels); }
 *
 * A kernel reads ctx->in[i] (borrowed; never modify a tensor another node can
 * see) and stores new references in ctx->out[k] (dfx__kctx_alloc does that).
 * It returns DFX_OK, or an error via dfx__kctx_fail; the engine adds the node,
 * op, frame and iteration to the message. Kernels may run concurrently on
 * different threads, also for the same node (parallel iterations, concurrent
 * runs): per-node state from `init` is read-only unless the kernel locks it. */
#ifndef DFX_KERNEL_H
#define DFX_KERNEL_H

#include <stdbool.h>
#include <stdint.h>

#include "attr.h"
#include "dfexec.h"
#include "node.h"
#include "op_def.h"
#include "parallel.h"
#include "status.h"
#include "tensor.h"

typedef struct dfx_step dfx_step;
typedef struct dfx_async dfx_async;

typedef struct dfx_kctx {
  const dfx_node *node;
  int n_in;
  dfx_tensor **in;      /* borrowed inputs; NULL only for Merge's absent inputs */
  int n_out;
  dfx_tensor **out;     /* the kernel stores one new reference per output */
  void *state;          /* from the kernel's init, or NULL */
  dfx_step *step;       /* per-run resources (dfx__kctx_step_own) */
  const char *frame;    /* frame name ("" = root) and iteration, for messages */
  int64_t iter;
  dfx_status *st;       /* where dfx__kctx_fail writes */
  bool own_inputs;      /* the executor's input slots hold references a kernel may take (below) */
  /* Idle threads a kernel may borrow (parallel.h); NULL: run on this thread
   * only. Use it through dfx__kctx_parallel_for. */
  const dfx_parallel *par;
  /* Transfer and asynchronous kernels only (flags below); zero otherwise. */
  bool input_dead;      /* DFX_KERNEL_TRANSFER: the instance is dead, inputs may be NULL */
  uint64_t frame_id;    /* the frame instance (rendezvous.h), for rendezvous keys */
  dfx_async *async;     /* DFX_KERNEL_ASYNC: the handle dfx__kctx_defer hands out */
  bool deferred;        /* set by dfx__kctx_defer */
} dfx_kctx;

typedef dfx_code (*dfx_kernel_fn)(dfx_kctx *ctx);
/* Called once per node at session creation: validate attrs and dtypes, and
 * build per-node state. Errors name the problem; the caller adds the node. */
typedef dfx_code (*dfx_kernel_init_fn)(const dfx_node *node, void **state, dfx_status *st);
typedef void (*dfx_kernel_fini_fn)(void *state);

enum {
  DFX_KERNEL_CHEAP = 1,     /* always run inline on the thread that readied it */
  DFX_KERNEL_STATEFUL = 2,  /* has side effects or randomness (never pruned as constant) */
  /* The executor may skip the call: the kernel only forwards input k to
   * output k (Identity), or only returns its state as a dfx_tensor (Const).
   * A loop body runs such nodes every iteration. */
  DFX_KERNEL_FORWARD = 4,
  DFX_KERNEL_STATE_VALUE = 8,
  /* May wait for another run or node (a dequeue on an empty queue): never
   * run inline on a thread that has other ready nodes queued behind it
   * (exec/policy.h keeps it on the pool), so it cannot hold up the node
   * it waits for. */
  DFX_KERNEL_BLOCKING = 16,
  /* May finish after it returns (a _Recv waiting for its value): the
   * kernel calls dfx__kctx_defer, returns DFX_OK at once and completes
   * through dfx__async_done from any thread. The executor keeps the node
   * instance pending without holding a thread, so many receives waiting at
   * once cannot starve a small pool (--threads 1). */
  DFX_KERNEL_ASYNC = 32,
  /* Runs even when the instance is dead, with ctx->input_dead set (TF's
   * transfer nodes): a _Send must tell its _Recv that the tensor is dead. */
  DFX_KERNEL_TRANSFER = 64,
};

/* A node instance whose kernel finishes later (DFX_KERNEL_ASYNC). The
 * kernel fills out[] (new references), or sets is_dead, or records an error
 * in st, then calls dfx__async_done once. The executor owns the struct. */
struct dfx_async {
  int n_out;
  dfx_tensor **out;
  bool is_dead;
  dfx_status st;
  void (*done)(struct dfx_async *a); /* the executor's: re-enters the scheduler */
};

typedef struct dfx_kernel_def {
  const char *op;
  /* The dtypes this kernel handles, per type attr of its op, in the
   * signature notation: "T: {float, double, int32}; Tidx: {int32, int64}"
   * (a list(type) attr constrains every element). A node whose type attrs
   * fall outside gets no kernel: session creation fails naming the node,
   * the attr and the dtypes that have one. Several rows may serve one op
   * with disjoint dtypes. NULL: every dtype the op's signature allows. */
  const char *types;
  dfx_kernel_fn fn;
  unsigned flags;
  dfx_kernel_init_fn init; /* optional */
  dfx_kernel_fini_fn fini; /* optional; frees init's state */
} dfx_kernel_def;

typedef struct dfx_registry dfx_registry;

/* A new empty registry (the C allocator: registries live as long as the
 * process), or NULL. Fill it with dfx__kernels_add, then seal it. */
dfx_registry *dfx__registry_new(void);
/* Adds a kernel file's table (sentinel-terminated). Problems (a bad types
 * string, two rows of one op for the same dtypes, no memory) are reported
 * by dfx__registry_seal as DFX_EINTERNAL / DFX_ENOMEM. */
void dfx__kernels_add(dfx_registry *r, const dfx_kernel_def *kernels);
/* Ends filling: checks that every op with a kernel has a signature
 * (op_registry.h) and orders the ops by name. After it the registry is only
 * read and any thread may look kernels up. */
dfx_code dfx__registry_seal(dfx_registry *r, dfx_status *st);
/* kernels/all.c: adds every kernel family to r. */
void dfx__kernels_register_all(dfx_registry *r);

/* The kernel row for `node` (its op and type attrs), or NULL with the
 * reason in st: no kernel for the op at all (DFX_EUNIMPL), or none for its
 * dtypes (DFX_EUNIMPL, naming the attr, its value and the dtypes that have
 * a kernel). */
const dfx_kernel_def *dfx__registry_kernel_for(const dfx_registry *r, const dfx_node *node, dfx_status *st);
/* Whether any kernel row serves op (whatever its dtypes), and the first
 * such row (NULL when none): for listings and tools, not for running. */
bool dfx__registry_has_kernel(const dfx_registry *r, const char *op);
const dfx_kernel_def *dfx__registry_kernel_any(const dfx_registry *r, const char *op);
/* The dtypes kernels of `op` accept for type attr `attr`, as a bit per dtype
 * (bit t for dtype t); ~0 when some row does not constrain it. For
 * `dfexec ops` and messages. */
uint64_t dfx__registry_kernel_types(const dfx_registry *r, const char *op, const char *attr);
/* The ops that have kernels, sorted by name: i in [0, dfx__registry_count). */
int dfx__registry_count(const dfx_registry *r);
const char *dfx__registry_op_name(const dfx_registry *r, int i);

/* ---- helpers for kernel bodies ---- */

/* Allocates output k (uninitialised elements) and stores it in ctx->out[k].
 * Returns it borrowed, or NULL after recording the error in ctx. */
dfx_tensor *dfx__kctx_alloc(dfx_kctx *ctx, int k, dfx_dtype dtype, int ndims, const int64_t *dims);
/* Output k shares input i (a new reference). */
static inline void dfx__kctx_forward(dfx_kctx *ctx, int i, int k) {
  ctx->out[k] = dfx__tensor_ref(ctx->in[i]);
}
/* TF's input forwarding: returns input k when nobody else holds it, so the
 * kernel may overwrite its elements and return it as an output instead of
 * allocating one. The kernel then owns that reference and ctx->in[k] becomes
 * NULL. Returns NULL when the input is shared, a view, immortal, or the
 * caller did not hand over its slots (own_inputs false). */
static inline dfx_tensor *dfx__kctx_take_unique(dfx_kctx *ctx, int k) {
  dfx_tensor *t = ctx->in[k];
  if (!ctx->own_inputs || !t || !dfx__tensor_unique(t)) return NULL;
  ctx->in[k] = NULL;
  return t;
}
/* In a DFX_KERNEL_ASYNC kernel: the instance completes later, through the
 * returned handle (see dfx_async); the kernel then returns DFX_OK without
 * outputs. NULL when the kernel runs outside an executor. */
static inline dfx_async *dfx__kctx_defer(dfx_kctx *ctx) {
  if (!ctx->async) return NULL;
  ctx->deferred = true;
  return ctx->async;
}
static inline void dfx__async_done(dfx_async *a) { a->done(a); }
/* Records an error message for this node and returns `code`. */
dfx_code dfx__kctx_fail(dfx_kctx *ctx, dfx_code code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Hands `obj` to the step: `free_fn(obj)` runs when the run ends. */
dfx_code dfx__kctx_step_own(dfx_kctx *ctx, void *obj, void (*free_fn)(void *obj));
/* True when the run has been cancelled. */
bool dfx__kctx_cancelled(const dfx_kctx *ctx);
/* For kernels whose work is long (big loops, attr-driven sizes): call every
 * few milliseconds of work (say every 1 M elements). Returns DFX_OK to go
 * on, or the reason to stop, recorded in ctx, for the kernel to return at
 * once: DFX_ECANCELED when the run was cancelled (dfx_session_cancel, an
 * error elsewhere, Ctrl-C in the CLI), DFX_EDEADLINE when the run's timeout
 * has passed. Cheap: one relaxed load, and a clock read only when the run
 * has a timeout. */
dfx_code dfx__kctx_poll(dfx_kctx *ctx);

/* Intra-op parallelism (parallel.h has the contract): runs fn(arg, begin,
 * end) over disjoint blocks covering [0, n), on this thread and on idle
 * threads of the session's pool when the estimated work (n * unit_ns) pays
 * for it, and returns when all blocks are done. Without idle threads (or
 * with ctx->par NULL) it is one call fn(arg, 0, n). */
void dfx__kctx_parallel_for(dfx_kctx *ctx, int64_t n, const dfx_par_cost *cost, dfx_shard_fn fn, void *arg);

/* Reads a scalar or 1-element input as int64 (any integer dtype); fails with a
 * message naming `what` when it is not an integer scalar. */
dfx_code dfx__kctx_scalar_i64(dfx_kctx *ctx, int i, const char *what, int64_t *out);
/* Reads a rank-1 (or scalar) integer input into out[0..*n); max DFX_MAX_DIMS*8 values. */
dfx_code dfx__kctx_vector_i64(dfx_kctx *ctx, int i, const char *what, int64_t *out, int max, int *n);

#endif
