"""tf.while_loop and tf.cond over nested structures of tensors, lowered to
TF1's Enter/Merge/Switch/NextIteration/Exit by the C builder."""
import numpy as np

from .. import _build, _nest, dtypes, shapes
from ..tensor import Tensor
from ._convert import as_tensor, graph_of, is_python_scalar, weak_dtype


def while_loop(cond, body, loop_vars, parallel_iterations=10, name=None):
    """Repeats `loop_vars = body(*loop_vars)` while `cond(*loop_vars)`.
    loop_vars is a list/tuple (nested structures allowed); every variable
    keeps its dtype and shape. Returns the final values, same structure."""
    if not isinstance(loop_vars, (list, tuple)):
        raise TypeError("loop_vars must be a list or tuple")
    g = graph_of(*_nest.flatten(loop_vars))
    init = [as_tensor(v, g=g) for v in _nest.flatten(loop_vars)]

    def unpack(vs):
        return _nest.pack(loop_vars, vs)

    def body_flat(vs):
        out = body(*unpack(vs))
        if len(loop_vars) == 1 and not isinstance(out, (list, tuple)):
            out = [out]
        if not _nest.same_structure(list(out), list(loop_vars)):
            raise ValueError("while_loop: body must return the structure of loop_vars")
        return _nest.flatten(out)

    def convert(i, v):
        return conform(v, init[i], f"loop variable {i}", "after one iteration of the body")

    exits = _build.while_loop(g, lambda vs: cond(*unpack(vs)), body_flat, init, convert, name,
                              parallel_iterations)
    return unpack(exits)


def conform(v, like, what, when):
    """`v` as a Tensor with `like`'s dtype and a shape compatible with it."""
    if isinstance(v, Tensor):
        if v.dtype is not like.dtype:
            raise TypeError(f"{what} has dtype {like.dtype.name} before but {v.dtype.name} {when}")
        if not shapes.compatible(v.shape, like.shape):
            raise ValueError(f"{what} has shape {shapes.fmt(like.shape)} before but "
                             f"{shapes.fmt(v.shape)} {when}")
        return v
    return as_tensor(v, like.dtype, like.graph)


def _spec_of(v, other):
    """(dtype, shape) of a branch result, a Python scalar taking the other
    branch's dtype (weakly)."""
    if isinstance(v, Tensor):
        return v.dtype, v.shape
    if is_python_scalar(v) and isinstance(other, Tensor):
        return weak_dtype(other.dtype, v), ()
    arr = np.asarray(v)
    return dtypes.as_dtype(arr.dtype), arr.shape


def branch_specs(t_vals, f_vals, names):
    """The output specs of a cond whose branches give `t_vals` / `f_vals`."""
    specs = []
    for name, a, b in zip(names, t_vals, f_vals):
        da, sa = _spec_of(a, b)
        db, sb = _spec_of(b, a)
        if da is not db:
            raise TypeError(f"{name} is {da.name} in the true branch but {db.name} in the false branch")
        if not shapes.compatible(sa, sb):
            raise ValueError(f"{name} has shape {shapes.fmt(sa)} in the true branch but "
                             f"{shapes.fmt(sb)} in the false branch")
        specs.append((da, shapes.relax(sa, sb)))
    return specs


def convert_to_spec(v, spec, g):
    dt, _ = spec
    if isinstance(v, Tensor):
        return v
    return as_tensor(v, dt, g)


def cond(pred, true_fn, false_fn, name=None):
    """true_fn() if pred else false_fn(), as graph control flow: only the
    taken branch runs. Both must return the same structure with the same
    dtypes. A Python bool pred just calls one function."""
    if not isinstance(pred, Tensor):
        return true_fn() if pred else false_fn()
    g = pred.graph
    with _build.probing(g):
        t_probe, f_probe = true_fn(), false_fn()
    if not _nest.same_structure(t_probe, f_probe):
        raise ValueError("cond: the branches return different structures")
    t_flat, f_flat = _nest.flatten(t_probe), _nest.flatten(f_probe)
    specs = branch_specs(t_flat, f_flat, [f"result {i}" for i in range(len(t_flat))])

    def run(fn):
        return lambda: _nest.flatten(fn())

    outs = _build.cond(g, pred, run(true_fn), run(false_fn), specs,
                       lambda i, v: convert_to_spec(v, specs[i], g), name)
    return _nest.pack(t_probe, outs)
