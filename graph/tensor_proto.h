/* tensor_proto.h - TensorProto and TensorShapeProto to dfexec values and
 * back (tf-semantics §1.5-1.6). Generated protobuf types stay in graph/. */
#ifndef DFX_TENSOR_PROTO_H
#define DFX_TENSOR_PROTO_H

#include "arena.h"
#include "attr.h"
#include "status.h"
#include "tensor.h"
#include "tensor.pb-c.h"

/* Decodes like TF's Tensor::FromProto: tensor_content, or the typed field
 * with its last value repeated, or zeros. On success *out is new. */
dfx_code dfx__tensor_from_proto(const Tensorflow__TensorProto *p, dfx_tensor **out, dfx_status *st);
/* Shape attr; rank -1 for unknown_rank. dims is new (NULL for rank <= 0). */
dfx_code dfx__shape_from_proto(const Tensorflow__TensorShapeProto *p, dfx_shape *out, dfx_status *st);
/* Encodes a tensor the way TensorFlow's make_tensor_proto does for the
 * common dtypes (typed repeated fields, readable in text format) and as
 * tensor_content bytes for the others. NULL when out of memory. */
Tensorflow__TensorProto *dfx__tensor_to_proto(dfx_arena *a, const dfx_tensor *t);
/* A shape (rank -1: unknown) in the arena; NULL when out of memory. */
Tensorflow__TensorShapeProto *dfx__shape_to_proto(dfx_arena *a, int rank, const int64_t *dims);
/* Maps a wire DataType (ref types included) to a dfx dtype, or DFX_INVALID. */
dfx_dtype dfx__dtype_from_wire(int v);

#endif
