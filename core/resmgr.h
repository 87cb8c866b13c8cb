/* resmgr.h - per-session resources (TF's ResourceMgr): objects that outlive
 * a run, such as queues and lookup tables, kept by the session and reached
 * by kernels through their step (step->resources).
 *
 * A resource is keyed by (container, name) and has a kind, a dfx_res_type
 * the kernel file defines once (static): its name for messages and the
 * destructor the store calls. Kernels look a resource up or create it on
 * first use (dfx__resmgr_lookup_or_create), hand out its address in a handle
 * tensor, and check a handle they receive with dfx__resmgr_owns before
 * trusting the address, so a forged or foreign handle is an error, never a
 * wild pointer. Objects are never removed while the session lives: a
 * borrowed object stays valid until dfx__resmgr_free, which the session
 * calls when it is freed (no run is going then) and which frees them in
 * reverse order of creation. Objects guard their own state: the store only
 * serialises lookups and creation.
 *
 * Thread-safety: every function may be called from any thread at once,
 * except dfx__resmgr_free. The store's mutex is held while `create` runs
 * (so two runs asking for one name get one object); `create` must not
 * call back into the store. */
#ifndef DFX_RESMGR_H
#define DFX_RESMGR_H

#include <stdbool.h>

#include "dfexec.h"
#include "status.h"

typedef struct dfx_resmgr dfx_resmgr;

/* The kind of a resource; compared by address. */
typedef struct dfx_res_type {
  const char *name;            /* "FIFOQueue", "HashTable": for messages */
  void (*free_fn)(void *obj);  /* releases the object (called once, by the store) */
} dfx_res_type;

/* Builds the object for a new resource: *obj new, or an error in st. */
typedef dfx_code (*dfx_res_create_fn)(void *ud, void **obj, dfx_status *st);

/* A new empty store, or NULL when out of memory. */
dfx_resmgr *dfx__resmgr_new(void);
/* Frees every object (reverse creation order) and the store; NULL is a no-op. */
void dfx__resmgr_free(dfx_resmgr *m);

/* The object under (container, name) (both borrowed; copied when a resource
 * is made). When there is none, create(ud, ...) makes it and the store
 * takes it; *created tells which happened (may be NULL). *obj is borrowed
 * until the store is freed. Errors: DFX_EINVAL when the name holds a
 * resource of another kind (the message names both), create's own error,
 * DFX_ENOMEM. */
dfx_code dfx__resmgr_lookup_or_create(dfx_resmgr *m, const char *container, const char *name,
                                      const dfx_res_type *type, dfx_res_create_fn create, void *ud, void **obj,
                                      bool *created, dfx_status *st);
/* The object under (container, name) of kind `type`; DFX_ENOTFOUND when
 * absent, DFX_EINVAL when of another kind. */
dfx_code dfx__resmgr_lookup(dfx_resmgr *m, const char *container, const char *name, const dfx_res_type *type,
                            void **obj, dfx_status *st);
/* Whether obj is a resource of kind `type` held by m. */
bool dfx__resmgr_owns(dfx_resmgr *m, const void *obj, const dfx_res_type *type);

#endif
