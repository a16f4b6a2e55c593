#!/usr/bin/env bash
# shellcheck disable=SC2015  # `check && ok || not_ok` is intended
# The mpi stage with strict host keys on a cluster with two networks (issue
# 17): the inventory addresses are on the management network (eth1), the
# nics stage recommends the data network (eth0, MTU 9000), and known_hosts
# holds ONLY the inventory addresses, as an operator's does. mpirun must
# reach the nodes by their inventory addresses (no "Host key verification
# failed"), keep the data network for btl_tcp_if_include, and put its OOB
# channel on a network this machine shares with every node, saying why.
# The run is healthy: every mpi result passes, nothing was retested, no
# pair is called slow. Then node3's data NIC is throttled: its pairs, and
# only they, are slow after a retest of each pair alone agreed.
# ctest label "cluster"; $1 is the build dir. Exit 77 = skip.
set -u
BUILD=${1:?build dir}
here=$(cd "$(dirname "$0")" && pwd)
sc=$here/simcluster.sh
CC=$BUILD/clustercheck
PROBE=$BUILD/clustercheck-mpi-probe

# shellcheck source=tests/cluster/testlib.sh
. "$here/testlib.sh"
command -v mpirun >/dev/null || { echo "skip: no mpirun (Open MPI)"; exit 77; }
[ -x "$PROBE" ] || { echo "skip: no $PROBE (built only where Open MPI is found)"; exit 77; }
[ -x "$CC" ] || { echo "FAIL: no $CC"; exit 1; }
cluster_test_start ms mpi-strict

"$sc" up 4 --nics 2 --ssh-nic 1 --base auto >"$dir/up.log" 2>&1 \
  || { cat "$dir/up.log"; echo "FAIL: simcluster up"; exit 1; }
data1=$("$sc" addr node1 data)
mgmt1=$("$sc" addr node1 mgmt)
data_net=${data1%.*}.0/24
mgmt_net=${mgmt1%.*}.0/24

# known_hosts with the inventory addresses only (simcluster writes every
# address of every network).
inv_addrs=$(sed -n 's/^address = "\(.*\)"$/\1/p' "$dir/inventory.toml")
# shellcheck disable=SC2086  # one pattern per address
grep -F -f <(printf '%s \n' $inv_addrs) "$dir/known_hosts" >"$dir/known_hosts.inv"
mv "$dir/known_hosts.inv" "$dir/known_hosts"
[ "$(wc -l <"$dir/known_hosts")" = 4 ] && ! grep -q "^$data1 " "$dir/known_hosts" \
  && ok "known_hosts holds the 4 inventory addresses (management network) only" \
  || not_ok "known_hosts: $(cat "$dir/known_hosts")"
grep -q 'host_key_policy = "strict"' "$dir/inventory.toml" && ok "host keys are checked strictly" \
  || not_ok "the inventory is not strict"
cat >>"$dir/inventory.toml" <<'TOML'

[stages.mpi]
timeout_s = 90
TOML

start=$SECONDS
"$CC" run "$dir/inventory.toml" --stages facts,nics,mpi --db "$DB" >"$dir/run.out" 2>"$dir/run.err"
rc=$?
echo "# clustercheck run exited $rc after $((SECONDS - start)) s"
sed 's/^/  > /' "$dir/run.out" | head -40
R="stage='mpi' and run_id=1"
meta() { q "select json_extract(meta, '\$.$1') from runs where id=1"; }

[ $rc -eq 0 ] && ok "the run passes (exit 0)" || not_ok "the run exits $rc"
expect "the nics stage chose the data network" "$data_net" \
  "select value from runs, json_each(json_extract(meta, '\$.mpi.argv')) where runs.id=1 and value like '${data1%.*}.%'"
expect "all 4 ranks started: no host key problem" "launch|pass|4" \
  "select check_name, outcome, count(*) from node_results where $R and check_name='launch' group by 1, 2"
expect "the allreduce is exact on all 4" "4" \
  "select count(*) from node_results where $R and check_name='allreduce' and outcome='pass'"
expect "6 pairs x latency and bandwidth pass" "12|12" \
  "select count(*), sum(outcome='pass' and value > 0) from pair_results where $R"
expect "no mpi result is anything but pass" "0" \
  "select (select count(*) from node_results where $R and outcome!='pass') + (select count(*) from pair_results where $R and outcome!='pass')"
meta mpi.open_mpi_said | grep -q "Host key verification failed" \
  && not_ok "Open MPI's ssh still failed host key verification" || ok "no host key verification failure"
expect "btl_tcp_if_include is the data network" "$data_net" \
  "select value from runs, json_each(json_extract(meta, '\$.mpi.argv')) where runs.id=1 and key = (select key + 1 from json_each(json_extract(meta, '\$.mpi.argv')) where value='btl_tcp_if_include')"
expect "oob_tcp_if_include is the network of the inventory addresses" "$mgmt_net|inventory-addresses" \
  "select json_extract(meta, '\$.mpi.oob.oob_tcp_if_include') || '|' || json_extract(meta, '\$.mpi.oob.source') from runs where id=1"
expect_like "the meta says why" "on the network of every node's inventory address" \
  "select json_extract(meta, '\$.mpi.oob.why') from runs where id=1"
expect_like "each launch result carries the oob choice" "$mgmt_net" \
  "select json_extract(evidence, '\$.oob.oob_tcp_if_include') from node_results where $R and check_name='launch' and node='node2'"
expect "nothing needed a retest" "0" "select json_extract(meta, '\$.\"retests.mpi\".retested') from runs where id=1"
expect "every bandwidth was judged by the stage and none is slow" "6|0" \
  "select count(*), sum(json_extract(evidence, '\$.speed.slow')) from pair_results where $R and check_name='bandwidth' and json_extract(evidence, '\$.speed.judged_by')='mpi'"
grep -q "bandwidth-outlier" "$dir/run.out" && not_ok "a bandwidth outlier is reported" \
  || ok "no bandwidth outlier is reported"

# --- a node whose data NIC is throttled: slow, after a retest alone ------
# node3's eth0 sends at 100 Mbit/s; 1 MiB x 20 round trips take ~3.4 s
# there (judged), ~20 ms elsewhere (too short to judge, but in the median).
"$sc" exec node3 tc qdisc add dev eth0 root tbf rate 100mbit burst 64kb latency 100ms \
  || { echo "FAIL: tc"; exit 1; }
sed -i 's/^timeout_s = 90$/timeout_s = 90\nmessage_size = "1M"/' "$dir/inventory.toml"
"$CC" run "$dir/inventory.toml" --stages nics,mpi --db "$DB" >"$dir/slow.out" 2>"$dir/slow.err"
rc=$?
echo "# slow: clustercheck run exited $rc"
R="stage='mpi' and run_id=2"
expect "node3's 3 pairs are slow, confirmed by a retest alone; no other pair" "node3|3|3" \
  "select 'node3', sum('node3' in (src, dst)), count(*) from pair_results where $R and check_name='bandwidth' and state='slow' and json_array_length(json_extract(evidence, '\$.speed.attempts'))=2"
expect "the stage retested exactly the suspects" "1" \
  "select json_extract(meta, '\$.mpi.speed.retested') = json_extract(meta, '\$.mpi.speed.suspects') and json_extract(meta, '\$.mpi.speed.slow') = 3 from runs where id=2"
grep -q "bandwidth-outlier.*node3 is slow" "$dir/slow.out" && ok "the report names node3 as slow" \
  || { not_ok "the report does not name node3 as slow"; grep -i "slow\|outlier" "$dir/slow.out" | head; }

cluster_test_finish
