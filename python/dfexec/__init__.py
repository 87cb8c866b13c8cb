"""dfexec: run TensorFlow 1.x graphs from Python with numpy, and turn Python
functions into static graphs by tracing or by AST conversion.

    import dfexec
    g = dfexec.load("graph.pb")
    with dfexec.Session(g) as sess:
        print(sess.run("while/Exit:0", {"x": [[1, 2]]}))
"""
from ._lib import path as library_path, version as library_version
from .dtypes import DType, as_dtype
from .errors import (CancelledError, ConversionError, DeadlineExceededError, DfexecError,
                     FailedPreconditionError, FileIOError, InternalError, InvalidArgumentError,
                     LimitExceededError, NotFoundError, OutOfRangeError, ResourceExhaustedError,
                     StuckError, UnimplementedError)
from .graph import Graph, load, optimize_passes
from .session import Session
from .tensor import Tensor
from . import dtypes, ops
from .function import Function, GraphFunction, TensorSpec, function
from .trace import TracingWarning, trace

__version__ = "0.1.0"

__all__ = [
    "CancelledError", "ConversionError", "DType", "DeadlineExceededError", "DfexecError",
    "FailedPreconditionError", "FileIOError", "Function", "Graph", "GraphFunction", "InternalError",
    "InvalidArgumentError", "LimitExceededError", "NotFoundError", "OutOfRangeError",
    "ResourceExhaustedError", "Session", "StuckError", "Tensor", "TensorSpec", "TracingWarning",
    "UnimplementedError", "as_dtype", "dtypes", "function", "library_path", "library_version", "load", "ops", "optimize_passes", "trace",
]
