/* fbuild.h - hand-built flow graphs (frames/flow.h) and a single-threaded
 * driver that runs them, so the frames layer is tested without a GraphDef,
 * a plan or the executor.
 *
 * The builder fills what exec/plan.c would (nodes, frames, consumer edges)
 * and lays the flow out with dfx__flow_layout. The driver is
 * exec/process.c reduced to one thread and a FIFO: a dead instance produces
 * nothing, a control op or a pure move follows frames/control.h, anything
 * else calls the node's test compute function; then dfx__propagate. It logs
 * every executed instance, so a test can check which nodes ran in which
 * frame instance and iteration, dead or live, with which value. */
#ifndef FBUILD_H
#define FBUILD_H

#include <stdbool.h>
#include <stdint.h>

#include "control.h"
#include "flow.h"
#include "frame.h"

#define FB_MAX_NODES 128
#define FB_MAX_FRAMES 8
#define FB_MAX_EDGES 256

/* A compute node's kernel: int32 (or bool as 0/1) scalar inputs in, one
 * scalar out. `arg` is the node's constant parameter. */
typedef int32_t (*fb_fn)(const int32_t *in, int n_in, int32_t arg);
int32_t fb_fn_const(const int32_t *in, int n_in, int32_t arg); /* arg */
int32_t fb_fn_copy(const int32_t *in, int n_in, int32_t arg);  /* in[0] */
int32_t fb_fn_add(const int32_t *in, int n_in, int32_t arg);   /* sum of inputs + arg */
int32_t fb_fn_less(const int32_t *in, int n_in, int32_t arg);  /* in[0] < in[1] */

typedef struct fb_edge {
  int src, src_slot, dst, dst_slot; /* slots -1: control edge */
} fb_edge;

typedef struct fb {
  dfx_flow flow;
  fb_fn fn[FB_MAX_NODES];           /* compute nodes only */
  int32_t arg[FB_MAX_NODES];
  uint8_t out_dtype[FB_MAX_NODES];  /* DFX_I32 or DFX_BOOL */
  int n_edges;
  fb_edge edges[FB_MAX_EDGES];      /* added to the flow by fb_layout, data before control */
  char *names[FB_MAX_NODES + FB_MAX_FRAMES];
  int n_names;
  dfx_tensor *consts[FB_MAX_NODES]; /* immortal values of DFX_MOVE_CONST nodes */
  int n_consts;
} fb;

/* The root frame is frame 0 ("", parallel_iterations 1, as frame.c makes it). */
void fb_init(fb *b);
void fb_free(fb *b);
int fb_frame(fb *b, const char *name, int parent, int parallel_iterations);
/* A node of any kind; the helpers below fill the kind-specific fields. */
int fb_node(fb *b, const char *name, const char *op, dfx_ctrl_op ctrl, int frame, int n_in, int n_out);
/* A compute node (DFX_MOVE_NONE): only the driver runs it, never settling. */
int fb_compute(fb *b, const char *name, int frame, int n_in, fb_fn fn, int32_t arg);
int fb_compute_bool(fb *b, const char *name, int frame, int n_in, fb_fn fn, int32_t arg);
/* A Const (DFX_MOVE_CONST) and an Identity (DFX_MOVE_FORWARD). */
int fb_const(fb *b, const char *name, int frame, dfx_dtype dtype, int32_t v);
int fb_identity(fb *b, const char *name, int frame);
int fb_enter(fb *b, const char *name, int frame, int child, bool is_constant);
void fb_data(fb *b, int src, int src_slot, int dst, int dst_slot);
void fb_control(fb *b, int src, int dst);
/* Adds the edges and lays the flow out; the test fails if layout fails. */
void fb_layout(fb *b);
int fb_find(const fb *b, const char *name);

/* A slow path for ordering: `len` compute nodes named <prefix>0.. in
 * `frame`, node 0 computing src:slot + add (or the constant `add` when src
 * is -1) and each next one copying the previous. Returns the last node. */
int fb_chain(fb *b, const char *prefix, int frame, int src, int src_slot, int len, int32_t add);

/* `i = src:slot; while i < limit: i += 1`, lowered as tf.while_loop does,
 * in a new frame `<prefix>while` inside `parent`; the limit is a Const-like
 * compute node hung off the Merge by a control edge (so it lives in the
 * loop). Exit reads Switch:0. */
typedef struct fb_loop {
  int frame, enter, merge, limit, less, cond, sw, ident, add, next, exit;
} fb_loop;
fb_loop fb_counter_loop(fb *b, const char *prefix, int parent, int src, int src_slot, int32_t limit, int pi);

/* One executed node instance. */
typedef struct fb_event {
  int node;
  int sframe;
  int64_t parent_iter;     /* the frame instance's parent iteration (0 for the root) */
  int64_t iter;
  bool dead;
  int dead_src;            /* dead: flow index + 1 of the Switch that killed it, else 0 */
  bool has[2];             /* outputs 0 and 1 set */
  int32_t val[2];
  /* Enter: the newest iteration of its child frame instance just before it
   * ran, or -1 when the instance did not exist yet. */
  int64_t child_iteration_count;
} fb_event;

typedef struct fb_result {
  dfx_code code;
  char msg[DFX_STATUS_MSG_MAX];
  fb_event *ev;
  int n_ev, cap_ev;
  int max_outstanding[FB_MAX_FRAMES]; /* most iterations of one instance alive at once, seen between steps */
  bool deferred[FB_MAX_FRAMES];       /* a NextIteration value waited in next_iter_roots */
  int frames_left;                    /* frame instances besides the root alive at the end */
  int root_outstanding;               /* the root iteration's outstanding_ops at the end */
  int n_stuck;                        /* dfx_prop.n_stuck at the end */
  int left_in_queue;                  /* instances not run (after an error) */
} fb_result;

/* Runs the flow once. settle: dfx_prop.settle_trivial and settle_dead_exits;
 * max_iterations: dfx_prop.max_iterations (0: unlimited). Frees every
 * per-run allocation before returning. */
void fb_run(const fb *b, bool settle, int64_t max_iterations, fb_result *r);
void fb_result_free(fb_result *r);
/* Runs with settling off (r[0]) and on (r[1]), and checks that both end
 * the same way and that every instance settling cannot remove
 * (non-trivial nodes, live Exits) ran in both with the same deadness and
 * values. */
void fb_run_both(const fb *b, int64_t max_iterations, fb_result r[2]);
void fb_results_free(fb_result r[2]);
/* The run ended normally: no error, nothing left queued or stuck, only the
 * root frame alive and its iteration idle. */
void fb_assert_clean(const fb_result *r, const char *what);

/* Queries on a run's log. */
int fb_count(const fb_result *r, int node, int dead); /* dead: 0, 1, or -1 for both */
/* The instance of node in (parent_iter, iter); NULL if it did not run. The
 * test fails if it ran more than once there. */
const fb_event *fb_at(const fb_result *r, int node, int64_t parent_iter, int64_t iter);
/* The node's only instance (the test fails unless it ran exactly once). */
const fb_event *fb_once(const fb_result *r, int node);
/* Position of an event in the log (execution order). */
int fb_pos(const fb_result *r, const fb_event *e);

#endif
