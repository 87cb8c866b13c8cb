/* pool.c - worker threads and the shared queue of expensive nodes.
 * The only file that creates threads. One mutex guards the queue, the stop
 * flag, every run's `done` flag and the stack of sleeping threads. Each
 * sleeping thread (a worker, or a caller waiting for its run) sleeps on its
 * own semaphore, and whoever wakes it pops it from the stack first, so a
 * wake-up is never lost and never goes to a thread that cannot use it.
 * (A shared condition variable lost wake-ups here under glibc 2.36: a posted
 * matmul could sit in the queue while a worker slept.) Nothing spins.
 * Nodes queued by a running thread do not wake anyone at once: the thread
 * nudges the pool before it starts an expensive node and every 64 nodes,
 * and takes what is still queued itself when its own work runs out. A loop
 * that cannot overlap (parallel_iterations=1) then stays on one thread
 * instead of paying a wake-up per iteration, and a sequential loop's matmul
 * stays with its operands.
 *
 * Intra-op parallelism (core/parallel.h) borrows the same threads: a kernel
 * that splits its work publishes a job on `jobs` and wakes up to as many
 * sleeping threads as it has blocks for, never more than are idle, so it
 * takes no thread from queued nodes. Threads look at jobs before the node
 * queue (a job's caller is waiting for it), claim blocks one at a time with
 * an atomic counter and leave when none is left; the caller claims too, so
 * a helper that starts late finds nothing and costs nothing. The caller
 * unlinks its job once every block is claimed and waits (on the job's own
 * semaphore, only if a helper is still inside) until the last helper leaves:
 * after that no thread touches the job, which lives on the caller's stack.
 * DFX_INTRA_OP=0 in the environment turns it off for pools made after. */
#include <errno.h>
#include <semaphore.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alloc.h"
#include "run.h"

typedef struct par_job {
  void (*block)(void *ud, int b);
  void *ud;
  int n_blocks;
  int next;                /* atomic: the next unclaimed block */
  int users;               /* helpers inside the job (mu) */
  bool waiting;            /* the caller sleeps on sem until users is 0 (mu) */
  sem_t sem;
  struct par_job *next_job; /* the pool's list of jobs with blocks left (mu) */
} par_job;

typedef struct item {
  dfx_run *run;
  dfx_tagged t;
} item;

struct dfx_pool {
  uv_mutex_t mu;
  item *q;               /* circular buffer */
  int cap, head, count;
  int stop;
  sem_t **idle;          /* sleeping threads, most recent last */
  int n_idle;
  int n_workers;
  uv_thread_t *threads;
  sem_t *sems;           /* one per worker */
  par_job *jobs;         /* parallel_for jobs that may still have blocks */
  dfx_parallel par;      /* kernels' view of this pool (ctx->par) */
};

/* Caller holds mu. */
static int pop(dfx_pool *p, item *out) {
  if (!p->count) return 0;
  *out = p->q[p->head];
  p->head = (p->head + 1) % p->cap;
  __atomic_store_n(&p->count, p->count - 1, __ATOMIC_RELAXED); /* read unlocked by dfx__pool_nudge */
  return 1;
}

/* Caller holds mu. The stack has room for every worker and every caller
 * (at most one entry per thread): see dfx__pool_help. */
static int idle_push(dfx_pool *p, sem_t *s) {
  sem_t **ni = dfx__realloc(p->idle, sizeof *ni * (size_t)(p->n_idle + 1));
  if (!ni) return -1;
  p->idle = ni;
  p->idle[p->n_idle] = s;
  __atomic_store_n(&p->n_idle, p->n_idle + 1, __ATOMIC_RELAXED); /* read unlocked by dfx__pool_nudge */
  return 0;
}

/* Caller holds mu; removes s if it is still on the stack. */
static void idle_remove(dfx_pool *p, sem_t *s) {
  for (int i = 0; i < p->n_idle; i++)
    if (p->idle[i] == s) {
      p->idle[i] = p->idle[p->n_idle - 1];
      __atomic_store_n(&p->n_idle, p->n_idle - 1, __ATOMIC_RELAXED);
      return;
    }
}

/* Caller holds mu: wakes the most recently idle thread, if any. */
static void wake_one(dfx_pool *p) {
  if (p->n_idle > 0) {
    __atomic_store_n(&p->n_idle, p->n_idle - 1, __ATOMIC_RELAXED);
    sem_post(p->idle[p->n_idle]);
  }
}

static void sem_wait_retry(sem_t *s) {
  while (sem_wait(s) != 0 && errno == EINTR) {
  }
}

/* ---- parallel_for jobs ---- */

/* Runs unclaimed blocks of j until none is left. */
static void claim_blocks(par_job *j) {
  int b;
  while ((b = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED)) < j->n_blocks) j->block(j->ud, b);
}

/* Caller holds mu; removes j from the job list if it is still there. */
static void job_unlink(dfx_pool *p, par_job *j) {
  for (par_job **pp = &p->jobs; *pp; pp = &(*pp)->next_job)
    if (*pp == j) {
      *pp = j->next_job;
      return;
    }
}

/* Caller holds mu and p->jobs is not empty: helps with the first job, with
 * mu released meanwhile, and returns holding mu again. */
static void help_job(dfx_pool *p) {
  par_job *j = p->jobs;
  j->users++;
  uv_mutex_unlock(&p->mu);
  claim_blocks(j);
  uv_mutex_lock(&p->mu);
  job_unlink(p, j); /* every block is claimed: nobody else should enter */
  if (--j->users == 0 && j->waiting) {
    j->waiting = false;
    sem_post(&j->sem); /* the last touch of j */
  }
}

static int par_idle(void *impl) {
  dfx_pool *p = impl;
  /* Threads that queued nodes will wake for are not idle. */
  int n = __atomic_load_n(&p->n_idle, __ATOMIC_RELAXED) - __atomic_load_n(&p->count, __ATOMIC_RELAXED);
  return n > 0 ? n : 0;
}

static void par_run(void *impl, int n_blocks, int helpers, void (*block)(void *ud, int b), void *ud) {
  dfx_pool *p = impl;
  par_job j = {.block = block, .ud = ud, .n_blocks = n_blocks};
  if (sem_init(&j.sem, 0, 0)) { /* cannot wait for helpers: do it all here */
    for (int b = 0; b < n_blocks; b++) block(ud, b);
    return;
  }
  uv_mutex_lock(&p->mu);
  j.next_job = p->jobs;
  p->jobs = &j;
  for (int i = 0; i < helpers && p->n_idle > 0; i++) wake_one(p);
  uv_mutex_unlock(&p->mu);
  claim_blocks(&j);
  uv_mutex_lock(&p->mu);
  job_unlink(p, &j);
  bool wait = j.users > 0;
  j.waiting = wait;
  uv_mutex_unlock(&p->mu);
  if (wait) sem_wait_retry(&j.sem);
  sem_destroy(&j.sem);
}

const dfx_parallel *dfx__pool_parallel(dfx_pool *p) { return p && p->par.run ? &p->par : NULL; }

typedef struct worker_arg {
  dfx_pool *pool;
  int id;
} worker_arg;

static void worker(void *arg) {
  dfx_pool *p = ((worker_arg *)arg)->pool;
  int id = ((worker_arg *)arg)->id;
  sem_t *me = &p->sems[id - 1];
  dfx__free(arg);
  uv_mutex_lock(&p->mu);
  while (1) {
    item it;
    if (p->jobs) {
      help_job(p);
      continue;
    }
    if (pop(p, &it)) {
      uv_mutex_unlock(&p->mu);
      dfx__run_process(it.run, &it.t, 1, id);
      uv_mutex_lock(&p->mu);
      continue;
    }
    if (p->stop) break;
    if (idle_push(p, me)) { /* no memory to sleep properly: yield and retry */
      uv_mutex_unlock(&p->mu);
      uv_sleep(1);
      uv_mutex_lock(&p->mu);
      continue;
    }
    uv_mutex_unlock(&p->mu);
    sem_wait_retry(me); /* whoever posts has already popped us */
    uv_mutex_lock(&p->mu);
  }
  uv_mutex_unlock(&p->mu);
  dfx__tensor_cache_flush();
}

dfx_code dfx__pool_new(int n_workers, dfx_pool **out) {
  *out = NULL;
  dfx_pool *p = dfx__calloc(1, sizeof *p);
  if (!p) return DFX_ENOMEM;
  p->cap = 64;
  if (!(p->q = dfx__malloc(sizeof(item) * (size_t)p->cap)) ||
      !(p->threads = dfx__calloc((size_t)n_workers + 1, sizeof(uv_thread_t))) ||
      !(p->sems = dfx__calloc((size_t)n_workers + 1, sizeof(sem_t)))) {
    dfx__free(p->threads);
    dfx__free(p->q);
    dfx__free(p);
    return DFX_ENOMEM;
  }
  if (uv_mutex_init(&p->mu)) {
    dfx__free(p->sems);
    dfx__free(p->threads);
    dfx__free(p->q);
    dfx__free(p);
    return DFX_EINTERNAL;
  }
  for (int i = 0; i < n_workers; i++) {
    if (sem_init(&p->sems[i], 0, 0)) break;
    worker_arg *a = dfx__malloc(sizeof *a);
    if (!a) {
      sem_destroy(&p->sems[i]);
      break;
    }
    a->pool = p;
    a->id = i + 1;
    if (uv_thread_create(&p->threads[i], worker, a)) {
      dfx__free(a);
      sem_destroy(&p->sems[i]);
      break;
    }
    p->n_workers++;
  }
  if (p->n_workers < n_workers) {
    dfx__pool_free(p);
    return DFX_ENOMEM;
  }
  const char *env = getenv("DFX_INTRA_OP");
  if (!(env && strcmp(env, "0") == 0)) p->par = (dfx_parallel){.idle = par_idle, .run = par_run, .impl = p};
  *out = p;
  return DFX_OK;
}

void dfx__pool_free(dfx_pool *p) {
  if (!p) return;
  uv_mutex_lock(&p->mu);
  p->stop = 1;
  while (p->n_idle > 0) wake_one(p);
  uv_mutex_unlock(&p->mu);
  for (int i = 0; i < p->n_workers; i++) uv_thread_join(&p->threads[i]);
  for (int i = 0; i < p->n_workers; i++) sem_destroy(&p->sems[i]);
  uv_mutex_destroy(&p->mu);
  dfx__free(p->idle);
  dfx__free(p->sems);
  dfx__free(p->threads);
  dfx__free(p->q);
  dfx__free(p);
}

dfx_code dfx__pool_post(dfx_pool *p, dfx_run *r, dfx_tagged t, bool wake) {
  uv_mutex_lock(&p->mu);
  if (p->count == p->cap) {
    item *nq = dfx__malloc(sizeof(item) * (size_t)p->cap * 2);
    if (!nq) {
      uv_mutex_unlock(&p->mu);
      return DFX_ENOMEM;
    }
    for (int i = 0; i < p->count; i++) nq[i] = p->q[(p->head + i) % p->cap];
    dfx__free(p->q);
    p->q = nq;
    p->head = 0;
    p->cap *= 2;
  }
  p->q[(p->head + p->count) % p->cap] = (item){r, t};
  __atomic_store_n(&p->count, p->count + 1, __ATOMIC_RELAXED);
  if (wake) wake_one(p);
  uv_mutex_unlock(&p->mu);
  return DFX_OK;
}

void dfx__pool_nudge(dfx_pool *p) {
  if (__atomic_load_n(&p->count, __ATOMIC_RELAXED) == 0 || __atomic_load_n(&p->n_idle, __ATOMIC_RELAXED) == 0)
    return;
  uv_mutex_lock(&p->mu);
  for (int n = p->count; n > 0 && p->n_idle > 0; n--) wake_one(p);
  uv_mutex_unlock(&p->mu);
}

void dfx__pool_finish(dfx_pool *p, dfx_run *r) {
  uv_mutex_lock(&p->mu);
  sem_t *w = r->waiter; /* the run's caller sleeping in dfx__pool_help: wake exactly it */
  if (w) {
    idle_remove(p, w);
    r->waiter = NULL;
  }
  /* Everything here happens under the lock, and both kinds of waiter take
   * it before they let the run go: a sleeper in dfx__pool_help re-checks
   * `done` under it, and an asynchronous run's wait (run.c), which polls
   * `done` without it, passes through dfx__pool_quiesce first. So the run,
   * and a waiter's semaphore inside it, outlive this call. */
  __atomic_store_n(&r->done, 1, __ATOMIC_RELEASE);
  if (w) sem_post(w);
  uv_mutex_unlock(&p->mu);
}

void dfx__pool_quiesce(dfx_pool *p) {
  uv_mutex_lock(&p->mu);
  uv_mutex_unlock(&p->mu);
}

/* The caller works on queued nodes (of any run) until its own run is done,
 * sleeping on its own semaphore when there is nothing to do. */
void dfx__pool_help(dfx_pool *p, dfx_run *r) {
  uint64_t deadline = r->deadline_ns; /* immutable during the run */
  sem_t me;
  if (sem_init(&me, 0, 0)) {
    dfx__run_fail(r, DFX_EINTERNAL, "cannot create a semaphore");
    deadline = 0;
  }
  uv_mutex_lock(&p->mu);
  while (!r->done) {
    item it;
    if (p->jobs) {
      help_job(p);
      continue;
    }
    if (pop(p, &it)) {
      uv_mutex_unlock(&p->mu);
      dfx__run_process(it.run, &it.t, 1, 0);
      uv_mutex_lock(&p->mu);
      continue;
    }
    if (idle_push(p, &me)) {
      uv_mutex_unlock(&p->mu);
      uv_sleep(1);
      uv_mutex_lock(&p->mu);
      continue;
    }
    r->waiter = &me;
    uv_mutex_unlock(&p->mu);
    int timed_out = 0;
    if (deadline) {
      uint64_t now = uv_hrtime();
      struct timespec ts;
      clock_gettime(CLOCK_REALTIME, &ts);
      uint64_t left = now < deadline ? deadline - now : 0;
      ts.tv_sec += (time_t)(left / 1000000000u);
      ts.tv_nsec += (long)(left % 1000000000u);
      if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
      }
      while (sem_timedwait(&me, &ts) != 0) {
        if (errno == ETIMEDOUT) {
          timed_out = 1;
          break;
        }
      }
    } else {
      sem_wait_retry(&me);
    }
    uv_mutex_lock(&p->mu);
    if (timed_out) {
      /* Nobody popped us; but a post may race in after the timeout: then the
       * semaphore holds a token, which is drained below. */
      idle_remove(p, &me);
      r->waiter = NULL;
      uv_mutex_unlock(&p->mu);
      dfx__run_fail(r, DFX_EDEADLINE, "run timed out after %.3f s", (double)(uv_hrtime() - r->t0_ns) / 1e9);
      deadline = 0; /* failed once; now wait for the drain */
      uv_mutex_lock(&p->mu);
    }
    if (r->waiter == &me) r->waiter = NULL;
    while (sem_trywait(&me) == 0) {
    }
  }
  uv_mutex_unlock(&p->mu);
  sem_destroy(&me);
}
