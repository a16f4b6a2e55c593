#include "orchestrator/transport/slurm_commands.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

namespace cc {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(SlurmCommands, SinfoStatesAreReadOncePerNodeAndJudged) {
  auto nodes = ParseSinfoNodes(
      "node1|idle|none\nnode2|drained|bad cable\nnode3|down*|Not responding\n"
      "node1|idle|none\nnode4|mixed|none\nnode5|draining|firmware\ngarbage\n");
  ASSERT_EQ(nodes.size(), 5u);
  EXPECT_EQ(AvailabilityOf(nodes["node1"]), SlurmAvailability::kUsable);
  EXPECT_EQ(AvailabilityOf(nodes["node2"]), SlurmAvailability::kDrained);
  EXPECT_EQ(AvailabilityOf(nodes["node3"]), SlurmAvailability::kDown);
  EXPECT_EQ(AvailabilityOf(nodes["node4"]), SlurmAvailability::kUsable);
  EXPECT_EQ(AvailabilityOf(nodes["node5"]), SlurmAvailability::kDrained);
  EXPECT_EQ(AvailabilityOf({"idle*", "none"}), SlurmAvailability::kDown) << "not responding";
  EXPECT_EQ(DescribeSlurmState(nodes["node2"]), "drained in Slurm (drained): bad cable");
  EXPECT_EQ(DescribeSlurmState(nodes["node3"]), "down in Slurm (down*): Not responding");
  EXPECT_EQ(DescribeSlurmState({"drained", "none"}), "drained in Slurm (drained), no reason given");
}

TEST(SlurmCommands, SallocAsksForExactlyTheNodesWithoutAShell) {
  SlurmSettings s;
  s.partition = "gpu";
  s.account = "ops";
  s.bin_dir = "/opt/slurm/bin/";
  auto argv = SallocArgv(s, {"n1", "n2", "n3"});
  EXPECT_EQ(argv[0], "/opt/slurm/bin/salloc");
  EXPECT_THAT(argv, Contains("--no-shell"));
  EXPECT_THAT(argv, Contains("n[1-3]"));
  EXPECT_THAT(argv, Contains("--immediate=60"));
  EXPECT_THAT(argv, Contains("gpu"));
  EXPECT_THAT(argv, Contains("ops"));
  EXPECT_EQ(GrantedJobId("salloc: Pending job allocation 42\nsalloc: Granted job allocation 42\n"),
            "42");
  EXPECT_FALSE(
      GrantedJobId("salloc: error: Job submit/allocate failed: Requested node "
                   "configuration is not available\n"));
}

TEST(SlurmCommands, OneSrunStartsOneAgentPerNodeAndKeepsTheSitesArgs) {
  SlurmSettings s;
  s.srun_args = {"--mpi=none"};
  auto argv = SrunAgentsArgv(s, "42", {"n1", "n2"}, {"/tmp/agent", "--connect=10.0.0.254:4000"});
  EXPECT_EQ(argv.front(), "srun");
  EXPECT_THAT(argv, Contains("--jobid=42"));
  EXPECT_THAT(argv, Contains("--overlap"));
  EXPECT_THAT(argv, Contains("--ntasks-per-node=1"));
  EXPECT_THAT(argv, Contains("n[1-2]"));
  EXPECT_THAT(argv, Contains("--mpi=none"));
  EXPECT_EQ(argv[argv.size() - 2], "/tmp/agent");
  EXPECT_EQ(argv.back(), "--connect=10.0.0.254:4000");
  EXPECT_THAT(SbcastArgv(s, "42", "/b/agent", "/tmp/x"),
              ElementsAre("sbcast", "-j", "42", "-f", "/b/agent", "/tmp/x"));
  EXPECT_THAT(ScancelArgv(s, "42"), ElementsAre("scancel", "42"));
}

TEST(SlurmCommands, EveryStepCarriesThisRunsNameAndOnlyThoseAreCancelled) {
  SlurmSettings s;
  EXPECT_EQ(RunStepName(4242), "clustercheck-4242");
  auto argv = SrunAgentsArgv(s, "42", {"n1"}, {"/tmp/agent"});
  auto j = std::find(argv.begin(), argv.end(), "-J");
  ASSERT_NE(j, argv.end());
  EXPECT_EQ(*(j + 1), OwnStepName());
  EXPECT_NE(OwnStepName(), RunStepName(0));
  EXPECT_THAT(SqueueStepsArgv(s, "42"),
              ElementsAre("squeue", "-h", "-s", "-j", "42", "-o", "%i|%j"));
  // The user's own steps (their shell, another run's) and the job are left.
  const std::string squeue =
      "42.extern|extern\n"
      "42.0|clustercheck-4242\n"
      "42.1|clustercheck-999\n"
      "42|clustercheck-4242\n"
      "  42.3|clustercheck-4242\r\n"
      "42.interactive|interactive\n"
      "garbage line\n";
  EXPECT_THAT(StepsNamed(squeue, "clustercheck-4242"), ElementsAre("42.0", "42.3"));
  EXPECT_THAT(StepsNamed("", "clustercheck-4242"), IsEmpty());
}

TEST(SlurmCommands, ErrorLinesAreQuotedAndTheRestLeftOut) {
  EXPECT_EQ(SlurmErrorLines("srun: job 42 queued\nsrun: error: Unable to create step for job 42: "
                            "Requested node configuration is not available\n"),
            "srun: error: Unable to create step for job 42: Requested node configuration is not "
            "available");
  EXPECT_EQ(SlurmErrorLines("all fine\n"), "");
}

}  // namespace
}  // namespace cc
