// Folding verdicts that one cause explains into one verdict (analysis.h:
// "one cause, one verdict"): a stage's widespread checks, and a bad node
// seen by several stages.
#include <algorithm>
#include <map>
#include <set>

#include "common/hostlist.h"
#include "common/json_read.h"
#include "orchestrator/analysis/analysis_internal.h"

namespace cc::analysis {
namespace {

using nlohmann::json;

// The unconfirmed results of every check, at the top for MarkUnconfirmed.
void LiftUnconfirmed(json& e) {
  json unconfirmed = json::array();
  size_t judged = 0;
  const json& checks = JsonMember(e, "checks");
  if (!checks.is_object()) return;
  for (const auto& [check, ce] : checks.items()) {
    judged += static_cast<size_t>(JsonCount(ce, "results_judged"));
    const json& list = JsonMember(ce, "unconfirmed");
    if (!list.is_array()) continue;
    for (const auto& u : list) unconfirmed.push_back(u);
  }
  e["results_judged"] = judged;
  if (!unconfirmed.empty()) e["unconfirmed"] = unconfirmed;
}

}  // namespace

std::map<std::string, size_t> StageRanks(const RunData& d) {
  std::map<std::string, size_t> rank;
  for (const auto& r : d.node_results) rank.emplace(r.stage, rank.size());
  for (const auto& r : d.pair_results) rank.emplace(r.stage, rank.size());
  for (const auto& g : d.routine_pairs.groups()) rank.emplace(g.stage, rank.size());
  for (const auto& v : d.verdicts) rank.emplace(v.stage, rank.size());
  return rank;
}

void FoldWidespreadByStage(const NodeOrder& order, std::vector<Verdict>& out, size_t from) {
  std::map<std::string, size_t> first_of;
  std::vector<Verdict> kept(out.begin(), out.begin() + static_cast<long>(from));
  for (size_t i = from; i < out.size(); ++i) {
    Verdict& v = out[i];
    if (v.kind != "widespread") {
      kept.push_back(std::move(v));
      continue;
    }
    auto [it, fresh] = first_of.try_emplace(v.stage, kept.size());
    if (fresh) {
      kept.push_back(std::move(v));
      continue;
    }
    Verdict& into = kept[it->second];
    if (!into.evidence.contains("checks")) {
      json own = into.evidence;
      into.evidence = {{"checks", {{into.check, own}}}, {"summaries", {into.summary}}};
    }
    // A stage's stored widespread verdict may hold "checks" or
    // "summaries" of its own shape: what is not ours is started afresh.
    if (!JsonMember(into.evidence, "checks").is_object()) into.evidence["checks"] = json::object();
    if (!JsonMember(into.evidence, "summaries").is_array()) {
      into.evidence["summaries"] = json::array({into.summary});
    }
    into.evidence["checks"][v.check] = v.evidence;
    into.evidence["summaries"].push_back(v.summary);
    into.check += ", " + v.check;
    into.severity = Worse(into.severity, v.severity);
    into.pairs.insert(into.pairs.end(), v.pairs.begin(), v.pairs.end());
    std::set<std::string> nodes(into.nodes.begin(), into.nodes.end());
    nodes.insert(v.nodes.begin(), v.nodes.end());
    into.nodes = order.Sorted(nodes);
    LiftUnconfirmed(into.evidence);
    into.summary = into.stage + " fails across the cluster on " +
                   std::to_string(into.evidence["summaries"].size()) + " checks (" + into.check +
                   "), spread over " + FoldHostlist(into.nodes) + "; e.g. " +
                   (into.evidence["summaries"][0].is_string()
                        ? into.evidence["summaries"][0].get<std::string>()
                        : v.summary);
  }
  out = std::move(kept);
}

void FoldSymptomsAcrossStages(const RunData& d, std::vector<Verdict>& out) {
  std::map<std::string, size_t> rank = StageRanks(d);
  auto rank_of = [&](const std::string& stage) {
    auto it = rank.find(stage);
    return it == rank.end() ? rank.size() : it->second;
  };
  // The first-run stage's bad-node (or flaky node) verdict of each node.
  auto foldable = [](const Verdict& v) {
    return (v.kind == "bad-node" || v.kind == "flaky") && v.nodes.size() == 1;
  };
  auto key = [](const Verdict& v) { return v.kind + " " + v.nodes[0]; };
  std::map<std::string, size_t> cause_of;
  for (size_t i = 0; i < out.size(); ++i) {
    const Verdict& v = out[i];
    if (!foldable(v)) continue;
    auto [it, fresh] = cause_of.try_emplace(key(v), i);
    if (!fresh && rank_of(v.stage) < rank_of(out[it->second].stage)) it->second = i;
  }
  std::vector<Verdict> kept;
  std::vector<size_t> kept_index(out.size(), SIZE_MAX);
  for (size_t i = 0; i < out.size(); ++i) {
    const Verdict& v = out[i];
    bool symptom =
        foldable(v) && cause_of.at(key(v)) != i && out[cause_of.at(key(v))].stage != v.stage;
    if (symptom) continue;
    kept_index[i] = kept.size();
    kept.push_back(v);
  }
  for (size_t i = 0; i < out.size(); ++i) {
    if (kept_index[i] != SIZE_MAX) continue;
    const Verdict& v = out[i];
    Verdict& cause = kept[kept_index[cause_of.at(key(v))]];
    cause.severity = Worse(cause.severity, v.severity);
    cause.explains.push_back({v.kind, v.stage, v.check, v.summary, v.pairs.size()});
  }
  for (auto& v : kept) {
    if (v.explains.empty()) continue;
    std::set<std::string> stages;
    for (const Symptom& s : v.explains) stages.insert(s.stage);
    std::string list;
    for (const auto& s : stages) list += (list.empty() ? "" : ", ") + s;
    size_t n = v.explains.size();
    std::string what = v.kind == "flaky" ? "flaky finding" : "failure";
    v.summary += "; this also explains " + std::to_string(n) + " " + what + (n == 1 ? "" : "s") +
                 " in " + list;
  }
  out = std::move(kept);
}

namespace {

// Moves the pairs of warning `w` that flaky verdict `f` explains into f's
// evidence; returns how many it moved.
size_t MoveExplained(Verdict& w, Verdict& f) {
  std::set<std::string> named(f.nodes.begin(), f.nodes.end());
  auto explained = [&](const std::string& a, const std::string& b) {
    // A node verdict explains any pair with that node; a pair verdict
    // only its own pair.
    if (f.nodes.size() == 1) return named.count(a) + named.count(b) > 0;
    return named.count(a) > 0 && named.count(b) > 0;
  };
  const json& ev = JsonMember(w.evidence, "pairs");
  json moved = json::array(), left = json::array();
  std::vector<std::pair<std::string, std::string>> left_pairs;
  for (size_t i = 0; i < w.pairs.size(); ++i) {
    const auto& [a, b] = w.pairs[i];
    json e = ev.is_array() && i < ev.size() ? ev[i] : json::object();
    if (explained(a, b)) {
      moved.push_back(e);
    } else {
      left.push_back(e);
      left_pairs.push_back(w.pairs[i]);
    }
  }
  if (moved.empty()) return 0;
  AppendTo(f.evidence, "warnings", {{"check", w.check}, {"pairs", moved}});
  f.summary += "; it also explains " + std::to_string(moved.size()) + " warning" +
               (moved.size() == 1 ? "" : "s") + " of " + w.check;
  w.pairs = left_pairs;
  if (!w.evidence.is_object()) w.evidence = json{{"details", std::move(w.evidence)}};
  w.evidence["pairs"] = left;
  std::set<std::string> still;
  for (const auto& [a, b] : left_pairs) still.insert({a, b});
  std::vector<std::string> nodes;
  for (const auto& n : w.nodes) {
    if (still.count(n)) nodes.push_back(n);
  }
  w.nodes = nodes;
  if (!left.empty()) {
    w.summary = w.stage + " " + w.check + " warns on " + std::to_string(left.size()) +
                " pair(s): " + JsonString(left[0], "message");
  }
  return moved.size();
}

}  // namespace

void FoldWarningsIntoFlaky(std::vector<Verdict>& out) {
  std::vector<size_t> flaky;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i].kind == "flaky") flaky.push_back(i);
  }
  std::vector<Verdict> kept;
  for (auto& w : out) {
    if (w.kind == "warning" && !w.pairs.empty()) {
      for (size_t f : flaky) {
        if (out[f].stage == w.stage) MoveExplained(w, out[f]);
      }
      if (w.pairs.empty()) continue;
    }
    kept.push_back(std::move(w));
  }
  out = std::move(kept);
}

}  // namespace cc::analysis
