#!/bin/bash
# GPU test of the nccl stage's mpirun launcher (run on the GPU machine, not
# in CI): clustercheck-nccl-mpi under `mpirun -np 2` on this host. A tiny
# wrapper gives each rank its own NCCL_HOSTID (host0, host1), so NCCL treats
# the two ranks as two nodes and talks NET/Socket over lo (NCCL_SOCKET_IFNAME
# =lo, NCCL_IB_DISABLE=1, NCCL_NVLS_ENABLE=0, set through the request's env
# as the stage sets a node's env). With one GPU both ranks use device 0
# (distinct host ids let NCCL share it); with two or more, rank r uses r.
#
#   tests/gpu/nccl_mpirun_on_gpu.sh BIN_DIR [SIZES_JSON]
#
# BIN_DIR holds clustercheck-nccl-mpi (a stripped copy is enough): the
# build dir, which ctest -L gpu passes.
# Checks: both ranks `pass`; every size's data check exact on both ranks;
# NCCL's log says nNodes 2 and "via NET/Socket"; rank 0's ncclUniqueId
# reached rank 1 (by MPI_Bcast: there is no other way in this binary).
# Exit 0 when all hold, 1 otherwise, 77 without a GPU or mpirun. Under
# 2 minutes (timeout).
set -u
BIN=${1:?usage: nccl_mpirun_on_gpu.sh BIN_DIR [SIZES_JSON]}
. "$(dirname "$0")/lib/gpu_present.sh"
gpu_present || exit 77
command -v mpirun >/dev/null || { echo "SKIP: no mpirun"; exit 77; }
PROBE=$(cd "$BIN" && pwd)/clustercheck-nccl-mpi
SIZES=${2:-'[1024, 1048576, 67108864]'}
[ -x "$PROBE" ] || { echo "FAIL: no $PROBE"; exit 1; }
NGPU=$(timeout 20 nvidia-smi -L | grep -c '^GPU')
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# Where libnccl.so.2 lives here: $NCCL_LIB_DIR, a pip wheel, or ldconfig
# (else the agent code's own search).
NCCL_DIR=${NCCL_LIB_DIR:-}
[ -z "$NCCL_DIR" ] && NCCL_DIR=$(timeout 20 python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib"))' 2>/dev/null)
[ -z "$NCCL_DIR" ] && NCCL_DIR=$(ldconfig -p 2>/dev/null | awk '/libnccl\.so\.2 /{print $NF; exit}' | xargs -r dirname)
LIBS='[]'
[ -n "$NCCL_DIR" ] && LIBS="[\"$NCCL_DIR\"]"

G1=0; [ "$NGPU" -ge 2 ] && G1=1
ENV='{"NCCL_SOCKET_IFNAME":"lo","NCCL_IB_DISABLE":"1","NCCL_NVLS_ENABLE":"0"}'
REQ="{\"sizes\":$SIZES,\"iters\":10,\"warmup\":3,\"timeout_s\":30,\"ranks\":[
 {\"gpu\":0,\"env\":$ENV,\"library_paths\":$LIBS},
 {\"gpu\":$G1,\"env\":$ENV,\"library_paths\":$LIBS}]}"
REQ=$(echo "$REQ" | tr -d '\n')

cat >"$TMP/rank.sh" <<W
#!/bin/sh
export NCCL_HOSTID=host\$OMPI_COMM_WORLD_RANK
exec "$PROBE" "\$@"
W
chmod +x "$TMP/rank.sh"

ROOT=(); [ "$(id -u)" = 0 ] && ROOT=(--allow-run-as-root)
echo "probe: $PROBE ($NGPU GPU(s); ranks on GPUs 0 and $G1)"
echo "libnccl.so.2 dir: ${NCCL_DIR:-<loader search>}"
mpirun --version | head -1
set -x
timeout -k 10 110 mpirun "${ROOT[@]}" -np 2 --bind-to none --tag-output \
  --mca btl self,tcp --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo \
  "$TMP/rank.sh" --request "$REQ" >"$TMP/out" 2>"$TMP/err"
rc=$?
set +x
echo "mpirun exited $rc"
sed 's/"text":"[^"]*/"text":"…/' "$TMP/out" | cut -c1-400
[ -s "$TMP/err" ] && { echo "--- stderr:"; tail -20 "$TMP/err"; }

python3 - "$TMP/out" "$SIZES" <<'PY'
import json, sys
ranks = {}
for line in open(sys.argv[1]):
    at = line.find("CCNCCL ")
    if at < 0: continue
    m = json.loads(line[at + 7:])
    r = ranks.setdefault(m["rank"], {"sizes": [], "log": "", "outcome": None, "id": False})
    if m.get("type") != "result": continue
    d = m.get("data", {})
    if m["name"] == "size": r["sizes"].append(d)
    elif m["name"] in ("nccl_log", "nccl_log_part"): r["log"] += d.get("text", "")
    elif m["name"] == "outcome": r["outcome"] = d
    elif m["name"] == "nccl_id": r["id"] = True
sizes = json.loads(sys.argv[2])
bad = []
for k in (0, 1):
    r = ranks.get(k)
    if r is None: bad.append(f"rank {k}: no output"); continue
    o = r["outcome"] or {}
    if o.get("outcome") != "pass": bad.append(f"rank {k}: outcome {o}")
    got = [s["bytes"] for s in r["sizes"] if s.get("data_ok") is True and s.get("mismatches") == 0]
    if got != sizes: bad.append(f"rank {k}: exact sizes {got}, want {sizes}")
    for s in r["sizes"]:
        print(f"rank {k}: {s['bytes']:>10} B  time {s.get('time_us')} us  busbw {s.get('busbw')} GB/s  data_ok {s.get('data_ok')}")
    if "nNodes 2" not in r["log"]: bad.append(f"rank {k}: NCCL's log lacks 'nNodes 2'")
    if "via NET/Socket" not in r["log"]: bad.append(f"rank {k}: NCCL's log lacks 'via NET/Socket'")
if not ranks.get(0, {}).get("id"): bad.append("rank 0 made no id")
for b in bad: print("FAIL:", b)
print("PASS" if not bad else "FAIL")
sys.exit(1 if bad else 0)
PY
probe_rc=$?

# The same through the stage: `clustercheck run` with launcher = "mpirun" on
# two local simulated nodes (each its own NCCL_HOSTID), when clustercheck
# and its agent sit beside the probe.
stage_rc=0
if [ -x "$BIN/clustercheck" ] && [ -x "$BIN/clustercheck-agent" ]; then
  lib_line=""
  [ -n "$NCCL_DIR" ] && lib_line="library_paths = [\"$NCCL_DIR\"]"
  cat >"$TMP/inv.toml" <<TOML
name = "gpu-mpirun"
transport = "local"
[[nodes]]
name = "sim1"
env = { NCCL_HOSTID = "host1", NCCL_NVLS_ENABLE = "0", NCCL_SOCKET_IFNAME = "lo", NCCL_IB_DISABLE = "1" }
$lib_line
[[nodes]]
name = "sim2"
env = { NCCL_HOSTID = "host2", NCCL_NVLS_ENABLE = "0", NCCL_SOCKET_IFNAME = "lo", NCCL_IB_DISABLE = "1" }
$lib_line
[stages]
run = ["facts", "nccl"]
[stages.nccl]
launcher = "mpirun"
sizes = ["1M", "64M"]
iters = 10
warmup = 3
timeout_s = 60
TOML
  echo; echo "=== clustercheck run, nccl stage with launcher = \"mpirun\""
  timeout 200 "$BIN/clustercheck" run "$TMP/inv.toml" --db "$TMP/cc.db" >"$TMP/run.out" 2>&1
  stage_rc=$?
  sed 's/^/  | /' "$TMP/run.out" | tail -40
  echo "clustercheck run exited $stage_rc"
  python3 - "$TMP/cc.db" >"$TMP/pairs.txt" <<'PY2'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for row in db.execute("select src, dst, check_name, outcome, value, message from pair_results where stage='nccl'"):
    print(*row)
for row in db.execute("select node, check_name, outcome, message from node_results where stage='nccl'"):
    print(*row)
for row in db.execute("select json_extract(meta, '$.nccl.launcher'), json_extract(meta, '$.nccl.mpirun.launches') from runs"):
    print("launcher", *row)
PY2
  sed 's/^/  db| /' "$TMP/pairs.txt" | cut -c1-300
  if [ $stage_rc -eq 0 ] && grep -q "pass.*via NET/Socket" "$TMP/pairs.txt" &&
     grep -q "^launcher mpirun" "$TMP/pairs.txt"; then
    echo "ok   stage with launcher = mpirun: pass, via NET/Socket"
  else
    echo "FAIL stage with launcher = mpirun"; stage_rc=1
  fi
fi
[ $probe_rc -eq 0 ] && [ $stage_rc -eq 0 ] && echo "RESULT: PASS" || echo "RESULT: FAIL"
[ $probe_rc -eq 0 ] && [ $stage_rc -eq 0 ]
