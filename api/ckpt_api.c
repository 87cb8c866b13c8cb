/* ckpt_api.c - the public checkpoint and variable calls: a session's
 * variables (core/var.h in the session's store) saved to and restored from
 * TensorFlow's checkpoint format (ckpt/bundle.h), checkpoints opened and
 * written directly, and a MetaGraphDef's saver run on a session. */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "bundle.h"
#include "ckpt.h"
#include "dfexec.h"
#include "session.h"
#include "status.h"
#include "var.h"

struct dfx_checkpoint {
  dfx_bundle *b;
};

/* ---- session variables ---- */

static dfx_code find_var(dfx_session *s, const char *name, dfx_dtype dt, bool create, dfx_var **v, dfx_status *st) {
  if (!s || !name) return dfx__status_set(st, DFX_EINVAL, "NULL session or variable name");
  return dfx__var_lookup(dfx__session_store(s), "", name, dt, create, v, st);
}

dfx_code dfx_session_variable_read(dfx_session *s, const char *name, dfx_tensor **out, dfx_status *st) {
  if (out) *out = NULL;
  if (!out) return dfx__status_set(st, DFX_EINVAL, "dfx_session_variable_read: NULL out");
  dfx_var *v = NULL;
  dfx_code c = find_var(s, name, DFX_INVALID, false, &v, st);
  if (c != DFX_OK) return c;
  dfx_tensor *t = dfx__var_read(v);
  if (!t) return dfx__status_set(st, DFX_EPRECOND, "Attempting to use uninitialized value %s", name);
  /* The caller may write through dfx_tensor_data: hand out a copy. */
  *out = dfx__tensor_copy(t);
  dfx__tensor_unref(t);
  return *out ? DFX_OK : dfx__status_set(st, DFX_ENOMEM, "out of memory reading variable %s", name);
}

dfx_code dfx_session_variable_assign(dfx_session *s, const char *name, const dfx_tensor *value, dfx_status *st) {
  if (!value) return dfx__status_set(st, DFX_EINVAL, "dfx_session_variable_assign: NULL value");
  dfx_var *v = NULL;
  dfx_code c = find_var(s, name, (dfx_dtype)value->dtype, true, &v, st);
  if (c != DFX_OK) return c;
  dfx_tensor *t = dfx__tensor_copy(value);
  if (!t) return dfx__status_set(st, DFX_ENOMEM, "out of memory assigning variable %s", name);
  dfx__var_set(v, t);
  return DFX_OK;
}

typedef struct nth_args {
  int want, seen;
  const char *name;
} nth_args;

static bool nth(void *ud, dfx_var *v) {
  nth_args *a = ud;
  if (a->seen++ == a->want) {
    a->name = v->name;
    return false;
  }
  return true;
}

int dfx_session_variable_count(dfx_session *s) {
  if (!s) return 0;
  nth_args a = {-1, 0, NULL};
  dfx__var_each(dfx__session_store(s), nth, &a);
  return a.seen;
}

const char *dfx_session_variable_name(dfx_session *s, int i) {
  if (!s || i < 0) return NULL;
  nth_args a = {i, 0, NULL};
  dfx__var_each(dfx__session_store(s), nth, &a);
  return a.name;
}

/* ---- save and restore ---- */

typedef struct snap {
  dfx_tensor **t;
  const char **name;
  int n, cap;
  bool oom;
} snap;

/* Takes every initialised variable's value under its lock, so the save
 * writes one consistent value per variable while runs go on. */
static bool take(void *ud, dfx_var *v) {
  snap *s = ud;
  dfx_tensor *t = dfx__var_read(v);
  if (!t) return true;
  if (s->n == s->cap) {
    int nc = s->cap ? s->cap * 2 : 16;
    dfx_tensor **nt = dfx__realloc(s->t, sizeof *nt * (size_t)nc);
    if (nt) s->t = nt;
    const char **nn = nt ? dfx__realloc(s->name, sizeof *nn * (size_t)nc) : NULL;
    if (nn) s->name = nn;
    if (!nt || !nn) {
      dfx__tensor_unref(t);
      s->oom = true;
      return false;
    }
    s->cap = nc;
  }
  s->t[s->n] = t;
  s->name[s->n++] = v->name;
  return true;
}

dfx_code dfx_session_save(dfx_session *s, const char *prefix, dfx_status *st) {
  if (!s || !prefix) return dfx__status_set(st, DFX_EINVAL, "dfx_session_save: NULL argument");
  snap sn = {0};
  dfx__var_each(dfx__session_store(s), take, &sn);
  dfx_code c = sn.oom ? dfx__status_set(st, DFX_ENOMEM, "out of memory saving variables") : DFX_OK;
  if (c == DFX_OK) c = dfx_checkpoint_write(prefix, sn.name, sn.t, sn.n, st);
  for (int i = 0; i < sn.n; i++) dfx__tensor_unref(sn.t[i]);
  dfx__free(sn.t);
  dfx__free(sn.name);
  return c;
}

dfx_code dfx_session_restore(dfx_session *s, const char *prefix, const char *const *tensor_names,
                             const char *const *var_names, int n, dfx_status *st) {
  if (!s || !prefix || n < 0 || (n > 0 && !tensor_names))
    return dfx__status_set(st, DFX_EINVAL, "dfx_session_restore: bad argument");
  dfx_bundle *b = NULL;
  dfx_code c = dfx__bundle_open(prefix, &b, st);
  if (c != DFX_OK) return c;
  int m = n > 0 ? n : b->n;
  dfx_tensor **vals = dfx__calloc((size_t)(m ? m : 1), sizeof *vals);
  dfx_var **vars = dfx__calloc((size_t)(m ? m : 1), sizeof *vars);
  if (!vals || !vars) c = dfx__status_set(st, DFX_ENOMEM, "out of memory restoring '%s'", prefix);
  /* Everything is read and every variable found before anything is
   * assigned, so a bad checkpoint leaves the session as it was. */
  for (int i = 0; i < m && c == DFX_OK; i++) {
    const dfx_bundle_entry *e = n > 0 ? dfx__bundle_find(b, tensor_names[i]) : &b->e[i];
    const char *vn = n > 0 ? (var_names ? var_names[i] : tensor_names[i]) : e->name;
    if (!e) c = dfx__status_set(st, DFX_ENOTFOUND, "Key %s not found in checkpoint %s", tensor_names[i], prefix);
    else if ((c = dfx__bundle_read(b, e, &vals[i], st)) == DFX_OK)
      c = find_var(s, vn, e->dtype, true, &vars[i], st);
  }
  for (int i = 0; i < m && c == DFX_OK; i++) {
    dfx__var_set(vars[i], vals[i]);
    vals[i] = NULL;
  }
  for (int i = 0; vals && i < m; i++) dfx__tensor_unref(vals[i]);
  dfx__free(vals);
  dfx__free(vars);
  dfx__bundle_close(b);
  return c;
}

/* ---- checkpoints ---- */

dfx_code dfx_checkpoint_open(const char *prefix, dfx_checkpoint **out, dfx_status *st) {
  if (out) *out = NULL;
  if (!prefix || !out) return dfx__status_set(st, DFX_EINVAL, "dfx_checkpoint_open: NULL argument");
  dfx_checkpoint *c = dfx__calloc(1, sizeof *c);
  if (!c) return dfx__status_set(st, DFX_ENOMEM, "out of memory");
  dfx_code r = dfx__bundle_open(prefix, &c->b, st);
  if (r != DFX_OK) {
    dfx__free(c);
    return r;
  }
  *out = c;
  return DFX_OK;
}

void dfx_checkpoint_close(dfx_checkpoint *c) {
  if (!c) return;
  dfx__bundle_close(c->b);
  dfx__free(c);
}

static const dfx_bundle_entry *entry(const dfx_checkpoint *c, int i) {
  return c && i >= 0 && i < c->b->n ? &c->b->e[i] : NULL;
}
int dfx_checkpoint_count(const dfx_checkpoint *c) { return c ? c->b->n : 0; }
const char *dfx_checkpoint_name(const dfx_checkpoint *c, int i) {
  const dfx_bundle_entry *e = entry(c, i);
  return e ? e->name : NULL;
}
dfx_dtype dfx_checkpoint_dtype(const dfx_checkpoint *c, int i) {
  const dfx_bundle_entry *e = entry(c, i);
  return e ? e->dtype : DFX_INVALID;
}
int dfx_checkpoint_shape(const dfx_checkpoint *c, int i, int64_t *dims) {
  const dfx_bundle_entry *e = entry(c, i);
  if (!e) return -1;
  if (dims && e->ndims) memcpy(dims, e->dims, sizeof *dims * (size_t)e->ndims);
  return e->ndims;
}

dfx_code dfx_checkpoint_read(const dfx_checkpoint *c, const char *name, dfx_tensor **out, dfx_status *st) {
  if (out) *out = NULL;
  if (!c || !name || !out) return dfx__status_set(st, DFX_EINVAL, "dfx_checkpoint_read: NULL argument");
  const dfx_bundle_entry *e = dfx__bundle_find(c->b, name);
  if (!e) return dfx__status_set(st, DFX_ENOTFOUND, "Key %s not found in checkpoint %s", name, c->b->prefix);
  return dfx__bundle_read(c->b, e, out, st);
}

dfx_code dfx_checkpoint_write(const char *prefix, const char *const *names, dfx_tensor *const *values, int n,
                              dfx_status *st) {
  if (!prefix || n < 0 || (n > 0 && (!names || !values)))
    return dfx__status_set(st, DFX_EINVAL, "dfx_checkpoint_write: bad argument");
  dfx_bundle_writer *w = NULL;
  dfx_code c = dfx__bundle_writer_new(prefix, &w, st);
  for (int i = 0; i < n && c == DFX_OK; i++) {
    if (!names[i] || !values[i]) c = dfx__status_set(st, DFX_EINVAL, "dfx_checkpoint_write: NULL name or value %d", i);
    else c = dfx__bundle_writer_add(w, names[i], values[i], st);
  }
  if (c != DFX_OK) {
    dfx__bundle_writer_abort(w);
    return c;
  }
  return dfx__bundle_writer_finish(w, st);
}

/* ---- a MetaGraphDef's saver ---- */

/* Runs the saver with the filename tensor fed prefix: fetching `fetch` or
 * running `target`. */
static dfx_code run_saver(const dfx_metagraph *m, dfx_session *s, const char *prefix, const char *fetch,
                          const char *target, dfx_status *st) {
  if (!m || !s || !prefix) return dfx__status_set(st, DFX_EINVAL, "NULL argument");
  if (!m->filename_tensor || !(fetch || target))
    return dfx__status_set(st, DFX_EINVAL, "the MetaGraphDef has no saver (saver_def) to %s with",
                           fetch ? "save" : "restore");
  dfx_tensor *p = dfx__tensor_alloc(DFX_STRING, 0, NULL, NULL);
  dfx_str *ps = p ? p->data : NULL;
  if (!p || !(ps->ptr = dfx__strdup(prefix))) {
    dfx__tensor_unref(p);
    return dfx__status_set(st, DFX_ENOMEM, "out of memory");
  }
  ps->len = strlen(prefix);
  char node[1024];
  int idx = 0;
  /* "save/Const:0" -> port (save/Const, 0). */
  const char *colon = strrchr(m->filename_tensor, ':');
  size_t nl = colon ? (size_t)(colon - m->filename_tensor) : strlen(m->filename_tensor);
  if (nl >= sizeof node) nl = sizeof node - 1;
  memcpy(node, m->filename_tensor, nl);
  node[nl] = 0;
  if (colon) idx = atoi(colon + 1);
  dfx_port feed = {node, idx};
  char fnode[1024];
  dfx_port fp = {NULL, 0};
  dfx_tensor *out = NULL;
  if (fetch) {
    const char *fc = strrchr(fetch, ':');
    size_t fl = fc ? (size_t)(fc - fetch) : strlen(fetch);
    if (fl >= sizeof fnode) fl = sizeof fnode - 1;
    memcpy(fnode, fetch, fl);
    fnode[fl] = 0;
    fp = (dfx_port){fnode, fc ? atoi(fc + 1) : 0};
  }
  /* A target may carry TF's "^" control prefix. */
  const char *tg[1] = {target && target[0] == '^' ? target + 1 : target};
  dfx_code c = dfx_session_run(s, NULL, &feed, &p, 1, &fp, &out, fetch ? 1 : 0, tg, target ? 1 : 0, st);
  dfx_tensor_free(out);
  dfx__tensor_unref(p);
  return c;
}

dfx_code dfx_metagraph_restore(const dfx_metagraph *m, dfx_session *s, const char *prefix, dfx_status *st) {
  return run_saver(m, s, prefix, NULL, m ? m->restore_op : NULL, st);
}

dfx_code dfx_metagraph_save(const dfx_metagraph *m, dfx_session *s, const char *prefix, dfx_status *st) {
  return run_saver(m, s, prefix, m ? m->save_tensor : NULL, NULL, st);
}
