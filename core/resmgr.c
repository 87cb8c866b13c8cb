/* resmgr.c - the per-session resource store (resmgr.h). `mu` guards the
 * entry array; objects are appended and only freed with the store, so a
 * pointer handed out stays valid until dfx__resmgr_free. */
#include "resmgr.h"

#include <string.h>
#include <uv.h>

#include "alloc.h"

typedef struct res_entry {
  const dfx_res_kind *kind;
  char *container;
  char *name;
  void *obj;
} res_entry;

struct dfx_resmgr {
  uv_mutex_t mu;
  res_entry *e;
  int n, cap;
};

dfx_resmgr *dfx__resmgr_new(void) {
  dfx_resmgr *rm = dfx__calloc(1, sizeof *rm);
  if (rm && uv_mutex_init(&rm->mu)) {
    dfx__free(rm);
    rm = NULL;
  }
  return rm;
}

void dfx__resmgr_free(dfx_resmgr *rm) {
  if (!rm) return;
  for (int i = rm->n - 1; i >= 0; i--) {
    rm->e[i].kind->free_fn(rm->e[i].obj);
    dfx__free(rm->e[i].container);
    dfx__free(rm->e[i].name);
  }
  dfx__free(rm->e);
  uv_mutex_destroy(&rm->mu);
  dfx__free(rm);
}

static res_entry *find(dfx_resmgr *rm, const dfx_res_kind *kind, const char *container, const char *name) {
  for (int i = 0; i < rm->n; i++)
    if (rm->e[i].kind == kind && strcmp(rm->e[i].name, name) == 0 && strcmp(rm->e[i].container, container) == 0)
      return &rm->e[i];
  return NULL;
}

dfx_code dfx__resmgr_lookup_or_create(dfx_resmgr *rm, const dfx_res_kind *kind, const char *container,
                                      const char *name, dfx_res_create_fn create, void *ud, void **out,
                                      dfx_status *st) {
  *out = NULL;
  dfx_code c = DFX_OK;
  uv_mutex_lock(&rm->mu);
  res_entry *hit = find(rm, kind, container, name);
  if (hit) {
    *out = hit->obj;
    goto done;
  }
  if (!create) {
    c = dfx__status_set(st, DFX_ENOTFOUND, "Resource %s/%s (%s) does not exist", container, name, kind->name);
    goto done;
  }
  if (rm->n == rm->cap) {
    int nc = rm->cap ? rm->cap * 2 : 8;
    res_entry *ne = dfx__realloc(rm->e, sizeof *ne * (size_t)nc);
    if (!ne) {
      c = dfx__status_set(st, DFX_ENOMEM, "out of memory registering resource %s/%s", container, name);
      goto done;
    }
    rm->e = ne;
    rm->cap = nc;
  }
  res_entry e = {kind, dfx__strdup(container), dfx__strdup(name), NULL};
  if (!e.container || !e.name) {
    c = dfx__status_set(st, DFX_ENOMEM, "out of memory registering resource %s/%s", container, name);
    goto fail_entry;
  }
  if ((c = create(ud, &e.obj, st)) != DFX_OK) goto fail_entry;
  rm->e[rm->n++] = e;
  *out = e.obj;
  goto done;
fail_entry:
  dfx__free(e.container);
  dfx__free(e.name);
done:
  uv_mutex_unlock(&rm->mu);
  return c;
}

bool dfx__resmgr_contains(dfx_resmgr *rm, const dfx_res_kind *kind, const void *obj) {
  bool found = false;
  uv_mutex_lock(&rm->mu);
  for (int i = 0; i < rm->n && !found; i++) found = rm->e[i].obj == obj && rm->e[i].kind == kind;
  uv_mutex_unlock(&rm->mu);
  return found;
}

int dfx__resmgr_count(dfx_resmgr *rm) {
  uv_mutex_lock(&rm->mu);
  int n = rm->n;
  uv_mutex_unlock(&rm->mu);
  return n;
}

void dfx__resmgr_each(dfx_resmgr *rm, const dfx_res_kind *kind, bool (*fn)(void *ud, void *obj), void *ud) {
  uv_mutex_lock(&rm->mu);
  for (int i = 0; i < rm->n; i++)
    if (rm->e[i].kind == kind && !fn(ud, rm->e[i].obj)) break;
  uv_mutex_unlock(&rm->mu);
}
