#include "orchestrator/stages/facts/facts_spec.h"

namespace cc {
namespace {

constexpr const char* kName = "facts";

using K = StageSettingKey;

StageEstimate Estimate(const PlanInput& in) {
  constexpr double kWaveS = 5;  // the agents' facts, one window of nodes
  return {Plural(in.nodes, "node", "nodes"), static_cast<double>(in.waves) * kWaveS};
}

}  // namespace

const StageSpec& FactsSpec() {
  static const StageSpec kSpec{
      .name = kName,
      .summary = "collect node facts through the agent",
      .settings =
          {
              {kName, "timeout_s", K::kFloat, 0.001, "deadline for collecting one node's facts",
               "60"},
          },
      .make = MakeFactsStage,
      .estimate = Estimate,
      // The later stages start from its facts.
      .always_runs = true,
  };
  return kSpec;
}

}  // namespace cc
