"""Tracing (like torch.jit.trace): run a Python function once on example
inputs, with placeholders in their place, and keep the ops it executed as the
graph.

Where Python asks a tensor for its value (an `if` or `while` on a tensor,
int(), float(), range(tensor)), the tracer runs the graph built so far on the
example inputs to answer, and warns with a TracingWarning naming the source
line: from there on the graph only holds the path the example took (a loop
unrolled for the example's trip count, one branch of an `if`).
"""
import inspect
import os
import sys
import warnings

import numpy as np

from . import _build, dtypes
from ._lib import lib
from .graph import Graph

_PKG_DIR = os.path.dirname(os.path.abspath(__file__))


class TracingWarning(UserWarning):
    """The traced graph depends on a value the example inputs decided."""


def user_frame():
    """The innermost stack frame outside the dfexec package (the user's code)."""
    f = sys._getframe(1)
    while f is not None and os.path.abspath(f.f_code.co_filename).startswith(_PKG_DIR + os.sep):
        f = f.f_back
    return f


def user_location():
    """ "file:line: `source`" of the user's code calling into dfexec."""
    f = user_frame()
    if f is None:
        return "<unknown>"
    import linecache
    src = linecache.getline(f.f_code.co_filename, f.f_lineno).strip()
    return f"{f.f_code.co_filename}:{f.f_lineno}" + (f": `{src}`" if src else "")


class Tracer:
    """Answers value questions during a trace by running the partial graph."""

    def __init__(self, graph, feeds):
        self.graph = graph
        self.feeds = feeds          # placeholder Tensor -> example value
        self.decisions = []         # (file, line, how, value) of every baked-in decision
        self._session = None
        self._session_nodes = -1

    def concretize(self, t, how):
        from .session import Session
        g = self.graph
        if g._state.ctx_depth:
            raise TypeError(f"{user_location()}: {how} inside an ops.while_loop/ops.cond body cannot be traced")
        n = lib.dfx_builder_node_count(g._builder)
        if self._session is None or n != self._session_nodes:
            if self._session is not None:
                self._session.close()
            self._session, self._session_nodes = Session(g, threads=1, inline_only=True), n
        value = self._session.run(t, self.feeds)
        f = user_frame()
        file, line = (f.f_code.co_filename, f.f_lineno) if f else ("<unknown>", 0)
        self.decisions.append((file, line, how, value))
        warnings.warn_explicit(
            f"{how} used the traced value of {t.name}; the graph is fixed to the path the example "
            "inputs took here and is wrong for inputs that take another one (use dfexec.function to "
            "convert the control flow instead)", TracingWarning, file, line)
        return value

    def close(self):
        if self._session is not None:
            self._session.close()


def trace(fn, *example_args):
    """Traces fn(*example_args) into a GraphFunction. Every argument becomes
    a placeholder with the dtype and shape of np.asarray(arg)."""
    from .function import GraphFunction
    g = Graph()
    names = _param_names(fn, len(example_args))
    values = [np.asarray(a, dtype=object) if dtypes.as_dtype(np.asarray(a).dtype) is dtypes.string
              else np.asarray(a) for a in example_args]
    with g.as_default():
        phs = [_build.make_placeholder(g, dtypes.as_dtype(v.dtype), v.shape, n) for v, n in zip(values, names)]
        tracer = g._state.tracer = Tracer(g, dict(zip(phs, values)))
        try:
            out = fn(*phs)
        finally:
            g._state.tracer = None
            tracer.close()
    gf = GraphFunction(g, phs, out, getattr(fn, "__name__", "traced"))
    gf.decisions = tracer.decisions
    return gf


def _param_names(fn, n):
    try:
        params = [p.name for p in inspect.signature(fn).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    return [params[i] if i < len(params) else f"arg{i}" for i in range(n)]
