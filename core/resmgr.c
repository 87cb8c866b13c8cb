/* resmgr.c - per-session resources (resmgr.h). One mutex guards the entry
 * array; sessions hold few resources, so lookups scan it. Entries are only
 * appended, and freed all at once with the store. */
#include "resmgr.h"

#include <string.h>
#include <uv.h>

#include "alloc.h"

typedef struct res_entry {
  char *container, *name;
  const dfx_res_type *type;
  void *obj;
} res_entry;

struct dfx_resmgr {
  uv_mutex_t mu;       /* guards everything below */
  res_entry *v;
  int n, cap;
};

dfx_resmgr *dfx__resmgr_new(void) {
  dfx_resmgr *m = dfx__calloc(1, sizeof *m);
  if (m && uv_mutex_init(&m->mu)) {
    dfx__free(m);
    return NULL;
  }
  return m;
}

void dfx__resmgr_free(dfx_resmgr *m) {
  if (!m) return;
  for (int i = m->n - 1; i >= 0; i--) {
    m->v[i].type->free_fn(m->v[i].obj);
    dfx__free(m->v[i].container);
    dfx__free(m->v[i].name);
  }
  dfx__free(m->v);
  uv_mutex_destroy(&m->mu);
  dfx__free(m);
}

/* Caller holds mu. */
static res_entry *find(dfx_resmgr *m, const char *container, const char *name) {
  for (int i = 0; i < m->n; i++)
    if (strcmp(m->v[i].name, name) == 0 && strcmp(m->v[i].container, container) == 0) return &m->v[i];
  return NULL;
}

static dfx_code wrong_kind(const res_entry *e, const dfx_res_type *type, dfx_status *st) {
  return dfx__status_set(st, DFX_EINVAL, "resource '%s/%s' is a %s, not a %s", e->container, e->name, e->type->name,
                         type->name);
}

dfx_code dfx__resmgr_lookup_or_create(dfx_resmgr *m, const char *container, const char *name,
                                      const dfx_res_type *type, dfx_res_create_fn create, void *ud, void **obj,
                                      bool *created, dfx_status *st) {
  *obj = NULL;
  if (created) *created = false;
  dfx_code c = DFX_OK;
  uv_mutex_lock(&m->mu);
  res_entry *e = find(m, container, name);
  if (e) {
    if (e->type != type) c = wrong_kind(e, type, st);
    else *obj = e->obj;
    uv_mutex_unlock(&m->mu);
    return c;
  }
  if (m->n == m->cap) {
    int nc = m->cap ? 2 * m->cap : 8;
    res_entry *nv = dfx__realloc(m->v, sizeof *nv * (size_t)nc);
    if (!nv) {
      uv_mutex_unlock(&m->mu);
      return dfx__status_set(st, DFX_ENOMEM, "out of memory registering resource '%s/%s'", container, name);
    }
    m->v = nv;
    m->cap = nc;
  }
  res_entry ne = {dfx__strdup(container), dfx__strdup(name), type, NULL};
  if (!ne.container || !ne.name) {
    c = dfx__status_set(st, DFX_ENOMEM, "out of memory registering resource '%s/%s'", container, name);
  } else if ((c = create(ud, &ne.obj, st)) == DFX_OK) {
    m->v[m->n++] = ne;
    *obj = ne.obj;
    if (created) *created = true;
    uv_mutex_unlock(&m->mu);
    return DFX_OK;
  }
  uv_mutex_unlock(&m->mu);
  dfx__free(ne.container);
  dfx__free(ne.name);
  return c;
}

dfx_code dfx__resmgr_lookup(dfx_resmgr *m, const char *container, const char *name, const dfx_res_type *type,
                            void **obj, dfx_status *st) {
  *obj = NULL;
  dfx_code c = DFX_OK;
  uv_mutex_lock(&m->mu);
  res_entry *e = find(m, container, name);
  if (!e) c = dfx__status_set(st, DFX_ENOTFOUND, "resource '%s/%s' (%s) does not exist", container, name, type->name);
  else if (e->type != type) c = wrong_kind(e, type, st);
  else *obj = e->obj;
  uv_mutex_unlock(&m->mu);
  return c;
}

bool dfx__resmgr_owns(dfx_resmgr *m, const void *obj, const dfx_res_type *type) {
  bool found = false;
  uv_mutex_lock(&m->mu);
  for (int i = 0; i < m->n && !found; i++) found = m->v[i].obj == obj && m->v[i].type == type;
  uv_mutex_unlock(&m->mu);
  return found;
}
