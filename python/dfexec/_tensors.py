"""Moving values between numpy and dfx_tensor.

In: a value is converted numpy-style to the dtype the graph expects
(np.asarray(value, dtype=...), as tf.compat.v1.Session.run does). An aligned,
C-contiguous array of at least WRAP_MIN_BYTES is handed to C in place
(dfx_tensor_new_wrap) and kept alive until C's release callback runs; smaller
or strided arrays are copied, which is cheaper than the callback.
Out: elements are copied into a new numpy array (strings into an object
array of bytes), so results stay valid and writable after the C tensor goes.
"""
import ctypes
import itertools

import numpy as np

from . import dtypes
from ._lib import DEALLOC_FN, lib

WRAP_MIN_BYTES = 32 * 1024

_wrapped = {}               # key -> array kept alive for C; popped by _release
_keys = itertools.count(1)


@DEALLOC_FN
def _release(data, key):
    _wrapped.pop(key, None)


def _dims(shape):
    return (ctypes.c_int64 * len(shape))(*shape) if shape else None


def to_c(value, dtype):
    """A new dfx_tensor holding `value` as `dtype`. Raises TypeError or
    ValueError when the value does not convert; MemoryError when C fails."""
    if dtype is dtypes.string:
        return _strings_to_c(value)
    if dtype is dtypes.bfloat16:
        arr = dtypes.bf16_bits(np.asarray(value, dtype=np.float32))
    else:
        arr = np.asarray(value, dtype=dtype.np)
    shape = arr.shape
    if len(shape) > 8:
        raise ValueError(f"dfexec tensors have at most 8 dimensions, got shape {shape}")
    dims = _dims(shape)
    nbytes = arr.nbytes
    if nbytes >= WRAP_MIN_BYTES and arr.flags.c_contiguous and arr.flags.aligned:
        key = next(_keys)
        _wrapped[key] = arr
        t = lib.dfx_tensor_new_wrap(dtype.enum, dims, len(shape), arr.ctypes.data, nbytes, _release, key)
        if not t:
            _wrapped.pop(key, None)
    else:      # bytes go to a c_void_p argument as their buffer: cheaper than arr.ctypes
        t = lib.dfx_tensor_new_copy(dtype.enum, dims, len(shape), arr.tobytes(), nbytes)
    if not t:
        raise MemoryError(f"dfexec could not make a {dtype.name} tensor of shape {shape}")
    return t


def _as_bytes(x):
    if isinstance(x, bytes):
        return x
    if isinstance(x, str):
        return x.encode()
    if isinstance(x, (np.bytes_, bytearray, memoryview)):
        return bytes(x)
    raise TypeError(f"a string tensor takes bytes or str elements, not {type(x).__name__}")


def _strings_to_c(value):
    arr = np.asarray(value, dtype=object)
    shape = arr.shape
    t = lib.dfx_tensor_new(dtypes.string.enum, _dims(shape), len(shape))
    if not t:
        raise MemoryError(f"dfexec could not make a string tensor of shape {shape}")
    try:
        for i, x in enumerate(arr.flat):
            b = _as_bytes(x)
            if lib.dfx_tensor_set_string(t, i, b, len(b)):
                raise MemoryError("dfx_tensor_set_string failed")
    except BaseException:
        lib.dfx_tensor_free(t)
        raise
    return t


def from_c(t, dt=None):
    """A new numpy array with the contents of dfx_tensor `t` (borrowed);
    `dt`, when given, is its DType as the graph declares it."""
    if dt is None:
        dt = dtypes.from_enum(lib.dfx_tensor_dtype(t))
    shape = tuple(lib.dfx_tensor_dim(t, i) for i in range(lib.dfx_tensor_ndims(t)))
    if dt is dtypes.string:
        n = lib.dfx_tensor_count(t)
        out = np.empty(n, dtype=object)
        ln = ctypes.c_size_t()
        for i in range(n):
            p = lib.dfx_tensor_string(t, i, ctypes.byref(ln))
            out[i] = ctypes.string_at(p, ln.value) if ln.value else b""
        return out.reshape(shape)
    npdt = np.dtype(np.uint16) if dt is dtypes.bfloat16 else dt.np
    nbytes = lib.dfx_tensor_nbytes(t)
    if nbytes < WRAP_MIN_BYTES:      # small: one bytes copy, wrapped writable
        out = np.ndarray(shape, npdt, bytearray(ctypes.string_at(lib.dfx_tensor_data(t), nbytes)) if nbytes
                         else None)
    else:
        out = np.empty(shape, dtype=npdt)
        ctypes.memmove(out.ctypes.data, lib.dfx_tensor_data(t), nbytes)
    return dtypes.bf16_to_float32(out) if dt is dtypes.bfloat16 else out
