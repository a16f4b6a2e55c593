// The sleep stage on scripted agents and a FakeClock (run/fake_stage_run.h):
// its agent calls' deadline is the run's clock's, so an agent that never
// wakes is judged a hang at that deadline without the test waiting for it.
#include <gtest/gtest.h>

#include <chrono>

#include "orchestrator/run/fake_stage_run.h"
#include "orchestrator/stages/sleep/sleep_spec.h"

namespace cc {
namespace {

using std::chrono::seconds;

// An agent that says hello and then never answers a request.
FakeNode SilentAgent() {
  FakeNode n;
  n.program = FakeAgent([](const nlohmann::json&) { return std::vector<nlohmann::json>{}; });
  n.program.on_line = [](const CommandLine&, const std::string&) { return FakeReply{}; };
  return n;
}

TEST(SleepStage, AnAgentThatNeverWakesIsAHangAtTheDeadlineOfTheRunsClock) {
  FakeStageRun run({"gpu001", "gpu002"});
  run.transport().SetNode("gpu002", SilentAgent());
  run.inventory().stage_settings["sleep"] = {{"seconds", 600}};
  ASSERT_TRUE(run.Prepare().ok());
  const auto real_start = std::chrono::steady_clock::now();

  ASSERT_TRUE(MakeSleepStage()->Run(run.ctx()).ok());

  // 600 s of sleep and the stage's 30 s of slack, on the fake clock only.
  EXPECT_GE(run.clock().Elapsed(), seconds(630));
  EXPECT_LT(run.clock().Elapsed(), seconds(631));
  EXPECT_LT(std::chrono::steady_clock::now() - real_start, seconds(10))
      << "the stage waited in real time";
  auto awake = run.Find("sleep", "gpu001", "slept");
  ASSERT_TRUE(awake.has_value());
  EXPECT_EQ(awake->outcome, Outcome::kPass) << awake->message;
  auto asleep = run.Find("sleep", "gpu002", "slept");
  ASSERT_TRUE(asleep.has_value());
  EXPECT_EQ(asleep->outcome, Outcome::kHang) << asleep->message;
  EXPECT_EQ(asleep->at, "2027-01-01T00:10:30Z") << "stamped when the deadline passed";
}

}  // namespace
}  // namespace cc
