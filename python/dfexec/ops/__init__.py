"""dfexec.ops: graph-building ops mirroring the common tf.* ones. Each adds
nodes to the default graph (or to its inputs' graph):

    g = dfexec.Graph()
    with g.as_default():
        x = ops.placeholder("float32", [None, 3], name="x")
        y = ops.reduce_sum(x * 2.0, axis=1, name="y")
"""
from .. import _build
from .._build import get_default_graph, reset_default_graph
from ._convert import as_tensor
from .array_ops import (concat, expand_dims, fill, gather, identity, one_hot, ones, ones_like, rank,
                        reshape, shape, size, squeeze, stack, tile, transpose, where, zeros, zeros_like)
from .array_ops import range  # noqa: A004 (tf.range)
from .control_ops import cond, while_loop
from .math_ops import (abs, add, argmax, argmin, cast, ceil, clip_by_value, cos, cumsum, divide, equal, erf,
                       exp, expm1, floor, floordiv, greater, greater_equal, invert, is_finite, is_nan,
                       less, less_equal, log, log1p, logical_and, logical_not, logical_or, matmul, maximum,
                       minimum, mod, multiply, negative, not_equal, pow, reciprocal, reduce_all, reduce_any,
                       reduce_max, reduce_mean, reduce_min, reduce_prod, reduce_sum, round, rsqrt, sigmoid,
                       sign, sin, sqrt, square, squared_difference, subtract, tan, tanh)
from .nn_ops import elu, leaky_relu, log_softmax, relu, relu6, softmax, softplus, softsign


def placeholder(dtype, shape=None, name=None):
    """A graph input: `shape` a list (None for an unknown dim), or None for any shape."""
    return _build.make_placeholder(get_default_graph(), dtype, shape, name)


def constant(value, dtype=None, name=None):
    """A Const holding np.asarray(value, dtype) (Python int -> int64, float -> float64)."""
    return _build.make_const(get_default_graph(), value, dtype, name)


convert_to_tensor = as_tensor
truediv = divide
