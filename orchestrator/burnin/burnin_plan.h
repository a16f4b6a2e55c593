// What a burn-in runs in each round, and when it may end. Pure; thread-safe.
//
// A burn-in loops the pair stages round after round. Round k (1-based) uses
// the circle method's (k-1) mod (n-1)-th pairing (schedule.h
// RoundRobinRounds), so after r rounds every pair has met floor(r/(n-1))
// times or once more: the rotation spreads attempts evenly, which is what
// makes one pair's failure rate comparable with another's. The whole
// cluster's NCCL run is interleaved once per full rotation, on its last
// round, so a hop that only a ring over all nodes crosses is loaded too.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "orchestrator/run/schedule.h"

namespace cc {

// The pairs of burn-in round `round` (1-based) over `nodes` (in inventory
// order). Empty for fewer than two nodes or round < 1.
Round BurnInRoundPairs(const std::vector<std::string>& nodes, int round);

// True when round `round` also runs the whole-cluster NCCL AllReduce: the
// last round of every rotation, and always with two nodes (the pair is the
// cluster).
bool BurnInRoundRunsWholeCluster(size_t nodes, int round);

// How a burn-in is bounded: by a number of rounds, by time, or both (the
// first reached ends it). A round is never cut short: time is checked only
// between rounds.
struct BurnInLimit {
  std::optional<int> rounds;
  std::optional<double> seconds;
};

// Whether round `next_round` may start after `elapsed_s` seconds.
bool BurnInMayStartRound(const BurnInLimit& limit, int next_round, double elapsed_s);

// Seconds still to go after `rounds_done` rounds in `elapsed_s`, from the
// mean round so far; nullopt before the first round ends.
std::optional<double> BurnInEtaSeconds(const BurnInLimit& limit, int rounds_done, double elapsed_s);

// Rounds planned: the round limit, or the rounds that fit in the time at
// the mean pace so far; nullopt when neither is known yet.
std::optional<int> BurnInRoundsPlanned(const BurnInLimit& limit, int rounds_done, double elapsed_s);

// "round 4 of 20, 12 min elapsed, about 48 min to go, 3 failures so far"
std::string BurnInProgressLine(const BurnInLimit& limit, int round, double elapsed_s,
                               int failures_so_far);

}  // namespace cc
