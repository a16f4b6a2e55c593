#include "orchestrator/analysis/causes.h"

#include <algorithm>

#include "orchestrator/analysis/analysis_internal.h"
#include "orchestrator/run/containment.h"

namespace cc::analysis {
namespace {

std::pair<std::string, std::string> LinkKey(const std::string& a, const std::string& b) {
  return {std::min(a, b), std::max(a, b)};
}

std::string HiddenKey(const std::pair<std::string, std::string>& link) {
  return link.first + " " + link.second;
}

void AddScope(const Verdict& v, CausedScope& scope) {
  if (v.cause == CauseScope::kNode) scope.nodes.insert(v.nodes.begin(), v.nodes.end());
  if (v.cause == CauseScope::kLink) {
    for (const auto& [a, b] : v.pairs) {
      scope.links.insert(LinkKey(a, b));
      scope.link_ends.insert({a, b});
    }
  }
}

// Whether `v` is a pair stage's verdict about its nodes alone (no pairs)
// whose every node is an end of a caused link.
bool AboutLinkEnds(const CausedScope& scope, const Verdict& v,
                   const std::set<std::string>& pair_stages) {
  if (!v.pairs.empty() || v.nodes.empty() || !pair_stages.count(v.stage)) return false;
  return std::all_of(v.nodes.begin(), v.nodes.end(),
                     [&](const std::string& n) { return scope.link_ends.count(n) > 0; });
}

// Whether `scope` accounts for everything `v` names: each of its pairs is
// covered; without pairs, each of its nodes has a node cause.
bool Explains(const CausedScope& scope, const Verdict& v) {
  if (!v.pairs.empty()) {
    return std::all_of(v.pairs.begin(), v.pairs.end(),
                       [&](const auto& p) { return scope.Covers(p.first, p.second); });
  }
  if (v.nodes.empty()) return false;
  return std::all_of(v.nodes.begin(), v.nodes.end(),
                     [&](const std::string& n) { return scope.nodes.count(n) > 0; });
}

// Whether `v` names anything of cause `c`'s own scope.
bool Touches(const Verdict& c, const Verdict& v) {
  CausedScope own;
  AddScope(c, own);
  for (const auto& [a, b] : v.pairs) {
    if (own.Covers(a, b)) return true;
  }
  return std::any_of(v.nodes.begin(), v.nodes.end(), [&](const std::string& n) {
    return own.nodes.count(n) > 0 || (v.pairs.empty() && own.link_ends.count(n) > 0);
  });
}

Symptom SymptomOf(const Verdict& v) {
  Symptom s;
  s.kind = v.kind;
  s.stage = v.stage;
  s.check = v.check;
  s.summary = v.summary;
  s.pairs = v.pairs.size();
  return s;
}

// What cause `c` is credited with of the failing pairs hidden from the
// pair rules; each node or link once, to the first cause that has it.
size_t Credit(const Verdict& c, const std::map<std::string, size_t>& hidden,
              std::set<std::string>& credited) {
  std::vector<std::string> keys;
  if (c.cause == CauseScope::kNode) keys = c.nodes;
  if (c.cause == CauseScope::kLink) {
    for (const auto& [a, b] : c.pairs) keys.push_back(HiddenKey(LinkKey(a, b)));
  }
  size_t pairs = 0;
  for (const std::string& k : keys) {
    auto it = hidden.find(k);
    if (it != hidden.end() && credited.insert(k).second) pairs += it->second;
  }
  return pairs;
}

}  // namespace

bool IsCause(const Verdict& v) { return v.cause != CauseScope::kNone && IsFailOrHang(v.severity); }

bool CausedScope::Covers(const std::string& a, const std::string& b) const {
  return nodes.count(a) > 0 || nodes.count(b) > 0 || links.count(LinkKey(a, b)) > 0;
}

CausedScope ScopeOfCauses(const std::vector<Verdict>& verdicts) {
  CausedScope scope;
  for (const Verdict& v : verdicts) {
    if (IsCause(v)) AddScope(v, scope);
  }
  return scope;
}

RunData WithoutPairsOf(const RunData& data, const CausedScope& scope,
                       std::map<std::string, size_t>* hidden) {
  RunData out;
  out.run = data.run;
  out.nodes = data.nodes;
  out.node_results = data.node_results;
  out.verdicts = data.verdicts;
  // Routine results are passes and skips: they hide no failure.
  out.routine_pairs = data.routine_pairs.Without(scope.nodes);
  for (const auto& r : data.pair_results) {
    if (!scope.Covers(r.src, r.dst)) {
      out.pair_results.push_back(r);
      continue;
    }
    bool src = scope.nodes.count(r.src) > 0, dst = scope.nodes.count(r.dst) > 0;
    const bool passed = r.outcome == Outcome::kPass || r.outcome == Outcome::kSkip;
    // A caused link's passes stay, as its routine results do (routine_pairs
    // leaves out nodes, not links): the medians see the same values
    // whichever form the passes were stored in.
    if (passed && !src && !dst) out.pair_results.push_back(r);
    if (passed) continue;
    if (src) ++(*hidden)[r.src];
    if (dst && r.dst != r.src) ++(*hidden)[r.dst];
    if (!src && !dst) ++(*hidden)[HiddenKey(LinkKey(r.src, r.dst))];
  }
  return out;
}

namespace {

// Of the causes among `out`, in stage order, those no earlier one explains.
std::vector<size_t> Leading(const std::vector<Verdict>& out,
                            const std::map<std::string, size_t>& stage_rank) {
  auto rank_of = [&](const Verdict& v) {
    auto it = stage_rank.find(v.stage);
    return it == stage_rank.end() ? stage_rank.size() : it->second;
  };
  std::vector<size_t> causes;
  for (size_t i = 0; i < out.size(); ++i) {
    if (IsCause(out[i])) causes.push_back(i);
  }
  std::stable_sort(causes.begin(), causes.end(),
                   [&](size_t a, size_t b) { return rank_of(out[a]) < rank_of(out[b]); });
  std::vector<size_t> leading;
  CausedScope scope;
  for (size_t c : causes) {
    if (!scope.empty() && Explains(scope, out[c])) continue;
    leading.push_back(c);
    AddScope(out[c], scope);
  }
  return leading;
}

}  // namespace

void SayWhatTheRestDid(const RunData& data, std::vector<Verdict>& out) {
  // Per stage: the nodes it left out, and its other nodes' worst outcome.
  std::map<std::string, std::set<std::string>> left_out;
  for (const auto& r : data.node_results) {
    if (r.outcome == Outcome::kSkip && r.value == kContainedValue) {
      left_out[r.stage].insert(r.node);
    }
  }
  if (left_out.empty()) return;
  std::map<std::string, std::map<std::string, Outcome>> rest;  // stage -> node -> worst
  for (const auto& r : data.node_results) {
    auto it = left_out.find(r.stage);
    if (it == left_out.end() || it->second.count(r.node) || r.node == "*") continue;
    auto [at, fresh] = rest[r.stage].try_emplace(r.node, r.outcome);
    if (!fresh) at->second = Worse(at->second, r.outcome);
  }
  for (Verdict& v : out) {
    if (!IsCause(v)) continue;
    std::vector<std::string> phrases;
    for (const auto& [stage, nodes] : left_out) {
      bool ours = std::any_of(v.nodes.begin(), v.nodes.end(),
                              [&](const std::string& n) { return nodes.count(n) > 0; });
      if (!ours || stage == v.stage) continue;
      const auto& others = rest[stage];
      std::vector<std::string> bad;
      for (const auto& [node, o] : others) {
        if (IsFailOrHang(o)) bad.push_back(node);
      }
      if (others.empty()) {
        phrases.push_back(stage + " had no other node to test");
      } else if (bad.empty()) {
        phrases.push_back(stage + " passed on the other " + std::to_string(others.size()) +
                          " node" + (others.size() == 1 ? "" : "s"));
      } else {
        phrases.push_back(stage + " still fails on " + std::to_string(bad.size()) +
                          " of the other " + std::to_string(others.size()) + " nodes");
      }
    }
    if (phrases.empty()) continue;
    std::string joined;
    for (const auto& p : phrases) joined += (joined.empty() ? "" : ", ") + p;
    v.summary += "; without it, " + joined;
  }
}

std::vector<Verdict> LeadingCauses(const RunData& data) {
  std::vector<Verdict> out;
  for (size_t i : Leading(data.verdicts, StageRanks(data))) out.push_back(data.verdicts[i]);
  return out;
}

void FoldIntoCauses(const std::map<std::string, size_t>& hidden,
                    const std::map<std::string, size_t>& stage_rank,
                    const std::set<std::string>& pair_stages, std::vector<Verdict>& out) {
  const std::vector<size_t> leading = Leading(out, stage_rank);
  if (leading.empty()) return;
  // A later cause the leading ones explain is one of their symptoms.
  CausedScope scope;
  for (size_t c : leading) AddScope(out[c], scope);
  std::vector<size_t> into(out.size(), SIZE_MAX);  // verdict -> the cause it folds into
  std::set<size_t> is_leading(leading.begin(), leading.end());
  for (size_t i = 0; i < out.size(); ++i) {
    if (is_leading.count(i)) continue;
    if (!Explains(scope, out[i]) && !AboutLinkEnds(scope, out[i], pair_stages)) continue;
    for (size_t c : leading) {
      if (Touches(out[c], out[i])) {
        into[i] = c;
        break;
      }
    }
  }
  std::set<std::string> credited;
  for (size_t c : leading) {
    Verdict& cause = out[c];
    for (size_t i = 0; i < out.size(); ++i) {
      if (into[i] != c) continue;
      const Verdict& v = out[i];
      // The cause's own stage restating it (nics/selected fails on the
      // node whose address nics found wrong) is the cause, not a symptom.
      bool restated = v.stage == cause.stage && v.check == cause.check && v.pairs.empty();
      if (!restated) cause.explains.push_back(SymptomOf(v));
      for (const Symptom& s : v.explains) cause.explains.push_back(s);
      cause.failing_pairs_explained += v.failing_pairs_explained;
    }
    cause.failing_pairs_explained += Credit(cause, hidden, credited);
    std::string phrase = ExplainsPhrase(cause);
    if (!phrase.empty()) cause.summary += "; " + phrase;
  }
  std::vector<Verdict> kept;
  for (size_t i = 0; i < out.size(); ++i) {
    if (into[i] == SIZE_MAX) kept.push_back(std::move(out[i]));
  }
  out = std::move(kept);
}

}  // namespace cc::analysis
