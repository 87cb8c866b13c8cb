"""dfexec element types and their numpy counterparts.

A DType names one dfx_dtype. Its `.np` is the numpy dtype arrays of it are
given and returned as: the same type where numpy has one, object arrays of
bytes for strings, float32 for bfloat16 (converted on the way in and out),
and the underlying integer type for the quantized types (as in TensorFlow).
"""
import numpy as np



class DType:
    __slots__ = ("name", "enum", "np", "size")

    def __init__(self, name, enum, np_dtype, size):
        self.name, self.enum, self.np, self.size = name, enum, np.dtype(np_dtype), size

    def __repr__(self):
        return f"dfexec.{self.name}"

    def __reduce__(self):
        return as_dtype, (self.name,)

    @property
    def is_floating(self):
        return self.np.kind == "f" and self is not string

    @property
    def is_integer(self):
        return self.np.kind in "iu" and not self.name.startswith("q")

    @property
    def is_bool(self):
        return self is bool_

    @property
    def is_complex(self):
        return self.np.kind == "c"


_TABLE = [
    # name, dfx enum (TensorFlow's DataType number), numpy dtype
    ("float32", 1, np.float32), ("float64", 2, np.float64), ("int32", 3, np.int32),
    ("uint8", 4, np.uint8), ("int16", 5, np.int16), ("int8", 6, np.int8),
    ("string", 7, object), ("complex64", 8, np.complex64), ("int64", 9, np.int64),
    ("bool", 10, np.bool_), ("qint8", 11, np.int8), ("quint8", 12, np.uint8),
    ("qint32", 13, np.int32), ("bfloat16", 14, np.float32), ("qint16", 15, np.int16),
    ("quint16", 16, np.uint16), ("uint16", 17, np.uint16), ("complex128", 18, np.complex128),
    ("float16", 19, np.float16), ("uint32", 22, np.uint32), ("uint64", 23, np.uint64),
]

_BY_NAME = {}
_BY_ENUM = {}
for _name, _enum, _np in _TABLE:
    _dt = DType(_name, _enum, _np, 0 if _enum == 7 else np.dtype(_np).itemsize if _enum != 14 else 2)
    _BY_NAME[_name] = _BY_ENUM[_enum] = _dt
    globals()[_name + ("_" if _name == "bool" else "")] = _dt
_BY_NAME["bool_"] = bool_      # noqa: F821 (defined by the loop above)
_BY_NAME["half"] = float16     # noqa: F821
_BY_NAME["float"] = float32    # noqa: F821
_BY_NAME["double"] = float64   # noqa: F821
_BY_NP = {np.dtype(n): _BY_NAME[n] for n in
          ("float32", "float64", "int32", "uint8", "int16", "int8", "complex64", "int64",
           "bool", "uint16", "complex128", "float16", "uint32", "uint64")}

ALL = tuple(_BY_ENUM.values())


def as_dtype(x):
    """The DType for a DType, a name ("float32"), a numpy dtype or type, or a
    Python type (float -> float64, int -> int64, bool, bytes/str -> string)."""
    if isinstance(x, DType):
        return x
    if isinstance(x, str):
        try:
            return _BY_NAME[x]
        except KeyError:
            raise TypeError(f"unknown dtype name {x!r}") from None
    if x is float:
        return float64     # noqa: F821
    if x is int:
        return int64       # noqa: F821
    if x is bool:
        return bool_       # noqa: F821
    if x in (bytes, str):
        return string      # noqa: F821
    d = np.dtype(x)
    if d.kind in "OSU":
        return string      # noqa: F821
    try:
        return _BY_NP[d]
    except KeyError:
        raise TypeError(f"dfexec has no dtype for numpy {d}") from None


def from_enum(enum):
    """The DType for a dfx_dtype number; TypeError for resource/variant/invalid."""
    try:
        return _BY_ENUM[enum]
    except KeyError:
        raise TypeError(f"dfexec dtype number {enum} (resource, variant or invalid) "
                        "has no numpy equivalent") from None


def bf16_bits(a):
    """float values -> bfloat16 bit patterns (uint16), rounding to nearest even."""
    bits = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32)
    nan = np.isnan(a)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    return np.where(nan, np.uint16(0x7FC0), rounded)


def bf16_to_float32(bits):
    """bfloat16 bit patterns (uint16) -> float32."""
    return (bits.astype(np.uint32) << 16).view(np.float32)
