"""Graphs: loaded from a GraphDef file or built with dfexec.ops, and what
can be asked of them (nodes, ops, placeholders with shapes, loop frames).

A Graph built in Python wraps a dfx_builder; it is finalised into an
imported dfx_graph (a snapshot) when a session or an introspection needs
one, and again after more nodes were added. Snapshots are reference counted
by the Python objects (Session, Graph) that use them, because a session
borrows its graph.
"""
import ctypes
import os
import threading
from collections import namedtuple

from . import dtypes
from ._lib import OptimizeOptions, OptimizeReport, PlaceholderC, Port, lib
from .errors import check, status

Node = namedtuple("Node", "name op frame inputs control_inputs output_dtypes")
Node.__doc__ = """One node: `inputs` as "node:k" strings, `frame` "" for the root frame."""
Placeholder = namedtuple("Placeholder", "name dtype shape has_default")
Placeholder.__doc__ = """A graph input: shape is a tuple (None for an unknown dim) or None for an unknown rank."""
Frame = namedtuple("Frame", "name parent parallel_iterations nodes")
Frame.__doc__ = """A while-loop frame: its parent frame ("" = root) and the names of its nodes."""


class _Handle:
    """Owns one imported dfx_graph; freed when nothing holds it any more."""
    __slots__ = ("ptr", "__weakref__")

    def __init__(self, ptr):
        self.ptr = ptr

    def __del__(self, free=lib.dfx_graph_free):
        free(self.ptr)


class Graph:
    """A dataflow graph. `Graph()` starts an empty one to build with
    dfexec.ops (use `with g.as_default():`); `dfexec.load(path)` reads one."""

    def __init__(self):
        from . import _build
        self._builder = lib.dfx_builder_new()
        if not self._builder:
            raise MemoryError("dfx_builder_new")
        self._snapshot = None      # _Handle of the last finalisation
        self._snapshot_nodes = -1  # builder node count it was made at
        self._path = None          # the file a loaded graph came from
        self._info = None          # cached introspection of the snapshot
        self._state = _build.BuildState()
        self._lock = threading.Lock()   # finalising touches the builder, which is single-threaded

    @classmethod
    def _loaded(cls, handle, path):
        g = cls.__new__(cls)
        g._builder = None
        g._snapshot, g._snapshot_nodes, g._path, g._info, g._state = handle, -1, path, None, None
        g._lock = threading.Lock()
        return g

    def __del__(self, free=lib.dfx_builder_free):
        if getattr(self, "_builder", None):
            free(self._builder)

    # ---- building -------------------------------------------------------

    def as_default(self):
        """Context manager: dfexec.ops add their nodes to this graph."""
        from . import _build
        return _build.default_graph(self)

    @property
    def building(self):
        """True for a graph made in Python (it can grow); False for a loaded one."""
        return self._builder is not None

    def _handle(self):
        """The current imported snapshot (finalising the builder if it grew)."""
        if self._builder is not None:
            with self._lock:
                n = lib.dfx_builder_node_count(self._builder)
                if self._snapshot is None or n != self._snapshot_nodes:
                    out, st = ctypes.c_void_p(), status()
                    check(lib.dfx_builder_to_graph(self._builder, ctypes.byref(out), st), st)
                    self._snapshot, self._snapshot_nodes, self._info = _Handle(out.value), n, None
        return self._snapshot

    def save(self, path):
        """Writes the GraphDef: TensorFlow's text format for names ending in
        .pbtxt or .txt, binary protobuf otherwise."""
        path = os.fspath(path)
        st = status()
        if self._builder is not None:
            with self._lock:
                check(lib.dfx_builder_save(self._builder, path.encode(), st), st, f"saving {path}")
            return
        check(lib.dfx_graph_save(self._snapshot.ptr, path.encode(), st), st, f"saving {path}")

    def serialize(self, text=False):
        """The GraphDef as bytes (binary protobuf, or text format)."""
        buf, n, st = ctypes.c_void_p(), ctypes.c_size_t(), status()
        if self._builder is not None:
            with self._lock:
                check(lib.dfx_builder_serialize(self._builder, int(bool(text)), ctypes.byref(buf),
                                                ctypes.byref(n), st), st)
        else:
            check(lib.dfx_graph_serialize(self._snapshot.ptr, int(bool(text)), ctypes.byref(buf),
                                          ctypes.byref(n), st), st)
        try:
            return ctypes.string_at(buf.value, n.value)
        finally:
            lib.dfx_free(buf)

    def optimize(self, passes=None, fetches=(), feeds=(), targets=(), report=False):
        """A new Graph: this one after the graph optimisation passes.

        passes: None or "default" (the default pipeline), "none", or a
        comma-separated list of pass names (dfexec.optimize_passes()).
        fetches / feeds / targets: tensor names ("node:k" or "node") and node
        names that runs will use; with fetches or targets the result is
        pruned to what they need, and all of them keep their names. Without
        any, every placeholder and output is kept and nothing is pruned.
        report=True returns (graph, report) where report is a dict with
        nodes_before, nodes_after and one entry per pass run in "passes"."""
        from .session import _split
        h = self._handle()
        keep = []                  # the bytes objects the C structs point into
        def ports(names):
            arr = (Port * max(len(names), 1))()
            for i, name in enumerate(names):
                node, idx = _split(_name_of(name))
                b = node.encode()
                keep.append(b)
                arr[i] = Port(b, idx)
            return arr
        fetches, feeds, targets = list(fetches), list(feeds), list(targets)
        tb = [_name_of(t).encode() for t in targets]
        targ = (ctypes.c_char_p * max(len(tb), 1))(*tb)
        pb = passes.encode() if passes is not None else None
        oo = OptimizeOptions(pb, ports(feeds), len(feeds), ports(fetches), len(fetches), targ, len(tb))
        out, st, rep = ctypes.c_void_p(), status(), OptimizeReport()
        check(lib.dfx_graph_optimize(h.ptr, ctypes.byref(oo), ctypes.byref(out), ctypes.byref(rep), st), st)
        g = Graph._loaded(_Handle(out.value), None)
        if not report:
            lib.dfx_optimize_report_free(ctypes.byref(rep))
            return g
        r = {"nodes_before": rep.nodes_before, "nodes_after": rep.nodes_after,
             "passes": [{"pass": s.pass_.decode(), "round": s.round, "removed": s.removed, "added": s.added,
                         "rewritten": s.rewritten, "ms": s.ms} for s in rep.stats[:rep.n_stats]]}
        lib.dfx_optimize_report_free(ctypes.byref(rep))
        return g, r

    # ---- introspection ----------------------------------------------------

    def _introspect(self):
        h = self._handle()
        info = self._info
        if info is None:
            info = self._info = _read_info(h.ptr)
        return info

    @property
    def nodes(self):
        """Every node, in the graph's order, as Node tuples."""
        return self._introspect()[0]

    def node(self, name):
        """The Node called `name`; KeyError if there is none."""
        return self._introspect()[1][name]

    def __contains__(self, name):
        return name in self._introspect()[1]

    @property
    def ops(self):
        """The sorted set of op types the graph uses."""
        return sorted({n.op for n in self.nodes})

    @property
    def placeholders(self):
        """The graph's inputs (Placeholder, PlaceholderWithDefault), in node order."""
        return self._introspect()[2]

    @property
    def frames(self):
        """The while-loop frames, outermost first."""
        return self._introspect()[3]


def _read_info(g):
    nodes = []
    for i in range(lib.dfx_graph_node_count(g)):
        ins = []
        for k in range(lib.dfx_graph_node_num_inputs(g, i)):
            p = lib.dfx_graph_node_input(g, i, k)
            ins.append(f"{p.node.decode()}:{p.index}")
        ctl = [lib.dfx_graph_node_name(g, lib.dfx_graph_node_control_input(g, i, k)).decode()
               for k in range(lib.dfx_graph_node_num_control_inputs(g, i))]
        outs = []
        for k in range(lib.dfx_graph_node_num_outputs(g, i)):
            try:
                outs.append(dtypes.from_enum(lib.dfx_graph_node_output_dtype(g, i, k)))
            except TypeError:
                outs.append(None)   # resource / variant
        nodes.append(Node(lib.dfx_graph_node_name(g, i).decode(), lib.dfx_graph_node_op(g, i).decode(),
                          lib.dfx_graph_node_frame(g, i).decode(), tuple(ins), tuple(ctl), tuple(outs)))
    by_name = {n.name: n for n in nodes}
    return nodes, by_name, _read_placeholders(g), _read_frames(g, nodes)


def _read_placeholders(g):
    n = lib.dfx_graph_placeholders(g, None, 0)
    arr = (PlaceholderC * max(n, 1))()
    lib.dfx_graph_placeholders(g, arr, n)
    out = []
    for p in arr[:n]:
        shape = None if p.rank < 0 else tuple(None if p.dims[d] < 0 else p.dims[d] for d in range(p.rank))
        out.append(Placeholder(p.name.decode(), dtypes.from_enum(p.dtype), shape, bool(p.has_default)))
    return out


def _read_frames(g, nodes):
    """Frames from the Enter nodes: an Enter in frame P entering F makes P F's parent."""
    parents, pis = {}, {}
    st = status()
    s, v = ctypes.c_char_p(), ctypes.c_int64()
    for i, n in enumerate(nodes):
        if n.op in ("Enter", "RefEnter"):
            if lib.dfx_graph_node_attr_string(g, i, b"frame_name", ctypes.byref(s), None, st) == 0:
                parents.setdefault(s.value.decode(), n.frame)
            if lib.dfx_graph_node_attr_int(g, i, b"parallel_iterations", ctypes.byref(v), st) == 0:
                pis.setdefault(s.value.decode(), v.value)
    members = {}
    for n in nodes:
        if n.frame:
            members.setdefault(n.frame, []).append(n.name)

    def depth(f):
        return 0 if not f else 1 + depth(parents.get(f, ""))
    return [Frame(f, parents.get(f, ""), pis.get(f), tuple(members.get(f, ())))
            for f in sorted(set(parents) | set(members), key=lambda f: (depth(f), f))]


def _name_of(t):
    """A tensor or node name from a str or a Tensor."""
    return t if isinstance(t, str) else t.name


def optimize_passes():
    """The optimisation passes in pipeline order: a list of (name, purpose,
    in_default_pipeline)."""
    out, i = [], 0
    while True:
        purpose, dflt = ctypes.c_char_p(), ctypes.c_int()
        name = lib.dfx_optimize_pass(i, ctypes.byref(purpose), ctypes.byref(dflt))
        if not name:
            return out
        out.append((name.decode(), purpose.value.decode(), bool(dflt.value)))
        i += 1


def load(path):
    """Reads a GraphDef file (.pb binary, .pbtxt/.txt text) into a Graph."""
    path = os.fspath(path)
    out, st = ctypes.c_void_p(), status()
    check(lib.dfx_graph_load(path.encode(), ctypes.byref(out), st), st)
    return Graph._loaded(_Handle(out.value), path)
