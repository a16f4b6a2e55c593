// `health`: every usable node's agent reads its GPUs (NVML), its kernel log
// (Xid) and its IB ports (sysfs); the readings are judged on their own
// (node_health.h) and against the cluster (cluster_health.h), and each
// finding is a node result carrying the action to take. After the later
// stages (AfterStages) the IB counters are read again, and counters that
// moved in between are findings of their own (counter_deltas.h).
//
// Each node's readings are also stored as one "readings" result (outcome:
// its worst finding), which the report's health table shows.
#include <chrono>
#include <mutex>

#include "common/clock.h"
#include "orchestrator/run/stage.h"
#include "orchestrator/stages/health/cluster_health.h"
#include "orchestrator/stages/health/counter_deltas.h"
#include "orchestrator/stages/health/health_settings.h"
#include "orchestrator/stages/health/health_spec.h"
#include "orchestrator/stages/health/health_verdicts.h"
#include "orchestrator/stages/health/node_health.h"

namespace cc {
namespace {

using nlohmann::json;

constexpr const char* kStage = "health";

NodeResult ToResult(const std::string& node, const HealthFinding& f) {
  NodeResult r = NodeCheck(kStage, node, f.check, f.outcome, f.message, f.evidence, f.value);
  r.expected = f.expected;
  return r;
}

// What the report's health table shows of a node: compact, per GPU and port.
json Readings(const json& health, HealthAction worst) {
  json gpus = json::array();
  const json& gpu = health.value("gpu", json::object());
  for (const auto& g : gpu.value("gpus", json::array())) {
    const json& p = g.value("pcie", json::object());
    const json& ecc = g.value("ecc", json::object());
    gpus.push_back({{"index", g.value("index", -1)},
                    {"bus_id", g.value("bus_id", json())},
                    {"pcie",
                     {p.value("gen", json()), p.value("width", json()), p.value("max_gen", json()),
                      p.value("max_width", json())}},
                    {"temperature_c", g.value("temperature_c", json())},
                    {"power_w", g.value("power_w", json())},
                    {"ecc_volatile_uncorrected", ecc.value("volatile_uncorrected", json())},
                    {"remapped_rows", g.value("remapped_rows", json())},
                    {"clock_event_reasons", g.value("clock_event_reasons", json())}});
  }
  json ports = json::array();
  for (const auto& p : health.value("ib", json::object()).value("ports", json::array())) {
    ports.push_back(
        {{"port", p.value("device", std::string()) + "/" + std::to_string(p.value("port", 0))},
         {"state", p.value("state", json())},
         {"rate", p.value("rate", json())},
         {"counters", p.value("counters", json::object())}});
  }
  const json& log = health.value("kernel_log", json::object());
  return {{"action", HealthActionName(worst)},
          {"gpu_status", gpu.value("status", json())},
          {"gpus", gpus},
          {"topology", gpu.value("topology", json())},
          {"kernel_log",
           {{"status", log.value("status", json())},
            {"lines", log.value("lines", json())},
            {"events", log.value("events", json::array()).size()}}},
          {"ib_ports", ports}};
}

class HealthStage : public Stage {
 public:
  std::string name() const override { return kStage; }

  Status Run(StageContext& ctx) override {
    auto settings = ReadHealthSettings(
        ctx.inventory(),
        std::chrono::duration<double>(ctx.clock().WallNow().time_since_epoch()).count());
    if (!settings.ok()) return settings.status();
    settings_ = *settings;
    auto usable = ctx.fleet().Usable();
    ctx.progress().StartStage(kStage, static_cast<long long>(usable.size()), "nodes");
    std::map<std::string, json> health = Ask(ctx, {}, true);
    started_ = ctx.clock().Now();
    ctx.progress().FinishStage();
    Judge(ctx, health);
    return Status::Ok();
  }

  bool HasAfterStages() const override { return true; }

  // The IB counters again, after the pair stages loaded the links.
  Status AfterStages(StageContext& ctx) override {
    if (before_.empty()) return Status::Ok();
    std::vector<std::string> nodes;
    for (const auto& [node, ib] : before_) nodes.push_back(node);
    std::map<std::string, json> after = Ask(ctx, nodes, false);
    double seconds = std::chrono::duration<double>(ctx.clock().Now() - started_).count();
    for (const auto& [node, h] : after) {
      for (const auto& f :
           JudgeCounterDeltas(before_[node], h.value("ib", json()), seconds, settings_.limits)) {
        ctx.Record(ToResult(node, f));
      }
    }
    return Status::Ok();
  }

 private:
  // The agents' answers of `nodes` (all usable when empty); a node whose
  // call failed is recorded (a hang at its deadline, else an error) and
  // left out. `all` asks every section, else only "ib".
  std::map<std::string, json> Ask(StageContext& ctx, const std::vector<std::string>& nodes,
                                  bool all) {
    std::mutex mu;
    std::map<std::string, json> out;
    ctx.fleet().ForEach(nodes, [&](NodeState& s) {
      const Node& node = *s.node;
      json args{{"library_paths", node.library_paths}};
      if (!all) args["sections"] = {"ib"};
      if (settings_.since_s) args["since_s"] = *settings_.since_s;
      auto call =
          s.agent->Call("health", args, Deadline::InSeconds(ctx.clock(), settings_.timeout_s));
      json h = call.ok() ? call->Find("health") : json();
      if (!h.is_object()) {
        Status st = call.ok() ? Status::Protocol("agent answered without health") : call.status();
        ctx.Record(NodeCheck(kStage, node.name, all ? "readings" : "ib.after",
                             st.Is(ErrorKind::kTimeout) ? Outcome::kHang : Outcome::kError,
                             st.ToString()));
      } else {
        std::lock_guard lock(mu);
        out[node.name] = std::move(h);
      }
      if (all) ctx.progress().Advance();
    });
    return out;
  }

  // A GPU off the bus, a failed row remap: a node to reboot or drain is a
  // cause (analysis/causes.h), and the later stages' jobs leave it out.
  static bool TakesNodeOut(const HealthFinding& f) {
    return f.outcome == Outcome::kFail &&
           (f.action == HealthAction::kReboot || f.action == HealthAction::kDrain);
  }

  // The cause as HealthVerdicts words it at report time.
  static Verdict CauseOf(const std::string& node, const HealthFinding& f) {
    Verdict v;
    v.kind = "unhealthy";
    v.stage = kStage;
    v.check = f.check;
    v.nodes = {node};
    const std::string action = HealthActionName(f.action);
    v.summary = node + ": " + f.message + " [" + action + "]";
    v.next_step = HealthNextStep(action, node, f.evidence.value("gpu", -1LL));
    v.evidence = {{"action", action}};
    v.cause = CauseScope::kNode;
    return v;
  }

  void Judge(StageContext& ctx, const std::map<std::string, json>& health) {
    ClusterHealthInput in;
    in.health = health;
    in.facts = ctx.facts();
    in.expected_ib_rate_gbps = settings_.expected_ib_rate_gbps;
    auto cluster = JudgeCluster(in);
    json actions = json::object();
    for (const auto& [node, h] : health) {
      const Node* n = ctx.inventory().FindNode(node);
      std::vector<HealthFinding> fs = JudgeGpus(h.value("gpu", json()), n ? n->gpus : std::nullopt);
      for (auto& f : JudgeKernelLog(h.value("kernel_log", json()))) fs.push_back(std::move(f));
      for (auto& f : JudgeIbPortsAlone(h.value("ib", json()))) fs.push_back(std::move(f));
      for (auto& f : cluster[node]) fs.push_back(std::move(f));
      HealthAction worst = WorstAction(fs);
      for (const auto& f : fs) {
        ctx.Record(ToResult(node, f));
        if (TakesNodeOut(f)) ctx.RecordCause(CauseOf(node, f));
      }
      NodeResult r =
          NodeCheck(kStage, node, "readings", Outcome::kPass,
                    "hardware readings; worst action " + std::string(HealthActionName(worst)),
                    Readings(h, worst), HealthActionName(worst));
      ctx.Record(r);
      actions[HealthActionName(worst)].push_back(node);
      if (h.value("ib", json::object()).value("status", std::string()) == "ok") {
        before_[node] = h["ib"];
      }
    }
    json meta = {{"nodes", health.size()}, {"actions", actions}};
    Status s = ctx.store().SetRunMeta(ctx.run_id(), kStage, meta);
    (void)s;  // the results themselves are stored; the summary line is a convenience
  }

  HealthSettings settings_;
  std::map<std::string, json> before_;  // node -> its first "ib" snapshot
  Clock::time_point started_{};
};

}  // namespace

std::unique_ptr<Stage> MakeHealthStage() { return std::make_unique<HealthStage>(); }

}  // namespace cc
