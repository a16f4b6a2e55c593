#include "orchestrator/run/run_lock.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>

namespace cc {
namespace {

std::string TempDb() {
  char tmpl[] = "/tmp/run_lock_test.XXXXXX";
  const char* dir = ::mkdtemp(tmpl);
  return std::string(dir ? dir : "/tmp") + "/cc.db";
}

TEST(RunLock, TheRunsByteIsHeldWhileTheLockLivesAndFreeAfter) {
  std::string db = TempDb();
  EXPECT_EQ(ProbeRunLock(RunLockPath(db), 3), LockState::kFree) << "no lock file yet";
  {
    RunLock lock(db, 3);
    ASSERT_TRUE(lock.held()) << lock.error();
    EXPECT_EQ(lock.path().front(), '/') << "recorded absolute: report may run elsewhere";
    EXPECT_EQ(ProbeRunLock(lock.path(), 3), LockState::kHeld);
    EXPECT_EQ(ProbeRunLock(lock.path(), 4), LockState::kFree) << "another run's byte";
    RunLock second(db, 3);
    EXPECT_FALSE(second.held()) << "two controllers cannot hold one run";
  }
  EXPECT_EQ(ProbeRunLock(RunLockPath(db), 3), LockState::kFree);
  ::unlink(RunLockPath(db).c_str());
}

TEST(RunLock, ARunningRunWhoseLockIsFreeBecomesKilled) {
  std::string db = TempDb();
  RunRecord run;
  run.id = 5;
  run.status = "running";
  {
    RunLock lock(db, 5);
    ASSERT_TRUE(lock.held());
    run.meta["controller"] = ControllerToMeta(ThisController(lock.path()));
    RunRecord live = run;
    ApplyRunLiveness(live);
    EXPECT_EQ(live.status, "running");
  }
  ApplyRunLiveness(run);
  EXPECT_EQ(run.status, "killed");
  EXPECT_EQ(run.meta["liveness"]["status"], "killed");
  ::unlink(RunLockPath(db).c_str());
}

}  // namespace
}  // namespace cc
