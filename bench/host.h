/* host.h - the fastest honest C for the kernel benchmarks: loops compiled
 * for this very CPU (-O3 -march=native, bench/meson.build), OpenBLAS sgemm
 * pinned to one thread, and a two-thread version of each that splits the
 * work with one persistent helper thread. They share no code with the
 * engine: the tanh here is Eigen's published rational approximation written
 * out again, the exp a textbook range reduction. */
#ifndef BENCH_HOST_H
#define BENCH_HOST_H

#include <stdint.h>

void host_tanh(const float *x, float *y, int64_t n);
void host_sigmoid(const float *x, float *y, int64_t n);
/* y[r, c] = x[r, c] + b[c]. */
void host_add_row(const float *x, const float *b, float *y, int64_t rows, int64_t cols);
/* y[r] = sum over c of x[r, c]. */
void host_row_sum(const float *x, float *y, int64_t rows, int64_t cols);
/* Softmax over each row. */
void host_softmax(const float *x, float *y, int64_t rows, int64_t cols);
/* C = A @ B, all d x d, one sgemm (rows [lo, hi) of C when split). */
void host_sgemm_rows(const float *A, const float *B, float *C, int d, int64_t lo, int64_t hi);

/* Runs fn(arg, lo, hi) over [0, n) in two halves (cut at a multiple of
 * align): one on a persistent helper thread, one on the caller. */
typedef void (*host_range_fn)(void *arg, int64_t lo, int64_t hi);
void host_par2(host_range_fn fn, void *arg, int64_t n, int64_t align);

#endif
