#include "orchestrator/local_next_step.h"

#include <gtest/gtest.h>

namespace cc {
namespace {

TEST(LocalNextStep, ALocalRunEndsWithTheExampleInventoryNextToIt) {
  EXPECT_EQ(ExampleInventoryPath("inventories/local.toml"), "inventories/example.toml");
  EXPECT_EQ(ExampleInventoryPath("local.toml"), "example.toml");
  std::string s = NextStepAfterLocalRun("/usr/share/clustercheck/local.toml", "local", true);
  EXPECT_NE(s.find("next step:"), std::string::npos) << s;
  EXPECT_NE(s.find("cp /usr/share/clustercheck/example.toml my-cluster.toml"), std::string::npos)
      << s;
  EXPECT_NE(s.find("clustercheck run my-cluster.toml"), std::string::npos) << s;
}

TEST(LocalNextStep, WithoutTheExampleFileItNamesWhereItLivesInTheSource) {
  std::string s = NextStepAfterLocalRun("/tmp/x/local.toml", "local", false);
  EXPECT_NE(s.find("inventories/example.toml in the source"), std::string::npos) << s;
}

TEST(LocalNextStep, ARunOverSshHasNoNextStep) {
  EXPECT_EQ(NextStepAfterLocalRun("pod.toml", "ssh", true), "");
}

}  // namespace
}  // namespace cc
