"""Symbolic tensors: one output of a node of a Graph under construction.

A Tensor knows its graph, its name ("node:k"), dtype and static shape, and
overloads Python's operators with numpy's meaning (broadcasting; `==` is
elementwise, so Tensors hash by identity). Python scalars are "weak": in
`x + 1` the 1 takes x's dtype; two tensors of different dtypes are promoted
as numpy promotes them (np.result_type), with a Cast.

A Tensor has no value while the graph is built, so it cannot decide a
Python `if` or `while`: bool(t) raises, naming the source line, except while
tracing (dfexec.trace), where the value of the example run decides and a
TracingWarning names the line whose path the graph is now fixed to.
"""
from . import shapes


class Tensor:
    __slots__ = ("graph", "_ref", "dtype", "shape", "_const", "__weakref__")

    def __init__(self, graph, ref, dtype, shape, const=None):
        self.graph = graph
        self._ref = ref             # bytes the C builder knows it by ("node" or "node:k"); None if probed
        self.dtype = dtype
        self.shape = None if shape is None else tuple(shape)
        self._const = const         # the numpy value of a Const node

    @property
    def name(self):
        """TensorFlow's "node:k" name."""
        if self._ref is None:
            return "<probe>"
        r = self._ref.decode()
        return r if ":" in r else r + ":0"

    @property
    def op_name(self):
        """The name of the node producing this tensor."""
        return self.name.rpartition(":")[0]

    @property
    def ndim(self):
        return None if self.shape is None else len(self.shape)

    def __repr__(self):
        return f"<dfexec.Tensor '{self.name}' shape={shapes.fmt(self.shape)} dtype={self.dtype.name}>"

    __hash__ = object.__hash__

    # ---- Python asking for a value -------------------------------------------

    def _concrete(self, how):
        tracer = self.graph._state.tracer
        if tracer is not None and not self.graph._state.probing:
            return tracer.concretize(self, how)
        from .trace import user_location
        where = user_location()
        raise TypeError(
            f"{where}: {how} needs the value of tensor {self.name}, which is only known when the graph "
            "runs. Use dfexec.function (it turns `if`/`while`/`for` on tensors into graph control flow), "
            "or ops.cond / ops.while_loop / ops.where.")

    def __bool__(self):
        return bool(self._concrete("a Python `if`/`while`/`and`/`or`/`not` (bool())"))

    def __index__(self):
        return int(self._concrete("using a tensor as a Python int (index, range)"))

    def __int__(self):
        return int(self._concrete("int()"))

    def __float__(self):
        return float(self._concrete("float()"))

    def __len__(self):
        if self.shape is None or not self.shape or self.shape[0] is None:
            raise TypeError(f"len() of tensor {self.name} with static shape {shapes.fmt(self.shape)} is not known")
        return self.shape[0]

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def __array__(self, dtype=None):
        import numpy as np
        return np.asarray(self._concrete("converting a tensor to numpy"), dtype=dtype)

    # ---- operators (dfexec.ops.math_ops does the work) ----------------------

    def __add__(self, o): return _m.add(self, o)
    def __radd__(self, o): return _m.add(o, self)
    def __sub__(self, o): return _m.subtract(self, o)
    def __rsub__(self, o): return _m.subtract(o, self)
    def __mul__(self, o): return _m.multiply(self, o)
    def __rmul__(self, o): return _m.multiply(o, self)
    def __truediv__(self, o): return _m.divide(self, o)
    def __rtruediv__(self, o): return _m.divide(o, self)
    def __floordiv__(self, o): return _m.floordiv(self, o)
    def __rfloordiv__(self, o): return _m.floordiv(o, self)
    def __mod__(self, o): return _m.mod(self, o)
    def __rmod__(self, o): return _m.mod(o, self)
    def __pow__(self, o): return _m.pow(self, o)
    def __rpow__(self, o): return _m.pow(o, self)
    def __matmul__(self, o): return _m.matmul(self, o)
    def __rmatmul__(self, o): return _m.matmul(o, self)
    def __and__(self, o): return _m.bitwise_and(self, o)
    def __rand__(self, o): return _m.bitwise_and(o, self)
    def __or__(self, o): return _m.bitwise_or(self, o)
    def __ror__(self, o): return _m.bitwise_or(o, self)
    def __xor__(self, o): return _m.bitwise_xor(self, o)
    def __rxor__(self, o): return _m.bitwise_xor(o, self)
    def __invert__(self): return _m.invert(self)
    def __neg__(self): return _m.negative(self)
    def __pos__(self): return self
    def __abs__(self): return _m.abs(self)
    def __lt__(self, o): return _m.less(self, o)
    def __le__(self, o): return _m.less_equal(self, o)
    def __gt__(self, o): return _m.greater(self, o)
    def __ge__(self, o): return _m.greater_equal(self, o)
    def __eq__(self, o): return _m.equal(self, o)
    def __ne__(self, o): return _m.not_equal(self, o)

    def __getitem__(self, key):
        return _a.getitem(self, key)

    def astype(self, dtype):
        return _m.cast(self, dtype)


from .ops import array_ops as _a, math_ops as _m  # noqa: E402  (they import Tensor)
