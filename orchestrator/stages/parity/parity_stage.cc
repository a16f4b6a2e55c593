// `parity`: flattens every node's facts and judges them (parity.h): pins,
// the cluster majority, compatibility rules.
#include "orchestrator/run/stage.h"
#include "orchestrator/stages/facts/facts_fields.h"
#include "orchestrator/stages/parity/parity.h"
#include "orchestrator/stages/parity/parity_spec.h"
#include "orchestrator/stages/stages.h"

namespace cc {
namespace {

class ParityStage : public Stage {
 public:
  std::string name() const override { return "parity"; }

  Status Run(StageContext& ctx) override {
    auto facts = ctx.facts();
    ctx.progress().StartStage("parity", static_cast<long long>(facts.size()), "nodes");
    std::vector<NodeFacts> nodes;
    for (const Node& n : ctx.inventory().nodes) {
      auto it = facts.find(n.name);
      if (it == facts.end()) continue;  // unreachable: judged elsewhere
      NodeFacts nf;
      nf.node = n.name;
      nf.fields = FlattenFacts(it->second);
      nf.unknown = UnknownFields(it->second);
      nf.expected_gpus = n.gpus;
      const Json& ib = it->second.value("rdma", Json::object()).value("ib_devices", Json::array());
      nf.has_ib = ib.is_array() && !ib.empty();
      nodes.push_back(std::move(nf));
    }
    ParityOptions opts;
    opts.expect = ctx.inventory().expect;
    // Pins another stage judges (health: ib_rate) are not version fields.
    for (const StageSpec* spec : StageSpecs()) {
      for (const auto& key : spec->expect_keys) opts.expect.erase(key);
    }
    Json ignore = ctx.inventory().StageSettings("parity").value("ignore", Json::array());
    for (const auto& f : ignore) {
      if (f.is_string()) opts.ignore.push_back(f.get<std::string>());
    }
    for (const ParityFinding& f : JudgeParity(nodes, opts)) {
      NodeResult r = NodeCheck("parity", f.node, f.check, f.outcome, f.message,
                               f.evidence.is_null() ? Json::object() : f.evidence, f.value);
      r.expected = f.expected;
      ctx.Record(std::move(r));
    }
    ctx.progress().Advance(static_cast<long long>(nodes.size()));
    ctx.progress().FinishStage();
    return Status::Ok();
  }
};

}  // namespace

std::unique_ptr<Stage> MakeParityStage() { return std::make_unique<ParityStage>(); }

}  // namespace cc
