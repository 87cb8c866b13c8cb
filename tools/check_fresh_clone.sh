#!/usr/bin/env bash
# check_fresh_clone.sh - what a user gets from `git clone` alone: no ../shared
# beside the tree, and a build directory an earlier failed setup left behind.
# Clones the committed HEAD into a temporary directory, then runs the README's
# two commands there: `tools/bootstrap.sh run` must recover the half-made
# build/ and run the bundled example; `tools/bootstrap.sh test` must pass with
# every test that needs the external data skipped, visibly (meson's SKIP).
# .ci/run calls it after the full suite.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git clone -q "$src" "$tmp/dfexec"
cd "$tmp/dfexec"
[ ! -e ../shared ] || { echo "check_fresh_clone: $tmp/shared exists; the check needs it absent" >&2; exit 1; }

echo "== fresh clone: a half-made build/ from a failed setup, then 'tools/bootstrap.sh run'"
mkdir -p build/meson-private
out=$(tools/bootstrap.sh run 2>&1) || { echo "$out"; echo "check_fresh_clone: 'bootstrap.sh run' failed" >&2; exit 1; }
echo "$out" | tail -5
echo "$out" | grep -q "configuring it again from scratch" ||
  { echo "check_fresh_clone: bootstrap did not say it recovered the half-made build/" >&2; exit 1; }

echo "== fresh clone: 'tools/bootstrap.sh test' (normal build and Python package)"
log="$tmp/test.log"
if ! DFX_BOOTSTRAP_ONLY=normal tools/bootstrap.sh test >"$log" 2>&1; then
  tail -60 "$log"
  echo "check_fresh_clone: 'bootstrap.sh test' failed on a clone without ../shared" >&2
  exit 1
fi
grep -E "^(Ok|Fail|Skipped):" "$log"
# The corpus tests must show as skipped, not silently vanish or pass.
grep -qE "conformance +SKIP" "$log" ||
  { tail -40 "$log"; echo "check_fresh_clone: the conformance test was not reported as skipped" >&2; exit 1; }
echo "fresh clone: both set-up commands work without ../shared"
