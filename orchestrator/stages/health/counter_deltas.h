// IB port error counters that moved during the run: the health stage takes
// a snapshot before the pair stages and one after them, and a counter that
// grew is named with its delta. Which counters count and how much is too
// much are settings; the defaults follow NVSentinel's NIC health monitor:
// link_downed, excessive_buffer_overrun_errors and
// local_link_integrity_errors fail on any growth (the port dropped or
// corrupted traffic); symbol_error, port_rcv_errors, port_xmit_discards and
// link_error_recovery warn above a rate. Pure.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "orchestrator/stages/health/health_finding.h"

namespace cc {

struct CounterLimit {
  bool fatal = false;  // true: fail when the delta exceeds `limit`
  double limit = 0;    // fatal: a delta; otherwise a rate per second
};

// The defaults, by sysfs counter name.
std::map<std::string, CounterLimit> DefaultCounterLimits();

// One node's findings from two "ib" sections `seconds` apart: per port, a
// failing or warning finding per counter over its limit, else one passing
// "ib.<dev>/<port>.counters" finding with every delta in its evidence. A
// counter that went down was reset: its delta is its new value. Ports only
// in one snapshot are named as `warn` (a port that came or went).
std::vector<HealthFinding> JudgeCounterDeltas(const nlohmann::json& before,
                                              const nlohmann::json& after, double seconds,
                                              const std::map<std::string, CounterLimit>& limits);

}  // namespace cc
