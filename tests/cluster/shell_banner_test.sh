#!/usr/bin/env bash
# A node whose shell talks (issue 17): on a 4-node simulated cluster, node3's
# ~/.bashrc prints a banner even for non-interactive shells, and its sshd
# runs the external sftp-server through that shell (Debian's default), so
# the banner also garbles SFTP. node3 must be checked like the others (same
# checks, same outcomes as node1), get exactly one `warn` connect/shell that
# quotes the banner and the fix, and receive the agent although SFTP is
# broken; a second run pushes it nothing.
# ctest label "cluster"; $1 is the build dir. Exit 77 = skip.
set -u
BUILD=${1:?build dir}
here=$(cd "$(dirname "$0")" && pwd)
sc=$here/simcluster.sh
CC=$BUILD/clustercheck

# shellcheck source=tests/cluster/testlib.sh
. "$here/testlib.sh"
[ -x "$CC" ] || { echo "FAIL: no $CC"; exit 1; }
[ -x /usr/lib/openssh/sftp-server ] || { echo "skip: no /usr/lib/openssh/sftp-server"; exit 77; }
cluster_test_start sb shell-banner

# --agent-dir home: every node's ~ is its own, so node3 gets its own push.
"$sc" up 4 --base auto --agent-dir home >"$dir/up.log" 2>&1 ||
  { cat "$dir/up.log"; echo "FAIL: simcluster up"; exit 1; }
banner="Welcome to the Example HPC Center. You have mail."
"$sc" fault node3 talking-shell "$banner" >/dev/null || { echo "FAIL: fault"; exit 1; }
ssh_node3() {
  ssh -F none -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null \
    -i "$dir/id_ed25519" "root@$("$sc" addr node3)" "$@" 2>/dev/null
}
ssh_out=$(ssh_node3 uname -m | head -1)
if [ "$ssh_out" = "$banner" ]; then ok "the fault is real: ssh node3 uname -m starts with the banner"
else not_ok "the fault is real"; echo "  | got '$ssh_out'"; fi

stages=facts,parity
"$CC" run "$dir/inventory.toml" --stages "$stages" --db "$DB" >"$dir/run1.out" 2>&1
echo "run 1 exited $?"
node_rows() {   # run node: check outcome per line, connect/shell left out
  q "select stage||'/'||check_name||' '||outcome from node_results
     where run_id=$1 and node='$2' and not (stage='connect' and check_name='shell')
     order by stage, check_name"
}
expect "node3 is ready" "pass ready" \
  "select outcome||' '||value from node_results where run_id=1 and node='node3' and stage='connect' and check_name='agent'"
if [ "$(node_rows 1 node3)" = "$(node_rows 1 node1)" ] && [ -n "$(node_rows 1 node1)" ]; then
  ok "node3 is checked like node1 (same checks, same outcomes)"
else
  not_ok "node3 is checked like node1"; diff <(node_rows 1 node1) <(node_rows 1 node3) | sed 's/^/  | /'
fi
if q "select facts from nodes where run_id=1 and node='node3'" | grep -q '"hostname":"node3"'; then
  ok "node3's facts are its own"
else not_ok "node3's facts are its own"; fi
expect "exactly one shell warn, on node3" "node3 warn" \
  "select node||' '||outcome from node_results where run_id=1 and check_name='shell'"
expect_like "it quotes the banner" "\"$banner\"" \
  "select message from node_results where run_id=1 and check_name='shell'"
expect_like "it names the fix" 'guard output in ~/.bashrc with \[\[ \$- == \*i\* \]\]' \
  "select message from node_results where run_id=1 and check_name='shell'"
if grep -q -- "-> keep non-interactive shells quiet: guard output in ~/.bashrc" "$dir/run1.out"; then
  ok "the verdict's next step is the fix"
else not_ok "the verdict's next step is the fix"; fi
expect "no other node result names a shell, banner or architecture" "0" \
  "select count(*) from node_results where run_id=1 and check_name!='shell'
     and (message like '%Welcome%' or message like '%agent was built for%')"
pushed=$(q "select json_extract(evidence,'\$.bytes_pushed') from node_results
            where run_id=1 and node='node3' and stage='connect' and check_name='agent'")
if [ "${pushed:-0}" -gt 0 ] && ls "$dir"/node3/home/.cache/clustercheck/agent-* >/dev/null 2>&1; then
  ok "node3 received the agent ($pushed bytes) although SFTP is garbled"
else not_ok "node3 received the agent"; echo "  | pushed '$pushed'"; fi

"$CC" run "$dir/inventory.toml" --stages facts --db "$DB" >"$dir/run2.out" 2>&1
expect "a second run pushes node3 nothing and it is ready" "pass 0" \
  "select outcome||' '||json_extract(evidence,'\$.bytes_pushed') from node_results
     where run_id=2 and node='node3' and stage='connect' and check_name='agent'"
expect "and warns once again" "1" \
  "select count(*) from node_results where run_id=2 and check_name='shell'"
"$sc" fault node3 quiet-shell >/dev/null || { echo "FAIL: fault quiet-shell"; exit 1; }
ssh_out=$(ssh_node3 uname -m)
if [ "$ssh_out" = "$(uname -m)" ]; then ok "quiet-shell undoes the fault"
else not_ok "quiet-shell undoes the fault"; echo "  | got '$ssh_out'"; fi
cluster_test_finish || { cat "$dir/run1.out"; exit 1; }
