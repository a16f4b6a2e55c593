#!/bin/bash
# The nccl stage with launcher = "mpirun" on this GPU-less machine, through
# the local transport. tests/e2e/fake_nccl_agent.py answers facts as a GPU
# node would (one GPU, libnccl), so the stage launches; the tests then run
# as clustercheck-nccl-mpi under a real mpirun here, where there is no
# libcuda. Shows: the mpirun path is taken (its argv in the results'
# evidence and the run meta, one launch per test); each test is `skip` with
# the reason (not error, not pass); in a two-rank run rank 1 passes on rank
# 0's reason (the id broadcast carried it); the pairs phase runs one mpirun
# per pair; without clustercheck-nccl-mpi beside clustercheck every test is
# `skip` naming it; the run exits 0.
set -u
BUILD=${1:?build dir}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
CC="$BUILD/clustercheck"
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }
command -v sqlite3 >/dev/null || { echo "SKIP: no sqlite3"; exit 77; }
if ! command -v mpirun >/dev/null || ! mpirun --version 2>/dev/null | grep -q "Open MPI"; then
  echo "SKIP: no Open MPI mpirun"; exit 77
fi
[ -x "$BUILD/clustercheck-nccl-mpi" ] || { echo "SKIP: clustercheck-nccl-mpi not built (no MPI headers)"; exit 77; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
PY=$(python3 -c 'import sys; print(sys.executable)')
FAKE="$TMP/fake-agent"
printf '#!/bin/sh\nexec "%s" "%s" "$@"\n' "$PY" "$SRC/tests/e2e/fake_nccl_agent.py" >"$FAKE"
chmod +x "$FAKE"
fail() { echo "FAIL: $*"; exit 1; }
q() { sqlite3 "$DB" "$1"; }

# inventory PHASES [NODES]
inventory() {
  {
    echo 'name = "mpirun-nccl"'; echo 'transport = "local"'
    for i in $(seq 1 "${2:-2}"); do printf '[[nodes]]\nname = "n%d"\nenv = { NCCL_HOSTID = "n%d" }\n' "$i" "$i"; done
    echo '[stages]'; echo 'run = ["nccl"]'
    echo '[stages.nccl]'; echo 'launcher = "mpirun"'; echo 'sizes = ["1M"]'; echo 'iters = 2'
    echo 'timeout_s = 10'; echo "phases = $1"
  } >"$TMP/inv.toml"
}
run() { timeout 300 "${RUN_CC:-$CC}" run "$TMP/inv.toml" --db "$DB" --agent "$FAKE" >"$TMP/out" 2>"$TMP/err"; echo $?; }

# 1. Intra phase: each node alone, one mpirun -np 1 each.
DB="$TMP/1.db"; inventory '["intra"]'
rc=$(run); [ "$rc" = 0 ] || { cat "$TMP/out" "$TMP/err"; fail "intra run exited $rc"; }
[ "$(q "select count(*) from node_results where stage='nccl' and check_name='intra-node' and outcome='skip' and message like '%libcuda%'")" = 2 ] \
  || { q "select node,outcome,message from node_results where stage='nccl'"; fail "expected 2 intra-node skips naming libcuda"; }
[ "$(q "select count(*) from node_results where stage='nccl' and outcome in ('pass','error','fail','hang')")" = 0 ] \
  || fail "a result other than skip"
[ "$(q "select json_extract(meta,'\$.nccl.launcher') from runs")" = mpirun ] || fail "meta does not say launcher mpirun"
[ "$(q "select json_extract(meta,'\$.nccl.mpirun.launches') from runs")" = 2 ] || fail "not 2 mpirun launches in the meta"
q "select json_extract(meta,'\$.nccl.mpirun.last_argv') from runs" | grep -q 'clustercheck-nccl-mpi' \
  || fail "the stored argv does not run clustercheck-nccl-mpi"
q "select json_extract(evidence,'\$.mpirun_argv') from node_results where stage='nccl' and node='n1'" \
  | grep -q '"--map-by","slot"' || fail "n1's evidence lacks the mpirun argv"
echo "ok: intra through mpirun: 2 skips ($(q "select message from node_results where node='n1' and stage='nccl'" | cut -c1-90)...)"

# 2. Whole cluster: one mpirun -np 2; rank 1 gets rank 0's reason by MPI_Bcast.
DB="$TMP/2.db"; inventory '["cluster"]'
rc=$(run); [ "$rc" = 0 ] || { cat "$TMP/out" "$TMP/err"; fail "cluster run exited $rc"; }
[ "$(q "select outcome from node_results where stage='nccl' and check_name='cluster'")" = skip ] \
  || { q "select node,outcome,message from node_results where stage='nccl'"; fail "cluster not skip"; }
q "select message from node_results where stage='nccl' and check_name='cluster'" | grep -q "n2: skip at rendezvous (rank 0 made no NCCL id: .*libcuda" \
  || { q "select message from node_results where stage='nccl'"; fail "rank 1 does not carry rank 0's reason"; }
q "select json_extract(meta,'\$.nccl.mpirun.last_argv') from runs" | grep -q '"-np","2"' || fail "not one mpirun -np 2"
echo "ok: cluster through one mpirun -np 2: skip, rank 1 with rank 0's reason"

# 3. Pairs: three nodes, three pairs, one mpirun -np 2 each.
DB="$TMP/3.db"; inventory '["pairs"]' 3
rc=$(run); [ "$rc" = 0 ] || { cat "$TMP/out" "$TMP/err"; fail "pairs run exited $rc"; }
[ "$(q "select count(*) from pair_results where stage='nccl' and outcome='skip' and message like '%libcuda%'")" = 3 ] \
  || { q "select src,dst,outcome,message from pair_results where stage='nccl'"; fail "expected 3 skipped pairs naming libcuda"; }
[ "$(q "select json_extract(meta,'\$.nccl.mpirun.launches') from runs")" = 3 ] || fail "not 3 mpirun launches for 3 pairs"
echo "ok: 3 pairs through 3 mpiruns: skip"

# 4. No clustercheck-nccl-mpi beside clustercheck: skip naming it, no launch.
mkdir "$TMP/bin" && cp "$CC" "$TMP/bin/clustercheck"
DB="$TMP/4.db"; inventory '["intra"]'
rc=$(RUN_CC="$TMP/bin/clustercheck" run); [ "$rc" = 0 ] || { cat "$TMP/out" "$TMP/err"; fail "no-probe run exited $rc"; }
[ "$(q "select count(*) from node_results where stage='nccl' and outcome='skip' and message like '%no $TMP/bin/clustercheck-nccl-mpi%'")" = 2 ] \
  || { q "select node,outcome,message from node_results where stage='nccl'"; fail "no skip naming the missing probe"; }
[ "$(q "select json_extract(meta,'\$.nccl.mpirun') from runs")" = "" ] || fail "an mpirun was recorded without the probe"
echo "ok: without clustercheck-nccl-mpi: skip naming it"
