#include "orchestrator/burnin/burnin_stats.h"

#include <algorithm>
#include <cstdint>
#include <tuple>

#include "common/json_read.h"
#include "common/median.h"

namespace cc {
namespace {

using nlohmann::json;

struct Attempt {
  bool failed = false;
  bool hung = false;
  std::optional<double> value;
  std::string unit;
};

using PairKey = std::tuple<std::string, std::string, std::string, std::string>;  // stage check a b

std::optional<double> Number(const json& j) {
  if (j.is_number()) return j.get<double>();
  return std::nullopt;
}

double ElapsedAt(const BurnInRounds& in, int round) {
  auto it = in.round_end_s.find(round);
  return it == in.round_end_s.end() ? 0 : it->second;
}

PairRate RateOf(const PairKey& key, const std::map<int, Attempt>& by_round,
                const BurnInRounds& in) {
  PairRate p;
  std::tie(p.stage, p.check, p.a, p.b) = key;
  std::vector<double> values;
  for (const auto& [round, a] : by_round) {
    ++p.attempts;
    p.rounds.push_back(round);
    if (a.hung) {
      ++p.hangs;
    } else if (a.failed) {
      ++p.failures;
    }
    if (a.hung || a.failed) p.failed_rounds.push_back(round);
    if (a.value) {
      p.values.push_back({round, ElapsedAt(in, round), *a.value});
      values.push_back(*a.value);
      p.unit = a.unit;
    }
  }
  p.rate = p.attempts ? static_cast<double>(p.failures + p.hangs) / p.attempts : 0;
  if (!values.empty()) {
    p.value_min = *std::min_element(values.begin(), values.end());
    p.value_max = *std::max_element(values.begin(), values.end());
    p.value_median = Median(values);
  }
  return p;
}

void FoldPairs(const BurnInRounds& in, BurnInSummary& s) {
  std::map<std::string, size_t> order;
  for (size_t i = 0; i < in.nodes.size(); ++i) order[in.nodes[i]] = i;
  auto rank = [&](const std::string& n) {
    auto it = order.find(n);
    return it == order.end() ? order.size() : it->second;
  };
  std::map<PairKey, std::map<int, Attempt>> folded;
  for (const PairResult& r : in.pair_results) {
    if (r.round < 1 || r.outcome == Outcome::kSkip || r.outcome == Outcome::kError) continue;
    bool in_order = rank(r.src) < rank(r.dst) || (rank(r.src) == rank(r.dst) && r.src <= r.dst);
    const std::string& a = in_order ? r.src : r.dst;
    const std::string& b = in_order ? r.dst : r.src;
    Attempt& at = folded[{r.stage, r.check, a, b}][r.round];
    at.failed |= r.outcome == Outcome::kFail;
    at.hung |= r.outcome == Outcome::kHang;
    if (r.value) {
      at.value = at.value ? std::min(*at.value, *r.value) : *r.value;
      at.unit = r.unit;
    }
  }
  for (const auto& [key, by_round] : folded) s.pairs.push_back(RateOf(key, by_round, in));
  std::stable_sort(s.pairs.begin(), s.pairs.end(), [&](const PairRate& x, const PairRate& y) {
    return std::tuple(x.stage, x.check, rank(x.a), rank(x.b)) <
           std::tuple(y.stage, y.check, rank(y.a), rank(y.b));
  });
}

// One "sample" result (HealthSampleOf); what is not of its shape (a
// result another version stored) is taken as not read.
void AddSample(const NodeResult& r, double elapsed, BurnInSummary::NodeGpus& gpus,
               std::map<std::string, CounterSeries>& counters) {
  const json& e = r.evidence;
  for (const json& g : JsonArray(e, "gpus")) {
    if (!g.is_object()) continue;
    GpuSample x;
    x.round = r.round;
    x.elapsed_s = elapsed;
    x.gpu = static_cast<int>(JsonInt(g, "index", 0, nullptr, INT32_MIN, INT32_MAX));
    x.temperature_c = Number(JsonMember(g, "temperature_c"));
    x.sm_clock_mhz = Number(JsonMember(JsonMember(g, "clocks_mhz"), "sm"));
    x.power_w = Number(JsonMember(g, "power_w"));
    // A bit mask: a negative or fractional number is none.
    int64_t reasons = JsonInt(g, "clock_event_reasons", -1, nullptr, 0, INT64_MAX);
    if (reasons >= 0) x.clock_event_reasons = static_cast<uint64_t>(reasons);
    gpus.samples.push_back(x);
  }
  for (const auto& [name, v] : JsonObject(e, "counters").items()) {
    if (!v.is_number()) continue;
    CounterSeries& c = counters[name];
    c.node = r.node;
    c.counter = name;
    c.points.push_back({r.round, elapsed, v.get<double>()});
  }
}

void FoldSamples(const BurnInRounds& in, BurnInSummary& s) {
  for (const std::string& node : in.nodes) {
    BurnInSummary::NodeGpus gpus{node, {}};
    std::map<std::string, CounterSeries> counters;
    for (const NodeResult& r : in.node_results) {
      if (r.node != node || r.stage != "health" || r.check != "sample" || r.round < 1) continue;
      AddSample(r, ElapsedAt(in, r.round), gpus, counters);
    }
    std::stable_sort(gpus.samples.begin(), gpus.samples.end(),
                     [](const GpuSample& x, const GpuSample& y) {
                       return std::tie(x.round, x.gpu) < std::tie(y.round, y.gpu);
                     });
    if (!gpus.samples.empty()) s.gpus.push_back(std::move(gpus));
    for (auto& [name, c] : counters) {
      if (c.points.size() >= 2) {
        double hours = (c.points.back().elapsed_s - c.points.front().elapsed_s) / 3600;
        if (hours > 0) c.delta_per_hour = (c.points.back().value - c.points.front().value) / hours;
      }
      s.counters.push_back(std::move(c));
    }
  }
}

}  // namespace

BurnInSummary BurnInSummaryOf(const BurnInRounds& in) {
  BurnInSummary s;
  s.nodes = in.nodes;
  s.rounds_planned = in.rounds_planned;
  s.max_failure_rate = in.max_failure_rate;
  for (const auto& [round, end] : in.round_end_s) {
    s.rounds_done = std::max(s.rounds_done, round);
    s.elapsed_s = std::max(s.elapsed_s, end);
  }
  FoldPairs(in, s);
  FoldSamples(in, s);
  return s;
}

json HealthSampleOf(const json& health_reply) {
  json sample = {{"gpus", json::array()}, {"counters", json::object()}};
  const json gpu = health_reply.value("gpu", json());
  const json gpus = gpu.is_object() ? gpu.value("gpus", json()) : json();
  if (gpus.is_array()) {
    for (const json& g : gpus) {
      json x = {{"index", g.value("index", 0)},
                {"temperature_c", g.value("temperature_c", json())},
                {"power_w", g.value("power_w", json())},
                {"clock_event_reasons", g.value("clock_event_reasons", json())},
                {"clocks_mhz", g.value("clocks_mhz", json())}};
      sample["gpus"].push_back(std::move(x));
    }
  }
  const json ib = health_reply.value("ib", json());
  if (ib.is_object() && ib.contains("ports") && ib["ports"].is_array()) {
    for (const json& p : ib["ports"]) {
      std::string port =
          p.value("device", std::string("?")) + "/" + std::to_string(p.value("port", 0));
      if (!p.contains("counters") || !p["counters"].is_object()) continue;
      for (const auto& [name, v] : p["counters"].items()) {
        if (v.is_number()) sample["counters"][port + " " + name] = v;
      }
    }
  }
  return sample;
}

}  // namespace cc
