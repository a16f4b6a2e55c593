#include "orchestrator/run/probe_pacer.h"

#include <algorithm>
#include <cmath>

namespace cc {

double Percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  double rank = std::ceil(std::clamp(p, 0.0, 1.0) * static_cast<double>(values.size()));
  size_t i = rank < 1 ? 0 : static_cast<size_t>(rank) - 1;
  return values[std::min(i, values.size() - 1)];
}

ProbePacer::ProbePacer(ProbePacerOptions options)
    : options_(options), window_(std::max(1, options.max_window)) {}

void ProbePacer::OnBatch(std::vector<double> connect_ms) {
  if (connect_ms.empty()) return;
  double p90 = Percentile(std::move(connect_ms), 0.9);
  if (baseline_ms_ == 0 || p90 < baseline_ms_) baseline_ms_ = std::max(p90, 0.001);
  // Near the baseline: at most halfway to the congestion threshold.
  double congested = std::max(options_.floor_ms, options_.congested_factor * baseline_ms_);
  double calm = std::max(options_.floor_ms, (1 + options_.congested_factor) / 2 * baseline_ms_);
  if (p90 > congested) {
    window_ = std::max(1, window_ / 2);
  } else if (p90 <= calm) {
    window_ = std::min(std::max(1, options_.max_window), window_ + 1);
  }
}

}  // namespace cc
