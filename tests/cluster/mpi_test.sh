#!/usr/bin/env bash
# shellcheck disable=SC2015  # `check && ok || not_ok` is intended
# The mpi stage on a 4-node simulated cluster (issue 9): mpirun runs on this
# machine (the controller) and reaches the nodes over their real sshds.
#   1. healthy (interfaces from [stages.mpi], then from the nics stage):
#      every node launches, the allreduce is exact, and the 6 pairs'
#      ping-pong latency and bandwidth are stored; mpirun ran as root with
#      --allow-run-as-root;
#   2. btl_tcp_if_include = "eth9" (no such interface): the failure is
#      explained with Open MPI's own warning, per node;
#   3. node3 refuses new TCP connections from outside but ssh: pairs whose
#      connection the peer opens fail, each named as a link to node3 with
#      Open MPI's message;
#   4. node3 also rejects new TCP connections it opens (Open MPI's ports are
#      dynamic, so both rules block them all): the launch fails and node3 is
#      named;
# every failure above is confirmed by a second launch (both attempts in the
# evidence, counted in the run meta "retests.mpi"); the healthy run has none;
# and afterwards no probe or orted is left running.
# ctest label "cluster"; $1 is the build dir. Exit 77 = skip.
set -u
BUILD=${1:?build dir}
here=$(cd "$(dirname "$0")" && pwd)
sc=$here/simcluster.sh
CC=$BUILD/clustercheck
PROBE=$BUILD/clustercheck-mpi-probe

# shellcheck source=tests/cluster/testlib.sh
. "$here/testlib.sh"
command -v iptables >/dev/null || { echo "skip: no iptables"; exit 77; }
command -v mpirun >/dev/null || { echo "skip: no mpirun (Open MPI)"; exit 77; }
[ -x "$PROBE" ] || { echo "skip: no $PROBE (built only where Open MPI is found)"; exit 77; }
[ -x "$CC" ] || { echo "FAIL: no $CC"; exit 1; }
cluster_test_start mp mpi

"$sc" up 4 --base auto >"$dir/up.log" 2>&1 || { cat "$dir/up.log"; echo "FAIL: simcluster up"; exit 1; }
a1=$("$sc" addr node1)
subnet=${a1%.*}.0/24

# inventory NAME BTL [TIMEOUT]: the cluster's inventory with the mpi
# stage's settings; BTL "-" leaves both interfaces to the nics stage.
inventory() {
  cp "$dir/inventory.toml" "$dir/$1.toml"
  cat >>"$dir/$1.toml" <<TOML

[stages.mpi]
timeout_s = ${3:-60}
pair_timeout_s = 10
iters = 5
message_size = "1M"
TOML
  if [ "$2" != - ]; then
    printf 'btl_tcp_if_include = "%s"\noob_tcp_if_include = "%s"\n' "$2" "$subnet" >>"$dir/$1.toml"
  fi
}
# run NAME [STAGES]: one clustercheck run, its exit status in $rc.
run() {
  local start=$SECONDS
  "$CC" run "$dir/$1.toml" --stages "${2:-mpi}" --db "$DB" >"$dir/$1.out" 2>"$dir/$1.err"
  rc=$?
  echo "# $1: clustercheck run exited $rc after $((SECONDS - start)) s"
  sed 's/^/  > /' "$dir/$1.out" | head -40
}

# Push the agent once (the mpi stage needs the nodes usable, like any stage).
"$CC" run "$dir/inventory.toml" --stages facts --db "$dir/warmup.db" >"$dir/warmup.out" 2>&1

# --- 1. healthy -----------------------------------------------------------
inventory good "$subnet"
run good
R="stage='mpi' and run_id=1"
[ $rc -le 1 ] && ok "the healthy run completes (exit $rc)" || not_ok "the healthy run exits $rc"
expect "all 4 nodes launched" "launch|pass|4" \
  "select check_name, outcome, count(*) from node_results where $R and check_name='launch' group by 1, 2"
expect "the allreduce is exact on all 4" "allreduce|pass|4" \
  "select check_name, outcome, count(*) from node_results where $R and check_name='allreduce' group by 1, 2"
expect "6 pairs x latency and bandwidth, all pass with a positive value" "12|12" \
  "select count(*), sum(outcome='pass' and value > 0) from pair_results where $R"
expect "every pair appears once per check" "0" \
  "select count(*) from (select min(src,dst), max(src,dst), check_name, count(*) c from pair_results where $R group by 1, 2, 3 having c != 1)"
expect "latencies are in us, bandwidths in GB/s" "bandwidth|GB/s|6
latency|us|6" \
  "select check_name, unit, count(*) from pair_results where $R group by 1, 2 order by 1"
expect_like "node2-node3 met in round 0 of the circle method" "round 0" \
  "select message from pair_results where $R and src='node2' and dst='node3' and check_name='latency'"
expect "mpirun ran as root with --allow-run-as-root" "1" \
  "select count(*) from runs, json_each(json_extract(meta, '\$.mpi.argv')) where runs.id=1 and value='--allow-run-as-root'"
expect "mpirun used the inventory's interface for btl and oob" "2" \
  "select count(*) from runs, json_each(json_extract(meta, '\$.mpi.argv')) where runs.id=1 and value='$subnet'"
expect "a healthy run needs no retest" "0" \
  "select json_extract(meta, '\$.\"retests.mpi\".retested') from runs where id=1"

# --- 1b. interfaces from the nics stage ------------------------------------
inventory fromnics -
run fromnics nics,mpi
R="stage='mpi' and run_id=2"
expect "with the nics stage's choice, all 12 pair results pass" "12" \
  "select count(*) from pair_results where $R and outcome='pass'"
expect "mpirun used the nics stage's subnet for btl and oob" "2" \
  "select count(*) from runs, json_each(json_extract(meta, '\$.mpi.argv')) where runs.id=2 and value='$subnet'"

# --- 2. a wrong btl_tcp_if_include ----------------------------------------
inventory badif eth9
run badif
R="stage='mpi' and run_id=3"
[ $rc -eq 1 ] && ok "a wrong btl_tcp_if_include fails the run" || not_ok "badif exits $rc, not 1"
expect "the allreduce fails on all 4" "fail|4" \
  "select outcome, count(*) from node_results where $R and check_name='allreduce' group by 1"
expect_like "the failure is explained: eth9 is no interface on any node" \
  'btl_tcp_if_include="eth9" is not usable on node\[1-4\]: Unknown interface name, so Open MPI ignores it' \
  "select message from node_results where $R and check_name='allreduce' and node='node1'"
expect_like "Open MPI's own words are quoted" 'Open MPI: "WARNING: An invalid value was given for btl_tcp_if_include.' \
  "select message from node_results where $R and check_name='allreduce' and node='node2'"
expect "no pair passes" "0" "select count(*) from pair_results where $R and outcome='pass'"

# --- 3. node3 refuses connections from the other nodes --------------------
# (loopback stays open: a rank reaches its local orted over it). Ranks on
# node3 still connect out, so only pairs where the peer opened the
# connection fail; each such pair is a link named with Open MPI's message.
"$sc" fault node3 iptables -A INPUT -i lo -j ACCEPT \
  && "$sc" fault node3 iptables -A INPUT -p tcp --syn ! --dport 22 -j REJECT --reject-with tcp-reset \
  || { echo "FAIL: iptables fault"; exit 1; }
inventory inbound "$subnet" 60
run inbound
R="stage='mpi' and run_id=4"
[ $rc -eq 1 ] && ok "refused connections fail the run" || not_ok "inbound exits $rc, not 1"
expect "all 4 nodes launched" "4" \
  "select count(*) from node_results where $R and check_name='launch' and outcome='pass'"
expect "the pairs without node3 pass" "6" \
  "select count(*) from pair_results where $R and 'node3' not in (src, dst) and outcome='pass'"
failed=$(q "select count(*) from pair_results where $R and outcome='fail'")
[ "$failed" -ge 2 ] && ok "some pair with node3 fails ($((failed / 2)) of 3)" \
  || not_ok "no pair with node3 fails"
expect "every failed pair is one with node3, named in its message" "$failed" \
  "select count(*) from pair_results where $R and outcome='fail' and 'node3' in (src, dst) and message like '%could not open Open MPI''s TCP connection to node3: connect() to $("$sc" addr node3):%'"
expect "every failed pair was confirmed by a second launch, both attempts kept" "$failed" \
  "select count(*) from pair_results where $R and outcome='fail' and json_extract(evidence, '\$.confirmation')='confirmed' and json_array_length(json_extract(evidence, '\$.attempts'))=2"
expect "the run meta counts them" "1" \
  "select json_extract(meta, '\$.\"retests.mpi\".confirmed') >= $failed from runs where id=4"

# --- 4. node3 blocks Open MPI's ports ---------------------------------------
"$sc" fault node3 iptables -A OUTPUT -p tcp --syn -j REJECT --reject-with tcp-reset \
  || { echo "FAIL: iptables fault"; exit 1; }
inventory blocked "$subnet" 20
run blocked
R="stage='mpi' and run_id=5"
[ $rc -eq 1 ] && ok "blocked ports fail the run" || not_ok "blocked exits $rc, not 1"
expect "node3's launch fails, and only node3's" "node3|fail" \
  "select node, outcome from node_results where $R and check_name='launch' and outcome='fail'"
expect_like "node3 is named: it fails even alone" "node3 fails even alone" \
  "select message from node_results where $R and check_name='launch' and node='node3'"
expect "node3's launch failure is confirmed" "confirmed" \
  "select json_extract(evidence, '\$.confirmation') from node_results where $R and check_name='launch' and node='node3'"
expect_like "the other nodes say the launch failed because of node3" "because of node3" \
  "select message from node_results where $R and check_name='launch' and node='node1'"
expect "no pair passes" "0" "select count(*) from pair_results where $R and outcome='pass'"

# Nothing of this cluster's runs is left: no process in the nodes'
# namespaces but sshd, no mpirun for this cluster's subnet, no hostfile.
sleep 1
left=""
for i in 1 2 3 4; do
  for pid in $(ip netns pids "$prefix-node$i"); do
    comm=$(cat "/proc/$pid/comm" 2>/dev/null)
    case $comm in sshd|"") ;; *) left="$left node$i:$comm($pid)" ;; esac
  done
done
m=$(pgrep -f "if_include $subnet" || true)
[ -n "$m" ] && left="$left mpirun($m)"
[ -z "$left" ] && ok "no probe, orted or mpirun left running" || not_ok "left running:$left"
grep -ls "^$("$sc" addr node1) slots" /tmp/clustercheck-mpi.*/hostfile* >/dev/null 2>&1 \
  && not_ok "a temporary hostfile of this cluster is left in /tmp" || ok "no temporary hostfile left"

cluster_test_finish
