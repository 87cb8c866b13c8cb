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
from ._lib import PlaceholderC, lib
from .errors import FileIOError, UnimplementedError, check, status

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


def _is_text(path):
    return path.endswith((".pbtxt", ".txt"))


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
        self._source = None        # (path, bytes) of a loaded graph
        self._info = None          # cached introspection of the snapshot
        self._state = _build.BuildState()
        self._lock = threading.Lock()   # finalising touches the builder, which is single-threaded

    @classmethod
    def _loaded(cls, handle, path, data):
        g = cls.__new__(cls)
        g._builder = None
        g._snapshot, g._snapshot_nodes, g._source, g._info, g._state = handle, -1, (path, data), None, None
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
        .pbtxt or .txt, binary protobuf otherwise. A loaded graph can only be
        saved in the format it was read in (the C API has no serialiser for
        imported graphs; `dfexec convert IN OUT` converts files)."""
        path = os.fspath(path)
        if self._builder is not None:
            st = status()
            with self._lock:
                check(lib.dfx_builder_save(self._builder, path.encode(), st), st, f"saving {path}")
            return
        src, data = self._source
        text_in = data.lstrip()[:1].isalpha() or _is_text(src)
        if text_in != _is_text(path):
            raise UnimplementedError(f"{src} is in {'text' if text_in else 'binary'} format; "
                                     f"use `dfexec convert {src} {path}` to convert it")
        try:
            with open(path, "wb") as f:
                f.write(data)
        except OSError as e:
            raise FileIOError(f"saving {path}: {e}") from e

    def serialize(self, text=False):
        """The GraphDef as bytes (binary protobuf, or text format)."""
        if self._builder is None:
            raise UnimplementedError("serialize() is for graphs built in Python; "
                                     "a loaded graph's bytes are its file")
        buf, n, st = ctypes.c_void_p(), ctypes.c_size_t(), status()
        with self._lock:
            check(lib.dfx_builder_serialize(self._builder, int(bool(text)), ctypes.byref(buf),
                                            ctypes.byref(n), st), st)
        try:
            return ctypes.string_at(buf.value, n.value)
        finally:
            lib.dfx_free(buf)

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


def load(path):
    """Reads a GraphDef file (.pb binary, .pbtxt/.txt text) into a Graph."""
    path = os.fspath(path)
    out, st = ctypes.c_void_p(), status()
    check(lib.dfx_graph_load(path.encode(), ctypes.byref(out), st), st)
    h = _Handle(out.value)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise FileIOError(f"{path}: {e}") from e
    return Graph._loaded(h, path, data)
