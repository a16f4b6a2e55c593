#include "orchestrator/stages/health/counter_deltas.h"

#include <gtest/gtest.h>

namespace cc {
namespace {

using nlohmann::json;

json Ib(long long link_downed, long long symbol_error) {
  return {{"status", "ok"},
          {"ports",
           {{{"device", "mlx5_0"},
             {"port", 1},
             {"counters", {{"link_downed", link_downed}, {"symbol_error", symbol_error}}}}}}};
}

TEST(CounterDeltas, LinkDownedThatMovedFailsWithItsDelta) {
  auto fs = JudgeCounterDeltas(Ib(0, 0), Ib(3, 0), 60, DefaultCounterLimits());
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].check, "ib.mlx5_0/1.link_downed");
  EXPECT_EQ(fs[0].outcome, Outcome::kFail);
  EXPECT_EQ(fs[0].action, HealthAction::kDrain);
  EXPECT_EQ(fs[0].value, "+3");
  EXPECT_EQ(fs[0].evidence["delta"], 3);
  EXPECT_NE(fs[0].message.find("0 -> 3"), std::string::npos) << fs[0].message;
}

TEST(CounterDeltas, SymbolErrorsWarnOnlyAboveTheirRate) {
  // 12 in 60 s is 0.2/s: under the default 10/s.
  auto slow = JudgeCounterDeltas(Ib(0, 0), Ib(0, 12), 60, DefaultCounterLimits());
  ASSERT_EQ(slow.size(), 1u);
  EXPECT_EQ(slow[0].outcome, Outcome::kPass);
  EXPECT_EQ(slow[0].evidence["deltas"]["symbol_error"], 12);
  auto fast = JudgeCounterDeltas(Ib(0, 0), Ib(0, 1200), 60, DefaultCounterLimits());
  ASSERT_EQ(fast.size(), 1u);
  EXPECT_EQ(fast[0].outcome, Outcome::kWarn);
  EXPECT_EQ(fast[0].check, "ib.mlx5_0/1.symbol_error");
}

TEST(CounterDeltas, ALimitFromTheSettingsIsUsed) {
  auto limits = DefaultCounterLimits();
  limits["link_downed"].limit = 5;
  auto fs = JudgeCounterDeltas(Ib(0, 0), Ib(3, 0), 60, limits);
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].outcome, Outcome::kPass);
}

TEST(CounterDeltas, AResetCounterCountsFromZero) {
  auto fs = JudgeCounterDeltas(Ib(7, 0), Ib(2, 0), 60, DefaultCounterLimits());
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].evidence["delta"], 2);
}

TEST(CounterDeltas, APortThatWentAwayIsNamed) {
  auto fs = JudgeCounterDeltas(Ib(0, 0), json{{"status", "ok"}, {"ports", json::array()}}, 60,
                               DefaultCounterLimits());
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].outcome, Outcome::kWarn);
  EXPECT_NE(fs[0].message.find("disappeared"), std::string::npos);
}

}  // namespace
}  // namespace cc
