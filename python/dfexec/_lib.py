"""Finding libdfexec and declaring the C functions the package calls.

The library is looked up, first hit wins:
  1. the file named by the DFEXEC_LIBRARY environment variable;
  2. the system loader: "libdfexec.so.0" / "libdfexec.so" through
     LD_LIBRARY_PATH, the ld.so cache and the default directories (an
     installed prefix such as /usr/local);
  3. the build tree recorded when the package was installed (_install_info);
  4. ../build/libdfexec.so next to this source tree (in-tree use).
ctypes.CDLL releases the GIL around every call, so sessions run
concurrently from Python threads.
"""
import ctypes
import os
from ctypes import (CFUNCTYPE, POINTER, Structure, c_char_p, c_double, c_float, c_int, c_int64,
                    c_size_t, c_void_p)

API_VERSION = (0, 1)   # the dfexec.h major.minor this package was written against


def _candidates():
    env = os.environ.get("DFEXEC_LIBRARY")
    if env:
        return [os.path.abspath(env)], True
    paths = ["libdfexec.so.0", "libdfexec.so"]
    try:
        from . import _install_info
        paths.append(_install_info.LIBRARY)
    except ImportError:
        pass
    here = os.path.dirname(os.path.abspath(__file__))
    paths.append(os.path.join(here, "..", "..", "build", "libdfexec.so"))
    return paths, False


def _load():
    paths, explicit = _candidates()
    errors = []
    for p in paths:
        try:
            return ctypes.CDLL(p), p
        except OSError as e:
            errors.append(f"  {p}: {e}")
    hint = ("DFEXEC_LIBRARY names a file that cannot be loaded" if explicit else
            "set DFEXEC_LIBRARY=/path/to/libdfexec.so, add its directory to LD_LIBRARY_PATH, "
            "or install it (meson install -C build)")
    raise ImportError("dfexec: cannot load libdfexec (" + hint + "):\n" + "\n".join(errors))


lib, path = _load()

# ---- C types ----------------------------------------------------------------


class Port(Structure):
    _fields_ = [("node", c_char_p), ("index", c_int)]


class PlaceholderC(Structure):
    _fields_ = [("name", c_char_p), ("node", c_int), ("dtype", c_int), ("rank", c_int),
                ("dims", POINTER(c_int64)), ("has_default", c_int)]


class SessionOptions(Structure):
    _fields_ = [("n_threads", c_int), ("inline_only", c_int), ("optimize", c_char_p)]


class OptimizeOptions(Structure):
    _fields_ = [("passes", c_char_p), ("feeds", POINTER(Port)), ("n_feeds", c_int),
                ("fetches", POINTER(Port)), ("n_fetches", c_int), ("targets", POINTER(c_char_p)),
                ("n_targets", c_int)]


class OptimizeStat(Structure):
    _fields_ = [("pass_", c_char_p), ("round", c_int), ("removed", c_int), ("added", c_int),
                ("rewritten", c_int), ("ms", c_double)]


class OptimizeReport(Structure):
    _fields_ = [("nodes_before", c_int), ("nodes_after", c_int), ("n_stats", c_int),
                ("stats", POINTER(OptimizeStat))]


TRACE_FN = CFUNCTYPE(None, c_void_p, c_char_p, c_char_p, c_char_p, c_int64, c_int64, c_int64, c_int)


class RunOptions(Structure):
    _fields_ = [("timeout_sec", c_double), ("max_iterations", c_int64),
                ("trace", TRACE_FN), ("trace_ud", c_void_p)]


DEALLOC_FN = CFUNCTYPE(None, c_void_p, c_void_p)
WHILE_COND_FN = CFUNCTYPE(c_int, c_void_p, POINTER(c_char_p), c_int, c_void_p, POINTER(c_char_p))
WHILE_BODY_FN = CFUNCTYPE(c_int, c_void_p, POINTER(c_char_p), c_int, c_void_p, POINTER(c_char_p))
COND_BRANCH_FN = CFUNCTYPE(c_int, c_void_p, c_void_p, POINTER(c_char_p))

P = c_void_p     # every opaque handle is passed as a plain pointer
PP = POINTER(c_void_p)
_I64P = POINTER(c_int64)

_PROTOS = {
    # name: (restype, argtypes)
    "dfx_code_name": (c_char_p, [c_int]),
    "dfx_version": (c_char_p, []),
    "dfx_free": (None, [P]),
    "dfx_status_new": (P, []),
    "dfx_status_free": (None, [P]),
    "dfx_status_code": (c_int, [P]),
    "dfx_status_message": (c_char_p, [P]),
    "dfx_tensor_new": (P, [c_int, _I64P, c_int]),
    "dfx_tensor_new_copy": (P, [c_int, _I64P, c_int, c_void_p, c_size_t]),
    "dfx_tensor_new_wrap": (P, [c_int, _I64P, c_int, c_void_p, c_size_t, DEALLOC_FN, c_void_p]),
    "dfx_tensor_free": (None, [P]),
    "dfx_tensor_dtype": (c_int, [P]),
    "dfx_tensor_ndims": (c_int, [P]),
    "dfx_tensor_dim": (c_int64, [P, c_int]),
    "dfx_tensor_count": (c_int64, [P]),
    "dfx_tensor_nbytes": (c_size_t, [P]),
    "dfx_tensor_data": (c_void_p, [P]),
    "dfx_tensor_string": (c_void_p, [P, c_int64, POINTER(c_size_t)]),
    "dfx_tensor_set_string": (c_int, [P, c_int64, c_char_p, c_size_t]),
    "dfx_set_max_tensor_bytes": (c_size_t, [c_size_t]),
    "dfx_graph_import": (c_int, [c_void_p, c_size_t, PP, P]),
    "dfx_graph_load": (c_int, [c_char_p, PP, P]),
    "dfx_graph_free": (None, [P]),
    "dfx_graph_node_count": (c_int, [P]),
    "dfx_graph_node_find": (c_int, [P, c_char_p]),
    "dfx_graph_node_name": (c_char_p, [P, c_int]),
    "dfx_graph_node_op": (c_char_p, [P, c_int]),
    "dfx_graph_node_frame": (c_char_p, [P, c_int]),
    "dfx_graph_node_num_inputs": (c_int, [P, c_int]),
    "dfx_graph_node_num_outputs": (c_int, [P, c_int]),
    "dfx_graph_node_input": (Port, [P, c_int, c_int]),
    "dfx_graph_node_output_dtype": (c_int, [P, c_int, c_int]),
    "dfx_graph_node_num_control_inputs": (c_int, [P, c_int]),
    "dfx_graph_node_control_input": (c_int, [P, c_int, c_int]),
    "dfx_graph_placeholders": (c_int, [P, POINTER(PlaceholderC), c_int]),
    "dfx_graph_node_attr_int": (c_int, [P, c_int, c_char_p, _I64P, P]),
    "dfx_graph_node_attr_string": (c_int, [P, c_int, c_char_p, POINTER(c_char_p), POINTER(c_size_t), P]),
    "dfx_graph_serialize": (c_int, [P, c_int, PP, POINTER(c_size_t), P]),
    "dfx_graph_save": (c_int, [P, c_char_p, P]),
    "dfx_graph_optimize": (c_int, [P, POINTER(OptimizeOptions), PP, POINTER(OptimizeReport), P]),
    "dfx_optimize_report_free": (None, [POINTER(OptimizeReport)]),
    "dfx_optimize_pass": (c_char_p, [c_int, POINTER(c_char_p), POINTER(c_int)]),
    "dfx_session_new": (c_int, [P, POINTER(SessionOptions), PP, P]),
    "dfx_session_free": (None, [P]),
    "dfx_session_run": (c_int, [P, POINTER(RunOptions), POINTER(Port), PP, c_int,
                                POINTER(Port), PP, c_int, POINTER(c_char_p), c_int, P]),
    "dfx_session_cancel": (None, [P]),
    "dfx_builder_new": (P, []),
    "dfx_builder_free": (None, [P]),
    "dfx_builder_node_count": (c_int, [P]),
    "dfx_builder_node": (c_int, [P, c_char_p, c_char_p, POINTER(c_char_p), c_int, PP, P]),
    "dfx_builder_find": (P, [P, c_char_p]),
    "dfx_builder_pivot": (c_char_p, [P]),
    "dfx_bnode_name": (c_char_p, [P]),
    "dfx_bnode_attr_int": (c_int, [P, c_char_p, c_int64]),
    "dfx_bnode_attr_float": (c_int, [P, c_char_p, c_float]),
    "dfx_bnode_attr_bool": (c_int, [P, c_char_p, c_int]),
    "dfx_bnode_attr_string": (c_int, [P, c_char_p, c_char_p]),
    "dfx_bnode_attr_type": (c_int, [P, c_char_p, c_int]),
    "dfx_bnode_attr_shape": (c_int, [P, c_char_p, _I64P, c_int]),
    "dfx_bnode_attr_tensor": (c_int, [P, c_char_p, P]),
    "dfx_bnode_attr_ints": (c_int, [P, c_char_p, _I64P, c_int]),
    "dfx_builder_placeholder": (c_int, [P, c_char_p, c_int, _I64P, c_int, PP, P]),
    "dfx_builder_const": (c_int, [P, c_char_p, P, PP, P]),
    "dfx_builder_scope_push": (c_int, [P, c_char_p, P]),
    "dfx_builder_scope_pop": (c_int, [P, P]),
    "dfx_builder_while": (c_int, [P, c_char_p, POINTER(c_char_p), c_int, c_int, WHILE_COND_FN,
                                  WHILE_BODY_FN, c_void_p, POINTER(c_char_p), P]),
    "dfx_builder_cond": (c_int, [P, c_char_p, c_char_p, c_int, COND_BRANCH_FN, COND_BRANCH_FN,
                                 c_void_p, POINTER(c_char_p), P]),
    "dfx_builder_to_graph": (c_int, [P, PP, P]),
    "dfx_builder_serialize": (c_int, [P, c_int, PP, POINTER(c_size_t), P]),
    "dfx_builder_save": (c_int, [P, c_char_p, P]),
}

for _name, (_res, _args) in _PROTOS.items():
    _f = getattr(lib, _name)
    _f.restype = _res
    _f.argtypes = _args


def version():
    """The loaded library's version string, e.g. "0.1.0"."""
    return lib.dfx_version().decode()


def _check_version():
    got = tuple(int(x) for x in version().split(".")[:2])
    if got != API_VERSION:
        raise ImportError(f"dfexec: {path} is version {version()}, but this package needs "
                          f"{API_VERSION[0]}.{API_VERSION[1]}.x")


_check_version()
