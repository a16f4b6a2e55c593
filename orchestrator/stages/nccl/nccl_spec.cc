#include "orchestrator/stages/nccl/nccl_spec.h"

#include <algorithm>
#include <cstdio>

#include "common/json_read.h"
#include "orchestrator/stages/nccl/nccl_plan.h"

namespace cc {
namespace {

using Json = nlohmann::json;
using K = StageSettingKey;

constexpr const char* kName = "nccl";

// The phases the stage's own settings ask for, each with its rough cost
// when every test passes (the isolation runs only after a failure).
StageEstimate Estimate(const PlanInput& in) {
  constexpr double kIntraS = 30;    // intra-node AllReduce over sizes
  constexpr double kRoundS = 20;    // one round of pair AllReduces
  constexpr double kClusterS = 30;  // the whole-cluster AllReduce
  Result<NcclSettings> read = ReadNcclSettings(in.inventory.StageSettings(kName));
  const NcclSettings s = read.ok() ? *read : NcclSettings{};
  StageEstimate e;
  // Each dtype runs every size again (in the same communicator).
  const double per_dtype = static_cast<double>(std::max<size_t>(1, s.dtypes.size()));
  auto add = [&](const std::string& part, double seconds) {
    e.work += (e.work.empty() ? "" : ", ") + part;
    e.seconds += seconds * per_dtype;
  };
  if (s.Has("intra")) add("intra-node on " + Plural(in.nodes, "node", "nodes"), kIntraS);
  if (s.Has("pairs")) add(RoundsPhrase(in), static_cast<double>(in.rounds) * kRoundS);
  // As the stage does: two nodes' pair already was the whole cluster.
  bool cluster_adds = in.nodes >= 3 || (in.nodes == 2 && !s.Has("pairs"));
  if (s.Has("cluster")) add("then all " + std::to_string(in.nodes), cluster_adds ? kClusterS : 0);
  if (e.work.empty()) e.work = "no phase to run";
  return e;
}

// How many NCCL runs naming the bad node(s) took (nccl_stage.cc).
std::string IsolationLine(const Json& nccl, JsonProblems* p) {
  const Json& iso = JsonObject(nccl, "isolation", p);
  std::string line;
  {
    JsonProblems::Within in_isolation(p, "isolation");
    int runs = JsonCount(iso, "runs_after_cluster", 0, p);
    if (runs <= 0) return "";
    line = "nccl isolation: " + std::to_string(runs) + " NCCL runs (" +
           std::to_string(JsonCount(iso, "pair_probes", 0, p)) + " pair probes, " +
           std::to_string(JsonCount(iso, "group_tests", 0, p)) + " group tests in " +
           std::to_string(JsonCount(iso, "group_rounds", 0, p)) + " rounds)";
  }
  return line + " of " + std::to_string(JsonCount(nccl, "tests", 0, p)) + " NCCL tests in all";
}

// busbw per dtype when more than float ran: the pairs' median where pairs
// ran, else the whole-cluster test's, else the nodes' median; "-" for a
// dtype without a passing test.
std::string DtypesLine(const Json& nccl, JsonProblems* p) {
  std::string line;
  static const std::pair<const char*, const char*> kWhere[] = {{"pairs_median_gbps", " (pairs)"},
                                                               {"cluster_gbps", " (cluster)"},
                                                               {"intra_median_gbps", " (nodes)"}};
  JsonForEachObject(nccl, "busbw_by_dtype", p, [&](const Json& d) {
    std::string bw = "-";
    for (const auto& [key, suffix] : kWhere) {
      if (JsonMember(d, key).is_null()) continue;
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.2f GB/s", JsonNumber(d, key, 0, p));
      bw = buf + std::string(suffix);
      break;
    }
    line += (line.empty() ? "" : ", ") + JsonString(d, "dtype", "", p) + " " + bw;
  });
  return line.empty() ? "" : "nccl busbw by dtype: " + line;
}

StageTerminalNotes Summarize(const Json& nccl) {
  if (!nccl.is_object()) return {};
  StageTerminalNotes notes;
  for (const std::string& line :
       {IsolationLine(nccl, &notes.problems), DtypesLine(nccl, &notes.problems)}) {
    if (!line.empty()) notes.lines.push_back(line);
  }
  return notes;
}

std::string NodeFailNextStep(const NodeResult&, const std::string& who) {
  return "drain " + who + " and look at its GPUs (nvidia-smi topo -m, dmesg for Xid)";
}

}  // namespace

const StageSpec& NcclSpec() {
  static const StageSpec kSpec{
      .name = kName,
      .summary =
          "AllReduce intra-node, per pair, whole cluster; transport proof; bad-node "
          "isolation",
      .settings =
          {
              {kName, "sizes", K::kSizeList, 0,
               "message sizes: \"8-256M\" (doubling) or a list of sizes",
               "[\"1M\", \"8M\", \"64M\"]"},
              {kName, "iters", K::kInt, 1, "timed iterations per size", "20"},
              {kName, "warmup", K::kInt, 0, "untimed iterations per size", "5"},
              {kName, "check_iters", K::kInt, 0,
               "extra iterations per size, each followed by the exact data check (burn-in)", "0"},
              {kName, "timeout_s", K::kFloat, 0.001,
               "deadline for one test; a test past it is a hang", "60"},
              {kName, "require_net", K::kString, 0,
               "transport NCCL must use between nodes, e.g. \"IB\"", "\"\""},
              {kName, "require_gdrdma", K::kBool, 0,
               "fail unless inter-node traffic uses GPUDirect RDMA", "false"},
              {kName, "gpus_per_node", K::kInt, 1, "ranks per node (default: all GPUs)"},
              {kName, "launcher", K::kString, 0,
               "how ranks start: \"agent\" (default) or \"mpirun\" (id by MPI_Bcast)", "\"agent\""},
              {kName, "env", K::kStringTable, 0, "extra environment for every rank", "{}"},
              {kName, "min_busbw_gbps", K::kFloat, 0,
               "a test below this busbw (GB/s, largest size) fails; 0 = no floor", "0"},
              {kName, "outlier_fraction", K::kFloat, 0.001,
               "a pair below this fraction of the pairs' median busbw warns (0.8)", "0.8"},
              {kName, "phases", K::kStringArray, 0,
               "phases to run: intra, pairs, cluster, isolate (default all)",
               "[\"intra\", \"pairs\", \"cluster\", \"isolate\"]"},
              {kName, "isolate_max_tests", K::kInt, 1,
               "most NCCL tests the isolation may run (default 4 * nodes + 16)"},
              {kName, "dtypes", K::kStringArray, 0,
               "element types to measure and check: float, bf16, half (the first one "
               "drives retests and isolation)",
               "[\"float\"]"},
          },
      .make = MakeNcclStage,
      .estimate = Estimate,
      .summarize = Summarize,
      .node_fail_next_step = NodeFailNextStep,
  };
  return kSpec;
}

}  // namespace cc
