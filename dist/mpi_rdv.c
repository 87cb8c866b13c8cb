/* mpi_rdv.c - the MPI transport: one process per task (rank K runs task
 * K), standard MPI-3.1 point-to-point only, so MPICH and Open MPI both work.
 *
 * One communication thread makes every MPI call after start-up (the
 * library is initialised MPI_THREAD_SERIALIZED). Sends are queued by any
 * thread and posted with MPI_Isend; arriving messages are matched with
 * MPI_Improbe and received with MPI_Imrecv, then delivered into a local
 * rendezvous table (local_rdv.c) where the _Recv kernels wait. A message is
 * one buffer: a fixed header (step, dtype, rank, dims, is_dead, lengths),
 * the key, then the raw elements (strings as length-prefixed bytes). An
 * idle thread backs off from polling to short sleeps (1 ms at most), so
 * two ranks on two cores leave the cores to the kernels.
 *
 * Aborts travel as their own message to every rank: an error anywhere
 * fails every rank's pending receives of that step. */
#include <errno.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <uv.h>

#include "alloc.h"
#include "dist.h"
#include "dist_mpi.h"

enum { TAG_DATA = 7001, TAG_ABORT = 7002 };

typedef struct msg_hdr {
  int64_t step;
  int64_t dims[DFX_MAX_DIMS];
  uint64_t payload_len;
  int32_t code;     /* TAG_ABORT: the error code */
  uint32_t key_len; /* key (or abort message) bytes after the header */
  uint8_t dtype, ndims, is_dead, pad;
} msg_hdr;

typedef struct out_msg {
  struct out_msg *next;
  int dst;
  int tag;
  size_t len;
  MPI_Request req;
  char *buf;
} out_msg;

typedef struct in_msg {
  struct in_msg *next;
  MPI_Request req;
  int tag;
  char *buf;
  int len;
} in_msg;

struct dfx_mpi {
  dfx_rendezvous base;
  dfx_rendezvous *table;   /* local_rdv: where values meet receives */
  int rank, size;
  uv_mutex_t mu;           /* guards queue and stop */
  uv_cond_t cv;
  out_msg *queue;          /* not yet posted */
  int stop;
  uv_thread_t thread;
  bool started;
  out_msg *posted;         /* comm thread only */
  in_msg *receiving;       /* comm thread only */
};

/* ---- encoding ---- */

static size_t payload_size(const dfx_tensor *t) {
  if (t->dtype != DFX_STRING) return t->nbytes;
  size_t n = 0;
  const dfx_str *s = t->data;
  for (int64_t i = 0; i < t->count; i++) n += 8 + s[i].len;
  return n;
}

static char *encode(int64_t step, const char *key, const dfx_tensor *t, bool is_dead, size_t *len) {
  size_t klen = strlen(key), plen = is_dead ? 0 : payload_size(t);
  char *buf = dfx__malloc(sizeof(msg_hdr) + klen + plen + 1);
  if (!buf) return NULL;
  msg_hdr h;
  memset(&h, 0, sizeof h);
  h.step = step;
  h.key_len = (uint32_t)klen;
  h.is_dead = is_dead;
  h.payload_len = plen;
  if (!is_dead) {
    h.dtype = t->dtype;
    h.ndims = t->ndims;
    for (int d = 0; d < t->ndims; d++) h.dims[d] = t->dims[d];
  }
  memcpy(buf, &h, sizeof h);
  memcpy(buf + sizeof h, key, klen);
  char *p = buf + sizeof h + klen;
  if (!is_dead && t->dtype == DFX_STRING) {
    const dfx_str *s = t->data;
    for (int64_t i = 0; i < t->count; i++) {
      uint64_t l = s[i].len;
      memcpy(p, &l, 8);
      if (l) memcpy(p + 8, s[i].ptr, l);
      p += 8 + l;
    }
  } else if (plen) {
    memcpy(p, t->data, plen);
  }
  *len = sizeof h + klen + plen;
  return buf;
}

/* Delivers one data message into the table. */
static void deliver(dfx_mpi *m, const char *buf, int len) {
  msg_hdr h;
  if ((size_t)len < sizeof h) return;
  memcpy(&h, buf, sizeof h);
  if (sizeof h + h.key_len + h.payload_len > (size_t)len) return;
  char *key = dfx__malloc(h.key_len + 1);
  if (!key) return;
  memcpy(key, buf + sizeof h, h.key_len);
  key[h.key_len] = 0;
  const char *p = buf + sizeof h + h.key_len;
  dfx_tensor *t = NULL;
  dfx_status st;
  if (!h.is_dead) {
    dfx_code c;
    t = dfx__tensor_alloc((dfx_dtype)h.dtype, h.ndims, h.dims, &c);
    if (!t) {
      m->table->vt->abort(m->table, h.step, c, "cannot allocate a received tensor");
      dfx__free(key);
      return;
    }
    if (t->dtype == DFX_STRING) {
      dfx_str *s = t->data;
      for (int64_t i = 0; i < t->count; i++) {
        uint64_t l;
        memcpy(&l, p, 8);
        s[i].ptr = l ? dfx__malloc(l) : NULL;
        if (l && s[i].ptr) memcpy(s[i].ptr, p + 8, l);
        s[i].len = s[i].ptr ? l : 0;
        p += 8 + l;
      }
    } else if (h.payload_len) {
      memcpy(t->data, p, h.payload_len);
    }
  }
  m->table->vt->send(m->table, h.step, m->rank, key, t, h.is_dead, &st);
  dfx__tensor_unref(t);
  dfx__free(key);
}

static void deliver_abort(dfx_mpi *m, const char *buf, int len) {
  msg_hdr h;
  if ((size_t)len < sizeof h) return;
  memcpy(&h, buf, sizeof h);
  char msg[DFX_STATUS_MSG_MAX];
  size_t n = h.key_len < sizeof msg - 1 ? h.key_len : sizeof msg - 1;
  memcpy(msg, buf + sizeof h, n);
  msg[n] = 0;
  m->table->vt->abort(m->table, h.step, (dfx_code)h.code, msg);
}

/* ---- the communication thread ---- */

static void comm_thread(void *arg) {
  dfx_mpi *m = arg;
  unsigned idle = 0;
  for (;;) {
    bool progress = false;
    uv_mutex_lock(&m->mu);
    out_msg *q = m->queue;
    m->queue = NULL;
    int stop = m->stop;
    uv_mutex_unlock(&m->mu);
    while (q) { /* post in order */
      out_msg *nx = q->next;
      MPI_Isend(q->buf, (int)q->len, MPI_BYTE, q->dst, q->tag, MPI_COMM_WORLD, &q->req);
      q->next = m->posted;
      m->posted = q;
      q = nx;
      progress = true;
    }
    for (out_msg **pp = &m->posted; *pp;) {
      int done = 0;
      MPI_Test(&(*pp)->req, &done, MPI_STATUS_IGNORE);
      if (done) {
        out_msg *d = *pp;
        *pp = d->next;
        dfx__free(d->buf);
        dfx__free(d);
        progress = true;
      } else {
        pp = &(*pp)->next;
      }
    }
    for (;;) {
      int flag = 0;
      MPI_Message msg;
      MPI_Status status;
      MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &msg, &status);
      if (!flag) break;
      int count = 0;
      MPI_Get_count(&status, MPI_BYTE, &count);
      in_msg *im = dfx__calloc(1, sizeof *im);
      char *buf = dfx__malloc((size_t)count + 1);
      if (!im || !buf) { /* drop it: the receive fails by timeout */
        dfx__free(im);
        dfx__free(buf);
        char tmp;
        MPI_Mrecv(&tmp, 0, MPI_BYTE, &msg, MPI_STATUS_IGNORE);
        continue;
      }
      im->buf = buf;
      im->len = count;
      im->tag = status.MPI_TAG;
      MPI_Imrecv(buf, count, MPI_BYTE, &msg, &im->req);
      im->next = m->receiving;
      m->receiving = im;
      progress = true;
    }
    for (in_msg **pp = &m->receiving; *pp;) {
      int done = 0;
      MPI_Test(&(*pp)->req, &done, MPI_STATUS_IGNORE);
      if (done) {
        in_msg *d = *pp;
        *pp = d->next;
        if (d->tag == TAG_DATA) deliver(m, d->buf, d->len);
        else if (d->tag == TAG_ABORT) deliver_abort(m, d->buf, d->len);
        dfx__free(d->buf);
        dfx__free(d);
        progress = true;
      } else {
        pp = &(*pp)->next;
      }
    }
    if (stop && !m->posted && !m->receiving) break;
    if (progress) {
      idle = 0;
      continue;
    }
    /* Back off: poll for a while (in a loop across ranks the reply is
     * often microseconds away: about 100 us of polling), then sleep longer
     * and longer, up to 1 ms, so an idle rank leaves its core alone; a
     * queued send wakes the thread at once. */
    idle++;
    if (idle < 256) continue;
    long ns = idle < 320 ? 20000 : idle < 400 ? 200000 : 1000000;
    uv_mutex_lock(&m->mu);
    if (!m->queue && !m->stop) {
      uint64_t t = (uint64_t)ns;
      uv_cond_timedwait(&m->cv, &m->mu, t);
    }
    uv_mutex_unlock(&m->mu);
  }
}

static void enqueue(dfx_mpi *m, out_msg *o) {
  uv_mutex_lock(&m->mu);
  out_msg **pp = &m->queue; /* keep order: append */
  while (*pp) pp = &(*pp)->next;
  *pp = o;
  uv_cond_signal(&m->cv);
  uv_mutex_unlock(&m->mu);
}

/* ---- the rendezvous interface ---- */

static dfx_code mpi_send(dfx_rendezvous *base, int64_t step, int dst_task, const char *key, dfx_tensor *value,
                         bool is_dead, dfx_status *st) {
  dfx_mpi *m = (dfx_mpi *)base;
  if (dst_task == m->rank) return m->table->vt->send(m->table, step, dst_task, key, value, is_dead, st);
  if (dst_task < 0 || dst_task >= m->size)
    return dfx__status_set(st, DFX_EINVAL, "send to task %d, but the world has %d ranks", dst_task, m->size);
  out_msg *o = dfx__calloc(1, sizeof *o);
  if (o) o->buf = encode(step, key, value, is_dead, &o->len);
  if (!o || !o->buf) {
    dfx__free(o);
    return dfx__status_set(st, DFX_ENOMEM, "out of memory encoding a tensor for task %d", dst_task);
  }
  o->dst = dst_task;
  o->tag = TAG_DATA;
  enqueue(m, o);
  return DFX_OK;
}

static void mpi_recv(dfx_rendezvous *base, int64_t step, int src_task, const char *key, dfx_rdv_done_fn done,
                     void *ud) {
  dfx_mpi *m = (dfx_mpi *)base;
  m->table->vt->recv(m->table, step, src_task, key, done, ud);
}

static void mpi_abort(dfx_rendezvous *base, int64_t step, dfx_code code, const char *msg) {
  dfx_mpi *m = (dfx_mpi *)base;
  dfx_status first;
  /* Only the first abort of a step travels. */
  bool had = dfx__local_rdv_abort_status(m->table, step, &first) != DFX_OK;
  m->table->vt->abort(m->table, step, code, msg);
  if (had) return;
  for (int r = 0; r < m->size; r++) {
    if (r == m->rank) continue;
    size_t klen = strlen(msg);
    out_msg *o = dfx__calloc(1, sizeof *o);
    char *buf = o ? dfx__malloc(sizeof(msg_hdr) + klen + 1) : NULL;
    if (!buf) {
      dfx__free(o);
      continue;
    }
    msg_hdr h;
    memset(&h, 0, sizeof h);
    h.step = step;
    h.code = code;
    h.key_len = (uint32_t)klen;
    memcpy(buf, &h, sizeof h);
    memcpy(buf + sizeof h, msg, klen);
    o->buf = buf;
    o->len = sizeof h + klen;
    o->dst = r;
    o->tag = TAG_ABORT;
    enqueue(m, o);
  }
}

static const dfx_rendezvous_vt mpi_vt = {mpi_send, mpi_recv, mpi_abort};

/* ---- lifecycle ---- */

bool dfx__mpi_launched(void) {
  return getenv("PMI_RANK") || getenv("OMPI_COMM_WORLD_RANK") || getenv("PMIX_RANK");
}

dfx_code dfx__mpi_new(int *argc, char ***argv, dfx_mpi **out, dfx_status *st) {
  *out = NULL;
  int provided = 0;
  if (MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS)
    return dfx__status_set(st, DFX_EINTERNAL, "MPI_Init_thread failed");
  dfx_mpi *m = dfx__calloc(1, sizeof *m);
  if (!m || !(m->table = dfx__local_rdv_new())) {
    dfx__free(m);
    MPI_Finalize();
    return dfx__status_set(st, DFX_ENOMEM, "out of memory");
  }
  /* Errors come back as codes: the caller reports them on rank 0. */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &m->rank);
  MPI_Comm_size(MPI_COMM_WORLD, &m->size);
  uv_mutex_init(&m->mu);
  uv_cond_init(&m->cv);
  m->base.vt = &mpi_vt;
  if (provided < MPI_THREAD_SERIALIZED) {
    dfx__mpi_free(m);
    return dfx__status_set(st, DFX_EUNIMPL, "the MPI library gives thread level %d; dfexec needs MPI_THREAD_SERIALIZED",
                           provided);
  }
  *out = m;
  return DFX_OK;
}

int dfx__mpi_rank(const dfx_mpi *m) { return m->rank; }
int dfx__mpi_size(const dfx_mpi *m) { return m->size; }

dfx_code dfx__mpi_check_hash(dfx_mpi *m, uint64_t hash, dfx_status *st) {
  uint64_t *all = dfx__calloc((size_t)m->size, sizeof *all);
  if (!all) return dfx__status_set(st, DFX_ENOMEM, "out of memory");
  dfx_code c = DFX_OK;
  if (MPI_Allgather(&hash, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, MPI_COMM_WORLD) != MPI_SUCCESS)
    c = dfx__status_set(st, DFX_EIO, "MPI_Allgather of the graph hashes failed");
  for (int r = 0; r < m->size && c == DFX_OK; r++)
    if (all[r] != all[0])
      c = dfx__status_set(st, DFX_EINVAL,
                          "rank %d holds a different graph than rank 0 (hash %016llx vs %016llx): every rank must "
                          "load the same graph with the same feeds and fetches",
                          r, (unsigned long long)all[r], (unsigned long long)all[0]);
  dfx__free(all);
  return c;
}

dfx_code dfx__mpi_agree(dfx_mpi *m, int value, int *out, dfx_status *st) {
  if (MPI_Allreduce(&value, out, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD) != MPI_SUCCESS)
    return dfx__status_set(st, DFX_EIO, "MPI_Allreduce failed");
  return DFX_OK;
}

dfx_rendezvous *dfx__mpi_rendezvous(dfx_mpi *m) {
  if (!m->started) {
    m->stop = 0; /* a previous step's dfx__mpi_stop left it set */
    if (uv_thread_create(&m->thread, comm_thread, m)) return NULL;
    m->started = true;
  }
  return &m->base;
}

void dfx__mpi_stop(dfx_mpi *m) {
  if (!m || !m->started) return;
  uv_mutex_lock(&m->mu);
  m->stop = 1;
  uv_cond_signal(&m->cv);
  uv_mutex_unlock(&m->mu);
  uv_thread_join(&m->thread);
  m->started = false;
}

void dfx__mpi_end_step(dfx_mpi *m, int64_t step) { dfx__local_rdv_end_step(m->table, step); }

void dfx__mpi_free(dfx_mpi *m) {
  if (!m) return;
  dfx__mpi_stop(m);
  dfx__local_rdv_free(m->table);
  uv_cond_destroy(&m->cv);
  uv_mutex_destroy(&m->mu);
  dfx__free(m);
  MPI_Finalize();
}
