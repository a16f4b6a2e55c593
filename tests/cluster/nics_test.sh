#!/usr/bin/env bash
# The nics stage on a 4-node simulated cluster with the faults of issue 6:
#   every node  data (eth0, MTU 9000), mgmt (eth1, MTU 1500), and a docker0
#               bridge with 172.17.0.1/16 (the same address everywhere)
#   node3       its data link is down
#   node4       its data NIC has MTU 1500
# Expected: the recommendation is the data network (NCCL_SOCKET_IFNAME=eth0,
# Open MPI's btl on the data CIDR); node3 and node4 are named with their reasons;
# docker0's subnet is excluded as a decoy with its reason; the DF datagrams
# show the MTU fault for real (lost towards node4, EMSGSIZE from it); the
# ports stage then uses the selected (data) addresses.
# ctest label "cluster"; $1 is the build dir. Exit 77 = skip.
set -u
BUILD=${1:?build dir}
here=$(cd "$(dirname "$0")" && pwd)
sc=$here/simcluster.sh
CC=$BUILD/clustercheck

[ -x "$CC" ] || { echo "FAIL: no $CC"; exit 1; }
# shellcheck source=tests/cluster/testlib.sh
. "$here/testlib.sh"
cluster_test_start nt nics

# SSH over mgmt (eth1): node3's data link goes down.
"$sc" up 4 --nics 2 --mtu-data 9000 --ssh-nic 1 --base auto >"$dir/up.log" 2>&1 ||
  { cat "$dir/up.log"; echo "FAIL: simcluster up"; exit 1; }
fault() { "$sc" fault "$@" || { echo "FAIL: fault $*"; exit 1; }; }
fault all decoy-bridge
fault node3 link-down data
fault node4 mtu data 1500
data_addr() { "$sc" addr "$1" data; }
d1=$(data_addr node1)
data_net=${d1%.*}.0/24
mgmt1=$("$sc" addr node1 mgmt)
mgmt_net=${mgmt1%.*}.0/24
echo "# data $data_net, mgmt $mgmt_net"

cat >>"$dir/inventory.toml" <<'TOML'

[stages.nics]
timeout_ms = 1000
[stages.ports]
ports = [29500]
ephemeral_samples = 0
timeout_ms = 1000
TOML

t0=$(date +%s)
"$CC" run "$dir/inventory.toml" --stages facts,nics,ports --db "$DB" >"$dir/run.out" 2>"$dir/run.err"
rc=$?
echo "# run took $(($(date +%s) - t0)) s"
echo "# clustercheck run exited $rc"
sed 's/^/  > /' "$dir/run.out"
if [ $rc -ne 1 ]; then not_ok "run exits 1 (two nodes are bad)"; cat "$dir/run.err"; else ok "run exits 1 (two nodes are bad)"; fi
cat "$dir/run.out" "$dir/run.err" | grep -q "^  export NCCL_SOCKET_IFNAME=eth0$" &&
  ok "the env lines are printed" || not_ok "the env lines are printed"

for want in "^  fail: node3: eth0 [0-9.]* is down (operstate down)$" \
            "^  fail: node4: eth0 MTU 1500, the rest of $data_net has 9000" \
            "^  excluded 172.17.0.0/16: decoy: 172.17.0.1 (docker0) is the same address" \
            "^  note: fallback: $mgmt_net works on every node"; do
  grep -q -- "$want" "$dir/run.out" && ok "the summary says: $want" ||
    not_ok "the summary says: $want"
done

N="stage='nics' and run_id=1"
expect "the recommendation is the data network" "pass|eth0" \
  "select outcome, value from node_results where $N and check_name='recommendation'"
expect_like "its reason names the data subnet and MTU 9000" "^$data_net: on 4 of 4 nodes, healthy on node\[1-2\].*MTU 9000" \
  "select message from node_results where $N and check_name='recommendation'"
expect "the stored selection: NCCL_SOCKET_IFNAME" eth0 \
  "select json_extract(meta, '\$.nics.NCCL_SOCKET_IFNAME') from runs where id=1"
expect "the stored selection: btl_tcp_if_include (oob_tcp_if_include is the mpi stage's)" "$data_net|" \
  "select json_extract(meta, '\$.nics.btl_tcp_if_include'), json_extract(meta, '\$.nics.oob_tcp_if_include') from runs where id=1"
expect "the selection for later stages: nccl_env" eth0 \
  "select json_extract(meta, '\$.\"selection.nccl_env\".NCCL_SOCKET_IFNAME') from runs where id=1"
expect "the selection for later stages: node2's data address" "$(data_addr node2)" \
  "select json_extract(meta, '\$.\"selection.addresses\".node2') from runs where id=1"
expect "node1 and node2 pass on the data network" "node1|pass
node2|pass" \
  "select node, outcome from node_results where $N and check_name='selected' and node in ('node1','node2') order by node"
expect_like "node3 is named: its data link is down" "fail|node3: eth0 $(data_addr node3) is down (operstate down)" \
  "select outcome, message from node_results where $N and check_name='selected' and node='node3'"
expect_like "node4 is named: MTU 1500 where the rest has 9000, shown by DF datagrams" \
  "fail|node4: eth0 MTU 1500, the rest of $data_net has 9000; 9000-byte DF datagrams fail with node\[1-2\]" \
  "select outcome, message from node_results where $N and check_name='selected' and node='node4'"
expect_like "the docker0 decoy is excluded with its reason" \
  "skip|172.17.0.0/16 decoy: 172.17.0.1 (docker0) is the same address on node\[1-4\]" \
  "select outcome, message from node_results where $N and check_name='excluded:172.17.0.0/16'"
expect "each node's probe of 172.17.0.1 is answered by itself (reaches only itself)" 12 \
  "select count(*) from pair_results where $N and check_name='tcp:172.17.0.0/16' and json_extract(evidence, '\$.answered_by')=src and outcome='skip'"
expect "pair results say which interface reached which peer" "eth0|eth0|$(data_addr node2)" \
  "select json_extract(evidence, '\$.src_nic'), json_extract(evidence, '\$.dst_nic'), json_extract(evidence, '\$.addr') from pair_results where $N and check_name='tcp:$data_net' and src='node1' and dst='node2'"
expect "full-size DF datagrams to node4 are lost (from node1, node2)" "lost|2" \
  "select mtu.state, count(*) from pair_results mtu where $N and check_name='mtu:$data_net' and dst='node4' and src in ('node1','node2') group by state"
expect "node4's own 9000-byte DF datagrams fail with EMSGSIZE" "too-big-local|2" \
  "select state, count(*) from pair_results where $N and check_name='mtu:$data_net' and src='node4' and dst in ('node1','node2') group by state"
expect "9000-byte DF datagrams pass between node1 and node2" "pass|pass" \
  "select group_concat(outcome, '|') from pair_results where $N and check_name='mtu:$data_net' and ((src='node1' and dst='node2') or (src='node2' and dst='node1'))"
# node3's link is down and node4's MTU is configured off: both read from
# the nodes' own facts, so their probes' failures are not retested (a
# retest would only wait the same deadlines again: nics_confirm.h).
expect "no failing data-network probe is retested: the nodes' own facts explain them (run meta)" "0|0|0" \
  "select json_extract(meta, '\$.\"retests.nics\".retested'), json_extract(meta, '\$.\"retests.nics\".confirmed'), json_extract(meta, '\$.\"retests.nics\".flaky') from runs where id=1"
expect_like "a failure its node's facts explain is confirmed by them, and says so" \
  "^confirmed|node3: eth0 .* is down .*(not retested)$" \
  "select json_extract(evidence, '\$.confirmation') || '|' || json_extract(evidence, '\$.confirmed_by') from pair_results where $N and check_name='tcp:$data_net' and src='node1' and dst='node3'"
expect_like "node4's MTU fix names the MTU and the interface" \
  "set the MTU of eth0 on node4 to 9000" \
  "select json_extract(evidence, '\$.next_step') from node_results where $N and check_name='selected' and node='node4'"
expect "node3 is unreachable on the data network from every peer" 0 \
  "select count(*) from pair_results where $N and check_name='tcp:$data_net' and dst='node3' and outcome='pass'"
expect "mgmt works everywhere: 12 tcp and 12 mtu passes" "24" \
  "select count(*) from pair_results where $N and check_name in ('tcp:$mgmt_net','mtu:$mgmt_net') and outcome='pass'"
expect "the ports stage listens on the selected data addresses" "$(data_addr node1)" \
  "select json_extract(evidence, '\$.address') from node_results where stage='ports' and run_id=1 and node='node1' and check_name='listen'"
for n in node1 node2 node3 node4; do
  left=$("$sc" exec "$n" ss -Hltnup 2>/dev/null | grep -vc '"sshd"' || true)
  [ "$left" = 0 ] && ok "$n: nothing of ours left listening (sshd aside)" || { not_ok "$n: nothing of ours left listening (sshd aside)"; "$sc" exec "$n" ss -Hltnup; }
done

# Without the facts stage the nics stage asks the agents for their network
# facts itself, and comes to the same choice.
"$CC" run "$dir/inventory.toml" --stages nics --db "$DB" >"$dir/run2.out" 2>"$dir/run2.err"
expect "nics alone (no facts stage) recommends the same" "pass|eth0" \
  "select outcome, value from node_results where stage='nics' and run_id=2 and check_name='recommendation'"
expect "nics alone names the same two bad nodes" "node3|fail
node4|fail" \
  "select node, outcome from node_results where stage='nics' and run_id=2 and check_name='selected' and outcome!='pass' order by node"

cluster_test_finish || { tail -20 "$dir/run.err"; exit 1; }
