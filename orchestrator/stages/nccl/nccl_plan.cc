#include "orchestrator/stages/nccl/nccl_plan.h"

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <set>

#include "orchestrator/run/schedule.h"

namespace cc {

using Json = nlohmann::json;

namespace {

bool PassedToAgent(const std::string& name) {
  return name.rfind("NCCL_", 0) == 0 || name.rfind("CUDA_", 0) == 0;
}

std::string Gbps(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

}  // namespace

bool NcclSettings::Has(const std::string& phase) const {
  return std::find(phases.begin(), phases.end(), phase) != phases.end();
}

Result<NcclSettings> ReadNcclSettings(const Json& j) {
  NcclSettings s;
  if (!j.is_object()) return s;
  auto bad = [](const std::string& what) {
    return Status::Error(ErrorKind::kBadInventory, "stages.nccl." + what);
  };
  if (j.contains("sizes")) {
    auto sizes = ParseSizesJson(j["sizes"]);
    if (!sizes.ok()) return bad("sizes: " + sizes.status().message());
    for (uint64_t b : *sizes) {
      if (b % 4 != 0)
        return bad("sizes: " + FormatSize(b) + " is not a multiple of 4 bytes (float)");
    }
    s.sizes = *sizes;
  }
  s.iters = j.value("iters", s.iters);
  s.warmup = j.value("warmup", s.warmup);
  s.check_iters = j.value("check_iters", s.check_iters);
  if (s.check_iters < 0) return bad("check_iters: must be 0 or more");
  s.timeout_s = j.value("timeout_s", s.timeout_s);
  s.policy.require_net = j.value("require_net", std::string());
  s.policy.require_gdrdma = j.value("require_gdrdma", false);
  if (j.contains("gpus_per_node")) s.gpus_per_node = j["gpus_per_node"].get<int>();
  if (j.contains("env") && j["env"].is_object()) {
    for (const auto& [k, v] : j["env"].items()) {
      if (!PassedToAgent(k)) return bad("env: " + k + " is not an NCCL_* or CUDA_* variable");
      s.env[k] = v.is_string() ? v.get<std::string>() : v.dump();
    }
  }
  s.min_busbw_gbps = j.value("min_busbw_gbps", 0.0);
  s.outlier_fraction = j.value("outlier_fraction", s.outlier_fraction);
  if (s.outlier_fraction > 1) return bad("outlier_fraction: must be at most 1");
  if (j.contains("phases")) {
    s.phases.clear();
    static const std::set<std::string> kPhases = {"intra", "pairs", "cluster", "isolate"};
    for (const auto& p : j["phases"]) {
      std::string name = p.get<std::string>();
      if (!kPhases.count(name)) {
        return bad("phases: unknown phase '" + name + "' (known: intra, pairs, cluster, isolate)");
      }
      s.phases.push_back(name);
    }
  }
  s.isolate_max_tests = j.value("isolate_max_tests", 0);
  s.launcher = j.value("launcher", std::string("agent"));
  if (s.launcher != "agent" && s.launcher != "mpirun") {
    return bad("launcher: '" + s.launcher + "' is not one of \"agent\", \"mpirun\"");
  }
  if (j.contains("dtypes")) {
    s.dtypes.clear();
    for (const auto& d : j["dtypes"]) {
      std::string name = d.is_string() ? d.get<std::string>() : d.dump();
      if (name != "float" && name != "bf16" && name != "half") {
        return bad("dtypes: unknown dtype '" + name + "' (known: float, bf16, half)");
      }
      if (std::find(s.dtypes.begin(), s.dtypes.end(), name) != s.dtypes.end()) {
        return bad("dtypes: '" + name + "' is listed twice");
      }
      s.dtypes.push_back(name);
    }
    if (s.dtypes.empty()) return bad("dtypes: must name at least one of float, bf16, half");
  }
  return s;
}

double NcclAgentDeadlinesS(const NcclSettings& s) {
  const double sizes = static_cast<double>(s.sizes.size() * s.dtypes.size());
  return s.timeout_s * (2 + sizes * (1 + s.check_iters));
}

bool NcclSizeExact(const Json& size) {
  // Both, so a size is judged the same whether or not the agent folded its
  // checked iterations into data_ok.
  return size.value("data_ok", false) && size.value("check_mismatches", 0) == 0;
}

std::map<std::string, std::string> NcclEnvFor(const std::map<std::string, std::string>& chosen,
                                              const std::map<std::string, std::string>& stage_env,
                                              const std::map<std::string, std::string>& node_env) {
  std::map<std::string, std::string> env;
  for (const auto& [k, v] : chosen) {
    if (PassedToAgent(k) && !v.empty()) env[k] = v;
  }
  for (const auto& [k, v] : stage_env) env[k] = v;
  for (const auto& [k, v] : node_env) {
    if (PassedToAgent(k)) env[k] = v;
  }
  return env;
}

int GpusToUse(const Json& facts, std::optional<int> gpus_per_node, std::string* why) {
  const Json gpu = facts.is_object() ? facts.value("gpu", Json()) : Json();
  if (!gpu.is_object()) {
    *why = "no GPU facts for this node (did the facts stage run?)";
    return 0;
  }
  std::string status = gpu.value("status", std::string("ok"));
  int count = gpu.value("count", 0);
  if (status != "ok" || count <= 0) {
    std::string reason = gpu.value("reason", std::string());
    *why = "no GPU: the facts say gpu " + status + (reason.empty() ? "" : " (" + reason + ")");
    return 0;
  }
  const Json nccl = facts.value("nccl", Json());
  if (nccl.is_object() && nccl.value("status", std::string("ok")) != "ok") {
    std::string reason = nccl.value("reason", std::string());
    *why = "no usable libnccl.so.2: the facts say nccl " + nccl.value("status", std::string()) +
           (reason.empty() ? "" : " (" + reason + ")");
    return 0;
  }
  return gpus_per_node ? std::min(*gpus_per_node, count) : count;
}

namespace {

// One rank's checked iterations (check_iters) of a size into the merged
// size m: the fewest any rank checked and the most any rank found not
// exact (the ranks check the same iterations, each its own output).
void MergeChecked(const Json& s, Json* m) {
  if (!s.contains("checked_iters")) return;  // an agent from before check_iters
  int checked = s.value("checked_iters", 0), bad = s.value("check_mismatches", 0);
  if (m->contains("checked_iters")) {
    checked = std::min(checked, (*m)["checked_iters"].get<int>());
    bad = std::max(bad, (*m)["check_mismatches"].get<int>());
  }
  (*m)["checked_iters"] = checked;
  (*m)["check_mismatches"] = bad;
}

// Per size: bytes, the slowest rank's time and busbw, whether every rank's
// data was exact, and the checked iterations when there were any.
Json MergeSizes(const std::vector<RankReport>& ranks, bool* data_ok) {
  std::map<uint64_t, Json> by;
  *data_ok = true;
  for (const RankReport& r : ranks) {
    for (const Json& s : r.sizes) {
      uint64_t bytes = s.value("bytes", uint64_t{0});
      Json& m = by[bytes];
      double t = s.value("time_us", 0.0), bw = s.value("busbw", 0.0), al = s.value("algbw", 0.0);
      bool ok = NcclSizeExact(s);
      if (!ok) *data_ok = false;
      if (m.is_null()) {
        m = {{"bytes", bytes}, {"size", FormatSize(bytes)},
             {"time_us", t},   {"algbw", al},
             {"busbw", bw},    {"data_ok", ok},
             {"ranks", 1}};
        MergeChecked(s, &m);
        continue;
      }
      MergeChecked(s, &m);
      m["time_us"] = std::max(m["time_us"].get<double>(), t);
      m["algbw"] = std::min(m["algbw"].get<double>(), al);
      m["busbw"] = std::min(m["busbw"].get<double>(), bw);
      m["data_ok"] = m["data_ok"].get<bool>() && ok;
      m["ranks"] = m["ranks"].get<int>() + 1;
    }
  }
  Json out = Json::array();
  for (auto& [b, m] : by) out.push_back(std::move(m));
  return out;
}

}  // namespace

namespace {

// The worst rank's outcome, the merged sizes and NCCL log, and per node
// what its rank said. *data_ok: every rank's data was exact.
TestJudgement MergeRanks(const std::vector<RankReport>& ranks, bool* data_ok) {
  TestJudgement j;
  j.outcome = Outcome::kPass;
  std::string all_logs;
  Json per_node = Json::object();
  for (const RankReport& r : ranks) {
    j.outcome = r.outcome == Outcome::kPass ? j.outcome : Worse(j.outcome, r.outcome);
    all_logs += r.log;
    if (!all_logs.empty() && all_logs.back() != '\n') all_logs += '\n';
    Json n = {{"outcome", OutcomeName(r.outcome)}};
    if (!r.reason.empty()) n["reason"] = r.reason;
    if (!r.step.empty()) n["step"] = r.step;
    per_node[r.node] = n;
  }
  j.sizes = MergeSizes(ranks, data_ok);
  if (!j.sizes.empty()) j.busbw = j.sizes.back()["busbw"].get<double>();
  j.log = ParseNcclLog(all_logs);
  j.evidence["ranks"] = per_node;
  j.evidence["sizes"] = j.sizes;
  return j;
}

// "; 2 of 100 checked iterations not exact at 1M, ..." for the merged sizes
// whose checked iterations mismatched; "" when none did.
std::string CheckedItersFailure(const Json& sizes) {
  std::string out;
  for (const Json& m : sizes) {
    int bad = m.value("check_mismatches", 0);
    if (bad <= 0) continue;
    out += (out.empty() ? "; " : ", ") + std::to_string(bad) + " of " +
           std::to_string(m.value("checked_iters", 0)) + " checked iterations not exact at " +
           m.value("size", std::string());
  }
  return out;
}

// A run that did not pass: every rank's outcome in the message, and who
// broke it: a node that failed outright while the rest hung or failed
// waiting for it (a wrong NCCL_SOCKET_IFNAME fails at init on its node).
void ExplainBrokenRun(const std::vector<RankReport>& ranks, TestJudgement* j) {
  std::vector<std::string> failed;
  for (const RankReport& r : ranks) {
    if (r.outcome == Outcome::kFail || r.outcome == Outcome::kError) failed.push_back(r.node);
  }
  if (!failed.empty() && failed.size() < ranks.size()) j->culprits = failed;
  std::string msg;
  for (const RankReport& r : ranks) {
    if (r.outcome == Outcome::kPass) continue;
    if (!msg.empty()) msg += "; ";
    msg += r.node + ": " + OutcomeName(r.outcome) + (r.step.empty() ? "" : " at " + r.step) +
           (r.reason.empty() ? "" : " (" + r.reason + ")");
  }
  j->message = msg;
  if (!j->culprits.empty()) j->evidence["culprits"] = j->culprits;
}

// What the NCCL log says about the transport, for the evidence.
Json TransportEvidence(const TestJudgement& j) {
  Json tr = {{"network", j.log.network},
             {"interfaces", j.log.interfaces},
             {"nnodes", j.log.nnodes},
             {"nranks", j.log.nranks},
             {"verdict", OutcomeName(j.transport.outcome)},
             {"message", j.transport.message},
             {"lines", j.transport.evidence}};
  std::set<std::string> kinds;
  for (const ChannelPath& p : j.log.paths) {
    kinds.insert(p.transport + (p.net.empty() ? "" : "/" + p.net) + (p.gdrdma ? "/GDRDMA" : ""));
  }
  tr["paths"] = Json(std::vector<std::string>(kinds.begin(), kinds.end()));
  if (!j.log.version.empty()) tr["nccl_version"] = j.log.version;
  return tr;
}

// A run that passed with exact data: its bandwidth in the message, then
// judged on its transport (policy) and on NCCL's nNodes.
void JudgeWorkingRun(int nodes, const TransportPolicy& policy, TestJudgement* j) {
  j->transport = JudgeTransport(j->log, policy);
  j->evidence["transport"] = TransportEvidence(*j);
  std::string bw = j->busbw ? "busbw " + Gbps(*j->busbw) + " GB/s at " +
                                  j->sizes.back().value("size", std::string())
                            : "no size measured";
  std::string via = j->log.network.empty() ? "" : ", via NET/" + j->log.network;
  j->message = bw + via;
  const Outcome transport = j->transport.outcome;
  if (transport == Outcome::kFail || transport == Outcome::kWarn) {
    j->outcome = Worse(j->outcome, transport);
    j->message += "; " + j->transport.message;
  } else if (transport == Outcome::kError && nodes > 1) {
    // A policy cannot be proven without the log; without one it is a note.
    bool asked = !policy.require_net.empty() || policy.require_gdrdma;
    j->outcome = Worse(j->outcome, asked ? Outcome::kFail : Outcome::kWarn);
    j->message += "; transport unknown: " + j->transport.message;
  }
  if (nodes > 1 && j->log.nnodes > 0 && j->log.nnodes != nodes) {
    j->outcome = Worse(j->outcome, Outcome::kWarn);
    j->message += "; NCCL saw nNodes " + std::to_string(j->log.nnodes) + ", expected " +
                  std::to_string(nodes) + " (NCCL_HOSTID or hostnames alike?)";
  }
}

}  // namespace

TestJudgement JudgeNcclTest(const std::vector<RankReport>& ranks, int nodes,
                            const TransportPolicy& policy) {
  bool data_ok = true;
  TestJudgement j = MergeRanks(ranks, &data_ok);
  if (!IsPassOrWarn(j.outcome)) {
    ExplainBrokenRun(ranks, &j);
  } else if (!data_ok) {
    j.outcome = Outcome::kFail;
    j.message = "AllReduce data check failed (sums not exact)" + CheckedItersFailure(j.sizes);
  } else {
    JudgeWorkingRun(nodes, policy, &j);
  }
  return j;
}

namespace {

// The ranks' reports with only `dtype`'s sizes; a rank that failed only a
// data check, of another dtype, passes when this dtype's data was exact.
std::vector<RankReport> ReportsOfDtype(const std::vector<RankReport>& ranks,
                                       const std::string& dtype) {
  std::vector<RankReport> out = ranks;
  for (RankReport& r : out) {
    Json mine = Json::array();
    bool exact = true;
    for (const Json& s : r.sizes) {
      if (s.value("dtype", std::string("float")) != dtype) continue;
      exact = exact && NcclSizeExact(s);
      mine.push_back(s);
    }
    r.sizes = std::move(mine);
    if (r.outcome == Outcome::kFail && r.step == "data check" && exact && !r.sizes.empty()) {
      r.outcome = Outcome::kPass;
      r.reason.clear();
      r.step.clear();
    }
  }
  return out;
}

}  // namespace

TestJudgement JudgeNcclTestByDtype(const std::vector<RankReport>& ranks, int nodes,
                                   const TransportPolicy& policy,
                                   const std::vector<std::string>& dtypes) {
  std::vector<TestJudgement> js;
  for (const std::string& d : dtypes) {
    // One dtype (the default): every size is its own, as before dtypes.
    js.push_back(
        JudgeNcclTest(dtypes.size() == 1 ? ranks : ReportsOfDtype(ranks, d), nodes, policy));
    js.back().dtype = d;
    if (d != "float") js.back().evidence["dtype"] = d;
  }
  TestJudgement first = std::move(js.front());
  first.other_dtypes.assign(std::make_move_iterator(js.begin() + 1),
                            std::make_move_iterator(js.end()));
  return first;
}

std::string NcclCheckName(const std::string& check, const std::string& dtype) {
  return dtype == "float" ? check : check + "." + dtype;
}

Outcome JudgeBusbw(double busbw, double median, const NcclSettings& s, std::string* why) {
  if (s.min_busbw_gbps > 0 && busbw < s.min_busbw_gbps) {
    *why = "busbw " + Gbps(busbw) + " GB/s below min_busbw_gbps " + Gbps(s.min_busbw_gbps);
    return Outcome::kFail;
  }
  if (median > 0 && busbw < s.outlier_fraction * median) {
    *why = "busbw " + Gbps(busbw) + " GB/s below " + Gbps(s.outlier_fraction * 100) +
           "% of the pairs' median " + Gbps(median) + " GB/s";
    return Outcome::kWarn;
  }
  why->clear();
  return Outcome::kPass;
}

}  // namespace cc
