#include "orchestrator/run/fake_stage_run.h"

#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

namespace cc {

FakeStageRun::FakeStageRun(const std::vector<std::string>& nodes) {
  inventory_.name = "fake";
  for (const std::string& name : nodes) {
    Node n;
    n.name = name;
    n.address = name;
    inventory_.nodes.push_back(n);
  }
  FakeNode agent;
  agent.program = FakeAgent([](const nlohmann::json&) { return std::vector<nlohmann::json>{}; });
  transport_.SetDefault(agent);
  // Fleet::Prepare reads the agent it would push; nothing is pushed.
  char tmpl[] = "/tmp/cc-fake-agent-XXXXXX";
  int fd = mkstemp(tmpl);
  if (fd >= 0) {
    close(fd);
    agent_binary_ = tmpl;
    std::ofstream(agent_binary_) << "not pushed\n";
  }
}

FakeStageRun::~FakeStageRun() {
  ctx_.reset();
  fleet_.reset();  // closes the agents, on the fake clock
  store_.reset();
  if (!agent_binary_.empty()) std::remove(agent_binary_.c_str());
}

Status FakeStageRun::Prepare() {
  auto store = Store::Open(":memory:");
  if (!store.ok()) return store.status();
  store_ = std::move(*store);
  auto id = store_->BeginRun(RunRecord());
  if (!id.ok()) return id.status();
  run_id_ = *id;
  FleetOptions o;
  o.agent_binary = agent_binary_;
  o.push = false;
  o.clock = &clock_;
  fleet_ = std::make_unique<Fleet>(transport_, inventory_.nodes, o);
  ctx_ = std::make_unique<StageContext>(inventory_, *store_, run_id_, *fleet_, progress_);
  return fleet_->Prepare([](const NodeState&) {});
}

std::vector<NodeResult> FakeStageRun::NodeResults() {
  auto r = store_->GetNodeResults(run_id_);
  return r.ok() ? *r : std::vector<NodeResult>();
}

std::optional<NodeResult> FakeStageRun::Find(const std::string& stage, const std::string& node,
                                             const std::string& check) {
  for (NodeResult& r : NodeResults()) {
    if (r.stage == stage && r.node == node && r.check == check) return r;
  }
  return std::nullopt;
}

}  // namespace cc
