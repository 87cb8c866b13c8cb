"""Sessions: run a graph with numpy feeds and fetches, with the calling
conventions of tf.compat.v1.Session.run.

Fetches may be a tensor name ("add", "add:0", "^add" for a target that
returns None), a Tensor from dfexec.ops, or any nesting of lists, tuples,
namedtuples and dicts of those; the result has the same structure. Feed keys
are names or Tensors; each value is converted with np.asarray(value,
dtype=<the graph's dtype>) before it is fed, because the C API rejects a
feed whose dtype differs from the placeholder's.

The C call releases the GIL, so Python threads can run one session at once.
"""
import ctypes
import threading
import time

from . import _tensors, dtypes
from ._lib import Port, RunOptions, SessionOptions, lib
from .errors import DfexecError, NotFoundError, check, status
from .graph import Graph, load


def _split(name):
    """ "node:k" -> ("node", k); "node" -> ("node", 0)."""
    node, sep, idx = name.rpartition(":")
    if sep and idx.isdigit():
        return node, int(idx)
    return name, 0


def _leaf_name(x):
    if isinstance(x, str):
        return x
    name = getattr(x, "name", None)
    if isinstance(name, str):
        return name
    raise TypeError(f"cannot fetch or feed {type(x).__name__} {x!r}: "
                    "use a tensor name ('node:0') or a dfexec Tensor")


def _flatten(fetches, names):
    """Appends leaves of `fetches` to `names`; returns a rebuild function
    taking the iterator of leaf values."""
    if isinstance(fetches, dict):
        keys = list(fetches)
        parts = [_flatten(fetches[k], names) for k in keys]
        cls = type(fetches)
        return lambda it: cls(zip(keys, [p(it) for p in parts]))
    if isinstance(fetches, (list, tuple)):
        parts = [_flatten(f, names) for f in fetches]
        if isinstance(fetches, tuple) and hasattr(fetches, "_fields"):
            cls = type(fetches)
            return lambda it: cls(*[p(it) for p in parts])
        cls = type(fetches)
        return lambda it: cls([p(it) for p in parts])
    names.append(_leaf_name(fetches))
    return next


_NO_TENSORS = (ctypes.c_void_p * 0)()


class _Plan:
    """The C arrays for one combination of fetches and feed keys, made once
    and reused (they are only read by C, so threads may share them)."""

    def __init__(self, session, names, feed_keys):
        fetch, targets, where = [], [], []
        for n in names:
            if n.startswith("^"):
                session._port(n[1:])           # checks that the node exists
                targets.append(n[1:].encode())
                where.append(None)
            else:
                where.append(len(fetch))
                fetch.append(session._port(n))
        self.where = where if targets else None
        self.n_fetch, self.n_targets = len(fetch), len(targets)
        self.fetch_ports = (Port * len(fetch))(*[p for p, _ in fetch])
        self.fetch_dtypes = [dt for _, dt in fetch]
        self.out_array = ctypes.c_void_p * len(fetch)
        self.targets = (ctypes.c_char_p * len(targets))(*targets)
        self.feed_names = [_leaf_name(k) for k in feed_keys]
        ports = [session._port(n) for n in self.feed_names]
        for name, (_, dt) in zip(self.feed_names, ports):
            if dt is None:
                raise TypeError(f"cannot feed '{name}': its dtype has no numpy equivalent")
        self.feed_ports = (Port * len(ports))(*[p for p, _ in ports])
        self.feed_dtypes = [dt for _, dt in ports]


class Session:
    """Runs a Graph (or the graph file at a path).

    threads: worker threads (None or 0: one per core); inline_only=True runs
    every kernel on the calling thread. optimize: the graph optimisation the
    session applies before planning each run signature (the graph itself is
    not changed): None or "default" for the default pipeline, "none" for
    none, or a comma-separated list of pass names (dfexec.optimize_passes()).
    max_iterations / timeout: defaults for run().
    """

    def __init__(self, graph, threads=None, optimize=None, inline_only=False,
                 max_iterations=None, timeout=None):
        if not isinstance(graph, Graph):
            graph = load(graph)
        self.graph = graph
        self.optimize = optimize
        self._handle = graph._handle()     # the session borrows this snapshot
        if optimize is not None and not isinstance(optimize, str):
            raise TypeError(f"optimize must be None or a string, not {type(optimize).__name__}")
        self._optimize_arg = optimize.encode() if optimize is not None else None  # borrowed by dfx_session_new
        opts = SessionOptions(int(threads or 0), int(bool(inline_only)), self._optimize_arg)
        out, st = ctypes.c_void_p(), status()
        check(lib.dfx_session_new(self._handle.ptr, ctypes.byref(opts), ctypes.byref(out), st), st)
        self._ptr = out.value
        self._defaults = (max_iterations, timeout)
        self._ports = {}        # tensor name -> (Port, DType or None)
        self._plans = {}        # (fetch names, feed keys) -> _Plan
        self._running = set()   # one token per run in progress (set.add/discard are atomic)
        self._closed = False
        self._close_lock = threading.Lock()

    # ---- lifetime -----------------------------------------------------------

    def close(self):
        """Frees the session. Runs still in progress are cancelled and waited for."""
        with self._close_lock:
            if self._closed:
                return
            self._closed = True      # runs starting from now on refuse
            if self._running:
                lib.dfx_session_cancel(self._ptr)
                while self._running:
                    time.sleep(0.001)
            ptr, self._ptr = self._ptr, None
        lib.dfx_session_free(ptr)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        if getattr(self, "_ptr", None):
            lib.dfx_session_free(self._ptr)

    def cancel(self):
        """Makes every run in progress stop with CancelledError (any thread)."""
        if not self._closed:
            lib.dfx_session_cancel(self._ptr)

    # ---- names --------------------------------------------------------------

    def _port(self, name):
        """(Port, DType) for a tensor name, checked against the graph."""
        try:
            return self._ports[name]
        except KeyError:
            pass
        node, idx = _split(name)
        g = self._handle.ptr
        i = lib.dfx_graph_node_find(g, node.encode())
        if i < 0:
            raise NotFoundError(f"the graph has no node '{node}' (from '{name}')", -2)
        nout = lib.dfx_graph_node_num_outputs(g, i)
        if idx >= nout:
            raise NotFoundError(f"node '{node}' ({lib.dfx_graph_node_op(g, i).decode()}) has "
                                f"{nout} output(s); '{name}' asks for output {idx}", -2)
        try:
            dt = dtypes.from_enum(lib.dfx_graph_node_output_dtype(g, i, idx))
        except TypeError:
            dt = None
        entry = self._ports[name] = (Port(node.encode(), idx), dt)
        return entry

    def _plan(self, names, feed_keys):
        key = (names, feed_keys)
        plan = self._plans.get(key)
        if plan is None:
            plan = _Plan(self, names, feed_keys)
            if len(self._plans) < 1024:
                self._plans[key] = plan
        return plan

    # ---- running ----------------------------------------------------------------

    def run(self, fetches, feed_dict=None, *, max_iterations=None, timeout=None):
        """Runs one step: computes `fetches` with `feed_dict`'s values fed in.
        max_iterations: a loop frame may run at most this many iterations
        (LimitExceededError past it); timeout: seconds (DeadlineExceededError)."""
        if isinstance(fetches, (list, tuple, dict)):
            names = []
            rebuild = _flatten(fetches, names)
            return rebuild(iter(self._run(tuple(names), feed_dict, max_iterations, timeout)))
        return self._run((_leaf_name(fetches),), feed_dict, max_iterations, timeout)[0]

    def _run(self, names, feed_dict, max_iterations, timeout):
        feeds = feed_dict or {}
        plan = self._plan(names, tuple(feeds))
        feed_vals = (ctypes.c_void_p * len(feeds))() if feeds else _NO_TENSORS
        out_vals = plan.out_array()
        ro = None if max_iterations is None and timeout is None and self._defaults == (None, None) \
            else self._run_options(max_iterations, timeout)
        token = object()
        try:
            for j, value in enumerate(feeds.values()):
                try:
                    feed_vals[j] = _tensors.to_c(value, plan.feed_dtypes[j])
                except (TypeError, ValueError) as e:
                    raise type(e)(f"cannot feed '{plan.feed_names[j]}' ({plan.feed_dtypes[j].name}): {e}") from None
            st = status()
            self._running.add(token)
            if self._closed:
                raise DfexecError("the session is closed")
            code = lib.dfx_session_run(self._ptr, ro, plan.feed_ports, feed_vals, len(feeds), plan.fetch_ports,
                                       out_vals, plan.n_fetch, plan.targets, plan.n_targets, st)
            self._running.discard(token)
            if code:
                check(code, st)
            results = [_tensors.from_c(t, dt) for t, dt in zip(out_vals, plan.fetch_dtypes)]
        finally:
            self._running.discard(token)
            for t in out_vals:
                if t:
                    lib.dfx_tensor_free(t)
            for t in feed_vals:
                if t:
                    lib.dfx_tensor_free(t)
        if plan.where is None:
            return results
        return [None if w is None else results[w] for w in plan.where]

    def _run_options(self, max_iterations, timeout):
        mi = max_iterations if max_iterations is not None else self._defaults[0]
        to = timeout if timeout is not None else self._defaults[1]
        if not mi and not to:
            return None
        return ctypes.byref(RunOptions(float(to or 0), int(mi or 0)))
