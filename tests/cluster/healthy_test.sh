#!/usr/bin/env bash
# shellcheck disable=SC2015  # `check && ok || not_ok` is intended
# A healthy cluster is PASS (issue 17): 8 nodes as an operator's CPU
# cluster is set up, every stage run, and nothing accused.
#   - two networks: data (eth0, MTU 9000) and mgmt (eth1, MTU 1500); ssh,
#     and so the inventory's addresses, on mgmt;
#   - a docker0 bridge with 172.17.0.1/16 on every node (a decoy);
#   - host_key_policy = "strict", known_hosts holding only the inventory's
#     (mgmt) addresses: whatever ssh-es to a data address fails;
#   - [defaults] gpus = 0;
#   - all stages (nccl skips: no GPU).
# The run must end PASS with exit 0, no verdict that is fail, warn, error
# or hang, and an mpi stage that really ran (8 launches, an exact
# allreduce, pair results). On failure every verdict and every result that
# is not pass or skip is printed, so the cause is on the page.
# ctest label "cluster"; $1 is the build dir. Exit 77 = skip.
set -u
BUILD=$(cd "${1:?build dir}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
sc=$here/simcluster.sh
CC=$BUILD/clustercheck
NODES=${HEALTHY_NODES:-8}

# shellcheck source=tests/cluster/testlib.sh
. "$here/testlib.sh"
command -v jq >/dev/null || { echo "skip: no jq"; exit 77; }
[ -x "$CC" ] || { echo "FAIL: no $CC"; exit 1; }
cluster_test_start he healthy

"$sc" up "$NODES" --nics 2 --mtu-data 9000 --ssh-nic 1 --docker0 --known-hosts inventory \
  --gpus 0 --base auto >"$dir/up.log" 2>&1 || { cat "$dir/up.log"; echo "FAIL: simcluster up"; exit 1; }
m1=$("$sc" addr node1 mgmt)
d1=$("$sc" addr node1 data)
echo "# $NODES nodes; data ${d1%.*}.0/24 MTU 9000, mgmt ${m1%.*}.0/24 (ssh), docker0 on each"

# The stages' own defaults, as an operator runs them; only mpi's message
# size is small (a CPU node's loopback is not the point here).
cp "$dir/inventory.toml" "$dir/healthy.toml"
cat >>"$dir/healthy.toml" <<'TOML'

[stages.mpi]
iters = 5
message_size = "64K"
TOML

start=$SECONDS
"$CC" run "$dir/healthy.toml" --db "$DB" >"$dir/run.out" 2>"$dir/run.err"
rc=$?
echo "# clustercheck run exited $rc after $((SECONDS - start)) s"
sed 's/^/  > /' "$dir/run.out"

[ $rc -eq 0 ] && ok "run exits 0" || not_ok "run exits 0, not $rc"
head -1 "$dir/run.out" | grep -q '^PASS' && ok "run's first line is PASS" ||
  not_ok "run's first line is PASS: $(head -1 "$dir/run.out")"
expect "every stage ran" "connect facts health mpi nccl nics parity ports" \
  "select group_concat(stage, ' ') from (select distinct stage from node_results where run_id=1 order by stage)"

"$CC" report --db "$DB" --json >"$dir/report.json" 2>"$dir/report.err" || not_ok "report --json exited $?"
# shellcheck disable=SC2016
bad_verdicts=$(jq -r '[.verdicts[] | select(.severity != "pass" and .severity != "skip")] | length' \
  "$dir/report.json" 2>&1)
[ "$bad_verdicts" = 0 ] && ok "no fail, warn, error or hang verdict" ||
  not_ok "no fail, warn, error or hang verdict ($bad_verdicts)"
expect "no node result is fail, warn, error or hang" "" \
  "select group_concat(distinct stage || '/' || check_name) from node_results where run_id=1 and outcome in ('fail','warn','error','hang')"
expect "no pair result is fail, warn, error or hang" "" \
  "select group_concat(distinct stage || '/' || check_name) from pair_results where run_id=1 and outcome in ('fail','warn','error','hang')"

# The three false verdicts of issue 17, one by one.
expect "parity: gpus = 0 and no GPU passes on every node" "pass|$NODES" \
  "select outcome, count(*) from node_results where run_id=1 and stage='parity' and check_name='gpus_expected' group by 1"
expect "ports: tcp/22 held by sshd is not in-use anywhere" "0" \
  "select count(*) from node_results where run_id=1 and stage='ports' and outcome!='pass' and message like '%tcp/22%'"
expect "mpi: all $NODES nodes launched" "pass|$NODES" \
  "select outcome, count(*) from node_results where run_id=1 and stage='mpi' and check_name='launch' group by 1"
expect "mpi: the allreduce is exact on all $NODES" "pass|$NODES" \
  "select outcome, count(*) from node_results where run_id=1 and stage='mpi' and check_name='allreduce' group by 1"
expect "mpi: every pair measured latency and bandwidth" "$((NODES * (NODES - 1)))" \
  "select count(*) from pair_results where run_id=1 and stage='mpi' and outcome='pass' and value > 0"
# The nics stage's part, which was already right.
expect "nics: the data network is recommended" "pass|eth0" \
  "select outcome, value from node_results where run_id=1 and stage='nics' and check_name='recommendation'"
expect "nics: docker0's 172.17.0.0/16 is excluded as a decoy" "skip" \
  "select outcome from node_results where run_id=1 and stage='nics' and check_name='excluded:172.17.0.0/16'"
expect "nccl: skips (no GPU)" "skip" \
  "select group_concat(distinct outcome) from node_results where run_id=1 and stage='nccl'"

# The same cluster with [ssh] dial_back = true: ssh starts the agents, they
# dial this machine back and answer over TCP. Same PASS, same results.
sed 's/^\[ssh\]$/[ssh]\ndial_back = true/' "$dir/healthy.toml" >"$dir/dial_back.toml"
"$CC" run "$dir/dial_back.toml" --db "$dir/dial_back.db" >"$dir/dial_back.out" 2>"$dir/dial_back.err"
rc=$?
[ $rc -eq 0 ] && ok "dial_back: run exits 0" || {
  not_ok "dial_back: run exits 0, not $rc"
  sed 's/^/  > /' "$dir/dial_back.out"
  tail -5 "$dir/dial_back.err"
}
head -1 "$dir/dial_back.out" | grep -q '^PASS' && ok "dial_back: the first line is PASS" ||
  not_ok "dial_back: the first line is PASS: $(head -1 "$dir/dial_back.out")"
db_q() { sqlite3 "$dir/dial_back.db" "$1"; }
launcher=$(db_q "select json_extract(meta, '$.launcher.launcher') || ' ' || json_array_length(json_extract(meta, '$.launcher.refused')) || ' ' || (json_extract(meta, '$.launcher.dial_back') like '%:%') from runs where id=1")
[ "$launcher" = "ssh 0 1" ] && ok "dial_back: the run records its listener and no refusal" ||
  not_ok "dial_back: the run records its listener and no refusal ($launcher)"
counts() { sqlite3 "$1" "select (select count(*) from node_results where run_id=1 and outcome in ('pass','skip')) || ' ' || (select count(*) from pair_results where run_id=1 and stage in ('nics','mpi') and outcome='pass')"; }
[ "$(counts "$DB")" = "$(counts "$dir/dial_back.db")" ] &&
  ok "dial_back: as many node passes/skips and nics/mpi pair passes as over ssh" ||
  not_ok "dial_back: as many results as over ssh ($(counts "$DB") vs $(counts "$dir/dial_back.db"))"
# The agents left their ssh sessions once they dialled (the controller holds
# none for the run); they must still end with the run, not linger.
left=
for _ in $(seq 1 20); do
  left=$(pgrep -fc -- "clustercheck-agent.*--connect=" || true)
  [ "${left:-0}" = 0 ] && break
  sleep 0.5
done
[ "${left:-0}" = 0 ] && ok "dial_back: no detached agent outlives the run" ||
  not_ok "dial_back: $left agents still run after the run: $(pgrep -fa -- 'clustercheck-agent.*--connect=' | head -3)"

if ! cluster_test_finish; then
  echo "# every verdict (report --json):"
  jq -r '.verdicts[] | "  \(.severity) \(.kind) \(.stage)/\(.check): \(.summary)"' "$dir/report.json" 2>&1
  echo "# results that are not pass or skip (stage, check, outcome, nodes, first message):"
  q "select '  ' || stage || '/' || check_name || ' ' || outcome || ' x' || count(*) || ' on ' || group_concat(distinct node) || ': ' || min(message) from node_results where run_id=1 and outcome not in ('pass','skip') group by stage, check_name, outcome"
  q "select '  ' || stage || '/' || check_name || ' ' || outcome || ' x' || count(*) || ': ' || min(message) from pair_results where run_id=1 and outcome not in ('pass','skip') group by stage, check_name, outcome"
  echo "# run's stderr (tail):"
  tail -20 "$dir/run.err"
  exit 1
fi
