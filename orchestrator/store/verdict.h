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

// Whether a verdict is a cause, and of what scope. A cause is a fault a
// stage established on a node (an address missing or with the wrong
// prefix, a duplicate address, a link down, an MTU, a firewall rule, a
// node to drain) or between two nodes (a one-way filter): later stages
// leave it out of their cluster-wide jobs (StageContext::RecordCause), and
// analysis names it before every symptom it explains (analysis.h).
enum class CauseScope {
  kNone,  // a finding, not a cause
  kNode,  // the verdict's `nodes` carry the cause
  kLink,  // the verdict's `pairs` carry the cause
};

// "node", "link", "" for kNone; CauseScopeFromName reads them back (an
// unknown name is kNone).
const char* CauseScopeName(CauseScope scope);
CauseScope CauseScopeFromName(const std::string& name);

// A finding one cause explains, counted inside the cause's verdict instead
// of being printed as a verdict of its own.
struct Symptom {
  std::string kind;  // the verdict kind it would have had
  std::string stage;
  std::string check;
  std::string summary;
  size_t pairs = 0;  // the pairs that verdict named
};

struct Verdict {
  std::string kind;  // "bad-node", "port-blocked", ... (analysis.h)
  Outcome severity = Outcome::kFail;
  std::vector<std::string> nodes;                          // the nodes it names, in run order
  std::vector<std::pair<std::string, std::string>> pairs;  // src, dst
  std::string stage;    // where it was seen: "connect" or a stage's name
  std::string check;    // "tcp/29500", "allreduce", "driver", ...
  std::string summary;  // one line for people, names nodes folded
  // Pairs, values, logs; a stage's own finer name for the kind is
  // "stage_kind" ("receiver" for a port-blocked receiver).
  nlohmann::json evidence = nlohmann::json::object();
  std::string next_step;  // "drain gpu017", "open tcp 29500 on gpu003"
  // Set by the stage that established a cause (kinds in analysis.h:
  // wrong-prefix, link-down, firewall, ...); next_step is then its fix.
  CauseScope cause = CauseScope::kNone;
  // Filled by analysis, never stored: the verdicts this cause explains,
  // and how many failing pair results of its scope it kept from the pair
  // rules.
  std::vector<Symptom> explains;
  size_t failing_pairs_explained = 0;
};

// "this also explains 3 failing pair results and 2 other verdicts (nics,
// ports)"; "" when `v` explains nothing.
std::string ExplainsPhrase(const Verdict& v);

nlohmann::json VerdictToJson(const Verdict& v);
nlohmann::json VerdictsToJson(const std::vector<Verdict>& verdicts);

}  // namespace cc
