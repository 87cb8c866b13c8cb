"""Where the package finds libdfexec: DFEXEC_LIBRARY, else the system
loader, else the build tree it was installed from / next to the source."""
import os
import subprocess
import sys

import pytest

import dfexec

PKG_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
IN_TREE = os.path.normpath(os.path.join(PKG_PARENT, "..", "build", "libdfexec.so"))


def _import(env_changes):
    env = {k: v for k, v in os.environ.items() if k not in ("DFEXEC_LIBRARY", "LD_LIBRARY_PATH")}
    env.update(env_changes)
    env["PYTHONPATH"] = PKG_PARENT
    return subprocess.run([sys.executable, "-c", "import dfexec; print(dfexec.library_path)"],
                          env=env, capture_output=True, text=True, cwd="/")


def test_explicit_library_wins_and_a_bad_one_fails_clearly():
    r = _import({"DFEXEC_LIBRARY": dfexec.library_path})
    assert r.returncode == 0 and r.stdout.strip() == dfexec.library_path
    r = _import({"DFEXEC_LIBRARY": "/nonexistent/libdfexec.so"})
    assert r.returncode != 0 and "DFEXEC_LIBRARY names a file that cannot be loaded" in r.stderr


def test_system_loader_through_ld_library_path():
    libdir = os.path.dirname(os.path.abspath(dfexec.library_path))
    if not os.path.exists(os.path.join(libdir, "libdfexec.so.0")):
        pytest.skip("the library under test has no soname link next to it")
    r = _import({"LD_LIBRARY_PATH": libdir})
    assert r.returncode == 0 and r.stdout.strip() == "libdfexec.so.0"


def test_in_tree_fallback():
    if not os.path.exists(IN_TREE):
        pytest.skip("no ../build/libdfexec.so next to this source tree")
    r = _import({})
    assert r.returncode == 0, r.stderr
    out = r.stdout.strip()
    assert out == "libdfexec.so.0" or os.path.samefile(out, IN_TREE)


def test_version_matches():
    assert dfexec.library_version().split(".")[:2] == ["0", "1"]
