// The health stage's settings ([stages.health] and [expect] ib_rate), read
// and checked once per run.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "common/status.h"
#include "orchestrator/inventory/inventory.h"
#include "orchestrator/stages/health/counter_deltas.h"

namespace cc {

struct HealthSettings {
  double timeout_s = 30;
  // Kernel-log events before this time (unix seconds) are left out.
  std::optional<double> since_s;
  std::optional<double> expected_ib_rate_gbps;
  std::map<std::string, CounterLimit> limits = DefaultCounterLimits();
};

// `now_s` (unix seconds) anchors a relative `since` ("24h").
Result<HealthSettings> ReadHealthSettings(const Inventory& inventory, double now_s);

// "2026-12-01T08:00:00Z" (UTC) or a duration back from now_s ("90m",
// "24h", "7d"); "" or "boot" = nullopt (since boot).
Result<std::optional<double>> ParseSince(const std::string& text, double now_s);

}  // namespace cc
