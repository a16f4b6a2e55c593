#include "orchestrator/burnin/burnin_simulated_test.h"

#include <map>
#include <tuple>

#include "orchestrator/burnin/burnin_plan.h"

namespace cc::testdata {
namespace {

std::vector<std::string> Names(int nodes) {
  std::vector<std::string> names;
  for (int i = 1; i <= nodes; ++i) names.push_back("n" + std::to_string(i));
  return names;
}

}  // namespace

BurnInSummary SimulatedBurnIn(int nodes, int rounds, const std::vector<std::string>& checks,
                              const FailsRule& fails) {
  BurnInSummary s;
  s.nodes = Names(nodes);
  s.rounds_done = rounds;
  // By check, then pair: the order BurnInSummaryOf gives.
  std::map<std::tuple<size_t, std::string, std::string>, PairRate> rates;
  for (int r = 1; r <= rounds; ++r) {
    for (NodePair p : BurnInRoundPairs(s.nodes, r)) {
      if (p.second < p.first) std::swap(p.first, p.second);
      for (size_t c = 0; c < checks.size(); ++c) {
        PairRate& rate = rates[{c, p.first, p.second}];
        rate.stage = "ports";
        rate.check = checks[c];
        rate.a = p.first;
        rate.b = p.second;
        ++rate.attempts;
        rate.rounds.push_back(r);
        if (fails(checks[c], p.first, p.second, r)) {
          ++rate.failures;
          rate.failed_rounds.push_back(r);
        }
      }
    }
  }
  for (auto& [key, rate] : rates) {
    rate.rate = static_cast<double>(rate.failures) / rate.attempts;
    s.pairs.push_back(rate);
  }
  return s;
}

FailsRule NodeFails(const std::string& node, int first, int last, const std::string& check) {
  return [=](const std::string& c, const std::string& a, const std::string& b, int r) {
    return (check.empty() || c == check) && (a == node || b == node) && r >= first && r <= last;
  };
}

FailsRule PairFails(const std::string& a, const std::string& b, int first, int last,
                    const std::string& check) {
  return [=](const std::string& c, const std::string& x, const std::string& y, int r) {
    bool pair = (x == a && y == b) || (x == b && y == a);
    return (check.empty() || c == check) && pair && r >= first && r <= last;
  };
}

FailsRule AnyOf(std::vector<FailsRule> rules) {
  return [=](const std::string& c, const std::string& a, const std::string& b, int r) {
    for (const FailsRule& rule : rules) {
      if (rule(c, a, b, r)) return true;
    }
    return false;
  };
}

std::string PeerInRound(int nodes, const std::string& node, int round) {
  for (const NodePair& p : BurnInRoundPairs(Names(nodes), round)) {
    if (p.first == node) return p.second;
    if (p.second == node) return p.first;
  }
  return "";
}

}  // namespace cc::testdata
