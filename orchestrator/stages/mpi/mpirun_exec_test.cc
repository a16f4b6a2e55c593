#include "orchestrator/stages/mpi/mpirun_exec.h"

#include <gtest/gtest.h>
#include <signal.h>

#include "common/fake_clock.h"

namespace cc {
namespace {

MpirunDeadlines Deadlines(double idle_s, double total_s) { return {idle_s, total_s, "test"}; }

// A stand-in for mpirun on a FakeClock: prints `lines` lines (forever when
// negative), one every `every`, then exits 0, or falls silent when
// `then_hang`. Killed, it exits 128+SIGTERM.
class Printer : public RemoteProcess {
 public:
  Printer(FakeClock& clock, int lines, Millis every, bool then_hang = false)
      : clock_(clock), left_(lines), every_(every), then_hang_(then_hang), next_(clock.Now()) {}

  Status WriteStdin(std::string_view, Deadline) override { return Status::Ok(); }
  void CloseStdin() override {}
  Result<std::string> ReadLine(Deadline deadline) override {
    if (killed_ || (left_ == 0 && !then_hang_)) return Status::Eof("mpirun: stdout closed");
    if (left_ == 0 || next_ + every_ > deadline.at()) {
      clock_.SleepUntil(deadline.at());
      return Status::Timeout("mpirun: no output in time");
    }
    next_ += every_;
    clock_.SleepUntil(next_);
    if (left_ > 0) --left_;
    return std::string("line");
  }
  std::string StderrSoFar() override { return ""; }
  Result<int> Wait(Deadline deadline) override {
    if (killed_) return 128 + SIGTERM;
    if (left_ == 0 && !then_hang_) return 0;
    clock_.SleepUntil(deadline.at());
    return Status::Timeout("mpirun: still running");
  }
  void Kill() override { killed_ = true; }

 private:
  FakeClock& clock_;
  int left_;
  const Millis every_;
  const bool then_hang_;
  Clock::time_point next_;
  bool killed_ = false;
};

TEST(WatchMpirun, SteadyOutputOutlivesTheIdleDeadline) {
  // A line every 0.1 s for 1.5 s: past the 0.5 s idle deadline, not hung.
  FakeClock clock;
  Printer mpirun(clock, 15, Millis(100));
  MpirunRun r = WatchMpirun(mpirun, Deadlines(0.5, 30), clock);
  EXPECT_FALSE(r.hung) << r.stop_why;
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.stdout_lines.size(), 15u);
  EXPECT_EQ(clock.Elapsed(), Millis(1500));
}

TEST(WatchMpirun, SilenceIsAHang) {
  FakeClock clock;
  Printer mpirun(clock, 1, Millis(0), /*then_hang=*/true);
  MpirunRun r = WatchMpirun(mpirun, Deadlines(30, 3600), clock);
  EXPECT_TRUE(r.hung);
  EXPECT_EQ(r.stop, MpirunStop::kIdle);
  EXPECT_NE(r.stop_why.find("no new line"), std::string::npos) << r.stop_why;
  EXPECT_EQ(r.stdout_lines.size(), 1u);
  EXPECT_EQ(r.exit_code, 128 + SIGTERM) << "it was not killed";
  // Stopped within one read slice (0.25 s) of the idle deadline.
  EXPECT_GE(clock.Elapsed(), std::chrono::seconds(30));
  EXPECT_LE(clock.Elapsed(), Millis(30250));
}

TEST(WatchMpirun, TheCapStopsAJobThatStillPrints) {
  FakeClock clock;
  Printer mpirun(clock, -1, Millis(100));
  MpirunRun r = WatchMpirun(mpirun, Deadlines(0.5, 60), clock);
  EXPECT_TRUE(r.hung);
  EXPECT_EQ(r.stop, MpirunStop::kCap);
  EXPECT_EQ(r.stdout_lines.size(), 600u);
  EXPECT_EQ(clock.Elapsed(), std::chrono::seconds(60));
}

TEST(RunMpirun, RunsTheCommandHereAndKeepsItsOutputAndExitCode) {
  MpirunRun r = RunMpirun({"/bin/sh", "-c", "echo one; echo two; echo oops >&2; exit 3"},
                          Deadlines(30, 60), RealClock());
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_FALSE(r.hung);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.stdout_lines, (std::vector<std::string>{"one", "two"}));
  EXPECT_EQ(r.stderr_lines, std::vector<std::string>{"oops"});
}

}  // namespace
}  // namespace cc
