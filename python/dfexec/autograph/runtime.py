"""What converted code calls (as `_dfx.<name>`): the if/while/for statements,
lazy and/or/not, conditional expressions and a few builtins. Each decides at
graph-building time: a Python condition runs as plain Python; a tensor
condition becomes graph control flow through dfexec's while/cond lowering.

Statement state travels through two closures the converter writes: get()
returns the current values of the variables the statement assigns (`names`),
set_(values) assigns them. `live` names those read after the statement: only
they become graph values; the others are put back as they were before it
(they are dead, and a probe may have left type-only tensors in them). `loc`
is (file, line) of the statement in the user's source, for messages.
"""
import numpy as np

from .. import _build, _nest, dtypes, shapes
from ..errors import ConversionError
from ..ops import array_ops, math_ops
from ..ops._convert import as_tensor, cast, is_python_scalar, promote
from ..ops.control_ops import conform
from ..tensor import Tensor


def _where(loc):
    return f"{loc[0]}:{loc[1]}"


class Undefined:
    """The value of a variable not assigned yet on this path."""
    __slots__ = ("name", "is_return")

    def __init__(self, name, is_return=False):
        self.name = name
        self.is_return = is_return

    def __repr__(self):
        return f"<undefined {self.name}>"

    def _fail(self, *args, **kwargs):
        raise NameError(f"'{self.name}' is used before it is assigned (on some path through an "
                        "if or loop it never gets a value)")

    __bool__ = __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _fail
    __truediv__ = __floordiv__ = __mod__ = __pow__ = __neg__ = __lt__ = __le__ = _fail
    __gt__ = __ge__ = __getitem__ = __call__ = __iter__ = __len__ = __index__ = _fail


def undefined_return():
    return Undefined("<return value>", is_return=True)


def retval(v):
    """The function's result after return lowering (None if no return ran)."""
    return None if isinstance(v, Undefined) and v.is_return else v


# ---- expressions --------------------------------------------------------------


def truth(x):
    """A scalar bool tensor for Python's truth of tensor x."""
    t = math_ops.truth(x)
    if t.shape is not None and t.shape != ():
        raise ValueError(f"the truth value of a tensor of shape {shapes.fmt(t.shape)} is ambiguous "
                         f"({t.name}); use ops.reduce_any / ops.reduce_all")
    return t


def _lazy(v, rest, is_and):
    """v (a tensor) and/or the rest of the chain, evaluated only when needed."""
    g = v.graph
    p = truth(v)
    spec = [(dtypes.bool_, ())]

    def more():
        r = and_(*rest) if is_and else or_(*rest)
        return [truth(r) if isinstance(r, Tensor) else bool(r)]
    short = [not is_and]
    then, other = (more, lambda: short) if is_and else (lambda: short, more)
    return _build.cond(g, p, then, other, spec, lambda i, x: as_tensor(x, dtypes.bool_, g), name="and" if is_and
                       else "or")[0]


def and_(*fns):
    """`a and b and ...` with Python's laziness; a tensor operand makes the
    rest run in a graph cond."""
    v = fns[0]()
    for i in range(1, len(fns)):
        if isinstance(v, Tensor):
            return _lazy(v, fns[i:], True)
        if not v:
            return v
        v = fns[i]()
    return v


def or_(*fns):
    v = fns[0]()
    for i in range(1, len(fns)):
        if isinstance(v, Tensor):
            return _lazy(v, fns[i:], False)
        if v:
            return v
        v = fns[i]()
    return v


def not_(x):
    if isinstance(x, Tensor):
        return math_ops.logical_not(truth(x))
    return not x


def if_exp(cond, then, orelse, loc):
    """`then() if cond else orelse()`."""
    if not isinstance(cond, Tensor):
        return then() if cond else orelse()
    box = [Undefined("<if expression>")]

    def get():
        return (box[0],)

    def set_(v):
        box[0] = v[0]
    _tensor_if(truth(cond), lambda: set_((then(),)), lambda: set_((orelse(),)), get, set_,
               ("<if expression>",), ("<if expression>",), loc)
    return box[0]


def len_(x):
    if isinstance(x, Tensor):
        if x.shape is not None and x.shape and x.shape[0] is not None:
            return x.shape[0]
        return array_ops.shape(x, out_type=dtypes.int64)[0]    # a Python int is int64 here
    return len(x)


def int_(x):
    return cast(x, dtypes.int64) if isinstance(x, Tensor) else int(x)


def float_(x):
    return cast(x, dtypes.float64) if isinstance(x, Tensor) else float(x)


def bool_(x):
    return truth(x) if isinstance(x, Tensor) else bool(x)


def min_(*args, **kw):
    if len(args) == 2 and not kw and any(isinstance(a, Tensor) for a in args):
        return math_ops.minimum(*args)
    return min(*args, **kw)


def max_(*args, **kw):
    if len(args) == 2 and not kw and any(isinstance(a, Tensor) for a in args):
        return math_ops.maximum(*args)
    return max(*args, **kw)


class TensorRange:
    """range() with tensor bounds, iterated by a graph loop."""

    def __init__(self, start, stop, step):
        ts = [v for v in (start, stop, step) if isinstance(v, Tensor)]
        dt = ts[0].dtype
        for t in ts[1:]:
            dt = promote(dt, t.dtype)
        if not dt.is_integer:
            raise TypeError(f"range() needs integers, not {dt.name}")
        g = ts[0].graph
        self.start, self.stop = [cast(v, dt) if isinstance(v, Tensor) else as_tensor(v, dt, g)
                                 for v in (start, stop)]
        self.step = cast(step, dt) if isinstance(step, Tensor) else int(step)
        if isinstance(self.step, int) and self.step == 0:
            raise ValueError("range() step must not be zero")

    def test(self, i):
        s = self.step
        if isinstance(s, int):
            return i < self.stop if s > 0 else i > self.stop
        return ((s > 0) & (i < self.stop)) | ((s < 0) & (i > self.stop))


def range_(*args):
    """range(...) in a `for` header: a Python range unless a bound is a tensor."""
    if not any(isinstance(a, Tensor) for a in args):
        return range(*args)
    start, stop, step = (0, args[0], 1) if len(args) == 1 else (args[0], args[1], args[2] if len(args) > 2 else 1)
    return TensorRange(start, stop, step)


# ---- state of an if or loop -------------------------------------------------------


def _is_numeric(v):
    return isinstance(v, (np.ndarray, np.generic)) or is_python_scalar(v)


def _zeros(spec, g, name):
    """Zeros standing in for `name` on a path where it has no value yet."""
    dt, shape = spec
    if shape is None or None in shape:
        raise ConversionError(f"'{name}' has no value on one path, and its shape {shapes.fmt(shape)} is not "
                              "fully known, so no zeros can stand in for it; give it a value first")
    return as_tensor(np.zeros(shape, dtype=dt.np), dt, g)


class _Slot:
    """How one variable of an if/loop state is carried: `keep` (the same
    Python object on every path: not a graph value), or graph values (the
    leaves of `structure`, with their specs)."""
    __slots__ = ("name", "keep", "dead", "value", "structure", "specs")

    def __init__(self, name):
        self.name, self.keep, self.dead, self.value, self.structure, self.specs = name, False, False, None, None, []


_SIDES = {"if": ("in the true branch", "in the false branch"),
          "loop": ("before the loop", "after one iteration of the body")}


def _leaf_spec(a, b, name, where, kind):
    """The (dtype, shape) of a graph value that is `a` on one path and `b` on
    the other ("if"), or `a` before a loop and `b` after one iteration
    ("loop"). A Python number adopts the other side's dtype, as in `x + 1`;
    a loop variable keeps its shape, a cond result takes what both fit."""
    sa, sb = _SIDES[kind]
    if isinstance(a, Tensor) and isinstance(b, Tensor):
        if a.dtype is not b.dtype:
            raise ConversionError(f"{where}: '{name}' is {a.dtype.name} {sa} but {b.dtype.name} {sb}; a graph "
                                  "variable keeps one dtype (cast it, or give it the right type first)")
        if not shapes.compatible(a.shape, b.shape):
            raise ConversionError(f"{where}: '{name}' has shape {shapes.fmt(a.shape)} {sa} but "
                                  f"{shapes.fmt(b.shape)} {sb}; a graph variable keeps one shape")
        return a.dtype, a.shape if kind == "loop" else shapes.relax(a.shape, b.shape)
    for t, other, side in ((a, b, sb), (b, a, sa)):
        if not isinstance(t, Tensor):
            continue
        if not _is_numeric(other):
            raise ConversionError(f"{where}: '{name}' is a tensor on one path but the Python "
                                  f"{type(other).__name__} {other!r} {side}")
        if is_python_scalar(other):
            if isinstance(other, float) and not (t.dtype.is_floating or t.dtype.is_complex):
                raise ConversionError(f"{where}: '{name}' is {t.dtype.name} on one path but the Python float "
                                      f"{other!r} {side}; make both floats")
        elif dtypes.as_dtype(np.asarray(other).dtype) is not t.dtype:
            raise ConversionError(f"{where}: '{name}' is {t.dtype.name} on one path but a numpy "
                                  f"{np.asarray(other).dtype} value {side}")
        return t.dtype, t.shape
    if not (_is_numeric(a) and _is_numeric(b)):
        raise ConversionError(f"{where}: '{name}' is the Python {type(a).__name__} {a!r} {sa} but "
                              f"{type(b).__name__} {b!r} {sb}, and a tensor decides between them; only "
                              "numbers and tensors can differ between graph paths")
    aa, bb = np.asarray(a), np.asarray(b)
    if aa.shape != bb.shape:
        raise ConversionError(f"{where}: '{name}' has shape {aa.shape} {sa} but {bb.shape} {sb}")
    return dtypes.as_dtype(np.result_type(aa, bb)), aa.shape


def _plan(names, live, a_vals, b_vals, where, kind):
    """Slots for a state that is `a_vals` on one path and `b_vals` on the
    other (see _leaf_spec for `kind`); names not in `live` keep `a`."""
    slots = []
    for name, a, b in zip(names, a_vals, b_vals):
        s = _Slot(name)
        slots.append(s)
        if name not in live:
            s.keep, s.value, s.dead = True, a, True
            continue
        if a is b or (isinstance(a, Undefined) and isinstance(b, Undefined)):
            s.keep, s.value = True, a
            continue
        if isinstance(a, Undefined) or isinstance(b, Undefined):
            defined, und = (b, a) if isinstance(a, Undefined) else (a, b)
            if kind == "loop" and und is b:
                raise ConversionError(f"{where}: '{name}' is not assigned on every path through the loop body")
            if kind == "if" and not und.is_return:
                raise ConversionError(f"{where}: '{name}' is assigned in only one branch of this `if` but "
                                      "used after it; give it a value before the `if`, or in both branches")
            # A return value (guarded by its flag) or a variable first assigned in the loop:
            # the path without a value carries zeros of the same type.
            s.structure = defined
            s.specs = [_leaf_spec(x, x, name, where, kind) for x in _nest.flatten(defined)]
            continue
        if not _nest.same_structure(a, b):
            raise ConversionError(f"{where}: '{name}' has a different structure on the two paths "
                                  f"({type(a).__name__} / {type(b).__name__})")
        s.structure = a
        s.specs = [_leaf_spec(x, y, name, where, kind) for x, y in zip(_nest.flatten(a), _nest.flatten(b))]
    return slots


def _graph_values(slots, vals, g):
    """The graph leaves of `vals` for the non-kept slots (fills undefined ones with zeros)."""
    out = []
    for s, v in zip(slots, vals):
        if s.keep:
            continue
        if isinstance(v, Undefined):
            out.extend(_zeros(spec, g, s.name) for spec in s.specs)
        else:
            out.extend(_nest.flatten(v))
    return out


def _rebuild(slots, leaves):
    it = iter(leaves)
    out = []
    for s in slots:
        if s.keep:
            out.append(s.value)
        else:
            vals = [next(it) for _ in s.specs]
            out.append(_nest.pack(s.structure, vals) if _nest.is_nested(s.structure) else vals[0])
    return tuple(out)


def _flat_specs(slots):
    return [(s, spec) for s in slots if not s.keep for spec in s.specs]


# ---- if ------------------------------------------------------------------------


def if_stmt(cond, then, orelse, get, set_, names, live, loc):
    if not isinstance(cond, Tensor):
        if cond:
            then()
        else:
            orelse()
        return
    _tensor_if(truth(cond), then, orelse, get, set_, names, live, loc)


def _tensor_if(pred, then, orelse, get, set_, names, live, loc):
    g = pred.graph
    init = get()

    def run(branch):
        set_(init)
        branch()
        return get()
    with _build.probing(g):
        t_probe, f_probe = run(then), run(orelse)
    where = _where(loc)
    slots = _plan(names, live, t_probe, f_probe, where, "if")
    flat = _flat_specs(slots)
    specs = [spec for _, spec in flat]

    def convert(i, v):
        s, spec = flat[i]
        if isinstance(v, Tensor):
            return conform(v, _Like(g, spec), f"{where}: '{s.name}'", "in one branch")
        return as_tensor(v, spec[0], g)
    outs = _build.cond(g, pred, lambda: _graph_values(slots, run(then), g),
                       lambda: _graph_values(slots, run(orelse), g), specs, convert, name="cond")
    set_(_rebuild(slots, outs))


class _Like:
    """A stand-in with a dtype and shape, for conform()."""
    __slots__ = ("graph", "dtype", "shape")

    def __init__(self, g, spec):
        self.graph, (self.dtype, self.shape) = g, spec


# ---- loops ----------------------------------------------------------------------

class _Counter:
    """The hidden induction variable of a graph `for` loop."""

    def __init__(self, iterable, g):
        if isinstance(iterable, TensorRange):
            self.r, self.seq = iterable, None
            self.init = iterable.start
        else:
            self.r, self.seq = None, iterable
            if iterable.ndim == 0:
                raise TypeError(f"cannot iterate over a scalar tensor ({iterable.name})")
            self.n = len_(iterable)
            self.init = as_tensor(0, dtypes.int64, g)

    def test(self, i):
        return self.r.test(i) if self.r is not None else i < self.n

    def value(self, i):
        return i if self.r is not None else self.seq[i]

    def next(self, i):
        return i + (self.r.step if self.r is not None else 1)


def while_stmt(test, body, get, set_, names, live, loc):
    g = _build.get_default_graph()
    with _build.probing(g):
        c = test()
    if isinstance(c, Tensor):
        return _tensor_loop(g, test, None, body, get, set_, names, live, loc)
    while True:
        c = test()
        if isinstance(c, Tensor):       # a Python loop whose condition became a tensor:
            return _tensor_loop(g, test, None, body, get, set_, names, live, loc)   # the rest runs in the graph
        if not c:
            return
        body()


def for_stmt(iterable, extra_test, body, get, set_, names, live, loc):
    if isinstance(iterable, (Tensor, TensorRange)):
        g = iterable.graph if isinstance(iterable, Tensor) else iterable.start.graph
        return _tensor_loop(g, extra_test, _Counter(iterable, g), body, get, set_, names, live, loc)
    it = iter(iterable)
    while True:
        if extra_test is not None:
            c = extra_test()
            if isinstance(c, Tensor):
                # A break or return decided by a tensor: each element left runs under a graph cond.
                for v in it:
                    if_stmt(extra_test(), lambda v=v: body(v), lambda: None, get, set_, names, live, loc)
                return
            if not c:
                return
        try:
            v = next(it)
        except StopIteration:
            return
        body(v)


def _probe_value(v, dts):
    """A type-only stand-in for a loop variable's initial value: numbers and
    numpy values become probe tensors (so the probe follows the path the
    graph will take), with the dtype `dts` gives for Python numbers."""
    g = _build.get_default_graph()

    def leaf(x):
        if isinstance(x, (np.ndarray, np.generic)):
            return Tensor(g, None, dtypes.as_dtype(x.dtype), np.shape(x))
        if is_python_scalar(x):
            return Tensor(g, None, dts.pop(0), ())
        return x
    if _nest.is_nested(v):
        return _nest.pack(v, [leaf(x) for x in _nest.flatten(v)])
    return leaf(v)


def _python_numbers(v):
    return [x for x in _nest.flatten(v) if is_python_scalar(x)]


def _tensor_loop(g, test, counter, body, get, set_, names, live, loc):
    """A graph while loop over the state variables (plus a counter for `for`).

    The body is probed first to learn each variable's type. A variable that
    starts as a Python number takes the dtype the body gives it (i = 0 stays
    int64, s = 0 becomes float64 when the body adds floats), so the probe
    repeats until those dtypes settle; other variables must keep theirs."""
    where = _where(loc)
    init = get()

    def step(vals, i=None):
        set_(vals)
        if counter is None:
            body()
        else:
            body(counter.value(i))
        return get()
    number_dts = {n: [dtypes.as_dtype(type(x)) for x in _python_numbers(v)]
                  for n, v in zip(names, init) if n in live}
    for _ in range(4):
        with _build.probing(g):
            probe_init = tuple(_probe_value(v, list(number_dts[n])) if n in live else v
                               for n, v in zip(names, init))
            after = step(probe_init, None if counter is None else counter.init)
        settled = True
        for n, a, b, orig_v in zip(names, probe_init, after, init):
            if n not in live or not number_dts[n] or not _nest.same_structure(a, b):
                continue
            k = 0
            for x, y, orig in zip(_nest.flatten(a), _nest.flatten(b), _nest.flatten(orig_v)):
                if is_python_scalar(orig):
                    if isinstance(y, Tensor) and y.dtype is not x.dtype:
                        number_dts[n][k], settled = y.dtype, False
                    k += 1
        if settled:
            break
    slots = _plan(names, live, probe_init, after, where, "loop")
    for s, v in zip(slots, init):
        if s.keep:
            s.value = v
    flat = _flat_specs(slots)
    init_leaves = [as_tensor(v, spec[0], g) if not isinstance(v, Tensor) else v
                   for v, (_, spec) in zip(_graph_values(slots, init, g), flat)]
    if counter is not None:
        init_leaves.append(counter.init)

    def split(vs):
        return (_rebuild(slots, vs[:-1]), vs[-1]) if counter is not None else (_rebuild(slots, vs), None)

    def cond_fn(vs):
        vals, i = split(vs)
        set_(vals)
        c = test() if test is not None else True
        if counter is not None:
            ct = counter.test(i)
            return ct if c is True else math_ops.logical_and(ct, truth(c) if isinstance(c, Tensor) else bool(c))
        return truth(c) if isinstance(c, Tensor) else as_tensor(bool(c), dtypes.bool_, g)

    def body_fn(vs):
        vals, i = split(vs)
        out = step(vals, i)
        for s, v in zip(slots, out):
            if s.keep and not s.dead and v is not s.value:
                raise ConversionError(f"{where}: '{s.name}' is a Python {type(s.value).__name__} that this "
                                      "graph loop changes; only tensors and numbers can change in a loop "
                                      "whose condition is a tensor")
        leaves = _graph_values(slots, out, g)
        return leaves + ([counter.next(i)] if counter is not None else [])

    def convert(k, v):
        if k == len(flat):
            return v
        s = flat[k][0]
        like = init_leaves[k]
        if isinstance(v, Tensor):
            return conform(v, like, f"{where}: loop variable '{s.name}'", "after one iteration")
        return as_tensor(v, like.dtype, g)
    exits = _build.while_loop(g, cond_fn, body_fn, init_leaves, convert, name="while")
    set_(split(exits)[0])
