#!/usr/bin/env python3
"""check_table.py - proves op_table_tf.c loses nothing import and validation use.

Usage: check_table.py OPS_PBTXT DUMPER

Runs `DUMPER dump` (dfx-opdef-report: every row of op_table_tf.c parsed by
dfexec's C parser, printed in a canonical form) and compares it line by line
with the same form computed straight from OPS_PBTXT: flags, every arg (fixed
type, type attr, number attr, list attr, ref), every attr (kind, minimum,
allowed types and strings, default as float32 or bytes). Exits 1 on the first
difference. A check of the generator and the parser together.
"""
import os
import struct
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_op_table as gen  # noqa: E402  (the same text-format reader)

DTYPES = ["DT_FLOAT", "DT_DOUBLE", "DT_INT32", "DT_UINT8", "DT_INT16", "DT_INT8", "DT_STRING", "DT_COMPLEX64",
          "DT_INT64", "DT_BOOL", "DT_QINT8", "DT_QUINT8", "DT_QINT32", "DT_BFLOAT16", "DT_QINT16", "DT_QUINT16",
          "DT_UINT16", "DT_COMPLEX128", "DT_HALF", "DT_RESOURCE", "DT_VARIANT", "DT_UINT32", "DT_UINT64"]
DT = {name: i + 1 for i, name in enumerate(DTYPES)}  # TF's DataType numbers, which dfexec's dtypes equal
FLAGS = [("is_stateful", 1), ("is_commutative", 2), ("is_aggregate", 4), ("allows_uninitialized_input", 8),
         ("is_distributed_communication", 16)]
LIST_FIELD = {"int": "i", "float": "f", "bool": "b", "string": "s", "type": "type", "shape": "shape"}


def g9(x):
    """A number as C's printf("%.9g") prints it, after rounding to float32."""
    x = struct.unpack("f", struct.pack("f", float(x)))[0]
    return "%.9g" % x


def shape(m):
    if m.flag("unknown_rank"):
        return "sh:unknown"
    return "sh:[" + "".join("%d," % int(d.one("size", "0")) for d in m.get("dim", [])) + "]"


def tensor(t):
    dims = [int(d.one("size", "0")) for d in t.one("tensor_shape", gen.Msg()).get("dim", [])]
    count = 1
    for d in dims:
        count *= d
    vals = [float(v) for k in ("int_val", "int64_val", "float_val", "double_val") for v in t.get(k, [])]
    vals += vals[-1:] * (count - len(vals)) if vals else [0.0] * count
    return "tensor:%d:[%s]:%s" % (DT[t.one("dtype")], "".join("%d," % d for d in dims),
                                  "".join(g9(v) + "," for v in vals))


def value(kind, v):
    if kind == "int":
        return "i:%d" % int(v.one("i", "0"))
    if kind == "float":
        return "f:" + g9(v.one("f", "0"))
    if kind == "bool":
        return "b:%d" % v.flag("b")
    if kind == "string":
        return "s:" + v.one("s", b"").hex()
    if kind == "type":
        return "t:%d" % DT[v.one("type")]
    if kind == "shape":
        return shape(v.one("shape", gen.Msg()))
    if kind == "tensor":
        return tensor(v.one("tensor"))
    raise ValueError(kind)


def default(kind, v):
    if not kind.startswith("list("):
        return value(kind, v)
    elem = kind[5:-1]
    items = v.one("list", gen.Msg()).get(LIST_FIELD[elem], [])
    return "[" + "".join(value(elem, x if isinstance(x, gen.Msg) else gen.Msg({LIST_FIELD[elem]: [x]})) + ","
                         for x in items) + "]"


def canonical(op):
    out = "%s flags=%d" % (op.one("name").decode(), sum(bit for key, bit in FLAGS if op.flag(key)))
    for io, key in (("in", "input_arg"), ("out", "output_arg")):
        for a in op.get(key, []):
            out += " %s(%s,%d,%s,%s,%s,%d)" % (
                io, a.one("name").decode(), DT[a.one("type")] if "type" in a else 0, a.one("type_attr", b"").decode(),
                a.one("number_attr", b"").decode(), a.one("type_list_attr", b"").decode(), a.flag("is_ref"))
    for a in op.get("attr", []):
        kind = a.one("type").decode()
        allowed, strs = 0, ""
        if "allowed_values" in a:
            lst = a.one("allowed_values").one("list", gen.Msg())
            for t in lst.get("type", []):
                allowed |= 1 << DT[t]
            strs = "".join("s:" + s.hex() + "," for s in lst.get("s", []))
        out += " attr(%s,%s,min=%s,allowed=%x,astr=[%s],def=%s)" % (
            a.one("name").decode(), kind, str(int(a.one("minimum", "0"))) if a.flag("has_minimum") else "none",
            allowed, strs, default(kind, a.one("default_value")) if "default_value" in a else "none")
    return out


def main(argv):
    if len(argv) != 3:
        sys.stderr.write("usage: check_table.py OPS_PBTXT DUMPER\n")
        return 2
    with open(argv[1], "r", encoding="utf-8") as f:
        ops = sorted(gen.read_message(gen.tokens(f.read()))["op"], key=lambda o: o.one("name"))
    want = [canonical(o) for o in ops]
    got = subprocess.run([argv[2], "dump"], check=True, stdout=subprocess.PIPE).stdout.decode().splitlines()
    if len(got) != len(want):
        print("table has %d ops, %s has %d" % (len(got), argv[1], len(want)))
        return 1
    for g, w in zip(got, want):
        if g != w:
            print("mismatch:\n  table:    %s\n  ops.pbtxt: %s" % (g, w))
            return 1
    print("all %d OpDefs round-trip through op_table_tf.c and the parser" % len(want))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
