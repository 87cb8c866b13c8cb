/* rewrite.h - what the pattern-rewriting passes (fold_batchnorm.c,
 * remap.c) share: questions about a node's place and consumers, the
 * constant a data input reads, and in-place rewrites that keep a node's
 * name while changing what it is. All read the graph's derived data
 * (edges, frames) as of the last finalise, so a pass visits each node
 * once and never revisits what it changed. */
#ifndef DFX_REWRITE_H
#define DFX_REWRITE_H

#include "pass.h"

/* Whether a and b run in the same static frame on the same device. */
bool dfx__rewrite_same_place(const dfx_node *a, const dfx_node *b);
/* The one consumer of node id (*dst, reading it at data input *dst_slot)
 * when id has exactly one edge, a data edge from output 0, and is neither
 * kept nor fed: then id's value may change or id may go. -1 otherwise. */
int dfx__rewrite_sole_consumer(const dfx_pass_ctx *c, int id, int *dst_slot);
/* The Const (a plain Const node with a value, not fed) a data input reads,
 * directly or through constant Enters (a loop invariant), or -1. *via gets
 * the node the input names (the Const, or the first constant Enter). */
int dfx__rewrite_const_source(const dfx_pass_ctx *c, dfx_input in, int *via);

/* A set of node ids (control inputs to give a node), duplicates dropped. */
typedef struct dfx_rewrite_ids {
  int n, cap;
  int *ids;
} dfx_rewrite_ids;
dfx_code dfx__rewrite_ids_add(dfx_rewrite_ids *s, int id);
void dfx__rewrite_ids_free(dfx_rewrite_ids *s);
/* Adds the control inputs of node id to s. */
dfx_code dfx__rewrite_ids_add_ctrl(dfx_rewrite_ids *s, const dfx_graph *g, int id);
/* Adds what a node computed from the constant behind `via` (as
 * dfx__rewrite_const_source found it) needs to keep that constant's frame,
 * iterations and deadness: the Enter itself when via is a constant Enter
 * (which puts the node in the loop, every iteration), else the Const's own
 * control inputs (a branch pivot). Constfold's rule. */
dfx_code dfx__rewrite_ids_add_const_place(dfx_rewrite_ids *s, const dfx_graph *g, int src, int via);

/* Empties node id in place (every input and attr goes; name, device and
 * id stay) and makes it an `op`: the caller adds its inputs and attrs. */
dfx_code dfx__rewrite_reset(dfx_graph *g, int id, const char *op, dfx_status *st);
/* Adds a Const named after `base` (made unique) holding t (borrowed; the
 * attr shares it), with control inputs ctrl; its id, or -1 (DFX_ENOMEM). */
int dfx__rewrite_add_const(dfx_graph *g, const char *base, dfx_tensor *t, const dfx_rewrite_ids *ctrl,
                           dfx_status *st);
/* Attr setters for a node being rebuilt. */
dfx_code dfx__rewrite_set_type(dfx_graph *g, int id, const char *name, dfx_dtype t, dfx_status *st);
dfx_code dfx__rewrite_set_int(dfx_graph *g, int id, const char *name, int64_t v, dfx_status *st);
dfx_code dfx__rewrite_set_str(dfx_graph *g, int id, const char *name, const char *s, dfx_status *st);
/* Copies attr `name` of node from to node id when from has it. */
dfx_code dfx__rewrite_copy_attr(dfx_graph *g, int id, int from, const char *name, dfx_status *st);

#endif
