#!/bin/bash
# On the GPU machine (not CI): the agent's `health` readings of the real GPU
# next to nvidia-smi's answers for the same fields (issue 15): PCIe
# generation and width now and at most, uncorrected ECC, pending / failed
# row remaps, clock event reasons, temperature; and the kernel log, read
# with no Xid in it, and how many lines. Nothing of nvidia-smi is parsed by
# the product; this script only compares.
#   tests/gpu/health_on_gpu.sh [BUILD_DIR | AGENT]    (default build)
# ctest -L gpu runs it with the build dir; exit 77 (skipped) without a GPU.
set -u
. "$(dirname "$0")/lib/gpu_present.sh"
AGENT=${1:-build}
[ -d "$AGENT" ] && AGENT=$AGENT/clustercheck-agent
gpu_present || exit 77
[ -x "$AGENT" ] || { echo "FAIL: no agent binary $AGENT"; exit 1; }
out=${OUT:-/tmp}
health=$(echo '{"v":1,"id":1,"cmd":"health","args":{}}' | timeout 120 "$AGENT" | grep '"name":"health"')
[ -n "$health" ] || { echo "FAIL: no health result"; exit 1; }
echo "$health" >"$out/health.json"
q=pci.bus_id,pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max,clocks_event_reasons.active,ecc.errors.uncorrected.volatile.total,remapped_rows.pending,remapped_rows.failure,temperature.gpu,power.draw
nvidia-smi --query-gpu=$q --format=csv,noheader,nounits >"$out/smi.csv"
echo "nvidia-smi: $(cat "$out/smi.csv")"
python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
h = json.loads(open(out + "/health.json").read())["data"]
smi = [s.strip() for s in open(out + "/smi.csv").readline().split(",")]
g = h["gpu"]
print("agent gpu.status :", g.get("status"), g.get("reason", ""))
gp = g["gpus"][0]
p = gp.get("pcie", {})
mine = {
    "bus_id": gp.get("bus_id"),
    "gen": p.get("gen"), "max_gen": p.get("max_gen"),
    "width": p.get("width"), "max_width": p.get("max_width"),
    "reasons": gp.get("clock_event_reasons"),
    "ecc_volatile_uncorrected": gp.get("ecc", {}).get("volatile_uncorrected"),
    "remap_pending": gp.get("remapped_rows", {}).get("pending"),
    "remap_failure": gp.get("remapped_rows", {}).get("failure"),
    "temperature_c": gp.get("temperature_c"), "power_w": gp.get("power_w"),
}
theirs = {
    "bus_id": smi[0].lower()[4:], "gen": int(smi[1]), "max_gen": int(smi[2]),
    "width": int(smi[3]), "max_width": int(smi[4]), "reasons": int(smi[5], 16),
    "ecc_volatile_uncorrected": int(smi[6]) if smi[6].isdigit() else None,
    "remap_pending": smi[7] == "Yes", "remap_failure": smi[8] == "Yes",
    "temperature_c": int(smi[9]), "power_w": float(smi[10]),
}
ok = True
for k in mine:
    same = mine[k] == theirs[k]
    if k == "temperature_c": same = mine[k] is not None and abs(mine[k] - theirs[k]) <= 2
    if k == "power_w": same = mine[k] is not None and abs(mine[k] - theirs[k]) <= 0.25 * theirs[k] + 5
    if k == "reasons": same = mine[k] is not None and (mine[k] & ~0x1) == (theirs[k] & ~0x1)
    ok = ok and same
    print(f"  {k:26} agent {mine[k]!s:16} nvidia-smi {theirs[k]!s:16} {'same' if same else 'DIFFERENT'}")
print("agent sysfs pcie :", p.get("sysfs"))
print("agent mig/persistence/fabric:", gp.get("mig_mode"), gp.get("persistence_mode"), gp.get("fabric_state"))
log = h["kernel_log"]
print("kernel log       :", log.get("status"), log.get("source"), log.get("lines"), "lines,",
      len(log.get("events", [])), "Xid events", log.get("reason", ""))
ok = ok and log.get("status") == "ok" and log.get("lines", 0) > 0 and not log.get("events")
print("ib               :", h["ib"].get("status"), h["ib"].get("reason", ""))
print("MATCH" if ok else "MISMATCH")
sys.exit(0 if ok else 1)
PY
