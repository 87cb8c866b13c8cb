"""Graph functions: a graph with named inputs and outputs that runs like the
Python function it came from, through a session it keeps; and the
@dfexec.function decorator, which makes them by AST conversion."""
import functools
import inspect
import threading
from collections import namedtuple

import numpy as np

from . import _build, _nest, dtypes
from .errors import ConversionError
from .graph import Graph
from .ops._convert import as_tensor
from .tensor import Tensor

TensorSpec = namedtuple("TensorSpec", "shape dtype")
TensorSpec.__doc__ = """An input's shape (None entries for unknown dims) and dtype."""


class GraphFunction:
    """A Graph with inputs (placeholders) and outputs (Identity nodes named
    "output" or "output_0", "output_1", ...). Calling it feeds the arguments
    (converted to the placeholders' dtypes) and returns numpy values in the
    structure the Python function returned."""

    def __init__(self, graph, inputs, outputs, name):
        self.graph = graph
        self.name = name
        self.inputs = [t.name for t in inputs]
        self.input_specs = [TensorSpec(t.shape, t.dtype) for t in inputs]
        self.structure = outputs
        leaves = [v for v in _nest.flatten(outputs) if v is not None]    # None stays None
        with graph.as_default():
            tensors = [as_tensor(v, g=graph) for v in leaves]
            single = len(tensors) == 1 and not _nest.is_nested(outputs)
            self.outputs = [_build.make_op(graph, "Identity", [t], [(t.dtype, t.shape)],
                                           name="output" if single else f"output_{i}")[0].name
                            for i, t in enumerate(tensors)]
        self._session = None
        self._lock = threading.Lock()

    def session(self):
        """The session calls run through (made on first use, then kept)."""
        if self._session is None:
            from .session import Session
            with self._lock:
                if self._session is None:
                    self._session = Session(self.graph)
        return self._session

    def save(self, path):
        """Writes the graph (.pb binary, .pbtxt text)."""
        self.graph.save(path)

    def __call__(self, *args, max_iterations=None, timeout=None):
        if len(args) != len(self.inputs):
            raise TypeError(f"{self.name} takes {len(self.inputs)} argument(s), got {len(args)}")
        if any(isinstance(a, Tensor) for a in args):
            raise TypeError(f"{self.name} is a finished graph and cannot be inlined into another; "
                            "decorate the Python function with @dfexec.function to inline it")
        values = self.session().run(self.outputs, dict(zip(self.inputs, args)),
                                    max_iterations=max_iterations, timeout=timeout)
        if not _nest.is_nested(self.structure):
            return None if self.structure is None else values[0]
        it = iter(values)
        return _nest.pack(self.structure, [None if v is None else next(it) for v in _nest.flatten(self.structure)])

    def __repr__(self):
        return f"<GraphFunction {self.name}({', '.join(self.inputs)}) -> {', '.join(self.outputs)}>"


def _is_array_like(v):
    if isinstance(v, (np.ndarray, np.generic, bool, int, float, complex, Tensor)):
        return True
    if isinstance(v, (list, tuple)) and v:
        try:
            return np.asarray(v).dtype.kind in "biufc"
        except (ValueError, TypeError):
            return False
    return False


def _spec_of(value):
    arr = np.asarray(value)
    return TensorSpec(arr.shape, dtypes.as_dtype(arr.dtype))


class Function:
    """A Python function converted to graphs by @dfexec.function.

    Calling it with numpy values (or anything np.asarray accepts) builds a
    graph for those arguments' dtypes and shapes on the first call (one per
    signature, like tf.function), then runs it. Called while another graph is
    being built (inside a converted or traced function), it is inlined.
    Arguments named in static_argnames stay Python values (each value gets
    its own graph); input_signature fixes the inputs (TensorSpec list) so the
    graph can be built before any call.
    """

    def __init__(self, fn, input_signature=None, static_argnames=()):
        functools.update_wrapper(self, fn)
        self.python_function = fn
        self.input_signature = None if input_signature is None else [
            TensorSpec(None if s.shape is None else tuple(s.shape), dtypes.as_dtype(s.dtype))
            for s in input_signature]
        self.static_argnames = tuple(static_argnames)
        self._sig = inspect.signature(fn)
        self._converted = None
        self._concrete = {}
        self._last = None
        self._lock = threading.RLock()

    def converted(self):
        """The Python function after AST conversion (builds graph control flow
        when its conditions are tensors)."""
        if self._converted is None:
            from .autograph.transformer import convert
            self._converted = convert(self.python_function)
        return self._converted

    def _split_args(self, args, kwargs):
        """(graph inputs as (name, value), Python-valued arguments): numbers,
        numpy values and lists of numbers become placeholders; strings, None,
        functions, other objects and static_argnames stay Python."""
        bound = self._sig.bind(*args, **kwargs)
        bound.apply_defaults()
        dynamic, static = [], {}
        for name, v in bound.arguments.items():
            if name in self.static_argnames or not _is_array_like(v):
                static[name] = v
            else:
                dynamic.append((name, v))
        return dynamic, static

    def get_concrete_function(self, *args, **kwargs):
        """The GraphFunction for these arguments' dtypes and shapes."""
        dynamic, static = self._split_args(args, kwargs)
        if self.input_signature is not None:
            if len(self.input_signature) != len(dynamic):
                raise TypeError(f"{self.__name__}: input_signature has {len(self.input_signature)} "
                                f"specs for {len(dynamic)} arguments")
            specs = self.input_signature
        else:
            specs = [_spec_of(v) for _, v in dynamic]
        key = (tuple((s.dtype.name, s.shape) for s in specs), tuple((k, _static_key(v)) for k, v in static.items()))
        with self._lock:
            gf = self._concrete.get(key)
            if gf is None:
                gf = self._concrete[key] = self._build([n for n, _ in dynamic], specs, static)
            self._last = gf
        return gf

    def _build(self, names, specs, static):
        g = Graph()
        fn = self.converted()
        with g.as_default():
            phs = [_build.make_placeholder(g, s.dtype, s.shape, n) for n, s in zip(names, specs)]
            try:
                out = fn(**dict(zip(names, phs)), **static)
            except ConversionError:
                raise
            except Exception as e:
                _note_user_line(e, self.python_function)
                raise
        return GraphFunction(g, phs, _returnable(out), self.__name__)

    def __call__(self, *args, **kwargs):
        if _build._stack():
            return self.converted()(*args, **kwargs)      # inline into the graph being built
        gf = self.get_concrete_function(*args, **kwargs)
        dynamic, _ = self._split_args(args, kwargs)
        return gf(*[v for _, v in dynamic])

    def _only(self):
        if self._last is None:
            if self.input_signature is None:
                raise ValueError(f"{self.__name__} has no graph yet: call it once, or give input_signature")
            self.get_concrete_function(*[np.zeros([d or 0 for d in s.shape] if s.shape else (), s.dtype.np)
                                         for s in self.input_signature])
        return self._last

    @property
    def graph(self):
        """The graph of the most recent call (or of input_signature)."""
        return self._only().graph

    def save(self, path):
        self._only().save(path)


def _static_key(v):
    try:
        hash(v)
        return v
    except TypeError:
        return id(v)


def _returnable(out):
    """The function's result; a variable never assigned (a zero-trip Python
    loop, say) is a NameError, as it would be in Python."""
    from .autograph.runtime import Undefined
    if isinstance(out, Undefined) and out.is_return:
        return None
    for leaf in _nest.flatten(out):
        if isinstance(leaf, Undefined):
            leaf._fail()
    return out


def _note_user_line(e, fn):
    """Adds the user's deepest line in the traceback to an error raised while
    the converted function was building its graph."""
    try:
        file = inspect.getsourcefile(fn)
    except TypeError:
        return
    tb, hit = e.__traceback__, None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == file:
            hit = tb
        tb = tb.tb_next
    if hit is not None:
        import linecache
        src = linecache.getline(file, hit.tb_lineno).strip()
        e.add_note(f"(dfexec.function {fn.__name__}: at {file}:{hit.tb_lineno}: `{src}`)")


def function(fn=None, *, input_signature=None, static_argnames=()):
    """Decorator: converts a Python function's tensor-dependent control flow
    into graph control flow (AST conversion). See Function."""
    if fn is None:
        return lambda f: Function(f, input_signature, static_argnames)
    return Function(fn, input_signature, static_argnames)
