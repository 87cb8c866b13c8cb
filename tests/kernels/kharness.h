/* kharness.h - run one kernel directly, without a graph or session.
 * Kernel tests build a node by hand (op + attrs), hand it input tensors and
 * get the outputs back, exactly as the engine would call the kernel. */
#ifndef KHARNESS_H
#define KHARNESS_H

#include <stdint.h>

#include "graph.h"
#include "kernel.h"
#include "tensor.h"

/* New node for `op` (signature looked up in the registry; aborts the test
 * process if the op has no signature). */
dfx_node *kh_node_new(const char *op);
void kh_node_free(dfx_node *n);
void kh_attr_type(dfx_node *n, const char *name, dfx_dtype t);
void kh_attr_int(dfx_node *n, const char *name, int64_t v);
void kh_attr_float(dfx_node *n, const char *name, float v);
void kh_attr_bool(dfx_node *n, const char *name, int v);
void kh_attr_str(dfx_node *n, const char *name, const char *s);
void kh_attr_ints(dfx_node *n, const char *name, const int64_t *v, int count);
void kh_attr_floats(dfx_node *n, const char *name, const float *v, int count);
void kh_attr_types(dfx_node *n, const char *name, const dfx_dtype *v, int count);
void kh_attr_strs(dfx_node *n, const char *name, const char *const *v, int count);
void kh_attr_shape(dfx_node *n, const char *name, int rank, const int64_t *dims); /* rank -1: unknown */
void kh_attr_tensor(dfx_node *n, const char *name, dfx_tensor *t);                /* takes t */

/* Runs the node's kernel (defaults filled, types resolved, init/fini called).
 * Borrows inputs. On DFX_OK, out[0..n_out) are new tensors (the caller frees
 * them) and *n_out is set; on error err receives the message. */
dfx_code kh_run(dfx_node *n, dfx_tensor **in, int n_in, dfx_tensor **out, int *n_out, char *err, size_t errlen);

/* kh_run inside the caller's run: borrows `step`, so a test can cancel it or
 * give it a deadline before the call, or share it between calls so that
 * per-run resources (TensorArrays, stacks) outlive one kernel. NULL: a fresh
 * step, made and destroyed around the call (what kh_run does). The kernel's
 * state is still made and freed per call. */
dfx_code kh_run_step(dfx_node *n, dfx_tensor **in, int n_in, dfx_tensor **out, int *n_out, dfx_step *step, char *err,
                     size_t errlen);

/* Intra-op parallelism for the kernels kh_run calls (ctx->par); NULL (the
 * default) runs every parallel_for on the caller. Borrows p. */
void kh_set_parallel(const dfx_parallel *p);
/* A deterministic stand-in for the pool: claims `idle` idle threads and runs
 * every block on the caller in reverse order, so a kernel whose blocks
 * overlap, leave gaps or depend on their order gives wrong results.
 * kh_par_blocks counts the blocks it ran (to prove the split happened). */
extern const dfx_parallel kh_par_reverse;
extern int kh_par_blocks;

/* New tensor from raw elements (copied); strings not supported here. */
dfx_tensor *kh_tensor(dfx_dtype t, int ndims, const int64_t *dims, const void *data);
/* Convenience: float32 / int32 / int64 / bool tensors. */
dfx_tensor *kh_f32(int ndims, const int64_t *dims, const float *v);
dfx_tensor *kh_i32(int ndims, const int64_t *dims, const int32_t *v);
dfx_tensor *kh_i64(int ndims, const int64_t *dims, const int64_t *v);
dfx_tensor *kh_bool(int ndims, const int64_t *dims, const uint8_t *v);
dfx_tensor *kh_scalar_i32(int32_t v);
dfx_tensor *kh_scalar_f32(float v);

#endif
