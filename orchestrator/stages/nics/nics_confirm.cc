#include "orchestrator/stages/nics/nics_confirm.h"

#include <algorithm>
#include <set>

#include "orchestrator/run/pattern_rounds.h"
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
                                                  const std::vector<bool>& skip,
                                                  size_t pattern_share) {
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
  for (const auto& round : QuietRounds(pairs, pattern_share)) {
    rounds.emplace_back();
    for (const Pair& p : round) {
      for (size_t i : of_pair[p]) rounds.back().push_back(i);
    }
  }
  return rounds;
}

namespace {

// The probe's sender or receiver problem on its subnet that explains a
// failure of it without a retest; "" when none does.
std::string ExplainingProblem(const NicProbe& p, const NicSelection& selection) {
  // Read from the node's own facts, never from a probe (so is an "mtu"
  // problem of a configured MTU: NicProblem::from_facts); an
  // "unreachable" problem, or DF datagrams lost on the path, is judged on
  // the probes, which is what a retest is there to confirm.
  static const std::set<std::string> kAddressing = {"down", "prefix", "subnet", "duplicate",
                                                    "missing"};
  for (const SubnetJudgement& j : selection.subnets) {
    if (j.cidr != p.subnet.str()) continue;
    for (const NicProblem& problem : j.problems) {
      if (!kAddressing.count(problem.kind) && !problem.from_facts) continue;
      if (problem.node == p.src.str() || problem.node == p.dst.str()) return problem.message;
    }
  }
  return "";
}

}  // namespace

NicsRetestPlan PlanNicsRetests(const std::vector<NicProbe>& probes, const NicSelection& selection,
                               const std::vector<bool>& skip) {
  NicsRetestPlan plan;
  std::vector<size_t> failing;
  for (size_t i = 0; i < probes.size(); ++i) {
    if (i < skip.size() && skip[i]) continue;
    std::vector<PairResult> results = NicsPairResults({probes[i]}, selection);
    if (std::none_of(results.begin(), results.end(), NeedsNicsRetest)) continue;
    std::string why = ExplainingProblem(probes[i], selection);
    if (!why.empty()) {
      plan.explained[i] = why;
    } else {
      failing.push_back(i);
    }
  }
  // Per (subnet, node): the peers it fails with, and its probes.
  using Key = std::pair<std::string, std::string>;
  std::map<Key, std::set<std::string>> peers;
  for (size_t i : failing) {
    const NicProbe& p = probes[i];
    peers[{p.subnet.str(), p.src.str()}].insert(p.dst.str());
    peers[{p.subnet.str(), p.dst.str()}].insert(p.src.str());
  }
  std::map<Key, std::vector<size_t>> samples;  // a pattern node's sampled probes
  std::vector<bool> retested(probes.size(), false);
  std::vector<size_t> kept;
  for (size_t i : failing) {
    const NicProbe& p = probes[i];
    // The end with the wider pattern is the one the failure is about.
    Key src{p.subnet.str(), p.src.str()}, dst{p.subnet.str(), p.dst.str()};
    const Key& node = peers[src].size() >= peers[dst].size() ? src : dst;
    if (peers[node].size() < kNodePatternPeers) {
      kept.push_back(i);
      continue;
    }
    const std::string peer = node.second == p.src.str() ? p.dst.str() : p.src.str();
    std::vector<size_t>& mine = samples[node];
    std::set<std::string> sampled_peers;
    for (size_t j : mine) {
      sampled_peers.insert(probes[j].src.str() == node.second ? probes[j].dst.str()
                                                              : probes[j].src.str());
    }
    if (sampled_peers.count(peer) || sampled_peers.size() < kSampledPeers) {
      mine.push_back(i);
      kept.push_back(i);
      continue;
    }
    plan.sampled[i] = mine;
    plan.sampled_node[i] = node.second;
    plan.samples.insert(mine.begin(), mine.end());
  }
  std::vector<bool> out_of_rounds(probes.size(), true);
  for (size_t i : kept) out_of_rounds[i] = false;
  // A sampled node's samples go in one round: its pattern is confirmed in
  // one retest deadline.
  plan.rounds = NicsRetestRounds(probes, selection, out_of_rounds, kSampledPeers);
  return plan;
}

std::map<size_t, nlohmann::json> NotRetestedConfirmations(const NicsRetestPlan& plan,
                                                          const std::vector<NicProbe>& first,
                                                          const std::map<size_t, NicProbe>& retests,
                                                          const NicSelection& selection) {
  std::map<size_t, nlohmann::json> out;
  for (const auto& [i, why] : plan.explained) {
    out[i] = {{"confirmation", kConfirmed}, {"confirmed_by", why + " (not retested)"}};
  }
  auto failed_again = [&](size_t j) {
    auto it = retests.find(j);
    if (it == retests.end() || it->second.tcp_state == "error") return false;
    std::vector<PairResult> again = NicsPairResults({it->second}, selection);
    return std::any_of(again.begin(), again.end(), NeedsNicsRetest);
  };
  for (const auto& [i, samples] : plan.sampled) {
    bool all = !samples.empty() && std::all_of(samples.begin(), samples.end(), failed_again);
    if (!all) {
      out[i] = {{"confirmation", kUnconfirmed}};
      continue;
    }
    std::string by;
    for (size_t j : samples) {
      by += (by.empty() ? "" : ", ") + first[j].src.str() + "->" + first[j].dst.str();
    }
    out[i] = {{"confirmation", kConfirmed},
              {"confirmed_by", plan.sampled_node.at(i) +
                                   " fails with every peer it was retested "
                                   "with (" +
                                   by + "): not retested"}};
  }
  return out;
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
                                             const NicSelection& selection, RetestCounts* counts,
                                             const std::map<size_t, nlohmann::json>& not_retested) {
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
        auto word = not_retested.find(i);
        if (again == nullptr && NeedsNicsRetest(r) && word != not_retested.end()) {
          r.evidence.update(word->second);
        }
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
