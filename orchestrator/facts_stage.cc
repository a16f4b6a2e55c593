// `facts`: every usable node's agent collects its facts; they are stored
// with the node the moment they arrive.
#include "orchestrator/facts_fields.h"
#include "orchestrator/stages_decl.h"

namespace cc {
namespace {

class FactsStage : public Stage {
 public:
  std::string name() const override { return "facts"; }

  Status Run(StageContext& ctx) override {
    double timeout_s = ctx.inventory().StageSettings("facts").value("timeout_s", 60.0);
    auto usable = ctx.fleet().Usable();
    ctx.progress().StartStage("facts", static_cast<long long>(usable.size()), "nodes");
    ctx.fleet().ForEach({}, [&](NodeState& s) {
      CollectOne(ctx, s, timeout_s);
      ctx.progress().Advance();
    });
    ctx.progress().FinishStage();
    return Status::Ok();
  }

 private:
  static void CollectOne(StageContext& ctx, NodeState& s, double timeout_s) {
    const Node& node = *s.node;
    Json args{{"library_paths", node.library_paths},
              {"python", node.python},
              {"login_env", true}};
    NodeResult r;
    r.node = node.name;
    r.stage = "facts";
    r.check = "collected";
    auto call = s.agent->Call("facts", args, Deadline::InSeconds(timeout_s));
    if (!call.ok()) {
      r.outcome = call.status().Is(ErrorKind::kTimeout) ? Outcome::kHang
                                                        : Outcome::kError;
      r.message = call.status().ToString();
      ctx.Record(r);
      return;
    }
    Json facts = call->Find("facts");
    if (!facts.is_object()) {
      r.outcome = Outcome::kError;
      r.message = "agent answered without facts";
      ctx.Record(r);
      return;
    }
    NodeRecord rec;
    rec.run_id = ctx.run_id();
    rec.node = node.name;
    rec.address = node.address;
    rec.reachable = true;
    rec.facts = facts;
    Status put = ctx.store().PutNode(rec);
    ctx.SetFacts(node.name, facts);
    r.outcome = put.ok() ? Outcome::kPass : Outcome::kError;
    r.message = put.ok() ? "facts collected" : put.ToString();
    ctx.Record(r);
    for (const std::string& w : FactWarnings(facts)) {
      NodeResult warn;
      warn.node = node.name;
      warn.stage = "facts";
      warn.check = "nccl_env";
      warn.outcome = Outcome::kWarn;
      warn.message = w;
      ctx.Record(warn);
    }
  }
};

}  // namespace

std::unique_ptr<Stage> MakeFactsStage() { return std::make_unique<FactsStage>(); }

}  // namespace cc
