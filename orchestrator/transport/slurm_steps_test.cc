#include "orchestrator/transport/slurm_steps.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace cc {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::Not;

SlurmStep Step() {
  return {.job = "42",
          .rank_nodes = {"n3", "n3", "n1", "n1"},
          .hostfile = "/tmp/d/hosts",
          .env = {},
          .program = {"/opt/cc/clustercheck-mpi-probe", "--iters", "5"}};
}

TEST(SlurmSteps, AStepRunsTheProgramOnItsNodesInTheAllocationWiredByPmi) {
  SlurmSettings s;
  s.srun_args = {"--cpu-bind=none"};
  auto argv = SrunStepArgv(s, Step());
  ASSERT_TRUE(argv.ok()) << argv.status().ToString();
  EXPECT_THAT(std::vector<std::string>(argv->begin(), argv->begin() + 4),
              ElementsAre("env", "SLURM_HOSTFILE=/tmp/d/hosts", "srun", "--jobid=42"));
  EXPECT_THAT(*argv, Contains("--overlap"));
  EXPECT_THAT(*argv, Contains("--distribution=arbitrary"));
  EXPECT_THAT(*argv, Contains("--mpi=pmix"));
  EXPECT_THAT(*argv, Contains("--label"));
  EXPECT_THAT(*argv, Contains("--cpu-bind=none"));
  auto after = [&](const std::string& flag) {
    for (size_t i = 0; i + 1 < argv->size(); ++i) {
      if ((*argv)[i] == flag) return (*argv)[i + 1];
    }
    return std::string("none");
  };
  EXPECT_EQ(after("-N"), "2");  // nodes
  EXPECT_EQ(after("-n"), "4");  // ranks
  EXPECT_THAT(std::vector<std::string>(argv->end() - 3, argv->end()),
              ElementsAre("/opt/cc/clustercheck-mpi-probe", "--iters", "5"));
}

TEST(SlurmSteps, TheHostfilePutsEachRankOnItsNodeInTheStagesOrder) {
  EXPECT_EQ(SrunStepHostfile(Step()), "n3\nn3\nn1\nn1\n");
}

TEST(SlurmSteps, TheEnvironmentGoesToSrunWhoseTasksInheritItCommasAndAll) {
  SlurmSettings s;
  s.bin_dir = "/opt/slurm/bin/";
  s.step_mpi = "pmi2";
  SlurmStep step = Step();
  step.env = {{"OMPI_MCA_btl_tcp_if_include", "eth0,eth1"}, {"NCCL_DEBUG", "INFO"}};
  auto argv = SrunStepArgv(s, step);
  ASSERT_TRUE(argv.ok());
  EXPECT_THAT(std::vector<std::string>(argv->begin(), argv->begin() + 5),
              ElementsAre("env", "SLURM_HOSTFILE=/tmp/d/hosts", "NCCL_DEBUG=INFO",
                          "OMPI_MCA_btl_tcp_if_include=eth0,eth1", "/opt/slurm/bin/srun"));
  EXPECT_THAT(*argv, Contains("--mpi=pmi2"));
  EXPECT_THAT(*argv, Not(Contains("--mpi=pmix")));
}

TEST(SlurmSteps, AStepWithoutItsPartsIsRefused) {
  SlurmSettings s;
  EXPECT_TRUE(SrunStepArgv(s, Step()).ok());
  SlurmStep no_job = Step(), no_ranks = Step(), no_file = Step(), no_program = Step(),
            bad_env = Step();
  no_job.job.clear();
  no_ranks.rank_nodes.clear();
  no_file.hostfile.clear();
  no_program.program.clear();
  bad_env.env = {{"A B", "1"}};
  for (const SlurmStep& bad : {no_job, no_ranks, no_file, no_program, bad_env}) {
    auto argv = SrunStepArgv(s, bad);
    ASSERT_FALSE(argv.ok());
    EXPECT_TRUE(argv.status().Is(ErrorKind::kBadArgument));
  }
}

TEST(SlurmSteps, TheLabelNamesTheRankAndComesOff) {
  int rank = 0;
  EXPECT_EQ(StripSrunLabel("3: {\"type\":\"done\"}", &rank), "{\"type\":\"done\"}");
  EXPECT_EQ(rank, 3);
  EXPECT_EQ(StripSrunLabel(" 12: hello", &rank), "hello");
  EXPECT_EQ(rank, 12);
  EXPECT_EQ(StripSrunLabel("srun: error: node2: task 1: Exited", &rank),
            "srun: error: node2: task 1: Exited");
  EXPECT_EQ(rank, -1);
  EXPECT_EQ(StripSrunLabel("10:30 is not a label", &rank), "10:30 is not a label");
  EXPECT_EQ(rank, -1);
  EXPECT_EQ(StripSrunLabel("", &rank), "");
}

}  // namespace
}  // namespace cc
