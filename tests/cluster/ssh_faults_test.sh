#!/bin/bash
# Issue 3's integration test: facts and parity across 8 simulated nodes over
# real SSH, with four faults in the same run (sshd stopped, key revoked, host
# key changed, agent start hangs). The run completes, those nodes carry the
# right reasons, the rest pass, the DB holds it all; a second run pushes
# nothing; Ctrl-C leaves no agent in any namespace.
set -u
BUILD=${1:?build dir}
HERE=$(cd "$(dirname "$0")" && pwd)
[ "$(id -u)" = 0 ] || { echo "skip: needs root (network namespaces, sshd)"; exit 77; }
SC="$HERE/simcluster.sh"
export SIMCLUSTER_PREFIX=ccssh SIMCLUSTER_DIR=/tmp/simcluster-ccssh
D=$SIMCLUSTER_DIR
CC="$BUILD/clustercheck"
DB=$(mktemp -d)/cc.db
cleanup() { "$SC" down >/dev/null 2>&1; rm -rf "$(dirname "$DB")"; }
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }
q() { sqlite3 "$DB" "$1"; }

"$SC" up 8 --base auto >/dev/null || fail "simcluster up"
# Short deadlines so the hung node costs seconds, not a minute.
sed -i 's/^\[ssh\]$/[ssh]\nconnect_timeout_s = 5\ncommand_timeout_s = 8/' "$D/inventory.toml"

"$SC" fault node2 sshd-stop >/dev/null
"$SC" fault node3 revoke-key >/dev/null
"$SC" fault node4 new-hostkey >/dev/null
"$SC" fault node5 hang-agent >/dev/null

start=$(date +%s)
"$CC" run "$D/inventory.toml" --stages facts,parity --db "$DB" >"$D/run1.out" 2>&1
rc=$?
cat "$D/run1.out"
echo "run took $(( $(date +%s) - start )) s"
[ $rc -eq 1 ] || fail "expected exit 1 (failures), got $rc"
outcome() { q "select outcome||' '||value from node_results where run_id=1 and stage='connect' and check_name='agent' and node='$1'"; }
[ "$(outcome node2)" = "fail unreachable" ] || fail "node2: $(outcome node2)"
[ "$(outcome node3)" = "fail auth-failed" ] || fail "node3: $(outcome node3)"
[ "$(outcome node4)" = "fail host-key-mismatch" ] || fail "node4: $(outcome node4)"
[ "$(outcome node5)" = "hang timeout" ] || fail "node5: $(outcome node5)"
q "select message from node_results where run_id=1 and node='node4' and stage='connect'" | grep -q "SHA256:" \
  || fail "host key error does not name the fingerprint"
for n in node1 node6 node7 node8; do
  [ "$(outcome $n)" = "pass ready" ] || fail "$n: $(outcome $n)"
  [ "$(q "select outcome from node_results where run_id=1 and stage='facts' and node='$n' and check_name='collected'")" = pass ] \
    || fail "$n has no facts"
  q "select facts from nodes where run_id=1 and node='$n'" | grep -q "\"hostname\":\"$n\"" \
    || fail "$n facts do not carry its own hostname"
done
[ "$(q "select count(*) from node_results where run_id=1 and stage='parity'")" -gt 0 ] || fail "no parity results"
[ "$(q "select status from runs where id=1")" = done ] || fail "run 1 not done"
pushed1=$(q "select json_extract(meta,'$.bytes_pushed') from runs where id=1")
[ "${pushed1:-0}" -gt 0 ] || fail "first run pushed nothing"

# Second run on the healthy nodes: the agent is there already.
"$CC" run "$D/inventory.toml" --stages facts --limit node1,node[6-8] --db "$DB" >/dev/null 2>&1 \
  || fail "second run on healthy nodes failed"
pushed2=$(q "select json_extract(meta,'$.bytes_pushed') from runs where id=2")
[ "$pushed2" = 0 ] || fail "second run pushed $pushed2 bytes"
echo "bytes pushed: first run $pushed1, second run $pushed2"

# Ctrl-C in the middle of a stage: exit 130, no agent left anywhere.
cat >>"$D/inventory.toml" <<'TOML'
[stages.sleep]
seconds = 120
TOML
"$CC" run "$D/inventory.toml" --stages sleep --limit node1,node[6-8] --db "$DB" >"$D/int.out" 2>&1 &
pid=$!
for _ in $(seq 100); do
  [ "$(pgrep -fc "$D/agent/agent-")" -ge 4 ] && break
  sleep 0.2
done
[ "$(pgrep -fc "$D/agent/agent-")" -ge 4 ] || fail "agents did not start"
kill -INT $pid
wait $pid
rc=$?
[ $rc -eq 130 ] || { cat "$D/int.out"; fail "interrupted run exited $rc"; }
[ "$(q "select status from runs order by id desc limit 1")" = interrupted ] || fail "not recorded as interrupted"
for _ in $(seq 25); do pgrep -f "$D/agent/agent-" >/dev/null || break; sleep 0.2; done
if pgrep -af "$D/agent/agent-"; then fail "agent processes left after Ctrl-C"; fi
# Only agents of this cluster's directory: the nodes share the host's PID
# space, where other tests' agents may run at the same time. ("[/]" keeps
# grep from matching itself.)
for n in node1 node6 node7 node8; do
  "$SC" exec $n ps -eo args | grep -q "[/]${D#/}/agent/agent-" && fail "agent left on $n"
done
echo PASS
