#!/usr/bin/env bash
# The simulated cluster works as the end-to-end tests expect: nodes answer
# ssh with their own hostname under strict host key checking, reach each
# other over data and mgmt with the right MTUs, every fault does what it
# says, `up` is idempotent and heals, and `down` leaves nothing behind.
# ctest label "cluster"; $1 is the build dir (unused). Exit 77 = skip.
set -u

here=$(cd "$(dirname "$0")" && pwd)
sc=$here/simcluster.sh

if [ "$(id -u)" != 0 ]; then echo "skip: needs root"; exit 77; fi
prefix=st$(($$ % 100000))
if ! ip netns add "$prefix-probe" 2>/dev/null; then
  echo "skip: ip netns is not possible here"; exit 77
fi
ip netns del "$prefix-probe"

dir=$(mktemp -d /tmp/simcluster-test.XXXXXX)
export SIMCLUSTER_DIR=$dir
cleanup() {
  "$sc" --prefix "$prefix" down >/dev/null 2>&1
  rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

failures=0
ok() { echo "ok - $*"; }
not_ok() { echo "not ok - $*"; failures=$((failures + 1)); }
# check "description" command... : passes when the command succeeds.
# Output is shown only when the check fails.
indent() { sed 's/^/  | /'; }
check() {
  local what=$1 out
  shift
  if out=$("$@" 2>&1); then ok "$what"; else not_ok "$what"; indent <<<"$out"; fi
}
# check_not "description" command... : passes when the command fails.
check_not() {
  local what=$1 out
  shift
  if out=$("$@" 2>&1); then not_ok "$what"; indent <<<"$out"; else ok "$what"; fi
}

ssh_node() {   # ssh_node ADDR CMD...: strict, batch, no ~/.ssh influence
  timeout 20 ssh -F "$dir/ssh_config" -i "$dir/id_ed25519" \
    -o UserKnownHostsFile="$dir/known_hosts" -o StrictHostKeyChecking=yes \
    -o BatchMode=yes -o ConnectTimeout=3 "root@$1" "${@:2}"
}
in_node() { "$sc" exec "$@"; }   # in_node nodeI CMD...
tcp_open() {   # tcp_open ADDR PORT: from the root namespace
  # shellcheck disable=SC2016  # $0 $1 belong to the inner bash
  timeout 3 bash -c 'exec 3<>"/dev/tcp/$0/$1"' "$1" "$2" 2>/dev/null
}
prints() {   # prints EXPECTED CMD...: CMD succeeds and prints EXPECTED
  local want=$1 got
  shift
  got=$("$@" 2>&1) || { echo "  command failed: $* -> $got"; return 1; }
  [ "$got" = "$want" ] || { echo "  expected '$want', got '$got'"; return 1; }
}
fails_saying() {   # fails_saying PATTERN CMD...: CMD fails, output matches
  local pat=$1 out
  shift
  if out=$("$@" 2>&1); then echo "  unexpectedly succeeded: $*"; return 1; fi
  grep -qE -- "$pat" <<<"$out" || { echo "  output lacks /$pat/: $out"; return 1; }
}
count_ours() {   # namespaces + links of this prefix in the root namespace
  echo $(( $(ip netns list | grep -c "^$prefix-") + $(ip -o link show | grep -c ": $prefix-") ))
}

start=$SECONDS
if ! "$sc" --prefix "$prefix" up 4 --nics 2 --base auto; then
  echo "not ok - up 4 --nics 2 failed"; exit 1
fi
ok "up 4 --nics 2 (${SECONDS}s)"
# Addresses, asked once (each call of the script costs forks).
declare -A addr
for i in 1 2 3 4; do
  if ! addr[d$i]=$("$sc" addr "node$i" data) || ! addr[m$i]=$("$sc" addr "node$i" mgmt); then
    echo "not ok - addr node$i"; exit 1
  fi
done
data() { echo "${addr[d$1]}"; }
mgmt() { echo "${addr[m$1]}"; }
check "node2's data address is in the data network of --base" \
  [ "${addr[d2]%.*.*}.0.0" = "${addr[d1]%.*.*}.0.0" ]

check "the inventory lists 4 nodes" \
  [ "$(grep -c '^\[\[nodes\]\]' "$dir/inventory.toml")" = 4 ]
check "the inventory's agent_dir is inside DIR" \
  grep -qx "agent_dir = \"$dir/agent\"" "$dir/inventory.toml"
check "known_hosts has data and mgmt entries for every node" \
  [ "$(grep -c ' ssh-ed25519 AAAA' "$dir/known_hosts")" = 8 ]
check "ssh to node2 over data prints hostname node2" prints node2 ssh_node "$(data 2)" hostname
check "ssh to node4 over mgmt prints hostname node4" prints node4 ssh_node "$(mgmt 4)" hostname
check "node3's sessions see only its own NICs" \
  prints "eth0 eth1 lo" ssh_node "$(data 3)" 'ls /sys/class/net | sort | tr "\n" " " | sed "s/ \$//"'
check "exec node3 runs with hostname node3" prints node3 in_node node3 hostname
check "node1 reaches node3:22 over data" in_node node1 timeout 3 bash -c "exec 3<>/dev/tcp/$(data 3)/22"
check "node1 pings node3 over mgmt" in_node node1 ping -c1 -w3 -i0.2 -q "$(mgmt 3)"
check "data carries 9000-byte frames unfragmented" \
  in_node node1 ping -c1 -w3 -i0.2 -q -M "do" -s 8972 "$(data 3)"
check_not "data refuses 9001-byte frames (MTU is exactly 9000)" \
  in_node node1 ping -c1 -W1 -q -M "do" -s 8973 "$(data 3)"
check_not "mgmt refuses 1501-byte frames (MTU 1500)" \
  in_node node1 ping -c1 -W1 -q -M "do" -s 1473 "$(mgmt 3)"
check "status says every sshd answers" "$sc" status

# Idempotent up: nothing is added, no sshd restarts.
before_links=$(count_ours)
before_pids=$(cat "$dir"/node*/sshd.pid | tr '\n' ' ')
check "a second up with the same shape succeeds" "$sc" up 4 --nics 2 --base auto
check "a second up adds no namespace or link" [ "$(count_ours)" = "$before_links" ]
check "a second up keeps the running sshds" \
  [ "$(cat "$dir"/node*/sshd.pid | tr '\n' ' ')" = "$before_pids" ]

# Faults.
check "fault sshd-stop succeeds" "$sc" fault node2 sshd-stop
check "after sshd-stop, ssh to node2 is refused" \
  fails_saying "refused" ssh_node "$(data 2)" hostname
check_not "after sshd-stop, status reports a node down" "$sc" status
"$sc" fault node2 sshd-start
check "after sshd-start, ssh to node2 works again" prints node2 ssh_node "$(data 2)" hostname

"$sc" fault node3 new-hostkey
check "after new-hostkey, strict ssh to node3 fails on the host key" \
  fails_saying "REMOTE HOST IDENTIFICATION HAS CHANGED|Host key verification failed" \
  ssh_node "$(data 3)" hostname

"$sc" fault node4 revoke-key
check "after revoke-key, node4 refuses the key" \
  fails_saying "Permission denied" ssh_node "$(data 4)" hostname
"$sc" fault node4 restore-key
check "after restore-key, node4 accepts the key" prints node4 ssh_node "$(data 4)" hostname

"$sc" fault node1 iptables -A INPUT -p tcp --dport 22 -j DROP
check_not "an iptables DROP on node1 port 22 filters it" tcp_open "$(data 1)" 22
"$sc" fault node1 iptables -D INPUT -p tcp --dport 22 -j DROP
check "deleting the DROP rule opens node1 port 22 again" tcp_open "$(data 1)" 22

"$sc" fault node4 link-down mgmt
check_not "after link-down mgmt, node1 cannot reach node4 over mgmt" \
  in_node node1 ping -c1 -W1 -q "$(mgmt 4)"
check "after link-down mgmt, node4 still answers over data" tcp_open "$(data 4)" 22
"$sc" fault node4 link-up mgmt
# Node1's ARP entry for node4 failed while the link was down: allow the
# retries that a real host needs too.
check "after link-up, node1 reaches node4 over mgmt" \
  in_node node1 ping -c1 -w5 -i0.2 -q "$(mgmt 4)"

"$sc" fault node4 mtu data 1500
check_not "after mtu data 1500 on node4, 9000-byte frames to it are lost" \
  in_node node1 ping -c1 -W1 -q -M "do" -s 8972 "$(data 4)"
check "after mtu data 1500 on node4, small frames still pass" \
  in_node node1 ping -c1 -w3 -i0.2 -q "$(data 4)"

"$sc" fault all decoy-bridge
check "decoy-bridge all gives every node a docker0 with 172.17.0.1/16" \
  [ "$(for i in 1 2 3 4; do ip -n "$prefix-node$i" -4 -o addr show docker0; done | grep -c '172.17.0.1/16')" = 4 ]

# hang-agent: starting the agent hangs, everything else works.
mkdir -p "$dir/agent"
printf '#!/bin/sh\nhostname\n' >"$dir/agent/agent-0123abcd"
chmod 0755 "$dir/agent/agent-0123abcd"
agent_cmd="env CC_X='1' '$dir/agent/agent-0123abcd' 'serve'"
check "before hang-agent, the agent runs on node2" prints node2 ssh_node "$(data 2)" "$agent_cmd"
"$sc" fault node2 hang-agent
timeout 4 ssh -F "$dir/ssh_config" -i "$dir/id_ed25519" -o UserKnownHostsFile="$dir/known_hosts" \
  -o BatchMode=yes "root@$(data 2)" "$agent_cmd" >/dev/null 2>&1
check "after hang-agent, starting the agent on node2 hangs" [ $? = 124 ]
check "after hang-agent, other commands on node2 still run" prints node2 ssh_node "$(data 2)" hostname
"$sc" fault node2 unhang-agent
check "after unhang-agent, the agent runs on node2 again" prints node2 ssh_node "$(data 2)" "$agent_cmd"

# up on a faulty cluster recreates it (node2's sshd is stopped first).
"$sc" fault node2 sshd-stop
check "up on an unhealthy cluster recreates it" "$sc" up 4 --nics 2 --base auto
check "after the recreating up, strict ssh to node3 works (new known_hosts)" \
  prints node3 ssh_node "$(data 3)" hostname
check "after the recreating up, node4's data MTU is 9000 again" \
  in_node node1 ping -c1 -w3 -i0.2 -q -M "do" -s 8972 "$(data 4)"

# The healthy-cluster options: docker0 on every node from the start, a
# known_hosts with only the inventory's (mgmt) addresses, [defaults] gpus.
check "up 2 --nics 2 --ssh-nic 1 --docker0 --known-hosts inventory --gpus 0 recreates" \
  "$sc" up 2 --nics 2 --ssh-nic 1 --docker0 --known-hosts inventory --gpus 0 --base auto
for i in 1 2; do
  addr[d$i]=$("$sc" addr "node$i" data) addr[m$i]=$("$sc" addr "node$i" mgmt)
done
check "--docker0 gives both nodes a docker0 with 172.17.0.1/16, up" \
  [ "$(for i in 1 2; do ip -n "$prefix-node$i" -4 -o addr show docker0 up; done | grep -c '172.17.0.1/16')" = 2 ]
check "--known-hosts inventory: known_hosts holds exactly the 2 mgmt addresses" \
  prints "$(mgmt 1) $(mgmt 2)" bash -c "cut -d' ' -f1 '$dir/known_hosts' | tr '\n' ' ' | sed 's/ \$//'"
check "--gpus 0: the inventory has [defaults] gpus = 0" \
  grep -Pzq '\n\[defaults\]\ngpus = 0\n' "$dir/inventory.toml"
check "strict ssh to node2's inventory (mgmt) address works" prints node2 ssh_node "$(mgmt 2)" hostname
check "strict ssh to node2's data address fails: its key is not known there" \
  fails_saying "Host key verification failed|No ED25519 host key is known" ssh_node "$(data 2)" hostname
before_pids=$(cat "$dir"/node*/sshd.pid | tr '\n' ' ')
check "a second up with --docker0 keeps the cluster" \
  "$sc" up 2 --nics 2 --ssh-nic 1 --docker0 --known-hosts inventory --gpus 0 --base auto
check "a second up with --docker0 keeps the running sshds" \
  [ "$(cat "$dir"/node*/sshd.pid | tr '\n' ' ')" = "$before_pids" ]
check "an up without --docker0 recreates the cluster without docker0" \
  "$sc" up 2 --nics 2 --ssh-nic 1 --base auto
check_not "after it, node1 has no docker0" ip -n "$prefix-node1" link show docker0
check "after it, known_hosts has every address again (4)" \
  [ "$(grep -c ' ssh-ed25519 AAAA' "$dir/known_hosts")" = 4 ]
check_not "after it, the inventory has no [defaults]" grep -q '^\[defaults\]' "$dir/inventory.toml"

# down leaves nothing behind.
check "down succeeds" "$sc" down
check "after down, no namespace or link of the cluster is left" [ "$(count_ours)" = 0 ]
no_process_mentions() { ! pgrep -f -- "$1" >/dev/null; }
check "after down, no process mentions DIR" no_process_mentions "$dir"
check "after down, DIR is gone" [ ! -e "$dir" ]

# down after a partial up: leftovers without any state file.
mkdir -p "$dir"
ip netns add "$prefix-node7"
ip link add "$prefix-br3" type bridge
ip link add "$prefix-7-3" type veth peer name eth3 netns "$prefix-node7"
check "down after a partial up succeeds" "$sc" --prefix "$prefix" down
check "down after a partial up removes its namespace and links" [ "$(count_ours)" = 0 ]

echo "# $failures failure(s) in $((SECONDS - start)) s"
[ "$failures" = 0 ]
