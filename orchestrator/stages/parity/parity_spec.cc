#include "orchestrator/stages/parity/parity_spec.h"

#include "orchestrator/stages/parity/parity_verdicts.h"

namespace cc {
namespace {

constexpr const char* kName = "parity";

using K = StageSettingKey;

StageEstimate Estimate(const PlanInput& in) {
  return {Plural(in.nodes, "node", "nodes") + ", judged here (no remote work)", 0};
}

}  // namespace

const StageSpec& ParitySpec() {
  static const StageSpec kSpec{
      .name = kName,
      .summary = "judge versions against pins, the majority and rules",
      .settings =
          {
              {kName, "ignore", K::kStringArray, 0,
               "fact names left out of the majority comparison", "[]"},
          },
      .make = MakeParityStage,
      .estimate = Estimate,
      .node_verdicts = ParityVerdicts,
  };
  return kSpec;
}

}  // namespace cc
