"""Concurrency from Python threads (the GIL is released during runs),
cancellation, and no growth over 100 000 runs."""
import threading
import time

import numpy as np
import pytest

import dfexec
from dfexec import _tensors, ops


def _counter_graph():
    g = dfexec.Graph()
    with g.as_default():
        n = ops.placeholder("int64", [], name="n")
        x = ops.placeholder("float64", [None], name="x")
        i, acc = ops.while_loop(lambda i, a: i < n, lambda i, a: (i + 1, a + 1.0), [0, x], name="loop")
        ops.identity(acc, name="acc")
    return g


def test_four_threads_run_one_session_concurrently():
    s = dfexec.Session(_counter_graph(), threads=2)
    spans, errors = [], []
    n = 200_000                           # ~tens of ms of C per run

    def worker(k):
        try:
            for r in range(3):
                x = np.full(3, float(k * 10 + r))
                t0 = time.perf_counter()
                out = s.run("acc", {"n": n, "x": x})
                spans.append((t0, time.perf_counter()))
                np.testing.assert_array_equal(out, x + n)
        except BaseException as e:       # noqa: B902 - reported below
            errors.append(e)
    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert len(spans) == 12
    # With the GIL held during a run no other thread could even start one:
    # some runs must overlap in time.
    spans.sort()
    overlaps = sum(1 for (a0, a1), (b0, b1) in zip(spans, spans[1:]) if b0 < a1)
    assert overlaps >= 3


def test_threads_each_with_their_own_session_and_errors():
    g = _counter_graph()
    results, errors = {}, []

    def worker(k):
        try:
            s = dfexec.Session(g, threads=1)
            if k % 2:
                with pytest.raises(dfexec.LimitExceededError):
                    s.run("acc", {"n": 1000, "x": [0.0]}, max_iterations=10)
            results[k] = s.run("acc", {"n": k, "x": [0.5]})
        except BaseException as e:        # noqa: B902
            errors.append(e)
    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    assert not errors, errors
    assert {k: float(v[0]) for k, v in results.items()} == {k: k + 0.5 for k in range(4)}


def test_cancel_from_another_thread():
    s = dfexec.Session(_counter_graph(), threads=1)
    box = {}

    def run():
        try:
            s.run("acc", {"n": 2 ** 40, "x": [0.0]})
        except dfexec.CancelledError as e:
            box["err"] = e
    t = threading.Thread(target=run)
    t.start()
    time.sleep(0.1)
    s.cancel()
    t.join(10)
    assert not t.is_alive() and "err" in box


def test_close_waits_for_running_steps():
    s = dfexec.Session(_counter_graph(), threads=1)
    box = {}

    def run():
        try:
            s.run("acc", {"n": 2 ** 40, "x": [0.0]})
        except dfexec.DfexecError as e:
            box["err"] = e
    t = threading.Thread(target=run)
    t.start()
    time.sleep(0.05)
    s.close()                # cancels the step and frees the session after it ended
    t.join(10)
    assert isinstance(box.get("err"), dfexec.CancelledError)


def _rss_kib():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4


def test_no_leak_over_100000_runs():
    g = dfexec.Graph()
    with g.as_default():
        x = ops.placeholder("float32", [None], name="x")
        ops.multiply(x, 2.0, name="y")
    s = dfexec.Session(g, threads=1, inline_only=True)
    small = np.arange(4, dtype=np.float32)
    big = np.arange(20_000, dtype=np.float32)       # 80 KB: the zero-copy path
    for _ in range(2000):                            # warm-up: caches, allocator pools
        s.run("y", {"x": small})
        s.run(["y", "^y"], {x: big})
    before = _rss_kib()
    for i in range(100_000):
        out = s.run("y", {"x": small})
        if i % 20 == 0:
            s.run(["y", "^y"], {x: big})
    growth = _rss_kib() - before
    np.testing.assert_array_equal(out, small * 2)
    assert not _tensors._wrapped
    # 100 000 leaked outputs of 16 bytes would be >= 1.6 MB plus malloc headers;
    # 5 000 leaked 80 KB feeds would be 400 MB.
    assert growth < 1024, f"RSS grew by {growth} KiB over 100 000 runs"
