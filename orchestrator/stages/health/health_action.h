// What an operator does about a hardware finding of the health stage, worst
// last: the order is the order of escalation (a node that needs a reboot
// also gets its GPUs reset by it; a node held for RMA needs neither).
#pragma once

#include <optional>
#include <string>

#include "common/outcome.h"

namespace cc {

enum class HealthAction {
  kOk,           // nothing to do (reported for the record)
  kInvestigate,  // look at it: not known to break jobs, not known to be harmless
  kResetGpu,     // nvidia-smi -r (or the node's GPU reset procedure), then test again
  kReboot,       // reboot the node, then test again
  kDrain,        // take the node out of service and hold it for repair (RMA)
};

// "ok", "investigate", "reset-gpu", "reboot", "drain".
const char* HealthActionName(HealthAction a);
std::optional<HealthAction> HealthActionFromName(const std::string& name);

// The outcome a finding with this action gets: ok passes, investigate
// warns, the rest fail.
Outcome OutcomeOfAction(HealthAction a);

// The worse of two actions (the later in escalation order).
HealthAction WorseAction(HealthAction a, HealthAction b);

// Whether a node with this action cannot be trusted to test its links:
// pair failures that involve it are its own, not its partners' (a reboot
// or a drain; a GPU reset is local to a GPU).
bool ActionExplainsPairs(HealthAction a);

}  // namespace cc
