#include "orchestrator/stages/mpi/mpi_speed.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "common/median.h"

namespace cc {
namespace {

std::string Num(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

bool Judgeable(const PairResult& r) {
  return r.check == "bandwidth" && r.outcome == Outcome::kPass && r.value && *r.value > 0;
}

nlohmann::json Attempt(const PairResult& r) {
  nlohmann::json a = {{"outcome", OutcomeName(r.outcome)}, {"message", r.message}};
  if (r.value) a["value"] = *r.value;
  return a;
}

}  // namespace

double MeasuredSeconds(const PairResult& r) {
  if (!r.value || *r.value <= 0) return 0;
  double iters = r.evidence.value("iters", 0.0);
  double bytes = r.evidence.value("bw_bytes", 0.0);
  // A round trip moves the message twice; value is bytes / one-way time.
  return iters * 2 * bytes / (*r.value * 1e9);
}

bool IsSlow(double value, double median, const SpeedRule& rule) {
  return median > 0 && value < rule.fraction * median && median - value > rule.min_gap_gbps;
}

std::optional<SpeedSample> SampleOf(const PairResult& r, size_t index) {
  if (!Judgeable(r)) return std::nullopt;
  return SpeedSample{index, *r.value, MeasuredSeconds(r), r.src, r.dst};
}

std::vector<SpeedSample> SamplesOf(const std::vector<PairResult>& pairs) {
  std::vector<SpeedSample> out;
  for (size_t i = 0; i < pairs.size(); ++i) {
    if (auto s = SampleOf(pairs[i], i)) out.push_back(std::move(*s));
  }
  return out;
}

SpeedJudgement SlowSuspects(const std::vector<SpeedSample>& judgeable, const SpeedRule& rule) {
  SpeedJudgement j;
  std::vector<double> values;
  values.reserve(judgeable.size());
  for (const SpeedSample& s : judgeable) values.push_back(s.value);
  j.median = Median(values);
  if (values.size() < rule.min_pairs) {
    j.note = std::to_string(values.size()) + " measured pair(s), fewer than " +
             std::to_string(rule.min_pairs) + ": no median to compare with";
    return j;
  }
  size_t too_short = 0;
  for (const SpeedSample& s : judgeable) {
    if (s.measured_s < rule.min_measure_s) {
      ++too_short;
      continue;
    }
    if (IsSlow(s.value, j.median, rule)) j.suspects.push_back(s.index);
  }
  if (too_short > 0) {
    j.note = std::to_string(too_short) + " measurement(s) shorter than " +
             Num(rule.min_measure_s * 1000, 0) +
             " ms not judged (raise [stages.mpi] iters or message_size)";
  }
  return j;
}

SpeedJudgement SlowSuspects(const std::vector<PairResult>& pairs, const SpeedRule& rule) {
  return SlowSuspects(SamplesOf(pairs), rule);
}

long long ControlPairFor(const std::vector<SpeedSample>& judgeable, const SpeedSample& suspect,
                         double median) {
  auto shares_node = [&](const SpeedSample& r) {
    return r.src == suspect.src || r.src == suspect.dst || r.dst == suspect.src ||
           r.dst == suspect.dst;
  };
  long long best = -1, best_disjoint = -1;
  double dist = 0, dist_disjoint = 0;
  for (const SpeedSample& s : judgeable) {
    if (s.index == suspect.index) continue;
    double d = std::abs(s.value - median);
    const long long i = static_cast<long long>(s.index);
    if (best < 0 || d < dist) best = i, dist = d;
    if (!shares_node(s) && (best_disjoint < 0 || d < dist_disjoint)) {
      best_disjoint = i, dist_disjoint = d;
    }
  }
  return best_disjoint >= 0 ? best_disjoint : best;
}

int ControlPairFor(const std::vector<PairResult>& pairs, size_t suspect, double median) {
  const PairResult& s = pairs[suspect];
  SpeedSample who{suspect, s.value.value_or(0), 0, s.src, s.dst};
  return static_cast<int>(ControlPairFor(SamplesOf(pairs), who, median));
}

PairResult ConfirmSlow(const PairResult& first, const PairResult& retest, double median,
                       const SpeedRule& rule, const PairResult* control) {
  PairResult r = first;
  nlohmann::json speed = {
      {"judged_by", "mpi"}, {"median", median}, {"attempts", {Attempt(first), Attempt(retest)}}};
  if (control) {
    speed["control"] = Attempt(*control);
    speed["control"]["pair"] = control->src + "<->" + control->dst;
  }
  bool retested = retest.outcome == Outcome::kPass && retest.value;
  bool control_ok = !control || (control->outcome == Outcome::kPass && control->value);
  bool slow_vs_control = !control || (control_ok && IsSlow(*retest.value, *control->value, rule));
  if (retested && !control_ok) {
    speed["slow"] = false;
    speed["note"] = "slow once; the control pair alone did not pass, so it is not called slow";
  } else if (retested && IsSlow(*retest.value, median, rule) && slow_vs_control) {
    r.outcome = Outcome::kWarn;
    r.state = "slow";
    std::string why = Num(100 * *first.value / median, 0) + "% and, alone, " +
                      Num(100 * *retest.value / median, 0) + "% of the median " + Num(median, 3) +
                      " GB/s";
    if (control) {
      why += "; the control pair " + control->src + "<->" + control->dst +
             " alone: " + Num(*control->value, 3) + " GB/s";
    }
    r.message += "; slow: " + why;
    speed["slow"] = true;
    speed["why"] = why;
  } else if (retested) {
    r.value = retest.value;
    r.message =
        retest.message + " (alone; " + Num(*first.value, 3) + " GB/s among the other pairs)";
    speed["slow"] = false;
  } else {
    speed["slow"] = false;
    speed["note"] = "slow once; the retest alone did not pass, so it is not called slow";
  }
  r.evidence["speed"] = speed;
  return r;
}

void MarkJudged(PairResult* r, const SpeedJudgement& j) {
  if (r->check != "bandwidth") return;
  nlohmann::json speed = {{"judged_by", "mpi"}, {"median", j.median}, {"slow", false}};
  if (!j.note.empty()) speed["note"] = j.note;
  r->evidence["speed"] = speed;
}

}  // namespace cc
