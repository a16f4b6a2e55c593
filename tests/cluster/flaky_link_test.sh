#!/usr/bin/env bash
# shellcheck disable=SC2015  # `check && ok || not_ok` is intended
# A flaky link is `warn flaky`, not an accusation (issue 17): 6 nodes with
# data (eth0) and mgmt (eth1, ssh) networks; node3 drops a share of the
# packets that reach it on its data interface. This kernel has no tc netem,
# so the loss is `iptables -m statistic --mode random --probability P -j
# DROP` inside node3 on eth0. P is chosen so that a first attempt (a 1 s
# connect deadline: one lost SYN or SYN-ACK is enough) fails now and then
# among node3's ~100 port probes, while a retest (quiet, longer deadline:
# the kernel's SYN retry at 1 s comes inside it) needs two losses in a row.
# The pair stages (nics, ports) run; the run must end with exit 0 and its
# verdicts must be `warn` of kind `flaky`, each naming a pair with node3,
# and nothing else. Random by nature: the test says how many first
# attempts failed; with none, it skips (77) rather than pass on nothing.
# ctest label "cluster"; $1 is the build dir. Exit 77 = skip.
set -u
BUILD=$(cd "${1:?build dir}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
sc=$here/simcluster.sh
CC=$BUILD/clustercheck
LOSS=${FLAKY_LOSS:-0.1}

# shellcheck source=tests/cluster/testlib.sh
. "$here/testlib.sh"
command -v jq >/dev/null || { echo "skip: no jq"; exit 77; }
command -v iptables >/dev/null || { echo "skip: no iptables"; exit 77; }
[ -x "$CC" ] || { echo "FAIL: no $CC"; exit 1; }
cluster_test_start fl flaky

"$sc" up 6 --nics 2 --ssh-nic 1 --base auto >"$dir/up.log" 2>&1 ||
  { cat "$dir/up.log"; echo "FAIL: simcluster up"; exit 1; }
"$sc" fault node3 iptables -A INPUT -i eth0 -m statistic --mode random --probability "$LOSS" -j DROP ||
  { echo "FAIL: iptables fault"; exit 1; }
echo "# node3 drops $LOSS of what reaches its eth0"

cp "$dir/inventory.toml" "$dir/flaky.toml"
cat >>"$dir/flaky.toml" <<'TOML'

[stages.nics]
timeout_ms = 1000
[stages.ports]
timeout_ms = 1000
TOML

"$CC" run "$dir/flaky.toml" --stages facts,nics,ports --db "$DB" >"$dir/run.out" 2>"$dir/run.err"
rc=$?
echo "# clustercheck run exited $rc"
sed 's/^/  > /' "$dir/run.out"
dropped=$("$sc" exec node3 iptables -L INPUT -v -x -n | awk '/statistic/ {print $1}')
echo "# node3 dropped ${dropped:-?} packets"
meta=$(q "select meta from runs where id=1")
echo "# retests: $(jq -c '[to_entries[] | select(.key | startswith("retests."))] | from_entries' <<<"$meta" 2>&1)"

"$CC" report --db "$DB" --json >"$dir/report.json" 2>"$dir/report.err" || not_ok "report --json exited $?"
retested=$(jq '[to_entries[] | select(.key | startswith("retests.")) | .value.retested // .value.retests // 0] | add // 0' <<<"$meta" 2>/dev/null)
# A first attempt failed where a pair result was tested twice or (without
# confirmation) is not pass.
first_failures=$(q "select count(*) from pair_results where run_id=1 and (json_extract(evidence, '\$.confirmation') is not null or outcome not in ('pass','skip'))")
if [ "${first_failures:-0}" = 0 ]; then
  echo "skip: no first attempt failed (loss $LOSS; retests ${retested:-?}): nothing to confirm"
  exit 77
fi
echo "# $first_failures pair results failed a first attempt; ${retested:-0} retests"

[ $rc -eq 0 ] && ok "run exits 0 (a warning is not a failure)" || not_ok "run exits 0, not $rc"
verdicts() { jq -r "$1" "$dir/report.json" 2>&1; }
n_flaky=$(verdicts '[.verdicts[] | select(.kind == "flaky")] | length')
[ "${n_flaky:-0}" -ge 1 ] && ok "a flaky verdict ($n_flaky)" || not_ok "a flaky verdict"
others=$(verdicts '[.verdicts[] | select(.severity != "pass" and .severity != "skip" and (.kind != "flaky" or .severity != "warn"))] | length')
[ "$others" = 0 ] && ok "every verdict that is not pass or skip is warn flaky" ||
  not_ok "every verdict that is not pass or skip is warn flaky ($others others)"
strangers=$(verdicts '[.verdicts[] | select(.kind == "flaky") | (.pairs // [])[] | select(index("node3") == null)] | length')
[ "$strangers" = 0 ] && ok "every flaky pair has node3 in it" || not_ok "every flaky pair has node3 in it ($strangers do not)"
expect "no pair result without node3 was tested twice" 0 \
  "select count(*) from pair_results where run_id=1 and 'node3' not in (src, dst) and json_extract(evidence, '\$.confirmation') is not null"
expect "no result is fail or hang" "" \
  "select group_concat(distinct stage || '/' || check_name) from (select stage, check_name, outcome from node_results where run_id=1 union all select stage, check_name, outcome from pair_results where run_id=1 union all select stage, kind, severity from verdicts where run_id=1) where outcome in ('fail','hang')"
expect "flaky pairs keep both attempts in their evidence" 0 \
  "select count(*) from pair_results where run_id=1 and json_extract(evidence, '\$.confirmation')='flaky' and json_array_length(json_extract(evidence, '\$.attempts')) != 2"

if ! cluster_test_finish; then
  echo "# every verdict:"
  jq -r '.verdicts[] | "  \(.severity) \(.kind) \(.stage)/\(.check): \(.summary)"' "$dir/report.json" 2>&1
  q "select '  ' || stage || '/' || check_name || ' ' || outcome || ' x' || count(*) || ': ' || min(message) from pair_results where run_id=1 and outcome not in ('pass','skip') group by stage, check_name, outcome"
  exit 1
fi
