/* baseline.h - hand-written C versions of the benchmark graphs' work.
 * Each does exactly what the graph computes, with the same OpenBLAS
 * cblas_sgemm for matrix products, so the ratio engine/baseline is the cost
 * of running the work as a dataflow graph. Matrices are row-major floats. */
#ifndef BASELINE_H
#define BASELINE_H

#include <stdint.h>

/* i = 0; while i < n: i += 1. Returns the final i. */
int32_t base_counter(int32_t n);
/* n times: h = tanh(h @ W + x); h 1×d, W d×d, x 1×d. tmp holds d floats. */
void base_rnn(int32_t n, int d, const float *W, const float *x, float *h, float *tmp);
/* n times: h = tanh(h @ W); h, W d×d. tmp holds d*d floats. The tanh is
 * host.c's, compiled for this CPU. */
void base_mm_tanh(int32_t n, int d, const float *W, float *h, float *tmp);
/* The same on 1 or 2 threads: each step's sgemm and tanh split by rows of
 * the output over the caller and host.c's helper thread. */
void base_mm_tanh_threads(int32_t n, int d, const float *W, float *h, float *tmp, int threads);
/* n times tmp = h @ W and nothing else: the BLAS limit of the mm256 loop. */
void base_sgemm_alone(int32_t n, int d, const float *W, const float *h, float *tmp);
/* acc over outer o × middle m × inner k: inner acc += a, middle += b, outer += c. */
float base_nested(int32_t o, int32_t m, int32_t k, float a, float b, float c);
/* n times: x = i % 2 == 0 ? x + 3 : x - 1. Returns x (starting at 0). */
int32_t base_cond(int32_t n);
/* n independent products C = A @ B (d×d), spread over `threads` threads
 * (1: the calling thread only). out holds threads*d*d floats. */
void base_matmuls(int32_t n, int d, const float *A, const float *B, float *out, int threads);
/* Two independent chains `h = tanh(h @ W)`, n steps each, on 1 or 2 threads. */
void base_two_loops(int32_t n, int d, const float *W, float *h1, float *h2, float *tmp, int threads);
/* Two independent counter loops of n, on 1 or 2 threads. */
void base_two_counters(int32_t n, int threads);
/* acc = A; n times acc += A @ B, with the product hoisted out of the loop
 * (what the licm pass makes of the graph); A, B, acc d×d, tmp d*d floats. */
void base_invariant_mm(int32_t n, int d, const float *A, const float *B, float *acc, float *tmp);
/* x = 0; n times x = x + 1 on floats, kept from folding. Returns x. */
float base_chain(int n);
/* y = tanh(x * a + b) * c over n floats, one loop (what ewfuse makes of the graph). */
void base_ew_chain(int64_t n, const float *x, float a, float b, float c, float *y);

#endif
