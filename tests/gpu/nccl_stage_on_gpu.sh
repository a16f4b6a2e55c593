#!/bin/bash
# The `nccl` stage on the lent GPU machine (not CI): `clustercheck run` over
# 2 and then 4 simulated nodes through the local transport on one GPU, each
# node its own agent processes with NCCL_HOSTID=hostK, NCCL_NVLS_ENABLE=0,
# NCCL_SOCKET_IFNAME=lo (per-node env in the inventory), so NCCL treats
# them as separate hosts and talks NET/Socket over lo. Then PyTorch's
# all_reduce on the same setup and sizes, timed the same way.
#
#   tests/gpu/nccl_stage_on_gpu.sh BIN_DIR      (BIN_DIR holds clustercheck
#                                               and clustercheck-agent: the
#                                               build dir, as ctest -L gpu
#                                               passes; BIN_DIR/../lib, if
#                                               present, goes on
#                                               LD_LIBRARY_PATH)
# Scenarios (each under `timeout`; the whole script stays under 6 minutes):
#   A  2 nodes: AllReduce exact, nNodes 2, transport NET/Socket; busbw table
#   B  4 nodes: 4 intra, 6 pairs in 3 rounds, the cluster with nNodes 4
#   C  2 nodes, require_gdrdma = true: the pair fails, quoting NCCL's lines
#   D  4 nodes, sim3 with NCCL_SOCKET_IFNAME=doesnotexist0, phases cluster +
#      isolate: the cluster test hangs or fails, sim3 is named, the run ends
#   E  PyTorch all_reduce, 2 processes (NCCL_HOSTID host1/host2), A's sizes
# Everything goes to stdout. Exit 0 when every check held, 1 otherwise, 77
# without a GPU (after showing that the stage then skips with the reason).
set -u
. "$(dirname "$0")/lib/gpu_present.sh"
BIN=${1:?usage: $0 DIR_WITH_clustercheck_AND_clustercheck-agent}
BIN=$(cd "$BIN" && pwd)
CC="$BIN/clustercheck"
AGENT="$BIN/clustercheck-agent"
exec 2>&1
# A carried build brings the shared libraries the machine lacks in ../lib.
if [ -d "$BIN/../lib" ]; then
  export LD_LIBRARY_PATH="$(cd "$BIN/../lib" && pwd)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
[ -x "$CC" ] && [ -x "$AGENT" ] || { echo "FAIL: $BIN lacks clustercheck or clustercheck-agent"; exit 1; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
T0=$(date +%s)
BUDGET=340  # seconds for everything; each step gets what is left
FAILS=0
left() { local l=$((BUDGET - ($(date +%s) - T0))); [ $l -lt 5 ] && l=5; echo $l; }
cap() { local want=$1 l; l=$(left); [ "$want" -lt "$l" ] && echo "$want" || echo "$l"; }
PY=""
for p in python3 /opt/torch/.venv/bin/python3; do
  timeout 60 "$p" -c 'import torch' >/dev/null 2>&1 && { PY=$p; break; }
done
[ -n "$PY" ] || PY=python3
echo "clustercheck: $CC ($("$CC" --version 2>/dev/null | head -1))"
echo "python for the summaries and torch: $PY"

# inventory FILE N "SETTINGS" [NODE:ENV_ENTRY ...]
inventory() {
  local file=$1 n=$2 settings=$3; shift 3
  {
    echo 'name = "gpu-sim"'; echo 'transport = "local"'
    for i in $(seq 1 "$n"); do
      local ifname=lo extra=""
      for f in "$@"; do [ "${f%%:*}" = "sim$i" ] && ifname=${f#*:}; done
      echo '[[nodes]]'; echo "name = \"sim$i\""
      echo "env = { NCCL_HOSTID = \"host$i\", NCCL_NVLS_ENABLE = \"0\", NCCL_SOCKET_IFNAME = \"$ifname\" }"
    done
    echo '[stages]'; echo 'run = ["nccl"]'
    echo '[stages.nccl]'; printf '%b\n' "$settings"
  } >"$file"
}

cat >"$TMP/summary.py" <<'PY'
import json, sys
scenario, path, rc = sys.argv[1], sys.argv[2], int(sys.argv[3])
fails = []
def check(cond, what):
    print(("  ok   " if cond else "  FAIL ") + what, flush=True)
    if not cond: fails.append(what)
try:
    d = json.load(open(path))
except Exception as e:
    print(f"  FAIL no JSON from clustercheck run (exit {rc}): {e}")
    sys.exit(1)
nodes = [r for r in d["node_results"] if r["stage"] == "nccl"]
pairs = [r for r in d["pair_results"] if r["stage"] == "nccl"]
meta = d["run"].get("meta", {}).get("nccl", {})
print(f"  clustercheck run exited {rc}; {meta.get('tests')} NCCL tests in {meta.get('seconds', 0):.1f} s")
for r in nodes:
    print(f"  node {r['node']:6} {r['check']:18} {r['outcome']:5} {r['value']:12} {r['message'][:200]}")
def table(label, ev):
    tr = ev.get("transport", {})
    if tr:
        print(f"    {label}: network {tr.get('network')!r} interfaces {tr.get('interfaces')} nNodes {tr.get('nnodes')} "
              f"nRanks {tr.get('nranks')} paths {tr.get('paths')} NCCL {tr.get('nccl_version', '?')}")
        for l in tr.get("lines", []): print(f"      | {l}")
    if ev.get("sizes"):
        print(f"    {'size':>6} {'time_us':>10} {'algbw GB/s':>11} {'busbw GB/s':>11}  data")
        for s in ev["sizes"]:
            print(f"    {s['size']:>6} {s['time_us']:10.1f} {s['algbw']:11.3f} {s['busbw']:11.3f}  "
                  f"{'exact' if s['data_ok'] else 'WRONG'}")
for r in pairs:
    v = f"{r['value']:.3f} {r['unit']}" if r.get("value") is not None else "-"
    print(f"  pair {r['src']} <-> {r['dst']} [{r['evidence'].get('phase')}] {r['outcome']} {v}: {r['message'][:200]}")
    table("transport", r["evidence"])
for r in nodes:
    if r["check"] == "cluster": table("cluster", r["evidence"])
for v in d.get("verdicts", []):
    if v.get("stage") == "nccl":
        print(f"  verdict {v['severity']} {v['kind']} {v['nodes']}: {v['summary'][:240]}")
if "isolation" in meta:
    iso = meta["isolation"]
    print(f"  isolation: {iso['runs_after_cluster']} runs after the cluster test "
          f"({iso['pair_probes']} pair probes, {iso['group_tests']} group tests in {iso['group_rounds']} rounds)")
    for t in iso.get("tests", []): print(f"    round {t['round']} {t['purpose']:8} {t['nodes']:16} {t['outcome']}")

def ok_pair(r, n):
    tr = r["evidence"].get("transport", {})
    return (r["outcome"] == "pass" and tr.get("network") == "Socket" and tr.get("nnodes") == n
            and "NET/Socket" in tr.get("paths", []) and all(s["data_ok"] for s in r["evidence"]["sizes"]))
if scenario == "A":
    check(rc == 0, "A: run exits 0")
    check(len([r for r in nodes if r["check"] == "intra-node" and r["outcome"] == "pass"]) == 2, "A: both intra-node tests pass")
    check(len(pairs) == 1 and ok_pair(pairs[0], 2), "A: the pair passes, data exact, nNodes 2, via NET/Socket")
elif scenario == "B":
    check(rc == 0, "B: run exits 0")
    check(len([r for r in nodes if r["check"] == "intra-node" and r["outcome"] == "pass"]) == 4, "B: 4 intra-node tests pass")
    check(len(pairs) == 6 and all(ok_pair(r, 2) for r in pairs), "B: 6 pairs pass, each nNodes 2 via NET/Socket")
    check(meta.get("pairs", {}).get("rounds") == 3, "B: pairs ran in 3 rounds")
    cl = [r for r in nodes if r["check"] == "cluster"]
    check(len(cl) == 1 and cl[0]["outcome"] == "pass" and cl[0]["evidence"].get("transport", {}).get("nnodes") == 4,
          "B: the 4-node cluster test passes with nNodes 4")
elif scenario == "C":
    check(rc == 1, "C: run exits 1")
    check(len(pairs) == 1 and pairs[0]["outcome"] == "fail", "C: require_gdrdma fails the pair")
    lines = pairs[0]["evidence"].get("transport", {}).get("lines", []) if pairs else []
    check(any("NET/Socket" in l or "GPU Direct RDMA" in l for l in lines), "C: the verdict quotes NCCL's lines")
elif scenario == "D":
    check(rc == 1, "D: run exits 1 (not a timeout)")
    cl = [r for r in nodes if r["check"] == "cluster"]
    check(len(cl) == 1 and cl[0]["outcome"] in ("hang", "fail"), "D: the whole-cluster test hangs or fails")
    bad = [n for v in d.get("stage_verdicts", []) if v["kind"] == "bad-node" for n in v["nodes"]]
    check(bad == ["sim3"], f"D: sim3 is named the bad node (named: {bad})")
elif scenario == "skip":
    check(rc == 0, "no GPU: run exits 0")
    check(any(r["outcome"] == "skip" and r["message"] for r in nodes), "no GPU: the stage is skip with a reason")
if scenario in ("A",):
    with open(sys.argv[4], "w") as f:
        json.dump(pairs[0]["evidence"].get("sizes", []) if pairs else [], f)
sys.exit(1 if fails else 0)
PY

# scenario NAME INVENTORY TIMEOUT [extra summary arg]
scenario() {
  local name=$1 inv=$2 t; t=$(cap "$3"); shift 3
  echo; echo "=== $name: $(grep -c '^\[\[nodes\]\]' "$inv") nodes, timeout ${t}s"
  sed 's/^/  inv| /' "$inv"
  local s0; s0=$(date +%s)
  timeout -k 10 "$t" "$CC" run "$inv" --db "$TMP/$name.db" --agent "$AGENT" --json \
    >"$TMP/$name.json" 2>"$TMP/$name.err"
  local rc=$?
  echo "  (took $(( $(date +%s) - s0 )) s)"
  if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
    echo "  FAIL $name: clustercheck run was still going after ${t}s (a stuck run)"
    tail -20 "$TMP/$name.err" | sed 's/^/  err| /'
    FAILS=$((FAILS + 1)); return
  fi
  grep -E '^nccl:|error' "$TMP/$name.err" | head -5 | sed 's/^/  err| /'
  timeout 60 "$PY" "$TMP/summary.py" "$name" "$TMP/$name.json" "$rc" "$@" || FAILS=$((FAILS + 1))
}

SIZES='sizes = ["1M", "8M", "64M", "256M"]\niters = 20\nwarmup = 5\ntimeout_s = 60'
SMALL='sizes = ["1M", "64M"]\niters = 10\nwarmup = 3\ntimeout_s = 60'

if ! gpu_present; then
  echo "Cannot run scenarios A-E (AllReduce, transport, require_gdrdma, wrong"
  echo "NCCL_SOCKET_IFNAME, PyTorch). Showing the skip path:"
  inventory "$TMP/skip.toml" 2 "$SMALL"
  scenario skip "$TMP/skip.toml" 120
  echo; echo "SKIP: no GPU (skip path checked: $([ $FAILS = 0 ] && echo ok || echo FAILED))"
  [ $FAILS = 0 ] && exit 77 || exit 1
fi
timeout 20 nvidia-smi -L
ldconfig -p 2>/dev/null | grep -m2 libnccl

inventory "$TMP/A.toml" 2 "$SIZES"
scenario A "$TMP/A.toml" 150 "$TMP/A-sizes.json"
inventory "$TMP/B.toml" 4 "$SMALL"
scenario B "$TMP/B.toml" 150
inventory "$TMP/C.toml" 2 "$SMALL\nrequire_gdrdma = true"
scenario C "$TMP/C.toml" 90
inventory "$TMP/D.toml" 4 'sizes = ["1M"]\niters = 5\nwarmup = 2\ntimeout_s = 15\nphases = ["cluster", "isolate"]' \
  "sim3:doesnotexist0"
scenario D "$TMP/D.toml" 150

# --- E: PyTorch all_reduce on the same setup -------------------------------
echo; echo "=== E: PyTorch all_reduce, 2 processes on the one GPU, NCCL_HOSTID host1/host2, A's sizes"
cat >"$TMP/torch_ar.py" <<'PY'
import json, os, sys, torch, torch.distributed as dist
rank, sizes = int(os.environ["RANK"]), json.loads(sys.argv[1])
torch.cuda.set_device(0)
dist.init_process_group("nccl", rank=rank, world_size=2, device_id=torch.device("cuda:0"))
n = dist.get_world_size()
rows = []
for b in sizes:
    x = torch.full((b // 4,), float(rank + 1), device="cuda")
    for _ in range(5): dist.all_reduce(x)
    x.fill_(float(rank + 1)); dist.all_reduce(x); torch.cuda.synchronize()
    exact = bool((x == 3.0).all().item())
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    for _ in range(20): dist.all_reduce(x)
    e.record(); torch.cuda.synchronize()
    t = s.elapsed_time(e) * 1000 / 20
    algbw = b / (t / 1e6) / 1e9
    rows.append((b, t, algbw, algbw * 2 * (n - 1) / n, exact))
if rank == 0:
    v = torch.cuda.nccl.version()
    print(f"  torch {torch.__version__}, NCCL {'.'.join(map(str, v)) if isinstance(v, tuple) else v}")
    print(json.dumps(rows), file=open(sys.argv[2], "w"))
dist.destroy_process_group()
PY
SIZES_JSON='[1048576, 8388608, 67108864, 268435456]'
PORT=$((29600 + RANDOM % 300))
t=$(cap 150)
for r in 0 1; do
  env RANK=$r WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$PORT NCCL_HOSTID=host$((r + 1)) \
    NCCL_NVLS_ENABLE=0 NCCL_SOCKET_IFNAME=lo NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET \
    NCCL_DEBUG_FILE="$TMP/torch-nccl.%h.%p.log" \
    timeout -k 10 "$t" "$PY" "$TMP/torch_ar.py" "$SIZES_JSON" "$TMP/torch.json" >"$TMP/torch$r.out" 2>&1 &
done
wait
sed 's/^/  /' "$TMP/torch0.out" | tail -8; tail -3 "$TMP/torch1.out" | sed 's/^/  rank1| /'
grep -h -E "nNodes|via NET|Using network" "$TMP"/torch-nccl.*.log 2>/dev/null | sed 's/^.*NCCL INFO /  torch nccl| /' | sort -u | head -8
timeout 30 "$PY" - "$TMP/A-sizes.json" "$TMP/torch.json" <<'PY' || FAILS=$((FAILS + 1))
import json, sys
def load(p):
    try: return json.load(open(p))
    except Exception: return None
cc, th = load(sys.argv[1]), load(sys.argv[2])
def fmt(b):
    for s, u in ((1 << 30, "G"), (1 << 20, "M"), (1 << 10, "K")):
        if b % s == 0: return f"{b // s}{u}"
    return str(b)
print("\n  busbw (GB/s), 2 simulated nodes on one GPU over NET/Socket (lo)")
print(f"  {'size':>6} | {'clustercheck':>12} {'time_us':>10} | {'torch':>8} {'time_us':>10} {'exact':>5}")
ccd = {s["bytes"]: s for s in (cc or [])}
thd = {r[0]: r for r in (th or [])}
for b in sorted(set(ccd) | set(thd)):
    c, t = ccd.get(b), thd.get(b)
    cs = f"{c['busbw']:12.3f} {c['time_us']:10.1f}" if c else f"{'-':>12} {'-':>10}"
    ts = f"{t[3]:8.3f} {t[1]:10.1f} {str(t[4]):>5}" if t else f"{'-':>8} {'-':>10} {'-':>5}"
    print(f"  {fmt(b):>6} | {cs} | {ts}")
ok = th is not None and all(r[4] for r in th)
print(("  ok   " if ok else "  FAIL ") + "E: torch all_reduce ran on every size with exact sums")
sys.exit(0 if ok else 1)
PY

echo; echo "total $(( $(date +%s) - T0 )) s"
if [ $FAILS = 0 ]; then echo "RESULT: PASS"; exit 0; fi
echo "RESULT: FAIL ($FAILS scenario(s) with failures)"; exit 1
