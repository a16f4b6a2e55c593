#!/bin/bash
# The agent's `nccl` command with dtypes ["float", "bf16", "half"] on one
# GPU (run on the GPU machine, not in CI; modeled on nccl_agent_smoke.sh):
# every dtype runs every size, its data is checked with values exact in
# that dtype, and busbw is printed per dtype and size.
#
#   tests/gpu/nccl_dtypes_on_gpu.sh [BUILD_DIR | AGENT] [SIZES_JSON]
#
# BUILD_DIR holds clustercheck-agent (ctest -L gpu passes the build dir);
# a relative path is taken from the repository root. Without an argument,
# build-nccl/clustercheck-agent, then build/clustercheck-agent.
# Scenarios, each under a hard timeout:
#   single  one rank, nranks 1, all three dtypes in one request
#   pair    two agent processes on the one GPU, NCCL_HOSTID host0/host1
#           (NET/Socket over lo), all three dtypes in one request: a real
#           2-rank sum, checked exactly in each dtype
#   bf16    one request with dtypes ["bf16"] alone: ncclBfloat16 by itself
# Exit 0 when every scenario behaved, 1 otherwise, 77 without a GPU.
set -u
cd "$(dirname "$0")/../.."
. tests/gpu/lib/gpu_present.sh
gpu_present || exit 77
AGENT=${1:-}
[ -n "$AGENT" ] && [ -d "$AGENT" ] && AGENT=$AGENT/clustercheck-agent
if [ -z "$AGENT" ]; then
  for a in build-nccl/clustercheck-agent build/clustercheck-agent; do
    [ -x "$a" ] && AGENT=$a && break
  done
fi
[ -x "${AGENT:-}" ] || { echo "no agent binary (give its path)"; exit 1; }
SIZES=${2:-'[1024, 1048576, 67108864]'}

# Where libnccl.so.2 lives here: $NCCL_LIB_DIR, a pip wheel, ldconfig, or a search.
find_nccl() {
  [ -n "${NCCL_LIB_DIR:-}" ] && { echo "$NCCL_LIB_DIR"; return; }
  local d
  d=$(timeout 20 python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib"))' 2>/dev/null)
  [ -n "$d" ] && [ -e "$d/libnccl.so.2" ] && { echo "$d"; return; }
  d=$(ldconfig -p 2>/dev/null | awk '/libnccl\.so\.2 /{print $NF; exit}')
  [ -n "$d" ] && { dirname "$d"; return; }
  d=$(timeout 60 find / -xdev -name libnccl.so.2 -not -path '*/proc/*' 2>/dev/null | head -1)
  [ -n "$d" ] && dirname "$d"
}
NCCL_DIR=$(find_nccl)
echo "agent: $AGENT"
echo "libnccl.so.2 dir: ${NCCL_DIR:-<loader search>}"
nvidia-smi -L

exec timeout -k 10 540 python3 - "$AGENT" "${NCCL_DIR:-}" "$SIZES" <<'PY'
import json, queue, subprocess, sys, threading, time

agent, nccl_dir, sizes = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
dtypes = ["float", "bf16", "half"]
libs = [nccl_dir] if nccl_dir else []

class Agent:
    def __init__(self, name):
        self.name, self.q, self.lines = name, queue.Queue(), []
        self.p = subprocess.Popen([agent], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True, bufsize=1)
        threading.Thread(target=self._pump, args=(self.p.stdout, True), daemon=True).start()
        threading.Thread(target=self._pump, args=(self.p.stderr, False), daemon=True).start()
    def _pump(self, f, is_out):
        for line in f:
            line = line.rstrip("\n")
            if not is_out:
                print(f"{self.name} stderr> {line}", flush=True); continue
            try: msg = json.loads(line)
            except ValueError: msg = {"type": "garbage", "text": line}
            self.lines.append(msg); self.q.put(msg)
        self.q.put(None)
    def send(self, obj):
        self.p.stdin.write(json.dumps(obj) + "\n"); self.p.stdin.flush()
    def wait_for(self, pred, timeout):
        end = time.time() + timeout
        while time.time() < end:
            try: m = self.q.get(timeout=max(0.05, end - time.time()))
            except queue.Empty: break
            if m is None: return None
            show(self.name, m)
            if pred(m): return m
        return None
    def close(self):
        try: self.p.stdin.close()
        except Exception: pass
        try: self.p.wait(timeout=15)
        except subprocess.TimeoutExpired:
            print(f"{self.name}: agent did not exit 15 s after stdin closed: killing"); self.p.kill()
    def result(self, name):
        return [m["data"] for m in self.lines if m.get("type") == "result" and m.get("name") == name]

def show(who, m):
    if m.get("type") == "result" and m.get("name") == "nccl_log":
        text = m["data"]["text"]
        print(f"{who}> nccl_log ({m['data']['bytes']} bytes): first lines:")
        for l in text.splitlines()[:12]: print(f"{who}   | {l}")
        for l in text.splitlines():
            if " via " in l or "nNodes" in l or "Using network" in l or "WARN" in l:
                print(f"{who}   | {l}")
    else:
        print(f"{who}> {json.dumps(m)[:600]}", flush=True)

def request(rid, args):
    return {"v": 1, "id": rid, "cmd": "nccl", "args": args}

def env(host):
    return {"NCCL_HOSTID": host, "NCCL_SOCKET_IFNAME": "lo", "NCCL_NVLS_ENABLE": "0"}

def is_end(m): return m.get("type") == "end"
def outcome(a):
    o = a.result("outcome"); return o[-1] if o else {}
def brief(o): return json.dumps(o)[:300]

failures = []
def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond: failures.append(what)

def sizes_ok(a, who, want_dtypes):
    got = a.result("size")
    seen = [(s.get("dtype"), s.get("bytes")) for s in got]
    want = [(d, b) for d in want_dtypes for b in sizes]
    check(seen == want, f"{who}: one size result per dtype and size, in order ({seen})")
    for s in got:
        elem = 4 if s.get("dtype") == "float" else 2
        check(s.get("count", 0) * elem == s.get("bytes"), f"{who}: {s.get('dtype')} count * {elem} == bytes")
        check(s.get("data_ok") is True,
              f"{who}: {s.get('dtype')} {s.get('bytes')} bytes data exact "
              f"(mismatches {s.get('mismatches')}, first {s.get('first_mismatch')})")
    print(f"{who}: {'dtype':>5} {'bytes':>12} {'time_us':>10} {'algbw':>8} {'busbw':>8}  data")
    for s in got:
        print(f"{who}: {s.get('dtype'):>5} {s.get('bytes'):>12} {s.get('time_us', 0):10.1f} "
              f"{s.get('algbw', 0):8.3f} {s.get('busbw', 0):8.3f}  "
              f"{'ok' if s.get('data_ok') else 'WRONG'}", flush=True)

# --- single ---------------------------------------------------------------
print("\n=== single: one rank, dtypes " + json.dumps(dtypes), flush=True)
a = Agent("S")
a.send(request(1, {"nranks": 1, "gpus": [0], "sizes": sizes, "dtypes": dtypes, "iters": 5,
                   "warmup": 2, "timeout_s": 60, "env": env("host0"), "library_paths": libs}))
check(a.wait_for(is_end, 180) is not None, "single: request ended")
check(outcome(a).get("outcome") == "pass", f"single: outcome pass ({brief(outcome(a))})")
sizes_ok(a, "single", dtypes)
a.close()

# --- pair -----------------------------------------------------------------
print("\n=== pair: two processes, NCCL_HOSTID host0/host1, dtypes " + json.dumps(dtypes), flush=True)
A, B = Agent("A"), Agent("B")
args = {"nranks": 2, "gpus": [0], "sizes": sizes, "dtypes": dtypes, "iters": 20, "warmup": 5,
        "timeout_s": 60, "library_paths": libs}
A.send(request(1, dict(args, rank_base=0, env=env("host0"))))
idm = A.wait_for(lambda m: (m.get("type") == "result" and m.get("name") == "nccl_id") or is_end(m), 90)
uid = idm["data"]["id"] if idm and idm.get("name") == "nccl_id" else None
check(uid is not None and len(uid) == 256, "pair: A emitted a 128-byte nccl_id")
if uid:
    B.send(request(1, dict(args, rank_base=1, unique_id=uid, env=env("host1"))))
    endB = B.wait_for(is_end, 300)
    endA = A.wait_for(is_end, 60)
    check(endA is not None and endB is not None, "pair: both requests ended")
    for who, ag in (("A", A), ("B", B)):
        check(outcome(ag).get("outcome") == "pass", f"pair: {who} outcome pass ({brief(outcome(ag))})")
        sizes_ok(ag, f"pair {who}", dtypes)
A.close(); B.close()

# --- bf16 alone -------------------------------------------------------------
print("\n=== bf16: one rank, dtypes [\"bf16\"] alone", flush=True)
a = Agent("W")
a.send(request(1, {"nranks": 1, "gpus": [0], "sizes": sizes, "dtypes": ["bf16"], "iters": 5,
                   "warmup": 2, "timeout_s": 60, "env": env("host0"), "library_paths": libs}))
check(a.wait_for(is_end, 120) is not None, "bf16: request ended")
check(outcome(a).get("outcome") == "pass", f"bf16: outcome pass ({brief(outcome(a))})")
sizes_ok(a, "bf16", ["bf16"])
a.close()

print("\nRESULT:", "PASS" if not failures else f"FAIL ({len(failures)}): " + "; ".join(failures))
sys.exit(1 if failures else 0)
PY
