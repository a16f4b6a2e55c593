// The burn-in part of the HTML report (html.h, HtmlOptions::burnin): what
// hours of rounds showed that one run cannot.
//
//   - the rounds done, the time it took, and how many pair checks passed
//     every round, failed some within the allowed rate (flaky), or failed;
//   - per stage and check, a node x node heatmap of failure rates;
//   - busbw over time, per pair and as the cluster's spread per round;
//   - the node counters that moved, with their rate per hour;
//   - GPU temperature and SM clock over time, thermal slowdowns marked.
//
// An HTML fragment of <section>s (no <html>, no script); every name is
// escaped. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <string>

#include "orchestrator/burnin/burnin_summary.h"

namespace cc {

std::string RenderBurnInSection(const BurnInSummary& s);

// The failure-rate heatmap of one stage and check: a cell per tested pair
// of `nodes` (both halves of the matrix for an undirected check), coloured
// by RateColour, with the rate as text and RateCellTitle as tooltip;
// untested cells grey. Pairs of other checks are ignored.
std::string RenderRateHeatmapSvg(const BurnInSummary& s, const std::string& stage,
                                 const std::string& check);

// Fill of a rate cell: the report's pass green at 0; any failure leaves
// green at once for amber, rising to the fail red at 100%.
std::string RateColour(double rate);

// The cell's tooltip:
//   "gpu01 ↔ gpu03 tcp/29500: 3 of 20 failed (rounds 5, 9, 13)"
//   "gpu01 ↔ gpu03 tcp/29500: 20 of 20 passed"
std::string RateCellTitle(const PairRate& p);

// NVML clock event reasons that mean heat ("HW thermal slowdown"), comma
// separated, or "" when none.
std::string ThermalReasonsText(uint64_t clock_event_reasons);

}  // namespace cc
