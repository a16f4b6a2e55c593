// How many senders probe one receiver at once in the ports stage, adapted
// to the connect times it measures, as TCP adapts its window (AIMD):
// additive increase while connects stay fast, multiplicative decrease when
// they slow down. The stage schedules its probes in rounds of disjoint
// node pairs (RoundRobinRounds) and runs `window()` rounds at once, so a
// receiver is probed by exactly `window()` senders at a time, each with a
// burst of all its ports.
//
// The congestion signal is the 90th percentile of a batch's connect times
// (probes that got any answer: open, refused, ...) against the lowest such
// percentile seen so far, the uncongested baseline. Probes that timed out
// are not a signal: a DROP rule times out the same at any load, and must
// not slow the whole stage to a crawl.
//
// Pure: no I/O, no clock; thread-compatible.
#pragma once

#include <vector>

namespace cc {

struct ProbePacerOptions {
  // The bound: senders per receiver at most ([stages.ports]
  // senders_per_receiver). Default 8: below sshd's default MaxStartups
  // (10), so the ssh probes of one window are never dropped by sshd.
  // REQUIRES: >= 1.
  int max_window = 8;
  // A batch is congested when its p90 connect time exceeds this multiple
  // of the baseline. Default 3.
  double congested_factor = 3.0;
  // Connect times below this are never congestion (the noise of a loaded
  // laptop is a few ms). Default 50 ms.
  double floor_ms = 50;
};

class ProbePacer {
 public:
  explicit ProbePacer(ProbePacerOptions options = {});

  // Senders per receiver for the next batch: 1..max_window. Starts at
  // max_window: the bound alone keeps a healthy receiver unloaded.
  int window() const { return window_; }
  // The p90 connect time of the calmest batch so far (ms); 0 before any.
  double baseline_ms() const { return baseline_ms_; }

  // Feeds the connect times (ms) measured in one batch and adjusts the
  // window: halved (at least 1) when congested, +1 (at most max_window)
  // when the p90 is back near the baseline, unchanged in between. A batch
  // without measurements changes nothing.
  void OnBatch(std::vector<double> connect_ms);

 private:
  ProbePacerOptions options_;
  int window_;
  double baseline_ms_ = 0;
};

// The p-th percentile (0..1, nearest rank) of `values`; 0 when empty.
double Percentile(std::vector<double> values, double p);

}  // namespace cc
