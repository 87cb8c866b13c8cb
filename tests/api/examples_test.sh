#!/bin/sh
# examples_test.sh WHILE_LOOP LOAD_RUN CONFORMANCE_DIR SOURCE_ROOT - runs both
# examples: while_loop builds, saves, reloads and runs its loop; load_run runs
# the bundled example graph given nothing but its path, the saved graph
# again, and the conformance graph simplewhile_0 (when present).
set -eu
while_loop=$1 load_run=$2 conf=$3 src=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
check() { # check OUTPUT PATTERN
  printf '%s\n' "$1"
  printf '%s\n' "$1" | grep -q -- "$2" || { echo "examples_test: expected '$2'" >&2; exit 1; }
}
check "$("$while_loop" "$tmp/loop.pbtxt" 1.5 10)" "result = 1536"
check "$("$while_loop" "$tmp/loop.pb" 3 2)" "result = 12"
check "$("$load_run" "$src/examples/graphs/counter_loop.pbtxt")" "while/Exit:0: int32 \[\] = 10"
check "$("$load_run" "$tmp/loop.pbtxt" result x=1.5 n=3)" "result: float32 \[\] = 12"
check "$("$load_run" "$tmp/loop.pb" iterations x=1 n=7)" "iterations: int32 \[\] = 7"
if "$load_run" "$tmp/loop.pb" result x=1 >/dev/null 2>"$tmp/err"; then
  echo "examples_test: a missing feed must fail" >&2; exit 1
fi
check "$(cat "$tmp/err")" "must feed a value for placeholder tensor 'n'"
g=$conf/tf1/simplewhile_0
if [ -f "$g/frozen_model.pb" ]; then
  x=$(tr '\n' ',' < "$g/input_0.placeholder.csv" | sed 's/,$//')
  y=$(cat "$g/input_1.placeholder.csv")
  check "$("$load_run" "$g/frozen_model.pb" output "input_0=$x" "input_1=$y")" "output: float32 \[2,2\] = 3 4 5 6"
else
  echo "examples_test: $g not found, conformance run skipped"
fi
