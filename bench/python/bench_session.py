#!/usr/bin/env python3
"""bench_session.py - the Python package's two costs, measured:

  1. sess.run overhead on a one-node graph (target: <= 10 us per call), next
     to the bare ctypes call of dfx_session_run + dfx_tensor_free, which is
     the floor any Python binding pays;
  2. a 100 000-iteration loop converted by @dfexec.function (one run, the
     loop inside the C engine), against the same loop driven from Python
     with one sess.run per iteration (the language-boundary cost the
     converted graph avoids).

Run with Debian's Python and the library to measure:
  DFEXEC_LIBRARY=build/libdfexec.so /usr/bin/python3 bench/python/bench_session.py [--quick]
Prints medians over --reps repetitions.
"""
import argparse
import ctypes
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import dfexec  # noqa: E402
from dfexec import ops  # noqa: E402
from dfexec._lib import Port, lib  # noqa: E402
from dfexec.errors import status  # noqa: E402


def per_call(fn, calls, reps):
    """Median seconds per call of fn() over `reps` timed batches of `calls`."""
    for _ in range(min(calls, 2000)):
        fn()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        times.append((time.perf_counter() - t0) / calls)
    return statistics.median(times)


def one_node_graph():
    g = dfexec.Graph()
    with g.as_default():
        ops.constant(np.float32(1.0), name="c")
        ops.placeholder("float32", [], name="x")
    return dfexec.Session(g, threads=1)


def run_overhead(calls, reps):
    s = one_node_graph()
    fetch, out, st = (Port * 1)(Port(b"c", 0)), (ctypes.c_void_p * 1)(), status()
    none_p, none_v, none_t = (Port * 0)(), (ctypes.c_void_p * 0)(), (ctypes.c_char_p * 0)()

    def bare():
        lib.dfx_session_run(s._ptr, None, none_p, none_v, 0, fetch, out, 1, none_t, 0, st)
        lib.dfx_tensor_free(out[0])
    x = np.float32(2.0)
    return {
        "bare ctypes dfx_session_run + free (Const)": per_call(bare, calls, reps),
        "sess.run('c')  (fetch a Const, no feed)": per_call(lambda: s.run("c"), calls, reps),
        "sess.run('x', {'x': np.float32})  (feed = fetch)": per_call(lambda: s.run("x", {"x": x}), calls, reps),
    }


@dfexec.function(input_signature=[dfexec.TensorSpec([], "int64")])
def converted_loop(n):
    i = 0
    x = 0.0
    while i < n:
        x = x * 0.5 + 1.0
        i += 1
    return x


def python_driven(n, s):
    """The same loop, one sess.run per iteration of a graph holding the body."""
    i, x = 0, np.float64(0.0)
    while i < n:
        x = s.run("next_x", {"x": x})
        i += 1
    return x


def step_session():
    g = dfexec.Graph()
    with g.as_default():
        x = ops.placeholder("float64", [], name="x")
        ops.add(x * 0.5, 1.0, name="next_x")
    return dfexec.Session(g, threads=1)


def hand_built_session():
    """The same loop written with ops.while_loop, as one would in TF1."""
    g = dfexec.Graph()
    with g.as_default():
        n = ops.placeholder("int64", [], name="n")
        ops.while_loop(lambda i, x: i < n, lambda i, x: (i + 1, x * 0.5 + 1.0),
                       [ops.constant(np.int64(0)), ops.constant(0.0)], name="loop")
    return dfexec.Session(g)


def loop_costs(n, reps):
    """ns/iter of: the converted loop, the hand-built graph, the Python-driven loop."""
    conv = converted_loop.get_concrete_function(np.int64(n))
    hand = hand_built_session()
    step = step_session()
    runs = {"converted": lambda: conv(np.int64(n)),
            "hand": lambda: hand.run("loop/Exit_1", {"n": n}),
            "python": lambda: python_driven(n, step)}
    times = {k: [] for k in runs}
    for _ in range(reps):
        for k, f in runs.items():
            t0 = time.perf_counter()
            v = f()
            times[k].append(time.perf_counter() - t0)
            assert abs(v - 2.0) < 1e-9
    return {k: statistics.median(t) / n for k, t in times.items()}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer calls and a 10 000-iteration loop")
    ap.add_argument("--reps", type=int, default=7)
    args = ap.parse_args(argv)
    calls, n = (5000, 10_000) if args.quick else (50_000, 100_000)
    print(f"dfexec {dfexec.library_version()} at {dfexec.library_path}; Python {sys.version.split()[0]}, "
          f"numpy {np.__version__}; {os.cpu_count()} cores; medians of {args.reps}")
    print("\n1. sess.run overhead on a one-node graph (target <= 10 us)")
    for k, v in run_overhead(calls, args.reps).items():
        print(f"   {v * 1e6:7.2f} us  {k}")
    t = loop_costs(n, args.reps)
    print(f"\n2. {n} iterations of `x = x * 0.5 + 1.0; i += 1`")
    print(f"   {t['converted'] * 1e9:9.0f} ns/iter  converted (@dfexec.function, one run)")
    print(f"   {t['hand'] * 1e9:9.0f} ns/iter  the same loop built by hand with ops.while_loop, one run")
    print(f"   {t['python'] * 1e9:9.0f} ns/iter  driven from Python, one sess.run per iteration")
    print(f"   converted is {t['python'] / t['converted']:.0f}x faster than driving it from Python")


if __name__ == "__main__":
    main()
