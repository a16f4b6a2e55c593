#include "orchestrator/stages/parity/parity_verdicts.h"

#include <map>
#include <set>

#include "common/hostlist.h"
#include "orchestrator/analysis/verdict_next_step.h"
#include "orchestrator/stages/parity/parity.h"

namespace cc {
namespace {

using nlohmann::json;

constexpr const char* kStage = "parity";

// Pass findings of a parity check carry the majority as their value.
std::string MajorityOf(const RunData& d, const std::string& check) {
  for (const auto& r : d.node_results) {
    if (r.stage == kStage && r.check == check && r.outcome == Outcome::kPass) {
      return r.value;
    }
  }
  return "";
}

// The failing and warning results of each check, checks in the order
// first seen.
std::vector<std::pair<std::string, std::vector<const NodeResult*>>> BadByCheck(const RunData& d) {
  std::vector<std::pair<std::string, std::vector<const NodeResult*>>> out;
  std::map<std::string, size_t> at;
  for (const auto& r : d.node_results) {
    if (r.stage != kStage) continue;
    if (r.outcome != Outcome::kFail && r.outcome != Outcome::kWarn) continue;
    auto [it, fresh] = at.try_emplace(r.check, out.size());
    if (fresh) out.push_back({r.check, {}});
    out[it->second].second.push_back(&r);
  }
  return out;
}

// The next step the results' own evidence names, each for its node.
std::string OwnNextSteps(const std::vector<const NodeResult*>& rs) {
  std::vector<std::string> steps;
  for (const auto* r : rs) steps.push_back(NextStepFromEvidence(r->evidence, r->node));
  return JoinSteps(steps);
}

}  // namespace

void ParityVerdicts(const RunData& d, const analysis::NodeOrder& order, std::vector<Verdict>& out) {
  for (const auto& [check, rs] : BadByCheck(d)) {
    // Only a majority check has a majority; a rule's passing nodes merely
    // satisfy it (driver_for_cuda passes with 550 on one node, 580 on another).
    const ParityCheckKind check_kind = ParityCheckKindOf(check);
    Verdict v;
    v.kind = check_kind == ParityCheckKind::kRule  ? "incompatible"
             : check_kind == ParityCheckKind::kPin ? "pin-mismatch"
                                                   : "odd-version";
    v.stage = kStage;
    v.check = check;
    v.severity = Outcome::kPass;
    json values = json::object();
    std::map<std::string, std::vector<std::string>> by_value;
    std::set<std::string> named;
    for (const auto* r : rs) {
      v.severity = Worse(v.severity, r->outcome);
      values[r->node] = r->value;
      by_value[r->value].push_back(r->node);
      named.insert(r->node);
    }
    v.nodes = order.Sorted(named);
    std::string expected = rs.front()->expected;
    std::string majority = check_kind == ParityCheckKind::kMajority ? MajorityOf(d, check) : "";
    if (expected.empty()) expected = majority;
    std::string have;
    for (const auto& [value, nodes] : by_value) {
      have += std::string(have.empty() ? "" : ", ") + FoldHostlist(nodes) +
              (nodes.size() == 1 ? " has " : " have ") + (value.empty() ? "nothing" : value);
    }
    v.summary = check + ": " + have;
    if (!expected.empty()) v.summary += "; expected " + expected;
    if (rs.size() == 1 && !rs.front()->message.empty()) {
      v.summary += " (" + rs.front()->message + ")";
    }
    v.evidence = {
        {"field", check}, {"expected", expected}, {"majority", majority}, {"values", values}};
    std::string who = analysis::NodesPhrase(v.nodes);
    std::string remedy = ParityNextStep(check, who, expected);
    std::string own = OwnNextSteps(rs);
    if (!own.empty()) {
      v.next_step = own;
    } else if (!remedy.empty()) {
      v.next_step = remedy;
    } else if (expected.empty()) {
      v.next_step = "look at " + check + " on " + who + ": " + rs.front()->message;
    } else {
      v.next_step = "bring " + check + " on " + who + " to " + expected +
                    " like the rest of the cluster, or drain " + who;
    }
    out.push_back(std::move(v));
  }
}

}  // namespace cc
