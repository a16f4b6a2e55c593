// The pair rounds of clustercheck-mpi-probe, by rank. The same circle
// method as orchestrator/run/schedule.h's RoundRobinRounds over the ranks'
// nodes in hostfile order (rank i runs on the i-th node), so the MPI stage
// meets its pairs in the same rounds as the NCCL stage. Kept here, header
// only and free of MPI, because the probe links nothing but MPI; a unit
// test (orchestrator/stages/mpi/mpi_rounds_test.cc) holds the two equal.
#pragma once

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

}  // namespace cc
