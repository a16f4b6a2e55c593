// A run for a stage's unit test, with no machine but this one and no real
// waiting: a StageContext over an in-memory store, a FakeTransport whose
// nodes the test scripts, and a FakeClock that the fleet, and through
// StageContext::clock() every deadline of the stage, is judged by. A
// stage's timeout then costs microseconds, and clock().Elapsed() says how
// long the stage would have waited.
//
//   FakeStageRun run({"gpu001", "gpu002"});
//   run.transport().SetNode("gpu002", silent);   // before Prepare
//   run.inventory().stage_settings["sleep"] = {{"seconds", 600}};
//   ASSERT_TRUE(run.Prepare().ok());             // connects, greets
//   ASSERT_TRUE(MakeSleepStage()->Run(run.ctx()).ok());
//   run.NodeResults();                           // what it recorded
//
// The rules of fake_clock.h hold: a wait on another thread's work (a
// rendezvous, like the nccl stage's id hand-over) ends at once, unmet.
//
// Threading: set up and inspected from one thread; the stage inside may
// use many.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/fake_clock.h"
#include "orchestrator/inventory/inventory.h"
#include "orchestrator/run/fleet.h"
#include "orchestrator/run/progress.h"
#include "orchestrator/run/stage.h"
#include "orchestrator/store/store.h"
#include "orchestrator/transport/fake_transport.h"

namespace cc {

class FakeStageRun {
 public:
  // Nodes by name, each by default a FakeAgent that answers every request
  // with nothing but its end (FakeTransport::SetDefault to change that).
  explicit FakeStageRun(const std::vector<std::string>& nodes);
  ~FakeStageRun();

  FakeTransport& transport() { return transport_; }
  FakeClock& clock() { return clock_; }
  // Its nodes and stage settings; change them before Prepare only.
  Inventory& inventory() { return inventory_; }

  // Opens the store, begins the run, and connects and greets every node
  // (Fleet::Prepare, nothing pushed). Not ok when the store could not be
  // made; a node that could not be prepared is only left out, as in a run.
  Status Prepare();
  // REQUIRES: Prepare() returned ok.
  StageContext& ctx() { return *ctx_; }
  Store& store() { return *store_; }
  // What the stages recorded per node, in the order written.
  std::vector<NodeResult> NodeResults();
  // The first result of `node` for stage/check; nullopt when none.
  std::optional<NodeResult> Find(const std::string& stage, const std::string& node,
                                 const std::string& check);

 private:
  FakeClock clock_;
  FakeTransport transport_;
  Inventory inventory_;
  std::string agent_binary_;
  Progress progress_{nullptr, false, clock_};
  std::unique_ptr<Store> store_;
  int64_t run_id_ = 0;
  std::unique_ptr<Fleet> fleet_;
  std::unique_ptr<StageContext> ctx_;
};

}  // namespace cc
