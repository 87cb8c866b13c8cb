"""Differential tests: converted functions give what the same Python gives
on numpy values, over several inputs each, and really contain graph control
flow (no unrolling)."""
import numpy as np
import pytest

import dfexec
from diff_functions import CASES


def _same(expected, got, where):
    if isinstance(expected, tuple):
        assert isinstance(got, tuple) and len(got) == len(expected), where
        for e, g in zip(expected, got):
            _same(e, g, where)
        return
    e, g = np.asarray(expected), np.asarray(got)
    assert e.shape == g.shape, f"{where}: shape {g.shape} != {e.shape}"
    kind = lambda a: "b" if a.dtype.kind == "b" else "f" if a.dtype.kind in "fc" else "i"   # noqa: E731
    assert kind(e) == kind(g), f"{where}: dtype {g.dtype} is not of the kind of {e.dtype}"
    if kind(e) == "f":
        np.testing.assert_allclose(g, e, rtol=1e-9, atol=1e-12, err_msg=where)
    else:
        np.testing.assert_array_equal(g, e, err_msg=where)


def _control_flow(graph):
    ops = {n.op for n in graph.nodes}
    looped = {n.name for n in graph.nodes if n.frame}
    found = set()
    if "LoopCond" in ops:
        found.add("loop")
    # a cond's Switch on a pred_id (not a loop's Switch on its LoopCond)
    if any(n.op == "Switch" and "pred_id" in n.inputs[1] for n in graph.nodes):
        found.add("cond")
    return found, looped


def test_there_are_enough_cases():
    assert len(CASES) >= 40


def _generic_signature(args):
    """One graph for every input: unknown sizes, the dtypes of the first input."""
    return [dfexec.TensorSpec((None,) * np.ndim(a), np.asarray(a).dtype) for a in args]


@pytest.mark.parametrize("fn,ref,inputs,flow", CASES, ids=[c[0].__name__ for c in CASES])
def test_converted_matches_python(fn, ref, inputs, flow):
    conv = dfexec.function(fn, input_signature=_generic_signature(inputs[0]))
    ref = ref or fn
    for args in inputs:
        expected = ref(*args)
        got = conv(*args)
        _same(expected, got, f"{fn.__name__}{args}")
    found, _ = _control_flow(conv.graph)
    assert flow <= found, f"{fn.__name__}: expected graph control flow {flow}, graph has {found}"
