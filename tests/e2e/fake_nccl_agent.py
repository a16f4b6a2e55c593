#!/usr/bin/env python3
"""A stand-in for clustercheck-agent that answers `facts` and `nccl` the way
the real agent does on a GPU node, for CI without GPUs (nccl_stage_fake_test.sh).

Each simulated node is its own process; it knows its name from NCCL_HOSTID
(request env, else process env). Faults come from the process env:
  FAKE_NCCL_BAD=1          this node breaks every multi-node communicator:
                           it fails at init, its peers report hang
  FAKE_NCCL_BAD_LINK=node  a communicator holding both this node and `node`
                           breaks the same way
  FAKE_NCCL_SLOW=1         every communicator with this node is 4x slower
  FAKE_NCCL_FLAKY=1        the first multi-node communicator with this node
                           breaks as with FAKE_NCCL_BAD; later ones work
  FAKE_NCCL_STUCK=1        the nccl request is never answered (a wedged agent)
  NCCL_SOCKET_IFNAME=doesnotexist*  fails at once, as NCCL does without an
                           interface; its peers wait 2 * timeout_s and hang
Members of a communicator find each other through FAKE_NCCL_DIR/<id>/, where
each writes its name and faults, then waits until all nranks are there.
"""
import json, os, random, sys, time

def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()

def result(rid, name, data):
    send({"type": "result", "id": rid, "name": name, "data": data})

def facts(rid):
    result(rid, "facts", {
        "gpu": {"status": "ok", "count": 1, "driver_version": "580.0",
                "gpus": [{"index": 0, "name": "Fake H200"}]},
        "nccl": {"status": "ok", "path": "/fake/libnccl.so.2", "version": "2.28.3"},
        "system": {"hostname": os.environ.get("NCCL_HOSTID", "fake")}})
    send({"type": "end", "id": rid, "ok": True})

def nccl(rid, args):
    env = dict(os.environ)
    env.update(args.get("env", {}))
    me = env.get("NCCL_HOSTID", "?")
    nranks, base = args["nranks"], args.get("rank_base", 0)
    if os.environ.get("FAKE_NCCL_STUCK") == "1":
        return  # never answers, ignores abort: only the controller's backstop ends it
    uid = args.get("unique_id") or "%0256x" % random.getrandbits(1024)
    if env.get("NCCL_SOCKET_IFNAME", "lo").startswith("doesnotexist"):
        # As NCCL: no bootstrap interface, so no id and no init, at once.
        result(rid, "outcome", {"outcome": "fail", "step": "init" if args.get("unique_id") else "unique id",
                                "reason": "Bootstrap : no socket interface found"})
        send({"type": "end", "id": rid, "ok": True}); return
    if base == 0:
        result(rid, "nccl_id", {"id": uid})
    d = os.path.join(os.environ["FAKE_NCCL_DIR"], uid[:32])
    os.makedirs(d, exist_ok=True)
    bad = os.environ.get("FAKE_NCCL_BAD") == "1"
    if os.environ.get("FAKE_NCCL_FLAKY") == "1" and nranks > 1:
        used = os.path.join(os.environ["FAKE_NCCL_DIR"], "flaky-" + me)
        if not os.path.exists(used):
            open(used, "w").close()
            bad = True
    with open(os.path.join(d, me + ".tmp"), "w") as f:
        json.dump({"bad": bad,
                   "link": os.environ.get("FAKE_NCCL_BAD_LINK", ""),
                   "slow": os.environ.get("FAKE_NCCL_SLOW") == "1"}, f)
    os.rename(os.path.join(d, me + ".tmp"), os.path.join(d, me + ".json"))
    deadline = time.time() + max(10, 2 * args.get("timeout_s", 5))
    while len([n for n in os.listdir(d) if n.endswith(".json")]) < nranks:
        if time.time() > deadline:
            result(rid, "outcome", {"outcome": "hang", "step": "init",
                                    "reason": "init did not finish within timeout_s; aborted"})
            send({"type": "end", "id": rid, "ok": True}); return
        time.sleep(0.02)
    members = {n[:-5]: json.load(open(os.path.join(d, n))) for n in os.listdir(d) if n.endswith(".json")}
    names = set(members)
    broken_by = [n for n, m in members.items() if nranks > 1 and (m["bad"] or m["link"] in names)]
    result(rid, "setup", {"nccl_version": "2.28.3", "nccl_path": "/fake/libnccl.so.2"})
    result(rid, "gpus", {"gpus": [{"index": 0, "rank": base}]})
    log = ["%s:1:1 [0] NCCL INFO NCCL version 2.28.3+cuda13.0" % me,
           "%s:1:1 [0] NCCL INFO NET/Socket : Using [0]lo:127.0.0.1<0>" % me,
           "%s:1:1 [0] NCCL INFO Using network Socket" % me,
           "%s:1:1 [0] NCCL INFO comm 0x1 rank %d nRanks %d nNodes %d localRanks 1 localRank 0 MNNVL 0"
           % (me, base, nranks, nranks)]
    if broken_by:
        result(rid, "nccl_log", {"text": "\n".join(log) + "\n", "bytes": 1, "files": []})
        if me in broken_by:
            result(rid, "outcome", {"outcome": "fail", "step": "init",
                                    "reason": "ncclCommInitRank: unhandled system error"})
        else:
            result(rid, "outcome", {"outcome": "hang", "step": "init",
                                    "reason": "init did not finish within timeout_s; aborted"})
        send({"type": "end", "id": rid, "ok": True}); return
    if nranks > 1:
        peer = (base + 1) % nranks
        log.append("%s:1:2 [0] NCCL INFO Channel 00/0 : %d[0] -> %d[0] [send] via NET/Socket/0" % (me, base, peer))
    slow = 4.0 if any(m["slow"] for m in members.values()) else 1.0
    for b in args["sizes"]:
        t_us = (b / 10e9 * 1e6 + 20) * slow  # 10 GB/s algbw
        algbw = b / (t_us / 1e6) / 1e9
        busbw = algbw * (2.0 * (nranks - 1) / nranks)
        result(rid, "size", {"bytes": b, "time_us": t_us, "algbw": algbw, "busbw": busbw,
                             "data_ok": True, "nranks": nranks})
    result(rid, "nccl_log", {"text": "\n".join(log) + "\n", "bytes": 1, "files": []})
    result(rid, "outcome", {"outcome": "pass"})
    send({"type": "end", "id": rid, "ok": True})

def main():
    send({"type": "hello", "v": 1, "agent_version": "0.1.0-fake", "arch": "x86_64",
          "pid": os.getpid(), "hostname": os.environ.get("NCCL_HOSTID", "fake")})
    for line in sys.stdin:
        req = json.loads(line)
        cmd, rid = req.get("cmd"), req.get("id")
        if cmd == "facts":
            facts(rid)
        elif cmd == "nccl":
            nccl(rid, req.get("args", {}))
        elif cmd == "abort":
            continue
        else:
            send({"type": "end", "id": rid, "ok": False, "error": "fake: unknown command " + str(cmd)})

main()
