/* static_shape.h - what the passes may take as certain about a tensor
 * before it runs: a constant's value, and a shape where one is known
 * locally (no shape inference yet). Every pass asks through these two
 * functions, so shape inference can replace the body without touching a
 * rule. "Certain" means for every run any feed may make: a fed node's value
 * is never a constant, and its shape is known only where the session checks
 * the feed against it (a Placeholder's shape attr). */
#ifndef DFX_STATIC_SHAPE_H
#define DFX_STATIC_SHAPE_H

#include <stdbool.h>
#include <stdint.h>

#include "pass.h"

/* A shape as far as it is known: rank -1 for an unknown rank, a dim of -1
 * for an unknown size. */
typedef struct dfx_static_shape {
  int rank;
  int64_t dims[DFX_MAX_DIMS];
} dfx_static_shape;

/* The value behind a data input when it is a constant: a Const nobody may
 * feed, reached directly or through is_constant Enters (a loop invariant has
 * the Const's value in every iteration). NULL otherwise. Borrows: the
 * tensor lives in the graph's attr. */
const dfx_tensor *dfx__static_shape_const(const dfx_pass_ctx *c, dfx_input in);

/* The shape of the tensor a data input reads, as known without running:
 * from a constant's value, a Placeholder's shape attr (the session rejects a
 * feed that does not match it), through Identity-like nodes, or from the
 * `_output_shapes` attr TensorFlow writes (trusted only when no run feeds a
 * node other than a Placeholder, which could change shapes downstream).
 * Always fills *s; returns whether the rank is known. */
bool dfx__static_shape_of(const dfx_pass_ctx *c, dfx_input in, dfx_static_shape *s);

/* Whether every dim of s is known (and the rank). */
bool dfx__static_shape_full(const dfx_static_shape *s);

#endif
