/* builder.h - internals of the graph builder, shared by builder.c (nodes,
 * attrs, type inference, finalisation) and builder_loop.c (control-flow
 * contexts and the while/cond helpers). Nodes are kept directly as
 * protobuf-c NodeDef structs whose every byte lives in the builder's arena,
 * so finalising is pointing a GraphDef at them; nothing is freed before
 * dfx_builder_free. builder_attr.c owns attrs and type inference. */
#ifndef DFX_BUILDER_H
#define DFX_BUILDER_H

#include <stdbool.h>
#include <stddef.h>

#include "arena.h"
#include "dfexec.h"
#include "graph.pb-c.h"
#include "status.h"

/* ---- control-flow contexts ---- */

enum { DFX_BCTX_ROOT = 0, DFX_BCTX_LOOP, DFX_BCTX_COND };

/* A tensor from an enclosing context and its copy in this one. */
typedef struct dfx_bimport {
  const char *from;  /* normalised "node" / "node:k" */
  const char *to;
} dfx_bimport;

/* One loop or cond branch (index 0 is the root). Contexts are never removed,
 * so node->ctx indices stay valid; the array may move, so code keeps
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

struct dfx_bnode {
  dfx_builder *b;
  Tensorflow__NodeDef nd;    /* data inputs first, then n_ctrl control inputs */
  size_t cap_input, cap_attr;
  int n_ctrl;
  int ctx;                   /* context whose frame holds the node's outputs */
  bool visiting;             /* guard for recursive type inference */
};

typedef struct dfx_bscope {
  size_t prev_len;           /* scope length before the push */
  bool helper;               /* opened by a while/cond helper */
} dfx_bscope;

struct dfx_builder {
  dfx_arena arena;
  dfx_bnode **nodes;
  int n_nodes, cap_nodes;
  const char **hkeys;        /* open-addressed name table; keys in the arena */
  int *hvals;                /* node index, or -1 for a reserved name */
  uint32_t hcap, hcount;
  char *scope;               /* current name prefix, "" or "a/b/" */
  size_t scope_len, scope_cap;
  dfx_bscope *scopes;
  int n_scopes, cap_scopes;
  dfx_bctx *ctxs;
  int n_ctx, cap_ctx;
  int cur;                   /* current context */
  dfx_status err;            /* first error, sticky; code DFX_OK when none */
};

/* Records an error (the first one becomes the builder's sticky error), fills
 * st and returns `code`. */
dfx_code dfx__builder_fail(dfx_builder *b, dfx_status *st, dfx_code code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* A fresh full name "<base>", "<base>_1", ... reserved in the name table
 * (a later dfx__builder_raw with that name claims it). NULL when out of
 * memory (the error is recorded). */
const char *dfx__builder_unique(dfx_builder *b, const char *base, dfx_status *st);
/* Adds a node with a full name (free or reserved) and inputs taken as they
 * are, in context ctx. No frame rules are applied. */
dfx_code dfx__builder_raw(dfx_builder *b, const char *op, const char *full, const char *const *inputs, int n,
                          int ctx, dfx_bnode **out, dfx_status *st);
/* Node index of the tensor's producer, or -1 when unknown; *slot receives
 * the output index (-1 for "^node"). */
int dfx__builder_producer(const dfx_builder *b, const char *tensor, int *slot);
/* The name under which context `ctx` sees `tensor`: itself when made there,
 * else through constant Enters / branch Switches made once per tensor. */
dfx_code dfx__builder_import(dfx_builder *b, int ctx, const char *tensor, const char **out, dfx_status *st);
/* Index of the nearest enclosing loop context (0: the root frame). */
int dfx__builder_frame_of(const dfx_builder *b, int ctx);
/* Adds a context; returns its index or -1 (out of memory, recorded). */
int dfx__builder_ctx_new(dfx_builder *b, int kind, int parent, const char *scope, dfx_status *st);
/* Pushes a helper scope (a full name plus '/'); pops it. */
dfx_code dfx__builder_scope_enter(dfx_builder *b, const char *full, dfx_status *st);
void dfx__builder_scope_leave(dfx_builder *b);
/* builder_attr.c: string attr by NUL-terminated value; fills missing type
 * and list-length attrs of every node whose op dfexec knows. */
dfx_code dfx__bnode_attr_s(dfx_bnode *n, const char *name, const char *v);
dfx_code dfx__builder_infer_attrs(dfx_builder *b, dfx_status *st);

#endif
