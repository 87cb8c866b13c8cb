"""The core of graph building: the default graph, adding one node, and the
while/cond lowering through the C builder's callbacks.

Every op of dfexec.ops ends in make_op(), so this is the one place that
talks to dfx_builder_*. A graph can also be "probed": inside probing(g),
make_op emits nothing and returns tensors that carry only dtype and shape.
AST conversion probes a loop body or a cond branch to learn the types it
produces before it builds the real thing (a variable first assigned inside
a loop needs an initial value of the right type; a cond needs its output
types before dfx_builder_cond runs the first branch).
"""
import contextlib
import ctypes
import threading

import numpy as np

from . import _tensors, dtypes, shapes
from ._lib import COND_BRANCH_FN, WHILE_BODY_FN, WHILE_COND_FN, lib
from .errors import InvalidArgumentError, check, status

DFX_ECANCELED = -5

_local = threading.local()
_global_default = None


class BuildState:
    """Python-side state of a Graph under construction."""

    def __init__(self):
        self.probing = 0          # > 0 inside probing(): make no nodes
        self.tracer = None        # the trace.Tracer recording into this graph, if any
        self.ctx_depth = 0        # nesting of while/cond callbacks being built


def _stack():
    try:
        return _local.stack
    except AttributeError:
        _local.stack = []
        return _local.stack


def get_default_graph():
    """The graph ops add nodes to: the innermost `with g.as_default()` of
    this thread, else one process-wide default graph."""
    s = _stack()
    if s:
        return s[-1]
    global _global_default
    if _global_default is None:
        from .graph import Graph
        _global_default = Graph()
    return _global_default


def reset_default_graph():
    """Replaces the process-wide default graph with an empty one."""
    global _global_default
    _global_default = None


@contextlib.contextmanager
def default_graph(g):
    if not g.building:
        raise InvalidArgumentError("a loaded graph cannot grow; build in a new dfexec.Graph()")
    s = _stack()
    s.append(g)
    try:
        yield g
    finally:
        s.pop()


@contextlib.contextmanager
def probing(g):
    """Ops on `g` record types only, and add no nodes, inside this block."""
    g._state.probing += 1
    try:
        yield
    finally:
        g._state.probing -= 1


class Shape:
    """Marks an attr value as a shape (a tuple alone would be a list of ints)."""
    __slots__ = ("dims",)

    def __init__(self, dims):
        self.dims = dims


def _set_attr(node, key, v):
    k = key.encode()
    if isinstance(v, dtypes.DType):
        c = lib.dfx_bnode_attr_type(node, k, v.enum)
    elif isinstance(v, bool):
        c = lib.dfx_bnode_attr_bool(node, k, int(v))
    elif isinstance(v, int):
        c = lib.dfx_bnode_attr_int(node, k, v)
    elif isinstance(v, float):
        c = lib.dfx_bnode_attr_float(node, k, v)
    elif isinstance(v, (str, bytes)):
        c = lib.dfx_bnode_attr_string(node, k, v.encode() if isinstance(v, str) else v)
    elif isinstance(v, Shape):
        dims = v.dims
        arr = None if dims is None else (ctypes.c_int64 * len(dims))(*[-1 if d is None else d for d in dims])
        c = lib.dfx_bnode_attr_shape(node, k, arr, -1 if dims is None else len(dims))
    elif isinstance(v, (list, tuple)):
        c = lib.dfx_bnode_attr_ints(node, k, (ctypes.c_int64 * len(v))(*v), len(v))
    else:
        raise TypeError(f"attr {key}: cannot store a {type(v).__name__}")
    if c:
        raise InvalidArgumentError(f"attr '{key}' = {v!r} was rejected ({lib.dfx_code_name(c).decode()})", c)


def _node_name(name):
    return None if name is None else name.encode()


def _unique_name(g, name):
    """`name`, or name_1, name_2, ... when it is taken (TensorFlow's rule):
    the builder refuses a duplicate, and its errors are sticky. The open
    scope is the directory of the control pivot inside a while/cond
    callback, the root outside (dfexec.ops opens no other scopes)."""
    if name is None:
        return None
    pivot = lib.dfx_builder_pivot(g._builder)
    prefix = pivot.rpartition(b"/")[0] + b"/" if pivot else b""
    base = name.encode()
    cand, k = base, 0
    while lib.dfx_builder_find(g._builder, prefix + cand):
        k += 1
        cand = b"%s_%d" % (base, k)
    return cand


def make_op(g, op_type, inputs, outs, attrs=None, name=None):
    """Adds node `op_type` reading `inputs` (Tensors) and returns its outputs
    as Tensors with the static (dtype, shape) pairs `outs`."""
    from .tensor import Tensor
    for t in inputs:
        if t.graph is not g:
            raise InvalidArgumentError(f"{op_type}: input {t.name} belongs to another graph")
    if g._state.probing:
        return [Tensor(g, None, dt, sh) for dt, sh in outs]
    refs = (ctypes.c_char_p * len(inputs))(*[t._ref for t in inputs])
    node, st = ctypes.c_void_p(), status()
    check(lib.dfx_builder_node(g._builder, op_type.encode(), _unique_name(g, name), refs, len(inputs),
                               ctypes.byref(node), st), st, f"adding {op_type}")
    for k, v in (attrs or {}).items():
        _set_attr(node, k, v)
    base = lib.dfx_bnode_name(node)
    return [Tensor(g, base if k == 0 else b"%s:%d" % (base, k), dt, sh) for k, (dt, sh) in enumerate(outs)]


def make_const(g, value, dtype=None, name=None):
    """A Const node holding np.asarray(value, dtype)."""
    from .tensor import Tensor
    dt = dtypes.as_dtype(dtype) if dtype is not None else None
    arr = np.asarray(value, dtype=dt.np if dt is not None and dt is not dtypes.string else None)
    if dt is None:
        dt = dtypes.as_dtype(arr.dtype)
    if dt is dtypes.string:
        arr = np.asarray(value, dtype=object)
    if g._state.probing:
        return Tensor(g, None, dt, arr.shape, const=arr)
    t = _tensors.to_c(arr, dt)
    node, st = ctypes.c_void_p(), status()
    try:
        check(lib.dfx_builder_const(g._builder, _unique_name(g, name), t, ctypes.byref(node), st), st,
              "adding a Const")
    finally:
        lib.dfx_tensor_free(t)
    return Tensor(g, lib.dfx_bnode_name(node), dt, arr.shape, const=arr)


def make_placeholder(g, dtype, shape=None, name=None):
    from .tensor import Tensor
    dt = dtypes.as_dtype(dtype)
    shape = None if shape is None else tuple(None if d is None or d < 0 else int(d) for d in shape)
    dims = None if not shape else (ctypes.c_int64 * len(shape))(*[-1 if d is None else d for d in shape])
    node, st = ctypes.c_void_p(), status()
    check(lib.dfx_builder_placeholder(g._builder, _unique_name(g, name), dt.enum, dims,
                                      -1 if shape is None else len(shape), ctypes.byref(node), st), st,
          "adding a Placeholder")
    return Tensor(g, lib.dfx_bnode_name(node), dt, shape)


# ---- control flow ------------------------------------------------------------


class _Callbacks:
    """Runs Python code from a C builder callback. An exception cannot cross
    ctypes, so it is kept and the callback returns an error code; the caller
    re-raises it once the C call is back."""

    def __init__(self, g):
        self.g = g
        self.error = None
        self.keep = []        # bytes whose pointers were handed to C

    def call(self, fn):
        try:
            self.g._state.ctx_depth += 1
            fn()
            return 0
        except BaseException as e:          # noqa: B902 - re-raised by raise_pending
            if self.error is None:
                self.error = e
            return DFX_ECANCELED
        finally:
            self.g._state.ctx_depth -= 1

    def put(self, out, i, t):
        self.keep.append(t._ref)
        out[i] = t._ref

    def raise_pending(self):
        if self.error is not None:
            raise self.error


def _vars_from(g, pp, specs):
    from .tensor import Tensor
    return [Tensor(g, pp[i], dt, sh) for i, (dt, sh) in enumerate(specs)]


def while_loop(g, cond_fn, body_fn, init, convert, name=None, parallel_iterations=10):
    """TF1's while loop over the Tensors `init`. cond_fn(vars) returns a
    scalar bool Tensor; body_fn(vars) returns the next values, which
    convert(i, value) turns into Tensors of init[i]'s dtype and shape (or
    raises). Returns the exit Tensors."""
    specs = [(t.dtype, t.shape) for t in init]
    if g._state.probing:
        from .tensor import Tensor
        vs = [Tensor(g, None, dt, sh) for dt, sh in specs]
        _check_pred(cond_fn(vs))
        for i, v in enumerate(body_fn(vs)):
            convert(i, v)
        return [Tensor(g, None, dt, sh) for dt, sh in specs]
    cb = _Callbacks(g)
    n = len(init)

    def c_cond(b, pp, nv, ud, pred):
        def run():
            cb.put(pred, 0, _check_pred(cond_fn(_vars_from(g, pp, specs))))
        return cb.call(run)

    def c_body(b, pp, nv, ud, nxt):
        def run():
            outs = body_fn(_vars_from(g, pp, specs))
            for i, v in enumerate(outs):
                cb.put(nxt, i, convert(i, v))
        return cb.call(run)

    exits = (ctypes.c_char_p * n)()
    st = status()
    code = lib.dfx_builder_while(g._builder, _node_name(name), (ctypes.c_char_p * n)(*[t._ref for t in init]),
                                 n, parallel_iterations, WHILE_COND_FN(c_cond), WHILE_BODY_FN(c_body), None,
                                 exits, st)
    cb.raise_pending()
    check(code, st, "building a while loop")
    return _vars_from(g, exits, specs)


def cond(g, pred, true_fn, false_fn, specs, convert, name=None):
    """tf.cond's lowering: true_fn() and false_fn() return lists of values
    that convert(i, value) turns into Tensors matching specs[i] (dtype,
    shape). Returns the Merge outputs as Tensors of those specs."""
    from .tensor import Tensor
    pred = _check_pred(pred)
    if g._state.probing:
        return [Tensor(g, None, dt, sh) for dt, sh in specs]
    dummy = not specs          # dfx_builder_cond needs one result at least
    n = len(specs) or 1
    cb = _Callbacks(g)

    def branch(fn):
        def c_branch(b, ud, outs):
            def run():
                vals = fn()
                if dummy:
                    cb.put(outs, 0, pred)
                for i, v in enumerate(vals):
                    cb.put(outs, i, convert(i, v))
            return cb.call(run)
        return COND_BRANCH_FN(c_branch)

    outs = (ctypes.c_char_p * n)()
    st = status()
    code = lib.dfx_builder_cond(g._builder, _node_name(name), pred._ref, n, branch(true_fn),
                                branch(false_fn), None, outs, st)
    cb.raise_pending()
    check(code, st, "building a cond")
    return [] if dummy else _vars_from(g, outs, specs)


def _check_pred(p):
    from .tensor import Tensor
    if not isinstance(p, Tensor):
        raise TypeError(f"a graph loop or cond needs a bool tensor as its condition, got {p!r}")
    if p.dtype is not dtypes.bool_:
        raise TypeError(f"the condition must be a bool tensor, not {p.dtype.name} ({p.name})")
    if p.shape is not None and p.shape != ():
        raise ValueError(f"the condition must be a scalar, not shape {shapes.fmt(p.shape)} ({p.name})")
    return p
