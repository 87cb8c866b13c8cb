/* builder.h - internals of the graph builder (dfx_builder in dfexec.h):
 * builder.c (names, nodes, inputs, finalisation), builder_attr.c (the attr
 * setters and the Const / Placeholder shorthands), builder_infer.c (type
 * and length attrs at finalisation) and builder_loop.c (control-flow
 * contexts, scopes, the while/cond helpers).
 *
 * The nodes live in a dfx_graph in the editing state, the representation
 * import produces and export writes; the builder adds only what a graph has
 * no room for: handles, contexts, scopes, reserved names, the sticky error
 * and inputs naming nodes not added yet. That graph is never finalised
 * itself (finalising works on a copy), so node ids stay stable for the
 * builder's whole life and a handle is just (builder, id). */
#ifndef DFX_BUILDER_H
#define DFX_BUILDER_H

#include <stdbool.h>
#include <stddef.h>

#include "arena.h"
#include "dfexec.h"
#include "graph.h"
#include "status.h"

/* ---- control-flow contexts ---- */

enum { DFX_BCTX_ROOT = 0, DFX_BCTX_LOOP, DFX_BCTX_COND };

/* A tensor from an enclosing context and its copy in this one. */
typedef struct dfx_bimport {
  const char *from;  /* normalised "node" / "node:k" */
  const char *to;
} dfx_bimport;

/* One loop or cond branch (index 0 is the root). Contexts are never removed,
 * so dfx_bnode.ctx indices stay valid; the array may move, so code keeps
 * indices, not pointers, across calls that create contexts. */
typedef struct dfx_bctx {
  int kind;
  int parent;                /* enclosing context, -1 for the root */
  const char *scope;         /* "while/", "cond/" (arena) */
  const char *frame;         /* loop: frame_name of its Enters */
  int parallel_iterations;   /* loop */
  const char *pivot;         /* node input-less nodes depend on; NULL at root */
  const char *pred_id;       /* cond: tensor the branch Switches test */
  int branch;                /* cond: 1 true branch, 0 false branch */
  dfx_bimport *imports;      /* arena, grown by copying */
  int n_imports, cap_imports;
} dfx_bctx;

/* A node handle, in the arena: valid until dfx_builder_free however the
 * graph's node array moves. */
struct dfx_bnode {
  dfx_builder *b;
  int id;                    /* node id in b->g */
  int ctx;                   /* context whose frame holds the node's outputs */
};

/* An input naming a node not added yet (a back edge to a NextIteration,
 * say). Its place among the node's inputs holds the node itself, with the
 * right kind and slot, until finalisation resolves the name on the copy it
 * finalises. Data and control inputs are only ever appended, so an index
 * within its kind stays true. */
typedef struct dfx_bpending {
  int node;
  int k;                     /* index among the node's data inputs, or control inputs */
  bool ctrl;
  const char *input;         /* the input string as given (arena) */
} dfx_bpending;

typedef struct dfx_bscope {
  size_t prev_len;           /* scope length before the push */
  bool helper;               /* opened by a while/cond helper */
} dfx_bscope;

struct dfx_builder {
  dfx_arena arena;
  dfx_graph *g;              /* the nodes: editing state, never finalised */
  dfx_bnode **nodes;         /* handle of each node id */
  int cap_nodes;
  dfx_bpending *pending;
  int n_pending, cap_pending;
  const char **reserved;     /* open-addressed set of names kept for later nodes or helper scopes (arena keys) */
  uint32_t rcap, rcount;
  char *scope;               /* current name prefix, "" or "a/b/" */
  size_t scope_len, scope_cap;
  dfx_bscope *scopes;
  int n_scopes, cap_scopes;
  dfx_bctx *ctxs;
  int n_ctx, cap_ctx;
  int cur;                   /* current context */
  dfx_status err;            /* first error, sticky; code DFX_OK when none */
};

/* ---- builder.c ---- */

/* Records an error (the first one becomes the builder's sticky error), fills
 * st and returns `code`. */
dfx_code dfx__builder_fail(dfx_builder *b, dfx_status *st, dfx_code code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
#define DFX_BUILDER_OOM(b, st) dfx__builder_fail(b, st, DFX_ENOMEM, "builder: out of memory")
/* A fresh full name "<base>", "<base>_1", ... reserved (a later
 * dfx__builder_raw with that name claims it). NULL when out of memory (the
 * error is recorded). */
const char *dfx__builder_unique(dfx_builder *b, const char *base, dfx_status *st);
/* Adds a node with a full name (free or reserved) and inputs taken as they
 * are, in context ctx. No frame rules are applied. */
dfx_code dfx__builder_raw(dfx_builder *b, const char *op, const char *full, const char *const *inputs, int n,
                          int ctx, dfx_bnode **out, dfx_status *st);
/* Node id of the tensor's producer, or -1 when there is none yet; *slot
 * receives the output index (-1 for "^node"). */
int dfx__builder_producer(const dfx_builder *b, const char *tensor, int *slot);

/* ---- builder_loop.c ---- */

/* The name under which context `ctx` sees `tensor`: itself when made there,
 * else through constant Enters / branch Switches made once per tensor. */
dfx_code dfx__builder_import(dfx_builder *b, int ctx, const char *tensor, const char **out, dfx_status *st);
/* Index of the nearest enclosing loop context (0: the root frame). */
int dfx__builder_frame_of(const dfx_builder *b, int ctx);
/* "loop 'w'", "the true branch of cond 'c'" or "the root context" in buf. */
const char *dfx__builder_ctx_name(const dfx_builder *b, int ctx, char *buf, size_t n);

/* ---- builder_infer.c ---- */

/* Fills the missing type and input-length attrs of every node of g (a
 * builder graph's copy, inputs resolved) whose op dfexec knows; finalising
 * reports whatever is still missing. DFX_ENOMEM. */
dfx_code dfx__builder_infer(dfx_graph *g, dfx_status *st);

#endif
