#!/usr/bin/env python3
"""models_vs_opencv.py - the `models` suite: every model of a models folder
(../shared/models layout: case.json, frozen_model.pb, feeds and expected
fetches as .csv) that OpenCV's dnn module can import, timed in dfexec and in
OpenCV in the same process, interleaved run by run (so load from other
processes hits both alike), at 1 and 2 threads each. Prints one table row
per model and thread count: median ms of each engine and dfexec / OpenCV.

Models OpenCV cannot import (ssd_fig, captcha_gru, cms_track with OpenCV
4.6) are timed in dfexec alone, end to end (loops included), so their
figure can be compared with an earlier one.

Before timing, both engines' outputs are checked against the case's
expected values with its tolerance (|got - want| <= atol + rtol |want|): a
faster engine that is wrong shows as WRONG in the table.

OpenCV needs some graphs pruned to their fetches, stopping at the fed
tensors, with a fed non-Placeholder (mtcnn_onet's IteratorGetNext) made a
float Placeholder (../shared/models/README.md). This script does that on the
GraphDef's protobuf wire format itself (no protobuf module needed) and
writes the pruned copies to a temporary folder; dfexec always runs the
published graph.

  DFEXEC_LIBRARY=build/libdfexec.so /usr/bin/python3 bench/python/models_vs_opencv.py \
      [--models ../shared/models] [--reps 15] [--threads 1,2] [--only mnv2_keras,har_cnn]

Needs numpy; OpenCV (Debian python3-opencv) is optional: without it only
the dfexec column is filled.
"""
import argparse
import json
import os
import statistics
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import dfexec  # noqa: E402

try:
    import cv2
except ImportError:  # the dfexec column alone
    cv2 = None

# OpenCV drops Identity layers and merges a BiasAdd into its MatMul, so some
# fetches are asked for under the layer that computes them (README).
OPENCV_NAMES = {
    "mtcnn_onet": {"outputs/prob_out": "Softmax", "outputs/landmark_out": "landmark_pred/MatMul"},
}

# ---- protobuf wire format: just enough of GraphDef / NodeDef ---------------


def _varint(buf, i):
    v, shift = 0, 0
    while True:
        b = buf[i]
        i += 1
        v |= (b & 0x7F) << shift
        if b < 0x80:
            return v, i
        shift += 7


def _enc_varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _fields(buf):
    """(field number, wire type, value bytes or int, raw bytes of the whole field)."""
    i = 0
    while i < len(buf):
        start = i
        key, i = _varint(buf, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = _varint(buf, i)
        elif wt == 1:
            v, i = buf[i:i + 8], i + 8
        elif wt == 2:
            n, i = _varint(buf, i)
            v, i = buf[i:i + n], i + n
        elif wt == 5:
            v, i = buf[i:i + 4], i + 4
        else:
            raise ValueError(f"unsupported wire type {wt}")
        yield num, wt, v, buf[start:i]


def _ld(num, payload):
    return _enc_varint(num << 3 | 2) + _enc_varint(len(payload)) + payload


def prune_graph(src, dst, feeds, fetches):
    """Writes src pruned to what fetches need, stopping at feeds; a fed node
    that is not a Placeholder becomes a float Placeholder (README's prune.py)."""
    buf = open(src, "rb").read()
    nodes, other = [], []
    for num, wt, v, raw in _fields(buf):
        if num == 1 and wt == 2:
            name, op, inputs = "", "", []
            for fnum, fwt, fv, _ in _fields(v):
                if fnum == 1:
                    name = fv.decode()
                elif fnum == 2:
                    op = fv.decode()
                elif fnum == 3:
                    inputs.append(fv.decode())
            nodes.append((name, op, inputs, raw))
        else:
            other.append(raw)
    by_name = {n[0]: n for n in nodes}
    feed_nodes = {f.split(":")[0] for f in feeds}
    need, todo = set(), [f.split(":")[0] for f in fetches]
    while todo:
        x = todo.pop()
        if x in need:
            continue
        need.add(x)
        if x not in feed_nodes:
            todo += [i.lstrip("^").split(":")[0] for i in by_name[x][2]]
    out = bytearray()
    for name, op, _, raw in nodes:
        if name not in need:
            continue
        if name in feed_nodes and op != "Placeholder":
            dtype_attr = _ld(1, b"dtype") + _ld(2, _enc_varint(6 << 3 | 0) + _enc_varint(1))  # DT_FLOAT
            raw = _ld(1, _ld(1, name.encode()) + _ld(2, b"Placeholder") + _ld(5, dtype_attr))
        out += raw
    for raw in other:
        out += raw
    open(dst, "wb").write(bytes(out))


# ---- cases ------------------------------------------------------------------


def load_values(d, entry):
    base = os.path.join(d, entry["values"])
    shape = [int(s) for s in open(base + ".shape").read().split()] if os.path.exists(base + ".shape") else entry["shape"]
    dt = {"float32": np.float32, "int64": np.int64, "int32": np.int32, "uint8": np.uint8}[entry["dtype"]]
    return np.loadtxt(base, dtype=np.float64, ndmin=1).astype(dt).reshape(shape)


def port(e):
    return f"{e['name']}:{e.get('index', 0)}"


def check(got, want, tol):
    """'ok' or 'WRONG (max err ...)' under the case's tolerance."""
    got = np.asarray(got).reshape(want.shape) if np.asarray(got).size == want.size else None
    if got is None:
        return "WRONG (shape)"
    if want.dtype.kind in "iu":
        return "ok" if np.array_equal(got, want) else "WRONG"
    g, w = got.astype(np.float64), want.astype(np.float64)
    bad = np.abs(g - w) > tol["atol"] + tol["rtol"] * np.abs(w)
    bad &= ~(np.isnan(g) & np.isnan(w))
    return "ok" if not bad.any() else f"WRONG (max err {np.nanmax(np.abs(g - w)):.3g})"


class DfexecRunner:
    def __init__(self, d, case, feeds, threads):
        self.sess = dfexec.Session(os.path.join(d, case["graph"]), threads=threads)
        self.feeds = {port(e): v for e, v in zip(case["feeds"], feeds)}
        self.fetches = [port(e) for e in case["fetches"]]

    def __call__(self):
        return self.sess.run(self.fetches, self.feeds)


class OpenCVRunner:
    def __init__(self, d, case, feeds, pruned):
        alias = OPENCV_NAMES.get(os.path.basename(d.rstrip("/")), {})
        prune_graph(os.path.join(d, case["graph"]), pruned, [port(e) for e in case["feeds"]],
                    [port(e) for e in case["fetches"]])
        self.net = cv2.dnn.readNetFromTensorflow(pruned)
        self.net.setPreferableBackend(cv2.dnn.DNN_BACKEND_OPENCV)
        if len(feeds) != 1:
            raise RuntimeError("more than one feed")
        x = feeds[0].astype(np.float32)
        self.x = np.ascontiguousarray(x.transpose(0, 3, 1, 2)) if x.ndim == 4 else x  # NHWC -> NCHW
        self.names = [alias.get(e["name"], e["name"]) for e in case["fetches"]]

    def __call__(self):
        self.net.setInput(self.x)
        return self.net.forward(self.names)


def timed(fn, clock=time.perf_counter):
    t = clock()
    fn()
    return (clock() - t) * 1e3


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default=os.path.join(here, "..", "..", "..", "shared", "models"))
    ap.add_argument("--reps", type=int, default=15, help="timed runs per engine and thread count")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--only", default="", help="comma-separated model names")
    ap.add_argument("--json", help="also write the rows to this file")
    ap.add_argument("--cpu", action="store_true",
                    help="time the calling thread's CPU time instead of wall time: at 1 thread both engines run "
                         "on the calling thread, so this shows their work with the machine's load taken out "
                         "(meaningless at more threads)")
    a = ap.parse_args()
    threads = [int(t) for t in a.threads.split(",")]
    clock = time.thread_time if a.cpu else time.perf_counter
    only = set(filter(None, a.only.split(",")))
    tmp = tempfile.mkdtemp(prefix="models_vs_opencv.")
    rows = []
    print(f"models in {os.path.abspath(a.models)}; {a.reps} interleaved runs each; OpenCV "
          f"{cv2.__version__ if cv2 else 'not installed'}; medians in ms of "
          f"{'the calling thread CPU time' if a.cpu else 'wall time'}")
    print(f"{'model':<12} {'thr':>3} {'dfexec ms':>10} {'OpenCV ms':>10} {'ratio':>6}  outputs")
    for name in sorted(os.listdir(a.models)):
        d = os.path.join(a.models, name)
        if not os.path.exists(os.path.join(d, "case.json")) or (only and name not in only):
            continue
        case = json.load(open(os.path.join(d, "case.json")))
        tol = case.get("tolerance", {"atol": 1e-4, "rtol": 1e-3})
        feeds = [load_values(d, e) for e in case["feeds"]]
        wants = [load_values(d, e) for e in case["fetches"]]
        ocv, why = None, "OpenCV not installed"
        if cv2 is not None:
            try:
                cv2.setNumThreads(threads[0])
                ocv = OpenCVRunner(d, case, feeds, os.path.join(tmp, name + ".pb"))
                ocv()
            except Exception as e:  # noqa: BLE001 - any import or run failure: dfexec alone
                msg = str(e).strip().splitlines()[-1]
                msg = msg.split("error) ")[-1].split(" in function")[0]
                ocv, why = None, "OpenCV cannot import: " + msg[:70]
        for t in threads:
            dfx = DfexecRunner(d, case, feeds, t)
            verdict = ["dfexec " + check(g, w, tol) for g, w in zip(dfx(), wants)]
            if ocv is not None:
                cv2.setNumThreads(t)
                verdict += ["OpenCV " + check(g, w, tol) for g, w in zip(ocv(), wants)]
            verdict = sorted(set(verdict))
            td, to = [], []
            for _ in range(a.reps):  # interleaved: one run of each in turn
                td.append(timed(dfx, clock))
                if ocv is not None:
                    to.append(timed(ocv, clock))
            md = statistics.median(td)
            mo = statistics.median(to) if to else None
            row = {"model": name, "threads": t, "dfexec_ms": md, "opencv_ms": mo,
                   "ratio": md / mo if mo else None, "outputs": verdict if ocv else verdict + [why]}
            rows.append(row)
            print(f"{name:<12} {t:>3} {md:>10.2f} {mo if mo else float('nan'):>10.2f} "
                  f"{row['ratio'] if mo else float('nan'):>6.2f}  {'; '.join(row['outputs'])}", flush=True)
            del dfx
    if a.json:
        json.dump(rows, open(a.json, "w"), indent=1)


if __name__ == "__main__":
    main()
