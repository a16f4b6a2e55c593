// How the generic pair rules' findings (stage_spec.h PairFinding) read for
// the ports stage: a failing port is a firewall to open, so the advice
// names the port and whose firewall, and a node that no peer reaches on a
// port is "port-blocked". Used where the stage did not attribute its
// failures itself (ports_verdict.h), e.g. runs stored before it did.
// Pure; thread-safe.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "orchestrator/stages/stage_spec.h"

namespace cc {

// "tcp/29500" -> "tcp 29500"; a port range from the evidence wins.
std::string PortPhrase(const std::string& check, const nlohmann::json& evidence);

PairWording WordPortsFinding(const PairFinding& finding);

}  // namespace cc
