#include "orchestrator/stages/health/health_settings.h"

#include <cstdlib>
#include <ctime>

namespace cc {

Result<std::optional<double>> ParseSince(const std::string& text, double now_s) {
  if (text.empty() || text == "boot") return std::optional<double>();
  char unit = text.back();
  if (unit == 'm' || unit == 'h' || unit == 'd') {
    char* end = nullptr;
    double n = std::strtod(text.c_str(), &end);
    if (end == text.c_str() + text.size() - 1 && n >= 0) {
      double scale = unit == 'm' ? 60 : unit == 'h' ? 3600 : 86400;
      return std::optional<double>(now_s - n * scale);
    }
  }
  std::tm tm{};
  const char* end = strptime(text.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm);
  if (end && *end == '\0') return std::optional<double>(static_cast<double>(timegm(&tm)));
  return Status::BadInventory(
      "stages.health.since: expected \"boot\", a UTC time like 2026-12-01T08:00:00Z or a "
      "duration back from now like 24h, got \"" +
      text + "\"");
}

Result<HealthSettings> ReadHealthSettings(const Inventory& inventory, double now_s) {
  HealthSettings s;
  nlohmann::json j = inventory.StageSettings("health");
  s.timeout_s = j.value("timeout_s", s.timeout_s);
  auto since = ParseSince(j.value("since", std::string()), now_s);
  if (!since.ok()) return since.status();
  s.since_s = *since;
  for (auto& [name, limit] : s.limits) {
    if (j.contains(name) && j[name].is_number()) limit.limit = j[name].get<double>();
  }
  if (auto it = inventory.expect.find("ib_rate"); it != inventory.expect.end()) {
    char* end = nullptr;
    double v = std::strtod(it->second.c_str(), &end);
    if (end == it->second.c_str() || v <= 0) {
      return Status::BadInventory("expect.ib_rate: expected a rate in Gb/s like 400, got \"" +
                                  it->second + "\"");
    }
    s.expected_ib_rate_gbps = v;
  }
  return s;
}

}  // namespace cc
