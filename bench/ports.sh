#!/bin/bash
# bench/ports: the ports stage on N simulated nodes, all ordered pairs, 10
# ports per receiver (its SSH port, the rendezvous port 29500 and 8 ports
# of its ephemeral range): N*(N-1)*10 probes. Prints, per cluster size, the
# probe phase (every node probing every other at once), the whole stage
# (listen + probe + stop) and the run, with probes per second; then the
# same with one node dropping tcp/29500, where some probes must wait for
# their deadline (timeout_ms). Needs root.
#   bench/ports.sh BUILD_DIR [NODES...]      (default: 16 32)
set -u
BUILD=${1:-build}
shift
SIZES=("$@")
[ ${#SIZES[@]} -gt 0 ] || SIZES=(16 32)
HERE=$(cd "$(dirname "$0")" && pwd)
SC="$HERE/../tests/cluster/simcluster.sh"
export SIMCLUSTER_PREFIX=ccpbench SIMCLUSTER_DIR=/tmp/simcluster-ccpbench
D=$SIMCLUSTER_DIR
TIMEOUT_MS=2000
[ "$(id -u)" = 0 ] || { echo "bench/ports needs root"; exit 1; }
trap '"$SC" down >/dev/null 2>&1' EXIT

now() { date +%s.%N; }
rows=()
ratios=()

# run_once LABEL: one run of the ports stage on the cluster as it is.
run_once() {
  local label=$1 db=$D/bench.db t0 t1 meta
  rm -f "$db"
  t0=$(now)
  "$BUILD/clustercheck" run "$D/bench.toml" --stages ports --db "$db" >"$D/run.out" 2>&1
  local rc=$?
  t1=$(now)
  meta=$(sqlite3 -separator ' ' "$db" "select json_extract(meta,'\$.ports.nodes'),
      json_extract(meta,'\$.ports.probes'), json_extract(meta,'\$.ports.listen_ms'),
      json_extract(meta,'\$.ports.probe_ms') from runs where id=1")
  # shellcheck disable=SC2086  # word-split on purpose
  set -- $meta
  [ $# -eq 4 ] || { echo "no ports summary in the run:"; cat "$D/run.out"; return 1; }
  local open retests
  open=$(sqlite3 "$db" "select count(*) from pair_results where state='open'")
  # retested/confirmed/flaky, the batches (senders per receiver each) and
  # the retest phase's seconds.
  retests=$(sqlite3 "$db" "select json_extract(meta,'\$.\"retests.ports\".retested') || '/' ||
      json_extract(meta,'\$.\"retests.ports\".confirmed') || '/' ||
      json_extract(meta,'\$.\"retests.ports\".flaky') || ' ' ||
      (select group_concat(json_extract(value,'\$.senders_per_receiver'), ',')
         from json_each(json_extract(meta,'\$.ports.batches'))) || ' ' ||
      printf('%.2f', json_extract(meta,'\$.ports.retest_ms') / 1000.0) from runs where id=1")
  rows+=("$(printf '%-10s %5s %8s %8s %10.2f %12.0f %10.2f %9.2f %3s  %s' "$label" "$1" "$2" "$open" \
      "$(echo "$4 / 1000" | bc -l)" "$(echo "$2 / ($4 / 1000)" | bc -l)" \
      "$(echo "$3 / 1000" | bc -l)" "$(echo "$t1 - $t0" | bc)" "$rc" "$retests")")
}

# peer_once N: the named peer, nmap (TCP connect scan, no ping, no DNS),
# probing the same 10 ports of every other node from every node at once,
# as the stage does. Only tcp/22 listens then, so nmap mostly meets
# refusals; the stage meets its own listeners.
peer_once() {
  local n=$1 t0 t1 i j targets ports
  ports=22,29500$(for k in $(seq 0 7); do printf ',%d' $((32768 + k * 3500)); done)
  t0=$(now)
  for i in $(seq "$n"); do
    targets=$(for j in $(seq "$n"); do [ "$j" = "$i" ] || "$SC" addr "node$j"; done)
    # shellcheck disable=SC2086
    "$SC" exec "node$i" nmap -Pn -sT -n -T5 --max-retries 0 -p "$ports" $targets \
      >/dev/null 2>&1 &
  done
  wait
  t1=$(now)
  local probes=$((n * (n - 1) * 10))
  rows+=("$(printf '%-10s %5s %8s %8s %10.2f %12.0f %10s %9.2f' "nmap peer" "$n" "$probes" "-" \
      "$(echo "$t1 - $t0" | bc)" "$(echo "$probes / ($t1 - $t0)" | bc -l)" "-" \
      "$(echo "$t1 - $t0" | bc)")")
  peer_s=$(echo "$t1 - $t0" | bc)
}

for n in "${SIZES[@]}"; do
  echo "bench/ports: bringing up $n nodes..." >&2
  "$SC" up "$n" --base auto >/dev/null 2>&1 || { echo "simcluster up $n failed"; exit 1; }
  { cat "$D/inventory.toml"
    printf '\n[stages.ports]\nports = [29500]\nephemeral_samples = 8\ntimeout_ms = %d\n' $TIMEOUT_MS
  } >"$D/bench.toml"
  run_once clean || exit 1
  clean_probe_s=$(echo "${rows[-1]}" | awk '{print $5}')
  peer_once "$n"
  ratios+=("$(printf '%5s nodes: probe phase %.2f s vs nmap %.2f s, ratio %.2f' "$n" \
      "$clean_probe_s" "$peer_s" "$(echo "$clean_probe_s / $peer_s" | bc -l)")")
  "$SC" fault node2 iptables -A INPUT -p tcp --dport 29500 -j DROP
  run_once "1 DROP" || exit 1
  "$SC" fault node2 iptables -D INPUT -p tcp --dport 29500 -j DROP
done

printf '\nbench/ports: 10 ports per receiver (ssh, 29500, 8 ephemeral), timeout_ms %d, parallel 256, senders_per_receiver 8\n' \
  $TIMEOUT_MS
printf '%-10s %5s %8s %8s %10s %12s %10s %9s %3s  %s\n' case nodes probes open "probe s" "probes/s" \
  "listen s" "run s" rc "retested/confirmed/flaky batches(senders/receiver) retest-s"
printf '%s\n' "${rows[@]}"
echo "(run s includes connecting, pushing the agent and the facts stage; rc is the run's exit code: 0 = PASS)"
echo "clustercheck / nmap (probe phase; lower is better for clustercheck):"
printf '%s\n' "${ratios[@]}"
