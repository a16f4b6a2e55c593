#include "orchestrator/stages/nics/nics_confirm.h"

#include <algorithm>

#include "orchestrator/stages/nics/nics_results.h"

namespace cc {

bool NeedsNicsRetest(const PairResult& r) {
  return NeedsConfirmation(r.outcome) || r.outcome == Outcome::kWarn;
}

PairResult ConfirmNics(const PairResult& first, const PairResult& second) {
  if (first.outcome != Outcome::kWarn) return Confirm(first, second);
  if (second.outcome == Outcome::kWarn || NeedsConfirmation(second.outcome)) {
    // Confirm() would call a warn on retest disagreement; here it agrees.
    PairResult r = second;
    r.evidence["attempts"] = Confirm(first, second).evidence["attempts"];
    r.evidence["confirmation"] = kConfirmed;
    return r;
  }
  return Confirm(first, second);  // pass: flaky (warn); error or skip: unconfirmed
}

std::vector<std::vector<size_t>> NicsRetestRounds(const std::vector<NicProbe>& probes,
                                                  const NicSelection& selection,
                                                  const std::vector<bool>& skip) {
  using Pair = std::pair<std::string, std::string>;
  std::vector<Pair> pairs;
  std::map<Pair, std::vector<size_t>> of_pair;
  for (size_t i = 0; i < probes.size(); ++i) {
    if (i < skip.size() && skip[i]) continue;
    std::vector<PairResult> results = NicsPairResults({probes[i]}, selection);
    if (std::none_of(results.begin(), results.end(), NeedsNicsRetest)) continue;
    Pair p{probes[i].src, probes[i].dst};
    auto& list = of_pair[p];
    if (list.empty()) pairs.push_back(p);
    list.push_back(i);
  }
  std::vector<std::vector<size_t>> rounds;
  for (const auto& round : QuietRounds(pairs)) {
    rounds.emplace_back();
    for (const Pair& p : round) {
      for (size_t i : of_pair[p]) rounds.back().push_back(i);
    }
  }
  return rounds;
}

std::vector<const NicProbe*> LatestProbes(const std::vector<NicProbe>& first,
                                          const std::map<size_t, NicProbe>& retests) {
  std::vector<const NicProbe*> out;
  out.reserve(first.size());
  for (const NicProbe& p : first) out.push_back(&p);
  for (const auto& [i, p] : retests) {
    if (i < out.size() && p.tcp_state != "error") out[i] = &p;
  }
  return out;
}

std::vector<PairResult> ConfirmedNicsResults(const std::vector<NicProbe>& first,
                                             const std::map<size_t, NicProbe>& retests,
                                             const NicSelection& selection, RetestCounts* counts) {
  std::vector<PairResult> out;
  for (size_t i = 0; i < first.size(); ++i) {
    std::vector<PairResult> firsts = NicsPairResults({first[i]}, selection);
    auto retest = retests.find(i);
    std::vector<PairResult> seconds;
    if (retest != retests.end()) seconds = NicsPairResults({retest->second}, selection);
    // A retest that could not run confirms nothing (Confirm: unconfirmed).
    bool ran = retest == retests.end() || retest->second.tcp_state != "error";
    for (PairResult& s : seconds) {
      if (ran) continue;
      s.outcome = Outcome::kError;
      s.state = "error";
      s.message = "retest could not run: " + retest->second.note;
    }
    for (PairResult& r : firsts) {
      const PairResult* again = nullptr;
      for (const PairResult& s : seconds) {
        if (s.check == r.check) again = &s;
      }
      if (again == nullptr || !NeedsNicsRetest(r)) {
        out.push_back(std::move(r));
        continue;
      }
      out.push_back(ConfirmNics(r, *again));
      if (counts != nullptr) counts->Add(out.back());
    }
  }
  return out;
}

}  // namespace cc
