// Words for burn-in figures that the HTML page (reports/burnin_html.h) and
// `clustercheck diff` (burnin_diff.h) share, so both say a rate and a list
// of rounds the same way. Pure.
#pragma once

#include <string>
#include <vector>

namespace cc {

// A failure rate in whole percent: "0%", "15%", "100%"; a rate that would
// round to an end says so rather than hide a failure or a success: "<1%",
// ">99%".
std::string PercentText(double rate);

// "round 5", "rounds 5, 9, 13"; three or more consecutive rounds fold into
// a range: "rounds 4-7, 12". Past `max_shown` items (a range is one) the
// middle is cut: "rounds 1, 3, 5, 7, …, 40 (12 in all)". "" when empty.
std::string RoundsText(const std::vector<int>& rounds, size_t max_shown = 8);

// A duration for people: "45s", "12m 30s", "3h 12m".
std::string DurationText(double seconds);

}  // namespace cc
