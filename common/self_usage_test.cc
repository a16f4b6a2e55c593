#include "common/self_usage.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>
#include <sstream>
#include <vector>

namespace cc {
namespace {

TEST(SelfUsage, PeakRssGrowsWithMemoryThisProcessTouches) {
  long before = ReadSelfUsage().max_rss_kb;
  std::vector<char> big(64 << 20, 1);  // 64 MB, every page touched
  long after = ReadSelfUsage().max_rss_kb;
  EXPECT_GT(big[12345], 0);
  EXPECT_GE(after, before);
  EXPECT_GE(after, 64 * 1024);
}

TEST(SelfUsage, FormatsOneLineOfThreeFields) {
  EXPECT_EQ(FormatSelfUsage({.max_rss_kb = 2048, .user_s = 1.5, .sys_s = 0.25}),
            "max_rss_kb=2048 user_s=1.50 sys_s=0.25\n");
}

TEST(SelfUsage, WritesTheFileTheEnvironmentNames) {
  std::string path = ::testing::TempDir() + "self_usage_test.txt";
  ::setenv("CLUSTERCHECK_SELF_USAGE", path.c_str(), 1);
  WriteSelfUsageIfAsked();
  ::unsetenv("CLUSTERCHECK_SELF_USAGE");
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  EXPECT_EQ(s.str().rfind("max_rss_kb=", 0), 0u) << s.str();
  EXPECT_NE(s.str().find(" user_s="), std::string::npos);
}

}  // namespace
}  // namespace cc
