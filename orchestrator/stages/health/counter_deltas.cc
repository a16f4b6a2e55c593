#include "orchestrator/stages/health/counter_deltas.h"

#include <cstdio>

namespace cc {
namespace {

using nlohmann::json;

std::string PortName(const json& p) {
  return p.value("device", std::string("?")) + "/" + std::to_string(p.value("port", 0));
}

std::map<std::string, json> PortsByName(const json& ib) {
  std::map<std::string, json> out;
  if (!ib.is_object()) return out;
  for (const auto& p : ib.value("ports", json::array())) out[PortName(p)] = p;
  return out;
}

std::string Rate(double per_s) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3g/s", per_s);
  return buf;
}

}  // namespace

std::map<std::string, CounterLimit> DefaultCounterLimits() {
  return {
      {"link_downed", {true, 0}},
      {"excessive_buffer_overrun_errors", {true, 0}},
      {"local_link_integrity_errors", {true, 0}},
      {"symbol_error", {false, 10}},
      {"port_rcv_errors", {false, 10}},
      {"port_xmit_discards", {false, 100}},
      {"link_error_recovery", {false, 5.0 / 60}},  // 5 a minute
  };
}

std::vector<HealthFinding> JudgeCounterDeltas(const json& before, const json& after, double seconds,
                                              const std::map<std::string, CounterLimit>& limits) {
  std::vector<HealthFinding> out;
  auto b = PortsByName(before), a = PortsByName(after);
  for (const auto& [port, p1] : a) {
    auto it = b.find(port);
    if (it == b.end()) {
      out.push_back(Finding("ib." + port + ".counters", HealthAction::kInvestigate,
                            port + " appeared during the run"));
      continue;
    }
    const json c0 = it->second.value("counters", json::object());
    const json c1 = p1.value("counters", json::object());
    json deltas = json::object();
    size_t before_findings = out.size();
    for (const auto& [name, v1] : c1.items()) {
      if (!v1.is_number() || !c0.contains(name) || !c0[name].is_number()) continue;
      long long x0 = c0[name].get<long long>(), x1 = v1.get<long long>();
      long long delta = x1 >= x0 ? x1 - x0 : x1;  // a reset starts again from 0
      deltas[name] = delta;
      auto lim = limits.find(name);
      if (lim == limits.end() || delta == 0) continue;
      double rate = seconds > 0 ? static_cast<double>(delta) / seconds : 0;
      bool over = lim->second.fatal ? static_cast<double>(delta) > lim->second.limit
                                    : rate > lim->second.limit;
      if (!over) continue;
      HealthAction action = lim->second.fatal ? HealthAction::kDrain : HealthAction::kInvestigate;
      std::string msg = port + " " + name + " grew by " + std::to_string(delta) +
                        " during the run (" + std::to_string(x0) + " -> " + std::to_string(x1) +
                        " in " + std::to_string(static_cast<long long>(seconds + 0.5)) + " s" +
                        (lim->second.fatal ? "" : ", " + Rate(rate)) + ")";
      HealthFinding f = Finding("ib." + port + "." + name, action, msg, "+" + std::to_string(delta),
                                lim->second.fatal ? "+0" : "<= " + Rate(lim->second.limit));
      f.evidence = {{"action", HealthActionName(action)},
                    {"port", port},
                    {"counter", name},
                    {"before", x0},
                    {"after", x1},
                    {"delta", delta},
                    {"seconds", seconds},
                    {"rate_per_s", rate}};
      out.push_back(std::move(f));
    }
    if (out.size() == before_findings) {
      HealthFinding f = Finding("ib." + port + ".counters", HealthAction::kOk,
                                port + " error counters within limits over " +
                                    std::to_string(static_cast<long long>(seconds + 0.5)) + " s");
      f.evidence = {{"port", port}, {"deltas", deltas}, {"seconds", seconds}};
      out.push_back(std::move(f));
    }
  }
  for (const auto& [port, p0] : b) {
    if (a.count(port)) continue;
    out.push_back(Finding("ib." + port + ".counters", HealthAction::kInvestigate,
                          port + " disappeared during the run"));
  }
  return out;
}

}  // namespace cc
