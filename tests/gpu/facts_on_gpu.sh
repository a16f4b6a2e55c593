#!/bin/bash
# On the GPU machine (not CI): the agent's facts next to nvidia-smi's own
# answers, so a person (and this script) can see they agree: driver, GPU,
# CUDA driver API version, NCCL path and version.
#   tests/gpu/facts_on_gpu.sh [BUILD_DIR | AGENT]    (default build)
# ctest -L gpu runs it with the build dir; exit 77 (skipped) without a GPU.
set -u
. "$(dirname "$0")/lib/gpu_present.sh"
AGENT=${1:-build}
[ -d "$AGENT" ] && AGENT=$AGENT/clustercheck-agent
gpu_present || exit 77
[ -x "$AGENT" ] || { echo "FAIL: no agent binary $AGENT"; exit 1; }
facts=$(echo '{"v":1,"id":1,"cmd":"facts","args":{"python":"python3"}}' | timeout 120 "$AGENT" | grep '"name":"facts"')
[ -n "$facts" ] || { echo "FAIL: no facts"; exit 1; }
echo "$facts" > "${OUT:-/tmp}/facts.json"
smi=$(nvidia-smi --query-gpu=driver_version,name,uuid,pci.bus_id,memory.total,vbios_version,persistence_mode --format=csv,noheader)
echo "nvidia-smi: $smi"
nvidia-smi | grep -o "CUDA Version: [0-9.]*"
python3 - "$smi" <<'PY'
import json, sys, os
f = json.loads(open(os.environ.get("OUT", "/tmp") + "/facts.json").read())["data"]
smi = [s.strip() for s in sys.argv[1].splitlines()[0].split(",")]
g = f["gpu"]
print("agent gpu.status     :", g.get("status"), g.get("reason", ""))
print("agent driver_version :", g.get("driver_version"), "| nvidia-smi:", smi[0])
gp = g.get("gpus", [{}])[0]
print("agent gpu[0]         :", gp.get("name"), gp.get("uuid"), gp.get("pci_bus_id"), gp.get("memory_bytes"), gp.get("vbios"), gp.get("persistence_mode"))
print("nvidia-smi gpu[0]    :", smi[1:])
print("agent topology       :", g.get("topology"))
print("agent cuda           :", f["cuda"])
print("agent nccl           :", {k: f["nccl"].get(k) for k in ("status", "path", "version", "version_full")})
print("agent torch          :", f.get("torch"))
print("agent rdma           :", f.get("rdma"))
ok = g.get("driver_version") == smi[0] and gp.get("name") == smi[1] and gp.get("uuid") == smi[2]
ok = ok and f["cuda"].get("driver_api_version", "").startswith("13.")
ok = ok and f["nccl"].get("status") == "ok"
print("MATCH" if ok else "MISMATCH")
sys.exit(0 if ok else 1)
PY
