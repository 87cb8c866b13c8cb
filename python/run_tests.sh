#!/usr/bin/env bash
# run_tests.sh [BUILD_DIR] [pytest args...] - the Python package's tests,
# against BUILD_DIR/libdfexec.so (default: ../build), with Debian's Python
# (the one that has python3-numpy and python3-pytest).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-$here/../build}" && pwd)
[ $# -gt 0 ] && shift
if [ ! -f "$build/libdfexec.so" ]; then
  echo "run_tests.sh: no libdfexec.so in $build (build it first: tools/bootstrap.sh run)" >&2
  exit 2
fi
export DFEXEC_LIBRARY="$build/libdfexec.so"
cd "$here"
exec /usr/bin/python3 -m pytest -q -p no:cacheprovider tests "$@"
