#include "reports/retests.h"

#include <algorithm>

namespace cc {
namespace {

constexpr const char* kPrefix = "retests.";

int Count(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number_integer() ? it->get<int>() : 0;
}

// Stages in the order the results first name them.
std::vector<std::string> StageOrder(const RunData& d) {
  std::vector<std::string> order;
  auto add = [&](const std::string& s) {
    if (std::find(order.begin(), order.end(), s) == order.end()) order.push_back(s);
  };
  for (const auto& r : d.node_results) add(r.stage);
  for (const auto& r : d.pair_results) add(r.stage);
  for (const auto& g : d.routine_pairs.groups()) add(g.stage);
  return order;
}

}  // namespace

std::vector<StageRetests> RetestsOf(const RunData& d) {
  std::vector<StageRetests> out;
  if (!d.run.meta.is_object()) return out;
  for (const auto& [key, value] : d.run.meta.items()) {
    if (key.rfind(kPrefix, 0) != 0 || !value.is_object()) continue;
    StageRetests r;
    r.stage = key.substr(std::string(kPrefix).size());
    r.retested = Count(value, "retested");
    r.confirmed = Count(value, "confirmed");
    r.flaky = Count(value, "flaky");
    r.unconfirmed = Count(value, "unconfirmed");
    if (r.retested > 0 && !r.stage.empty()) out.push_back(r);
  }
  std::vector<std::string> order = StageOrder(d);
  auto rank = [&](const StageRetests& r) {
    return static_cast<size_t>(std::find(order.begin(), order.end(), r.stage) - order.begin());
  };
  std::stable_sort(out.begin(), out.end(),
                   [&](const StageRetests& a, const StageRetests& b) { return rank(a) < rank(b); });
  return out;
}

std::string RetestLine(const StageRetests& r) {
  std::string parts;
  auto add = [&](int n, const char* what) {
    if (n > 0) parts += (parts.empty() ? "" : ", ") + std::to_string(n) + " " + what;
  };
  add(r.confirmed, "confirmed");
  add(r.flaky, "flaky");
  add(r.unconfirmed, "unconfirmed");
  return std::to_string(r.retested) + " retested" + (parts.empty() ? "" : ": " + parts);
}

nlohmann::json RetestsJson(const std::vector<StageRetests>& retests) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& r : retests) {
    j[r.stage] = {{"retested", r.retested},
                  {"confirmed", r.confirmed},
                  {"flaky", r.flaky},
                  {"unconfirmed", r.unconfirmed}};
  }
  return j;
}

}  // namespace cc
