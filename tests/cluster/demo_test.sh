#!/usr/bin/env bash
# `make demo` (scripts/demo.sh): the diagnosis names both injected faults
# (node3's firewall on tcp/29500, node5's MTU 1500) and nothing else, the
# HTML report is written where it says, it takes under two minutes, and
# nothing is left behind: no namespace, bridge, veth or directory, also when
# it is interrupted with Ctrl-C half-way.
# ctest label "cluster"; $1 is the build dir. Exit 77 = skip.
set -u
BUILD=${1:?build dir}
here=$(cd "$(dirname "$0")" && pwd)
demo=$here/../../scripts/demo.sh
[ "$(id -u)" = 0 ] || { echo "skip: needs root"; exit 77; }
command -v iptables >/dev/null || { echo "skip: no iptables"; exit 77; }
ip netns add "dmprobe$$" 2>/dev/null || { echo "skip: ip netns is not possible here"; exit 77; }
ip netns del "dmprobe$$"
TMP=$(mktemp -d /tmp/demo-test.XXXXXX)
export DEMO_PREFIX=dm$(($$ % 100000)) DEMO_REPORT=$TMP/report.html
trap 'SIMCLUSTER_PREFIX=$DEMO_PREFIX "$here/simcluster.sh" down >/dev/null 2>&1; rm -rf "$TMP"' EXIT
failures=0
ok() { echo "ok - $*"; }
not_ok() { echo "not ok - $*"; failures=$((failures + 1)); }

# Nothing of the demo's prefix: namespaces, links (bridges, veths), dirs.
left_behind() {
  { ip netns list | grep -- "^$DEMO_PREFIX-"; ip -o link show | grep -- " $DEMO_PREFIX-"
    ls -d /tmp/clustercheck-demo.* 2>/dev/null | while read -r d; do
      grep -qs "SC_PREFIX=$DEMO_PREFIX$" "$d/state" && echo "$d"; done; } || true
}

start=$SECONDS
"$demo" "$BUILD" >"$TMP/demo.out" 2>"$TMP/demo.err"
rc=$?
secs=$((SECONDS - start))
sed 's/^/  > /' "$TMP/demo.out"
[ $rc = 0 ] && ok "demo exits 0" || { not_ok "demo exits 0 (got $rc)"; cat "$TMP/demo.err"; }
[ $secs -lt 120 ] && ok "demo took ${secs} s (< 120)" || not_ok "demo took ${secs} s (>= 120)"

out=$TMP/demo.out
# The verdicts block: exactly the two faults, nothing else.
verdicts=$(sed -n '/^verdicts, worst first$/,/^$/p' "$out" | grep -E '^  [A-Z]+ ' || true)
[ "$(grep -c . <<<"$verdicts")" = 2 ] && ok "exactly two verdicts" ||
  { not_ok "exactly two verdicts"; echo "$verdicts"; }
grep -Eq '^  FAIL +port-blocked +node3 drops tcp/29500 from every peer: INPUT firewall on node3' <<<"$verdicts" &&
  ok "node3's firewall on tcp/29500 is named" || not_ok "node3's firewall on tcp/29500 is named"
grep -Eq '^  FAIL +mtu +node5: eth0 MTU 1500, the rest of .* has 9000' <<<"$verdicts" &&
  ok "node5's MTU is named as a cause" || not_ok "node5 is named (MTU)"
grep -q '^  fail: node5: eth0 MTU 1500, the rest of .* has 9000' "$out" &&
  ok "node5's MTU is spelled out" || not_ok "node5's MTU is spelled out"
grep -q '^  export NCCL_SOCKET_IFNAME=eth0$' "$out" && ok "the data network is still recommended" ||
  not_ok "the data network is still recommended"
grep -q 'excluded 172.17.0.0/16: decoy' "$out" && ok "docker0 is excluded as a decoy" ||
  not_ok "docker0 is excluded as a decoy"
# Nothing else: the headline names the two causes, and no failure outside them.
grep -q '^FAIL: mtu on node5 (nics), port-blocked on node3 (ports); [0-9]* failed results explained by them$' "$out" &&
  ok "the verdict line names the two causes alone" ||
  not_ok "the verdict line names the two causes alone: $(grep -m1 -E '^(PASS|FAIL)' "$out")"
path=$(sed -n 's/^ *written to //p' "$out")
[ "$path" = "$DEMO_REPORT" ] && [ -s "$path" ] && grep -q '<html' "$path" &&
  ok "the HTML report is at the printed path" || not_ok "the HTML report is at the printed path ($path)"
left=$(left_behind)
[ -z "$left" ] && ok "nothing left behind" || { not_ok "nothing left behind"; echo "$left"; }

# Ctrl-C once the cluster is up: the trap takes it down. Job control gives
# the demo its own process group, as a terminal would, and the SIGINT goes
# to the whole group, as a Ctrl-C does (a plain background job would ignore
# it).
set -m
"$demo" "$BUILD" >"$TMP/int.out" 2>&1 &
pid=$!
set +m
for _ in $(seq 300); do grep -q '^== 2\.' "$TMP/int.out" && break; sleep 0.1; done
kill -INT -- -"$pid"
wait $pid
rc=$?
[ $rc = 130 ] && ok "Ctrl-C: exit 130" || { not_ok "Ctrl-C: exit 130 (got $rc)"; tail -5 "$TMP/int.out"; }
left=$(left_behind)
[ -z "$left" ] && ok "Ctrl-C: nothing left behind" || { not_ok "Ctrl-C: nothing left behind"; echo "$left"; }

[ "$failures" = 0 ] && echo PASS || { echo "FAIL: $failures checks"; exit 1; }
