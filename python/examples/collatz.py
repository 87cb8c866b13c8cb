"""Collatz steps, turned into a graph both ways: traced and converted.
Writes collatz_traced.pb and collatz_converted.pb to the directory given
(default: the current one) and prints what each graph answers.

    /usr/bin/python3 python/examples/collatz.py /tmp/collatz
    build/tools/dfexec/dfexec dot /tmp/collatz/collatz_converted.pb | dot -Tsvg > converted.svg
"""
import os
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import dfexec  # noqa: E402


def collatz_steps(n):
    steps = 0
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


def main(out_dir="."):
    os.makedirs(out_dir, exist_ok=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        traced = dfexec.trace(collatz_steps, np.int64(4))
    for w in caught:
        print(f"warning: {os.path.basename(w.filename)}:{w.lineno}: {w.message}")
    converted = dfexec.function(collatz_steps, input_signature=[dfexec.TensorSpec([], "int64")])
    traced.save(os.path.join(out_dir, "collatz_traced.pb"))
    converted.save(os.path.join(out_dir, "collatz_converted.pb"))
    print(f"{'n':>4} {'python':>7} {'converted':>10} {'traced':>7}")
    for n in (1, 4, 6, 7, 27):
        print(f"{n:>4} {collatz_steps(n):>7} {int(converted(np.int64(n))):>10} {int(traced(np.int64(n))):>7}")
    print(f"traced graph: {len(traced.graph.nodes)} nodes, ops {traced.graph.ops}")
    print(f"converted graph: {len(converted.graph.nodes)} nodes, frames {[f.name for f in converted.graph.frames]}")


if __name__ == "__main__":
    main(*sys.argv[1:])
