// Retest rounds for a node-level pattern (run/confirm.h QuietRounds, with a
// share): a node that fails with several peers is confirmed with a few of
// them at once instead of one full deadline per peer. Pure.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace cc {

// QuietRounds, except that a node in at least kPatternPairs of `pairs` (a
// node failing with several peers: the pattern may be the node's own) may
// be in up to `pattern_share` pairs of one round, its peers still in one
// each. A pair (a, a) is its own round. REQUIRES: pattern_share >= 1.
inline constexpr size_t kPatternPairs = 2;
std::vector<std::vector<std::pair<std::string, std::string>>> QuietRounds(
    const std::vector<std::pair<std::string, std::string>>& pairs, size_t pattern_share);

}  // namespace cc
