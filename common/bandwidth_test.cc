#include "common/bandwidth.h"

#include <gtest/gtest.h>

namespace cc {
namespace {

TEST(Bandwidth, AlgbwIsBytesOverSecondsInDecimalGigabytes) {
  // 1 GB in 1 ms = 1000 GB/s; 256 MiB in 10 ms = 26.8435456 GB/s.
  EXPECT_DOUBLE_EQ(AlgBandwidthGBps(1000000000, 0.001), 1000.0);
  EXPECT_DOUBLE_EQ(AlgBandwidthGBps(256ull << 20, 0.010), 26.8435456);
}

TEST(Bandwidth, AllReduceBusbwUsesTwoNMinusOneOverN) {
  // nccl-tests on 8 ranks: algbw 100 GB/s -> busbw 175 GB/s.
  EXPECT_DOUBLE_EQ(BusBandwidthGBps(Collective::kAllReduce, 100000000000ull, 1.0, 8), 175.0);
  // Two ranks: busbw == algbw.
  EXPECT_DOUBLE_EQ(BusBandwidthGBps(Collective::kAllReduce, 4000000, 0.001, 2), 4.0);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(Collective::kAllReduce, 4), 1.5);
}

TEST(Bandwidth, OtherCollectivesHaveTheirOwnFactor) {
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(Collective::kAllGather, 4), 0.75);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(Collective::kReduceScatter, 8), 0.875);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(Collective::kBroadcast, 8), 1.0);
}

TEST(Bandwidth, DegenerateInputsGiveZeroNotInfinity) {
  EXPECT_EQ(AlgBandwidthGBps(1024, 0.0), 0.0);
  EXPECT_EQ(AlgBandwidthGBps(1024, -1.0), 0.0);
  EXPECT_EQ(BusBandwidthGBps(Collective::kAllReduce, 1024, 0.001, 1), 0.0);
  EXPECT_EQ(BusBandwidthFactor(Collective::kAllReduce, 0), 0.0);
}

}  // namespace
}  // namespace cc
