#include "orchestrator/stages/health/health_spec.h"

#include "common/hostlist.h"
#include "common/json_read.h"
#include "orchestrator/stages/health/health_report.h"
#include "orchestrator/stages/health/health_verdicts.h"

namespace cc {
namespace {

constexpr const char* kName = "health";

using K = StageSettingKey;

StageEstimate Estimate(const PlanInput& in) {
  // NVML, the kernel log and sysfs: about a second per node, one window of
  // nodes at a time; the second counter snapshot after the pair stages is
  // sysfs only.
  constexpr double kWaveS = 2;
  return {Plural(in.nodes, "node", "nodes") +
              " (GPUs, kernel log, IB ports; IB counters again "
              "after the pair stages)",
          static_cast<double>(in.waves) * kWaveS};
}

// "health: drain node4; reboot node1; reset-gpu node2; investigate node3".
StageTerminalNotes Summarize(const nlohmann::json& meta) {
  StageTerminalNotes notes;
  if (!meta.is_object()) return notes;
  JsonProblems* p = &notes.problems;
  std::string line = "health: " + std::to_string(JsonCount(meta, "nodes", 0, p)) + " nodes read";
  const nlohmann::json& actions = JsonObject(meta, "actions", p);
  JsonProblems::Within in_actions(p, "actions");
  for (const char* action : {"drain", "reboot", "reset-gpu", "investigate"}) {
    std::vector<std::string> nodes = JsonStrings(actions, action, p);
    if (!nodes.empty()) line += "; " + std::string(action) + " " + FoldHostlist(nodes);
  }
  notes.lines.push_back(line);
  return notes;
}

std::string NodeFailNextStep(const NodeResult& r, const std::string& who) {
  return HealthNextStep(HealthActionOf(r.evidence), who, HealthGpuOf(r.evidence));
}

}  // namespace

const StageSpec& HealthSpec() {
  static const StageSpec kSpec{
      .name = kName,
      .summary = "GPU, kernel-log (Xid) and IB port health per node, each finding with its action",
      .settings =
          {
              {kName, "timeout_s", K::kFloat, 0.001, "deadline for one node's readings", "30"},
              {kName, "since", K::kString, 0,
               "kernel-log events since: \"boot\", a UTC time (2026-12-01T08:00:00Z) or a "
               "duration back from now (24h)",
               "\"boot\""},
              {kName, "link_downed", K::kFloat, 0,
               "fail when an IB port's link_downed grows by more than this during the run", "0"},
              {kName, "excessive_buffer_overrun_errors", K::kFloat, 0,
               "fail when it grows by more than this during the run", "0"},
              {kName, "local_link_integrity_errors", K::kFloat, 0,
               "fail when it grows by more than this during the run", "0"},
              {kName, "symbol_error", K::kFloat, 0, "warn above this many per second", "10"},
              {kName, "port_rcv_errors", K::kFloat, 0, "warn above this many per second", "10"},
              {kName, "port_xmit_discards", K::kFloat, 0, "warn above this many per second", "100"},
              {kName, "link_error_recovery", K::kFloat, 0,
               "warn above this many per second (default 5 a minute)", "0.0833"},
          },
      .make = MakeHealthStage,
      .estimate = Estimate,
      .summarize = Summarize,
      .node_fail_next_step = NodeFailNextStep,
      .node_verdicts = HealthVerdicts,
      .expect_keys = {"ib_rate"},
      .report_table = HealthReportTable,
  };
  return kSpec;
}

}  // namespace cc
