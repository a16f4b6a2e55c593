#!/bin/bash
# The ports stage through the local transport: three "nodes" on loopback
# addresses 127.0.0.11-13 (no root needed). Every port is open except
# tcp/29501 on n3, which another process holds: in-use, with a warning
# verdict naming n3. No listener of ours is left afterwards.
set -u
BUILD=${1:?build dir}
CC="$BUILD/clustercheck"
TMP=$(mktemp -d)
squatter=""
trap '[ -n "$squatter" ] && kill "$squatter" 2>/dev/null; rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
command -v sqlite3 >/dev/null || { echo "skip: no sqlite3"; exit 77; }
command -v perl >/dev/null || { echo "skip: no perl"; exit 77; }
DB="$TMP/cc.db"
q() { sqlite3 "$DB" "$1"; }

# Ports unlikely to be taken on these addresses; fixed so the test reads.
P1=29500
P2=29501
perl -MIO::Socket::INET -e '
  my $s = IO::Socket::INET->new(LocalAddr => "127.0.0.13", LocalPort => $ARGV[0],
                                Listen => 16, ReuseAddr => 1) or die "listen: $!";
  while (my $c = $s->accept) { print $c "not clustercheck\n"; close $c }' $P2 &
squatter=$!
for _ in $(seq 50); do
  ss -Hltn "src 127.0.0.13 and sport = :$P2" | grep -q LISTEN && break
  sleep 0.1
done

cat >"$TMP/inv.toml" <<TOML
name = "ports-local"
transport = "local"
[[nodes]]
name = "n1"
address = "127.0.0.11"
[[nodes]]
name = "n2"
address = "127.0.0.12"
[[nodes]]
name = "n3"
address = "127.0.0.13"
[stages]
run = ["ports"]
[stages.ports]
ports = [$P1, $P2]
ephemeral_samples = 4
timeout_ms = 1000
TOML

"$CC" run "$TMP/inv.toml" --db "$DB" >"$TMP/run.out" 2>"$TMP/run.err"
rc=$?
cat "$TMP/run.out"
[ $rc -le 1 ] || { cat "$TMP/run.err"; fail "run exited $rc"; }
P="stage='ports' and run_id=1"
# 3 senders x 2 receivers x (2 listed + 4 ephemeral); no SSH port locally.
[ "$(q "select count(*) from pair_results where $P")" = 36 ] || fail "expected 36 probes"
[ "$(q "select count(*) from pair_results where $P and state='open'")" = 34 ] \
  || { q "select src,dst,check_name,state,message from pair_results where $P and state!='open'"; fail "expected 34 open"; }
[ "$(q "select group_concat(src) from pair_results where $P and dst='n3' and check_name='tcp/$P2' and state='in-use' and outcome='warn'")" = "n1,n2" ] \
  || fail "n3's tcp/$P2 is not in-use from n1 and n2"
q "select message from node_results where $P and node='n3' and check_name='listen' and outcome='warn'" | grep -q EADDRINUSE \
  || fail "n3's listen result does not name EADDRINUSE"
q "select summary from verdicts where $P and kind='in-use' and nodes='[\"n3\"]'" \
  | grep -q "tcp/$P2 on n3 is held by another process" || fail "no in-use verdict naming n3"
[ "$(q "select count(*) from verdicts where $P and severity='fail'")" = 0 ] \
  || fail "a failing verdict on an open cluster"
[ "$(q "select json_extract(meta,'\$.ports.probes') from runs where id=1")" = 36 ] || fail "no summary in meta"
left=$(ss -Hltn | grep -E '127\.0\.0\.1[123]:' | grep -v "127.0.0.13:$P2 " || true)
[ -z "$left" ] || fail "listeners left: $left"
pgrep -f "$BUILD/clustercheck-agent" >/dev/null && fail "agents left running"
echo PASS
