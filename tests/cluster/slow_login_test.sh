#!/usr/bin/env bash
# shellcheck disable=SC2015  # `check && ok || not_ok` is intended
# A slow login shell (module systems, conda init) delays only the facts
# that need it, and unknown is not "nothing" (issue 17). 4 nodes whose
# ~/.bash_profile exports NCCL_SOCKET_IFNAME=eth0 (only a login shell sees
# it); node2's takes 7 s, node3's 40 s. The agent reads the login shell's
# NCCL_* settings under their own 5 s deadline while its other sections go
# on; a node whose source ran past it is asked once more with 3x the
# deadline (15 s): node2 then answers, node3 does not. node3 gets one
# `error` result facts/source.nccl_env naming the source, the 15 s and
# node3; parity votes NCCL_SOCKET_IFNAME among the nodes that know it and
# leaves node3 out (`skip`), accusing nobody.
# ctest label "cluster"; $1 is the build dir. Exit 77 = skip.
set -u
BUILD=$(cd "${1:?build dir}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
sc=$here/simcluster.sh
CC=$BUILD/clustercheck

# shellcheck source=tests/cluster/testlib.sh
. "$here/testlib.sh"
[ -x "$CC" ] || { echo "FAIL: no $CC"; exit 1; }
cluster_test_start sl slowlogin

"$sc" up 4 --base auto >"$dir/up.log" 2>&1 || { cat "$dir/up.log"; echo "FAIL: simcluster up"; exit 1; }
for i in 1 2 3 4; do
  case $i in 2) delay=7 ;; 3) delay=40 ;; *) delay=0 ;; esac
  printf 'sleep %s\nexport NCCL_SOCKET_IFNAME=eth0\n' "$delay" >"$dir/node$i/home/.bash_profile"
done
# The nodes' ~ is their own only where DIR is not under root's home.
[ "$("$sc" exec node3 sh -c 'cat ~/.bash_profile' 2>/dev/null | head -1)" = "sleep 40" ] ||
  { echo "skip: the nodes share root's home here"; exit 77; }

start=$SECONDS
"$CC" run "$dir/inventory.toml" --stages facts,parity --db "$DB" >"$dir/run.out" 2>"$dir/run.err"
rc=$?
took=$((SECONDS - start))
echo "# clustercheck run exited $rc after $took s"
sed 's/^/  > /' "$dir/run.out"

[ $rc -eq 0 ] && ok "run exits 0 (an unknown is an error, not a failure)" || not_ok "run exits 0, not $rc"
[ $took -lt 40 ] && ok "the run did not wait for node3's 40 s login shell ($took s)" ||
  not_ok "the run waited $took s"
F="run_id=1 and stage='facts'"
expect "every node's facts were collected" "4" \
  "select count(*) from node_results where $F and check_name='collected' and outcome='pass'"
expect "node2 and node3 were asked twice, node1 and node4 once" "node2|node3" \
  "select group_concat(node, '|') from (select node from node_results where $F and check_name='collected' and message like '%asked twice%' order by node)"
expect "node2's second answer has its login shell's settings" "eth0" \
  "select json_extract(facts, '\$.nccl_env.effective.NCCL_SOCKET_IFNAME') from nodes where run_id=1 and node='node2'"
expect "node2 has no facts error" "0" \
  "select count(*) from node_results where $F and node='node2' and outcome='error'"
expect "node3 has one error: facts/source.nccl_env" "source.nccl_env|error|unknown" \
  "select check_name, outcome, value from node_results where $F and node='node3' and outcome != 'pass'"
expect_like "it names the source, the 15 s deadline and node3" \
  "the nccl_env facts of node3 are unknown: login shell: bash -lc 'env -0': did not finish within 15 s" \
  "select message from node_results where $F and node='node3' and check_name='source.nccl_env'"
expect "node3's other sections are there (system, mpi)" "1|1" \
  "select json_extract(facts, '\$.system.kernel') is not null, json_extract(facts, '\$.mpi.status') is not null from nodes where run_id=1 and node='node3'"
P="run_id=1 and stage='parity' and check_name='nccl_env.NCCL_SOCKET_IFNAME'"
expect "parity: NCCL_SOCKET_IFNAME passes on the 3 that know it, node3 skips" "node1:pass|node2:pass|node3:skip|node4:pass" \
  "select group_concat(node || ':' || outcome, '|') from (select node, outcome from node_results where $P order by node)"
expect "parity accuses nobody" "0" \
  "select count(*) from node_results where run_id=1 and stage='parity' and outcome in ('fail','warn','error')"

cluster_test_finish || { tail -20 "$dir/run.err"; exit 1; }
