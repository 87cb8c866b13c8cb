#!/bin/sh
# mpi_test.sh DFEXEC GRAPH_DIR - partitioned runs under mpiexec on localhost:
# 2 and 3 ranks give exactly the single-process output, a device naming a
# task that does not exist fails on every rank with the message on rank 0,
# an error inside a distributed loop stops every rank, and ranks holding
# different graphs refuse to run. Skips (exit 77) when mpiexec is missing.
set -u
dfexec=$1
dir=$2
if ! command -v mpiexec >/dev/null 2>&1; then
  echo "SKIP: mpiexec not found (install mpich to run the MPI tests)"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { # name expected actual
  if [ "$2" != "$3" ]; then
    echo "FAIL: $1"; echo "--- expected"; echo "$2"; echo "--- got"; echo "$3"; fail=1
  else
    echo "ok: $1"
  fi
}
export MPIEXEC_TIMEOUT=60
for g in loop_split nested_split cond_split; do
  for p in true false; do
    feed=""
    [ $g = cond_split ] && feed="--feed p=$p"
    want=$("$dfexec" run "$dir/$g.pbtxt" $feed 2>&1)
    for n in 2 3; do
      got=$(mpiexec -n $n "$dfexec" run "$dir/$g.pbtxt" $feed --threads 1 2>&1)
      check "$g $feed on $n ranks" "$want" "$got"
    done
  done
done

# A device naming task 5 of 2: every rank fails before running; one message.
got=$(mpiexec -n 2 "$dfexec" run "$dir/bad_task.pbtxt" 2>&1); rc=$?
check "unknown task: status" 1 "$rc"
case "$got" in
  *"'w/add' (Add) is placed on device '/task:5'"*"2 tasks"*) echo "ok: unknown task message";;
  *) echo "FAIL: unknown task message: $got"; fail=1;;
esac
[ "$(printf '%s\n' "$got" | grep -c error)" = 1 ] || { echo "FAIL: expected one error line: $got"; fail=1; }

# An error inside a distributed loop: every rank ends, rank 0 names the rank, node and iteration.
got=$(mpiexec -n 2 "$dfexec" run "$dir/loop_error.pbtxt" --timeout 20 2>&1); rc=$?
check "error in loop: status" 1 "$rc"
case "$got" in
  *"rank 1"*"w/div"*"iteration 3"*) echo "ok: error in loop message";;
  *) echo "FAIL: error in loop message: $got"; fail=1;;
esac

# Ranks that hold different graphs refuse to run.
sed 's/int_val: 10 /int_val: 11 /' "$dir/loop_split.pbtxt" > "$tmp/b.pbtxt"
cat > "$tmp/pick.sh" <<EOS
#!/bin/sh
if [ "\${PMI_RANK:-\${OMPI_COMM_WORLD_RANK:-0}}" = 0 ]; then exec "$dfexec" run "$dir/loop_split.pbtxt"; fi
exec "$dfexec" run "$tmp/b.pbtxt"
EOS
chmod +x "$tmp/pick.sh"
got=$(mpiexec -n 2 "$tmp/pick.sh" 2>&1); rc=$?
check "different graphs: status" 1 "$rc"
case "$got" in
  *"rank 1 holds a different graph"*) echo "ok: different graphs message";;
  *) echo "FAIL: different graphs message: $got"; fail=1;;
esac
exit $fail
