/* var.c - stateful variables in the session's resource store (var.h).
 * Every update goes through `mu`; a published value is never written while
 * another holder can see it (dfx__var_mut copies it first). */
#include "var.h"

#include <stdlib.h>
#include <string.h>

#include "alloc.h"

static void var_free(void *obj) {
  dfx_var *v = obj;
  dfx__tensor_unref(v->value);
  dfx__free(v->name);
  dfx__free(v->container);
  uv_mutex_destroy(&v->mu);
  dfx__free(v);
}

const dfx_res_kind dfx__var_kind = {"Var", var_free};

typedef struct make_args {
  const char *container, *name;
  dfx_dtype dtype;
} make_args;

static dfx_code var_create(void *ud, void **obj, dfx_status *st) {
  const make_args *a = ud;
  dfx_var *v = dfx__calloc(1, sizeof *v);
  if (!v) return dfx__status_set(st, DFX_ENOMEM, "out of memory creating variable %s", a->name);
  if (uv_mutex_init(&v->mu)) {
    dfx__free(v);
    return dfx__status_set(st, DFX_ENOMEM, "cannot create a mutex for variable %s", a->name);
  }
  v->name = dfx__strdup(a->name);
  v->container = dfx__strdup(a->container);
  v->dtype = a->dtype;
  if (!v->name || !v->container) {
    var_free(v);
    return dfx__status_set(st, DFX_ENOMEM, "out of memory creating variable %s", a->name);
  }
  *obj = v;
  return DFX_OK;
}

dfx_code dfx__var_lookup(dfx_resmgr *rm, const char *container, const char *name, dfx_dtype dtype, bool create,
                         dfx_var **out, dfx_status *st) {
  *out = NULL;
  if (!rm) return dfx__status_set(st, DFX_EPRECOND, "variables live in a session: this run has no resource store");
  if (!container || !*container) container = "localhost";
  make_args a = {container, name, dtype};
  void *obj = NULL;
  dfx_code c = dfx__resmgr_lookup_or_create(rm, &dfx__var_kind, container, name, create ? var_create : NULL, &a,
                                            &obj, st);
  if (c != DFX_OK) {
    if (c == DFX_ENOTFOUND)
      dfx__status_set(st, c, "Variable %s (container %s) does not exist in this session", name, container);
    return c;
  }
  dfx_var *v = obj;
  dfx__var_lock(v);
  dfx_dtype have = v->dtype;
  if (have == DFX_INVALID) v->dtype = dtype;
  dfx__var_unlock(v);
  if (have != DFX_INVALID && dtype != DFX_INVALID && have != dtype)
    return dfx__status_set(st, DFX_EINVAL, "Variable %s holds %s, but it is used as %s", name, dfx_dtype_name(have),
                           dfx_dtype_name(dtype));
  *out = v;
  return DFX_OK;
}

void dfx__var_lock(dfx_var *v) { uv_mutex_lock(&v->mu); }
void dfx__var_unlock(dfx_var *v) { uv_mutex_unlock(&v->mu); }

dfx_tensor *dfx__var_read(dfx_var *v) {
  dfx__var_lock(v);
  dfx_tensor *t = dfx__tensor_ref(v->value);
  dfx__var_unlock(v);
  return t;
}

void dfx__var_set(dfx_var *v, dfx_tensor *t) {
  dfx__var_lock(v);
  dfx_tensor *old = v->value;
  v->value = t;
  if (t) v->dtype = (dfx_dtype)t->dtype;
  dfx__var_unlock(v);
  /* Dropped outside the lock: freeing a large value takes time. */
  dfx__tensor_unref(old);
}

void dfx__var_clear(dfx_var *v) { dfx__var_set(v, NULL); }

bool dfx__var_initialized(dfx_var *v) {
  dfx__var_lock(v);
  bool ok = v->value != NULL;
  dfx__var_unlock(v);
  return ok;
}

static int by_address(const void *a, const void *b) {
  uintptr_t x = (uintptr_t) * (dfx_var *const *)a, y = (uintptr_t) * (dfx_var *const *)b;
  return x < y ? -1 : x > y;
}

/* The distinct non-NULL variables of v, sorted by address, in s (n <= 16). */
static int sorted_set(dfx_var *const *v, int n, dfx_var **s) {
  int m = 0;
  for (int i = 0; i < n && m < 16; i++)
    if (v[i]) s[m++] = v[i];
  if (m > 1) qsort(s, (size_t)m, sizeof *s, by_address);
  int k = 0;
  for (int i = 0; i < m; i++)
    if (k == 0 || s[k - 1] != s[i]) s[k++] = s[i];
  return k;
}

void dfx__var_lock_many(dfx_var *const *v, int n) {
  dfx_var *s[16];
  int k = sorted_set(v, n, s);
  for (int i = 0; i < k; i++) dfx__var_lock(s[i]);
}

void dfx__var_unlock_many(dfx_var *const *v, int n) {
  dfx_var *s[16];
  int k = sorted_set(v, n, s);
  for (int i = k - 1; i >= 0; i--) dfx__var_unlock(s[i]);
}

dfx_tensor *dfx__var_mut(dfx_var *v) {
  dfx_tensor *t = v->value;
  if (!t) return NULL;
  /* Unique under the lock means no reader holds it, and none can take a
   * reference without the lock: writing in place is invisible. */
  if (dfx__tensor_unique(t)) return t;
  dfx_tensor *c = dfx__tensor_copy(t);
  if (!c) return NULL;
  v->value = c;
  dfx__tensor_unref(t);
  return c;
}

typedef struct each_args {
  dfx_var_visit_fn fn;
  void *ud;
} each_args;

static bool visit(void *ud, void *obj) {
  each_args *a = ud;
  return a->fn(a->ud, obj);
}

void dfx__var_each(dfx_resmgr *rm, dfx_var_visit_fn fn, void *ud) {
  each_args a = {fn, ud};
  dfx__resmgr_each(rm, &dfx__var_kind, visit, &a);
}

/* ---- the uninitialised marker ---- */

/* The marker's deallocator frees the name copy it carries; the copy (not
 * the variable) because a fetched marker may outlive the session. */
static void marker_release(void *data, void *ud) {
  (void)data;
  dfx__free(ud);
}

dfx_tensor *dfx__var_uninit_marker(const dfx_var *v, dfx_dtype dtype) {
  int64_t zero = 0;
  if (dtype == DFX_INVALID) dtype = DFX_F32;
  dfx_tensor *t = dfx__tensor_alloc(dtype, 1, &zero, NULL);
  char *name = dfx__strdup(v->name);
  if (!t || !name) {
    dfx__tensor_unref(t);
    dfx__free(name);
    return NULL;
  }
  t->dealloc = marker_release;
  t->dealloc_ud = name;
  return t;
}

const char *dfx__var_uninit_name(const dfx_tensor *t) {
  return t && t->dealloc == marker_release ? (const char *)t->dealloc_ud : NULL;
}
