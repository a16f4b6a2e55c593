#include "orchestrator/analysis/out_of_service.h"

#include <algorithm>
#include <map>

namespace cc::analysis {

bool TakesOutOfService(const Verdict& v) {
  if (v.severity != Outcome::kFail && v.severity != Outcome::kHang) return false;
  const std::string action =
      v.evidence.is_object() ? v.evidence.value("action", std::string()) : std::string();
  return action == "reboot" || action == "drain";
}

std::set<std::string> OutOfServiceNodes(const std::vector<Verdict>& verdicts) {
  std::set<std::string> out;
  for (const auto& v : verdicts) {
    if (TakesOutOfService(v)) out.insert(v.nodes.begin(), v.nodes.end());
  }
  return out;
}

RunData WithoutPairsOf(const RunData& data, const std::set<std::string>& nodes,
                       std::map<std::string, size_t>* hidden) {
  RunData out;
  out.run = data.run;
  out.nodes = data.nodes;
  out.node_results = data.node_results;
  out.verdicts = data.verdicts;
  out.routine_pairs = data.routine_pairs.Without(nodes);  // passes and skips: hide nothing
  for (const auto& r : data.pair_results) {
    bool src = nodes.count(r.src) > 0, dst = nodes.count(r.dst) > 0;
    if (!src && !dst) {
      out.pair_results.push_back(r);
      continue;
    }
    if (r.outcome == Outcome::kPass || r.outcome == Outcome::kSkip) continue;
    if (src) ++(*hidden)[r.src];
    if (dst && r.dst != r.src) ++(*hidden)[r.dst];
  }
  return out;
}

namespace {

bool ExplainedBy(const Verdict& v, const std::set<std::string>& nodes) {
  if (TakesOutOfService(v) || v.nodes.empty()) return false;
  if (!v.pairs.empty()) {
    return std::all_of(v.pairs.begin(), v.pairs.end(), [&](const auto& p) {
      return nodes.count(p.first) > 0 || nodes.count(p.second) > 0;
    });
  }
  return std::all_of(v.nodes.begin(), v.nodes.end(),
                     [&](const std::string& n) { return nodes.count(n) > 0; });
}

}  // namespace

void FoldIntoOutOfService(const std::map<std::string, size_t>& hidden, std::vector<Verdict>& out) {
  std::vector<size_t> causes;
  for (size_t i = 0; i < out.size(); ++i) {
    if (TakesOutOfService(out[i])) causes.push_back(i);
  }
  if (causes.empty()) return;
  std::vector<Verdict> kept;
  std::map<size_t, std::vector<const Verdict*>> folded;  // cause index -> verdicts
  for (size_t i = 0; i < out.size(); ++i) {
    size_t into = SIZE_MAX;
    for (size_t c : causes) {
      std::set<std::string> nodes(out[c].nodes.begin(), out[c].nodes.end());
      if (ExplainedBy(out[i], nodes)) {
        into = c;
        break;
      }
    }
    if (into != SIZE_MAX) folded[into].push_back(&out[i]);
  }
  std::set<const Verdict*> gone;
  for (const auto& [c, vs] : folded) gone.insert(vs.begin(), vs.end());
  // A node's hidden pairs are credited once, to its first (worst) verdict.
  std::set<std::string> credited;
  for (size_t c : causes) {
    Verdict& cause = out[c];
    size_t pairs = 0;
    for (const auto& n : cause.nodes) {
      auto it = hidden.find(n);
      if (it != hidden.end() && credited.insert(n).second) pairs += it->second;
    }
    for (const Verdict* v : folded[c]) {
      cause.evidence["explains"].push_back(
          {{"kind", v->kind}, {"stage", v->stage}, {"check", v->check}, {"summary", v->summary}});
    }
    size_t n = folded[c].size();
    if (pairs > 0) cause.evidence["failing_pairs_explained"] = pairs;
    if (n + pairs == 0) continue;
    cause.summary += "; this also explains";
    if (pairs > 0)
      cause.summary +=
          " " + std::to_string(pairs) + " failing pair result" + (pairs == 1 ? "" : "s");
    if (pairs > 0 && n > 0) cause.summary += " and";
    if (n > 0) cause.summary += " " + std::to_string(n) + " other verdict" + (n == 1 ? "" : "s");
  }
  for (auto& v : out) {
    if (!gone.count(&v)) kept.push_back(std::move(v));
  }
  out = std::move(kept);
}

}  // namespace cc::analysis
