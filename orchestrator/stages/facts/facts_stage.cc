// `facts`: every usable node's agent collects its facts; they are stored
// with the node the moment they arrive.
//
// Unknown is not "nothing": a source (an agent section) that failed or ran
// past its deadline leaves its facts unknown, which parity never votes. A
// node with such a source, or whose whole answer did not come back in
// time, is asked once more after the others, for just those sources and
// with every deadline kRetestScale times longer (a loaded node answers
// late, not wrongly). What is still unknown then is one `error` result per
// source ("source.<section>") naming the source, its deadline and the node.
#include <algorithm>
#include <mutex>

#include "orchestrator/run/stage.h"
#include "orchestrator/stages/facts/facts_fields.h"
#include "orchestrator/stages/facts/facts_spec.h"

namespace cc {
namespace {

constexpr double kRetestScale = 3;

// One node's answer so far.
struct Collected {
  Json facts;     // null when no answer came back
  Status status;  // why not, when facts is null
  bool retested = false;
};

class FactsStage : public Stage {
 public:
  std::string name() const override { return "facts"; }

  Status Run(StageContext& ctx) override {
    double timeout_s = ctx.inventory().StageSettings("facts").value("timeout_s", 60.0);
    auto usable = ctx.fleet().Usable();
    ctx.progress().StartStage("facts", static_cast<long long>(usable.size()), "nodes");
    std::mutex mu;
    std::map<std::string, Collected> again;  // nodes to ask once more
    ctx.fleet().ForEach({}, [&](NodeState& s) {
      Collected c = Ask(s, {}, 1, Deadline::InSeconds(ctx.clock(), timeout_s));
      if (NeedsRetest(c)) {
        std::lock_guard lock(mu);
        again[s.node->name] = std::move(c);
      } else {
        Finish(ctx, s, c);
      }
      ctx.progress().Advance();
    });
    std::vector<std::string> names;
    for (const auto& [n, c] : again) names.push_back(n);
    if (names.empty()) {  // ForEach({}) would mean every node
      ctx.progress().FinishStage();
      return Status::Ok();
    }
    ctx.fleet().ForEach(names, [&](NodeState& s) {
      Collected& c = again.at(s.node->name);  // distinct per thread
      Retest(s, c, Deadline::InSeconds(ctx.clock(), timeout_s * kRetestScale));
      Finish(ctx, s, c);
    });
    ctx.progress().FinishStage();
    return Status::Ok();
  }

 private:
  static bool NeedsRetest(const Collected& c) {
    return c.facts.is_null() ? !c.status.Is(ErrorKind::kInterrupted)
                             : !FailedSources(c.facts).empty();
  }

  // One facts call: `sections` (all when empty), the agent's own deadlines
  // times `scale`, the answer by `deadline`.
  static Collected Ask(NodeState& s, const std::vector<std::string>& sections, double scale,
                       Deadline deadline) {
    const Node& node = *s.node;
    Json args{{"library_paths", node.library_paths}, {"python", node.python}, {"login_env", true}};
    if (!sections.empty()) args["sections"] = sections;
    if (scale > 1) args["deadline_scale"] = scale;
    Collected c;
    auto call = s.agent->Call("facts", args, deadline);
    if (!call.ok()) {
      c.status = call.status();
      return c;
    }
    Json facts = call->Find("facts");
    if (facts.is_object()) {
      c.facts = std::move(facts);
    } else {
      c.status = Status::Protocol("agent answered without facts");
    }
    return c;
  }

  // Asks again for what failed, by `deadline`; keeps what the first
  // answer had.
  static void Retest(NodeState& s, Collected& c, Deadline deadline) {
    std::vector<std::string> sections;
    for (const auto& [section, why] : FailedSources(c.facts)) sections.push_back(section);
    Collected second = Ask(s, sections, kRetestScale, deadline);
    c.retested = true;
    if (second.facts.is_null()) {
      if (c.facts.is_null()) c.status = second.status;
      return;
    }
    if (c.facts.is_null()) {
      c = std::move(second);
      c.retested = true;
      return;
    }
    for (auto& [section, value] : second.facts.items()) c.facts[section] = std::move(value);
  }

  static void Finish(StageContext& ctx, NodeState& s, const Collected& c) {
    const Node& node = *s.node;
    const std::string again = c.retested ? " (asked twice, the second time with deadlines " +
                                               std::to_string(static_cast<int>(kRetestScale)) +
                                               "x as long)"
                                         : "";
    if (c.facts.is_null()) {
      ctx.Record(NodeCheck("facts", node.name, "collected",
                           c.status.Is(ErrorKind::kTimeout) ? Outcome::kHang : Outcome::kError,
                           c.status.ToString() + again));
      return;
    }
    NodeRecord rec;
    rec.run_id = ctx.run_id();
    rec.node = node.name;
    rec.address = node.address;
    rec.reachable = true;
    rec.facts = c.facts;
    Status put = ctx.store().PutNode(rec);
    ctx.SetFacts(node.name, c.facts);
    ctx.Record(NodeCheck("facts", node.name, "collected",
                         put.ok() ? Outcome::kPass : Outcome::kError,
                         put.ok() ? "facts collected" + again : put.ToString()));
    RecordFailedSources(ctx, node.name, c.facts, again);
    for (const std::string& w : FactWarnings(c.facts)) {
      ctx.Record(NodeCheck("facts", node.name, "nccl_env", Outcome::kWarn, w));
    }
  }

  // One `error` per source still unknown: parity leaves its fields out.
  static void RecordFailedSources(StageContext& ctx, const std::string& node, const Json& facts,
                                  const std::string& again) {
    for (const auto& [section, why] : FailedSources(facts)) {
      ctx.Record(NodeCheck("facts", node, "source." + section, Outcome::kError,
                           "the " + section + " facts of " + node + " are unknown: " + why + again +
                               "; parity does not judge them",
                           Json{{"source", section}, {"reason", why}}, "unknown"));
    }
  }
};

}  // namespace

std::unique_ptr<Stage> MakeFactsStage() { return std::make_unique<FactsStage>(); }

}  // namespace cc
