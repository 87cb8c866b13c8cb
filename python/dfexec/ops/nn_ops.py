"""Activations and friends (float inputs; integers are taken as float64)."""
from .. import dtypes
from ._convert import as_tensor
from ._convert import cast, op1 as _op
from .math_ops import _float_fn, _unary

elu, softplus, softsign = _float_fn("Elu"), _float_fn("Softplus"), _float_fn("Softsign")


def relu(x, name=None): return _unary("Relu", x, name)
def relu6(x, name=None): return _unary("Relu6", x, name)


def leaky_relu(x, alpha=0.2, name=None):
    x = as_tensor(x)
    if not x.dtype.is_floating:
        x = cast(x, dtypes.float64)
    return _op("LeakyRelu", [x], x.dtype, x.shape, {"alpha": float(alpha)}, name)


def softmax(logits, name=None):
    """Softmax over the last axis."""
    return _unary("Softmax", logits, name, float_only=True)


def log_softmax(logits, name=None):
    return _unary("LogSoftmax", logits, name, float_only=True)
