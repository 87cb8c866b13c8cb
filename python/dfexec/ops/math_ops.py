"""Arithmetic, comparisons, logic, elementwise functions, matmul and
reductions. Binary ops broadcast and promote their operands as numpy does;
`/` on integers divides in float64 (numpy's true_divide), `//` and `%` floor
like Python; float-only functions (exp, sqrt, ...) take integers as float64."""
import builtins

import numpy as np

from .. import _build, dtypes, shapes
from ..tensor import Tensor
from ._convert import as_tensor, cast, graph_of, op1 as _op, operands

_bool = dtypes.bool_


def _binary(op_type, x, y, name=None, bool_out=False):
    x, y = operands(x, y)
    shape = shapes.broadcast(x.shape, y.shape, f"{op_type} operands")
    return _op(op_type, [x, y], _bool if bool_out else x.dtype, shape, name=name)


def _unary(op_type, x, name=None, float_only=False, dtype=None):
    x = as_tensor(x)
    if float_only and not (x.dtype.is_floating or x.dtype.is_complex):
        x = cast(x, dtypes.float64)
    return _op(op_type, [x], dtype or x.dtype, x.shape, name=name)


# ---- arithmetic ----------------------------------------------------------------

def add(x, y, name=None):
    x, y = operands(x, y)
    op = "Add" if x.dtype is dtypes.string else "AddV2"
    return _op(op, [x, y], x.dtype, shapes.broadcast(x.shape, y.shape, "add operands"), name=name)


def subtract(x, y, name=None): return _binary("Sub", x, y, name)
def multiply(x, y, name=None): return _binary("Mul", x, y, name)
def maximum(x, y, name=None): return _binary("Maximum", x, y, name)
def minimum(x, y, name=None): return _binary("Minimum", x, y, name)
def squared_difference(x, y, name=None): return _binary("SquaredDifference", x, y, name)


def divide(x, y, name=None):
    """x / y; integers and bools are divided as float64, as numpy does."""
    x, y = operands(x, y)
    if not (x.dtype.is_floating or x.dtype.is_complex):
        x, y = cast(x, dtypes.float64), cast(y, dtypes.float64)
    return _binary("RealDiv", x, y, name)


def floordiv(x, y, name=None): return _binary("FloorDiv", x, y, name)
def mod(x, y, name=None): return _binary("FloorMod", x, y, name)
def pow(x, y, name=None): return _binary("Pow", x, y, name)   # noqa: A001 (tf.pow)


def negative(x, name=None): return _unary("Neg", x, name)
def abs(x, name=None): return _unary("Abs", x, name)          # noqa: A001 (tf.abs)
def sign(x, name=None): return _unary("Sign", x, name)
def square(x, name=None): return _unary("Square", x, name)


def _float_fn(op_type):
    def f(x, name=None):
        return _unary(op_type, x, name, float_only=True)
    f.__name__ = op_type.lower()
    f.__doc__ = f"Elementwise {op_type} (integers are taken as float64)."
    return f


exp, log, sqrt, rsqrt = _float_fn("Exp"), _float_fn("Log"), _float_fn("Sqrt"), _float_fn("Rsqrt")
sin, cos, tan, tanh = _float_fn("Sin"), _float_fn("Cos"), _float_fn("Tan"), _float_fn("Tanh")
sigmoid, log1p, expm1 = _float_fn("Sigmoid"), _float_fn("Log1p"), _float_fn("Expm1")
floor, ceil, round = _float_fn("Floor"), _float_fn("Ceil"), _float_fn("Round")  # noqa: A001
reciprocal, erf = _float_fn("Reciprocal"), _float_fn("Erf")


def is_nan(x, name=None): return _unary("IsNan", x, name, float_only=True, dtype=_bool)
def is_finite(x, name=None): return _unary("IsFinite", x, name, float_only=True, dtype=_bool)


def clip_by_value(x, lo, hi, name=None):
    x = as_tensor(x)
    lo, hi = as_tensor(lo, x.dtype, x.graph), as_tensor(hi, x.dtype, x.graph)
    return _op("ClipByValue", [x, lo, hi], x.dtype, x.shape, name=name)


# ---- comparisons and logic ---------------------------------------------------

def equal(x, y, name=None): return _binary("Equal", x, y, name, bool_out=True)
def not_equal(x, y, name=None): return _binary("NotEqual", x, y, name, bool_out=True)
def less(x, y, name=None): return _binary("Less", x, y, name, bool_out=True)
def less_equal(x, y, name=None): return _binary("LessEqual", x, y, name, bool_out=True)
def greater(x, y, name=None): return _binary("Greater", x, y, name, bool_out=True)
def greater_equal(x, y, name=None): return _binary("GreaterEqual", x, y, name, bool_out=True)


def _bools(x, y, what):
    g = graph_of(x, y)
    x, y = as_tensor(x, g=g), as_tensor(y, g=g)
    if x.dtype is not _bool or y.dtype is not _bool:
        raise TypeError(f"{what} takes bool tensors, not {x.dtype.name} and {y.dtype.name}")
    return x, y


def logical_and(x, y, name=None):
    x, y = _bools(x, y, "logical_and")
    return _op("LogicalAnd", [x, y], _bool, shapes.broadcast(x.shape, y.shape), name=name)


def logical_or(x, y, name=None):
    x, y = _bools(x, y, "logical_or")
    return _op("LogicalOr", [x, y], _bool, shapes.broadcast(x.shape, y.shape), name=name)


def logical_not(x, name=None):
    x = as_tensor(x)
    if x.dtype is not _bool:
        raise TypeError(f"logical_not takes a bool tensor, not {x.dtype.name}")
    return _op("LogicalNot", [x], _bool, x.shape, name=name)


def _bitwise(op_type, logical, x, y):
    x, y = operands(x, y)
    if x.dtype is _bool:
        return logical(x, y)
    return _binary(op_type, x, y)


def bitwise_and(x, y): return _bitwise("BitwiseAnd", logical_and, x, y)
def bitwise_or(x, y): return _bitwise("BitwiseOr", logical_or, x, y)
def bitwise_xor(x, y): return _bitwise("BitwiseXor", not_equal, x, y)


def invert(x):
    x = as_tensor(x)
    return logical_not(x) if x.dtype is _bool else _unary("Invert", x)


def truth(x):
    """Python's truth of a tensor: x itself for bool, else x != 0."""
    x = as_tensor(x)
    return x if x.dtype is _bool else not_equal(x, 0)


# ---- linear algebra ------------------------------------------------------------

def matmul(a, b, transpose_a=False, transpose_b=False, name=None):
    a, b = operands(a, b)
    sa, sb = a.shape, b.shape
    if sa is not None and sb is not None:
        if len(sa) < 2 or len(sb) < 2:
            raise ValueError(f"matmul needs rank >= 2 operands, got {shapes.fmt(sa)} and {shapes.fmt(sb)}")
        m, k1 = (sa[-1], sa[-2]) if transpose_a else (sa[-2], sa[-1])
        k2, n = (sb[-1], sb[-2]) if transpose_b else (sb[-2], sb[-1])
        if k1 is not None and k2 is not None and k1 != k2:
            raise ValueError(f"matmul: inner dimensions differ: {shapes.fmt(sa)} @ {shapes.fmt(sb)}")
        batch = shapes.broadcast(sa[:-2], sb[:-2], "matmul batch dimensions")
        shape = batch + (m, n)
    else:
        shape = None
    if sa is not None and sb is not None and len(sa) == 2 and len(sb) == 2:
        return _op("MatMul", [a, b], a.dtype, shape, {"transpose_a": transpose_a, "transpose_b": transpose_b},
                   name)
    return _op("BatchMatMulV2", [a, b], a.dtype, shape, {"adj_x": transpose_a, "adj_y": transpose_b}, name)


# ---- reductions ----------------------------------------------------------------

def _axes(x, axis):
    """(int32 axes tensor, normalised axes or None if unknown)."""
    g = x.graph
    rank = x.ndim
    if axis is None:
        if rank is None:
            r = _op("Rank", [x], dtypes.int32, ())
            zero, one = _build.make_const(g, 0, dtypes.int32), _build.make_const(g, 1, dtypes.int32)
            return _op("Range", [zero, r, one], dtypes.int32, (None,)), None
        axes = list(builtins.range(rank))
    elif isinstance(axis, Tensor):
        return axis, None
    else:
        axes = [shapes.norm_axis(a, rank) for a in (axis if isinstance(axis, (list, tuple)) else [axis])]
    return _build.make_const(g, np.asarray(axes, dtype=np.int32).reshape(len(axes))), axes


def _reduce(op_type, x, axis, keepdims, name, dtype=None):
    x = as_tensor(x)
    t, axes = _axes(x, axis)
    if axes is None or x.shape is None:
        shape = None
    elif keepdims:
        shape = tuple(1 if i in axes else d for i, d in enumerate(x.shape))
    else:
        shape = tuple(d for i, d in enumerate(x.shape) if i not in axes)
    return _op(op_type, [x, t], dtype or x.dtype, shape, {"keep_dims": bool(keepdims), "Tidx": t.dtype}, name)


def reduce_sum(x, axis=None, keepdims=False, name=None): return _reduce("Sum", x, axis, keepdims, name)
def reduce_prod(x, axis=None, keepdims=False, name=None): return _reduce("Prod", x, axis, keepdims, name)
def reduce_max(x, axis=None, keepdims=False, name=None): return _reduce("Max", x, axis, keepdims, name)
def reduce_min(x, axis=None, keepdims=False, name=None): return _reduce("Min", x, axis, keepdims, name)


def reduce_mean(x, axis=None, keepdims=False, name=None):
    """Mean; like tf.reduce_mean, an integer mean is an integer (truncated)."""
    return _reduce("Mean", x, axis, keepdims, name)


def reduce_all(x, axis=None, keepdims=False, name=None):
    return _reduce("All", truth(x), axis, keepdims, name)


def reduce_any(x, axis=None, keepdims=False, name=None):
    return _reduce("Any", truth(x), axis, keepdims, name)


def _arg(op_type, x, axis, output_type, name):
    x = as_tensor(x)
    axis = shapes.norm_axis(axis, x.ndim)
    shape = None if x.shape is None else x.shape[:axis] + x.shape[axis + 1:]
    dt = dtypes.as_dtype(output_type)
    return _op(op_type, [x, _build.make_const(x.graph, axis, dtypes.int32)], dt, shape, {"output_type": dt}, name)


def argmax(x, axis=0, output_type="int64", name=None): return _arg("ArgMax", x, axis, output_type, name)
def argmin(x, axis=0, output_type="int64", name=None): return _arg("ArgMin", x, axis, output_type, name)


def cumsum(x, axis=0, exclusive=False, reverse=False, name=None):
    x = as_tensor(x)
    ax = _build.make_const(x.graph, axis, dtypes.int32)
    return _op("Cumsum", [x, ax], x.dtype, x.shape, {"exclusive": exclusive, "reverse": reverse}, name)
