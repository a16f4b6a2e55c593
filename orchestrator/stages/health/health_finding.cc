#include "orchestrator/stages/health/health_finding.h"

namespace cc {

HealthFinding Finding(std::string check, HealthAction action, std::string message,
                      std::string value, std::string expected) {
  HealthFinding f;
  f.check = std::move(check);
  f.action = action;
  f.outcome = OutcomeOfAction(action);
  f.message = std::move(message);
  f.value = std::move(value);
  f.expected = std::move(expected);
  return f;
}

HealthFinding NotJudged(std::string check, Outcome outcome, std::string reason) {
  HealthFinding f;
  f.check = std::move(check);
  f.outcome = outcome;
  f.action = HealthAction::kOk;
  f.message = std::move(reason);
  return f;
}

HealthAction WorstAction(const std::vector<HealthFinding>& findings) {
  HealthAction worst = HealthAction::kOk;
  for (const auto& f : findings) {
    if (f.outcome == Outcome::kPass || f.outcome == Outcome::kSkip) continue;
    worst = WorseAction(worst, f.action);
  }
  return worst;
}

}  // namespace cc
