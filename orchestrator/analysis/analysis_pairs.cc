// Pair verdicts: which node, link or direction explains the failing pairs
// of one pair check, and which pairs are slow. See analysis.h for the rules.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_map>

#include "common/hostlist.h"
#include "common/json_read.h"
#include "orchestrator/analysis/analysis_confirm.h"
#include "orchestrator/analysis/analysis_internal.h"
#include "orchestrator/analysis/verdict_next_step.h"
#include "orchestrator/analysis/widespread.h"
#include "orchestrator/run/confirm.h"
#include "orchestrator/stages/stages.h"

namespace cc::analysis {
namespace {

using nlohmann::json;
using Pair = std::pair<std::string, std::string>;

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

// The routine results (RoutinePairs) of one undirected pair whose results
// are all routine: the worst per direction.
struct RoutineLink {
  size_t ia = 0, ib = 0;                    // run order of a and b (NodeOrder), ia <= ib
  uint16_t a = 0, b = 0;                    // node ids
  const RoutinePairs::Entry* ab = nullptr;  // a -> b
  const RoutinePairs::Entry* ba = nullptr;  // b -> a
};

// The results of one (stage, check), the worst per direction. Routine
// results join `results` only where their pair also has a result in full
// (materialized); the other pairs are routine_links, which the rules read
// without a PairResult each (a 256-node run has a million of them).
struct CheckPairs {
  std::string stage, check;
  std::map<Pair, const PairResult*> results;
  bool directed = false;  // both directions are tested separately
  const RoutinePairs* routine = nullptr;
  std::vector<RoutineLink> routine_links;  // in run order of (a, b)
  std::deque<PairResult> materialized;     // routine results in `results`
};

int Severity(const RoutinePairs& routine, const RoutinePairs::Entry* e) {
  return e ? OutcomeSeverity(routine.group(*e).outcome) : -1;
}

// Keeps the worse of `slot` and `e` (the first on a tie).
void KeepWorse(const RoutinePairs& routine, const RoutinePairs::Entry*& slot,
               const RoutinePairs::Entry& e) {
  if (!slot || Severity(routine, &e) > Severity(routine, slot)) slot = &e;
}

// The pairs of check `index`.
CheckPairs GatherCheck(const PairsByCheck& by_check, size_t index, const RoutinePairs& routine,
                       const NodeOrder& order) {
  const auto& key = by_check.checks[index];
  CheckPairs c{key.first, key.second, {}, PairsDirected(key.first), &routine, {}, {}};
  std::set<Pair> full_links;
  for (const PairResult* r : by_check.full[index]) {
    auto& slot = c.results[{r->src, r->dst}];
    if (!slot || OutcomeSeverity(r->outcome) > OutcomeSeverity(slot->outcome)) slot = r;
    full_links.insert(std::minmax(r->src, r->dst));
  }
  std::unordered_map<uint32_t, RoutineLink> links;
  for (const RoutinePairs::Entry& e : routine.entries()) {
    if (by_check.check_of_group[e.group] != index) continue;
    const std::string &src = routine.node(e.src), &dst = routine.node(e.dst);
    if (full_links.count(std::minmax(src, dst))) {
      auto& slot = c.results[{src, dst}];
      if (!slot || OutcomeSeverity(routine.group(e).outcome) > OutcomeSeverity(slot->outcome)) {
        slot = &c.materialized.emplace_back(routine.Materialize(e));
      }
      continue;
    }
    if (e.src == e.dst) continue;
    size_t is = order.Index(src), id = order.Index(dst);
    bool forward = std::pair(is, e.src) <= std::pair(id, e.dst);
    RoutineLink& l =
        links[forward ? (uint32_t{e.src} << 16 | e.dst) : (uint32_t{e.dst} << 16 | e.src)];
    if (!l.ab && !l.ba) {
      l.ia = forward ? is : id;
      l.ib = forward ? id : is;
      l.a = forward ? e.src : e.dst;
      l.b = forward ? e.dst : e.src;
    }
    KeepWorse(routine, forward ? l.ab : l.ba, e);
  }
  for (const auto& [p, r] : c.results) {
    if (p.first != p.second && c.results.count({p.second, p.first})) c.directed = true;
  }
  c.routine_links.reserve(links.size());
  for (const auto& [k, l] : links) {
    if (l.ab && l.ba) c.directed = true;
    c.routine_links.push_back(l);
  }
  std::sort(c.routine_links.begin(), c.routine_links.end(),
            [](const RoutineLink& x, const RoutineLink& y) {
              return std::tie(x.ia, x.ib, x.a, x.b) < std::tie(y.ia, y.ib, y.a, y.b);
            });
  return c;
}

// One undirected pair with the results of both directions.
struct Link {
  std::string a, b;  // a before b in run order
  std::vector<const PairResult*> results;
  bool bad() const {
    return std::any_of(results.begin(), results.end(),
                       [](const PairResult* r) { return IsFailOrHang(r->outcome); });
  }
  bool good() const {
    return !results.empty() && std::all_of(results.begin(), results.end(), [](const PairResult* r) {
      return IsPassOrWarn(r->outcome);
    });
  }
};

// Routine results pass or are skipped: never bad, good when all passed.
bool Good(const RoutinePairs& routine, const RoutineLink& l) {
  for (const RoutinePairs::Entry* e : {l.ab, l.ba}) {
    if (e && !IsPassOrWarn(routine.group(*e).outcome)) return false;
  }
  return true;
}

std::vector<Link> Links(const CheckPairs& c, const NodeOrder& order) {
  std::map<Pair, Link> links;
  std::vector<Pair> seen;
  for (const auto& [p, r] : c.results) {
    if (p.first == p.second) continue;
    Pair key = order.Index(p.first) <= order.Index(p.second) ? p : Pair{p.second, p.first};
    auto [it, fresh] = links.try_emplace(key);
    if (fresh) {
      it->second.a = key.first;
      it->second.b = key.second;
      seen.push_back(key);
    }
    it->second.results.push_back(r);
  }
  std::sort(seen.begin(), seen.end(), [&](const Pair& x, const Pair& y) {
    return std::pair(order.Index(x.first), order.Index(x.second)) <
           std::pair(order.Index(y.first), order.Index(y.second));
  });
  std::vector<Link> out;
  for (const auto& k : seen) out.push_back(links[k]);
  return out;
}

// The next step that the bad results' own evidence names, "" for none.
std::string OwnNextSteps(const std::vector<const PairResult*>& rs) {
  std::vector<std::string> steps;
  for (const auto* r : rs) {
    if (IsFailOrHang(r->outcome)) steps.push_back(NextStepFromEvidence(r->evidence, r->src));
  }
  return JoinSteps(steps);
}

// A pair judged slow, with why ("45% of the median 20.0 GB/s").
struct SlowPair {
  const Link* link;
  const PairResult* r;
  std::vector<std::string> why;
};

// The slow pairs of one check, and per node how many of its pairs have a
// value and how many of them are slow.
struct SlowPairs {
  double median = 0;
  std::string unit;
  std::vector<SlowPair> pairs;
  std::map<std::string, int> valued, slow;
};

class CheckAnalysis {
 public:
  CheckAnalysis(const RunData& d, const AnalysisOptions& o, const NodeOrder& order,
                const CheckPairs& c, std::vector<Verdict>& out)
      : d_(d),
        o_(o),
        order_(order),
        c_(c),
        spec_(FindStageSpec(c.stage)),
        links_(Links(c, order)),
        out_(out) {}
  CheckAnalysis(const CheckAnalysis&) = delete;

  // `attributed`: the stage named its own bad nodes and links.
  void Run(bool attributed) {
    Bandwidth();
    Hangs();
    if (attributed) return;
    BadNodes();
    Widespread();
    Rest();
  }

 private:
  Verdict Make(const char* kind, Outcome severity) const {
    Verdict v;
    v.kind = kind;
    v.severity = severity;
    v.stage = c_.stage;
    v.check = c_.check;
    return v;
  }
  std::string What() const { return c_.stage + " " + c_.check; }
  std::string PairName(const std::string& a, const std::string& b) const {
    return c_.directed ? a + " -> " + b : a + " <-> " + b;
  }
  void Claim(const Link& l) {
    claimed_.insert({l.a, l.b});
    claimed_.insert({l.b, l.a});
  }
  bool Claimed(const Link& l) const { return claimed_.count({l.a, l.b}) > 0; }
  bool Claimed(const RoutineLink& l) const { return claimed_.count({A(l), B(l)}) > 0; }
  const std::string& A(const RoutineLink& l) const { return c_.routine->node(l.a); }
  const std::string& B(const RoutineLink& l) const { return c_.routine->node(l.b); }
  // Calls full(const Link&) and routine(const RoutineLink&) for every pair
  // of the check, in run order of (a, b).
  template <typename Full, typename Routine>
  void ForEachLink(Full full, Routine routine) const;
  // The routine link as a Link of materialized results (kept by this).
  const Link& Materialize(const RoutineLink& l);
  // Slow links are not failures of a node or link even when the stage
  // judged them `fail`: the bandwidth verdict names them.
  void ClaimSlow(const Link& l) {
    Claim(l);
    slow_.insert({l.a, l.b});
  }
  bool Slow(const Link& l) const { return slow_.count({l.a, l.b}) > 0; }
  bool Slow(const RoutineLink& l) const { return slow_.count({A(l), B(l)}) > 0; }
  void AddPairs(Verdict& v, const Link& l, bool only_bad) const {
    for (const auto* r : l.results) {
      if (only_bad && !IsFailOrHang(r->outcome)) continue;
      v.pairs.push_back({r->src, r->dst});
      v.evidence["pairs"].push_back(PairEvidence(*r));
    }
  }

  // The stage's words for a finding (StageSpec::word_pair_finding); all
  // "" where it has none.
  PairWording Word(PairFinding f) const {
    if (!spec_ || !spec_->word_pair_finding) return {};
    f.run = &d_;
    f.check = c_.check;
    return spec_->word_pair_finding(f);
  }
  static PairFinding Finding(PairPattern pattern, std::vector<std::string> nodes,
                             const nlohmann::json& evidence = nlohmann::json::object()) {
    PairFinding f;
    f.pattern = pattern;
    f.nodes = std::move(nodes);
    f.evidence = evidence;
    return f;
  }

  void Bandwidth();
  std::optional<SlowPairs> FindSlowPairs();
  std::vector<std::string> WhySlow(const PairResult& r, double median) const;
  void SlowCluster(const SlowPairs& s, size_t n_valued);
  std::set<std::string> SlowNodes(const SlowPairs& s);
  void SlowLinks(const SlowPairs& s, const std::set<std::string>& slow_nodes);
  void Hangs();
  void BadNodes();
  std::string BadNodeNextStep(const std::string& node, const std::string& stage_step) const;
  const PairResult* AnyBadPairOf(const std::string& node) const;
  void Widespread();
  void Rest();
  const PairResult* OneWayDirection(const Link& l) const;
  Verdict OneWay(const Link& l, const PairResult& r) const;
  Verdict BadLink(const Link& l) const;

  const RunData& d_;
  const AnalysisOptions& o_;
  const NodeOrder& order_;
  const CheckPairs& c_;
  const StageSpec* spec_;  // nullptr for a stage the table does not know
  std::vector<Link> links_;
  std::vector<Verdict>& out_;
  PairSet claimed_;
  PairSet slow_;
  std::deque<PairResult> materialized_;  // of routine links, for verdicts
  std::deque<Link> materialized_links_;
};

template <typename Full, typename Routine>
void CheckAnalysis::ForEachLink(Full full, Routine routine) const {
  auto f = links_.begin();
  auto r = c_.routine_links.begin();
  while (f != links_.end() || r != c_.routine_links.end()) {
    bool take_full = r == c_.routine_links.end() ||
                     (f != links_.end() &&
                      std::pair(order_.Index(f->a), order_.Index(f->b)) <= std::pair(r->ia, r->ib));
    if (take_full) {
      full(*f++);
    } else {
      routine(*r++);
    }
  }
}

const Link& CheckAnalysis::Materialize(const RoutineLink& l) {
  Link& out = materialized_links_.emplace_back();
  out.a = A(l);
  out.b = B(l);
  for (const RoutinePairs::Entry* e : {l.ab, l.ba}) {
    if (e) out.results.push_back(&materialized_.emplace_back(c_.routine->Materialize(*e)));
  }
  // As Links orders a link's results: by (src, dst).
  std::sort(out.results.begin(), out.results.end(), [](const PairResult* x, const PairResult* y) {
    return std::tie(x->src, x->dst) < std::tie(y->src, y->dst);
  });
  return out;
}

std::optional<double> BaselineValue(const RunData* base, const PairResult& r) {
  if (!base) return std::nullopt;
  for (const auto& b : base->pair_results) {
    if (b.stage != r.stage || b.check != r.check || !b.value) continue;
    if ((b.src == r.src && b.dst == r.dst) || (b.src == r.dst && b.dst == r.src)) return b.value;
  }
  return std::nullopt;
}

// Judges the values of one check against its median, the floor and the
// baseline run: slow cluster-wide, slow nodes, then slow links.
void CheckAnalysis::Bandwidth() {
  std::optional<SlowPairs> s = FindSlowPairs();
  if (!s || s->pairs.empty()) return;
  // Most pairs slow: the check is slow cluster-wide (a floor or a baseline
  // says so), which no single node or link explains.
  size_t n_valued = 0;
  for (const auto& [n, k] : s->valued) n_valued += k;
  if (s->pairs.size() * 4 > n_valued) {  // valued counts each pair twice
    SlowCluster(*s, n_valued);
    return;
  }
  SlowLinks(*s, SlowNodes(*s));
}

// nullopt when the check has no values, or values that are not rates.
std::optional<SlowPairs> CheckAnalysis::FindSlowPairs() {
  const RoutinePairs& routine = *c_.routine;
  std::vector<double> values;
  // A flaky result keeps its failed first attempt's value: not a rate.
  for (const auto& [p, r] : c_.results) {
    if (r->value && r->outcome != Outcome::kHang && !IsFlaky(*r)) values.push_back(*r->value);
  }
  std::string routine_unit;
  for (const RoutineLink& l : c_.routine_links) {
    for (const RoutinePairs::Entry* e : {l.ab, l.ba}) {
      if (!e || e->value == RoutinePairs::kNoValue) continue;
      values.push_back(*routine.value(*e));
      routine_unit = routine.group(*e).unit;
    }
  }
  if (values.empty()) return std::nullopt;
  SlowPairs s;
  s.median = Median(values);
  s.unit = routine_unit;
  for (const auto& [p, r] : c_.results) {
    if (r->value) s.unit = r->unit;
  }
  // Only rates are judged here (higher is better); a latency (the mpi
  // stage's "latency", in us) is not slow for being small.
  if (s.unit == "us" || s.unit == "ms" || s.unit == "s") return std::nullopt;
  auto judge = [&](const Link& l, const PairResult& r) -> std::vector<std::string> {
    if (!r.value || r.outcome == Outcome::kHang || IsFlaky(r)) return {};
    ++s.valued[l.a];
    ++s.valued[l.b];
    std::vector<std::string> why = WhySlow(r, s.median);
    if (!why.empty()) {
      ++s.slow[l.a];
      ++s.slow[l.b];
    }
    return why;
  };
  ForEachLink(
      [&](const Link& l) {
        for (const auto* r : l.results) {
          std::vector<std::string> why = judge(l, *r);
          if (!why.empty()) s.pairs.push_back({&l, r, why});
        }
      },
      [&](const RoutineLink& rl) {
        const Link names{A(rl), B(rl), {}};
        const Link* kept = nullptr;  // materialized once one of its results is slow
        for (const RoutinePairs::Entry* e : {rl.ab, rl.ba}) {
          if (!e || e->value == RoutinePairs::kNoValue) continue;
          PairResult r = routine.Materialize(*e);
          std::vector<std::string> why = judge(names, r);
          if (why.empty()) continue;
          if (!kept) kept = &Materialize(rl);
          for (const auto* k : kept->results) {
            if (k->src == r.src && k->dst == r.dst) s.pairs.push_back({kept, k, why});
          }
        }
      });
  return s;
}

// Why r's value is slow; empty when it is not.
std::vector<std::string> CheckAnalysis::WhySlow(const PairResult& r, double median) const {
  double v = *r.value;
  std::vector<std::string> why;
  // A stage that judged the speed itself (evidence "speed": the mpi
  // stage retests a suspect alone first) is taken at its word.
  const nlohmann::json& judged = JsonMember(r.evidence, "speed");
  if (judged.is_object()) {
    if (JsonBool(judged, "slow")) why.push_back(JsonString(judged, "why", "slow"));
  } else if (v < o_.outlier_fraction * median) {
    why.push_back(std::to_string(static_cast<int>(std::lround(100 * v / median))) +
                  "% of the median " + Num(median) + " " + r.unit);
  }
  if (o_.min_busbw_gbps > 0 && r.unit == "GB/s" && v < o_.min_busbw_gbps) {
    why.push_back("below the floor " + Num(o_.min_busbw_gbps) + " GB/s");
  }
  auto base = BaselineValue(o_.baseline, r);
  if (base && *base > 0 && v < o_.baseline_fraction * *base) {
    why.push_back(std::to_string(static_cast<int>(std::lround(100 * v / *base))) + "% of run " +
                  std::to_string(o_.baseline->run.id) + "'s " + Num(*base) + " " + r.unit);
  }
  return why;
}

void CheckAnalysis::SlowCluster(const SlowPairs& s, size_t n_valued) {
  Verdict v = Make("bandwidth-outlier", Outcome::kWarn);
  std::set<std::string> nodes;
  for (const auto& p : s.pairs) {
    v.severity = Worse(v.severity, p.r->outcome);
    v.pairs.push_back({p.r->src, p.r->dst});
    json e = PairEvidence(*p.r);
    e["why"] = p.why;
    v.evidence["pairs"].push_back(e);
    nodes.insert(p.link->a);
    nodes.insert(p.link->b);
    ClaimSlow(*p.link);
  }
  v.nodes = order_.Sorted(nodes);
  v.evidence["median"] = s.median;
  v.summary = What() + ": " + std::to_string(s.pairs.size()) + " of " +
              std::to_string(n_valued / 2) + " pairs are slow (" + s.pairs[0].why[0] + ")";
  v.next_step =
      "check what all nodes share: the transport NCCL used, the selected "
      "interface, the switch";
  out_.push_back(std::move(v));
}

// A node slow with (nearly) every partner is named once, as the node.
std::set<std::string> CheckAnalysis::SlowNodes(const SlowPairs& s) {
  std::set<std::string> slow_nodes;
  for (const auto& [n, k] : s.slow) {
    if (k >= 2 && k >= o_.bad_node_fraction * s.valued.at(n)) slow_nodes.insert(n);
  }
  for (const auto& node : order_.Sorted(slow_nodes)) {
    Verdict v = Make("bandwidth-outlier", Outcome::kWarn);
    v.nodes = {node};
    for (const auto& p : s.pairs) {
      if (p.link->a != node && p.link->b != node) continue;
      v.severity = Worse(v.severity, p.r->outcome);
      v.pairs.push_back({p.r->src, p.r->dst});
      json e = PairEvidence(*p.r);
      e["why"] = p.why;
      v.evidence["pairs"].push_back(e);
      ClaimSlow(*p.link);
    }
    v.evidence["median"] = s.median;
    v.summary = What() + ": " + node + " is slow with " + std::to_string(v.pairs.size()) + " of " +
                std::to_string(s.valued.at(node)) + " partners (median " + Num(s.median) + " " +
                s.unit + ")";
    v.next_step = "check " + node + "'s NIC (link speed, PCIe width, GPUDirect RDMA) and " +
                  "drain it if it stays slow";
    out_.push_back(std::move(v));
  }
  return slow_nodes;
}

// The slow pairs no slow node explains, one verdict each.
void CheckAnalysis::SlowLinks(const SlowPairs& s, const std::set<std::string>& slow_nodes) {
  for (const auto& p : s.pairs) {
    if (slow_nodes.count(p.link->a) || slow_nodes.count(p.link->b)) continue;
    Verdict v = Make("bandwidth-outlier", Worse(Outcome::kWarn, p.r->outcome));
    v.nodes = {p.link->a, p.link->b};
    v.pairs.push_back({p.r->src, p.r->dst});
    json e = PairEvidence(*p.r);
    e["why"] = p.why;
    v.evidence["pairs"].push_back(e);
    v.evidence["median"] = s.median;
    v.summary = What() + " " + PairName(p.r->src, p.r->dst) + ": " + Num(*p.r->value) + " " +
                p.r->unit + ", ";
    for (size_t i = 0; i < p.why.size(); ++i) v.summary += (i ? ", " : "") + p.why[i];
    std::string transport = JsonString(p.r->evidence, "transport");
    v.next_step = "check the link between " + p.link->a + " and " + p.link->b + ": " +
                  (transport.empty() ? "the transport NCCL used (NET/IB with GDRDMA expected)"
                                     : "NCCL used " + transport) +
                  ", link speeds, switch port counters";
    ClaimSlow(*p.link);
    out_.push_back(std::move(v));
  }
}

void CheckAnalysis::Hangs() {
  Verdict v = Make("hang", Outcome::kHang);
  std::set<std::string> nodes;
  for (const auto& l : links_) {
    bool hung = std::any_of(l.results.begin(), l.results.end(),
                            [](const PairResult* r) { return r->outcome == Outcome::kHang; });
    if (!hung || Claimed(l)) continue;
    for (const auto* r : l.results) {
      if (r->outcome != Outcome::kHang) continue;
      v.pairs.push_back({r->src, r->dst});
      v.evidence["pairs"].push_back(PairEvidence(*r));
    }
    nodes.insert(l.a);
    nodes.insert(l.b);
    Claim(l);
  }
  if (v.pairs.empty()) return;
  v.nodes = order_.Sorted(nodes);
  if (v.pairs.size() == 1) {
    v.summary = What() + " hung between " + v.pairs[0].first + " and " + v.pairs[0].second;
  } else {
    // A line an operator reads: a few pairs by name, the rest counted (all
    // of them stay in the evidence). 64 nodes once gave a 30 KB line here.
    constexpr size_t kNamedPairs = 6;
    v.summary = What() + " hung on " + std::to_string(v.pairs.size()) + " pairs:";
    for (size_t i = 0; i < v.pairs.size() && i < kNamedPairs; ++i) {
      v.summary += " " + PairName(v.pairs[i].first, v.pairs[i].second) + ";";
    }
    v.summary.pop_back();
    if (v.pairs.size() > kNamedPairs) {
      v.summary += " and " + std::to_string(v.pairs.size() - kNamedPairs) + " more, among " +
                   FoldHostlist(v.nodes);
    }
  }
  v.next_step = "rerun " + c_.stage + " on " + FoldHostlist(v.nodes) +
                " with NCCL_DEBUG=INFO and look for Xid errors in dmesg on those nodes";
  PairWording w = Word(Finding(PairPattern::kHang, v.nodes));
  if (!w.next_step.empty()) v.next_step = w.next_step;
  out_.push_back(std::move(v));
}

std::string CheckAnalysis::BadNodeNextStep(const std::string& node,
                                           const std::string& stage_step) const {
  // The cause, where the evidence names it: the node's own failing checks
  // of this stage (the MTU to set on its interface), else the one step
  // that all its failing pairs agree on, else the stage's advice.
  std::vector<const NodeResult*> own;
  for (const auto& r : d_.node_results) {
    if (r.node == node && r.stage == c_.stage && IsFailOrHang(r.outcome)) {
      own.push_back(&r);
    }
  }
  std::vector<std::string> steps;
  const json subnet_mtu = SubnetMtusOf(d_);
  for (const auto* r : own) steps.push_back(NextStepFromEvidence(r->evidence, node, subnet_mtu));
  if (std::string s = JoinSteps(steps); !s.empty()) return s;
  std::set<std::string> pair_steps;
  bool all_have = true;
  for (const auto& [p, r] : c_.results) {
    if ((p.first != node && p.second != node) || !IsFailOrHang(r->outcome)) continue;
    std::string s = NextStepFromEvidence(r->evidence, node);
    all_have = all_have && !s.empty();
    pair_steps.insert(s);
  }
  if (all_have && pair_steps.size() == 1) return *pair_steps.begin();
  if (!stage_step.empty()) return stage_step;
  return "drain " + node + " and test it alone";
}

// The last failing result of `node` in this check, nullptr for none.
const PairResult* CheckAnalysis::AnyBadPairOf(const std::string& node) const {
  const PairResult* any = nullptr;
  for (const auto& [p, r] : c_.results) {
    if ((p.first == node || p.second == node) && IsFailOrHang(r->outcome)) any = r;
  }
  return any;
}

void CheckAnalysis::BadNodes() {
  std::map<std::string, int> tested, good;  // good: partners it passes with
  std::map<std::string, std::set<std::string>> bad;
  auto count = [&](const std::string& a, const std::string& b) {
    ++tested[a];
    ++tested[b];
  };
  ForEachLink(
      [&](const Link& l) {
        if (Slow(l)) return;
        if (l.bad()) {
          bad[l.a].insert(l.b);
          bad[l.b].insert(l.a);
        } else if (l.good()) {
          ++good[l.a];
          ++good[l.b];
        } else {
          return;
        }
        count(l.a, l.b);
      },
      [&](const RoutineLink& l) {
        if (Slow(l) || !Good(*c_.routine, l)) return;
        ++good[A(l)];
        ++good[B(l)];
        count(A(l), B(l));
      });
  std::set<std::string> confirmed;
  for (const auto& [node, partners] : bad) {
    if (partners.size() < 2 || partners.size() < o_.bad_node_fraction * tested[node]) continue;
    // The partners must pass elsewhere, or the node is not what is wrong.
    size_t elsewhere = 0;
    for (const auto& p : partners) elsewhere += good[p] > 0 ? 1 : 0;
    if (elsewhere * 2 > partners.size()) confirmed.insert(node);
  }
  for (const auto& node : order_.Sorted(confirmed)) {
    bool in = false, out = false;
    std::map<std::string, int> states;
    Verdict v = Make("bad-node", Outcome::kFail);
    v.nodes = {node};
    for (const auto& l : links_) {
      if ((l.a != node && l.b != node) || !l.bad()) continue;
      for (const auto* r : l.results) {
        if (!IsFailOrHang(r->outcome)) continue;
        (r->dst == node ? in : out) = true;
        ++states[r->state.empty() ? OutcomeName(r->outcome) : r->state];
        v.severity = Worse(v.severity, r->outcome);
      }
      if (!Claimed(l)) AddPairs(v, l, true);
      Claim(l);
    }
    std::string how;
    for (const auto& [s, n] : states) how += std::string(how.empty() ? "" : ", ") + s;
    size_t n_bad = bad[node].size();
    std::string count = std::to_string(n_bad) + " of " + std::to_string(tested[node]);
    bool in_only = c_.directed && in && !out;
    bool out_only = c_.directed && out && !in;
    const PairResult* any = AnyBadPairOf(node);
    PairFinding f = Finding(PairPattern::kBadNode, {node}, any ? any->evidence : json::object());
    f.receiver_only = in_only;
    f.sender_only = out_only;
    f.states = how;
    f.count = count;
    PairWording w = Word(f);
    if (!w.kind.empty()) v.kind = w.kind;
    if (!w.summary.empty()) {
      v.summary = w.summary;
    } else if (out_only) {
      v.summary = node + " fails " + What() + " as the sender to " + count + " peers (" + how + ")";
    } else {
      v.summary = node + " fails " + What() + " with " + count + " partners (" + how +
                  ") while they pass with others";
    }
    v.evidence["states"] = states;
    v.next_step = BadNodeNextStep(node, w.next_step);
    out_.push_back(std::move(v));
  }
}

// One cause, one verdict (widespread.h): the failures no bad node
// explains, spread evenly over most nodes (or most pairs failing), are one
// verdict with counts and examples, not a link verdict per pair.
void CheckAnalysis::Widespread() {
  std::vector<Pair> tested, failed;
  ForEachLink(
      [&](const Link& l) {
        if (Claimed(l) || !(l.bad() || l.good())) return;
        tested.push_back({l.a, l.b});
        if (l.bad()) failed.push_back({l.a, l.b});
      },
      [&](const RoutineLink& l) {
        if (!Claimed(l) && Good(*c_.routine, l)) tested.push_back({A(l), B(l)});
      });
  Spread s = JudgeSpread(tested, failed);
  if (!s.widespread) return;
  PairWording w = Word(Finding(PairPattern::kWidespread, {}));
  Verdict v = Make("widespread", Outcome::kFail);
  if (!w.kind.empty()) v.kind = w.kind;
  constexpr size_t kExamples = 6;
  std::set<std::string> nodes;
  std::map<std::string, int> states;
  json unconfirmed = json::array();
  size_t judged = 0;
  for (const auto& l : links_) {
    if (!l.bad() || Claimed(l)) continue;
    nodes.insert(l.a);
    nodes.insert(l.b);
    for (const auto* r : l.results) {
      if (!IsFailOrHang(r->outcome)) continue;
      v.severity = Worse(v.severity, r->outcome);
      v.pairs.push_back({r->src, r->dst});
      ++states[r->state.empty() ? OutcomeName(r->outcome) : r->state];
      if (v.evidence["examples"].size() < kExamples)
        v.evidence["examples"].push_back(PairEvidence(*r));
      ++judged;
      std::string why = UnconfirmedWhy(r->evidence);
      if (!why.empty()) unconfirmed.push_back({{"src", r->src}, {"dst", r->dst}, {"why", why}});
    }
    Claim(l);
  }
  v.nodes = order_.Sorted(nodes);
  v.evidence["failed_pairs"] = s.failed_pairs;
  v.evidence["tested_pairs"] = s.tested_pairs;
  v.evidence["share"] = s.share;
  v.evidence["nodes_touched"] = s.nodes_touched;
  v.evidence["nodes_tested"] = s.nodes_tested;
  v.evidence["worst_node"] = {{"node", s.worst_node}, {"share", s.worst_node_share}};
  v.evidence["mean_node_share"] = s.mean_node_share;
  v.evidence["states"] = states;
  v.evidence["results_judged"] = judged;
  if (!unconfirmed.empty()) v.evidence["unconfirmed"] = unconfirmed;
  v.summary = What() + " fails on " + std::to_string(s.failed_pairs) + " of " +
              std::to_string(s.tested_pairs) + " pairs across the cluster (" +
              std::to_string(static_cast<int>(std::lround(100 * s.share))) + "%, spread over " +
              std::to_string(s.nodes_touched) + " of " + std::to_string(s.nodes_tested) +
              " nodes; no node stands out)";
  v.next_step = !w.next_step.empty() ? w.next_step
                                     : "check what all nodes share: the selected interface "
                                       "(NCCL_SOCKET_IFNAME), the switch, the " +
                                           c_.stage + " configuration";
  out_.push_back(std::move(v));
}

// What no rule above named: one-way failures and bad links, then the
// warnings and the pairs that could not be tested, one verdict each.
void CheckAnalysis::Rest() {
  Verdict untested = Make("untested", Outcome::kError);
  Verdict warned = Make("warning", Outcome::kWarn);
  std::set<std::string> untested_nodes, warned_nodes;
  for (const auto& l : links_) {
    if (Claimed(l)) continue;
    if (!l.bad()) {
      for (const auto* r : l.results) {
        if (r->outcome != Outcome::kError && r->outcome != Outcome::kWarn) continue;
        if (IsFlaky(*r)) continue;  // analysis_confirm.cc names it
        Verdict& v = r->outcome == Outcome::kError ? untested : warned;
        v.pairs.push_back({r->src, r->dst});
        v.evidence["pairs"].push_back(PairEvidence(*r));
        auto& nodes = r->outcome == Outcome::kError ? untested_nodes : warned_nodes;
        nodes.insert(r->src);
        nodes.insert(r->dst);
      }
      continue;
    }
    Claim(l);
    const PairResult* bad_dir = OneWayDirection(l);
    out_.push_back(bad_dir ? OneWay(l, *bad_dir) : BadLink(l));
  }
  if (!warned.pairs.empty()) {
    warned.nodes = order_.Sorted(warned_nodes);
    const auto& first = warned.evidence["pairs"][0];
    warned.summary = What() + " warns on " + std::to_string(warned.pairs.size()) +
                     " pair(s): " + first.value("message", std::string());
    warned.next_step = "review the evidence of " + What();
    out_.push_back(std::move(warned));
  }
  if (untested.pairs.empty()) return;
  untested.nodes = order_.Sorted(untested_nodes);
  untested.summary =
      What() + " could not be tested on " + std::to_string(untested.pairs.size()) + " pair(s)";
  const auto& first = untested.evidence["pairs"][0];
  untested.next_step = "fix what stopped the test: " + first.value("message", std::string("?"));
  out_.push_back(std::move(untested));
}

// Of a bad link of a directed check, the one direction that fails while
// the other passes; nullptr when it is not one way.
const PairResult* CheckAnalysis::OneWayDirection(const Link& l) const {
  if (!c_.directed || l.results.size() != 2) return nullptr;
  const auto *x = l.results[0], *y = l.results[1];
  if (IsFailOrHang(x->outcome) && IsPassOrWarn(y->outcome)) return x;
  if (IsFailOrHang(y->outcome) && IsPassOrWarn(x->outcome)) return y;
  return nullptr;
}

Verdict CheckAnalysis::OneWay(const Link& l, const PairResult& r) const {
  Verdict v = Make("one-way", r.outcome);
  v.nodes = order_.Sorted({r.src, r.dst});
  AddPairs(v, l, false);
  v.summary = What() + " " + r.src + " -> " + r.dst + " fails" +
              (r.state.empty() ? "" : " (" + r.state + ")") + " while " + r.dst + " -> " + r.src +
              " passes";
  PairWording w = Word(Finding(PairPattern::kOneWay, {r.src, r.dst}, r.evidence));
  v.next_step = !w.next_step.empty() ? w.next_step
                                     : "check routes and filters from " + r.src + " to " + r.dst;
  if (std::string own = OwnNextSteps(l.results); !own.empty()) v.next_step = own;
  return v;
}

Verdict CheckAnalysis::BadLink(const Link& l) const {
  Verdict v = Make("bad-link", Outcome::kFail);
  v.nodes = {l.a, l.b};
  for (const auto* r : l.results) v.severity = Worse(v.severity, r->outcome);
  AddPairs(v, l, true);
  const PairResult& r = *[&] {
    for (const auto* x : l.results) {
      if (IsFailOrHang(x->outcome)) return x;
    }
    return l.results.front();
  }();
  v.summary = What() + " fails between " + l.a + " and " + l.b +
              (r.state.empty() ? "" : " (" + r.state + ")") +
              (r.message.empty() ? "" : ": " + r.message) + "; both pass with others";
  std::string dev = JsonString(r.evidence, "device");
  PairWording w = Word(Finding(PairPattern::kBadLink, {l.a, l.b}, r.evidence));
  if (!w.next_step.empty()) {
    v.next_step = w.next_step;
  } else if (!dev.empty()) {
    v.next_step = "check the switch port of " + r.src + "'s " + dev;
  } else {
    v.next_step = "check the cables and switch ports between " + l.a + " and " + l.b;
  }
  if (std::string own = OwnNextSteps(l.results); !own.empty()) v.next_step = own;
  return v;
}

}  // namespace

json PairEvidence(const PairResult& r) {
  json e{{"src", r.src}, {"dst", r.dst}, {"outcome", OutcomeName(r.outcome)}};
  if (!r.state.empty()) e["state"] = r.state;
  if (r.value) e["value"] = *r.value;
  if (!r.unit.empty()) e["unit"] = r.unit;
  if (!r.message.empty()) e["message"] = r.message;
  if (!r.evidence.empty()) e["evidence"] = r.evidence;
  return e;
}

// One check at a time, so that only one check's pairs are gathered at once.
void AnalyzePairs(const RunData& data, const AnalysisOptions& options, const NodeOrder& order,
                  const std::set<std::string>& attributed, std::vector<Verdict>& out) {
  size_t from = out.size();
  const PairsByCheck by_check(data);
  for (size_t i = 0; i < by_check.checks.size(); ++i) {
    CheckPairs c = GatherCheck(by_check, i, data.routine_pairs, order);
    CheckAnalysis(data, options, order, c, out).Run(attributed.count(c.stage) > 0);
  }
  FoldWidespreadByStage(order, out, from);
}

}  // namespace cc::analysis
