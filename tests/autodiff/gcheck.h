/* gcheck.h - the numeric gradient checker (TF's gradient_checker idea):
 * the gradient a graph computes with dfx_graph_gradients is compared with
 * central differences of the forward graph, in float64 where the ops have
 * double kernels.
 *
 * A case is the text of the forward nodes with "$T" standing for the float
 * dtype, the tensor y, and the inputs: each becomes a Placeholder of dtype
 * $T fed with deterministic pseudo-random values in [lo, hi]. The checker
 * adds a placeholder "gy" (y's initial gradient, also random), so what is
 * compared is v^T J for a random v: d/dx sum(gy * y), against
 * (L(x + h e_i) - L(x - h e_i)) / 2h for every element i of every x. */
#ifndef GCHECK_H
#define GCHECK_H

#include <stdbool.h>
#include <stdint.h>

#include "dfexec.h"

typedef struct gc_in {
  const char *name;
  int rank;
  int64_t dims[5];
  double lo, hi;      /* value range; both 0 means [-1, 1] */
  bool no_grad;       /* fed but not differentiated (labels, say) */
  bool as_int;        /* an int32 placeholder holding integers in [lo, hi] (never differentiated) */
} gc_in;

typedef struct gc_case {
  const char *label;
  const char *body;   /* forward nodes, "$T" for the dtype */
  const char *y;      /* "node" or "node:k" */
  int n_in;
  gc_in in[4];
  double tol;         /* 0: default for the dtype */
} gc_case;

/* Checks one case in dtype t (DFX_F64 or DFX_F32). Returns true when every
 * element matches; otherwise false with the first mismatch or error in msg. */
bool gc_check(const gc_case *c, dfx_dtype t, char *msg, size_t n);

/* Runs every case in both dtypes listed, reporting each failure with
 * cr_expect; returns the number of failures. */
int gc_check_all(const gc_case *cases, int n, const dfx_dtype *types, int n_types);

#endif
