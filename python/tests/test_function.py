"""@dfexec.function: the API around converted graphs, and conversion errors
that name the user's file and line."""
import re

import numpy as np
import pytest

import dfexec
from dfexec import ops
from dfexec.autograph import transformer

HERE = re.escape(__file__)


def _line_of(fn, text):
    import inspect
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, l in enumerate(lines) if text in l)


def test_graph_save_and_signatures(tmp_path):
    @dfexec.function(input_signature=[dfexec.TensorSpec([], "int64")])
    def gcd_like(a):
        b = a * 2 + 1
        while b != 0:
            a, b = b, a % b
        return a, b
    g = gcd_like.graph                        # built from the signature, before any call
    assert "LoopCond" in g.ops
    assert [p.name for p in g.placeholders] == ["a"]
    gcd_like.save(str(tmp_path / "gcd.pbtxt"))
    loaded = dfexec.load(str(tmp_path / "gcd.pbtxt"))
    out = dfexec.Session(loaded).run(["output_0", "output_1"], {"a": 12})
    assert [int(v) for v in out] == [1, 0]
    assert gcd_like(7) == (1, 0) and isinstance(gcd_like(7), tuple)


def test_one_graph_per_signature_and_static_args():
    calls = []

    @dfexec.function(static_argnames=("scale",))
    def f(x, scale=2):
        calls.append(1)
        return x * scale
    assert f(np.float32(1.5)) == 3.0
    assert f(np.float32(2.5)) == 5.0 and len(calls) == 1        # same signature: reused
    assert f(np.float64(1.0)) == 2.0 and len(calls) == 2        # new dtype: new graph
    assert f(np.ones(3, np.float32), scale=3).tolist() == [3, 3, 3] and len(calls) == 3
    assert f.graph.placeholders[0].shape == (3,)


def test_structures_and_python_results():
    @dfexec.function
    def f(x):
        return {"double": x * 2, "pair": (x, 7), "none": None}
    out = f(np.int64(4))
    assert out["double"] == 8 and out["pair"][1] == 7 and out["none"] is None


def test_calls_to_functions_are_inlined():
    @dfexec.function
    def inner(x):
        while x < 100:
            x = x * 3
        return x

    @dfexec.function
    def outer(x):
        return inner(x) + inner(x + 1)
    assert outer(np.int64(2)) == 162 + 243
    assert sum(op == "LoopCond" for op in [n.op for n in outer.graph.nodes]) == 2
    assert not any(n.op == "PartitionedCall" for n in outer.graph.nodes)


def test_converted_source_is_readable():
    def f(x):
        while x > 1:
            x = x - 1
        return x
    src = transformer.source(f)
    assert "_dfx.while_stmt(" in src and "nonlocal x" in src


def test_python_conditions_stay_python():
    @dfexec.function(static_argnames=("unroll",))
    def f(x, unroll):
        for i in range(unroll):
            x = x + i
        return x
    assert f(np.int64(0), unroll=4) == 6
    assert "LoopCond" not in f.graph.ops and "Switch" not in f.graph.ops


# ---- errors ---------------------------------------------------------------------------

def test_loop_variable_changing_dtype_names_variable_and_line():
    def f(x):
        y = x
        while y < 10:
            y = y * 1.5
        return y
    conv = dfexec.function(f)
    with pytest.raises(dfexec.ConversionError,
                       match=rf"{HERE}:{_line_of(f, 'while y')}: 'y' is int64 before the loop but float64"):
        conv(np.int64(1))


def test_loop_variable_changing_shape():
    def f(v):
        while ops.reduce_sum(v) < 10:
            v = ops.concat([v, v], 0)
        return v
    with pytest.raises(dfexec.ConversionError, match=rf"{HERE}:{_line_of(f, 'while')}: 'v' has shape \(2,\)"):
        dfexec.function(f)(np.ones(2))


def test_variable_assigned_in_one_branch_only():
    def f(x):
        if x > 0:
            y = x
        return y
    with pytest.raises(dfexec.ConversionError,
                       match=rf"{HERE}:{_line_of(f, 'if x')}: 'y' is assigned in only one branch"):
        dfexec.function(f)(np.int64(1))


def test_python_list_changed_in_graph_loop():
    def f(n):
        acc = []
        i = 0
        while i < n:
            acc.append(i)
            acc = acc + [i]
            i += 1
        return i
    with pytest.raises(dfexec.ConversionError, match=r"'acc' is a tensor on one path|'acc'.*list"):
        dfexec.function(f)(np.int64(3))


def test_unsupported_syntax_points_at_the_line():
    def gen(x):
        yield x

    def in_with(x):
        import contextlib
        while x > 0:
            with contextlib.nullcontext():
                break
        return x
    with pytest.raises(dfexec.ConversionError, match=rf"{HERE}:{_line_of(gen, 'yield')}: generators"):
        dfexec.function(gen)(1)
    with pytest.raises(dfexec.ConversionError, match=rf"{HERE}:{_line_of(in_with, 'with ')}: return/break"):
        dfexec.function(in_with)(np.int64(1))
    with pytest.raises(dfexec.ConversionError, match="only `def` functions"):
        dfexec.function(lambda x: x)(1)


def test_op_errors_get_the_user_line_as_a_note():
    def f(x):
        y = x @ x                     # rank-1 matmul: a shape error while building
        return y
    with pytest.raises(ValueError) as e:
        dfexec.function(f)(np.ones(3))
    assert f"{__file__}:{_line_of(f, 'y = x @ x')}" in "".join(getattr(e.value, "__notes__", []))


def test_undefined_variable_after_zero_trip_python_loop():
    def f(x):
        for i in range(0):
            z = x
        return z
    with pytest.raises(NameError, match="'z' is used before it is assigned"):
        r = dfexec.function(f)(np.int64(1))
        r + 1
