"""Exceptions raised for dfexec result codes, and the per-thread status.

Every C call returns a dfx_code; a non-zero one becomes the exception class
mapped below, carrying the C message (which names the node, op, frame and
iteration involved) as its text and the code as `.code` / `.code_name`.
"""
import threading

from ._lib import lib


class DfexecError(Exception):
    """Base class of every error raised by dfexec."""

    code = None          # the dfx_code, e.g. -1
    code_name = None     # its C name, e.g. "DFX_EINVAL"

    def __init__(self, message, code=None):
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
            self.code_name = lib.dfx_code_name(code).decode()


class InvalidArgumentError(DfexecError, ValueError):
    """A bad graph, feed, shape or argument (DFX_EINVAL)."""


class NotFoundError(DfexecError, KeyError):
    """A node, tensor or file that does not exist (DFX_ENOTFOUND)."""

    def __str__(self):     # KeyError would otherwise quote the message
        return self.message


class UnimplementedError(DfexecError):
    """An op or dtype dfexec has no kernel for (DFX_EUNIMPL)."""


class ResourceExhaustedError(DfexecError):
    """Memory ran out (DFX_ENOMEM), or a resource limit was hit."""


class LimitExceededError(ResourceExhaustedError):
    """A configured limit was exceeded (DFX_ELIMIT): max_iterations, the tensor size cap."""


class CancelledError(DfexecError):
    """The run was cancelled (DFX_ECANCELED), e.g. by Session.cancel()."""


class DeadlineExceededError(DfexecError, TimeoutError):
    """The run's timeout passed (DFX_EDEADLINE)."""


class OutOfRangeError(DfexecError, IndexError):
    """An index or value out of range (DFX_ERANGE)."""


class FileIOError(DfexecError, OSError):
    """A file could not be read or written (DFX_EIO)."""


class FailedPreconditionError(DfexecError):
    """The call was made in a state that does not allow it (DFX_EPRECOND)."""


class InternalError(DfexecError):
    """A bug inside dfexec (DFX_EINTERNAL)."""


class StuckError(DfexecError):
    """The run could not make progress; the message lists the waiting nodes (DFX_ESTUCK)."""


class ConversionError(DfexecError):
    """A Python function could not be turned into a graph. The message starts
    with the user's file and line."""


_BY_CODE = {
    -1: InvalidArgumentError, -2: NotFoundError, -3: UnimplementedError,
    -4: ResourceExhaustedError, -5: CancelledError, -6: InternalError,
    -7: DeadlineExceededError, -8: OutOfRangeError, -9: FileIOError,
    -10: FailedPreconditionError, -11: LimitExceededError, -12: StuckError,
}


def error_for(code, message):
    """The exception for a non-zero dfx_code."""
    return _BY_CODE.get(code, DfexecError)(message, code)


class _Status:
    """One dfx_status per thread: the C API says a status is not thread-safe."""

    def __init__(self):
        self.ptr = lib.dfx_status_new()
        if not self.ptr:
            raise MemoryError("dfx_status_new")

    def __del__(self, free=lib.dfx_status_free):
        free(self.ptr)


_local = threading.local()


def status():
    """This thread's dfx_status pointer."""
    try:
        return _local.st.ptr
    except AttributeError:
        _local.st = _Status()
        return _local.st.ptr


def check(code, st, what=None):
    """Raises the mapped exception when `code` is not DFX_OK."""
    if code:
        msg = lib.dfx_status_message(st).decode(errors="replace")
        if what:
            msg = f"{what}: {msg}" if msg else what
        raise error_for(code, msg or lib.dfx_code_name(code).decode())
