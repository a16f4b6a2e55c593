#include "orchestrator/burnin/burnin_verdicts.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "common/median.h"
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

// The peer's alibi: with nodes other than `node`, for the stage and check
// of `like`, it was tested from round `first` on and never failed there.
// (In a round each node is in one pair, so the alibi comes from the
// rounds around, not from the failing round itself.)
bool PeerWorksWithOthers(const BurnInSummary& s, const PairRate& like, const std::string& node,
                         const std::string& peer, int first) {
  bool tested = false;
  for (const PairRate& q : s.pairs) {
    if (q.stage != like.stage || q.check != like.check) continue;
    if (q.a != peer && q.b != peer) continue;
    if (q.a == node || q.b == node) continue;
    for (int round : q.rounds) tested |= round >= first;
    if (!q.failed_rounds.empty() && q.failed_rounds.back() >= first) return false;
  }
  return tested;
}

// The trend rule for one node, stage and check; the first failing round,
// or 0 when the node is not the cause.
int FirstRoundNodeIsTheCause(const BurnInSummary& s, const std::vector<const PairRate*>& mine,
                             const std::string& node) {
  int first = 0;
  std::set<std::string> failing_peers;
  for (const PairRate* p : mine) {
    if (!Failed(*p)) continue;
    failing_peers.insert(p->a == node ? p->b : p->a);
    if (first == 0 || p->first_failure() < first) first = p->first_failure();
  }
  if (failing_peers.size() < 2) return 0;
  for (const PairRate* p : mine) {
    const std::string& peer = p->a == node ? p->b : p->a;
    for (int round : p->rounds) {
      if (round < first) continue;
      if (!std::binary_search(p->failed_rounds.begin(), p->failed_rounds.end(), round)) return 0;
    }
    // A peer that fails with others too may be the one at fault: without
    // its alibi the node is not named.
    if (Failed(*p) && !PeerWorksWithOthers(s, *p, node, peer, first)) return 0;
  }
  return first;
}

void NodeVerdicts(BurnInSummary& s, std::vector<Verdict>& out, std::set<const PairRate*>& named) {
  std::map<std::pair<std::string, std::string>, std::vector<const PairRate*>> by_check;
  for (const PairRate& p : s.pairs) by_check[{p.stage, p.check}].push_back(&p);
  for (const auto& [key, rates] : by_check) {
    for (const std::string& node : s.nodes) {
      std::vector<const PairRate*> mine;
      for (const PairRate* p : rates) {
        if (p->a == node || p->b == node) mine.push_back(p);
      }
      int first = FirstRoundNodeIsTheCause(s, mine, node);
      if (first == 0) continue;
      Verdict v = BurnInVerdict("bad-node", Outcome::kFail, key.first, key.second);
      v.nodes = {node};
      int failed = 0;
      for (const PairRate* p : mine) {
        if (!Failed(*p)) continue;
        named.insert(p);
        v.pairs.push_back({p->a, p->b});
        v.evidence["pairs"].push_back(PairEvidence(*p));
        ++failed;
      }
      v.evidence["first_failing_round"] = first;
      v.summary = node + " fails " + key.second + " with every peer from round " +
                  std::to_string(first) + " on (" + std::to_string(failed) +
                  " pairs; its peers pass with others)";
      v.next_step =
          "drain " + node + " and check its " + key.first + " path (NIC, cable, firewall)";
      out.push_back(std::move(v));
    }
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

// "tcp/22", "tcp/22 and tcp/29500", "tcp/22, tcp/29500 and 8 more".
std::string ChecksText(const std::vector<const PairRate*>& ps) {
  std::string out;
  for (size_t i = 0; i < ps.size() && i < 2; ++i) {
    out += (i == 0 ? "" : ps.size() == 2 ? " and " : ", ") + ps[i]->check;
  }
  if (ps.size() > 2) out += " and " + std::to_string(ps.size() - 2) + " more";
  return out;
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
    std::string pair = worst.a + " and " + worst.b;
    Verdict v = BurnInVerdict(every ? "bad-link" : "flaky", every ? Outcome::kFail : worst.outcome,
                              worst.stage, ps.size() == 1 ? worst.check : ChecksText(ps));
    for (const PairRate* p : ps) {
      v.severity = Worse(v.severity, p->outcome);
      v.evidence["checks"].push_back(PairEvidence(*p));
    }
    v.pairs = {{worst.a, worst.b}};
    v.nodes = {worst.a, worst.b};
    v.evidence.update(PairEvidence(worst));
    v.evidence["max_failure_rate"] = s.max_failure_rate;
    if (every) {
      v.summary = pair + " failed " + ChecksText(ps) + " in every round (" +
                  std::to_string(worst.attempts) + " of " + std::to_string(worst.attempts) + ")";
      v.next_step = "check the cable, switch ports and routes between " + pair;
    } else {
      v.summary = pair + " " + ChecksText(ps) + " failed " +
                  std::to_string(worst.failures + worst.hangs) + " of " +
                  std::to_string(worst.attempts) + " (" + PercentText(worst.rate) + ", " +
                  RoundsText(worst.failed_rounds) + ")";
      v.next_step = "reseat or replace the cable between " + pair + " and read its port counters";
    }
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
