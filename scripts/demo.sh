#!/usr/bin/env bash
# make demo: clustercheck on a simulated 6-node cluster, two faults found.
#
# Brings up six nodes on this machine (tests/cluster/simcluster.sh: network
# namespaces with their own sshd, a data network with MTU 9000 and a mgmt
# network, and a docker0 bridge with the same 172.17.0.1 on every node, the
# decoy that misleads NCCL_SOCKET_IFNAME), injects two faults operators
# fight (README.md "make demo"):
#   node3  a firewall that drops the rendezvous port tcp/29500 (MASTER_PORT)
#   node5  its data NIC left at MTU 1500 where the network runs 9000
# runs `clustercheck run`, prints the diagnosis, writes the HTML report and
# prints its path, and takes the cluster down again, also after Ctrl-C.
#
#   scripts/demo.sh [BUILD_DIR]        (root; make demo builds first)
# Env: DEMO_REPORT (default /tmp/clustercheck-demo.html), DEMO_PREFIX
# (simcluster name prefix, default demo<pid>; the test sets it).
set -u
BUILD=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/.." && pwd)
sc=$src/tests/cluster/simcluster.sh
CC=$BUILD/clustercheck
report=${DEMO_REPORT:-/tmp/clustercheck-demo.html}

say() { printf '\n== %s\n' "$*"; }
die() { echo "demo: $*" >&2; exit 2; }

[ -x "$CC" ] || die "no $CC; build first (make demo does)"
[ "$(id -u)" = 0 ] || die "needs root (network namespaces, bridges); fix: sudo make demo"
command -v iptables >/dev/null || die "iptables is missing; fix: scripts/install-deps.sh"

export SIMCLUSTER_PREFIX=${DEMO_PREFIX:-demo$(($$ % 10000))}
SIMCLUSTER_DIR=$(mktemp -d /tmp/clustercheck-demo.XXXXXX) || die "mktemp failed"
export SIMCLUSTER_DIR
dir=$SIMCLUSTER_DIR
cleanup() {
  trap '' INT TERM
  echo "demo: taking the cluster down" >&2
  "$sc" down >/dev/null 2>&1 || echo "demo: simcluster down failed; run: SIMCLUSTER_DIR=$dir $sc down" >&2
  rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
start=$SECONDS

say "1. a simulated cluster: 6 nodes, data (eth0, MTU 9000) + mgmt (eth1), ssh over mgmt"
"$sc" up 6 --nics 2 --mtu-data 9000 --ssh-nic 1 --base auto >"$dir/up.log" 2>&1 ||
  { cat "$dir/up.log"; die "simcluster up failed"; }
data=$("$sc" addr node1 data)
echo "   nodes node1..node6, data network ${data%.*}.0/24, inventory $dir/inventory.toml"

say "2. the faults"
fault() { "$sc" fault "$@" >/dev/null || die "fault $* failed"; }
fault all decoy-bridge
echo "   every node   docker0 172.17.0.1/16 (a decoy: the same address everywhere)"
fault node3 iptables -A INPUT -p tcp --dport 29500 -j DROP
echo "   node3        iptables -A INPUT -p tcp --dport 29500 -j DROP   (firewall on MASTER_PORT)"
fault node5 mtu data 1500
echo "   node5        ip link set eth0 mtu 1500                        (the rest has 9000)"

cat >>"$dir/inventory.toml" <<'TOML'

[stages]
# nccl needs GPUs (none here) and mpi is left out to keep the demo short.
run = ["facts", "parity", "nics", "ports"]
[stages.nics]
timeout_ms = 1000
[stages.ports]
ports = [29500]
ephemeral_samples = 2
timeout_ms = 1000
TOML

say "3. clustercheck run $dir/inventory.toml"
"$CC" run "$dir/inventory.toml" --db "$dir/cc.db"
rc=$?
echo "   (exit $rc: 1 = something failed)"

say "4. the HTML report"
"$CC" report --db "$dir/cc.db" --html "$report" >/dev/null || die "report failed"
echo "   written to $report"
echo "   (demo took $((SECONDS - start)) s; the cluster is removed now)"
