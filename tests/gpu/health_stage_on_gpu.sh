#!/bin/bash
# On the GPU machine (not CI): `clustercheck run --stages health` on this
# one machine through the local transport, as a Slurm prolog would use it:
# the H200 must pass (PCIe at its maximum, no ECC, no remap, no Xid), the
# missing InfiniBand must be a skip with its reason, and the exit code 0.
#   tests/gpu/health_stage_on_gpu.sh [BUILD_DIR]    (default build)
# ctest -L gpu runs it with the build dir; exit 77 (skipped) without a GPU.
set -u
. "$(dirname "$0")/lib/gpu_present.sh"
BUILD=${1:-build}
gpu_present || exit 77
[ -x "$BUILD/clustercheck" ] || { echo "FAIL: no $BUILD/clustercheck"; exit 1; }
out=${OUT:-$(mktemp -d)}
cat >"$out/one.toml" <<'TOML'
name = "gpu-machine"
transport = "local"
[[nodes]]
name = "gpu1"
address = "127.0.0.1"
gpus = 1
TOML
"$BUILD/clustercheck" run "$out/one.toml" --stages health --db "$out/health.db" >"$out/run.out" 2>&1
rc=$?
cat "$out/run.out"
"$BUILD/clustercheck" report --db "$out/health.db" --json >"$out/report.json" 2>/dev/null
echo "exit code $rc"
python3 - "$out/report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
rows = [x for x in r["node_results"] if x["stage"] == "health"]
for x in rows:
    print(f'  {x["outcome"]:5} {x["check"]:14} {x["message"][:110]}')
gpu = [x for x in rows if x["check"] == "gpu"]
log = [x for x in rows if x["check"] == "kernel_log"]
ib = [x for x in rows if x["check"] == "ib"]
ok = gpu and gpu[0]["outcome"] == "pass" and log and log[0]["outcome"] == "pass" \
     and ib and ib[0]["outcome"] == "skip"
ok = ok and not [x for x in rows if x["outcome"] in ("fail", "warn", "hang", "error")]
print("HEALTH PASS ON THE H200" if ok else "UNEXPECTED")
sys.exit(0 if ok else 1)
PY
py=$?
[ $rc -eq 0 ] && [ $py -eq 0 ]
