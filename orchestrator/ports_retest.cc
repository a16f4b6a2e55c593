#include "orchestrator/ports_retest.h"

#include "orchestrator/confirm.h"

namespace cc {

SymptomBudget::SymptomBudget(const std::vector<PlannedProbe>& plan,
                             const std::vector<Outcome>& first, int confirmations)
    : confirmations_(confirmations) {
  for (size_t i = 0; i < plan.size() && i < first.size(); ++i) {
    if (first[i] != Outcome::kPass && first[i] != Outcome::kWarn) continue;
    ++worked_[In(plan[i])];
    ++worked_[Out(plan[i])];
  }
}

int SymptomBudget::Count(const std::map<Key, int>& m, const Key& k) {
  auto it = m.find(k);
  return it == m.end() ? 0 : it->second;
}

bool SymptomBudget::Covered(const PlannedProbe& p) const {
  return Count(confirmed_, In(p)) >= confirmations_ || Count(confirmed_, Out(p)) >= confirmations_;
}

void SymptomBudget::Confirmed(const PlannedProbe& p) {
  // The sender reached this port elsewhere: the receiver is the suspect.
  if (Count(worked_, Out(p)) > 0) ++confirmed_[In(p)];
  // Others reached this receiver's port: the sender is the suspect.
  if (Count(worked_, In(p)) > 0) ++confirmed_[Out(p)];
}

std::vector<std::vector<RetestPair>> RetestRounds(const std::vector<PlannedProbe>& plan,
                                                  const std::vector<size_t>& failed) {
  std::vector<std::pair<std::string, std::string>> pairs;
  std::map<std::pair<std::string, std::string>, std::vector<size_t>> probes;
  for (size_t i : failed) {
    auto key = std::make_pair(plan[i].src, plan[i].dst);
    auto& v = probes[key];
    if (v.empty()) pairs.push_back(key);
    v.push_back(i);
  }
  std::vector<std::vector<RetestPair>> out;
  for (const auto& round : QuietRounds(pairs)) {
    out.emplace_back();
    for (const auto& [src, dst] : round) out.back().push_back({src, dst, probes[{src, dst}]});
  }
  return out;
}

}  // namespace cc
