#!/bin/bash
# bench/faulty: what one fault costs. The healthy 8-node cluster of
# tests/cluster/healthy_test.sh (data MTU 9000 and mgmt MTU 1500 with ssh,
# docker0 on every node, strict host keys with a known_hosts of the
# inventory's addresses only, [defaults] gpus = 0, all stages, [stages.mpi]
# iters = 5 at 64K) is run once healthy, then once for each of the six
# faults of tests/cluster/faults_test.sh, one at a time on a healed cluster
# (the faults, their undoing and the timed run are tests/cluster/
# faultlib.sh's, shared with that test):
#   link-down       node4: ip link set eth0 down
#   prefix-30       node4: its data address /30 instead of /24
#   dup-addr        node6: node5's data address instead of its own
#   ephemeral-drop  node4: INPUT DROP of tcp to its whole ephemeral range
#   one-way         node5: INPUT DROP of new tcp from node2's data address
#   mtu-1500        node4: eth0 MTU 1500 on the MTU 9000 data network
# Needs root, jq, sqlite3, iptables, timeout. Every run has a hard timeout
# of 900 s (FL_TIMEOUT_S).
#   bench/faulty.sh [--build DIR]
#
# One row per fault (and one for the healthy run):
#   fault           the fault's name (above)
#   wall_s          the run's wall time, s (`clustercheck run` alone: no
#                   report, no healing)
#   healthy_wall_s  the healthy run's wall time, s, the same on every row
#   ratio           wall_s / healthy_wall_s: what one fault costs
#   verdicts        verdicts whose severity is not pass or skip
#   first_kind      the kind of the first of them (the report's order:
#                   worst first), "-" when none
#   exit            the run's exit status (124/137: the 900 s timeout)
# A second table gives each run's seconds per stage (its progress lines on
# stderr; "-" where a stage printed none): the stage that takes the time.
# Then the headline of every run (its first line on stdout), and every
# verdict that is not pass of every fault, one line each:
#   fault | kind | severity | nodes (and pairs) | stage/check | summary | next_step
# The run's files stay in /tmp/ccfaulty-bench for a look afterwards.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
BUILD=$HERE/../build
while :; do
  case ${1:-} in
    --build) BUILD=${2:?--build needs a directory}; shift 2 ;;
    -h | --help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    "") break ;;
    *) echo "usage: bench/faulty.sh [--build DIR]"; exit 2 ;;
  esac
done
BUILD=$(cd "$BUILD" && pwd) || exit 2
CC=$BUILD/clustercheck
# Read by faultlib.sh.
# shellcheck disable=SC2034
sc=$HERE/../tests/cluster/simcluster.sh
[ "$(id -u)" = 0 ] || { echo "bench/faulty needs root"; exit 2; }
for t in jq sqlite3 iptables timeout; do command -v $t >/dev/null || { echo "bench/faulty needs $t"; exit 2; }; done
[ -x "$CC" ] || { echo "bench/faulty: no $CC"; exit 2; }
export SIMCLUSTER_PREFIX=ccfaulty SIMCLUSTER_DIR=/tmp/simcluster-ccfaulty
# shellcheck source=tests/cluster/faultlib.sh
. "$HERE/../tests/cluster/faultlib.sh"

OUT=/tmp/ccfaulty-bench
rm -rf "$OUT"
mkdir -p "$OUT"
DB=$OUT/faulty.db
trap '"$sc" down >/dev/null 2>&1' EXIT
trap 'exit 130' INT TERM

echo "bench/faulty: bringing up $FL_NODES nodes (files in $OUT)..." >&2
fl_up "$OUT" || { echo "bench/faulty: simcluster up failed"; exit 1; }

ROWS=$OUT/rows STAGES=$OUT/stages VERDICTS=$OUT/verdicts HEADS=$OUT/headlines
: >"$ROWS"; : >"$STAGES"; : >"$VERDICTS"; : >"$HEADS"
STAGE_COLS="connect facts parity health nics ports mpi nccl"
HEALTHY=

# row NAME: the table rows of the run just made by fl_run.
row() {
  local name=$1 n first s col secs
  n=$(fl_bad_verdicts "$OUT/$name.json" | wc -l)
  first=$(fl_bad_verdicts "$OUT/$name.json" | head -1 | jq -r '.kind // "-"')
  echo "$name $FL_WALL ${HEALTHY:-$FL_WALL} $(awk -v w="$FL_WALL" -v h="${HEALTHY:-$FL_WALL}" \
    'BEGIN { printf "%.1f", (h > 0 ? w / h : 0) }') $n ${first:--} $FL_RC" >>"$ROWS"
  secs=$(fl_stage_seconds "$OUT/$name.err")
  s=$name
  for col in $STAGE_COLS; do
    s="$s $(tr ' ' '\n' <<<"$secs" | sed -n "s/^$col=//p" | grep . || echo -)"
  done
  echo "$s" >>"$STAGES"
  printf '%-15s %s\n' "$name" "$(head -1 "$OUT/$name.out")" >>"$HEADS"
  [ -n "$FL_RUN" ] || echo "$name | - | - | - | - | the run stored no run (exit $FL_RC) | -" >>"$VERDICTS"
  [ "${FL_REPORT_RC:-0}" = 0 ] ||
    echo "$name | - | - | - | - | report --json exited $FL_REPORT_RC: $(tail -1 "$OUT/$name.report.err") | -" >>"$VERDICTS"
  jq -r --arg f "$name" '.verdicts[]? | select(.severity != "pass") |
      "\($f) | \(.kind) | \(.severity) | \(.nodes | join(","))\(if (.pairs | length) > 0 then " pairs " + (.pairs | map(join(">")) | join(",")) else "" end) | \(.stage)/\(.check) | \(.summary) | \(.next_step)"' \
    "$OUT/$name.json" >>"$VERDICTS" 2>/dev/null
}

echo "bench/faulty: healthy run..." >&2
fl_run healthy "$OUT/faults.toml" "$DB" "$OUT"
HEALTHY=$FL_WALL
row healthy
for name in $(fl_cases); do
  echo "bench/faulty: $name: $(fl_describe "$name")..." >&2
  if ! fl_inject "$name" >"$OUT/$name.inject.log" 2>&1; then
    echo "bench/faulty: injecting $name failed: $(cat "$OUT/$name.inject.log")" >&2
    echo "$name - $HEALTHY - - - inject-failed" >>"$ROWS"
    continue
  fi
  fl_run "$name" "$OUT/faults.toml" "$DB" "$OUT"
  echo "bench/faulty: $name: exit $FL_RC after $FL_WALL s" >&2
  row "$name"
  fl_heal "$name" "$OUT" || { echo "bench/faulty: healing after $name failed:$FL_UNHEALED" >&2; break; }
done

echo
echo "== bench/faulty: one fault at a time on $FL_NODES healthy simulated nodes; all stages, [defaults] gpus = 0; $CC (built $(stat -L -c %y "$CC" | cut -d. -f1)) =="
{ echo "fault wall_s healthy_wall_s ratio verdicts first_kind exit"; cat "$ROWS"; } | column -t
echo
echo "== seconds per stage =="
{ echo "fault $STAGE_COLS"; cat "$STAGES"; } | column -t
echo
echo "== headlines (first line of each run's stdout) =="
cat "$HEADS"
echo
echo "== verdicts that are not pass: fault | kind | severity | nodes | stage/check | summary | next_step =="
cat "$VERDICTS"
