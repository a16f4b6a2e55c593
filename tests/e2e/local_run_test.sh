#!/bin/bash
# End to end on this machine through the local transport: `run` prints a
# verdict and stores a run that `report` re-renders; Ctrl-C stops every
# agent and records the run as interrupted; SIGKILL keeps what was written.
set -u
BUILD=${1:?build dir}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
CC="$BUILD/clustercheck"
TMP=$(mktemp -d)
trap 'pkill -f "$TMP" 2>/dev/null; rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
DB="$TMP/cc.db"

# 1. make run's command: a verdict, exit 0 or 1, a run in the DB.
"$CC" run "$SRC/inventories/local.toml" --db "$DB" >"$TMP/run.out" 2>"$TMP/run.err"
rc=$?
cat "$TMP/run.out"
[ $rc -le 1 ] || { cat "$TMP/run.err"; fail "run exited $rc"; }
head -1 "$TMP/run.out" | grep -Eq '^(PASS|FAIL)' || fail "first line is not a verdict"
grep -q "stored as run 1" "$TMP/run.out" || fail "no 'stored as run 1'"
[ "$(sqlite3 "$DB" "select status from runs where id=1")" = done ] || fail "run not done"
[ "$(sqlite3 "$DB" "select count(*) from node_results where run_id=1 and stage='facts' and outcome='pass'")" -ge 1 ] \
  || fail "no facts result stored"
sqlite3 "$DB" "select facts from nodes where run_id=1" | grep -q '"kernel"' || fail "facts JSON not stored"
# Every stage of the pipeline has its line with a result or a reason, and
# the summary ends with the next step (issue 18).
block=$(sed -n '/^on this machine, stage by stage$/,/^$/p' "$TMP/run.out")
for st in facts parity nics ports nccl mpi; do
  grep -Eq "^  $st +[0-9]+ (pass|skip|warn|fail|error)" <<<"$block" || fail "no line for stage $st"
done
grep -Eq "NCCL_SOCKET_IFNAME=|no physical interface with an address" <<<"$block" || fail "nics names no interface"
[ "$(sqlite3 "$DB" "select count(*) from pair_results where run_id=1 and stage='ports' and state='open'")" -ge 2 ] ||
  fail "ports reached no port between the two local agents"
nccl=$(sqlite3 "$DB" "select count(*) from node_results where run_id=1 and stage='nccl' and (outcome='pass' or (outcome='skip' and message!=''))")
[ "$nccl" -ge 1 ] || fail "nccl has neither a result nor a reason"
if command -v mpirun >/dev/null && [ -x "$BUILD/clustercheck-mpi-probe" ]; then
  [ "$(sqlite3 "$DB" "select count(*) from node_results where run_id=1 and stage='mpi' and check_name='launch' and outcome='pass'")" = 2 ] ||
    fail "mpi did not launch 2 ranks"
fi
tail -3 "$TMP/run.out" | grep -q "^  cp $SRC/inventories/example.toml my-cluster.toml" ||
  fail "the summary does not end with the next step naming example.toml"

# 2. report re-renders the same verdict from the store alone.
"$CC" report --db "$DB" >"$TMP/report.out" || fail "report exited $?"
[ "$(head -1 "$TMP/run.out")" = "$(head -1 "$TMP/report.out")" ] || fail "report verdict differs"
"$CC" history --db "$DB" | grep -q "^1 " || fail "history lacks run 1"

# 3. A bad inventory is exit 2 with file:line:column.
printf 'name = "x"\ntransport = "local"\nbogus = 1\n[[nodes]]\nname = "a"\n' >"$TMP/bad.toml"
"$CC" run "$TMP/bad.toml" --db "$DB" 2>"$TMP/bad.err"
[ $? -eq 2 ] || fail "bad inventory did not exit 2"
grep -q "bad.toml:3:1" "$TMP/bad.err" || { cat "$TMP/bad.err"; fail "no location in the error"; }

# 4. Ctrl-C during a stage: exit 130, run interrupted, no agent left.
cat >"$TMP/three.toml" <<TOML
name = "three"
transport = "local"
[[nodes]]
name = "sim[1-3]"
[stages]
run = ["sleep"]
[stages.sleep]
seconds = 60
TOML
# Ctrl-C (SIGINT) and SIGTERM (a scheduler's kill) alike.
for sig in INT TERM; do
  "$CC" run "$TMP/three.toml" --db "$DB" >"$TMP/int.out" 2>&1 &
  pid=$!
  for _ in $(seq 50); do
    [ "$(sqlite3 "$DB" "select count(*) from node_results where stage='connect' and run_id=(select max(id) from runs)")" = 3 ] && break
    sleep 0.2
  done
  sleep 1
  n_agents=$(pgrep -c -P $pid -f clustercheck-agent || true)
  [ "$n_agents" = 3 ] || fail "SIG$sig: expected 3 agents under the controller, saw $n_agents"
  kill -$sig $pid
  wait $pid
  rc=$?
  [ $rc -eq 130 ] || { cat "$TMP/int.out"; fail "SIG$sig: interrupted run exited $rc"; }
  [ "$(sqlite3 "$DB" "select status from runs order by id desc limit 1")" = interrupted ] || fail "SIG$sig: run not recorded as interrupted"
  for _ in $(seq 75); do pgrep -f "$BUILD/clustercheck-agent" >/dev/null || break; sleep 0.2; done
  pgrep -f "$BUILD/clustercheck-agent" >/dev/null && fail "agents left after SIG$sig"
done

# 5. SIGKILL midway: what was written stays; the agents go away by
# themselves (their stdin closes with the controller).
before=$(sqlite3 "$DB" "select max(id) from runs")
"$CC" run "$TMP/three.toml" --db "$DB" >/dev/null 2>&1 &
pid=$!
for _ in $(seq 50); do
  [ "$(sqlite3 "$DB" "select count(*) from node_results where stage='connect' and run_id=(select max(id) from runs) and run_id>$before")" = 3 ] && break
  sleep 0.2
done
kill -KILL $pid
wait $pid 2>/dev/null
# The store still says "running" (nothing could write the finish); history
# and report tell from the controller's free lock that it was killed.
[ "$(sqlite3 "$DB" "select status from runs order by id desc limit 1")" = running ] || fail "killed run should stay 'running' in the store"
killed=$(sqlite3 "$DB" "select max(id) from runs")
sqlite3 "$DB" "select json_extract(meta, '\$.controller.pid'), json_extract(meta, '\$.controller.lock') from runs where id=$killed" |
  grep -qx "$pid|$(realpath "$DB").lock" || fail "the run does not record its controller's pid and lock"
"$CC" history --db "$DB" >"$TMP/history.out"
grep -Eq "^$killed +[^ ]+ +killed " "$TMP/history.out" || { cat "$TMP/history.out"; fail "history does not show run $killed as killed"; }
"$CC" report "$killed" --db "$DB" >"$TMP/killed.out"
head -1 "$TMP/killed.out" | grep -q '^KILLED: ' || { cat "$TMP/killed.out"; fail "report's verdict is not KILLED"; }
grep -q "^killed: controller pid $pid on $(hostname) died without finishing the run" "$TMP/killed.out" ||
  { cat "$TMP/killed.out"; fail "report does not say which controller died"; }
grep -q "^stored before it died: connect 3 pass; .*sleep " "$TMP/killed.out" ||
  { cat "$TMP/killed.out"; fail "report does not say what was stored before it died"; }
[ "$(sqlite3 "$DB" "select count(*) from node_results where stage='connect' and run_id=(select max(id) from runs)")" = 3 ] \
  || fail "connect results lost after SIGKILL"
# They see EOF on stdin and exit; allow for a loaded machine.
for _ in $(seq 50); do pgrep -f "$BUILD/clustercheck-agent" >/dev/null || break; sleep 0.2; done
pgrep -f "$BUILD/clustercheck-agent" >/dev/null && fail "agents outlived a SIGKILLed controller"
"$CC" report --db "$DB" | grep -q "did not finish" || fail "report does not say the killed run did not finish"
echo PASS
