#include "orchestrator/stages/sleep/sleep_spec.h"

namespace cc {
namespace {

constexpr const char* kName = "sleep";

using K = StageSettingKey;

StageEstimate Estimate(const PlanInput& in) {
  double s = in.inventory.StageSettings(kName).value("seconds", kDefaultSleepSeconds);
  return {Plural(in.nodes, "node", "nodes") + " sleep " + FormatDuration(s), s};
}

}  // namespace

const StageSpec& SleepSpec() {
  static const StageSpec kSpec{
      .name = kName,
      .summary = "hold an agent busy on every node (tests of Ctrl-C)",
      .settings =
          {
              {kName, "seconds", K::kFloat, 0.001, "how long each agent stays busy", "5"},
          },
      .make = MakeSleepStage,
      .estimate = Estimate,
      // A diagnostic: it runs only when asked for.
      .in_default = false,
  };
  return kSpec;
}

}  // namespace cc
