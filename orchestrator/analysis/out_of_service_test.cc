#include "orchestrator/analysis/out_of_service.h"

#include <gtest/gtest.h>

#include "orchestrator/analysis/analysis.h"

namespace cc {
namespace {

using nlohmann::json;

PairResult Pair(const std::string& src, const std::string& dst, Outcome o) {
  PairResult r;
  r.stage = "nccl";
  r.src = src;
  r.dst = dst;
  r.check = "allreduce";
  r.outcome = o;
  r.message = o == Outcome::kPass ? "ok" : "NCCL timed out";
  return r;
}

NodeResult Xid79(const std::string& node) {
  NodeResult r = NodeCheck("health", node, "xid.79", Outcome::kFail,
                           "Xid 79 on PCI:0000:18:00: GPU has fallen off the bus",
                           json{{"action", "reboot"}, {"gpu", 0}}, "Xid 79");
  return r;
}

// Four nodes; n2's GPU fell off the bus and every pair with n2 fails in
// nccl. Without the rule, n2 is a bad node of nccl; with it, the health
// verdict comes first, explains those pairs, and no partner is named.
RunData Cluster() {
  RunData d;
  d.run.meta = {{"nodes", {"n1", "n2", "n3", "n4"}}};
  d.node_results.push_back(Xid79("n2"));
  const char* nodes[] = {"n1", "n2", "n3", "n4"};
  for (const char* a : nodes) {
    for (const char* b : nodes) {
      if (std::string(a) >= b) continue;
      bool bad = std::string(a) == "n2" || std::string(b) == "n2";
      d.pair_results.push_back(Pair(a, b, bad ? Outcome::kFail : Outcome::kPass));
    }
  }
  return d;
}

TEST(OutOfService, ARebootVerdictLeadsAndExplainsItsPairs) {
  auto vs = Analyze(Cluster());
  ASSERT_FALSE(vs.empty());
  EXPECT_EQ(vs[0].kind, "unhealthy");
  EXPECT_EQ(vs[0].nodes, std::vector<std::string>{"n2"});
  EXPECT_EQ(vs[0].evidence["failing_pairs_explained"], 3) << vs[0].evidence.dump();
  EXPECT_NE(vs[0].summary.find("this also explains 3 failing pair results"), std::string::npos)
      << vs[0].summary;
  for (size_t i = 1; i < vs.size(); ++i) {
    EXPECT_TRUE(vs[i].stage != "nccl") << "a partner was accused: " << vs[i].summary;
  }
}

TEST(OutOfService, AGpuResetDoesNotTakeTheNodeOut) {
  RunData d = Cluster();
  d.node_results[0].evidence["action"] = "reset-gpu";
  auto vs = Analyze(d);
  bool nccl_named = false;
  for (const auto& v : vs) nccl_named |= v.stage == "nccl";
  EXPECT_TRUE(nccl_named);  // the pair rules see n2's pairs again
}

TEST(OutOfService, OnlyFailingRebootOrDrainVerdictsCount) {
  Verdict v;
  v.severity = Outcome::kFail;
  v.evidence = {{"action", "drain"}};
  EXPECT_TRUE(analysis::TakesOutOfService(v));
  v.severity = Outcome::kWarn;
  EXPECT_FALSE(analysis::TakesOutOfService(v));
  v.severity = Outcome::kFail;
  v.evidence = {{"action", "investigate"}};
  EXPECT_FALSE(analysis::TakesOutOfService(v));
}

}  // namespace
}  // namespace cc
