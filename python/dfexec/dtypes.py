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


_BY_NAME = {}
_BY_ENUM = {}


def _dt(name, enum, np_dtype, size):
    d = _BY_NAME[name] = _BY_ENUM[enum] = DType(name, enum, np_dtype, size)
    return d


# name, dfx enum (TensorFlow's DataType number), numpy dtype, bytes per element
float32 = _dt("float32", 1, np.float32, 4)
float64 = _dt("float64", 2, np.float64, 8)
int32 = _dt("int32", 3, np.int32, 4)
uint8 = _dt("uint8", 4, np.uint8, 1)
int16 = _dt("int16", 5, np.int16, 2)
int8 = _dt("int8", 6, np.int8, 1)
string = _dt("string", 7, object, 0)
complex64 = _dt("complex64", 8, np.complex64, 8)
int64 = _dt("int64", 9, np.int64, 8)
bool_ = _dt("bool", 10, np.bool_, 1)
qint8 = _dt("qint8", 11, np.int8, 1)
quint8 = _dt("quint8", 12, np.uint8, 1)
qint32 = _dt("qint32", 13, np.int32, 4)
bfloat16 = _dt("bfloat16", 14, np.float32, 2)
qint16 = _dt("qint16", 15, np.int16, 2)
quint16 = _dt("quint16", 16, np.uint16, 2)
uint16 = _dt("uint16", 17, np.uint16, 2)
complex128 = _dt("complex128", 18, np.complex128, 16)
float16 = _dt("float16", 19, np.float16, 2)
uint32 = _dt("uint32", 22, np.uint32, 4)
uint64 = _dt("uint64", 23, np.uint64, 8)

_BY_NAME.update({"bool_": bool_, "half": float16, "float": float32, "double": float64})
_BY_NP = {d.np: d for d in (float32, float64, int32, uint8, int16, int8, complex64, int64, bool_, uint16,
                            complex128, float16, uint32, uint64)}

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
        return float64
    if x is int:
        return int64
    if x is bool:
        return bool_
    if x in (bytes, str):
        return string
    d = np.dtype(x)
    if d.kind in "OSU":
        return string
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
