/* resmgr.h - per-session resources: objects that outlive a run (lookup
 * tables, queues, variables: core/var.h), TensorFlow's ResourceMgr in
 * miniature.
 *
 * A resource is named by (kind, container, name): `kind` is a static
 * descriptor that also says how to free the object, so two kinds never
 * collide under one name. Each session owns one store, made by
 * dfx_session_new and freed with the session; every run of the session sees
 * it through its step (step.h: `store`), so a table created and filled by one
 * run is read by the next. Objects are never removed before the session
 * goes (DestroyResourceOp on a variable only clears its value), which is what makes a
 * pointer found here valid for as long as any run of the session lasts.
 *
 * Thread-safety: every call may come from any thread; one mutex guards the
 * entries (resources are few, so lookups are a linear scan). The objects
 * themselves do their own locking. */
#ifndef DFX_RESMGR_H
#define DFX_RESMGR_H

#include <stdbool.h>

#include "dfexec.h"
#include "status.h"

typedef struct dfx_resmgr dfx_resmgr;

/* What a resource is: a name for messages and its destructor. Compared by
 * address, so each kind is one static object. */
typedef struct dfx_res_kind {
  const char *name;
  void (*free_fn)(void *obj);
} dfx_res_kind;

/* Makes the object when dfx__resmgr_lookup_or_create finds none: stores a
 * new object in *obj, or returns an error (with a message in st) and leaves
 * nothing behind. Called with the store's lock held: it must not call back
 * into the store. */
typedef dfx_code (*dfx_res_create_fn)(void *ud, void **obj, dfx_status *st);

/* A new empty store, or NULL when out of memory. */
dfx_resmgr *dfx__resmgr_new(void);
/* Frees every object (newest first) and the store. NULL is a no-op. The
 * caller guarantees no run is using it. */
void dfx__resmgr_free(dfx_resmgr *rm);

/* The object of `kind` named (container, name), borrowed for the store's
 * life. When there is none: with `create`, makes it (create(ud, ...)) and
 * keeps it; without, fails with DFX_ENOTFOUND. Borrows every argument;
 * container and name are copied. DFX_ENOMEM, or create's error. */
dfx_code dfx__resmgr_lookup_or_create(dfx_resmgr *rm, const dfx_res_kind *kind, const char *container,
                                      const char *name, dfx_res_create_fn create, void *ud, void **out,
                                      dfx_status *st);
/* Whether `obj` is a live object of `kind` in rm: how a handle tensor that
 * carries a pointer is trusted (a forged or foreign one is not found). */
bool dfx__resmgr_contains(dfx_resmgr *rm, const dfx_res_kind *kind, const void *obj);
/* Calls fn(ud, obj) for every object of `kind`, oldest first, with the
 * store locked (fn must not call back into the store); stops when fn
 * returns false. For whole-session walks such as saving every variable. */
void dfx__resmgr_each(dfx_resmgr *rm, const dfx_res_kind *kind, bool (*fn)(void *ud, void *obj), void *ud);
/* Number of objects held (for tests). */
int dfx__resmgr_count(dfx_resmgr *rm);

#endif
