#!/usr/bin/env bash
# bootstrap.sh - set up dfexec on a fresh Debian 12 machine.
#   tools/bootstrap.sh run   install what is missing, build, run the example graph
#   tools/bootstrap.sh test  the same, then the whole test suite: the normal
#                            build, the Python package, a release build with a
#                            bench smoke run, ASan+UBSan, the scheduler under
#                            TSan, fuzz smoke
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-run}

pkgs="build-essential meson ninja-build pkg-config protobuf-c-compiler libprotobuf-c-dev
      protobuf-compiler libuv1-dev libopenblas-dev liblapacke-dev libcriterion-dev graphviz libre2-dev
      libkissfft-dev mpich libmpich-dev"
# Test mode: the fuzz smoke run needs clang and the libFuzzer runtime, the
# Python package's tests numpy and pytest (Debian's python3).
[ "$mode" = test ] && pkgs="$pkgs clang libclang-rt-14-dev python3-numpy python3-pytest"
missing=""
for p in $pkgs; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
if [ -n "$missing" ]; then
  echo "== installing:$missing"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing >/dev/null
fi

# setup DIR [meson options]: configures DIR unless it already is. A directory
# an earlier failed setup left half-made is wiped first (ninja would only say
# "loading 'build.ninja'"), and a failing setup shows meson's whole output.
# DFX_MESON_ARGS adds options to every configuration (.ci/run: the external
# test data must be there).
setup() {
  local dir=$1
  shift
  if [ -d "$dir" ] && [ ! -f "$dir/build.ninja" ]; then
    echo "== $dir was left half-configured by an earlier failure: configuring it again from scratch"
    rm -rf "$dir"
  fi
  if [ -d "$dir" ]; then
    [ -z "${DFX_MESON_ARGS:-}" ] || meson configure "$dir" $DFX_MESON_ARGS
    return
  fi
  local log
  log=$(mktemp)
  if ! meson setup "$dir" "$@" ${DFX_MESON_ARGS:-} >"$log" 2>&1; then
    cat "$log" >&2
    rm -f "$log"
    rm -rf "$dir"
    echo "bootstrap: 'meson setup $dir' failed (its output is above)" >&2
    exit 1
  fi
  rm -f "$log"
}

jobs=$(nproc)
setup build
ninja -C build -j"$jobs"

case "$mode" in
  run)
    ./build/tools/dfexec/dfexec examples/graphs/counter_loop.pbtxt
    ;;
  test)
    ./build/tools/dfexec/dfexec examples/graphs/counter_loop.pbtxt
    echo "== tests (normal build)"
    meson test -C build --print-errorlogs --num-processes "$jobs"
    echo "== Python package tests"
    python/run_tests.sh build
    # tools/check_fresh_clone.sh stops here: the configurations below test the
    # same sources again, which the full CI run already does.
    [ "${DFX_BOOTSTRAP_ONLY:-}" = normal ] && exit 0
    echo "== release build (as bench/README.md uses it), and a quick benchmark smoke run"
    setup build-rel --buildtype=release
    ninja -C build-rel -j"$jobs"
    ./build-rel/bench/dfx-bench --quick --reps 1 >/dev/null
    echo "== tests under ASan+UBSan"
    setup build-asan -Db_sanitize=address,undefined -Db_lundef=false
    ninja -C build-asan -j"$jobs"
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
      meson test -C build-asan --print-errorlogs --no-suite conformance --num-processes "$jobs"
    echo "== scheduler under TSan"
    # MPI off: UCX (under MPICH) hooks madvise in every new thread, which
    # crashes inside the TSan runtime; the MPI transport is tested by dist-mpi.
    setup build-tsan -Db_sanitize=thread -Db_lundef=false -Dmpi=disabled
    ninja -C build-tsan -j"$jobs" tests/stress/stress_sched tests/stress/stress_par tests/reliability/stress_rel
    TSAN_OPTIONS=halt_on_error=1 meson test -C build-tsan --print-errorlogs --no-rebuild stress_sched stress_par stress_reliability
    echo "== fuzz smoke (clang + libFuzzer, 60 s per target)"
    tools/fuzz/smoke.sh 60
    ;;
  *)
    echo "usage: $0 run|test" >&2
    exit 2
    ;;
esac
