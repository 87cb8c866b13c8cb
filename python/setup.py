"""Records where libdfexec was when the package was installed, so an
installed package finds the build tree it came from (the third place
dfexec/_lib.py looks). Everything else is in pyproject.toml."""
import os

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))


def _library():
    env = os.environ.get("DFEXEC_LIBRARY")
    if env:
        return os.path.abspath(env)
    return os.path.normpath(os.path.join(HERE, "..", "build", "libdfexec.so"))


class BuildPy(build_py):
    def run(self):
        super().run()
        target = os.path.join(self.build_lib, "dfexec", "_install_info.py")
        with open(target, "w") as f:
            f.write('"""Written by setup.py at install time."""\n')
            f.write(f"LIBRARY = {_library()!r}\n")


setup(cmdclass={"build_py": BuildPy})
