#!/bin/bash
# A burn-in on the lent GPU machine (not CI, issue 16): `clustercheck
# burnin --for DURATION` over 4 simulated nodes on the one H200, NCCL only,
# through the local transport; each node's agent has its own NCCL_HOSTID,
# NCCL_NVLS_ENABLE=0, NCCL_SOCKET_IFNAME=lo, so NCCL treats them as hosts
# and talks NET/Socket over lo. Large sizes, each iteration's data checked
# (check_iters), float/bf16/half.
#
#   tests/gpu/burnin_on_gpu.sh BIN_DIR [DURATION]   (default 9m: the lent
#                                                  machine cuts a command
#                                                  at 10 min; the 10m run
#                                                  was started detached
#                                                  (setsid nohup) in one
#                                                  call and read in the next)
# Prints busbw per round and pair, GPU temperature / SM clock / power per
# round, the data checks (checked iterations, mismatches), the verdicts,
# and writes the HTML report to $OUT (when set) or the temp dir.
# Exit 0 when every check held, 1 otherwise, 77 without a GPU.
set -u
. "$(dirname "$0")/lib/gpu_present.sh"
BIN=${1:?usage: $0 DIR_WITH_clustercheck_AND_clustercheck-agent [DURATION]}
DURATION=${2:-9m}
BIN=$(cd "$BIN" && pwd)
CC="$BIN/clustercheck"
exec 2>&1
if [ -d "$BIN/../lib" ]; then
  export LD_LIBRARY_PATH="$(cd "$BIN/../lib" && pwd)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
[ -x "$CC" ] && [ -x "$BIN/clustercheck-agent" ] || { echo "FAIL: $BIN lacks the binaries"; exit 1; }
TMP=$(mktemp -d)
DEST=${OUT:-$TMP}
NO_GPU=0
gpu_present || NO_GPU=1
{
  echo 'name = "gpu-burnin"'; echo 'transport = "local"'
  for i in 1 2 3 4; do
    echo '[[nodes]]'; echo "name = \"sim$i\""
    echo "env = { NCCL_HOSTID = \"host$i\", NCCL_NVLS_ENABLE = \"0\", NCCL_SOCKET_IFNAME = \"lo\" }"
  done
  echo '[stages]'; echo 'run = ["facts", "health", "nccl"]'
  echo '[stages.nccl]'
  echo 'sizes = ["64M", "256M"]'
  echo 'dtypes = ["float", "bf16", "half"]'
  echo 'check_iters = 5'
} >"$TMP/inv.toml"
cat "$TMP/inv.toml"
if [ "$NO_GPU" = 1 ]; then
  # Without a GPU the NCCL-only burn-in must stop as skip (exit 3) with the
  # reason, never loop empty rounds that pass.
  "$CC" burnin "$TMP/inv.toml" --for 5s --db "$TMP/cc.db" >"$TMP/out.txt" 2>"$TMP/err.txt"
  rc=$?
  grep "burn-in: skip" "$TMP/out.txt"
  rm -rf "$TMP"
  [ "$rc" = 3 ] && exit 77
  echo "FAIL: without a GPU the burn-in exited $rc, not 3 (skip)"
  exit 1
fi
echo "== clustercheck burnin --for $DURATION"
"$CC" burnin "$TMP/inv.toml" --for "$DURATION" --db "$TMP/cc.db" >"$TMP/out.txt" 2>"$TMP/err.txt"
rc=$?
cat "$TMP/out.txt"; [ "$rc" = 2 ] && cat "$TMP/err.txt"
grep "burn-in round" "$TMP/err.txt" | sed -n '1p;$p'
echo "== exit $rc"
"$CC" report --db "$TMP/cc.db" --html "$DEST/burnin.html" >/dev/null 2>&1 && echo "HTML: $DEST/burnin.html ($(wc -c <"$DEST/burnin.html") bytes)"
cp "$TMP/cc.db" "$DEST/burnin.db" 2>/dev/null
python3 - "$TMP/cc.db" "$rc" <<'PY'
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1]); rc = int(sys.argv[2])
fails = []
def check(cond, what):
    print(("  ok   " if cond else "  FAIL ") + what, flush=True)
    if not cond: fails.append(what)
meta = json.loads(db.execute("select meta from runs where id=1").fetchone()[0])
b = meta.get("burnin", {})
ends = {int(k): v for k, v in b.get("round_end_s", {}).items()}
print(f"rounds done {b.get('rounds_done')}, elapsed {b.get('elapsed_s', 0):.0f} s")
print("== busbw (GB/s) per round and pair, float at the largest size")
rows = db.execute("select round, src, dst, check_name, outcome, value, evidence from pair_results "
                  "where run_id=1 and stage='nccl' and round>0 order by round, id").fetchall()
checked = mism = 0
for rnd, src, dst, chk, outcome, value, ev in rows:
    e = json.loads(ev)
    for s in e.get("sizes", []):
        checked += s.get("checked_iters", 0) or 0
        mism += s.get("check_mismatches", 0) or 0
    if chk == "allreduce":
        print(f"  round {rnd:3d} t={ends.get(rnd, 0):6.0f}s {src}-{dst} {outcome:5s} {value if value is not None else '-'}")
by_check = {}
for rnd, src, dst, chk, outcome, value, ev in rows:
    if value is not None: by_check.setdefault(chk, []).append(value)
for c, v in sorted(by_check.items()):
    v.sort(); print(f"  {c}: n={len(v)} min {v[0]:.2f} median {v[len(v)//2]:.2f} max {v[-1]:.2f}")
print("== GPU per round (sim1's sample: the one H200)")
for rnd, ev in db.execute("select round, evidence from node_results where run_id=1 and stage='health' "
                          "and check_name='sample' and node='sim1' order by round"):
    for g in json.loads(ev).get("gpus", []):
        clk = (g.get("clocks_mhz") or {})
        print(f"  round {rnd:3d} t={ends.get(rnd, 0):6.0f}s temp {g.get('temperature_c')} C  sm {clk.get('sm')} MHz  "
              f"power {g.get('power_w')} W  reasons {g.get('clock_event_reasons')}")
print("== verdicts")
for kind, sev, summary in db.execute("select kind, severity, summary from verdicts where run_id=1 and round=0"):
    print(f"  {sev} {kind}: {summary}")
bad = db.execute("select count(*) from pair_results where run_id=1 and round>0 and outcome in ('fail','hang')").fetchone()[0]
check(b.get("rounds_done", 0) >= 6, f"at least 6 rounds ({b.get('rounds_done')})")
check(len(rows) > 0, f"{len(rows)} NCCL pair results over the rounds")
check(checked > 0 and mism == 0, f"data check exact in every checked iteration ({checked} checked, {mism} mismatches)")
check(bad == 0, f"no pair failed or hung ({bad})")
check(rc == 0, f"burn-in exit 0 ({rc})")
sys.exit(1 if fails else 0)
PY
st=$?
rm -rf "$TMP"
exit $st
