"""Tracing: right where the function has no data-dependent Python control
flow; warned, and wrong for other inputs, where it has."""
import warnings

import numpy as np
import pytest

import dfexec
from dfexec import ops


def affine(x, w):
    return ops.tanh(x @ w + 1.0) * 2.0


def collatz(n):
    steps = 0
    while n != 1:                    # the line the warning must name
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps


def relu_py(x):
    if x > 0:
        return x
    return x * 0.0


def test_trace_without_python_control_flow_is_exact():
    rng = np.random.default_rng(0)
    x, w = rng.random((2, 3)), rng.random((3, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("error")            # no TracingWarning may be raised
        f = dfexec.trace(affine, x, w)
    assert f.decisions == []
    for _ in range(3):
        x2, w2 = rng.random((2, 3)), rng.random((3, 4))
        np.testing.assert_allclose(f(x2, w2), np.tanh(x2 @ w2 + 1.0) * 2.0, rtol=1e-12)
    assert f.inputs == ["x:0", "w:0"] and f.outputs == ["output:0"]


def test_trace_unrolls_a_loop_for_the_example_and_warns():
    with pytest.warns(dfexec.TracingWarning) as rec:
        f = dfexec.trace(collatz, np.int64(6))
    line = collatz.__code__.co_firstlineno + 2
    assert any(w.filename == __file__ and w.lineno == line for w in rec)
    at_while = [d for d in f.decisions if d[1] == line]
    assert [bool(d[3]) for d in at_while] == [True] * 8 + [False]   # 8 trips, then the exit
    assert "LoopCond" not in f.graph.ops     # unrolled: no loop in the graph
    assert f(np.int64(6)) == collatz(6) == 8
    assert f(np.int64(27)) != collatz(27)    # 111 steps, but the graph always does 8
    assert f(np.int64(1)) != collatz(1)      # and for 1 it should do none


def test_trace_keeps_only_the_taken_branch():
    with pytest.warns(dfexec.TracingWarning, match="traced value"):
        f = dfexec.trace(relu_py, np.float64(3.0))
    assert f(np.float64(5.0)) == 5.0                # the branch it saw: right
    assert f(np.float64(-2.0)) == -2.0 != relu_py(-2.0)   # the other one: wrong
    assert "Switch" not in f.graph.ops


def test_converted_function_gets_both_right():
    conv = dfexec.function(collatz)
    assert [int(conv(np.int64(n))) for n in (1, 6, 27)] == [collatz(n) for n in (1, 6, 27)]
    r = dfexec.function(relu_py)
    assert r(np.float64(5.0)) == 5.0 and r(np.float64(-2.0)) == 0.0


def test_int_of_a_tensor_is_baked_in():
    def repeat(x, n):
        for _ in range(int(n)):
            x = x + 1
        return x
    with pytest.warns(dfexec.TracingWarning, match="int"):
        f = dfexec.trace(repeat, np.int64(0), np.int64(3))
    assert f(np.int64(10), np.int64(3)) == 13
    assert f(np.int64(10), np.int64(5)) == 13       # still 3 additions


def test_trace_inlines_converted_functions():
    @dfexec.function
    def steps(n):
        k = 0
        while n != 1:
            n = n // 2 if n % 2 == 0 else 3 * n + 1
            k += 1
        return k

    def wrapper(n):
        return steps(n) + 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        f = dfexec.trace(wrapper, np.int64(6))
    assert "LoopCond" in f.graph.ops
    assert [int(f(np.int64(n))) for n in (1, 6, 27)] == [1, 9, 112]


def test_tensor_as_bool_outside_trace_or_conversion_names_the_line():
    g = dfexec.Graph()
    with g.as_default():
        x = ops.placeholder("float32", [], name="x")
        with pytest.raises(TypeError, match=r"test_trace.py:\d+: .*`if x > 0:`"):
            if x > 0:
                pass
