// Flaky and unconfirmed verdicts; see analysis_confirm.h.
#include "orchestrator/analysis/analysis_confirm.h"

#include <algorithm>
#include <map>
#include <set>

#include "common/hostlist.h"
#include "common/json_read.h"
#include "orchestrator/analysis/widespread.h"
#include "orchestrator/run/confirm.h"
#include "orchestrator/stages/stages.h"

namespace cc::analysis {
namespace {

using nlohmann::json;
using Pair = std::pair<std::string, std::string>;

// Pairs named one by one up to this many; more become one verdict.
constexpr size_t kNamedFlakyPairs = 6;
// Results whose attempts are copied into a verdict that counts them.
constexpr size_t kExampleResults = 10;

std::string Str(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}

const json& Attempts(const json& evidence) {
  static const json kNone = json::array();
  if (!evidence.is_object() || !evidence.contains("attempts")) return kNone;
  const json& a = evidence["attempts"];
  return a.is_array() ? a : kNone;
}

// "filtered" (its state) or "fail" (its outcome) of one attempt.
std::string AttemptWord(const json& a) {
  std::string s = Str(a, "state");
  return s.empty() ? Str(a, "outcome") : s;
}

// "filtered on the first attempt, open on the retest".
std::string AttemptsPhrase(const json& evidence) {
  const json& a = Attempts(evidence);
  if (a.size() < 2) return "failed once, passed on the retest";
  return AttemptWord(a[0]) + " on the first attempt, " + AttemptWord(a[1]) + " on the retest";
}

json ResultAttempts(const PairResult& r) {
  return {{"src", r.src}, {"dst", r.dst}, {"check", r.check}, {"attempts", Attempts(r.evidence)}};
}

// The checks of `rs`, "tcp/22" or "tcp/22, tcp/29500 and 3 more".
std::string ChecksOf(const std::vector<const PairResult*>& rs) {
  std::vector<std::string> checks;
  for (const auto* r : rs) {
    std::string c = MatrixCheck(*r);
    if (std::find(checks.begin(), checks.end(), c) == checks.end()) checks.push_back(c);
  }
  std::string out;
  for (size_t i = 0; i < checks.size() && i < 2; ++i) out += (i ? ", " : "") + checks[i];
  if (checks.size() > 2) out += " and " + std::to_string(checks.size() - 2) + " more";
  return out;
}

Verdict Flaky(const std::string& stage) {
  Verdict v;
  v.kind = "flaky";
  v.severity = Outcome::kWarn;
  v.stage = stage;
  v.evidence["confirmation"] = kFlaky;
  return v;
}

void AddResults(Verdict& v, const std::vector<const PairResult*>& rs, size_t max_examples) {
  for (const auto* r : rs) {
    v.pairs.push_back({r->src, r->dst});
    if (v.evidence["results"].size() < max_examples) {
      v.evidence["results"].push_back(ResultAttempts(*r));
    }
  }
}

// The flaky pair results of one stage, by undirected link.
class StageFlakes {
 public:
  StageFlakes(std::string stage, const NodeOrder& order)
      : stage_(std::move(stage)), order_(order) {}

  void Add(const PairResult& r) {
    if (r.src == r.dst) return;
    Pair link = Tested(r.src, r.dst, r.outcome);
    if (!IsFlaky(r)) return;
    auto [it, fresh] = flaky_.try_emplace(link);
    if (fresh) links_.push_back(link);
    it->second.push_back(&r);
  }

  // The link of src and dst, counted as tested unless `o` says it was not.
  Pair Tested(const std::string& src, const std::string& dst, Outcome o) {
    Pair link = order_.Index(src) <= order_.Index(dst) ? Pair{src, dst} : Pair{dst, src};
    if (src != dst && o != Outcome::kSkip && o != Outcome::kError) tested_.insert(link);
    return link;
  }
  bool AnyFlaky() const { return !links_.empty(); }

  void Judge(std::vector<Verdict>& out) {
    if (links_.empty()) return;
    std::vector<Pair> tested(tested_.begin(), tested_.end());
    Spread s = JudgeSpread(tested, links_);
    if (s.widespread) return Everywhere(s, out);
    std::set<Pair> claimed;
    for (const auto& node : order_.Sorted({s.standouts.begin(), s.standouts.end()})) {
      std::vector<Pair> mine;
      for (const auto& l : links_) {
        if ((l.first == node || l.second == node) && !claimed.count(l)) mine.push_back(l);
      }
      if (mine.size() < 2) continue;
      OfNode(node, mine, out);
      claimed.insert(mine.begin(), mine.end());
    }
    std::vector<Pair> rest;
    for (const auto& l : links_) {
      if (!claimed.count(l)) rest.push_back(l);
    }
    if (rest.size() > kNamedFlakyPairs) return Many(rest, out);
    for (const auto& l : rest) OfLink(l, out);
  }

 private:
  std::vector<const PairResult*> ResultsOf(const std::vector<Pair>& links) const {
    std::vector<const PairResult*> rs;
    for (const auto& l : links) {
      const auto& mine = flaky_.at(l);
      rs.insert(rs.end(), mine.begin(), mine.end());
    }
    return rs;
  }

  std::string Example(const PairResult& r) const {
    return r.src + " -> " + r.dst + " " + MatrixCheck(r) + ": " + AttemptsPhrase(r.evidence);
  }

  void OfLink(const Pair& l, std::vector<Verdict>& out) const {
    auto rs = ResultsOf({l});
    Verdict v = Flaky(stage_);
    v.nodes = {l.first, l.second};
    v.check = ChecksOf(rs);
    AddResults(v, rs, SIZE_MAX);
    v.summary = stage_ + " " + v.check + " between " + l.first + " and " + l.second +
                " is flaky: " + AttemptsPhrase(rs.front()->evidence);
    if (rs.size() > 1) v.summary += " (" + std::to_string(rs.size()) + " results alike)";
    v.next_step = "nothing to fix yet: if " + l.first + " and " + l.second +
                  " are flaky again, check the link between them (error counters in ip -s link "
                  "on both, the switch ports)";
    out.push_back(std::move(v));
  }

  void OfNode(const std::string& node, const std::vector<Pair>& links,
              std::vector<Verdict>& out) const {
    auto rs = ResultsOf(links);
    Verdict v = Flaky(stage_);
    v.nodes = {node};
    v.check = ChecksOf(rs);
    AddResults(v, rs, SIZE_MAX);
    size_t partners = 0;
    for (const auto& l : tested_) partners += l.first == node || l.second == node;
    v.summary = stage_ + ": " + node + " is flaky with " + std::to_string(links.size()) + " of " +
                std::to_string(partners) +
                " partners (first attempts failed, retests passed; e.g. " + Example(*rs.front()) +
                ")";
    v.next_step = "watch " + node +
                  ": if it is flaky again, check its NIC and link (error "
                  "counters in ip -s link, dmesg, the switch port) and its load";
    out.push_back(std::move(v));
  }

  // A flaky verdict naming every node of `links`, with a few of their
  // results `rs` as examples.
  Verdict FlakyAmong(const std::vector<Pair>& links,
                     const std::vector<const PairResult*>& rs) const {
    Verdict v = Flaky(stage_);
    std::set<std::string> nodes;
    for (const auto& l : links) nodes.insert({l.first, l.second});
    v.nodes = order_.Sorted(nodes);
    v.check = ChecksOf(rs);
    AddResults(v, rs, kExampleResults);
    return v;
  }

  void Many(const std::vector<Pair>& links, std::vector<Verdict>& out) const {
    auto rs = ResultsOf(links);
    Verdict v = FlakyAmong(links, rs);
    v.evidence["flaky_pairs"] = links.size();
    v.summary = stage_ + ": " + std::to_string(links.size()) + " pairs among " +
                FoldHostlist(v.nodes) + " are flaky (e.g. " + Example(*rs.front()) + ")";
    v.next_step =
        "nothing to fix yet: if these pairs are flaky again, compare their links "
        "(error counters in ip -s link, the switch ports they share)";
    out.push_back(std::move(v));
  }

  void Everywhere(const Spread& s, std::vector<Verdict>& out) const {
    auto rs = ResultsOf(links_);
    Verdict v = FlakyAmong(links_, rs);
    v.evidence["flaky_pairs"] = s.failed_pairs;
    v.evidence["tested_pairs"] = s.tested_pairs;
    v.evidence["share"] = s.share;
    v.evidence["nodes_touched"] = s.nodes_touched;
    v.evidence["nodes_tested"] = s.nodes_tested;
    v.summary = stage_ + ": " + std::to_string(s.failed_pairs) + " of " +
                std::to_string(s.tested_pairs) + " pairs were flaky, spread over " +
                std::to_string(s.nodes_touched) + " of " + std::to_string(s.nodes_tested) +
                " nodes: first attempts failed under load and passed when retested quietly";
    v.next_step =
        "nothing is broken; if this recurs, lower the load (--fanout, the stage's "
        "parallelism) and look at what every node shares (the switch, the receivers' CPU)";
    out.push_back(std::move(v));
  }

  std::string stage_;
  const NodeOrder& order_;
  std::set<Pair> tested_;
  std::vector<Pair> links_;  // flaky links, in the order first seen
  std::map<Pair, std::vector<const PairResult*>> flaky_;
};

void FlakyNodeVerdicts(const RunData& d, const NodeOrder& order, std::vector<Verdict>& out) {
  std::vector<Pair> keys;
  std::map<Pair, std::vector<const NodeResult*>> groups;
  for (const auto& r : d.node_results) {
    if (ConfirmationOf(r.evidence) != kFlaky) continue;
    auto [it, fresh] = groups.try_emplace({r.stage, r.check});
    if (fresh) keys.push_back({r.stage, r.check});
    it->second.push_back(&r);
  }
  for (const auto& key : keys) {
    const auto& rs = groups[key];
    Verdict v = Flaky(key.first);
    v.check = key.second;
    std::set<std::string> nodes;
    for (const auto* r : rs) {
      nodes.insert(r->node);
      v.evidence["results"].push_back({{"node", r->node}, {"attempts", Attempts(r->evidence)}});
    }
    v.nodes = order.Sorted(nodes);
    std::string who = NodesPhrase(v.nodes);
    v.summary = key.first + "/" + key.second + " on " + who +
                " is flaky: " + AttemptsPhrase(rs.front()->evidence);
    v.next_step = "nothing to fix yet: if " + key.first + "/" + key.second + " on " + who +
                  " is flaky again, look at what it depends on there (load, dmesg)";
    out.push_back(std::move(v));
  }
}

}  // namespace

std::string ConfirmationOf(const json& evidence) { return Str(evidence, "confirmation"); }

std::string UnconfirmedWhy(const json& evidence) {
  if (ConfirmationOf(evidence) != kUnconfirmed) return "";
  const json& a = Attempts(evidence);
  if (a.size() < 2) return "it was not retested";
  std::string msg = Str(a[1], "message");
  return "the retest ended " + Str(a[1], "outcome") + (msg.empty() ? "" : ": " + msg);
}

void FlakyVerdicts(const RunData& d, const NodeOrder& order, std::vector<Verdict>& out) {
  FlakyNodeVerdicts(d, order, out);
  std::vector<StageFlakes> stages;
  std::map<std::string, size_t> index;
  for (const auto& r : d.pair_results) {
    auto [it, fresh] = index.try_emplace(r.stage, stages.size());
    if (fresh) stages.emplace_back(r.stage, order);
    stages[it->second].Add(r);
  }
  // Routine results are never flaky: they only count as the tested links
  // of a stage that has flaky ones.
  const RoutinePairs& routine = d.routine_pairs;
  for (const RoutinePairs::Entry& e : routine.entries()) {
    const RoutinePairs::Group& g = routine.group(e);
    auto it = index.find(g.stage);
    if (it == index.end() || !stages[it->second].AnyFlaky()) continue;
    stages[it->second].Tested(routine.node(e.src), routine.node(e.dst), g.outcome);
  }
  for (auto& s : stages) s.Judge(out);
}

void MarkUnconfirmed(std::vector<Verdict>& vs) {
  for (auto& v : vs) {
    if (v.kind == "flaky") continue;
    json& e = v.evidence;
    // A stored verdict's evidence may be anything; only an object can say
    // more than the summary already does.
    if (!e.is_object()) continue;
    json unconfirmed = JsonArray(e, "unconfirmed");
    size_t judged = static_cast<size_t>(JsonCount(e, "results_judged"));
    for (const auto& p : JsonArray(e, "pairs")) {
      std::string o = Str(p, "outcome");
      if (o != "fail" && o != "hang") continue;
      ++judged;
      std::string why = UnconfirmedWhy(JsonMember(p, "evidence"));
      if (!why.empty()) {
        unconfirmed.push_back({{"src", Str(p, "src")}, {"dst", Str(p, "dst")}, {"why", why}});
      }
    }
    if (unconfirmed.empty()) continue;
    e["unconfirmed"] = unconfirmed;
    std::string why = Str(unconfirmed[0], "why");
    if (judged <= unconfirmed.size()) {
      v.summary += " (not confirmed: " + why + ")";
    } else {
      v.summary += " (" + std::to_string(unconfirmed.size()) + " of " + std::to_string(judged) +
                   " not confirmed: " + why + ")";
    }
  }
}

}  // namespace cc::analysis
