#include "orchestrator/stages/ports/ports_retest.h"

#include "orchestrator/run/confirm.h"
#include "orchestrator/run/pattern_rounds.h"

namespace cc {

bool IsTokenTimeout(const PairResult& r) {
  return r.outcome == Outcome::kWarn && r.state == "open";
}

std::vector<size_t> PortsToRetest(const std::vector<PairResult>& results) {
  std::vector<size_t> out;
  for (size_t i = 0; i < results.size(); ++i) {
    if (NeedsConfirmation(results[i].outcome) || IsTokenTimeout(results[i])) out.push_back(i);
  }
  return out;
}

PairResult ConfirmPortProbe(const PairResult& first, const PairResult& second) {
  PairResult generic = Confirm(first, second);
  if (!IsTokenTimeout(first)) return generic;
  const nlohmann::json attempts = generic.evidence["attempts"];
  PairResult r;
  if (second.outcome == Outcome::kPass) {
    // Load, not a flaky link: the connect worked both times.
    r = second;
    r.message =
        "no token came back in time on the first attempt (a loaded node); "
        "the quiet retest passed";
    r.evidence["confirmation"] = kCleared;
  } else if (IsTokenTimeout(second)) {
    r = second;  // slow twice, even alone and with 2.5x the deadline
    r.evidence["confirmation"] = kConfirmed;
  } else if (NeedsConfirmation(second.outcome)) {
    // Connected once, failed once: that is flaky, whichever came first.
    r = first;
    r.message = "flaky: connected on the first attempt; " + second.message + " on the retest";
    r.evidence["confirmation"] = kFlaky;
  } else {
    return generic;  // retest could not run (error/skip), or another warn
  }
  r.evidence["attempts"] = attempts;
  return r;
}

SymptomBudget::SymptomBudget(const std::vector<PlannedProbe>& plan,
                             const std::vector<Outcome>& first, int confirmations)
    : confirmations_(confirmations) {
  for (size_t i = 0; i < plan.size() && i < first.size(); ++i) FirstAttempt(plan[i], first[i]);
}

void SymptomBudget::FirstAttempt(const PlannedProbe& p, Outcome o) {
  if (!IsPassOrWarn(o)) return;
  ++worked_[In(p)];
  ++worked_[Out(p)];
}

int SymptomBudget::Count(const std::map<Key, int>& m, const Key& k) {
  auto it = m.find(k);
  return it == m.end() ? 0 : it->second;
}

bool SymptomBudget::ConfirmedEnough(const PlannedProbe& p) const {
  return Count(confirmed_, In(p)) >= confirmations_ || Count(confirmed_, Out(p)) >= confirmations_;
}

bool SymptomBudget::Covered(const PlannedProbe& p) const {
  auto full = [&](const Key& k) {
    return Count(confirmed_, k) + Count(planned_, k) >= confirmations_;
  };
  return full(In(p)) || full(Out(p));
}

void SymptomBudget::Count(const PlannedProbe& p, std::map<Key, int>& into) const {
  // The sender reached this port elsewhere: the receiver is the suspect.
  if (Count(worked_, Out(p)) > 0) ++into[In(p)];
  // Others reached this receiver's port: the sender is the suspect.
  if (Count(worked_, In(p)) > 0) ++into[Out(p)];
}

void SymptomBudget::Confirmed(const PlannedProbe& p) { Count(p, confirmed_); }

void SymptomBudget::Planned(const PlannedProbe& p) { Count(p, planned_); }

std::vector<std::vector<RetestPair>> RetestRounds(const std::vector<PlannedProbe>& plan,
                                                  const std::vector<size_t>& failed) {
  return RetestRounds([&](size_t i) { return std::make_pair(plan[i].src, plan[i].dst); }, failed);
}

std::vector<std::vector<RetestPair>> RetestRounds(
    const std::function<std::pair<std::string, std::string>(size_t)>& pair_of,
    const std::vector<size_t>& failed) {
  std::vector<std::pair<std::string, std::string>> pairs;
  std::map<std::pair<std::string, std::string>, std::vector<size_t>> probes;
  for (size_t i : failed) {
    auto key = pair_of(i);
    auto& v = probes[key];
    if (v.empty()) pairs.push_back(key);
    v.push_back(i);
  }
  std::vector<std::vector<RetestPair>> out;
  // A node failing with many peers is retested with kConfirmationsPerSymptom
  // of them at once as receiver and as many as sender: both of its symptoms
  // are confirmed in one round's deadline.
  for (const auto& round : QuietRounds(pairs, kPatternShare)) {
    out.emplace_back();
    for (const auto& [src, dst] : round) out.back().push_back({src, dst, probes[{src, dst}]});
  }
  return out;
}

}  // namespace cc
