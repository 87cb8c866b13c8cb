"""Shapes and indexing: reshape, transpose, concat, stack, gather, slicing
with tensor[...] (StridedSlice, or GatherV2 for integer-array indices),
fill/zeros/ones, range, where/select, tile, one_hot."""
import builtins

import numpy as np

from .. import _build, dtypes, shapes
from ..tensor import Tensor
from ._convert import as_tensor, cast, graph_of, int_vector, op1 as _op, operands, promote


def _const_ints(x):
    """The Python ints in a list / Const tensor, or None when not static."""
    if isinstance(x, Tensor):
        return None if x._const is None else [int(v) for v in np.ravel(x._const)]
    if any(isinstance(v, Tensor) for v in x):
        return None
    return [int(v) for v in x]


def identity(x, name=None):
    x = as_tensor(x)
    return _op("Identity", [x], x.dtype, x.shape, name=name)


def reshape(x, shape, name=None):
    x = as_tensor(x)
    dims = _const_ints(shape)
    if dims is not None:
        out = [None if d < 0 else d for d in dims]
        n = shapes.num_elements(x.shape)
        known = shapes.num_elements([d for d in out if d is not None])
        if n is not None:
            if out.count(None) == 1 and known:
                out[out.index(None)] = n // known
            elif None not in out and known != n:
                raise ValueError(f"cannot reshape {shapes.fmt(x.shape)} ({n} elements) into {tuple(dims)}")
        out = tuple(out)
    else:
        out = None if not isinstance(shape, Tensor) or shape.shape is None or shape.shape[0] is None \
            else (None,) * shape.shape[0]
    dims_t = int_vector(shape, x.graph, "reshape's shape")
    return _op("Reshape", [x, dims_t], x.dtype, out, {"Tshape": dims_t.dtype}, name)


def transpose(x, perm=None, name=None):
    x = as_tensor(x)
    if perm is None:
        if x.ndim is None:
            raise ValueError("transpose without perm needs a known rank")
        perm = list(reversed(builtins.range(x.ndim)))
    shape = None if x.shape is None else tuple(x.shape[p] for p in perm)
    perm_t = int_vector(perm, x.graph, "perm")
    return _op("Transpose", [x, perm_t], x.dtype, shape, {"Tperm": perm_t.dtype}, name)


def _same_dtype(values):
    g = graph_of(*values)
    ts = [v for v in values if isinstance(v, Tensor)]
    dt = ts[0].dtype if ts else None
    for t in ts[1:]:
        dt = promote(dt, t.dtype)
    return [cast(v, dt) if isinstance(v, Tensor) else as_tensor(v, dt, g) for v in values]


def concat(values, axis, name=None):
    values = _same_dtype(list(values))
    if len(values) == 1:
        return identity(values[0], name)
    rank = next((v.ndim for v in values if v.ndim is not None), None)
    axis = shapes.norm_axis(axis, rank)
    shape = None
    if all(v.shape is not None for v in values):
        dims = [v.shape[axis] for v in values]
        total = None if None in dims else sum(dims)
        shape = values[0].shape[:axis] + (total,) + values[0].shape[axis + 1:]
    g = values[0].graph
    return _op("ConcatV2", values + [_build.make_const(g, axis, dtypes.int32)], values[0].dtype, shape,
               {"N": len(values)}, name)


def stack(values, axis=0, name=None):
    values = _same_dtype(list(values))
    s = values[0].shape
    shape = None
    if s is not None:
        axis = shapes.norm_axis(axis, len(s) + 1)
        shape = s[:axis] + (len(values),) + s[axis:]
    return _op("Pack", values, values[0].dtype, shape, {"N": len(values), "axis": axis}, name)


def gather(params, indices, axis=0, name=None):
    params = as_tensor(params)
    indices = as_tensor(indices, g=params.graph)
    if not indices.dtype.is_integer:
        raise TypeError(f"gather indices must be integers, not {indices.dtype.name}")
    axis = shapes.norm_axis(axis, params.ndim)
    shape = None
    if params.shape is not None and indices.shape is not None:
        shape = params.shape[:axis] + indices.shape + params.shape[axis + 1:]
    ax = _build.make_const(params.graph, axis, dtypes.int32)
    return _op("GatherV2", [params, indices, ax], params.dtype, shape, {"batch_dims": 0}, name)


def expand_dims(x, axis, name=None):
    x = as_tensor(x)
    shape = None
    if x.shape is not None:
        axis = shapes.norm_axis(axis, len(x.shape) + 1)
        shape = x.shape[:axis] + (1,) + x.shape[axis:]
    return _op("ExpandDims", [x, _build.make_const(x.graph, axis, dtypes.int32)], x.dtype, shape, name=name)


def squeeze(x, axis=None, name=None):
    x = as_tensor(x)
    axes = [] if axis is None else [shapes.norm_axis(a, x.ndim) for a in
                                    (axis if isinstance(axis, (list, tuple)) else [axis])]
    shape = None
    if x.shape is not None and (axes or None not in x.shape):
        drop = axes or [i for i, d in enumerate(x.shape) if d == 1]
        shape = tuple(d for i, d in enumerate(x.shape) if i not in drop)
    return _op("Squeeze", [x], x.dtype, shape, {"squeeze_dims": axes}, name)


def shape(x, out_type="int32", name=None):
    x = as_tensor(x)
    dt = dtypes.as_dtype(out_type)
    return _op("Shape", [x], dt, (x.ndim,), {"out_type": dt}, name)


def size(x, out_type="int32", name=None):
    x = as_tensor(x)
    dt = dtypes.as_dtype(out_type)
    return _op("Size", [x], dt, (), {"out_type": dt}, name)


def rank(x, name=None):
    x = as_tensor(x)
    return _op("Rank", [x], dtypes.int32, (), name=name)


def fill(dims, value, dtype=None, name=None):
    g = graph_of(dims, value)
    v = as_tensor(value, dtype, g)
    d = int_vector(dims, g, "fill's dims")
    static = _const_ints(dims)
    shape = tuple(static) if static is not None else None if d.shape is None else (None,) * d.shape[0]
    return _op("Fill", [d, v], v.dtype, shape, {"index_type": d.dtype}, name)


def zeros(shape, dtype="float32", name=None): return fill(shape, 0, dtype, name)
def ones(shape, dtype="float32", name=None): return fill(shape, 1, dtype, name)


def zeros_like(x, name=None):
    x = as_tensor(x)
    return _op("ZerosLike", [x], x.dtype, x.shape, name=name)


def ones_like(x, name=None):
    x = as_tensor(x)
    return _op("OnesLike", [x], x.dtype, x.shape, name=name)


def range(start, limit=None, delta=1, dtype=None, name=None):  # noqa: A001 (tf.range)
    if limit is None:
        start, limit = 0, start
    vals = [start, limit, delta]
    g = graph_of(*vals)
    ts = [v for v in vals if isinstance(v, Tensor)]
    dt = dtypes.as_dtype(dtype) if dtype else ts[0].dtype if ts else \
        dtypes.as_dtype(np.asarray(vals).dtype)
    s, lim, d = [cast(v, dt) if isinstance(v, Tensor) else as_tensor(v, dt, g) for v in vals]
    n = None
    if not ts:
        n = len(np.arange(start, limit, delta))
    return _op("Range", [s, lim, d], dt, (n,), {"Tidx": dt}, name)


def tile(x, multiples, name=None):
    x = as_tensor(x)
    m = _const_ints(multiples)
    shape = None
    if x.shape is not None:
        shape = tuple(None if d is None or m is None else d * k for d, k in zip(x.shape, m or [0] * len(x.shape)))
    m_t = int_vector(multiples, x.graph, "multiples")
    return _op("Tile", [x, m_t], x.dtype, shape, {"Tmultiples": m_t.dtype}, name)


def where(condition, x=None, y=None, name=None):
    """where(c, x, y): elementwise select with broadcasting; where(c): the
    coordinates of the true elements (int64, shape (n, rank))."""
    c = as_tensor(condition)
    if c.dtype is not dtypes.bool_:
        raise TypeError(f"where's condition must be bool, not {c.dtype.name}")
    if x is None and y is None:
        return _op("Where", [c], dtypes.int64, (None, c.ndim), name=name)
    x, y = operands(x, y)
    shape = shapes.broadcast(c.shape, shapes.broadcast(x.shape, y.shape), "where operands")
    return _op("SelectV2", [c, x, y], x.dtype, shape, name=name)


def one_hot(indices, depth, on_value=1.0, off_value=0.0, axis=-1, dtype="float32", name=None):
    i = as_tensor(indices)
    dt = dtypes.as_dtype(dtype)
    g = i.graph
    shape = None
    if i.shape is not None and not isinstance(depth, Tensor):
        pos = len(i.shape) if axis == -1 else axis
        shape = i.shape[:pos] + (int(depth),) + i.shape[pos:]
    d = cast(depth, dtypes.int32) if isinstance(depth, Tensor) else _build.make_const(g, int(depth), dtypes.int32)
    return _op("OneHot", [i, d, as_tensor(on_value, dt, g), as_tensor(off_value, dt, g)], dt, shape,
               {"axis": axis, "TI": i.dtype}, name)


# ---- indexing -------------------------------------------------------------------

def getitem(x, key):
    """x[key] with numpy's basic indexing (ints, slices, ..., None; ints and
    slice bounds may be scalar int tensors), or x[int array] (a gather on
    axis 0)."""
    if isinstance(key, list) or (isinstance(key, Tensor) and key.ndim != 0) or isinstance(key, np.ndarray):
        return gather(x, key)
    if not isinstance(key, tuple):
        key = (key,)
    g = x.graph
    begin, end, strides = [], [], []
    masks = {"begin_mask": 0, "end_mask": 0, "ellipsis_mask": 0, "new_axis_mask": 0, "shrink_axis_mask": 0}
    for j, k in enumerate(key):
        bit = 1 << j
        if k is Ellipsis:
            masks["ellipsis_mask"] |= bit
            begin.append(0), end.append(0), strides.append(1)
        elif k is None:
            masks["new_axis_mask"] |= bit
            begin.append(0), end.append(0), strides.append(1)
        elif isinstance(k, slice):
            if k.start is None:
                masks["begin_mask"] |= bit
            if k.stop is None:
                masks["end_mask"] |= bit
            if isinstance(k.step, int) and k.step == 0:
                raise ValueError("slice step cannot be zero")
            begin.append(0 if k.start is None else k.start)
            end.append(0 if k.stop is None else k.stop)
            strides.append(1 if k.step is None else k.step)
        elif isinstance(k, (int, np.integer)) or (isinstance(k, Tensor) and k.ndim in (0, None)):
            if isinstance(k, Tensor) and not k.dtype.is_integer:
                raise TypeError(f"tensor indices must be integers, not {k.dtype.name} ({k.name})")
            masks["shrink_axis_mask"] |= bit
            begin.append(k)
            end.append(k + 1 if isinstance(k, Tensor) or k != -1 else 0)
            strides.append(1)
            if not isinstance(k, Tensor) and k == -1:
                masks["end_mask"] |= bit
        else:
            raise TypeError(f"unsupported index {k!r} (of {type(k).__name__})")
    ins = [x, int_vector(begin, g, "slice bounds"), int_vector(end, g, "slice bounds"),
           int_vector(strides, g, "slice steps")]
    ins[1:] = _one_index_dtype(ins[1:])
    return _op("StridedSlice", ins, x.dtype, _slice_shape(x.shape, key), masks)


def _one_index_dtype(vs):
    dt = dtypes.int64 if any(v.dtype is dtypes.int64 for v in vs) else dtypes.int32
    return [cast(v, dt) for v in vs]


def _slice_shape(shape, key):
    if shape is None:
        return None
    n_real = sum(1 for k in key if k is not None and k is not Ellipsis)
    if n_real > len(shape):
        raise IndexError(f"too many indices ({n_real}) for a tensor of shape {shapes.fmt(shape)}")
    out, dim = [], 0
    for k in key:
        if k is Ellipsis:
            n = len(shape) - n_real
            out.extend(shape[dim:dim + n])
            dim += n
        elif k is None:
            out.append(1)
        elif isinstance(k, slice):
            d = shape[dim]
            parts = (k.start, k.stop, k.step)
            if d is None or any(isinstance(p, Tensor) for p in parts):
                out.append(None)
            else:
                out.append(len(builtins.range(*slice(*parts).indices(d))))
            dim += 1
        else:
            d = shape[dim]
            if isinstance(k, (int, np.integer)) and d is not None and not -d <= k < d:
                raise IndexError(f"index {k} is out of range for a dimension of size {d}")
            dim += 1
    out.extend(shape[dim:])
    return tuple(out)
