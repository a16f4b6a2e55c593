#include "orchestrator/store/verdict.h"

namespace cc {

using nlohmann::json;

json VerdictToJson(const Verdict& v) {
  json pairs = json::array();
  for (const auto& [s, d] : v.pairs) pairs.push_back({s, d});
  return json{{"kind", v.kind},        {"severity", OutcomeName(v.severity)},
              {"stage", v.stage},      {"check", v.check},
              {"nodes", v.nodes},      {"pairs", pairs},
              {"summary", v.summary},  {"next_step", v.next_step},
              {"evidence", v.evidence}};
}

json VerdictsToJson(const std::vector<Verdict>& verdicts) {
  json a = json::array();
  for (const auto& v : verdicts) a.push_back(VerdictToJson(v));
  return a;
}

}  // namespace cc
