/* local_rdv.c - the in-process rendezvous: partitions of one graph run as
 * sessions on threads of one process and meet here. One mutex guards the
 * table; callbacks always run after it is released (a receive's callback
 * may send or receive again). A value waits in the table until its
 * receive arrives, or a receive waits for its value; either way the entry
 * goes when the two meet. */
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "alloc.h"
#include "dist.h"

typedef struct entry {
  struct entry *next;
  int64_t step;
  uint64_t hash;
  bool has_value;        /* else a waiting receive */
  dfx_tensor *value;     /* reference held by the table; NULL when dead */
  bool is_dead;
  dfx_rdv_done_fn done;
  void *ud;
  char key[];
} entry;

typedef struct aborted {
  int64_t step;
  dfx_status st;
} aborted;

typedef struct local_rdv {
  dfx_rendezvous base;
  uv_mutex_t mu;
  entry **buckets;
  size_t n_buckets;
  aborted *ab;           /* aborted steps (few: cleared by end_step) */
  int n_ab, cap_ab;
} local_rdv;

static uint64_t hash_key(int64_t step, const char *key) {
  uint64_t h = 1469598103934665603ull ^ (uint64_t)step;
  for (const char *p = key; *p; p++) {
    h ^= (unsigned char)*p;
    h *= 1099511628211ull;
  }
  return h;
}

/* Caller holds mu. */
static const aborted *find_abort(local_rdv *r, int64_t step) {
  for (int i = 0; i < r->n_ab; i++)
    if (r->ab[i].step == step) return &r->ab[i];
  return NULL;
}

/* Caller holds mu: unlinks and returns the entry for (step, key), or NULL. */
static entry *take(local_rdv *r, int64_t step, const char *key, uint64_t h) {
  for (entry **pp = &r->buckets[h % r->n_buckets]; *pp; pp = &(*pp)->next) {
    entry *e = *pp;
    if (e->hash == h && e->step == step && strcmp(e->key, key) == 0) {
      *pp = e->next;
      return e;
    }
  }
  return NULL;
}

static entry *new_entry(int64_t step, const char *key, uint64_t h) {
  size_t len = strlen(key);
  entry *e = dfx__calloc(1, sizeof *e + len + 1);
  if (!e) return NULL;
  e->step = step;
  e->hash = h;
  memcpy(e->key, key, len + 1);
  return e;
}

static dfx_code rdv_send(dfx_rendezvous *base, int64_t step, int dst_task, const char *key, dfx_tensor *value,
                         bool is_dead, dfx_status *st) {
  local_rdv *r = (local_rdv *)base;
  uint64_t h = hash_key(step, key);
  uv_mutex_lock(&r->mu);
  const aborted *ab = find_abort(r, step);
  if (ab) {
    dfx_code c = dfx__status_set(st, DFX_ECANCELED, "step aborted: %s", ab->st.msg);
    uv_mutex_unlock(&r->mu);
    return c;
  }
  entry *e = take(r, step, key, h);
  if (e && !e->has_value) { /* a receive is waiting: hand over outside the lock */
    uv_mutex_unlock(&r->mu);
    e->done(e->ud, DFX_OK, "", is_dead ? NULL : dfx__tensor_ref(value), is_dead);
    dfx__free(e);
    return DFX_OK;
  }
  if (e) { /* a second send under one key: a bug in the partition */
    size_t b = h % r->n_buckets;
    e->next = r->buckets[b];
    r->buckets[b] = e;
    uv_mutex_unlock(&r->mu);
    return dfx__status_set(st, DFX_EINTERNAL, "rendezvous: key '%s' sent twice in step %lld", key, (long long)step);
  }
  if (!(e = new_entry(step, key, h))) {
    uv_mutex_unlock(&r->mu);
    return dfx__status_set(st, DFX_ENOMEM, "out of memory");
  }
  e->has_value = true;
  e->is_dead = is_dead;
  e->value = is_dead ? NULL : dfx__tensor_ref(value);
  size_t b = h % r->n_buckets;
  e->next = r->buckets[b];
  r->buckets[b] = e;
  uv_mutex_unlock(&r->mu);
  return DFX_OK;
}

static void rdv_recv(dfx_rendezvous *base, int64_t step, int src_task, const char *key, dfx_rdv_done_fn done,
                     void *ud) {
  local_rdv *r = (local_rdv *)base;
  uint64_t h = hash_key(step, key);
  uv_mutex_lock(&r->mu);
  const aborted *ab = find_abort(r, step);
  if (ab) {
    dfx_status copy;
    dfx__status_set(&copy, DFX_ECANCELED, "step aborted: %s", ab->st.msg);
    uv_mutex_unlock(&r->mu);
    done(ud, copy.code, copy.msg, NULL, false);
    return;
  }
  entry *e = take(r, step, key, h);
  if (e && e->has_value) {
    uv_mutex_unlock(&r->mu);
    done(ud, DFX_OK, "", e->value, e->is_dead); /* the table's reference moves to the receiver */
    dfx__free(e);
    return;
  }
  if (e) { /* two receives under one key */
    size_t b = h % r->n_buckets;
    e->next = r->buckets[b];
    r->buckets[b] = e;
    uv_mutex_unlock(&r->mu);
    done(ud, DFX_EINTERNAL, "rendezvous: key received twice", NULL, false);
    return;
  }
  if (!(e = new_entry(step, key, h))) {
    uv_mutex_unlock(&r->mu);
    done(ud, DFX_ENOMEM, "out of memory", NULL, false);
    return;
  }
  e->done = done;
  e->ud = ud;
  size_t b = h % r->n_buckets;
  e->next = r->buckets[b];
  r->buckets[b] = e;
  uv_mutex_unlock(&r->mu);
}

/* Caller holds mu: unlinks every entry of step into *list. */
static void collect_step(local_rdv *r, int64_t step, entry **list) {
  for (size_t b = 0; b < r->n_buckets; b++)
    for (entry **pp = &r->buckets[b]; *pp;) {
      entry *e = *pp;
      if (e->step == step) {
        *pp = e->next;
        e->next = *list;
        *list = e;
      } else {
        pp = &e->next;
      }
    }
}

static void finish_entries(entry *list, const dfx_status *why) {
  while (list) {
    entry *e = list;
    list = e->next;
    if (e->has_value) dfx__tensor_unref(e->value);
    else e->done(e->ud, why->code, why->msg, NULL, false);
    dfx__free(e);
  }
}

static void rdv_abort(dfx_rendezvous *base, int64_t step, dfx_code code, const char *msg) {
  local_rdv *r = (local_rdv *)base;
  entry *list = NULL;
  dfx_status why;
  uv_mutex_lock(&r->mu);
  const aborted *ab = find_abort(r, step);
  if (!ab && r->n_ab == r->cap_ab) {
    int nc = r->cap_ab ? r->cap_ab * 2 : 4;
    aborted *na = dfx__realloc(r->ab, sizeof *na * (size_t)nc);
    if (na) {
      r->ab = na;
      r->cap_ab = nc;
    }
  }
  if (!ab && r->n_ab < r->cap_ab) {
    aborted *a = &r->ab[r->n_ab++];
    a->step = step;
    dfx__status_set(&a->st, code, "%s", msg);
    ab = a;
  }
  /* Receivers fail as cancelled: the step's real error is the abort's. */
  dfx__status_set(&why, DFX_ECANCELED, "step aborted: %s", ab ? ab->st.msg : msg);
  collect_step(r, step, &list);
  uv_mutex_unlock(&r->mu);
  finish_entries(list, &why);
}

static const dfx_rendezvous_vt local_vt = {rdv_send, rdv_recv, rdv_abort};

dfx_rendezvous *dfx__local_rdv_new(void) {
  local_rdv *r = dfx__calloc(1, sizeof *r);
  if (!r) return NULL;
  r->n_buckets = 256;
  if (!(r->buckets = dfx__calloc(r->n_buckets, sizeof *r->buckets)) || uv_mutex_init(&r->mu)) {
    dfx__free(r->buckets);
    dfx__free(r);
    return NULL;
  }
  r->base.vt = &local_vt;
  return &r->base;
}

void dfx__local_rdv_end_step(dfx_rendezvous *base, int64_t step) {
  local_rdv *r = (local_rdv *)base;
  entry *list = NULL;
  uv_mutex_lock(&r->mu);
  collect_step(r, step, &list);
  for (int i = 0; i < r->n_ab; i++)
    if (r->ab[i].step == step) r->ab[i--] = r->ab[--r->n_ab];
  uv_mutex_unlock(&r->mu);
  dfx_status why;
  dfx__status_set(&why, DFX_ECANCELED, "the step ended before this value arrived");
  finish_entries(list, &why);
}

dfx_code dfx__local_rdv_abort_status(dfx_rendezvous *base, int64_t step, dfx_status *st) {
  local_rdv *r = (local_rdv *)base;
  uv_mutex_lock(&r->mu);
  const aborted *ab = find_abort(r, step);
  dfx_code c = ab ? dfx__status_copy(st, &ab->st) : DFX_OK;
  uv_mutex_unlock(&r->mu);
  return c;
}

void dfx__local_rdv_free(dfx_rendezvous *base) {
  if (!base) return;
  local_rdv *r = (local_rdv *)base;
  for (size_t b = 0; b < r->n_buckets; b++) {
    entry *e = r->buckets[b];
    while (e) {
      entry *nx = e->next;
      if (e->has_value) dfx__tensor_unref(e->value);
      dfx__free(e);
      e = nx;
    }
  }
  dfx__free(r->buckets);
  dfx__free(r->ab);
  uv_mutex_destroy(&r->mu);
  dfx__free(r);
}
