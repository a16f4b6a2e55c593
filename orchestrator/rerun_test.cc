#include "orchestrator/rerun.h"

#include <gtest/gtest.h>

namespace cc {
namespace {

RunData Sample() {
  RunData d;
  d.run.meta["nodes"] = {"gpu01", "gpu02", "gpu03", "gpu04", "gpu05"};
  auto node = [&](const std::string& n, Outcome o) {
    NodeResult r;
    r.node = n;
    r.stage = "parity";
    r.check = "driver";
    r.outcome = o;
    d.node_results.push_back(r);
  };
  auto pair = [&](const std::string& a, const std::string& b, Outcome o) {
    PairResult r;
    r.stage = "nccl";
    r.check = "allreduce";
    r.src = a;
    r.dst = b;
    r.outcome = o;
    d.pair_results.push_back(r);
  };
  node("gpu01", Outcome::kPass);
  node("gpu04", Outcome::kFail);
  node("gpu05", Outcome::kWarn);
  pair("gpu01", "gpu02", Outcome::kPass);
  pair("gpu03", "gpu01", Outcome::kHang);
  return d;
}

TEST(Rerun, SelectsFailedNodesAndBothEndsOfFailedPairsInRunOrder) {
  auto sel = SelectFailed(Sample());
  EXPECT_EQ(sel.nodes, (std::vector<std::string>{"gpu01", "gpu03", "gpu04"}));
  EXPECT_EQ(sel.hostlist, "gpu[01,03-04]");
  ASSERT_EQ(sel.pairs.size(), 1u);
  EXPECT_EQ(sel.pairs[0].src, "gpu03");
  EXPECT_EQ(sel.pairs[0].outcome, Outcome::kHang);
}

TEST(Rerun, ACleanRunSelectsNothing) {
  RunData d = Sample();
  for (auto& r : d.node_results) r.outcome = Outcome::kPass;
  for (auto& r : d.pair_results) r.outcome = Outcome::kPass;
  auto sel = SelectFailed(d);
  EXPECT_TRUE(sel.empty());
  EXPECT_EQ(sel.hostlist, "");
}

TEST(Rerun, AStageThatCouldNotRunSelectsEveryNode) {
  RunData d = Sample();
  NodeResult r;
  r.node = "*";
  r.stage = "nics";
  r.check = "stage";
  r.outcome = Outcome::kError;
  d.node_results.push_back(r);
  EXPECT_EQ(SelectFailed(d).hostlist, "gpu[01-05]");
}

TEST(Rerun, LimitKeepsTheSelectedNodesTheInventoryStillHas) {
  Inventory inv;
  for (const char* n : {"gpu01", "gpu02", "gpu03"}) {
    Node node;
    node.name = n;
    inv.nodes.push_back(node);
  }
  RerunSelection sel;
  sel.nodes = {"gpu03", "gpu09"};
  sel.hostlist = "gpu[03,09]";
  auto gone = LimitToSelection(inv, sel);
  ASSERT_TRUE(gone.ok()) << gone.status().ToString();
  EXPECT_EQ(*gone, std::vector<std::string>{"gpu09"});
  ASSERT_EQ(inv.nodes.size(), 1u);
  EXPECT_EQ(inv.nodes[0].name, "gpu03");
  sel.nodes = {"gpu09"};
  EXPECT_FALSE(LimitToSelection(inv, sel).ok());
}

}  // namespace
}  // namespace cc
