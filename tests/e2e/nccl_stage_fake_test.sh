#!/bin/bash
# The nccl stage end to end without a GPU: simulated nodes through the
# local transport, each running tests/e2e/fake_nccl_agent.py in place of
# clustercheck-agent (it answers facts and nccl as a GPU node would, with
# faults from per-node env). Shows: every pair once plus intra and cluster
# tests; a bad node named from the pair matrix; a bad node and a bad link
# named by group testing after a broken whole-cluster run, with the number
# of runs it took stored in the run's meta; and, with the real agent on
# this GPU-less machine, the stage is `skip` with the reason.
set -u
BUILD=${1:?build dir}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
CC="$BUILD/clustercheck"
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
# The interpreter itself, not a version manager's shim (seconds per start).
PY=$(python3 -c 'import sys; print(sys.executable)')
FAKE="$TMP/fake-agent"
printf '#!/bin/sh\nexec "%s" "%s" "$@"\n' "$PY" "$SRC/tests/e2e/fake_nccl_agent.py" >"$FAKE"
chmod +x "$FAKE"
fail() { echo "FAIL: $*"; exit 1; }
q() { sqlite3 "$DB" "$1"; }

# inventory N [node:VAR=value ...] [phases]
inventory() {
  local n=$1 phases=$2; shift 2
  {
    echo 'name = "fake"'; echo 'transport = "local"'
    echo '[defaults]'; echo "env = { FAKE_NCCL_DIR = \"$TMP/comms\" }"
    for i in $(seq 1 "$n"); do
      local extra=""
      for f in "$@"; do
        [ "${f%%:*}" = "n$i" ] && extra="$extra, ${f#*:}"
      done
      echo '[[nodes]]'; echo "name = \"n$i\""
      echo "env = { FAKE_NCCL_DIR = \"$TMP/comms\", NCCL_HOSTID = \"n$i\"$extra }"
    done
    echo '[stages]'; echo 'run = ["nccl"]'
    echo '[stages.nccl]'; echo 'sizes = ["1M", "64M"]'; echo 'iters = 2'; echo 'timeout_s = 10'
    [ -n "$phases" ] && echo "phases = $phases"
  } >"$TMP/inv.toml"
}
run() { "$CC" run "$TMP/inv.toml" --db "$DB" --agent "$FAKE" >"$TMP/out" 2>"$TMP/err"; echo $?; }

# 1. Six good nodes: 6 intra, 15 pairs, 1 cluster, all pass.
DB="$TMP/1.db"; inventory 6 ""
rc=$(run); [ "$rc" = 0 ] || { cat "$TMP/out" "$TMP/err"; fail "good cluster exited $rc"; }
[ "$(q "select count(*) from pair_results where stage='nccl' and outcome='pass' and unit='GB/s'")" = 15 ] \
  || fail "expected 15 passing pairs with busbw"
[ "$(q "select count(*) from node_results where stage='nccl' and check_name='intra-node' and outcome='pass'")" = 6 ] \
  || fail "expected 6 intra-node passes"
[ "$(q "select outcome from node_results where stage='nccl' and check_name='cluster'")" = pass ] || fail "cluster not pass"
q "select message from node_results where stage='nccl' and check_name='cluster'" | grep -q "via NET/Socket" \
  || fail "cluster message lacks the transport"
echo "ok: 6 good nodes: 15 pairs, 6 intra, cluster pass"

# 2. One bad node: the pair matrix names it.
DB="$TMP/2.db"; inventory 6 "" "n5:FAKE_NCCL_BAD = \"1\""
rc=$(run); [ "$rc" = 1 ] || { cat "$TMP/out"; fail "bad node run exited $rc"; }
[ "$(q "select json_extract(nodes,'\$[0]') from verdicts where stage='nccl' and kind='bad-node'")" = n5 ] \
  || { q "select node,check_name,message from node_results where stage='nccl'"; fail "n5 not named bad"; }
[ "$(q "select count(*) from pair_results where stage='nccl' and outcome in ('fail','hang') and (src='n5' or dst='n5')")" -ge 5 ] \
  || fail "n5's pairs are not broken"
grep -q "n5" "$TMP/out" || fail "the terminal report does not name n5"
echo "ok: bad node n5 named from the pair matrix"

# 3. Whole cluster first, then group testing: 16 nodes, one bad node.
DB="$TMP/3.db"; inventory 16 '["cluster", "isolate"]' "n11:FAKE_NCCL_BAD = \"1\""
rc=$(run); [ "$rc" = 1 ] || fail "bisection run exited $rc"
[ "$(q "select json_extract(nodes,'\$[0]') from verdicts where stage='nccl' and kind='bad-node'")" = n11 ] \
  || { q "select node,check_name,message from node_results where stage='nccl'"; fail "n11 not named"; }
runs=$(q "select json_extract(meta,'\$.nccl.isolation.runs_after_cluster') from runs")
[ -n "$runs" ] && [ "$runs" -le 8 ] || fail "isolation took '$runs' runs (want <= 2*log2(16) = 8)"
q "select summary from verdicts where kind='bad-node'" | grep -q "isolation: $runs NCCL runs" \
  || fail "the verdict does not say how many runs"
grep -q "nccl isolation: $runs NCCL runs" "$TMP/out" || { cat "$TMP/out"; fail "the summary does not show the runs"; }
echo "ok: bad node n11 among 16 named by group testing in $runs runs after the cluster run"

# 4. A bad link between n3 and n14 is a link, not a node.
DB="$TMP/4.db"; inventory 16 '["cluster", "isolate"]' "n3:FAKE_NCCL_BAD_LINK = \"n14\""
rc=$(run); [ "$rc" = 1 ] || fail "bad link run exited $rc"
[ "$(q "select count(*) from verdicts where kind='bad-node'")" = 0 ] || fail "a node was blamed"
q "select nodes from verdicts where kind='bad-link'" | grep -q '"n14"' \
  || { q "select node,check_name,message from node_results where stage='nccl'"; fail "link n3-n14 not named"; }
echo "ok: bad link n3-n14 named as a link"

# 5. A slow node: its pairs are below the median, the matrix names it.
DB="$TMP/5.db"; inventory 6 '["pairs", "isolate"]' "n2:FAKE_NCCL_SLOW = \"1\""
rc=$(run)
[ "$(q "select count(*) from pair_results where stage='nccl' and state='slow'")" = 5 ] || fail "n2's 5 pairs not slow"
[ "$(q "select json_extract(nodes,'\$[0]') from verdicts where kind='bad-node'")" = n2 ] || fail "slow n2 not named"
echo "ok: slow node n2 named (exit $rc)"

# 6. An agent that never answers: the controller's backstop ends the test
# as a hang (timeout_s * (2 + sizes) + slack), the run ends and names it.
DB="$TMP/6s.db"; inventory 2 '["intra", "isolate"]' "n2:FAKE_NCCL_STUCK = \"1\""
sed -i 's/^timeout_s = .*/timeout_s = 1/; s/^sizes = .*/sizes = ["1M"]/' "$TMP/inv.toml"
t0=$(date +%s)
rc=$(timeout 120 "$CC" run "$TMP/inv.toml" --db "$DB" --agent "$FAKE" >"$TMP/out" 2>"$TMP/err"; echo $?)
took=$(( $(date +%s) - t0 ))
[ "$rc" = 1 ] || { cat "$TMP/out" "$TMP/err"; fail "stuck agent run exited $rc after ${took}s"; }
[ "$(q "select outcome from node_results where stage='nccl' and node='n2' and check_name='intra-node'")" = hang ] \
  || fail "n2's stuck test is not a hang"
[ "$(q "select json_extract(nodes,'\$[0]') from verdicts where kind='bad-node'")" = n2 ] || fail "stuck n2 not named"
echo "ok: a wedged agent ends as hang in ${took}s and is named"

# 8. Confirmation: a node whose first multi-node communicator breaks and
# whose later ones work gives one flaky pair (warn, both attempts), no
# accusation; a link broken twice is a confirmed fail.
DB="$TMP/8.db"; inventory 6 '["pairs", "isolate"]' "n3:FAKE_NCCL_FLAKY = \"1\""
rc=$(run); [ "$rc" = 0 ] || { cat "$TMP/out" "$TMP/err"; fail "flaky run exited $rc, not 0"; }
[ "$(q "select count(*) from pair_results where stage='nccl' and outcome in ('fail','hang')")" = 0 ] \
  || fail "a flaky pair stayed a failure"
[ "$(q "select count(*) from pair_results where stage='nccl' and outcome='warn'
        and json_extract(evidence,'\$.confirmation')='flaky'
        and json_array_length(json_extract(evidence,'\$.attempts'))=2 and 'n3' in (src, dst)")" = 1 ] \
  || { q "select src,dst,outcome,message from pair_results where stage='nccl' and outcome!='pass'"; fail "no single flaky pair with n3"; }
[ "$(q "select count(*) from verdicts")" = 0 ] || fail "a flaky pair was accused"
[ "$(q "select json_extract(meta,'\$.\"retests.nccl\".retested')||'/'||json_extract(meta,'\$.\"retests.nccl\".flaky') from runs")" = 1/1 ] \
  || fail "retests.nccl is not 1 retested / 1 flaky: $(q "select meta from runs")"
echo "ok: a pair that fails once and passes on retest is warn flaky: $(q "select message from pair_results where outcome='warn'" | cut -c1-120)"

DB="$TMP/9.db"; inventory 6 '["pairs", "isolate"]' "n3:FAKE_NCCL_BAD_LINK = \"n5\""
rc=$(run); [ "$rc" = 1 ] || { cat "$TMP/out"; fail "broken-twice run exited $rc, not 1"; }
[ "$(q "select min(src,dst)||'-'||max(src,dst) from pair_results where stage='nccl' and outcome in ('fail','hang')
        and json_extract(evidence,'\$.confirmation')='confirmed'
        and json_array_length(json_extract(evidence,'\$.attempts'))=2")" = "n3-n5" ] \
  && [ "$(q "select count(*) from pair_results where stage='nccl' and outcome!='pass'")" = 1 ] \
  || { q "select src,dst,outcome,evidence from pair_results where stage='nccl' and outcome!='pass'"; fail "n3-n5 not a confirmed failure"; }
[ "$(q "select json_extract(meta,'\$.\"retests.nccl\".confirmed') from runs")" = 1 ] || fail "retests.nccl.confirmed is not 1"
echo "ok: a link broken twice stays broken, confirmed with both attempts"

# 7. The real agent on this machine, no GPU: skip with the reason.
if ! command -v nvidia-smi >/dev/null 2>&1; then
  DB="$TMP/7.db"; inventory 2 ""
  "$CC" run "$TMP/inv.toml" --db "$DB" >"$TMP/out" 2>"$TMP/err"; rc=$?
  [ "$rc" = 0 ] || fail "no-GPU run exited $rc"
  [ "$(q "select count(*) from node_results where stage='nccl' and outcome='skip' and message like 'no GPU%'")" = 2 ] \
    || { q "select node,check_name,outcome,message from node_results where stage='nccl'"; fail "no skip with reason"; }
  [ "$(q "select outcome from node_results where stage='nccl' and node='*'")" = skip ] || fail "stage not skip"
  echo "ok: without a GPU the stage is skip: $(q "select message from node_results where stage='nccl' limit 1")"
fi
echo PASS
