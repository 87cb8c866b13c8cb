#!/usr/bin/env python3
"""gen_op_table.py - TensorFlow's OpList (ops.pbtxt) to core/op_table_tf.c.

Usage: gen_op_table.py OPS_PBTXT OUT_C

Reads an OpList in protobuf text format with a small reader of its own (the
standard library only; no protobuf package) and writes one dfx_op_src row per
OpDef, sorted by name, in the signature notation of core/op_def.h. The output
depends on the input bytes only, so running it twice gives the same file.

Fields that import and validation do not use (deprecation, summaries and
descriptions, experimental full types, handle data) are dropped; any other field the script does not
know makes it fail, so a newer OpList cannot lose information silently.
"""
import hashlib
import math
import re
import sys

TF_JAVA_COMMIT = "58a19434ad41d6e62c944e2f7f2a974bf170bff4"
TF_JAVA_PATH = "tensorflow-core/tensorflow-core-native/src/gen/resources/org/tensorflow/ops.pbtxt"

# ---- protobuf text format reader ----

_TOKEN = re.compile(r'''\s+|\#[^\n]*|(?P<tok>[{}\[\]<>:,]|"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|[^\s{}\[\]<>:,"'#]+)''')
_ESC = {"n": 10, "r": 13, "t": 9, "a": 7, "b": 8, "f": 12, "v": 11, "\\": 92, "'": 39, '"': 34, "?": 63}


def tokens(text):
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m:
            raise ValueError("bad text format near %r" % text[pos:pos + 30])
        pos = m.end()
        if m.group("tok"):
            yield m.group("tok")


def unquote(tok):
    """A quoted text-format string to bytes (C escapes, octal and hex)."""
    body, out, i = tok[1:-1], bytearray(), 0
    while i < len(body):
        c = body[i]
        if c != "\\":
            out += c.encode("utf-8")
            i += 1
            continue
        e = body[i + 1]
        if e in _ESC:
            out.append(_ESC[e])
            i += 2
        elif e in "01234567":
            j = i + 1
            while j < len(body) and j < i + 4 and body[j] in "01234567":
                j += 1
            out.append(int(body[i + 1:j], 8) & 0xFF)
            i = j
        elif e in "xX":
            j = i + 2
            while j < len(body) and j < i + 4 and body[j] in "0123456789abcdefABCDEF":
                j += 1
            out.append(int(body[i + 2:j], 16))
            i = j
        else:
            raise ValueError("unknown escape in %s" % tok)
    return bytes(out)


class Msg(dict):
    """A message: field name -> list of values (str scalars, bytes, Msg)."""

    def one(self, key, default=None):
        v = self.get(key)
        if not v:
            return default
        if len(v) != 1:
            raise ValueError("field %s repeated" % key)
        return v[0]

    def flag(self, key):
        return self.one(key, "false") == "true"


def read_message(toks, close=None):
    msg = Msg()
    for tok in toks:
        if tok == close:
            return msg
        name = tok
        tok = next(toks)
        if tok == ":":
            tok = next(toks)
        if tok in "{<":
            values = [read_message(toks, "}" if tok == "{" else ">")]
        elif tok == "[":
            values = []
            for t in toks:
                if t == "]":
                    break
                if t != ",":
                    values.append(scalar(t))
        else:
            values = [scalar(tok)]
        msg.setdefault(name, []).extend(values)
    if close:
        raise ValueError("unterminated message")
    return msg


def scalar(tok):
    return unquote(tok) if tok[0] in "\"'" else tok


# ---- OpDef to the signature notation ----

def dtype(enum):
    """DT_FLOAT -> float: TF's own REGISTER_OP spelling."""
    if not enum.startswith("DT_") or enum.endswith("_REF"):
        raise ValueError("unexpected dtype %s" % enum)
    return enum[3:].lower()


def quote(b):
    """Bytes as a notation string: '...' with \\\\, \\', \\n, \\t, \\r and \\xHH escapes."""
    out = []
    for ch in b:
        c = chr(ch)
        if c in "\\'":
            out.append("\\" + c)
        elif c in "\n\t\r":
            out.append({"\n": "\\n", "\t": "\\t", "\r": "\\r"}[c])
        elif 32 <= ch < 127:
            out.append(c)
        else:
            out.append("\\x%02x" % ch)
    return "'" + "".join(out) + "'"


def number(tok, kind):
    """Checks an int or float token and returns it in the notation."""
    if kind == "int":
        return str(int(tok))
    low = tok.lower()
    if low in ("inf", "infinity", "-inf", "-infinity", "nan", "-nan"):
        return low.replace("infinity", "inf").replace("-nan", "nan")
    if not math.isfinite(float(low)):  # float() raises on anything that is not a number
        raise ValueError("float %s" % tok)
    return low


def shape(msg):
    if msg.flag("unknown_rank"):
        return "unknown"
    dims = [str(int(d.one("size", "0"))) for d in msg.get("dim", [])]
    return "[" + ", ".join(dims) + "]"


def tensor(msg):
    """The one tensor default TF has (ImageSummary's bad_color): dtype, shape, values."""
    known = {"dtype", "tensor_shape", "int_val", "int64_val", "float_val", "double_val", "bool_val"}
    unknown = set(msg) - known
    if unknown:
        raise ValueError("tensor default with %s" % sorted(unknown))
    vals = []
    for key in ("int_val", "int64_val", "float_val", "double_val", "bool_val"):
        kind = "float" if key in ("float_val", "double_val") else "int"
        for v in msg.get(key, []):
            vals.append(("1" if v == "true" else "0") if key == "bool_val" else number(v, kind))
    return "tensor(%s, %s%s)" % (dtype(msg.one("dtype")), shape(msg.one("tensor_shape", Msg())),
                                 "".join(", " + v for v in vals))


def value(v, kind):
    """An AttrValue of a scalar kind (int, float, ...) in the notation."""
    if kind in ("int", "float"):
        return number(v.one("i" if kind == "int" else "f", "0"), kind)
    if kind == "bool":
        return "true" if v.flag("b") else "false"
    if kind == "string":
        return quote(v.one("s", b""))
    if kind == "type":
        return dtype(v.one("type"))
    if kind == "shape":
        return shape(v.one("shape", Msg()))
    if kind == "tensor":
        return tensor(v.one("tensor"))
    raise ValueError("no default notation for %s" % kind)


def default(v, kind):
    if not kind.startswith("list("):
        return value(v, kind)
    elem = kind[5:-1]
    lst = v.one("list", Msg())
    field = LIST_FIELD.get(elem)
    if field is None or set(lst) - {field}:
        raise ValueError("list default %s of %s" % (sorted(lst), kind))
    items = []
    for x in lst.get(field, []):
        items.append(value(x if isinstance(x, Msg) else Msg({field: [x]}), elem))
    return "[" + ", ".join(items) + "]"


# The ListValue field holding each element kind a list default can have.
LIST_FIELD = {"int": "i", "float": "f", "bool": "b", "string": "s", "type": "type", "shape": "shape"}


def allowed(a, kind):
    lst = a.one("allowed_values").one("list", Msg())
    if kind in ("type", "list(type)") and set(lst) == {"type"}:
        items = [dtype(t) for t in lst["type"]]
    elif kind in ("string", "list(string)") and set(lst) == {"s"}:
        items = [quote(s) for s in lst["s"]]
    else:
        raise ValueError("allowed values %s for %s" % (sorted(lst), kind))
    body = "{" + ", ".join(items) + "}"
    return "list(" + body + ")" if kind.startswith("list(") else body


ATTR_FIELDS = {"name", "type", "default_value", "allowed_values", "has_minimum", "minimum", "description"}
ARG_FIELDS = {"name", "type", "type_attr", "number_attr", "type_list_attr", "is_ref", "description",
              "experimental_full_type", "handle_data"}
OP_FIELDS = {"name", "input_arg", "output_arg", "attr", "is_stateful", "is_commutative", "is_aggregate",
             "allows_uninitialized_input", "is_distributed_communication", "deprecation", "summary",
             "description", "experimental_full_type"}
FLAGS = [("is_stateful", "DFX_OP_STATEFUL"), ("is_commutative", "DFX_OP_COMMUTATIVE"),
         ("is_aggregate", "DFX_OP_AGGREGATE"), ("allows_uninitialized_input", "DFX_OP_ALLOWS_UNINIT"),
         ("is_distributed_communication", "DFX_OP_DISTRIBUTED")]


def check_fields(msg, known, what):
    extra = set(msg) - known
    if extra:
        raise ValueError("%s: unknown fields %s" % (what, sorted(extra)))


def attr_text(a, op):
    check_fields(a, ATTR_FIELDS, op + " attr")
    kind = a.one("type").decode()
    text = a.one("name").decode() + ": " + (allowed(a, kind) if "allowed_values" in a else kind)
    if a.flag("has_minimum"):
        text += " >= " + str(int(a.one("minimum", "0")))
    if "default_value" in a:
        text += " = " + default(a.one("default_value"), kind)
    return text


def arg_text(arg, attr_kinds, op):
    check_fields(arg, ARG_FIELDS, op + " arg")
    forms = [k for k in ("type", "type_attr", "type_list_attr") if k in arg]
    if len(forms) != 1:
        raise ValueError("%s: arg with %s" % (op, forms))
    if "type" in arg:
        t = dtype(arg.one("type"))
    else:
        t = arg.one(forms[0]).decode()
        want = "type" if forms[0] == "type_attr" else "list(type)"
        if attr_kinds.get(t) != want:
            raise ValueError("%s: arg type %s is not a %s attr" % (op, t, want))
    if arg.flag("is_ref"):
        t = "Ref(" + t + ")"
    if "number_attr" in arg:
        t = arg.one("number_attr").decode() + " * " + t
    return arg.one("name").decode() + ": " + t


def c_string(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def row(op):
    name = op.one("name").decode()
    check_fields(op, OP_FIELDS, name)
    attr_kinds = {a.one("name").decode(): a.one("type").decode() for a in op.get("attr", [])}
    for a in attr_kinds:
        if a in DTYPE_WORDS:  # the parser would read an arg "x: float" as this attr
            raise ValueError("%s: attr %s reads as a dtype" % (name, a))
    ins = ", ".join(arg_text(x, attr_kinds, name) for x in op.get("input_arg", []))
    outs = ", ".join(arg_text(x, attr_kinds, name) for x in op.get("output_arg", []))
    args = ins + ((" -> " if ins else "-> ") + outs if outs else "")
    attrs = "; ".join(attr_text(a, name) for a in op.get("attr", []))
    flags = " | ".join(f for key, f in FLAGS if op.flag(key)) or "0"
    return "    {%s, %s, %s, %s}," % (c_string(name), c_string(args), c_string(attrs), flags)


DTYPE_WORDS = {"float", "double", "half", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
               "bool", "string", "complex64", "complex128", "bfloat16", "qint8", "quint8", "qint16", "quint16",
               "qint32", "resource", "variant", "Ref"}


def main(argv):
    if len(argv) != 3:
        sys.stderr.write("usage: gen_op_table.py OPS_PBTXT OUT_C\n")
        return 2
    with open(argv[1], "rb") as f:
        raw = f.read()
    oplist = read_message(tokens(raw.decode("utf-8")))
    check_fields(oplist, {"op"}, "OpList")
    ops = sorted(oplist["op"], key=lambda o: o.one("name"))
    names = [o.one("name") for o in ops]
    if len(set(names)) != len(names):
        raise ValueError("duplicate op names")
    rows = [row(o) for o in ops]
    src = argv[1].replace("\\", "/").split("/")[-1]
    out = [
        "/* op_table_tf.c - every OpDef TensorFlow registers, as dfx_op_src rows (notation: op_def.h).",
        " * GENERATED by tools/gen_ops/gen_op_table.py from %s (sha256 %s)," % (src, hashlib.sha256(raw).hexdigest()[:16]),
        " * do not edit by hand; rerun the script instead. Source: tensorflow/java @ %s :" % TF_JAVA_COMMIT,
        " * %s" % TF_JAVA_PATH,
        " * (Apache-2.0), generated there from TensorFlow's own op registry. Rows are sorted",
        " * by name (strcmp order) so dfx__op_table_tf_find can bisect them. */",
        '#include "op_def.h"',
        "",
        "const dfx_op_src dfx__op_table_tf[] = {",
    ]
    out += rows
    out += ["    {NULL, NULL, NULL, 0}};", "", "const int dfx__op_table_tf_count = %d;" % len(rows), ""]
    with open(argv[2], "w", encoding="utf-8", newline="\n") as f:
        f.write("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
