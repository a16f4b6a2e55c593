// A verdict: a finding an operator acts on, naming the node(s) or link(s),
// with its evidence and a next step. Stages that attribute their own
// failures record verdicts (StageContext::Record); the store keeps them in
// the `verdicts` table; analysis (orchestrator/analysis/analysis.h, which
// lists the kinds) adds the verdicts that span stages; reports render them.
// Plain data, here in the store so that all of them share it.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "common/outcome.h"

namespace cc {

struct Verdict {
  std::string kind;  // "bad-node", "port-blocked", ... (analysis.h)
  Outcome severity = Outcome::kFail;
  std::vector<std::string> nodes;                          // the nodes it names, in run order
  std::vector<std::pair<std::string, std::string>> pairs;  // src, dst
  std::string stage;    // where it was seen ("connect", "ports", ...)
  std::string check;    // "tcp/29500", "allreduce", "driver", ...
  std::string summary;  // one line for people, names nodes folded
  // Pairs, values, logs; a stage's own finer name for the kind is
  // "stage_kind" ("receiver" for a port-blocked receiver).
  nlohmann::json evidence = nlohmann::json::object();
  std::string next_step;  // "drain gpu017", "open tcp 29500 on gpu003"
};

nlohmann::json VerdictToJson(const Verdict& v);
nlohmann::json VerdictsToJson(const std::vector<Verdict>& verdicts);

}  // namespace cc
