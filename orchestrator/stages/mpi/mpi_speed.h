// When the `mpi` stage calls a pair's bandwidth slow. On a loaded machine a
// ping-pong of a few MB varies by 2x from one round to the next, so a rule
// like "below 80% of the median" accuses healthy pairs. Here a pair is only
// a suspect when the measurement lasted long enough to mean something, the
// median is over enough pairs, and the value is far below the median (a
// fraction of it, and by more than an absolute gap); and a suspect is only
// called slow when a quiet retest (the pair alone, nothing else running)
// agrees. Every bandwidth result the stage judged says so in
// evidence["speed"], and analysis takes that judgement instead of its own
// median rule. Pure; thread-safe.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "orchestrator/store/store.h"

namespace cc {

struct SpeedRule {
  // A suspect is below this fraction of the median. Default 0.5.
  double fraction = 0.5;
  // ...and below the median by more than this many GB/s. Default 0.01.
  double min_gap_gbps = 0.01;
  // A measurement shorter than this (iters round trips of bw_bytes) is not
  // judged: a few ms are one scheduler hiccup. Default 0.05 s.
  double min_measure_s = 0.05;
  // Fewer passing pairs than this: no median worth comparing with.
  size_t min_pairs = 3;
};

// How long the bandwidth measurement of `r` took, from its evidence
// (iters, bw_bytes) and value; 0 when unknown.
double MeasuredSeconds(const PairResult& r);

struct SpeedJudgement {
  double median = 0;             // of the passing bandwidth values
  std::vector<size_t> suspects;  // indices into the pairs given
  std::string note;              // why nothing is judged, "" when it is
};

// What the rule needs of one judgeable result (check "bandwidth", outcome
// pass, a value above 0): a large run keeps only these for all its pairs
// while their results are judged and stored a slice at a time.
struct SpeedSample {
  size_t index = 0;       // of the result among all the stage's results
  double value = 0;       // GB/s
  double measured_s = 0;  // MeasuredSeconds
  std::string src, dst;
};

// The sample of `r`, the index-th result; none when it is not judgeable.
std::optional<SpeedSample> SampleOf(const PairResult& r, size_t index);
// The sample of every judgeable result of `pairs`, index = position.
std::vector<SpeedSample> SamplesOf(const std::vector<PairResult>& pairs);

// The suspects among the judgeable results and the median they are
// compared with; suspects are the samples' indices.
SpeedJudgement SlowSuspects(const std::vector<SpeedSample>& judgeable, const SpeedRule& rule);
// The same over `pairs` (only check "bandwidth", outcome pass, with a
// value): suspects are positions in `pairs`.
SpeedJudgement SlowSuspects(const std::vector<PairResult>& pairs, const SpeedRule& rule);

// True when `value` is slow against `median` under `rule`.
bool IsSlow(double value, double median, const SpeedRule& rule);

// A typical pair to measure alone next to suspect `suspect`, as the control:
// on a loaded controller a pair measured alone can be slower than the burst's
// median (seen: 36% of it on a healthy 8-node run at load 15), so the retest
// is only believed when a typical pair, measured the same way at the same
// time, is fast. The control is the judgeable pair nearest the median that
// shares no node with the suspect, else any other judgeable pair nearest the
// median; -1 when there is none.
int ControlPairFor(const std::vector<PairResult>& pairs, size_t suspect, double median);
// The same among samples: the control's index, -1 when there is none.
long long ControlPairFor(const std::vector<SpeedSample>& judgeable, const SpeedSample& suspect,
                         double median);

// `first` (a suspect) merged with its quiet retest: slow again => `warn`,
// state "slow", evidence speed {slow, why, median, attempts}; fast on the
// retest => `pass` with the retest's value (the better measurement) and
// both attempts in evidence. A retest that did not pass leaves the first
// attempt unjudged (not called slow: an outlier needs agreement).
// `control`, when given, is the control pair measured alone just after the
// retest: the retest must then also be slow against the control's value
// (and a control that did not pass leaves the suspect unjudged).
PairResult ConfirmSlow(const PairResult& first, const PairResult& retest, double median,
                       const SpeedRule& rule, const PairResult* control = nullptr);

// Marks a bandwidth result that was not a suspect as judged (not slow).
void MarkJudged(PairResult* r, const SpeedJudgement& j);

}  // namespace cc
