#!/usr/bin/env bash
# shellcheck disable=SC2015  # `check && ok || not_ok` is intended
# Burn-in (issue 16) on 6 simulated nodes, 20 rounds each, the ports stage
# looped (a 1 s probe deadline):
#   1. a flaky link: node2 drops everything from node5 on its data network
#      (iptables DROP; this kernel has no tc netem) while the test switches
#      it on after round 5 is stored and off six rounds later (each switch
#      lands between the rounds stored before and after it). The pair
#      node2-node5 must end `flaky`, with a rate between the bounds the test
#      computes from the rounds the pair met in and when it switched; no
#      other pair or node is named.
#   2. a node that fails after a while: node4's firewall drops tcp/29500
#      once round 9 is stored; node4 is named (`bad-node`) with the first
#      round its pairs failed, which lies after the rounds stored before
#      the rule went in and at most two past those stored once it was in
#      (the round then running may have probed before it); its next step
#      is node4's firewall for that port (its other ports passed); no
#      other node or pair is named.
#   3. stop and resume: SIGINT once round 5 is stored, then --resume: 20
#      rounds in all, none stored twice.
#   4. every looped stage on the round's pairs: 5 rounds (one rotation of 6
#      nodes) of nics, ports and mpi (one mpirun per round whose probe meets
#      only the round's pairs): each stage stores exactly the round's 3 pairs
#      in every round, the same 3 in all stages, every pair once in the
#      rotation; the healthy burn-in names nothing.
#   5. a port blocked for a while: node4's firewall drops tcp/29500 from
#      after round 3 is stored until four more rounds are; 10 rounds. The
#      pairs node4 met then are one `bad-node` verdict naming node4,
#      tcp/29500, its rate over its 10 rounds and the rounds it failed in,
#      which the switching bounds and which are consecutive (node4 meets a
#      peer every round); its other ports passed, so the next step is its
#      firewall for that port, not a cable; no other verdict.
# ctest label "cluster"; $1 is the build dir. Exit 77 = skip.
set -u
BUILD=$(cd "${1:?build dir}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
sc=$here/simcluster.sh
CC=$BUILD/clustercheck
ROUNDS=20

# shellcheck source=tests/cluster/testlib.sh
. "$here/testlib.sh"
command -v jq >/dev/null || { echo "skip: no jq"; exit 77; }
command -v iptables >/dev/null || { echo "skip: no iptables"; exit 77; }
[ -x "$CC" ] || { echo "FAIL: no $CC"; exit 1; }
cluster_test_start bi burnin

"$sc" up 6 --nics 2 --ssh-nic 1 --base auto >"$dir/up.log" 2>&1 ||
  { cat "$dir/up.log"; echo "FAIL: simcluster up"; exit 1; }
cp "$dir/inventory.toml" "$dir/burnin.toml"
cat >>"$dir/burnin.toml" <<'TOML'

[stages]
run = ["facts", "parity", "health", "nics", "ports"]
[stages.ports]
timeout_ms = 1000
TOML

data_ip() { "$sc" exec "$1" ip -4 -o addr show eth0 | awk '{sub("/.*", "", $4); print $4}'; }
rounds_done() { q "select coalesce(json_extract(meta, '\$.burnin.rounds_done'), 0) from runs where id=$1" 2>/dev/null || echo 0; }
# Waits until run $1 has stored round $2 whole (or the burn-in ended).
wait_round() {
  local i
  for ((i = 0; i < 1200; i++)); do
    [ "$(rounds_done "$1")" -ge "$2" ] 2>/dev/null && return 0
    kill -0 "$bpid" 2>/dev/null || return 1
    sleep 0.05
  done
  return 1
}
burnin_bg() {  # run id, then clustercheck burnin arguments
  local id=$1
  shift
  "$CC" burnin "$dir/burnin.toml" --db "$DB" "$@" >"$dir/run$id.out" 2>"$dir/run$id.err" &
  bpid=$!
}
verdicts_of() {
  q "select severity || ' ' || kind || ' ' || nodes || ' ' || summary from verdicts where run_id=$1 and round=0 and severity not in ('pass','skip')"
}

# --- 1. a flaky link ----------------------------------------------------
ip5=$(data_ip node5)
burnin_bg 1 --rounds $ROUNDS
wait_round 1 5 || not_ok "round 5 of run 1 stored"
# Each switch lands somewhere between the rounds stored before and after it.
on_before=$(rounds_done 1)
"$sc" fault node2 iptables -I INPUT -i eth0 -s "$ip5" -j DROP
on_after=$(rounds_done 1)
wait_round 1 $((on_after + 6)) || not_ok "round $((on_after + 6)) of run 1 stored"
off_before=$(rounds_done 1)
"$sc" exec node2 iptables -D INPUT -i eth0 -s "$ip5" -j DROP
off_after=$(rounds_done 1)
wait "$bpid"
rc=$?
echo "# run 1 exited $rc; the drop went on after round $on_before-$on_after, off after round $off_before-$off_after"
sed 's/^/  > /' "$dir/run1.out"
expect "run 1 stored $ROUNDS rounds" "$ROUNDS" "select count(distinct round) from pair_results where run_id=1 and round>0"
met=$(q "select group_concat(round) from (select distinct round from pair_results where run_id=1 and stage='ports' and ((src='node2' and dst='node5') or (src='node5' and dst='node2')) and round>0 order by round)")
# Surely on: rounds begun after the drop was in place and ended before it
# was taken out; perhaps on: from the round after the last one stored
# before it went in to the round after the first stored once it was out.
lo=0 hi=0 n=0
for r in ${met//,/ }; do
  n=$((n + 1))
  if [ "$r" -ge $((on_after + 2)) ] && [ "$r" -le "$off_before" ]; then lo=$((lo + 1)); fi
  if [ "$r" -ge $((on_before + 1)) ] && [ "$r" -le $((off_after + 1)) ]; then hi=$((hi + 1)); fi
done
echo "# node2-node5 met in rounds $met: the rate must lie in [$lo/$n, $hi/$n]"
[ "$n" -ge 4 ] && ok "node2-node5 met $n times in $ROUNDS rounds (floor(20/5)=4)" || not_ok "node2-node5 met $n times"
flaky=$(q "select json_extract(evidence, '\$.rate') || ' ' || json_extract(evidence, '\$.failed_rounds') from verdicts where run_id=1 and round=0 and kind='flaky' and pairs like '%node2%node5%'")
rate=${flaky%% *}
echo "# flaky node2-node5: ${flaky:-none}"
[ -n "$flaky" ] && ok "node2-node5 is flaky" || not_ok "node2-node5 is flaky"
awk -v r="${rate:-x}" -v lo="$lo" -v hi="$hi" -v n="$n" 'BEGIN { exit !(r != "x" && r + 1e-9 >= lo / n && r - 1e-9 <= hi / n && hi > 0) }' &&
  ok "its rate $rate is within [$lo/$n, $hi/$n]" || not_ok "its rate ${rate:-none} is within [$lo/$n, $hi/$n]"
expect "nothing else is named" "" \
  "select group_concat(kind || ':' || pairs) from verdicts where run_id=1 and round=0 and severity not in ('pass','skip') and not (kind='flaky' and pairs like '%node2%node5%')"
[ "$rc" = 1 ] && ok "exit 1: flaky above max_failure_rate 0" || not_ok "exit 1, not $rc"

# --- 2. a node that fails after a while ----------------------------------
burnin_bg 2 --rounds $ROUNDS
wait_round 2 9 || not_ok "round 9 of run 2 stored"
seen=$(rounds_done 2)
"$sc" fault node4 iptables -I INPUT -i eth0 -p tcp --dport 29500 -j DROP
seen_after=$(rounds_done 2)
wait "$bpid"
rc=$?
"$sc" exec node4 iptables -D INPUT -i eth0 -p tcp --dport 29500 -j DROP
echo "# run 2 exited $rc; node4 drops tcp/29500 from after round $seen-$seen_after"
sed 's/^/  > /' "$dir/run2.out"
first=$(q "select min(round) from pair_results where run_id=2 and round>0 and outcome in ('fail','hang')")
named=$(q "select json_extract(evidence, '\$.first_failing_round') from verdicts where run_id=2 and round=0 and kind='bad-node' and nodes like '%node4%'")
echo "# first failing result in round ${first:-none}; node4 named from round ${named:-none}"
[ -n "$named" ] && ok "node4 is named as a bad node" || not_ok "node4 is named as a bad node"
[ "${named:-0}" = "${first:-x}" ] && [ "${named:-0}" -ge $((seen + 1)) ] && [ "${named:-0}" -le $((seen_after + 2)) ] &&
  ok "with its first failing round ($named, the fault came after round $seen-$seen_after)" ||
  not_ok "with its first failing round (named ${named:-none}, first ${first:-none}, fault after $seen-$seen_after)"
expect_like "its next step is node4's firewall for tcp 29500: its other ports passed" \
  "^check the firewall on node4 for tcp 29500 (iptables -S; nft list ruleset)" \
  "select next_step from verdicts where run_id=2 and round=0 and kind='bad-node' and nodes like '%node4%'"
expect "nothing else is named" "" \
  "select group_concat(kind || ':' || nodes) from verdicts where run_id=2 and round=0 and severity not in ('pass','skip') and not (kind='bad-node' and nodes like '%node4%')"
[ "$rc" = 1 ] && ok "exit 1" || not_ok "exit 1, not $rc"

# --- 3. stop and resume ---------------------------------------------------
burnin_bg 3 --rounds $ROUNDS
wait_round 3 5 || not_ok "round 5 of run 3 stored"
kill -INT "$bpid"
wait "$bpid"
rc=$?
stopped=$(rounds_done 3)
echo "# run 3 stopped after round $stopped, exit $rc"
[ "$rc" = 130 ] && ok "Ctrl-C exits 130" || not_ok "Ctrl-C exits 130, not $rc"
grep -q "burn-in: $stopped rounds" "$dir/run3.out" && ok "the report of the $stopped rounds that ran is written" ||
  not_ok "the report of the rounds that ran is written"
expect "only whole rounds are stored" "$stopped" "select coalesce(max(round), 0) from pair_results where run_id=3"
"$CC" burnin "$dir/burnin.toml" --db "$DB" --resume 3 >"$dir/resume.out" 2>"$dir/resume.err"
rc=$?
echo "# resumed run 3 exited $rc"
sed 's/^/  > /' "$dir/resume.out"
[ "$rc" = 0 ] && ok "the resumed healthy burn-in exits 0" || not_ok "the resumed burn-in exits 0, not $rc"
expect "20 rounds in all" "$ROUNDS" "select count(distinct round) from pair_results where run_id=3 and round>0"
expect "no round stored twice (the same number of probes in every round)" 1 \
  "select count(distinct n) from (select round, count(*) as n from pair_results where run_id=3 and round>0 group by round)"
expect "one health sample per node and round" "$((6 * ROUNDS))" \
  "select count(*) from node_results where run_id=3 and stage='health' and check_name='sample'"
expect "round 0 once: the resume replaced it" 6 \
  "select count(*) from node_results where run_id=3 and round=0 and stage='connect' and check_name='agent'"
expect "the healthy burn-in names nothing" "" \
  "select group_concat(kind) from verdicts where run_id=3 and round=0 and severity not in ('pass','skip')"

# --- 4. nics, ports and mpi on the round's pairs ------------------------
if command -v mpirun >/dev/null && [ -x "$BUILD/clustercheck-mpi-probe" ]; then
  sed 's/^run = .*/run = ["facts", "parity", "health", "nics", "ports", "mpi"]/' "$dir/burnin.toml" >"$dir/every.toml"
  printf '[stages.mpi]\ntimeout_s = 60\npair_timeout_s = 10\niters = 5\nmessage_size = "64K"\n' >>"$dir/every.toml"
  "$CC" burnin "$dir/every.toml" --db "$DB" --rounds 5 >"$dir/run4.out" 2>"$dir/run4.err"
  rc=$?
  echo "# run 4 (nics, ports, mpi; 5 rounds) exited $rc"
  [ "$rc" = 0 ] && ok "the healthy 5-round burn-in of nics, ports and mpi exits 0" ||
    not_ok "the healthy nics+ports+mpi burn-in exits 0, not $rc"
  pairs="select round, stage, min(src, dst) || '-' || max(src, dst) as p from pair_results where run_id=4 and round>0"
  expect "nics, ports and mpi store results in each of the 5 rounds" 15 \
    "select count(*) from (select distinct round, stage from ($pairs))"
  expect "each stage tests exactly 3 pairs in every round" "" \
    "select group_concat(stage || ' round ' || round || ': ' || n) from (select round, stage, count(distinct p) as n from ($pairs) group by round, stage) where n != 3"
  expect "the 3 pairs of a round are the same in every stage" "" \
    "select group_concat(round) from (select round, count(distinct p) as n from ($pairs) group by round) where n != 3"
  expect "mpi met every one of the 15 pairs once in the rotation (latency and bandwidth each)" "15 30" \
    "select count(distinct p) || ' ' || count(*) from ($pairs) where stage='mpi'"
  expect "mpi ran in no round 0 of its own" 0 "select count(*) from pair_results where run_id=4 and round=0 and stage='mpi'"
  expect "the healthy burn-in of every looped stage names nothing" "" \
    "select group_concat(kind || ':' || coalesce(pairs, nodes)) from verdicts where run_id=4 and round=0 and severity not in ('pass','skip')"
else
  echo "# section 4 not run: no mpirun or no $BUILD/clustercheck-mpi-probe"
fi

# --- 5. a port blocked for a while ---------------------------------------
WINDOW_ROUNDS=10
id5=$(($(q "select coalesce(max(id), 0) from runs") + 1))
burnin_bg "$id5" --rounds $WINDOW_ROUNDS
wait_round "$id5" 3 || not_ok "round 3 of run $id5 stored"
on_before=$(rounds_done "$id5")
"$sc" fault node4 iptables -I INPUT -i eth0 -p tcp --dport 29500 -j DROP
on_after=$(rounds_done "$id5")
wait_round "$id5" $((on_after + 4)) || not_ok "round $((on_after + 4)) of run $id5 stored"
off_before=$(rounds_done "$id5")
"$sc" exec node4 iptables -D INPUT -i eth0 -p tcp --dport 29500 -j DROP
off_after=$(rounds_done "$id5")
wait "$bpid"
rc=$?
echo "# run $id5 exited $rc; node4 dropped tcp/29500 from after round $on_before-$on_after to after round $off_before-$off_after"
sed 's/^/  > /' "$dir/run$id5.out"
node_verdict="from verdicts where run_id=$id5 and round=0 and kind='bad-node' and nodes like '%node4%' and check_name='tcp/29500'"
expect "one verdict names node4 and tcp/29500" 1 "select count(*) $node_verdict"
window=$(q "select json_extract(evidence, '\$.first_failing_round') || ' ' || json_extract(evidence, '\$.last_failing_round') || ' ' || json_array_length(json_extract(evidence, '\$.failed_rounds')) || ' ' || json_extract(evidence, '\$.rounds_tested') || ' ' || json_extract(evidence, '\$.rate') $node_verdict")
read -r first last failed tested rate <<<"${window:-x x x x x}"
echo "# node4 failed in rounds $first-$last ($failed of $tested, rate $rate)"
# The first failing round began after the rule may have gone in, and at
# most one round ran with the rule in place before it (the one running
# when it went in may have probed node4 first); the last one may have
# run while the rule came out.
[ "$first" -ge $((on_before + 1)) ] 2>/dev/null && [ "$first" -le $((on_after + 2)) ] &&
  ok "its first failing round $first follows the rule (in after round $on_before-$on_after)" ||
  not_ok "its first failing round ${first:-none} follows the rule (in after round $on_before-$on_after)"
[ "$last" -ge "$off_before" ] 2>/dev/null && [ "$last" -le $((off_after + 1)) ] &&
  ok "its last failing round $last is when the rule came out (after round $off_before-$off_after)" ||
  not_ok "its last failing round ${last:-none} is when the rule came out (after round $off_before-$off_after)"
[ "$failed" = $((last - first + 1)) ] 2>/dev/null && [ "$tested" = "$WINDOW_ROUNDS" ] &&
  ok "it failed in every round of the window ($failed) and was tested in all $WINDOW_ROUNDS" ||
  not_ok "it failed in every round of the window ($failed of rounds $first-$last, tested in $tested)"
awk -v r="${rate:-x}" -v f="${failed:-0}" -v n="$WINDOW_ROUNDS" 'BEGIN { exit !(r != "x" && (r - f / n) ^ 2 < 1e-12) }' &&
  ok "its rate $rate is $failed of $WINDOW_ROUNDS rounds" || not_ok "its rate ${rate:-none} is $failed of $WINDOW_ROUNDS rounds"
expect "the pairs it explains are counted in it: one per peer, at least two" 1 \
  "select json_array_length(json_extract(evidence, '\$.peers')) >= 2 and json_array_length(json_extract(evidence, '\$.pairs')) = json_array_length(json_extract(evidence, '\$.peers')) $node_verdict"
expect_like "its summary gives the port, the rate and the rounds" \
  "^node4 tcp/29500 failed in $failed of $WINDOW_ROUNDS rounds ([0-9]*%), rounds $first-$last, with .* peers it met then (node\[.*\]); its other ports passed\$" \
  "select summary $node_verdict"
expect_like "its next step is node4's firewall for that port, not a cable" \
  "^check the firewall on node4 for tcp 29500 (iptables -S; nft list ruleset)" "select next_step $node_verdict"
expect "nothing else is named" "" \
  "select group_concat(kind || ':' || nodes || ':' || summary, ' | ') from verdicts where run_id=$id5 and round=0 and severity not in ('pass','skip') and not (kind='bad-node' and nodes like '%node4%')"
grep -q "node4 tcp/29500 failed in $failed of $WINDOW_ROUNDS rounds" "$dir/run$id5.out" &&
  ok "the burn-in's report prints it" || not_ok "the burn-in's report prints it"
[ "$rc" = 1 ] && ok "exit 1: a rate above max_failure_rate 0" || not_ok "exit 1, not $rc"

# --- the report and the diff of burn-ins ---------------------------------
"$CC" report 1 --db "$DB" --html "$dir/run1.html" >/dev/null 2>&1 || not_ok "report 1 --html exited $?"
grep -q 'id="burnin"' "$dir/run1.html" && ok "the HTML page has its burn-in section" ||
  not_ok "the HTML page has its burn-in section"
"$CC" diff 3 1 --db "$DB" >"$dir/diff.out" 2>&1
rc=$?
sed 's/^/  > /' "$dir/diff.out" | head -4
[ "$rc" = 1 ] && grep -q "worse  ports tcp/29500 node2 <-> node5" "$dir/diff.out" &&
  ok "diff of the healthy burn-in and the flaky one: node2-node5 worse by rate, exit 1" ||
  not_ok "diff by rate names node2-node5 worse and exits 1 (exit $rc)"

if ! cluster_test_finish; then
  for id in 1 2 3 4 "$id5"; do echo "# run $id verdicts:"; verdicts_of "$id" | sed 's/^/  /'; done
  tail -20 "$dir/run1.err"
  exit 1
fi
