/* var.h - stateful variables: one value per (container, name) in a session's
 * resource store (resmgr.h), read and updated by every run of the session.
 *
 * Both TF1 ref variables (VariableV2) and TF2 resource variables
 * (VarHandleOp) are a dfx_var here, under one resource kind, so the
 * session's checkpoint calls (dfx_session_save/restore) and both op
 * families see the same objects. A variable's name is the resource name:
 * VariableV2's shared_name or node name, VarHandleOp's shared_name or node
 * name; container "" means "localhost", as in TF's ContainerInfo.
 *
 * Values are immutable once published: `value` is replaced, never written
 * while anyone else holds it. A reader takes a reference under the lock
 * (dfx__var_read) and may use it for as long as it likes. A writer either
 * publishes a new tensor (dfx__var_set) or, for updates in place
 * (AssignAdd, the optimizers), takes the lock and asks dfx__var_mut for a
 * tensor only the variable holds: the current one when nobody else has a
 * reference, else a copy that replaces it (copy-on-write). So a reader
 * never sees a half-written update, and concurrent runs are safe.
 *
 * Locking: `mu` guards dtype, value and the declared shape. The store's
 * lock is taken before a variable's, never the other way round; several
 * variables are locked in address order (dfx__var_lock_many), as TF's
 * MaybeLockVariableInputMutexesInOrder does. */
#ifndef DFX_VAR_H
#define DFX_VAR_H

#include <stdbool.h>
#include <uv.h>

#include "resmgr.h"
#include "tensor.h"

typedef struct dfx_var {
  uv_mutex_t mu;
  char *name;          /* resource name, for messages and checkpoints */
  char *container;     /* "localhost" for "" */
  dfx_dtype dtype;     /* DFX_INVALID until declared or first assigned */
  dfx_tensor *value;   /* NULL: uninitialised; else the variable's reference */
} dfx_var;

/* The resource kind of every variable (compare by address). */
extern const dfx_res_kind dfx__var_kind;

/* The variable (container, name) of the store rm: found, or made
 * (uninitialised, with `dtype`, which may be DFX_INVALID) when `create`.
 * A found variable whose dtype is known and differs from a known `dtype`
 * fails with DFX_EINVAL naming both. Container "" is "localhost". Borrows
 * the strings; *out is borrowed for the store's life. DFX_ENOTFOUND when it
 * does not exist and !create, DFX_ENOMEM. */
dfx_code dfx__var_lookup(dfx_resmgr *rm, const char *container, const char *name, dfx_dtype dtype, bool create,
                         dfx_var **out, dfx_status *st);

/* A new reference to the current value, or NULL when uninitialised. */
dfx_tensor *dfx__var_read(dfx_var *v);
/* Publishes `t` as the value (takes the caller's reference) and drops the
 * old one; also sets the dtype. Takes the lock: do not hold it. */
void dfx__var_set(dfx_var *v, dfx_tensor *t);
/* Makes the variable uninitialised again (DestroyResourceOp). */
void dfx__var_clear(dfx_var *v);
bool dfx__var_initialized(dfx_var *v);

void dfx__var_lock(dfx_var *v);
void dfx__var_unlock(dfx_var *v);
/* Locks n variables (NULLs and repeats skipped) in address order. */
void dfx__var_lock_many(dfx_var *const *v, int n);
void dfx__var_unlock_many(dfx_var *const *v, int n);
/* With v locked and initialised: a tensor holding the value that only the
 * variable references, safe to update in place (copying the value first
 * when a reader still holds it). Borrowed. NULL when out of memory. */
dfx_tensor *dfx__var_mut(dfx_var *v);

/* Calls fn for every variable of rm, in creation order, with the store
 * locked (fn may lock the variable, not the store). Stops when fn returns
 * false. */
typedef bool (*dfx_var_visit_fn)(void *ud, dfx_var *v);
void dfx__var_each(dfx_resmgr *rm, dfx_var_visit_fn fn, void *ud);

/* ---- the uninitialised marker ----
 * A TF1 ref variable's op (VariableV2) must produce an output even before
 * the variable has a value, because its initialiser (Assign) consumes it.
 * It then outputs a marker: an empty tensor of the variable's dtype (shape
 * [0]), so that any consumer stays memory-safe, tagged with the variable's
 * name, so that consumers that know about it (SaveV2, Assign's value path)
 * report TF's "Attempting to use uninitialized value NAME". */
/* A new marker tensor for v, or NULL when out of memory. */
dfx_tensor *dfx__var_uninit_marker(const dfx_var *v, dfx_dtype dtype);
/* The variable name a marker carries, or NULL when t is not a marker. */
const char *dfx__var_uninit_name(const dfx_tensor *t);

#endif
