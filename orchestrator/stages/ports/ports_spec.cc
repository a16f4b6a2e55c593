#include "orchestrator/stages/ports/ports_spec.h"

#include <optional>

#include "common/json_read.h"
#include "orchestrator/stages/ports/ports_plan.h"
#include "orchestrator/stages/ports/ports_wording.h"

namespace cc {
namespace {

constexpr const char* kName = "ports";

using K = StageSettingKey;

// From the stage's own settings (ports_plan.h EstimatePorts), defaults
// where the inventory's are bad (the run itself names those).
StageEstimate Estimate(const PlanInput& in) {
  Result<PortsSettings> s = ReadPortsSettings(in.inventory.StageSettings(kName));
  std::optional<int> ssh_port;
  if (!in.inventory.nodes.empty() && in.inventory.transport != "local") {
    ssh_port = in.inventory.nodes.front().ssh.port;
  }
  PortsEstimate e = EstimatePorts(s.ok() ? *s : PortsSettings{}, ssh_port, in.rounds);
  size_t ordered = in.nodes * (in.nodes > 0 ? in.nodes - 1 : 0);
  return {Plural(ordered, "ordered pair", "ordered pairs") + " x " +
              Plural(e.ports_per_pair, "port", "ports") + " = " +
              Plural(ordered * e.ports_per_pair, "probe", "probes"),
          e.healthy_s};
}

// Each receiver samples its own ephemeral ports: one matrix for them all.
std::string EphemeralMatrix(const PairResult& r) {
  bool ephemeral = JsonString(r.evidence, "kind") == PortKindName(PortKind::kEphemeral);
  return ephemeral ? "tcp/ephemeral" : "";
}

}  // namespace

const StageSpec& PortsSpec() {
  static const StageSpec kSpec{
      .name = kName,
      .summary = "every node pair, both ways: SSH, rendezvous and ephemeral ports",
      .settings =
          {
              {kName, "ports", K::kPortList, 0,
               "ports every node must accept from every other (ints or \"lo-hi\")", "[29500]"},
              {kName, "ephemeral_samples", K::kInt, 0,
               "how many ports of the ephemeral range to sample", "8"},
              {kName, "timeout_ms", K::kInt, 1, "a connect that takes longer counts as filtered",
               "2000"},
              {kName, "parallel", K::kInt, 1, "connects in flight per node", "256"},
              {kName, "senders_per_receiver", K::kInt, 1,
               "senders probing one receiver at once, at most (default 8; fewer while connects "
               "slow)",
               "8"},
          },
      .make = MakePortsStage,
      .estimate = Estimate,
      // A firewall filters one direction: A -> B open, B -> A filtered.
      .pairs_directed = true,
      .matrix_check = EphemeralMatrix,
      .word_pair_finding = WordPortsFinding,
  };
  return kSpec;
}

}  // namespace cc
