#include <gtest/gtest.h>

#include "orchestrator/inventory/inventory.h"

namespace cc {
namespace {

Result<Inventory> ParseText(const std::string& text, const Environment& env = {}) {
  return ParseInventory(text, "slurm.toml", env);
}

TEST(InventorySlurm, TheSettingsAreReadAndDefaultsKept) {
  auto inv = ParseText(R"(transport = "slurm"
[slurm]
partition = "gpu"
account = "ops"
srun_args = ["--mpi=none"]
agent_dir = "/local/scratch"
listen = "10.0.0.254:7000"
launch_timeout_s = 90
steps = true
[[nodes]]
name = "gpu[01-02]"
)");
  ASSERT_TRUE(inv.ok()) << inv.status().ToString();
  EXPECT_EQ(inv->transport, "slurm");
  EXPECT_EQ(inv->slurm.partition, "gpu");
  EXPECT_EQ(inv->slurm.account, "ops");
  EXPECT_EQ(inv->slurm.srun_args, std::vector<std::string>{"--mpi=none"});
  EXPECT_EQ(inv->slurm.agent_dir, "/local/scratch");
  EXPECT_EQ(inv->slurm.listen, "10.0.0.254:7000");
  EXPECT_EQ(inv->slurm.launch_timeout_s, 90);
  EXPECT_TRUE(inv->slurm.steps);
  EXPECT_EQ(inv->slurm.step_mpi, "pmix");
  EXPECT_EQ(inv->slurm.time_limit, "30");
  EXPECT_EQ(inv->slurm.allocation_timeout_s, 60);
  EXPECT_EQ(inv->nodes.size(), 2u);
}

TEST(InventorySlurm, TheNodesMayComeFromTheAllocation) {
  auto inv = ParseText("transport = \"slurm\"\nnodes_from_env = \"SLURM_JOB_NODELIST\"\n",
                       EnvironmentOf({{"SLURM_JOB_NODELIST", "n[1-3]"}}));
  ASSERT_TRUE(inv.ok()) << inv.status().ToString();
  ASSERT_EQ(inv->nodes.size(), 3u);
  EXPECT_EQ(inv->nodes[2].name, "n3");
}

TEST(InventorySlurm, MistakesAreLocated) {
  const std::string nodes = "[[nodes]]\nname = \"n1\"\n";
  auto bad = [&](const std::string& slurm) {
    auto inv = ParseText("transport = \"slurm\"\n[slurm]\n" + slurm + nodes);
    return inv.ok() ? std::string("parsed") : inv.status().message();
  };
  EXPECT_EQ(bad("listen = \"10.0.0.1:99999\"\n"),
            "slurm.toml:3:10: slurm.listen: '10.0.0.1:99999' is not ADDRESS or ADDRESS:PORT");
  EXPECT_EQ(bad("agent_dir = \"\"\n"), "slurm.toml:3:13: slurm.agent_dir: must not be empty");
  EXPECT_EQ(bad("partiton = \"gpu\"\n"),
            "slurm.toml:3:1: slurm.partiton: unknown key (did you mean 'partition'?)");
  EXPECT_EQ(bad("launch_timeout_s = 0\n").rfind("slurm.toml:3:20: slurm.launch_timeout_s: ", 0),
            0u);
  EXPECT_EQ(bad("steps = \"yes\"\n"),
            "slurm.toml:3:9: slurm.steps: expected true or false, got a string");
  EXPECT_EQ(bad("step_mpi = \"\"\n"), "slurm.toml:3:12: slurm.step_mpi: must not be empty");
  auto wrong = ParseText("transport = \"pbs\"\n" + nodes);
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.status().message(),
            "slurm.toml:1:13: transport: 'pbs' is not a transport (ssh, local, slurm)");
}

}  // namespace
}  // namespace cc
