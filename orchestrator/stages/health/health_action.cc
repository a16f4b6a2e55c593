#include "orchestrator/stages/health/health_action.h"

namespace cc {

namespace {
struct ActionName {
  HealthAction action;
  const char* name;
};
constexpr ActionName kNames[] = {
    {HealthAction::kOk, "ok"},
    {HealthAction::kInvestigate, "investigate"},
    {HealthAction::kResetGpu, "reset-gpu"},
    {HealthAction::kReboot, "reboot"},
    {HealthAction::kDrain, "drain"},
};
}  // namespace

const char* HealthActionName(HealthAction a) {
  for (const auto& n : kNames) {
    if (n.action == a) return n.name;
  }
  return "investigate";
}

std::optional<HealthAction> HealthActionFromName(const std::string& name) {
  for (const auto& n : kNames) {
    if (name == n.name) return n.action;
  }
  return std::nullopt;
}

Outcome OutcomeOfAction(HealthAction a) {
  switch (a) {
    case HealthAction::kOk:
      return Outcome::kPass;
    case HealthAction::kInvestigate:
      return Outcome::kWarn;
    default:
      return Outcome::kFail;
  }
}

HealthAction WorseAction(HealthAction a, HealthAction b) {
  return static_cast<int>(a) >= static_cast<int>(b) ? a : b;
}

bool ActionExplainsPairs(HealthAction a) {
  return a == HealthAction::kReboot || a == HealthAction::kDrain;
}

}  // namespace cc
