/* baseline.c - hand-written C baselines (see baseline.h). The empty asm
 * statements stop the compiler from folding whole loops into constants: a
 * baseline must do every iteration, as the engine does. */
#include "baseline.h"
#include "host.h"

#include <cblas.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define KEEP(v) __asm__ volatile("" : "+r"(v))
/* Float tanh the way TensorFlow (and so the engine's Tanh kernel) computes
 * it: Eigen's rational approximation with its published coefficients. The
 * baseline writes it out itself rather than sharing the engine's code, and
 * computing the same function keeps the ratio about execution, not libm. */
static inline float pick(int c, float a, float b) { /* c ? a : b without a branch, so loops vectorise */
  uint32_t ua, ub, m = 0u - (uint32_t)(c != 0);
  memcpy(&ua, &a, 4);
  memcpy(&ub, &b, 4);
  ua = (ua & m) | (ub & ~m);
  memcpy(&a, &ua, 4);
  return a;
}
static inline float tanh_rational(float x) {
  const float clamp = 7.90531110763549805f;
  float c = pick(x > clamp, clamp, pick(x < -clamp, -clamp, x)), c2 = c * c;
  float num = c * (((((((-2.76076847742355e-16f * c2 + 2.00018790482477e-13f) * c2 - 8.60467152213735e-11f) * c2 +
                       5.12229709037114e-08f) * c2 + 1.48572235717979e-05f) * c2 + 6.37261928875436e-04f) * c2 +
                    4.89352455891786e-03f));
  float den = ((1.19825839466702e-06f * c2 + 1.18534705686654e-04f) * c2 + 2.26843463243900e-03f) * c2 +
              4.89352518554385e-03f;
  return pick(fabsf(x) < 0.0004f, x, num / den);
}
#define TANH(x) tanh_rational(x)
#define KEEPF(v) __asm__ volatile("" : "+x"(v))

int32_t base_counter(int32_t n) {
  int32_t i = 0;
  while (i < n) {
    i += 1;
    KEEP(i);
  }
  return i;
}

void base_rnn(int32_t n, int d, const float *W, const float *x, float *h, float *tmp) {
  for (int32_t i = 0; i < n; i++) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 1, d, d, 1.0f, h, d, W, d, 0.0f, tmp, d);
    for (int j = 0; j < d; j++) h[j] = TANH(tmp[j] + x[j]);
  }
}

void base_mm_tanh(int32_t n, int d, const float *W, float *h, float *tmp) {
  size_t dd = (size_t)d * d;
  for (int32_t i = 0; i < n; i++) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, d, d, d, 1.0f, h, d, W, d, 0.0f, tmp, d);
    host_tanh(tmp, h, (int64_t)dd);
  }
}

typedef struct mm_step {
  int d;
  const float *W;
  float *h, *tmp;
} mm_step;
/* Rows [lo, hi) of one step: their product, then their tanh. Both halves
 * read all of h, so the step ends (host_par2 joins) before h is written:
 * the product goes to tmp, and the tanh back into h after the join. */
static void mm_rows(void *arg, int64_t lo, int64_t hi) {
  mm_step *s = arg;
  host_sgemm_rows(s->h, s->W, s->tmp, s->d, lo, hi);
}
static void tanh_rows(void *arg, int64_t lo, int64_t hi) {
  mm_step *s = arg;
  host_tanh(s->tmp + lo * s->d, s->h + lo * s->d, (hi - lo) * s->d);
}
void base_mm_tanh_threads(int32_t n, int d, const float *W, float *h, float *tmp, int threads) {
  if (threads < 2) {
    base_mm_tanh(n, d, W, h, tmp);
    return;
  }
  mm_step s = {d, W, h, tmp};
  for (int32_t i = 0; i < n; i++) {
    host_par2(mm_rows, &s, d, 16);
    host_par2(tanh_rows, &s, d, 1);
  }
}

void base_sgemm_alone(int32_t n, int d, const float *W, const float *h, float *tmp) {
  for (int32_t i = 0; i < n; i++)
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, d, d, d, 1.0f, h, d, W, d, 0.0f, tmp, d);
}

float base_nested(int32_t o, int32_t m, int32_t k, float a, float b, float c) {
  float acc = 0;
  for (int32_t i = 0; i < o; i++) {
    for (int32_t j = 0; j < m; j++) {
      for (int32_t l = 0; l < k; l++) {
        acc += a;
        KEEPF(acc);
      }
      acc += b;
    }
    acc += c;
  }
  return acc;
}

int32_t base_cond(int32_t n) {
  int32_t x = 0;
  for (int32_t i = 0; i < n; i++) {
    x = i % 2 == 0 ? x + 3 : x - 1;
    KEEP(x);
  }
  return x;
}

/* ---- two-thread variants: the same split a perfect scheduler would make ---- */

typedef struct job {
  void (*fn)(struct job *);
  int32_t n;
  int d;
  const float *A, *B;
  float *out, *tmp;
} job;

static void *job_main(void *p) {
  job *j = p;
  j->fn(j);
  return NULL;
}

/* Runs jobs[0] on a new thread and jobs[1] here, or both here in order. */
static void run_jobs(job *jobs, int threads) {
  if (threads < 2) {
    jobs[0].fn(&jobs[0]);
    jobs[1].fn(&jobs[1]);
    return;
  }
  pthread_t t;
  if (pthread_create(&t, NULL, job_main, &jobs[0]) != 0) abort();
  jobs[1].fn(&jobs[1]);
  pthread_join(t, NULL);
}

static void matmuls_job(job *j) {
  for (int32_t i = 0; i < j->n; i++)
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, j->d, j->d, j->d, 1.0f, j->A, j->d, j->B, j->d, 0.0f,
                j->out, j->d);
}

void base_matmuls(int32_t n, int d, const float *A, const float *B, float *out, int threads) {
  size_t dd = (size_t)d * d;
  job jobs[2] = {{matmuls_job, n / 2, d, A, B, out, NULL}, {matmuls_job, n - n / 2, d, A, B, out, NULL}};
  if (threads >= 2) jobs[1].out = out + dd;
  run_jobs(jobs, threads);
}

void base_invariant_mm(int32_t n, int d, const float *A, const float *B, float *acc, float *tmp) {
  size_t dd = (size_t)d * d;
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, d, d, d, 1.0f, A, d, B, d, 0.0f, tmp, d);
  memcpy(acc, A, dd * sizeof(float));
  for (int32_t i = 0; i < n; i++)
    for (size_t k = 0; k < dd; k++) acc[k] += tmp[k];
}

static void mm_tanh_job(job *j) { base_mm_tanh(j->n, j->d, j->A, j->out, j->tmp); }

void base_two_loops(int32_t n, int d, const float *W, float *h1, float *h2, float *tmp, int threads) {
  size_t dd = (size_t)d * d;
  job jobs[2] = {{mm_tanh_job, n, d, W, NULL, h1, tmp}, {mm_tanh_job, n, d, W, NULL, h2, tmp + dd}};
  run_jobs(jobs, threads);
}

static void counter_job(job *j) { j->d = base_counter(j->n); }

void base_two_counters(int32_t n, int threads) {
  job jobs[2] = {{counter_job, n, 0, NULL, NULL, NULL, NULL}, {counter_job, n, 0, NULL, NULL, NULL, NULL}};
  run_jobs(jobs, threads);
}

float base_chain(int n) {
  float x = 0;
  for (int i = 0; i < n; i++) {
    x = x + 1.0f;
    KEEPF(x);
  }
  return x;
}

void base_ew_chain(int64_t n, const float *x, float a, float b, float c, float *y) {
  for (int64_t i = 0; i < n; i++) y[i] = TANH(x[i] * a + b) * c;
}
