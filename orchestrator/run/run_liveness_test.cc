#include "orchestrator/run/run_liveness.h"

#include <gtest/gtest.h>

namespace cc {
namespace {

ControllerRecord Ctl(std::string lock = "/db/cc.db.lock") {
  return ControllerRecord{"ctl1", 4242, std::move(lock)};
}

LivenessProbe Seen(LockState lock, bool pid_alive, std::string host = "ctl1") {
  return LivenessProbe{std::move(host), lock, pid_alive};
}

TEST(RunLiveness, FinishedRunsKeepTheirStoredStatus) {
  for (const char* s : {"done", "interrupted", "aborted"}) {
    RunLiveness l = JudgeRunLiveness(s, Ctl(), Seen(LockState::kFree, false));
    EXPECT_EQ(l.status, s);
    EXPECT_EQ(l.reason, "");
  }
}

TEST(RunLiveness, AFreeLockOnTheControllersHostMeansKilled) {
  RunLiveness l = JudgeRunLiveness("running", Ctl(), Seen(LockState::kFree, true));
  EXPECT_EQ(l.status, "killed");
  EXPECT_NE(l.reason.find("controller pid 4242 on ctl1"), std::string::npos) << l.reason;
  EXPECT_NE(l.reason.find("lock on /db/cc.db.lock is free"), std::string::npos) << l.reason;
}

TEST(RunLiveness, AHeldLockMeansRunningEvenFromAnotherHost) {
  EXPECT_EQ(JudgeRunLiveness("running", Ctl(), Seen(LockState::kHeld, false)).status, "running");
  EXPECT_EQ(JudgeRunLiveness("running", Ctl(), Seen(LockState::kHeld, false, "other")).status,
            "running");
}

TEST(RunLiveness, FromAnotherHostNothingButAHeldLockCanBeTold) {
  for (LockState s : {LockState::kFree, LockState::kUnknown}) {
    RunLiveness l = JudgeRunLiveness("running", Ctl(), Seen(s, false, "laptop"));
    EXPECT_EQ(l.status, "running");
    EXPECT_NE(l.reason.find("cannot tell"), std::string::npos) << l.reason;
  }
}

TEST(RunLiveness, WithoutALockThePidDecidesOnTheSameHost) {
  EXPECT_EQ(JudgeRunLiveness("running", Ctl(""), Seen(LockState::kFree, false)).status, "killed");
  EXPECT_EQ(JudgeRunLiveness("running", Ctl(""), Seen(LockState::kFree, true)).status, "running");
  // A lock file that could not be probed: the pid decides too.
  EXPECT_EQ(JudgeRunLiveness("running", Ctl(), Seen(LockState::kUnknown, false)).status, "killed");
  EXPECT_EQ(JudgeRunLiveness("running", Ctl(), Seen(LockState::kUnknown, true)).status, "running");
}

TEST(RunLiveness, RunsWithoutAControllerRecordStayRunning) {
  RunLiveness l = JudgeRunLiveness("running", std::nullopt, Seen(LockState::kFree, false));
  EXPECT_EQ(l.status, "running");
  EXPECT_NE(l.reason.find("cannot tell"), std::string::npos);
}

TEST(RunLiveness, TheControllerRoundTripsThroughTheMeta) {
  nlohmann::json meta = {{"controller", ControllerToMeta(Ctl())}};
  auto c = ControllerFromMeta(meta);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->host, "ctl1");
  EXPECT_EQ(c->pid, 4242);
  EXPECT_EQ(c->lock, "/db/cc.db.lock");
  EXPECT_FALSE(ControllerFromMeta(nlohmann::json::object()).has_value());
  EXPECT_FALSE(ControllerFromMeta({{"controller", {{"host", "h"}}}}).has_value());
}

}  // namespace
}  // namespace cc
