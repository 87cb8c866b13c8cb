/* vref.h - how the variable kernels find their variable.
 *
 * TF1 ref inputs. dfexec has no ref dtypes: a VariableV2 node outputs the
 * variable's *value* (a snapshot taken when the node runs), and an op that
 * takes a Ref(T) input (Assign, AssignAdd, ApplyAdam's var, m, v...) finds
 * the variable itself when its kernel is initialised, by following that
 * input to its producer (dfx__node_producer) through the ref-forwarding ops
 * (RefIdentity, RefSwitch, RefEnter, RefExit, RefMerge, RefNextIteration,
 * and another ref op's output_ref) up to a VariableV2 / Variable /
 * TemporaryVariable node, whose container and shared_name (or node name)
 * name the variable in the session's store. At run time the kernel looks
 * the variable up there and updates it under its lock (core/var.h).
 *
 * TF2 resource inputs are handles: a DFX_RESOURCE scalar holding the
 * dfx_var pointer, made by VarHandleOp and trusted only once found in the
 * run's store (dfx__vref_handle). */
#ifndef DFX_VAR_VREF_H
#define DFX_VAR_VREF_H

#include "kernel.h"
#include "var.h"

/* Per-node state of a kernel with ref inputs: for each data input, the
 * variable it refers to (name NULL when the input is not a ref or does not
 * come from a variable node: a frozen graph's Assign on a Const). */
typedef struct dfx_vref {
  char *container, *name;
} dfx_vref;

typedef struct dfx_vref_state {
  int n;             /* data inputs */
  dfx_vref *ref;     /* n entries */
  dfx_dtype dtype;   /* the node's T (or dtype) attr, DFX_INVALID if none */
} dfx_vref_state;

/* Kernel init/fini for nodes with ref inputs: resolves every Ref input. */
dfx_code dfx__vref_init(const dfx_node *n, void **state, dfx_status *st);
void dfx__vref_fini(void *state);

/* The (container, name) a variable node (VariableV2, Variable,
 * TemporaryVariable, VarHandleOp) gives its variable, into the caller's
 * buffers; false for another op. */
bool dfx__vref_var_node_name(const dfx_node *n, const char **container, const char **name);

/* The variable behind ref input i (made, uninitialised, if this run is the
 * first to see it), or NULL: after failing ctx when `must` (the input is
 * not a variable's ref), silently when not. */
dfx_var *dfx__vref_var(dfx_kctx *ctx, int i, bool must);

/* The variable a resource handle input i names, or NULL after failing ctx
 * (not a handle of this session's store). */
dfx_var *dfx__vref_handle(dfx_kctx *ctx, int i);

/* TF's FailedPrecondition for reading a variable that has no value. */
dfx_code dfx__vref_uninit(dfx_kctx *ctx, const dfx_var *v);

/* A private copy of input i to become a variable's value: the input
 * itself when this kernel holds its only reference, else a deep copy. NULL
 * after failing ctx. Returns a new reference. */
dfx_tensor *dfx__vref_take_value(dfx_kctx *ctx, int i);

#endif
