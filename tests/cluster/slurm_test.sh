#!/usr/bin/env bash
# shellcheck disable=SC2015  # `check && ok || not_ok` is intended
# transport = "slurm" on a real Slurm (issue 14; slurmcluster.sh: one
# slurmctld here, one slurmd per simulated node in its namespaces, a
# node-local /var/tmp/clustercheck-local per node). 8 nodes set up as
# healthy_test.sh sets them up (data + mgmt networks, docker0, gpus = 0):
#   1. from a login node (no allocation): clustercheck asks salloc for the
#      nodes, copies the agent with sbcast, starts every agent with one
#      srun; they dial back. Every stage runs, PASS, exit 0, no verdict;
#      the run records launcher "slurm" and the job id; afterwards squeue
#      is empty (the allocation was given back) and no agent runs;
#   2. inside `salloc -N8`: the same allocation is used (SLURM_JOB_ID), and
#      the agent, already on every node, is not copied again;
#   3. node3 drained in Slurm ("bad cable"): node3 is `skip` with Slurm's
#      reason, nothing is accused, exit 0;
#   4. node5's slurmd stopped: once Slurm sees it not responding, node5 is
#      named (its connect fails with Slurm's state), exit 1;
#   5. Ctrl-C while the agents run: exit 130, squeue empty, no agent left;
#      inside the user's salloc: the run's steps are cancelled, even one
#      whose srun was lost, and the user's allocation and own step are not;
#   6. a one-minute allocation whose agents are kept busy longer: Slurm
#      ends the steps at the time limit, and each node's work is a `hang`
#      quoting Slurm;
#   7. node2 with an environment of its own: every node's agent is then a
#      one-task step dialling back in its own slot; PASS;
#   8. [slurm] steps = true, the nodes listed in reverse: the mpi stage's
#      jobs are Slurm steps (srun --mpi=pmix, rank r on the inventory's r-th
#      node), PASS with all 28 pairs; node3 refusing connections on its
#      data address: only pairs with node3 fail, node3 is named.
# ctest label "cluster"; $1 is the build dir. Exit 77 = skip.
set -u
BUILD=$(cd "${1:?build dir}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
sc=$here/simcluster.sh
slc=$here/slurmcluster.sh
CC=$BUILD/clustercheck

# shellcheck source=tests/cluster/testlib.sh
. "$here/testlib.sh"
for p in slurmctld slurmd srun sbcast salloc munged; do
  if ! PATH=$PATH:/usr/sbin command -v "$p" >/dev/null; then
    echo "skip: $p is not installed (scripts/install-deps.sh)"; exit 77
  fi
done
command -v jq >/dev/null || { echo "skip: no jq"; exit 77; }
[ -x "$CC" ] || { echo "FAIL: no $CC"; exit 1; }
cluster_test_start sl slurm
cluster_test_cleanup() { "$slc" down >/dev/null 2>&1; }

indent() { sed 's/^/  | /'; }
node_state() { timeout 20 sinfo -h -n "$1" -o '%T'; }
not_responding() { case $(node_state "$1") in *'*') return 0 ;; *) return 1 ;; esac; }
queue_empty() { [ -z "$(timeout 20 squeue -h)" ]; }
agents_left() { pgrep -f "[c]lustercheck-agent-.*--connect=" >/dev/null; }
no_agents() { ! agents_left; }

start=$SECONDS
"$slc" up 8 --nics 2 --mtu-data 9000 --ssh-nic 1 --docker0 --known-hosts inventory --gpus 0 \
  --base auto >"$dir/up.log" 2>&1 || { indent <"$dir/up.log"; echo "FAIL: slurmcluster up"; exit 1; }
echo "# Slurm up on 8 nodes in $((SECONDS - start)) s"
set -a
# shellcheck disable=SC1091
. "$dir/slurm/env"
set +a

# The simulated cluster's inventory, launched by Slurm instead of ssh.
# The agents get a home of their own: every simulated node shares this
# machine's /root, whose login files (pyenv's rehash lock) would make eight
# login shells at once wait on each other.
mkdir -p "$dir/home"
sed -e 's/^transport = .*/transport = "slurm"/' \
  -e "/^\[defaults\]/a env = { HOME = \"$dir/home\" }" "$dir/inventory.toml" >"$dir/slurm.toml"
cat >>"$dir/slurm.toml" <<TOML

[slurm]
agent_dir = "$SLURMCLUSTER_LOCAL"
time_limit = "10"

[stages.mpi]
iters = 5
message_size = "64K"
TOML
run() {  # RUN_NAME ARGS...: one clustercheck run; its exit status in $rc
  local name=$1 t0=$SECONDS
  shift
  "$CC" run "$dir/slurm.toml" --db "$DB" "$@" >"$dir/$name.out" 2>"$dir/$name.err"
  rc=$?
  echo "# $name exited $rc after $((SECONDS - t0)) s"
}

# --- 1. healthy, from a login node -------------------------------------
run healthy
sed 's/^/  > /' "$dir/healthy.out" | head -20
[ "$rc" = 0 ] && head -1 "$dir/healthy.out" | grep -q '^PASS' && ok "8 healthy nodes through Slurm: PASS, exit 0" ||
  { not_ok "8 healthy nodes through Slurm: PASS, exit 0 (exit $rc)"; tail -20 "$dir/healthy.err" | indent; }
expect "every stage ran" "connect facts health mpi nccl nics parity ports" \
  "select group_concat(stage, ' ') from (select distinct stage from node_results where run_id=1 order by stage)"
expect "every agent dialled back" "pass|8" \
  "select outcome, count(*) from node_results where run_id=1 and stage='connect' and check_name='agent' group by 1"
"$CC" report 1 --db "$DB" --json >"$dir/r1.json" 2>/dev/null
expect "no verdict" "" "select '$(jq -r '[.verdicts[] | select(.severity != "pass" and .severity != "skip") | .kind] | join(",")' "$dir/r1.json")'"
expect "no result is fail, warn, error or hang" "" \
  "select group_concat(distinct stage || '/' || check_name) from (select stage, check_name, outcome from node_results where run_id=1 union all select stage, check_name, outcome from pair_results where run_id=1) where outcome in ('fail','warn','error','hang')"
expect "the run records its launcher, its own allocation and the copy" "slurm|1|8" \
  "select json_extract(meta, '\$.launcher.launcher'), json_extract(meta, '\$.launcher.allocated_by_clustercheck'), json_extract(meta, '\$.launcher.agent_copied_to') from runs where id=1"
job1=$(q "select json_extract(meta, '\$.launcher.job_id') from runs where id=1")
[ -n "$job1" ] && ok "with the Slurm job id ($job1)" || not_ok "no job id in the run's meta"
grep -q "asking for one: salloc --no-shell" "$dir/healthy.err" && ok "it says it asks salloc for the allocation" ||
  not_ok "no word of the salloc"
wait_for 20 queue_empty >/dev/null && ok "the allocation was given back: squeue is empty" ||
  { not_ok "squeue is not empty after the run"; timeout 20 squeue | indent; }
! agents_left && ok "no agent is left running" || not_ok "agents left running: $(pgrep -af clustercheck-agent)"

# --- 2. inside salloc ---------------------------------------------------
t0=$SECONDS
timeout 300 salloc -N8 -J outer sh -c "'$CC' run '$dir/slurm.toml' --db '$DB' --stages facts,parity,nics,ports; echo \"inner exit \$? job \$SLURM_JOB_ID\"" \
  >"$dir/inside.out" 2>"$dir/inside.err"
echo "# run inside salloc ended after $((SECONDS - t0)) s: $(tail -1 "$dir/inside.out")"
inner=$(tail -1 "$dir/inside.out")
[ "${inner%% job*}" = "inner exit 0" ] && ok "inside salloc: PASS, exit 0" ||
  { not_ok "inside salloc: $inner"; tail -20 "$dir/inside.err" | indent; }
expect "it used the allocation it ran in and copied nothing" "slurm|0|0|${inner##* job }" \
  "select json_extract(meta, '\$.launcher.launcher'), json_extract(meta, '\$.launcher.allocated_by_clustercheck'), json_extract(meta, '\$.launcher.agent_copied_to'), json_extract(meta, '\$.launcher.job_id') from runs where id=2"
"$CC" report 2 --db "$DB" --json >"$dir/r2.json" 2>/dev/null
expect "and nothing is accused" "" "select '$(jq -r '[.verdicts[] | select(.severity != "pass" and .severity != "skip") | .kind] | join(",")' "$dir/r2.json")'"

# --- 3. a drained node ----------------------------------------------------
"$slc" fault node3 drain "bad cable" >/dev/null 2>&1 || not_ok "drain node3"
run drained --stages facts,parity
[ "$rc" = 0 ] && ok "with node3 drained: exit 0" || { not_ok "with node3 drained: exit $rc"; indent <"$dir/drained.out"; }
expect "node3 is skip with Slurm's reason" "skip|connect: out-of-service: drained in Slurm (drained): bad cable" \
  "select outcome, message from node_results where run_id=3 and stage='connect' and node='node3'"
"$CC" report 3 --db "$DB" --json >"$dir/r3.json" 2>/dev/null
expect "nothing is accused" "" "select '$(jq -r '[.verdicts[] | select(.severity != "pass" and .severity != "skip") | .kind] | join(",")' "$dir/r3.json")'"
"$slc" fault node3 resume >/dev/null 2>&1 || not_ok "resume node3"

# --- 4. a node whose slurmd is down ---------------------------------------
"$slc" fault node5 slurmd-stop >/dev/null 2>&1 || not_ok "slurmd-stop node5"
wait_for 60 not_responding node5 >/dev/null || not_ok "node5 not seen as not responding by Slurm"
run slurmd_down --stages facts,parity
[ "$rc" = 1 ] && ok "with node5's slurmd down: exit 1" || not_ok "with node5's slurmd down: exit $rc"
expect_like "node5 fails to connect, in Slurm's words" "^fail|connect: unreachable: down in Slurm" \
  "select outcome || '|' || message from node_results where run_id=4 and stage='connect' and node='node5'"
"$CC" report 4 --db "$DB" --json >"$dir/r4.json" 2>/dev/null
named=$(jq -r '[.verdicts[] | select(.severity != "pass" and .severity != "skip") | "\(.kind) \(.nodes | join(","))"] | join("; ")' "$dir/r4.json")
echo "# verdicts: $named"
[ "$named" = "unreachable node5" ] && ok "node5 is named, and no other node" || not_ok "node5 alone is named, not: $named"
jq -r '.verdicts[0].summary' "$dir/r4.json" | grep -q "cannot be reached by Slurm" && ok "in Slurm's terms, not ssh's" ||
  not_ok "the verdict speaks of Slurm: $(jq -r '.verdicts[0].summary' "$dir/r4.json")"
"$slc" fault node5 slurmd-start >/dev/null 2>&1 || not_ok "slurmd-start node5"
wait_for 60 queue_empty >/dev/null || true

# --- 5. Ctrl-C --------------------------------------------------------------
"$CC" run "$dir/slurm.toml" --db "$DB" --stages sleep --set sleep.seconds=120 >"$dir/int.out" 2>"$dir/int.err" &
pid=$!
wait_for 60 agents_left >/dev/null || not_ok "the agents did not start"
sleep 2
kill -INT "$pid"
wait "$pid"
rc=$?
[ "$rc" = 130 ] && ok "Ctrl-C: exit 130" || not_ok "Ctrl-C: exit $rc"
wait_for 30 queue_empty >/dev/null && ok "Ctrl-C leaves no job in squeue" ||
  { not_ok "Ctrl-C left jobs in squeue"; timeout 20 squeue | indent; }
wait_for 10 no_agents >/dev/null && ok "and no agent running" ||
  not_ok "agents left after Ctrl-C: $(pgrep -af clustercheck-agent)"

# --- 5b. Ctrl-C inside the user's own allocation ----------------------------
# The allocation is the user's to keep, but nothing of the run may outlive
# it. A step named as the run's own steps (clustercheck-PID) whose srun was
# lost stands for one that SIGTERM to srun would not end; a step of the
# user's own stands beside it. After Ctrl-C only the run's step is gone.
step_names() { timeout 20 squeue -h -s -j "$1" -o '%j' | sort | tr '\n' ' '; }
outer=$(timeout 60 salloc --no-shell -N8 -J outer 2>&1 | sed -n 's/.*Granted job allocation \([0-9]*\).*/\1/p')
if [ -z "$outer" ]; then
  not_ok "salloc --no-shell -N8 for the Ctrl-C inside salloc"
else
  SLURM_JOB_ID=$outer "$CC" run "$dir/slurm.toml" --db "$DB" --stages sleep --set sleep.seconds=120 \
    >"$dir/int_inside.out" 2>"$dir/int_inside.err" &
  pid=$!
  wait_for 60 agents_left >/dev/null || not_ok "the agents did not start inside the allocation"
  srun --jobid="$outer" --overlap -J "clustercheck-$pid" -N1 -n1 -w node1 sleep 300 >/dev/null 2>&1 &
  lost=$!
  srun --jobid="$outer" --overlap -J mine -N1 -n1 -w node2 sleep 300 >/dev/null 2>&1 &
  mine=$!
  # The run's own agent step and the lost one share the name.
  both_steps() {
    local names=" $(step_names "$outer")"
    case "$names" in *" clustercheck-$pid clustercheck-$pid "*) ;; *) return 1 ;; esac
    case "$names" in *" mine "*) ;; *) return 1 ;; esac
  }
  wait_for 30 both_steps >/dev/null || not_ok "the two extra steps did not show in squeue: $(step_names "$outer")"
  echo "# steps of job $outer before Ctrl-C: $(step_names "$outer")"
  kill -INT "$pid"
  wait "$pid"
  rc=$?
  echo "# steps of job $outer after: $(step_names "$outer")"
  [ "$rc" = 130 ] && ok "Ctrl-C inside salloc: exit 130" || not_ok "Ctrl-C inside salloc: exit $rc"
  grep -q "cancelling [0-9]* step(s) of this run in job $outer" "$dir/int_inside.err" &&
    ok "it says it cancels the run's step that srun's end did not" ||
    { not_ok "no word of cancelling the run's lost step"; tail -5 "$dir/int_inside.err" | indent; }
  run_steps_gone() { case " $(step_names "$outer")" in *" clustercheck-"*) return 1 ;; esac; }
  wait_for 20 run_steps_gone >/dev/null && ok "no step of the run is left in squeue" ||
    not_ok "a step of the run is left in job $outer: $(step_names "$outer")"
  case " $(step_names "$outer")" in
    *" mine "*) ok "the user's own step and allocation are left alone" ;;
    *) not_ok "the user's step went too: $(step_names "$outer")" ;;
  esac
  wait_for 10 no_agents >/dev/null && ok "and no agent running" ||
    not_ok "agents left after Ctrl-C inside salloc: $(pgrep -af clustercheck-agent)"
  timeout 20 scancel "$outer"
  wait "$lost" "$mine" 2>/dev/null
  wait_for 30 queue_empty >/dev/null || not_ok "job $outer did not go after scancel"
fi

# --- 6. a step Slurm ends at its time limit ---------------------------------
# An allocation of one minute, agents kept busy for longer: Slurm cancels
# them "DUE TO TIME LIMIT", which is a hang of each node's work, not a crash.
sed 's/^time_limit = .*/time_limit = "1"/' "$dir/slurm.toml" >"$dir/short.toml"
t0=$SECONDS
"$CC" run "$dir/short.toml" --db "$DB" --stages sleep --set sleep.seconds=240 >"$dir/short.out" 2>"$dir/short.err"
rc=$?
short_id=$(q "select max(id) from runs")
echo "# the 1-minute allocation's run exited $rc after $((SECONDS - t0)) s"
[ "$rc" = 1 ] && ok "a run whose steps Slurm ends at the time limit exits 1" || not_ok "time limit: exit $rc"
expect "every node's work is a hang, in Slurm's words" "hang|8|8" \
  "select outcome, count(*), sum(message like '%DUE TO TIME LIMIT%') from node_results where run_id=$short_id and stage='sleep' group by outcome"
wait_for 30 queue_empty >/dev/null && ok "and nothing is left in squeue" || not_ok "jobs left after the time limit"
q "select '  | ' || node || ' ' || outcome || ': ' || substr(message, 1, 200) from node_results where run_id=$short_id and stage='sleep' and outcome != 'hang'"


# --- 7. every agent a step of its own ----------------------------------------
# node2's environment differs from the others', so no one srun can start
# them all: each node's agent is a one-task step (srun -w NODE) that dials
# back in its own slot, as the nccl stage's extra agents are.
sed "/^name = \"node2\"/a env = { HOME = \"$dir/home\", CC_ONLY_NODE2 = \"1\" }" "$dir/slurm.toml" >"$dir/steps.toml"
"$CC" run "$dir/steps.toml" --db "$DB" --stages facts,parity,ports >"$dir/steps.out" 2>"$dir/steps.err"
rc=$?
echo "# the run of one step per node exited $rc"
[ "$rc" = 0 ] && ok "one step per node: PASS, exit 0" || { not_ok "one step per node: exit $rc"; indent <"$dir/steps.out"; }
expect "every node's agent dialled back from its step" "pass|8" \
  "select outcome, count(*) from node_results where run_id=$(q "select max(id) from runs") and stage='connect' and check_name='agent' group by 1"
wait_for 30 queue_empty >/dev/null && ok "and nothing is left in squeue" || not_ok "jobs left after the steps' run"

# --- 8. [slurm] steps = true: the MPI probe as Slurm steps -------------------
# The mpi stage's jobs are steps of the allocation (srun --mpi=pmix), no
# mpirun, no ssh. The inventory lists the nodes in reverse, so rank r is
# the r-th node of the inventory only if the step puts it there (Slurm's
# own block order would put rank 0 on node1): a fault on node3 must name
# node3, not the node whose rank it would have been.
awk '/^\[\[nodes\]\]/ { n++ } n == 0 { print; next } { b[n] = b[n] $0 "\n" }
  END { for (i = n; i >= 1; i--) printf "%s", b[i] }' "$dir/inventory.toml" |
  sed -e 's/^transport = .*/transport = "slurm"/' -e "/^\[defaults\]/a env = { HOME = \"$dir/home\" }" >"$dir/srun.toml"
cat >>"$dir/srun.toml" <<TOML

[slurm]
agent_dir = "$SLURMCLUSTER_LOCAL"
time_limit = "10"
steps = true

[stages.mpi]
iters = 5
message_size = "64K"
TOML
srun_run() {  # NAME: a run of facts, nics and mpi with [slurm] steps
  local t0=$SECONDS
  "$CC" run "$dir/srun.toml" --db "$DB" --stages facts,nics,mpi >"$dir/$1.out" 2>"$dir/$1.err"
  rc=$?
  run_id=$(q "select max(id) from runs")
  echo "# $1 exited $rc after $((SECONDS - t0)) s (run $run_id)"
}
srun_run srun_healthy
[ "$rc" = 0 ] && head -1 "$dir/srun_healthy.out" | grep -q '^PASS' && ok "[slurm] steps, 8 healthy nodes: PASS, exit 0" ||
  { not_ok "[slurm] steps, healthy: exit $rc"; indent <"$dir/srun_healthy.out"; }
expect "the mpi job was a Slurm step in rank order, not mpirun" "env|1|1|0" \
  "select json_extract(meta, '\$.mpi.argv[0]'), instr(json_extract(meta, '\$.mpi.argv'), '\"SLURM_HOSTFILE=') > 0, instr(json_extract(meta, '\$.mpi.argv'), '\"--mpi=pmix\"') > 0, instr(json_extract(meta, '\$.mpi.argv'), 'mpirun') from runs where id=$run_id"
# Measured: a pass, or a flaky warn whose quiet retest passed (on a
# loaded CI machine a first job may lose a pair; the retest is the
# confirmation, and the run stays PASS). Anything else is a defect.
expect "all 28 pairs measured, latency and bandwidth" "56|0" \
  "select count(*), sum(not (outcome = 'pass' or (outcome = 'warn' and json_extract(evidence, '\$.confirmation') = 'flaky'))) from pair_results where run_id=$run_id and stage='mpi'"
q "select '#   ' || outcome || ' ' || src || '>' || dst || ' ' || check_name || ': ' || substr(message, 1, 200) from pair_results where run_id=$run_id and stage='mpi' and outcome != 'pass'"
wait_for 30 queue_empty >/dev/null && ok "and nothing is left in squeue" || not_ok "jobs left after the steps' mpi"
data3=$("$sc" addr node3 0)
"$sc" fault node3 iptables -A INPUT -d "$data3" -p tcp --syn -j REJECT --reject-with tcp-reset ||
  not_ok "iptables fault on node3"
srun_run srun_node3
[ "$rc" = 1 ] && ok "[slurm] steps, node3 refusing connections on the data network: exit 1" ||
  not_ok "[slurm] steps, node3's fault: exit $rc"
expect "every mpi pair that is not pass involves node3, and some are not" "0|1" \
  "select sum(src != 'node3' and dst != 'node3'), count(*) > 0 from pair_results where run_id=$run_id and stage='mpi' and outcome != 'pass'"
"$CC" report "$run_id" --db "$DB" --json >"$dir/r_srun.json" 2>/dev/null
named=$(jq -r '[.verdicts[] | select(.severity != "pass" and .severity != "skip") | .nodes[]?] | unique | join(",")' "$dir/r_srun.json")
echo "# nodes named: $named"
jq -r '.verdicts[] | select(.severity != "pass" and .severity != "skip") | "#   \(.severity) \(.kind) \(.stage)/\(.check) [\(.nodes | join(","))]: \(.summary)"' "$dir/r_srun.json" | head -20
case ",$named," in *,node3,*) ok "node3 is named" ;; *) not_ok "node3 is not named: $named" ;; esac
expect "and every verdict is about node3 (a link has two ends)" "0" \
  "select '$(jq '[.verdicts[] | select(.severity != "pass" and .severity != "skip") | select((.nodes | index("node3")) == null)] | length' "$dir/r_srun.json")'"
"$sc" fault node3 iptables -D INPUT -d "$data3" -p tcp --syn -j REJECT --reject-with tcp-reset || true
wait_for 30 queue_empty >/dev/null && ok "and nothing is left in squeue" || not_ok "jobs left after the faulty steps' run"

if ! cluster_test_finish; then
  for f in healthy inside drained slurmd_down int int_inside short steps srun_healthy srun_node3; do echo "# $f.err:"; tail -15 "$dir/$f.err" 2>/dev/null | indent; done
  exit 1
fi
