#!/bin/sh
# partition_test.sh DFEXEC GRAPH_DIR - `dfexec partition` writes one valid
# GraphDef per task (info reads each back), `dfexec run --tasks N` prints
# exactly what one process prints, and usage and placement errors exit 2
# and 1 with their message.
set -u
dfexec=$1
dir=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
"$dfexec" partition "$dir/nested_split.pbtxt" --tasks 3 --out "$tmp/p" 2>/dev/null || { echo "FAIL: partition"; fail=1; }
for k in 0 1 2; do
  "$dfexec" info "$tmp/p/task-$k.pb" >/dev/null || { echo "FAIL: info task-$k.pb"; fail=1; }
done
grep -q '"_Recv"' "$tmp/p/task-1.pb" 2>/dev/null || strings "$tmp/p/task-1.pb" | grep -q _Recv || { echo "FAIL: no _Recv in task 1"; fail=1; }
for g in loop_split nested_split; do
  want=$("$dfexec" run "$dir/$g.pbtxt")
  for n in 2 3; do
    got=$("$dfexec" run "$dir/$g.pbtxt" --tasks $n --threads 1)
    [ "$want" = "$got" ] || { echo "FAIL: $g --tasks $n: $got"; fail=1; }
    got=$("$dfexec" run "$dir/$g.pbtxt" --tasks $n --random-placement 3)
    [ "$want" = "$got" ] || { echo "FAIL: $g --tasks $n --random-placement 3: $got"; fail=1; }
  done
done
"$dfexec" partition "$dir/loop_split.pbtxt" --out "$tmp/q" 2>/dev/null; [ $? = 2 ] || { echo "FAIL: missing --tasks is a usage error"; fail=1; }
msg=$("$dfexec" partition "$dir/bad_task.pbtxt" --tasks 2 --out "$tmp/q" 2>&1); rc=$?
[ $rc = 1 ] || { echo "FAIL: bad task exit $rc"; fail=1; }
case "$msg" in *"'w/add' (Add) is placed on device '/task:5'"*) ;; *) echo "FAIL: bad task message: $msg"; fail=1;; esac
msg=$("$dfexec" run "$dir/bad_task.pbtxt" --tasks 2 2>&1); rc=$?
[ $rc = 1 ] || { echo "FAIL: run bad task exit $rc"; fail=1; }
[ $fail = 0 ] && echo "ok"
exit $fail
