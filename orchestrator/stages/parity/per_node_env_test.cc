#include "orchestrator/stages/parity/per_node_env.h"

#include <gtest/gtest.h>

namespace cc {
namespace {

TEST(PerNodeEnv, HostIdsRanksAndDeviceListsAreMeantToDiffer) {
  for (const char* v : {"NCCL_HOSTID", "HOSTNAME", "CUDA_VISIBLE_DEVICES", "RANK", "LOCAL_RANK",
                        "OMPI_COMM_WORLD_RANK", "SLURM_NODEID", "SLURM_PROCID", "SLURMD_NODENAME",
                        "SSH_CONNECTION", "SSH_CLIENT", "PMIX_RANK"}) {
    EXPECT_TRUE(IsPerNodeEnv(v)) << v;
  }
}

TEST(PerNodeEnv, SettingsThatMustMatchAreStillVoted) {
  for (const char* v :
       {"NCCL_SOCKET_IFNAME", "NCCL_IB_HCA", "NCCL_IB_DISABLE", "NCCL_P2P_DISABLE", "NCCL_DEBUG",
        "LD_LIBRARY_PATH", "PATH", "SLURM", "SSH", "RANKS", "NCCL_HOSTIDX"}) {
    EXPECT_FALSE(IsPerNodeEnv(v)) << v;
  }
}

TEST(PerNodeEnv, EnvFieldsNameTheirVariable) {
  EXPECT_EQ(EnvVarOfField("nccl_env.NCCL_HOSTID"), "NCCL_HOSTID");
  EXPECT_EQ(EnvVarOfField("env.HOSTNAME"), "HOSTNAME");
  EXPECT_EQ(EnvVarOfField("driver"), "");
  EXPECT_EQ(EnvVarOfField("nccl_env."), "");
  EXPECT_EQ(EnvVarOfField("environment"), "");
}

}  // namespace
}  // namespace cc
