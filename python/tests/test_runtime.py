"""Runtime: loading, introspection, every dtype in and out, the fetch and
feed forms of tf.compat.v1.Session.run, zero-copy feeds, run options."""
import collections
import os

import numpy as np
import pytest

import dfexec
from dfexec import _tensors, ops

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "graphs")


def _loop_graph():
    g = dfexec.Graph()
    with g.as_default():
        x = ops.placeholder("float32", [None, 2], name="x")
        n = ops.placeholder("int32", [], name="n")
        i, acc = ops.while_loop(lambda i, a: i < n, lambda i, a: (i + 1, a * 2.0), [0, x], name="loop")
        ops.identity(i, name="iterations")
        ops.identity(acc, name="result")
    return g


def test_load_and_run_example_graph():
    g = dfexec.load(os.path.join(EXAMPLES, "counter_loop.pbtxt"))
    assert not g.building
    with dfexec.Session(g) as s:
        out = s.run("while/Exit:0")
    assert out.dtype == np.int32 and out.shape == () and out == 10


def test_introspection():
    g = _loop_graph()
    names = [n.name for n in g.nodes]
    assert "loop/LoopCond" in names and "result" in g
    assert {"Enter", "Exit", "Merge", "Switch", "NextIteration", "LoopCond", "Placeholder"} <= set(g.ops)
    phs = {p.name: p for p in g.placeholders}
    assert phs["x"].dtype is dfexec.dtypes.float32 and phs["x"].shape == (None, 2)
    assert phs["n"].shape == () and not phs["n"].has_default
    (frame,) = g.frames
    assert frame.name == "loop/while_context" and frame.parent == "" and frame.parallel_iterations == 10
    assert "loop/LoopCond" in frame.nodes and "result" not in frame.nodes
    mul = g.node(next(n for n in names if n.startswith("loop/Mul")))
    assert mul.frame == "loop/while_context" and mul.output_dtypes == (dfexec.dtypes.float32,)
    assert g.node("result").inputs == ("loop/Exit_1:0",)


def test_nested_frames_have_parents():
    g = dfexec.Graph()
    with g.as_default():
        n = ops.placeholder("int32", [], name="n")

        def outer(i, t):
            _, t2 = ops.while_loop(lambda j, u: j < n, lambda j, u: (j + 1, u + 1), [0, t], name="inner")
            return i + 1, t2
        ops.while_loop(lambda i, t: i < n, outer, [0, 0], name="outer")
    frames = {f.name: f for f in g.frames}
    assert frames["outer/inner/while_context"].parent == "outer/while_context"
    assert [f.name for f in g.frames][0] == "outer/while_context"


@pytest.mark.parametrize("ext", ["pb", "pbtxt"])
def test_save_load_roundtrip(tmp_path, ext):
    path = str(tmp_path / f"g.{ext}")
    _loop_graph().save(path)
    g = dfexec.load(path)
    x = np.array([[1, 2], [3, 4]], np.float32)
    out = dfexec.Session(g).run(["result", "iterations"], {"x": x, "n": 3})
    np.testing.assert_array_equal(out[0], x * 8)
    assert out[1] == 3
    g.save(str(tmp_path / f"again.{ext}"))        # the loaded graph, written by dfexec
    assert open(str(tmp_path / f"again.{ext}"), "rb").read() == open(path, "rb").read()
    other = "pbtxt" if ext == "pb" else "pb"
    g.save(str(tmp_path / f"x.{other}"))          # and in the other format
    out = dfexec.Session(dfexec.load(str(tmp_path / f"x.{other}"))).run("result", {"x": x, "n": 2})
    np.testing.assert_array_equal(out, x * 4)
    assert g.serialize(text=True).decode().count("node {") == len(g.nodes)


def test_optimize_graph(tmp_path):
    names = [p[0] for p in dfexec.optimize_passes()]
    assert {"prune", "identity", "constfold", "cse"} <= set(names)
    g = dfexec.Graph()
    with g.as_default():
        x = dfexec.ops.placeholder("float32", (), name="x")
        five = dfexec.ops.add(dfexec.ops.constant(2.0), dfexec.ops.constant(3.0), name="five")
        y = dfexec.ops.multiply(x, five, name="y")
        dfexec.ops.negative(x, name="unused")
    og, rep = g.optimize(fetches=[y], report=True)
    assert rep["nodes_before"] == len(g.nodes) and rep["nodes_after"] == len(og.nodes) < len(g.nodes)
    assert "unused" not in og and og.node("five").op == "Const"
    assert any(r["pass"] == "constfold" and r["rewritten"] for r in rep["passes"])
    assert dfexec.Session(og).run("y", {"x": 1.5}) == dfexec.Session(g).run("y", {"x": 1.5}) == 7.5
    assert len(g.optimize(passes="none").nodes) == len(g.nodes)
    og.save(str(tmp_path / "o.pbtxt"))
    assert dfexec.Session(dfexec.load(str(tmp_path / "o.pbtxt"))).run("y", {"x": 2.0}) == 10.0
    with pytest.raises(dfexec.InvalidArgumentError, match="unknown pass"):
        g.optimize(passes="nope")
    with pytest.raises(dfexec.NotFoundError, match="did you mean"):
        g.optimize(fetches=["yy"])


def test_serialize_text_is_graphdef():
    text = _loop_graph().serialize(text=True).decode()
    assert 'op: "LoopCond"' in text and 'name: "result"' in text


# ---- dtypes ----------------------------------------------------------------------

NUMERIC = ["float32", "float64", "float16", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
           "uint64", "complex64", "complex128", "bool", "qint8", "quint8", "qint16", "quint16", "qint32"]


def _identity_graph(dtype, shape=None):
    g = dfexec.Graph()
    with g.as_default():
        x = ops.placeholder(dtype, shape, name="x")
        ops.identity(x, name="y")
    return g


@pytest.mark.parametrize("dtype", NUMERIC)
def test_every_numeric_dtype_roundtrips(dtype):
    dt = dfexec.as_dtype(dtype)
    rng = np.random.default_rng(1)
    value = (rng.random((3, 4)) * 100).astype(dt.np)
    if dt.is_complex:
        value = value + 1j * value[::-1]
    out = dfexec.Session(_identity_graph(dtype)).run("y:0", {"x": value})
    assert out.dtype == dt.np and out.shape == (3, 4)
    np.testing.assert_array_equal(out, value)


def test_bfloat16_converts_through_float32():
    value = np.array([1.0, 1.5, -3.25, 1 / 3, 65504.0], np.float32)
    out = dfexec.Session(_identity_graph("bfloat16")).run("y", {"x": value})
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, value, rtol=2 ** -8)
    assert out[1] == 1.5 and out[2] == -3.25     # exactly representable values survive


def test_strings_come_back_as_bytes():
    value = np.array([[b"a", "\u00e9t\u00e9"], [b"", b"x\x00y"]], dtype=object)
    out = dfexec.Session(_identity_graph("string")).run("y", {"x": value})
    assert out.dtype == object and out.shape == (2, 2)
    assert out.tolist() == [[b"a", "\u00e9t\u00e9".encode()], [b"", b"x\x00y"]]


def test_string_ops_and_constants():
    g = dfexec.Graph()
    with g.as_default():
        a = ops.constant([b"ab", b"c"])
        ops.add(a, ops.placeholder("string", [2], name="s"), name="cat")
    assert dfexec.Session(g).run("cat", {"s": ["1", "2"]}).tolist() == [b"ab1", b"c2"]


def test_zero_size_and_high_rank():
    s = dfexec.Session(_identity_graph("float64"))
    assert s.run("y", {"x": np.zeros((0, 3))}).shape == (0, 3)
    v = np.arange(256, dtype=np.float64).reshape((2,) * 8)
    np.testing.assert_array_equal(s.run("y", {"x": v}), v)
    with pytest.raises(ValueError, match="at most 8"):
        s.run("y", {"x": np.zeros((1,) * 9)})


# ---- feeds ---------------------------------------------------------------------------

def test_feeds_convert_numpy_style():
    s = dfexec.Session(_identity_graph("float32"))
    out = s.run("y", {"x": [[1, 2], [3, 4]]})           # ints into a float placeholder
    assert out.dtype == np.float32 and out.tolist() == [[1, 2], [3, 4]]
    s = dfexec.Session(_identity_graph("int32"))
    assert s.run("y", {"x": np.array([1.9, -1.9])}).tolist() == [1, -1]  # np.asarray truncates
    with pytest.raises(ValueError, match="cannot feed 'x'"):
        s.run("y", {"x": "not a number"})


def test_feed_shape_is_checked_by_c():
    s = dfexec.Session(_identity_graph("float32", [2]))
    with pytest.raises(dfexec.InvalidArgumentError, match="placeholder 'x' requires"):
        s.run("y", {"x": [1.0, 2.0, 3.0]})


def test_large_aligned_feed_is_wrapped_and_released(monkeypatch):
    seen = []
    real = _tensors.lib

    class Spy:
        def __getattr__(self, name):
            return getattr(real, name)

        def dfx_tensor_new_wrap(self, *a):
            seen.append(a[3])
            return real.dfx_tensor_new_wrap(*a)
    monkeypatch.setattr(_tensors, "lib", Spy())
    s = dfexec.Session(_identity_graph("float64"))
    big = np.arange(100_000, dtype=np.float64)
    np.testing.assert_array_equal(s.run("y", {"x": big}), big)
    assert seen == [big.ctypes.data]                       # handed over in place
    assert not _tensors._wrapped                           # and let go by C's release callback
    strided = np.arange(200_000, dtype=np.float64)[::2]
    np.testing.assert_array_equal(s.run("y", {"x": strided}), strided)
    assert len(seen) == 1                                  # a strided array is copied


def test_outputs_are_fresh_writable_arrays():
    g = dfexec.Graph()
    with g.as_default():
        ops.constant(np.arange(10000, dtype=np.float32), name="c")
    s = dfexec.Session(g)
    a = s.run("c")
    a[:] = -1
    np.testing.assert_array_equal(s.run("c"), np.arange(10000, dtype=np.float32))


# ---- fetch forms ----------------------------------------------------------------------

Pair = collections.namedtuple("Pair", "result iterations")


def test_fetch_forms():
    g = _loop_graph()
    s = dfexec.Session(g)
    feeds = {"x:0": np.ones((1, 2), np.float32), "n": 2}
    four = np.full((1, 2), 4, np.float32)
    np.testing.assert_array_equal(s.run("result", feeds), four)
    np.testing.assert_array_equal(s.run("result:0", feeds), four)
    assert isinstance(s.run(["iterations", "result"], feeds), list)
    t = s.run(("iterations", "result:0"), feeds)
    assert isinstance(t, tuple) and t[0] == 2
    d = s.run({"a": "iterations", "b": ["result", {"c": "iterations:0"}]}, feeds)
    assert d["a"] == 2 and d["b"][1]["c"] == 2
    p = s.run(Pair("result", "iterations"), feeds)
    assert isinstance(p, Pair) and p.iterations == 2
    assert s.run(["^result", "iterations"], feeds) == [None, 2]
    assert s.run([], feeds) == []


def test_fetch_and_feed_with_tensor_objects():
    g = dfexec.Graph()
    with g.as_default():
        x = ops.placeholder("float64", [3], name="x")
        y = ops.reduce_sum(x * x)
    s = dfexec.Session(g)
    assert s.run(y, {x: [1, 2, 3]}) == 14.0
    assert s.run([y, x], {x: [1, 1, 1]})[0] == 3.0


def test_feeding_an_intermediate_tensor_replaces_its_producer():
    g = dfexec.Graph()
    with g.as_default():
        x = ops.placeholder("float64", [], name="x")
        y = ops.multiply(x, 2.0, name="y")
        z = ops.add(y, 1.0, name="z")
    assert dfexec.Session(g).run(z, {y: 10.0}) == 11.0


# ---- run options and errors ---------------------------------------------------------------

def test_max_iterations_and_timeout():
    g = _loop_graph()
    s = dfexec.Session(g, max_iterations=5)
    feeds = {"x": np.ones((1, 2)), "n": 100}
    with pytest.raises(dfexec.LimitExceededError, match="maximum of 5 iterations"):
        s.run("result", feeds)
    assert s.run("iterations", feeds, max_iterations=1000) == 100
    with pytest.raises(dfexec.DeadlineExceededError):
        s.run("result", {"x": np.ones((1, 2)), "n": 2 ** 30}, max_iterations=0, timeout=0.05)


def test_errors_carry_the_c_message():
    g = dfexec.Graph()
    with g.as_default():
        n = ops.placeholder("int32", [], name="n")
        d = ops.placeholder("int32", [], name="d")
        ops.while_loop(lambda i, a: i < n, lambda i, a: (i + 1, a + 10 // (d - i)), [0, 0], name="w")
    s = dfexec.Session(g)
    with pytest.raises(dfexec.InvalidArgumentError) as e:
        s.run("w/Exit_1", {n: 10, d: 3})
    msg = str(e.value)
    assert "w/FloorDiv" in msg and "FloorDiv" in msg and "w/while_context" in msg and "iteration 3" in msg
    assert e.value.code == -1 and e.value.code_name == "DFX_EINVAL"
    with pytest.raises(dfexec.NotFoundError, match="no node 'nope'"):
        s.run("nope:0")
    with pytest.raises(dfexec.NotFoundError, match="asks for output 3"):
        s.run("n:3")
    with pytest.raises(TypeError):
        s.run(3.5)


def test_file_errors():
    with pytest.raises(dfexec.FileIOError):
        dfexec.load("/nonexistent/graph.pb")
    with pytest.raises(dfexec.InvalidArgumentError):
        dfexec.load(__file__.replace(".py", ".py"))          # not a GraphDef


def test_unknown_op_is_unimplemented():
    from dfexec import _build
    g = dfexec.Graph()
    with g.as_default():
        x = ops.constant(1.0)
        y, = _build.make_op(g, "NoSuchOp", [x], [(x.dtype, ())])
        # Identity cannot infer T from an op nobody knows: say it.
        z, = _build.make_op(g, "Identity", [y], [(x.dtype, ())], attrs={"T": x.dtype})
    s = dfexec.Session(g)  # an unknown op fails the run that needs it, not the session
    with pytest.raises(dfexec.UnimplementedError, match="NoSuchOp"):
        s.run(z)


def test_closed_session():
    s = dfexec.Session(_identity_graph("float32"))
    s.close()
    s.close()
    with pytest.raises(dfexec.DfexecError, match="closed"):
        s.run("y", {"x": 1.0})


def test_optimize_option():
    for opt in (None, "default", "none", "prune,identity", "constfold,cse"):
        s = dfexec.Session(_identity_graph("float32"), optimize=opt, threads=1, inline_only=True)
        assert s.optimize == opt and s.run("y", {"x": 2.0}) == 2.0
    with pytest.raises(dfexec.InvalidArgumentError, match="unknown pass.*constfold"):
        dfexec.Session(_identity_graph("float32"), optimize="nosuchpass")
    with pytest.raises(TypeError):
        dfexec.Session(_identity_graph("float32"), optimize=True)


def test_session_from_path():
    s = dfexec.Session(os.path.join(EXAMPLES, "counter_loop.pbtxt"))
    assert s.run("while/Exit") == 10
