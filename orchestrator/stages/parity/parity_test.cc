#include "orchestrator/stages/parity/parity.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>

namespace cc {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::string Name(int i) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "gpu%03d", i);
  return buf;
}

// `count` nodes gpu001.. with the same fields.
std::vector<NodeFacts> Cluster(int count, const std::map<std::string, std::string>& fields) {
  std::vector<NodeFacts> nodes;
  for (int i = 1; i <= count; ++i) nodes.push_back({Name(i), fields, {}, false});
  return nodes;
}

std::vector<ParityFinding> Only(const std::vector<ParityFinding>& all, const std::string& check) {
  std::vector<ParityFinding> out;
  for (const ParityFinding& f : all) {
    if (f.check == check) out.push_back(f);
  }
  return out;
}

const ParityFinding* Find(const std::vector<ParityFinding>& all, const std::string& node,
                          const std::string& check) {
  for (const ParityFinding& f : all) {
    if (f.node == node && f.check == check) return &f;
  }
  return nullptr;
}

bool HasCheck(const std::vector<ParityFinding>& all, const std::string& check) {
  return !Only(all, check).empty();
}

// ---- the majority -----------------------------------------------------------

TEST(JudgeParity, OddDriverFailsNamingTheMajorityAndItsNodes) {
  auto nodes = Cluster(16, {{"driver", "550.54.15"}});
  nodes[6].fields["driver"] = "535.104.05";  // gpu007
  auto findings = Only(JudgeParity(nodes, {}), "driver");
  ASSERT_EQ(findings.size(), 16u);
  const ParityFinding* odd = Find(findings, "gpu007", "driver");
  ASSERT_NE(odd, nullptr);
  EXPECT_EQ(odd->outcome, Outcome::kFail);
  EXPECT_EQ(odd->value, "535.104.05");
  EXPECT_EQ(odd->expected, "550.54.15");
  EXPECT_EQ(odd->message,
            "driver 535.104.05 differs from the cluster (550.54.15 on "
            "gpu[001-006,008-016])");
  EXPECT_EQ(odd->evidence["majority"], "550.54.15");
  EXPECT_EQ(odd->evidence["majority_count"], 15);
  EXPECT_EQ(odd->evidence["majority_nodes"], "gpu[001-006,008-016]");
  EXPECT_EQ(odd->evidence["values"][1]["nodes"], "gpu007");
  for (const ParityFinding& f : findings) {
    if (f.node == "gpu007") continue;
    EXPECT_EQ(f.outcome, Outcome::kPass) << f.node;
    EXPECT_EQ(f.value, "550.54.15");
    EXPECT_EQ(f.expected, "550.54.15");
  }
}

TEST(JudgeParity, IdenticalClusterPassesEveryField) {
  auto findings =
      JudgeParity(Cluster(4, {{"driver", "550.54.15"}, {"kernel", "5.15.0-105-generic"}}), {});
  ASSERT_EQ(findings.size(), 8u);
  for (const ParityFinding& f : findings) {
    EXPECT_EQ(f.outcome, Outcome::kPass) << f.check << " " << f.message;
  }
  EXPECT_EQ(findings[0].message, "driver 550.54.15, like the cluster (4 of 4 nodes)");
}

TEST(JudgeParity, DeviationSeverityFollowsTheFieldTable) {
  auto nodes = Cluster(3, {{"kernel", "5.15.0-105-generic"},
                           {"nccl", "2.21.5"},
                           {"nccl_env.NCCL_IB_HCA", "mlx5"},
                           {"vbios", "96.00.74.00.01"},
                           {"something_new", "a"}});
  nodes[2].fields = {{"kernel", "5.15.0-91-generic"},
                     {"nccl", "2.18.3"},
                     {"nccl_env.NCCL_IB_HCA", "mlx5_0"},
                     {"vbios", "96.00.74.00.02"},
                     {"something_new", "b"}};
  auto findings = JudgeParity(nodes, {});
  EXPECT_EQ(Find(findings, "gpu003", "kernel")->outcome, Outcome::kWarn);
  EXPECT_EQ(Find(findings, "gpu003", "nccl")->outcome, Outcome::kFail);
  EXPECT_EQ(Find(findings, "gpu003", "nccl_env.NCCL_IB_HCA")->outcome, Outcome::kWarn);
  EXPECT_EQ(Find(findings, "gpu003", "vbios")->outcome, Outcome::kWarn);
  EXPECT_EQ(Find(findings, "gpu003", "something_new")->outcome, Outcome::kWarn);
  EXPECT_EQ(DeviationSeverity("torch_cuda"), Outcome::kFail);
  EXPECT_EQ(DeviationSeverity("ofed"), Outcome::kFail);
  EXPECT_EQ(DeviationSeverity("os"), Outcome::kWarn);
}

TEST(JudgeParity, TieHasNoMajorityAndWarnsEveryNodeNamingTheSplit) {
  auto nodes = Cluster(4, {{"driver", "550.54.15"}});
  nodes[2].fields["driver"] = "535.104.05";
  nodes[3].fields["driver"] = "535.104.05";
  auto findings = Only(JudgeParity(nodes, {}), "driver");
  ASSERT_EQ(findings.size(), 4u);
  for (const ParityFinding& f : findings) {
    EXPECT_EQ(f.outcome, Outcome::kWarn) << f.node;
    EXPECT_EQ(f.message,
              "driver is split with no majority: 550.54.15 on gpu[001-002]; "
              "535.104.05 on gpu[003-004]");
    EXPECT_FALSE(f.evidence.contains("majority"));
  }
}

TEST(JudgeParity, NodeMissingAFieldDeviatesFromTheCluster) {
  auto nodes = Cluster(4, {{"driver", "550.54.15"}, {"nccl_env.NCCL_IB_HCA", "mlx5"}});
  nodes[1].fields.clear();
  auto findings = JudgeParity(nodes, {});
  const ParityFinding* driver = Find(findings, "gpu002", "driver");
  ASSERT_NE(driver, nullptr);
  EXPECT_EQ(driver->outcome, Outcome::kFail);
  EXPECT_EQ(driver->value, "");
  EXPECT_EQ(driver->message,
            "driver not reported; the cluster has 550.54.15 on "
            "gpu[001,003-004]");
  const ParityFinding* env = Find(findings, "gpu002", "nccl_env.NCCL_IB_HCA");
  ASSERT_NE(env, nullptr);
  EXPECT_EQ(env->outcome, Outcome::kWarn);
  EXPECT_THAT(env->message, HasSubstr("nccl_env.NCCL_IB_HCA unset"));
}

TEST(JudgeParity, ForgottenEnvVarOnOneNodeIsTheOddOneOut) {
  auto nodes = Cluster(8, {{"driver", "550.54.15"}});
  nodes[4].fields["nccl_env.NCCL_P2P_DISABLE"] = "1";  // gpu005
  auto findings = Only(JudgeParity(nodes, {}), "nccl_env.NCCL_P2P_DISABLE");
  ASSERT_EQ(findings.size(), 8u);
  const ParityFinding* odd = Find(findings, "gpu005", "nccl_env.NCCL_P2P_DISABLE");
  EXPECT_EQ(odd->outcome, Outcome::kWarn);
  EXPECT_EQ(odd->message,
            "nccl_env.NCCL_P2P_DISABLE 1 differs from the cluster (unset on "
            "gpu[001-004,006-008])");
  EXPECT_EQ(Find(findings, "gpu001", "nccl_env.NCCL_P2P_DISABLE")->outcome, Outcome::kPass);
}

TEST(JudgeParity, FieldAbsentOnAllNodesIsNotJudged) {
  auto findings = JudgeParity(Cluster(3, {{"driver", "550.54.15"}}), {});
  EXPECT_FALSE(HasCheck(findings, "torch"));
  EXPECT_FALSE(HasCheck(findings, "ofed"));
  EXPECT_EQ(findings.size(), 3u);
}

TEST(JudgeParity, SingleNodeHasNoMajority) {
  auto findings = JudgeParity(Cluster(1, {{"driver", "550.54.15"}}), {});
  EXPECT_THAT(findings, IsEmpty());
}

TEST(JudgeParity, NoNodesNoFindings) { EXPECT_THAT(JudgeParity({}, {}), IsEmpty()); }

TEST(JudgeParity, IgnoredFieldsAndRulesAreNotJudged) {
  auto nodes = Cluster(3, {{"driver", "550.54.15"},
                           {"kernel", "6.8.0"},
                           {"nccl_env.NCCL_DEBUG", "INFO"},
                           {"shm_bytes", "1024"}});
  nodes[0].fields["kernel"] = "6.5.0";
  nodes[0].fields["nccl_env.NCCL_DEBUG"] = "WARN";
  ParityOptions opts;
  opts.ignore = {"kernel", "nccl_env.*", "shm_size"};
  opts.expect = {{"kernel", "6.8.0"}};
  auto findings = JudgeParity(nodes, opts);
  EXPECT_FALSE(HasCheck(findings, "kernel"));
  EXPECT_FALSE(HasCheck(findings, "expect.kernel"));
  EXPECT_FALSE(HasCheck(findings, "nccl_env.NCCL_DEBUG"));
  EXPECT_FALSE(HasCheck(findings, "shm_size"));
  EXPECT_TRUE(HasCheck(findings, "driver"));
  // The same inventory without the ignore list judges them all.
  opts.ignore.clear();
  findings = JudgeParity(nodes, opts);
  EXPECT_TRUE(HasCheck(findings, "kernel"));
  EXPECT_TRUE(HasCheck(findings, "expect.kernel"));
  EXPECT_TRUE(HasCheck(findings, "nccl_env.NCCL_DEBUG"));
  EXPECT_TRUE(HasCheck(findings, "shm_size"));
}

TEST(JudgeParity, ShmAndMemlockAreJudgedByRulesNotByTheMajority) {
  auto nodes = Cluster(3, {{"shm_bytes", "68719476736"}, {"memlock", "unlimited"}});
  nodes[0].fields["shm_bytes"] = "34359738368";
  auto findings = JudgeParity(nodes, {});
  EXPECT_FALSE(HasCheck(findings, "shm_bytes"));
  EXPECT_FALSE(HasCheck(findings, "memlock"));
  EXPECT_EQ(Only(findings, "shm_size").size(), 3u);
}

// ---- pins -------------------------------------------------------------------

TEST(JudgeParity, ExactPinFailsTheNodesThatDiffer) {
  auto nodes = Cluster(3, {{"driver", "550.54.15"}});
  nodes[1].fields["driver"] = "550.54.14";
  ParityOptions opts;
  opts.expect = {{"driver", "550.54.15"}};
  auto findings = Only(JudgeParity(nodes, opts), "expect.driver");
  ASSERT_EQ(findings.size(), 3u);
  EXPECT_EQ(findings[0].outcome, Outcome::kPass);
  EXPECT_EQ(findings[1].outcome, Outcome::kFail);
  EXPECT_EQ(findings[1].message, "driver 550.54.14 does not match pin 550.54.15");
  EXPECT_EQ(findings[1].expected, "550.54.15");
  EXPECT_EQ(findings[2].outcome, Outcome::kPass);
}

TEST(JudgeParity, RangePinJudgesEveryNodeEvenWhenAllAgree) {
  auto nodes = Cluster(4, {{"driver", "535.104.05"}, {"nccl", "2.18.3"}});
  ParityOptions opts;
  opts.expect = {{"driver", ">=550"}, {"nccl", ">=2.18,<3"}};
  auto findings = JudgeParity(nodes, opts);
  for (const ParityFinding& f : Only(findings, "expect.driver")) {
    EXPECT_EQ(f.outcome, Outcome::kFail);
    EXPECT_EQ(f.message, "driver 535.104.05 does not match pin >=550");
  }
  for (const ParityFinding& f : Only(findings, "expect.nccl")) {
    EXPECT_EQ(f.outcome, Outcome::kPass) << f.message;
  }
  // The cluster itself agrees: majority passes.
  for (const ParityFinding& f : Only(findings, "driver")) {
    EXPECT_EQ(f.outcome, Outcome::kPass);
  }
}

TEST(JudgeParity, PinnedFieldMissingOnOneNodeFails) {
  auto nodes = Cluster(3, {{"torch", "2.3.0"}});
  nodes[2].fields.clear();
  ParityOptions opts;
  opts.expect = {{"torch", ">=2.3"}};
  auto findings = Only(JudgeParity(nodes, opts), "expect.torch");
  ASSERT_EQ(findings.size(), 3u);
  EXPECT_EQ(findings[2].outcome, Outcome::kFail);
  EXPECT_EQ(findings[2].message, "torch not reported; pinned to >=2.3");
}

TEST(JudgeParity, PinnedFieldMissingEverywhereIsAnError) {
  auto nodes = Cluster(2, {{"driver", "550.54.15"}});
  ParityOptions opts;
  opts.expect = {{"ofed", "23.10"}};
  auto findings = JudgeParity(nodes, opts);
  auto pin = Only(findings, "expect.ofed");
  ASSERT_EQ(pin.size(), 2u);
  for (const ParityFinding& f : pin) {
    EXPECT_EQ(f.outcome, Outcome::kError);
    EXPECT_EQ(f.message, "no node reported ofed; cannot check pin 23.10");
  }
  EXPECT_FALSE(HasCheck(findings, "ofed"));  // and no majority on nothing
}

TEST(JudgeParity, BadPinIsAnErrorOnEveryNodeNotACrash) {
  ParityOptions opts;
  opts.expect = {{"nccl", "=>2.18"}};
  auto findings = Only(JudgeParity(Cluster(2, {{"nccl", "2.21.5"}}), opts), "expect.nccl");
  ASSERT_EQ(findings.size(), 2u);
  EXPECT_EQ(findings[0].outcome, Outcome::kError);
  EXPECT_THAT(findings[0].message, HasSubstr("unknown operator"));
}

TEST(CheckExpectPins, NamesTheFieldOfABadPin) {
  EXPECT_TRUE(CheckExpectPins({{"driver", "550.54.15"}, {"nccl", ">=2.18"}}).ok());
  Status s = CheckExpectPins({{"driver", "550.54.15"}, {"nccl", ">=abc"}});
  EXPECT_EQ(s.kind(), ErrorKind::kBadInventory);
  EXPECT_THAT(s.message(), HasSubstr("expect.nccl: pin \">=abc\""));
}

// ---- compatibility rules ----------------------------------------------------

TEST(ParityRules, DriverTooOldForTorchCudaFails) {
  auto nodes = Cluster(2, {{"driver", "550.54.15"}, {"torch", "2.3.0"}, {"torch_cuda", "12.4"}});
  nodes[1].fields["driver"] = "520.61.05";
  auto findings = Only(JudgeParity(nodes, {}), "driver_for_cuda");
  ASSERT_EQ(findings.size(), 2u);
  EXPECT_EQ(findings[0].outcome, Outcome::kPass);
  EXPECT_EQ(findings[1].outcome, Outcome::kFail);
  EXPECT_EQ(findings[1].message,
            "driver 520.61.05 is older than 525.60.13, the minimum for CUDA 12.4 "
            "(needed by torch 2.3.0 built for CUDA 12.4); CUDA 12.4's own driver "
            "is 550.54.14");
  EXPECT_EQ(findings[1].evidence["toolkit_driver"], "550.54.14");
}

TEST(ParityRules, DriverWithinMinorVersionCompatibilityWarns) {
  auto nodes = Cluster(1, {{"driver", "525.60.13"}, {"torch", "2.3"}, {"torch_cuda", "12.4"}});
  auto f = Only(JudgeParity(nodes, {}), "driver_for_cuda");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].outcome, Outcome::kWarn);
  EXPECT_THAT(f[0].message, HasSubstr("driver 525.60.13 is older than 550.54.14"));
  EXPECT_THAT(f[0].message, HasSubstr("(no PTX JIT of newer code)"));
}

TEST(ParityRules, NcclBuiltForNewerCudaThanTorchIsTheOneJudged) {
  auto nodes = Cluster(1, {{"driver", "575.51.03"},
                           {"torch_cuda", "12.4"},
                           {"nccl", "2.28.9+cuda13.0"},
                           {"cuda_driver", "12.9"}});
  auto findings = JudgeParity(nodes, {});
  const ParityFinding* d = Find(findings, "gpu001", "driver_for_cuda");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->outcome, Outcome::kFail);
  EXPECT_THAT(d->message, HasSubstr("needed by NCCL 2.28.9+cuda13.0"));
  const ParityFinding* c = Find(findings, "gpu001", "cuda_driver_for_cuda");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->outcome, Outcome::kFail);
}

TEST(ParityRules, NoCudaRuntimeMeansTheDriverRulesDoNotApply) {
  auto nodes = Cluster(1, {{"driver", "550.54.15"}, {"nccl", "2.21.5"}, {"torch_cuda", "None"}});
  auto findings = JudgeParity(nodes, {});
  EXPECT_FALSE(HasCheck(findings, "driver_for_cuda"));
  EXPECT_FALSE(HasCheck(findings, "cuda_driver_for_cuda"));
}

TEST(ParityRules, CudaDriverOlderThanTorchCuda) {
  auto nodes = Cluster(3, {{"cuda_driver", "12.4"}, {"torch_cuda", "12.4"}});
  nodes[1].fields["cuda_driver"] = "12.2";
  nodes[2].fields["cuda_driver"] = "11.8";
  auto f = Only(JudgeParity(nodes, {}), "cuda_driver_for_cuda");
  ASSERT_EQ(f.size(), 3u);
  EXPECT_EQ(f[0].outcome, Outcome::kPass);
  EXPECT_EQ(f[1].outcome, Outcome::kWarn);
  EXPECT_EQ(f[2].outcome, Outcome::kFail);
  EXPECT_EQ(f[2].message,
            "the driver supports CUDA 11.8, older than CUDA 12.4 (needed by torch "
            "built for CUDA 12.4)");
}

TEST(ParityRules, GpuCountAgainstTheInventory) {
  auto nodes = Cluster(3, {{"gpu_count", "8"}});
  for (NodeFacts& n : nodes) n.expected_gpus = 8;
  nodes[1].fields["gpu_count"] = "7";
  nodes[2].fields.clear();
  auto f = Only(JudgeParity(nodes, {}), "gpus_expected");
  ASSERT_EQ(f.size(), 3u);
  EXPECT_EQ(f[0].outcome, Outcome::kPass);
  EXPECT_EQ(f[1].outcome, Outcome::kFail);
  EXPECT_EQ(f[1].message, "has 7 GPUs, inventory says 8");
  EXPECT_EQ(f[2].outcome, Outcome::kFail);
}

TEST(ParityRules, CpuNodeDeclaredWithZeroGpusThatHasNonePasses) {
  // Issue 17: "ccn[01-08] have nothing; expected 0" on a healthy CPU cluster.
  auto nodes = Cluster(3, {{"kernel", "6.1"}});
  for (NodeFacts& n : nodes) n.expected_gpus = 0;
  auto findings = JudgeParity(nodes, {});
  auto f = Only(findings, "gpus_expected");
  ASSERT_EQ(f.size(), 3u);
  for (const ParityFinding& g : f) {
    EXPECT_EQ(g.outcome, Outcome::kPass) << g.node << ": " << g.message;
    EXPECT_EQ(g.message, "has no GPU, as the inventory says");
  }
  for (const ParityFinding& g : findings) EXPECT_EQ(g.outcome, Outcome::kPass) << g.check;
}

TEST(ParityRules, ZeroGpusDeclaredButSomeFoundFails) {
  auto nodes = Cluster(2, {{"gpu_count", "2"}});
  nodes[0].expected_gpus = 0;
  auto f = Only(JudgeParity(nodes, {}), "gpus_expected");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].outcome, Outcome::kFail);
  EXPECT_EQ(f[0].message, "has 2 GPUs, inventory says 0");
}

TEST(ParityRules, UnknownGpuCountIsNotJudgedAgainstTheInventory) {
  auto nodes = Cluster(2, {{"gpu_count", "8"}});
  for (NodeFacts& n : nodes) n.expected_gpus = 8;
  nodes[1].fields.erase("gpu_count");
  nodes[1].unknown["gpu_count"] = "gpu: NVML did not return within 60 s (a hung GPU or driver?)";
  auto f = Only(JudgeParity(nodes, {}), "gpus_expected");
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].outcome, Outcome::kPass);
  EXPECT_EQ(f[1].outcome, Outcome::kSkip);
  EXPECT_THAT(f[1].message, HasSubstr("unknown, not judged (gpu: NVML did not return within 60 s"));
}

TEST(ParityRules, GpuCountIsNotJudgedWithoutAnExpectation) {
  auto findings = JudgeParity(Cluster(2, {{"gpu_count", "8"}}), {});
  EXPECT_FALSE(HasCheck(findings, "gpus_expected"));
}

TEST(ParityRules, RdmaNodesNeedUnlimitedMemlock) {
  auto nodes = Cluster(4, {{"memlock", "unlimited"}});
  for (NodeFacts& n : nodes) n.has_ib = true;
  nodes[1].fields["memlock"] = "65536";
  nodes[2].fields["memlock"] = "18446744073709551615";
  nodes[3].has_ib = false;
  nodes[3].fields["memlock"] = "65536";
  auto f = Only(JudgeParity(nodes, {}), "memlock_for_rdma");
  ASSERT_EQ(f.size(), 3u);  // gpu004 has no IB: does not apply
  EXPECT_EQ(f[0].outcome, Outcome::kPass);
  EXPECT_EQ(f[1].outcome, Outcome::kFail);
  EXPECT_THAT(f[1].message, HasSubstr("RDMA needs memlock unlimited"));
  EXPECT_EQ(f[2].outcome, Outcome::kPass);
}

TEST(ParityRules, SmallShmWarns) {
  auto nodes = Cluster(3, {{"shm_bytes", "67108864"}});
  nodes[1].fields["shm_bytes"] = "1073741824";
  nodes[2].fields["shm_bytes"] = "lots";
  auto f = Only(JudgeParity(nodes, {}), "shm_size");
  ASSERT_EQ(f.size(), 3u);
  EXPECT_EQ(f[0].outcome, Outcome::kWarn);
  EXPECT_THAT(f[0].message, HasSubstr("/dev/shm is 64 MiB, less than 1 GiB"));
  EXPECT_EQ(f[1].outcome, Outcome::kPass);
  EXPECT_EQ(f[2].outcome, Outcome::kError);
}

TEST(ParityRules, TorchThatCannotSeeCudaFailsOnAGpuNode) {
  auto nodes = Cluster(3, {{"gpu_count", "8"}, {"torch_cuda_available", "true"}});
  nodes[1].fields["torch_cuda_available"] = "false";
  nodes[2].fields = {{"gpu_count", "0"}, {"torch_cuda_available", "false"}};
  auto f = Only(JudgeParity(nodes, {}), "torch_sees_gpus");
  ASSERT_EQ(f.size(), 2u);  // gpu003 has no GPUs: does not apply
  EXPECT_EQ(f[0].outcome, Outcome::kPass);
  EXPECT_EQ(f[1].node, "gpu002");
  EXPECT_EQ(f[1].outcome, Outcome::kFail);
  EXPECT_EQ(f[1].message, "torch.cuda.is_available() is false on a node with 8 GPUs");
}

// ---- ordering and the summary ---------------------------------------------

TEST(JudgeParity, FindingsComeInTableOrderThenByNameThenRules) {
  auto nodes = Cluster(2, {{"zeta", "1"},
                           {"alpha", "1"},
                           {"kernel", "6.8"},
                           {"driver", "550"},
                           {"shm_bytes", "2147483648"}});
  std::vector<std::string> checks;
  for (const ParityFinding& f : JudgeParity(nodes, {})) {
    if (checks.empty() || checks.back() != f.check) checks.push_back(f.check);
  }
  EXPECT_THAT(checks, ElementsAre("driver", "kernel", "alpha", "zeta", "shm_size"));
}

TEST(SummarizeParity, FoldsNodesAndLeadsWithTheVerdict) {
  auto nodes = Cluster(16, {{"driver", "550.54.15"}, {"kernel", "6.8.0"}});
  nodes[6].fields["driver"] = "535.104.05";
  auto lines = SummarizeParity(JudgeParity(nodes, {}));
  EXPECT_THAT(lines, ElementsAre("FAIL driver: gpu007 has 535.104.05; "
                                 "gpu[001-006,008-016] have 550.54.15",
                                 "PASS kernel: gpu[001-016] have 6.8.0"));
}

TEST(SummarizeParity, ShowsThePinAndReasonsWhereThereIsNoValue) {
  auto nodes = Cluster(3, {{"driver", "535.104.05"}});
  nodes[2].fields["driver"] = "550.54.15";
  ParityOptions opts;
  opts.expect = {{"driver", ">=550"}, {"ofed", "23.10"}};
  auto lines = SummarizeParity(JudgeParity(nodes, opts));
  EXPECT_THAT(lines,
              ElementsAre("FAIL expect.driver: gpu[001-002] have 535.104.05 (expected >=550); "
                          "gpu003 has 550.54.15",
                          "FAIL driver: gpu003 has 550.54.15; gpu[001-002] have 535.104.05",
                          "ERROR expect.ofed: gpu[001-003]: no node reported ofed; cannot "
                          "check pin "
                          "23.10"));
}

TEST(ParityRules, NoDriverSkipsOnACpuNodeButFailsOnANodeMeantToHaveGpus) {
  auto nodes = Cluster(2, {{"nccl", "2.28.9+cuda13.0"}});
  nodes[1].expected_gpus = 8;
  auto driver = Only(JudgeParity(nodes, {}), "driver_for_cuda");
  ASSERT_EQ(driver.size(), 2u);
  EXPECT_EQ(driver[0].outcome, Outcome::kSkip);
  EXPECT_THAT(driver[0].message, HasSubstr("no NVIDIA driver here"));
  EXPECT_EQ(driver[1].outcome, Outcome::kFail);
  EXPECT_THAT(driver[1].message,
              HasSubstr("the inventory gives 8 GPUs; NCCL 2.28.9+cuda13.0 needs a driver"));
  auto cuda = Only(JudgeParity(nodes, {}), "cuda_driver_for_cuda");
  ASSERT_EQ(cuda.size(), 2u);
  EXPECT_EQ(cuda[0].outcome, Outcome::kSkip);
  EXPECT_EQ(cuda[1].outcome, Outcome::kFail);
  EXPECT_EQ(cuda[1].expected, ">=13.0");
}

TEST(ParityCheckKindOf, TellsMajorityPinAndRuleChecksApart) {
  EXPECT_EQ(ParityCheckKindOf("driver"), ParityCheckKind::kMajority);
  EXPECT_EQ(ParityCheckKindOf("nccl_env.NCCL_IB_HCA"), ParityCheckKind::kMajority);
  EXPECT_EQ(ParityCheckKindOf("expect.driver"), ParityCheckKind::kPin);
  EXPECT_EQ(ParityCheckKindOf("gpus_expected"), ParityCheckKind::kRule);
  EXPECT_EQ(ParityCheckKindOf("torch_sees_gpus"), ParityCheckKind::kRule);
}

TEST(ParityNextStep, EveryRuleHasItsOwnRemedy) {
  for (const char* rule : {"driver_for_cuda", "cuda_driver_for_cuda", "gpus_expected",
                           "memlock_for_rdma", "shm_size", "torch_sees_gpus"}) {
    std::string s = ParityNextStep(rule, "gpu[003-004]", ">=1");
    EXPECT_NE(s.find("gpu[003-004]"), std::string::npos) << rule << ": " << s;
    EXPECT_EQ(s.find("{"), std::string::npos) << rule << ": " << s;
  }
  EXPECT_EQ(ParityNextStep("cuda_driver_for_cuda", "gpu004", ">=13.0"),
            "upgrade the NVIDIA driver on gpu004 to one for CUDA 13.0 or newer, or "
            "install a torch/NCCL built for an older CUDA");
  EXPECT_EQ(ParityNextStep("driver", "gpu004", "550.54.15"), "");
}

// ---- unknown is not "nothing" (issue 17) -----------------------------------

// 8 nodes with Open MPI 4.1.4; on `unknown_nodes` ompi_info timed out.
std::vector<NodeFacts> MpiClusterWithUnknown(const std::vector<int>& unknown_nodes) {
  auto nodes = Cluster(8, {{"openmpi", "4.1.4"}, {"kernel", "6.1"}});
  for (int i : unknown_nodes) {
    nodes[i].fields.erase("openmpi");
    nodes[i].unknown["openmpi"] = "mpi: ompi_info --parsable did not finish within 15 s";
  }
  return nodes;
}

TEST(JudgeParity, UnknownIsNeverVotedAsADifference) {
  auto findings = Only(JudgeParity(MpiClusterWithUnknown({2, 5}), {}), "openmpi");
  ASSERT_EQ(findings.size(), 8u);
  for (size_t i = 0; i < findings.size(); ++i) {
    EXPECT_EQ(findings[i].node, Name(static_cast<int>(i) + 1)) << "input order";
    bool unknown = i == 2 || i == 5;
    EXPECT_EQ(findings[i].outcome, unknown ? Outcome::kSkip : Outcome::kPass)
        << findings[i].node << ": " << findings[i].message;
  }
  EXPECT_EQ(findings[2].message,
            "openmpi unknown, not judged (mpi: ompi_info --parsable did not finish within 15 s)");
  // The majority counts only the nodes that know: 6 of 6.
  EXPECT_EQ(findings[0].evidence["majority_count"], 6);
  EXPECT_THAT(findings[0].message, HasSubstr("6 of 6 nodes"));
}

TEST(JudgeParity, UnknownOnMostNodesLeavesTheRestToTheirOwnMajority) {
  // 9 of 64 in the issue; here 5 of 8: the 3 that know still agree.
  auto findings = Only(JudgeParity(MpiClusterWithUnknown({0, 1, 2, 3, 4}), {}), "openmpi");
  ASSERT_EQ(findings.size(), 8u);
  for (const ParityFinding& f : findings) EXPECT_NE(f.outcome, Outcome::kFail) << f.node;
  EXPECT_EQ(findings[7].outcome, Outcome::kPass);
}

TEST(JudgeParity, UnknownNeverOutvotesOrTiesAKnownDeviation) {
  // A real odd node is still named when others are unknown.
  auto nodes = MpiClusterWithUnknown({1, 2, 3});
  nodes[7].fields["openmpi"] = "4.0.3";
  auto findings = Only(JudgeParity(nodes, {}), "openmpi");
  const ParityFinding* odd = Find(findings, Name(8), "openmpi");
  ASSERT_NE(odd, nullptr);
  EXPECT_EQ(odd->outcome, Outcome::kFail);
  EXPECT_EQ(odd->expected, "4.1.4");
}

TEST(JudgeParity, OneNodeKnowingIsNoMajority) {
  auto findings = JudgeParity(MpiClusterWithUnknown({1, 2, 3, 4, 5, 6, 7}), {});
  EXPECT_FALSE(HasCheck(findings, "openmpi"));
}

TEST(JudgeParity, UnknownPrefixCoversEveryFieldUnderIt) {
  auto nodes = Cluster(3, {{"nccl_env.NCCL_IB_HCA", "mlx5"}});
  nodes[2].fields.clear();
  nodes[2].unknown["nccl_env.*"] =
      "nccl_env: login shell: bash -lc 'env -0': did not finish within 5 s";
  ParityOptions o;
  o.expect["nccl_env.NCCL_IB_HCA"] = "mlx5";
  auto findings = JudgeParity(nodes, o);
  for (const char* check : {"nccl_env.NCCL_IB_HCA", "expect.nccl_env.NCCL_IB_HCA"}) {
    const ParityFinding* f = Find(findings, Name(3), check);
    ASSERT_NE(f, nullptr) << check;
    EXPECT_EQ(f->outcome, Outcome::kSkip) << check;
    EXPECT_THAT(f->message, HasSubstr("login shell")) << check;
    EXPECT_EQ(Find(findings, Name(1), check)->outcome, Outcome::kPass) << check;
  }
}

TEST(JudgeParity, UnknownDriverIsNotJudgedByTheCudaRules) {
  auto nodes =
      Cluster(2, {{"driver", "550.54.15"}, {"cuda_driver", "12.4"}, {"nccl", "2.21.5+cuda12.4"}});
  nodes[1].fields.erase("driver");
  nodes[1].fields.erase("cuda_driver");
  nodes[1].unknown["driver"] = "gpu: NVML did not return within 180 s";
  nodes[1].unknown["gpu_count"] = "gpu: NVML did not return within 180 s";
  nodes[1].unknown["cuda_driver"] = "cuda: cuInit did not return within 180 s";
  nodes[1].expected_gpus = 8;
  auto findings = JudgeParity(nodes, {});
  EXPECT_EQ(Find(findings, Name(2), "driver_for_cuda")->outcome, Outcome::kSkip);
  EXPECT_EQ(Find(findings, Name(2), "cuda_driver_for_cuda")->outcome, Outcome::kSkip);
  for (const ParityFinding& f : findings) EXPECT_NE(f.outcome, Outcome::kFail) << f.check;
}

// ---- per-node env is not voted (issue 17) --------------------------------

TEST(JudgeParity, EnvMeantToDifferPerNodeIsNotVoted) {
  auto nodes = Cluster(3, {{"nccl_env.NCCL_SOCKET_IFNAME", "eth0"}});
  for (int i = 0; i < 3; ++i) {
    nodes[i].fields["nccl_env.NCCL_HOSTID"] = "host" + std::to_string(i);
    nodes[i].fields["env.SLURM_NODEID"] = std::to_string(i);
  }
  nodes[2].fields["env.CUDA_VISIBLE_DEVICES"] = "0,1";  // only one node sets it
  auto findings = JudgeParity(nodes, {});
  EXPECT_FALSE(HasCheck(findings, "nccl_env.NCCL_HOSTID"));
  EXPECT_FALSE(HasCheck(findings, "env.SLURM_NODEID"));
  EXPECT_FALSE(HasCheck(findings, "env.CUDA_VISIBLE_DEVICES"));
  EXPECT_EQ(Only(findings, "nccl_env.NCCL_SOCKET_IFNAME").size(), 3u);
  // A pin on one of them still applies.
  ParityOptions o;
  o.expect["nccl_env.NCCL_HOSTID"] = "host0";
  auto pinned = Only(JudgeParity(nodes, o), "expect.nccl_env.NCCL_HOSTID");
  ASSERT_EQ(pinned.size(), 3u);
  EXPECT_EQ(pinned[1].outcome, Outcome::kFail);
}

}  // namespace
}  // namespace cc
