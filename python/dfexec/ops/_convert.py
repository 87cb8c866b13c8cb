"""Turning op arguments into Tensors: the graph they go into, constants for
Python and numpy values, and numpy's dtype promotion between operands."""
import numbers

import numpy as np

from .. import _build, dtypes
from ..tensor import Tensor


def graph_of(*xs):
    """The graph of the first Tensor among `xs` (nested lists too), else the default graph."""
    for x in xs:
        if isinstance(x, Tensor):
            return x.graph
        if isinstance(x, (list, tuple)):
            for y in x:
                if isinstance(y, Tensor):
                    return y.graph
    return _build.get_default_graph()


def as_tensor(x, dtype=None, g=None):
    """`x` as a Tensor: a Tensor is returned as is (its dtype must be `dtype`
    when one is given), anything else becomes a Const of np.asarray(x, dtype)."""
    dt = None if dtype is None else dtypes.as_dtype(dtype)
    if isinstance(x, Tensor):
        if dt is not None and x.dtype is not dt:
            raise TypeError(f"expected a {dt.name} tensor, got {x.dtype.name} ({x.name})")
        return x
    if g is None:
        g = graph_of(x)
    if dt is None and isinstance(x, (list, tuple)) and any(isinstance(v, Tensor) for v in x):
        from . import array_ops
        return array_ops.stack(list(x))
    if dt is not None and not isinstance(x, np.ndarray) and dt is not dtypes.string:
        _check_fits(x, dt)
    return _build.make_const(g, x, dt)


def _check_fits(x, dt):
    """A Python float given for an integer tensor must not lose its fraction."""
    if isinstance(x, float) and (dt.is_integer or dt.is_bool) and not float(x).is_integer():
        raise TypeError(f"{x!r} cannot be converted to {dt.name} without losing its fraction")


def is_python_scalar(x):
    return isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic)


def weak_dtype(dt, x):
    """The dtype of `tensor(dt) op x` for a Python scalar x (numpy's NEP 50 rule)."""
    if isinstance(x, bool):
        return dt
    if isinstance(x, numbers.Integral):
        return dtypes.int64 if dt.is_bool else dt
    if isinstance(x, numbers.Real):
        return dt if dt.is_floating or dt.is_complex else dtypes.float64
    return dt if dt.is_complex else dtypes.complex128


def promote(a, b):
    """numpy's result type for two dtypes."""
    if a is b:
        return a
    if dtypes.string in (a, b):
        raise TypeError(f"cannot combine {a.name} with {b.name}")
    return dtypes.as_dtype(np.result_type(a.np, b.np))


def op1(op_type, inputs, dtype, shape, attrs=None, name=None):
    """Adds a node with one output to the graph of its first input."""
    return _build.make_op(inputs[0].graph, op_type, inputs, [(dtype, shape)], attrs, name)[0]


def cast(x, dtype, name=None):
    """x converted to `dtype` (float to int truncates toward zero)."""
    x = as_tensor(x)
    dt = dtypes.as_dtype(dtype)
    if x.dtype is dt:
        return x
    return op1("Cast", [x], dt, x.shape, {"DstT": dt}, name)


def operands(x, y):
    """Two op arguments as Tensors of one dtype, numpy-promoted."""
    if isinstance(x, Tensor) and isinstance(y, Tensor):
        dt = promote(x.dtype, y.dtype)
        return cast(x, dt), cast(y, dt)
    if not isinstance(x, Tensor) and not isinstance(y, Tensor):
        g = graph_of(x, y)
        x = as_tensor(x, g=g)
        return operands(x, y)
    swap = not isinstance(x, Tensor)
    t, v = (y, x) if swap else (x, y)
    if is_python_scalar(v):
        dt = weak_dtype(t.dtype, v)
    else:
        dt = promote(t.dtype, dtypes.as_dtype(np.asarray(v).dtype))
    t, c = cast(t, dt), as_tensor(v, dt, g=t.graph)
    return (c, t) if swap else (t, c)


def int_vector(values, g, what):
    """A 1-D int32 (or int64, if a tensor among them is) Tensor from a list
    of ints and scalar int Tensors, or from a Tensor."""
    if isinstance(values, Tensor):
        if not values.dtype.is_integer:
            raise TypeError(f"{what} must be integers, not {values.dtype.name}")
        return values
    vals = list(values)
    if not any(isinstance(v, Tensor) for v in vals):
        return _build.make_const(g, np.asarray(vals, dtype=np.int32).reshape(len(vals)))
    dt = dtypes.int64 if any(isinstance(v, Tensor) and v.dtype is dtypes.int64 for v in vals) else dtypes.int32
    parts = []
    for v in vals:
        if isinstance(v, Tensor):
            if not v.dtype.is_integer:
                raise TypeError(f"{what} must be integers, not {v.dtype.name} ({v.name})")
            parts.append(cast(v, dt))
        else:
            parts.append(_build.make_const(g, int(v), dt))
    return _build.make_op(g, "Pack", parts, [(dt, (len(parts),))], {"N": len(parts), "axis": 0})[0]
