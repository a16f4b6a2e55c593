// `clustercheck diff A B` for two burn-ins: what got more or less flaky.
// A burn-in's pair result is a rate over many rounds, so it is the rates
// that are compared, not the outcome of one round as diff.h does for
// single runs. Pure; thread-safe.
//
//   worse    the failure rate rose by more than the tolerance, or the pair
//            never failed in A and fails in B (a first failure always
//            counts: it is the news a burn-in looks for)
//   better   the rate fell by more than the tolerance, or it failed in A
//            and never in B
//   new      the pair and check were tested in B only
//   gone     in A only
// A pair is one stage, check and (unordered) a, b. Changes within the
// tolerance are left out.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "orchestrator/burnin/burnin_summary.h"

namespace cc {

// The absolute change of a failure rate that counts: 5 points.
inline constexpr double kRateTolerance = 0.05;

struct RateChange {
  enum class Kind { kWorse, kNew, kGone, kBetter };  // the order they are listed in
  Kind kind = Kind::kWorse;
  std::string stage, check, a, b;
  // Before (A) and after (B); zeros on the side a new or gone pair lacks.
  // failures counts hangs too: the rate's numerator.
  double rate_before = 0, rate_after = 0;
  int attempts_before = 0, attempts_after = 0;
  int failures_before = 0, failures_after = 0;
  std::vector<int> failed_rounds_after;  // B's, or A's for a gone pair
  // "worse  ports tcp/29500 gpu01 <-> gpu03: 0% of 20 -> 15% of 20 (rounds 5, 9, 13)"
  std::string ToString() const;
};

const char* RateChangeKindName(RateChange::Kind k);  // "worse", "new", ...

// `tolerance`: the absolute change of a rate that counts; a change of
// exactly the tolerance does not. REQUIRES: tolerance >= 0.
// Worst first: worse (largest rise first), then new and gone (highest
// rate first), then better (largest fall first); ties by stage, check, a,
// b.
std::vector<RateChange> DiffBurnInRates(const BurnInSummary& before, const BurnInSummary& after,
                                        double tolerance = kRateTolerance);

// Leads with the counts, as RenderDiff does:
//   "burn-in rates: 1 worse, 0 new, 0 gone, 2 better"
// then one line per change (RateChange::ToString).
std::string RenderBurnInDiff(const std::vector<RateChange>& changes);
// An array, in the same order, of {"kind", "stage", "check", "a", "b",
// "before": {"rate", "attempts", "failures"} (not for new), "after": {...}
// (not for gone), "failed_rounds", "text"}.
nlohmann::json BurnInDiffToJson(const std::vector<RateChange>& changes);

}  // namespace cc
