#!/bin/bash
# bench/fanout: `clustercheck run --stages facts` on N simulated nodes
# (default 32) against pdsh running `true` on the same nodes with the same
# fanout. Prints the medians of 5, the ratio, the controller's peak RSS and
# the bytes pushed on the first and second runs. Needs root.
#   bench/fanout.sh BUILD_DIR [NODES]
set -u
BUILD=${1:-build}
N=${2:-32}
REPS=5
HERE=$(cd "$(dirname "$0")" && pwd)
SC="$HERE/../tests/cluster/simcluster.sh"
export SIMCLUSTER_PREFIX=ccbench SIMCLUSTER_DIR=/tmp/simcluster-ccbench
D=$SIMCLUSTER_DIR
[ "$(id -u)" = 0 ] || { echo "bench/fanout needs root"; exit 1; }
command -v pdsh >/dev/null || { echo "pdsh missing (scripts/install-deps.sh)"; exit 1; }
trap '"$SC" down >/dev/null 2>&1' EXIT
"$SC" up "$N" --base auto >/dev/null || exit 1
DB=$D/bench.db
rm -f "$DB"
hosts=$(for i in $(seq "$N"); do "$SC" addr "node$i"; done | paste -sd,)
FANOUT=32
export PDSH_SSH_ARGS_APPEND="-F $D/ssh_config -i $D/id_ed25519 -o UserKnownHostsFile=$D/known_hosts -o StrictHostKeyChecking=yes -o BatchMode=yes"

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
now() { date +%s.%N; }

cc_times=() pdsh_times=() rss=() pushed=()
for r in $(seq $REPS); do
  t0=$(now)
  /usr/bin/time -f "%M" -o "$D/rss" "$BUILD/clustercheck" run "$D/inventory.toml" \
      --stages facts --fanout $FANOUT --db "$DB" >/dev/null 2>&1
  t1=$(now)
  cc_times+=("$(echo "$t1 - $t0" | bc)")
  rss+=("$(cat "$D/rss")")
  pushed+=("$(sqlite3 "$DB" "select json_extract(meta,'$.bytes_pushed') from runs order by id desc limit 1")")
  t0=$(now)
  pdsh -R ssh -l root -f $FANOUT -w "$hosts" true >/dev/null 2>&1
  t1=$(now)
  pdsh_times+=("$(echo "$t1 - $t0" | bc)")
done
cc_med=$(printf '%s\n' "${cc_times[@]}" | median)
pdsh_med=$(printf '%s\n' "${pdsh_times[@]}" | median)
rss_max=$(printf '%s\n' "${rss[@]}" | sort -n | tail -1)
printf '\nbench/fanout: %d simulated nodes, fanout %d, %d repetitions\n' "$N" $FANOUT $REPS
printf '%-34s %10s\n' "what" "median s"
printf '%-34s %10.3f\n' "clustercheck run --stages facts" "$cc_med"
printf '%-34s %10.3f\n' "pdsh -f $FANOUT true" "$pdsh_med"
printf '%-34s %10.2f  (target <= 1.5)\n' "ratio clustercheck / pdsh" "$(echo "$cc_med / $pdsh_med" | bc -l)"
printf '%-34s %10.1f MB (target < 50)\n' "controller peak RSS" "$(echo "$rss_max / 1024" | bc -l)"
printf '%-34s %10s bytes\n' "agent bytes pushed, first run" "${pushed[0]}"
printf '%-34s %10s bytes (target 0)\n' "agent bytes pushed, second run" "${pushed[1]}"
printf 'all clustercheck runs: %s\nall pdsh runs: %s\n' "${cc_times[*]}" "${pdsh_times[*]}"
