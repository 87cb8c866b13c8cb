"""A quick run of bench/python/bench_session.py's measurements: the converted
loop runs inside the engine (as fast as the hand-built graph, far faster
than one sess.run per iteration). Timing bounds are loose on purpose."""
import importlib.util
import os

BENCH = os.path.join(os.path.dirname(__file__), "..", "..", "bench", "python", "bench_session.py")


def _bench():
    spec = importlib.util.spec_from_file_location("bench_session", BENCH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_converted_loop_beats_python_driven_loop():
    t = _bench().loop_costs(5000, 1)
    assert t["converted"] * 5 < t["python"], t
    assert t["converted"] < 3 * t["hand"], t


def test_run_overhead_is_measured():
    t = _bench().run_overhead(500, 1)
    assert all(0 < v < 1e-3 for v in t.values()), t
