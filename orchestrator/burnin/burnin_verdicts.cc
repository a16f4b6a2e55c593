#include "orchestrator/burnin/burnin_verdicts.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "common/hostlist.h"
#include "common/median.h"
#include "orchestrator/burnin/burnin_cause.h"
#include "orchestrator/burnin/burnin_text.h"

namespace cc {
namespace {

using nlohmann::json;

constexpr uint64_t kNvmlGpuIdle = 0x1;
constexpr uint64_t kNvmlSwThermalSlowdown = 0x20;
constexpr uint64_t kNvmlHwThermalSlowdown = 0x40;
constexpr double kClockDropShare = 0.85;
// A pair's busbw falling by more than this share, early half to late, is
// a degradation (run-to-run noise on the H200 over NET/Socket was ~7 %).
constexpr double kDegradeShare = 0.2;

bool Failed(const PairRate& p) { return p.failures + p.hangs > 0; }
bool FailedEveryRound(const PairRate& p) {
  return p.attempts > 0 && p.failures + p.hangs == p.attempts;
}

Verdict BurnInVerdict(const std::string& kind, Outcome severity, const std::string& stage,
                      const std::string& check) {
  Verdict v;
  v.kind = kind;
  v.severity = severity;
  v.stage = stage;
  v.check = check;
  v.evidence["burnin"] = true;
  return v;
}

json PairEvidence(const PairRate& p) {
  return {{"pair", {p.a, p.b}},
          {"attempts", p.attempts},
          {"failures", p.failures},
          {"hangs", p.hangs},
          {"rate", p.rate},
          {"failed_rounds", p.failed_rounds},
          {"first_failure", p.first_failure()},
          {"last_failure", p.last_failure()}};
}

// "a", "a and b", "a, b and c"; past `shown` items "a, b and 8 more".
std::string ListText(const std::vector<std::string>& items, size_t shown) {
  bool more = items.size() > shown;
  size_t n = more ? shown : items.size();
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    out += (i == 0 ? "" : i + 1 == n && !more ? " and " : ", ") + items[i];
  }
  if (more) out += " and " + std::to_string(items.size() - shown) + " more";
  return out;
}

// "tcp/22", "tcp/22 and tcp/29500", "tcp/22, tcp/29500 and 8 more".
std::string ChecksText(const std::vector<std::string>& checks) { return ListText(checks, 2); }

std::vector<std::string> ChecksOf(const std::vector<const PairRate*>& ps) {
  std::vector<std::string> checks;
  for (const PairRate* p : ps) {
    if (std::find(checks.begin(), checks.end(), p->check) == checks.end()) {
      checks.push_back(p->check);
    }
  }
  return checks;
}

// What a stage's checks are called in a sentence: "ports", "nccl checks".
std::string ChecksNoun(const std::string& stage) {
  return stage == "ports" ? "ports" : stage + " checks";
}

// The ports stage's checks ("tcp/29500") as a firewall rule names them:
// "tcp 29500", "tcp 29500 and 41000", "tcp 29500, 41000, 41001 and 5 more".
std::string FirewallPorts(const std::vector<std::string>& checks) {
  std::vector<std::string> items;
  std::string protocol;
  for (const std::string& check : checks) {
    size_t slash = check.find('/');
    if (slash == std::string::npos) {
      items.push_back(check);
      continue;
    }
    std::string proto = check.substr(0, slash), port = check.substr(slash + 1);
    items.push_back(proto == protocol ? port : proto + " " + port);
    protocol = proto;
  }
  return ListText(items, 3);
}

const char* ScopeName(FailureScope scope) {
  switch (scope) {
    case FailureScope::kAlone:
      return "alone";
    case FailureScope::kOnlyThese:
      return "only-these";
    case FailureScope::kEveryCheck:
      return "every-check";
    case FailureScope::kMixed:
      return "mixed";
  }
  return "alone";
}

// "4 of 10 rounds (40%), rounds 4-7", or for a node that never recovered
// "every round from round 10 on (11 of 20 rounds, 55%)".
std::string NodeRoundsText(const NodeCause& c) {
  std::string count =
      std::to_string(c.failed_rounds.size()) + " of " + std::to_string(c.rounds_tested) + " rounds";
  if (c.to_the_end) {
    return "every round from round " + std::to_string(c.first_round) + " on (" + count + ", " +
           PercentText(c.rate()) + ")";
  }
  return count + " (" + PercentText(c.rate()) + "), " + RoundsText(c.failed_rounds);
}

std::string NodeSummary(const NodeCause& c) {
  std::string peers = c.peers.size() == 2
                          ? "both peers it met then"
                          : "all " + std::to_string(c.peers.size()) + " peers it met then";
  std::string s = c.node + " " + ChecksText(c.checks) + " failed in " + NodeRoundsText(c) +
                  ", with " + peers + " (" + FoldHostlist(c.peers) + ")";
  if (c.scope == FailureScope::kOnlyThese) s += "; its other " + ChecksNoun(c.stage) + " passed";
  if (c.scope == FailureScope::kEveryCheck) s += "; no " + ChecksNoun(c.stage) + " passed then";
  return s;
}

// The next step follows what failed: one port while the node's other
// ports passed with the same peers is a filter on that node, every port
// at once is its link.
std::string NodeNextStep(const NodeCause& c) {
  std::string when = c.to_the_end ? "since round " + std::to_string(c.first_round)
                                  : "in " + RoundsText(c.failed_rounds);
  if (c.scope == FailureScope::kOnlyThese && c.stage == "ports") {
    return "check the firewall on " + c.node + " for " + FirewallPorts(c.checks) +
           " (iptables -S; nft list ruleset) and what changed it " + when +
           "; not a cable: its other ports passed with the same peers";
  }
  if (c.scope == FailureScope::kOnlyThese) {
    return "check what " + ChecksText(c.checks) + " needs on " + c.node + " that its other " +
           ChecksNoun(c.stage) + " do not; not a cable: those passed " + when;
  }
  if (c.scope == FailureScope::kEveryCheck) {
    return "check " + c.node + "'s link " + when +
           ": its NIC, cable and switch port (ip -s link; ethtool -S; the switch's port counters)";
  }
  return "drain " + c.node + " and check its " + c.stage + " path (NIC, cable, firewall)";
}

// A node that failed with every peer it met in a window of rounds is one
// verdict (burnin_cause.h); the pairs it explains are counted in it, not
// named again one by one. A node still failing at the end, or above
// max_failure_rate, fails; one that recovered within the rate warns.
void NodeVerdicts(const BurnInSummary& s, std::vector<Verdict>& out,
                  std::set<const PairRate*>& named) {
  for (const NodeCause& c : NodeCauses(s)) {
    bool fails = c.to_the_end || c.rate() > s.max_failure_rate;
    Verdict v = BurnInVerdict("bad-node", fails ? Outcome::kFail : Outcome::kWarn, c.stage,
                              c.checks.size() == 1 ? c.checks.front() : ChecksText(c.checks));
    v.nodes = {c.node};
    for (const PairRate* p : c.pairs) {
      named.insert(p);
      std::pair<std::string, std::string> pair{p->a, p->b};
      if (std::find(v.pairs.begin(), v.pairs.end(), pair) == v.pairs.end()) v.pairs.push_back(pair);
      v.evidence["pairs"].push_back(PairEvidence(*p));
    }
    v.evidence["stage_kind"] = c.to_the_end ? "failing-from" : "failed-window";
    v.evidence["checks"] = c.checks;
    v.evidence["first_failing_round"] = c.first_round;
    v.evidence["last_failing_round"] = c.last_round;
    v.evidence["failed_rounds"] = c.failed_rounds;
    v.evidence["rounds_tested"] = c.rounds_tested;
    v.evidence["rate"] = c.rate();
    v.evidence["peers"] = c.peers;
    v.evidence["other_checks"] = ScopeName(c.scope);
    v.evidence["max_failure_rate"] = s.max_failure_rate;
    v.summary = NodeSummary(c);
    v.next_step = NodeNextStep(c);
    out.push_back(std::move(v));
  }
}

// A pair's value (busbw) over its rounds: the median of its later half
// against the median of its earlier half; nullopt with fewer than two.
std::optional<std::pair<double, double>> EarlyAndLate(const PairRate& p) {
  if (p.values.size() < 2) return std::nullopt;
  size_t half = p.values.size() / 2;
  std::vector<double> early, late;
  for (size_t i = 0; i < p.values.size(); ++i) {
    (i < half ? early : late).push_back(p.values[i].value);
  }
  return std::make_pair(Median(early), Median(late));
}

bool Degraded(const PairRate& p) {
  auto el = EarlyAndLate(p);
  return el && el->first > 0 && el->second < (1 - kDegradeShare) * el->first;
}

// The trend rule for bandwidth: a node whose pairs with every peer (at
// least two) lose more than kDegradeShare of their busbw from the earlier
// half of the burn-in to the later, while each of those peers keeps its
// busbw with the other nodes, is the cause. A warning: nothing failed yet.
void DegradingNodeVerdicts(const BurnInSummary& s, std::vector<Verdict>& out) {
  std::map<std::pair<std::string, std::string>, std::vector<const PairRate*>> by_check;
  for (const PairRate& p : s.pairs) {
    if (p.values.size() >= 2) by_check[{p.stage, p.check}].push_back(&p);
  }
  for (const auto& [key, rates] : by_check) {
    for (const std::string& node : s.nodes) {
      std::vector<const PairRate*> mine;
      for (const PairRate* p : rates) {
        if (p->a == node || p->b == node) mine.push_back(p);
      }
      if (mine.size() < 2 ||
          !std::all_of(mine.begin(), mine.end(), [](const PairRate* p) { return Degraded(*p); })) {
        continue;
      }
      bool alibis = std::all_of(mine.begin(), mine.end(), [&](const PairRate* p) {
        const std::string& peer = p->a == node ? p->b : p->a;
        bool other = false;
        for (const PairRate* q : rates) {
          if ((q->a != peer && q->b != peer) || q->a == node || q->b == node) continue;
          if (Degraded(*q)) return false;
          other = true;
        }
        return other;
      });
      if (!alibis) continue;
      Verdict v = BurnInVerdict("bad-node", Outcome::kWarn, key.first, key.second);
      v.nodes = {node};
      v.evidence["stage_kind"] = "degrading";
      v.evidence["degrade_share"] = kDegradeShare;
      double worst = 1;
      for (const PairRate* p : mine) {
        auto el = EarlyAndLate(*p);
        v.pairs.push_back({p->a, p->b});
        v.evidence["pairs"].push_back(
            {{"pair", {p->a, p->b}}, {"early_median", el->first}, {"late_median", el->second}});
        worst = std::min(worst, el->second / el->first);
      }
      char text[160];
      std::snprintf(text, sizeof text,
                    " loses busbw with every peer over the burn-in (%zu pairs, down to %.0f%% of "
                    "their early median; its peers keep theirs with others)",
                    mine.size(), worst * 100);
      v.summary = node + " " + key.second + text;
      v.next_step = "check " + node + "'s NIC, PCIe link and cooling before it fails";
      out.push_back(std::move(v));
    }
  }
}

// "failed in every round they met (4 of 4)", "failed in 1 of the 4 rounds
// they met (25%): round 11", then what the pair's other checks did.
std::string PairSummary(const PairRate& worst, const std::vector<std::string>& checks,
                        FailureScope scope) {
  int failed = worst.failures + worst.hangs;
  std::string s = worst.a + " and " + worst.b + " " + ChecksText(checks) + " failed in ";
  if (failed == worst.attempts) {
    s += "every round they met (" + std::to_string(failed) + " of " +
         std::to_string(worst.attempts) + ")";
  } else {
    s += std::to_string(failed) + " of the " + std::to_string(worst.attempts) +
         " rounds they met (" + PercentText(worst.rate) + "): " + RoundsText(worst.failed_rounds);
  }
  if (scope == FailureScope::kOnlyThese)
    s += "; their other " + ChecksNoun(worst.stage) + " passed";
  if (scope == FailureScope::kEveryCheck && checks.size() > 1) {
    s += "; no " + ChecksNoun(worst.stage) + " passed then";
  }
  return s;
}

// One port of a pair failing while its other ports passed in the same
// rounds is a filter on one of the two nodes; the link carried the rest.
std::string PairNextStep(const PairRate& worst, const std::vector<std::string>& checks,
                         FailureScope scope, bool every_round) {
  std::string pair = worst.a + " and " + worst.b;
  if (scope == FailureScope::kOnlyThese && worst.stage == "ports") {
    return "check the firewalls of " + pair + " for " + FirewallPorts(checks) +
           " (iptables -S; nft list ruleset); not the cable: their other ports passed then";
  }
  if (every_round) return "check the cable, switch ports and routes between " + pair;
  return "reseat or replace the cable between " + pair + " and read its port counters";
}

// One verdict per pair, stage and kind: a lossy link fails every port of
// the pair in the same rounds, and is one finding, not ten.
void PairVerdicts(BurnInSummary& s, std::vector<Verdict>& out,
                  const std::set<const PairRate*>& named) {
  std::map<std::tuple<std::string, std::string, std::string, bool>, std::vector<const PairRate*>>
      groups;
  std::vector<std::tuple<std::string, std::string, std::string, bool>> order;
  for (const PairRate& p : s.pairs) {
    if (!Failed(p) || named.count(&p)) continue;
    auto key = std::make_tuple(p.stage, p.a, p.b, FailedEveryRound(p));
    if (!groups.count(key)) order.push_back(key);
    groups[key].push_back(&p);
  }
  for (const auto& key : order) {
    const std::vector<const PairRate*>& ps = groups[key];
    const PairRate& worst =
        **std::max_element(ps.begin(), ps.end(),
                           [](const PairRate* x, const PairRate* y) { return x->rate < y->rate; });
    bool every = std::get<3>(key);
    std::vector<std::string> checks = ChecksOf(ps);
    FailureScope scope = ScopeOf(s, ps);
    Verdict v = BurnInVerdict(every ? "bad-link" : "flaky", every ? Outcome::kFail : worst.outcome,
                              worst.stage, ChecksText(checks));
    for (const PairRate* p : ps) {
      v.severity = Worse(v.severity, p->outcome);
      v.evidence["checks"].push_back(PairEvidence(*p));
    }
    v.pairs = {{worst.a, worst.b}};
    v.nodes = {worst.a, worst.b};
    v.evidence.update(PairEvidence(worst));
    v.evidence["max_failure_rate"] = s.max_failure_rate;
    v.evidence["other_checks"] = ScopeName(scope);
    v.summary = PairSummary(worst, checks, scope);
    v.next_step = PairNextStep(worst, checks, scope, every);
    out.push_back(std::move(v));
  }
}

void CounterVerdicts(const BurnInSummary& s, std::vector<Verdict>& out) {
  for (const CounterSeries& c : s.counters) {
    int rises = 0;
    for (size_t i = 1; i < c.points.size(); ++i) rises += c.points[i].value > c.points[i - 1].value;
    if (rises < 2) continue;
    Verdict v = BurnInVerdict("unhealthy", Outcome::kWarn, "health", c.counter);
    v.nodes = {c.node};
    v.evidence["stage_kind"] = "counter-rising";
    v.evidence["delta_per_hour"] = c.delta_per_hour;
    v.evidence["first"] = c.points.front().value;
    v.evidence["last"] = c.points.back().value;
    char rate[32];
    std::snprintf(rate, sizeof rate, "%.1f", c.delta_per_hour);
    v.summary = c.node + " " + c.counter + " keeps rising: +" + rate + " per hour (" +
                std::to_string(rises) + " of " + std::to_string(c.points.size() - 1) +
                " intervals)";
    v.next_step =
        "read " + c.counter + " on " + c.node + " again and replace the part if it climbs";
    out.push_back(std::move(v));
  }
}

void GpuVerdictsOfOne(const std::string& node, int gpu, const std::vector<const GpuSample*>& xs,
                      std::vector<Verdict>& out) {
  const GpuSample* thermal = nullptr;
  for (const GpuSample* x : xs) {
    if (x->clock_event_reasons & (kNvmlSwThermalSlowdown | kNvmlHwThermalSlowdown)) {
      thermal = x;
      break;
    }
  }
  std::string name = node + " GPU " + std::to_string(gpu);
  if (thermal) {
    Verdict v = BurnInVerdict("unhealthy", Outcome::kWarn, "health", "thermal");
    v.nodes = {node};
    v.evidence["stage_kind"] = "thermal-slowdown";
    v.evidence["gpu"] = gpu;
    v.evidence["first_round"] = thermal->round;
    if (thermal->temperature_c) v.evidence["temperature_c"] = *thermal->temperature_c;
    v.summary = name + " reached a thermal slowdown in round " + std::to_string(thermal->round);
    v.next_step = "check the airflow and fans of " + node;
    out.push_back(std::move(v));
  }
  std::vector<const GpuSample*> busy;
  for (const GpuSample* x : xs) {
    if (x->sm_clock_mhz && !(x->clock_event_reasons & kNvmlGpuIdle)) busy.push_back(x);
  }
  if (busy.size() < 4) return;
  size_t early = std::max<size_t>(1, busy.size() / 4);
  double early_level = 0;
  for (size_t i = 0; i < early; ++i) early_level = std::max(early_level, *busy[i]->sm_clock_mhz);
  size_t drop_from = 0;
  for (size_t i = early; i < busy.size(); ++i) {
    bool low = *busy[i]->sm_clock_mhz < kClockDropShare * early_level;
    if (low && drop_from == 0) drop_from = i;
    if (!low) drop_from = 0;  // it came back: not a drop that stays
  }
  if (drop_from == 0) return;
  Verdict v = BurnInVerdict("unhealthy", Outcome::kWarn, "health", "sm_clock");
  v.nodes = {node};
  v.evidence["stage_kind"] = "clocks-drop";
  v.evidence["gpu"] = gpu;
  v.evidence["early_mhz"] = early_level;
  v.evidence["last_mhz"] = *busy.back()->sm_clock_mhz;
  v.evidence["first_round"] = busy[drop_from]->round;
  char text[96];
  std::snprintf(text, sizeof text, " SM clock fell from %.0f to %.0f MHz from round %d on",
                early_level, *busy.back()->sm_clock_mhz, busy[drop_from]->round);
  v.summary = name + text;
  v.next_step =
      "read the clock event reasons of " + name + " under load (nvidia-smi -q -d PERFORMANCE)";
  out.push_back(std::move(v));
}

void GpuVerdicts(const BurnInSummary& s, std::vector<Verdict>& out) {
  for (const auto& node : s.gpus) {
    std::map<int, std::vector<const GpuSample*>> by_gpu;
    for (const GpuSample& x : node.samples) by_gpu[x.gpu].push_back(&x);
    for (const auto& [gpu, xs] : by_gpu) GpuVerdictsOfOne(node.node, gpu, xs, out);
  }
}

}  // namespace

void JudgePairRate(PairRate& p, double max_failure_rate) {
  if (p.attempts == 0) {
    p.outcome = Outcome::kSkip;
  } else if (!Failed(p)) {
    p.outcome = Outcome::kPass;
  } else if (FailedEveryRound(p) || p.rate > max_failure_rate) {
    p.outcome = Outcome::kFail;
  } else {
    p.outcome = Outcome::kWarn;
  }
}

std::vector<Verdict> BurnInVerdicts(BurnInSummary& s) {
  for (PairRate& p : s.pairs) JudgePairRate(p, s.max_failure_rate);
  std::vector<Verdict> out;
  std::set<const PairRate*> named;
  NodeVerdicts(s, out, named);
  DegradingNodeVerdicts(s, out);
  PairVerdicts(s, out, named);
  CounterVerdicts(s, out);
  GpuVerdicts(s, out);
  return out;
}

int BurnInExitCode(const std::vector<Verdict>& verdicts) {
  for (const Verdict& v : verdicts) {
    if (IsFailOrHang(v.severity)) return kExitFailed;
  }
  return kExitOk;
}

}  // namespace cc
