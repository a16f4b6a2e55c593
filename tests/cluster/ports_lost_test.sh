#!/usr/bin/env bash
# A node lost in the middle of the ports stage (issue 17): node4's links go
# down while the others probe it, after every node listened. The run must
# end with ONE verdict, kind node-lost, naming node4 only (when it was
# lost, what was measured before), not one bad-node per port and hangs
# naming every node. Eight nodes, a 100-port listed range (the issue's
# case), one sender per receiver at a time so the probe phase spans several
# batches.
# Then the same moment again, with node4's agent killed instead and node4
# itself up: a fresh connection answers, so it is a warn, contact-lost.
# ctest label "cluster"; $1 is the build dir. Exit 77 = skip.
#
# The trigger is deterministic: an iptables rule without a target counts
# the SYNs to node4's tcp/29500, which only the probe phase sends; the
# moment it counts one, node4's link goes down (its agent has long told the
# controller that it listens).
set -u
BUILD=${1:?build dir}
here=$(cd "$(dirname "$0")" && pwd)
sc=$here/simcluster.sh
CC=$BUILD/clustercheck

# shellcheck source=tests/cluster/testlib.sh
. "$here/testlib.sh"
command -v iptables >/dev/null || { echo "skip: no iptables"; exit 77; }
command -v jq >/dev/null || { echo "skip: no jq"; exit 77; }
[ -x "$CC" ] || { echo "FAIL: no $CC"; exit 1; }
watcher=""
cluster_test_cleanup() { [ -z "$watcher" ] || kill "$watcher" 2>/dev/null; }
cluster_test_start pl portslost

"$sc" up 8 --base auto >"$dir/up.log" 2>&1 || { cat "$dir/up.log"; echo "FAIL: simcluster up"; exit 1; }

cat >>"$dir/inventory.toml" <<'TOML'

[stages]
run = ["ports"]
[stages.ports]
ports = ["29500-29599"]
ephemeral_samples = 8
timeout_ms = 1000
senders_per_receiver = 1
TOML

"$CC" run "$dir/inventory.toml" --stages facts --db "$dir/warmup.db" >"$dir/warmup.out" 2>&1

"$sc" fault node4 iptables -A INPUT -p tcp --syn --dport 29500 || { echo "FAIL: counting rule"; exit 1; }
# In the background: runs CMD... the moment the counter sees a SYN (60 s
# at most), and notes when in $dir/lost.at.
when_probed() {
  (
    for _ in $(seq 6000); do
      n=$("$sc" exec node4 iptables -L INPUT -v -x -n 2>/dev/null | awk '/dpt:29500/ {print $1; exit}')
      if [ "${n:-0}" -gt 0 ]; then
        "$@"
        date +%s.%N >"$dir/lost.at"
        exit 0
      fi
      sleep 0.01
    done
  ) &
  watcher=$!
}
when_probed "$sc" fault node4 link-down

start=$(date +%s.%N)
"$CC" run "$dir/inventory.toml" --stages ports --db "$DB" >"$dir/run.out" 2>"$dir/run.err"
rc=$?
end=$(date +%s.%N)
wait "$watcher"
watcher=""
echo "# clustercheck run exited $rc after $(echo "$end - $start" | bc)s;" \
  "node4's link went down $(echo "$(cat "$dir/lost.at" 2>/dev/null || echo "$end") - $start" | bc)s in"
sed 's/^/  > /' "$dir/run.out"
[ -s "$dir/lost.at" ] && ok "node4's link went down during the probe phase" ||
  not_ok "the probe phase never reached node4"
[ $rc -eq 1 ] && ok "run exits 1 (a node was lost)" || { not_ok "run exits 1, got $rc"; cat "$dir/run.err"; }

# A lost node is a cause (the ports stage's node-lost): the headline names it alone.
if head -1 "$dir/run.out" | grep -q '^FAIL: node-lost on node4 (ports)'; then ok "the headline says FAIL on node4"
else not_ok "the headline says FAIL on node4"; head -1 "$dir/run.out"; fi

P="stage='ports' and run_id=1"
expect "exactly one stored verdict: node-lost on node4" '["node4"]|node-lost|fail' \
  "select nodes, kind, severity from verdicts where $P"
expect_like "it says when node4 was lost" "node4 was lost during the ports stage (probe batch" \
  "select summary from verdicts where $P and kind='node-lost'"
expect_like "it says what was measured before" "measured_before" \
  "select evidence from verdicts where $P and kind='node-lost'"
expect "no pair result fails or hangs" 0 \
  "select count(*) from pair_results where $P and outcome in ('fail','hang','error')"
expect "no pair without node4 is left unjudged" 0 \
  "select count(*) from pair_results where $P and src!='node4' and dst!='node4' and outcome!='pass'"
expect "every listen result passes" 8 \
  "select count(*) from node_results where $P and check_name='listen' and outcome='pass'"

"$CC" report --db "$DB" --json >"$dir/report.json" 2>"$dir/report.err" || not_ok "report --json exited $?"
got=$(jq -c '[.verdicts[] | {kind, nodes}]' "$dir/report.json" 2>&1)
if [ "$got" = '[{"kind":"node-lost","nodes":["node4"]}]' ]; then
  ok "report --json: one verdict, node-lost, naming node4 only"
else
  not_ok "report --json: one verdict naming node4 only"; echo "  | got $got"
fi

# 2. No accusation without confirmation: the controller loses node4's agent
# (it is killed at the same moment as above) but node4 itself stays up. The
# fresh connection at the end of the stage answers, so the verdict is a
# warn (contact-lost), not node-lost, and node4 stays in the run.
"$sc" fault node4 link-up >/dev/null || { echo "FAIL: link-up"; exit 1; }
"$sc" exec node4 iptables -Z INPUT || { echo "FAIL: zeroing the counter"; exit 1; }
# The first run's agent on node4 was never told to stop (it was lost): it
# still holds its listeners, and would answer this run's probes.
kill_node4_agents() {
  for pid in $(ip netns pids "$prefix-node4"); do
    tr "\\0" " " <"/proc/$pid/cmdline" 2>/dev/null | grep -q "agent-[0-9a-f]* --root=" && kill -9 "$pid"
  done
}
kill_node4_agents
rm -f "$dir/lost.at"
when_probed kill_node4_agents
DB=$dir/again.db
"$CC" run "$dir/inventory.toml" --stages ports --db "$DB" >"$dir/again.out" 2>"$dir/again.err"
rc=$?
wait "$watcher"
watcher=""
sed 's/^/  > /' "$dir/again.out"
[ -s "$dir/lost.at" ] && ok "node4's agent was killed during the probe phase" ||
  not_ok "the probe phase never reached node4 (second run)"
[ $rc -eq 0 ] && ok "run exits 0 (node4 answered again: nobody is accused)" ||
  { not_ok "run exits 0, got $rc"; cat "$dir/again.err"; }
if head -1 "$dir/again.out" | grep -q '^PASS with warnings'; then ok "the headline says PASS with warnings"
else not_ok "the headline says PASS with warnings"; head -1 "$dir/again.out"; fi
expect "exactly one stored verdict: contact-lost on node4, a warn" '["node4"]|contact-lost|warn' \
  "select nodes, kind, severity from verdicts where $P"
expect_like "it says node4 answered a fresh connection" "a fresh connection to it answered" \
  "select summary from verdicts where $P"
expect "no pair result fails or hangs" 0 \
  "select count(*) from pair_results where $P and outcome in ('fail','hang','error')"
cluster_test_finish
