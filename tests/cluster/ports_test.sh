#!/usr/bin/env bash
# The ports stage on an 8-node simulated cluster with the faults of issue 5:
#   node3  INPUT DROP tcp/29500              -> filtered from every peer,
#                                               a receiver verdict naming node3
#   node5  INPUT REJECT tcp/29500 (tcp-reset) and tcp/29501 (REJECT's default
#          icmp-port-unreachable)            -> refused
#   node1  OUTPUT DROP of new connections to node2 only
#                                            -> a one-way verdict for that pair
#   node6  INPUT DROP of new connections to its ephemeral range
#                                            -> an ephemeral verdict explaining NCCL
#   node7  another process holds tcp/29500   -> in-use
# The inventory lists tcp/22 too: sshd is its expected holder, so no node
# reports EADDRINUSE for it and sshd's banner counts as open (issue 17).
# Every failure is retested quietly before a verdict names it: node3's DROP
# still ends `fail`, with both attempts in the evidence (issue 17).
# Afterwards `ss` in every node shows nothing of ours listening. Then a
# second run adds node8 dropping its whole ephemeral range in INPUT (no
# --syn), which also drops the replies to node8's own connections: one
# verdict names that one rule and both symptoms (issue 17).
# ctest label "cluster"; $1 is the build dir. Exit 77 = skip.
#
# The rules match SYNs only (--syn), as a stateful firewall would: a plain
# "INPUT --dport 32768:60999 -j DROP" also drops the replies to the node's
# own outgoing connections (they arrive on its ephemeral ports), and an
# OUTPUT DROP to node2 also drops node1's answers to node2.
set -u
BUILD=${1:?build dir}
here=$(cd "$(dirname "$0")" && pwd)
sc=$here/simcluster.sh
CC=$BUILD/clustercheck

# shellcheck source=tests/cluster/testlib.sh
. "$here/testlib.sh"
command -v iptables >/dev/null || { echo "skip: no iptables"; exit 77; }
[ -x "$CC" ] || { echo "FAIL: no $CC"; exit 1; }
squatter=""
cluster_test_cleanup() { [ -z "$squatter" ] || kill "$squatter" 2>/dev/null; }
cluster_test_start pt ports

"$sc" up 8 --base auto >"$dir/up.log" 2>&1 || { cat "$dir/up.log"; echo "FAIL: simcluster up"; exit 1; }
addr() { "$sc" addr "$1"; }

fault() { "$sc" fault "$@" || { echo "FAIL: fault $*"; exit 1; }; }
fault node3 iptables -A INPUT -p tcp --dport 29500 -j DROP
fault node5 iptables -A INPUT -p tcp --dport 29500 -j REJECT --reject-with tcp-reset
fault node5 iptables -A INPUT -p tcp --dport 29501 -j REJECT
fault node1 iptables -A OUTPUT -p tcp --syn -d "$(addr node2)" -j DROP
fault node6 iptables -A INPUT -p tcp --syn --dport 32768:60999 -j DROP
# A foreign server on node7's tcp/29500 (perl-base is on every Debian).
"$sc" exec node7 perl -MIO::Socket::INET -e '
  my $s = IO::Socket::INET->new(LocalAddr => "0.0.0.0", LocalPort => 29500,
                                Listen => 64, ReuseAddr => 1) or die "listen: $!";
  while (my $c = $s->accept) { print $c "HTTP/1.0 200 squatter\r\n"; close $c }' &
squatter=$!
for _ in $(seq 50); do
  "$sc" exec node7 ss -Hltn 'sport = :29500' | grep -q LISTEN && break
  sleep 0.1
done

cat >>"$dir/inventory.toml" <<'TOML'

[stages]
run = ["ports"]
[stages.ports]
ports = [22, 29500, 29501]
ephemeral_samples = 8
timeout_ms = 1500
TOML

# Push the agent once beforehand: eight simultaneous uploads of it into the
# shared agent_dir can outlast the push deadline on a loaded machine, and
# that is not what this test is about.
"$CC" run "$dir/inventory.toml" --stages facts --db "$dir/warmup.db" >"$dir/warmup.out" 2>&1

start=$(date +%s.%N)
"$CC" run "$dir/inventory.toml" --stages ports --db "$DB" >"$dir/run.out" 2>"$dir/run.err"
rc=$?
secs=$(echo "$(date +%s.%N) - $start" | bc 2>/dev/null || echo "?")
echo "# clustercheck run exited $rc after ${secs}s"
if [ $rc -ne 1 ]; then not_ok "run exits 1 (something failed)"; cat "$dir/run.out" "$dir/run.err"; fi
sed 's/^/  > /' "$dir/run.out"

P="stage='ports' and run_id=1"
expect "every node listened" 8 \
  "select count(*) from node_results where $P and check_name='listen' and outcome in ('pass','warn')"
# 8 senders x 7 receivers x (ssh + 2 listed + 8 ephemeral) = 616 rows.
expect "one row per (sender, receiver, port)" 616 "select count(*) from pair_results where $P"
expect "ssh is open between healthy nodes" open \
  "select state from pair_results where $P and src='node2' and dst='node4' and check_name='tcp/22'"
expect_like "ssh counts open on sshd's banner" "^SSH-2.0-" \
  "select json_extract(evidence,'\$.reply') from pair_results where $P and src='node2' and dst='node4' and check_name='tcp/22'"
expect "no node reports EADDRINUSE for tcp/22 (sshd is its expected holder)" 0 \
  "select count(*) from node_results where $P and check_name='listen' and (message like '%tcp/22:%' or outcome!='pass' and node!='node7')"
expect "a real DROP ends fail after its confirmation" "fail|7" \
  "select outcome, count(*) from pair_results where $P and dst='node3' and check_name='tcp/29500' group by outcome"
expect "node3's DROP was retested and confirmed, both attempts in the evidence" 3 \
  "select count(*) from pair_results where $P and dst='node3' and check_name='tcp/29500'
     and json_extract(evidence,'\$.confirmation')='confirmed'
     and json_array_length(evidence,'\$.attempts')=2
     and json_extract(evidence,'\$.attempts[0].outcome')='fail'
     and json_extract(evidence,'\$.attempts[1].outcome')='fail'"
expect "no retest of this run was flaky, and the run meta counts them" 0 \
  "select json_extract(meta,'\$.\"retests.ports\".flaky') from runs where id=1"
expect_like "the run meta counts the confirmed retests" "^[1-9]" \
  "select json_extract(meta,'\$.\"retests.ports\".confirmed') from runs where id=1"
expect "node3 drops tcp/29500: filtered from all 7 peers" "filtered|7" \
  "select state, count(*) from pair_results where $P and dst='node3' and check_name='tcp/29500' group by state"
expect "node3's other ports are open from node2" 0 \
  "select count(*) from pair_results where $P and src='node2' and dst='node3' and check_name!='tcp/29500' and state!='open'"
expect_like "the verdict names node3's INPUT" "node3 drops tcp/29500 from every peer: INPUT firewall on node3" \
  "select summary from verdicts where $P and json_extract(evidence,'\$.stage_kind')='receiver' and nodes='[\"node3\"]'"
expect "node5 refuses tcp/29500 (tcp-reset) from all 7 peers" "refused|7" \
  "select state, count(*) from pair_results where $P and dst='node5' and check_name='tcp/29500' group by state"
expect "node5 refuses tcp/29501 (icmp-port-unreachable) from all 7 peers" "refused|7" \
  "select state, count(*) from pair_results where $P and dst='node5' and check_name='tcp/29501' group by state"
expect_like "the verdict says node5 refuses" "node5 refuses tcp/29500,29501 from every peer" \
  "select summary from verdicts where $P and json_extract(evidence,'\$.stage_kind')='receiver' and nodes='[\"node5\"]'"
expect "node1 -> node2 fails on every port" 0 \
  "select count(*) from pair_results where $P and src='node1' and dst='node2' and outcome!='fail'"
expect "node2 -> node1 works on every port" 0 \
  "select count(*) from pair_results where $P and src='node2' and dst='node1' and outcome!='pass'"
expect_like "a one-way verdict for node1 -> node2" \
  "node1 → node2 fails but node2 → node1 works: node1's OUTPUT or node2's INPUT filters that direction" \
  "select summary from verdicts where $P and kind='one-way'"
expect "node6's ephemeral sample is filtered from every peer" "filtered|56" \
  "select state, count(*) from pair_results where $P and dst='node6' and json_extract(evidence,'\$.kind')='ephemeral' group by state"
expect_like "node6 is named with why NCCL needs the range" \
  "NCCL opens its data sockets on ephemeral ports (net.ipv4.ip_local_port_range 32768-60999).*open tcp 32768-60999 on node6" \
  "select summary from verdicts where $P and json_extract(evidence,'\$.stage_kind')='ephemeral' and nodes='[\"node6\"]'"
expect "node7's tcp/29500 is in-use from every peer" "in-use|7" \
  "select state, count(*) from pair_results where $P and dst='node7' and check_name='tcp/29500' group by state"
expect_like "node7's listener result names the bind error" "EADDRINUSE" \
  "select message from node_results where $P and check_name='listen' and node='node7'"
expect "healthy pairs pass, e.g. node2 -> node4 on every port" 0 \
  "select count(*) from pair_results where $P and src='node2' and dst='node4' and outcome!='pass'"
expect "the summary is in the run's meta" 616 "select json_extract(meta,'\$.ports.probes') from runs where id=1"

# Nothing of ours listens in any node (sshd on 22 and node7's squatter stay).
leftover=""
for i in $(seq 8); do
  extra=$("$sc" exec "node$i" ss -Hltnp | grep -v -e ':22 ' -e '"sshd"' -e '"perl"' || true)
  [ -z "$extra" ] || leftover="$leftover node$i: $extra"
done
if [ -z "$leftover" ]; then ok "ss shows nothing of ours listening in any node"; else
  not_ok "listeners left:$leftover"; fi
if pgrep -f "$dir/agent/agent-" >/dev/null; then not_ok "agents left running"; else ok "no agent left running"; fi

# ---- second run: one rule on node8 explains two symptoms ----------------------
fault node8 iptables -A INPUT -p tcp --dport 32768:60999 -j DROP
DB=$dir/cc2.db
"$CC" run "$dir/inventory.toml" --stages ports --db "$DB" >"$dir/run2.out" 2>"$dir/run2.err"
echo "# second run (node8 drops its ephemeral range in INPUT) exited $?"
N8="$P and exists (select 1 from json_each(nodes) where value='node8')"
expect "one verdict names node8" '["node8"]|port-blocked|ephemeral' \
  "select nodes, kind, json_extract(evidence,'\$.stage_kind') from verdicts where $N8"
expect_like "it names the one rule and both symptoms" \
  "node8's INPUT drops tcp 32768-60999, its ephemeral range.*that one rule explains two symptoms.*node8 reaches no peer on any port" \
  "select summary from verdicts where $N8"
expect "its evidence lists the two symptoms" 2 \
  "select json_array_length(evidence,'\$.symptoms') from verdicts where $N8"
expect_like "its next step names the range and the chain" "open tcp 32768-60999 in the INPUT chain" \
  "select next_step from verdicts where $N8"

cluster_test_finish
