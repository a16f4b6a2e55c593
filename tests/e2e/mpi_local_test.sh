#!/bin/bash
# The mpi stage through the local transport (no root, no namespaces needed):
#   - three "nodes" on this machine: mpirun runs the probe as three ranks
#     here, the allreduce is exact and the 3 pairs are measured;
#   - an mpirun that does not exist, or a probe that does not: the stage is
#     `skip` on every node, with the reason, and the run does not fail.
set -u
BUILD=${1:?build dir}
CC="$BUILD/clustercheck"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
command -v sqlite3 >/dev/null || { echo "skip: no sqlite3"; exit 77; }
DB="$TMP/cc.db"
q() { sqlite3 "$DB" "$1"; }

# inventory FILE [MPI SETTINGS...]
inventory() {
  local f=$1
  shift
  {
    echo 'name = "mpi-local"'
    echo 'transport = "local"'
    for i in 1 2 3; do printf '[[nodes]]\nname = "n%d"\naddress = "127.0.0.1%d"\n' "$i" "$i"; done
    echo '[stages.mpi]'
    echo 'timeout_s = 60'
    echo 'iters = 3'
    echo 'message_size = "64K"'
    for s in "$@"; do echo "$s"; done
  } >"$f"
}

inventory "$TMP/nompirun.toml" 'mpirun = "/nonexistent/mpirun"'
"$CC" run "$TMP/nompirun.toml" --stages mpi --db "$DB" >"$TMP/1.out" 2>&1
rc=$?
[ $rc -eq 0 ] || { cat "$TMP/1.out"; fail "a run without mpirun exits $rc, not 0"; }
[ "$(q "select group_concat(outcome || ': ' || message, '|') from (select distinct outcome, message from node_results where run_id=1 and stage='mpi')")" \
  = "skip: mpirun /nonexistent/mpirun is not executable" ] \
  || fail "no skip with the reason: $(q "select node, outcome, message from node_results where run_id=1 and stage='mpi'")"
echo "ok - without mpirun the stage is skip, with the reason"

if ! command -v mpirun >/dev/null || ! mpirun --version 2>/dev/null | grep -q "Open MPI"; then
  echo "skip: no Open MPI mpirun for the rest"; exit 77
fi
inventory "$TMP/noprobe.toml" 'probe = "/nonexistent/clustercheck-mpi-probe"'
"$CC" run "$TMP/noprobe.toml" --stages mpi --db "$DB" >"$TMP/2.out" 2>&1 || fail "a run without the probe exits $?"
[ "$(q "select count(*) from node_results where run_id=2 and stage='mpi' and outcome='skip' and message like 'no clustercheck-mpi-probe at /nonexistent/clustercheck-mpi-probe%'")" = 3 ] \
  || fail "no skip naming the probe: $(q "select node, outcome, message from node_results where run_id=2 and stage='mpi'")"
echo "ok - without the probe the stage is skip, with the reason"

[ -x "$BUILD/clustercheck-mpi-probe" ] || { echo "skip: no clustercheck-mpi-probe built"; exit 77; }
inventory "$TMP/good.toml"
"$CC" run "$TMP/good.toml" --stages mpi --db "$DB" >"$TMP/3.out" 2>&1
rc=$?
[ $rc -le 1 ] || { cat "$TMP/3.out"; fail "the local run exits $rc"; }
[ "$(q "select count(*) from node_results where run_id=3 and stage='mpi' and outcome='pass'")" = 6 ] \
  || { cat "$TMP/3.out"; fail "not 3 launches and 3 exact allreduces: $(q "select node, check_name, outcome, message from node_results where run_id=3 and stage='mpi'")"; }
[ "$(q "select count(*) from pair_results where run_id=3 and stage='mpi' and outcome='pass' and value > 0")" = 6 ] \
  || fail "not 3 pairs x latency and bandwidth: $(q "select src, dst, check_name, outcome, message from pair_results where run_id=3 and stage='mpi'")"
echo "ok - three local ranks: exact allreduce, 3 pairs measured"
echo PASS
