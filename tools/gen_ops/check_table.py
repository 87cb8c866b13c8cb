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

# TF's DataType numbers (which dfexec's dtypes equal), in order, with the numpy-style names dfexec prints.
DTYPES = [("DT_FLOAT", "float32"), ("DT_DOUBLE", "float64"), ("DT_INT32", "int32"), ("DT_UINT8", "uint8"),
          ("DT_INT16", "int16"), ("DT_INT8", "int8"), ("DT_STRING", "string"), ("DT_COMPLEX64", "complex64"),
          ("DT_INT64", "int64"), ("DT_BOOL", "bool"), ("DT_QINT8", "qint8"), ("DT_QUINT8", "quint8"),
          ("DT_QINT32", "qint32"), ("DT_BFLOAT16", "bfloat16"), ("DT_QINT16", "qint16"), ("DT_QUINT16", "quint16"),
          ("DT_UINT16", "uint16"), ("DT_COMPLEX128", "complex128"), ("DT_HALF", "float16"),
          ("DT_RESOURCE", "resource"), ("DT_VARIANT", "variant"), ("DT_UINT32", "uint32"), ("DT_UINT64", "uint64")]
NUMBER = {tf: i + 1 for i, (tf, _) in enumerate(DTYPES)}
NAME = dict(DTYPES)
FLAGS = [("is_stateful", 1), ("is_commutative", 2), ("is_aggregate", 4), ("allows_uninitialized_input", 8),
         ("is_distributed_communication", 16)]


def g9(x):
    """A number as C's printf("%.9g") prints it, after rounding to float32."""
    return "%.9g" % struct.unpack("f", struct.pack("f", float(x)))[0]


def text(b):
    return "'" + "".join(chr(c) if 32 <= c < 127 and chr(c) not in "\\'" else "\\x%02x" % c for c in b) + "'"


def shape(m):
    if m.flag("unknown_rank"):
        return "unknown"
    return "[" + ", ".join("%d" % int(d.one("size", "0")) for d in m.get("dim", [])) + "]"


def tensor(t):
    dims = [int(d.one("size", "0")) for d in t.one("tensor_shape", gen.Msg()).get("dim", [])]
    count = 1
    for d in dims:
        count *= d
    vals = [float(v) for k in ("int_val", "int64_val", "float_val", "double_val") for v in t.get(k, [])]
    vals = vals + vals[-1:] * (count - len(vals)) if vals else [0.0] * count
    return "tensor(%s, [%s]%s)" % (NAME[t.one("dtype")], ", ".join("%d" % d for d in dims),
                                   "".join(", " + g9(v) for v in vals))


def value(kind, v):
    if kind == "int":
        return "%d" % int(v.one("i", "0"))
    if kind == "float":
        return g9(v.one("f", "0"))
    if kind == "bool":
        return "true" if v.flag("b") else "false"
    if kind == "string":
        return text(v.one("s", b""))
    if kind == "type":
        return NAME[v.one("type")]
    if kind == "shape":
        return shape(v.one("shape", gen.Msg()))
    if kind == "tensor":
        return tensor(v.one("tensor"))
    raise ValueError(kind)


def default(kind, v):
    if not kind.startswith("list("):
        return value(kind, v)
    elem = kind[5:-1]
    items = v.one("list", gen.Msg()).get(gen.LIST_FIELD[elem], [])
    return "[" + ", ".join(value(elem, x if isinstance(x, gen.Msg) else gen.Msg({gen.LIST_FIELD[elem]: [x]}))
                           for x in items) + "]"


def canonical(op):
    """The line `dfx-opdef-report dump` prints for op."""
    out = "%s flags=%d" % (op.one("name").decode(), sum(bit for key, bit in FLAGS if op.flag(key)))
    for io, key in (("in", "input_arg"), ("out", "output_arg")):
        for a in op.get(key, []):
            out += " %s(%s, %s, %s, %s, %s, %d)" % (
                io, a.one("name").decode(), NAME[a.one("type")] if "type" in a else "-",
                a.one("type_attr", b"-").decode(), a.one("number_attr", b"-").decode(),
                a.one("type_list_attr", b"-").decode(), a.flag("is_ref"))
    for a in op.get("attr", []):
        kind = a.one("type").decode()
        lst = a.one("allowed_values").one("list", gen.Msg()) if "allowed_values" in a else gen.Msg()
        allowed = 0
        for t in lst.get("type", []):
            allowed |= 1 << NUMBER[t]
        types = " ".join(name for i, (_, name) in enumerate(DTYPES) if allowed >> (i + 1) & 1) or "any"
        strings = "[" + ", ".join(text(s) for s in lst["s"]) + "]" if "s" in lst else "any"
        out += " attr(%s, %s, min=%s, types=%s, strings=%s, default=%s)" % (
            a.one("name").decode(), kind, str(int(a.one("minimum", "0"))) if a.flag("has_minimum") else "none",
            types, strings, default(kind, a.one("default_value")) if "default_value" in a else "(none)")
    return out


def main(argv):
    if len(argv) != 3:
        sys.stderr.write("usage: check_table.py OPS_PBTXT DUMPER\n")
        return 2
    if not argv[1] or not os.path.isfile(argv[1]):
        # meson's skip code: the registry is external data (../shared/tf-ops), absent on a user's clone.
        print("SKIP: TensorFlow's ops.pbtxt is not available (%r); configure with -Dshared_dir=DIR to run this check"
              % argv[1])
        return 77
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
