// Which node pairs test together, and with which message sizes.
//
// Pair tests run in rounds: in each round every node is in at most one pair,
// so a slow or broken pair does not disturb another, and after all rounds
// every pair has met exactly once (the circle method of round-robin
// tournaments). Pure.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"

namespace cc {

using NodePair = std::pair<std::string, std::string>;
using Round = std::vector<NodePair>;

// Circle method: fix the first node, rotate the others one place per round.
// n even: n-1 rounds of n/2 disjoint pairs. n odd: a bye is added, giving n
// rounds of (n-1)/2 pairs, one node idle per round. n < 2: no rounds.
// REQUIRES: node names are distinct.
std::vector<Round> RoundRobinRounds(const std::vector<std::string>& nodes);

// Byte counts as nccl-tests writes them, 1024-based: "8", "64K", "256M",
// "1G". Exact: the largest suffix that divides the count, else plain bytes.
std::string FormatSize(uint64_t bytes);

inline constexpr size_t kMaxSizes = 64;

// Parses a size spec:
//   "8-256M"      from 8 to 256M doubling each step (nccl-tests -b 8 -e 256M
//                 -f 2); the end is included when a step lands on it
//   "1K,1M,1G"    a list
//   "1M"          one size
//   "[8, \"1M\"]" a JSON array of integers and size strings
// Suffixes K, M, G, T (any case, optional "B"/"iB") are 1024-based.
// kBadArgument naming the spec and the bad part for: empty text, unknown
// suffix, zero, a reversed range, overflow, more than kMaxSizes sizes.
Result<std::vector<uint64_t>> ParseSizes(const std::string& spec);
// The same from a JSON value (inventory or request): a positive integer, a
// spec string, or an array of integers and size strings.
Result<std::vector<uint64_t>> ParseSizesJson(const nlohmann::json& value);

}  // namespace cc
