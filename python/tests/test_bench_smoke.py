"""A smoke run of bench/python/bench_session.py: its measurements run and
return times. Speed itself is measured by the benchmark, never asserted in
a test (a loaded machine would make such a test fail for no fault)."""
import importlib.util
import os

BENCH = os.path.join(os.path.dirname(__file__), "..", "..", "bench", "python", "bench_session.py")


def _bench():
    spec = importlib.util.spec_from_file_location("bench_session", BENCH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_loop_costs_run():
    t = _bench().loop_costs(200, 1)
    assert set(t) >= {"converted", "python", "hand"}, t
    assert all(v > 0 for v in t.values()), t


def test_run_overhead_is_measured():
    t = _bench().run_overhead(100, 1)
    assert all(v > 0 for v in t.values()), t
