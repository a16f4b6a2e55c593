// `sleep`: holds an agent busy on every node for stages.sleep.seconds.
// Not in the default list: it exists so that interrupts (Ctrl-C) and
// deadlines can be tested against agents that are really running.
#include "orchestrator/run/stage.h"
#include "orchestrator/stages/sleep/sleep_spec.h"

namespace cc {
namespace {

class SleepStage : public Stage {
 public:
  std::string name() const override { return "sleep"; }
  Status Run(StageContext& ctx) override {
    Json settings = ctx.inventory().StageSettings("sleep");
    double seconds = settings.value("seconds", kDefaultSleepSeconds);
    auto usable = ctx.fleet().Usable();
    ctx.progress().StartStage("sleep", static_cast<long long>(usable.size()), "nodes");
    ctx.fleet().ForEach({}, [&](NodeState& s) {
      auto call = s.agent->Call("sleep", {{"seconds", seconds}},
                                Deadline::InSeconds(ctx.clock(), seconds + 30));
      ctx.Record(NodeCheck(
          "sleep", s.node->name, "slept",
          call.ok()                               ? Outcome::kPass
          : call.status().Is(ErrorKind::kTimeout) ? Outcome::kHang
                                                  : Outcome::kError,
          call.ok() ? "slept " + std::to_string(seconds) + " s" : call.status().ToString()));
      ctx.progress().Advance();
    });
    ctx.progress().FinishStage();
    return Status::Ok();
  }
};

}  // namespace

std::unique_ptr<Stage> MakeSleepStage() { return std::make_unique<SleepStage>(); }

}  // namespace cc
