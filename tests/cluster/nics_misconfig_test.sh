#!/usr/bin/env bash
# The NIC choice never silently abandons the data network (issue 17). A
# 6-node cluster: data (eth0, MTU 9000), mgmt (eth1, MTU 1500, ssh) and a
# docker0 decoy with 172.17.0.1/16 on every node. Two cases, one run each:
#   (a) node3's data address has prefix length /16 instead of /24;
#   (b) node6 has node5's data address (a duplicate-address conflict).
# Expected in both: the recommendation stays on the data network
# (NCCL_SOCKET_IFNAME=eth0, btl_tcp_if_include = the data CIDR), the
# fallback to mgmt is only a note, docker0 stays excluded quietly, and only
# the odd nodes fail, each with the fix in evidence.next_step; no pair
# result fails and no verdict names another node.
# ctest label "cluster"; $1 is the build dir. Exit 77 = skip.
set -u
BUILD=${1:?build dir}
here=$(cd "$(dirname "$0")" && pwd)
sc=$here/simcluster.sh
CC=$BUILD/clustercheck

[ -x "$CC" ] || { echo "FAIL: no $CC"; exit 1; }
# shellcheck source=tests/cluster/testlib.sh
. "$here/testlib.sh"
cluster_test_start nm nics-misconfig

"$sc" up 6 --nics 2 --mtu-data 9000 --ssh-nic 1 --base auto >"$dir/up.log" 2>&1 ||
  { cat "$dir/up.log"; echo "FAIL: simcluster up"; exit 1; }
"$sc" fault all decoy-bridge || { echo "FAIL: decoy-bridge"; exit 1; }
data_addr() { "$sc" addr "$1" data; }
on() { "$sc" exec "$@" || { echo "FAIL: on $*"; exit 1; }; }
d1=$(data_addr node1)
data_net=${d1%.*}.0/24
echo "# data $data_net"

cat >>"$dir/inventory.toml" <<'TOML'

[stages.nics]
timeout_ms = 1000
TOML

# Runs the nics stage as run $1 and checks what every case shares: the
# data network is recommended, and only the nodes in $2 (SQL list) fail.
run_case() {
  local run=$1 odd=$2
  "$CC" run "$dir/inventory.toml" --stages facts,nics --db "$DB" >"$dir/run$run.out" 2>"$dir/run$run.err"
  local rc=$?
  echo "# run $run exited $rc"
  sed 's/^/  > /' "$dir/run$run.out"
  [ $rc -eq 1 ] && ok "run $run exits 1 (a node is misconfigured)" ||
    { not_ok "run $run exits 1 (a node is misconfigured)"; tail -20 "$dir/run$run.err"; }
  local N="stage='nics' and run_id=$run"
  expect "run $run: the recommendation stays on the data network" "pass|eth0" \
    "select outcome, value from node_results where $N and check_name='recommendation'"
  expect "run $run: btl_tcp_if_include is the data network, oob is left to the mpi stage" \
    "$data_net|" \
    "select json_extract(meta, '\$.nics.btl_tcp_if_include'), json_extract(meta, '\$.nics.oob_tcp_if_include') from runs where id=$run"
  expect_like "run $run: the fallback is only a note" "fallback: .* works on every node" \
    "select json_extract(meta, '\$.nics.notes') from runs where id=$run"
  expect "run $run: docker0 stays excluded as a decoy" "skip|same-address" \
    "select outcome, value from node_results where $N and check_name='excluded:172.17.0.0/16'"
  expect "run $run: only the odd nodes fail" "$(tr -d "'" <<<"$odd" | tr ',' '\n')" \
    "select node from node_results where $N and outcome not in ('pass','skip') order by node"
  expect "run $run: no pair result fails or warns" 0 \
    "select count(*) from pair_results where $N and outcome not in ('pass','skip')"
  "$CC" report "$run" --db "$DB" --json >"$dir/report$run.json" 2>"$dir/report$run.err" ||
    not_ok "run $run: report --json exited $?"
  local named want
  named=$(jq -r '[.verdicts[] | select(.severity != "pass" and .severity != "skip") | .nodes[]] | unique | join(",")' \
    "$dir/report$run.json" 2>&1)
  want=$(tr -d "'" <<<"$odd")
  [ "$named" = "$want" ] && ok "run $run: the verdicts name $want only" ||
    { not_ok "run $run: the verdicts name $want only"; echo "  | got '$named'"; jq -c '.verdicts[] | [.kind, .nodes, .summary, .next_step]' "$dir/report$run.json"; }
}

# (a) node3: /16 instead of /24 on its data NIC.
d3=$(data_addr node3)
on node3 ip addr del "$d3/24" dev eth0
on node3 ip addr add "$d3/16" dev eth0
run_case 1 "'node3'"
expect_like "(a) node3 is named with its prefix length and the fix" \
  "fail|node3: eth0 $d3/16 has prefix length /16, the rest of $data_net has /24|set eth0 on node3 to $d3/24" \
  "select outcome, message, json_extract(evidence, '\$.next_step') from node_results where stage='nics' and run_id=1 and check_name='selected' and node='node3'"
expect "(a) node3 is still probed on the data network, and reached" 10 \
  "select count(*) from pair_results where stage='nics' and run_id=1 and check_name='tcp:$data_net' and (src='node3' or dst='node3') and outcome='pass'"
got=$(jq -r '[.verdicts[] | select(.stage == "nics") | .next_step] | join(";")' "$dir/report1.json")
[ "$got" = "set eth0 on node3 to $d3/24" ] && ok "(a) the verdict's next step is the fix" ||
  { not_ok "(a) the verdict's next step is the fix"; echo "  | got '$got'"; }
on node3 ip addr del "$d3/16" dev eth0
on node3 ip addr add "$d3/24" dev eth0

# (b) node6 takes node5's data address.
d5=$(data_addr node5)
d6=$(data_addr node6)
on node6 ip addr del "$d6/24" dev eth0
on node6 ip addr add "$d5/24" dev eth0
run_case 2 "'node5','node6'"
for n in node5 node6; do
  expect_like "(b) $n is named as a duplicate address with the fix" \
    "fail|$n: eth0 $d5 is a duplicate address: node\[5-6\] all have it.*|give node\[5-6\] distinct addresses on $data_net" \
    "select outcome, message, json_extract(evidence, '\$.next_step') from node_results where stage='nics' and run_id=2 and check_name='selected' and node='$n'"
done
expect "(b) the data network is no decoy" "" \
  "select message from node_results where stage='nics' and run_id=2 and check_name='excluded:$data_net'"

cluster_test_finish || { tail -20 "$dir/run2.err"; exit 1; }
