#!/bin/bash
# bench/scale: a healthy full non-GPU run on N simulated nodes, set up as
# tests/cluster/healthy_test.sh sets up 8 (issue 17): data (MTU 9000) and
# mgmt (MTU 1500, ssh) networks, docker0 on every node, strict host keys
# with a known_hosts of the inventory's addresses only, [defaults] gpus = 0,
# all stages. Prints the wall time, the controller's CPU (user + sys) and
# peak RSS (/usr/bin/time -v), the ports stage's probes per second, the
# retests of every pair stage, and every verdict. The exit status is the
# run's (0 = PASS). Needs root.
#   bench/scale.sh N [BUILD_DIR]            (BUILD_DIR default: build)
# Keep N at 16 or below on a shared machine; 64 and 128 are the lead's.
set -u
N=${1:?usage: bench/scale.sh N [BUILD_DIR]}
case $N in ""|*[!0-9]*) echo "bench/scale: N must be a number: $N"; exit 2 ;; esac
HERE=$(cd "$(dirname "$0")" && pwd)
BUILD=$(cd "${2:-$HERE/../build}" && pwd) || exit 2
SC="$HERE/../tests/cluster/simcluster.sh"
export SIMCLUSTER_PREFIX=ccscale SIMCLUSTER_DIR=/tmp/simcluster-ccscale
D=$SIMCLUSTER_DIR
# The run's files stay for a look afterwards (the cluster's DIR goes with it).
OUT=/tmp/ccscale-bench-$N
[ "$(id -u)" = 0 ] || { echo "bench/scale needs root"; exit 2; }
[ -x /usr/bin/time ] || { echo "bench/scale needs /usr/bin/time (apt-get install time)"; exit 2; }
for t in jq sqlite3; do command -v $t >/dev/null || { echo "bench/scale needs $t"; exit 2; }; done
trap '"$SC" down >/dev/null 2>&1' EXIT

rm -rf "$OUT"
mkdir -p "$OUT"
echo "bench/scale: bringing up $N nodes (files in $OUT)..." >&2
"$SC" up "$N" --nics 2 --mtu-data 9000 --ssh-nic 1 --docker0 --known-hosts inventory --gpus 0 \
  --base auto >"$OUT/up.log" 2>&1 || { cat "$OUT/up.log"; echo "simcluster up $N failed"; exit 2; }
{ cat "$D/inventory.toml"
  printf '\n[stages.mpi]\niters = 5\nmessage_size = "64K"\n'
} >"$OUT/scale.toml"
DB=$OUT/scale.db

/usr/bin/time -v -o "$OUT/time.txt" "$BUILD/clustercheck" run "$OUT/scale.toml" --db "$DB" \
  >"$OUT/run.out" 2>"$OUT/run.err"
rc=$?

tv() { awk -F': ' -v k="$1" '$1 ~ k {print $2}' "$OUT/time.txt"; }
wall=$(tv 'Elapsed \\(wall clock\\)')
user=$(tv 'User time')
sys=$(tv 'System time')
rss_kb=$(tv 'Maximum resident set size')
meta=$(sqlite3 "$DB" "select meta from runs where id=1")
probes=$(jq -r '.ports.probes // 0' <<<"$meta")
probe_ms=$(jq -r '.ports.probe_ms // 0' <<<"$meta")
rate=$(awk -v p="$probes" -v ms="$probe_ms" 'BEGIN { if (ms > 0) printf "%.0f", p / (ms / 1000); else print "-" }')

echo "== bench/scale: $N nodes, all stages, exit $rc =="
printf '%-22s %s\n' "first line" "$(head -1 "$OUT/run.out")"
printf '%-22s %s\n' "wall" "$wall"
printf '%-22s %.2f s (user %s + sys %s)\n' "controller CPU" "$(echo "$user + $sys" | bc)" "$user" "$sys"
printf '%-22s %.1f MB\n' "controller peak RSS" "$(echo "$rss_kb / 1024" | bc -l)"
printf '%-22s %s probes in %s ms: %s probes/s\n' "ports" "$probes" "$probe_ms" "$rate"
printf '%-22s %s\n' "retests" "$(jq -c '[to_entries[] | select(.key | startswith("retests."))] | from_entries' <<<"$meta")"
echo "stage times (run's progress lines):"
grep -E '^  [a-z]+ +[0-9]+/[0-9]+ .* in [0-9.]+s$' "$OUT/run.err" | sed 's/^/  /'
echo "results that are not pass or skip:"
sqlite3 "$DB" "select '  ' || stage || '/' || check_name || ' ' || outcome || ' x' || count(*) || ': ' || substr(min(message), 1, 160) from (select stage, check_name, outcome, message from node_results where run_id=1 union all select stage, check_name, outcome, message from pair_results where run_id=1) where outcome not in ('pass','skip') group by stage, check_name, outcome"
echo "verdicts:"
"$BUILD/clustercheck" report --db "$DB" --json 2>/dev/null |
  jq -r '.verdicts[] | "  \(.severity) \(.kind) \(.stage)/\(.check): \(.summary)"' | head -50
exit $rc
