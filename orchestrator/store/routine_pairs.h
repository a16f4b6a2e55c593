// The routine pair results of a run, kept small. A run of 256 nodes stores
// about a million pair results (every ordered pair on every port and every
// subnet, then the mpi pairs), nearly all of them passes that differ only
// in their two nodes. As PairResults (strings and a parsed evidence object,
// about 1 KB each) they took 239 MB at 64 nodes; kept here they take 12
// bytes each, so that analysis and reports of a 256-node run fit in 64 MB
// (issue 14). RunData holds every other result in full.
//
// A result is routine when it passed or was skipped, was not retested
// (no evidence "confirmation") and its stage did not find its speed slow
// (no evidence "speed" with "slow": true). What is kept of it: stage,
// check, matrix check, outcome, state, unit, value, whether its stage
// judged its speed, and a skip's message (why: a few distinct ones, such
// as a decoy interface on every node); the rest of its message, its
// evidence and its time stay in the store.
//
// Not thread-safe for writing; const use from several threads is fine.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "orchestrator/store/store.h"

namespace cc {

bool IsRoutinePairResult(const PairResult& r);

class RoutinePairs {
 public:
  // What the results of one group share.
  struct Group {
    std::string stage;
    std::string check;
    std::string matrix_check;  // stages.h MatrixCheck of its results
    Outcome outcome = Outcome::kPass;
    std::string state;
    std::string unit;
    bool speed_judged = false;  // its stage judged each value (and found it not slow)
    std::string message;        // a skip's; "" for a pass
  };
  struct Entry {
    uint32_t group = 0;
    uint16_t src = 0;  // node ids (node())
    uint16_t dst = 0;
    uint32_t value = kNoValue;  // index of its value; kNoValue for none
  };
  static constexpr uint32_t kNoValue = UINT32_MAX;

  // Keeps r. REQUIRES: IsRoutinePairResult(r). `matrix_check` is
  // MatrixCheck(r). False, keeping nothing, when r names a node past the
  // 65536 this can number: keep it in full instead.
  bool Add(const PairResult& r, const std::string& matrix_check);

  // Room for `results` entries, `values` of them with a value.
  void Reserve(size_t results, size_t values);

  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  // In the order added.
  const std::vector<Entry>& entries() const { return entries_; }
  // In the order first added.
  const std::vector<Group>& groups() const { return groups_; }
  const Group& group(const Entry& e) const { return groups_[e.group]; }
  // Node names in the order first seen.
  const std::vector<std::string>& nodes() const { return nodes_; }
  const std::string& node(uint16_t id) const { return nodes_[id]; }
  std::optional<double> value(const Entry& e) const;
  // The latest time of its results ("" for none).
  const std::string& last_at() const { return last_at_; }

  // The entry as a PairResult: run 0, round 0, no time, a pass without a
  // message; its evidence only {"speed": {"slow": false}} where its stage
  // judged the speed (what the analysis reads of it).
  PairResult Materialize(const Entry& e) const;

  // A copy without the entries whose src or dst is one of `nodes`.
  RoutinePairs Without(const std::set<std::string>& nodes) const;

 private:
  std::optional<uint16_t> NodeId(const std::string& name);

  std::vector<Group> groups_;
  std::unordered_map<std::string, uint32_t> group_ids_;  // by GroupKey
  std::vector<std::string> nodes_;
  std::unordered_map<std::string, uint16_t> node_ids_;
  std::vector<double> values_;
  std::vector<Entry> entries_;
  std::string last_at_;
};

}  // namespace cc
