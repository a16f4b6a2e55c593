// Pair results as the store keeps them (schema v4): one row per pair and
// batch, a "pack", whose results are a JSON array (schema_migrations.cc,
// v3 -> v4). A run of 256 nodes writes about a million pair results, in
// batches where one pair's ports or subnets come together and differ in
// little but their check and state; a pack states the pair, stage, round
// and time once, and the evidence members all its results share once.
// Pure: the store writes the packs and reads them back through SQL.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "orchestrator/store/store.h"

namespace cc {

struct PairPack {
  int64_t run_id = 0;
  std::string stage, src, dst;
  int round = 0;
  std::string at;             // of its first result
  std::string common = "{}";  // evidence members every result shares
  int64_t n = 0;              // results
  int64_t n_value = 0;        // results with a value
  std::string items;          // [[check, outcome, state, value, unit, message, evidence, at], ...]
};

// At most this many results in one pack: an expanded result's id is
// pack id * kPackIdStride + its index.
inline constexpr size_t kPackIdStride = 4096;

// The results of one batch as packs: one per (run, stage, src, dst, round)
// in the order each first appears, results in their order within it; a
// result without a time gets `now`. Members are shared only among results
// whose evidence are objects with no null anywhere (SQLite's json_patch,
// which puts them back, drops nulls).
std::vector<PairPack> PackPairResults(const std::vector<PairResult>& rs, const std::string& now);

}  // namespace cc
