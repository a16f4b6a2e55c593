#include "orchestrator/store/verdict.h"

#include <set>

namespace cc {

using nlohmann::json;

const char* CauseScopeName(CauseScope scope) {
  switch (scope) {
    case CauseScope::kNode:
      return "node";
    case CauseScope::kLink:
      return "link";
    case CauseScope::kNone:
      break;
  }
  return "";
}

CauseScope CauseScopeFromName(const std::string& name) {
  if (name == "node") return CauseScope::kNode;
  if (name == "link") return CauseScope::kLink;
  return CauseScope::kNone;
}

std::string ExplainsPhrase(const Verdict& v) {
  const size_t pairs = v.failing_pairs_explained, n = v.explains.size();
  if (pairs + n == 0) return "";
  std::set<std::string> stages;
  for (const Symptom& s : v.explains) stages.insert(s.stage);
  std::string out = "this also explains";
  if (pairs > 0)
    out += " " + std::to_string(pairs) + " failing pair result" + (pairs == 1 ? "" : "s");
  if (pairs > 0 && n > 0) out += " and";
  if (n > 0) out += " " + std::to_string(n) + " other verdict" + (n == 1 ? "" : "s");
  if (!stages.empty()) {
    std::string list;
    for (const auto& s : stages) list += (list.empty() ? "" : ", ") + s;
    out += " (" + list + ")";
  }
  return out;
}

json VerdictToJson(const Verdict& v) {
  json pairs = json::array();
  for (const auto& [s, d] : v.pairs) pairs.push_back({s, d});
  json out{{"kind", v.kind},        {"severity", OutcomeName(v.severity)},
           {"stage", v.stage},      {"check", v.check},
           {"nodes", v.nodes},      {"pairs", pairs},
           {"summary", v.summary},  {"next_step", v.next_step},
           {"evidence", v.evidence}};
  // Only causes and what they explain carry the members below, so that a
  // run without a cause reads as it always has.
  if (v.cause != CauseScope::kNone) out["cause"] = CauseScopeName(v.cause);
  if (!v.explains.empty()) {
    json list = json::array();
    for (const Symptom& s : v.explains) {
      list.push_back({{"kind", s.kind},
                      {"stage", s.stage},
                      {"check", s.check},
                      {"summary", s.summary},
                      {"pairs", s.pairs}});
    }
    out["explains"] = std::move(list);
  }
  if (v.failing_pairs_explained > 0) out["failing_pairs_explained"] = v.failing_pairs_explained;
  return out;
}

json VerdictsToJson(const std::vector<Verdict>& verdicts) {
  json a = json::array();
  for (const auto& v : verdicts) a.push_back(VerdictToJson(v));
  return a;
}

}  // namespace cc
