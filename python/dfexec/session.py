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


class _Fetch:
    """A flattened fetch structure: the leaf names and how to rebuild it."""
    __slots__ = ("names", "rebuild")


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


class Session:
    """Runs a Graph (or the graph file at a path).

    threads: worker threads (None or 0: one per core); inline_only=True runs
    every kernel on the calling thread. optimize: reserved for graph
    optimisation passes, which the C library does not have yet; it is
    accepted and ignored. max_iterations / timeout: defaults for run().
    """

    def __init__(self, graph, threads=None, optimize=None, inline_only=False,
                 max_iterations=None, timeout=None):
        if not isinstance(graph, Graph):
            graph = load(graph)
        self.graph = graph
        self.optimize = optimize
        self._handle = graph._handle()     # the session borrows this snapshot
        opts = SessionOptions(int(threads or 0), int(bool(inline_only)))
        out, st = ctypes.c_void_p(), status()
        check(lib.dfx_session_new(self._handle.ptr, ctypes.byref(opts), ctypes.byref(out), st), st)
        self._ptr = out.value
        self._defaults = (max_iterations, timeout)
        self._ports = {}        # tensor name -> (Port, DType or None) / target bytes
        self._active = 0
        self._cv = threading.Condition()

    # ---- lifetime -----------------------------------------------------------

    def close(self):
        """Frees the session. Runs still in progress are cancelled and waited for."""
        with self._cv:
            if not self._ptr:
                return
            if self._active:
                lib.dfx_session_cancel(self._ptr)
                self._cv.wait_for(lambda: self._active == 0)
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
        if self._ptr:
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

    # ---- running ----------------------------------------------------------------

    def run(self, fetches, feed_dict=None, *, max_iterations=None, timeout=None):
        """Runs one step: computes `fetches` with `feed_dict`'s values fed in.
        max_iterations: a loop frame may run at most this many iterations
        (LimitExceededError past it); timeout: seconds (DeadlineExceededError)."""
        single = not isinstance(fetches, (list, tuple, dict))
        if single:
            names, rebuild = [_leaf_name(fetches)], None
        else:
            names = []
            rebuild = _flatten(fetches, names)
        values = self._run(names, feed_dict, max_iterations, timeout)
        return values[0] if single else rebuild(iter(values))

    def _run(self, names, feed_dict, max_iterations, timeout):
        fetch_ports, targets, where = [], [], []
        for n in names:
            if n.startswith("^"):
                self._port(n[1:])           # checks that the node exists
                targets.append(n[1:].encode())
                where.append(None)
            else:
                where.append(len(fetch_ports))
                fetch_ports.append(self._port(n)[0])
        feeds = feed_dict or {}
        n_feeds, n_fetch, n_tgt = len(feeds), len(fetch_ports), len(targets)
        feed_ports = (Port * n_feeds)()
        feed_vals = (ctypes.c_void_p * n_feeds)()
        out_vals = (ctypes.c_void_p * n_fetch)()
        try:
            for j, (key, value) in enumerate(feeds.items()):
                name = _leaf_name(key)
                port, dt = self._port(name)
                if dt is None:
                    raise TypeError(f"cannot feed '{name}': its dtype has no numpy equivalent")
                try:
                    feed_vals[j] = _tensors.to_c(value, dt)
                except (TypeError, ValueError) as e:
                    raise type(e)(f"cannot feed '{name}' ({dt.name}): {e}") from None
                feed_ports[j] = port
            ro = self._run_options(max_iterations, timeout)
            st = status()
            with self._cv:
                if not self._ptr:
                    raise DfexecError("the session is closed")
                self._active += 1
            try:
                code = lib.dfx_session_run(self._ptr, ro, feed_ports, feed_vals, n_feeds,
                                           (Port * n_fetch)(*fetch_ports), out_vals, n_fetch,
                                           (ctypes.c_char_p * n_tgt)(*targets), n_tgt, st)
            finally:
                with self._cv:
                    self._active -= 1
                    if not self._active:
                        self._cv.notify_all()
            check(code, st)
            results = [_tensors.from_c(t) for t in out_vals]
        finally:
            for t in out_vals:
                if t:
                    lib.dfx_tensor_free(t)
            for t in feed_vals:
                if t:
                    lib.dfx_tensor_free(t)
        return [None if w is None else results[w] for w in where]

    def _run_options(self, max_iterations, timeout):
        mi = max_iterations if max_iterations is not None else self._defaults[0]
        to = timeout if timeout is not None else self._defaults[1]
        if not mi and not to:
            return None
        return ctypes.byref(RunOptions(float(to or 0), int(mi or 0)))
