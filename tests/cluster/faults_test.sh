#!/usr/bin/env bash
# shellcheck disable=SC2015,SC2001  # `check && ok || not_ok` is intended; sed indents
# One fault, one verdict, the rest measured. The healthy 8-node cluster of
# healthy_test.sh (data MTU 9000 + mgmt 1500 with ssh, docker0, strict host
# keys, gpus = 0, every stage, mpi iters = 5 at 64K) is run once healthy,
# then once per fault, each on a healed cluster and with a run id of its
# own (the faults and their undoing are tests/cluster/faultlib.sh's):
#   link-down       node4's data link down (ip link set eth0 down)
#   prefix-30       node4's data address /30 instead of /24
#   dup-addr        node6 holds node5's data address instead of its own
#   ephemeral-drop  node4's INPUT drops tcp to its whole ephemeral range
#   one-way         node5's INPUT drops new tcp from node2's data address:
#                   node2->node5 fails, node5->node2 works
#   mtu-1500        node4's eth0 MTU 1500 on the MTU 9000 data network
# For each fault (its cause: node4; node5+node6; the pair node2/node5):
#   - the run ends (exit 1) within about twice the healthy run's wall time
#     (FAULTS_MAX_RATIO, default 2, plus 10 s of slack);
#   - the first verdict that is fail or hang names the cause (its kind,
#     check and summary say what it is; its nodes are culprits only) and
#     has a next_step with the fix;
#   - no verdict other than pass/skip names a node or pair outside the
#     cause: its nodes are culprits, each of its pairs has a culprit at
#     one end (one-way: is node2/node5 itself);
#   - the mpi stage ran on the remaining nodes and passed there (launch
#     and allreduce pass on every other node, their pairs all pass), and
#     the culprits' mpi results are skip with a reason naming the cause
#     (one-way: at least one end of the pair is left out);
#   - the run's headline (first stdout line) names only the culprits.
# On failure every verdict of the case (kind, severity, nodes, pairs,
# stage/check, summary, next_step) is printed. Each run has a hard
# `timeout 900`. ctest label "cluster"; $1 is the build dir. Exit 77 = skip.
set -u
BUILD=$(cd "${1:?build dir}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
sc=$here/simcluster.sh
CC=$BUILD/clustercheck
MAX_RATIO=${FAULTS_MAX_RATIO:-2}

# shellcheck source=tests/cluster/testlib.sh
. "$here/testlib.sh"
# shellcheck source=tests/cluster/faultlib.sh
. "$here/faultlib.sh"
for t in jq iptables timeout; do command -v $t >/dev/null || { echo "skip: no $t"; exit 77; }; done
[ -x "$CC" ] || { echo "FAIL: no $CC"; exit 1; }
cluster_test_start fa faults

fl_up "$dir" || { echo "FAIL: simcluster up"; exit 1; }
INV=$dir/faults.toml
echo "# $FL_NODES nodes; data $(fl_addr node1 | sed 's/\.[0-9]*$/.0\/24/') MTU $FL_MTU, mgmt (ssh), docker0 on each"

# ---- healthy ------------------------------------------------------------------
fl_run healthy "$INV" "$DB" "$dir"
healthy_wall=$FL_WALL healthy_run=$FL_RUN
echo "# healthy: run ${FL_RUN:-none}, exit $FL_RC, ${FL_WALL} s ($(fl_stage_seconds "$dir/healthy.err"))"
[ "$FL_RC" = 0 ] && ok "healthy: run exits 0" || not_ok "healthy: run exits 0, not $FL_RC"
head -1 "$dir/healthy.out" | grep -q '^PASS' && ok "healthy: the headline is PASS" ||
  not_ok "healthy: the headline is PASS: $(head -1 "$dir/healthy.out")"
n=$(fl_bad_verdicts "$dir/healthy.json" | wc -l)
[ "$n" = 0 ] && ok "healthy: no verdict other than pass/skip" || {
  not_ok "healthy: no verdict other than pass/skip ($n)"
  fl_bad_verdicts "$dir/healthy.json" | sed 's/^/  | /'
}
# The mpi pair results a healthy run stores, for the share a fault run
# must still measure among the nodes it keeps.
healthy_mpi_pairs=$(q "select count(*) from pair_results where run_id=${healthy_run:-0} and stage='mpi' and outcome='pass'")

# What the cause of each fault looks like in a verdict (an ERE on
# "kind stage/check: summary"), its fix (an ERE on next_step), and the
# reason a culprit's mpi results are skipped for (an ERE on the message).
expect_cause() {
  local d4
  case $1 in
    link-down) cause_re='eth0.*(down|carrier|no link)|(down|carrier|no link).*eth0'
      fix_re='eth0.* up|up.*eth0' reason_re='eth0.*(down|carrier)' ;;
    prefix-30) d4=$(fl_addr node4)
      cause_re='/30|prefix length' fix_re="${d4//./\\.}/24" reason_re='/30|prefix' ;;
    dup-addr) cause_re='duplicate' fix_re='distinct|duplicate|address' reason_re='duplicate' ;;
    ephemeral-drop) cause_re='ephemeral|32768' fix_re='32768|ephemeral' reason_re='ephemeral|32768' ;;
    one-way) cause_re='^one-way |node2 (→|->) node5' fix_re='INPUT|OUTPUT|firewall|iptables'
      reason_re='one-way|node2 (→|->) node5|filter' ;;
    mtu-1500) cause_re='mtu.*(1500|9000)|(1500|9000).*mtu' fix_re='9000' reason_re='mtu' ;;
  esac
}

print_case() {   # every verdict of the case, its headline and stage times
  local name=$1 run=$2
  echo "  # $name: headline: $(head -1 "$dir/$name.out")"
  echo "  # $name: stages: $(fl_stage_seconds "$dir/$name.err")"
  echo "  # $name: every verdict (severity kind nodes pairs stage/check: summary -> next_step):"
  jq -r '.verdicts[]? | "  | \(.severity) \(.kind) \(.nodes | join(",")) \(.pairs | map(join(">")) | join(",")) \(.stage)/\(.check): \(.summary) -> \(.next_step)"' \
    "$dir/$name.json" 2>&1
  echo "  # $name: mpi results that are not pass:"
  q "select '  | ' || node || ' ' || check_name || ' ' || outcome || ': ' || substr(message, 1, 200) from node_results where run_id=${run:-0} and stage='mpi' and outcome!='pass' order by node, check_name"
  [ -s "$dir/$name.report.err" ] && { echo "  # $name: report's stderr:"; sed 's/^/  | /' "$dir/$name.report.err" | tail -5; }
  echo "  # $name: run's stderr (tail):"
  tail -8 "$dir/$name.err" | sed 's/^/  | /'
}

# The nodes and pairs ("a>b") a verdict names outside the cause $c.
# shellcheck disable=SC2016  # jq's variables
outside_jq='((.nodes - $c) + [.pairs[] | select(if $both then (. - $c | length) > 0 else (. - $c | length) == length end) | join(">")])'

check_case() {
  local name=$1 run=$2 rc=$3 wall=$4 cause cause_json pair_both first what nodes outside
  cause=$(fl_cause "$name")
  cause_json=$(tr ' ' '\n' <<<"$cause" | jq -R . | jq -sc .)
  # A pair is outside a node's cause when neither end is a culprit; the
  # one-way cause is the pair itself, so both ends must be in it.
  pair_both=false
  [ "$name" = one-way ] && pair_both=true
  expect_cause "$name"
  [ "$rc" = 1 ] && ok "$name: run exits 1" || not_ok "$name: run exits 1, not $rc"
  [ -n "$run" ] || { not_ok "$name: the run stored no run"; return; }
  [ "$FL_REPORT_RC" = 0 ] && ok "$name: report --json exits 0" || not_ok "$name: report --json exits $FL_REPORT_RC"
  awk -v w="$wall" -v h="$healthy_wall" -v r="$MAX_RATIO" 'BEGIN { exit !(w <= r * h + 10) }' &&
    ok "$name: ${wall} s, within ${MAX_RATIO}x the healthy ${healthy_wall} s" ||
    not_ok "$name: ${wall} s, not within ${MAX_RATIO}x the healthy ${healthy_wall} s (+10 s)"

  # The first verdict that is fail or hang is the cause.
  first=$(jq -c '[.verdicts[]? | select(.severity == "fail" or .severity == "hang")][0] // empty' "$dir/$name.json")
  if [ -z "$first" ]; then
    not_ok "$name: a fail or hang verdict"
  else
    what=$(jq -r '"\(.kind) \(.stage)/\(.check): \(.summary)"' <<<"$first")
    grep -Eiq -- "$cause_re" <<<"$what" && ok "$name: the first verdict names the cause: $what" ||
      not_ok "$name: the first verdict names the cause (/$cause_re/): $what"
    nodes=$(jq -r '.nodes | join(" ")' <<<"$first")
    outside=$(jq -r --argjson c "$cause_json" --argjson both "$pair_both" "$outside_jq"' | join(" ")' <<<"$first")
    [ -n "$nodes" ] && [ -z "$outside" ] && ok "$name: the first verdict names the culprits ($nodes)" ||
      not_ok "$name: the first verdict names only the culprits ($cause): nodes '$nodes', outside '$outside'"
    jq -r '.next_step' <<<"$first" | grep -Eiq -- "$fix_re" &&
      ok "$name: its next step is the fix: $(jq -r .next_step <<<"$first" | cut -c1-150)" ||
      not_ok "$name: its next step is the fix (/$fix_re/): '$(jq -r .next_step <<<"$first")'"
  fi
  # Nothing outside the cause is accused.
  outside=$(fl_bad_verdicts "$dir/$name.json" | jq -r --argjson c "$cause_json" --argjson both "$pair_both" \
    "$outside_jq"' as $o | select($o | length > 0) | "\(.severity) \(.kind) \(.stage)/\(.check): names \($o | join(","))"')
  [ -z "$outside" ] && ok "$name: no verdict names a node or pair outside $cause" || {
    not_ok "$name: no verdict names a node or pair outside $cause ($(wc -l <<<"$outside") do)"
    sed 's/^/  | /' <<<"$outside" | head -20
  }

  # mpi ran on the others and passed there; the culprits are skipped for the cause.
  local R="run_id=$run and stage='mpi'" i node kept=() skipped=0 got msgs
  for ((i = 1; i <= FL_NODES; i++)); do
    node=node$i
    got=$(q "select group_concat(distinct outcome) from node_results where $R and node='$node' and check_name in ('launch','allreduce')")
    if [[ " $cause " == *" $node "* ]]; then
      if [ "$got" = skip ]; then
        skipped=$((skipped + 1))
        msgs=$(q "select group_concat(distinct message) from node_results where $R and node='$node'")
        grep -Eiq -- "$reason_re" <<<"$msgs" && ok "$name: $node's mpi is skipped for the cause: $(cut -c1-150 <<<"$msgs")" ||
          not_ok "$name: $node's mpi is skipped for the cause (/$reason_re/): '$msgs'"
      elif [ "$name" = one-way ] && [ "$got" = pass ]; then
        kept+=("$node")
      else
        not_ok "$name: $node (a culprit) has mpi skip, not '${got:-nothing}'"
      fi
    else
      kept+=("$node")
      [ "$got" = pass ] || not_ok "$name: $node's mpi launch and allreduce pass, not '${got:-nothing}'"
    fi
  done
  [ "$skipped" -ge 1 ] || not_ok "$name: no culprit's mpi is skipped"
  local m=${#kept[@]} in_kept want pairs bad
  in_kept=$(printf "'%s'," "${kept[@]}")
  in_kept=${in_kept%,}
  got=$(q "select count(*) from node_results where $R and check_name='allreduce' and outcome='pass' and node in ($in_kept)")
  [ "$got" = "$m" ] && ok "$name: allreduce passes on the $m other nodes" ||
    not_ok "$name: allreduce passes on the $m other nodes (on $got)"
  want=$((healthy_mpi_pairs * m * (m - 1) / (FL_NODES * (FL_NODES - 1))))
  pairs=$(q "select count(*) from pair_results where $R and outcome='pass' and src in ($in_kept) and dst in ($in_kept)")
  bad=$(q "select count(*) from pair_results where $R and outcome!='pass' and src in ($in_kept) and dst in ($in_kept)")
  [ "$pairs" = "$want" ] && [ "$bad" = 0 ] && ok "$name: the $m nodes' mpi pairs all pass ($pairs)" ||
    not_ok "$name: the $m nodes' mpi pairs all pass ($pairs pass of $want, $bad not)"

  # The headline names the culprits only.
  local head named
  head=$(head -1 "$dir/$name.out")
  named=$(fl_expand_nodes <<<"$head" | tr '\n' ' ')
  named=${named% }
  outside=$(comm -23 <(fl_expand_nodes <<<"$head") <(tr ' ' '\n' <<<"$cause" | sort))
  [ -n "$named" ] && [ -z "$outside" ] && ok "$name: the headline names $named: $head" ||
    not_ok "$name: the headline names only $cause (it names '${named}'): $head"
}

declare -A walls=() rcs=()
for name in $(fl_cases); do
  echo "# $name: $(fl_describe "$name")"
  fl_inject "$name" >"$dir/$name.inject.log" 2>&1 || { not_ok "$name: inject"; cat "$dir/$name.inject.log"; continue; }
  before=$failures
  fl_run "$name" "$INV" "$DB" "$dir"
  walls[$name]=$FL_WALL rcs[$name]=$FL_RC
  echo "# $name: run ${FL_RUN:-none}, exit $FL_RC, ${FL_WALL} s ($(fl_stage_seconds "$dir/$name.err"))"
  check_case "$name" "$FL_RUN" "$FL_RC" "$FL_WALL"
  [ "$failures" = "$before" ] || print_case "$name" "$FL_RUN"
  fl_heal "$name" "$dir" || { not_ok "$name: healing failed:$FL_UNHEALED"; break; }
done

echo "# wall times: healthy ${healthy_wall} s; $(for n in $(fl_cases); do printf '%s %s s (exit %s); ' "$n" "${walls[$n]:--}" "${rcs[$n]:--}"; done)"
cluster_test_finish
