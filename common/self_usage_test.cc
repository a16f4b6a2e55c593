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

TEST(SelfUsage, FormatsEachSegmentsPeakAfterTheThreeFields) {
  SelfUsage u{.max_rss_kb = 9, .user_s = 0, .sys_s = 0};
  u.segment_peak_kb = {{"connect", 7}, {"nics", 9}};
  EXPECT_EQ(FormatSelfUsage(u),
            "max_rss_kb=9 user_s=0.00 sys_s=0.00 peak_kb.connect=7 peak_kb.nics=9\n");
}

TEST(SelfUsage, ASegmentKeepsItsOwnPeakAndTheRunKeepsTheLargest) {
  ::setenv("CLUSTERCHECK_SELF_USAGE", "/dev/null", 1);
  long big_kb = 0;
  {
    std::vector<char> big(96 << 20, 1);  // 96 MB, every page touched
    EXPECT_GT(big[12345], 0);
  }  // given back (munmap) before the segment ends: only its peak remembers it
  EndSelfUsageSegment("big");
  EndSelfUsageSegment("small");
  SelfUsage u = ReadSelfUsage();
  ::unsetenv("CLUSTERCHECK_SELF_USAGE");
  ASSERT_GE(u.segment_peak_kb.size(), 2u);
  auto last = u.segment_peak_kb.end();
  EXPECT_EQ(last[-2].first, "big");
  big_kb = last[-2].second;
  EXPECT_GE(big_kb, 96 * 1024);
  EXPECT_EQ(last[-1].first, "small");
  EXPECT_LT(last[-1].second, big_kb - 64 * 1024) << "the reset did not take";
  EXPECT_GE(u.max_rss_kb, big_kb);
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
