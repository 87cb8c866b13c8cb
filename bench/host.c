/* host.c - see host.h. Compiled with -O3 -march=native: every loop here is
 * branch-free so it vectorises for the host's widest vectors. */
#include "host.h"

#include <cblas.h>
#include <pthread.h>
#include <string.h>

static inline float sel(int c, float a, float b) {
  uint32_t ua, ub, m = 0u - (uint32_t)(c != 0);
  memcpy(&ua, &a, 4);
  memcpy(&ub, &b, 4);
  ua = (ua & m) | (ub & ~m);
  memcpy(&a, &ua, 4);
  return a;
}

/* Eigen's rational tanh (TF's CPU Tanh), clamp chosen for FMA as Eigen does. */
static inline float tanh_r(float x) {
#ifdef __FMA__
  const float clamp = 7.99881172180175781f;
#else
  const float clamp = 7.90531110763549805f;
#endif
  float c = sel(x > clamp, clamp, sel(x < -clamp, -clamp, x)), c2 = c * c;
  float num = c * (((((((-2.76076847742355e-16f * c2 + 2.00018790482477e-13f) * c2 - 8.60467152213735e-11f) * c2 +
                       5.12229709037114e-08f) * c2 + 1.48572235717979e-05f) * c2 + 6.37261928875436e-04f) * c2 +
                    4.89352455891786e-03f));
  float den = ((1.19825839466702e-06f * c2 + 1.18534705686654e-04f) * c2 + 2.26843463243900e-03f) * c2 +
              4.89352518554385e-03f;
  float ax = sel(x < 0, -x, x);
  return sel(ax < 0.0004f, x, num / den);
}

/* e^x: x = n ln2 + r, e^r by a degree-6 polynomial, 2^n in the exponent. */
static inline float exp_r(float x) {
  x = sel(x > 88.0f, 88.0f, sel(x < -87.0f, -87.0f, x));
  /* Round to nearest by the 1.5 * 2^23 trick: no libm call, vectorises. */
  float n = (x * 1.442695041f + 12582912.0f) - 12582912.0f;
  float r = x - n * 0.693145752f - n * 1.42860677e-6f;
  float p = ((((((1.0f / 720) * r + 1.0f / 120) * r + 1.0f / 24) * r + 1.0f / 6) * r + 0.5f) * r + 1.0f) * r + 1.0f;
  uint32_t e = (uint32_t)((int32_t)n + 127) << 23;
  float s;
  memcpy(&s, &e, 4);
  return p * s;
}

void host_tanh(const float *x, float *y, int64_t n) {
  for (int64_t i = 0; i < n; i++) y[i] = tanh_r(x[i]);
}
void host_sigmoid(const float *x, float *y, int64_t n) {
  for (int64_t i = 0; i < n; i++) y[i] = 1.0f / (1.0f + exp_r(-x[i]));
}
void host_add_row(const float *x, const float *b, float *y, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; r++)
    for (int64_t c = 0; c < cols; c++) y[r * cols + c] = x[r * cols + c] + b[c];
}
static float sum16(const float *x, int64_t n) {
  float acc[16] = {0};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    for (int k = 0; k < 16; k++) acc[k] += x[i + k];
  float s = 0;
  for (; i < n; i++) s += x[i];
  for (int k = 0; k < 16; k++) s += acc[k];
  return s;
}
void host_row_sum(const float *x, float *y, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; r++) y[r] = sum16(x + r * cols, cols);
}
void host_softmax(const float *x, float *y, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; r++) {
    const float *xr = x + r * cols;
    float *yr = y + r * cols;
    float m[16];
    for (int k = 0; k < 16; k++) m[k] = xr[0];
    int64_t i = 0;
    for (; i + 16 <= cols; i += 16)
      for (int k = 0; k < 16; k++) m[k] = sel(xr[i + k] > m[k], xr[i + k], m[k]);
    float mx = m[0];
    for (int k = 1; k < 16; k++) mx = sel(m[k] > mx, m[k], mx);
    for (; i < cols; i++) mx = sel(xr[i] > mx, xr[i], mx);
    for (int64_t c = 0; c < cols; c++) yr[c] = exp_r(xr[c] - mx);
    float inv = 1.0f / sum16(yr, cols);
    for (int64_t c = 0; c < cols; c++) yr[c] *= inv;
  }
}
void host_sgemm_rows(const float *A, const float *B, float *C, int d, int64_t lo, int64_t hi) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)(hi - lo), d, d, 1.0f, A + lo * d, d, B, d, 0.0f,
              C + lo * d, d);
}

/* One helper thread, woken through a condition variable per call. */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static host_range_fn job_fn;
static void *job_arg;
static int64_t job_lo, job_hi;
static unsigned long job_seq, done_seq;
static int started;

static void *helper(void *unused) {
  unsigned long seen = 0;
  pthread_mutex_lock(&mu);
  for (;;) {
    while (job_seq == seen) pthread_cond_wait(&cv, &mu);
    seen = job_seq;
    host_range_fn fn = job_fn;
    void *arg = job_arg;
    int64_t lo = job_lo, hi = job_hi;
    pthread_mutex_unlock(&mu);
    fn(arg, lo, hi);
    pthread_mutex_lock(&mu);
    done_seq = seen;
    pthread_cond_broadcast(&cv);
  }
  return NULL;
}

void host_par2(host_range_fn fn, void *arg, int64_t n, int64_t align) {
  if (align < 1) align = 1;
  int64_t mid = (n / 2 + align - 1) / align * align;
  if (mid > n) mid = n;
  pthread_mutex_lock(&mu);
  if (!started) {
    pthread_t t;
    pthread_create(&t, NULL, helper, NULL);
    pthread_detach(t);
    started = 1;
  }
  job_fn = fn;
  job_arg = arg;
  job_lo = mid;
  job_hi = n;
  unsigned long me = ++job_seq;
  pthread_cond_broadcast(&cv);
  pthread_mutex_unlock(&mu);
  fn(arg, 0, mid);
  pthread_mutex_lock(&mu);
  while (done_seq != me) pthread_cond_wait(&cv, &mu);
  pthread_mutex_unlock(&mu);
}
