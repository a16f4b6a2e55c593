#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>

#include "common/fake_clock.h"
#include "orchestrator/run/stage.h"
#include "orchestrator/transport/fake_transport.h"

namespace cc {
namespace {

// A StageContext over a fresh store, no nodes and a FakeClock.
class StageContextTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/cc-stage-context-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    auto store = Store::Open(dir_ + "/cc.db");
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(*store);
    auto id = store_->BeginRun(RunRecord());
    ASSERT_TRUE(id.ok()) << id.status().ToString();
    run_id_ = *id;
    FleetOptions o;
    o.clock = &clock_;
    fleet_ = std::make_unique<Fleet>(transport_, std::vector<Node>(), o);
    ctx_ = std::make_unique<StageContext>(inventory_, *store_, run_id_, *fleet_, progress_);
  }
  void TearDown() override {
    ctx_.reset();
    fleet_.reset();
    store_.reset();
    std::filesystem::remove_all(dir_);
  }
  nlohmann::json Meta() { return store_->GetRun(run_id_)->meta; }

  std::string dir_;
  FakeClock clock_;
  Inventory inventory_;
  FakeTransport transport_;
  Progress progress_{nullptr, false};
  std::unique_ptr<Store> store_;
  int64_t run_id_ = 0;
  std::unique_ptr<Fleet> fleet_;
  std::unique_ptr<StageContext> ctx_;
};

TEST_F(StageContextTest, TheNetworkChoiceReachesLaterStagesAndTheRunMeta) {
  EXPECT_FALSE(ctx_->network_choice().has_value()) << "no choice before the nics stage made one";
  NetworkChoice c;
  c.nccl_env = {{"NCCL_SOCKET_IFNAME", "eth1"}};
  c.btl_tcp_if_include = "10.42.0.0/24";
  c.address_of = {{"node2", "10.42.0.2"}};
  ctx_->SetNetworkChoice(c);

  ASSERT_TRUE(ctx_->network_choice().has_value());
  EXPECT_EQ(ctx_->network_choice()->AddressOr("node2", "node2.mgmt"), "10.42.0.2");
  EXPECT_EQ(ctx_->network_choice()->btl_tcp_if_include, "10.42.0.0/24");
  nlohmann::json meta = Meta();
  EXPECT_EQ(meta["selection.nccl_env"]["NCCL_SOCKET_IFNAME"], "eth1");
  EXPECT_EQ(meta["selection.mpi_mca"]["btl_tcp_if_include"], "10.42.0.0/24");
  EXPECT_EQ(meta["selection.addresses"]["node2"], "10.42.0.2");
  EXPECT_TRUE(ctx_->store_errors().empty());
}

TEST_F(StageContextTest, ResultsAreStampedByTheRunsClock) {
  ctx_->Record(NodeCheck("facts", "node1", "gpu", Outcome::kPass, "8 GPUs"));
  clock_.Advance(std::chrono::seconds(90));
  ctx_->Record(NodeCheck("facts", "node2", "gpu", Outcome::kPass, "8 GPUs"));
  auto results = store_->GetNodeResults(run_id_);
  ASSERT_TRUE(results.ok());
  ASSERT_EQ(results->size(), 2u);
  EXPECT_EQ((*results)[0].at, "2027-01-01T00:00:00Z");
  EXPECT_EQ((*results)[1].at, "2027-01-01T00:01:30Z");
}

TEST_F(StageContextTest, ABurnInRoundStampsItsNumberAndNarrowsThePairsToItsOwn) {
  std::vector<std::string> nodes = {"a", "b", "c", "d"};
  EXPECT_EQ(ctx_->PairRounds(nodes), RoundRobinRounds(nodes)) << "a run meets every pair";
  EXPECT_TRUE(ctx_->MeetsThisRound("a", "b"));
  ctx_->SetBurnInRound(BurnInRound{.number = 7, .pairs = {{"a", "c"}, {"b", "d"}}});
  EXPECT_TRUE(ctx_->MeetsThisRound("a", "c"));
  EXPECT_TRUE(ctx_->MeetsThisRound("d", "b")) << "either way round";
  EXPECT_FALSE(ctx_->MeetsThisRound("a", "b"));
  EXPECT_FALSE(ctx_->MeetsThisRound("a", "a"));
  EXPECT_EQ(ctx_->PairRounds(nodes), (std::vector<Round>{{{"a", "c"}, {"b", "d"}}}));
  EXPECT_EQ(ctx_->PairRounds({"a", "b", "c"}), (std::vector<Round>{{{"a", "c"}}}))
      << "a pair with a node the stage cannot use is left out";
  EXPECT_TRUE(ctx_->PairRounds({"a", "b"}).empty());

  PairResult p;
  p.stage = "ports";
  p.src = "a";
  p.dst = "c";
  p.outcome = Outcome::kFail;
  ctx_->Record(p);
  ctx_->Record(std::vector<PairResult>{p});
  ctx_->Record(NodeCheck("health", "a", "sample", Outcome::kPass, ""));
  Verdict v;
  v.kind = "bad-link";
  ctx_->Record(v);
  auto pairs = store_->GetRoundPairResults(run_id_);
  ASSERT_EQ(pairs->size(), 2u);
  EXPECT_EQ((*pairs)[0].round, 7);
  EXPECT_EQ((*pairs)[1].round, 7);
  EXPECT_EQ(store_->GetRoundNodeResults(run_id_)->at(0).round, 7);
  EXPECT_TRUE(store_->GetPairResults(run_id_)->empty()) << "not the run's own results";
  EXPECT_TRUE(store_->GetVerdicts(run_id_)->empty()) << "one round accuses no one";
}

TEST_F(StageContextTest, ARoundInheritsWhatRoundZeroLearnt) {
  ctx_->SetFacts("a", {{"gpus", 8}});
  NetworkChoice c;
  c.btl_tcp_if_include = "10.42.0.0/24";
  ctx_->SetNetworkChoice(c);
  StageContext round(inventory_, *store_, run_id_, *fleet_, progress_);
  round.InheritFrom(*ctx_);
  EXPECT_EQ(round.facts().at("a")["gpus"], 8);
  EXPECT_EQ(round.network_choice()->btl_tcp_if_include, "10.42.0.0/24");
}

TEST_F(StageContextTest, ARecordedCauseIsStoredAndContainedUnlessContainmentIsOff) {
  Verdict v;
  v.stage = "nics";
  v.kind = "link-down";
  v.nodes = {"node4"};
  v.summary = "node4: eth0 is down";
  ctx_->RecordCause(v);
  EXPECT_EQ(ctx_->containment().WhyNode("node4"), "node4: eth0 is down (nics link-down)");
  auto stored = store_->GetVerdicts(run_id_);
  ASSERT_TRUE(stored.ok()) << stored.status().ToString();
  ASSERT_EQ(stored->size(), 1u);
  EXPECT_EQ((*stored)[0].cause, CauseScope::kNode) << "no pairs: a node cause";
  EXPECT_TRUE(ctx_->AnyFailedOrHung());

  inventory_.containment = false;  // [stages] containment = false, --no-containment
  StageContext raw(inventory_, *store_, run_id_, *fleet_, progress_);
  raw.RecordCause(v);
  EXPECT_TRUE(raw.containment().empty()) << "stored, but nothing left out";
  EXPECT_EQ(store_->GetVerdicts(run_id_)->size(), 2u);
}

}  // namespace
}  // namespace cc
