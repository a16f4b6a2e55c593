#include "orchestrator/run/containment.h"

#include <algorithm>

namespace cc {
namespace {

std::pair<std::string, std::string> Key(const std::string& a, const std::string& b) {
  return {std::min(a, b), std::max(a, b)};
}

// What the reason says: the cause's own one line, and where it was found.
std::string WhyOf(const Verdict& v) { return v.summary + " (" + v.stage + " " + v.kind + ")"; }

}  // namespace

void Containment::Add(const Verdict& cause) {
  if (cause.cause == CauseScope::kNode) {
    for (const std::string& n : cause.nodes) nodes_.try_emplace(n, WhyOf(cause));
  } else if (cause.cause == CauseScope::kLink) {
    for (const auto& [a, b] : cause.pairs) {
      if (links_.try_emplace(Key(a, b), WhyOf(cause)).second) second_end_[Key(a, b)] = b;
    }
  }
}

std::string Containment::WhyNode(const std::string& node) const {
  auto it = nodes_.find(node);
  return it == nodes_.end() ? "" : it->second;
}

std::string Containment::WhyPair(const std::string& a, const std::string& b) const {
  for (const std::string& n : {a, b}) {
    if (std::string why = WhyNode(n); !why.empty()) return why;
  }
  auto it = links_.find(Key(a, b));
  return it == links_.end() ? "" : it->second;
}

std::vector<std::string> Containment::Remaining(const std::vector<std::string>& nodes) const {
  std::vector<std::string> out;
  for (const std::string& n : nodes) {
    if (!nodes_.count(n)) out.push_back(n);
  }
  return out;
}

std::vector<std::string> Containment::Contained(const std::vector<std::string>& nodes) const {
  std::vector<std::string> out;
  for (const std::string& n : nodes) {
    if (nodes_.count(n)) out.push_back(n);
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> Containment::LinksAmong(
    const std::vector<std::string>& nodes) const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [link, why] : links_) {
    bool a = std::find(nodes.begin(), nodes.end(), link.first) != nodes.end();
    bool b = std::find(nodes.begin(), nodes.end(), link.second) != nodes.end();
    if (a && b) out.push_back(link);
  }
  return out;
}

std::vector<std::string> Containment::JobNodes(const std::vector<std::string>& nodes,
                                               std::map<std::string, std::string>* left_out) const {
  std::map<std::string, std::string> out_now;
  for (const std::string& n : Contained(nodes)) out_now[n] = WhyNode(n);
  for (const auto& link : LinksAmong(nodes)) {
    if (out_now.count(link.first) || out_now.count(link.second)) continue;
    // The stored pair says which way failed; the key is sorted, so look
    // the direction up among the causes' own pairs.
    const std::string& end = second_end_.count(link) ? second_end_.at(link) : link.second;
    out_now[end] = links_.at(link);
  }
  std::vector<std::string> job;
  for (const std::string& n : nodes) {
    if (!out_now.count(n)) job.push_back(n);
  }
  left_out->insert(out_now.begin(), out_now.end());
  return job;
}

std::string NotTestedBecause(const std::string& why) { return "not tested: " + why; }

ContainedSkips ContainedResults(const std::string& stage,
                                const std::map<std::string, std::string>& left_out,
                                const std::vector<std::string>& job,
                                const std::vector<std::string>& node_checks,
                                const std::vector<std::string>& pair_checks) {
  ContainedSkips out;
  for (const auto& [node, why] : left_out) {
    const nlohmann::json evidence = {{"contained", why}};
    for (const std::string& check : node_checks) {
      out.nodes.push_back(NodeCheck(stage, node, check, Outcome::kSkip, NotTestedBecause(why),
                                    evidence, kContainedValue));
    }
    for (const std::string& peer : job) {
      for (const std::string& check : pair_checks) {
        PairResult r;
        r.stage = stage;
        r.src = node;
        r.dst = peer;
        r.check = check;
        r.outcome = Outcome::kSkip;
        r.state = kContainedValue;
        r.message = NotTestedBecause(why);
        r.evidence = evidence;
        out.pairs.push_back(std::move(r));
      }
    }
  }
  return out;
}

}  // namespace cc
