#!/bin/bash
# bench/scale: the cost of a healthy full non-GPU run on N simulated nodes,
# for each N given, and how each cost grows (issue 14). Every size is set
# up as tests/cluster/healthy_test.sh sets up 8: data (MTU 9000) and mgmt
# (MTU 1500, ssh) networks, docker0 on every node, strict host keys with a
# known_hosts of the inventory's addresses only, [defaults] gpus = 0, all
# stages. Needs root.
#   bench/scale.sh [--build DIR] [--slurm-upto M] N [N ...]
#                                               (e.g. --slurm-upto 64 16 32 64 128 256)
# --slurm-upto M: every size up to M is also run with transport = "slurm"
# on a real Slurm over the same simulated nodes (tests/cluster/
# slurmcluster.sh: one slurmctld, one slurmd per node; sbcast, one srun,
# the agents dial back), a row of its own ("via slurm").
#
# One row per size and launcher:
#   wall_s      the run's wall time; connect..mpi: each stage's own (its
#               progress line), connect = push and hello
#   cpu_s       the controller's own user+sys (getrusage, no children)
#   rss_MB      the controller's own peak RSS (VmHWM, getrusage) — not
#               /usr/bin/time's, which is the largest process of the tree
#               and so mpirun's once the mpi stage starts it
#   tree_MB     /usr/bin/time's figure, for comparison
#   rep_MB      peak RSS of `report --html --junit` on the run's database
#   results     node and pair results stored; db_MB the database's size
#   probes/s    the ports stage's first attempts per second of its probe
#               phase; p90_ms the slowest batch's 90th percentile connect
#   retests     the confirmation passes' retests, all pair stages
#   load        the machine's 1-minute load average, its peak in the run:
#               a 2-core machine carrying N sshds and agents says so here
#   verdicts    verdicts that are not pass; every one is printed below
# A second table gives the controller's peak RSS within each stage
# (CLUSTERCHECK_SELF_USAGE's peak_kb.STAGE; "end" is what follows the last
# stage: the summary): the stage that holds the peak is where memory must
# go down next.
# Then, for each column, the growth exponent e between sizes (cost ~ N^e):
# about 1 grows per node, about 2 per pair.
# The run's files stay in /tmp/ccscale-bench-N-VIA for a look afterwards.
# CCSCALE_WRAP="heaptrack -o F" puts a profiler in front of the run.
# CCSCALE_DIAL_BACK=1 sets [ssh] dial_back = true: ssh starts the agents,
# which dial the controller back and answer over TCP (no libssh buffers
# for their answers on the controller); =0 sets it false. Unset, the
# inventory leaves it to clustercheck: on past 128 nodes. A row whose
# agents dialled back says "ssh-dial" in its via column.
# CCSCALE_SSH=0 leaves out the ssh rows (with --slurm-upto: Slurm alone).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
BUILD=$HERE/../build
SLURM_UPTO=0
while :; do
  case ${1:-} in
    --build) BUILD=${2:?--build needs a directory}; shift 2 ;;
    --slurm-upto) SLURM_UPTO=${2:?--slurm-upto needs a size}; shift 2 ;;
    *) break ;;
  esac
done
[ $# -ge 1 ] || { echo "usage: bench/scale.sh [--build DIR] [--slurm-upto M] N [N ...]"; exit 2; }
for n in "$@" "$SLURM_UPTO"; do
  case $n in "" | *[!0-9]*) echo "bench/scale: N must be a number: $n"; exit 2 ;; esac
done
BUILD=$(cd "$BUILD" && pwd) || exit 2
SC="$HERE/../tests/cluster/simcluster.sh"
SLC="$HERE/../tests/cluster/slurmcluster.sh"
export SIMCLUSTER_PREFIX=ccscale SIMCLUSTER_DIR=/tmp/simcluster-ccscale
D=$SIMCLUSTER_DIR
[ "$(id -u)" = 0 ] || { echo "bench/scale needs root"; exit 2; }
[ -x /usr/bin/time ] || { echo "bench/scale needs /usr/bin/time (apt-get install time)"; exit 2; }
for t in jq sqlite3 bc; do command -v $t >/dev/null || { echo "bench/scale needs $t"; exit 2; }; done
if [ "$SLURM_UPTO" -gt 0 ]; then
  for p in slurmctld slurmd srun sbcast salloc munged; do
    PATH=$PATH:/usr/sbin command -v "$p" >/dev/null ||
      { echo "bench/scale: --slurm-upto needs $p (scripts/install-deps.sh)"; exit 2; }
  done
fi
teardown() {
  [ "$SLURM_UPTO" -gt 0 ] && "$SLC" down >/dev/null 2>&1
  "$SC" down >/dev/null 2>&1
}
trap 'teardown; [ -n "${SAMPLER:-}" ] && kill "$SAMPLER" 2>/dev/null' EXIT

ROWS=$(mktemp /tmp/ccscale-rows.XXXXXX)
PEAKS=$(mktemp /tmp/ccscale-peaks.XXXXXX)
VERDICT_FILES=$(mktemp /tmp/ccscale-verdicts.XXXXXX)
PEAK_COLS="connect facts parity health nics ports mpi end"
COLS="nodes via pairs exit wall_s connect facts parity health nics ports mpi cpu_s rss_MB tree_MB rep_MB results db_MB probes/s p90_ms retests load verdicts"

# The seconds of a stage from the run's progress lines ("  ports  ... in 17.5s").
stage_s() {
  awk -v s="$1" '$1 == s && $NF ~ /^[0-9.]+s$/ { v = $NF } END { sub(/s$/, "", v); print (v == "" ? "-" : v) }' "$2"
}

SIM_OPTS=(--nics 2 --mtu-data 9000 --ssh-nic 1 --docker0 --known-hosts inventory --gpus 0 --base auto)

# one N VIA: a run on N nodes launched by ssh or by Slurm, one row.
one() {
  local N=$1 VIA=$2 OUT=/tmp/ccscale-bench-$1-$2
  rm -rf "$OUT"
  mkdir -p "$OUT"
  echo "bench/scale: bringing up $N nodes for $VIA (files in $OUT)..." >&2
  local up=("$SC" up)
  [ "$VIA" = slurm ] && up=("$SLC" up)
  if ! "${up[@]}" "$N" "${SIM_OPTS[@]}" >"$OUT/up.log" 2>&1; then
    tail -5 "$OUT/up.log" >&2
    echo "bench/scale: ${up[0]##*/} up $N failed" >&2
    return 1
  fi
  local slurm_env=/dev/null
  if [ "$VIA" = slurm ]; then
    slurm_env=$D/slurm/env
    # Every simulated node shares this machine's /root, whose login files
    # would make N login shells at once wait on each other
    # (tests/cluster/slurm_test.sh does the same).
    mkdir -p "$OUT/home"
    sed -e 's/^transport = .*/transport = "slurm"/' \
      -e "/^\[defaults\]/a env = { HOME = \"$OUT/home\" }" "$D/inventory.toml"
    printf '\n[slurm]\nagent_dir = "%s"\ntime_limit = "60"\n' \
      "$(sed -n 's/^SLURMCLUSTER_LOCAL=//p' "$slurm_env")"
  elif [ -n "${CCSCALE_DIAL_BACK:-}" ]; then
    sed "s/^\[ssh\]\$/[ssh]\ndial_back = $([ "$CCSCALE_DIAL_BACK" = 1 ] && echo true || echo false)/" \
      "$D/inventory.toml"
  else
    cat "$D/inventory.toml"
  fi >"$OUT/scale.toml"
  printf '\n[stages.mpi]\niters = 5\nmessage_size = "64K"\n' >>"$OUT/scale.toml"
  local DB=$OUT/scale.db
  (peak=0; while :; do
    l=$(cut -d' ' -f1 /proc/loadavg)
    peak=$(awk -v l="$l" -v p="$peak" 'BEGIN { print (l + 0 > p + 0 ? l : p) }')
    echo "$peak" >"$OUT/load.txt"
    sleep 2
  done) &
  SAMPLER=$!
  echo "bench/scale: running on $N nodes..." >&2
  # shellcheck disable=SC2086
  # shellcheck disable=SC1090  # the Slurm env of this cluster, or nothing
  (set -a; . "$slurm_env"; set +a
    CLUSTERCHECK_SELF_USAGE=$OUT/self.txt exec /usr/bin/time -v -o "$OUT/time.txt" \
      ${CCSCALE_WRAP:-} "$BUILD/clustercheck" run "$OUT/scale.toml" --db "$DB") >"$OUT/run.out" 2>"$OUT/run.err"
  local rc=$?
  kill "$SAMPLER" 2>/dev/null
  wait "$SAMPLER" 2>/dev/null
  SAMPLER=
  /usr/bin/time -v -o "$OUT/report-time.txt" "$BUILD/clustercheck" report --db "$DB" \
    --html "$OUT/report.html" --junit "$OUT/junit.xml" >"$OUT/report.out" 2>&1
  "$BUILD/clustercheck" report --db "$DB" --json >"$OUT/report.json" 2>/dev/null

  local self meta
  tv() { awk -F': ' -v k="$1" '$1 ~ k {print $2}' "$2"; }
  self=$(cat "$OUT/self.txt" 2>/dev/null)
  kv() { sed -n "s/.*$1=\([0-9.]*\).*/\1/p" <<<"$self"; }
  local rss_kb user sys
  rss_kb=$(kv max_rss_kb); user=$(kv user_s); sys=$(kv sys_s)
  meta=$(sqlite3 "$DB" "select meta from runs where id=1")
  local SHOWN=$VIA
  [ "$VIA" = ssh ] && jq -e '.launcher.dial_back' <<<"$meta" >/dev/null 2>&1 && SHOWN=ssh-dial
  local probes probe_ms rate p90 retests results db_bytes verdicts
  probes=$(jq -r '.ports.probes // 0' <<<"$meta")
  probe_ms=$(jq -r '.ports.probe_ms // 0' <<<"$meta")
  rate=$(awk -v p="$probes" -v ms="$probe_ms" 'BEGIN { if (ms > 0) printf "%.0f", p / (ms / 1000); else print "-" }')
  p90=$(jq -r '[.ports.batches[]?.p90_connect_ms] | max // "-"' <<<"$meta")
  retests=$(jq -r '[to_entries[] | select(.key | startswith("retests.")) | .value.retested // 0] | add // 0' <<<"$meta")
  results=$(sqlite3 "$DB" "select (select count(*) from node_results where run_id=1) + (select count(*) from pair_results where run_id=1)")
  db_bytes=$(cat "$DB" "$DB-wal" 2>/dev/null | wc -c)
  verdicts=$(jq '[.verdicts[] | select(.severity != "pass")] | length' "$OUT/report.json")
  local wall
  wall=$(awk -F': ' '$1 ~ /Elapsed \(wall clock\)/ {n = split($2, t, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + t[i]; print s}' "$OUT/time.txt")
  printf '%s %s %s %s %.1f %s %s %s %s %s %s %s %.2f %.1f %.1f %.1f %s %.1f %s %s %s %s %s\n' \
    "$N" "$SHOWN" $((N * (N - 1) / 2)) "$rc" "$wall" \
    "$(stage_s connect "$OUT/run.err")" "$(stage_s facts "$OUT/run.err")" \
    "$(stage_s parity "$OUT/run.err")" "$(stage_s health "$OUT/run.err")" \
    "$(stage_s nics "$OUT/run.err")" "$(stage_s ports "$OUT/run.err")" \
    "$(stage_s mpi "$OUT/run.err")" \
    "$(echo "${user:-0} + ${sys:-0}" | bc)" "$(echo "${rss_kb:-0} / 1024" | bc -l)" \
    "$(echo "$(tv 'Maximum resident set size' "$OUT/time.txt") / 1024" | bc -l)" \
    "$(echo "$(tv 'Maximum resident set size' "$OUT/report-time.txt") / 1024" | bc -l)" \
    "$results" "$(echo "$db_bytes / 1048576" | bc -l)" "$rate" "$p90" "$retests" \
    "$(cat "$OUT/load.txt" 2>/dev/null || echo -)" "$verdicts" >>"$ROWS"
  local peaks="$N $SHOWN" seg kb
  for seg in $PEAK_COLS; do
    kb=$(kv "peak_kb\\.$seg")
    peaks="$peaks $([ -n "$kb" ] && echo "scale=1; $kb / 1024" | bc || echo -)"
  done
  echo "$peaks" >>"$PEAKS"
  {
    echo "== $N nodes via $SHOWN: exit $rc: $(head -1 "$OUT/run.out")"
    echo "launcher: $(jq -c '.launcher // "ssh channels"' <<<"$meta")"
    echo "results that are not pass or skip:"
    sqlite3 "$DB" "select '  ' || stage || '/' || check_name || ' ' || outcome || ' x' || count(*) || ': ' || substr(min(message), 1, 160) from (select stage, check_name, outcome, message from node_results where run_id=1 union all select stage, check_name, outcome, message from pair_results where run_id=1) where outcome not in ('pass','skip') group by stage, check_name, outcome"
    echo "verdicts:"
    jq -r '.verdicts[] | select(.severity != "pass") | "  \(.severity) \(.kind) \(.stage)/\(.check): \(.summary)"' "$OUT/report.json" | head -50
  } >"$OUT/verdicts.txt"
  echo "$OUT/verdicts.txt" >>"$VERDICT_FILES"
}

# The Slurm row of a size runs on the nodes its ssh row ran on
# (slurmcluster.sh keeps a simulated cluster that is already up).
for n in "$@"; do
  [ "${CCSCALE_SSH:-1}" = 1 ] && one "$n" ssh
  [ "$n" -le "$SLURM_UPTO" ] && one "$n" slurm
  teardown
done

echo
MODE="via ssh: agents answer over their ssh channels; via ssh-dial: they dial back ([ssh] dial_back"
case ${CCSCALE_DIAL_BACK:-} in
  1) MODE="$MODE = true)" ;;
  0) MODE="$MODE = false: none)" ;;
  *) MODE="$MODE unset: on past 128 nodes)" ;;
esac
[ "$SLURM_UPTO" -gt 0 ] && MODE="$MODE; via slurm: transport = \"slurm\" up to $SLURM_UPTO nodes"
echo "== bench/scale: healthy simulated nodes, $MODE; all stages, [defaults] gpus = 0 =="
{ echo "$COLS"; cat "$ROWS"; } | column -t
echo
echo "== controller peak RSS within each stage, MB =="
{ echo "nodes via $PEAK_COLS"; cat "$PEAKS"; } | column -t
# Only this invocation's runs: a size's other launcher may have a run
# directory from an earlier one.
while read -r f; do cat "$f"; done <"$VERDICT_FILES"

# Growth: e = ln(y2/y1) / ln(n2/n1) between consecutive sizes and over the
# whole range, for the columns that are costs.
for via in ssh ssh-dial slurm; do
  awk -v via=$via '$2 == via' "$ROWS" >"$ROWS.$via"
  [ "$(wc -l <"$ROWS.$via")" -ge 2 ] || continue
  echo
  echo "== growth exponent e via $via (cost ~ nodes^e; ~1 per node, ~2 per pair) =="
  awk -v cols="$COLS" '
    BEGIN { n = split(cols, name, " ") }
    { for (i = 1; i <= n; i++) v[NR, i] = $i; rows = NR }
    function e(a, b, i) {
      if (v[a, i] + 0 <= 0 || v[b, i] + 0 <= 0 || v[a, 1] == v[b, 1]) return "-"
      return sprintf("%.2f", log(v[b, i] / v[a, i]) / log(v[b, 1] / v[a, 1]))
    }
    END {
      want = "wall_s nics ports mpi cpu_s rss_MB rep_MB results db_MB"
      hdr = sprintf("%-8s", "column")
      for (r = 2; r <= rows; r++) hdr = hdr sprintf(" %9s", v[r - 1, 1] "-" v[r, 1])
      print hdr sprintf(" %9s  %s", v[1, 1] "-" v[rows, 1], "grows")
      for (i = 1; i <= n; i++) {
        if (index(" " want " ", " " name[i] " ") == 0) continue
        line = sprintf("%-8s", name[i])
        for (r = 2; r <= rows; r++) line = line sprintf(" %9s", e(r - 1, r, i))
        whole = e(1, rows, i)
        grows = whole == "-" ? "-" : whole < 1.4 ? "per node" : whole <= 2.3 ? "per pair" : "faster than per pair"
        print line sprintf(" %9s  %s", whole, grows)
      }
    }' "$ROWS.$via"
done
rm -f "$ROWS" "$ROWS".* "$PEAKS"
