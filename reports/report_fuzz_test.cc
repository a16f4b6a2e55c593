// A report of a stored run never ends the process, whatever the store
// holds: the sample runs the goldens render (sample_runs_test.h), the same
// runs as a schema 1 database stored them, and a run with what the other
// stages store (health readings and findings, retests, judged speeds,
// nics problems, stage meta), each mutated many times over
// (evidence_mutator_test.h), go through Analyze and every renderer. A
// failure names the mutation, so that it can be replayed.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>

#include "build_paths.h"
#include "common/json_read.h"
#include "orchestrator/analysis/analysis.h"
#include "orchestrator/diff.h"
#include "orchestrator/stages/ports/ports_verdict.h"
#include "orchestrator/stages/ports/stored_verdict.h"
#include "orchestrator/stages/stages.h"
#include "reports/evidence_mutator_test.h"
#include "reports/html.h"
#include "reports/json_report.h"
#include "reports/junit.h"
#include "reports/sample_runs_test.h"
#include "reports/terminal.h"

namespace cc {
namespace {

using nlohmann::json;

constexpr int kMutations = 1000;
constexpr uint64_t kSeed = 36;

// CLUSTERCHECK_FUZZ_MUTATIONS and CLUSTERCHECK_FUZZ_SEED, to hunt longer
// or elsewhere than ctest does; the defaults above otherwise.
uint64_t FromEnv(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtoull(v, nullptr, 10) : fallback;
}

// Member names that the stages and analysis give meaning to, so that a
// mutation puts them where their writer never would.
const std::vector<std::string> kKeys = {
    "symptoms",       "action",       "speed",          "confirmation", "next_step",
    "checks",         "pairs",        "messages",       "unconfirmed",  "problems",
    "retest",         "attempts",     "results",        "stage",        "check",
    "kind",           "stage_kind",   "results_judged", "gpu",          "transport",
    "device",         "node_checks",  "warnings",       "examples",     "states",
    "details",        "subnet",       "nodes",          "actions",      "isolation",
    "busbw_by_dtype", "counter",      "delta",          "port",         "chain",
    "expected_mtu",   "interface",    "field",          "majority",     "bytes_pushed",
    "liveness",       "retests.ports"};

// What the sample runs lack: the health stage's readings and findings,
// confirmed, flaky and unconfirmed results, a speed the mpi stage judged,
// a nics problem and the meta the stages write, in the shapes their
// writers give them. It did not finish (the unfinished-run lines).
RunData OtherStagesRun() {
  RunData d;
  d.run.id = 90;
  d.run.status = "killed";
  d.run.started_at = "2026-03-02T11:00:00Z";
  d.run.inventory_name = "pod-b";
  d.run.meta = {
      {"nodes", {"n1", "n2", "n3", "n4"}},
      {"stages", {"health", "nics", "ports", "mpi", "nccl"}},
      {"transport", "ssh"},
      {"bytes_pushed", 1024},
      {"warnings", {"the inventory's [expect] names no driver"}},
      {"liveness", {{"reason", "no heartbeat for 120 s"}}},
      {"retests.ports", {{"retested", 3}, {"confirmed", 1}, {"flaky", 1}, {"unconfirmed", 1}}},
      {"health", {{"nodes", 4}, {"actions", {{"drain", {"n3"}}, {"ok", {"n1", "n2", "n4"}}}}}},
      {"nccl",
       {{"tests", 12},
        {"isolation",
         {{"runs_after_cluster", 3}, {"pair_probes", 2}, {"group_tests", 1}, {"group_rounds", 1}}},
        {"busbw_by_dtype",
         {{{"dtype", "float"}, {"pairs_median_gbps", 180.5}},
          {{"dtype", "bf16"}, {"cluster_gbps", 175.0}}}}}},
      {"nics",
       {{"subnet", "10.42.0.0/24"},
        {"reason", "every node reaches every other"},
        {"env_lines", {"export NCCL_SOCKET_IFNAME=ib0"}},
        {"subnets",
         {{{"subnet", "10.42.0.0/24"},
           {"mtu", 4092},
           {"problems", {{{"outcome", "fail"}, {"message", "ib0 of n4 has MTU 1500"}}}}},
          {{"subnet", "172.17.0.0/16"}, {"excluded", "docker0 on every node"}}}},
        {"notes", {"RoCE needs NCCL_IB_GID_INDEX"}}}}};
  json gpus = {{{"index", 0},
                {"pcie", {5, 16, 5, 16}},
                {"temperature_c", 44},
                {"power_w", 121.05},
                {"ecc_volatile_uncorrected", 0},
                {"remapped_rows", {{"pending", false}, {"failure", false}}}}};
  json topology = {{"X", "NV18"}, {"NV18", "X"}};
  for (const char* n : {"n1", "n2", "n3", "n4"}) {
    d.nodes.push_back({0, n, std::string("10.42.0.") + (n + 1), true, "", json::object()});
    std::string action = std::string(n) == "n3" ? "drain" : "ok";
    d.node_results.push_back(
        NodeCheck("health", n, "readings", Outcome::kPass, "hardware readings",
                  {{"action", action},
                   {"gpu_status", "ok"},
                   {"gpus", gpus},
                   {"topology", topology},
                   {"kernel_log", {{"status", "ok"}, {"lines", 10}, {"events", 1}}},
                   {"ib_ports", {{{"state", "ACTIVE"}}}}},
                  action));
  }
  d.node_results.push_back(NodeCheck(
      "health", "n3", "xid.79", Outcome::kFail, "Xid 79 on GPU 0: fallen off the bus",
      {{"action", "drain"}, {"code", 79}, {"kind", "Xid"}, {"gpu", 0}, {"count", 1}}, "Xid 79"));
  d.node_results.push_back(
      NodeCheck("health", "n2", "gpu0.pcie", Outcome::kFail, "GPU 0: PCIe link below its maximum",
                {{"action", "reset-gpu"}, {"gpu", 0}, {"bus_id", "0000:5d:00.0"}}, "gen 5 x8"));
  d.node_results.push_back(NodeCheck("health", "n1", "ib.mlx5_0/1.symbol_error", Outcome::kWarn,
                                     "mlx5_0/1 symbol_error grew by 40",
                                     {{"action", "investigate"},
                                      {"port", "mlx5_0/1"},
                                      {"counter", "symbol_error"},
                                      {"delta", 40},
                                      {"seconds", 60.0}},
                                     "+40"));
  d.node_results.push_back(NodeCheck(
      "nics", "n4", "mtu", Outcome::kFail, "ib0 has MTU 1500, the subnet 4092",
      {{"subnet", "10.42.0.0/24"},
       {"problems", {{{"kind", "mtu"}, {"nic", "ib0"}, {"node", "n4"}, {"outcome", "fail"}}}}},
      "1500"));
  d.node_results.push_back(NodeCheck(
      "nccl", "n2", "intra", Outcome::kWarn, "busbw 120 GB/s, retest 180 GB/s",
      {{"confirmation", "flaky"},
       {"attempts", {{{"outcome", "warn"}, {"message", "120"}}, {{"outcome", "pass"}}}}}));
  auto pair = [&](const char* stage, const char* src, const char* dst, const char* check, Outcome o,
                  const char* state, std::optional<double> value, json evidence) {
    PairResult r;
    r.stage = stage;
    r.src = src;
    r.dst = dst;
    r.check = check;
    r.outcome = o;
    r.state = state;
    r.value = value;
    r.unit = value ? "GB/s" : "";
    r.message = std::string(state) + " " + src + " -> " + dst;
    r.evidence = std::move(evidence);
    d.pair_results.push_back(std::move(r));
  };
  // ports: n4's INPUT drops its ephemeral range, so peers cannot reach its
  // ephemeral ports and n4 reaches no peer: the stage's one verdict lists
  // both symptoms in its own evidence "symptoms". n1 -> n2 was flaky,
  // n3 -> n1 filtered and its retest could not run.
  json flaky_attempts = {{{"outcome", "fail"}, {"state", "filtered"}},
                         {{"outcome", "pass"}, {"state", "open"}}};
  json lost_attempts = {{{"outcome", "fail"}, {"state", "filtered"}},
                        {{"outcome", "error"}, {"message", "no agent"}}};
  const std::vector<std::string> nodes = {"n1", "n2", "n3", "n4"};
  std::vector<PortCell> cells;
  for (const auto& a : nodes) {
    for (const auto& b : nodes) {
      if (a == b) continue;
      for (auto [port, kind] :
           {std::pair{22, PortKind::kSsh}, std::pair{29500, PortKind::kListed},
            std::pair{40000, PortKind::kEphemeral}, std::pair{50000, PortKind::kEphemeral}}) {
        bool dropped = a == "n4" || (b == "n4" && kind == PortKind::kEphemeral);
        bool flaky = a == "n1" && b == "n2" && port == 29500;
        bool lost = a == "n3" && b == "n1" && port == 29500;
        std::string state = dropped || lost ? "filtered" : "open";
        Outcome o = flaky ? Outcome::kWarn : state == "open" ? Outcome::kPass : Outcome::kFail;
        json evidence = {{"kind", PortKindName(kind)}};
        if (flaky) evidence.update({{"confirmation", "flaky"}, {"attempts", flaky_attempts}});
        if (lost) evidence.update({{"confirmation", "unconfirmed"}, {"attempts", lost_attempts}});
        pair("ports", a.c_str(), b.c_str(), ("tcp/" + std::to_string(port)).c_str(), o,
             state.c_str(), std::nullopt, evidence);
        cells.push_back({a, b, port, kind, state, o});
      }
      if (a < b) {
        bool slow = a == "n2" && b == "n3";
        pair("mpi", a.c_str(), b.c_str(), "bandwidth", slow ? Outcome::kWarn : Outcome::kPass,
             slow ? "slow" : "ok", slow ? 4.0 : 11.5,
             {{"speed", {{"judged_by", "mpi"}, {"median", 11.5}, {"slow", slow}}}});
        pair("nccl", a.c_str(), b.c_str(), "allreduce", Outcome::kPass, "ok", slow ? 60.0 : 180.0,
             {{"transport", "NET/IB/GDRDMA"}, {"device", "mlx5_0"}});
      }
    }
  }
  std::map<std::string, std::pair<int, int>> ranges;
  for (const auto& n : nodes) ranges[n] = {32768, 60999};
  for (const PortVerdict& v : AttributePorts(nodes, cells, ranges)) {
    d.verdicts.push_back(StoredVerdict(v));
  }
  // A node the stage named bad on its own, whose listen check failed too:
  // analysis merges the node check into the stored verdict's evidence.
  d.node_results.push_back(NodeCheck("ports", "n3", "listen", Outcome::kFail,
                                     "could not listen on tcp/29501: address in use"));
  Verdict bad;
  bad.kind = "bad-node";
  bad.stage = "ports";
  bad.check = "tcp/29501";
  bad.nodes = {"n3"};
  bad.summary = "n3 accepts tcp/29501 from no peer";
  bad.evidence = {{"stage_kind", "isolated"}, {"states", "refused"}};
  d.verdicts.push_back(bad);
  return d;
}

// The sample runs (sample_runs_test.h), from a new database and as a
// schema 1 database stored them, and OtherStagesRun.
class ReportFuzz : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/cc-fuzz-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    {
      auto store = Store::Open(dir_ + "/new.db");
      ASSERT_TRUE(store.ok()) << store.status().ToString();
      auto ids = testdata::WriteSampleRuns(**store);
      ASSERT_TRUE(ids.ok()) << ids.status().ToString();
      for (int64_t id : {ids->before, ids->after, ids->faulty}) Load(**store, id, "new.db");
    }
    std::filesystem::copy_file(std::string(CLUSTERCHECK_FIXTURES) + "/store-v1-sample-runs.db",
                               dir_ + "/v1.db");
    auto old = Store::Open(dir_ + "/v1.db");
    ASSERT_TRUE(old.ok()) << old.status().ToString();
    Load(**old, 3, "store-v1-sample-runs.db");
    runs_.push_back({"other stages' run", OtherStagesRun()});
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  void Load(Store& store, int64_t id, const std::string& db) {
    auto d = LoadRunData(store, id, MatrixCheck);
    ASSERT_TRUE(d.ok()) << d.status().ToString();
    runs_.push_back({db + " run " + std::to_string(id), std::move(*d)});
  }

  std::string dir_;
  std::vector<std::pair<std::string, RunData>> runs_;
};

PairRows RowsOf(const RunData& d) {
  return [&d](const std::function<void(PairResult &&)>& each) {
    d.ForEachPairResult([&](const PairResult& r) { each(PairResult(r)); });
    return Status::Ok();
  };
}

// Every report of `d`, as `clustercheck report` makes them; "" when all
// were made, else which one failed and why.
std::string RenderAll(const RunData& d, const RunData& base) {
  std::string step = "Analyze";
  try {
    std::vector<Verdict> verdicts = Analyze(d);
    step = "RenderTerminal";
    std::string terminal = RenderTerminal(d, TerminalOptions{});
    if (terminal.find("run " + std::to_string(d.run.id) + " of") == std::string::npos) {
      return "the terminal report has no run line";
    }
    step = "RenderHtml";
    if (RenderHtml(d, verdicts).find("</html>\n") == std::string::npos) return "HTML cut short";
    step = "WriteReportJson";
    std::string text;
    Status s =
        WriteReportJson([&](std::string_view part) { text += part; }, d, verdicts, RowsOf(d));
    if (!s.ok()) return "WriteReportJson: " + s.ToString();
    json doc = json::parse(text, nullptr, false);
    if (doc.is_discarded() || !doc.contains("verdicts")) return "the JSON report does not parse";
    step = "RenderJunit";
    if (RenderJunit(d).find("</testsuites>\n") == std::string::npos) return "JUnit cut short";
    step = "DiffRuns";
    RunDiff diff = DiffRuns(base, d);
    RenderDiff(diff);
    JsonDump(DiffToJson(diff));
  } catch (const std::exception& e) {
    return step + " threw: " + e.what();
  }
  return "";
}

// kMutations mutations of `targets` (or CLUSTERCHECK_FUZZ_MUTATIONS, from
// CLUSTERCHECK_FUZZ_SEED), each rendered; "" when every one was, else each
// distinct failure with the first mutation that made it.
std::string Fuzz(const std::vector<std::pair<std::string, RunData>>& runs,
                 testdata::EvidenceMutator::Targets targets, uint64_t default_seed) {
  const int mutations = static_cast<int>(FromEnv("CLUSTERCHECK_FUZZ_MUTATIONS", kMutations));
  const uint64_t seed = FromEnv("CLUSTERCHECK_FUZZ_SEED", default_seed);
  testdata::EvidenceMutator mutator(seed, kKeys, targets);
  for (const auto& [name, d] : runs) mutator.AddKeysOf(d);
  std::map<std::string, std::string> failures;
  auto started = std::chrono::steady_clock::now();
  for (int i = 0; i < mutations; ++i) {
    const auto& [name, base] = runs[static_cast<size_t>(i) % runs.size()];
    RunData d = base;
    // One to three changes at once: readers that survive one bad field
    // may still trip over two.
    std::string what;
    for (int k = 0; k <= i % 3; ++k) what += "\n    " + mutator.Mutate(d);
    std::string failed = RenderAll(d, base);
    if (!failed.empty()) {
      failures.try_emplace(failed, "mutation " + std::to_string(i) + " of " + name + ":" + what);
    }
  }
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::printf("%d mutations (seed %llu) rendered in %.2f s\n", mutations,
              static_cast<unsigned long long>(seed), seconds);
  if (failures.empty()) return "";
  std::ostringstream o;
  o << failures.size() << " distinct failures in " << mutations << " mutations (seed " << seed
    << "):\n";
  for (const auto& [failed, mutation] : failures) o << failed << "\n  after " << mutation << "\n";
  return o.str();
}

TEST_F(ReportFuzz, EveryBaseRunRendersAsStored) {
  for (const auto& [name, d] : runs_) EXPECT_EQ(RenderAll(d, d), "") << name;
}

TEST_F(ReportFuzz, AThousandMutationsOfStoredEvidenceAllRenderInEveryFormat) {
  std::string failures = Fuzz(runs_, testdata::EvidenceMutator::Targets::kEvidence, kSeed);
  EXPECT_TRUE(failures.empty()) << failures;
}

TEST_F(ReportFuzz, AThousandMutationsOfRunMetaFactsAndMessagesAllRenderInEveryFormat) {
  std::string failures =
      Fuzz(runs_, testdata::EvidenceMutator::Targets::kMetaFactsAndMessages, kSeed + 1);
  EXPECT_TRUE(failures.empty()) << failures;
}

}  // namespace
}  // namespace cc
