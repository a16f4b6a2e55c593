#include "orchestrator/run/confirm.h"

#include <algorithm>
#include <map>
#include <set>

#include "orchestrator/run/pattern_rounds.h"

namespace cc {
namespace {

nlohmann::json Attempt(const PairResult& r) {
  nlohmann::json a = {
      {"outcome", OutcomeName(r.outcome)}, {"state", r.state}, {"message", r.message}};
  if (r.value) a["value"] = *r.value;
  if (!r.at.empty()) a["at"] = r.at;
  return a;
}

}  // namespace

std::vector<size_t> ToConfirm(const std::vector<PairResult>& results) {
  std::vector<size_t> out;
  for (size_t i = 0; i < results.size(); ++i) {
    if (NeedsConfirmation(results[i].outcome)) out.push_back(i);
  }
  return out;
}

PairResult Confirm(const PairResult& first, const PairResult& second) {
  const nlohmann::json attempts = {Attempt(first), Attempt(second)};
  if (NeedsConfirmation(second.outcome)) {
    // Agreement: the retest (quieter, longer deadline) is the better
    // measurement, so it is the result; the first attempt stays in evidence.
    PairResult r = second;
    r.evidence["attempts"] = attempts;
    r.evidence["confirmation"] = kConfirmed;
    return r;
  }
  if (IsPassOrWarn(second.outcome)) {
    // Disagreement: the pair works, but not always. Keep the first attempt's
    // evidence (what went wrong) and say it passed on retest.
    PairResult r = first;
    r.outcome = Outcome::kWarn;
    r.message =
        "flaky: " + first.message + " on the first attempt; " +
        (second.message.empty() ? std::string(OutcomeName(second.outcome)) : second.message) +
        " on the retest";
    r.evidence["attempts"] = attempts;
    r.evidence["confirmation"] = kFlaky;
    return r;
  }
  // The retest could not run: the first attempt stands, unconfirmed.
  PairResult r = first;
  r.evidence["attempts"] = attempts;
  r.evidence["confirmation"] = kUnconfirmed;
  return r;
}

bool IsFlaky(const PairResult& r) {
  auto it = r.evidence.find("confirmation");
  return it != r.evidence.end() && it->is_string() && *it == kFlaky;
}

std::vector<std::vector<std::pair<std::string, std::string>>> QuietRounds(
    const std::vector<std::pair<std::string, std::string>>& pairs) {
  std::vector<std::vector<std::pair<std::string, std::string>>> rounds;
  std::vector<std::set<std::string>> busy;
  for (const auto& p : pairs) {
    size_t k = 0;
    for (; k < rounds.size(); ++k) {
      if (p.first != p.second && !busy[k].count(p.first) && !busy[k].count(p.second)) break;
    }
    if (k == rounds.size()) {
      rounds.emplace_back();
      busy.emplace_back();
    }
    rounds[k].push_back(p);
    busy[k].insert(p.first);
    busy[k].insert(p.second);
  }
  return rounds;
}

std::vector<std::vector<std::pair<std::string, std::string>>> QuietRounds(
    const std::vector<std::pair<std::string, std::string>>& pairs, size_t pattern_share) {
  std::map<std::string, size_t> pairs_of;
  for (const auto& [a, b] : pairs) {
    ++pairs_of[a];
    if (b != a) ++pairs_of[b];
  }
  auto share = [&](const std::string& n) {
    return pairs_of[n] >= kPatternPairs ? std::max<size_t>(1, pattern_share) : 1;
  };
  std::vector<std::vector<std::pair<std::string, std::string>>> rounds;
  std::vector<std::map<std::string, size_t>> busy;  // per round: node -> pairs in it
  for (const auto& p : pairs) {
    size_t k = 0;
    for (; k < rounds.size(); ++k) {
      if (p.first != p.second && busy[k][p.first] < share(p.first) &&
          busy[k][p.second] < share(p.second)) {
        break;
      }
    }
    if (k == rounds.size()) {
      rounds.emplace_back();
      busy.emplace_back();
    }
    rounds[k].push_back(p);
    ++busy[k][p.first];
    ++busy[k][p.second];
  }
  return rounds;
}

void RetestCounts::Add(const PairResult& merged) {
  ++retested;
  auto it = merged.evidence.find("confirmation");
  std::string c = it != merged.evidence.end() && it->is_string() ? it->get<std::string>() : "";
  if (c == kConfirmed)
    ++confirmed;
  else if (c == kFlaky)
    ++flaky;
  else
    ++unconfirmed;
}

nlohmann::json RetestCounts::ToJson() const {
  return {{"retested", retested},
          {"confirmed", confirmed},
          {"flaky", flaky},
          {"unconfirmed", unconfirmed}};
}

}  // namespace cc
