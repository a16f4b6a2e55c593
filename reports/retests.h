// The retests of a run, per stage: what confirmation before accusation
// (orchestrator/run/confirm.h) did, from the run meta keys "retests.<stage>"
// ({"retested", "confirmed", "flaky", "unconfirmed"}) that
// StageContext::RecordRetests writes. The terminal, JSON and HTML reports
// print one line per stage that retested something, and nothing for the
// others.
//
// Pure: no I/O; thread-safe.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "orchestrator/store/run_data.h"

namespace cc {

struct StageRetests {
  std::string stage;
  int retested = 0, confirmed = 0, flaky = 0, unconfirmed = 0;
};

// Stages with at least one retest, in the order the run's results first
// name them (stages only in the meta after, by name). A malformed meta
// value counts as none.
std::vector<StageRetests> RetestsOf(const RunData& data);

// "12 retested: 10 confirmed, 2 flaky" (zero counts left out).
std::string RetestLine(const StageRetests& r);

// {"<stage>": {"retested", "confirmed", "flaky", "unconfirmed"}}; an empty
// object when nothing was retested.
nlohmann::json RetestsJson(const std::vector<StageRetests>& retests);

}  // namespace cc
