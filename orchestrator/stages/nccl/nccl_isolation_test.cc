#include "orchestrator/stages/nccl/nccl_isolation.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace cc {
namespace {

NodeGroup Nodes(int n) {
  NodeGroup v;
  for (int i = 0; i < n; ++i) {
    char name[16];
    std::snprintf(name, sizeof name, "gpu%03d", i);
    v.push_back(name);
  }
  return v;
}

// A simulated cluster: a group test breaks when it holds a bad node or
// both ends of a bad link. Checks that every batch is disjoint.
struct Model {
  std::set<std::string> bad_nodes;
  std::set<NodePair> bad_links;
  size_t breaks_at_size = 0;  // > 0: any group this large breaks (scale)
  bool error_on_pairs = false;
  int batches = 0;

  Outcome Test(const NodeGroup& g) const {
    if (error_on_pairs && g.size() == 2) return Outcome::kError;
    if (breaks_at_size && g.size() >= breaks_at_size) return Outcome::kHang;
    std::set<std::string> in(g.begin(), g.end());
    for (const auto& n : g) {
      if (bad_nodes.count(n)) return Outcome::kFail;
    }
    for (const auto& [a, b] : bad_links) {
      if (in.count(a) && in.count(b)) return Outcome::kHang;
    }
    return Outcome::kPass;
  }

  RunGroupBatch Runner() {
    return [this](const std::vector<NodeGroup>& batch) {
      ++batches;
      std::set<std::string> busy;
      std::vector<Outcome> out;
      for (const auto& g : batch) {
        EXPECT_GE(g.size(), 2u) << "a group test needs two nodes";
        for (const auto& n : g) EXPECT_TRUE(busy.insert(n).second) << n << " twice in a batch";
        out.push_back(Test(g));
      }
      return out;
    };
  }
};

TEST(NcclIsolation, OneBadNodeAmong64IsNamedInAtMost14Runs) {
  NodeGroup all = Nodes(64);
  for (const std::string& bad : all) {
    SCOPED_TRACE(bad);
    Model m;
    m.bad_nodes = {bad};
    ASSERT_EQ(m.Test(all), Outcome::kFail);  // the first whole-cluster run
    IsolationResult r = IsolateBrokenGroup(all, m.Runner());
    EXPECT_EQ(r.bad_nodes, NodeGroup{bad});
    EXPECT_TRUE(r.bad_links.empty());
    EXPECT_TRUE(r.unexplained.empty());
    EXPECT_LE(r.tests.size(), 14u);
    EXPECT_EQ(r.rounds, m.batches);
    EXPECT_LE(r.rounds, 6);  // round-robin pairs would take 63 rounds
  }
}

TEST(NcclIsolation, TwoBadNodesAmong64AreBothNamed) {
  NodeGroup all = Nodes(64);
  for (auto [i, j] : {std::pair{0, 1}, {0, 63}, {5, 40}, {31, 32}, {17, 18}, {2, 60}}) {
    SCOPED_TRACE(all[i] + "," + all[j]);
    Model m;
    m.bad_nodes = {all[i], all[j]};
    IsolationResult r = IsolateBrokenGroup(all, m.Runner());
    EXPECT_EQ(r.bad_nodes, (NodeGroup{all[i], all[j]}));
    EXPECT_TRUE(r.bad_links.empty());
    EXPECT_TRUE(r.unexplained.empty());
    EXPECT_LE(r.tests.size(), 28u);
  }
}

TEST(NcclIsolation, ABadLinkIsNamedAsALinkAndNeitherNodeIsBlamed) {
  NodeGroup all = Nodes(64);
  for (auto [i, j] : {std::pair{0, 1}, {0, 63}, {5, 40}, {31, 32}, {20, 22}}) {
    SCOPED_TRACE(all[i] + "-" + all[j]);
    Model m;
    m.bad_links = {{all[i], all[j]}};
    IsolationResult r = IsolateBrokenGroup(all, m.Runner());
    EXPECT_TRUE(r.bad_nodes.empty());
    ASSERT_EQ(r.bad_links.size(), 1u);
    EXPECT_EQ(r.bad_links[0], (NodePair{all[i], all[j]}));
    EXPECT_TRUE(r.unexplained.empty());
    EXPECT_LE(r.tests.size(), 16u);
  }
}

TEST(NcclIsolation, BadNodeAndBadLinkInOneClusterAreToldApart) {
  NodeGroup all = Nodes(16);
  Model m;
  m.bad_nodes = {"gpu003"};
  m.bad_links = {{"gpu010", "gpu014"}};
  IsolationResult r = IsolateBrokenGroup(all, m.Runner());
  EXPECT_EQ(r.bad_nodes, NodeGroup{"gpu003"});
  ASSERT_EQ(r.bad_links.size(), 1u);
  EXPECT_EQ(r.bad_links[0], (NodePair{"gpu010", "gpu014"}));
}

TEST(NcclIsolation, OddSizesUseAKnownGoodPartnerForALoneNode) {
  for (int n : {3, 5, 7, 9, 13}) {
    NodeGroup all = Nodes(n);
    for (const std::string& bad : all) {
      SCOPED_TRACE(std::to_string(n) + " " + bad);
      Model m;
      m.bad_nodes = {bad};
      IsolationResult r = IsolateBrokenGroup(all, m.Runner());
      EXPECT_TRUE(r.bad_links.empty());
      if (n == 3 && r.bad_nodes.empty()) {
        // Three nodes and no outside partner: it may say it cannot tell,
        // never blame the wrong one. With partners from the pair phase:
        EXPECT_FALSE(r.unexplained.empty());
        IsolationOptions o;
        o.known_good = {"x1", "x2"};
        r = IsolateBrokenGroup(all, m.Runner(), o);
      }
      EXPECT_EQ(r.bad_nodes, NodeGroup{bad});
    }
  }
}

TEST(NcclIsolation, TwoNodeClusterNeedsKnownGoodPartnersFromOutside) {
  Model m;
  m.bad_nodes = {"b"};
  IsolationOptions o;
  o.known_good = {"g1", "g2"};
  IsolationResult r = IsolateBrokenGroup({"a", "b"}, m.Runner(), o);
  EXPECT_EQ(r.bad_nodes, NodeGroup{"b"});
  EXPECT_EQ(r.tests.size(), 2u);

  Model alone;
  alone.bad_nodes = {"b"};
  IsolationResult none = IsolateBrokenGroup({"a", "b"}, alone.Runner());
  EXPECT_TRUE(none.bad_nodes.empty()) << "no partner, no verdict";
  ASSERT_EQ(none.unexplained.size(), 1u);
  EXPECT_EQ(none.tests.size(), 0u);
}

TEST(NcclIsolation, AFaultThatShowsOnlyAtScaleIsUnexplainedNotBlamed) {
  NodeGroup all = Nodes(32);
  Model m;
  m.breaks_at_size = 20;
  IsolationResult r = IsolateBrokenGroup(all, m.Runner());
  EXPECT_TRUE(r.bad_nodes.empty());
  EXPECT_TRUE(r.bad_links.empty());
  ASSERT_EQ(r.unexplained.size(), 1u);
  EXPECT_EQ(r.unexplained[0].size(), 32u);
}

TEST(NcclIsolation, TestsThatCouldNotRunLeaveTheGroupUnexplained) {
  NodeGroup all = Nodes(8);
  Model m;
  m.bad_nodes = {"gpu002"};
  m.error_on_pairs = true;
  IsolationResult r = IsolateBrokenGroup(all, m.Runner());
  EXPECT_TRUE(r.bad_nodes.empty());
  EXPECT_FALSE(r.unexplained.empty());
}

TEST(NcclIsolation, TheBudgetStopsARunawaySearch) {
  NodeGroup all = Nodes(64);
  Model m;
  m.bad_nodes = {"gpu001", "gpu020", "gpu040"};
  IsolationOptions o;
  o.max_tests = 5;
  IsolationResult r = IsolateBrokenGroup(all, m.Runner(), o);
  EXPECT_TRUE(r.budget_exhausted);
  EXPECT_LE(r.tests.size(), 5u);
  EXPECT_FALSE(r.unexplained.empty());
}

TEST(NcclIsolation, EveryTestIsRecordedWithItsRoundAndPurpose) {
  NodeGroup all = Nodes(8);
  Model m;
  m.bad_nodes = {"gpu006"};
  IsolationResult r = IsolateBrokenGroup(all, m.Runner());
  ASSERT_FALSE(r.tests.empty());
  EXPECT_EQ(r.tests.front().round, 1);
  EXPECT_EQ(r.tests.front().purpose, "split");
  EXPECT_EQ(r.tests.back().round, r.rounds);
  EXPECT_EQ(r.tests.back().purpose, "pair");
}

}  // namespace
}  // namespace cc
