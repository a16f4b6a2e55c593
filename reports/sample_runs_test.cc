#include "reports/sample_runs_test.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "orchestrator/stages/ports/ports_verdict.h"
#include "orchestrator/stages/ports/stored_verdict.h"

namespace cc::testdata {
namespace {

using nlohmann::json;

// Records for one run, each stamped one second after the previous one.
class Writer {
 public:
  Writer(Store& store, int64_t run_id, int hour) : store_(store), run_(run_id), hour_(hour) {}

  std::string Next() {
    int s = seconds_++;
    char buf[32];
    std::snprintf(buf, sizeof buf, "2026-03-02T%02d:%02d:%02dZ", hour_, s / 60 % 60, s % 60);
    return buf;
  }

  void Node(const std::string& stage, const std::string& node, const std::string& check, Outcome o,
            const std::string& value, const std::string& expected, const std::string& message,
            json evidence = json::object()) {
    NodeResult r;
    r.run_id = run_;
    r.node = node;
    r.stage = stage;
    r.check = check;
    r.outcome = o;
    r.value = value;
    r.expected = expected;
    r.message = message;
    r.evidence = std::move(evidence);
    r.at = Next();
    Check(store_.AddNodeResult(r));
  }

  void Pair(const std::string& stage, const std::string& src, const std::string& dst,
            const std::string& check, Outcome o, const std::string& state,
            std::optional<double> value, const std::string& message,
            json evidence = json::object()) {
    PairResult r;
    r.run_id = run_;
    r.stage = stage;
    r.src = src;
    r.dst = dst;
    r.check = check;
    r.outcome = o;
    r.state = state;
    r.value = value;
    r.unit = value ? "GB/s" : "";
    r.message = message;
    r.evidence = std::move(evidence);
    r.at = Next();
    Check(store_.AddPairResult(r));
  }

  void Record(const Verdict& v) { Check(store_.AddVerdict(run_, v, Next())); }

  void Put(const std::string& node, bool reachable, const std::string& error, json facts) {
    NodeRecord n;
    n.run_id = run_;
    n.node = node;
    n.address = "10.0.0." + std::to_string(std::stoi(node.substr(3)));
    n.reachable = reachable;
    n.error = error;
    n.facts = std::move(facts);
    Check(store_.PutNode(n));
  }

  Status status() const { return status_; }

 private:
  void Check(const Status& s) {
    if (status_.ok() && !s.ok()) status_ = s;
  }
  Store& store_;
  int64_t run_;
  int hour_;
  int seconds_ = 1;
  Status status_;
};

std::vector<std::string> Names(int n) {
  std::vector<std::string> out;
  for (int i = 1; i <= n; ++i) out.push_back(std::string("gpu0") + std::to_string(i));
  return out;
}

json Facts(const std::string& driver, const std::string& cuda) {
  json gpus = json::array();
  for (int i = 0; i < 8; ++i) gpus.push_back({{"index", i}, {"name", "NVIDIA H200"}});
  return {
      {"gpu", {{"status", "ok"}, {"driver_version", driver}, {"count", 8}, {"gpus", gpus}}},
      {"cuda", {{"status", "ok"}, {"driver_api_version", cuda}}},
      {"nccl", {{"status", "ok"}, {"version", "2.21.5"}}},
      {"system", {{"kernel", "6.1.0-18-amd64"}, {"os", {{"id", "debian"}, {"version_id", "12"}}}}}};
}

Result<int64_t> Begin(Store& store, int hour, const std::vector<std::string>& nodes,
                      const std::vector<std::string>& stages, int exit_code) {
  RunRecord rec;
  char start[32], end[32];
  std::snprintf(start, sizeof start, "2026-03-02T%02d:00:00Z", hour);
  std::snprintf(end, sizeof end, "2026-03-02T%02d:06:41Z", hour);
  rec.started_at = start;
  rec.finished_at = end;
  rec.status = "done";
  rec.exit_code = exit_code;
  rec.inventory_path = "/etc/clustercheck/pod-a.toml";
  rec.inventory_sha256 = "3f1c9a7e5b2d4c6f8a0e1d3b5c7a9f2e4d6b8a0c1e3f5a7b9d2c4e6f8a1b3c5d";
  rec.inventory_name = "pod-a";
  rec.argv = "clustercheck run /etc/clustercheck/pod-a.toml";
  rec.version = "0.1.0";
  rec.meta = {{"nodes", nodes}, {"stages", stages}, {"transport", "ssh"}};
  return store.BeginRun(rec);
}

void Connected(Writer& w, const std::vector<std::string>& nodes) {
  for (const auto& n : nodes) {
    w.Node("connect", n, "agent", Outcome::kPass, "ready", "", "agent 0.1.0 ready in 412 ms");
  }
}

Result<int64_t> WriteDiffRun(Store& store, bool after) {
  auto nodes = Names(4);
  auto id = Begin(store, after ? 10 : 9, nodes, {"facts", "parity", "nccl"}, 1);
  if (!id.ok()) return id;
  Writer w(store, *id, after ? 10 : 9);
  for (const auto& n : nodes)
    w.Put(n, true, "", Facts(!after && n == "gpu02" ? "535.104.05" : "550.54.15", "12.4"));
  Connected(w, nodes);
  for (const auto& n : nodes) {
    bool odd = !after && n == "gpu02";
    w.Node("parity", n, "driver", odd ? Outcome::kFail : Outcome::kPass,
           odd ? "535.104.05" : "550.54.15", odd ? "550.54.15" : "",
           odd ? "differs from the cluster majority" : "matches the cluster");
  }
  for (size_t a = 0; a < nodes.size(); ++a) {
    for (size_t b = a + 1; b < nodes.size(); ++b) {
      bool broken = after && a == 0 && b == 2;
      w.Pair("nccl", nodes[a], nodes[b], "allreduce", broken ? Outcome::kFail : Outcome::kPass,
             broken ? "error" : "ok", broken ? std::nullopt : std::optional<double>(21.5 + a),
             broken ? "NCCL WARN NET/IB : Got completion from peer with error 12" : "");
    }
  }
  if (!w.status().ok()) return w.status();
  return id;
}

void FaultyConnect(Writer& w) {
  auto nodes = Names(8);
  Connected(w, Names(5));
  w.Node("connect", "gpu06", "agent", Outcome::kFail, "unreachable", "",
         "connect: unreachable: gpu06 (10.0.0.6:22): No route to host");
  w.Node("connect", "gpu07", "agent", Outcome::kFail, "host-key-mismatch", "",
         "connect: host-key-mismatch: gpu07: host key changed (SHA256:Qm7vXy3kP0aLzE9f)");
  w.Node("connect", "gpu08", "agent", Outcome::kHang, "timeout", "",
         "hello: timeout: gpu08: no answer within 60s");
  for (int i = 1; i <= 5; ++i) {
    std::string n = nodes[i - 1];
    w.Put(n, true, "",
          Facts(n == "gpu04" ? "535.104.05" : "550.54.15", n == "gpu04" ? "12.2" : "12.4"));
    w.Node("facts", n, "collected", Outcome::kPass, "", "", "facts collected");
  }
  w.Put("gpu06", false, "unreachable: gpu06 (10.0.0.6:22): No route to host", json::object());
  w.Put("gpu07", false, "host-key-mismatch: gpu07: host key changed", json::object());
  w.Put("gpu08", false, "timeout: gpu08: no answer within 60s", json::object());
}

void FaultyParityAndNics(Writer& w) {
  auto nodes = Names(5);
  for (const auto& n : nodes) {
    bool odd = n == "gpu04";
    w.Node("parity", n, "driver", odd ? Outcome::kFail : Outcome::kPass,
           odd ? "535.104.05" : "550.54.15", odd ? "550.54.15" : "",
           odd ? "differs from the cluster majority" : "matches the cluster");
    w.Node("parity", n, "cuda_driver", odd ? Outcome::kFail : Outcome::kPass, odd ? "12.2" : "12.4",
           odd ? "12.4" : "", odd ? "differs from the cluster majority" : "matches the cluster");
    w.Node("parity", n, "nccl", Outcome::kPass, "2.21.5", "", "matches the cluster");
  }
  for (const auto& n : nodes) {
    bool down = n == "gpu05";
    w.Node("nics", n, "ib0", down ? Outcome::kFail : Outcome::kPass, down ? "down" : "up",
           down ? "up" : "", down ? "mlx5_0 port 1: link down (no carrier)" : "400 Gb/s, MTU 4092",
           {{"device", "mlx5_0"}, {"port", 1}});
  }
  for (const auto& a : nodes) {
    for (const auto& b : nodes) {
      if (a == b) continue;
      bool bad = a == "gpu05" || b == "gpu05";
      w.Pair("nics", a, b, "ping/ib0", bad ? Outcome::kFail : Outcome::kPass,
             bad ? "unreachable" : "reachable", std::nullopt, bad ? "no reply within 1000 ms" : "");
    }
  }
}

// As the ports stage stores it: a listen result per node, every probe,
// then its own attribution (AttributePorts) as verdicts.
void FaultyPorts(Writer& w) {
  auto nodes = Names(5);
  for (const auto& n : nodes) {
    w.Node("ports", n, "listen", Outcome::kPass, "", "",
           "listened on tcp/22,29500 at 10.0.0." + n.substr(4));
  }
  std::vector<PortCell> cells;
  for (int port : {22, 29500}) {
    PortKind kind = port == 22 ? PortKind::kSsh : PortKind::kListed;
    for (const auto& a : nodes) {
      for (const auto& b : nodes) {
        if (a == b) continue;
        std::string state = "open", message;
        if (port == 29500 && b == "gpu03") {
          state = "filtered";
          message = "no answer within 2000 ms";
        } else if (port == 29500 && a == "gpu01" && b == "gpu02") {
          state = "refused";
          message = "connection refused";
        }
        Outcome o = state == "open" ? Outcome::kPass : Outcome::kFail;
        w.Pair("ports", a, b, "tcp/" + std::to_string(port), o, state, std::nullopt, message,
               {{"kind", PortKindName(kind)}, {"addr", "10.0.0." + b.substr(4)}});
        cells.push_back({a, b, port, kind, state, o});
      }
    }
  }
  for (const PortVerdict& v : AttributePorts(nodes, cells, {})) w.Record(StoredVerdict(v));
}

void FaultyNcclAndMpi(Writer& w) {
  auto nodes = Names(5);
  for (const auto& n : nodes) {
    w.Node("nccl", n, "allreduce", Outcome::kPass, "182.3", "", "8 GPUs, busbw 182.3 GB/s at 256M");
  }
  for (size_t a = 0; a < nodes.size(); ++a) {
    for (size_t b = a + 1; b < nodes.size(); ++b) {
      const std::string &x = nodes[a], &y = nodes[b];
      if (x == "gpu02" && y == "gpu04") {
        w.Pair("nccl", x, y, "allreduce", Outcome::kWarn, "ok", 9.6,
               "busbw 9.6 GB/s at 256M over NET/Socket",
               {{"transport", "NET/Socket"},
                {"log",
                 {"gpu02:1234:1301 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via "
                  "NET/Socket/0"}}});
      } else if (x == "gpu03" && y == "gpu05") {
        w.Pair("nccl", x, y, "allreduce", Outcome::kHang, "timeout", std::nullopt,
               "no progress within 120 s; ncclCommAbort",
               {{"log", {"gpu05:2210:2270 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB"}}});
      } else {
        w.Pair("nccl", x, y, "allreduce", Outcome::kPass, "ok", 21.0 + 0.2 * double(a + b),
               "busbw at 256M over NET/IB with GDRDMA", {{"transport", "NET/IB/GDRDMA"}});
      }
    }
  }
  for (size_t a = 0; a < nodes.size(); ++a) {
    for (size_t b = a + 1; b < nodes.size(); ++b) {
      bool bad = nodes[a] == "gpu01" && nodes[b] == "gpu04";
      w.Pair("mpi", nodes[a], nodes[b], "pingpong", bad ? Outcome::kFail : Outcome::kPass,
             bad ? "launch-failed" : "ok", bad ? std::nullopt : std::optional<double>(11.8),
             bad ? "mpirun exited 213: ORTE was unable to reliably start one or more daemons" : "");
    }
  }
}

Result<int64_t> WriteFaultyRun(Store& store) {
  auto id = Begin(store, 8, Names(8), {"facts", "parity", "nics", "ports", "nccl", "mpi"}, 1);
  if (!id.ok()) return id;
  Writer w(store, *id, 8);
  FaultyConnect(w);
  FaultyParityAndNics(w);
  FaultyPorts(w);
  FaultyNcclAndMpi(w);
  if (!w.status().ok()) return w.status();
  Status meta = store.SetRunMeta(*id, "bytes_pushed", 2871632);
  if (!meta.ok()) return meta;
  return id;
}

}  // namespace

Result<SampleRuns> WriteSampleRuns(Store& store) {
  SampleRuns ids;
  auto before = WriteDiffRun(store, false);
  if (!before.ok()) return before.status();
  auto after = WriteDiffRun(store, true);
  if (!after.ok()) return after.status();
  auto faulty = WriteFaultyRun(store);
  if (!faulty.ok()) return faulty.status();
  ids.before = *before;
  ids.after = *after;
  ids.faulty = *faulty;
  return ids;
}

// The shell tests (tests/reports) build their database through this test:
// CLUSTERCHECK_WRITE_SAMPLE_DB=/path clustercheck_tests
//   --gtest_filter=SampleRuns.WriteTheSampleDatabaseWhenAsked
// Without the variable it writes a scratch database, so that under ctest
// it checks the sample still stores (and is not a permanent skip).
TEST(SampleRuns, WriteTheSampleDatabaseWhenAsked) {
  const char* asked = std::getenv("CLUSTERCHECK_WRITE_SAMPLE_DB");
  std::string path =
      asked && *asked ? std::string(asked)
                      : ::testing::TempDir() + "cc-sample-runs-" + std::to_string(getpid()) + ".db";
  std::remove(path.c_str());
  auto store = Store::Open(path);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto ids = WriteSampleRuns(**store);
  ASSERT_TRUE(ids.ok()) << ids.status().ToString();
  EXPECT_EQ(ids->faulty, 3);
  if (!asked || !*asked) {
    store->reset();
    for (const char* suffix : {"", "-wal", "-shm"}) std::remove((path + suffix).c_str());
  }
}

}  // namespace cc::testdata
