// The pair rounds of clustercheck-mpi-probe, by rank. The same circle
// method as orchestrator/run/schedule.h's RoundRobinRounds over the ranks'
// nodes in hostfile order (rank i runs on the i-th node), so the MPI stage
// meets its pairs in the same rounds as the NCCL stage. Kept here, header
// only and free of MPI, because the probe links nothing but MPI; a unit
// test (orchestrator/stages/mpi/mpi_rounds_test.cc) holds the two equal.
#pragma once

#include <set>
#include <string>
#include <utility>
#include <vector>

namespace cc {

// n even: n-1 rounds of n/2 pairs; n odd: n rounds with one rank idle;
// n < 2: none. In every pair first < second.
inline std::vector<std::vector<std::pair<int, int>>> ProbeRounds(int n) {
  std::vector<std::vector<std::pair<int, int>>> rounds;
  if (n < 2) return rounds;
  std::vector<int> ring;
  for (int i = 0; i < n; ++i) ring.push_back(i);
  if (n % 2 == 1) ring.push_back(-1);  // the bye
  const size_t m = ring.size();
  for (size_t r = 0; r + 1 < m; ++r) {
    std::vector<std::pair<int, int>> round;
    for (size_t i = 0; i < m / 2; ++i) {
      int a = ring[i], b = ring[m - 1 - i];
      if (a < 0 || b < 0) continue;
      if (a > b) std::swap(a, b);
      round.emplace_back(a, b);
    }
    rounds.push_back(std::move(round));
    int last = ring[m - 1];
    for (size_t i = m - 1; i > 1; --i) ring[i] = ring[i - 1];
    ring[1] = last;
  }
  return rounds;
}

// The probe's `--pairs 0-3,1-2`: one round of the given rank pairs, all at
// once (a burn-in round meets only its own pairing). In every pair
// first < second. False with the reason when the list is malformed or a
// rank is in two pairs (a round's pairs are disjoint).
inline bool ParsePairList(const std::string& text, std::vector<std::pair<int, int>>* out,
                          std::string* why) {
  out->clear();
  std::set<int> seen;
  size_t at = 0;
  while (at <= text.size()) {
    size_t comma = text.find(',', at);
    if (comma == std::string::npos) comma = text.size();
    const std::string item = text.substr(at, comma - at);
    const size_t dash = item.find('-');
    auto rank = [](const std::string& s, int* r) {
      if (s.empty() || s.size() > 6 || s.find_first_not_of("0123456789") != std::string::npos)
        return false;
      *r = std::stoi(s);
      return true;
    };
    int a = 0, b = 0;
    if (dash == std::string::npos || !rank(item.substr(0, dash), &a) ||
        !rank(item.substr(dash + 1), &b) || a == b) {
      *why = "bad pair '" + item + "' in --pairs '" + text + "' (want RANK-RANK,...)";
      return false;
    }
    if (!seen.insert(a).second || !seen.insert(b).second) {
      *why = "--pairs '" + text + "': a rank in two pairs";
      return false;
    }
    out->emplace_back(std::min(a, b), std::max(a, b));
    at = comma + 1;
  }
  return true;
}

}  // namespace cc
