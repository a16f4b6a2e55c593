#include "agent/nccl_checked_iters.h"

#include <gtest/gtest.h>

namespace cc::agent {
namespace {

using nlohmann::json;

json Wrong(int rank, size_t index) {
  return {{"rank", rank}, {"index", index}, {"got", 3.0}, {"want", 6.0}};
}

TEST(NcclCheckedIters, ExactIterationsCountButLeaveTheSizePassing) {
  NcclCheckedIters c;
  for (int i = 0; i < 5; ++i) c.Add(0, json());
  json size = {{"data_ok", true}, {"mismatches", 0}};
  c.AddTo(&size);
  EXPECT_EQ(size["checked_iters"], 5);
  EXPECT_EQ(size["check_mismatches"], 0);
  EXPECT_EQ(size["data_ok"], true);
  EXPECT_FALSE(size.contains("first_check_mismatch"));
  EXPECT_EQ(NcclDataFailure(size, "1048576 bytes"), "");
}

TEST(NcclCheckedIters, NoCheckedIterationsSayZeroOfZero) {
  json size = {{"data_ok", true}, {"mismatches", 0}};
  NcclCheckedIters().AddTo(&size);
  EXPECT_EQ(size["checked_iters"], 0);
  EXPECT_EQ(size["check_mismatches"], 0);
  EXPECT_EQ(size["data_ok"], true);
}

TEST(NcclCheckedIters, MismatchedIterationsAreCountedAndTheFirstIsNamed) {
  NcclCheckedIters c;
  c.Add(0, json());
  c.Add(0, json());
  c.Add(12, Wrong(1, 4096));  // iteration 3
  c.Add(0, json());
  c.Add(7, Wrong(0, 8));  // iteration 5: counted, not named
  json size = {{"data_ok", true}, {"mismatches", 0}};
  c.AddTo(&size);
  EXPECT_EQ(size["checked_iters"], 5);
  EXPECT_EQ(size["check_mismatches"], 2) << "iterations, not elements";
  EXPECT_EQ(size["data_ok"], false);
  json first = {{"iter", 3},     {"elements", 12}, {"rank", 1},
                {"index", 4096}, {"got", 3.0},     {"want", 6.0}};
  EXPECT_EQ(size["first_check_mismatch"], first);
  EXPECT_EQ(NcclDataFailure(size, "bf16 1048576 bytes"),
            "data check failed at bf16 1048576 bytes: 2 of 5 checked iterations not exact, "
            "first iteration 3 (12 wrong elements, first "
            "{\"got\":3.0,\"index\":4096,\"rank\":1,\"want\":6.0})");
}

TEST(NcclCheckedIters, TheTimedCheckComesFirstInTheFailure) {
  json size = {{"data_ok", false}, {"mismatches", 2}, {"first_mismatch", Wrong(0, 1)}};
  EXPECT_EQ(NcclDataFailure(size, "4096 bytes"),
            "data check failed at 4096 bytes: 2 wrong elements, first "
            "{\"got\":3.0,\"index\":1,\"rank\":0,\"want\":6.0}");
  NcclCheckedIters c;
  c.Add(1, Wrong(0, 9));
  c.AddTo(&size);
  std::string why = NcclDataFailure(size, "4096 bytes");
  EXPECT_EQ(why.find("data check failed at 4096 bytes: 2 wrong elements"), 0u) << why;
  EXPECT_NE(why.find("; 1 of 1 checked iterations not exact, first iteration 1"), std::string::npos)
      << why;
}

TEST(NcclCheckedIters, AFailedSizeWithoutCountsStillFails) {
  EXPECT_EQ(NcclDataFailure({{"data_ok", false}}, "8 bytes"),
            "data check failed at 8 bytes: data not exact");
}

}  // namespace
}  // namespace cc::agent
