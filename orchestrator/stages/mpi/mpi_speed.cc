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

SpeedJudgement SlowSuspects(const std::vector<PairResult>& pairs, const SpeedRule& rule) {
  SpeedJudgement j;
  std::vector<double> values;
  for (const PairResult& r : pairs) {
    if (Judgeable(r)) values.push_back(*r.value);
  }
  j.median = Median(values);
  if (values.size() < rule.min_pairs) {
    j.note = std::to_string(values.size()) + " measured pair(s), fewer than " +
             std::to_string(rule.min_pairs) + ": no median to compare with";
    return j;
  }
  size_t too_short = 0;
  for (size_t i = 0; i < pairs.size(); ++i) {
    const PairResult& r = pairs[i];
    if (!Judgeable(r)) continue;
    if (MeasuredSeconds(r) < rule.min_measure_s) {
      ++too_short;
      continue;
    }
    if (IsSlow(*r.value, j.median, rule)) j.suspects.push_back(i);
  }
  if (too_short > 0) {
    j.note = std::to_string(too_short) + " measurement(s) shorter than " +
             Num(rule.min_measure_s * 1000, 0) +
             " ms not judged (raise [stages.mpi] iters or message_size)";
  }
  return j;
}

int ControlPairFor(const std::vector<PairResult>& pairs, size_t suspect, double median) {
  const PairResult& s = pairs[suspect];
  auto shares_node = [&](const PairResult& r) {
    return r.src == s.src || r.src == s.dst || r.dst == s.src || r.dst == s.dst;
  };
  int best = -1, best_disjoint = -1;
  double dist = 0, dist_disjoint = 0;
  for (size_t i = 0; i < pairs.size(); ++i) {
    if (i == suspect || !Judgeable(pairs[i])) continue;
    double d = std::abs(*pairs[i].value - median);
    if (best < 0 || d < dist) best = static_cast<int>(i), dist = d;
    if (!shares_node(pairs[i]) && (best_disjoint < 0 || d < dist_disjoint)) {
      best_disjoint = static_cast<int>(i), dist_disjoint = d;
    }
  }
  return best_disjoint >= 0 ? best_disjoint : best;
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
