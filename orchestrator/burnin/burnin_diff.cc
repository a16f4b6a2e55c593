#include "orchestrator/burnin/burnin_diff.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "orchestrator/burnin/burnin_text.h"

namespace cc {
namespace {

using Key = std::tuple<std::string, std::string, std::string, std::string>;

// Rates are ratios of small counts: 2/20 - 1/20 is 0.05 give or take a
// rounding error, and a change of exactly the tolerance must not count.
constexpr double kSlack = 1e-9;

int Failed(const PairRate& p) { return p.failures + p.hangs; }

RateChange ChangeOf(RateChange::Kind kind, const PairRate& id) {
  RateChange c;
  c.kind = kind;
  c.stage = id.stage;
  c.check = id.check;
  c.a = id.a;
  c.b = id.b;
  return c;
}

void SetBefore(RateChange& c, const PairRate& p) {
  c.rate_before = p.rate;
  c.attempts_before = p.attempts;
  c.failures_before = Failed(p);
}

void SetAfter(RateChange& c, const PairRate& p) {
  c.rate_after = p.rate;
  c.attempts_after = p.attempts;
  c.failures_after = Failed(p);
  c.failed_rounds_after = p.failed_rounds;
}

// How bad a change is within its kind, larger first.
double Weight(const RateChange& c) {
  switch (c.kind) {
    case RateChange::Kind::kWorse:
      return c.rate_after - c.rate_before;
    case RateChange::Kind::kNew:
      return c.rate_after;
    case RateChange::Kind::kGone:
      return c.rate_before;
    case RateChange::Kind::kBetter:
      return c.rate_before - c.rate_after;
  }
  return 0;
}

std::string RateText(double rate, int attempts) {
  return PercentText(rate) + " of " + std::to_string(attempts);
}

}  // namespace

const char* RateChangeKindName(RateChange::Kind k) {
  switch (k) {
    case RateChange::Kind::kWorse:
      return "worse";
    case RateChange::Kind::kNew:
      return "new";
    case RateChange::Kind::kGone:
      return "gone";
    case RateChange::Kind::kBetter:
      return "better";
  }
  return "?";
}

std::string RateChange::ToString() const {
  std::string s = RateChangeKindName(kind);
  s.resize(7, ' ');  // "better " is the longest: the pairs line up
  // Worded as diff.cc words a pair of a single run.
  s += stage + " " + check + " " + a + " <-> " + b + ": ";
  std::string before = RateText(rate_before, attempts_before);
  std::string after = RateText(rate_after, attempts_after);
  if (kind == Kind::kNew) {
    s += after;
  } else if (kind == Kind::kGone) {
    s += "was " + before;
  } else {
    s += before + " -> " + after;
  }
  if (!failed_rounds_after.empty()) s += " (" + RoundsText(failed_rounds_after) + ")";
  return s;
}

std::vector<RateChange> DiffBurnInRates(const BurnInSummary& before, const BurnInSummary& after,
                                        double tolerance) {
  std::map<Key, const PairRate*> in_after;
  for (const auto& p : after.pairs) in_after.emplace(Key{p.stage, p.check, p.a, p.b}, &p);
  std::vector<RateChange> changes;
  for (const auto& was : before.pairs) {
    // Either way round: the inventories may list the nodes in other orders.
    auto it = in_after.find({was.stage, was.check, was.a, was.b});
    if (it == in_after.end()) it = in_after.find({was.stage, was.check, was.b, was.a});
    if (it == in_after.end()) {
      RateChange c = ChangeOf(RateChange::Kind::kGone, was);
      SetBefore(c, was);
      c.failed_rounds_after = was.failed_rounds;
      changes.push_back(c);
      continue;
    }
    const PairRate& now = *it->second;
    in_after.erase(it);
    double rise = now.rate - was.rate;
    bool worse = rise > tolerance + kSlack || (Failed(was) == 0 && Failed(now) > 0);
    bool better = -rise > tolerance + kSlack || (Failed(was) > 0 && Failed(now) == 0);
    if (!worse && !better) continue;
    RateChange c = ChangeOf(worse ? RateChange::Kind::kWorse : RateChange::Kind::kBetter, now);
    SetBefore(c, was);
    SetAfter(c, now);
    changes.push_back(c);
  }
  // What is left of B's pairs was not in A; in B's order.
  for (const auto& p : after.pairs) {
    if (!in_after.count({p.stage, p.check, p.a, p.b})) continue;
    RateChange c = ChangeOf(RateChange::Kind::kNew, p);
    SetAfter(c, p);
    changes.push_back(c);
  }
  std::stable_sort(changes.begin(), changes.end(), [](const RateChange& x, const RateChange& y) {
    if (x.kind != y.kind) return x.kind < y.kind;
    double wx = Weight(x), wy = Weight(y);
    if (wx != wy) return wx > wy;
    return std::tie(x.stage, x.check, x.a, x.b) < std::tie(y.stage, y.check, y.a, y.b);
  });
  return changes;
}

std::string RenderBurnInDiff(const std::vector<RateChange>& changes) {
  int n[4] = {0, 0, 0, 0};
  for (const auto& c : changes) ++n[static_cast<int>(c.kind)];
  std::string s = "burn-in rates: " + std::to_string(n[0]) + " worse, " + std::to_string(n[1]) +
                  " new, " + std::to_string(n[2]) + " gone, " + std::to_string(n[3]) + " better\n";
  for (const auto& c : changes) s += "  " + c.ToString() + "\n";
  return s;
}

nlohmann::json BurnInDiffToJson(const std::vector<RateChange>& changes) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& c : changes) {
    nlohmann::json j{{"kind", RateChangeKindName(c.kind)},
                     {"stage", c.stage},
                     {"check", c.check},
                     {"a", c.a},
                     {"b", c.b},
                     {"text", c.ToString()}};
    if (c.kind != RateChange::Kind::kNew) {
      j["before"] = {{"rate", c.rate_before},
                     {"attempts", c.attempts_before},
                     {"failures", c.failures_before}};
    }
    if (c.kind != RateChange::Kind::kGone) {
      j["after"] = {
          {"rate", c.rate_after}, {"attempts", c.attempts_after}, {"failures", c.failures_after}};
    }
    j["failed_rounds"] = c.failed_rounds_after;
    a.push_back(j);
  }
  return a;
}

}  // namespace cc
