#include "orchestrator/stages/health/health_verdicts.h"

#include <map>
#include <tuple>

#include "common/hostlist.h"
#include "common/json_read.h"

namespace cc {

using nlohmann::json;

std::string HealthNextStep(const std::string& action, const std::string& who, long long gpu) {
  std::string gpu_s = std::to_string(gpu);
  if (action == "drain") return "drain " + who + " and hold it for repair (RMA)";
  if (action == "reboot")
    return "reboot " + who + " and run clustercheck again; drain if it recurs";
  if (action == "reset-gpu") {
    return gpu >= 0 ? "reset GPU " + gpu_s + " on " + who + " (nvidia-smi -r -i " + gpu_s +
                          ", with no job on it) and run clustercheck again"
                    : "reset the GPUs on " + who + " (nvidia-smi -r) and run clustercheck again";
  }
  return "investigate on " + who + " before trusting it with a large job";
}

std::string HealthActionOf(const json& evidence) {
  return JsonString(evidence, "action", "investigate");
}

long long HealthGpuOf(const json& evidence) {
  // GPU indices are small; what is not one names no GPU.
  constexpr int64_t kMaxGpuIndex = 1 << 16;
  return JsonInt(evidence, "gpu", -1, nullptr, -1, kMaxGpuIndex);
}

void HealthVerdicts(const RunData& run, const analysis::NodeOrder& order,
                    std::vector<Verdict>& out) {
  using Key = std::tuple<std::string, Outcome, std::string, std::string, std::string>;
  std::vector<Key> keys;
  std::map<Key, std::vector<const NodeResult*>> groups;
  for (const auto& r : run.node_results) {
    if (r.stage != "health" || r.check == "readings") continue;
    if (r.outcome != Outcome::kFail && r.outcome != Outcome::kWarn) continue;
    std::string action = HealthActionOf(r.evidence);
    Key k{r.check, r.outcome, action, r.value, r.expected};
    auto [it, fresh] = groups.try_emplace(k);
    if (fresh) keys.push_back(k);
    it->second.push_back(&r);
  }
  for (const auto& k : keys) {
    const auto& rs = groups[k];
    const NodeResult& first = *rs.front();
    std::set<std::string> nodes;
    json messages = json::object();
    for (const auto* r : rs) {
      nodes.insert(r->node);
      messages[r->node] = r->message;
    }
    Verdict v;
    v.kind = first.outcome == Outcome::kFail ? "unhealthy" : "warning";
    v.severity = first.outcome;
    v.stage = "health";
    v.check = first.check;
    v.nodes = order.Sorted(nodes);
    std::string who = FoldHostlist(v.nodes);
    std::string action = std::get<2>(k);
    v.summary = who + ": " + first.message + " [" + action + "]";
    // The finding's evidence as it is; evidence that is not an object
    // cannot take the action and the messages, so it goes under "details".
    v.evidence = first.evidence.is_object() ? first.evidence : json{{"details", first.evidence}};
    v.evidence["action"] = action;
    v.evidence["messages"] = messages;
    v.next_step = HealthNextStep(action, who, HealthGpuOf(first.evidence));
    // A node to reboot or drain cannot be trusted to test its links: a
    // cause (analysis/causes.h).
    if (action == "reboot" || action == "drain") v.cause = CauseScope::kNode;
    out.push_back(std::move(v));
  }
}

}  // namespace cc
